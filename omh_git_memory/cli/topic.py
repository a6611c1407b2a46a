"""`omh memory remember --type topic`: a person's topic note, written to the local layer."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from omh_git_memory.cli.output import here, progress_bar, recorded_day, usage_error


def _split(option: str, value: str) -> tuple[str, str]:
    name, sep, rest = value.partition("=")
    if not sep or not name.strip():
        what = "PATH" if option == "--section-file" else "TEXT"
        raise usage_error(f"{option} takes NAME={what}: the section's name, `=`, then its "
                          f"{what.lower()} (got {value!r})")
    return name, rest


def _read_section_file(name: str, path: str) -> str:
    from omh_git_memory.model.errors import NoteParseError, NoteRefused
    from omh_git_memory.model.note import MAX_NOTE_BYTES, decode

    if path == "-":
        data = sys.stdin.buffer.read(MAX_NOTE_BYTES + 1)
    else:
        try:
            with Path(path).open("rb") as handle:  # a FIFO or a device is the user's choice
                data = handle.read(MAX_NOTE_BYTES + 1)
        except OSError as err:
            raise NoteRefused(f"--section-file {name}: cannot read {path}: "
                              f"{err.strerror or err}") from None
    try:
        return decode(data)
    except NoteParseError as err:
        where = f" (line {err.line})" if err.line else ""
        raise NoteRefused(f"--section-file {name}: {path} {err}{where}") from None


def remember_topic(
    *, note_type: str, title: str | None, sections: Sequence[str],
    section_files: Sequence[str], surprise_options: Sequence[str], answers: Sequence[str],
    relates_to: Sequence[str], invalidated_by: str | None, source: str,
    recorded: str | None, if_exists: str, strict: bool, as_json: bool,
) -> None:
    from omh_git_memory.actions.record import record
    from omh_git_memory.actions.topic import TopicDraft
    from omh_git_memory.cli.remember import say_remembered
    from omh_git_memory.stores.store import IfExists

    if note_type != "topic":
        raise usage_error("--title, --section and --section-file make a topic note: "
                               "add --type topic")
    if surprise_options:
        verb = "belongs" if len(surprise_options) == 1 else "belong"
        raise usage_error(f"{', '.join(surprise_options)} {verb} to a surprise note; a "
                               "topic takes --title, --section NAME=TEXT and --relates-to")
    if title is None:
        raise usage_error("Missing option '--title': a topic is named by its title")
    given = [_split("--section", s) for s in sections]
    if sum(1 for s in section_files if _split("--section-file", s)[1] == "-") > 1:
        raise usage_error("only one --section-file can read stdin (-)")
    given += [(name, _read_section_file(name, path))
              for name, path in (_split("--section-file", s) for s in section_files)]
    day = recorded_day(recorded)
    ws = here()
    draft = TopicDraft(title=title, sections=given, answers=answers, relates_to=relates_to,
                       invalidated_by=invalidated_by, source=source, recorded=day)
    result = record(ws, draft, progress=progress_bar(), if_exists=IfExists(if_exists),
                    strict=strict, refuse_repeats=strict)
    say_remembered(result, as_json)
