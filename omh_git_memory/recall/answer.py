"""What recall answers: the matched notes, each with the neighbours shown under it.

At most MAX_RESULTS notes are returned, and the answer says how many more passed
the relevance floor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from omh_git_memory.recall.document import Doc

MAX_RESULTS: Final = 8  # rule: recall names at most eight matched notes
MAX_DOCUMENTS: Final = 5  # ... of which at most five are documents (stubs): see docs/recall.md


@dataclass(frozen=True)
class Hit:
    doc: Doc
    score: float
    neighbours: tuple[Doc, ...]
    more_neighbours: int  # linked notes not shown


@dataclass(frozen=True)
class Answer:
    results: tuple[Hit, ...]
    left_out: int  # notes that passed the floor beyond those returned
    question: tuple[str, ...] = ()  # the phrasings asked, for excerpts
    # names the question gives that nothing in the store mentions: no document is
    # returned then (recall/names.py)
    unknown: tuple[str, ...] = ()


def shown_docs(answer: Answer) -> list[Doc]:
    """Every note the answer shows: results and their neighbours."""
    return [d for h in answer.results for d in (h.doc, *h.neighbours)]
