"""Counts in messages (omh_git_memory/model/plural.py): the noun and the verb agree
with the count."""

from __future__ import annotations

import pytest

from omh_git_memory.model.plural import agree, count


@pytest.mark.parametrize(("n", "said"), [(0, "0 notes"), (1, "1 note"), (2, "2 notes")])
def test_count_is_singular_for_one_only(n: int, said: str) -> None:
    assert count(n, "note") == said


def test_count_takes_an_irregular_plural() -> None:
    assert count(1, "entry", "entries") == "1 entry"
    assert count(3, "entry", "entries") == "3 entries"


def test_agree_picks_the_word_for_one_or_for_many() -> None:
    assert agree(1, "links", "link") == "links"
    assert agree(0, "links", "link") == "link"
    assert agree(2, "links", "link") == "link"
