"""What the end-of-session hook says to the agent: once a session, and only when it
worked and recorded nothing, the question whether anything surprised it.

Claude Code runs the Stop hook whenever the agent ends a turn and hands it a JSON
object on stdin (`session_id`, `transcript_path`, `stop_hook_active`). A hook that
answers `{"decision": "block", "reason": …}` makes the agent go on with the reason as
its next instruction; the next stop then has `stop_hook_active` true. The question
is never load-bearing — recording stays the agent's choice — and never asked twice:
not in a row (`stop_hook_active`), and not twice in one session (a marker per
session under the repository's git directory).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import OmhError

QUESTION: Final = (
    "Before you stop: did anything in this session go differently from what you "
    "expected about this repository (a command, a test, a convention, an error)? If "
    "so, and you have not recorded it, record it now with omh's `remember` tool, one "
    "call per surprise. If nothing surprised you, stop without saying more."
)
TRANSCRIPT_LIMIT: Final = 64 << 20  # bytes of a transcript read to see whether it worked
ASKED_DIR: Final = "stop-asked"  # under the git directory's omh/: one marker a session


def hook_input(raw: str) -> Mapping[str, Any]:
    """The hook's JSON object, or {} when stdin held none (run by hand, or junk)."""
    try:
        found = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def worked(transcript: object) -> bool:
    """Whether the session's transcript shows the agent used a tool: a session that
    only talked has nothing it could have found out about the repository."""
    if not isinstance(transcript, str) or not transcript:
        return False
    try:
        with open(transcript, "rb") as f:
            return b'"tool_use"' in f.read(TRANSCRIPT_LIMIT)
    except OSError:
        return False


def question(given: Mapping[str, Any], recorded: int, omh_dir: Path) -> str | None:
    """The question to put to the agent as it stops, or None: the session recorded a
    note already, or was asked already (in a row, or once this session), or used no
    tool, or is not named. Asking leaves the session's marker under `omh_dir`."""
    session = given.get("session_id")
    if recorded or given.get("stop_hook_active") or not isinstance(session, str) or \
            not session or not worked(given.get("transcript_path")):
        return None
    marker = f"{ASKED_DIR}/{hashlib.sha256(session.encode('utf-8')).hexdigest()}"
    try:  # through the one write path: never through a link planted there
        made = nofollow.write(omh_dir, marker, b"", new_mode=0o600, only_if_absent=True)
    except (OSError, OmhError):
        return None  # nowhere to remember having asked: better not to ask at all
    return QUESTION if made else None  # not made: asked this session already
