"""Recall as both edges ask it (`omh memory recall`, the MCP `recall` tool): a
question, the ranked answer, which of the notes it shows have gone stale, and the
best results' notes for the excerpts the agent's answer quotes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from omh_git_memory.expiry.stale import stale_marks
from omh_git_memory.model.errors import BadArguments
from omh_git_memory.recall.answer import shown_docs
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.reread import note_of

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.model.note import Note
    from omh_git_memory.recall.answer import Answer
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.build import Progress
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
    answer = recall(searcher, question.text, question.also, semantic=view)
    fired = stale_marks(shown_docs(answer), ws.facts())
    notes = {}
    for hit in answer.results[:excerpts]:
        note = note_of(ws.repo, ws.config(), hit.doc, searcher.local_notes)
        if note is not None:
            notes[(hit.doc.layer, hit.doc.key)] = note
    return Answered(answer, fired, notes)
