"""Whose store may be opened here, and `omh adopt`, which brings a store a moved
clone left behind (left_behind.py) over to the clone, or takes over another
clone's store of the same repository. Each store's record of whose it is:
record.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from omh_git_memory.git import nofollow
from omh_git_memory.git.history import first_root
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import ForeignStore, StoreError
from omh_git_memory.stores.fileops import TMP_PREFIX, make_private
from omh_git_memory.stores.journal import DIR_MODE, FILE_MODE, LOCK_NAME, make_private_dirs
from omh_git_memory.stores.left_behind import find_left_behind, is_plain_dir, note_files
from omh_git_memory.stores.location import store_id
from omh_git_memory.stores.reading import read_regular
from omh_git_memory.stores.record import (
    CLONE_ID,
    MARKER,
    StoreRecord,
    clone_id,
    read_record,
    record_of,
    same_history,
    still_there,
    write_record,
)
from omh_git_memory.stores.store import CACHE_FILES


def _rootless(store: Path, record: StoreRecord) -> str:
    return (f"the local store {store} was made by the clone at {record.checkout} before "
            "its first commit: only that clone's id says whose it is, and this is "
            "another clone or repository")


def _shallow(store: Path, record: StoreRecord) -> str:
    return (f"the local store {store} belongs to another clone, which was at "
            f"{record.checkout}; this clone is shallow and lacks the commit the store's "
            "record names: nothing tells whether it is of the same repository")


def _describe_root(record: StoreRecord, ours: str | None) -> str:
    theirs = record.root[:12] if record.root else "none yet"
    this = f"this one's is {ours[:12]}" if ours else "this one has no commit yet"
    return f"its first commit is {theirs}; {this}"

def check_owner(repo: GitRepo, store: Path, mounted: bool = False) -> None:
    """Refuse (:class:`ForeignStore`) to open `store` unless it is this repository's.

    The default store is named after the checkout's path, so a repository made at
    a moved clone's old path lands on the moved clone's store. Its record says
    whose it is: another clone id means another clone — refused, and when the
    first commits differ too, another repository. A store named by
    OMH_LOCAL_STORE (`mounted`) is chosen by the user, and a sandbox's own clone
    may mount it: it is refused only when it holds another repository's notes."""
    record = read_record(store)
    if record is None:
        return  # no record (an older omh's store): nothing to compare
    mine = clone_id(repo)
    if record.clone is not None and record.clone == mine:
        return
    same = same_history(repo, record)
    unrelated = same is False
    if mounted:
        # A shallow clone, or a record made before the first commit or by a shallow
        # clone, proves nothing either way: the user's choice of store stands.
        if unrelated:
            raise ForeignStore(
                f"OMH_LOCAL_STORE names {store}, which holds the notes of another "
                f"repository ({_describe_root(record, first_root(repo))}), so omh "
                "neither reads nor "
                "writes it here: point OMH_LOCAL_STORE at this repository's store, or at "
                "a new folder")
        return
    aside = f"mv {store} {store}-left"
    if record.root is None and record.clone is not None:
        raise ForeignStore(
            f"{_rootless(store, record)}, so omh neither reads nor writes it here; if that "
            "clone was moved, run `omh adopt` in it to take its notes along (its first "
            f"commit then records whose they are); to start a fresh store here, `{aside}`")
    if (record.clone is None or mine is None) and not unrelated:
        return  # nothing tells the clones apart, and the history agrees
    if same is None:
        raise ForeignStore(
            f"{_shallow(store, record)}; omh neither reads nor writes it here: "
            "`git fetch --unshallow` lets omh compare, or if that clone was moved, run "
            f"`omh adopt` in it; to start afresh, `{aside}`")
    if unrelated:
        raise ForeignStore(
            f"the local store {store} holds the notes of another repository, which was "
            f"at {record.checkout} ({_describe_root(record, first_root(repo))}), so omh "
            "neither reads "
            "nor writes it here; if that repository was moved, run `omh adopt` in it to "
            f"take its notes along; to start a fresh store for this one, `{aside}` (the "
            "moved clone still finds it there)")
    raise ForeignStore(
        f"the local store {store} belongs to another clone of this repository, which "
        f"was at {record.checkout}; this clone is a different one (cloned again, or its "
        f"{CLONE_ID} under the git directory was lost), so omh neither reads nor writes "
        "that store here; if that clone was moved, run `omh adopt` in it to take its "
        f"notes along; if it is gone and its notes are yours, `omh adopt {store}` takes "
        f"the store over for this clone; to start afresh, `{aside}`")


def take_over(repo: GitRepo, store: Path) -> int:
    """Make this clone's own default store, recorded as another clone's of the same
    repository, this clone's (`omh adopt STORE` run in a fresh clone where the old
    one was). Refused for another repository's store. The number of its notes."""
    record = read_record(store)
    if record is None or (record.clone is not None and record.clone == clone_id(repo)):
        raise StoreError(f"{store} is this clone's own store already; nothing to adopt")
    same = same_history(repo, record)
    if same is False:
        raise ForeignStore(f"{store} holds the notes of another repository "
                           f"({_describe_root(record, first_root(repo))}); it cannot be "
                           "taken over: run `omh adopt` in that repository instead")
    if record.root is None:
        raise ForeignStore(f"{_rootless(store, record)}; it cannot be taken over: run "
                           "`omh adopt` in that clone, or start afresh with "
                           f"`mv {store} {store}-left`")
    if same is None:
        raise ForeignStore(f"{_shallow(store, record)}; it cannot be taken over until "
                           "`git fetch --unshallow` shows this clone's full history")
    write_record(store, record_of(repo))
    make_private(store)
    return len(list(note_files(store)))

# --- adopting ----------------------------------------------------------------

@dataclass(frozen=True)
class Adopted:
    source: Path
    target: Path
    notes: int  # notes brought over
    merged: bool  # the target existed and kept its own notes too
    left: list[str] = field(default_factory=list)  # what stayed in `source`, and why


def adopt(repo: GitRepo, target: Path, named: str | None,
          environ: Mapping[str, str] | None = None) -> Adopted:
    """Bring a store left behind into `target`, the clone's default store.

    With nothing `named`, the store this clone left behind for sure. Else `named`
    is the store's folder or the clone's old path. When `target` does not exist the
    store is renamed into place (atomic); when it does, notes are copied in, never
    over a different note (any conflict refuses before anything changes), and each
    is removed from the old store only once the new one holds the same bytes."""
    env = os.environ if environ is None else environ
    if env.get("OMH_LOCAL_STORE"):
        raise StoreError("OMH_LOCAL_STORE names the local store, so there is nothing to "
                         "adopt: point OMH_LOCAL_STORE at the store you want instead")
    source = _left_behind_store(repo, target) if named is None else _named_store(
        named, target.parent)
    if named is not None and is_plain_dir(target) and _resolved(source) == _resolved(target):
        taken = take_over(repo, target)  # this clone's path, another clone's record
        return Adopted(source, target, taken, merged=False)
    _check_source(repo, source, target)
    notes = sorted(note_files(source))
    if not target.parent.is_dir():
        target.parent.mkdir(mode=DIR_MODE, parents=True)
    if _only_a_record(target):  # made by `omh init`, say, and never written to
        for name in (MARKER, *CACHE_FILES):
            with contextlib.suppress(OSError):
                os.unlink(target / name)
    empty = not os.path.lexists(target) or (is_plain_dir(target) and not any(target.iterdir()))
    if empty:
        try:
            os.rename(source, target)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EXDEV):
                raise StoreError(f"cannot move {source} to {target}: {err.strerror}") from None
            make_private_dirs(target, target.parent)  # across file systems: copied below
        else:
            write_record(target, record_of(repo))
            make_private(target)
            return Adopted(source, target, len(notes), merged=False)
    if not is_plain_dir(target):
        raise StoreError(f"{target} is not a directory; move it away and run `omh adopt` again")
    left = _merge(source, target, notes)
    write_record(target, record_of(repo))
    return Adopted(source, target, len(notes), merged=not empty, left=left)


def _only_a_record(store: Path) -> bool:
    try:
        names = {e.name for e in os.scandir(store)}
        return is_plain_dir(store) and MARKER in names and names <= {MARKER, *CACHE_FILES}
    except OSError:
        return False


def _left_behind_store(repo: GitRepo, target: Path) -> Path:
    moved = find_left_behind(repo, target, every=False)
    if len(moved) > 1:
        where = ", ".join(str(m.store) for m in moved)
        raise StoreError(f"this clone left {len(moved)} stores behind ({where}); adopt one at "
                         "a time with `omh adopt PATH`")
    if not moved:
        raise StoreError("no local store left behind by this clone was found; if it was moved "
                         "before omh recorded its stores, run `omh adopt OLD_PATH` with the "
                         "clone's old path (or the store's folder)")
    return moved[0].store


def _named_store(named: str, memory: Path) -> Path:
    path = Path(os.path.abspath(Path(named).expanduser()))
    if is_plain_dir(path) and (os.path.lexists(path / MARKER) or path.parent == memory):
        return path
    store = memory / store_id(_resolved(path))  # the clone's old path
    if is_plain_dir(store):
        return store
    raise StoreError(f"{named} is not a local store, and no store of a clone at {path} is in "
                     f"{memory}; name the store's folder or the clone's old path")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _check_source(repo: GitRepo, source: Path, target: Path) -> None:
    real, mine = _resolved(source), _resolved(target)
    if real == mine or real.is_relative_to(mine) or mine.is_relative_to(real):
        raise StoreError(f"{source} is this clone's own store (or holds it); nothing to adopt")
    record = read_record(source)
    if record is None:
        return
    if record.checkout != str(repo.main_checkout) and still_there(record):
        raise StoreError(f"{source} is the local store of the clone at {record.checkout}, "
                         "which still exists; adopting it would take its notes away (copy "
                         "the notes you want with `omh memory show`, then remember them)")
    if record.clone is not None and record.clone == clone_id(repo):
        return  # this clone's own store, left behind by a move
    ours = first_root(repo)
    same = same_history(repo, record)
    if same is False and ours is not None:
        raise StoreError(f"{source} belongs to another repository (its first commit is "
                         f"{(record.root or '')[:12]}, this one's is {ours[:12]}); nothing "
                         "was moved")
    if record.root is None and record.clone is not None:
        raise StoreError(f"{_rootless(source, record)}; nothing was moved: run `omh adopt` "
                         "in that clone")
    if same is None and record.root is not None:
        raise StoreError(f"{_shallow(source, record)}; nothing was moved: "
                         "`git fetch --unshallow`, then run `omh adopt` again")


def _merge(source: Path, target: Path, notes: list[str]) -> list[str]:
    conflicts = [rel for rel in notes if _differs(source / rel, target, rel)]
    if conflicts:
        shown = ", ".join(conflicts[:5]) + (f" and {len(conflicts) - 5} more"
                                             if len(conflicts) > 5 else "")
        raise StoreError(f"both {source} and {target} hold {shown} with different text; "
                         "nothing was moved: keep one copy of each, then run `omh adopt` again")
    for rel in notes:
        _copy_new(source / rel, target / rel, target)
    for rel in notes:  # remove only what the new store now holds byte for byte
        if read_regular(source / rel) == read_regular(target / rel):
            with contextlib.suppress(OSError):
                os.unlink(source / rel)
    for name in (MARKER, LOCK_NAME, *CACHE_FILES):  # the record, lock and caches
        with contextlib.suppress(OSError):
            os.unlink(source / name)
    _prune(source)
    left: list[str] = []
    if os.path.lexists(source):
        left = sorted(os.path.relpath(os.path.join(d, f), source)
                      for d, _dirs, files in os.walk(source) for f in files)
    return left


def _differs(src: Path, target: Path, rel: str) -> bool:
    """True when `target` holds something else where `rel` would go."""
    current = target
    for part in rel.split("/")[:-1]:
        current = current / part
        if os.path.lexists(current) and not is_plain_dir(current):
            return True
    dst = target / rel
    if not os.path.lexists(dst):
        return False
    return not stat.S_ISREG(os.lstat(dst).st_mode) or read_regular(dst) != read_regular(src)


def _copy_new(src: Path, dst: Path, target_root: Path) -> None:
    """Create `dst` with `src`'s bytes unless it holds them already; never overwrite
    (`nofollow.put`, create-once: linked into place only if nothing has the name)."""
    data = read_regular(src)
    if data is None or read_regular(dst) == data:
        return
    try:
        make_private_dirs(dst.parent, target_root)
        if not is_plain_dir(dst.parent):
            raise StoreError(f"{dst.parent} is not a directory; nothing was overwritten")
        fd = nofollow.open_root(dst.parent)
        try:
            made = nofollow.put(fd, dst.name, data, exact_mode=FILE_MODE, create_only=True,
                                tmp=f"{TMP_PREFIX}{secrets.token_hex(8)}")
        finally:
            os.close(fd)
    except OSError as err:
        raise StoreError(f"cannot copy {src} to {dst}: {err.strerror}; {src} is kept") from None
    if not made and read_regular(dst) != data:
        raise StoreError(f"{dst} appeared with other text while adopting; nothing was "
                         f"overwritten and {src} is kept: run `omh adopt` again")


def _prune(root: Path) -> None:
    """Remove the empty directories under `root` (and `root`, when it ends empty)."""
    for dirpath, _dirs, _files in sorted(os.walk(root), key=lambda t: -len(t[0])):
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)
