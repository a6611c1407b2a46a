"""The end-of-session hook asks the agent, once a session, whether anything
surprised it — only when the session used a tool and recorded nothing
(agent/session_end.py, `omh memory review --summary --for claude`)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omh_git_memory.agent import session_end
from omh_git_memory.agent.session_end import ASKED_DIR, QUESTION, hook_input, question, worked
from tests.helpers import omh

TOOL_USE = '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}\n'
TALK = '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}\n'


def transcript(tmp_path: Path, text: str) -> str:
    path = tmp_path / "transcript.jsonl"
    path.write_text(text)
    return str(path)


def given(tmp_path: Path, text: str = TOOL_USE, **extra: object) -> dict[str, object]:
    return {"session_id": "abc", "transcript_path": transcript(tmp_path, text),
            "stop_hook_active": False, **extra}


def test_a_session_that_worked_and_recorded_nothing_is_asked_once(tmp_path: Path) -> None:
    omh_dir = tmp_path / "omh"
    assert question(given(tmp_path), 0, omh_dir) == QUESTION
    assert len(list((omh_dir / ASKED_DIR).iterdir())) == 1
    assert question(given(tmp_path), 0, omh_dir) is None  # once a session
    other = {**given(tmp_path), "session_id": "def"}
    assert question(other, 0, omh_dir) == QUESTION  # another session is asked


def test_no_question_in_a_row_after_recording_or_after_only_talking(tmp_path: Path) -> None:
    omh_dir = tmp_path / "omh"
    assert question(given(tmp_path, stop_hook_active=True), 0, omh_dir) is None
    assert question(given(tmp_path), 2, omh_dir) is None
    assert question(given(tmp_path, TALK), 0, omh_dir) is None
    assert question({**given(tmp_path), "session_id": ""}, 0, omh_dir) is None
    assert question({"stop_hook_active": False}, 0, omh_dir) is None
    assert not (omh_dir / ASKED_DIR).exists() or not list((omh_dir / ASKED_DIR).iterdir())


def test_nowhere_to_keep_the_marker_means_no_question(tmp_path: Path) -> None:
    (tmp_path / "omh").write_text("a file where the folder would be")
    assert question(given(tmp_path), 0, tmp_path / "omh") is None


def test_a_full_disk_where_the_marker_goes_means_no_question(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> bool:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(session_end.nofollow, "write", full)
    assert question(given(tmp_path), 0, tmp_path / "omh") is None

def test_the_hooks_input_is_read_leniently() -> None:
    assert hook_input("") == {} and hook_input("not json") == {} and hook_input("[1]") == {}
    assert hook_input('{"session_id": "x"}') == {"session_id": "x"}
    assert not worked(None) and not worked("/no/such/transcript") and not worked(3)


def test_the_hook_command_asks_claude_to_go_on_once(repo_dir: Path, tmp_path: Path) -> None:
    """As Claude Code runs it: a process, the hook's JSON on stdin."""
    assert omh(repo_dir, "init").code == 0
    hook = json.dumps(given(tmp_path))
    env = {**os.environ, "OMH_SESSION": "s9"}

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "omh_git_memory", "memory", "review", "--summary", "--for",
             "claude"], cwd=repo_dir, input=hook, capture_output=True, text=True, env=env,
            check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = json.loads(run())
    assert first == {"decision": "block", "reason": QUESTION}
    assert run() == ""  # asked already: silent, as before


def test_without_a_named_session_the_hook_asks_nothing(repo_dir: Path, tmp_path: Path) -> None:
    """Nothing tells whether an unnamed session recorded a note: no question, as the
    end-of-session line says nothing then too."""
    assert omh(repo_dir, "init").code == 0
    env = {k: v for k, v in os.environ.items() if k != "OMH_SESSION"}
    done = subprocess.run(
        [sys.executable, "-m", "omh_git_memory", "memory", "review", "--summary", "--for",
         "claude"], cwd=repo_dir, input=json.dumps(given(tmp_path)), capture_output=True,
        text=True, env=env, check=False)
    assert done.returncode == 0 and done.stdout == ""


def test_a_link_planted_where_the_marker_goes_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    omh_dir = tmp_path / "omh"
    omh_dir.mkdir()
    (omh_dir / ASKED_DIR).symlink_to(outside)
    assert question(given(tmp_path), 0, omh_dir) is None
    assert list(outside.iterdir()) == []
