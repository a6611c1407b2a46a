"""`invalidated_by`: the closed set of triggers omh can evaluate itself.

Each kind is one registry entry. This module knows each trigger's shape; the
`stale` command evaluates them against facts git holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class TriggerKind:
    name: str
    shape: str  # how it is written, for messages and docs
    problem: Callable[[str], str | None]  # why an argument is unusable, or None


_HEX = re.compile(r"[0-9a-f]{7,64}")
_SYMBOL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.:]*")
_MONTH = re.compile(r"(\d{4})-(\d{2})")


def _file(arg: str) -> str | None:
    path, sep, blob = arg.rpartition("@")
    if not sep:
        return "it names no blob id; write file:<path> and omh pins the current one"
    if not path or path.startswith("/") or "\\" in path:
        return f"path {path!r} must be relative to the repository root, with `/` separators"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"path {path!r} has an empty, `.` or `..` segment"
    if not _HEX.fullmatch(blob):
        return f"blob id {blob!r} is not a hexadecimal git object id"
    return None


def _image(arg: str) -> str | None:
    if arg == "current":
        return "image:current is resolved when the note is written; it cannot be stored"
    if not _HEX.fullmatch(arg):
        return f"digest {arg!r} is not hexadecimal"
    return None


def _base(arg: str) -> str | None:
    match = _MONTH.fullmatch(arg)
    if match is None or not 1 <= int(match.group(2)) <= 12:
        return f"{arg!r} is not a month written YYYY-MM"
    return None


def _symbol(arg: str) -> str | None:
    if not _SYMBOL.fullmatch(arg):
        return f"{arg!r} is not an identifier"
    return None


TRIGGERS: Final[dict[str, TriggerKind]] = {
    kind.name: kind
    for kind in (
        TriggerKind("file", "file:<path>@<blob id>", _file),
        TriggerKind("image", "image:<digest>", _image),
        TriggerKind("base", "base:<YYYY-MM>", _base),
        TriggerKind("symbol", "symbol:<name>", _symbol),
    )
}


def trigger_problem(value: str) -> str | None:
    """Why omh could not evaluate `value`, or None when it can."""
    name, sep, arg = value.partition(":")
    kind = TRIGGERS.get(name) if sep else None
    if kind is None:
        shapes = ", ".join(k.shape for k in TRIGGERS.values())
        return f"{value!r} is not a trigger omh can evaluate; use one of {shapes}"
    return kind.problem(arg)
