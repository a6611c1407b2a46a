"""This checkout's index (git's staging area) as it is on disk: reading it, refusing
the kinds libgit2 cannot read (sparse, split) and an index the environment moves
elsewhere, and what it holds for a path."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pygit2

from omh_git_memory.git.gitfiles import describe
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import GitFailure

_SPARSE = (
    "this checkout uses a sparse index, which libgit2 (and so omh) cannot read; turn it "
    "off with `git sparse-checkout init --no-sparse-index` (your sparse patterns stay) "
    "and run the command again"
)
_SPLIT = (
    "this checkout uses a split index (core.splitIndex), which libgit2 (and so omh) cannot "
    "read; turn it off with `git update-index --no-split-index` and run the command again"
)


def read_index(repo: GitRepo) -> pygit2.Index:
    """This checkout's index as it is on disk now."""
    try:
        index: pygit2.Index = repo.repo.index
        index.read(False)
    except pygit2.GitError as err:
        text = str(err)
        if "'sdir'" in text:
            raise GitFailure(_SPARSE) from None
        if "'link'" in text:
            raise GitFailure(_SPLIT) from None
        raise GitFailure(f"reading the index {repo.git_dir / 'index'}: "
                         f"{describe(err, repo.git_dir)}") from None
    return index


def refuse_other_index(repo: GitRepo, environ: Mapping[str, str] | None = None) -> None:
    """Refuse to write an index when `GIT_INDEX_FILE` names another file than the
    one omh locks and writes (`<git dir>/index`): git would stage into that one.
    (git sets it for its hooks, naming this index or its lock: reading is fine.)"""
    env = os.environ if environ is None else environ
    named = env.get("GIT_INDEX_FILE")
    if not named:
        return
    where = Path(named) if Path(named).is_absolute() else Path.cwd() / named
    if where.resolve() != (repo.git_dir / "index").resolve():
        raise GitFailure(
            f"GIT_INDEX_FILE names {where}, but omh commits through the repository's own "
            f"index ({repo.git_dir / 'index'}); nothing was changed. Unset GIT_INDEX_FILE (a "
            "git hook that runs omh while git holds the index cannot commit either)")


def in_index(repo: GitRepo, path: str) -> bool:
    """Whether the index holds an entry for `path` (False once `git rm` staged its
    removal)."""
    return path in read_index(repo)


def path_is_dirty(repo: GitRepo, path: str) -> bool:
    """True when `path` exists in the index or the working tree."""
    if path in read_index(repo):
        return True
    return repo.workdir is not None and os.path.lexists(repo.workdir / path)


def index_change(repo: GitRepo, path: str, committed: tuple[str, int]) -> str | None:
    """How the index copy of `path` differs from `committed` (blob id, mode), or None
    when it holds the same — or holds nothing: a removal staged already risks no bytes."""
    index = repo.repo.index
    try:
        index.read(False)
        conflicts = index.conflicts
        if conflicts is not None and path in conflicts:
            return "has a merge conflict in the index"
        entry = index[path]
    except KeyError:
        return None
    except pygit2.GitError as err:
        raise GitFailure(f"reading the index entry of {path}: {err}") from None
    if (str(entry.id), int(entry.mode)) != committed:
        return "has changes staged in the index"
    return None
