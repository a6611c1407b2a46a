"""An indexed document: what recall ranks and prints, and the words it is found by.

Every note recall can return — a team note, a derived stub, the repository topic,
a local note — is one `Doc`: its metadata, and the content id of what it was made
from. `analyse` gives the words a note is indexed under; of a long text only its
first MAX_INDEXED characters count (`indexed_part`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final, NamedTuple

from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note, NoteHead
from omh_git_memory.recall import content_id
from omh_git_memory.recall.stubs import TOPIC_SOURCE, whole_document
from omh_git_memory.recall.tokens import without_links, words


class Doc(NamedTuple):
    """One indexed note: what recall ranks and prints.

    A named tuple rather than a frozen dataclass: loading an index makes one per
    document, and a tuple is made from the row the cache holds in one step (a
    dataclass's `__init__`, or filling its `__dict__`, took a third of loading a
    10,000-note index)."""

    layer: str
    key: str
    kind: str
    recorded: int  # date ordinal
    title: str
    links: tuple[str, ...]
    source: str  # content id: unchanged source, reusable analysis
    length: int  # words counted for length normalisation
    location: str
    problem: str | None = None  # why the file is not a usable note
    trigger: str | None = None  # the note's invalidated_by
    cites: str | None = None  # the files its Evidence cites, as written (expiry/citations.py)

    @property
    def derived(self) -> bool:
        """A stub or the repository topic: computed from the tree, never a file."""
        return content_id.is_derived(self.source)

    @property
    def is_stub(self) -> bool:
        return content_id.is_stub(self.source)

    @property
    def is_topic(self) -> bool:
        return content_id.is_topic(self.source)

    @property
    def is_team_file(self) -> bool:
        """A note written under `.omh/notes/` (in the index of a commit)."""
        return content_id.kind_of(self.source) is content_id.Kind.NOTE

    @property
    def content(self) -> content_id.ContentId:
        """What this document was made from (`source` taken apart)."""
        return content_id.ContentId.parse(self.source)

    def as_tuple(self) -> tuple[object, ...]:
        return tuple(self)

    @classmethod
    def from_tuple(cls, t: tuple[object, ...]) -> Doc:
        return cls(*t)  # type: ignore[arg-type]


def docs_from_tuples(rows: Iterable[tuple[object, ...] | None]) -> list[Doc | None]:
    """The documents `Doc.as_tuple` wrote (None for a removed slot), each equal to
    `Doc.from_tuple(row)`; a row of another length (another version) is a TypeError."""
    new, size = tuple.__new__, len(Doc._fields)
    out: list[Doc | None] = []
    for row in rows:
        if row is None:
            out.append(None)
        elif len(row) != size:
            raise TypeError("a document of another version")
        else:
            out.append(new(Doc, row))
    return out


def analyse(note: Note | NoteHead, document: str | None = None) -> Counter[str]:
    """The words recall matches a note on: what the note says, never the sentences
    omh writes into every derived note.

    - A written note: its text (title, sections, without `[[links]]` and
      frontmatter), plus the words of its key once more.
    - A stub: its title, its document's path and its Answers (the document's
      headings), plus the document's own text (`document`), measured to help
      (docs/recall.md).
    - The repository topic: its name and its facts.
    """
    if note.type == "stub" or note.source == TOPIC_SOURCE:
        if not isinstance(note, Note):
            raise TypeError("a stub or the topic is indexed by its sections: parse it whole")
        return _derived(note, document)
    # One text, one pass: a space between two parts splits no word, so the counts
    # (and their order) are those of the parts counted one after the other.
    return Counter(words(without_links(indexed_part(note.body)) + " "
                         + note.key.value.replace("/", " ")))


def _derived(note: Note, document: str | None) -> Counter[str]:
    """The words of a stub (with its `document`) or of the repository topic."""
    if note.type == "stub":
        answers = note.section("Answers")
        whole = whole_document(note.source)
        return Counter(words(" ".join((
            note.title, note.source.replace("/", " "),
            *(heading for heading in (answers.items if answers else ()) if heading != whole),
            without_links(indexed_part(document)) if document is not None else "",
        ))))
    terms = Counter(words(note.title))
    facts = note.section("Facts")
    terms.update(words(facts.text if facts else ""))
    return terms


# What recall indexes of one note's text, or of one document's: a note is a page of
# prose, and a pasted megabyte would cost every recall its tokenising while its
# words past the first pages add nothing a question finds (docs/recall.md).
MAX_INDEXED: Final = 1 << 16  # characters


def indexed_part(text: str) -> str:
    """The part of `text` recall indexes: its first MAX_INDEXED characters, cut at
    the last white space before them so that no word is indexed half."""
    if len(text) <= MAX_INDEXED:
        return text
    head = text[:MAX_INDEXED]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:cut] if cut > 0 else head


def doc_for(note: Note | NoteHead, layer: Layer, source: str, location: str,
            terms: Mapping[str, int]) -> Doc:
    return Doc(layer.value, note.key.value, note.type, note.recorded.toordinal(), note.title,
               note.links, source, sum(terms.values()), location, None, note.invalidated_by,
               note.field("cites") or None)
