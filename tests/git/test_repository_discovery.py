"""Which repository and working tree open_repo (omh_git_memory/git/repository.py)
takes from a directory and the environment, as git takes them: GIT_DIR and
GIT_WORK_TREE relative to the directory omh runs from (not the process's own
current directory), core.worktree relative to the git dir, the search stopped by
GIT_CEILING_DIRECTORIES or let across file systems; and which checkout holds a
path that cannot be resolved.

In-process against real repositories, each started from a directory that is not
the process's current one, so that a path taken from the wrong one shows. The git
CLI, run from the same directory, says what git itself takes.

Found by mutation testing (docs/records/mutation-passes.md): each case kills a
mutant of repository.py that no test caught before.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omh_git_memory.git.repository import checkout_holding, open_repo
from omh_git_memory.model.errors import NotARepository
from tests.helpers import make_repo


def _git_top(start: Path, env: dict[str, str]) -> str:
    """The working tree's top as git itself takes it from `start` with `env`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start,
                          env={**clean, **env}, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The process's current directory: deep, away from every repository."""
    where = tmp_path / "cwd" / "deep" / "down"
    where.mkdir(parents=True)
    monkeypatch.chdir(where)
    return where


def test_found_from_a_subdirectory_the_working_tree_is_the_top(tmp_path: Path,
                                                                elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "r\n", "sub/x.md": "x\n"})
    repo = open_repo(path / "sub", environ={})
    assert repo.workdir == path.resolve()
    assert repo.git_dir == (path / ".git").resolve()


def test_git_dir_alone_makes_the_start_the_working_tree(tmp_path: Path,
                                                         elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "r\n", "sub/x.md": "x\n"})
    start = path / "sub"
    env = {"GIT_DIR": str(path / ".git")}
    repo = open_repo(start, environ=env)
    assert repo.workdir == start.resolve() == Path(_git_top(start, env))
    # the repository omh reads through sees that tree too: the top's files are gone
    # from it, and sub's file is a new one at its root, as `git status` there says
    assert repo.repo.workdir == f"{start.resolve()}/"
    assert set(repo.repo.status()) == {"README.md", "sub/x.md", "x.md"}


def test_git_dir_relative_to_the_start(tmp_path: Path, elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "r\n", "sub/x.md": "x\n"})
    repo = open_repo(path / "sub", environ={"GIT_DIR": "../.git"})
    assert repo.git_dir == (path / ".git").resolve()
    assert repo.workdir == (path / "sub").resolve()


def test_git_work_tree_relative_to_the_start(tmp_path: Path, elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "README.md").write_text("# Test repo\n", encoding="utf-8")
    start = tmp_path / "start"
    start.mkdir()
    env = {"GIT_DIR": str(path / ".git"), "GIT_WORK_TREE": "../tree"}
    repo = open_repo(start, environ=env)
    assert repo.workdir == tree.resolve() == Path(_git_top(start, env))
    assert repo.repo.workdir == f"{tree.resolve()}/"
    assert repo.repo.status() == {}  # the tree holds what HEAD holds


def test_core_worktree_relative_to_the_git_dir(tmp_path: Path, elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    tree = tmp_path / "tree"
    tree.mkdir()
    pygit2.Repository(str(path)).config["core.worktree"] = "../../tree"
    start = tmp_path / "start"
    start.mkdir()
    env = {"GIT_DIR": str(path / ".git")}
    repo = open_repo(start, environ=env)
    assert repo.workdir == tree.resolve() == Path(_git_top(start, env))


def test_the_search_stops_at_a_ceiling(tmp_path: Path, elsewhere: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    start = path / "sub" / "deeper"
    start.mkdir(parents=True)
    with pytest.raises(NotARepository, match=r"\(the search stops at GIT_CEILING_DIRECTORIES\)"):
        open_repo(start, environ={"GIT_CEILING_DIRECTORIES": str(path / "sub")})
    # a ceiling above the repository stops nothing
    repo = open_repo(start, environ={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert repo.workdir == path.resolve()


@pytest.mark.parametrize(("value", "across"), [
    (None, False), ("", False), ("0", False), ("no", False), ("false", False),
    ("1", True), ("true", True), (" Yes ", True), ("on", True)])
def test_the_search_crosses_file_systems_only_when_asked(
        value: str | None, across: bool, tmp_path: Path, elsewhere: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A file system boundary cannot be made without mounting one, so what is
    # checked is what omh asks libgit2's search (which stops at a boundary) to do.
    path = tmp_path / "repo"
    make_repo(path)
    asked: list[bool] = []
    real = pygit2.discover_repository

    def discover(start: str, across_fs: bool = False, *rest: Any) -> str | None:
        asked.append(across_fs)
        return real(start, across_fs, *rest)

    monkeypatch.setattr(pygit2, "discover_repository", discover)
    env = {} if value is None else {"GIT_DISCOVERY_ACROSS_FILESYSTEM": value}
    assert open_repo(path, environ=env).workdir == path.resolve()
    assert asked == [across]


def test_a_symlink_loop_in_a_checkout_is_held_by_it(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    os.symlink("loop", path / "loop")  # cannot be resolved: taken as it stands
    repo = open_repo(path, environ={})
    assert checkout_holding(repo, path / "loop") == path.resolve()
    assert checkout_holding(repo, tmp_path / "loop") is None
