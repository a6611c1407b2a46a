"""Helpers the commands share: where we are, progress, JSON and line output, and
the errors of an option."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

import typer

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Pinned, Workspace


def here(ref: str | None = None) -> Workspace:
    """The workspace of the current folder; with `ref` (`--ref REV`), read at that
    commit (NoSuchCommit when it names none)."""
    from omh_git_memory.actions.workspace import open_workspace

    ws = open_workspace(Path.cwd())
    return ws if ref is None else ws.at(ref)


def pinned_line(pinned: Pinned) -> str:
    """The line an answer read at a commit (`--ref`) starts with: which commit, and
    that the local notes are left out."""
    from omh_git_memory.actions.workspace import Settings
    from omh_git_memory.model.keys import printable

    line = (f"at {printable(pinned.rev)} ({pinned.commit[:12]}): the team notes and stubs "
            "of that commit; local notes are left out")
    if pinned.settings is Settings.DEFAULTS:
        line += " (it holds no .omh/memory.toml: omh's default settings)"
    return line


def pinned_json(pinned: Pinned) -> dict[str, object]:
    """`"ref"` in the `--json` of an answer read at a commit (`--ref`)."""
    return {"rev": pinned.rev, "commit": pinned.commit, "local": "excluded",
            "settings": pinned.settings.value}


# A build shows its bar once it has taken this long: a quicker one is over before
# a bar could say anything (most builds of a few thousand documents now are).
BAR_AFTER: Final = 0.5  # seconds after the first document was read


def progress_bar() -> Callable[[int, int], None]:
    """A progress callback drawing `indexing documents ███░░ n/total` on stderr when
    it is a terminal and the work has gone on for BAR_AFTER seconds; its last line says
    the index is being written (merging and saving it come after the last document)."""
    import sys
    import time

    started: list[float] = []  # the first report's time (doctor builds after its probe)
    shown: list[float] = []  # when the bar was last drawn: empty until it first is

    def report(done: int, total: int) -> None:
        if not is_terminal(sys.stderr):
            return
        now = time.monotonic()
        started[:] = started or [now]
        if not shown and now - started[0] < BAR_AFTER:
            return  # quick so far; if this was the last report, no bar was needed
        if shown and done < total and now - shown[0] < 0.1:
            return
        shown[:] = [now]
        filled = 30 * done // total
        bar = "█" * filled + "░" * (30 - filled)
        end = "; writing the index\n" if done == total else ""
        sys.stderr.write(f"\rindexing documents {bar} {done}/{total}{end}")
        sys.stderr.flush()

    return report


def emit_json(data: object) -> None:
    """`data` as JSON. The values are exact; characters that could act on a terminal
    or hide in a log (controls, bidi overrides, zero widths, lone surrogates) are
    written as `\\u` escapes, which JSON reads back as the same value."""
    typer.echo(_terminal_safe_json(json.dumps(data, indent=2, ensure_ascii=False)))


def _terminal_safe_json(text: str) -> str:
    from omh_git_memory.model.keys import is_plain, is_unsafe

    def escaped(char: str) -> str:
        code = ord(char)
        if code > 0xFFFF:  # JSON spells a character beyond the BMP as a surrogate pair
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    # Outside its strings JSON holds only ASCII punctuation, spaces and newlines,
    # which are left alone; json.dumps has already escaped C0 controls in strings.
    return "\n".join(
        line if is_plain(line) else "".join(
            escaped(c) if c != " " and (is_unsafe(c) or not c.isprintable()) else c
            for c in line
        )
        for line in text.split("\n")
    )


def say(line: str) -> None:
    """Print one line; a path or key read from a tree or a disk in it is escaped, so
    it can neither add a line nor hide as another name (see keys.printable)."""
    from omh_git_memory.model.keys import printable

    typer.echo(printable(line))


def say_lines(text: str) -> None:
    """Print text made of lines (`\\n`-separated), each one escaped as :func:`say` does."""
    from omh_git_memory.model.keys import printable

    typer.echo("\n".join(printable(line) for line in text.split("\n")), nl=False)


def usage_error(message: str) -> typer.Exit:
    """Print `omh: message` on stderr; the caller raises the result (exit status 2, a
    usage error: options that do not go together, one that is missing)."""
    from omh_git_memory.model.keys import printable

    typer.echo(f"omh: {printable(message)}", err=True)
    return typer.Exit(2)


def recorded_day(recorded: str | None) -> dt.date | None:
    """The day `--recorded` names, or None when it was not given."""
    from omh_git_memory.model.errors import NoteRefused

    if recorded is None:
        return None
    try:
        return dt.date.fromisoformat(recorded)
    except ValueError:
        raise NoteRefused(
            f"--recorded {recorded!r} is not a date that exists (YYYY-MM-DD)") from None


def is_terminal(stream: IO[str] | None) -> bool:
    """Whether `stream` is a terminal; False for a stream Python has as None (its
    descriptor was closed when the process started: `omh … 2>&-`)."""
    return stream is not None and stream.isatty()
