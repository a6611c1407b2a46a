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
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import marshal
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from omh_git_memory.config import Config
from omh_git_memory.git import (
    GitRepo,
    TreeEntry,
    commit_date,
    commit_id,
    list_tree,
    read_blob,
    resolve_commit,
)
from omh_git_memory.layers import Layer
from omh_git_memory.note import Note
from omh_git_memory.store import StoredNote, read_note_bytes
from omh_git_memory.stubs import is_document, repo_facts, stub_note, topic_note
from omh_git_memory.team import NOTES_DIR
from omh_git_memory.tokens import without_links, words

VERSION: Final = 1
KEEP_SNAPSHOTS: Final = 8  # recent commits kept on disk; older ones are rebuilt on demand

Progress = Callable[[int, int], None]  # (done, total) while analysing documents


@dataclass(frozen=True)
class Doc:
    """One indexed note: what recall ranks and prints."""

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

    def as_tuple(self) -> tuple[object, ...]:
        return (self.layer, self.key, self.kind, self.recorded, self.title, self.links,
                self.source, self.length, self.location, self.problem)

    @classmethod
    def from_tuple(cls, t: tuple[object, ...]) -> Doc:
        return cls(*t)  # type: ignore[arg-type]


def analyse(note: Note) -> Counter[str]:
    """The words recall matches a note on: its text (title, sections, without
    `[[links]]` and frontmatter) plus the words of its key a second time, since a
    word in the key counts double."""
    terms = Counter(words(without_links(note.body)))
    terms.update(words(note.key.value.replace("/", " ")))
    return terms


def doc_for(note: Note, layer: Layer, source: str, location: str,
            terms: Counter[str]) -> Doc:
    return Doc(layer.value, note.key.value, note.type, note.recorded.toordinal(), note.title,
               note.links, source, sum(terms.values()), location)


@dataclass
class Snapshot:
    """The team layer of one commit, indexed."""

    commit: str | None
    docs: list[Doc | None]
    postings: dict[str, tuple[bytes, bytes]]  # word -> (slots, counts) as uint32 arrays
    forward: list[dict[str, int] | None] = field(default_factory=list)  # slot -> its words
    reused: int = 0
    analysed: int = 0

    def live(self) -> Iterable[tuple[int, Doc]]:
        return ((slot, d) for slot, d in enumerate(self.docs) if d is not None)


def index_dir(repo: GitRepo) -> Path:
    return repo.common_dir / "omh" / "index"


def snapshot_for(
    repo: GitRepo, config: Config, rev: str = "HEAD", progress: Progress | None = None,
    rebuild: bool = False,
) -> Snapshot:
    """The snapshot of `rev`: read from the cache, or built (incrementally) and saved."""
    commit = resolve_commit(repo, rev)
    if commit is None:
        return Snapshot(None, [], {})
    sha = commit_id(commit)
    folder = index_dir(repo)
    if not rebuild:
        cached = _load(folder / f"{sha}.docs")
        if cached is not None:
            return cached
    base = None if rebuild else _newest(folder)
    snap = _build(repo, config, sha, commit_date(commit), list_tree(repo, commit), base, progress)
    _save(folder, snap)
    return snap


def _build(repo: GitRepo, config: Config, sha: str, day: dt.date, entries: list[TreeEntry],
           base: Snapshot | None, progress: Progress | None) -> Snapshot:
    prefix = NOTES_DIR + "/"
    notes = [e for e in entries if e.path.startswith(prefix) and e.path.endswith(".md")
             and not any(p.startswith(".") for p in e.path[len(prefix):].split("/"))]
    documents = sorted((e for e in entries if e.kind == "file"
                        and is_document(e.path, config.stub_exclude)), key=lambda e: e.path)
    by_source: dict[str, int] = {}
    if base is not None:
        by_source = {d.source: slot for slot, d in base.live()}
    docs: list[Doc | None] = list(base.docs) if base else []
    forward: list[dict[str, int] | None] = list(base.forward) if base else []
    keep: set[int] = set()
    added: list[int] = []
    todo = [e for e in notes if f"n:{e.blob_id}:{e.path}" not in by_source]
    todo += [e for e in documents if f"s:{e.blob_id}:{e.path}" not in by_source]
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(todo))

    def put(source: str, make: Callable[[], tuple[Doc, dict[str, int]] | None]) -> int | None:
        if source in by_source:
            keep.add(by_source[source])
            return by_source[source]
        made = make()
        if made is None:
            return None
        doc, terms = made
        docs.append(doc)
        forward.append(terms)
        added.append(len(docs) - 1)
        return len(docs) - 1

    for e in notes:
        source = f"n:{e.blob_id}:{e.path}"
        relpath = e.path[len(prefix):]

        def make_note(e: TreeEntry = e, relpath: str = relpath) -> tuple[Doc, dict[str, int]]:
            tick()
            location = f"{sha[:12]}:{e.path}"
            if e.kind != "file":
                stored = StoredNote(Layer.TEAM, relpath, location, None,
                                    f"is a {e.kind} in the tree")
            else:
                stored = read_note_bytes(Layer.TEAM, relpath, location, read_blob(repo, e.blob_id))
            return _stored_doc(stored, f"n:{e.blob_id}:{e.path}")

        put(source, make_note)

    stub_keys: list[str] = []
    for e in documents:
        source = f"s:{e.blob_id}:{e.path}"

        def make_stub(e: TreeEntry = e) -> tuple[Doc, dict[str, int]] | None:
            tick()
            text = read_blob(repo, e.blob_id).decode("utf-8", errors="replace")
            note = stub_note(e.path, text, config.keys, day)
            if note is None:
                return None
            terms = analyse(note)
            return doc_for(note, Layer.TEAM, f"s:{e.blob_id}:{e.path}", e.path, terms), dict(terms)

        slot = put(source, make_stub)
        if slot is not None:
            doc = docs[slot]
            assert doc is not None
            stub_keys.append(doc.key)

    readme = next((e for e in entries if e.path.lower() == "readme.md"), None)
    topic_source = "t:" + hashlib.sha1(
        repr((repo.main_checkout.name, readme.blob_id if readme else None,
              sorted(e.path for e in entries if "/" not in e.path or e.path.startswith(".github/")),
              stub_keys)).encode()
    ).hexdigest()

    def make_topic() -> tuple[Doc, dict[str, int]] | None:
        note = _topic(repo, config, entries, stub_keys, day)
        if note is None:
            return None
        terms = analyse(note)
        return doc_for(note, Layer.TEAM, topic_source, "derived from the repository",
                       terms), dict(terms)

    put(topic_source, make_topic)

    removed = [slot for slot, d in enumerate(docs) if d is not None and slot < len(base.docs)
               and slot not in keep] if base else []
    for slot in removed:
        docs[slot] = None
    day_ordinal = day.toordinal()
    for slot, d in enumerate(docs):  # derived notes are as of this commit
        if d is not None and d.source[:2] in ("s:", "t:") and d.recorded != day_ordinal:
            docs[slot] = dataclasses.replace(d, recorded=day_ordinal)
    reused = len(keep)
    if base is None or sum(d is None for d in docs) * 2 > len(docs):
        docs, forward = _compact(docs, forward)
        postings = _invert(forward)
    else:
        postings = dict(base.postings)
        _patch(postings, forward, removed, added)
        for slot in removed:
            forward[slot] = None
    return Snapshot(sha, docs, postings, forward, reused, len(added))


def _stored_doc(stored: StoredNote, source: str) -> tuple[Doc, dict[str, int]]:
    if stored.note is None:
        doc = Doc(Layer.TEAM.value, stored.key, "unreadable", 0, "", (), source, 0,
                  stored.location, stored.problem or "unreadable")
        return doc, {}
    terms = analyse(stored.note)
    return doc_for(stored.note, stored.layer, source, stored.location, terms), dict(terms)


def _compact(docs: list[Doc | None], forward: list[dict[str, int] | None]
             ) -> tuple[list[Doc | None], list[dict[str, int] | None]]:
    pairs = [(d, f) for d, f in zip(docs, forward, strict=True) if d is not None]
    return [d for d, _ in pairs], [f for _, f in pairs]


def _invert(forward: Sequence[dict[str, int] | None]) -> dict[str, tuple[bytes, bytes]]:
    slots: dict[str, array[int]] = {}
    counts: dict[str, array[int]] = {}
    for slot, terms in enumerate(forward):
        if terms is None:
            continue
        for term, tf in terms.items():
            if term not in slots:
                slots[term] = array("I")
                counts[term] = array("I")
            slots[term].append(slot)
            counts[term].append(tf)
    return {t: (slots[t].tobytes(), counts[t].tobytes()) for t in slots}


def _patch(postings: dict[str, tuple[bytes, bytes]], forward: list[dict[str, int] | None],
           removed: Sequence[int], added: Sequence[int]) -> None:
    gone = set(removed)
    touched: set[str] = set()
    for slot in (*removed, *added):
        terms = forward[slot]
        if terms is not None:
            touched.update(terms)
    for term in touched:
        slots, counts = array("I"), array("I")
        if term in postings:
            old_s, old_c = decode(postings[term])
            for s, c in zip(old_s, old_c, strict=True):
                if s not in gone:
                    slots.append(s)
                    counts.append(c)
        for slot in added:
            terms = forward[slot]
            if terms is not None and term in terms:
                slots.append(slot)
                counts.append(terms[term])
        if slots:
            postings[term] = (slots.tobytes(), counts.tobytes())
        else:
            postings.pop(term, None)


def decode(entry: tuple[bytes, bytes]) -> tuple[array[int], array[int]]:
    slots, counts = array("I"), array("I")
    slots.frombytes(entry[0])
    counts.frombytes(entry[1])
    return slots, counts


def _save(folder: Path, snap: Snapshot) -> None:
    if snap.commit is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        docs = [d.as_tuple() if d else None for d in snap.docs]
        _write_atomic(folder / f"{snap.commit}.docs",
                      marshal.dumps((VERSION, snap.commit, docs, snap.postings)))
        _write_atomic(folder / f"{snap.commit}.fwd", marshal.dumps((VERSION, snap.forward)))
        _prune(folder)
    except OSError:
        pass  # a cache that cannot be written is rebuilt next time; recall stays correct


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _prune(folder: Path) -> None:
    snaps = sorted(folder.glob("*.docs"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in snaps[KEEP_SNAPSHOTS:]:
        for path in (old, old.with_suffix(".fwd")):
            with contextlib.suppress(OSError):
                path.unlink()


def _load(path: Path, with_forward: bool = False) -> Snapshot | None:
    try:
        version, sha, docs, postings = marshal.loads(path.read_bytes())
        if version != VERSION:
            return None
        forward: list[dict[str, int] | None] = []
        if with_forward:
            fversion, forward = marshal.loads(path.with_suffix(".fwd").read_bytes())
            if fversion != VERSION or len(forward) != len(docs):
                return None
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return Snapshot(sha, [Doc.from_tuple(d) if d else None for d in docs], postings, forward)


def _newest(folder: Path) -> Snapshot | None:
    try:
        snaps = sorted(folder.glob("*.docs"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return None
    for path in snaps[:1]:
        return _load(path, with_forward=True)
    return None


def local_docs(entries: Iterable[StoredNote]) -> list[tuple[Doc, dict[str, int]]]:
    """The local layer's readable notes, analysed (not cached: they change at any time)."""
    out: list[tuple[Doc, dict[str, int]]] = []
    for entry in entries:
        if entry.note is None:
            continue
        terms = analyse(entry.note)
        out.append((doc_for(entry.note, Layer.LOCAL, "local", entry.location, terms),
                    dict(terms)))
    return out


def derived_note(repo: GitRepo, config: Config, doc: Doc, rev: str = "HEAD") -> Note | None:
    """Re-derive a stub or the topic (for `show`): the same function the index used."""
    commit = resolve_commit(repo, rev)
    if commit is None:
        return None
    day = commit_date(commit)
    if doc.source.startswith("s:"):
        _, blob_id, path = doc.source.split(":", 2)
        text = read_blob(repo, blob_id).decode("utf-8", errors="replace")
        return stub_note(path, text, config.keys, day)
    if doc.source.startswith("t:"):
        snap = snapshot_for(repo, config, rev)
        stub_keys = [d.key for _, d in snap.live() if d.source.startswith("s:")]
        return _topic(repo, config, list_tree(repo, commit), stub_keys, day)
    return None


def _topic(repo: GitRepo, config: Config, entries: Sequence[TreeEntry],
           stub_keys: Sequence[str], day: dt.date) -> Note | None:
    readme = next((e for e in entries if e.path.lower() == "readme.md"), None)
    found = None
    if readme is not None:
        found = (readme.path, read_blob(repo, readme.blob_id).decode("utf-8", "replace"))
    facts = repo_facts(repo.main_checkout.name, [e.path for e in entries], found)
    return topic_note(facts, stub_keys, config.keys, day)

