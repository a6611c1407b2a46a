"""Finishing what a killed omh process left: the index and working tree of a commit
it landed before it died, and files a crash left out of line with HEAD. Only what
still holds what omh left is changed; anything else is the user's and stays."""

from __future__ import annotations

import logging
import os

import pygit2

from omh_git_memory.git.commit import stage_index
from omh_git_memory.git.filters import as_checked_out
from omh_git_memory.git.gitfiles import IndexLock, WorkdirUndo, describe, disk_obstacle
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.obstacles import index_obstacle, tree_obstacle
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.staging import read_index, refuse_other_index
from omh_git_memory.git.trees import REGULAR
from omh_git_memory.model import faults
from omh_git_memory.model.errors import GitFailure

_log = logging.getLogger("omh")


def check_out_paths(repo: GitRepo, files: dict[str, bytes]) -> None:
    """Bring the index entries and working-tree files of `files` in line with HEAD,
    where a crash left them behind (taking over a lock a dead omh process left).
    A working-tree file or an index entry that exists is left alone (a user's own,
    written or staged since); nothing follows a symlink."""
    r = repo.repo
    refuse_other_index(repo)
    lock = IndexLock(repo.git_dir)
    lock.acquire()
    undo = WorkdirUndo(repo.workdir)
    try:
        index = read_index(repo)
        head = resolve_commit(repo, "HEAD")
        for path in files:
            why = tree_obstacle(head.tree if head is not None else None, path)
            why = why or index_obstacle(index, path)
            if why is None and repo.workdir is not None:
                why = disk_obstacle(repo.workdir, path, None)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        # An entry the index holds already is the user's (staged since the crash):
        # like a working-tree file that exists, it is left alone.
        blobs = {path: r.create_blob(data) for path, data in files.items()
                 if path not in index}
        staged = stage_index(lock, blobs, ())
        if repo.workdir is not None:
            for path, data in files.items():
                if not os.path.lexists(repo.workdir / path):
                    undo.write(path, as_checked_out(repo, path, data))
        lock.commit(staged)
    except BaseException as err:
        lock.discard()
        undo.run()
        lock.release()
        if isinstance(err, (pygit2.GitError, OSError, KeyError)):
            raise GitFailure(
                f"bringing {', '.join(files)} in line with HEAD failed "
                f"({describe(err, repo.git_dir)}); "
                "nothing was changed"
            ) from None
        raise


def finish_interrupted(repo: GitRepo) -> str | None:
    """Finish the commit an omh process landed before it was killed: the branch
    moved, but the index and working tree of the commit's paths were left as they
    were (and git's index lock with them, so the user's next `git commit -a` would
    drop the change once they removed it). Each path's index entry and file are
    brought to the commit's — only where they still hold what the commit's parent
    had (or nothing, for a path it adds): anything else is the user's and stays.
    Then the lock is released.

    The job is the one recorded in `omh-unfinished.json` before the branch moved
    (it outlives a lock the user removed by hand). It is finished only while HEAD,
    on whatever branch, is exactly the landed commit. Once HEAD is elsewhere (the
    user committed on, checked out another branch, reverted, reset), the index and
    working tree are the user's: nothing is finished, the job is dropped with a
    warning naming the commit (logged: one line on stderr); a job whose commit no branch
    holds never landed and is dropped quietly. A running omh process's own job is
    never touched, and nothing is locked unless a job is recorded or `index.lock`
    is provably a dead omh process's (a lock left before its branch moved is only
    released). The commit finished, or None. A failure keeps the lock (marked
    abandoned) and the job, so that running the command again finishes it."""
    lock = IndexLock(repo.git_dir)
    recorded = lock.unfinished.exists()
    if not recorded and not lock.left_by_dead_omh():
        return None
    found = lock.read_unfinished()
    if found is not None and lock.unfinished_is_live(found):
        return None  # its owner is still at work, and holds the index lock
    lock.acquire()  # a dead process's landed commit is kept in lock.unfinished
    r = repo.repo
    landed = _landed(lock.read_unfinished())
    where = _where_landed(r, landed[2]) if landed is not None else "never"
    if landed is None or where != "here":
        lock.drop_unfinished()
        lock.release()
        if landed is not None and where == "elsewhere":
            _log.warning(
                "omh: an interrupted omh command had committed %s on %s without updating "
                "the index and working tree; HEAD is at %s now, so omh left both as they "
                "are: check `git status` before you commit", landed[2][:12],
                landed[0].removeprefix("refs/heads/"),
                _head_name(r))
        return None
    branch, old, new = landed
    undo = WorkdirUndo(repo.workdir)
    try:
        index = read_index(repo)
        new_tree = r[new].peel(pygit2.Commit).tree
        if old is None:
            diff = new_tree.diff_to_tree(swap=True)
        else:
            diff = r[old].peel(pygit2.Commit).tree.diff_to_tree(new_tree)
        blobs: dict[str, pygit2.Oid] = {}
        delete: list[str] = []
        writes: list[tuple[str, bytes, bytes | None]] = []
        removals: list[tuple[str, bytes]] = []
        for delta in diff.deltas:
            before = delta.old_file if int(delta.old_file.mode) in REGULAR else None
            after = delta.new_file if int(delta.new_file.mode) in REGULAR else None
            if before is None and after is None:
                continue
            path = str(after.path if after is not None else delta.old_file.path)
            entry = _entry(index, path)
            ours = entry.id == before.id if entry is not None and before is not None \
                else entry is None and before is None
            old_bytes = r[before.id].read_raw() if before is not None else None
            if after is not None:
                if ours:
                    blobs[path] = after.id
                writes.append((path, r[after.id].read_raw(), old_bytes))
            elif before is not None and old_bytes is not None:
                if entry is not None and ours:
                    delete.append(path)
                removals.append((path, old_bytes))
        staged = stage_index(lock, blobs, tuple(delete))
        faults.point(faults.FINISH)
        for path, data, replaceable in writes:
            undo.write(path, data, replaceable)
        for path, data in removals:
            undo.delete(path, data)
        lock.commit(staged)
        lock.drop_unfinished()  # killed just before: finishing again changes nothing
    except BaseException as err:
        lock.discard()
        undo.run()
        lock.abandon()  # the lock and the job stay: the next run finishes it
        if isinstance(err, (pygit2.GitError, OSError, KeyError, ValueError)):
            reason = describe(err, repo.git_dir)
            raise GitFailure(
                f"an interrupted omh command left its commit {new[:12]} on {branch} "
                f"unfinished, and finishing it failed ({reason}); run the command again"
            ) from None
        raise
    return new


def _entry(index: pygit2.Index, path: str) -> pygit2.IndexEntry | None:
    try:
        return index[path]
    except KeyError:
        return None


def _landed(landed: object) -> tuple[str, str | None, str] | None:
    """The move a killed omh process recorded: (branch, the commit it pointed at,
    the new commit), or None."""
    if not isinstance(landed, dict):
        return None
    branch, old, new = landed.get("branch"), landed.get("old"), landed.get("new")
    if not isinstance(branch, str) or not isinstance(new, str) or not (
            old is None or isinstance(old, str)):
        return None
    return branch, old, new


def _where_landed(r: pygit2.Repository, new: str) -> str:
    """"here" when HEAD is exactly the landed commit `new` (whatever its branch is
    called now); "never" when no branch holds `new` (the move never happened, or
    the user dropped the commit: the index is theirs either way, nothing was left
    half-done); "elsewhere" when a branch holds it but HEAD is not it."""
    try:
        wanted = pygit2.Oid(hex=new)
        head = None if r.head_is_unborn else r.head.target
        if head == wanted:
            return "here"
        tips = [head] + [r.references[name].resolve().target
                         for name in r.references if name.startswith("refs/heads/")]
        for tip in tips:
            if isinstance(tip, pygit2.Oid) and (tip == wanted or r.descendant_of(tip, wanted)):
                return "elsewhere"
    except (pygit2.GitError, KeyError, ValueError):
        return "elsewhere"  # cannot tell: say so rather than finish or stay silent
    return "never"


def _head_name(r: pygit2.Repository) -> str:
    try:
        if r.head_is_unborn:
            return "an unborn branch"
        name = "a detached HEAD" if r.head_is_detached else r.head.shorthand
        return f"{str(r.head.target)[:12]} ({name})"
    except pygit2.GitError:
        return "an unreadable HEAD"
