"""A repository with omh set up in it, and its state as git reports it."""

from __future__ import annotations

from pathlib import Path

import pygit2

from omh_git_memory.git.gitfiles import IndexLock
from tests.helpers import IDENTITY, git, omh


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


def killed_after_landing(path: Path, files: dict[str, bytes | None], *,
                         symlinks: tuple[str, ...] = (), lock_left: bool = True
                         ) -> tuple[str | None, str]:
    """What an omh process killed just after it moved the branch leaves in the
    repository at `path`: a commit of `files` (None: delete it; a name in `symlinks`
    is a symlink to its bytes) on top of HEAD's branch (its first commit, on an
    unborn one), the index and working tree as they were, the job recorded in
    `omh-unfinished.json` and, with `lock_left`, git's index lock still held in
    the name of a process that holds it no more (without it: the lock removed by
    hand). The branch's old tip (None if it had none) and the new commit."""
    r = pygit2.Repository(str(path))
    branch = r.references["HEAD"].target
    assert isinstance(branch, str)
    lock = IndexLock(Path(r.path).resolve())
    lock.acquire()
    tip = r.references.get(branch)
    old = str(tip.target) if tip is not None else None
    index = pygit2.Index()
    if old is not None:
        index.read_tree(r[old].peel(pygit2.Commit).tree)
    for name, data in files.items():
        if data is None:
            index.remove(name)
            continue
        mode = pygit2.enums.FileMode.LINK if name in symlinks else pygit2.enums.FileMode.BLOB
        index.add(pygit2.IndexEntry(name, r.create_blob(data), mode))
    signature = pygit2.Signature(*IDENTITY)
    new = str(r.create_commit(None, signature, signature, "omh: landed",
                              index.write_tree(r), [] if old is None else [old]))
    lock.landed(branch, old, new)
    r.references.create(branch, new, force=True)
    lock.abandon()  # as a failed finish leaves it; a dead process's lock reads the same
    if not lock_left:
        lock.path.unlink()
    return old, new
