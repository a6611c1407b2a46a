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

from collections.abc import Callable, Iterable, Sequence

from omh_git_memory.recall.answer import MAX_DOCUMENTS, MAX_RESULTS, Answer
from omh_git_memory.recall.bm25 import Searcher, Term
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.fusion import Semantic, fuse
from omh_git_memory.recall.names import unknown_in_every
from omh_git_memory.recall.neighbours import neighbourhoods
from omh_git_memory.recall.tokens import words

FLOOR: float = 0.35  # a note is returned only when it scores this share of the best
MIN_SHARE: float = 0.1  # ... and holds words making up this share of the question's weight
TOGETHER: float = 0.2  # ... and a document holds this share in one of its sections
ANSWERS: float = 0.3  # ... and some document returned holds this much there, or none is
WIDER = 3  # how many times MAX_RESULTS lexical candidates a check of documents draws from

# A document's places: the word sets of its sections (sections.places), or None
# when it cannot be read (it then counts as one place that holds what it holds).
Places = Callable[[Doc], Sequence[frozenset[str]] | None]


def phrasings(question: str, also: Iterable[str] = ()) -> list[str]:
    return [q for q in (question, *also) if q.strip()]


def recall(searcher: Searcher, question: str, also: Iterable[str] = (),
           semantic: Semantic | None = None, zero_is_evidence: bool = False,
           floor: float | None = None, min_share: float | None = None,
           places: Places | None = None, together: float | None = None,
           answers: float | None = None, names: bool = True) -> Answer:
    """The best notes for `question`, each keeping its best score over the phrasings.

    Only notes scoring at least FLOOR times the best score are returned or counted
    as left out (`floor` overrides it, for the benchmark).

    With `semantic`, the lexical and the embedding rankings each nominate their
    best eight, and the nominees are ordered by the mean of the evidence each has:
    both scores rescaled to 0–1 over the nominees. A note that shares no word with
    the question has no lexical evidence (not evidence against it), so it is
    ordered by its similarity alone; `zero_is_evidence` instead averages in the
    zero, as the benchmark compares (see docs/recall.md).

    With `places`, a stub (a whole document) is returned only when the question's
    words come together in one of its sections: one section, with the document's
    path and title, holds TOGETHER of the question's content weight (`together`
    overrides it). A long document holds most words somewhere; a question it
    answers has them in one place. The candidates are then drawn from WIDER times
    as many, so that a document turned away leaves room for the next. Then, too, no
    document is returned when every phrasing names a thing (`PyInstaller`) that
    nothing in the store mentions (recall/names.py; `names` False turns it off, for
    the benchmark)."""
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
    pool = MAX_RESULTS * WIDER if places is not None else MAX_RESULTS
    for scan in scans:
        candidates.update(scan.best(pool, order))

    def lexical(slot: int) -> float:
        return max((sum(searcher.contribution(t, slot) for t in terms)
                    for terms in per_phrasing), default=0.0)

    best = {slot: lexical(slot) for slot in candidates}
    enough: set[int] | None = None
    if least > 0:  # ... holding enough of the question's weight in some phrasing
        enough = set()
        for scan, total in zip(scans, totals, strict=True):
            if total > 0:
                enough.update(scan.holding(least * total))
    share_of = None if places is None else together_share(searcher, places, per_phrasing, totals)
    need = TOGETHER if together is None else together
    # The floor is a share of the best answer's score: with the section check, of
    # the best document that passes it (one turned away is no answer to measure by).
    leader = max(best.values(), default=0.0)
    if share_of is not None:
        ranked = sorted((s for s in best if best[s] > 0 and (enough is None or s in enough)),
                        key=lambda s: order(s, best[s]))
        leader = next((best[s] for s in ranked if share_of(s) >= need), leader)
    threshold = share * leader
    passed: set[int] = set()
    if best:
        for scan in scans:
            passed.update(scan.reaching(threshold))
    passed |= {s for s in best if best[s] > 0 and best[s] >= threshold}
    if enough is not None:
        passed &= enough
    scores = best
    nominated: set[int] = set()
    if semantic is not None:
        # The floor is lexical: a lexical nominee must pass it; the embedding's own
        # nominees (its best eight) are its evidence, a document among them only when
        # it is SURE-similar (otherwise it is checked as a lexical one is).
        scores, nominated = fuse(searcher, semantic, asked, best, lexical, zero_is_evidence)
        passed |= {s for s in scores if s in nominated}
    kept = sorted((s for s in scores if s in passed), key=lambda s: order(s, scores[s]))
    if share_of is None:
        top = kept[:MAX_RESULTS]
        hits = neighbourhoods(searcher, top, scores, inbound, lexical)
        return Answer(hits, max(0, len(passed) - len(top)), tuple(asked))
    unknown = unknown_in_every(asked, lambda word: bool(searcher.postings(word)[0])) \
        if names else ()
    top, more = _checked(searcher, kept, nominated, share_of, need,
                         ANSWERS if answers is None else answers, documents=not unknown)
    # Past the candidates, only what needs no check is counted as more that matched.
    unread = sum(1 for s in passed - set(scores) if not _is_document(searcher, s))
    hits = neighbourhoods(searcher, top, scores, inbound, lexical)
    return Answer(hits, more + unread, tuple(asked), unknown)


def _is_document(searcher: Searcher, slot: int) -> bool:
    d = searcher.docs[slot]
    return d is not None and d.is_stub


def _checked(searcher: Searcher, kept: Sequence[int], nominated: set[int],
             share_of: Callable[[int], float], need: float, must: float,
             documents: bool = True) -> tuple[list[int], int]:
    """The first MAX_RESULTS of `kept` (in order) that pass the section check, no more
    than MAX_DOCUMENTS of them documents, and how many more pass it. A document (a
    stub the embedding did not nominate) passes when it holds `need` in one place;
    the documents go, all of them, when none holds `must`, or when `documents` is
    False: what remains are the notes. Every one of `kept` is read, so that the
    count of more is true."""
    passing: list[tuple[int, float | None]] = []
    for slot in kept:
        if not documents and _is_document(searcher, slot):
            continue
        if slot in nominated or not _is_document(searcher, slot):
            passing.append((slot, None))
        elif (held := share_of(slot)) >= need:
            passing.append((slot, held))
    if max((h for _, h in passing if h is not None), default=must) < must:
        passing = [(slot, h) for slot, h in passing if h is None]
    top: list[int] = []
    shown = 0  # documents among them
    for slot, _ in passing:
        if len(top) == MAX_RESULTS:
            break
        if _is_document(searcher, slot):
            if shown == MAX_DOCUMENTS:
                continue  # counted with the more that matched
            shown += 1
        top.append(slot)
    return top, len(passing) - len(top)


def together_share(searcher: Searcher, places: Places, per_phrasing: Sequence[Sequence[Term]],
                   totals: Sequence[float]) -> Callable[[int], float]:
    """The most of some phrasing's content weight that the document at a slot holds
    in one place: one section's words with its path's and title's. A written note is
    one place, and passed the floor's share already (1.0)."""
    known: dict[int, float] = {}

    def share(slot: int) -> float:
        if slot not in known:
            known[slot] = measure(slot)
        return known[slot]

    def measure(slot: int) -> float:
        d = searcher.docs[slot]
        assert d is not None
        if not d.is_stub:
            return 1.0
        found = places(d)
        if found is None:
            return 1.0
        named = frozenset(words(d.location.replace("/", " ")) + words(d.title))
        most = 0.0
        for terms, total in zip(per_phrasing, totals, strict=True):
            content = [t for t in terms if t.content]
            if total > 0:
                most = max(most, max(sum(t.idf for t in content
                                         if t.word in place or t.word in named)
                                     for place in (found or (frozenset(),))) / total)
        return most
    return share
