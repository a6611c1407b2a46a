"""The recall index: cached per commit, rebuilt incrementally, local notes on top.

A snapshot holds every team-layer document of one commit — committed notes,
derived stubs and the repository topic — as metadata plus an inverted index
(word → documents and counts). Snapshots live under the common git dir
(`<common>/omh/index/`), so every worktree of a clone shares them and nothing is
ever committed. Building the snapshot of a new commit starts from the newest one
on disk: a document whose content id (blob id and path) is unchanged keeps its
analysis and postings, so a one-note commit costs one parse.

The local layer is not cached in a snapshot: it is read at query time, so a note
remembered a moment ago is found at once.

A cache file is never trusted: each one starts with a magic line and the SHA-256
of what follows, is written to a temporary file, flushed to disk and renamed into
place, and is checked when read. A file that fails the check (truncated, flipped,
empty, or not a regular file) is removed and rebuilt, and never serves as the
base of an incremental build.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import functools
import gc
import hashlib
import importlib.util
import marshal
import os
import secrets
import stat
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple

from omh_git_memory.git import nofollow
from omh_git_memory.git.history import commit_date, commit_id, resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import TreeEntry, blob_size, list_tree, read_blob, require_blobs
from omh_git_memory.model.config import (
    CONFIG_NAME,
    DEFAULT_REPO_NAME,
    OMH_DIR,
    Config,
    repo_name_in,
)
from omh_git_memory.model.errors import GitFailure, OmhError
from omh_git_memory.model.keys import DEFAULT_TEMPLATES, Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Block, Fence, Note, Section, render
from omh_git_memory.recall import content_id
from omh_git_memory.recall.stubs import (
    TOPIC_SOURCE,
    is_document,
    one_per_key,
    repo_facts,
    stub_note,
    topic_note,
    tree_facts,
    whole_document,
)
from omh_git_memory.recall.tokens import VERSION as TOKENS_VERSION
from omh_git_memory.recall.tokens import without_links, words
from omh_git_memory.stores.reading import StoredNote, read_note_bytes
from omh_git_memory.stores.team import NOTES_DIR, is_team_entry, tree_note

# 3: checksummed files; 4: stubs indexed as their document, not omh's sentence;
# 5: one stub per key (clashes kept), the topic named by the committed memory.toml
# 6: each snapshot names the settings and code it was built with (`shape`)
VERSION: Final = 6
MAGIC: Final = b"omh-cache 1\n"  # then 32 bytes of SHA-256 over the payload, then the payload
_DIGEST_SIZE: Final = 32
_STALE_TEMP: Final = 600  # seconds after which a temporary file is a crashed writer's
KEEP_SNAPSHOTS: Final = 8  # recent commits kept on disk; older ones are rebuilt on demand

Progress = Callable[[int, int], None]  # (done, total) while analysing documents


class Doc(NamedTuple):
    """One indexed note: what recall ranks and prints.

    A named tuple rather than a frozen dataclass: loading an index makes one per
    document, and a tuple is made from the row the cache holds in one step (a
    dataclass's `__init__`, or filling its `__dict__`, took a third of loading a
    10,000-note index)."""

    layer: str
    key: str
    kind: str
    recorded: int  # date ordinal
    title: str
    links: tuple[str, ...]
    source: str  # content id: unchanged source, reusable analysis
    length: int  # words counted for length normalisation
    location: str
    problem: str | None = None  # why the file is not a usable note
    trigger: str | None = None  # the note's invalidated_by

    @property
    def derived(self) -> bool:
        """A stub or the repository topic: computed from the tree, never a file."""
        return content_id.is_derived(self.source)

    @property
    def is_stub(self) -> bool:
        return content_id.is_stub(self.source)

    @property
    def is_topic(self) -> bool:
        return content_id.is_topic(self.source)

    @property
    def is_team_file(self) -> bool:
        """A note written under `.omh/notes/` (in the index of a commit)."""
        return content_id.kind_of(self.source) is content_id.Kind.NOTE

    @property
    def content(self) -> content_id.ContentId:
        """What this document was made from (`source` taken apart)."""
        return content_id.ContentId.parse(self.source)

    def as_tuple(self) -> tuple[object, ...]:
        return tuple(self)

    @classmethod
    def from_tuple(cls, t: tuple[object, ...]) -> Doc:
        return cls(*t)  # type: ignore[arg-type]


def docs_from_tuples(rows: Iterable[tuple[object, ...] | None]) -> list[Doc | None]:
    """The documents `Doc.as_tuple` wrote (None for a removed slot), each equal to
    `Doc.from_tuple(row)`; a row of another length (another version) is a TypeError."""
    new, size = tuple.__new__, len(Doc._fields)
    out: list[Doc | None] = []
    for row in rows:
        if row is None:
            out.append(None)
        elif len(row) != size:
            raise TypeError("a document of another version")
        else:
            out.append(new(Doc, row))
    return out


def analyse(note: Note, document: str | None = None) -> Counter[str]:
    """The words recall matches a note on: what the note says, never the sentences
    omh writes into every derived note.

    - A written note: its text (title, sections, without `[[links]]` and
      frontmatter), plus the words of its key once more.
    - A stub: its title, its document's path and its Answers (the document's
      headings), plus the document's own text (`document`), measured to help
      (docs/recall.md).
    - The repository topic: its name and its facts.
    """
    if note.type == "stub":
        terms = Counter(words(note.title))
        terms.update(words(note.source.replace("/", " ")))
        answers = note.section("Answers")
        for heading in answers.items if answers else ():
            if heading != whole_document(note.source):
                terms.update(words(heading))
        if document is not None:
            terms.update(words(without_links(indexed_part(document))))
        return terms
    if note.source == TOPIC_SOURCE:
        terms = Counter(words(note.title))
        facts = note.section("Facts")
        terms.update(words(facts.text if facts else ""))
        return terms
    terms = Counter(words(without_links(indexed_part(note.body))))
    terms.update(words(note.key.value.replace("/", " ")))
    return terms


# What recall indexes of one note's text, or of one document's: a note is a page of
# prose, and a pasted megabyte would cost every recall its tokenising while its
# words past the first pages add nothing a question finds (docs/recall.md).
MAX_INDEXED: Final = 1 << 16  # characters


def indexed_part(text: str) -> str:
    """The part of `text` recall indexes: its first MAX_INDEXED characters, cut at
    the last white space before them so that no word is indexed half."""
    if len(text) <= MAX_INDEXED:
        return text
    head = text[:MAX_INDEXED]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:cut] if cut > 0 else head


def doc_for(note: Note, layer: Layer, source: str, location: str,
            terms: Counter[str]) -> Doc:
    return Doc(layer.value, note.key.value, note.type, note.recorded.toordinal(), note.title,
               note.links, source, sum(terms.values()), location, None, note.invalidated_by)


class Postings:
    """Word → (document slots, counts), stored as one blob of uint32 arrays and a
    table of where each word's arrays start, so a query decodes only its words."""

    def __init__(self, table: dict[str, tuple[int, int]], blob: bytes) -> None:
        self.table = table  # word -> (byte offset, number of postings)
        self.blob = blob

    @classmethod
    def build(cls, pairs: dict[str, tuple[bytes, bytes]]) -> Postings:
        table: dict[str, tuple[int, int]] = {}
        chunks: list[bytes] = []
        offset = 0
        for term, (slots, counts) in pairs.items():
            table[term] = (offset, len(slots) // 4)
            chunks += (slots, counts)
            offset += len(slots) + len(counts)
        return cls(table, b"".join(chunks))

    def __contains__(self, term: str) -> bool:
        return term in self.table

    def raw(self, term: str) -> tuple[bytes, bytes]:
        offset, count = self.table[term]
        middle = offset + 4 * count
        return self.blob[offset:middle], self.blob[middle : middle + 4 * count]

    def get(self, term: str) -> tuple[array[int], array[int]] | None:
        if term not in self.table:
            return None
        slots, counts = self.raw(term)
        a, b = array("I"), array("I")
        a.frombytes(slots)
        b.frombytes(counts)
        return a, b

    def pairs(self) -> dict[str, tuple[bytes, bytes]]:
        return {term: self.raw(term) for term in self.table}

    def patched(self, changes: dict[str, tuple[bytes, bytes] | None]) -> Postings:
        """These postings with `changes` applied (None removes a word). Changed
        words are appended to the blob; once over half of it is dead space left by
        earlier versions, it is rewritten compactly."""
        table = dict(self.table)
        chunks = [self.blob]
        offset = len(self.blob)
        for term, pair in changes.items():
            if pair is None:
                table.pop(term, None)
                continue
            table[term] = (offset, len(pair[0]) // 4)
            chunks += pair
            offset += len(pair[0]) + len(pair[1])
        result = Postings(table, b"".join(chunks))
        live = 8 * sum(count for _, count in table.values())
        return Postings.build(result.pairs()) if live * 2 < len(result.blob) else result


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

    def live(self) -> Iterable[tuple[int, Doc]]:
        return ((slot, d) for slot, d in enumerate(self.docs) if d is not None)


EMPTY = Postings({}, b"")


def index_dir(repo: GitRepo) -> Path:
    return repo.common_dir / "omh" / "index"


def snapshot_for(
    repo: GitRepo, config: Config, rev: str = "HEAD", progress: Progress | None = None,
    rebuild: bool = False,
) -> Snapshot:
    """The snapshot of `rev`: read from the cache, or built (incrementally) and saved."""
    commit = resolve_commit(repo, rev)
    if commit is None:
        return Snapshot(None, [], EMPTY)
    sha = commit_id(commit)
    folder = index_dir(repo)
    made_by = shape(config)
    if not rebuild:
        cached = _load(folder, sha, made_by)
        if cached is not None:
            return cached
    base = None if rebuild else _newest(folder, made_by)
    try:
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        base, progress).build()
    except _BaseGone:  # a document of the base pruned from git: build without it
        base = None
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        None, progress).build()
    if base is not None and sum(d is None for d in snap.docs) * 2 > len(snap.docs):
        # Mostly tombstones: start afresh rather than carry the holes.
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        None, progress).build()
    _save(folder, snap, made_by)
    return snap


def shape(config: Config) -> str:
    """A digest of everything besides the commit that a snapshot's content depends
    on: the settings the build reads (the checkout's `.omh/memory.toml`, as
    :func:`~omh_git_memory.model.config.load_config` gives them — committed or not: the
    stub and topic key templates, `[stubs] exclude`), the cache format, and the code
    that parses, derives and tokenises. A snapshot of another
    shape is never loaded, nor patched as a base: it is built again."""
    templates = config.keys.templates
    settings = (templates.get("stub", DEFAULT_TEMPLATES["stub"]),
                templates.get("topic", DEFAULT_TEMPLATES["topic"]),
                tuple(config.stub_exclude))
    return hashlib.sha256(repr((VERSION, TOKENS_VERSION, settings, code_digest())).encode(
        "utf-8", "surrogateescape")).hexdigest()


# The modules whose code shapes a snapshot's documents and postings, and mistune's
# (its version is in the file read): a change to any of them is a new shape.
_SHAPING: Final = ("omh_git_memory.model.note", "omh_git_memory.model.keys",
                   "omh_git_memory.stores.team", "omh_git_memory.stores.store",
                   "omh_git_memory.stores.reading",
                   "omh_git_memory.recall.content_id", "omh_git_memory.recall.stubs",
                   "omh_git_memory.recall.tokens", __name__)


@functools.cache
def code_digest() -> str:
    """A digest of the source of the modules that shape an index (`_SHAPING`) and
    of mistune's package file: the tool's own version, exact even between
    releases. A file that cannot be read counts by its name alone."""
    digest = hashlib.sha256()
    spec = importlib.util.find_spec("mistune")
    files = [getattr(sys.modules.get(name), "__file__", None) for name in _SHAPING]
    for file in (*files, spec.origin if spec else None):
        digest.update(str(file).encode("utf-8", "surrogateescape") + b"\0")
        with contextlib.suppress(OSError, TypeError):
            digest.update(Path(str(file)).read_bytes())
    return digest.hexdigest()


class _BaseGone(Exception):
    """A document the base snapshot indexed is no longer in git (an amended or
    rebased commit, then `git gc`): the base cannot be patched, only replaced."""


class _Builder:
    """One commit's snapshot, from a base snapshot when there is one."""

    def __init__(self, repo: GitRepo, config: Config, sha: str, day: dt.date,
                 entries: list[TreeEntry], base: Snapshot | None,
                 progress: Progress | None) -> None:
        self.repo, self.config, self.sha, self.day = repo, config, sha, day
        self.entries, self.base, self.progress = entries, base, progress
        self.docs: list[Doc | None] = list(base.docs) if base else []
        self.by_source = {d.source: slot for slot, d in base.live()} if base else {}
        self.keep: set[int] = set()
        self.added: dict[int, dict[str, int]] = {}
        self.done = 0
        self.total = 0

    def build(self) -> Snapshot:
        prefix = NOTES_DIR + "/"
        notes = [e for e in self.entries if is_team_entry(e.path, e.kind)]
        candidates = {e.path: e for e in self.entries if e.kind == "file"
                      and is_document(e.path, self.config.stub_exclude)}
        kept, clashes = one_per_key(list(candidates), self.config.keys)
        documents = [candidates[path] for path in kept]
        self.total = sum(f"{_kind(e, prefix)}:{e.blob_id}:{e.path}" not in self.by_source
                         for e in (*notes, *documents))
        # A partial clone may lack some: name them all before reading any.
        require_blobs(self.repo, self.sha, {
            e.path: e.blob_id for e in (*notes, *documents) if e.kind == "file"
            and f"{_kind(e, prefix)}:{e.blob_id}:{e.path}" not in self.by_source
        }, f"{NOTES_DIR} '*.md'")
        for e in notes:
            self._put(content_id.note_id(e.blob_id, e.path),
                      functools.partial(self._note, e, prefix))
        stub_keys: list[str] = []
        for e in documents:
            slot = self._put(content_id.stub_id(e.blob_id, e.path),
                             functools.partial(self._stub, e))
            doc = self.docs[slot] if slot is not None else None
            if doc is not None:
                stub_keys.append(doc.key)
        topic_terms = self._put_topic(stub_keys)
        base_slots = len(self.base.docs) if self.base else 0
        removed = [s for s in range(base_slots) if self.docs[s] is not None and s not in self.keep]
        try:
            gone_terms = {s: self._terms_of(self.docs[s]) for s in removed}
        except GitFailure:
            raise _BaseGone from None
        for slot in removed:
            self.docs[slot] = None
        today = self.day.toordinal()
        for slot, d in enumerate(self.docs):  # derived notes are dated as of this commit
            if d is not None and d.derived and d.recorded != today:
                self.docs[slot] = d._replace(recorded=today)
        base = self.base.postings if self.base else EMPTY
        postings = base.patched(_patch(base, gone_terms, self.added))
        return Snapshot(self.sha, self.docs, postings, topic_terms,
                        len(self.keep), len(self.added),
                        tuple((c.key, c.path, c.kept_by) for c in clashes))

    def _put(self, source: str, make: Callable[[], tuple[Doc, dict[str, int]] | None]
             ) -> int | None:
        if source in self.by_source:
            self.keep.add(self.by_source[source])
            return self.by_source[source]
        made = make()
        if made is None:
            return None
        doc, terms = made
        self.docs.append(doc)
        self.added[len(self.docs) - 1] = terms
        return len(self.docs) - 1

    def _tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _note(self, e: TreeEntry, prefix: str) -> tuple[Doc, dict[str, int]]:
        self._tick()
        stored = tree_note(self.repo, e.path, e.kind, e.blob_id, f"{self.sha[:12]}:{e.path}")
        return _stored_doc(stored, content_id.note_id(e.blob_id, e.path))

    def _stub(self, e: TreeEntry) -> tuple[Doc, dict[str, int]] | None:
        self._tick()
        text = read_blob(self.repo, e.blob_id, e.path).decode("utf-8", errors="replace")
        note = stub_note(e.path, text, self.config.keys, self.day)
        if note is None:
            return None
        terms = analyse(note, text)
        source = content_id.stub_id(e.blob_id, e.path)
        return doc_for(note, Layer.TEAM, source, e.path, terms), dict(terms)

    def _put_topic(self, stub_keys: list[str]) -> dict[str, int]:
        readme = next((e for e in self.entries if e.path.lower() == "readme.md"), None)
        top_level = sorted(e.path for e in self.entries
                           if "/" not in e.path or e.path.startswith(".github/"))
        config = next((e.blob_id for e in self.entries if e.path == _CONFIG_PATH), None)
        # Everything the topic is made of (docs/recall.md), the facts the whole
        # tree's paths give included: a file added in a folder can change them.
        facts = tree_facts([e.path for e in self.entries])
        identity = repr((config, readme.blob_id if readme else None, top_level, stub_keys,
                         facts))
        source = content_id.topic_id(identity)
        if source in self.by_source and self.base is not None:
            self.keep.add(self.by_source[source])
            return self.base.topic_terms
        note = _topic(self.repo, self.config, self.entries, stub_keys, self.day)
        if note is None:
            return {}
        terms = dict(analyse(note))
        self.docs.append(doc_for(note, Layer.TEAM, source, "derived from the repository",
                                 Counter(terms)))
        self.added[len(self.docs) - 1] = terms
        return terms

    def _terms_of(self, doc: Doc | None) -> dict[str, int]:
        """The words a removed document was indexed under, re-read from git."""
        if doc is None or doc.problem:
            return {}
        if doc.is_topic:
            return self.base.topic_terms if self.base else {}
        if doc.is_stub:
            blob_id, path = doc.content.blob_id, doc.content.path
            text = read_blob(self.repo, blob_id, path).decode("utf-8", errors="replace")
            stub = stub_note(path, text, self.config.keys, self.day)
            return dict(analyse(stub, text)) if stub is not None else {}
        note = written_or_stub(self.repo, self.config, doc, self.day)
        return dict(analyse(note)) if note is not None else {}


def written_or_stub(repo: GitRepo, config: Config, doc: Doc, day: dt.date) -> Note | None:
    """A team note or stub, re-read from git by its content id (not the topic)."""
    if doc.problem or content_id.kind_of(doc.source) not in (content_id.Kind.NOTE,
                                                             content_id.Kind.STUB):
        return None
    blob_id, path = doc.content.blob_id, doc.content.path
    data = read_blob(repo, blob_id, path)
    if doc.is_stub:
        return stub_note(path, data.decode("utf-8", "replace"), config.keys, day)
    return read_note_bytes(Layer.TEAM, path, path, data).note


def _kind(e: TreeEntry, prefix: str) -> str:
    return "n" if e.path.startswith(prefix) else "s"


def _stored_doc(stored: StoredNote, source: str) -> tuple[Doc, dict[str, int]]:
    if stored.note is None:
        doc = Doc(Layer.TEAM.value, stored.key, "unreadable", 0, "", (), source, 0,
                  stored.location, stored.problem or "unreadable")
        return doc, {}
    terms = analyse(stored.note)
    return doc_for(stored.note, stored.layer, source, stored.location, terms), dict(terms)


def _patch(postings: Postings, removed: dict[int, dict[str, int]],
           added: dict[int, dict[str, int]]) -> dict[str, tuple[bytes, bytes] | None]:
    """The new postings of every word `removed` or `added` slots touch (None when a
    word is left in no document). Added slots are higher than any existing one, so
    every array stays sorted."""
    touched: dict[str, tuple[array[int], array[int]]] = {}

    def arrays(term: str) -> tuple[array[int], array[int]]:
        if term not in touched:
            touched[term] = postings.get(term) or (array("I"), array("I"))
        return touched[term]

    for slot, terms in removed.items():
        for term in terms:
            slots, counts = arrays(term)
            at = bisect.bisect_left(slots, slot)
            if at < len(slots) and slots[at] == slot:
                del slots[at]
                del counts[at]
    for slot in sorted(added):  # a million postings at 10k notes: no call per posting
        for term, tf in added[slot].items():
            pair = touched.get(term)
            if pair is None:
                pair = arrays(term)
            pair[0].append(slot)
            pair[1].append(tf)
    return {term: (slots.tobytes(), counts.tobytes()) if slots else None
            for term, (slots, counts) in touched.items()}


def _save(folder: Path, snap: Snapshot, made_by: str) -> None:
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
             hashlib.sha256(blob).digest(), snap.clashes)))
        _prune(folder)
    except OSError:
        pass  # a cache that cannot be written is rebuilt next time; recall stays correct


def write_checked(path: Path, payload: bytes, mode: int = 0o644) -> None:
    """Write a cache file atomically through the one write path (`nofollow.put`):
    magic, digest and payload to a new temporary file, flushed to disk, then
    renamed over `path` (never through a symlink: the rename replaces the link
    itself). Readers see the old file or the new one. `mode` 0o600 for a file that
    holds what only its owner may read (local notes): that one stays private
    whatever the umask. OSError when it cannot be written."""
    fd = nofollow.open_root(path.parent)
    try:
        nofollow.put(fd, path.name, MAGIC + hashlib.sha256(payload).digest() + payload,
                     new_mode=mode, exact_mode=mode if mode & 0o077 == 0 else None,
                     tmp=f".tmp-{os.getpid()}-{secrets.token_hex(4)}-{path.name}")
    finally:
        os.close(fd)


def read_checked(path: Path) -> bytes | None:
    """A cache file's payload, or None when it is missing or fails its check; a
    file that fails is discarded so that it is rebuilt. Only a regular file is
    read: a symlink, a directory or a FIFO at the path is not opened."""
    checked = read_checked_digest(path)
    return checked[0] if checked else None


def read_checked_digest(path: Path) -> tuple[bytes, bytes] | None:
    """`read_checked`, with the payload's SHA-256 (checked against it just now), so
    that a partner file naming this digest need not hash the payload again."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:  # a symlink (ELOOP), a directory on some systems, no permission
        discard(path)
        return None
    head = len(MAGIC) + _DIGEST_SIZE
    try:
        with os.fdopen(fd, "rb") as handle:
            regular = stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
            # Header and payload read apart: the payload is never copied again.
            header = handle.read(head) if regular else b""
            payload = handle.read() if regular else b""
    except OSError:
        header = b""
    if (len(header) < head or not header.startswith(MAGIC)
            or hashlib.sha256(payload).digest() != header[len(MAGIC):]):
        discard(path)
        return None
    return payload, header[len(MAGIC):]


def discard(path: Path) -> None:
    """Remove a cache file that failed its check (an empty directory too; anything
    else someone put there is left alone and simply never read)."""
    with contextlib.suppress(OSError):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            path.rmdir()


def cache_files(folder: Path, pattern: str) -> list[Path]:
    """Regular files in `folder` matching `pattern`, newest first (symlinks and
    directories are never candidates)."""
    found: list[tuple[float, Path]] = []
    try:
        for path in folder.glob(pattern):
            with contextlib.suppress(OSError):
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and not _in_progress(path, pattern):
                    found.append((info.st_mtime, path))
    except OSError:
        return []
    return [path for _, path in sorted(found, key=lambda t: t[0], reverse=True)]


def _prune(folder: Path) -> None:
    for old in cache_files(folder, "*.idx")[KEEP_SNAPSHOTS:]:
        for path in (old, old.with_suffix(".post"), old.with_suffix(".vec.npy"),
                     old.with_suffix(".vec.keys")):
            with contextlib.suppress(OSError):
                path.unlink()
    now = time.time()
    for tmp in cache_files(folder, ".tmp-*"):  # left by a writer that crashed
        with contextlib.suppress(OSError):
            if now - tmp.lstat().st_mtime > _STALE_TEMP:
                tmp.unlink()


def _load(folder: Path, sha: str, made_by: str) -> Snapshot | None:
    """The snapshot of `sha` from disk, only if both of its files pass their checks,
    belong together and were built with the shape `made_by` (see :func:`shape`);
    files of another version, or that fail a check, are discarded. A snapshot of
    another shape is left for its own settings (another worktree's) and not used."""
    raw = read_checked(folder / f"{sha}.idx")
    if raw is None:
        return None
    try:
        with collector_paused():  # some 100,000 objects, none in a cycle
            loaded = marshal.loads(raw)
            if not isinstance(loaded, tuple) or len(loaded) != 8 or loaded[0] != VERSION:
                raise ValueError("another version")
            _, commit, built_by, docs, table, topic_terms, post_digest, clashes = loaded
            if commit != sha:
                raise ValueError("another commit's")
            if built_by != made_by:
                return None  # valid, for other settings: rebuilt (and replaced) by the caller
            post = read_checked_digest(folder / f"{sha}.post")  # its SHA-256 checked
            if post is None or post[1] != post_digest:
                raise ValueError("postings of another write")
            snap = Snapshot(sha, docs_from_tuples(docs), Postings(table, post[0]), topic_terms,
                            clashes=tuple(tuple(c) for c in clashes))
    except (ValueError, EOFError, TypeError):
        discard(folder / f"{sha}.idx")
        discard(folder / f"{sha}.post")
        return None
    return snap


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a block makes many objects that form
    no cycle (the documents of a loaded index, the searcher's tables), as
    Mercurial's `util.nogc` does while it builds large containers: every 700 new
    objects the collector walks the young ones, and now and then every object of
    the process, none of which this block could have made garbage. At 10,000 notes
    that was a fifth of a cold `omh memory recall`. Reference counting frees what
    the block drops as usual; the collector resumes after it (unless it was off
    already)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _newest(folder: Path, made_by: str) -> Snapshot | None:
    """The newest snapshot on disk that passes its checks and was built with the
    shape `made_by`: the base of a patch (one of other settings would carry stubs
    keyed, or documents excluded, as those settings say)."""
    for path in cache_files(folder, "*.idx"):
        snap = _load(folder, path.stem, made_by)
        if snap is not None:
            return snap
    return None


def local_docs(entries: Iterable[StoredNote], cache: NoteCache | None = None
               ) -> list[tuple[Doc, dict[str, int], Note]]:
    """The local layer's readable notes, analysed. They change at any time, so they
    are in no snapshot; with `cache` (the one that read them), a note whose bytes
    were analysed before is not analysed again, and the cache is saved."""
    out: list[tuple[Doc, dict[str, int], Note]] = []
    for entry in entries:
        if entry.note is None:
            continue
        known = cache.terms(entry.note) if cache is not None else None
        terms = Counter(known) if known is not None else analyse(entry.note)
        if cache is not None and known is None:
            cache.keep_terms(entry.note, dict(terms))
        out.append((doc_for(entry.note, Layer.LOCAL, content_id.LOCAL, entry.location, terms),
                    dict(terms), entry.note))
    if cache is not None:
        cache.save()
    return out


NOTES_CACHE: Final = "local-notes.cache"
_NOTES_FORMAT: Final = 1


class NoteCache:
    """The local layer's files as parsed and analysed before, by the SHA-256 of each
    file's bytes: parsing a large note costs seconds, and every
    `omh memory`, recall and remember reads every local note. A file read again
    with the same bytes is taken from the cache; any other is parsed afresh. Only
    what the last read found is kept, so the cache is never larger than the store.

    The cache is one checked file (`write_checked`: its digest is verified on every
    read) in the clone's index folder, private to its owner (0600: it holds local
    notes), and names the code that made it (`code_digest`): a file of another
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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_checked(self.path, marshal.dumps(
                (_NOTES_FORMAT, code_digest(), list(seen.items()))), mode=0o600)
        except (OSError, ValueError):
            pass  # unwritable: parsed again next time, recall stays correct

    def _load(self) -> dict[bytes, tuple[object, object]]:
        if self._known is None:
            self._known = {}
            raw = read_checked(self.path) if _private(self.path) else None
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


def _private(path: Path) -> bool:
    """Whether `path` is this account's own file that no one else may read or write:
    a checksum proves a file whole, not who wrote it, so a cache another account
    could have written (a shared, group-writable git dir) is never believed."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def notes_cache(repo: GitRepo) -> NoteCache:
    """The clone's cache of parsed local notes (read only when a note is)."""
    return NoteCache(index_dir(repo) / NOTES_CACHE)


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


def note_of(repo: GitRepo, config: Config, doc: Doc,
            local: Sequence[tuple[Doc, Note]]) -> Note | None:
    """The note `doc` indexes, read again: a local note from `local` (the searcher's),
    a team note or stub from git, the topic re-derived."""
    if doc.layer == Layer.LOCAL.value:
        return next((note for d, note in local if d is doc), None)
    if doc.derived:
        return derived_note(repo, config, doc)
    return written_or_stub(repo, config, doc, dt.date.today())


def derived_note(repo: GitRepo, config: Config, doc: Doc, rev: str = "HEAD") -> Note | None:
    """Re-derive a stub or the topic (for `show`): the same function the index used."""
    commit = resolve_commit(repo, rev)
    if commit is None:
        return None
    day = commit_date(commit)
    if doc.is_stub:
        blob_id, path = doc.content.blob_id, doc.content.path
        text = read_blob(repo, blob_id, path).decode("utf-8", errors="replace")
        return stub_note(path, text, config.keys, day)
    if doc.is_topic:
        snap = snapshot_for(repo, config, rev)
        stub_keys = [d.key for _, d in snap.live() if d.is_stub]
        return _topic(repo, config, list_tree(repo, commit), stub_keys, day)
    return None


def _topic(repo: GitRepo, config: Config, entries: Sequence[TreeEntry],
           stub_keys: Sequence[str], day: dt.date) -> Note | None:
    readme = next((e for e in entries if e.path.lower() == "readme.md"), None)
    found = None
    if readme is not None:
        found = (readme.path,
                 read_blob(repo, readme.blob_id, readme.path).decode("utf-8", "replace"))
    facts = repo_facts(committed_repo_name(repo, entries), [e.path for e in entries], found)
    return topic_note(facts, stub_keys, config.keys, day)


_CONFIG_PATH: Final = f"{OMH_DIR}/{CONFIG_NAME}"


def committed_repo_name(repo: GitRepo, entries: Sequence[TreeEntry]) -> str:
    """The repository's name as the commit's own `.omh/memory.toml` gives it, else
    `repo`: never the checkout's folder, so every clone of a commit derives the same
    topic (and a cached index holds what a rebuild would)."""
    entry = next((e for e in entries if e.path == _CONFIG_PATH and e.kind == "file"), None)
    if entry is None or blob_size(repo, entry.blob_id, entry.path) > _CONFIG_LIMIT:
        return DEFAULT_REPO_NAME
    return repo_name_in(read_blob(repo, entry.blob_id, entry.path)) or DEFAULT_REPO_NAME


_CONFIG_LIMIT: Final = 1 << 20  # a settings file this large is a mistake, not settings


def _in_progress(path: Path, pattern: str) -> bool:
    """A writer's temporary file (`.tmp-…`, see `write_checked`), which a pattern for
    cache files such as `*.idx` matches too: never read, discarded or pruned as a
    cache file while its writer may still rename it into place."""
    return path.name.startswith(".tmp-") and not pattern.startswith(".tmp-")
