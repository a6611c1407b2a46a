"""Each result's one-hop neighbourhood: the notes it links to and those linking to it.

Best match to the question first; a hub (the repository topic, or a note linking
to half the store) is named once; the repository topic, which links every
document, is not named for that link alone unless the question shares a word with
it; the whole answer names at most LINE_BUDGET notes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from omh_git_memory.recall.answer import MAX_RESULTS, Hit
from omh_git_memory.recall.bm25 import Searcher

MAX_NEIGHBOURS: Final = MAX_RESULTS  # the same budget for one note's neighbourhood
LINE_BUDGET: Final = 24  # notes named in one answer: results plus neighbours


def is_hub(searcher: Searcher, slot: int) -> bool:
    """The repository topic, or a note linking to at least half the store: a
    neighbour of nearly everything, so naming it under each result says nothing."""
    d = searcher.docs[slot]
    if d is None:
        return False
    if d.is_topic:
        return True
    return searcher.count >= 4 and len(d.links) * 2 >= searcher.count and len(
        {r for t in d.links for r in searcher.resolve(t, d.layer)}) * 2 >= searcher.count


def _is_topic(searcher: Searcher, slot: int) -> bool:
    d = searcher.docs[slot]
    return d is not None and d.is_topic


def neighbourhoods(searcher: Searcher, top: Sequence[int], best: Mapping[int, float],
                    inbound: dict[int, list[int]], score: Callable[[int], float]
                    ) -> tuple[Hit, ...]:
    """Each result with its one-hop neighbours, best match to the question first.

    A hub is named under the first result that reaches it only, and the whole
    answer names at most LINE_BUDGET notes: neighbours are dealt out one per
    result in rank order, round after round, until the budget is spent."""
    linked: list[list[int]] = []
    hubs_named: set[int] = set()
    for slot in top:
        doc = searcher.docs[slot]
        assert doc is not None
        near: dict[int, None] = {}
        for target in doc.links:
            for reached in searcher.resolve(target, doc.layer):
                if reached != slot:
                    near.setdefault(reached, None)
        for linker in inbound.get(slot, ()):
            # The repository topic links every document: reached that way alone, it
            # says nothing of the answer unless the question shares a word with it.
            if linker not in near and _is_topic(searcher, linker) and score(linker) <= 0:
                continue
            near.setdefault(linker, None)
        kept = []
        for n in near:
            if is_hub(searcher, n):
                if n in hubs_named:
                    continue
                hubs_named.add(n)
            kept.append(n)
        scores = {n: score(n) for n in kept}  # lexical, also when results are fused
        linked.append(sorted(kept, key=lambda n: -scores[n]))  # stable: links, then linkers
    budget = max(0, LINE_BUDGET - len(top))
    shown: list[list[int]] = [[] for _ in top]
    depth = 0
    while budget > 0 and any(len(ranked) > depth for ranked in linked):
        for i, ranked in enumerate(linked):
            if budget > 0 and len(ranked) > depth and depth < MAX_NEIGHBOURS:
                shown[i].append(ranked[depth])
                budget -= 1
        depth += 1
        if depth >= MAX_NEIGHBOURS:
            break
    hits = []
    for slot, ranked, picked in zip(top, linked, shown, strict=True):
        doc = searcher.docs[slot]
        assert doc is not None
        docs = tuple(d for d in (searcher.docs[n] for n in picked) if d is not None)
        hits.append(Hit(doc, best[slot], docs, len(ranked) - len(picked)))
    return tuple(hits)
