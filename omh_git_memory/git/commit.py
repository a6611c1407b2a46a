"""The commit builder: one commit of files added and deleted on the current branch,
without touching other work. git's index lock is held from before the branch moves
(compare-and-swap) until the new index is in place; any failure puts everything
back. Also who the commit is by and its signature, as `git commit` would make them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omh_git_memory.git import identity
from omh_git_memory.git.config import config_value
from omh_git_memory.git.filters import disk_form
from omh_git_memory.git.gitfiles import IndexLock, WorkdirUndo, describe, disk_obstacle
from omh_git_memory.git.obstacles import index_obstacle, staged_edit, tree_obstacle
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.staging import read_index, refuse_other_index
from omh_git_memory.git.trees import REGULAR
from omh_git_memory.model import faults
from omh_git_memory.model.errors import GitFailure


@dataclass(frozen=True)
class Change:
    """Files to add (path → bytes) and paths to delete, in one commit."""

    add: dict[str, bytes]
    delete: tuple[str, ...]
    message: str
    signoff: bool = False  # end the message with a Signed-off-by trailer (git commit -s)


def signed_off(message: str, name: str, email: str) -> str:
    """`message` ending in `Signed-off-by: name <email>`, as `git commit --signoff`
    writes it: in the message's last paragraph when that is already trailers, else
    in a paragraph of its own; never twice."""
    trailer = f"Signed-off-by: {name} <{email}>"
    body = message.rstrip("\n")
    paragraphs = body.split("\n\n")
    last = paragraphs[-1].split("\n") if len(paragraphs) > 1 else []
    if trailer in last:
        return body + "\n"
    is_trailers = bool(last) and all(re.match(r"[A-Za-z0-9-]+: ", line) for line in last)
    return body + ("\n" if is_trailers else "\n\n") + trailer + "\n"


def identities(repo: GitRepo, environ: Mapping[str, str] | None = None
               ) -> tuple[pygit2.Signature, pygit2.Signature]:
    """The author and the committer `git commit` would record here: `GIT_AUTHOR_*` /
    `GIT_COMMITTER_*` before configuration, as git reads them (identity.py)."""
    env = os.environ if environ is None else environ
    found = [identity.person(role, lambda name: config_value(repo, name), env)
             for role in ("author", "committer")]
    try:
        return _signature(found[0]), _signature(found[1])
    except (ValueError, pygit2.GitError) as err:
        raise GitFailure(f"git's identity cannot be used ({err}); set user.name and "
                         "user.email (or GIT_AUTHOR_* / GIT_COMMITTER_*) to plain text") from None


def _signature(who: identity.Person) -> pygit2.Signature:
    if who.when is None:
        return pygit2.Signature(who.name, who.email)
    return pygit2.Signature(who.name, who.email, who.when[0], who.when[1])


def create_commit(repo: GitRepo, author: pygit2.Signature, committer: pygit2.Signature,
                  message: str, tree: pygit2.Oid, parents: list[pygit2.Oid]) -> pygit2.Oid:
    """A commit object (no ref moves), signed as `git commit` would sign it when
    `commit.gpgSign` is on; a signature that cannot be made is refused, never
    left out."""
    r = repo.repo
    how = identity.signer(lambda name: config_value(repo, name),
                          identity.Person(committer.name, committer.email))
    if how is None:
        return r.create_commit(None, author, committer, message, tree, parents)
    heads: list[pygit2.Oid | str] = list(parents)
    # a str, whatever pygit2's stub says: the object's text, to sign and then store
    payload = str(r.create_commit_string(author, committer, message, tree, heads))
    signature = identity.sign(how, payload.encode("utf-8"))
    try:
        return r.create_commit_with_signature(payload, signature)
    except pygit2.GitError as err:
        raise GitFailure(f"storing the signed commit: {describe(err)}") from None


class _Index(pygit2.Index):
    """pygit2's Index, safe to fail to open: pygit2's own `__del__` assumes the
    constructor got as far as opening the file, so a failed open (a damaged index,
    no memory) printed "Exception ignored in Index.__del__" and a traceback on
    stderr after the error had been reported."""

    def __del__(self) -> None:
        if "_index" in self.__dict__:
            super().__del__()


def commit_change(repo: GitRepo, change: Change) -> str:
    """Commit `change` on the current branch without touching other work, then bring
    the working-tree files and index entries of exactly those paths in line.

    git's index lock (`index.lock`) is held from before the branch moves until the
    new index is in place, so no `git commit` can slip in between and commit a
    tree that lacks the change. The branch moves only if it still points where it
    did (compare-and-swap). The working tree is written before the new index is
    put in place, so any failure leaves the index exactly as it was: the files
    written are removed again, the branch is moved back, the lock released.
    """
    r = repo.repo
    if r.head_is_detached:
        raise GitFailure("HEAD is detached; check out a branch first (git switch <branch>)")
    refuse_other_index(repo)
    branch = r.references["HEAD"].target
    assert isinstance(branch, str)
    author, committer = identities(repo)
    message = change.message
    if change.signoff:  # the committer's identity, as git's own --signoff uses
        message = signed_off(message, committer.name, committer.email)
    lock = IndexLock(repo.git_dir)
    lock.acquire()
    undo = WorkdirUndo(repo.workdir)
    moved: tuple[pygit2.Oid, pygit2.Oid | None] | None = None
    staged: Path | None = None
    try:
        index = read_index(repo)
        ref = r.references.get(branch)
        parent = ref.target if ref is not None else None
        assert parent is None or isinstance(parent, pygit2.Oid)
        old_tree = r[parent].peel(pygit2.Commit).tree if parent is not None else None
        for path, data in change.add.items():
            why = (tree_obstacle(old_tree, path) or index_obstacle(index, path)
                   or staged_edit(index, old_tree, path))
            if why is None and repo.workdir is not None:
                # A file the commit changes may stand there as HEAD has it.
                why = disk_obstacle(repo.workdir, path, *_on_disk(repo, path, data, old_tree))
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        for path in change.delete:
            why = staged_edit(index, old_tree, path)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        tree = _Index()
        if old_tree is not None:
            tree.read_tree(old_tree)
        blobs = {path: r.create_blob(data) for path, data in change.add.items()}
        faults.point("commit:blobs")
        for path, blob in blobs.items():
            tree.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        for path in change.delete:
            tree.remove(path)
        staged = stage_index(lock, blobs, change.delete)
        faults.point("commit:stage")
        tree_id = tree.write_tree(r)
        faults.point("commit:tree")
        new = create_commit(
            repo, author, committer, message, tree_id,
            [parent] if parent is not None else [],
        )
        faults.point("commit:object")
        lock.landed(branch, str(parent) if parent is not None else None, str(new))
        _move(r, branch, ref, new, f"omh: {change.message.splitlines()[0]}")
        moved = (new, parent)
        faults.point("commit:ref")
        for path, data in change.add.items():
            # A clean copy of HEAD's file is replaced; a file written there since
            # the check above is the user's and stays (it shows as their change).
            undo.write(path, *_on_disk(repo, path, data, old_tree))
        for path in change.delete:
            undo.delete(path, disk_form(repo, path, _blob_at(r, old_tree, path)))
        faults.point("commit:workdir")
        lock.commit(staged)
    except BaseException as err:
        if staged is not None and moved is not None and not staged.exists():
            # The staged index is in place (renamed onto the index), so the commit is
            # whole: an interrupt after that finishes the job, never undoes the branch
            # and the files while the index keeps the commit's paths.
            lock.finish()
            raise
        _undo(lock, undo, r, branch, moved, err)
        raise  # _undo raises the failure to report; this is for anything else
    faults.point("commit:index")
    return str(new)


def _move(r: pygit2.Repository, branch: str, ref: pygit2.Reference | None, new: pygit2.Oid,
          message: str) -> None:
    """Point `branch` at `new` if it still points where `ref` did (compare-and-swap)."""
    try:
        if ref is None:
            r.references.create(branch, new)
        else:
            ref.set_target(new, message)
    except (pygit2.GitError, OSError) as err:
        with contextlib.suppress(pygit2.GitError, OSError):
            now = r.references.get(branch)
            if now is not None and now.target == new:
                return  # it moved, and only the reflog failed
        reason = describe(err, Path(r.path))
        if reason.startswith(("the disk", "your disk quota")):
            raise GitFailure(f"could not move {branch}, nothing was changed: {reason}") from None
        # GitError when the branch moved; OSError when git holds the ref's lock.
        raise GitFailure(
            f"could not move {branch}: {reason} (another process committed meanwhile?); "
            "nothing was changed, run the command again"
        ) from None


def _undo(lock: IndexLock, undo: WorkdirUndo, r: pygit2.Repository, branch: str,
          moved: tuple[pygit2.Oid, pygit2.Oid | None] | None, err: BaseException) -> None:
    """Put everything back after `err`: the staged index dropped (the index itself was
    never replaced), the working-tree files restored, the branch moved back, the lock
    released — then raise one clear failure. Space is freed before the branch is
    moved back, so a full disk can still take the ref update."""
    lock.discard()
    left = undo.run()
    kept: str | None = None
    if moved is not None:
        try:
            if not _move_back(r, branch, *moved):
                kept = "somebody moved the branch on since"
        except (pygit2.GitError, OSError) as failure:
            kept = describe(failure, Path(r.path))
    if kept is None:
        lock.drop_own_unfinished()  # the branch is where it was: nothing to finish
    lock.release()
    if not isinstance(err, (pygit2.GitError, OSError, KeyError, GitFailure)):
        return  # KeyboardInterrupt and bugs go on as they are (a KeyError here is
        # libgit2's: an object or path it cannot find, as a full disk can leave)
    what = str(err) if isinstance(err, GitFailure) else describe(err, Path(r.path))
    if moved is None:
        if isinstance(err, GitFailure):
            raise err.with_traceback(None) from None
        raise GitFailure(f"committing failed ({what}); nothing was committed or changed") from None
    new, parent = moved
    if kept is not None:
        back = f"git reset --soft {parent}" if parent is not None else "git update-ref -d HEAD"
        raise GitFailure(
            f"committing failed ({what}), and the commit {str(new)[:12]} could not be undone "
            f"({kept}): it stays on {branch}, but the index and working tree lack it; run "
            f"the same omh command again to finish it, or drop it with `{back}`"
        ) from None
    extra = f"; could not remove {', '.join(left)} again" if left else ""
    raise GitFailure(
        f"committing failed ({what}); the commit was undone and nothing else changed{extra}"
    ) from None


def _on_disk(repo: GitRepo, path: str, data: bytes, tree: pygit2.Tree | None
             ) -> tuple[bytes, bytes | None]:
    """The new bytes of `path` and HEAD's, each as the working tree holds (or git
    would write) them, so that a clean copy under line-ending filters is seen as
    clean."""
    new = disk_form(repo, path, data)
    assert new is not None
    return new, disk_form(repo, path, _blob_at(repo.repo, tree, path))


def _blob_at(r: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    return r[entry.id].read_raw() if entry.filemode in REGULAR else None


def stage_index(lock: IndexLock, blobs: dict[str, pygit2.Oid], delete: tuple[str, ...]) -> Path:
    """Write the index as it must be after the commit beside the lock (to be renamed
    into place by `lock.commit`).

    The staged index keeps the modification time of the index it copies. git trusts
    an entry's stat data only when the entry is older than the index file; one
    stamped in the same tick as the index (a file edited right after `git add`)
    is "racily clean" and must be compared by content. A fresh mtime on the copy
    would make such entries trusted, and hide the edit (`git status` shows `M `
    where it showed `MM`). Keeping the timestamp keeps exactly the entries git
    would re-check; the entries added here carry no stat data, so git hashes
    them anyway."""
    stamp: os.stat_result | None = None
    if lock.index.exists():
        stamp = os.stat(lock.index)
        shutil.copyfile(lock.index, lock.staged)
    else:
        lock.staged.unlink(missing_ok=True)
    index = _Index(str(lock.staged))
    for path, blob in blobs.items():
        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
    for path in delete:
        if path in index:
            index.remove(path)
    index.write()
    if stamp is not None:
        os.utime(lock.staged, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return lock.staged


def _move_back(r: pygit2.Repository, branch: str, new: pygit2.Oid, old: pygit2.Oid | None) -> bool:
    """Point `branch` back at `old`; False when somebody moved it since (their work
    is left alone)."""
    ref = r.references.get(branch)
    if ref is None or ref.target != new:
        return False
    if old is None:
        ref.delete()
    else:
        ref.set_target(old, "omh: undo")
    return True
