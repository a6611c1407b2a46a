"""Helpers the commands share: where we are, JSON output, and note lookup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from omh_git_memory.graph import Graph
    from omh_git_memory.layers import Layer
    from omh_git_memory.store import StoredNote
    from omh_git_memory.workspace import Workspace


def here() -> Workspace:
    from omh_git_memory.workspace import open_workspace

    return open_workspace(Path.cwd())


def emit_json(data: object) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def all_notes(ws: Workspace) -> Graph:
    return ws.graph()


def find_notes(graph: Graph, key: str, layer: Layer | None) -> list[StoredNote]:
    """The notes claiming `key` (in `layer`, or in any), or NoteNotFound with a hint."""
    from rapidfuzz import process

    from omh_git_memory.errors import NoteNotFound
    from omh_git_memory.layers import Layer

    layers = [layer] if layer is not None else list(Layer)
    found = [entry for lay in layers for entry in graph.claimants(lay, key)]
    if found:
        return found
    where = f"the {layer} layer" if layer is not None else "any layer"
    keys = sorted({e.key for e in graph.entries})
    guess = process.extractOne(key, keys, score_cutoff=60) if keys else None
    hint = f"; did you mean {guess[0]}?" if guess else "; `omh memory` lists the keys"
    raise NoteNotFound(f"no note {key} in {where}{hint}")
