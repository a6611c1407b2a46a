"""A link to a key no note holds yet is kept — a key is known before its note is
written — and remember says so at once, on the command line as over MCP, rather
than leaving it to lint (actions/record.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh

ARGS = ("memory", "remember", "--expected", "e", "--observed", "The port is taken.",
        "--evidence", "ss -ltn", "--answers", "who holds 8080?")


def test_the_command_line_names_a_link_that_waits_for_its_note(repo_dir: Path) -> None:
    run = omh(repo_dir, *ARGS, "--relates-to", "surprise/not-written-yet")
    assert run.code == 0, run.err
    assert ("note: [[surprise/not-written-yet]] names no note yet; the link is kept, and "
            "reaches the note once one is written under that key") in run.out


def test_json_lists_the_waiting_links_and_a_link_to_a_note_is_not_one(repo_dir: Path) -> None:
    first = omh(repo_dir, *ARGS, "--json")
    assert first.json()["waiting_links"] == []
    second = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                 "CI binds 8080 too.", "--evidence", "v", "--answers", "q",
                 "--relates-to", "surprise/the-port-is-taken", "--relates-to", "later/x",
                 "--json")
    assert second.json()["waiting_links"] == ["later/x"]
    assert "names no note yet" not in omh(repo_dir, "memory", "remember", "--expected", "e",
                                          "--observed", "A third one.", "--evidence", "v",
                                          "--answers", "q", "--relates-to",
                                          "surprise/the-port-is-taken").out
