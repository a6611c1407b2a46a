"""`omh memory` and `omh memory list`: the notes by layer, with how many notes link
to each, and the files that do not read back as notes."""

from __future__ import annotations

from omh_git_memory.cli.adopt import warn_left_behind
from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, progress_bar, say
from omh_git_memory.model.plural import count as _count


def list_notes(as_json: JsonFlag = False) -> None:
    """List the notes by layer, with how many notes link to each."""
    from omh_git_memory.model.layers import Layer
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.render import date_of

    ws = here()
    warn_left_behind(ws)
    local = ws.local.scan()
    searcher = ws.searcher(progress=progress_bar(), local=local)
    inbound = searcher.inbound()
    rows = []
    unreadable: list[dict[str, str | None]] = []
    for slot, doc in enumerate(searcher.docs):
        if doc is None:
            continue
        if doc.problem:
            unreadable.append({"layer": doc.layer, "problem": doc.problem,
                               "path": json_path(doc.layer, doc.location, doc.source)})
            continue
        rows.append(
            {
                "key": doc.key,
                "layer": doc.layer,
                "type": doc.kind,
                "recorded": date_of(doc),
                "title": doc.title,
                "inbound": len(inbound.get(slot, [])),
                "path": json_path(doc.layer, doc.location, doc.source),
                "derived": doc.derived,
            }
        )
    unreadable += [
        {"layer": e.layer.value, "path": e.location, "problem": e.problem}
        for e in local
        if e.note is None
    ]
    rows.sort(key=lambda r: (str(r["layer"]), str(r["key"])))
    head = searcher.snapshot.commit
    counts = _layer_counts(rows)
    if as_json:
        emit_json({"notes": rows, "unreadable": unreadable, "local_store": str(ws.local.root),
                   "head": head, "counts": counts})
        return
    for layer in Layer:
        mine = [r for r in rows if r["layer"] == layer.value]
        if layer is Layer.LOCAL:
            say(f"{layer} · {_count(len(mine), 'note')} in {ws.local.root}")
        else:
            say(f"{layer} · {_team_census(counts['team'])} at HEAD "
                + (head[:12] if head else "(no commit yet)"))
        width = max((len(str(r["key"])) for r in mine), default=0)
        for r in mine:
            say(
                f"  {str(r['key']).ljust(width)}  {r['recorded']}  {r['type']:<8}  "
                f"← {_count(int(str(r['inbound'])), 'link')}"
            )
    for u in unreadable:
        say(f"unreadable: {u['path']}: {u['problem']} (omh memory lint says more)")


def _layer_counts(rows: list[dict[str, object]]) -> dict[str, dict[str, int]]:
    """What each layer holds: notes someone wrote, and (team) the stubs and the
    repository topic omh derives from the tree, counted apart."""
    team = [r for r in rows if r["layer"] == "team"]
    derived = [r for r in team if r["derived"]]
    return {
        "team": {"notes": len(team) - len(derived),
                 "stubs": sum(1 for r in derived if r["type"] == "stub"),
                 "topic": sum(1 for r in derived if r["type"] != "stub")},
        "local": {"notes": sum(1 for r in rows if r["layer"] == "local")},
    }


def _team_census(counts: dict[str, int]) -> str:
    """`3 notes, 37 stubs, 1 repository topic`."""
    return ", ".join((_count(counts["notes"], "note"), _count(counts["stubs"], "stub"),
                      _count(counts["topic"], "repository topic")))
