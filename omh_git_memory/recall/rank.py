"""Recall: rank the notes a question matches, and return each with its neighbours.

Ranking is Okapi BM25 (k1 = 1.2, b = 0.75, the published defaults) over stemmed,
identifier-aware words (see :mod:`omh_git_memory.recall.tokens`): a word's weight is its
rarity in this store, the words of a note's key are counted a second time, and
ties break on the more recent note, then on the one more notes link to. Only
notes over the relevance floor are returned: at least FLOOR of the best score,
holding at least MIN_SHARE of the weight of the question's content words
(function words such as `the` or `why` score at half weight but cannot make a
match alone). At
most eight are returned, each with its one-hop neighbourhood (best match first, a
hub named once, LINE_BUDGET notes in all), and the answer says how many more
passed the floor. Every line of the rendered answer carries the note's layer and
date (invariant: every answer shows its layer and date), then its title and where
to read it in full.
"""

from __future__ import annotations

import bisect
import datetime as dt
import heapq
import math
import operator
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, Final, Protocol

from omh_git_memory.model.config import DEFAULT_REPO_NAME
from omh_git_memory.model.keys import shell_word
from omh_git_memory.model.layers import Layer, reachable_layers
from omh_git_memory.model.note import Note
from omh_git_memory.model.plural import agree, count
from omh_git_memory.recall.index import Doc, Snapshot
from omh_git_memory.recall.tokens import is_function_word, without_links, words

K1: Final = 1.2
B: Final = 0.75
MAX_RESULTS: Final = 8  # rule: recall names at most eight matched notes
MAX_NEIGHBOURS: Final = MAX_RESULTS  # the same budget for one note's neighbourhood
LINE_BUDGET: Final = 24  # notes named in one answer: results plus neighbours
FLOOR: float = 0.35  # a note is returned only when it scores this share of the best
MIN_SHARE: float = 0.1  # ... and holds words making up this share of the question's weight
AREA_WEIGHT: float = 1.0  # a word only in the leading area label counts this much
FUNCTION_WEIGHT: float = 0.5  # a function word (`the`, `how`, `i`) counts this much
DENSE: Final = 4  # a word in at least 1/DENSE of the documents is added as a whole column
COLUMN_CACHE: Final = 1 << 22  # numbers (8 bytes each) of columns a searcher keeps

# `docs: …`, `fix(git): …`, `ws: …` — an area label in front of the question.
_AREA = re.compile(r"^\s*[\w./-]+(?:\([\w./ -]+\))?!?:\s+(?=\S)")


# How results are ordered: (slot, score) -> a key, smallest first.
Order = Callable[[int, float], tuple[float, int, int, str]]


@dataclass(frozen=True)
class _Term:
    slots: Sequence[int]  # ascending
    counts: Sequence[int]
    idf: float  # the word's rarity, times its weight in the question
    content: bool = True  # not a function word (`the`, `does`, `why`)
    word: str = ""  # the stemmed word itself (keys the searcher's cache of dense columns)


class Scan:
    """One phrasing's exact scores over every document slot (0.0 where no word of
    it occurs), and the weight of the content words each document holds (what
    the relevance floor's share counts). Both are summed rarest word first."""

    def __init__(self, scores: list[float], held: list[float], terms: Sequence[_Term]) -> None:
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
        self._columns: dict[tuple[str, float], tuple[list[float], list[float]]] = {}
        self._column_size = 0

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
                found.append(_Term(slots, counts, weight * idf, content, term))
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

    def share(self, terms: Sequence[_Term], slot: int, total: float) -> float:
        """The part of the question's content weight that the words `slot` holds make up."""
        held = 0.0
        for term in terms:
            if not term.content:
                continue
            at = bisect.bisect_left(term.slots, slot)
            if at < len(term.slots) and term.slots[at] == slot:
                held += term.idf
        return held / total if total > 0 else 0.0

    def contribution(self, term: _Term, slot: int) -> float:
        """One word's BM25 share of one document's score (0 when absent)."""
        at = bisect.bisect_left(term.slots, slot)
        if at == len(term.slots) or term.slots[at] != slot:
            return 0.0
        tf = term.counts[at]
        return term.idf * (K1 + 1) * tf / (tf + self._norm[slot])

    def scan(self, terms: Sequence[_Term]) -> Scan:
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

    def _column(self, term: _Term) -> tuple[list[float], list[float]]:
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


def phrasings(question: str, also: Iterable[str] = ()) -> list[str]:
    return [q for q in (question, *also) if q.strip()]


def question_words(question: str) -> dict[str, float]:
    """The question's distinct words and their weights: 1, or AREA_WEIGHT for a word
    that is only in the leading area label (`fix(zstream): …`)."""
    label = _AREA.match(question)
    head = label.group() if label else ""
    weights = dict.fromkeys(words(question[len(head):]), 1.0)
    for term in words(head):
        weights.setdefault(term, AREA_WEIGHT)
    return weights


class Semantic(Protocol):
    """Cosine similarity of every document to a question (see omh_git_memory.recall.semantic)."""

    def similarities(self, phrasings: Sequence[str]) -> Any:
        """An array indexed by slot (numpy's, so typed loosely here)."""


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
        scores, nominated = _fuse(searcher, semantic, asked, best, lexical, zero_is_evidence)
        passed |= {s for s in scores if s in nominated}
    kept = [s for s in scores if s in passed]
    top = heapq.nsmallest(MAX_RESULTS, kept, key=lambda s: order(s, scores[s]))
    hits = _neighbourhoods(searcher, top, scores, inbound, lexical)
    return Answer(hits, max(0, len(passed) - len(top)), tuple(asked))


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


def _neighbourhoods(searcher: Searcher, top: Sequence[int], best: Mapping[int, float],
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


def shown_docs(answer: Answer) -> list[Doc]:
    """Every note the answer shows: results and their neighbours."""
    return [d for h in answer.results for d in (h.doc, *h.neighbours)]


def date_of(doc: Doc) -> str:
    return dt.date.fromordinal(doc.recorded).isoformat() if doc.recorded else "undated"


TITLE_WIDTH: Final = 60  # a title longer than this is cut, with `…`
EXCERPTS: Final = 3  # results the MCP answer quotes from
EXCERPT_BUDGET: Final = 1200  # bytes (UTF-8) of the whole excerpt block, EXCERPT_EACH a result
EXCERPT_EACH: Final = EXCERPT_BUDGET // EXCERPTS
_INDENT: Final = "  "


def read_at(doc: Doc) -> str:
    """Where the note can be read in full: the team file (a repo path), the local
    file (an absolute path), the document a stub points at; the repository topic is
    derived from the tree and has no file."""
    if doc.is_stub:
        return doc.location
    if doc.is_topic:
        return f"derived from the repository (omh memory show {shell_word(doc.key)})"
    if doc.layer == Layer.TEAM.value and ":" in doc.location:
        return doc.location.split(":", 1)[1]  # `<commit>:.omh/notes/<key>.md`
    return doc.location


def what_it_is(doc: Doc) -> str:
    """The note's title, cut to TITLE_WIDTH; for the topic, that it is the repository's."""
    title = " ".join(doc.title.split()) or doc.key
    if doc.is_topic:  # unnamed ([repo] name unset): no "topic of repo"
        title = ("the repository topic" if doc.key == DEFAULT_REPO_NAME
                 else f"the repository topic of {title}")
    return title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1].rstrip() + "…"


def render_tree(answer: Answer, stale: Mapping[tuple[str, str], str] | None = None,
                also: str = "--also") -> str:
    """Recall's answer as a tree. Every line that names a note carries its layer and date, and
    `· stale` when the note's trigger has fired (`stale`: (layer, key) → why), then
    what the note is (its title) and where to read it in full. `also` is how the
    asker adds a phrasing (`--also` on the command line, `also_phrased_as` over MCP)."""
    fired = stale or {}
    blocks: list[list[tuple[str, Doc | None]]] = []
    for hit in answer.results:
        block: list[tuple[str, Doc | None]] = [(hit.doc.key, hit.doc)]
        for index, doc in enumerate(hit.neighbours):
            last = index == len(hit.neighbours) - 1 and not hit.more_neighbours
            block.append((("└─ " if last else "├─ ") + doc.key, doc))
        if hit.more_neighbours:
            block.append((f"└─ … and {count(hit.more_neighbours, 'more linked note')} "
                          f"(omh memory show {shell_word(hit.doc.key)})", None))
        blocks.append(block)
    named = [(label, doc) for block in blocks for label, doc in block if doc]
    width = max((len(label) for label, _ in named), default=0)
    metas = {id(doc): f"{doc.layer} · {date_of(doc)}"
             + (" · stale" if (doc.layer, doc.key) in fired else "") for _, doc in named}
    meta_width = max((len(m) for m in metas.values()), default=0)
    lines = [
        f"{label.ljust(width)}  {metas[id(doc)].ljust(meta_width)}  "
        f"{what_it_is(doc)} — {read_at(doc)}" if doc else label
        for block in blocks
        for label, doc in block
    ]
    if any((d.layer, d.key) in fired for _, d in named):
        lines.append("stale: a note's invalidated_by has fired; `omh memory stale` says why")
    if not answer.results:
        lines.append(f"no note matched well enough; try other words, or add {also} "
                     "with another phrasing")
    elif answer.left_out:
        lines.append(f"{count(answer.left_out, 'more note')} matched well enough but "
                     f"{agree(answer.left_out, 'was', 'were')} left out; ask more precisely "
                     f"to see {agree(answer.left_out, 'it', 'them')}")
    return "\n".join(lines) + "\n"


def excerpt(doc: Doc, note: Note, answer: Answer, limit: int = EXCERPT_EACH) -> list[str]:
    """A few lines of what `note` says, so that an agent rarely needs to open it:
    a surprise's Observed and the first line of its Evidence; a stub's document and
    the headings that matched the question; otherwise the first lines of its text.
    At most `limit` bytes (UTF-8) once each line is indented and ends in a newline."""
    asked = {t for q in answer.question for t in question_words(q) if not is_function_word(t)}
    lines: list[str] = []
    if note.type == "surprise":
        observed, evidence = note.section("Observed"), note.section("Evidence")
        if observed is not None:
            lines.append("Observed: " + " ".join(observed.text.split()))
        if evidence is not None and evidence.text.strip():
            first = next(ln for ln in evidence.text.splitlines() if ln.strip())
            lines.append("Evidence: " + first.strip())
    elif note.type == "stub":
        answers = note.section("Answers")
        headings = answers.items if answers else ()
        matched = [h for h in headings if asked & set(words(h))]
        lines.append(f"Read {note.source}")
        if matched:
            lines.append("Headings that match: " + "; ".join(matched))
        elif headings:
            lines.append("Matched in its text; headings: " + "; ".join(headings))
    elif doc.is_topic:
        facts = note.section("Facts")
        lines += [ln.lstrip("- ").strip() for ln in (facts.text if facts else "").splitlines()
                  if ln.strip()]
    else:  # a topic: its first sections by name (the title is on the result's line)
        named = [f"{sec.name}: {' '.join(without_links(sec.text).split())}"
                 for sec in note.sections
                 if sec.name not in ("Related", "Answers") and without_links(sec.text).strip()]
        body = note.body.lstrip()
        text = without_links(body.partition("\n")[2] if body.startswith("#") else body)
        lines += named[:2] or [" ".join(p.split()) for p in text.split("\n\n") if p.strip()][:2]
    return _cut(lines, limit)


def _cut(lines: Sequence[str], limit: int) -> list[str]:
    """`lines`, shortened so their UTF-8 total, indented and newline-ended, fits
    `limit`: short lines keep all they need, long ones share the rest equally."""
    overhead = len(_INDENT) + 1
    need = [len(line.encode("utf-8")) + overhead for line in lines]
    caps = [0] * len(lines)
    room, left = limit, len(lines)
    for i in sorted(range(len(lines)), key=lambda i: need[i]):
        caps[i] = min(need[i], room // left)
        room -= caps[i]
        left -= 1
    out = []
    for line, cap, wanted in zip(lines, caps, need, strict=True):
        if cap >= wanted:
            out.append(line)
        elif cap - overhead > 8:  # room for a few words and the `…`
            cut = line.encode("utf-8")[: cap - overhead - len("…".encode())]
            out.append(cut.decode("utf-8", "ignore").rstrip() + "…")
    return out


def render_excerpts(answer: Answer, notes: Mapping[tuple[str, str], Note]) -> str:
    """What the best EXCERPTS results say (`notes`: (layer, key) → the note), each
    under a line naming it with its layer and date. Each result's part, that line
    included, is at most EXCERPT_EACH bytes (UTF-8), so the whole is at most
    EXCERPT_BUDGET."""
    out = ""
    for hit in answer.results[:EXCERPTS]:
        note = notes.get((hit.doc.layer, hit.doc.key))
        if note is None:
            continue
        head = f"{hit.doc.key}  {hit.doc.layer} · {date_of(hit.doc)}\n"
        quoted = excerpt(hit.doc, note, answer, EXCERPT_EACH - len(head.encode("utf-8")))
        if quoted:
            out += head + "".join(f"{_INDENT}{line}\n" for line in quoted)
    return out


def area_label(question: str) -> str | None:
    """The area label in front of a question (`docs: …` → `docs`), if any."""
    match = _AREA.match(question)
    return match.group().strip().rstrip(":").rstrip("!") if match else None
