"""Near-duplicates: two notes that say the same thing in different words.

Agents re-record the same surprise in new words, and a store that fills with
near-copies is how recall degrades. What is compared is what a note *says*: its
title and its sections' text, lowercased words only — never the frontmatter,
never the `## Name` headings every note of a type repeats, never `[[links]]`
(`## Related` is the graph, not the note's words). Stubs and the repository topic
take no part: their text is derived from documents, so there is no note to update
(docs/lint.md gives the measurement behind this).

Finding pairs never compares every pair (minutes at 10,000 notes): each note's
rarest words are its signature, notes are paired only when their signatures share
MIN_SHARED words, and each such pair is scored with rapidfuzz with a cutoff. The
score counts the word pairs (each word with the next) the two notes share, not their
characters: two long pages on different things share most common words and, sorted,
most letters, but few word pairs. The measure and threshold were calibrated by
`bench/near_duplicate.py` (docs/lint.md, "Calibration").
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from omh_git_memory.model.errors import OmhError
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note

if TYPE_CHECKING:
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.document import Doc

# Calibrated by bench/near_duplicate.py (docs/lint.md, "NearDuplicate"): the lowest
# similarity (0-100, the Dice coefficient of the two notes' word pairs) reported.
THRESHOLD: Final = 50.0
# A note's signature: its this many rarest words that another note has too.
SIGNATURE: Final = 8
# Notes are scored only when their signatures share this many words: a near-copy
# shares nearly all of them, two notes on one topic a word or two.
MIN_SHARED: Final = 3
# What no note says enough to be compared: fewer words than this are a title only.
MIN_WORDS: Final = 6

# The words compared at most, from the start: rapidfuzz's ratio may cost the product
# of the two lengths, and two notes of a megabyte each (a pasted log) would hold lint
# for minutes. A page of prose is a few hundred words.
MAX_WORDS: Final = 2000

_WORD = re.compile(r"[^\W_]+")
_LINK = re.compile(r"\[\[[^\[\]\n]*\]\]")
_HEADING = re.compile(r"^## (.*)$", re.MULTILINE)
_NOT_COMPARED: Final = frozenset({"Related"})  # links, which are edges, not words


def said(note: Note) -> str | None:
    """What `note` says, as the folded words of its title and its sections' text
    joined by single spaces (the first MAX_WORDS); None for a derived note (a stub,
    the repository topic), which takes no part."""
    from omh_git_memory.recall.stubs import TOPIC_SOURCE

    if note.type == "stub" or note.source == TOPIC_SOURCE:
        return None
    # [text before the first heading, name, text, name, text, …]; `# Title` holds
    # no word character but the title's, so it needs no special case.
    parts = _HEADING.split(note.body)
    kept = [parts[0], *(text for name, text in zip(parts[1::2], parts[2::2], strict=True)
                        if name.strip() not in _NOT_COMPARED)]
    return " ".join(first_words(_LINK.sub(" ", "\n".join(kept)), MAX_WORDS))


_CHUNK: Final = 1 << 14  # characters folded at a time while the first words are sought


def first_words(text: str, limit: int) -> list[str]:
    """The first `limit` folded words of `text`, folding only as much of it as they
    need: a note of a megabyte is not folded whole for its first 2,000 words.
    Pieces end at white space, so no word is split."""
    found: list[str] = []
    start = 0
    while start < len(text) and len(found) < limit:
        end = start + _CHUNK
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        found += _WORD.findall(folded(text[start:end]))
        start = end
    return found[:limit]


def folded(text: str) -> str:
    """`text` as keys.slug folds it: invisible characters dropped, then NFKC and case
    folded, so a copy in decomposed accents, full-width forms or with zero-width
    spaces in its words says the same words."""
    import unicodedata

    from omh_git_memory.model.keys import is_ignorable

    if text.isascii():
        return text.lower()
    visible = "".join(c for c in text if not is_ignorable(c))
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())


@dataclass(frozen=True)
class Compared:
    """One note, ready to compare: who it is and what it says."""

    layer: Layer
    key: str
    recorded: dt.date
    location: str
    text: str
    type: str = "surprise"  # the note's type: what can change it (update, or edit)

    @functools.cached_property
    def word_pairs(self) -> list[str]:
        """The distinct pairs of neighbouring words in `text`, sorted: what the
        similarity compares (made only for the few notes that are scored)."""
        words = self.text.split(" ")
        return sorted({f"{a} {b}" for a, b in itertools.pairwise(words)})

    @property
    def name(self) -> str:
        return f"{self.layer.value}/{self.key}"


def fold_command(original: Compared, with_layer: bool = False) -> str:
    """The command that folds more text into `original`, and what it does: `update`
    for a surprise; `edit` for a topic, whose sections `update` has no option for.
    `with_layer` names its layer too (in lint's findings either note may be in either)."""
    from omh_git_memory.model.keys import shell_word

    key = shell_word(original.key)
    target = f"{key} --layer {original.layer.value}" if with_layer else key
    if original.type == "surprise":
        return f"`omh memory update {target}` changes the sections you give"
    return f"`omh memory edit {target}` opens it in your editor"


def compared(layer: Layer, location: str, note: Note) -> Compared | None:
    """`note` ready to compare, or None when it takes no part (derived, or too short)."""
    text = said(note)
    if text is None or text.count(" ") + 1 < MIN_WORDS:
        return None
    return Compared(layer, note.key.value, note.recorded, location, text, note.type)


@dataclass(frozen=True)
class Pair:
    """`note` repeats `original`: the finding is `note`'s (the local one of a local
    and a team note, else the later one), so a team note is never reported against
    a note its readers do not have (as invariant: team notes link only to team
    notes)."""

    note: Compared
    original: Compared
    similarity: float  # 0-100


def reported_on(a: Compared, b: Compared, similarity: float) -> Pair:
    """The pair of `a` and `b` with the right one holding the finding."""
    if a.layer is not b.layer:
        local, team = (a, b) if a.layer is Layer.LOCAL else (b, a)
        return Pair(local, team, similarity)
    later, earlier = sorted((a, b), key=lambda c: (c.recorded, c.key, c.location),
                            reverse=True)
    return Pair(later, earlier, similarity)


def similarity(a: Compared, b: Compared, cutoff: float = 0.0) -> float:
    """How alike two notes are (0-100): the Dice coefficient of their word pairs,
    200 × shared / (pairs of one + pairs of the other), which is rapidfuzz's ratio
    over the two sorted lists of distinct pairs (their longest common subsequence is
    what they share). Reordered sentences cost a pair at each seam, a typo or a
    changed word two pairs, an added sentence its own; a long page shares few word
    pairs with another on a different subject however many words it shares. 0 below
    `cutoff`."""
    from omh_git_memory.model.similar import ratio

    x, y = a.word_pairs, b.word_pairs
    if 200.0 * min(len(x), len(y)) < cutoff * (len(x) + len(y)):
        return 0.0  # the lengths alone rule it out
    return ratio(x, y, cutoff)


def pairs(notes: Sequence[Compared], threshold: float = THRESHOLD,
          subject: Compared | None = None) -> list[Pair]:
    """The near-duplicate pairs among `notes` scoring `threshold` or more, most alike
    first; with `subject`, only the pairs of `subject` and one of `notes` (what
    `remember` asks before a write). Same-key notes of one layer are DuplicateKey's,
    except a subject's: whether the note at its key stays (`--if-exists suffix`) or
    goes (`override`) is the writer's to judge."""
    if subject is not None:
        every = [*notes, subject]
        candidates: Iterable[tuple[int, int]] = ((i, len(notes)) for i in range(len(notes)))
    else:  # earliest first, so a crowded word blocks the originals (see BLOCK)
        every = sorted(notes, key=lambda c: (c.recorded, c.key, c.location))
        candidates = _candidates(every)
    found: list[Pair] = []
    for i, j in candidates:
        a, b = every[i], every[j]
        if subject is None and a.layer is b.layer and a.key == b.key:
            continue
        score = similarity(a, b, threshold)
        if score >= threshold:  # a subject is the note asked about, whatever its layer
            found.append(Pair(b, a, score) if subject is not None else reported_on(a, b, score))
    found.sort(key=lambda p: (-p.similarity, p.note.name, p.original.name))
    return found


def one_per_note(found: Iterable[Pair]) -> list[Pair]:
    """Each reported note's most alike pair only (`found` most alike first, as `pairs`
    returns it): ten copies of one note are nine findings, not forty-five."""
    seen: set[tuple[Layer, str]] = set()
    kept = []
    for pair in found:
        if (pair.note.layer, pair.note.location) not in seen:
            seen.add((pair.note.layer, pair.note.location))
            kept.append(pair)
    return kept


# A word in more notes' signatures than this blocks only the earliest BLOCK of them,
# and each note is scored against the CANDIDATES notes sharing the most of its
# signature: 2,000 copies of one note would otherwise be two million pairs scored
# (minutes of lint and half a gigabyte of findings).
BLOCK: Final = 32
CANDIDATES: Final = 8


def _candidates(every: Sequence[Compared]) -> Iterable[tuple[int, int]]:
    """Index pairs (i < j) whose signatures (each note's SIGNATURE rarest words another
    note has too) share MIN_SHARED words, at most CANDIDATES for each note."""
    vocab = [frozenset(c.text.split(" ")) for c in every]
    df: Counter[str] = Counter()
    for words in vocab:
        df.update(words)
    holders: dict[str, list[int]] = defaultdict(list)
    signatures: list[list[str]] = []
    for i, words in enumerate(vocab):
        # (df, word) pairs, rarest first; words no other note has cannot pair it (a
        # typo is one), so the signature starts after them. (map and zip: 10,000
        # notes of a hundred words each.)
        ranked = sorted(zip(map(df.__getitem__, words), words, strict=True))
        start = bisect.bisect_right(ranked, (1, "\U0010ffff"))
        signature = [w for _, w in ranked[start:start + SIGNATURE]]
        signatures.append(signature)
        for w in signature:
            if len(held := holders[w]) < BLOCK:
                held.append(i)
    done: set[tuple[int, int]] = set()
    for i, signature in enumerate(signatures):
        shared = Counter[int]()
        for w in signature:
            shared.update(holders[w])
        del shared[i]
        best = sorted((-n, j) for j, n in shared.items() if n >= MIN_SHARED)[:CANDIDATES]
        for _n, j in best:
            pair = (i, j) if i < j else (j, i)
            if pair not in done:
                done.add(pair)
                yield pair


# The repeats a `remember` answer names, most alike first; the rest it counts (`--json`
# lists them all): 2,000 copies of a note must not be 2,000 lines of warning.
NAMED: Final = 3


def more_than_named(repeats: Sequence[Pair]) -> str:
    """`, and 3 more notes look like it` for the repeats a remember answer leaves out."""
    rest = len(repeats) - NAMED
    if rest <= 0:
        return ""
    return f"and {rest} more {'note looks' if rest == 1 else 'notes look'} like it"


# The most team notes a new note is read against: those sharing the most of its
# rarest words in the recall index (a near-copy shares nearly all of them).
TEAM_CANDIDATES: Final = 32


class TeamNotes:
    """The team notes of `searcher` that `repeated` may compare a note against (team
    files only: stubs and the topic take no part), each read with `read` and made
    ready to compare once, however many notes are asked about (a promote of many)."""

    def __init__(self, searcher: Searcher, read: Callable[[Doc], Note | None]) -> None:
        team_slots = len(searcher.snapshot.docs)
        self.written = [slot < team_slots and doc is not None and not doc.problem
                        and doc.is_team_file for slot, doc in enumerate(searcher.docs)]
        self._docs = searcher.docs
        self._read = read
        self._items: dict[int, Compared | None] = {}

    def item(self, slot: int) -> Compared | None:
        """The team note at `slot`, ready to compare; None when it takes no part or
        cannot be read (advice only: a blob it cannot read never stops the write)."""
        if slot not in self._items:
            doc = self._docs[slot]
            found = None
            try:
                team_note = self._read(doc) if doc is not None else None
            except OmhError:
                team_note = None
            if doc is not None and team_note is not None:
                found = compared(Layer.TEAM, doc.content.path, team_note)
            self._items[slot] = found
        return self._items[slot]


def repeated(note: Note, searcher: Searcher,
             read: Callable[[Doc], Note | None], local: bool = True,
             team: TeamNotes | None = None) -> list[Pair]:
    """The notes of the store `searcher` sees that `note` (about to be written to the
    local layer) says again, most alike first; each pair's `note` is the new one.

    Every local note is compared (unless not `local`); team notes are chosen by the
    recall index's postings of the new note's SIGNATURE rarest words and read with
    `read` (or taken from `team`, for a caller asking of many notes)."""
    from omh_git_memory.recall.tokens import words

    subject = compared(Layer.LOCAL, "", note)
    if subject is None:
        return []
    others = [c for doc, mine in searcher.local_notes if local
              if (c := compared(Layer.LOCAL, doc.location, mine)) is not None]
    notes = TeamNotes(searcher, read) if team is None else team
    written = notes.written

    rarity = []
    for term in set(words(subject.text)):
        slots, _counts = searcher.postings(term)
        held = [s for s in slots if written[s]]
        if held:
            rarity.append((len(held), term, held))
    rarity.sort()
    shared: Counter[int] = Counter()
    for _df, _term, held in rarity[:SIGNATURE]:
        shared.update(held)
    for slot, _n in shared.most_common(TEAM_CANDIDATES):
        if (item := notes.item(slot)) is not None:
            others.append(item)
    return pairs(others, subject=subject)


def team_repeats(searcher: Searcher, keys: Iterable[str],
                 read: Callable[[Doc], Note | None],
                 together: bool = False) -> dict[str, list[Pair]]:
    """For each local note of `keys` (about to be promoted), the team notes it says
    again, most alike first; keys with none, or no local note, are left out. With
    `together` (all of `keys` are promoted at once), also the pairs among them, each
    on the note `lint` would report once both are team notes. The team note at a
    note's own key is no repeat: it is the note itself, committed by a promote cut
    short (which promote finishes), or one promote refuses to overwrite; naming it
    would send a person to `rm` the only shared copy."""
    from omh_git_memory.stores.team import team_path

    wanted = set(keys)
    chosen = [note for _doc, note in searcher.local_notes if note.key.value in wanted]
    team = TeamNotes(searcher, read)
    found: dict[str, list[Pair]] = {}
    for note in chosen:
        if same := [p for p in repeated(note, searcher, read, False, team)
                    if p.original.key != note.key.value]:
            found[note.key.value] = same
    if together:
        shared = [c for note in chosen
                  if (c := compared(Layer.TEAM, team_path(note.key), note)) is not None]
        for pair in pairs(shared):
            found.setdefault(pair.note.key, []).append(pair)
        for repeats in found.values():
            repeats.sort(key=lambda p: (-p.similarity, p.original.name))
    return found
