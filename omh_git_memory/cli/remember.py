"""`omh memory remember`: what surprised you (or, with --type topic, a topic), written
as a note in your local layer."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, progress_bar, recorded_day, say

if TYPE_CHECKING:
    from omh_git_memory.actions.remember import Remembered


class NoteTypeChoice(StrEnum):
    surprise = "surprise"
    topic = "topic"


class IfExistsChoice(StrEnum):
    error = "error"
    skip = "skip"
    suffix = "suffix"
    override = "override"


def remember(
    expected: Annotated[
        str | None, typer.Option(help="What you thought would happen (a surprise: required).")
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(help="What happened; its first sentence is the title (a surprise: "
                     "required)."),
    ] = None,
    evidence: Annotated[
        str | None,
        typer.Option(help="The command, the error, the file that shows it (a surprise: "
                     "required)."),
    ] = None,
    note_type: Annotated[
        NoteTypeChoice,
        typer.Option("--type", help="surprise (the default) or topic: one subject, with a "
                     "--title, free --section NAME=TEXT and --relates-to links."),
    ] = NoteTypeChoice.surprise,
    title: Annotated[
        str | None, typer.Option("--title", help="A topic's title; its key is derived from it.")
    ] = None,
    sections: Annotated[
        list[str] | None,
        typer.Option("--section", metavar="NAME=TEXT",
                     help="A topic's section: `## NAME` holding TEXT (repeat for more)."),
    ] = None,
    section_files: Annotated[
        list[str] | None,
        typer.Option("--section-file", metavar="NAME=PATH",
                     help="A topic's section whose text is the file PATH (- reads stdin)."),
    ] = None,
    answers: Annotated[
        list[str] | None,
        typer.Option("--answers", help="A question this note answers, in the words "
                     "someone would ask it (repeat for more; a surprise: required, at least "
                     "once)."),
    ] = None,
    relates_to: Annotated[
        list[str] | None,
        typer.Option("--relates-to", help="Key of a related note (repeat for more)."),
    ] = None,
    invalidated_by: Annotated[
        list[str] | None,
        typer.Option(help="What makes the note stale: file:<path> (pinned to HEAD's blob), "
                     "image:current, base:YYYY-MM or symbol:NAME (see docs/stale.md); "
                     "one per note."),
    ] = None,
    source: Annotated[str, typer.Option(help="Who observed it.")] = "cli",
    recorded: Annotated[
        str | None,
        typer.Option(help="The day it happened, YYYY-MM-DD, not after today (default: today)."),
    ] = None,
    if_exists: Annotated[
        IfExistsChoice, typer.Option(help="When the key is taken: error, skip, suffix, override.")
    ] = IfExistsChoice.error,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse links to notes that do not exist, and a "
                           "note that looks like one the store holds.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Record what surprised you (or, with --type topic, a topic) as a local note."""
    from omh_git_memory.actions.record import record
    from omh_git_memory.actions.remember import Observation, single_trigger
    from omh_git_memory.stores.store import IfExists

    if note_type is NoteTypeChoice.topic or title is not None or sections or section_files:
        from omh_git_memory.cli.topic import remember_topic

        remember_topic(
            note_type=note_type.value, title=title, sections=sections or [],
            section_files=section_files or [], surprise_options=[
                name for name, value in (("--expected", expected), ("--observed", observed),
                                         ("--evidence", evidence)) if value is not None],
            answers=answers or [], relates_to=relates_to or [],
            invalidated_by=single_trigger(invalidated_by), source=source, recorded=recorded,
            if_exists=if_exists.value, strict=strict, as_json=as_json,
        )
        return
    missing = [name for name, value in (("--expected", expected), ("--observed", observed),
                                        ("--evidence", evidence)) if value is None]
    if missing:
        from omh_git_memory.cli.output import usage_error

        raise usage_error(
            f"Missing option '{missing[0]}': a surprise note needs --expected, --observed, "
            "--evidence and at least one --answers (or give --type topic)")
    assert expected is not None and observed is not None and evidence is not None
    day = recorded_day(recorded)
    ws = here()
    obs = Observation(expected=expected, observed=observed, evidence=evidence,
                      answers=answers or [], relates_to=relates_to or [],
                      invalidated_by=single_trigger(invalidated_by), source=source,
                      recorded=day)
    result = record(ws, obs, progress=progress_bar(), if_exists=IfExists(if_exists.value),
                    strict=strict, refuse_repeats=strict)
    say_remembered(result, as_json)


def say_remembered(result: Remembered, as_json: bool) -> None:
    """What remember says of the note it wrote (or kept), and of the notes it repeats."""
    from omh_git_memory.cli.repeats import as_json as repeats_json
    from omh_git_memory.cli.repeats import say_repeats
    from omh_git_memory.model.keys import printable, shell_word

    if as_json:
        emit_json({"key": result.key.value, "layer": result.layer.value, "path": result.path,
                   "written": result.written, "near_duplicates": repeats_json(result.repeats),
                   "secrets": [{"line": h.line, "kind": h.kind} for h in result.secrets],
                   "waiting_links": list(result.waiting), "cites": list(result.cited)})
        return
    if result.written:
        say(f"remembered {result.layer}/{result.key}")
        say(f"  {result.path}")
        if result.cited:
            say(f"  cites {', '.join(printable(p) for p in result.cited)} (recall says when "
                f"{'it changes' if len(result.cited) == 1 else 'they change'})")
    else:
        say(f"kept the existing {result.layer}/{result.key} (--if-exists skip)")
    for warning in result.secret_warnings(f"omh memory edit {shell_word(result.key)}"):
        say(f"warning: {warning}")
    for target in result.waiting:
        say(f"note: [[{target}]] names no note yet; the link is kept, and reaches the note "
            "once one is written under that key (`omh memory lint` warns DanglingLink until "
            "then; --strict refuses such a link)")
    say_repeats(result.repeats, result.key.value if result.written else None)
