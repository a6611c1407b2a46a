"""`omh memory` and `omh memory list`: the notes by layer, with how many notes link
to each, and the files that do not read back as notes."""

from __future__ import annotations

from typing import Annotated

import typer

from omh_git_memory.cli.adopt import warn_left_behind
from omh_git_memory.cli.options import JsonFlag, LayerChoice, RefOption
from omh_git_memory.cli.output import (
    emit_json,
    here,
    pinned_json,
    pinned_line,
    progress_bar,
    say,
    usage_error,
)
from omh_git_memory.model.keys import printable
from omh_git_memory.model.plural import count as _count

ListLayer = Annotated[LayerChoice | None, typer.Option(
    "--layer", help="Only this layer's notes.")]
ListTypes = Annotated[list[str] | None, typer.Option(
    "--type", help="Only notes of this type: surprise, topic, stub, … (repeat for more).")]
ListAll = Annotated[bool, typer.Option(
    "--all", help="List the stubs and the repository topic too, not only their count.")]


def list_notes(
    as_json: JsonFlag = False,
    layer: ListLayer = None,
    types: ListTypes = None,
    every: ListAll = False,
    ref: RefOption = None,
) -> None:
    """List the notes by layer, with how many notes link to each: the notes people
    and agents wrote, then how many stubs omh derives (--all or --type stub lists
    them)."""
    from omh_git_memory.actions.listing import list_notes as listed
    from omh_git_memory.model.layers import Layer
    from omh_git_memory.model.note import NOTE_TYPES

    unknown = [t for t in types or () if t not in NOTE_TYPES]
    if unknown:
        raise usage_error(f"--type {unknown[0]!r} is no type of note; the types are "
                          f"{', '.join(NOTE_TYPES)}")
    ws = here(ref)
    if ws.pinned is None:  # a past commit's listing holds no local note to adopt
        warn_left_behind(ws)
    found = listed(ws, progress=progress_bar(), layer=layer.value if layer else None,
                   types=types or ())
    rows, counts = found.rows, found.counts
    if as_json:
        emit_json({"notes": rows, "unreadable": found.unreadable,
                   "local_store": str(ws.local.root), "head": found.head,
                   # a commit holds no local note: not none, left out
                   "counts": {**counts, "local": None} if ws.pinned is not None else counts,
                   **({"ref": pinned_json(ws.pinned)} if ws.pinned is not None else {})})
        return
    if ws.pinned is not None:
        say(pinned_line(ws.pinned))
    for shown in Layer:
        if layer is not None and shown.value != layer.value:
            continue
        mine = [r for r in rows if r["layer"] == shown.value]
        hidden = [] if every or types else [r for r in mine if r["derived"]]
        mine = [r for r in mine if every or types or not r["derived"]]
        if shown is Layer.LOCAL and ws.pinned is not None:
            say(f"{shown} · left out (--ref reads the team layer of a commit)")
            continue
        if shown is Layer.LOCAL:
            say(f"{shown} · {_count(counts['local']['notes'], 'note')} in {ws.local.root}")
        else:
            at = "HEAD" if ws.pinned is None else printable(ws.pinned.rev)
            say(f"{shown} · {_team_census(counts['team'])} at {at} "
                + (found.head[:12] if found.head else "(no commit yet)"))
        width = max((len(str(r["key"])) for r in mine), default=0)
        for r in mine:
            say(
                f"  {str(r['key']).ljust(width)}  {r['recorded']}  {r['type']:<8}  "
                f"← {_count(int(r['inbound']), 'link')}"
            )
        if hidden:
            say(f"  (not listed, derived from the tree: {_derived_census(hidden)}; "
                "--all lists them, --type stub the stubs alone)")
    for u in found.unreadable:
        say(f"unreadable: {u['path']}: {u['problem']} (omh memory lint says more)")


def _derived_census(rows: list[dict[str, object]]) -> str:
    """`37 stubs and 1 repository topic`."""
    stubs = sum(1 for r in rows if r["type"] == "stub")
    parts = [_count(stubs, "stub")] if stubs else []
    if len(rows) > stubs:
        parts.append(_count(len(rows) - stubs, "repository topic"))
    return " and ".join(parts)


def _team_census(counts: dict[str, int]) -> str:
    """`3 notes, 37 stubs, 1 repository topic`."""
    return ", ".join((_count(counts["notes"], "note"), _count(counts["stubs"], "stub"),
                      _count(counts["topic"], "repository topic")))
