"""The local layer at query time, and the cache of its parsed notes.

The local layer is not cached in a snapshot: it is read at query time, so a note
remembered a moment ago is found at once. Recall reads it through its index
(local_index.py), which keeps each file's words and parses a note only when an
answer shows it; a command that reads every note (the listing, remember's check
for repeats) parses them through `NoteCache`: a note whose file's bytes were
parsed and analysed before is taken from it. Either way the searcher sees one
`LocalLayer`: the documents, the words they are found by, and the notes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import marshal
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from omh_git_memory.model.errors import OmhError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Block, Fence, Note, Section, render
from omh_git_memory.recall import content_id
from omh_git_memory.recall.cache_files import (
    collector_paused,
    discard,
    read_checked,
    write_checked,
)
from omh_git_memory.recall.document import Doc, analyse, doc_for
from omh_git_memory.recall.shape import code_digest
from omh_git_memory.stores.reading import StoredNote, read_note_bytes
from omh_git_memory.stores.store import PARSED_FILE

if TYPE_CHECKING:
    from omh_git_memory.stores.store import LocalStore, Signature


class LocalLayer:
    """The local layer as the searcher overlays it on the team snapshot: its readable
    notes' documents in the order of their paths, the words each is found by
    (`postings`), and the notes themselves (`notes`)."""

    def __init__(self, docs: Sequence[Doc], terms: Sequence[dict[str, int]],
                 notes: LocalNotes) -> None:
        self.docs = docs
        self._terms = terms
        self.notes = notes
        # The store's signature (`LocalStore.signature`) as the index read it for
        # this layer (None when the layer was not read through the index), and the
        # time after which a change is too recent to trust (local_index.RACY).
        self.signature: Signature | None = None
        self.recent = 0

    @property
    def settled(self) -> bool:
        """Whether no file of the signature changed so recently that the same
        signature could hide a change made in the same timestamp tick."""
        recent = self.recent
        return self.signature is not None and all(
            ident[3] <= recent and ident[4] <= recent for _, ident in self.signature)

    @classmethod
    def parsed(cls, local: Sequence[tuple[Doc, dict[str, int], Note]]) -> LocalLayer:
        """The layer of notes parsed and analysed already (`local_docs`)."""
        docs = [doc for doc, _, _ in local]
        return cls(docs, [terms for _, terms, _ in local],
                   LocalNotes(docs, [note for _, _, note in local]))

    def postings(self, term: str) -> tuple[list[int], list[int]]:
        """The positions in `docs` of the documents holding `term`, ascending, and its
        count in each. Here from each note's words: a question asks for a few words,
        so looking each up in every note costs less than inverting them all (5,000
        notes hold some 400,000 postings; a question's words, 8 lookups a note)."""
        where: list[int] = []
        counts: list[int] = []
        for at, terms in enumerate(self._terms):
            tf = terms.get(term)
            if tf:
                where.append(at)
                counts.append(tf)
        return where, counts


class LocalNotes:
    """The local notes behind a layer's documents (the searcher's `local_notes`):
    given, or read from the store only when asked for — one note when an answer
    shows it, every note for the commands that compare them all. A note read later
    than it was indexed is the note as its file holds it then."""

    def __init__(self, docs: Sequence[Doc], notes: Sequence[Note | None] | None = None,
                 store: LocalStore | None = None, relpaths: Sequence[str] = (),
                 cache: NoteCache | None = None) -> None:
        self._docs = docs
        self._notes = list(notes) if notes is not None else None
        self._store = store
        self._relpaths = relpaths
        self._cache = cache
        self._at: dict[int, int] | None = None
        self._one: dict[int, Note | None] = {}
        self.read = 0  # notes read from the store one at a time (what the tests count)

    def of(self, doc: Doc) -> Note | None:
        """The note `doc` indexes, if `doc` is one of these documents and its file
        still reads as a note."""
        if self._at is None:
            self._at = {id(d): at for at, d in enumerate(self._docs)}
        at = self._at.get(id(doc))
        if at is None or self._docs[at] is not doc:
            return None
        if self._notes is not None:
            return self._notes[at]
        if at not in self._one:
            self._one[at] = self._read_one(at)
        return self._one[at]

    def aligned(self) -> list[tuple[Doc, Note | None]]:
        """Every document with its note, in order (None: its file no longer reads as
        a note)."""
        if self._notes is None:
            self._notes = self._read_all()
        return list(zip(self._docs, self._notes, strict=True))

    def __iter__(self) -> Iterator[tuple[Doc, Note]]:
        """Each document whose note can be read, with the note."""
        return ((doc, note) for doc, note in self.aligned() if note is not None)

    def _read_one(self, at: int) -> Note | None:
        if self._store is None:
            return None
        relpath = self._relpaths[at]
        read = self._store.file_bytes(relpath)
        self.read += 1
        if isinstance(read, str):
            return None
        return read_note_bytes(Layer.LOCAL, relpath, self._docs[at].location, read[0]).note

    def _read_all(self) -> list[Note | None]:
        """Every note, through the store's reading (and its cache of parsed notes,
        which is saved): one scan, not a file at a time."""
        if self._store is None:
            return [None] * len(self._docs)
        found = {entry.relpath: entry.note for entry in self._store.scan()}
        if self._cache is not None:
            self._cache.save()
        return [found.get(relpath) for relpath in self._relpaths]


def local_docs(entries: Iterable[StoredNote], cache: NoteCache | None = None
               ) -> list[tuple[Doc, dict[str, int], Note]]:
    """The local layer's readable notes, analysed. They change at any time, so they
    are in no snapshot; with `cache` (the one that read them), a note whose bytes
    were analysed before is not analysed again, and the cache is saved."""
    out: list[tuple[Doc, dict[str, int], Note]] = []
    for entry in entries:
        if entry.note is None:
            continue
        terms = cache.terms(entry.note) if cache is not None else None
        if terms is None:
            terms = dict(analyse(entry.note))
            if cache is not None:
                cache.keep_terms(entry.note, terms)
        out.append((doc_for(entry.note, Layer.LOCAL, content_id.LOCAL, entry.location, terms),
                    terms, entry.note))
    if cache is not None:
        cache.save()
    return out


NOTES_CACHE: Final = PARSED_FILE
_NOTES_FORMAT: Final = 1


class NoteCache:
    """The local layer's files as parsed and analysed before, by the SHA-256 of each
    file's bytes: parsing a large note costs seconds, and every
    `omh memory`, recall and remember reads every local note. A file read again
    with the same bytes is taken from the cache; any other is parsed afresh. Only
    what the last read found is kept, so the cache is never larger than the store.

    The cache is one checked file (`write_checked`: its digest is verified on every
    read) at the local store's root (`.omh-parsed`, beside its notes: nothing of a
    local note is written under the git directory), private to its owner (0600: it
    holds local notes), and names the code that made it (`code_digest`): a file of another
    version, or that fails any check, is ignored and replaced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[bytes, tuple[object, object]] | None = None
        self._seen: dict[bytes, tuple[object, object]] = {}
        # id(note) -> its file's digest, and the note (held, so the id is not reused)
        self._digest_of: dict[int, tuple[bytes, Note]] = {}
        self._changed = False
        self.parsed = 0  # files parsed afresh (what the tests count)
        self.analysed = 0  # notes analysed afresh

    def read(self, layer: Layer, relpath: str, location: str, data: bytes) -> StoredNote:
        """`read_note_bytes`, from the cache when these bytes were read before."""
        digest = hashlib.sha256(data).digest()
        row = self._load().get(digest)
        stored = (_stored_from(layer, relpath, location, row[0], data) if row is not None
                  else None)
        if stored is None or row is None:
            stored = read_note_bytes(layer, relpath, location, data)
            self.parsed += 1
            row = (_stored_row(stored), None)
            self._changed = True
        self._seen[digest] = row
        if stored.note is not None:
            self._digest_of[id(stored.note)] = (digest, stored.note)
        return stored

    def known(self, layer: Layer, relpath: str, location: str, data: bytes
              ) -> tuple[StoredNote, dict[str, int] | None] | None:
        """What these bytes were read as before, and the words they were indexed
        under (None when not analysed), if the cache holds them; the cache's own
        record of what was read is left as it is."""
        row = self._load().get(hashlib.sha256(data).digest())
        if row is None:
            return None
        stored = _stored_from(layer, relpath, location, row[0], data)
        if stored is None:
            return None
        return stored, row[1] if isinstance(row[1], dict) else None

    def size(self) -> int:
        """The cache file's size in bytes (0 when there is none)."""
        try:
            return os.lstat(self.path).st_size
        except OSError:
            return 0

    def terms(self, note: Note) -> dict[str, int] | None:
        """The words `note` was indexed under before, if this cache read it."""
        digest = self._digest(note)
        row = self._seen.get(digest) if digest is not None else None
        terms = row[1] if row is not None else None
        if isinstance(terms, dict):
            return terms
        return None

    def keep_terms(self, note: Note, terms: dict[str, int]) -> None:
        digest = self._digest(note)
        if digest is not None and digest in self._seen:
            self._seen[digest] = (self._seen[digest][0], terms)
            self._changed = True
            self.analysed += 1

    def _digest(self, note: Note) -> bytes | None:
        found = self._digest_of.get(id(note))
        return found[0] if found is not None and found[1] is note else None

    def save(self) -> None:
        """Keep what was read since the last save (only that: a note removed from
        the store leaves the cache), if it differs from the file; the next read
        starts afresh (a long-running server reads the store again and again)."""
        seen, self._seen, self._digest_of = self._seen, {}, {}
        if not self._changed and seen.keys() == self._load().keys():
            return
        self._known, self._changed = seen, False
        if not self.path.parent.is_dir():
            return  # no store yet: the cache never makes one
        # unwritable: parsed again next time, recall stays correct
        with contextlib.suppress(OSError, ValueError):
            write_checked(self.path, marshal.dumps(
                (_NOTES_FORMAT, code_digest(), list(seen.items()))), mode=0o600)

    def _load(self) -> dict[bytes, tuple[object, object]]:
        if self._known is None:
            self._known = {}
            raw = read_checked(self.path) if private(self.path) else None
            try:
                with collector_paused():
                    loaded = marshal.loads(raw) if raw is not None else None
                if (isinstance(loaded, tuple) and len(loaded) == 3
                        and loaded[:2] == (_NOTES_FORMAT, code_digest())):
                    self._known = {digest: (row[0], row[1]) for digest, row in loaded[2]
                                   if isinstance(digest, bytes) and len(row) == 2}
            except (ValueError, EOFError, TypeError):
                discard(self.path)
        return self._known


def private(path: Path) -> bool:
    """Whether `path` is this account's own file that no one else may read or write:
    a checksum proves a file whole, not who wrote it, so a cache another account
    could have written (a shared, group-writable git dir) is never believed."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def notes_cache(store: Path) -> NoteCache:
    """The cache of parsed notes of the local store at `store`, kept in the store
    itself (read only when a note is; never makes the store)."""
    return NoteCache(store / NOTES_CACHE)


def _stored_row(stored: StoredNote) -> tuple[object, ...]:
    """What a `StoredNote` read from some bytes holds, whatever its path: its note
    as plain tuples (the cache is marshalled, never pickled), its text named by
    offsets into the file's own text rather than copied — or its problem."""
    note = stored.note
    if note is None:
        return ("problem", stored.problem, stored.problem_line)
    sections: list[tuple[object, ...]] = []
    at = 0
    for s in note.sections:
        found = note.body.find(s.text, at) if s.text else -1
        text: object = (found, len(s.text)) if found >= 0 else s.text
        at = found + len(s.text) if found >= 0 else at
        sections.append((s.name, s.line, text,
                         tuple((b.kind, b.line, b.items) for b in s.blocks)))
    return ("note", note.fields, len(render(note)) - len(note.body), note.key.value,
            note.type, note.source, note.recorded.toordinal(), note.title, tuple(sections),
            tuple((f.line, f.closed) for f in note.fences), note.links)


def _stored_from(layer: Layer, relpath: str, location: str, row: object,
                 data: bytes) -> StoredNote | None:
    """The `StoredNote` a cached row describes for the file's bytes `data`, or None
    when the row is not one `_stored_row` made (then the file is parsed afresh).
    The note is rebuilt field by field, as `parse` made it from these very bytes."""
    try:
        if not isinstance(row, tuple):
            return None
        if row[0] == "problem":
            _, problem, line = row
            if not isinstance(problem, str) or not (line is None or isinstance(line, int)):
                return None
            return StoredNote(layer, relpath, location, None, problem, line)
        (_, fields, body_at, key, kind, source, recorded, title, sections, fences,
         links) = row
        body = data.decode("utf-8")[int(body_at):]

        def text_of(text: object) -> str:
            if isinstance(text, tuple):
                start, size = (int(n) for n in text)
                return body[start:start + size]
            return _text(text)

        note = Note(
            fields=tuple((_text(n), _text(v)) for n, v in fields), body=body,
            key=Key(_text(key)), type=_text(kind), source=_text(source),
            recorded=dt.date.fromordinal(recorded), title=_text(title),
            sections=tuple(Section(_text(n), int(ln), text_of(t), tuple(
                Block(_text(k), int(bl), _texts(items)) for k, bl, items in blocks))
                for n, ln, t, blocks in sections),
            fences=tuple(Fence(int(fl), bool(c)) for fl, c in fences),
            links=_texts(links),
        )
    except (TypeError, ValueError, OverflowError, UnicodeDecodeError, OmhError):
        return None
    return StoredNote(layer, relpath, location, note)


def _texts(values: object) -> tuple[str, ...]:
    if type(values) is not tuple or not all(type(v) is str for v in values):
        raise TypeError("not a tuple of text")
    return values


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not text")
    return value
