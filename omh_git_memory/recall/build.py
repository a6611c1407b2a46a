"""A commit's snapshot: read from the cache, or built (incrementally) and saved.

Building the snapshot of a new commit starts from the newest one on disk of the
same shape: a document whose content id (blob id and path) is unchanged keeps its
analysis and postings, so a one-note commit costs one parse. A base that cannot
be patched (a document of it gone from git), or would leave mostly holes, gives
way to a build from nothing.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter
from collections.abc import Callable

from omh_git_memory.git.history import (
    commit_date,
    commit_id,
    head_id,
    resolve_commit,
    worktree_heads,
)
from omh_git_memory.git.last_changed import last_changes
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import TreeEntry, blob_size, list_tree, read_blob, require_blobs
from omh_git_memory.model.config import Config
from omh_git_memory.model.errors import GitFailure, NoteParseError
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES, NoteHead, decode, parse, parse_head
from omh_git_memory.recall import content_id
from omh_git_memory.recall.cache_files import index_dir, rank_below
from omh_git_memory.recall.checkpoint import Checkpoints
from omh_git_memory.recall.document import Doc, analyse, doc_for
from omh_git_memory.recall.postings import EMPTY, Changes
from omh_git_memory.recall.shape import shape
from omh_git_memory.recall.snapshot import Snapshot, load, newest, save
from omh_git_memory.recall.sources import CONFIG_PATH, derive_topic, written_or_stub
from omh_git_memory.recall.stubs import (
    TOPIC_SOURCE,
    is_document,
    one_per_key,
    stub_note,
    tree_facts,
)
from omh_git_memory.stores.reading import StoredNote
from omh_git_memory.stores.team import NOTES_DIR, is_team_entry, tree_note

Progress = Callable[[int, int], None]  # (done, total) while analysing documents


def cached_snapshot(repo: GitRepo, config: Config, rev: str = "HEAD") -> Snapshot | None:
    """The snapshot of `rev` when the cache holds it, checked as `snapshot_for` checks
    it; None when it would have to be built (this never builds)."""
    commit = resolve_commit(repo, rev)
    if commit is None:
        return Snapshot(None, [], EMPTY)
    return load(index_dir(repo), commit_id(commit), shape(config))


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
        cached = load(folder, sha, made_by)
        if cached is not None:
            return cached
    base = None if rebuild else newest(folder, made_by)
    # What a stopped build of this commit analysed already (none when asked to rebuild).
    saved = Checkpoints(folder, sha, made_by, resume=not rebuild)
    try:
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        base, progress, saved).build()
    except _BaseGone:  # a document of the base pruned from git: build without it
        base = None
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        None, progress, saved).build()
    if base is not None and sum(d is None for d in snap.docs) * 2 > len(snap.docs):
        # Mostly tombstones: start afresh rather than carry the holes.
        snap = _Builder(repo, config, sha, commit_date(commit), list_tree(repo, commit),
                        None, progress, saved).build()
    # HEAD's index stays on disk and stays the newest, the base of the next build,
    # when this one is of another commit (`--ref`); so does the base, the index
    # HEAD's next build would patch, when HEAD moved past its index.
    head = head_id(repo)
    above = None if head is None or head == sha else folder / f"{head}.idx"
    if above is not None and not above.is_file() and base is not None:
        above = folder / f"{base.commit}.idx"
    # Every worktree's HEAD: they share the folder, and a linked one's is a HEAD too.
    save(folder, snap, made_by, keep={*worktree_heads(repo), *([head] if head else [])})
    if above is not None:
        rank_below((folder / f"{sha}.idx", folder / f"{sha}.post"), above)
    if (folder / f"{sha}.idx").is_file():  # saved: what the parts held is in the index now
        saved.done()
    return snap


class _BaseGone(Exception):
    """A document the base snapshot indexed is no longer in git (an amended or
    rebased commit, then `git gc`): the base cannot be patched, only replaced."""


class _Builder:
    """One commit's snapshot, from a base snapshot when there is one."""

    def __init__(self, repo: GitRepo, config: Config, sha: str, day: dt.date,
                 entries: list[TreeEntry], base: Snapshot | None,
                 progress: Progress | None, saved: Checkpoints | None = None) -> None:
        self.repo, self.config, self.sha, self.day = repo, config, sha, day
        self.entries, self.base, self.progress, self.saved = entries, base, progress, saved
        self.docs: list[Doc | None] = list(base.docs) if base else []
        self.by_source = {d.source: slot for slot, d in base.live()} if base else {}
        self.keep: set[int] = set()
        self.changes = Changes(base.postings if base else EMPTY)
        self.analysed = 0  # documents added, their words given to `changes`
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
        note_slots: dict[str, int] = {}
        for e in notes:
            slot = self._put(content_id.note_id(e.blob_id, e.path),
                             functools.partial(self._note, e, prefix))
            if slot is not None and e.kind == "file":
                note_slots[e.path] = slot
        stub_keys: list[str] = []
        stub_slots: dict[str, int] = {}
        for e in documents:
            slot = self._put(content_id.stub_id(e.blob_id, e.path),
                             functools.partial(self._stub, e))
            doc = self.docs[slot] if slot is not None else None
            if slot is not None and doc is not None:
                stub_keys.append(doc.key)
                stub_slots[e.path] = slot
        changes = self._date_stubs(stub_slots, note_slots)
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
        for slot, d in enumerate(self.docs):  # the topic is dated as of this commit
            if d is not None and d.is_topic and d.recorded != today:
                self.docs[slot] = d._replace(recorded=today)
        for slot, terms in gone_terms.items():
            self.changes.remove(slot, terms)
        postings = self.changes.postings.patched(self.changes.result())
        return Snapshot(self.sha, self.docs, postings, topic_terms,
                        len(self.keep), self.analysed,
                        tuple((c.key, c.path, c.kept_by) for c in clashes), changes)

    def _date_stubs(self, slots: dict[str, int], notes: dict[str, int]
                    ) -> dict[str, tuple[str, str, int]]:
        """The commit that last changed each document and written note, in one walk
        (git/last_changed.py), and each stub dated by its document's day: one kept
        from the base keeps the base's unless its file changed since the base's
        commit (changed and changed back), a new one is walked for."""
        every = {**slots, **notes}
        known = self.base.changes if self.base is not None else {}
        kept = {path for path, slot in every.items() if slot in self.keep and path in known}
        base = self.base.commit if self.base is not None else None
        found = last_changes(self.repo, self.sha, every.keys() - kept, base, kept)
        changes = {path: known[path] for path in kept} | {
            path: (change.commit, change.author, change.day) for path, change in found.items()}
        for path, slot in slots.items():
            doc = self.docs[slot]
            day = changes[path][2]
            if doc is not None and doc.recorded != day:
                self.docs[slot] = doc._replace(recorded=day)
        return changes

    def _put(self, source: str, make: Callable[[], tuple[Doc, dict[str, int]] | None]
             ) -> int | None:
        if source in self.by_source:
            self.keep.add(self.by_source[source])
            return self.by_source[source]
        made = self.saved.known(source) if self.saved is not None else None
        if made is not None:
            self._tick()
        else:
            made = make()
            if made is None:
                return None
            if self.saved is not None:
                self.saved.add(source, made)
        doc, terms = made
        self.docs.append(doc)
        self._add(terms)
        return len(self.docs) - 1

    def _add(self, terms: dict[str, int]) -> None:
        """The last document's words, into the postings."""
        self.changes.add(len(self.docs) - 1, terms)
        self.analysed += 1

    def _tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _note(self, e: TreeEntry, prefix: str) -> tuple[Doc, dict[str, int]]:
        self._tick()
        source, location = content_id.note_id(e.blob_id, e.path), f"{self.sha[:12]}:{e.path}"
        if e.kind != "file" or blob_size(self.repo, e.blob_id, e.path) > MAX_NOTE_BYTES:
            return _stored_doc(tree_note(self.repo, e.path, e.kind, e.blob_id, location), source)
        data = read_blob(self.repo, e.blob_id, e.path)
        try:  # what the index needs of a note, most often without its sections
            text = decode(data)
            note = parse_head(text)
            if isinstance(note, NoteHead) and (note.type == "stub" or note.source == TOPIC_SOURCE):
                note = parse(text)  # indexed by their sections
        except NoteParseError:  # the problem, as every reader of the team layer words it
            return _stored_doc(tree_note(self.repo, e.path, e.kind, e.blob_id, location, data),
                               source)
        terms = analyse(note)
        return doc_for(note, Layer.TEAM, source, location, terms), dict(terms)

    def _stub(self, e: TreeEntry) -> tuple[Doc, dict[str, int]] | None:
        self._tick()
        text = read_blob(self.repo, e.blob_id, e.path).decode("utf-8", errors="replace")
        # Dated by _date_stubs once every stub is known (the date is in no word).
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
        config = next((e.blob_id for e in self.entries if e.path == CONFIG_PATH), None)
        # Everything the topic is made of (docs/recall.md), the facts the whole
        # tree's paths give included: a file added in a folder can change them.
        facts = tree_facts([e.path for e in self.entries])
        identity = repr((config, readme.blob_id if readme else None, top_level, stub_keys,
                         facts))
        source = content_id.topic_id(identity)
        if source in self.by_source and self.base is not None:
            self.keep.add(self.by_source[source])
            return self.base.topic_terms
        note = derive_topic(self.repo, self.config, self.entries, stub_keys, self.day)
        if note is None:
            return {}
        terms = dict(analyse(note))
        self.docs.append(doc_for(note, Layer.TEAM, source, "derived from the repository",
                                 Counter(terms)))
        self._add(terms)
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
            stub = stub_note(path, text, self.config.keys, dt.date.fromordinal(doc.recorded))
            return dict(analyse(stub, text)) if stub is not None else {}
        note = written_or_stub(self.repo, self.config, doc)
        return dict(analyse(note)) if note is not None else {}


def _kind(e: TreeEntry, prefix: str) -> str:
    return "n" if e.path.startswith(prefix) else "s"


def _stored_doc(stored: StoredNote, source: str) -> tuple[Doc, dict[str, int]]:
    if stored.note is None:
        doc = Doc(Layer.TEAM.value, stored.key, "unreadable", 0, "", (), source, 0,
                  stored.location, stored.problem or "unreadable")
        return doc, {}
    terms = analyse(stored.note)
    return doc_for(stored.note, stored.layer, source, stored.location, terms), dict(terms)
