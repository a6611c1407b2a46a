"""Content ids: what an indexed note was made from, as one short string.

The index keeps a note's content id in `Doc.source`; a document whose id is
unchanged needs no new analysis (nor a new embedding). The forms:

- `n:<blob>:<path>` — a team note file, by its blob id and path in the tree;
- `s:<blob>:<path>` — the stub of the Markdown document at `<path>`;
- `t:<digest>` — the repository topic, by a digest of everything it is made from;
- `local` — a note in the local store (analysed afresh on every load).

This module is the only one that builds or takes these strings apart.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib


class Kind(enum.Enum):
    NOTE = "n"
    STUB = "s"
    TOPIC = "t"
    LOCAL = "local"


LOCAL = Kind.LOCAL.value


@dataclasses.dataclass(frozen=True, slots=True)
class ContentId:
    kind: Kind
    blob_id: str = ""  # a note's or a document's blob (NOTE, STUB)
    path: str = ""  # its path in the tree (NOTE, STUB)

    @classmethod
    def parse(cls, text: str) -> ContentId:
        """The id `text` spells; ValueError when it spells none."""
        if text == LOCAL:
            return cls(Kind.LOCAL)
        head, _, rest = text.partition(":")
        if head == Kind.TOPIC.value and rest:
            return cls(Kind.TOPIC, rest)
        if head in (Kind.NOTE.value, Kind.STUB.value):
            blob_id, sep, path = rest.partition(":")
            if sep and blob_id and path:
                return cls(Kind(head), blob_id, path)
        raise ValueError(f"not a content id: {text!r}")


def note_id(blob_id: str, path: str) -> str:
    return f"{Kind.NOTE.value}:{blob_id}:{path}"


def stub_id(blob_id: str, path: str) -> str:
    return f"{Kind.STUB.value}:{blob_id}:{path}"


def topic_id(identity: str) -> str:
    """The topic's id: a digest of what it is derived from (`identity`)."""
    return f"{Kind.TOPIC.value}:{hashlib.sha1(identity.encode()).hexdigest()}"


def kind_of(text: str) -> Kind | None:
    """The kind of the id `text`, from its head alone (cheap: ranking asks often)."""
    if text == LOCAL:
        return Kind.LOCAL
    head = text[:2]
    return _KINDS.get(head)


_KINDS = {f"{kind.value}:": kind for kind in (Kind.NOTE, Kind.STUB, Kind.TOPIC)}


def is_stub(text: str) -> bool:
    return text[:2] == "s:"


def is_topic(text: str) -> bool:
    return text[:2] == "t:"


def is_derived(text: str) -> bool:
    """A stub or the topic: computed from the tree, never a file."""
    return text[:2] in ("s:", "t:")
