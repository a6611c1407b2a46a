"""How alike two strings or two sequences are: rapidfuzz, behind this one module.

Two questions are asked of it: which key a mistyped key probably meant (the "did you
mean" of every command that takes a key), and how alike two notes' word pairs are
(the NearDuplicate rule and remember's warning). rapidfuzz is imported only when one
of them is asked, so a command that never asks does not pay for it."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

# A cutoff low enough for a typo, high enough not to offer an unrelated key.
TYPO_CUTOFF = 75


def closest(word: str, choices: Iterable[str], cutoff: float = TYPO_CUTOFF) -> str | None:
    """The choice most like `word`, when it scores at least `cutoff` (0-100), else None."""
    from rapidfuzz import process

    listed = sorted(choices)
    guess = process.extractOne(word, listed, score_cutoff=cutoff) if listed else None
    return None if guess is None else str(guess[0])


def ratio(x: Sequence[Hashable], y: Sequence[Hashable], cutoff: float = 0.0) -> float:
    """rapidfuzz's ratio of two sequences (0-100): 200 × their longest common
    subsequence / (the length of one + the length of the other); 0 below `cutoff`."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(x, y, score_cutoff=cutoff))
