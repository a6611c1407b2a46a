"""A hostile second review of the issue 11 fixes: the siblings the fixers missed.

Each test is one defect seen red on the merged fixes, named by its class
(`dataloss`, `escape`, `gitstate`, `wrong`, `hang`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import Run, git, make_repo, omh


def _omh_timed(cwd: Path, *args: str, timeout: float = 20,
               env: dict[str, str] | None = None) -> Run:
    """The real CLI, failing the test (not hanging it) when it blocks."""
    try:
        done = subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=cwd,
                              env={**os.environ, **(env or {})}, capture_output=True,
                              text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"omh {' '.join(args)} hung for {timeout}s") from None
    return Run(done.returncode, done.stdout, done.stderr)


def _init(path: Path) -> Path:
    make_repo(path)
    assert omh(path, "init").code == 0
    git(path, "add", "-A")
    git(path, "commit", "-qm", "omh init")
    return path


def test_hang_fifo_as_clone_id(tmp_path: Path) -> None:
    """A FIFO at `<common>/omh/clone-id` must not block `omh memory` forever."""
    repo = _init(tmp_path / "repo")
    clone_id = repo / ".git" / "omh" / "clone-id"
    clone_id.parent.mkdir(exist_ok=True)
    if clone_id.exists():
        clone_id.unlink()
    os.mkfifo(clone_id)
    run = _omh_timed(repo, "memory")
    assert "Traceback" not in run.err
