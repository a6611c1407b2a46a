"""The relevance floor: which notes a question returns.

Each note keeps its best score over the question's phrasings; ties break on the
more recent note, then on the one more notes link to. Only notes over the
relevance floor are returned: at least FLOOR of the best score, holding at least
MIN_SHARE of the weight of the question's content words (function words such as
`the` or `why` score at half weight but cannot make a match alone). At most eight
are returned, each with its one-hop neighbourhood, and the answer says how many
more passed the floor.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from omh_git_memory.recall.answer import MAX_RESULTS, Answer
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.fusion import Semantic, fuse
from omh_git_memory.recall.neighbours import neighbourhoods

FLOOR: float = 0.35  # a note is returned only when it scores this share of the best
MIN_SHARE: float = 0.1  # ... and holds words making up this share of the question's weight


def phrasings(question: str, also: Iterable[str] = ()) -> list[str]:
    return [q for q in (question, *also) if q.strip()]


def recall(searcher: Searcher, question: str, also: Iterable[str] = (),
           semantic: Semantic | None = None, zero_is_evidence: bool = False,
           floor: float | None = None, min_share: float | None = None) -> Answer:
    """The best notes for `question`, each keeping its best score over the phrasings.

    Only notes scoring at least FLOOR times the best score are returned or counted
    as left out (`floor` overrides it, for the benchmark).

    With `semantic`, the lexical and the embedding rankings each nominate their
    best eight, and the nominees are ordered by the mean of the evidence each has:
    both scores rescaled to 0–1 over the nominees. A note that shares no word with
    the question has no lexical evidence (not evidence against it), so it is
    ordered by its similarity alone; `zero_is_evidence` instead averages in the
    zero, as the benchmark compares (see docs/recall.md)."""
    inbound = searcher.inbound()
    share = FLOOR if floor is None else floor
    least = MIN_SHARE if min_share is None else min_share
    asked = phrasings(question, also)

    def order(slot: int, score: float) -> tuple[float, int, int, str]:
        d = searcher.docs[slot]
        assert d is not None
        return (-score, -d.recorded, -len(inbound.get(slot, ())), d.key)

    per_phrasing = [searcher.terms(p) for p in asked]
    totals = [searcher.question_weight(p) for p in asked]
    scans = [searcher.scan(terms) for terms in per_phrasing]
    # A note in the final eight is among the best eight of the phrasing that gave
    # its best score, so the candidates are the union of each phrasing's best.
    candidates: set[int] = set()
    for scan in scans:
        candidates.update(scan.best(MAX_RESULTS, order))

    def lexical(slot: int) -> float:
        return max((sum(searcher.contribution(t, slot) for t in terms)
                    for terms in per_phrasing), default=0.0)

    best = {slot: lexical(slot) for slot in candidates}
    threshold = share * max(best.values(), default=0.0)
    passed: set[int] = set()
    if best:
        for scan in scans:
            passed.update(scan.reaching(threshold))
    passed |= {s for s in best if best[s] > 0 and best[s] >= threshold}

    if least > 0:  # ... holding enough of the question's weight in some phrasing
        enough: set[int] = set()
        for scan, total in zip(scans, totals, strict=True):
            if total > 0:
                enough.update(scan.holding(least * total))
        passed &= enough
    scores = best
    if semantic is not None:
        # The floor is lexical: a lexical nominee must pass it; the embedding's own
        # nominees (its best eight) are its evidence.
        scores, nominated = fuse(searcher, semantic, asked, best, lexical, zero_is_evidence)
        passed |= {s for s in scores if s in nominated}
    kept = [s for s in scores if s in passed]
    top = heapq.nsmallest(MAX_RESULTS, kept, key=lambda s: order(s, scores[s]))
    hits = neighbourhoods(searcher, top, scores, inbound, lexical)
    return Answer(hits, max(0, len(passed) - len(top)), tuple(asked))
