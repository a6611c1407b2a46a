"""A snapshot: the team layer of one commit, indexed, and its two cache files.

A snapshot holds every team-layer document of one commit — committed notes,
derived stubs and the repository topic — as metadata plus an inverted index
(word → documents and counts). It is saved as `<commit>.idx` (the documents, the
postings' table, the shape it was built with) next to `<commit>.post` (the
postings' blob), each a checked cache file, and is loaded only when both pass
their checks, belong together and were built with the shape asked for.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from omh_git_memory.recall.cache_files import (
    cache_files,
    collector_paused,
    discard,
    prune,
    read_checked,
    read_checked_digest,
    write_checked,
)
from omh_git_memory.recall.document import Doc, docs_from_tuples
from omh_git_memory.recall.postings import Postings

# 3: checksummed files; 4: stubs indexed as their document, not omh's sentence;
# 5: one stub per key (clashes kept), the topic named by the committed memory.toml
# 6: each snapshot names the settings and code it was built with (`shape`)
# 7: a stub is dated by the day its document last changed, not the commit's
# 8: the commit that last changed each note and document (`changes`)
VERSION: Final = 8


@dataclass
class Snapshot:
    """The team layer of one commit, indexed. Slots of removed documents are None."""

    commit: str | None
    docs: list[Doc | None]
    postings: Postings
    topic_terms: dict[str, int] = field(default_factory=dict)  # the topic cannot be re-read
    reused: int = 0
    analysed: int = 0
    # Documents left without a stub: (key, path, the path whose stub has the key).
    clashes: tuple[tuple[str, str, str], ...] = ()
    # Each written note's and document's path -> the commit that last changed it:
    # (commit id, author, day as a date ordinal); see git/last_changed.py.
    changes: dict[str, tuple[str, str, int]] = field(default_factory=dict)

    def live(self) -> Iterable[tuple[int, Doc]]:
        return ((slot, d) for slot, d in enumerate(self.docs) if d is not None)


def save(folder: Path, snap: Snapshot, made_by: str, keep: Collection[str] = ()) -> None:
    """Write `snap`'s two files, then prune the folder, never evicting `snap` nor the
    commits `keep` names."""
    if snap.commit is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        docs = [d.as_tuple() if d else None for d in snap.docs]
        # The postings first: an index file is only ever next to its postings, and
        # names their digest, so a pair from two different writes never loads.
        blob = snap.postings.blob
        write_checked(folder / f"{snap.commit}.post", blob)
        write_checked(folder / f"{snap.commit}.idx", marshal.dumps(
            (VERSION, snap.commit, made_by, docs, snap.postings.table, snap.topic_terms,
             hashlib.sha256(blob).digest(), snap.clashes, snap.changes)))
        prune(folder, {snap.commit, *keep})
    except OSError:
        pass  # a cache that cannot be written is rebuilt next time; recall stays correct


def load(folder: Path, sha: str, made_by: str) -> Snapshot | None:
    """The snapshot of `sha` from disk, only if both of its files pass their checks,
    belong together and were built with the shape `made_by` (see
    :func:`~omh_git_memory.recall.shape.shape`); files of another version, or that
    fail a check, are discarded. A snapshot of another shape is left for its own
    settings (another worktree's) and not used."""
    raw = read_checked(folder / f"{sha}.idx")
    if raw is None:
        return None
    try:
        with collector_paused():  # some 100,000 objects, none in a cycle
            loaded = marshal.loads(raw)
            if not isinstance(loaded, tuple) or len(loaded) != 9 or loaded[0] != VERSION:
                raise ValueError("another version")
            (_, commit, built_by, docs, table, topic_terms, post_digest, clashes,
             changes) = loaded
            if commit != sha or not isinstance(changes, dict):
                raise ValueError("another commit's")
            if built_by != made_by:
                return None  # valid, for other settings: rebuilt (and replaced) by the caller
            post = read_checked_digest(folder / f"{sha}.post")  # its SHA-256 checked
            if post is None or post[1] != post_digest:
                raise ValueError("postings of another write")
            snap = Snapshot(sha, docs_from_tuples(docs), Postings(table, post[0]), topic_terms,
                            clashes=tuple(tuple(c) for c in clashes),
                            changes=changes)
    except (ValueError, EOFError, TypeError):
        discard(folder / f"{sha}.idx")
        discard(folder / f"{sha}.post")
        return None
    return snap


def newest(folder: Path, made_by: str) -> Snapshot | None:
    """The newest snapshot on disk that passes its checks and was built with the
    shape `made_by`: the base of a patch (one of other settings would carry stubs
    keyed, or documents excluded, as those settings say)."""
    for path in cache_files(folder, "*.idx"):
        snap = load(folder, path.stem, made_by)
        if snap is not None:
            return snap
    return None
