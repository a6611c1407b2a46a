"""The two layers a note can live in, and what a link can reach from each.

The layer is part of a note's identity: `team/deploy` and `local/deploy` are
two notes. :func:`reachable_layers` is the one place where "invariant: team notes
link only to team notes" (docs/invariants.md) lives: a team note is read by
teammates who do not have your local notes, so a link from `team` reaches `team`
only.
"""

from __future__ import annotations

from enum import StrEnum


class Layer(StrEnum):
    TEAM = "team"  # committed under .omh/notes/, read from the git tree
    LOCAL = "local"  # this machine's store, outside the checkout



def reachable_layers(source: Layer) -> tuple[Layer, ...]:
    """The layers a `[[link]]` written in a note of layer `source` can resolve in."""
    if source is Layer.TEAM:
        return (Layer.TEAM,)
    return (Layer.LOCAL, Layer.TEAM)
