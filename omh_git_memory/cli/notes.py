"""`omh memory show` and `omh memory rm`: one note by its key, printed as it is
stored or removed."""

from __future__ import annotations

from typing import Annotated

import typer

from omh_git_memory.cli.options import (
    JsonFlag,
    LayerChoice,
    LayerOption,
    RefOption,
    chosen_layer,
)
from omh_git_memory.cli.output import emit_json, here, pinned_json, pinned_line, say
from omh_git_memory.model.plural import agree
from omh_git_memory.model.plural import count as _count


def show(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: Annotated[
        LayerChoice | None, typer.Option("--layer", help="Only this layer (default: both).")
    ] = None,
    ref: RefOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Print a note as it is stored, after a line with its layer, date and file (both
    layers' notes when both hold the key)."""
    from omh_git_memory.actions.lookup import shown_notes
    from omh_git_memory.expiry.citations import line as citation_line

    ws = here(ref)
    shown = shown_notes(ws, key, chosen_layer(layer))
    if as_json:
        emit_json({"notes": [{"key": key, "layer": n.layer, "recorded": n.recorded,
                              "path": n.path, "text": n.text,
                              "citations": [c.as_json() for c in n.citations]}
                             for n in shown],
                   **({"ref": pinned_json(ws.pinned)} if ws.pinned is not None else {})})
        return
    if ws.pinned is not None:
        say(pinned_line(ws.pinned))
    for index, n in enumerate(shown):
        if index:
            typer.echo("")
        # invariant: every answer shows its layer and date
        cites = citation_line(n.citations)
        say(f"{key}  {n.layer} · {n.recorded}  {n.where}" + (f" · {cites}" if cites else ""))
        typer.echo(n.text, nl=False)


def rm(
    key: Annotated[str, typer.Argument(help="The note's key.")],
    layer: LayerOption = None,
    signoff: Annotated[
        bool,
        typer.Option("--signoff", help="For a team note: end the removing commit's message "
                     "with a Signed-off-by trailer, as promote --signoff."),
    ] = False,
    leave_links: Annotated[
        bool,
        typer.Option("--leave-links", help="For a team note other team notes link to: "
                     "remove it anyway, leaving their links dangling (lint --ref fails on "
                     "them)."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove one note and say what linked to it. Never removes anything else."""
    from omh_git_memory.actions.remove import remove

    done = remove(here(), key, chosen_layer(layer), signoff=signoff, leave_links=leave_links)
    if as_json:
        emit_json(
            {
                "removed": {"key": key, "layer": done.layer.value, "path": done.path,
                            **({"commit": done.commit} if done.commit is not None else {})},
                "linked_from": [{"layer": lay.value, "key": k} for lay, k in done.linked_from],
            }
        )
        return
    if done.commit is None:
        say(f"removed {done.layer}/{key} ({done.path})")
    else:
        commit, path = done.commit[:12], done.path
        say(f"removed {done.layer}/{key}: commit {commit} deletes {path}; "
            f"`git show {commit}~1:{path}` shows it; push the branch to share the removal")
    if done.linked_from:
        many = len(done.linked_from)
        typer.echo(f"{_count(many, 'note')} still {agree(many, 'links', 'link')} to it; "
                   f"{agree(many, 'that link now dangles', 'those links now dangle')}:")
        for lay, k in done.linked_from:
            say(f"  {lay}/{k}")
    else:
        typer.echo("no note linked to it")
