"""Finding the store a moved clone left behind (see record.py for the record each
store keeps of its clone).

A store is *left behind* when its recorded checkout no longer holds a git
repository. It is this clone's for certain (`MOVED`) when the clone ids agree;
only perhaps (`SAME_HISTORY`) when just the root commit agrees; and unknown
(`UNRECORDED`) for a store written before stores carried a record, found by the
folder name alone. Only `MOVED` makes omh refuse to start a second store; the
others are named as hints. A store named by `OMH_LOCAL_STORE` is never keyed by
a path, so none of this applies to it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import NOTE_SUFFIX
from omh_git_memory.model.plural import count
from omh_git_memory.stores.location import store_id
from omh_git_memory.stores.record import clone_id, read_record, same_history, still_there


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
        if store == root or not is_plain_dir(store):
            continue
        record = read_record(store)
        if record is None:
            match: Match | None = None
            if every and store.name.rsplit("-", 1)[0] == name and re.fullmatch(
                    r"[0-9a-f]{12}", store.name.rsplit("-", 1)[-1]):
                match = Match.UNRECORDED
        elif record.checkout == str(repo.main_checkout) or still_there(record):
            continue  # its clone is still there: another clone's store, never this one's
        elif mine is not None and record.clone == mine:
            match = Match.MOVED
        elif every and record.root is not None:
            match = Match.SAME_HISTORY if same_history(repo, record) else None
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

def is_plain_dir(path: Path) -> bool:
    """Whether `path` is a directory itself, not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
