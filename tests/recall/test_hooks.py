from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

import pytest

from omh_git_memory.git.repository import open_repo
from omh_git_memory.recall.hooks import HOOK_NAMES, MARKER, hooks_dir
from tests.helpers import git, omh


def test_install_writes_the_three_hooks_executable(repo_dir: Path) -> None:
    run = omh(repo_dir, "hooks", "install", "--json")
    assert run.code == 0, run.err
    assert [r["action"] for r in run.json()] == ["installed"] * 3
    for name in HOOK_NAMES:
        path = repo_dir / ".git/hooks" / name
        assert MARKER in path.read_text()
        assert path.stat().st_mode & stat.S_IXUSR
    assert [r["action"] for r in omh(repo_dir, "hooks", "install", "--json").json()] == [
        "unchanged"] * 3


def test_a_hook_omh_did_not_write_is_never_overwritten_silently(repo_dir: Path) -> None:
    mine = repo_dir / ".git/hooks/post-merge"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("#!/bin/sh\necho mine\n")
    run = omh(repo_dir, "hooks", "install")
    assert run.code == 1 and "did not write" in run.out and "--force" in run.out
    assert mine.read_text() == "#!/bin/sh\necho mine\n"
    assert omh(repo_dir, "hooks", "install", "--force").code == 0
    assert MARKER in mine.read_text()


def test_core_hooks_path_is_honoured(repo_dir: Path) -> None:
    git(repo_dir, "config", "core.hooksPath", "githooks")
    assert hooks_dir(open_repo(repo_dir)) == repo_dir / "githooks"
    assert omh(repo_dir, "hooks", "install").code == 0
    assert (repo_dir / "githooks/post-checkout").is_file()


def test_a_real_checkout_runs_the_hook_and_warms_the_index(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = repo_dir.parent / "bin"
    bindir.mkdir()
    (bindir / "omh").write_text(f"#!/bin/sh\nexec {sys.executable} -m omh_git_memory \"$@\"\n")
    (bindir / "omh").chmod(0o755)
    assert omh(repo_dir, "hooks", "install").code == 0
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    git(repo_dir, "checkout", "-q", "-b", "other")
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    index = repo_dir / ".git/omh/index" / f"{head}.idx"
    for _ in range(100):  # the hook runs omh in the background
        if index.exists():
            break
        time.sleep(0.1)
    assert index.exists()
