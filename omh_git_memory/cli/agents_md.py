"""`omh memory agents-md`: the omh block in AGENTS.md, for harnesses that cache tool
descriptions."""

from __future__ import annotations

from omh_git_memory.cli.options import JsonFlag
from omh_git_memory.cli.output import emit_json, here, progress_bar, say


def agents_md(as_json: JsonFlag = False) -> None:
    """Write or refresh the omh block in AGENTS.md; text outside its markers is kept."""
    from omh_git_memory.agent.agents_md import refresh
    from omh_git_memory.agent.census import own_prefixes, take_census

    ws = here()
    path = ws.checkout / "AGENTS.md"
    census = take_census(ws.searcher(progress=progress_bar()).docs,
                         own_prefixes(ws.config().keys.templates))
    existed, changed = refresh(ws.checkout, census)
    if as_json:
        emit_json({"path": str(path), "changed": changed})
    else:
        say(f"{('refreshed' if existed else 'created') if changed else 'already current:'} "
            f"{path}")
