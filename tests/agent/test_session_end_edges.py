"""The end-of-session question's edges: how far a transcript is read, what counts
as a session, and the marker that keeps it to once a session (agent/session_end.py)."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

from omh_git_memory.agent.session_end import ASKED_DIR, QUESTION, hook_input, question, worked

TOOL_USE = b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}\n'
LIMIT = 64 * 1024 * 1024  # bytes of a transcript read


def _sparse(path: Path, at: int) -> str:
    """A transcript of NUL bytes with a tool call starting at byte `at`."""
    with open(path, "wb") as f:
        f.seek(at)
        f.write(TOOL_USE)
    return str(path)


def test_a_tool_call_within_the_first_64_mib_is_seen_and_one_past_it_is_not(
    tmp_path: Path
) -> None:
    start = TOOL_USE.index(b'"tool_use"')  # 50 bytes into the line, 10 bytes long
    assert worked(_sparse(tmp_path / "in.jsonl", LIMIT - start - 10))  # ends at the limit
    assert not worked(_sparse(tmp_path / "past.jsonl", LIMIT - start - 9))  # one byte past
    assert not worked(_sparse(tmp_path / "beyond.jsonl", LIMIT))


def test_an_empty_transcript_path_or_a_folder_is_no_work(tmp_path: Path) -> None:
    assert not worked("")
    assert not worked(str(tmp_path))  # a folder: reading it fails, no work seen
    assert hook_input("  \n ") == {}


def _given(tmp_path: Path, session: object = "abc", active: object = False) -> dict[str, object]:
    path = tmp_path / "t.jsonl"
    path.write_bytes(TOOL_USE)
    return {"session_id": session, "transcript_path": str(path), "stop_hook_active": active}


def test_the_marker_is_the_sessions_hash_a_private_empty_file(tmp_path: Path) -> None:
    omh_dir = tmp_path / "omh"
    assert question(_given(tmp_path, "s1"), 0, omh_dir) == QUESTION
    marker = omh_dir / ASKED_DIR / hashlib.sha256(b"s1").hexdigest()
    assert marker.read_bytes() == b""
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600


def test_a_session_id_that_is_not_text_is_not_a_session(tmp_path: Path) -> None:
    omh_dir = tmp_path / "omh"
    for session in (7, ["abc"], None):
        assert question(_given(tmp_path, session), 0, omh_dir) is None
    assert not (omh_dir / ASKED_DIR).exists()


def test_one_note_recorded_is_enough_not_to_ask(tmp_path: Path) -> None:
    omh_dir = tmp_path / "omh"
    assert question(_given(tmp_path), 1, omh_dir) is None
    assert question(_given(tmp_path, active=True), 0, omh_dir) is None
    assert not (omh_dir / ASKED_DIR).exists()  # not asked: no marker left either
    assert question(_given(tmp_path), 0, omh_dir) == QUESTION
