"""A note by its key: the files that claim it (or why none does, and the key that
was probably meant), and what `show` gives of it, derived notes included."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from omh_git_memory.expiry.citations import FIELD
from omh_git_memory.model.errors import NoteNotFound
from omh_git_memory.model.keys import printable, shell_word
from omh_git_memory.model.layers import Layer

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.expiry.citations import Checked
    from omh_git_memory.stores.graph import Graph
    from omh_git_memory.stores.reading import StoredNote


def find_notes(graph: Graph, key: str, layer: Layer | None) -> list[StoredNote]:
    """The notes claiming `key` (in `layer`, or in any), or NoteNotFound with a hint:
    the layer that holds it, or the nearest key (a typo's)."""
    layers = [layer] if layer is not None else list(Layer)
    found = [entry for lay in layers for entry in graph.claimants(lay, key)]
    if found:
        return found
    where = f"the {layer} layer" if layer is not None else "any layer"
    others = [lay for lay in Layer if lay != layer and (
        graph.claimants(lay, key) or (lay is Layer.TEAM and key in graph.derived))]
    if layer is not None and others:
        raise NoteNotFound(f"no note {key} in the {layer} layer; the {others[0]} layer holds "
                           f"it: use --layer {others[0]}, or leave --layer out")
    raise NoteNotFound(f"no note {key} in {where}{_did_you_mean(graph, key)}")


def _did_you_mean(graph: Graph, key: str, rev: str | None = None) -> str:
    """`; did you mean K?` for a key close enough to be a typo of `key`, else where
    the keys are listed (as of `rev`, when the graph is that commit's)."""
    from omh_git_memory.model.similar import closest  # only when a key is not found

    # never "did you mean" itself; a stub or the topic is a key one can mean too
    guess = closest(key, ({e.key for e in graph.entries} | graph.derived) - {key})
    if guess:
        return f"; did you mean {guess}?"
    listing = f"omh memory list --ref {shell_word(rev)}" if rev else "omh memory"
    return f"; `{listing}` lists the keys"


def written(graph: Graph, key: str, layer: Layer | None) -> list[StoredNote]:
    """The files that claim `key` in `layer` (or in either): no derived note, no error."""
    return [e for lay in Layer for e in graph.claimants(lay, key) if layer in (None, lay)]


@dataclass(frozen=True)
class Shown:
    """One note as `show` gives it."""

    layer: str
    recorded: str  # the note's date, YYYY-MM-DD
    where: str  # where it is, as a reader is told (a derived note: what it derives from)
    path: str | None  # the path --json gives (note_path.json_path)
    text: str  # the note as it is stored (a derived note: as it is derived)
    # its citations compared with the commit shown from, as recall compares them
    citations: tuple[Checked, ...] = ()


def shown_notes(ws: Workspace, key: str, layer: Layer | None) -> list[Shown]:
    """Every note `key` names in `layer` (or in both): a stub or the repository topic
    derived from the tree at HEAD, then the written notes — these alone when a file
    claims the key beside a derived note. NoteNotFound when there is none."""
    from omh_git_memory.model.note import render
    from omh_git_memory.recall.note_path import json_path
    from omh_git_memory.recall.reread import derived_note

    graph = ws.graph()
    if ws.pinned is not None:
        at = f"at {printable(ws.pinned.rev)} ({ws.pinned.commit[:12]})"
        if layer is Layer.LOCAL:
            raise NoteNotFound(f"--layer local names no note {at}: a commit holds team "
                               "notes and stubs only; leave --ref out to read local notes")
        if not graph.claimants(Layer.TEAM, key) and key not in graph.derived:
            raise NoteNotFound(f"no team note or stub {key} {at} (local notes are not "
                               f"read there){_did_you_mean(graph, key, ws.pinned.rev)}")
    shown: list[Shown] = []
    if layer in (None, Layer.TEAM) and key in graph.derived:
        for _, doc in ws.snapshot().live():
            if doc.key == key and doc.derived:
                note = derived_note(ws.repo, ws.config(), doc)
                if note is not None:
                    # the topic's location already says "derived from the repository"
                    where = doc.location if doc.is_topic else f"derived from {doc.location}"
                    shown.append(Shown("team", note.recorded.isoformat(), where,
                                       json_path("team", doc.location, doc.source),
                                       render(note)))
    if not shown or written(graph, key, layer):
        notes = [e for e in find_notes(graph, key, layer) if e.note is not None]
        checked = _citations(ws, {(e.layer.value, e.location): e.note.field(FIELD)
                                  for e in notes if e.note is not None})
        shown += [Shown(e.layer.value, e.note.recorded.isoformat(), e.location,
                        json_path(e.layer.value, e.location), render(e.note),
                        checked.get((e.layer.value, e.location), ()))
                  for e in notes if e.note is not None]
    return shown


def _citations(ws: Workspace, cited: dict[tuple[str, str], str | None]
               ) -> dict[tuple[str, str], tuple[Checked, ...]]:
    """The notes' citations compared as recall compares them: with the commit shown
    from, and at HEAD with the working tree too."""
    from omh_git_memory.expiry.citations import check, on_disk
    from omh_git_memory.git.history import head_id

    commit = ws.pinned.commit if ws.pinned is not None else head_id(ws.repo)
    return check(ws.repo, commit, cited, on_disk(ws.repo) if ws.pinned is None else None)
