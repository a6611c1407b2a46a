"""Counts in messages: `1 note`, `2 notes`, and the verb that agrees with them.

One helper for every surface (CLI lines, recall's tree, the MCP answer), so no
message reads "1 more notes" or "1 note still link to it".
"""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, in the plural unless `n` is 1: `count(1, "note")` is `1 note`.
    `plural` is for a noun that does not just take an `s`."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def agree(n: int, one: str, many: str) -> str:
    """The word that agrees with a count of `n`: `agree(1, "links", "link")`."""
    return one if n == 1 else many
