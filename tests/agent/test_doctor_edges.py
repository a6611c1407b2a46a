"""The doctor's edges, in process with the server's probe replaced: a command it must
not start unasked, a store this clone left behind, the census at one note, the
unreadable notes it names, and what it makes of a server's answer (agent/doctor.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent import doctor
from omh_git_memory.agent import probe as probe_module
from omh_git_memory.agent.doctor import Check, Status, diagnose
from omh_git_memory.agent.harness import ServerCommand
from omh_git_memory.agent.probe import Probe
from tests.helpers import make_repo, omh

TOOLS = {"recall": "The store holds 1 note (1 team): 1 other.", "remember": "Record a surprise."}


def probed(**fields: Any) -> Probe:
    base: dict[str, Any] = {"tools": TOOLS, "server_name": "omh",
                            "recall_text": "repo  team · 2026-12-01  x"}
    return Probe(**{**base, **fields})


class Starts:
    """The probe's stand-in: each start's (command, args, folder), and its answer."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str], Path]] = []
        self.answer = probed()

    def __call__(self, command: str, args: list[str], cwd: Path, env: dict[str, str],
                 timeout: float = 60.0) -> Probe:
        self.seen.append((command, args, cwd))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Starts:
    starts = Starts()
    monkeypatch.setattr(probe_module, "probe", starts)
    return starts


@pytest.fixture
def code_only(tmp_path: Path) -> Path:
    """An initialised repository of code only, its index built: its one note is the
    repository topic."""
    path = tmp_path / "repo"
    make_repo(path, {"src.py": "x = 1\n"})
    assert omh(path, "init").code == 0
    open_workspace(path).searcher()
    return path


@pytest.fixture
def bin_path(tmp_path: Path) -> dict[str, str]:
    """PATH holding only an executable `omh` (never run: the probe is replaced)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "omh").write_text("#!/bin/sh\nexit 1\n")
    (bindir / "omh").chmod(0o755)
    return {"PATH": str(bindir)}


def _checks(repo: Path, env: dict[str, str], **kwargs: Any) -> dict[str, Check]:
    return {c.name: c for c in diagnose(open_workspace(repo), env, **kwargs)}


def test_a_repositorys_command_is_never_started_by_default(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    (code_only / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"omh": {"command": "omh", "args": ["mcp", "serve", "--evil"]}}}))
    server = _checks(code_only, bin_path)["server"]  # no `trust` given
    assert server.status is Status.FAIL and server.detail.startswith("not started: ")
    assert started.seen == []


def test_one_note_is_a_census_not_a_warning(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    checks = _checks(code_only, bin_path)
    assert checks["census"] == Check("census", Status.OK, "1 note (1 team): 1 other")
    assert checks["tools"].status is Status.OK  # "1 note" is in the description


def _store_sibling(repo: Path, suffix: str = "0" * 12) -> Path:
    """A store beside the clone's own, named like it, with no record and one note:
    one an older omh may have left (Match.UNRECORDED)."""
    root = open_workspace(repo).local.root
    sibling = root.parent / f"{root.name.rsplit('-', 1)[0]}-{suffix}"
    assert sibling != root
    sibling.mkdir(parents=True)
    (sibling / "old.md").write_text("---\nkey: old\ntype: surprise\n---\n\n# old\n")
    return sibling


def test_a_store_that_may_be_this_clones_is_a_warning_beside_an_empty_store(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    sibling = _store_sibling(code_only)
    checks = _checks(code_only, bin_path)
    assert checks["local store"].status is Status.OK
    moved = checks["moved"]
    assert moved.status is Status.WARN
    assert moved.detail.startswith(f"{sibling} holds 1 note from an older omh")


def test_without_a_store_a_hint_of_one_left_behind_follows_the_fix(
    tmp_path: Path, bin_path: dict[str, str]
) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"src.py": "x = 1\n"})
    sibling = _store_sibling(path)
    checks = diagnose(open_workspace(path), bin_path)
    assert [c.name for c in checks] == ["repository", "local store"]
    assert checks[1].status is Status.FAIL
    assert checks[1].detail.startswith(f"{open_workspace(path).local.root} does not exist: "
                                       "run `omh init` (or fix OMH_LOCAL_STORE); "
                                       f"{sibling} holds 1 note")


def test_a_moved_clones_store_fails_beside_an_empty_store_of_its_own(
    tmp_path: Path, bin_path: dict[str, str], started: Starts
) -> None:
    old = tmp_path / "src" / "api"
    make_repo(old, {"src.py": "x = 1\n"})
    assert omh(old, "init").code == 0
    run = omh(old, "memory", "remember", "--expected", "e", "--observed", "Y.",
              "--evidence", "v", "--answers", "q?")
    assert run.code == 0, run.err
    new = tmp_path / "elsewhere" / "api"
    new.parent.mkdir()
    shutil.move(str(old), str(new))
    open_workspace(new).local.root.mkdir(parents=True)  # made by hand: it holds nothing
    checks = _checks(new, bin_path)
    assert checks["local store"].status is Status.OK
    assert checks["moved"].status is Status.FAIL
    assert f"this clone was moved from {old}" in checks["moved"].detail


@pytest.mark.parametrize(("files", "said"), [
    (["a.md"], "1 note cannot be read, so recall never returns it: a.md;"),
    (["a.md", "b.md"], "2 notes cannot be read, so recall never returns them: a.md, b.md;"),
    (["a.md", "b.md", "c.md"], "3 notes cannot be read, so recall never returns them: "
                               "a.md, b.md, c.md;"),
    (["a.md", "b.md", "c.md", "d.md"], "4 notes cannot be read, so recall never returns "
                                       "them: a.md, b.md, c.md and 1 more;"),
])
def test_unreadable_notes_are_named_up_to_three(files: list[str], said: str) -> None:
    assert doctor._unreadable(files) == f"{said} `omh memory lint` says why"


def _mcp(repo: Path, command: str, args: list[str]) -> None:
    (repo / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"omh": {"command": command, "args": args}}}))


def test_a_server_that_fails_without_a_word_on_stderr_is_reported_by_the_client(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    started.answer = probe_module.ProbeFailed("connection closed", "\n  \n")
    server = _checks(code_only, bin_path)["server"]
    assert server.status is Status.FAIL
    assert server.detail == ("`omh mcp serve` did not answer initialize and tools/list: "
                             "connection closed; run it by hand to see its error")


def test_a_servers_last_line_is_what_it_said_cut_to_300_characters() -> None:
    assert doctor._last_line("Traceback\n  File x\nValueError: bad\n\n  \n") == "ValueError: bad"
    assert doctor._last_line(" \n\n") == ""
    assert doctor._last_line("x" * 300) == "x" * 300
    assert doctor._last_line("x" * 301) == "x" * 299 + "…"


def test_a_server_without_the_semantic_extra_is_a_warning(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    from omh_git_memory.model.errors import SemanticUnavailable

    started.answer = probed(log=f"omh: {SemanticUnavailable.fallback()}\n")
    semantic = _checks(code_only, bin_path)["semantic"]
    assert semantic == Check("semantic", Status.WARN, SemanticUnavailable.fallback())
    started.answer = probed(log="omh: serving\n")
    assert "semantic" not in _checks(code_only, bin_path)


def test_a_server_with_other_tools_fails_and_is_checked_no_further(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    started.answer = probed(tools={**TOOLS, "forget": "Forget a note."})
    checks = diagnose(open_workspace(code_only), bin_path)
    assert checks[-1] == Check("tools", Status.FAIL,
                               "expected exactly recall and remember, got forget, recall, "
                               "remember")
    assert [c.name for c in checks].count("tools") == 1


@pytest.mark.parametrize("census", ["2 notes (2 team)", "11 notes (11 team)",
                                    "21 notes (20 team, 1 local)"])
def test_a_description_without_this_stores_census_fails(
    code_only: Path, bin_path: dict[str, str], started: Starts, census: str
) -> None:
    # "11 notes" holds "1 note" as text: the count is read whole
    started.answer = probed(tools={**TOOLS, "recall": f"The store holds {census}."})
    tools = _checks(code_only, bin_path)["tools"]
    assert tools.status is Status.FAIL
    assert "(1 note): the server reads another store than this one" in tools.detail


@pytest.mark.parametrize(("text", "status"), [
    ("repo  team · 2026-12-01  x", Status.OK),
    ("no note matched `x`", Status.OK),
    ("repo  team 2026-12-01  x", Status.FAIL),
])
def test_a_first_recall_must_give_layers_and_dates(
    code_only: Path, bin_path: dict[str, str], started: Starts, text: str, status: Status
) -> None:
    started.answer = probed(recall_text=text)
    assert _checks(code_only, bin_path)["tools"].status is status


def test_a_server_given_an_absolute_repo_starts_elsewhere(
    code_only: Path, bin_path: dict[str, str], started: Starts
) -> None:
    for args in (["mcp", "serve", "--repo", str(code_only)],
                 ["mcp", "serve", f"--repo={code_only}"]):
        _mcp(code_only, "omh", args)
        assert _checks(code_only, bin_path)["server"].status is Status.OK
        cwd = started.seen[-1][2]
        assert cwd != code_only and cwd.name.startswith("omh-doctor-")
    for args in (["mcp", "serve", "--repo", "."], ["mcp", "serve", "--repo=."],
                 ["mcp", "serve"]):
        _mcp(code_only, "omh", args)
        _checks(code_only, bin_path, trust=lambda _: True)
        assert started.seen[-1][2] == code_only, args
    # `--repo` with nothing after it names no folder
    _mcp(code_only, "omh", ["mcp", "serve", "--repo"])
    _checks(code_only, bin_path, trust=lambda _: True)
    assert started.seen[-1][2] == code_only


def test_describe_names_the_relative_path_entry_a_command_was_found_through(
    tmp_path: Path
) -> None:
    found = tmp_path / "repo" / "omh"
    dot = ServerCommand("omh", ["mcp", "serve"], ".mcp.json", inside=found, via=".")
    assert doctor.describe(dot) == (
        f".mcp.json names `omh mcp serve` as the omh server: `omh` is found at {found} "
        "through the relative PATH entry '.', which names another folder wherever a program "
        "starts (a harness starts it in the checkout), not an installed omh")
    empty = ServerCommand("omh", ["mcp", "serve"], ".mcp.json", inside=found, via="")
    assert "through the relative PATH entry '(empty)', which" in doctor.describe(empty)


def test_describe_says_where_a_command_comes_from(tmp_path: Path) -> None:
    inside = ServerCommand("omh", ["mcp", "serve"], ".cursor/mcp.json", inside=tmp_path / "omh")
    assert doctor.describe(inside) == (
        f".cursor/mcp.json names `omh mcp serve` as the omh server: `omh` is found at "
        f"{tmp_path / 'omh'}, a file inside the repository (PATH holds a folder of the "
        "checkout), not an installed omh")
    own = ServerCommand("/opt/omh", ["mcp", "serve"], None)
    assert doctor.describe(own) == ("the default server command is `/opt/omh mcp serve` as "
                                    "the omh server: omh's own server, started from that path")
    other = ServerCommand("sh", ["-c", "x"], ".mcp.json")
    assert doctor.describe(other).endswith(
        ": not the command omh writes for its own server (`omh mcp serve`)")


def test_resolve_finds_only_an_executable_file(tmp_path: Path) -> None:
    plain, folder, good = tmp_path / "plain", tmp_path / "folder", tmp_path / "good"
    for d in (plain, folder, good):
        d.mkdir()
    (plain / "omh").write_text("#!/bin/sh\n")  # not executable
    (folder / "omh").mkdir()  # a folder can be "executed" (searched), but is no program
    (good / "omh").write_text("#!/bin/sh\n")
    (good / "omh").chmod(0o755)
    path = f"{plain}:{folder}:{good}"
    assert doctor.resolve("omh", {"PATH": path}, tmp_path) == (good / "omh", None)
    assert doctor.resolve("omh", {"PATH": f"{plain}:{folder}"}, tmp_path) == (None, None)
    assert doctor.resolve(str(plain / "omh"), {}, tmp_path) == (None, None)
    assert doctor.resolve("good/omh", {}, tmp_path) == (good / "omh", None)
    # found through a relative entry: the entry is said, the path made absolute
    assert doctor.resolve("omh", {"PATH": f"{plain}:good"}, tmp_path) == (good / "omh", "good")
