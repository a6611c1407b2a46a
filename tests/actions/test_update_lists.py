"""`update` and the note's two lists: `--answers`/`--relates-to` replace a list
whole and say what it no longer holds (a local note keeps no history); the
`--add-…` options add to it (actions/update.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.note import parse
from tests.helpers import omh

KEY = "surprise/the-port-is-taken"


@pytest.fixture
def noted(repo_dir: Path) -> Path:
    for observed in ("Another note.", "A third note."):
        assert omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", observed,
                   "--evidence", "v", "--answers", "q").code == 0
    assert omh(repo_dir, "memory", "remember", "--expected", "free", "--observed",
               "The port is taken.", "--evidence", "ss -ltn", "--answers", "why does it fail?",
               "--answers", "who holds 8080?", "--relates-to", "surprise/another-note").code == 0
    return repo_dir


def lists(repo: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    note = parse((open_workspace(repo).local.root / f"{KEY}.md").read_text())
    answers = note.section("Answers")
    return (answers.items if answers else ()), note.links


def test_add_answers_adds_and_keeps_the_others(noted: Path) -> None:
    run = omh(noted, "memory", "update", KEY, "--add-answers", "is 8080 free?",
              "--add-answers", "who holds 8080?")
    assert run.code == 0, run.err
    assert lists(noted)[0] == ("why does it fail?", "who holds 8080?", "is 8080 free?")
    assert "no longer in it" not in run.out


def test_add_relates_to_adds_a_link(noted: Path) -> None:
    assert omh(noted, "memory", "update", KEY, "--add-relates-to", "surprise/a-third-note"
               ).code == 0
    assert lists(noted)[1] == ("surprise/another-note", "surprise/a-third-note")


def test_a_list_given_whole_says_what_it_dropped(noted: Path) -> None:
    run = omh(noted, "memory", "update", KEY, "--answers", "who holds 8080?",
              "--relates-to", "surprise/a-third-note")
    assert ("note: --answers replaced the whole list; no longer in it: why does it fail? "
            "(--add-answers adds to the list instead)") in run.out
    assert ("note: --relates-to replaced the whole list; no longer in it: "
            "surprise/another-note (--add-relates-to adds to the list instead)") in run.out
    assert lists(noted) == (("who holds 8080?",), ("surprise/a-third-note",))


def test_json_names_the_dropped_items_and_nothing_when_nothing_changed(noted: Path) -> None:
    run = omh(noted, "memory", "update", KEY, "--answers", "only this", "--json")
    assert run.json()["dropped"] == {"answers": ["why does it fail?", "who holds 8080?"]}
    again = omh(noted, "memory", "update", KEY, "--answers", "only this", "--json")
    assert again.json()["changed"] is False and again.json()["dropped"] == {}


def test_a_whole_list_and_an_addition_together(noted: Path) -> None:
    run = omh(noted, "memory", "update", KEY, "--answers", "who holds 8080?",
              "--add-answers", "why does it fail?", "--json")
    assert lists(noted)[0] == ("who holds 8080?", "why does it fail?")
    assert run.json()["dropped"] == {}
