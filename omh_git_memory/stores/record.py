"""Each store's record of whose it is, and the clone id that record names.

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

A store named by `OMH_LOCAL_STORE` is never keyed by a path; it keeps the record
of whoever made it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from omh_git_memory.git import nofollow
from omh_git_memory.git.history import first_root, holds_in_history
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import StoreError
from omh_git_memory.stores.fileops import TMP_PREFIX
from omh_git_memory.stores.journal import FILE_MODE
from omh_git_memory.stores.reading import read_regular

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

def same_history(repo: GitRepo, record: StoreRecord) -> bool | None:
    """Whether the store's notes are this repository's by history: True when the
    recorded root is in HEAD's history, False when provably not (or this
    repository has no commit yet, so it cannot be the one that made them), None
    when nothing can tell (no root recorded, or a shallow clone lacking it)."""
    return None if record.root is None else holds_in_history(repo, record.root)


def _unrelated(repo: GitRepo, record: StoreRecord) -> bool:
    """Whether the store provably holds another repository's notes."""
    return same_history(repo, record) is False

def still_there(record: StoreRecord) -> bool:
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
