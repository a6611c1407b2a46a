"""`remember`'s word on the notes a new note repeats (near_duplicate.repeated), for
both note types on the command line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from omh_git_memory.cli.output import progress_bar, say

if TYPE_CHECKING:
    from omh_git_memory.actions.near_duplicate import Pair
    from omh_git_memory.actions.workspace import Workspace


def team_repeats_of(ws: Workspace, keys: Sequence[str],
                    together: bool = False) -> dict[str, list[Pair]]:
    """What `promote` and `review` say of the notes to share: the team notes each one
    repeats (`together`: and the others shared with it). Advice only: a store it
    cannot read or index leaves it silent."""
    from omh_git_memory.actions.near_duplicate import team_repeats
    from omh_git_memory.model.errors import OmhError
    from omh_git_memory.recall.reread import note_of

    try:
        searcher = ws.searcher(progress=progress_bar())
        config = ws.config()
        return team_repeats(searcher, keys, lambda doc: note_of(
            ws.repo, config, doc, searcher.local_notes), together)
    except OmhError:
        return {}


def say_team_repeats(repeats: dict[str, list[Pair]], promoted: Sequence[str]) -> None:
    """After a promote: each shared note that repeats a team note, and how to keep one
    (both are team notes now, so each command commits)."""
    from omh_git_memory.actions.near_duplicate import NAMED, fold_command
    from omh_git_memory.model.keys import shell_word

    for key in promoted:
        pairs = repeats.get(key, [])
        for pair in pairs[:NAMED]:
            other = pair.original
            say(f"warning: team/{key} now reads like {other.name} ({other.recorded.isoformat()},"
                f" {pair.similarity:.0f}% alike); if both record the same thing, keep that one:"
                f" fold in what team/{key} adds ({fold_command(other, with_layer=True)}), then"
                f" `omh memory rm {shell_word(key)} --layer team`")
        if (rest := len(pairs) - NAMED) > 0:
            # not "lint names them": lint names each note's most alike repeat only
            say(f"warning: team/{key} also reads like {rest} more team "
                f"{'note' if rest == 1 else 'notes'}, less alike than these")


def as_json(repeats: Sequence[Pair]) -> list[dict[str, object]]:
    return [{"key": p.original.key, "layer": p.original.layer.value,
             "recorded": p.original.recorded.isoformat(), "path": p.original.location,
             "similarity": round(p.similarity, 1)} for p in repeats]


def say_repeats(repeats: Sequence[Pair], written: str | None) -> None:
    """One warning for each of the first NAMED notes repeated, then a count of the rest.
    `written` is the key of the note just written, if one was: keeping one of the two
    then takes removing it too."""
    from omh_git_memory.actions.near_duplicate import NAMED, fold_command, more_than_named
    from omh_git_memory.actions.remember import repeated_line
    from omh_git_memory.model.keys import shell_word

    for pair in repeats[:NAMED]:
        update = fold_command(pair.original)
        if written is None:
            say(f"warning: {repeated_line(pair)}; update that note instead? {update}")
            continue
        say(f"warning: {repeated_line(pair)}; if both record the same thing, keep that one: "
            f"fold in what this one adds ({update}), then `omh memory rm {shell_word(written)}`")
    if more := more_than_named(repeats):
        say(f"warning: {more}")  # lint names each note's most alike repeat only
