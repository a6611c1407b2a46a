"""`rm`: one note removed, and the notes that still link to it. Never anything else.

A team note goes in a commit of its own (promote.remove_team_note), so history
keeps it; a local note goes only if its file still holds the bytes that were read.
A derived note (a stub, the repository topic) is written nowhere and cannot go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from omh_git_memory.actions.lookup import find_notes, written
from omh_git_memory.model.errors import (
    AmbiguousKey,
    BadArguments,
    ChangedMeanwhile,
    NoteRefused,
    NotUpdatable,
)
from omh_git_memory.model.keys import Key, shell_word
from omh_git_memory.model.layers import Layer

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.stores.reading import StoredNote


@dataclass(frozen=True)
class Removed:
    key: str
    layer: Layer
    path: str  # the local file, or the team note's repository path
    commit: str | None  # the team layer's commit that deletes it
    linked_from: tuple[tuple[Layer, str], ...]  # the notes whose links now dangle


def remove(ws: Workspace, key: str, layer: Layer | None = None,
           signoff: bool = False, leave_links: bool = False) -> Removed:
    """Remove the note `key` of `layer` (either, when only one holds it); `signoff`
    ends a team removal's commit message with a Signed-off-by trailer. A team note
    other team notes link to is refused unless `leave_links`: the commit would fail
    the CI check (`lint --ref`), which fails on a team link that dangles."""
    from omh_git_memory.actions.promote import finish_team_commit

    finish_team_commit(ws)  # a team verb killed mid-way: finished before anything is read
    graph = ws.graph()
    if not written(graph, key, layer) and key in graph.derived and layer in (None, Layer.TEAM):
        raise NotUpdatable(_why_derived_stays(ws, key))
    found = find_notes(graph, key, layer)
    if len(found) > 1:
        raise AmbiguousKey(f"{key} is in both layers; say which with --layer team or --layer local")
    entry = found[0]
    linkers = tuple(sorted(graph.inbound().get((entry.layer, key), [])))
    if entry.layer is Layer.TEAM:
        from omh_git_memory.actions.promote import remove_team_note

        team_linkers = [k for lay, k in linkers if lay is Layer.TEAM]
        if team_linkers and not leave_links:
            raise NoteRefused(_links_would_dangle(key, team_linkers))

        commit = remove_team_note(ws, Key(entry.relpath.removesuffix(".md")), signoff=signoff)
        return Removed(key, entry.layer, entry.location.split(":", 1)[1], commit, linkers)
    return Removed(key, entry.layer, _remove_local(ws, entry, key, signoff), None, linkers)


def _links_would_dangle(key: str, linkers: list[str]) -> str:
    named = ", ".join(f"team/{k}" for k in linkers)
    first = shell_word(linkers[0])
    return (f"team/{key} is linked from {named}: removing it would leave "
            f"{'that link' if len(linkers) == 1 else 'those links'} to [[{key}]] dangling, "
            "and the commit would fail the CI check (`omh memory lint --ref HEAD` fails on a "
            "team link to nothing); nothing was removed. Drop the links first (`omh memory "
            f"edit {first} --layer team`), or run rm again with --leave-links to remove it "
            "anyway")


def _remove_local(ws: Workspace, entry: StoredNote, key: str, signoff: bool) -> str:
    """Remove the local note `entry` as it was read; the path it was at."""
    from omh_git_memory.model import faults
    from omh_git_memory.model.note import render

    if signoff:
        raise BadArguments(f"--signoff signs a commit, and removing local/{key} makes none; "
                       "run it again without --signoff")
    assert entry.note is not None
    faults.point("rm:local")
    # Remove only what was read: a note rewritten since is not the one meant.
    removed = ws.local.remove_if(Key(entry.relpath.removesuffix(".md")),
                                 render(entry.note).encode("utf-8"))
    if removed is None:
        raise ChangedMeanwhile(f"local/{key} changed while rm ran, so nothing was removed; "
                       f"look at it (omh memory show {shell_word(key)} --layer local) and "
                       "run rm again")
    return str(removed)


def _why_derived_stays(ws: Workspace, key: str) -> str:
    """Why `rm` cannot remove the derived note `key`, and what can drop it if anything."""
    doc = next((d for _, d in ws.snapshot().live() if d.key == key and d.derived), None)
    if doc is not None and doc.is_topic:
        return (f"{key} is the repository topic, derived from the repository itself (its "
                "name and files) and written nowhere: rm cannot remove it and no setting "
                "excludes it")
    document = doc.location if doc is not None else "its document"
    return (f"{key} is a stub derived from {document}, not written; to drop it, add "
            f"{document} to [stubs] exclude in .omh/memory.toml (or remove the document)")
