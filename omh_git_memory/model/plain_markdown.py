"""What mistune would find in plain Markdown, found by scanning lines.

mistune's block parse costs some 0.3 ms for a page of a few hundred bytes (most of
it building its parser and state) and about 1 ms per 10 KB, and building the
recall index reads every document and note of a commit (38,000 documents in a
tldr-pages checkout). Most are plain enough that a scan of the few lines that can
open a block settles what the index needs of them: a document's headings
(`outline`), a note's title (`title_line`) and where its code is, so that its
links are found outside it (`fenced_code`). Each function answers only when it is
sure mistune's parse would give the same answer, and None otherwise: the caller
then parses (model/note.py). The rules below are mistune 3's own (block_parser.py,
list_parser.py); tests/model/test_plain_markdown.py holds the two to the same
answers on real documents and on generated ones.
"""

from __future__ import annotations

import re
import string
from typing import Final, NamedTuple

# A line that may open a block whose extent matters: a heading, a fence, HTML, a
# link reference definition (mistune's rules allow up to three spaces first).
_INTERESTING: Final = re.compile(r"^ {0,3}(?:#|```|~~~|<|\[)", re.M)
# mistune's `atx_heading` rule, for one line, and how it trims a closing sequence.
_ATX: Final = re.compile(r" {0,3}(#{1,6})(?!#)([ \t]*|[ \t]+.*?)$")
# mistune's `fenced_code` rule for an opening line.
_FENCE: Final = re.compile(r"(`{3,}|~{3,})[ \t]*(.*?)$")
# mistune's `ref_link` rule, whose label may run over several lines.
_REF_LINK: Final = re.compile(r" {0,3}\[(?=[\s\S]{0,999}\])(?:[^\\\[\]]|\\.){0,999}\]:")
# A definition sure to end on its own line: a bare destination, no title.
_ONE_LINE_REF: Final = re.compile(r" {0,3}\[(?:[^\\\[\]\n]|\\.)*\]:[ \t]+[^\s\"'(<]\S*[ \t]*$")
_TITLE_START: Final = re.compile(r"[ \t]*[\"'(]")
_BLANK: Final = re.compile(r"[ \t]*")  # mistune's blank line, once \v and \f are ruled out
_BLANK_LINE: Final = re.compile(r"^[ \t]*\n", re.M)
_BLANK_LINES: Final = re.compile(r"(?:[ \t]*\n)*")
# mistune's `raw_html` rule, and the blocks that end at a marker rather than at a
# blank line (its rules 1 to 5).
_HTML: Final = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*|<!--|<\?|<![A-Z]|<!\[CDATA\[")
_PRE_TAGS: Final = ("pre", "script", "style", "textarea")
_ENDS: Final = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}
# What could open a block in an HTML block's lines that would not end with it.
_OPENS_BLOCK: Final = re.compile(
    r"^ {0,3}(?:#|```|~~~|<!|<\?|<(?i:pre|script|style|textarea)(?![A-Za-z0-9-]))", re.M)
# A line that may be indented code (mistune's `_is_indent_code_line`, and more).
_INDENTED: Final = re.compile(r"^(?: {4}| *\t)", re.M)
# Characters whose handling differs between mistune's rules (a CR is not a blank
# line's end to its blank-line rule, but is white space to its paragraph rule).
_AWKWARD: Final = ("\r", "\v", "\f")


class _Scan(NamedTuple):
    title: str | None  # the first top-level `# ` heading's text, None when there is none
    headings: list[str]  # the top-level `## ` headings' texts
    fences: list[tuple[int, int]]  # each top-level fenced code block: (start, end) offsets


def outline(src: str) -> tuple[str | None, list[str]] | None:
    """The first `# ` heading's text (None when it has none or it is empty) and the
    top-level `## ` headings of `src` (which ends with a newline), as mistune's
    parse gives them; None when a scan cannot be sure."""
    found = _scan(src)
    return None if found is None else (found.title or None, found.headings)


def fenced_code(src: str) -> list[tuple[int, int]] | None:
    """Where each top-level fenced code block of `src` starts and ends, when a scan is
    sure these are all of its top-level code (no line that may be indented code);
    None otherwise."""
    found = _scan(src)
    if found is None:
        return None
    last = 0
    for start, end in (*found.fences, (len(src), len(src))):
        if _INDENTED.search(src, last, start):
            return None
        last = end
    return found.fences


def title_line(src: str) -> str | None:
    """The text of the `# ` heading on the first line of `src` that is not blank, as
    mistune gives it; None when that line is no such heading (the parse decides)."""
    opening = opening_heading(src)
    return opening[1] if opening is not None and opening[0] == 1 else None


def opening_heading(src: str) -> tuple[int, str] | None:
    """The level and text of the heading on the first line of `src` that is not
    blank, as mistune gives them; None when that line is no heading, or when a scan
    cannot be sure."""
    if any(c in src for c in _AWKWARD):
        return None
    blank = _BLANK_LINES.match(src)  # always matches, if only the empty string
    start = blank.end() if blank else 0
    end = src.find("\n", start)
    heading = _ATX.match(src[start : len(src) if end < 0 else end])
    if heading is None:
        return None
    return len(heading.group(1)), _heading_text(heading)


def _heading_text(heading: re.Match[str]) -> str:
    return without_closing(heading.group(2).strip(string.whitespace)).strip()


def without_closing(text: str) -> str:
    r"""`text` without a closing sequence of `#`s: what mistune's `re.sub(r"(\s+|^)#+\s*$",
    "", text)` leaves, found without that pattern, which takes time quadratic in a run
    of white space that no `#` ends (a line of 20,000 spaces took seconds)."""
    body = text.rstrip().rstrip("#")
    if len(body) == len(text.rstrip()):
        return text  # no `#` at the end
    if not body:
        return ""  # the line is its closing sequence
    return body.rstrip() if body[-1].isspace() else text


def _scan(src: str) -> _Scan | None:
    """The top-level headings and fences of `src`, or None when the scan cannot be
    sure of them: a heading, fence or HTML indented (under a list item, or not: only
    the parse can tell), a heading right under a line it might continue, HTML whose
    extent depends on what it continues, a link reference definition that may run
    on."""
    if any(c in src for c in _AWKWARD):
        return None
    found = _Scan(None, [], [])
    seen_title = False
    fresh = 0  # a line start where a new top-level block surely begins
    pos = 0
    while (m := _INTERESTING.search(src, pos)) is not None:
        start = m.start()
        end = src.find("\n", start)
        end = len(src) if end < 0 else end
        line = src[start:end]
        first = line.lstrip(" ")[0]
        if first in "#`~<" and line[0] == " ":
            return None
        if first == "#":
            if start != fresh and not _blank_before(src, start):
                return None  # may continue a block quote lazily, or a title
            heading = _ATX.match(line)
            if heading is not None:
                level = len(heading.group(1))
                if level == 2:
                    found.headings.append(_heading_text(heading))
                elif level == 1 and not seen_title:
                    found, seen_title = found._replace(title=_heading_text(heading)), True
                fresh = end + 1
        elif first in "`~":
            fence = _FENCE.match(line)
            assert fence is not None
            marker, info = fence.group(1), fence.group(2)
            if not (marker[0] == "`" and "`" in info):  # else a paragraph's line
                close = re.compile(r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker))
                                   + r",}[ \t]*(?:\n|$)", re.M).search(src, end + 1)
                pos = fresh = len(src) if close is None else close.end()
                found.fences.append((start, pos))
                continue
        elif first == "<":
            html = _HTML.match(line)
            if html is not None:
                marker = html.group()
                tag = marker[1:].lower()
                ending = _ENDS.get(marker) or (">" if marker.startswith("<!") else None) or (
                    f"</{tag}>" if tag in _PRE_TAGS else None)
                if ending is not None:  # a block that runs to its end marker
                    if (ending.startswith("</") and start != fresh
                            and not _blank_before(src, start)):
                        return None  # `<pre>` under a list item or quote continues it
                    found_at = src.find(ending, start + len(marker))
                    stop = -1 if found_at < 0 else src.find("\n", found_at)
                    pos = fresh = len(src) if stop < 0 else stop + 1
                    continue
                # Any other tag: an HTML block to the next blank line, or a
                # paragraph's line (a tag that cannot interrupt one); the two agree
                # when nothing before that blank line opens a block that outlasts it.
                blank = _BLANK_LINE.search(src, end + 1)
                stop = len(src) if blank is None else blank.start()
                if _OPENS_BLOCK.search(src, end + 1, stop):
                    return None
                pos = stop
                continue
        else:  # "["
            ref = _REF_LINK.match(src, start)
            if ref is not None and ("\n" in ref.group() or not _ONE_LINE_REF.match(line)
                                    or _TITLE_START.match(src, end + 1)):
                return None
        pos = end + 1
    return found


def _blank_before(src: str, start: int) -> bool:
    """Whether the line before the one at `start` (> 0) is blank."""
    before = src.rfind("\n", 0, start - 1) + 1
    return _BLANK.fullmatch(src, before, start - 1) is not None
