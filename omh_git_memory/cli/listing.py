"""`omh memory` and `omh memory list`: the notes by layer, with how many notes link
to each, and the files that do not read back as notes."""

from __future__ import annotations

from omh_git_memory.cli.adopt import warn_left_behind
from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, progress_bar, say
from omh_git_memory.model.plural import count as _count


def list_notes(as_json: JsonFlag = False) -> None:
    """List the notes by layer, with how many notes link to each."""
    from omh_git_memory.actions.listing import list_notes as listed
    from omh_git_memory.model.layers import Layer

    ws = here()
    warn_left_behind(ws)
    found = listed(ws, progress=progress_bar())
    rows, counts = found.rows, found.counts
    if as_json:
        emit_json({"notes": rows, "unreadable": found.unreadable,
                   "local_store": str(ws.local.root), "head": found.head, "counts": counts})
        return
    for layer in Layer:
        mine = [r for r in rows if r["layer"] == layer.value]
        if layer is Layer.LOCAL:
            say(f"{layer} · {_count(len(mine), 'note')} in {ws.local.root}")
        else:
            say(f"{layer} · {_team_census(counts['team'])} at HEAD "
                + (found.head[:12] if found.head else "(no commit yet)"))
        width = max((len(str(r["key"])) for r in mine), default=0)
        for r in mine:
            say(
                f"  {str(r['key']).ljust(width)}  {r['recorded']}  {r['type']:<8}  "
                f"← {_count(int(r['inbound']), 'link')}"
            )
    for u in found.unreadable:
        say(f"unreadable: {u['path']}: {u['problem']} (omh memory lint says more)")


def _team_census(counts: dict[str, int]) -> str:
    """`3 notes, 37 stubs, 1 repository topic`."""
    return ", ".join((_count(counts["notes"], "note"), _count(counts["stubs"], "stub"),
                      _count(counts["topic"], "repository topic")))
