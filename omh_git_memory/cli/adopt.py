"""`omh adopt`: bring over the local store a moved clone left behind, and the
notice other commands print while one is waiting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def adopt(
    old: Annotated[
        str | None,
        typer.Argument(help="The clone's old path, or the old store's folder "
                       "(default: the store this clone left behind when it was moved)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Bring over the local store this clone left behind when it was moved."""
    from omh_git_memory.cli.output import emit_json, here
    from omh_git_memory.stores.adopt import adopt as do_adopt

    ws = here()
    done = do_adopt(ws.repo, ws.local.root, old)
    if as_json:
        emit_json({"from": str(done.source), "store": str(done.target), "notes": done.notes,
                   "merged": done.merged, "left": done.left})
        return
    from omh_git_memory.model.plural import count

    if done.source == done.target:  # another clone's record, at this clone's path
        typer.echo(f"took over {done.target} for this clone: {count(done.notes, 'note')}")
        return
    how = "merged into the notes already" if done.merged else "now"
    typer.echo(f"adopted {count(done.notes, 'note')} from {done.source}: {how} in {done.target}")
    if done.left:
        typer.echo(f"left in {done.source} (not notes, or changed meanwhile): "
                   + ", ".join(done.left))


def warn_left_behind(ws: Workspace) -> None:
    """Say on stderr (stdout may be JSON) where this clone's notes went, if it moved."""
    for found in ws.left_behind():
        typer.echo(f"omh: {found.message()}", err=True)
