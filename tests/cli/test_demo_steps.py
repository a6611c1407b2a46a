"""`omh demo` (cli/demo.py) with each step's process faked, so the walk itself is
checked in a fraction of a second: every step run once, in order and numbered, in
the demo's repository with the demo's store; the hand-edited note planted before
the one lint that shows it; the output of each step printed as it came, with its
exit status when it failed; init's files committed after init alone; the folder
removed afterwards (kept with keep), even when it went missing meanwhile.
(tests/cli/test_cli.py::test_demo_walks_through_every_step runs the real steps.)"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

demo = importlib.import_module("omh_git_memory.cli.demo")
PLANTED = "half-finished.md"


class Steps:
    """The fake of subprocess.run: what each step was given and found."""

    def __init__(self, fail_at: int | None = None, remove_top_at: int | None = None) -> None:
        self.argv: list[list[str]] = []
        self.planted: list[int] = []  # the steps that found the note planted
        self.commits: list[tuple[Any, ...]] = []
        self.fail_at, self.remove_top_at = fail_at, remove_top_at
        self.repo: Path | None = None

    def run(self, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        number = len(self.argv) + 1
        self.argv.append(argv)
        env = kwargs.pop("env")
        self.repo = Path(kwargs.pop("cwd"))
        assert kwargs == {"capture_output": True, "text": True, "check": False}
        assert argv[:3] == [sys.executable, "-m", "omh_git_memory"]
        store = Path(env["OMH_LOCAL_STORE"])
        assert store == self.repo.parent / "local-store"
        assert env["NO_COLOR"] == "1" and env["DEMO_MARKER"] == "kept"
        assert "GIT_DIR" not in env
        assert str(self.repo.parent / "editor.py") in env["VISUAL"]
        store.mkdir(exist_ok=True)  # as the real init does
        planted = store / PLANTED
        if planted.exists():
            assert planted.read_bytes() == (demo.fixtures_dir() / "store" / PLANTED
                                            ).read_bytes()
            self.planted.append(number)
            planted.unlink()  # as the real rm step does
        if number == self.remove_top_at:
            shutil.rmtree(self.repo.parent)
        code = 1 if number == self.fail_at else 0
        return subprocess.CompletedProcess(argv, code, f"out {number}\n", f"err {number}\n")

    def commit(self, *args: Any) -> None:
        self.commits.append(args)


def _walk(monkeypatch: pytest.MonkeyPatch, steps: Steps, keep: bool = False) -> None:
    monkeypatch.setenv("GIT_DIR", "/nowhere/.git")  # never inherited by a step
    monkeypatch.setenv("DEMO_MARKER", "kept")  # the rest of the environment is
    monkeypatch.setattr(demo.subprocess, "run", steps.run)
    monkeypatch.setattr("omh_git_memory.git.repository.commit_files", steps.commit)
    if keep:
        demo.run_demo(keep=True)
    else:
        demo.run_demo()  # by default the folder goes, as tests/attacks/git/ relies on


def test_the_demo_runs_every_step_in_order_and_plants_the_note_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    steps = Steps(fail_at=6)
    _walk(monkeypatch, steps)
    out = capsys.readouterr().out
    assert [argv[3:] for argv in steps.argv] == [args for _, args, _ in demo.STEPS]
    assert steps.planted == [number for number, (_, _, plant) in enumerate(demo.STEPS, 1)
                             if plant] == [13]
    assert steps.commits == [(steps.repo, demo.INIT_FILES, "omh init", "omh demo",
                              "demo@omh.invalid")]
    caption = demo.STEPS[0][0]
    assert (f"── 1. {caption}\n$ omh init\nout 1\nerr 1\n(the demo commits them, as you "
            "would: git add .omh/memory.toml .omh/.gitignore && git commit -m 'omh init')\n"
            "\n── 2. ") in out
    assert "$ omh memory\nout 9\nerr 9\n\n── 10. " in out
    assert out.count("(exit status") == 1 and "\nerr 6\n(exit status 1)\n\n── 7. " in out
    assert out.endswith(f"\n── {len(demo.STEPS)}. Lint once more: the link resolves now.\n"
                        f"$ omh memory lint\nout {len(demo.STEPS)}\nerr {len(demo.STEPS)}\n\n"
                        "That is what exists so far: see the README for what each command "
                        "does.\n")
    assert steps.repo is not None and not steps.repo.parent.exists()  # removed afterwards
    assert "kept " not in out


def test_keep_keeps_the_demo_folder_and_says_where(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    steps = Steps()
    _walk(monkeypatch, steps, keep=True)
    assert steps.repo is not None and steps.repo.is_dir()
    assert f"\nkept {steps.repo.parent}\n" in capsys.readouterr().out
    shutil.rmtree(steps.repo.parent)


def test_a_demo_folder_removed_meanwhile_still_ends_the_demo(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    steps = Steps(remove_top_at=len(demo.STEPS))
    _walk(monkeypatch, steps)
    assert capsys.readouterr().out.endswith("see the README for what each command does.\n")


def test_the_fixtures_are_found_in_a_source_checkout() -> None:
    found = demo.fixtures_dir()
    assert found == Path(__file__).resolve().parents[2] / "fixtures" / "demo"
    assert (found / "store" / PLANTED).is_file() and (found / "repo" / "README.md").is_file()
