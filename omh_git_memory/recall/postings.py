"""The inverted index of a snapshot: word → the document slots holding it, and counts.

The postings are one blob of uint32 arrays and a table of where each word's
arrays start, so a query decodes only its words. An incremental build patches
them: `changes_for` gives the new arrays of every word a removed or an added
document touches, and `Postings.patched` applies them.
"""

from __future__ import annotations

import bisect
from array import array


class Postings:
    """Word → (document slots, counts), stored as one blob of uint32 arrays and a
    table of where each word's arrays start, so a query decodes only its words."""

    def __init__(self, table: dict[str, tuple[int, int]], blob: bytes) -> None:
        self.table = table  # word -> (byte offset, number of postings)
        self.blob = blob

    @classmethod
    def build(cls, pairs: dict[str, tuple[bytes, bytes]]) -> Postings:
        table: dict[str, tuple[int, int]] = {}
        chunks: list[bytes] = []
        offset = 0
        for term, (slots, counts) in pairs.items():
            table[term] = (offset, len(slots) // 4)
            chunks += (slots, counts)
            offset += len(slots) + len(counts)
        return cls(table, b"".join(chunks))

    def __contains__(self, term: str) -> bool:
        return term in self.table

    def raw(self, term: str) -> tuple[bytes, bytes]:
        offset, count = self.table[term]
        middle = offset + 4 * count
        return self.blob[offset:middle], self.blob[middle : middle + 4 * count]

    def get(self, term: str) -> tuple[array[int], array[int]] | None:
        if term not in self.table:
            return None
        slots, counts = self.raw(term)
        a, b = array("I"), array("I")
        a.frombytes(slots)
        b.frombytes(counts)
        return a, b

    def pairs(self) -> dict[str, tuple[bytes, bytes]]:
        return {term: self.raw(term) for term in self.table}

    def patched(self, changes: dict[str, tuple[bytes, bytes] | None]) -> Postings:
        """These postings with `changes` applied (None removes a word). Changed
        words are appended to the blob; once over half of it is dead space left by
        earlier versions, it is rewritten compactly."""
        table = dict(self.table)
        chunks = [self.blob]
        offset = len(self.blob)
        for term, pair in changes.items():
            if pair is None:
                table.pop(term, None)
                continue
            table[term] = (offset, len(pair[0]) // 4)
            chunks += pair
            offset += len(pair[0]) + len(pair[1])
        result = Postings(table, b"".join(chunks))
        live = 8 * sum(count for _, count in table.values())
        return Postings.build(result.pairs()) if live * 2 < len(result.blob) else result


EMPTY = Postings({}, b"")


def changes_for(postings: Postings, removed: dict[int, dict[str, int]],
           added: dict[int, dict[str, int]]) -> dict[str, tuple[bytes, bytes] | None]:
    """The new postings of every word `removed` or `added` slots touch (None when a
    word is left in no document). Added slots are higher than any existing one, so
    every array stays sorted."""
    touched: dict[str, tuple[array[int], array[int]]] = {}

    def arrays(term: str) -> tuple[array[int], array[int]]:
        if term not in touched:
            touched[term] = postings.get(term) or (array("I"), array("I"))
        return touched[term]

    for slot, terms in removed.items():
        for term in terms:
            slots, counts = arrays(term)
            at = bisect.bisect_left(slots, slot)
            if at < len(slots) and slots[at] == slot:
                del slots[at]
                del counts[at]
    for slot in sorted(added):  # a million postings at 10k notes: no call per posting
        for term, tf in added[slot].items():
            pair = touched.get(term)
            if pair is None:
                pair = arrays(term)
            pair[0].append(slot)
            pair[1].append(tf)
    return {term: (slots.tobytes(), counts.tobytes()) if slots else None
            for term, (slots, counts) in touched.items()}
