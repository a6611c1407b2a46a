"""`omh memory promote`: local notes shared with the team in one commit."""

from __future__ import annotations

from typing import Annotated

import typer

from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, say
from omh_git_memory.model.plural import agree
from omh_git_memory.model.plural import count as _count

SignoffFlag = Annotated[
    bool,
    typer.Option("--signoff", help="End the commit message with a Signed-off-by trailer "
                 "(user.name and user.email from git config), as git commit --signoff."),
]


def promote(
    keys: Annotated[list[str], typer.Argument(help="Keys of local notes to share.")],
    signoff: SignoffFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Share local notes with the team: one commit adding them under .omh/notes/.

    The commit is built with libgit2, not by `git commit`, so the repository's
    pre-commit and commit-msg hooks do not run; CI's `omh memory lint --ref`
    checks what was pushed. --signoff adds the trailer a commit-msg hook or DCO
    check may ask for."""
    from omh_git_memory.actions.promote import promote as do_promote
    from omh_git_memory.cli.repeats import as_json as repeats_json
    from omh_git_memory.cli.repeats import say_team_repeats, team_repeats_of
    from omh_git_memory.model.keys import shell_word

    ws = here()
    repeats = team_repeats_of(ws, keys, together=True)  # asked before: then both are team
    result = do_promote(ws, keys, signoff=signoff)
    promoted = [k.value for k in result.keys]
    if as_json:
        emit_json(
            {
                "commit": result.commit,
                "promoted": promoted,
                "paths": list(result.paths),
                "left_in_local": [k.value for k in result.left_in_local],
                "finished": [k.value for k in result.finished],
                "changed_in_local": [k.value for k in result.changed_in_local],
                "already_in_team": [k.value for k in result.already_in_team],
                "cites_uncommitted": {k: list(v) for k, v in result.cites_uncommitted.items()},
                "near_duplicates": {k: repeats_json(repeats[k]) for k in promoted
                                    if k in repeats},
            }
        )
        return
    if result.finished:
        typer.echo(f"finished an interrupted promote of {_count(len(result.finished), 'note')}")
    typer.echo(f"committed {result.commit[:12]}: {_count(len(result.keys), 'note')} now in team")
    for path in result.paths:
        say(f"  {path}")
    for key in result.left_in_local:
        say(f"warning: the local copy of {key} could not be removed; remove it by hand")
    for key in result.changed_in_local:
        say(f"warning: local/{key} was rewritten while promote ran: the text it held "
            "before is what was committed, the new text stays in the local layer "
            f"(omh memory show {shell_word(key)} shows both)")
    for cited, paths in result.cites_uncommitted.items():
        from omh_git_memory.recall.render import and_list

        say(f"warning: team/{cited} cites {and_list(paths)} as this checkout holds "
            f"{agree(len(paths), 'it', 'them')}, not as committed: commit that edit too, or "
            "everyone else sees the note marked as citing changed code")
    for key in result.already_in_team:
        say(f"left out {key}: it is in the team layer already and not in the local one")
    say_team_repeats(repeats, promoted)
    typer.echo("push the branch to share " + agree(len(result.keys), "it", "them"))
