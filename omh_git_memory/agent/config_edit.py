"""Harness configuration files edited in place: only what omh changes is rewritten.

JSON (`.mcp.json`, `.cursor/mcp.json`, `opencode.json`, `.claude/settings.json`)
is parsed into a tree that knows where each value's text starts and ends, and an
edit splices new text into the old: every byte omh does not change — a number
written `1e400`, an escape such as `"\\ud83d"`, a duplicate key, the file's
indentation, a byte-order mark — stays exactly as written. TOML
(`.codex/config.toml`) goes through tomlkit, a style-preserving parser (imported
here only, and only when a TOML file is edited). Nothing is ever edited line by
line.

Every odd-but-valid shape either gets a correct edit or a one-line
:class:`ConfigError`: `null` where an object is expected counts as absent; an
array or a string there, a key omh must change that is written twice, nesting
deeper than :data:`MAX_DEPTH`, are refused and the file is left as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from omh_git_memory.model.errors import ConfigError

BOM: Final = "\ufeff"
MAX_DEPTH: Final = 200  # far beyond any harness file; deeper is refused, never a crash
_WS: Final = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Number:
    """A JSON number as written: never turned into a float (1e400 is not infinity)."""

    text: str

    def __str__(self) -> str:  # as written: an arg `5` is the word "5"
        return self.text


@dataclass
class Node:
    kind: str  # object, array, string, number, true, false, null
    start: int
    end: int
    text: str = ""  # a string's value, a number's text
    keys: list[str] = field(default_factory=list)  # an object's keys, in order
    key_starts: list[int] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)  # member values, or items

    def members(self, key: str) -> list[int]:
        return [i for i, k in enumerate(self.keys) if k == key]

    def value(self) -> Any:
        """The plain value (a duplicate key: the last one, as JSON.parse reads it)."""
        if self.kind == "object":
            return {k: c.value() for k, c in zip(self.keys, self.children, strict=True)}
        if self.kind == "array":
            return [c.value() for c in self.children]
        if self.kind == "number":
            return Number(self.text)
        return {"string": self.text, "true": True, "false": False, "null": None}[self.kind]


class _Invalid(Exception):
    def __init__(self, message: str, at: int) -> None:
        super().__init__(message)
        self.at = at


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def parse(self) -> Node:
        self.skip()
        node = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise _Invalid("extra data after the value", self.pos)
        return node

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise _Invalid(f"nested deeper than {MAX_DEPTH} levels", self.pos)
        text, start = self.text, self.pos
        char = text[start] if start < len(text) else ""
        if char == "{":
            return self.container(depth, "object", "}")
        if char == "[":
            return self.container(depth, "array", "]")
        if char == '"':
            return Node("string", start, self.string_end(), self.string_value(start))
        for word in ("true", "false", "null"):
            if text.startswith(word, start):
                self.pos = start + len(word)
                return Node(word, start, self.pos)
        found = _NUMBER.match(text, start)
        if found and found.end() > start:
            self.pos = found.end()
            return Node("number", start, self.pos, found.group())
        raise _Invalid("expected a value", start)

    def container(self, depth: int, kind: str, close: str) -> Node:
        node = Node(kind, self.pos, self.pos)
        self.pos += 1
        self.skip()
        if self.text.startswith(close, self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            if kind == "object":
                if not self.text.startswith('"', self.pos):
                    raise _Invalid("expected a key in double quotes", self.pos)
                key_start = self.pos
                self.string_end()
                node.keys.append(self.string_value(key_start))
                node.key_starts.append(key_start)
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise _Invalid("expected ':'", self.pos)
                self.pos += 1
                self.skip()
            node.children.append(self.value(depth + 1))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip()
                continue
            if self.text.startswith(close, self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            raise _Invalid(f"expected ',' or '{close}'", self.pos)

    def string_end(self) -> int:
        text, pos = self.text, self.pos + 1
        while True:
            if pos >= len(text):
                raise _Invalid("unterminated string", self.pos)
            char = text[pos]
            if char == '"':
                self.pos = pos + 1
                return self.pos
            if char == "\\":
                pos += 2
                continue
            if char < " ":
                raise _Invalid("control character in a string", pos)
            pos += 1

    def string_value(self, start: int) -> str:
        token = self.text[start : self.pos]
        try:
            value = json.loads(token)  # strict escapes; a lone surrogate escape is valid
        except (json.JSONDecodeError, RecursionError):
            raise _Invalid("bad escape in a string", start) from None
        assert isinstance(value, str)
        return value


def _where(text: str, at: int) -> str:
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"line {line} column {column}"


@dataclass(frozen=True)
class JsonDoc:
    """A JSON file's text and its tree (`bom`: the file began with a byte-order mark,
    kept as it was)."""

    text: str
    root: Node
    bom: bool
    path: str

    @property
    def rendered(self) -> str:
        return (BOM if self.bom else "") + self.text


def parse_json(text: str, path: str) -> JsonDoc | None:
    """The tree of `text`, None when it is empty; a file that is not JSON, or whose
    top level is not an object, is refused."""
    bom = text.startswith(BOM)
    body = text.removeprefix(BOM)
    if not body.strip(_WS):
        return None
    try:
        root = _Parser(body).parse()
    except _Invalid as err:
        raise ConfigError(f"{path} is not valid JSON ({err} at {_where(body, err.at)}); fix "
                          "it, then run this again") from None
    if root.kind != "object":
        raise ConfigError(f"{path} does not hold a JSON object; fix it, then run this again")
    return JsonDoc(body, root, bom, path)


def json_value(text: str, path: str) -> dict[str, Any]:
    """The plain value of a JSON file's object ({} when empty)."""
    doc = parse_json(text, path)
    return {} if doc is None else doc.root.value()


def render(value: Any, indent: str = "", step: str = "  ", newline: str = "\n") -> str:
    """`value` as JSON text for a place indented by `indent`."""
    out = json.dumps(value, indent=step, ensure_ascii=False)
    # A lone surrogate (read from an escape) cannot be written as UTF-8: escape it again.
    out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out.replace("\n", newline + indent)


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    stop = start
    while stop < len(text) and text[stop] in " \t":
        stop += 1
    return text[start:stop]


def _on_own_line(text: str, at: int) -> bool:
    return text[text.rfind("\n", 0, at) + 1 : at].strip(" \t") == ""


def _step(doc: JsonDoc) -> str:
    """The file's indentation step, from its first member on a line of its own."""
    root = doc.root
    if root.key_starts and _on_own_line(doc.text, root.key_starts[0]):
        inner, outer = _line_indent(doc.text, root.key_starts[0]), _line_indent(doc.text,
                                                                               root.start)
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer):]
    return "  "


class JsonEditor:
    """Edits of one JSON file, each a splice of its text, re-parsed after each."""

    def __init__(self, doc: JsonDoc) -> None:
        self.doc = doc
        self.step = _step(doc)
        self.newline = "\r\n" if "\r\n" in doc.text else "\n"  # the file's own line ends

    @property
    def root(self) -> Node:
        return self.doc.root

    def _splice(self, start: int, end: int, new: str) -> None:
        text = self.doc.text[:start] + new + self.doc.text[end:]
        parsed = parse_json((BOM if self.doc.bom else "") + text, self.doc.path)
        assert parsed is not None
        self.doc = parsed

    def find(self, path: tuple[str | int, ...]) -> Node:
        """The node at `path` (keys of objects, indexes of arrays) in the current tree."""
        node = self.root
        for part in path:
            if isinstance(part, int):
                node = node.children[part]
            else:
                node = node.children[node.members(part)[-1]]
        return node

    def member(self, path: tuple[str | int, ...], key: str, shown: str) -> Node | None:
        """The value of `key` in the object at `path`, None when absent; a key written
        twice is refused (which one a harness reads is not omh's to guess)."""
        found = self.find(path).members(key)
        if len(found) > 1:
            raise ConfigError(f"{self.doc.path}: `{shown}` is written {len(found)} times; "
                              "keep one, then run this again")
        return self.find(path).children[found[0]] if found else None

    def set_member(self, path: tuple[str | int, ...], key: str, value: Any) -> None:
        """Give `key` in the object at `path` the value `value`: its value's text
        replaced when it has one (only when it differs), else a member added last."""
        obj = self.find(path)
        found = obj.members(key)
        if found:
            child = obj.children[found[-1]]
            if child.value() != value:
                indent = _line_indent(self.doc.text, obj.key_starts[found[-1]])
                self._splice(child.start, child.end,
                             render(value, indent, self.step, self.newline))
            return
        self._append(obj, json.dumps(key, ensure_ascii=False) + ": ", value)

    def replace(self, path: tuple[str | int, ...], value: Any) -> None:
        node = self.find(path)
        self._splice(node.start, node.end, render(
            value, _line_indent(self.doc.text, node.start), self.step, self.newline))

    def append(self, path: tuple[str | int, ...], value: Any) -> None:
        """Add `value` as the last item of the array at `path`."""
        self._append(self.find(path), "", value)

    def _append(self, container: Node, prefix: str, value: Any) -> None:
        text, nl = self.doc.text, self.newline
        close = "}" if container.kind == "object" else "]"
        if not container.children:
            outer = _line_indent(text, container.start)
            inner = outer + self.step
            self._splice(container.start, container.end,
                         ("{" if close == "}" else "[") + nl + inner + prefix
                         + render(value, inner, self.step, nl) + nl + outer + close)
            return
        last = len(container.children) - 1
        at = container.key_starts[last] if container.kind == "object" else (
            container.children[last].start)
        if _on_own_line(text, at):
            indent = _line_indent(text, at)
            new = "," + nl + indent + prefix + render(value, indent, self.step, nl)
        else:
            new = ", " + prefix + _SURROGATE.sub(
                lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))
        end = container.children[last].end
        self._splice(end, end, new)

    def delete(self, path: tuple[str | int, ...], index: int) -> None:
        """Remove member (or item) `index` of the container at `path`, and the comma
        that went with it."""
        container = self.find(path)
        starts = container.key_starts if container.kind == "object" else [
            c.start for c in container.children]
        children = container.children
        if len(children) == 1:
            self._splice(container.start, container.end,
                         "{}" if container.kind == "object" else "[]")
        elif index > 0:
            self._splice(children[index - 1].end, children[index].end, "")
        else:
            self._splice(starts[0], starts[1], "")

    def text(self) -> str:
        return self.doc.rendered


def fresh_json(value: dict[str, Any]) -> str:
    return render(value) + "\n"


# -- TOML, through tomlkit ---------------------------------------------------------

TomlLoad = Callable[[str], dict[str, Any]]


def line_end(text: str) -> str:
    """A file's own line end: CRLF when every line ends so, else LF."""
    return "\r\n" if "\r\n" in text and "\n" not in text.replace("\r\n", "") else "\n"


def toml_append(text: str, block: str) -> str:
    """`block` (a table, LF lines ending in one) added at the end of `text` after one
    blank line, in the file's own line ends; a file without a final newline keeps
    none. :func:`toml_unappend` is its exact inverse."""
    nl = line_end(text)
    block = block.replace("\n", nl)
    if text.endswith("\n"):
        return text + nl + block
    return text + nl + nl + block.removesuffix(nl)


def toml_unappend(text: str, block: str) -> str | None:
    """`text` before a `block` that :func:`toml_append` put at its end, or None when
    the file does not end so (it was written or edited otherwise)."""
    nl = line_end(text)
    block = block.replace("\n", nl)
    for tail, wants_newline in ((nl + block, True), (nl + nl + block.removesuffix(nl), False)):
        head = text[: -len(tail)]
        if text.endswith(tail) and head.removeprefix(BOM) and head.endswith("\n") == wants_newline:
            return head
    return None


def toml_edit(text: str, path: str, change: Callable[[Any, Any], None]) -> str:
    """`text` with `change(document, tomlkit)` applied by tomlkit, which keeps every
    comment, layout and value it is not asked to change. A byte-order mark stays, and
    so do CRLF line ends (tomlkit writes what it adds with LF: a CRLF file is edited
    as LF and given its CRLF back, so no line of it changes its end)."""
    import tomlkit  # only here, only when a TOML file is edited
    from tomlkit.exceptions import TOMLKitError

    bom = text.startswith(BOM)
    body = text.removeprefix(BOM)
    crlf = line_end(body) == "\r\n"
    try:
        document = tomlkit.parse(body.replace("\r\n", "\n") if crlf else body)
        change(document, tomlkit)
        out = document.as_string()
    except (TOMLKitError, ValueError, TypeError, KeyError) as err:
        # tomlkit refuses some edits of valid files (a table inside an inline one)
        raise ConfigError(f"{path}: omh could not edit it in this form ({err}); make the "
                          "change by hand") from None
    return (BOM if bom else "") + (out.replace("\n", "\r\n") if crlf else out)
