"""Recall's answer from its definitions: every document scored word by word, which
the fast paths (one pass per phrasing, cached columns) must equal."""

from __future__ import annotations

from collections.abc import Sequence

from omh_git_memory.recall import bm25 as recall_module
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.floor import phrasings


def full(searcher: Searcher, terms: Sequence[recall_module.Term], slot: int) -> float:
    """One document's score, its words' contributions summed rarest first."""
    score = 0.0
    for term in sorted(terms, key=lambda t: -t.idf):
        score += searcher.contribution(term, slot)
    return score


def held(terms: Sequence[recall_module.Term], slot: int) -> float:
    """The weight of the content words a document holds, summed rarest first."""
    weight = 0.0
    for term in sorted(terms, key=lambda t: -t.idf):
        if term.content and slot in term.slots:
            weight += term.idf
    return weight


def reference(searcher: Searcher, question: str, also: Sequence[str], floor: float,
              least: float) -> tuple[list[tuple[str, float]], int]:
    """Recall's answer straight from its definition: every document scored."""
    inbound = searcher.inbound()
    asked = phrasings(question, also)
    per = [searcher.terms(p) for p in asked]
    totals = [searcher.question_weight(p) for p in asked]

    def order(slot: int, score: float) -> tuple[float, int, int, str]:
        d = searcher.docs[slot]
        assert d is not None
        return (-score, -d.recorded, -len(inbound.get(slot, ())), d.key)

    touched = [{s for t in terms for s in t.slots} for terms in per]
    candidates: set[int] = set()
    for terms, holding in zip(per, touched, strict=True):
        candidates |= set(sorted(holding, key=lambda s: order(s, full(searcher, terms, s)))[:8])
    best = {s: max(sum(searcher.contribution(t, s) for t in terms) for terms in per)
            for s in candidates}
    threshold = floor * max(best.values(), default=0.0)
    passed: set[int] = set()
    if best:
        for terms, holding in zip(per, touched, strict=True):
            passed |= {s for s in holding if full(searcher, terms, s) >= threshold}
    passed |= {s for s in best if best[s] > 0 and best[s] >= threshold}
    if least > 0:
        passed = {s for s in passed if any(
            total > 0 and held(terms, s) >= least * total
            for terms, total in zip(per, totals, strict=True))}
    top = sorted((s for s in best if s in passed), key=lambda s: order(s, best[s]))[:8]
    return [(searcher.docs[s].key, best[s]) for s in top], len(passed) - len(top)  # type: ignore[union-attr]
