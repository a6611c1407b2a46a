"""The inverted index of a snapshot: word → the document slots holding it, and counts.

The postings are one blob of uint32 arrays and a table of where each word's
arrays start, so a query decodes only its words. An incremental build patches
them: `Changes` gathers the new arrays of every word a removed or an added
document touches, and `Postings.patched` applies them.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Mapping

# A word's postings: its document slots and its counts, each the bytes of uint32s.
Pair = tuple[bytes | bytearray | memoryview, bytes | bytearray | memoryview]


class Postings:
    """Word → (document slots, counts), stored as one blob of uint32 arrays and a
    table of where each word's arrays start, so a query decodes only its words."""

    def __init__(self, table: dict[str, tuple[int, int]], blob: bytes | bytearray) -> None:
        self.table = table  # word -> (byte offset, number of postings)
        self.blob = blob

    @classmethod
    def build(cls, pairs: Mapping[str, tuple[bytes | bytearray, bytes | bytearray]]
              ) -> Postings:
        table: dict[str, tuple[int, int]] = {}
        chunks: list[bytes | bytearray] = []
        offset = 0
        for term, (slots, counts) in pairs.items():
            table[term] = (offset, len(slots) // 4)
            chunks += (slots, counts)
            offset += len(slots) + len(counts)
        return cls(table, b"".join(chunks))

    def __contains__(self, term: str) -> bool:
        return term in self.table

    def raw(self, term: str) -> tuple[bytes | bytearray, bytes | bytearray]:
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

    def pairs(self) -> dict[str, tuple[bytes | bytearray, bytes | bytearray]]:
        return {term: self.raw(term) for term in self.table}

    def patched(self, changes: Mapping[str, Pair | None] | Iterable[tuple[str, Pair | None]]
                ) -> Postings:
        """These postings with `changes` applied (None removes a word). Changed
        words are appended to the blob; once over half of it is dead space left by
        earlier versions, it is rewritten compactly."""
        table = dict(self.table)
        blob = bytearray(self.blob)  # grown in place: the blob is never held twice
        for term, pair in changes.items() if isinstance(changes, Mapping) else changes:
            if pair is None:
                table.pop(term, None)
                continue
            table[term] = (len(blob), len(pair[0]) // 4)
            blob += pair[0]
            blob += pair[1]
        result = Postings(table, blob)
        live = 8 * sum(count for _, count in table.values())
        return Postings.build(result.pairs()) if live * 2 < len(result.blob) else result


EMPTY = Postings({}, b"")


class Changes:
    """The new postings of every word that removed and added documents touch,
    gathered a document at a time: a build keeps each document's words only until
    they are added here (at 100,000 notes, a dict of words per document held to
    the end cost some 500 MB)."""

    def __init__(self, postings: Postings) -> None:
        self.postings = postings
        self.touched: dict[str, tuple[array[int], array[int]]] = {}

    def _arrays(self, term: str) -> tuple[array[int], array[int]]:
        pair = self.touched.get(term)
        if pair is None:
            pair = self.touched[term] = self.postings.get(term) or (array("I"), array("I"))
        return pair

    def add(self, slot: int, terms: dict[str, int]) -> None:
        """`slot`'s words; each slot added is higher than any before it and any in
        the postings, so every array stays sorted."""
        touched = self.touched
        for term, tf in terms.items():  # a million postings at 10k notes: few calls each
            pair = touched.get(term)
            if pair is None:
                pair = self._arrays(term)
            pair[0].append(slot)
            pair[1].append(tf)

    def remove(self, slot: int, terms: dict[str, int]) -> None:
        for term in terms:
            slots, counts = self._arrays(term)
            at = bisect.bisect_left(slots, slot)
            if at < len(slots) and slots[at] == slot:
                del slots[at]
                del counts[at]

    def result(self) -> Iterator[tuple[str, Pair | None]]:
        """Each touched word's new postings (None when it is left in no document), in
        the order the words were first touched; each word's arrays are let go once
        the caller has taken them (a blob of 100,000 notes is some 90 MB)."""
        touched = self.touched
        for term in list(touched):
            slots, counts = touched.pop(term)
            yield term, (memoryview(slots).cast("B"), memoryview(counts).cast("B")) \
                if slots else None
