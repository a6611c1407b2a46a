"""Every note of both layers as `omh memory list` shows it: one row a note, with how
many notes link to it, the files that do not read back as notes, and the counts by
layer (notes someone wrote apart from the stubs and topic omh derives)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.recall.build import Progress


@dataclass(frozen=True)
class Listing:
    rows: list[dict[str, Any]]  # key, layer, type, recorded, title, inbound, path, derived
    unreadable: list[dict[str, str | None]]  # layer, path, problem
    head: str | None  # the commit the team layer was read at (None before the first)
    counts: dict[str, dict[str, int]]


def list_notes(ws: Workspace, progress: Progress | None = None, *,
               layer: str | None = None, types: Collection[str] = ()) -> Listing:
    """The notes by layer then key, and the files that are not notes; only those of
    `layer` and of the `types` given (`surprise`, `topic`, `stub`, …), when given.
    The counts are the whole store's."""
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.render import date_of

    local = ws.local_entries()  # none when pinned to a commit (`--ref`)
    searcher = ws.searcher(progress=progress, local=local)
    inbound = searcher.inbound()
    rows: list[dict[str, Any]] = []
    unreadable: list[dict[str, str | None]] = []
    for slot, doc in enumerate(searcher.docs):
        if doc is None:
            continue
        path = json_path(doc.layer, doc.location, doc.source)
        if doc.problem:
            unreadable.append({"layer": doc.layer, "problem": doc.problem, "path": path})
            continue
        rows.append({"key": doc.key, "layer": doc.layer, "type": doc.kind,
                     "recorded": date_of(doc), "title": doc.title,
                     "inbound": len(inbound.get(slot, [])), "path": path,
                     "derived": doc.derived})
    unreadable += [{"layer": e.layer.value, "path": e.location, "problem": e.problem}
                   for e in local if e.note is None]
    rows.sort(key=lambda r: (str(r["layer"]), str(r["key"])))
    counts = layer_counts(rows)
    rows = [r for r in rows if (layer is None or r["layer"] == layer)
            and (not types or r["type"] in types)]
    unreadable = [u for u in unreadable if layer is None or u["layer"] == layer]
    return Listing(rows, unreadable, searcher.snapshot.commit, counts)


def layer_counts(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
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
