"""BM25 scoring: a question's words against the team snapshot and the local overlay.

Ranking is Okapi BM25 (k1 = 1.2, b = 0.75, the published defaults) over stemmed,
identifier-aware words (see :mod:`omh_git_memory.recall.tokens`): a word's weight is its
rarity in this store, the words of a note's key are counted a second time, a
function word (`the`, `why`) counts at FUNCTION_WEIGHT and a word only in the
leading area label at AREA_WEIGHT. One scan scores every document at once, a
word many documents hold added as a whole column kept between questions. The
searcher also resolves the links between its documents.
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Final

from omh_git_memory.model.layers import Layer, reachable_layers
from omh_git_memory.model.note import Note
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.local_notes import LocalLayer
from omh_git_memory.recall.snapshot import Snapshot
from omh_git_memory.recall.tokens import is_function_word, words

K1: Final = 1.2
B: Final = 0.75
AREA_WEIGHT: float = 1.0  # a word only in the leading area label counts this much
FUNCTION_WEIGHT: float = 0.5  # a function word (`the`, `how`, `i`) counts this much
DENSE: Final = 4  # a word in at least 1/DENSE of the documents is added as a whole column
COLUMN_CACHE: Final = 1 << 22  # numbers (8 bytes each) of columns a searcher keeps


# `docs: …`, `fix(git): …`, `ws: …` — an area label in front of the question.
_AREA = re.compile(r"^\s*[\w./-]+(?:\([\w./ -]+\))?!?:\s+(?=\S)")


# How results are ordered: (slot, score) -> a key, smallest first.
Order = Callable[[int, float], tuple[float, int, int, str]]


@dataclass(frozen=True)
class Term:
    slots: Sequence[int]  # ascending
    counts: Sequence[int]
    idf: float  # the word's rarity, times its weight in the question
    content: bool = True  # not a function word (`the`, `does`, `why`)
    word: str = ""  # the stemmed word itself (keys the searcher's cache of dense columns)


class Scan:
    """One phrasing's exact scores over every document slot (0.0 where no word of
    it occurs), and the weight of the content words each document holds (what
    the relevance floor's share counts). Both are summed rarest word first."""

    def __init__(self, scores: list[float], held: list[float], terms: Sequence[Term]) -> None:
        self.scores = scores
        self.held = held
        self.terms = terms

    def touched(self) -> set[int]:
        """The documents holding at least one of the words."""
        return set().union(*(t.slots for t in self.terms))

    def reaching(self, threshold: float) -> Iterable[int]:
        """The documents holding a word whose score reaches `threshold`."""
        if threshold <= 0:
            return self.touched()
        return compress(range(len(self.scores)), map(operator.ge, self.scores, repeat(threshold)))

    def holding(self, need: float) -> Iterable[int]:
        """The documents whose content words weigh at least `need` (> 0)."""
        return compress(range(len(self.held)), map(operator.ge, self.held, repeat(need)))

    def best(self, k: int, order: Order) -> list[int]:
        """The `k` first documents by `order` among those holding a word. Only the
        documents scoring at least the k-th best score can be among them, and
        those are found without a Python loop over the store."""
        scores = self.scores
        top = max(scores, default=0.0)
        pool: list[int] = list(self.reaching(top / 2)) if top > 0 else []
        if len(pool) < k and top > 0:
            pool = list(compress(range(len(scores)), map(operator.gt, scores, repeat(0.0))))
        if len(pool) < k:
            pool = sorted(self.touched())
        if not pool:
            return []
        kth = heapq.nlargest(k, [scores[s] for s in pool])[-1]
        return heapq.nsmallest(k, (s for s in pool if scores[s] >= kth),
                               key=lambda s: order(s, scores[s]))


class Searcher:
    """The team snapshot plus the local overlay, ready to answer questions."""

    def __init__(self, team: Snapshot,
                 local: LocalLayer | Sequence[tuple[Doc, dict[str, int], Note]] = ()) -> None:
        self.snapshot = team
        layer = local if isinstance(local, LocalLayer) else LocalLayer.parsed(local)
        self.local_notes = layer.notes  # read when asked for (recall/local_notes.py)
        self.local_layer = layer
        self.docs: list[Doc | None] = list(team.docs)
        self._team = team.postings
        self._local = layer
        self._local_base = len(self.docs)  # the first local document's slot
        self.docs.extend(layer.docs)
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
        self._columns: dict[tuple[str, float], tuple[list[float], list[float]]] = {}
        self._column_size = 0

    def postings(self, term: str) -> tuple[Sequence[int], Sequence[int]]:
        """The slots holding `term` and its count in each (decoded once, then kept)."""
        found = self._decoded.get(term)
        if found is None:
            team = self._team.get(term)
            slots: list[int] = list(team[0]) if team else []
            counts: list[int] = list(team[1]) if team else []
            local, tfs = self._local.postings(term)
            base = self._local_base
            slots.extend(base + at for at in local)
            counts.extend(tfs)
            found = self._decoded[term] = (slots, counts)
        return found

    def terms(self, question: str) -> list[Term]:
        """The question's distinct words that occur in the store, with their weights:
        a word's rarity, at AREA_WEIGHT when it is only in the leading area label, at
        FUNCTION_WEIGHT when it is a function word (in a small store few documents say
        `I` or `how`, and such a word would otherwise outweigh what the question is
        about)."""
        found = []
        for term, weight in question_words(question).items():
            slots, counts = self.postings(term)
            if slots:
                df = len(slots)
                idf = math.log(1 + (self.count - df + 0.5) / (df + 0.5))
                content = not is_function_word(term)
                if not content:
                    weight *= FUNCTION_WEIGHT
                found.append(Term(slots, counts, weight * idf, content, term))
        return found

    def question_weight(self, question: str) -> float:
        """The weight of the question's content words (not `the`, `does`, `why`): each
        word's rarity, a word found in no note counting as the rarest (it is what the
        asker cares about, and nothing has it)."""
        total = 0.0
        for term, weight in question_words(question).items():
            if is_function_word(term):
                continue
            df = len(self.postings(term)[0])
            total += weight * math.log(1 + (self.count - df + 0.5) / (df + 0.5))
        return total

    def share(self, terms: Sequence[Term], slot: int, total: float) -> float:
        """The part of the question's content weight that the words `slot` holds make up."""
        held = 0.0
        for term in terms:
            if not term.content:
                continue
            at = bisect.bisect_left(term.slots, slot)
            if at < len(term.slots) and term.slots[at] == slot:
                held += term.idf
        return held / total if total > 0 else 0.0

    def contribution(self, term: Term, slot: int) -> float:
        """One word's BM25 share of one document's score (0 when absent)."""
        at = bisect.bisect_left(term.slots, slot)
        if at == len(term.slots) or term.slots[at] != slot:
            return 0.0
        tf = term.counts[at]
        return term.idf * (K1 + 1) * tf / (tf + self._norm[slot])

    def scan(self, terms: Sequence[Term]) -> Scan:
        """Every document's exact BM25 score for `terms`, and the weight of the
        content words it holds, summed rarest word first (see Scan).

        A word held by few documents adds its share document by document; a word
        held by at least a 1/DENSE of them adds a whole column at once (a column
        holds 0.0 where the word is absent, and adding 0.0 changes nothing, so the
        sums are the same to the last bit). Columns are kept between questions."""
        n = len(self.docs)
        scores = [0.0] * n
        held = [0.0] * n
        norm = self._norm
        for term in sorted(terms, key=lambda t: -t.idf):
            if len(term.slots) * DENSE >= n:
                column, weights = self._column(term)
                scores = list(map(operator.add, scores, column))
                if term.content:
                    held = list(map(operator.add, held, weights))
                continue
            boost = term.idf * (K1 + 1)
            if term.content:
                weight = term.idf
                for slot, tf in zip(term.slots, term.counts, strict=True):
                    scores[slot] += boost * tf / (tf + norm[slot])
                    held[slot] += weight
            else:
                for slot, tf in zip(term.slots, term.counts, strict=True):
                    scores[slot] += boost * tf / (tf + norm[slot])
        return Scan(scores, held, terms)

    def _column(self, term: Term) -> tuple[list[float], list[float]]:
        """`term`'s share of every document's score, computed as `contribution` does,
        and its weight where it is held if it is a content word (0.0 elsewhere);
        kept, within COLUMN_CACHE numbers in all."""
        cache_key = (term.word, term.idf)
        found = self._columns.get(cache_key)
        if found is None:
            n = len(self.docs)
            column = [0.0] * n
            boost = term.idf * (K1 + 1)
            norm = self._norm
            for slot, tf in zip(term.slots, term.counts, strict=True):
                column[slot] = boost * tf / (tf + norm[slot])
            weights = []
            if term.content:
                weights = [0.0] * n
                for slot in term.slots:
                    weights[slot] = term.idf
            size = len(column) + len(weights)
            if self._column_size + size > COLUMN_CACHE:
                self._columns.clear()
                self._column_size = 0
            found = self._columns[cache_key] = (column, weights)
            self._column_size += size
        return found

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


def question_words(question: str) -> dict[str, float]:
    """The question's distinct words and their weights: 1, or AREA_WEIGHT for a word
    that is only in the leading area label (`fix(zstream): …`)."""
    label = _AREA.match(question)
    head = label.group() if label else ""
    weights = dict.fromkeys(words(question[len(head):]), 1.0)
    for term in words(head):
        weights.setdefault(term, AREA_WEIGHT)
    return weights


def area_label(question: str) -> str | None:
    """The area label in front of a question (`docs: …` → `docs`), if any."""
    match = _AREA.match(question)
    return match.group().strip().rstrip(":").rstrip("!") if match else None
