"""The doctor times the server's start as a harness meets it: `tools/list` and a
first recall, with a warning when a harness would give up, and a first start
without an index probed before the doctor builds one itself (agent/doctor.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent import doctor
from omh_git_memory.agent import probe as probe_module
from omh_git_memory.agent.doctor import START_LIMIT, Status, diagnose
from omh_git_memory.agent.probe import Probe
from tests.helpers import omh

TOOLS = {"recall": "The store holds 2 notes (2 team).", "remember": "Record a surprise."}


def probed(**fields: Any) -> Probe:
    base: dict[str, Any] = {"tools": TOOLS, "server_name": "omh",
                            "recall_text": "readme  team · 2026-12-01  x"}
    return Probe(**{**base, **fields})


def test_a_quick_start_is_ok_and_says_how_long_it_took() -> None:
    check = doctor._start_check(probed(listed_after=0.7, answered_after=0.8))
    assert check.status is Status.OK
    assert check.detail == "tools/list answered 0.7 s after the start, a first recall 0.8 s"


def test_a_start_slower_than_a_harness_waits_is_a_warning() -> None:
    check = doctor._start_check(probed(listed_after=START_LIMIT + 0.5, answered_after=12.0))
    assert check.status is Status.WARN
    assert "Codex waits 10 s" in check.detail and "startup_timeout_sec" in check.detail
    assert doctor._start_check(probed(listed_after=START_LIMIT)).status is Status.OK


def test_a_first_recall_during_the_first_build_is_said() -> None:
    check = doctor._start_check(probed(listed_after=2.5, answered_after=22.5,
                                       recall_text="the recall index … is still being built"))
    assert check.status is Status.OK and "asked to come again" in check.detail


@pytest.fixture
def initialised(repo_dir: Path) -> Path:
    assert omh(repo_dir, "init").code == 0
    return repo_dir


def test_without_an_index_the_server_is_probed_before_the_doctor_builds_one(
    initialised: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(initialised)
    assert ws.cached_searcher() is None
    seen: list[bool] = []

    def fake_probe(command: str, args: list[str], cwd: Path, env: dict[str, str],
                   timeout: float = 60.0) -> Probe:
        seen.append(open_workspace(initialised).cached_searcher() is None)
        return probed(tools={**TOOLS, "recall": "Its index is being built as this session "
                                                "starts."}, listed_after=2.1)

    monkeypatch.setattr(probe_module, "probe", fake_probe)
    reports: list[tuple[int, int]] = []
    checks = {c.name: c for c in diagnose(ws, trust=lambda _: True,
                                          progress=lambda *done: reports.append(done))}
    assert seen == [True]  # the server met no index, as a first start does
    assert reports and reports[-1][0] == reports[-1][1]  # its build drew the bar (a terminal's)
    assert checks["tools"].status is Status.OK and "no census yet" in checks["tools"].detail
    assert checks["census"].status is Status.OK  # counted from the index built after
    assert checks["start"].status is Status.OK


def test_with_an_index_the_census_in_the_description_is_checked(
    initialised: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = open_workspace(initialised)
    ws.searcher()  # the index, cached

    def fake_probe(*_: Any, **__: Any) -> Probe:
        return probed(tools={**TOOLS, "recall": "Its index is being built."})

    monkeypatch.setattr(probe_module, "probe", fake_probe)
    checks = {c.name: c for c in diagnose(ws, trust=lambda _: True)}
    assert checks["tools"].status is Status.FAIL and "census" in checks["tools"].detail
