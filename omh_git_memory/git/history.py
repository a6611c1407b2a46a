"""Commits and history: the commit a revision names, HEAD, a commit's id and day,
the root commit a store records, and whether a commit is in HEAD's history (a
shallow clone may not be able to tell)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import stat

import pygit2

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import GitFailure, NoSuchCommit
from omh_git_memory.model.keys import printable


def resolve_commit(repo: GitRepo, rev: str) -> pygit2.Commit | None:
    """The commit `rev` names; None for `HEAD` on a branch with no commit yet."""
    if rev == "HEAD" and repo.repo.head_is_unborn:
        return None
    try:
        obj = repo.repo.revparse_single(rev)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise GitFailure(f"{rev!r} names no commit in {repo.common_dir}") from None
    return commit


def commit_at(repo: GitRepo, rev: str) -> pygit2.Commit:
    """The commit `rev` names (a branch, a tag, a commit id, `HEAD~3`: anything git
    accepts, tags peeled), for a command asked about a past commit. NoSuchCommit,
    naming what was asked, for a revision naming nothing here, a tree or a blob, an
    unborn HEAD, or a commit beyond a shallow clone's history."""
    shown = f"'{printable(rev)}'"
    if not rev.strip():
        raise NoSuchCommit("the revision is empty; name a commit: a branch, a tag, a "
                           "commit id, HEAD~3")
    if "\0" in rev:  # libgit2 would read only up to it: `HEAD\0junk` is not HEAD
        raise NoSuchCommit(f"revision {shown} holds a NUL byte; no revision does")
    if rev in ("HEAD", "@") and repo.repo.head_is_unborn:
        raise NoSuchCommit("HEAD names no commit yet (this branch has none); commit "
                           "first, or name another commit")
    try:
        # As bytes: a branch name that is not UTF-8 came in as surrogates (os.fsdecode).
        found = repo.repo.revparse_single(os.fsencode(rev))  # type: ignore[arg-type]
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise NoSuchCommit(f"revision {shown} names no commit in {repo.common_dir}"
                           f"{_beyond_shallow(repo) or _what_to_name()}") from None
    try:
        return found.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise NoSuchCommit(f"revision {shown} names {_what(found)}, not a commit; name a "
                           "commit: a branch, a tag, a commit id") from None


def _what(found: pygit2.Object) -> str:
    """`a tree`, or for a tag what it tags in the end: `a tag of a blob`."""
    tagged = found
    try:
        while isinstance(tagged, pygit2.Tag):
            tagged = tagged.get_object()
    except (KeyError, ValueError, pygit2.GitError):
        return "a tag"
    return f"a tag of a {tagged.type_str}" if tagged is not found else f"a {found.type_str}"


def _what_to_name() -> str:
    return ("; name a branch, a tag or a commit id this clone has (`git log --oneline` and "
            "`git tag` list them)")


def _beyond_shallow(repo: GitRepo) -> str:
    """What to add when a revision is not found in a shallow clone: it may lie past
    the history this clone fetched."""
    if not _shallow_boundary(repo):
        return ""
    return ("; this clone is shallow and its history stops early, so the commit may "
            "be beyond it: `git fetch --deepen=N` or `git fetch --unshallow` fetches more")


def head_id(repo: GitRepo) -> str | None:
    """The commit HEAD names now, or None on a branch with no commit yet."""
    commit = resolve_commit(repo, "HEAD")
    return None if commit is None else str(commit.id)


def worktree_heads(repo: GitRepo) -> set[str]:
    """The commits the HEADs of every worktree of the clone name: the main one's and
    each linked one's (they share the index cache). A HEAD that cannot be read, or
    names no commit yet, is left out."""
    files = [repo.common_dir / "HEAD"]
    with contextlib.suppress(OSError):
        files += sorted(entry / "HEAD" for entry in (repo.common_dir / "worktrees").iterdir())
    found: set[str] = set()
    for path in files:
        try:  # not blocking on a FIFO put there, nor reading a device
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    continue
                text = handle.read(4096).decode("utf-8").strip()
            name = text.removeprefix("ref: ").strip() if text.startswith("ref: ") else None
            target = (repo.repo.references[name].resolve().target if name is not None
                      else pygit2.Oid(hex=text))
            found.add(str(repo.repo[target].peel(pygit2.Commit).id))
        except (OSError, UnicodeDecodeError, KeyError, ValueError, pygit2.GitError):
            continue
    return found


def commit_id(commit: pygit2.Commit) -> str:
    return str(commit.id)


def commit_date(commit: pygit2.Commit) -> dt.date:
    """The day the commit was made, in its committer's time zone."""
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz).date()


def first_root(repo: GitRepo) -> str | None:
    """The root commit reached from HEAD by first parents: what every clone of the
    repository shares, and what a store's record names. None before the first
    commit, when history is unreadable, and in a shallow clone whose first-parent
    line ends at a shallow boundary (a commit whose parents were not fetched is
    not a root: recording it would make every full clone look like another
    repository)."""
    try:
        if repo.repo.head_is_unborn:
            return None
        walker = repo.repo.walk(repo.repo.head.target)
        walker.simplify_first_parent()
        roots = [str(commit.id) for commit in walker if not commit.parent_ids]
    except (pygit2.GitError, KeyError, ValueError):
        return None
    if not roots or roots[0] in _shallow_boundary(repo):
        return None
    return roots[0]


def _shallow_boundary(repo: GitRepo) -> frozenset[str]:
    """The commits `<common>/shallow` lists: where a shallow clone's history stops."""
    try:
        with open(repo.common_dir / "shallow", "rb") as handle:
            text = handle.read(1 << 20).decode("ascii", "replace")
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def holds_in_history(repo: GitRepo, commit: str) -> bool | None:
    """Whether `commit` (a store record's root) is HEAD or one of its ancestors: True
    for a clone of the repository that recorded it, whichever of its roots HEAD's
    first parents now reach (a merge of unrelated histories adds roots); False
    when provably not (no commit yet, or a full history without it); None when
    this clone cannot tell, because it is shallow and the commit lies beyond (or
    on) its boundary."""
    try:
        if repo.repo.head_is_unborn:
            return False
        head = repo.repo.head.target
        target = pygit2.Oid(hex=commit)
        if target == head:
            return True
        if target in repo.repo and repo.repo.descendant_of(head, target):
            return True
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return None if _shallow_boundary(repo) else False
