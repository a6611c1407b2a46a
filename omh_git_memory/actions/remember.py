"""`remember`: turn what surprised a writer into a surprise note in the local layer.

The signature is the discipline: a writer with nothing to put in `expected`
has learned nothing worth recording, and `answers` (the questions the note
answers, in the words somebody would ask them) is what makes it findable.

A key is taken when either layer holds it — a written team note, a derived stub
or the repository topic count as much as a local note — so a local note never
shadows a team one (`rm` would then need `--layer` and promote would refuse).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from omh_git_memory.actions.lint import note_refusals
from omh_git_memory.actions.near_duplicate import fold_command
from omh_git_memory.expiry.triggers import trigger_problem
from omh_git_memory.model.errors import (
    InvalidKey,
    KeyConflict,
    KeyTaken,
    NoteParseError,
    NoteRefused,
    RepeatsANote,
    StoreError,
)
from omh_git_memory.model.keys import Key, KeyTemplates, shell_word, slug
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import (
    MAX_NOTE_BYTES,
    Note,
    char_problem,
    compose,
    render,
    with_field,
)
from omh_git_memory.model.secret_scan import SecretHit, find_secrets, without_secret_words
from omh_git_memory.recall.document import Doc
from omh_git_memory.stores.store import IfExists, LocalStore
from omh_git_memory.stores.team import NOTES_DIR

if TYPE_CHECKING:
    from omh_git_memory.actions.near_duplicate import Pair



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
    cites: str | None = None  # the files Evidence names, with their blob ids (citations.py)


@dataclass(frozen=True)
class Remembered:
    key: Key
    layer: Layer
    path: str
    written: bool  # False when --if-exists skip found the key taken
    note: Note
    # Notes of the store this one says again (near_duplicate.repeated), most alike first.
    repeats: tuple[Pair, ...] = ()
    # Lines of the note written that look like a secret: it stays local, and promote
    # refuses it until they are removed, so the writer is told at once.
    secrets: tuple[SecretHit, ...] = ()
    # Links to keys no note holds yet: kept (a key is known before its note exists).
    waiting: tuple[str, ...] = ()

    @property
    def cited(self) -> tuple[str, ...]:
        """The files the note cites (`cites`): recall marks it when they change."""
        from omh_git_memory.expiry.citations import parse_cites

        return tuple(c.path for c in parse_cites(self.note.field("cites")))

    def secret_warnings(self, edit: str) -> list[str]:
        """One sentence per line that looks like a secret; `edit` is how the reader
        changes the note (a command, or the tool's argument)."""
        return [f"line {hit.line} of {self.layer}/{self.key} looks like {hit.kind}: the "
                f"note stays local, and promote refuses it until that line is gone ({edit})"
                for hit in self.secrets]


@dataclass(frozen=True)
class TeamKeys:
    """The keys the team layer holds at HEAD: a written note's (its own key and its
    path's) → its path; a derived note's → the document it derives from."""

    written: Mapping[str, str]
    derived: Mapping[str, str]

    @classmethod
    def of(cls, docs: Iterable[Doc | None]) -> TeamKeys:
        """From the indexed documents of HEAD (:meth:`Workspace.snapshot`)."""
        written: dict[str, str] = {}
        derived: dict[str, str] = {}
        for doc in docs:
            if doc is None or doc.layer != Layer.TEAM.value:
                continue
            if doc.is_team_file:
                path = doc.content.path
                written[doc.key] = path
                written[path[len(NOTES_DIR) + 1:].removesuffix(".md")] = path
            elif doc.is_stub:
                derived[doc.key] = doc.content.path
            else:
                derived[doc.key] = TOPIC_WHERE
        return cls(written, derived)

    def holds(self, key: Key) -> bool:
        return key.value in self.written or key.value in self.derived


# Where the repository topic's text comes from, as a refusal names it.
TOPIC_WHERE = "the repository's files (the repository topic; its key is [repo] name in " \
    ".omh/memory.toml)"


def _key_taken(key: Key, layer: Layer, where: str, derived: bool = False,
              if_exists: IfExists = IfExists.ERROR) -> KeyTaken:
    """The refusal of a key `layer` holds, worded for the command line: what to run
    instead, given the `--if-exists` asked for."""
    if layer is Layer.LOCAL:
        said = (f"note {key} already exists in the local layer; update it instead: "
                f"`omh memory update {shell_word(key)}` changes the sections you give (or "
                "run the command again with --if-exists override to replace it, or "
                f"--if-exists suffix to keep both; `omh memory show {shell_word(key)}` "
                "shows it)")
        return KeyTaken(said, key, layer, where, derived)
    beside = "to record something new beside it, choose --if-exists suffix"
    if if_exists is IfExists.OVERRIDE:
        head = (f"--if-exists override would hide team/{key} behind a local note of the "
                "same key, so it is refused")
    elif derived and where == TOPIC_WHERE:
        head = f"{key} is the repository topic, a derived team note"
    elif derived:
        head = f"{key} is a derived team note (the stub of {where})"
    else:
        head = f"note {key} already exists in the team layer ({where})"
    if derived:
        said = f"{head}; its text comes from {where}: edit that to change it; {beside}"
    else:
        said = (f"{head}; to change it, `omh memory update {shell_word(key)}` commits the "
                f"change (or edit {where} and commit it); {beside}")
    return KeyTaken(said, key, layer, where, derived)


def _repeats_a_note(repeats: Sequence[Pair]) -> RepeatsANote:
    """The refusal of `remember --strict` when the new note says what `repeats`
    (most alike first) already say."""
    first = repeats[0].original
    return RepeatsANote(
        f"{repeated_line(repeats[0])}, so nothing was written (--strict): "
        f"{fold_command(first)}; run without --strict to write the new note anyway", repeats)


def repeated_line(pair: Pair) -> str:
    """`looks like team/surprise/x (team · 2026-10-02, 91% alike)`."""
    other = pair.original
    return (f"the note looks like {other.key} ({other.layer.value} · "
            f"{other.recorded.isoformat()}, {pair.similarity:.0f}% alike)")


def single_trigger(values: Sequence[str] | None) -> str | None:
    """The one trigger among `values` (an option a command line may repeat), or
    :class:`NoteRefused`: a note holds one `invalidated_by`, and taking the last
    of several would drop the others without a word."""
    given = [v for v in values or () if v.strip()]
    if len(given) > 1:
        listed = ", ".join(given)
        raise NoteRefused(
            f"--invalidated-by was given {len(given)} times ({listed}); a note holds one "
            "trigger: give the one whose change makes the note stale"
        )
    return given[0] if given else None


def first_sentence(text: str) -> str:
    """Up to the first `.`, `!` or `?` that ends a sentence, whitespace collapsed;
    the whole text when none does. A mark ends a sentence when the text ends there
    or a space follows it, except a `.` that closes an abbreviation of the middle of
    a sentence (`e.g.`, `i.e.`, `cf.`, `vs.`) or that a word in lower case follows
    (`etc. and`, `v2. then`): a file name or a version (`poetry.lock`, `1.2.3`)
    has no space after its dots and never ends one."""
    flat = " ".join(text.split())
    for mark in _END.finditer(flat):
        end = mark.end()
        if mark.group() == "." and end < len(flat):
            word = flat[:end].rsplit(" ", 1)[-1].lower().lstrip("([\"'")
            if word in _MID_SENTENCE or flat[end + 1:end + 2].islower():
                continue
        return flat[:end]
    return flat


_END = re.compile(r"[.!?](?=\s|$)")
# Abbreviations a sentence goes on after, whatever follows them.
_MID_SENTENCE: Final = frozenset({"e.g.", "i.e.", "cf.", "vs.", "viz.", "approx.", "incl.",
                                  "esp.", "resp.", "w.r.t."})


def plain_lines(text: str) -> str:
    """Line ends as a note writes them: CRLF and a lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _refuse_bad_chars(name: str, value: str) -> None:
    problem = char_problem(value)
    if problem is not None:
        what, _line = problem
        raise NoteRefused(f"`{name}` {what}; remove it and write the note again")


def _normalised(obs: Observation) -> Observation:
    """`obs` with its line ends made LF, or NoteRefused naming an argument that holds
    a character no note may hold (the byte rules of note.decode)."""
    texts = {name: plain_lines(getattr(obs, name)) for name in ("expected", "observed",
                                                                 "evidence", "source")}
    answers = [plain_lines(a) for a in obs.answers]
    for name, value in texts.items():
        _refuse_bad_chars(name, value)
    for value in answers:
        _refuse_bad_chars("answers", value)
    for value in obs.relates_to:
        _refuse_bad_chars("relates_to", value)
    if obs.invalidated_by is not None:
        _refuse_bad_chars("invalidated_by", obs.invalidated_by)
    return Observation(
        expected=texts["expected"], observed=texts["observed"], evidence=texts["evidence"],
        answers=answers, relates_to=obs.relates_to, invalidated_by=obs.invalidated_by,
        source=texts["source"], recorded=obs.recorded, cites=obs.cites,
    )


def refuse_a_day_to_come(day: dt.date | None, today: dt.date) -> None:
    """A note records a day that has happened. Today is the later of `today` (the
    writer's local date) and the date in UTC, so no time zone refuses its own today."""
    utc_today = dt.datetime.now(dt.UTC).date()
    if day is not None and day > max(today, utc_today):
        raise NoteRefused(
            f"`recorded` {day.isoformat()} is after today ({utc_today.isoformat()} in UTC); "
            "give the day it happened, or leave it out for today"
        )


def build_surprise(obs: Observation, templates: KeyTemplates, today: dt.date) -> Note:
    """The note `obs` describes, or :class:`NoteRefused` saying what to fix.

    The note always passes the byte rules a reader applies (note.encode): line
    ends are made LF, and any other character a note may not hold is refused by
    the argument's name, as is a note over MAX_NOTE_BYTES."""
    obs = _normalised(obs)
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
    refuse_a_day_to_come(obs.recorded, today)
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
    if obs.cites:
        fields.append(("cites", obs.cites))

    title = first_sentence(obs.observed)
    # A token in the title is left out of the key (the team path and commit subject
    # once promoted); the text keeps it, and promote refuses it there.
    key_slug = without_secret_words(slug(title))
    if not key_slug:
        raise NoteRefused(
            "the first sentence of `observed` has no letter or digit to derive a key from"
            + (" once its token is left out (a key may not carry one)" if slug(title) else "")
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
    size = sum(len(v.encode("utf-8")) for v in (obs.expected, obs.observed, obs.evidence,
                                                  obs.source, *answers))
    if size > MAX_NOTE_BYTES:
        raise NoteRefused(
            f"the note would hold {size} bytes of text; a note holds at most {MAX_NOTE_BYTES}: "
            "quote the lines that matter in `evidence` and name the file for the rest"
        )
    return composed(fields, title, sections)


def composed(fields: Sequence[tuple[str, str]], title: str,
             sections: Iterable[tuple[str, str | Sequence[str]]]) -> Note:
    """The note made of these parts, or :class:`NoteRefused` when it would not read
    back or a note-level lint rule refuses it."""
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
    *,
    team: TeamKeys,
    repeats_of: Callable[[Note], Sequence[Pair]] | None = None,
    refuse_repeats: bool = False,
) -> Remembered:
    """Write the note to the local layer, and only there (invariant: remember writes
    only to the local layer).

    Strict mode is `known_keys` given: every `relates_to` must name a note that
    exists (one a link from the local layer reaches), so a writer cannot leave
    dangling links behind.

    A key `team` holds is taken: `error` and `override` refuse (a local note would
    shadow the team one), `skip` writes nothing, `suffix` takes the first key free
    in both layers.

    `repeats_of` names the notes the new one says again (kept in the result); with
    `refuse_repeats`, any such note refuses the write (:class:`RepeatsANote`)."""
    note = build_surprise(obs, templates, today or dt.date.today())
    return write_local(store, note, if_exists, known_keys, team=team, repeats_of=repeats_of,
                       refuse_repeats=refuse_repeats)


def write_local(
    store: LocalStore,
    note: Note,
    if_exists: IfExists = IfExists.ERROR,
    known_keys: Collection[str] | None = None,
    *,
    team: TeamKeys,
    repeats_of: Callable[[Note], Sequence[Pair]] | None = None,
    refuse_repeats: bool = False,
) -> Remembered:
    """Write a built note (a surprise, a topic) to the local layer with remember's
    refusals: a link to nothing when strict (`known_keys` given), a key either
    layer holds, unless `if_exists` says otherwise; with `refuse_repeats`, a note
    that repeats one of the store (`repeats_of`, whose answer the result keeps)."""
    repeats = tuple(p for p in (repeats_of(note) if repeats_of is not None else ())
                    if not _replaced_or_refused(p, note, if_exists))
    if repeats and refuse_repeats:
        raise _repeats_a_note(repeats)
    done = _write_local(store, note, if_exists, known_keys, team=team)
    return dataclasses.replace(done, repeats=repeats) if repeats else done


def _replaced_or_refused(pair: Pair, note: Note, if_exists: IfExists) -> bool:
    """Whether `pair` names the local note at `note`'s own key, which the write
    replaces (`override`) or is refused over (`error`; `skip` keeps it and writes
    nothing). Under `suffix` that note stays beside the new one, so it is a repeat."""
    other = pair.original
    return (if_exists is not IfExists.SUFFIX and other.layer is Layer.LOCAL
            and other.key == note.key.value)


def _write_local(store: LocalStore, note: Note, if_exists: IfExists,
                 known_keys: Collection[str] | None, *, team: TeamKeys) -> Remembered:
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

    if team.holds(note.key) and if_exists is not IfExists.SUFFIX:
        derived = note.key.value not in team.written
        where = (team.derived if derived else team.written)[note.key.value]
        if if_exists is IfExists.SKIP:
            location = f"derived from {where}" if derived else where
            return Remembered(note.key, Layer.TEAM, location, False, note)
        raise _key_taken(note.key, Layer.TEAM, where, derived, if_exists)
    def still_there() -> None:
        # Under the store's lock: a local note linked in strict mode may have been
        # renamed (`mv`) or removed since the keys were read; the link would dangle.
        for target in note.links if known_keys is not None else ():
            if target in team.written or target in team.derived:
                continue
            try:
                gone = not os.path.lexists(store.path_for(Key(target)))
            except (InvalidKey, StoreError):
                continue
            if gone:
                raise NoteRefused(
                    f"relates_to: {target} was renamed or removed while the note was "
                    "being written, so the link would name nothing; recall the key it "
                    "has now and remember again")

    store.create_root()  # may refuse: a moved clone's store is waiting to be adopted
    try:
        key, written = store.write(note.key, text_for, if_exists, taken=team.holds,
                                   check=still_there)
    except KeyConflict as err:
        if if_exists is IfExists.ERROR:
            raise _key_taken(note.key, Layer.LOCAL, str(store.path_for(note.key))) from None
        raise err from None
    final = note if key == note.key else with_field(note, "key", key.value)
    secrets = tuple(find_secrets(render(final))) if written else ()
    return Remembered(key, Layer.LOCAL, str(store.path_for(key)), written, final,
                      secrets=secrets)
