"""Topic notes written by a person: one subject, filled in as far as it goes.

A topic has a title, any sections its writer chooses (free text), and a Related
list of `[[links]]`. Its key comes from the `topic` template (`{{slug}}` of the
title), as the repository topic's does. It is written to the local layer with
the same refusals as a surprise (:func:`remember.write_local`): a link to nothing
when strict, a key either layer holds.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from omh_git_memory.actions.remember import composed, plain_lines, refuse_a_day_to_come
from omh_git_memory.expiry.triggers import trigger_problem
from omh_git_memory.model.errors import InvalidKey, NoteRefused
from omh_git_memory.model.keys import Key, KeyTemplates, slug
from omh_git_memory.model.note import MAX_NOTE_BYTES, Note, char_problem
from omh_git_memory.model.secret_scan import without_secret_words

RELATED = "Related"
ANSWERS = "Answers"


@dataclass(frozen=True)
class TopicDraft:
    title: str
    sections: Sequence[tuple[str, str]] = ()  # (name, text), in the order written
    answers: Sequence[str] = ()
    relates_to: Sequence[str] = ()
    invalidated_by: str | None = None
    source: str = "cli"
    recorded: dt.date | None = None
    cites: str | None = None  # the files an Evidence section names (citations.py)

    def evidence(self) -> str | None:
        """The text of the section named Evidence (any case), if one is given."""
        return next((text for name, text in self.sections
                     if " ".join(name.split()).casefold() == "evidence"), None)


def _clean(name: str, value: str) -> str:
    text = plain_lines(value)
    problem = char_problem(text)
    if problem is not None:
        raise NoteRefused(f"{name} {problem[0]}; remove it and write the note again")
    return text


def build_topic(draft: TopicDraft, templates: KeyTemplates, today: dt.date) -> Note:
    """The topic note `draft` describes, or :class:`NoteRefused` saying what to fix.

    Like a surprise, it passes the reader's byte rules: line ends become LF and any
    other character a note may not hold is refused by where it was given."""
    refuse_a_day_to_come(draft.recorded, today)
    title = " ".join(_clean("the title", draft.title).split())
    if not title:
        raise NoteRefused("the title is empty; a topic is named by its title (--title)")
    key_slug = without_secret_words(slug(title))  # a token stays out of the key
    if not key_slug:
        raise NoteRefused("the title has no letter or digit to derive a key from"
                          + (" once its token is left out (a key may not carry one)"
                             if slug(title) else ""))
    source = _clean("`source`", draft.source).strip()
    if not source or "\n" in source:
        raise NoteRefused("`source` must be one non-empty line saying who observed this")

    sections: list[tuple[str, str | Sequence[str]]] = []
    seen: set[str] = set()
    for raw_name, raw_text in draft.sections:
        name = " ".join(_clean("a section's name", raw_name).split())
        if not name:
            raise NoteRefused("a section has no name: write --section NAME=TEXT")
        if name.startswith("#"):
            raise NoteRefused(f"section name {name!r} starts with `#`; give the name alone")
        if name.casefold() == RELATED.casefold():
            raise NoteRefused("Related holds links only: give each one with --relates-to KEY")
        if name.casefold() == ANSWERS.casefold():
            raise NoteRefused("Answers holds a list of questions: give each one with --answers")
        if name.casefold() in seen:
            raise NoteRefused(f"section {name!r} is given twice; give each section once")
        seen.add(name.casefold())
        text = _clean(f"section {name!r}", raw_text).strip("\n")
        if not text.strip():
            raise NoteRefused(f"section {name!r} is empty; say something or leave it out")
        sections.append((name, text))
    answers = [a.strip() for a in (_clean("`answers`", a) for a in draft.answers) if a.strip()]
    if answers:
        sections.append((ANSWERS, answers))
    related: list[str] = []
    for target in draft.relates_to:
        try:
            key = Key(_clean("relates_to", target).strip())
        except InvalidKey as err:
            raise NoteRefused(f"relates_to: {err}") from None
        if key.value not in related:
            related.append(key.value)
    if related:
        sections.append((RELATED, [f"[[{k}]]" for k in related]))

    fields = [
        ("key", templates.expand("topic", slug=key_slug).value),
        ("type", "topic"),
        ("source", source),
        ("recorded", (draft.recorded or today).isoformat()),
    ]
    if draft.invalidated_by:
        trigger = _clean("invalidated_by", draft.invalidated_by).strip()
        problem = trigger_problem(trigger)
        if problem is not None:
            raise NoteRefused(f"invalidated_by: {problem}")
        fields.append(("invalidated_by", trigger))
    if draft.cites:
        fields.append(("cites", draft.cites))
    size = len(title.encode("utf-8")) + sum(
        len(str(v).encode("utf-8")) for _, v in sections)
    if size > MAX_NOTE_BYTES:
        raise NoteRefused(f"the note would hold about {size} bytes of text; a note holds at "
                          f"most {MAX_NOTE_BYTES}: keep the topic to what matters, name files "
                          "for the rest")
    return composed(fields, title, sections)
