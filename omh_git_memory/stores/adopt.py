"""A store left behind by a moved clone: each store's record of whose it is, how a
moved clone finds its old store, and `omh adopt`, which brings it over.

The default store's folder is named after the clone's path, so `mv` of a clone
leaves its notes under the old name. Each store therefore records, in a small
file `.omh-store` at its root, the clone it belongs to:

- `checkout`: the main checkout's path when the store was made;
- `clone`: a random id kept in the clone's git directory (`<common>/omh/clone-id`),
  which `mv` carries along and `git clone` does not — so it tells "this clone,
  moved" from "another clone of the same repository", and works before the first
  commit;
- `root`: the first-parent root commit of HEAD, which every clone shares (None
  before the first commit, and in a shallow clone, whose boundary is no root),
  for when the clone id was lost. Filled in by the clone itself once it has one.
  Another clone belongs to the same repository when the recorded root is in its
  history (any of its roots, so a later merge of unrelated histories keeps it);
  a shallow clone without that commit cannot tell.

A store is *left behind* when its recorded checkout no longer holds a git
repository. It is this clone's for certain (`MOVED`) when the clone ids agree;
only perhaps (`SAME_HISTORY`) when just the root commit agrees; and unknown
(`UNRECORDED`) for a store written before stores carried a record, found by the
folder name alone. Only `MOVED` makes omh refuse to start a second store; the
others are named as hints. A store named by `OMH_LOCAL_STORE` is never keyed by
a path, so none of this applies to it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Final

from omh_git_memory.git import nofollow
from omh_git_memory.git.repository import GitRepo, first_root, holds_in_history
from omh_git_memory.model.errors import ForeignStore, StoreError
from omh_git_memory.model.keys import NOTE_SUFFIX
from omh_git_memory.model.plural import count
from omh_git_memory.stores.journal import DIR_MODE, FILE_MODE, make_private_dirs
from omh_git_memory.stores.store import TMP_PREFIX, make_private, read_regular, store_id

MARKER: Final = ".omh-store"
CLONE_ID: Final = "omh/clone-id"  # under the common git dir
MAX_RECORD: Final = 64 * 1024
_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class StoreRecord:
    """What `.omh-store` says: whose store this is."""

    checkout: str
    clone: str | None
    root: str | None

    def text(self) -> str:
        return json.dumps({"checkout": self.checkout, "clone": self.clone, "root": self.root},
                          indent=2) + "\n"


def read_record(store: Path) -> StoreRecord | None:
    """The store's record, or None when it has none (or one omh cannot read)."""
    data = read_regular(store / MARKER, MAX_RECORD)
    if data is None:
        return None
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("checkout"), str):
        return None
    clone, root = raw.get("clone"), raw.get("root")
    return StoreRecord(raw["checkout"], clone if isinstance(clone, str) else None,
                       root if isinstance(root, str) else None)


def write_record(store: Path, record: StoreRecord) -> None:
    """Replace the store's record atomically (`nofollow.put`: a rename, never
    through a symlink), private (0600) whatever the umask."""
    try:
        fd = nofollow.open_root(store)
        try:
            nofollow.put(fd, MARKER, record.text().encode("utf-8", "surrogateescape"),
                         exact_mode=FILE_MODE, tmp=f"{TMP_PREFIX}{secrets.token_hex(8)}")
        finally:
            os.close(fd)
    except OSError as err:
        raise StoreError(f"cannot record whose store {store} is: {err.strerror}") from None


def clone_id(repo: GitRepo, create: bool = False) -> str | None:
    """This clone's id, made on first use when `create`; None when there is none."""
    path = repo.common_dir / CLONE_ID
    with contextlib.suppress(UnicodeDecodeError):
        # Never opened unless a regular file: a FIFO there would block forever.
        found = (read_regular(path) or b"").decode("ascii").strip()
        if _ID.fullmatch(found):
            return found
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = nofollow.open_root(path.parent)
        try:  # create-once: of two first uses, one id wins; the other reads it
            nofollow.put(fd, path.name, (secrets.token_hex(16) + "\n").encode("ascii"),
                         new_mode=0o666, create_only=True,
                         tmp=f"{TMP_PREFIX}{secrets.token_hex(8)}", sync=False)
        finally:
            os.close(fd)
    except OSError:
        return None
    return clone_id(repo)


def record_of(repo: GitRepo) -> StoreRecord:
    return StoreRecord(str(repo.main_checkout), clone_id(repo, create=True), first_root(repo))


def keep_record(repo: GitRepo, store: Path, only_if_missing: bool = False) -> None:
    """Make sure the clone's own store says whose it is (stores made before records
    existed get one on first use). Costs a stat and a small read; silent on failure,
    since a record only helps find the store after a move. `only_if_missing`: a
    store OMH_LOCAL_STORE names, which keeps the record of whoever made it."""
    if not store.is_dir():
        return
    found = read_record(store)
    mine = clone_id(repo, create=True)
    if only_if_missing and found is not None and not (
            found.root is None and found.clone is not None and found.clone == mine):
        return
    checkout = str(repo.main_checkout)
    if found is not None and found.clone is not None and found.clone != mine:
        # Another clone's store: it was moved away and a new clone now sits at its
        # old path. Rewriting the record would hide the store from the clone that
        # made it, which finds it by this id; keep it as it is (check_owner refuses
        # to open it).
        return
    if found is not None and found.checkout == checkout and found.clone == mine and (
            found.root is not None or first_root(repo) is None):
        return  # up to date (a record made before the first commit gets its root here)
    if found is not None and _unrelated(repo, found):
        return  # another repository's: never claimed (check_owner refuses it)
    with contextlib.suppress(StoreError):
        write_record(store, record_of(repo))


def _same_history(repo: GitRepo, record: StoreRecord) -> bool | None:
    """Whether the store's notes are this repository's by history: True when the
    recorded root is in HEAD's history, False when provably not (or this
    repository has no commit yet, so it cannot be the one that made them), None
    when nothing can tell (no root recorded, or a shallow clone lacking it)."""
    return None if record.root is None else holds_in_history(repo, record.root)


def _unrelated(repo: GitRepo, record: StoreRecord) -> bool:
    """Whether the store provably holds another repository's notes."""
    return _same_history(repo, record) is False


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
    same = _same_history(repo, record)
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
    same = _same_history(repo, record)
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


class Match(StrEnum):
    MOVED = "moved"  # this clone's own store: the ids agree
    SAME_HISTORY = "same history"  # a clone of this repository; perhaps this one
    UNRECORDED = "unrecorded"  # a store from before records, named like this clone's


@dataclass(frozen=True)
class LeftBehind:
    """A store whose clone is gone and that may be this clone's."""

    store: Path
    match: Match
    notes: int
    checkout: str | None  # where its clone was (None when unrecorded)

    def message(self) -> str:
        n = count(self.notes, "note")
        if self.match is Match.MOVED:
            return (f"this clone was moved from {self.checkout}: its local store, with {n}, "
                    f"is still at {self.store}; run `omh adopt` to bring it here")
        if self.match is Match.SAME_HISTORY:
            return (f"a clone of this repository at {self.checkout}, which is gone, left a "
                    f"local store with {n} at {self.store}; if this clone was moved from "
                    f"there, run `omh adopt {self.checkout}`")
        return (f"{self.store} holds {n} from an older omh that did not record its clone; "
                "if it was this clone's before a move, run `omh adopt OLD_PATH` with the "
                "clone's old path")


def find_left_behind(repo: GitRepo, root: Path, every: bool = True) -> list[LeftBehind]:
    """Stores beside `root` (the clone's default store) that its clone may have left
    behind by moving; `every=False` keeps only those that are this clone's for sure."""
    memory = root.parent
    mine = clone_id(repo)
    name = store_id(repo.main_checkout).rsplit("-", 1)[0]
    found: list[LeftBehind] = []
    try:
        entries = sorted(memory.iterdir())
    except OSError:
        return []
    for store in entries:
        if store == root or not _is_dir(store):
            continue
        record = read_record(store)
        if record is None:
            match: Match | None = None
            if every and store.name.rsplit("-", 1)[0] == name and re.fullmatch(
                    r"[0-9a-f]{12}", store.name.rsplit("-", 1)[-1]):
                match = Match.UNRECORDED
        elif record.checkout == str(repo.main_checkout) or _still_there(record):
            continue  # its clone is still there: another clone's store, never this one's
        elif mine is not None and record.clone == mine:
            match = Match.MOVED
        elif every and record.root is not None:
            match = Match.SAME_HISTORY if _same_history(repo, record) else None
        else:
            match = None
        if match is None:
            continue
        notes = len(list(note_files(store)))
        if notes:
            found.append(LeftBehind(store, match, notes, record.checkout if record else None))
    return sorted(found, key=lambda lb: list(Match).index(lb.match))


def refuse_a_second_store(repo: GitRepo, root: Path) -> None:
    """Before the store is first made: refuse when this clone left its store elsewhere."""
    moved = find_left_behind(repo, root, every=False)
    if moved:
        raise StoreError(f"{moved[0].message()}, before writing (a new store here would "
                         f"split the notes), or delete that store to start afresh")


def holds_a_note(store: Path) -> bool:
    """Whether `store` holds at least one note file; stops at the first, unsorted, so
    it stays cheap for a large store (it runs on every listing and recall)."""
    pending = [store]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif entry.name.endswith(NOTE_SUFFIX) and entry.is_file(
                            follow_symlinks=False):
                        return True
        except OSError:
            continue
    return False


def note_files(store: Path) -> Iterator[str]:
    """The relative paths of the regular `.md` files under `store` (dot names and
    symlinks skipped, walked without recursion)."""
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            entries = sorted(os.scandir(store / rel if rel else store), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append(path)
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(NOTE_SUFFIX):
                yield path


def _is_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _still_there(record: StoreRecord) -> bool:
    """Whether the clone that made the store is still at its recorded checkout: a
    git repository is there, and not one that provably is another clone (its clone
    id differs from the record's — a fresh clone made at a moved clone's old path)."""
    if not _holds_a_clone(record.checkout):
        return False
    if record.clone is None:
        return True
    there = _clone_id_at(record.checkout)
    return there is None or there == record.clone


def _clone_id_at(checkout: str) -> str | None:
    """The clone id kept by the repository at `checkout` (a checkout with a `.git`
    folder, or a bare repository), or None when there is none or it cannot be read."""
    for git_dir in (os.path.join(checkout, ".git"), checkout):
        found = (read_regular(Path(git_dir) / CLONE_ID) or b"").decode("ascii", "replace").strip()
        if _ID.fullmatch(found):
            return found
    return None


def _holds_a_clone(checkout: str) -> bool:
    """Whether a git repository is still at `checkout` (a checkout, or the bare
    repository that a clone made of linked worktrees is named after)."""
    return os.path.lexists(os.path.join(checkout, ".git")) or (
        os.path.isfile(os.path.join(checkout, "HEAD"))
        and os.path.isdir(os.path.join(checkout, "objects")))


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
    if named is not None and _is_dir(target) and _resolved(source) == _resolved(target):
        taken = take_over(repo, target)  # this clone's path, another clone's record
        return Adopted(source, target, taken, merged=False)
    _check_source(repo, source, target)
    notes = sorted(note_files(source))
    if not target.parent.is_dir():
        target.parent.mkdir(mode=DIR_MODE, parents=True)
    if _only_a_record(target):  # made by `omh init`, say, and never written to
        with contextlib.suppress(OSError):
            os.unlink(target / MARKER)
    if not os.path.lexists(target) or (_is_dir(target) and not any(target.iterdir())):
        try:
            os.rename(source, target)
        except OSError as err:
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EXDEV):
                raise StoreError(f"cannot move {source} to {target}: {err.strerror}") from None
        else:
            write_record(target, record_of(repo))
            make_private(target)
            return Adopted(source, target, len(notes), merged=False)
    if not _is_dir(target):
        raise StoreError(f"{target} is not a directory; move it away and run `omh adopt` again")
    left = _merge(source, target, notes)
    write_record(target, record_of(repo))
    return Adopted(source, target, len(notes), merged=True, left=left)


def _only_a_record(store: Path) -> bool:
    try:
        return _is_dir(store) and [e.name for e in os.scandir(store)] == [MARKER]
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
    if _is_dir(path) and (os.path.lexists(path / MARKER) or path.parent == memory):
        return path
    store = memory / store_id(_resolved(path))  # the clone's old path
    if _is_dir(store):
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
    if record.checkout != str(repo.main_checkout) and _still_there(record):
        raise StoreError(f"{source} is the local store of the clone at {record.checkout}, "
                         "which still exists; adopting it would take its notes away (copy "
                         "the notes you want with `omh memory show`, then remember them)")
    if record.clone is not None and record.clone == clone_id(repo):
        return  # this clone's own store, left behind by a move
    ours = first_root(repo)
    same = _same_history(repo, record)
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
    with contextlib.suppress(OSError):
        os.unlink(source / MARKER)
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
        if os.path.lexists(current) and not _is_dir(current):
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
        if not _is_dir(dst.parent):
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
