"""How alike two strings are (omh_git_memory/model/similar.py): the "did you mean"
of a mistyped key, and the likeness of two notes' words."""

from __future__ import annotations

import pytest

from omh_git_memory.model.similar import TYPO_CUTOFF, closest, ratio


def test_closest_offers_the_key_a_typo_meant() -> None:
    keys = ["surprise/mounting-fails", "credentials-are-a-named-volume"]
    assert closest("credentials-are-a-named-volum", keys) == "credentials-are-a-named-volume"


def test_closest_offers_nothing_unrelated_or_from_no_keys() -> None:
    assert closest("zzzz", ["credentials-are-a-named-volume"]) is None
    assert closest("anything", []) is None


def test_closest_offers_a_key_scoring_the_cutoff_itself() -> None:
    # "abcd" against "abce": 2 * 3 / 8 = 75, the typo cutoff exactly
    assert ratio("abcd", "abce") == TYPO_CUTOFF
    assert closest("abcd", iter(["abce"])) == "abce"
    assert closest("abcd", ["abce"], cutoff=76) is None


def test_ratio_of_sequences_and_its_cutoff() -> None:
    assert ratio(("a", "b"), ("a", "b")) == 100.0
    assert ratio(("a", "b", "c", "d"), ("a", "b", "x", "y")) == 50.0
    assert ratio(("a", "b", "c", "d"), ("a", "b", "x", "y"), cutoff=51) == 0.0


def test_ratio_without_a_cutoff_keeps_a_score_below_one() -> None:
    # one shared item in 300 each: 200 * 1 / 600 = 0.33..., kept, not rounded to 0
    x = ("shared", *(f"x{i}" for i in range(299)))
    y = ("shared", *(f"y{i}" for i in range(299)))
    assert 0.0 < ratio(x, y) < 1.0
    assert ratio(x, y) == pytest.approx(200 / 600)
