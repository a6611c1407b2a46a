"""The section of a document that answers a question, and the lines to quote from it.

A stub points at a whole document, and a document of a thousand lines is no answer
on its own: recall names the section whose words best match the question (its
heading and its lines) and, over MCP, quotes its matching lines as they are written,
line breaks kept, so that two commands stay two commands.

A section is an ATX heading (`#` to `######`, outside code fences) and the lines up
to the next heading of any level; the lines before the first heading are a section
without a heading. Setext headings (a line underlined with `===`) are not split on.
Only the part of a document recall indexes is read (`indexed_part`), so a section
never names a line the index did not see, except the headings after it, which the
stub's Answers hold: each is a section of its heading line alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from omh_git_memory.recall.document import indexed_part
from omh_git_memory.recall.tokens import is_function_word, words

# An ATX heading: its `#`s, then nothing or white space and its text (a closing
# sequence is taken off by hand: a pattern for it backtracks over long white space).
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING_WEIGHT: Final = 2  # a heading's words count this many times in its section
# A section whose heading's content words are all the question's scores this much
# more (a share of it for a share of them): `## remove` before `## self remove` for
# "how do I remove a package" (docs/recall.md).
HEADING_ASKED: Final = 0.5
K1: Final = 1.2  # how fast a repeated word stops adding (BM25's k1)
B: Final = 0.75  # how much a long section is discounted (BM25's b)


@dataclass(frozen=True)
class Section:
    """Lines `start`..`end` (1-based, inclusive) of a document; `heading` is the text
    of its heading line, or None for the lines before the first heading."""

    heading: str | None
    start: int
    end: int
    level: int = field(default=0, compare=False)  # the heading's `#`s; 0 without one
    # the heading of the section this one is part of, when the document has this
    # heading more than once (`Options` under each command): what tells them apart
    within: str | None = field(default=None, compare=False)

    def describe(self) -> str:
        """`§ Heading, lines 12–30`, as a result line names it; `§ add › Options, …`
        for a heading the document repeats."""
        where = f"line {self.start}" if self.start == self.end else \
            f"lines {self.start}–{self.end}"
        if not self.heading:
            return where
        named = f"{self.within} › {self.heading}" if self.within else self.heading
        return f"§ {named}, {where}"


def lines_of(text: str) -> list[str]:
    """A document's lines as an editor numbers them: split at line feeds only (a form
    feed or a U+2028 inside a line ends nothing), the CR of a CRLF dropped."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def split(text: str) -> list[tuple[Section, list[str]]]:
    """The document's sections in order, each with its lines (its heading line first).
    A section of blank lines only is left out; each section ends at its last line
    that is not blank. Past the part recall indexes, a heading is still a section
    (the stub's Answers hold every heading), of its heading line alone."""
    lines = lines_of(text)
    indexed = indexed_part(text).count("\n") + 1  # lines the index read, the last perhaps in part
    out: list[tuple[Section, list[str]]] = []
    heading: str | None = None
    start = level = 0
    fence = ""
    opened_under: list[tuple[int, str | None]] = []  # the headings still open: level, text
    within: str | None = None
    for at, line in enumerate(lines):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip()[len(opened.group(1)):].strip():
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        match = _HEADING.match(line)
        if match:
            _close(out, heading, start, lines[start:_end(start, at, indexed)], level, within)
            heading, start = " ".join(_closed(match.group(2) or "").split()) or None, at
            level = len(match.group(1))
            while opened_under and opened_under[-1][0] >= level:
                opened_under.pop()
            within = opened_under[-1][1] if opened_under else None
            opened_under.append((level, heading))
    _close(out, heading, start, lines[start:_end(start, len(lines), indexed)], level, within)
    repeated = Counter(s.heading for s, _ in out)
    return [(s if repeated[s.heading] > 1 else replace(s, within=None), lines)
            for s, lines in out]


def _closed(text: str) -> str:
    """A heading's text without its closing `#`s (`## Changelog ##`): a run of `#`
    after white space, or the whole text when it is only `#`s."""
    kept = text.rstrip(" \t")
    body = kept.rstrip("#")
    if body == kept or (body and body[-1] not in " \t"):
        return kept
    return body


def _end(start: int, stop: int, indexed: int) -> int:
    """Where a section from line `start` to `stop` ends, as read: at the index's
    limit, or after its heading line when it starts past that limit."""
    return min(stop, indexed) if start < indexed else start + 1


def _close(out: list[tuple[Section, list[str]]], heading: str | None, start: int,
           lines: list[str], level: int, within: str | None) -> None:
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=-1)
    if last >= 0:
        out.append((Section(heading, start + 1, start + last + 1, level if heading else 0,
                            within if heading else None), lines[: last + 1]))


Counted = tuple[tuple["Section", Counter[str]], ...]  # each section and its words


def counted(text: str) -> Counted:
    """Each section of a document with its words counted, its heading's words
    HEADING_WEIGHT times: what both the choice of a section and the floor's check
    that a question's words come together in one place read (tokenised once)."""
    out = []
    for section, lines in split(text):
        terms = Counter(words("\n".join(lines)))
        for _ in range(HEADING_WEIGHT - 1):
            terms.update(words(section.heading or ""))
        out.append((section, terms))
    return tuple(out)


def places(sections: Counted) -> tuple[frozenset[str], ...]:
    """The words of each section, its heading's included: the places in which a
    question's words must come together for the document to answer it (floor.py)."""
    return tuple(frozenset(terms) for _, terms in sections)


def best_section(text: str | Counted, weights: Mapping[str, float]) -> Section | None:
    """The section whose words best match a question, or None when none holds any of
    its words. `weights`: each stemmed question word and its weight (its rarity in the
    store). A section scores as BM25 scores a document among the document's sections:
    a repeated word adds less and less, a long section is discounted, and its
    heading's words count HEADING_WEIGHT times; then a section scores up to
    HEADING_ASKED more for the share of its heading's content words the question
    asks. Ties go to the earlier section."""
    sections = counted(text) if isinstance(text, str) else text
    if not sections:
        return None
    average = sum(sum(t.values()) for _, t in sections) / len(sections) or 1.0
    best, top = None, 0.0
    for section, terms in sections:
        norm = K1 * (1 - B + B * sum(terms.values()) / average)
        score = math.fsum(w * (K1 + 1) * terms[word] / (terms[word] + norm)
                          for word, w in weights.items() if terms.get(word))
        if score > 0 and section.heading:
            named = [w for w in words(section.heading) if not is_function_word(w)]
            if named:
                score *= 1 + HEADING_ASKED * sum(w in weights for w in named) / len(named)
        if score > top:
            best, top = section, score
    return best


def spanned(sections: Sequence[Section], chosen: Section) -> Section:
    """`chosen`, or, when it is only its heading line, the whole part of the document
    under that heading: its subsections, up to the next heading of its level or
    above. A heading whose text is all in its subsections is still the place to
    read, and a quote of it would otherwise be empty."""
    if chosen.start != chosen.end or not chosen.level:
        return chosen
    at = next((i for i, s in enumerate(sections) if s.start == chosen.start), None)
    if at is None:
        return chosen
    end = chosen.end
    for below in sections[at + 1:]:
        if below.level <= chosen.level:
            break
        end = below.end
    return replace(chosen, end=end)


def quoted_lines(text: str, section: Section, wanted: Iterable[str]) -> list[str]:
    """The lines of `section` to quote, as written: from its first line (after the
    heading) that holds one of the `wanted` words to the section's end, blank lines
    dropped; the whole section after its heading when no line holds one. A caller
    cuts them to its budget, so the first lines are the ones that matter."""
    wanted_set = set(wanted)
    lines = lines_of(text)[section.start - 1: section.end]
    if section.heading is not None:
        lines = lines[1:]
    body = [ln.rstrip() for ln in lines if ln.strip()]
    first = next((i for i, ln in enumerate(body) if wanted_set & set(words(ln))), 0)
    return body[_opening(body, first):]


def _opening(body: list[str], at: int) -> int:
    """`at`, or, when line `at` is inside a code fence, the fence's opening line: a
    quote starting mid-block would end on a closing fence that opens nothing."""
    fence, opened_at = "", 0
    for i, line in enumerate(body[:at]):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
        elif opened:
            fence, opened_at = opened.group(1), i
    return opened_at if fence else at
