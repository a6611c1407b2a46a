"""How many notes the store holds, counted by group — never listing titles.

The census rides in the `recall` tool's description and in `omh doctor`, so
its size must not grow with the store: at most a handful of groups, the rest
counted as `other`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from omh_git_memory.index import Doc

MAX_GROUPS: Final = 5  # named groups in a census; the rest are "other"
MAX_LABEL: Final = 24  # characters of a group's name


@dataclass(frozen=True)
class Census:
    total: int
    by_layer: dict[str, int]
    groups: list[tuple[str, int]]  # largest first, "other" last

    def sentence(self) -> str:
        """`412 notes (400 team, 12 local): 300 docs, 40 surprise, …, 12 other`."""
        if not self.total:
            return "0 notes"
        layers = ", ".join(f"{n} {layer}" for layer, n in self.by_layer.items())
        groups = ", ".join(f"{n} {name}" for name, n in self.groups)
        noun = "note" if self.total == 1 else "notes"
        return f"{self.total} {noun} ({layers}): {groups}"


def group_of(doc: Doc) -> str:
    """A note's group: its key's first segment, or its type for a one-segment key."""
    head, sep, _ = doc.key.partition("/")
    name = head if sep else doc.kind
    return name[:MAX_LABEL]


def take_census(docs: Iterable[Doc | None]) -> Census:
    usable = [d for d in docs if d is not None and not d.problem]
    by_layer = Counter(d.layer for d in usable)
    groups = Counter(group_of(d) for d in usable).most_common()
    named = groups[:MAX_GROUPS]
    rest = sum(n for _, n in groups[MAX_GROUPS:])
    if rest:
        named.append(("other", rest))
    ordered = {layer: by_layer[layer] for layer in ("team", "local") if by_layer[layer]}
    return Census(len(usable), ordered, named)
