"""Lexical and semantic evidence together: the nominees of both, by their mean score.

Each ranking nominates its best eight; the nominees are ordered by the mean of
both scores, each rescaled to 0–1 over the nominees (see docs/recall.md). A
document (a stub) the embedding nominates but whose words the lexical check turns
away is kept only when it is SURE-similar to the question: the embedding nominates
its best eight whatever their similarity, and a question no document answers still
has eight nearest sections.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from omh_git_memory.recall.answer import MAX_RESULTS
from omh_git_memory.recall.bm25 import Searcher

LEXICAL_WEIGHT: float = 0.5  # the lexical evidence's part of a fused score (the rest: cosine)
SURE: float = 0.4  # the cosine at which the embedding alone vouches for a document (docs/recall.md)


class Semantic(Protocol):
    """Cosine similarity of every document to a question (see omh_git_memory.recall.semantic)."""

    def similarities(self, phrasings: Sequence[str]) -> Any:
        """An array indexed by slot (numpy's, so typed loosely here)."""


def fuse(searcher: Searcher, semantic: Semantic, asked: Sequence[str],
          lexical_best: dict[int, float], lexical: Callable[[int], float],
          zero_is_evidence: bool) -> tuple[dict[int, float], set[int]]:
    """The nominees of both rankings, scored by the mean of their rescaled scores,
    and the embedding's own nominees that need no lexical check: its written notes,
    and its documents at least SURE-similar to the question."""
    sims = semantic.similarities(asked)
    usable = [s for s, d in enumerate(searcher.docs) if d is not None and not d.problem]
    by_sim = heapq.nlargest(MAX_RESULTS, usable, key=lambda s: sims[s])
    by_lex = heapq.nlargest(MAX_RESULTS, lexical_best, key=lambda s: lexical_best[s])
    nominees = set(by_lex) | set(by_sim)
    lex = {s: lexical_best[s] if s in lexical_best else lexical(s) for s in nominees}
    top_lex = max(lex.values(), default=0.0) or 1.0
    low, high = min(sims[s] for s in nominees), max(sims[s] for s in nominees)
    spread = (high - low) or 1.0
    near = {s: (sims[s] - low) / spread for s in nominees}
    fused = {
        s: float(LEXICAL_WEIGHT * lex[s] / top_lex + (1 - LEXICAL_WEIGHT) * near[s]
                 if lex[s] > 0 or zero_is_evidence else near[s])
        for s in nominees
    }
    vouched = {s for s in by_sim if sims[s] >= SURE or not _is_stub(searcher, s)}
    return {s: v for s, v in fused.items() if v > 0}, vouched


def _is_stub(searcher: Searcher, slot: int) -> bool:
    d = searcher.docs[slot]
    return d is not None and d.is_stub
