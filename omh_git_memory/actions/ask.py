"""Recall as both edges ask it (`omh memory recall`, the MCP `recall` tool): a
question, the ranked answer, which of the notes it shows have gone stale, the
section of each document a stub result points at, and the best results' notes for
the excerpts the agent's answer quotes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from omh_git_memory.expiry.citations import Checked, on_disk
from omh_git_memory.expiry.citations import check as check_citations
from omh_git_memory.expiry.citations import line as citation_line
from omh_git_memory.expiry.stale import stale_marks
from omh_git_memory.git.trees import read_blob
from omh_git_memory.model.errors import BadArguments, GitFailure
from omh_git_memory.model.layers import Layer
from omh_git_memory.recall.answer import shown_docs
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.reread import note_of
from omh_git_memory.recall.sections import (
    Counted,
    Section,
    best_section,
    counted,
    places,
    quoted_lines,
    spanned,
)

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.model.note import Note
    from omh_git_memory.recall.answer import Answer
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.build import Progress
    from omh_git_memory.recall.document import Doc
    from omh_git_memory.recall.fusion import Semantic


@dataclass(frozen=True)
class Question:
    """What someone asks, in their words, and the same question in other words."""

    text: str
    also: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.text.strip():
            raise BadArguments("`question` is empty; ask what you want to know")


@dataclass(frozen=True)
class Answered:
    answer: Answer
    stale: dict[tuple[str, str], str]  # (layer, key) → why, for the notes shown that fired
    notes: dict[tuple[str, str], Note] = field(default_factory=dict)  # the excerpted ones
    # (layer, key) → the section that matched, for each stub result whose document
    # holds a word of the question
    sections: dict[tuple[str, str], Section] = field(default_factory=dict)
    # (layer, key) → the section's lines to quote, for the excerpted stub results
    quotes: dict[tuple[str, str], tuple[Section, list[str]]] = field(default_factory=dict)
    # (layer, key) → the commit that last changed it, for each team note and document
    # shown: (commit id, author, day ordinal), from the index (git/last_changed.py)
    changed: dict[tuple[str, str], tuple[str, str, int]] = field(default_factory=dict)
    # (layer, key) → its citations compared with the commit answered from, for each
    # result that records any (expiry/citations.py)
    citations: dict[tuple[str, str], tuple[Checked, ...]] = field(default_factory=dict)

    def cited(self) -> dict[tuple[str, str], str]:
        """(layer, key) → `cites src/x.py, changed since (3 commits)`, for each result
        whose cited files changed since it was written (recall's text mark)."""
        return {where: text for where, checked in self.citations.items()
                if (text := citation_line(checked)) is not None}


def ask(ws: Workspace, question: Question, *, searcher: Searcher | None = None,
        progress: Progress | None = None,
        semantic: Callable[[Searcher], Semantic | None] | None = None,
        excerpts: int = 0) -> Answered:
    """The notes that best answer `question`, from `searcher` (by default the store
    as it is now, indexed with `progress`). `semantic` gives the semantic view to
    fuse in, or None (by words). The first `excerpts` results' notes are read again
    (parsing a note costs a Markdown parser: the command line asks for none)."""
    if searcher is None:
        searcher = ws.searcher(progress=progress)
    view = semantic(searcher) if semantic is not None else None
    texts = Documents(ws)
    answer = recall(searcher, question.text, question.also, semantic=view, places=texts.places)
    fired = stale_marks(shown_docs(answer), ws.facts())
    notes = {}
    for hit in answer.results[:excerpts]:
        try:
            note = note_of(ws.repo, ws.config(), hit.doc, searcher.local_notes)
        except GitFailure:  # a partial clone that lacks it: shown, with nothing to quote
            note = None
        if note is not None:
            notes[(hit.doc.layer, hit.doc.key)] = note
    weights = question_weights(searcher, answer.question)
    wanted = {t.word for p in answer.question for t in searcher.terms(p) if t.content}
    sections: dict[tuple[str, str], Section] = {}
    quotes: dict[tuple[str, str], tuple[Section, list[str]]] = {}
    for rank, hit in enumerate(answer.results):
        text = texts.text(hit.doc) if hit.doc.is_stub else None
        parts = texts.sections(hit.doc) if text is not None else None
        found = best_section(parts, weights) if parts is not None else None
        if found is not None and parts is not None:
            found = spanned([section for section, _ in parts], found)
        if text is not None and found is not None:
            sections[(hit.doc.layer, hit.doc.key)] = found
            if rank < excerpts:
                quotes[(hit.doc.layer, hit.doc.key)] = (found, quoted_lines(text, found, wanted))
    changed = {(d.layer, d.key): change for d in shown_docs(answer)
               if d.layer == Layer.TEAM.value and (d.is_team_file or d.is_stub)
               and (change := searcher.snapshot.changes.get(d.content.path)) is not None}
    # At HEAD, a file the working tree holds as recorded has not changed for this
    # checkout (the edit the note saw, not committed yet); as of a commit, only its tree.
    cited = check_citations(ws.repo, searcher.snapshot.commit,
                            {(h.doc.layer, h.doc.key): h.doc.cites for h in answer.results
                             if h.doc.cites},
                            on_disk(ws.repo) if ws.pinned is None else None)
    return Answered(answer, fired, notes, sections, quotes, changed, cited)


def question_weights(searcher: Searcher, phrasings: Sequence[str]) -> dict[str, float]:
    """Each content word of the question's phrasings that the store holds, at its
    weight in recall's scoring (its rarity), the best over phrasings. Function words
    (`how`, `I`) choose no section: in a small store they outweigh what is asked."""
    weights: dict[str, float] = {}
    for phrasing in phrasings:
        for term in searcher.terms(phrasing):
            if term.content:
                weights[term.word] = max(weights.get(term.word, 0.0), term.idf)
    return weights


class Documents:
    """The texts of the documents stubs index, read once per question, and their
    sections' words, kept for the last SECTIONS_KEPT documents a process read (a
    server asked many questions tokenises a document once)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._texts: dict[tuple[str, str], str | None] = {}

    def text(self, doc: Doc) -> str | None:
        where = (doc.content.blob_id, doc.content.path)
        if where not in self._texts:
            self._texts[where] = document_text(self.ws, doc)
        return self._texts[where]

    def sections(self, doc: Doc) -> Counted | None:
        """The document's sections with their words, or None when it cannot be read."""
        where = (doc.content.blob_id, doc.content.path)
        found = _SECTIONS.get(where)
        if found is None:
            text = self.text(doc)
            if text is None:
                return None
            found = counted(text)
            _SECTIONS[where] = found
            while len(_SECTIONS) > SECTIONS_KEPT:
                _SECTIONS.pop(next(iter(_SECTIONS)))
        return found

    def places(self, doc: Doc) -> tuple[frozenset[str], ...] | None:
        """The word sets of the document's sections (recall's check that a question's
        words come together in one of them), or None when it cannot be read."""
        found = self.sections(doc)
        return places(found) if found is not None else None


SECTIONS_KEPT = 256
# (blob id, path) → sections: a blob's content never changes, so nothing goes stale
_SECTIONS: dict[tuple[str, str], Counted] = {}


def document_text(ws: Workspace, doc: Doc) -> str | None:
    """The text of the document a stub indexes, as the index read it; None when its
    blob cannot be read (a partial clone that lacks it): the result is still shown."""
    content = doc.content
    try:
        return read_blob(ws.repo, content.blob_id, content.path).decode("utf-8", "replace")
    except GitFailure:
        return None
