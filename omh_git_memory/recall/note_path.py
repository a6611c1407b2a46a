"""The one `path` every `--json` answer gives for a note.

A local note: its file's absolute path. A team note: its path from the
repository root, `.omh/notes/<key>.md`, the name git gives it (the commit read
is said elsewhere: `head`, `commit`). A stub: its document's path from the root.
The repository topic: None, since no file holds it (`omh memory show KEY`
prints it). Text output may say more (`HEAD:…`, `derived from …`); JSON says this.
"""

from __future__ import annotations

from omh_git_memory.model.layers import Layer
from omh_git_memory.recall import content_id


def json_path(layer: str, location: str, source: str = "") -> str | None:
    """The path for `--json` of a note stored at `location` (as a scan or the
    index names it: `<rev>:<path>` for a written team note)."""
    if content_id.is_topic(source):
        return None
    if content_id.is_stub(source) or layer != Layer.TEAM.value:
        return location
    return location.split(":", 1)[1] if ":" in location else location
