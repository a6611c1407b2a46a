"""Helpers the commands share: where we are, JSON output, and note lookup."""

from __future__ import annotations

import json
from collections.abc import Callable
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


def progress_bar() -> Callable[[int, int], None]:
    """A progress callback drawing `indexing ███░░ n/total` on stderr when it is a
    terminal and the work is long enough to notice."""
    import sys
    import time

    shown = [0.0]

    def report(done: int, total: int) -> None:
        if total < 200 or not sys.stderr.isatty():
            return
        now = time.monotonic()
        if done < total and now - shown[0] < 0.1:
            return
        shown[0] = now
        filled = 30 * done // total
        bar = "█" * filled + "░" * (30 - filled)
        end = "\n" if done == total else ""
        sys.stderr.write(f"\rindexing documents {bar} {done}/{total}{end}")
        sys.stderr.flush()

    return report


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
