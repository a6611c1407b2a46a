"""The repository topic links every document, so as a document's neighbour it says
nothing of the answer: it is named under a result only when the question shares a
word with it, or when the result links to it itself (recall/neighbours.py)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import make_repo

DOC = "# Timeouts\n\n## Raising the network timeout\n\nSet the timeout to sixty seconds.\n"


def _neighbours(repo: Path, question: str) -> list[bool]:
    """Whether each neighbour named in the answer is the repository topic."""
    answer = ask(open_workspace(repo), Question(question)).answer
    assert answer.results, question
    return [n.is_topic for h in answer.results for n in h.neighbours]


def test_the_topic_is_no_neighbour_of_a_document_when_the_question_misses_it(
        tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"docs/timeouts.md": DOC, "README.md": "# Widget\n\nA widget.\n"})
    assert not any(_neighbours(tmp_path / "r", "raising the network timeout"))


def test_the_topic_is_named_when_the_question_shares_a_word_with_it(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"docs/timeouts.md": DOC, "README.md": "# Widget\n\nA widget.\n"})
    ws = open_workspace(tmp_path / "r")
    topic = next(d for d in ws.searcher().docs if d is not None and d.is_topic)
    word = topic.title.split()[-1]  # the repository's name, which the topic holds
    assert any(_neighbours(tmp_path / "r", f"network timeout in {word} docs/timeouts.md"))
