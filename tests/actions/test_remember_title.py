"""A note's title is the first sentence of `observed`, and a sentence does not end
at an abbreviation, a version or a file name (actions/remember.py's first_sentence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.remember import first_sentence
from tests.helpers import omh


@pytest.mark.parametrize(("observed", "title"), [
    ("Use e.g. poetry lock to refresh.", "Use e.g. poetry lock to refresh."),
    ("Use e.g. Poetry's lock to refresh. Then commit.", "Use e.g. Poetry's lock to refresh."),
    ("It fails, i.e. the build stops. More.", "It fails, i.e. the build stops."),
    ("Compare (cf. the FAQ) first. Then act.", "Compare (cf. the FAQ) first."),
    ("Tokens, keys, etc. are scrubbed. Next.", "Tokens, keys, etc. are scrubbed."),
    ("We list A, B, etc. Then C.", "We list A, B, etc."),
    ("Pin to 1.2.3 before upgrading. Then run.", "Pin to 1.2.3 before upgrading."),
    ("Upgrade to 2.0. Then rebuild.", "Upgrade to 2.0."),
    ("Edit poetry.lock by hand. Never.", "Edit poetry.lock by hand."),
    ("Run setup.py. It works.", "Run setup.py."),
    ("Why? Because.", "Why?"),
    ("It works!  Twice.", "It works!"),
    ("no mark at all", "no mark at all"),
    ("Ends at the end.", "Ends at the end."),
])
def test_the_first_sentence_ends_where_a_sentence_ends(observed: str, title: str) -> None:
    assert first_sentence(observed) == title


def test_a_note_remembered_with_an_abbreviation_keeps_its_whole_title(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--expected", "a plain lock", "--observed",
              "Use e.g. poetry lock to refresh. It rewrites the hashes.", "--evidence",
              "poetry lock --no-update", "--answers", "how do I refresh the lock?", "--json")
    assert run.code == 0, run.err
    assert run.json()["key"] == "surprise/use-e-g-poetry-lock-to-refresh"
    shown = omh(repo_dir, "memory", "show", "surprise/use-e-g-poetry-lock-to-refresh")
    assert "# Use e.g. poetry lock to refresh." in shown.out
