"""Recall: rank the notes a question matches, and return each with its neighbours.

Ranking is Okapi BM25 (k1 = 1.2, b = 0.75, the published defaults) over stemmed,
identifier-aware words (see :mod:`omh_git_memory.tokens`): a word's weight is its
rarity in this store (no stopword list), the words of a note's key are counted a
second time, and ties break on the more recent note, then on the one more notes
link to. At most eight matched notes are returned, each with its one-hop
neighbourhood (the notes it links to and the notes linking to it), and the
answer says how many more matched. Every line of the rendered answer carries the
note's layer and date (invariant 1).
"""

from __future__ import annotations

import bisect
import datetime as dt
import heapq
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from omh_git_memory.index import Doc, Snapshot
from omh_git_memory.layers import Layer, reachable_layers
from omh_git_memory.note import Note
from omh_git_memory.tokens import words

K1: Final = 1.2
B: Final = 0.75
MAX_RESULTS: Final = 8  # the seed's budget: eight matched notes
MAX_NEIGHBOURS: Final = MAX_RESULTS  # the same budget for one note's neighbourhood

# `docs: …`, `fix(git): …`, `ws: …` — an area label in front of the question.
_AREA = re.compile(r"^\s*[\w./-]+(?:\([\w./ -]+\))?!?:\s+(?=\S)")


# How results are ordered: (slot, score) -> a key, smallest first.
Order = Callable[[int, float], tuple[float, int, int, str]]


@dataclass(frozen=True)
class _Term:
    slots: Sequence[int]  # ascending
    counts: Sequence[int]
    idf: float

    @property
    def bound(self) -> float:
        """The most this word can add to any document's score."""
        return self.idf * (K1 + 1)


class Searcher:
    """The team snapshot plus the local overlay, ready to answer questions."""

    def __init__(self, team: Snapshot,
                 local: Sequence[tuple[Doc, dict[str, int], Note]]) -> None:
        self.snapshot = team
        self.local_notes = [(doc, note) for doc, _, note in local]
        self.docs: list[Doc | None] = list(team.docs)
        self._team = team.postings
        self._local: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for doc, terms, _note in local:
            self.docs.append(doc)
            slot = len(self.docs) - 1
            for term, tf in terms.items():
                self._local[term].append((slot, tf))
        usable = [(slot, d) for slot, d in enumerate(self.docs) if d is not None and not d.problem]
        self.count = len(usable)
        average = sum(d.length for _, d in usable) / self.count if self.count else 1.0
        # The length part of BM25's denominator, once per document.
        self._norm = [K1 * (1 - B + B * (d.length / average)) if d else 0.0 for d in self.docs]
        self._by_key: dict[tuple[str, str], list[int]] = defaultdict(list)
        for slot, d in usable:
            self._by_key[(d.layer, d.key)].append(slot)
        self._inbound: dict[int, list[int]] | None = None
        self._decoded: dict[str, tuple[Sequence[int], Sequence[int]]] = {}

    def postings(self, term: str) -> tuple[Sequence[int], Sequence[int]]:
        """The slots holding `term` and its count in each (decoded once, then kept)."""
        found = self._decoded.get(term)
        if found is None:
            team = self._team.get(term)
            slots: list[int] = list(team[0]) if team else []
            counts: list[int] = list(team[1]) if team else []
            for slot, tf in self._local.get(term, ()):
                slots.append(slot)
                counts.append(tf)
            found = self._decoded[term] = (slots, counts)
        return found

    def terms(self, question: str) -> list[_Term]:
        """The question's distinct words that occur in the store, with their weights."""
        found = []
        for term in dict.fromkeys(words(question)):
            slots, counts = self.postings(term)
            if slots:
                df = len(slots)
                idf = math.log(1 + (self.count - df + 0.5) / (df + 0.5))
                found.append(_Term(slots, counts, idf))
        return found

    def contribution(self, term: _Term, slot: int) -> float:
        """One word's BM25 share of one document's score (0 when absent)."""
        at = bisect.bisect_left(term.slots, slot)
        if at == len(term.slots) or term.slots[at] != slot:
            return 0.0
        tf = term.counts[at]
        return term.idf * (K1 + 1) * tf / (tf + self._norm[slot])

    def best(self, terms: Sequence[_Term], k: int, order: Order) -> dict[int, float]:
        """The exact BM25 scores of every document that can be among the `k` best
        (by `order`), without scoring the rest.

        MaxScore pruning: words are taken rarest first; once the words left could
        add less to an unseen document than the k-th best score so far, the
        common words' long lists are only consulted for the documents still in
        the running. Results equal a full scoring (tested)."""
        ordered = sorted(terms, key=lambda t: -t.idf)
        acc: dict[int, float] = defaultdict(float)
        remaining = sum(t.bound for t in ordered)
        norm = self._norm
        done = 0
        for term in ordered:
            if len(acc) >= k and heapq.nlargest(k, acc.values())[-1] > remaining:
                break
            boost = term.idf * (K1 + 1)
            for slot, tf in zip(term.slots, term.counts, strict=True):
                acc[slot] += boost * tf / (tf + norm[slot])
            remaining -= term.bound
            done += 1
        rest = ordered[done:]
        if rest:
            threshold = heapq.nlargest(k, acc.values())[-1]
            acc = defaultdict(float, {s: v for s, v in acc.items() if v + remaining >= threshold})
            for slot in acc:
                acc[slot] += sum(self.contribution(t, slot) for t in rest)
        top = heapq.nsmallest(k, acc, key=lambda s: order(s, acc[s]))
        return {slot: acc[slot] for slot in top}

    def resolve(self, target: str, source_layer: str) -> list[int]:
        """The documents `[[target]]` reaches from a note of `source_layer`."""
        return [slot for layer in reachable_layers(Layer(source_layer))
                for slot in self._by_key.get((layer.value, target), ())]

    def inbound(self) -> dict[int, list[int]]:
        if self._inbound is None:
            links: dict[int, list[int]] = defaultdict(list)
            for slot, d in enumerate(self.docs):
                if d is None or d.problem:
                    continue
                for target in d.links:
                    for reached in self.resolve(target, d.layer):
                        if reached != slot and slot not in links[reached]:
                            links[reached].append(slot)
            self._inbound = links
        return self._inbound


@dataclass(frozen=True)
class Hit:
    doc: Doc
    score: float
    neighbours: tuple[Doc, ...]
    more_neighbours: int  # linked notes not shown


@dataclass(frozen=True)
class Answer:
    results: tuple[Hit, ...]
    left_out: int  # matched notes beyond the eight returned


def phrasings(question: str, also: Iterable[str] = ()) -> list[str]:
    return [q for q in (question, *also) if q.strip()]


class Semantic(Protocol):
    """Cosine similarity of every document to a question (see omh_git_memory.semantic)."""

    def similarities(self, phrasings: Sequence[str]) -> Any:
        """An array indexed by slot (numpy's, so typed loosely here)."""


def recall(searcher: Searcher, question: str, also: Iterable[str] = (),
           semantic: Semantic | None = None, zero_is_evidence: bool = False) -> Answer:
    """The best notes for `question`, each keeping its best score over the phrasings.

    With `semantic`, the lexical and the embedding rankings each nominate their
    best eight, and the nominees are ordered by the mean of the evidence each has:
    both scores rescaled to 0–1 over the nominees. A note that shares no word with
    the question has no lexical evidence (not evidence against it), so it is
    ordered by its similarity alone; `zero_is_evidence` instead averages in the
    zero, as the benchmark compares (see docs/recall.md)."""
    inbound = searcher.inbound()

    def order(slot: int, score: float) -> tuple[float, int, int, str]:
        d = searcher.docs[slot]
        assert d is not None
        return (-score, -d.recorded, -len(inbound.get(slot, ())), d.key)

    per_phrasing = [searcher.terms(p) for p in phrasings(question, also)]
    # A note in the final eight is among the best eight of the phrasing that gave
    # its best score, so the candidates are the union of each phrasing's best.
    candidates: set[int] = set()
    matched: set[int] = set()
    for terms in per_phrasing:
        candidates.update(searcher.best(terms, MAX_RESULTS, order))
        for term in terms:
            matched.update(term.slots)
    def lexical(slot: int) -> float:
        return max(sum(searcher.contribution(t, slot) for t in terms) for terms in per_phrasing)

    best = {slot: lexical(slot) for slot in candidates}
    if semantic is not None:
        best, nominated = _fuse(searcher, semantic, phrasings(question, also), best, lexical,
                                zero_is_evidence)
        matched |= nominated
    top = heapq.nsmallest(MAX_RESULTS, (s for s in best if best[s] > 0),
                          key=lambda s: order(s, best[s]))
    hits = tuple(_hit(searcher, slot, best[slot], inbound) for slot in top)
    return Answer(hits, max(0, len(matched) - len(top)))


def _fuse(searcher: Searcher, semantic: Semantic, asked: Sequence[str],
          lexical_best: dict[int, float], lexical: Callable[[int], float],
          zero_is_evidence: bool) -> tuple[dict[int, float], set[int]]:
    """The nominees of both rankings, scored by the mean of their rescaled scores."""
    sims = semantic.similarities(asked)
    usable = [s for s, d in enumerate(searcher.docs) if d is not None and not d.problem]
    by_sim = heapq.nlargest(MAX_RESULTS, usable, key=lambda s: sims[s])
    by_lex = heapq.nlargest(MAX_RESULTS, lexical_best, key=lambda s: lexical_best[s])
    nominees = set(by_lex) | set(by_sim)
    lex = {s: lexical_best[s] if s in lexical_best else lexical(s) for s in nominees}
    top_lex = max(lex.values(), default=0.0) or 1.0
    low, high = min(sims[s] for s in nominees), max(sims[s] for s in nominees)
    spread = (high - low) or 1.0
    fused = {
        s: float((lex[s] / top_lex + (sims[s] - low) / spread) / 2
                 if lex[s] > 0 or zero_is_evidence else (sims[s] - low) / spread)
        for s in nominees
    }
    return {s: v for s, v in fused.items() if v > 0}, set(by_sim)


def _hit(searcher: Searcher, slot: int, score: float, inbound: dict[int, list[int]]) -> Hit:
    doc = searcher.docs[slot]
    assert doc is not None
    near: dict[int, None] = {}
    for target in doc.links:
        for reached in searcher.resolve(target, doc.layer):
            if reached != slot:
                near.setdefault(reached, None)
    for linker in inbound.get(slot, ()):
        near.setdefault(linker, None)
    shown = [d for d in (searcher.docs[s] for s in list(near)[:MAX_NEIGHBOURS]) if d]
    return Hit(doc, score, tuple(shown), max(0, len(near) - MAX_NEIGHBOURS))


def shown_docs(answer: Answer) -> list[Doc]:
    """Every note the answer shows: results and their neighbours."""
    return [d for h in answer.results for d in (h.doc, *h.neighbours)]


def date_of(doc: Doc) -> str:
    return dt.date.fromordinal(doc.recorded).isoformat() if doc.recorded else "undated"


def render_tree(answer: Answer, stale: Mapping[tuple[str, str], str] | None = None) -> str:
    """The seed's tree. Every line that names a note carries its layer and date, and
    `· stale` when the note's trigger has fired (`stale`: (layer, key) → why)."""
    fired = stale or {}
    blocks: list[list[tuple[str, Doc | None]]] = []
    for hit in answer.results:
        block: list[tuple[str, Doc | None]] = [(hit.doc.key, hit.doc)]
        for index, doc in enumerate(hit.neighbours):
            last = index == len(hit.neighbours) - 1 and not hit.more_neighbours
            block.append((("└─ " if last else "├─ ") + doc.key, doc))
        if hit.more_neighbours:
            block.append((f"└─ … and {hit.more_neighbours} more linked notes "
                          f"(omh memory show {hit.doc.key})", None))
        blocks.append(block)
    width = max((len(label) for block in blocks for label, doc in block if doc), default=0)
    lines = [
        f"{label.ljust(width)}  {doc.layer} · {date_of(doc)}"
        + (" · stale" if (doc.layer, doc.key) in fired else "") if doc else label
        for block in blocks
        for label, doc in block
    ]
    if any((d.layer, d.key) in fired for block in blocks for _, d in block if d):
        lines.append("stale: a note's invalidated_by has fired; `omh memory stale` says why")
    if not answer.results:
        lines.append("no note matched; try other words, or add --also with another phrasing")
    elif answer.left_out:
        lines.append(f"{answer.left_out} more matched notes were left out; "
                     "ask more precisely to see them")
    return "\n".join(lines) + "\n"


def area_label(question: str) -> str | None:
    """The area label in front of a question (`docs: …` → `docs`), if any."""
    match = _AREA.match(question)
    return match.group().strip().rstrip(":").rstrip("!") if match else None
