"""The options the `omh memory` commands share, declared once."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from omh_git_memory.model.layers import Layer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]

# `recall`, `show` and the listing, as of a past commit (docs/recall.md#as-of-a-commit---ref).
RefOption = Annotated[str | None, typer.Option(
    "--ref", metavar="REV",
    help="Answer as of this commit (a branch, tag, commit id, HEAD~3): its team notes "
    "and stubs, as a clone checked out there sees them; local notes are left out.")]


class LayerChoice(StrEnum):
    team = "team"
    local = "local"


LayerOption = Annotated[
    LayerChoice | None, typer.Option("--layer", help="Which layer's note, when both hold the key.")
]


def chosen_layer(layer: LayerChoice | None) -> Layer | None:
    """The layer `--layer` names, or None when it was not given."""
    from omh_git_memory.model.layers import Layer

    return Layer(layer.value) if layer else None
