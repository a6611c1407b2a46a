"""The local layer's index: each note file's words and the fields recall shows, kept
in the store between commands, so that recall reads only the files that changed.

For each file the index keeps what identifies it (`lstat`: device, inode, size,
modification and change times in nanoseconds), the SHA-256 of the bytes it was
indexed from, the few fields a result line and its neighbours need (key, type,
date, title, links, length, `invalidated_by`, `cites`), and its words, inverted
into postings as the team snapshot's are. A file whose identity is the one
recorded is not opened; any other is read again, and parsed again only when its
bytes differ from the ones indexed. A note is parsed when an answer quotes it
(`LocalNotes`), not to rank it.

An identity is trusted as git trusts a racily clean entry: a file changed within
RACY of the moment the store was read may be changed again within the same
timestamp tick, with the same size and inode, and look unchanged. Such a file's
identity is not recorded, so it is read (and hashed, not parsed) again next time.
The change time moves on every change to a file, including one that sets its
modification time back, and no one can set it.

The index is one checked file, `.omh-index` at the store's root (a dot name, never
read as a note), written whole and renamed into place, private (0600), naming the
code that made it. It is believed only when it is the owner's own private regular
file (never a symlink: not followed) and passes its check, and is rebuilt
otherwise. It lives in the local store, outside the checkout and the git
directory, so nothing of a local note reaches git, and it moves with the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import threading
import time
from array import array
from collections.abc import Sequence
from stat import S_ISREG
from typing import Final, cast

from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.recall import content_id
from omh_git_memory.recall.cache_files import (
    STALE_TEMP,
    collector_paused,
    discard,
    read_checked,
    write_checked,
)
from omh_git_memory.recall.document import Doc, analyse, doc_for, docs_from_tuples
from omh_git_memory.recall.local_notes import LocalLayer, LocalNotes, NoteCache, private
from omh_git_memory.recall.postings import EMPTY, Changes, Postings
from omh_git_memory.recall.shape import code_digest
from omh_git_memory.stores.reading import Identity, StoredNote, identity, read_note_bytes
from omh_git_memory.stores.store import INDEX_FILE, LocalStore

VERSION: Final = 1
# A file whose modification or change time is this close to the moment the store
# was read (or later) is read again next time: git's racily clean entries, with a
# margin for a file system whose clock is coarse or a little behind ours.
RACY: Final = 2_000_000_000  # nanoseconds
# Parsing costs about 20 times what loading the cache of parsed notes costs per
# byte (0.5 s a MiB against 0.1–0.2 s for 6.4 MB, docs/recall.md): the cache is
# asked only when the bytes to parse outweigh it.
PARSE_OVER_LOAD: Final = 20

class LocalIndex:
    """The local store's index, read from its file and brought up to date with the
    store at each `layer()`; kept in memory between calls (a server's questions),
    and read again when another process wrote the file meanwhile.

    One slot per file indexed, in columns (a slot of a file gone or replaced holds
    None in each, until the slots are renumbered): its path in the store, its
    identity when trusted (else None), the SHA-256 of the bytes indexed, and its
    document (`Doc.as_tuple`; None when the bytes read as no note)."""

    def __init__(self, store: LocalStore, notes: NoteCache | None = None) -> None:
        self.store = store
        self.notes = notes  # asked for a note parsed before, when parsing costs more
        self.path = store.root / INDEX_FILE
        self._prefix = os.path.join(str(store.root), "")  # a document's location: + path
        self._empty()
        self._loaded = False
        self._held: Identity | None = None  # the file on disk the slots came from
        self._lock = threading.Lock()  # a server builds in another thread at start
        self.read = 0  # files opened (what the tests count)
        self.parsed = 0  # files parsed

    def _empty(self) -> None:
        self._paths: list[str | None] = []
        self._identities: list[Identity | None] = []
        self._digests: list[bytes | None] = []
        self._rows: list[Doc | None] = []  # the documents
        self._at: dict[str, int] = {}  # path -> slot
        self._postings = EMPTY  # word -> slots, including gone ones until renumbered
        self._order: list[int] | None = None  # the notes' slots in the order of their paths
        self._docs: tuple[list[Doc], list[str]] | None = None  # their documents and paths

    def layer(self) -> LocalLayer:
        """The local layer as the store holds it now, ready for the searcher."""
        with self._lock:
            if not self.store.open():
                return LocalLayer([], [], LocalNotes([], []))
            return self.store.consistently(self._refresh)

    def _refresh(self) -> LocalLayer:
        now = _now()
        recent = now - RACY  # a time after this is too recent to trust
        self._load()
        at, identities, digests = self._at, self._identities, self._digests
        seen = 0
        lost: set[str] = set()  # indexed, and no note now (a symlink, unreadable, too large)
        pending: list[tuple[str, bytes, bytes, Identity | None, int | None]] = []
        changed = False
        files = []  # the store's signature as read now
        for relpath, info in self.store.files():
            ident = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                     info.st_ctime_ns)
            files.append((relpath, ident))
            slot = at.get(relpath)
            if slot is not None and identities[slot] == ident:
                seen += 1  # (a file whose inode and size are those indexed is regular)
                continue
            if not S_ISREG(info.st_mode) or ident[2] > MAX_NOTE_BYTES:
                if slot is not None:
                    lost.add(relpath)
                continue  # no note: `scan` says why
            read = self.store.file_bytes(relpath)
            self.read += 1
            if isinstance(read, str):
                if slot is not None:
                    lost.add(relpath)
                continue  # not readable now: no note, and out of the index
            data, info = read
            digest = hashlib.sha256(data).digest()
            trusted = identity(info) if max(info.st_mtime_ns,
                                            info.st_ctime_ns) <= recent else None
            if slot is not None and digests[slot] == digest:
                seen += 1
                if identities[slot] != trusted:
                    identities[slot] = trusted
                    changed = True
                continue
            pending.append((relpath, data, digest, trusted, slot))
        if seen < len(at):  # some gone or no note now (or read anew: `_add` drops those)
            present = {relpath for relpath, _ in files}.difference(lost)
            for relpath in [p for p in at if p not in present]:
                self._drop(at.pop(relpath))
            changed = True
        if pending:
            self._add(pending)
            changed = True
        if changed:
            self._order = self._docs = None
            if len(self._paths) > 2 * len(self._at):  # more than half gone: renumber
                self._compact()
            self._save()
        layer = self._layer()
        layer.signature, layer.recent = tuple(files), recent
        return layer

    def _drop(self, slot: int) -> None:
        self._paths[slot] = self._identities[slot] = self._digests[slot] = None
        self._rows[slot] = None

    def _add(self, pending: list[tuple[str, bytes, bytes, Identity | None, int | None]]
             ) -> None:
        """Index the files read anew: parsed (or taken from the cache of parsed
        notes, when parsing them would cost more than loading it) and analysed."""
        ask = self.notes is not None and (
            sum(len(p[1]) for p in pending) * PARSE_OVER_LOAD > self.notes.size())
        added: dict[int, dict[str, int]] = {}
        for relpath, data, digest, trusted, old in pending:
            if old is not None and self._paths[old] == relpath:
                self._drop(old)  # read anew: its old slot is gone
            location = self._prefix + relpath
            known = self.notes.known(Layer.LOCAL, relpath, location, data) if (
                ask and self.notes is not None) else None
            stored: StoredNote
            terms: dict[str, int] | None
            if known is not None:
                stored, terms = known
            else:
                stored, terms = read_note_bytes(Layer.LOCAL, relpath, location, data), None
                self.parsed += 1
            doc: Doc | None = None
            if stored.note is not None:
                if terms is None:
                    terms = dict(analyse(stored.note))
                doc = doc_for(stored.note, Layer.LOCAL, content_id.LOCAL, location, terms)
            slot = self._at[relpath] = len(self._paths)
            self._paths.append(relpath)
            self._identities.append(trusted)
            self._digests.append(digest)
            self._rows.append(doc)
            if doc is not None and terms:
                added[slot] = terms
        if added:
            changes = Changes(self._postings)
            for slot in sorted(added):  # each higher than any the postings hold
                changes.add(slot, added[slot])
            self._postings = self._postings.patched(changes.result())

    def _compact(self) -> None:
        """Drop the slots of files gone: the live ones renumbered in their order, so
        that every word's slots stay ascending."""
        live = [slot for slot, path in enumerate(self._paths) if path is not None]
        renumber = [-1] * len(self._paths)
        for new, old in enumerate(live):
            renumber[old] = new
        pairs: dict[str, tuple[bytes, bytes]] = {}
        for term in self._postings.table:
            found = self._postings.get(term)
            assert found is not None
            kept = [(renumber[s], c) for s, c in zip(*found, strict=True) if renumber[s] >= 0]
            if kept:
                pairs[term] = (array("I", [s for s, _ in kept]).tobytes(),
                               array("I", [c for _, c in kept]).tobytes())
        self._postings = Postings.build(pairs)
        self._paths = [self._paths[slot] for slot in live]
        self._identities = [self._identities[slot] for slot in live]
        self._digests = [self._digests[slot] for slot in live]
        self._rows = [self._rows[slot] for slot in live]
        self._at = dict(zip(cast(list[str], self._paths), range(len(live)), strict=True))
        self._order = None

    def _layer(self) -> IndexedLayer:
        """The readable notes' documents in the order of their paths (as `scan`
        gives them), and the postings seen through that order."""
        rows, paths = self._rows, self._paths
        if self._order is None:
            self._order = [slot for _, slot in sorted(
                (path, slot) for slot, path in enumerate(paths)
                if path is not None and rows[slot] is not None)]
        if self._docs is None:  # no None among them: each is a note's document
            self._docs = (cast(list[Doc], list(map(rows.__getitem__, self._order))),
                          cast(list[str], list(map(paths.__getitem__, self._order))))
        docs, relpaths = self._docs
        return IndexedLayer(docs, self._postings, self._order, len(rows),
                            LocalNotes(docs, store=self.store, relpaths=relpaths,
                                       cache=self.notes))

    def _load(self) -> None:
        """The slots of the index file, unless those held are the file's already (or
        the file is one not to believe, seen before); none when it fails a check."""
        try:
            on_disk: Identity | None = identity(os.lstat(self.path))
        except OSError:
            on_disk = None
        if self._loaded and on_disk == self._held:
            return
        self._loaded, self._held = True, on_disk
        self._empty()
        raw = read_checked(self.path) if private(self.path) else None
        if raw is None:
            return
        try:
            with collector_paused():  # some 30,000 objects, none in a cycle
                loaded = marshal.loads(raw)
                if (not isinstance(loaded, tuple) or len(loaded) != 10
                        or loaded[:2] != (VERSION, code_digest())):
                    raise ValueError("another version")
                _, _, prefix, paths, identities, digests, rows, order, table, blob = loaded
                columns = (paths, identities, digests, rows, order)
                if not (all(type(c) is list for c in columns) and type(table) is dict
                        and type(blob) is bytes
                        and len(paths) == len(identities) == len(digests) == len(rows)):
                    raise ValueError("not an index")
                if not set(map(len, filter(None, rows))) <= {len(Doc._fields)}:
                    raise ValueError("a document of another version")
                at = dict(zip(paths, range(len(paths)), strict=True))
                at.pop(None, None)  # the slots of files gone
                if prefix != self._prefix:  # the store was moved: its files' locations
                    rows = _moved(paths, rows, self._prefix)
                rows = docs_from_tuples(rows)  # one object a document, kept
        except (ValueError, EOFError, TypeError):
            discard(self.path)
            self._held = None
            return
        self._paths, self._identities, self._digests, self._rows = paths, identities, digests, rows
        self._at, self._order, self._postings = cast(dict[str, int], at), order, Postings(
            table, blob)

    def _save(self) -> None:
        if self._order is None:
            self._layer()
        rows = [None if doc is None else doc.as_tuple() for doc in self._rows]
        payload = marshal.dumps((VERSION, code_digest(), self._prefix, self._paths,
                                 self._identities, self._digests, rows, self._order,
                                 self._postings.table, self._postings.blob))
        try:
            write_checked(self.path, payload, mode=0o600)
            self._held = identity(os.lstat(self.path))
        except (OSError, ValueError):
            return  # an unwritable store: indexed again next time, recall stays correct
        _remove_stale_temporaries(self.store)


def _now() -> int:
    """The time the store is read at, in nanoseconds (a function: the tests move it)."""
    return time.time_ns()


def _moved(paths: list[str | None], rows: list[tuple[object, ...] | None],
           prefix: str) -> list[tuple[object, ...] | None]:
    """The documents `rows`, each with its location under the store's folder `prefix`."""
    at = Doc._fields.index("location")
    return [None if doc is None else (*doc[:at], f"{prefix}{path}", *doc[at + 1:])
            for path, doc in zip(paths, rows, strict=True)]


def _remove_stale_temporaries(store: LocalStore) -> None:
    """A writer killed before its rename leaves `.tmp-…-.omh-index` at the store's
    root; one older than STALE_TEMP is no other writer's."""
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(store.root) as entries:
        for entry in entries:
            if entry.name.startswith(".tmp-") and entry.name.endswith(f"-{INDEX_FILE}"):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP:
                        os.unlink(entry.path)


class IndexedLayer(LocalLayer):
    """The local layer read from its index: the postings of the index's slots, seen
    through the documents' order (`order`: the slot of each document)."""

    def __init__(self, docs: Sequence[Doc], postings: Postings, order: Sequence[int],
                 slots: int, notes: LocalNotes) -> None:
        super().__init__(docs, (), notes)
        self._index = postings
        self._order = order
        self._slots = slots
        self._position: list[int] | None = None

    def postings(self, term: str) -> tuple[list[int], list[int]]:
        found = self._index.get(term)
        if found is None:
            return [], []
        if self._position is None:  # a slot's document, -1 for none
            self._position = [-1] * self._slots
            for at, slot in enumerate(self._order):
                self._position[slot] = at
        position = self._position
        pairs = sorted((position[slot], tf) for slot, tf in zip(*found, strict=True)
                       if position[slot] >= 0)
        return [at for at, _ in pairs], [tf for _, tf in pairs]
