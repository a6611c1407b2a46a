"""The notes of every layer as one graph: who links to whom.

A link `[[k]]` resolves, in each layer :func:`reachable_layers` allows from the
linking note's layer, to the notes whose own `key` is `k`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from omh_git_memory.model.layers import Layer, reachable_layers
from omh_git_memory.model.note import Note
from omh_git_memory.stores.reading import StoredNote

NoteId = tuple[Layer, str]


@dataclass
class Graph:
    entries: list[StoredNote]
    # Keys of the derived team notes (stubs, the repo topic): linkable, never files.
    derived: frozenset[str] = frozenset()
    # Documents whose stub key another document's stub has: (key, path, kept by).
    clashes: tuple[tuple[str, str, str], ...] = ()
    # Derived notes whose key a written team note or another derived note holds as
    # well (key, what the derived note is, what else holds the key): both are listed
    # and found, so lint names them (DuplicateKey).
    shadows: tuple[tuple[str, str, str], ...] = ()
    _claims: dict[NoteId, list[StoredNote]] = field(init=False)

    def __post_init__(self) -> None:
        self._claims = defaultdict(list)
        for entry in self.entries:
            if entry.note is not None:
                self._claims[(entry.layer, entry.note.key.value)].append(entry)

    @classmethod
    def of(cls, *layers: Iterable[StoredNote], derived: Iterable[str] = (),
           clashes: Iterable[tuple[str, str, str]] = (),
           shadows: Iterable[tuple[str, str, str]] = ()) -> Graph:
        return cls([entry for layer in layers for entry in layer], frozenset(derived),
                   tuple(clashes), tuple(shadows))

    @property
    def readable(self) -> list[tuple[StoredNote, Note]]:
        return [(e, e.note) for e in self.entries if e.note is not None]

    def claimants(self, layer: Layer, key: str) -> list[StoredNote]:
        """The files of `layer` whose frontmatter claims `key`."""
        return list(self._claims.get((layer, key), ()))

    def resolve(self, target: str, source: Layer) -> list[StoredNote]:
        """What `[[target]]` written in a note of layer `source` reaches."""
        return [e for layer in reachable_layers(source) for e in self.claimants(layer, target)]

    def reaches(self, target: str, source: Layer) -> bool:
        """Whether `[[target]]` in a note of layer `source` reaches any note,
        written or derived."""
        if self.resolve(target, source):
            return True
        return Layer.TEAM in reachable_layers(source) and target in self.derived

    def inbound(self) -> dict[NoteId, list[NoteId]]:
        """For each note, the distinct notes linking to it."""
        links: dict[NoteId, list[NoteId]] = defaultdict(list)
        for entry, note in self.readable:
            here = (entry.layer, note.key.value)
            for target in note.links:
                for reached in self.resolve(target, entry.layer):
                    there = (reached.layer, target)
                    if there != here and here not in links[there]:
                        links[there].append(here)
        return links
