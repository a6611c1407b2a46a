"""The hostile review of a note's whole life (docs/records/review-issue-13.md): mv's
journal and lock, update and edit, review and its end-of-session line, the Claude
Stop hook, MCP `replaces`. Each test was seen red against the code before its fix
(docs/reliability.md lists what held up and what was found)."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from omh_git_memory.model.faults import MV_POINTS
from tests.helpers import local_store, omh, remember_linked
from tests.helpers.mcp import GOOD, remember_calls
from tests.helpers.repo import init_committed

TIMEOUT = 20
_omh = functools.partial(omh, timeout=TIMEOUT)  # a hang fails the test, not the run



def test_hang_a_fifo_at_the_store_lock_hangs_no_reader_and_no_mv(repo_dir: Path) -> None:
    key = remember_linked(repo_dir, "Alpha fails.")
    lock = local_store(repo_dir) / ".omh-lock"
    lock.unlink(missing_ok=True)  # the write made it: a FIFO takes its place
    os.mkfifo(lock)
    recall = _omh(repo_dir, "memory", "recall", "alpha", "--json")
    assert recall.code == 0, recall.err
    assert key in recall.out
    listing = _omh(repo_dir, "memory", "--json")
    assert listing.code == 0, listing.err
    moved = _omh(repo_dir, "memory", "mv", key, "surprise/beta")
    assert moved.code == 1, moved.err
    assert ".omh-lock" in moved.err and "not a regular file" in moved.err
    assert len(moved.err.strip().splitlines()) == 1
    assert (local_store(repo_dir) / f"{key}.md").is_file()  # nothing moved


def test_dataloss_mcp_rm_refused_by_one_file_changes_no_other(repo_dir: Path) -> None:
    """`omh mcp rm` refused by the settings file (a FIFO, a link, not JSON) or by one
    harness file must leave every other file as it was, not half of the removal."""
    assert _omh(repo_dir, "mcp", "config", "claude", "--write").code == 0
    assert _omh(repo_dir, "mcp", "config", "codex", "--write").code == 0
    mcp_json = (repo_dir / ".mcp.json").read_bytes()
    codex = (repo_dir / ".codex" / "config.toml").read_bytes()
    settings = repo_dir / ".claude" / "settings.json"
    for breakage in ("fifo", "not json"):
        settings.unlink()
        if breakage == "fifo":
            os.mkfifo(settings)
        else:
            settings.write_text('{"hooks": ', encoding="utf-8")
        for args in (("claude",), ()):
            run = _omh(repo_dir, "mcp", "rm", *args)
            assert run.code == 1, (breakage, args, run.out)
            assert "settings.json" in run.err
            assert (repo_dir / ".mcp.json").read_bytes() == mcp_json, (breakage, args)
            assert (repo_dir / ".codex" / "config.toml").read_bytes() == codex
    settings.unlink()
    (repo_dir / ".codex" / "config.toml").write_text("[mcp_servers.omh\n", encoding="utf-8")
    run = _omh(repo_dir, "mcp", "rm")
    assert run.code == 1, run.out
    assert (repo_dir / ".mcp.json").read_bytes() == mcp_json  # claude's entry stays too


def _review_on_a_terminal(cwd: Path, on_prompt: list[tuple[object, str]]) -> tuple[int, str]:
    """`omh memory review` on a pty; at the n-th prompt, run the n-th callable (the
    world changing while the person reads), then type its answer."""
    import pty
    import select
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "memory", "review"],
                            cwd=cwd, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    out, seen, steps = b"", 0, list(on_prompt)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            while out.count(b"[p/e/r/k/v/q]") > seen:
                seen += 1
                if steps:
                    act, answer = steps.pop(0)
                    if callable(act):
                        act()
                    os.write(master, answer.encode() + b"\n")
                else:
                    os.write(master, b"\x04")
        elif proc.poll() is not None:
            break
    proc.wait(timeout=TIMEOUT)
    os.close(master)
    return proc.returncode, out.decode("utf-8", "replace").replace("\r\n", "\n")


def test_wrong_review_never_promotes_a_text_it_did_not_show(repo_dir: Path) -> None:
    """The person answers `p` about the note review showed; if the note was rewritten
    meanwhile (an agent's `replaces`, an editor), that other text is not committed."""
    from tests.helpers import git

    init_committed(repo_dir)
    key = remember_linked(repo_dir, "Alpha fails.")
    path = local_store(repo_dir) / f"{key}.md"
    swapped = path.read_text(encoding="utf-8").replace("Alpha fails.", "Something else.")

    def rewrite() -> None:
        path.write_text(swapped, encoding="utf-8")

    head = git(repo_dir, "rev-parse", "HEAD")
    code, out = _review_on_a_terminal(repo_dir, [(rewrite, "p")])
    assert code == 0, out
    assert git(repo_dir, "rev-parse", "HEAD") == head, out  # nothing committed
    assert "changed since review showed it" in out, out
    assert path.read_text(encoding="utf-8") == swapped  # the newer text stays local
    assert "promoted 0" in out


@pytest.mark.parametrize("point", MV_POINTS[:2])  # one file: no second step
def test_dataloss_update_killed_mid_write_leaves_the_note_old_or_new(repo_dir: Path,
                                                                     point: str) -> None:
    """A kill while `update` switches the file (the same for edit and MCP `replaces`)
    must leave the note under its name, old or new — not set aside under a hidden
    name where no listing finds it. (The old compare-and-swap renamed the note aside,
    compared it and linked the new text in: a kill between left no note at all.)"""
    key = remember_linked(repo_dir, "Alpha fails.")
    path = local_store(repo_dir) / f"{key}.md"
    before = path.read_bytes()
    run = _omh(repo_dir, "memory", "update", key, "--evidence", "a new line",
               env={"OMH_FAULT": point})
    assert run.code == -signal.SIGKILL, (point, run.code, run.err)  # killed at that step
    show = _omh(repo_dir, "memory", "show", key, "--json")
    assert show.code == 0, (point, show.err)
    after = path.read_bytes()
    assert after == before or b"a new line" in after
    assert after == before if point == "journal:prepared" else b"a new line" in after
    hidden = [p.name for p in path.parent.iterdir() if p.name.startswith(".")]
    assert hidden == [], hidden  # nothing left behind once a reader has read the store


def test_wrong_summary_never_counts_a_session_that_only_starts_like_this_one(
        repo_dir: Path) -> None:
    """`s1` must not count the notes of `s10`, nor of a session named `s1, x` (whose
    source, `session s1, x, claude-code 2.1`, starts with `session s1, `)."""
    for session in ("s10", "s1, x"):
        seen = {**GOOD, "observed": f"Seen by {session}.",
                "answers": [f"what did {session} see?"]}
        (done,) = remember_calls(repo_dir, [seen], session=session)
        assert not done.is_error, session
    run = _omh(repo_dir, "memory", "review", "--summary", "--json", env={"OMH_SESSION": "s1"})
    assert run.code == 0, run.err
    assert run.json()["count"] == 0, run.json()
    listed = _omh(repo_dir, "memory", "review", "--session", "s1", "--json")
    assert listed.json()["notes"] == []
    for session in ("s10", "s1, x"):
        own = _omh(repo_dir, "memory", "review", "--summary", "--json",
                   env={"OMH_SESSION": session})
        assert own.json()["count"] == 1, (session, own.json())


def _lint_duplicates(repo: Path) -> list[dict[str, object]]:
    run = _omh(repo, "memory", "lint", "--json")
    return [f for f in run.json()["findings"] if f["rule"] == "DuplicateKey"]


def test_wrong_a_derived_key_that_a_written_note_or_the_topic_holds_is_a_duplicate(
        repo_dir: Path) -> None:
    """Two stubs of one key are a DuplicateKey warning; so must be a stub whose key a
    written team note holds (a document `surprise/eps.md` beside the note
    `surprise/eps`) and a topic whose committed `[repo] name` is a stub's key — each
    listed twice, found twice by recall, and lint said nothing."""
    from tests.helpers import git

    omh(repo_dir, "init")
    config = repo_dir / ".omh" / "memory.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        'name = "repo"', 'name = "readme"'), encoding="utf-8")
    notes = repo_dir / ".omh" / "notes" / "surprise"
    notes.mkdir(parents=True)
    (notes / "eps.md").write_text(
        "---\nkey: surprise/eps\ntype: surprise\nsource: cli\nrecorded: 2026-11-01\n---\n\n"
        "# Eps fails.\n\n## Expected\ne\n\n## Observed\nEps fails.\n\n## Evidence\nv\n\n"
        "## Answers\n\n- q?\n\n## Related\n\n- [[readme]]\n", encoding="utf-8")
    (repo_dir / "surprise").mkdir()
    (repo_dir / "surprise" / "eps.md").write_text("# Eps document\n", encoding="utf-8")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a note, a document of its key, a topic named readme")
    found = _lint_duplicates(repo_dir)
    keys = sorted(str(f["key"]) for f in found)
    assert keys == ["readme", "surprise/eps"], found
    messages = " ".join(str(f["message"]) for f in found)
    assert "surprise/eps.md" in messages and ".omh/notes/surprise/eps.md" in messages
    assert "[repo] name" in messages


def test_wrong_a_topic_titled_as_the_repository_is_not_called_a_stub(repo_dir: Path) -> None:
    init_committed(repo_dir)
    run = _omh(repo_dir, "memory", "remember", "--type", "topic", "--title", "repo",
               "--section", "Summary=x")
    assert run.code == 1, run.out
    assert "stub" not in run.err and "((" not in run.err and ")))" not in run.err, run.err
    assert "repository topic" in run.err and "[repo] name" in run.err, run.err
