"""Semantic recall over documents: a document the embedding nominates but whose
words the lexical check turns away is kept only when it is SURE-similar to the
question; a written note the embedding nominates needs no such bar
(recall/fusion.py, docs/recall.md "A floor for the embedding's documents")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall import fusion
from omh_git_memory.recall.bm25 import Searcher
from tests.helpers import make_repo, note_text

ASKED = "quantum teleportation of cats"  # no word of it is in the store


class FixedSimilarity:
    """A semantic view that finds every document `near` similar to any question
    (each other one at 0.1)."""

    def __init__(self, searcher: Searcher, near: dict[str, float]) -> None:
        self.sims = np.array([near.get(d.key, 0.1) if d is not None else -np.inf
                              for d in searcher.docs], dtype=np.float32)

    def similarities(self, phrasings: Sequence[str]) -> Any:
        return self.sims


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    note = note_text("gardening", body="Water the roses at dawn.\n")
    make_repo(tmp_path / "r", {"docs/near.md": "# Near\n\nSomething about pipes.\n",
                               "docs/far.md": "# Far\n\nSomething about walls.\n",
                               ".omh/notes/gardening.md": note})
    return tmp_path / "r"


def keys(repo: Path, near: dict[str, float]) -> list[str]:
    ws = open_workspace(repo)
    searcher = ws.searcher()
    view = FixedSimilarity(searcher, near)
    return [h.doc.key for h in ask(ws, Question(ASKED), searcher=searcher,
                                   semantic=lambda _s: view).answer.results]


def test_a_document_the_embedding_alone_finds_is_kept_only_when_sure(repo: Path) -> None:
    found = keys(repo, {"docs/near": fusion.SURE, "docs/far": fusion.SURE - 0.01})
    assert "docs/near" in found
    assert "docs/far" not in found


def test_a_question_no_document_is_close_to_gets_no_document(repo: Path) -> None:
    found = keys(repo, {"docs/near": 0.3, "docs/far": 0.2})
    assert not [k for k in found if k.startswith("docs/")]


def test_a_written_note_the_embedding_finds_needs_no_bar(repo: Path) -> None:
    """The bar is for documents: the commit corpora's notes that share no word with
    their question are found by the embedding at similarities far under it."""
    assert "gardening" in keys(repo, {"gardening": 0.2})


def test_the_bar_is_the_documented_similarity_of_0_4(repo: Path) -> None:
    """docs/recall.md gives the bar and its evidence: a document at 0.41 is vouched
    for, one at 0.39 is not."""
    found = keys(repo, {"docs/near": 0.41, "docs/far": 0.39})
    assert "docs/near" in found
    assert "docs/far" not in found
