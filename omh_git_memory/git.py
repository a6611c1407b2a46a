"""All git access, over libgit2 (pygit2). No `git` subprocess anywhere in the product.

pygit2 lives only in this module; the rest of the package talks to
:class:`GitRepo` and plain paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from omh_git_memory.errors import GitFailure, NotARepository


@dataclass(frozen=True)
class GitRepo:
    """A repository as seen from one checkout (the main one or a linked worktree)."""

    repo: pygit2.Repository
    git_dir: Path  # this worktree's git dir (`.git`, or `.git/worktrees/<name>`)
    common_dir: Path  # shared by every worktree of the clone
    workdir: Path | None  # None for a bare repository

    @property
    def main_checkout(self) -> Path:
        """The clone's main checkout (for a bare repository, the repository itself).

        Derived from the common git dir, so every linked worktree of a clone
        answers the same.
        """
        if self.common_dir.name == ".git":
            return self.common_dir.parent
        return self.common_dir

    def require_workdir(self) -> Path:
        if self.workdir is None:
            raise NotARepository(
                f"{self.common_dir} is a bare repository; run omh inside a checkout"
            )
        return self.workdir


def open_repo(start: Path) -> GitRepo:
    """Discover the repository holding `start` (any subdirectory or linked worktree)."""
    try:
        found = pygit2.discover_repository(str(start))
    except pygit2.GitError as err:
        raise GitFailure(f"looking for a git repository from {start}: {err}") from None
    if found is None:
        raise NotARepository(
            f"{start} is not inside a git repository; cd into one, or run `git init` first"
        )
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as err:
        raise GitFailure(f"opening the git repository at {found}: {err}") from None
    git_dir = Path(repo.path).resolve()
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return GitRepo(repo=repo, git_dir=git_dir, common_dir=_common_dir(git_dir), workdir=workdir)


def _common_dir(git_dir: Path) -> Path:
    # pygit2 has no accessor for it: a linked worktree's git dir holds a
    # `commondir` file naming the shared one, relative to itself.
    marker = git_dir / "commondir"
    if not marker.is_file():
        return git_dir
    target = marker.read_text(encoding="utf-8").strip()
    return (git_dir / target).resolve()


def create_repository(path: Path, message: str, name: str, email: str) -> GitRepo:
    """A new repository at `path` whose first commit holds every file already there."""
    try:
        repo = pygit2.init_repository(str(path), initial_head="main")
        repo.index.add_all()
        repo.index.write()
        tree = repo.index.write_tree()
        signature = pygit2.Signature(name, email)
        repo.create_commit("HEAD", signature, signature, message, tree, [])
    except pygit2.GitError as err:
        raise GitFailure(f"creating a repository at {path}: {err}") from None
    return open_repo(path)
