"""`remember`: turn what surprised a writer into a surprise note in the local layer.

The signature is the discipline: a writer with nothing to put in `expected`
has learned nothing worth recording, and `answers` (the questions the note
answers, in the words somebody would ask them) is what makes it findable.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from omh_git_memory.errors import InvalidKey, NoteRefused
from omh_git_memory.keys import Key, KeyTemplates, slug
from omh_git_memory.layers import Layer
from omh_git_memory.lint import note_refusals
from omh_git_memory.note import Note, NoteParseError, compose, render, with_field
from omh_git_memory.store import IfExists, LocalStore
from omh_git_memory.triggers import trigger_problem

_SENTENCE = re.compile(r"(.*?[.!?])(?=\s|$)")


@dataclass(frozen=True)
class Observation:
    expected: str
    observed: str
    evidence: str
    answers: Sequence[str]
    relates_to: Sequence[str] = ()
    invalidated_by: str | None = None
    source: str = "cli"
    recorded: dt.date | None = None


@dataclass(frozen=True)
class Remembered:
    key: Key
    layer: Layer
    path: str
    written: bool  # False when --if-exists skip found the key taken
    note: Note


def first_sentence(text: str) -> str:
    """Up to the first `.`, `!` or `?` that ends a sentence (followed by a space
    or the end), whitespace collapsed; the whole text when none does."""
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    return match.group(1) if match else flat


def build_surprise(obs: Observation, templates: KeyTemplates, today: dt.date) -> Note:
    """The note `obs` describes, or :class:`NoteRefused` saying what to fix."""
    for name, value, hint in (
        ("expected", obs.expected, "say what you thought would happen"),
        ("observed", obs.observed, "say what happened instead"),
        ("evidence", obs.evidence, "give the command, the error or the file that shows it"),
    ):
        if not value.strip():
            raise NoteRefused(f"`{name}` is empty; {hint}")
    answers = [a.strip() for a in obs.answers if a.strip()]
    if not answers:
        raise NoteRefused("`answers` is empty; a note nobody can find is a note nobody wrote")
    if not obs.source.strip() or "\n" in obs.source:
        raise NoteRefused("`source` must be one non-empty line saying who observed this")
    related: list[str] = []
    for target in obs.relates_to:
        try:
            key = Key(target.strip())
        except InvalidKey as err:
            raise NoteRefused(f"relates_to: {err}") from None
        if key.value not in related:
            related.append(key.value)
    fields = [
        ("key", ""),
        ("type", "surprise"),
        ("source", obs.source.strip()),
        ("recorded", (obs.recorded or today).isoformat()),
    ]
    if obs.invalidated_by:
        problem = trigger_problem(obs.invalidated_by.strip())
        if problem is not None:
            raise NoteRefused(f"invalidated_by: {problem}")
        fields.append(("invalidated_by", obs.invalidated_by.strip()))

    title = first_sentence(obs.observed)
    key_slug = slug(title)
    if not key_slug:
        raise NoteRefused(
            "the first sentence of `observed` has no letter or digit to derive a key from"
        )
    fields[0] = ("key", templates.expand("surprise", slug=key_slug).value)
    sections: list[tuple[str, str | Sequence[str]]] = [
        ("Expected", obs.expected),
        ("Observed", obs.observed),
        ("Evidence", obs.evidence),
        ("Answers", answers),
    ]
    if related:
        sections.append(("Related", [f"[[{k}]]" for k in related]))
    try:
        note = compose(fields, title, sections)
    except NoteParseError as err:
        raise NoteRefused(f"the note would not read back: {err}") from None
    refusals = note_refusals(note)
    if refusals:
        rule, _line, message = refusals[0]
        raise NoteRefused(f"{rule}: {message}")
    return note


def remember(
    store: LocalStore,
    obs: Observation,
    templates: KeyTemplates,
    if_exists: IfExists = IfExists.ERROR,
    today: dt.date | None = None,
    known_keys: Collection[str] | None = None,
) -> Remembered:
    """Write the note to the local layer (and only there: invariant 3).

    Strict mode is `known_keys` given: every `relates_to` must name a note that
    exists (one a link from the local layer reaches), so a writer cannot leave
    dangling links behind."""
    note = build_surprise(obs, templates, today or dt.date.today())
    if known_keys is not None:
        for target in note.links:
            if target not in known_keys:
                raise NoteRefused(
                    f"relates_to: {target} names no note in the store; link only to keys "
                    "that exist (recall finds them), or leave relates_to out"
                )

    def text_for(key: Key) -> str:
        # Under --if-exists suffix the file's key must name the key it lands at.
        return render(note if key == note.key else with_field(note, "key", key.value))

    store.create_root()  # may refuse: a moved clone's store is waiting to be adopted
    key, written = store.write(note.key, text_for, if_exists)
    final = note if key == note.key else with_field(note, "key", key.value)
    return Remembered(key, Layer.LOCAL, str(store.path_for(key)), written, final)
