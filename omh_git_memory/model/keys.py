"""Keys: a note's identity, derived from templates, and a path inside its store.

A key is never chosen freely. :func:`slug` canonicalises text (one input, one
key, whatever the spelling), :class:`KeyTemplates` expands the per-type
templates of `.omh/memory.toml`, and :class:`Key` refuses anything that could
name a file outside the store.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import total_ordering
from pathlib import PurePosixPath
from typing import Final

from omh_git_memory.model.errors import ConfigError, InvalidKey

NOTE_SUFFIX: Final = ".md"

# A filename may hold 255 bytes on common filesystems; leave room for the
# `.md` suffix, a `-NN` collision suffix and the writer's temporary name.
MAX_SEGMENT_BYTES: Final = 200
MAX_KEY_BYTES: Final = 1000

# Characters refused in any segment: path separators of every OS, the
# characters Windows refuses in names, and whitespace (a key sits inside
# `[[...]]` links and on command lines).
_FORBIDDEN = re.compile(r'[\\:*?"<>|\s]')

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt, Unicode
# 15): characters a renderer shows as nothing. Most are format characters (Cf) or
# unassigned, caught by category; the rest are letters and marks that draw
# nothing (Hangul fillers, variation selectors), so a key could look like another.
_IGNORABLE: Final = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Categories no key may hold: controls, format characters (bidi overrides, zero
# widths), surrogates, private use, unassigned (noncharacters are unassigned),
# and line and paragraph separators.
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


_IGNORABLE_CHAR: Final = re.compile(
    "[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _IGNORABLE) + "]"
)


def is_ignorable(char: str) -> bool:
    """True for a character Unicode says renders as nothing (Default_Ignorable)."""
    return _IGNORABLE_CHAR.match(char) is not None


def is_plain(text: str) -> bool:
    """True when `text` holds no unsafe character (see :func:`is_unsafe`) and no
    space but ` `: it prints as itself. Fast: no loop in Python."""
    return text.isprintable() and _IGNORABLE_CHAR.search(text) is None


def is_unsafe(char: str) -> bool:
    """True for a character that is invisible, a control or not a character at all:
    one a reader cannot see or a terminal may act on. No key holds one."""
    return unicodedata.category(char) in _UNSAFE_CATEGORIES or is_ignorable(char)


def printable(text: str) -> str:
    """`text` for a terminal or a log, on one line: every unsafe character (a
    newline, an escape, a bidi override, a zero width) written as a visible escape
    such as `\\n`, `\\x1b` or `\\u202e`, so a name read from a tree or a disk can
    neither forge a line nor pass for another name."""
    if is_plain(text):
        return text
    return "".join(_escape(c) if is_unsafe(c) or not c.isprintable() else c for c in text)


_SHELL_PLAIN: Final = frozenset("-_./@%+=,")


def shell_word(key: str | Key) -> str:
    """`key` as one word of a command a person or an agent may paste into a shell: as
    it is when every character is a letter, a digit or one of `-_./@%+=,`, else in
    single quotes (shlex.quote). A key may hold `$(...)`, `;` or a backtick, and a
    team note's key is a teammate's text: quoted bare, the pasted command runs it."""
    import shlex

    text = str(key)
    if text and all(c.isalnum() or c in _SHELL_PLAIN for c in text):
        return text
    return shlex.quote(text)


def _escape(char: str) -> str:
    code = ord(char)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in named:
        return named[char]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as Python decodes it (PEP 383)
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


@total_ordering
@dataclass(frozen=True, slots=True)
class Key:
    """A validated key: slash-separated, lowercase segments, safe as a path."""

    value: str

    def __post_init__(self) -> None:
        problem = key_problem(self.value)
        if problem is not None:
            raise InvalidKey(f"{self.value!r} is not a usable key: {problem}")

    def __str__(self) -> str:
        return self.value

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Key):
            return NotImplemented
        return self.value < other.value

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.value.split("/"))

    def relpath(self) -> PurePosixPath:
        """The note file's path relative to its store root."""
        return PurePosixPath(self.value + NOTE_SUFFIX)

    def with_suffix_number(self, n: int) -> Key:
        """`surprise/x` → `surprise/x-2`: the `--if-exists suffix` spelling."""
        return Key(f"{self.value}-{n}")

    @classmethod
    def from_relpath(cls, relpath: str) -> Key:
        """The key a file at `relpath` (POSIX, relative to the store) must carry."""
        if not relpath.endswith(NOTE_SUFFIX):
            raise InvalidKey(f"{relpath!r} is not a note file: it does not end in {NOTE_SUFFIX}")
        return cls(relpath[: -len(NOTE_SUFFIX)])


# Lowercase ASCII segments that neither start nor end with a dot.
_ORDINARY_KEY: Final = re.compile(r"[a-z0-9_-](?:[a-z0-9._-]*[a-z0-9_-])?"
                                  r"(?:/[a-z0-9_-](?:[a-z0-9._-]*[a-z0-9_-])?)*")


def key_problem(value: str) -> str | None:
    """Why `value` cannot be a key, or None when it can."""
    if _ORDINARY_KEY.fullmatch(value) and len(value) <= MAX_KEY_BYTES and max(
            map(len, value.split("/"))) <= MAX_SEGMENT_BYTES:
        return None  # every check passes: spared (an index build checks three per document)
    return _key_problem(value)


def _key_problem(value: str) -> str | None:
    """:func:`key_problem`, every check made."""
    if not value:
        return "it is empty"
    # is_plain holds no unsafe character: it spares a plain key the walk (5,000 keys
    # read from a local store cost 0.8 s of it).
    unsafe = None if is_plain(value) else next((c for c in value if is_unsafe(c)), None)
    if unsafe is not None:
        return (
            f"it holds {describe(unsafe)}: a control, invisible, private or unassigned "
            "character, which would let two different keys look alike"
        )
    if len(value.encode("utf-8")) > MAX_KEY_BYTES:
        return f"it is longer than {MAX_KEY_BYTES} bytes"
    if value.startswith("/"):
        return "it is an absolute path; a key is relative to its store"
    if "\\" in value:
        return "it holds a backslash; segments are separated by `/`"
    if value != unicodedata.normalize("NFC", value):
        return "it is not in Unicode normal form (NFC)"
    for segment in value.split("/"):
        if not segment:
            return "it has an empty segment (`//`, or a leading or trailing `/`)"
        if segment.startswith("."):
            return f"segment {segment!r} starts with `.` (that includes `..`)"
        if segment.endswith("."):
            return f"segment {segment!r} ends with `.`"
        if segment.lower() != segment:
            return f"segment {segment!r} has capitals; keys are lowercase so one key is one file"
        if _FORBIDDEN.search(segment):
            return f"segment {segment!r} holds whitespace or one of \\ : * ? \" < > |"
        if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
            return f"segment {segment[:20]!r}… is longer than {MAX_SEGMENT_BYTES} bytes"
    return None


def describe(char: str) -> str:
    """`U+202E (RIGHT-TO-LEFT OVERRIDE)`: a character named for a message."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def slug(text: str) -> str:
    """Canonical slug: Unicode-normalised, case-folded, runs of anything that is
    not a letter or digit collapsed to one `-`, no `-` at either end.

    Spelling variants (case, composed or decomposed accents, full-width forms,
    runs of punctuation and whitespace) give the same slug. Characters that draw
    nothing (zero widths, bidi controls, variation selectors: Unicode's default
    ignorables) are dropped, as NFKC_Casefold drops them, so text and its
    look-alike give one key. The result may be empty when `text` has no letter or
    digit.
    """
    if text.isascii():  # the same, at a tenth of the cost: ASCII needs no normalising
        return _truncate(_ASCII_GAPS.sub("-", text.lower()).strip("-"))
    return _unicode_slug(text)


def _unicode_slug(text: str) -> str:
    """:func:`slug` of any text, a character at a time."""
    visible = "".join(c for c in text if not is_ignorable(c))
    folded = unicodedata.normalize("NFKC", visible)
    folded = unicodedata.normalize("NFKC", folded.casefold())
    out: list[str] = []
    gap = False
    for char in folded:
        if char.isalnum() and not is_unsafe(char):
            if gap and out:
                out.append("-")
            out.append(char)
            gap = False
        else:
            gap = True
    return _truncate("".join(out))


_ASCII_GAPS: Final = re.compile(r"[^a-z0-9]+")


def _truncate(value: str) -> str:
    """Cut a slug to MAX_SEGMENT_BYTES at a `-` boundary where one exists."""
    if len(value.encode("utf-8")) <= MAX_SEGMENT_BYTES:
        return value
    cut = value
    while len(cut.encode("utf-8")) > MAX_SEGMENT_BYTES:
        cut = cut[:-1]
    boundary = cut.rfind("-")
    return cut[:boundary] if boundary > 0 else cut


def path_slug(path: str) -> str:
    """A document path as a key: `docs/Deploy Notes.md` → `docs/deploy-notes`."""
    stem = path[: -len(".md")] if path.lower().endswith(".md") else path
    return "/".join(slug(part) for part in stem.split("/") if part)


# Each note type and the placeholders its template may use.
BINDABLE: Final[Mapping[str, frozenset[str]]] = {
    "surprise": frozenset({"slug"}),
    "topic": frozenset({"slug"}),
    "stub": frozenset({"path"}),
}

DEFAULT_TEMPLATES: Final[Mapping[str, str]] = {
    "surprise": "surprise/{{slug}}",
    "topic": "{{slug}}",
    "stub": "{{path}}",
}


@dataclass(frozen=True)
class KeyTemplates:
    """The `[keys]` table: one template per note type."""

    templates: Mapping[str, str]

    def __post_init__(self) -> None:
        for kind, template in self.templates.items():
            if kind not in BINDABLE:
                known = ", ".join(sorted(BINDABLE))
                raise ConfigError(
                    f"[keys] names type {kind!r}, which does not exist; use one of {known}"
                )
            for name in _PLACEHOLDER.findall(template):
                if name not in BINDABLE[kind]:
                    allowed = ", ".join("{{" + b + "}}" for b in sorted(BINDABLE[kind]))
                    raise ConfigError(
                        f"[keys] {kind} = {template!r}: placeholder {{{{{name}}}}} is bound "
                        f"to nothing; a {kind} template can use {allowed}"
                    )

    def expand(self, kind: str, **values: str) -> Key:
        """The key for a note of type `kind` with the placeholders bound to `values`."""
        template = self.templates.get(kind, DEFAULT_TEMPLATES.get(kind))
        if template is None:
            raise ConfigError(f"no key template for type {kind!r}")

        def bind(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in values:
                raise ConfigError(f"placeholder {{{{{name}}}}} in {template!r} is bound to nothing")
            return values[name]

        expanded = _PLACEHOLDER.sub(bind, template)
        try:
            return Key(expanded)
        except InvalidKey as err:
            raise InvalidKey(f"template {template!r} gave an unusable key: {err}") from None


DEFAULT_KEY_TEMPLATES: Final = KeyTemplates(DEFAULT_TEMPLATES)
