"""What `omh memory review` says to do next: off a terminal, how to act on the list;
after a quit, how many notes it never reached."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import omh
from tests.helpers.review import on_a_terminal, waiting_notes

NEXT = ("promote with `omh memory promote KEY…`, drop with `omh memory rm KEY`; "
        "on a terminal, `omh memory review` asks about each")


@pytest.fixture
def store(repo_dir: Path) -> Path:
    """Three local notes waiting for review."""
    return waiting_notes(repo_dir)


def test_off_a_terminal_the_list_ends_with_what_to_do(store: Path) -> None:
    done = omh(store, "memory", "review")  # stdin empty, not a terminal
    assert done.code == 0, done.err
    assert done.out.splitlines()[-1] == NEXT
    empty = omh(store, "memory", "review", "--session", "nobody")
    assert NEXT not in empty.out  # nothing to act on, nothing to say


def test_on_a_terminal_the_list_does_not_repeat_it_and_a_quit_counts_the_rest(
    store: Path,
) -> None:
    code, out = on_a_terminal(store, ["k", "q"])
    assert code == 0, out
    assert NEXT not in out
    assert "promoted 0, removed 0, kept 1, not reached 2" in out
    code, out = on_a_terminal(store, ["k", "k", "k"])
    assert code == 0, out
    assert out.rstrip().endswith("promoted 0, removed 0, kept 3"), out
