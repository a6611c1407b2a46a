"""`invalidated_by`: the closed set of triggers omh can evaluate itself.

Each kind is one registry entry: how it is written, what makes an argument
unusable, how it is evaluated against facts git holds (:class:`Facts`), and how
a writer's shorthand is pinned (`file:<path>` → `file:<path>@<blob id>`,
`image:current` → `image:<digest>`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Protocol


class Facts(Protocol):
    """What the repository at HEAD says, as the triggers need it."""

    def blob_at(self, path: str) -> str | None: ...
    def recipe_digest(self) -> str | None: ...
    def recipe_files(self) -> tuple[str, ...]: ...
    def base_month(self) -> str | None: ...
    def defines(self, symbol: str) -> bool | None: ...  # None: no file of a known language


class State(StrEnum):
    FRESH = "fresh"
    STALE = "stale"
    UNKNOWN = "cannot tell"


@dataclass(frozen=True)
class Verdict:
    state: State
    reason: str


@dataclass(frozen=True)
class TriggerKind:
    name: str
    shape: str  # how it is written, for messages and docs
    problem: Callable[[str], str | None]  # why an argument is unusable, or None
    evaluate: Callable[[str, Facts], Verdict]
    pin: Callable[[str, Facts], str] | None = None  # the shorthand's pinned argument


class PinError(ValueError):
    """A shorthand that cannot be pinned; the message says why."""


_HEX = re.compile(r"[0-9a-f]{7,64}")
# A name, or names joined by `.` or `::` (`a.b`, `A::b`): no segment may be empty,
# since the last one is what is looked for.
_SYMBOL = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::)[A-Za-z_$][A-Za-z0-9_$]*)*")
_MONTH = re.compile(r"(\d{4})-(\d{2})")


def _split_file(arg: str) -> tuple[str, str]:
    path, sep, blob = arg.rpartition("@")
    return (path, blob) if sep else (arg, "")


def _path_problem(path: str) -> str | None:
    if not path or path.startswith("/") or "\\" in path:
        return f"path {path!r} must be relative to the repository root, with `/` separators"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"path {path!r} has an empty, `.` or `..` segment"
    return None


def _file_problem(arg: str) -> str | None:
    path, blob = _split_file(arg)
    if not blob:
        return "it names no blob id; write file:<path> and omh pins the current one"
    if not _HEX.fullmatch(blob):
        return f"blob id {blob!r} is not a hexadecimal git object id"
    return _path_problem(path)


def _file_evaluate(arg: str, facts: Facts) -> Verdict:
    path, blob = _split_file(arg)
    now = facts.blob_at(path)
    if now is None:
        return Verdict(State.STALE, f"{path} is gone from HEAD")
    if not now.startswith(blob):
        return Verdict(State.STALE, f"{path} changed: {blob[:12]} → {now[:12]}")
    return Verdict(State.FRESH, f"{path} unchanged")


def _file_pin(arg: str, facts: Facts) -> str:
    path, blob = _split_file(arg)
    problem = _path_problem(path)
    if problem is not None:
        raise PinError(problem)
    now = facts.blob_at(path)
    if now is None:
        raise PinError(f"{path} is not a file in HEAD; commit it first, or name one that is")
    if blob and not now.startswith(blob):
        raise PinError(f"{path} at HEAD is {now[:12]}, not {blob}; write file:{path} to pin HEAD's")
    return f"{path}@{now}"


def _image_problem(arg: str) -> str | None:
    if arg == "current":
        return "image:current is resolved when the note is written; it cannot be stored"
    if not _HEX.fullmatch(arg):
        return f"digest {arg!r} is not hexadecimal"
    return None


def _image_evaluate(arg: str, facts: Facts) -> Verdict:
    now = facts.recipe_digest()
    if now is None:
        return Verdict(State.UNKNOWN, "no container recipe in HEAD (looked for "
                       f"{', '.join(facts.recipe_files())})")
    if not now.startswith(arg):
        return Verdict(State.STALE, f"the container recipe changed: {arg[:12]} → {now[:12]}")
    return Verdict(State.FRESH, "the container recipe is unchanged")


def _image_pin(arg: str, facts: Facts) -> str:
    if arg != "current" and _HEX.fullmatch(arg):
        return arg
    if arg != "current":
        raise PinError(f"image:{arg} is neither image:current nor a digest")
    now = facts.recipe_digest()
    if now is None:
        raise PinError("image:current needs a container recipe in HEAD; none of "
                       f"{', '.join(facts.recipe_files())} is there ([stale] image_recipe)")
    return now


def _base_problem(arg: str) -> str | None:
    match = _MONTH.fullmatch(arg)
    if match is None or not 1 <= int(match.group(2)) <= 12:
        return f"{arg!r} is not a month written YYYY-MM"
    return None


def _base_evaluate(arg: str, facts: Facts) -> Verdict:
    base = facts.base_month()
    if base is None:
        return Verdict(State.UNKNOWN, "no base month is configured ([stale] base in "
                       ".omh/memory.toml)")
    if base > arg:  # YYYY-MM compares as text in calendar order
        return Verdict(State.STALE, f"the base moved from {arg} to {base}")
    return Verdict(State.FRESH, f"the base is still {base}")


def _symbol_problem(arg: str) -> str | None:
    if not _SYMBOL.fullmatch(arg):
        return f"{arg!r} is not an identifier"
    return None


def _symbol_evaluate(arg: str, facts: Facts) -> Verdict:
    found = facts.defines(arg)
    if found is None:
        return Verdict(State.UNKNOWN, "no file of a language omh can read definitions in "
                       "(Python, Rust, Go, JavaScript/TypeScript, C/C++, Java)")
    if not found:
        return Verdict(State.STALE, f"no definition of {arg} is left in HEAD")
    return Verdict(State.FRESH, f"{arg} is still defined")


TRIGGERS: Final[dict[str, TriggerKind]] = {
    kind.name: kind
    for kind in (
        TriggerKind("file", "file:<path>@<blob id>", _file_problem, _file_evaluate, _file_pin),
        TriggerKind("image", "image:<digest>", _image_problem, _image_evaluate, _image_pin),
        TriggerKind("base", "base:<YYYY-MM>", _base_problem, _base_evaluate),
        TriggerKind("symbol", "symbol:<name>", _symbol_problem, _symbol_evaluate),
    )
}


def _kind(value: str) -> tuple[TriggerKind | None, str]:
    name, sep, arg = value.partition(":")
    return (TRIGGERS.get(name) if sep else None), arg


def trigger_problem(value: str) -> str | None:
    """Why omh could not evaluate `value`, or None when it can."""
    kind, arg = _kind(value)
    if kind is None:
        shapes = ", ".join(k.shape for k in TRIGGERS.values())
        return f"{value!r} is not a trigger omh can evaluate; use one of {shapes}"
    return kind.problem(arg)


def evaluate(value: str, facts: Facts) -> Verdict:
    kind, arg = _kind(value)
    problem = trigger_problem(value)
    if kind is None or problem is not None:
        return Verdict(State.UNKNOWN, f"unevaluatable: {problem}")
    return kind.evaluate(arg, facts)


# What a writer types: the shorthands that pin() resolves, not the stored forms.
WRITER_SHAPES: Final = "file:<path>, image:current, base:<YYYY-MM>, symbol:<name>"


def pin(value: str, facts: Facts) -> str:
    """`value` with a writer's shorthand resolved against HEAD (others unchanged), or
    PinError when it is no kind of trigger at all."""
    kind, arg = _kind(value.strip())
    if kind is None:
        raise PinError(f"{value.strip()!r} is not a trigger omh can evaluate; use one of "
                       f"{WRITER_SHAPES}")
    if kind is not None and kind.pin is not None:
        return f"{kind.name}:{kind.pin(arg, facts)}"
    return value.strip()
