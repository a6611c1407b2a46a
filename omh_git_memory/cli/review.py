"""`omh memory review`: the local notes waiting for a person, and the end-of-session line."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from omh_git_memory.cli.output import emit_json, here, is_terminal, say, usage_error

if TYPE_CHECKING:
    from omh_git_memory.actions.near_duplicate import Pair
    from omh_git_memory.actions.review import Pending
    from omh_git_memory.actions.workspace import Workspace


class HookFormat(StrEnum):
    claude = "claude"


def review(
    session: Annotated[
        str | None,
        typer.Option("--session", metavar="ID",
                     help="Only the notes this session recorded (from their source)."),
    ] = None,
    summary: Annotated[
        bool,
        typer.Option("--summary", help="Print only the end-of-session line (a harness's "
                     "Stop hook): how many notes the session (--session, else OMH_SESSION) "
                     "recorded; nothing when none."),
    ] = False,
    hook_format: Annotated[
        HookFormat | None,
        typer.Option("--for", help="With --summary: print the line the way this harness "
                     "shows a hook's message to its user (claude: {\"systemMessage\": …})."),
    ] = None,
    signoff: Annotated[
        bool,
        typer.Option("--signoff", help="Promotes made here end their commit message with a "
                     "Signed-off-by trailer, as promote --signoff."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """List the local notes not yet promoted, newest first; on a terminal, promote,
    edit, remove or keep each one."""
    if hook_format is not None and not summary:
        raise usage_error("--for shapes the end-of-session line: give it with --summary")
    if hook_format is not None and as_json:
        raise usage_error("--for and --json are two output formats; give one")
    session = session or None  # --session "" names no session
    if summary:
        _summary(session or os.environ.get("OMH_SESSION") or None, hook_format, as_json)
        return
    from omh_git_memory.actions.review import pending, unreadable
    from omh_git_memory.cli.repeats import as_json as repeats_json
    from omh_git_memory.cli.repeats import team_repeats_of

    ws = here()
    entries = ws.local.scan()
    items = pending(entries, session)
    broken = unreadable(entries)
    repeats = team_repeats_of(ws, [i.key.value for i in items]) if items else {}
    if as_json:
        emit_json({"session": session,
                   "notes": [{**i.as_dict(),
                              "near_duplicates": repeats_json(repeats.get(i.key.value, []))}
                             for i in items],
                   "unreadable": [{"path": e.location, "problem": e.problem} for e in broken]})
        return
    _list(items, session, repeats)
    for e in broken:
        say(f"unreadable: {e.location}: {e.problem} (omh memory lint says more)")
    if items and is_terminal(sys.stdin) and is_terminal(sys.stdout):
        _ask(ws, items, signoff)
    elif items:  # a script or an agent: what it can do with the list
        say("promote with `omh memory promote KEY…`, drop with `omh memory rm KEY`; "
            "on a terminal, `omh memory review` asks about each")


def _summary(session: str | None, hook_format: HookFormat | None, as_json: bool) -> None:
    from omh_git_memory.actions.review import session_line, session_notes

    ws = here()
    notes = session_notes(ws.local, session)
    line = session_line(len(notes))
    if as_json:
        emit_json({"session": session, "count": len(notes),
                   "keys": [n.key.value for n in notes], "line": line})
        return
    if hook_format is HookFormat.claude:
        from omh_git_memory.agent.session_end import hook_input, question

        # Without a session nothing tells whether this one recorded a note: no question.
        given = hook_input("" if session is None or sys.stdin is None or is_terminal(sys.stdin)
                           else sys.stdin.read())
        ask = question(given, len(notes), ws.repo.common_dir / "omh")
        said = {"systemMessage": line} if line is not None else {}
        if ask is not None or said:
            emit_json({**({"decision": "block", "reason": ask} if ask else {}), **said})
    elif line is not None:
        typer.echo(line)


def _list(items: list[Pending], session: str | None,
          repeats: Mapping[str, Sequence[Pair]]) -> None:
    from omh_git_memory.actions.near_duplicate import fold_command

    whose = f" recorded by session {session}" if session else ""
    if not items:
        say(f"no local notes{whose} waiting for review")
        return
    noun = "note" if len(items) == 1 else "notes"
    say(f"{len(items)} local {noun}{whose} not yet promoted, newest first:")
    width = max(len(i.key.value) for i in items)
    for i in items:
        say(f"  {i.key.value.ljust(width)}  {i.recorded.isoformat()}  {i.source.text}")
        say(f"  {' ' * width}  {i.title}")
        for pair in repeats.get(i.key.value, [])[:1]:
            other = pair.original
            say(f"  {' ' * width}  reads like {other.name} ({other.recorded.isoformat()}, "
                f"{pair.similarity:.0f}% alike): rather than promote it, fold it into that "
                f"note ({fold_command(other, with_layer=True)}) and remove this one")


_CHOICES = {"p": "promote", "e": "edit", "r": "remove", "k": "keep", "v": "view",
            "q": "quit"}


def _answer(read: Callable[[], str]) -> str:
    """One choice from the person: p, e, r, k, v or q (a whole word works too; Enter
    keeps; the end of input quits)."""
    while True:
        typer.echo("  promote, edit, remove, keep, view or quit? [p/e/r/k/v/q] (k) ", nl=False)
        sys.stdout.flush()
        line = read()
        if not line:  # end of input
            typer.echo("")
            return "quit"
        word = line.strip().lower()
        if not word:
            return "keep"
        for letter, name in _CHOICES.items():
            if word in (letter, name):
                return name
        typer.echo(f"  {word!r} is not a choice: answer p, e, r, k, v or q")


def _edit(ws: Workspace, item: Pending) -> Pending:
    """`omh memory edit` of the reviewed note; the note as it reads afterwards."""
    from omh_git_memory.actions.edit import edit
    from omh_git_memory.actions.review import reread
    from omh_git_memory.model.errors import OmhError
    from omh_git_memory.model.layers import Layer

    try:
        done = edit(ws, item.key.value, Layer.LOCAL)
    except OmhError as err:
        say(f"  omh: {err}")
        return item
    say("  no change" if done.updated is None or not done.updated.changed else
        f"  edited local/{item.key}")
    return reread(ws.local, item) or item


def _ask(ws: Workspace, items: list[Pending], signoff: bool) -> None:
    from omh_git_memory.actions.promote import promote
    from omh_git_memory.actions.review import remove_pending, reread
    from omh_git_memory.model.errors import OmhError, PromoteRefused
    from omh_git_memory.model.note import render

    done = {"promoted": 0, "removed": 0, "kept": 0}
    for index, item in enumerate(items, 1):
        typer.echo("")
        say(f"[{index}/{len(items)}] local/{item.key}  {item.recorded.isoformat()}  "
            f"{item.source.text}")
        say(f"  {item.title}")
        say(f"  {item.path}")
        choice = _answer(sys.stdin.readline)
        while choice in ("edit", "view"):  # then ask again about the note as it is
            if choice == "edit":
                item = _edit(ws, item)
            else:  # the whole note as its file reads now, before deciding
                item = reread(ws.local, item) or item
                for line in render(item.entry.note).splitlines() if item.entry.note else ():
                    say(f"  | {line}")
            choice = _answer(sys.stdin.readline)
        if choice == "quit":
            done["not reached"] = len(items) - index + 1
            break
        try:
            if choice == "promote":
                assert item.entry.note is not None
                shown = {item.key.value: render(item.entry.note).encode("utf-8")}
                result = promote(ws, [item.key.value], signoff=signoff, shown=shown)
                say(f"  committed {result.commit[:12]}: {item.key} is now in team "
                    f"({', '.join(result.paths)})")
                done["promoted"] += 1
            elif choice == "remove":
                say(f"  removed local/{item.key} ({remove_pending(ws.local, item)})")
                done["removed"] += 1
            else:
                done["kept"] += 1
        except PromoteRefused as err:  # say why, and go on to the next note
            for line in err.lines():
                say(f"  {line}")
            done["kept"] += 1
        except OmhError as err:
            say(f"  omh: {err}")
            done["kept"] += 1
    typer.echo("")
    typer.echo(", ".join(f"{what} {n}" for what, n in done.items()) +
               ("; push the branch to share what was promoted" if done["promoted"] else ""))
