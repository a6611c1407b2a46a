"""A repository with omh set up in it, and its state as git reports it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, omh


def init_committed(repo: Path, env: dict[str, str] | None = None) -> Path:
    """`omh init` in `repo`, its files committed as init asks; `repo`."""
    assert omh(repo, "init", env=env).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
    return repo


def head_of(repo: Path) -> str:
    """The commit HEAD names."""
    return git(repo, "rev-parse", "HEAD").strip()


def git_state(repo: Path) -> tuple[str, bytes, str]:
    """HEAD, the index's bytes and `git status`: what a refused write must keep."""
    return (git(repo, "rev-parse", "HEAD"), (repo / ".git/index").read_bytes(),
            git(repo, "status", "--porcelain", "--untracked-files=all"))
