"""The note file: parse, render and compose, byte for byte.

A note is frontmatter (`name: value` lines between two `---`), a `# Title`, and
sections introduced by `## Name` headings. The frontmatter parser is our own and
total: it accepts exactly what :func:`render` writes back, so a note read and
written again is the same bytes. Sections are found from the Markdown block
structure (mistune), so a `## ` line inside a code fence is code, not a section.

mistune lives only in this module; the rest of the package sees :class:`Note`,
:class:`Section` and :class:`Block`.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from omh_git_memory.model import plain_markdown
from omh_git_memory.model.errors import InvalidKey, NoteParseError
from omh_git_memory.model.keys import Key

if TYPE_CHECKING:
    from mistune.block_parser import BlockParser


@dataclass(frozen=True)
class TypeSpec:
    required: tuple[str, ...]
    list_only: tuple[str, ...]


NOTE_TYPES: Final[dict[str, TypeSpec]] = {
    "surprise": TypeSpec(
        required=("Expected", "Observed", "Evidence", "Answers"),
        list_only=("Answers", "Related"),
    ),
    "topic": TypeSpec(required=(), list_only=("Related",)),
    "stub": TypeSpec(required=("Answers",), list_only=("Answers",)),
}

REQUIRED_FIELDS: Final = ("key", "type", "source", "recorded")

_FIELD_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(.*)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_FENCE_CLOSE = r"^ {{0,3}}{char}{{{n},}}[ \t]*$"


@dataclass(frozen=True)
class Block:
    """One top-level Markdown block of a section: its kind and 1-based line."""

    kind: str
    line: int
    items: tuple[str, ...] = ()  # a list's top-level items, as written


@dataclass(frozen=True)
class Section:
    name: str
    line: int  # the `## Name` heading's line in the file
    text: str  # the section's content, without surrounding blank lines
    blocks: tuple[Block, ...]

    @property
    def items(self) -> tuple[str, ...]:
        """The bullet items of every list in the section, in order."""
        return tuple(item for block in self.blocks for item in block.items)


@dataclass(frozen=True)
class Fence:
    line: int
    closed: bool


@dataclass(frozen=True)
class Note:
    """A parsed note. Build one with :func:`parse` or :func:`compose`, never by hand,
    so the structure always agrees with the text."""

    fields: tuple[tuple[str, str], ...]  # (name, text after the colon, as written)
    body: str
    key: Key
    type: str
    source: str
    recorded: dt.date
    title: str
    sections: tuple[Section, ...]
    fences: tuple[Fence, ...]
    links: tuple[str, ...]

    def field(self, name: str) -> str | None:
        """A frontmatter value with surrounding spaces removed; None when absent."""
        for field_name, raw in self.fields:
            if field_name == name:
                return raw.strip()
        return None

    @property
    def invalidated_by(self) -> str | None:
        value = self.field("invalidated_by")
        return value.strip() if value and value.strip() else None

    @property
    def spec(self) -> TypeSpec:
        return NOTE_TYPES[self.type]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)


# A note is a page of prose; anything this large is a mistake (a log pasted in,
# a binary renamed), and reading it would cost every command that lists notes.
MAX_NOTE_BYTES: Final = 1024 * 1024

# Characters a note may not hold: every control character but tab and line feed
# (CR included: line ends are LF), and lone surrogates, which are not text and
# have no UTF-8 form.
_BAD_CHAR = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def char_problem(text: str) -> tuple[str, int] | None:
    """The first character `text` may not hold in a note, as (what it is, 1-based
    line), or None. Part of the byte rules :func:`decode` and :func:`encode` share."""
    match = _BAD_CHAR.search(text)
    if match is None:
        return None
    char = match.group()
    line = text.count("\n", 0, match.start()) + 1
    if char == "\x00":
        return "holds a NUL byte", line
    if char == "\r":
        return "has CR line endings; convert them to LF (\\n)", line
    if "\ud800" <= char <= "\udfff":
        return f"holds U+{ord(char):04X}, a lone surrogate, which is not text", line
    return (
        f"holds the control character U+{ord(char):04X}; a note holds text, tabs and "
        "line feeds only",
        line,
    )


def _size_problem(size: int) -> str | None:
    if size > MAX_NOTE_BYTES:
        return f"is {size} bytes; a note may hold at most {MAX_NOTE_BYTES}"
    return None


def decode(data: bytes) -> str:
    """Bytes of a note file as text, refusing what a note may not hold.

    The byte rules, the same for reading and writing (:func:`encode`): UTF-8
    without a byte-order mark, at most MAX_NOTE_BYTES, no control character but
    tab and LF."""
    size = _size_problem(len(data))
    if size is not None:
        raise NoteParseError(size)
    if data.startswith(b"\xef\xbb\xbf"):
        raise NoteParseError("starts with a byte-order mark; save it as UTF-8 without BOM", 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise NoteParseError(f"is not valid UTF-8 (byte {err.start})", line) from None
    problem = char_problem(text)
    if problem is not None:
        raise NoteParseError(*problem)
    return text


def encode(text: str) -> bytes:
    """A note's text as the bytes of its file, or :class:`NoteParseError` when
    :func:`decode` would refuse them: nothing is written that cannot be read."""
    if text.startswith("\ufeff"):
        raise NoteParseError("starts with a byte-order mark; a note starts with `---`", 1)
    problem = char_problem(text)
    if problem is not None:
        raise NoteParseError(*problem)
    data = text.encode("utf-8")
    size = _size_problem(len(data))
    if size is not None:
        raise NoteParseError(size)
    return data


def parse(text: str) -> Note:
    """Read a note, or raise :class:`NoteParseError` saying where it went wrong."""
    fields, body, body_line, key, kind, source, recorded = _parse_head(text)
    title, sections, fences, links = _parse_body(body, body_line)
    return Note(
        fields=fields,
        body=body,
        key=key,
        type=kind,
        source=source,
        recorded=recorded,
        title=title,
        sections=sections,
        fences=fences,
        links=links,
    )


class NoteHead(NamedTuple):
    """A note as :func:`parse_head` reads it: all :func:`parse` gives but the
    sections and fences, which the recall index does not need."""

    fields: tuple[tuple[str, str], ...]
    body: str
    key: Key
    type: str
    source: str
    recorded: dt.date
    title: str
    links: tuple[str, ...]

    def field(self, name: str) -> str | None:
        return next((raw.strip() for field_name, raw in self.fields if field_name == name), None)

    @property
    def invalidated_by(self) -> str | None:
        value = self.field("invalidated_by")
        return value if value else None


def parse_head(text: str) -> Note | NoteHead:
    """Read a note as :func:`parse` does, raising the same errors, but without its
    sections when the body is plain enough for a scan (model/plain_markdown.py) to
    be sure of its title and of where its code is: a note's title and links found
    without mistune cost a tenth of a parse."""
    fields, body, _, key, kind, source, recorded = _parse_head(text)
    src = body if body.endswith("\n") else body + "\n"
    title = plain_markdown.title_line(src)
    fences = plain_markdown.fenced_code(src) if title is not None and "[[" in src else []
    if title is None or fences is None:
        return parse(text)
    pieces: list[str] = []
    last = 0
    for start, end in fences:
        pieces += (src[last:start], " " * (end - start))
        last = end
    pieces.append(src[last:])
    links = _links_in("".join(pieces)) if fences else _links_in(src) if "[[" in src else ()
    return NoteHead(fields, body, key, kind, source, recorded, title, links)


def _links_in(src: str) -> tuple[str, ...]:
    """The `[[key]]` targets of `src` outside code spans, in order of first
    appearance (`src` with its code blocks blanked)."""
    if "[[" not in src:
        return ()
    seen: dict[str, None] = {}
    if "`" in src:
        src = _CODE_SPAN.sub(lambda m: " " * len(m.group()), src)
    for match in _LINK.finditer(src):
        seen.setdefault(match.group(1).strip(), None)
    return tuple(seen)


_Head = tuple[tuple[tuple[str, str], ...], str, int, Key, str, str, dt.date]


def _parse_head(text: str) -> _Head:
    """The frontmatter of a note, checked as :func:`parse` checks it, and its body:
    (fields, body, the body's first line, key, type, source, recorded)."""
    fields, body, body_line = _split_frontmatter(text)
    values = {name: raw.strip() for name, raw in fields}
    lacking = [name for name in REQUIRED_FIELDS if not values.get(name)]
    if lacking:  # every one named, so a hand-written note is mended in one go
        said = [_fields([n for n in lacking if n not in values], "missing"),
                _fields([n for n in lacking if n in values], "empty")]
        raise NoteParseError("frontmatter " + " and ".join(filter(None, said)), 1)
    try:
        key = Key(values["key"])
    except InvalidKey as err:
        raise NoteParseError(f"field `key`: {err}", _field_line(fields, "key")) from None
    kind = values["type"]
    if kind not in NOTE_TYPES:
        known = ", ".join(NOTE_TYPES)
        raise NoteParseError(
            f"type {kind!r} is not a note type; use one of {known}", _field_line(fields, "type")
        )
    try:
        recorded = _parse_date(values["recorded"], 0)
    except NoteParseError:  # its line looked up only for the message (a build reads every note)
        recorded = _parse_date(values["recorded"], _field_line(fields, "recorded"))
    return fields, body, body_line, key, kind, values["source"], recorded


def _fields(names: list[str], state: str) -> str:
    """`field `a` is missing`, `fields `a`, `b` and `c` are empty`; "" for none."""
    if not names:
        return ""
    quoted = [f"`{n}`" for n in names]
    if len(quoted) == 1:
        return f"field {quoted[0]} is {state}"
    return f"fields {', '.join(quoted[:-1])} and {quoted[-1]} are {state}"


def render(note: Note) -> str:
    """The note's file text. `render(parse(text)) == text` for every note."""
    return _render_fields(note.fields) + note.body


def _render_fields(fields: Sequence[tuple[str, str]]) -> str:
    return "---\n" + "".join(f"{name}:{raw}\n" for name, raw in fields) + "---\n"


def _raw(value: str) -> str:
    """How the tool writes a value after the colon: `name: value`, or `name:`."""
    return f" {value}" if value else ""


def with_field(note: Note, name: str, value: str) -> Note:
    """The same note with frontmatter field `name` set to `value` (added at the end
    when absent); the body is untouched."""
    if "\n" in value:
        raise NoteParseError(f"frontmatter field `{name}` must fit on one line")
    fields = list(note.fields)
    names = [n for n, _ in fields]
    if name in names:
        fields[names.index(name)] = (name, _raw(value))
    else:
        fields.append((name, _raw(value)))
    text = _render_fields(fields) + note.body
    encode(text)
    return parse(text)


def without_field(note: Note, name: str) -> Note:
    """The same note without frontmatter field `name` (unchanged when absent)."""
    fields = [(n, raw) for n, raw in note.fields if n != name]
    if len(fields) == len(note.fields):
        return note
    return parse(_render_fields(fields) + note.body)


def compose(
    fields: Sequence[tuple[str, str]],
    title: str,
    sections: Iterable[tuple[str, str | Sequence[str]]],
    intro: str | None = None,
) -> Note:
    """Lay out a new note the way the tool writes one, then parse it back.

    The result always passes the byte rules (:func:`encode`), so it can be written
    and read again.

    A section given a sequence is written as a bullet list; given a string, as
    that text. Raises :class:`NoteParseError` when the result does not read back
    with exactly the sections asked for (say, a value holding a `## ` line).
    """
    for name, field_value in fields:
        if "\n" in field_value:
            raise NoteParseError(f"frontmatter field `{name}` must fit on one line")
    if "\n" in title:
        raise NoteParseError("the title must fit on one line")
    blocks = [f"# {title}"]
    if intro:
        blocks.append(intro.strip("\n"))
    wanted: list[tuple[str, str | tuple[str, ...]]] = []
    for name, value in sections:
        if isinstance(value, str):
            blocks.append(f"## {name}\n{value.strip(chr(10))}")
            wanted.append((name, value.strip("\n")))
        else:
            items = tuple(value)
            for item in items:
                if "\n" in item:
                    raise NoteParseError(f"each item of `{name}` must fit on one line")
            blocks.append(f"## {name}\n\n" + "\n".join(f"- {item}" for item in items))
            wanted.append((name, items))
    raw_fields = [(name, _raw(value)) for name, value in fields]
    text = _render_fields(raw_fields) + "\n" + "\n\n".join(blocks) + "\n"
    encode(text)  # the byte rules: what compose makes, decode reads back
    laid_out = _laid_out(text, title, intro, wanted)
    if laid_out is not None:
        return laid_out
    note = parse(text)
    got = [(s.name, s.text if isinstance(v, str) else s.items) for s, (_, v) in
           zip(note.sections, wanted, strict=False)]
    if len(note.sections) != len(wanted) or got != wanted or note.title != title:
        raise NoteParseError(_misread(got, wanted))
    return note


def _misread(got: Sequence[tuple[str, object]], wanted: Sequence[tuple[str, object]]) -> str:
    """What a note that does not read back as written is refused with: the first list
    item that reads otherwise, and how; else that its structure changed."""
    for (name, read), (_, asked) in zip(got, wanted, strict=False):
        if read == asked:
            continue
        if isinstance(asked, tuple) and isinstance(read, tuple) and len(read) == len(asked):
            was, now = next((a, r) for a, r in zip(asked, read, strict=True) if a != r)
            if " ".join(str(was).split()) == now:
                return (f"the {name} item {was!r} would read back as {now!r} (Markdown "
                        "reads a run of spaces as one); write it with single spaces")
            return (f"the {name} item {was!r} would read back as {now!r} (Markdown takes "
                    "its start as a mark); reword it, or put that part in `backticks`")
        break
    return ("a value changed the note's structure when written (a line starting with `#`, "
            "or an unclosed code fence?); indent such lines or put them in a closed fence")


# A line that surely reads as one paragraph line, in a list item or on its own: it
# starts with a letter, a digit that begins no ordered-list marker, a code span or
# a `[[link]]` (never a link reference definition: its label holds no `[`).
_PLAIN_LINE = re.compile(r"(?:[^\W\d_]|\d++(?![.)])|`(?!``)|\[\[)[^\n]*")


def _laid_out(text: str, title: str, intro: str | None,
              sections: Sequence[tuple[str, str | tuple[str, ...]]]) -> Note | None:
    """What :func:`parse` makes of `text` that :func:`compose` laid out, when every
    line of it is plain (`_PLAIN_LINE`) and each section a list (given as one, or as
    text of `- ` lines), found without mistune; None otherwise. A stub is composed
    for every document of a commit when its index is built.
    tests/model/test_note.py holds it to `parse`."""
    plain = _PLAIN_LINE.fullmatch
    if (not plain(title) or title != title.strip() or title.endswith("#")
            or (intro and not plain(intro.strip("\n")))):
        return None
    lists: list[tuple[str, tuple[str, ...]]] = []
    for name, value in sections:
        if not plain(name) or name != name.strip() or name.endswith("#"):
            return None
        if isinstance(value, str):  # compose stripped it of blank lines at either end
            lines = value.split("\n") if value else []
            if any(not line.startswith("- ") or not plain(line, 2) for line in lines):
                return None
            lists.append((name, tuple(" ".join(line[2:].split()) for line in lines)))
        elif any(not plain(item) or item != " ".join(item.split()) for item in value):
            return None
        else:
            lists.append((name, value))
    fields, body, body_line, key, kind, source, recorded = _parse_head(text)
    parts: list[Section] = []
    at = body.index("\n## ") + 1 if lists else len(body)  # the intro holds no `## `
    line = body_line + body.count("\n", 0, at)
    for index, (name, items) in enumerate(lists):
        stop = body.find("\n## ", at) + 1 if index + 1 < len(lists) else len(body)
        heading_end = body.index("\n", at) + 1
        raw = body[heading_end:stop]
        blocks = (Block(kind="list", line=line + 1, items=items),) if items else ()
        parts.append(Section(name=name, line=line, text=raw.strip("\n"), blocks=blocks))
        line += raw.count("\n") + 1
        at = stop
    return Note(fields=fields, body=body, key=key, type=kind, source=source, recorded=recorded,
                title=title, sections=tuple(parts), fences=(), links=_links_in(body))


def _split_frontmatter(text: str) -> tuple[tuple[tuple[str, str], ...], str, int]:
    if not text.startswith("---\n"):
        raise NoteParseError("does not start with a `---` frontmatter line", 1)
    close = text.find("\n---\n", 3)  # the first `---` line after the first
    if close < 0:
        if not text.endswith("\n---"):
            raise NoteParseError("frontmatter never closes: no `---` line after it", 2)
        close = len(text) - 4
    fields: list[tuple[str, str]] = []
    seen: set[str] = set()
    for line_no, line in enumerate(text[4:close].split("\n") if close > 3 else (), start=2):
        match = _FIELD_LINE.fullmatch(line)
        if match is None:
            raise NoteParseError(f"frontmatter line {line!r} is not `name: value`", line_no)
        name, value = match.group(1), match.group(2)
        if name in seen:
            raise NoteParseError(f"frontmatter field `{name}` appears twice", line_no)
        seen.add(name)
        fields.append((name, value))
    return tuple(fields), text[close + 5:], len(fields) + 3


def _field_line(fields: Sequence[tuple[str, str]], name: str) -> int:
    return 2 + next(i for i, (n, _) in enumerate(fields) if n == name)


def _parse_date(value: str, line: int) -> dt.date:
    if not _DATE.fullmatch(value):
        raise NoteParseError(f"recorded {value!r} is not a date written YYYY-MM-DD", line)
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise NoteParseError(f"recorded {value!r} is not a date that exists", line) from None


@dataclass
class _Positions:
    """Where mistune's top-level ATX headings, fences and indented code blocks are in
    the source (its tokens carry no positions), by `id()` of the token."""

    starts: dict[int, int] = field(default_factory=dict)  # token -> offset in the source
    code_end: dict[int, int] = field(default_factory=dict)  # code block -> offset after it
    fence_closed: dict[int, bool] = field(default_factory=dict)


@functools.cache
def _positioned_parser() -> Callable[[_Positions], BlockParser]:
    """mistune's block parser, noting `_Positions`: its rule callbacks receive the
    regex match, whose start is the block's offset in the source. mistune is
    imported here, when a note is first parsed, not with this module: recall from
    a built index parses no note and does without it."""
    from mistune.block_parser import BlockParser
    from mistune.core import BlockState

    class PositionedParser(BlockParser):
        def __init__(self, positions: _Positions) -> None:
            super().__init__()
            self.positions = positions

        def parse_method(self, m: re.Match[str], state: BlockState) -> int | None:
            before = len(state.tokens)
            end = super().parse_method(m, state)
            group = m.lastgroup
            top_level = state.parent is None and len(state.tokens) > before
            if top_level and group in ("atx_heading", "fenced_code", "indent_code"):
                token, at = state.tokens[before], self.positions
                at.starts[id(token)] = m.start()
                if group != "atx_heading":
                    at.code_end[id(token)] = end if end else len(state.src)
                if group == "fenced_code":
                    at.fence_closed[id(token)] = _fence_closed(m, state.src, end)
            return end

        def parse_atx_heading(self, m: re.Match[str], state: BlockState) -> int:
            # mistune's own, but its closing-`#`s pattern backtracks over a long run
            # of white space (a heading line of 20,000 spaces took seconds): the same
            # answer without it (plain_markdown.without_closing).
            text = m.group("atx_2").strip(string.whitespace)
            state.append_token({"type": "heading", "text": plain_markdown.without_closing(text),
                                "attrs": {"level": len(m.group("atx_1"))}, "style": "atx"})
            return m.end() + 1

        def _parse_indent_code_fast(self, state: BlockState) -> int | None:
            # mistune 3.1+ parses an indented code block here, not in parse_method
            start, before = state.cursor, len(state.tokens)
            end = super()._parse_indent_code_fast(state)
            if end and state.parent is None and len(state.tokens) > before:
                self.positions.starts[id(state.tokens[before])] = start
                self.positions.code_end[id(state.tokens[before])] = end
            return end

    return PositionedParser


def _block_tokens(src: str) -> tuple[list[dict[str, Any]], _Positions]:
    """mistune's block tokens of `src`, and where its headings and fences start."""
    from mistune.core import BlockState

    positions = _Positions()
    state = BlockState()
    state.process(src)
    _positioned_parser()(positions).parse(state)
    return state.tokens, positions


def _fence_closed(m: re.Match[str], src: str, end: int | None) -> bool:
    marker = m.group("fenced_2")
    closing = re.compile(_FENCE_CLOSE.format(char=re.escape(marker[0]), n=len(marker)), re.M)
    return closing.search(src, m.end() + 1, end if end else len(src)) is not None


def _parse_body(
    body: str, body_line: int
) -> tuple[str, tuple[Section, ...], tuple[Fence, ...], tuple[str, ...]]:
    src = body if body.endswith("\n") else body + "\n"
    tokens, at = _block_tokens(src)

    # Line numbers and token positions looked up in one pass each, not counted
    # from the start per section: a note of many sections stays linear.
    newlines = [m.start() for m in _NEWLINE.finditer(src)]
    position = {id(t): i for i, t in enumerate(tokens)}

    def line_at(offset: int) -> int:
        return body_line + bisect.bisect_left(newlines, offset)

    content = [t for t in tokens if t["type"] != "blank_line"]
    if not content or not _is_atx(content[0], 1, at):
        raise NoteParseError("has no `# Title` line after the frontmatter", body_line)
    title = str(content[0]["text"]).strip()

    fences = tuple(
        Fence(line=line_at(at.starts[id(t)]), closed=at.fence_closed[id(t)])
        for t in tokens
        if id(t) in at.fence_closed
    )
    heads = [t for t in tokens if _is_atx(t, 2, at)]
    sections: list[Section] = []
    for index, head in enumerate(heads):
        start = at.starts[id(head)]
        stop = at.starts[id(heads[index + 1])] if index + 1 < len(heads) else len(src)
        heading_end = src.find("\n", start) + 1
        first = position[id(head)] + 1
        last = position[id(heads[index + 1])] if index + 1 < len(heads) else len(tokens)
        section_tokens = [t for t in tokens[first:last] if t["type"] != "blank_line"]
        raw = src[heading_end:stop]
        sections.append(
            Section(
                name=str(head["text"]).strip(),
                line=line_at(start),
                text=raw.strip("\n"),
                blocks=_blocks(section_tokens, raw, line_at(heading_end)),
            )
        )
    return title, tuple(sections), fences, _links(src, tokens, at)


def _is_atx(token: dict[str, Any], level: int, at: _Positions) -> bool:
    return (
        token["type"] == "heading"
        and token.get("style") == "atx"
        and token["attrs"]["level"] == level
        and id(token) in at.starts
    )


_NEWLINE = re.compile("\n")
_LIST_LINE = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")


def _blocks(tokens: list[dict[str, Any]], raw: str, first_line: int) -> tuple[Block, ...]:
    """The section's blocks. Lists keep their items; other blocks are located at the
    first line that is neither blank, a list line, nor indented under a list."""
    lines = raw.split("\n")
    prose_line = next(
        (
            first_line + i
            for i, line in enumerate(lines)
            if line.strip() and not _LIST_LINE.match(line) and not line.startswith((" ", "\t"))
        ),
        first_line,
    )
    blocks: list[Block] = []
    for token in tokens:
        if token["type"] == "list":
            items = tuple(_item_text(item) for item in token.get("children", []))
            blocks.append(Block(kind="list", line=first_line, items=items))
        else:
            blocks.append(Block(kind=str(token["type"]), line=prose_line))
    return tuple(blocks)


def _item_text(item: dict[str, Any]) -> str:
    for child in item.get("children", []):
        if child["type"] in ("block_text", "paragraph"):
            return " ".join(str(child["text"]).split())
    return ""


def _links(src: str, tokens: list[dict[str, Any]], at: _Positions) -> tuple[str, ...]:
    """`[[key]]` targets outside code, in order of first appearance."""
    return _links_in(_without_code(src, tokens, at, spans=False))


def _without_code(src: str, tokens: list[dict[str, Any]], at: _Positions,
                  spans: bool = True) -> str:
    """`src` with its code (top-level fences and indented blocks, and code spans
    unless `spans` is false) blanked out, every other character at its offset."""
    pieces: list[str] = []
    last = 0
    for token in tokens:  # in source order: each block blanked once, no copy per block
        if id(token) in at.code_end:
            start = max(at.starts[id(token)], last)
            end = max(at.code_end[id(token)], start)
            pieces += (src[last:start], " " * (end - start))
            last = end
    pieces.append(src[last:])
    text = "".join(pieces)
    return _CODE_SPAN.sub(lambda m: " " * len(m.group()), text) if spans else text


def _links_outside_code(body: str) -> Iterator[re.Match[str]]:
    """Every `[[...]]` of a note's body outside code, at its offset in `body`."""
    src = body if body.endswith("\n") else body + "\n"
    tokens, at = _block_tokens(src)
    return _LINK.finditer(_without_code(src, tokens, at))


def link_line(note: Note, target: str) -> int | None:
    """The file line of the first `[[target]]` link outside code, where
    :attr:`Note.links` finds it (None if the note has no such link)."""
    for match in _links_outside_code(note.body):
        if match.group(1).strip() == target:
            return (_render_fields(note.fields).count("\n")
                    + note.body.count("\n", 0, match.start()) + 1)
    return None


def outline(markdown: str) -> tuple[str | None, list[str]]:
    """A Markdown document's first `# ` heading (None if it has none) and its
    top-level `## ` headings, word for word — what a stub is made of. Headings
    inside code fences are code, not headings."""
    src = markdown if markdown.endswith("\n") else markdown + "\n"
    plain = plain_markdown.outline(src)  # most documents: no parse (a build reads them all)
    if plain is not None:
        return plain
    tokens, at = _block_tokens(src)
    title = next((str(t["text"]).strip() for t in tokens if _is_atx(t, 1, at)), None)
    return title or None, [str(t["text"]).strip() for t in tokens if _is_atx(t, 2, at)]


def retarget_links(note: Note, old: str, new: str) -> Note:
    """The same note with every `[[old]]` link (outside code, as :attr:`Note.links`
    finds them) naming `new` instead: only the link's target text changes, every
    other byte of the file is kept (spaces inside the brackets included)."""
    body = note.body
    pieces: list[str] = []
    last = 0
    for match in _links_outside_code(body):
        target = match.group(1)
        if target.strip() != old:
            continue
        start = match.start(1) + len(target) - len(target.lstrip())
        pieces += (body[last:start], new)
        last = start + len(old)
    if not pieces:
        return note
    text = _render_fields(note.fields) + "".join(pieces) + body[last:]
    encode(text)
    return parse(text)
