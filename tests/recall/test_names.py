"""A name nothing mentions: a question that names a thing (`PyInstaller`) no note
or document holds gets no document, and says which name (recall/names.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.names import names, unknown_in_every, unknown_names
from tests.helpers import make_repo, note_text, omh

PACKAGING = """# Packaging

## Build a single executable

Bundle the application and its dependencies into one executable file with the
bundle command; the executable runs without an installed interpreter.
"""


@pytest.mark.parametrize(("question", "expected"), [
    ("bundle an app with PyInstaller", ["PyInstaller"]),
    ("scan the lock file for known CVEs", ["CVEs"]),
    ("serialize a struct to JSON with serde", ["JSON"]),
    ("connect to Postgres", ["Postgres"]),
    ("use the wolfSSL backend", ["wolfSSL"]),
    ("what is Poetry's default timeout", ["Poetry"]),
    ("Why does it fail?", []),  # the first word begins the question
    ("it fails. Then what? Retry it", []),  # each begins a sentence
    ("docs: Fix the typo", []),  # the first word after an area label
    ("SolverProblemError: Because it needs requests", []),  # a pasted error's label
    ("HTTP2: Fix for PyCharm", ["PyCharm"]),  # the label only, not what follows
    ("why does SolverProblemError: come up", ["SolverProblemError"]),  # not first
    ("can I skip it, and should I?", []),  # `I` names nothing
    ("compile (for WebAssembly) and call it from `JavaScript`",
     ["WebAssembly", "JavaScript"]),
    ("PyCharm and PyCharm again", ["PyCharm"]),  # a sentence's start, but CamelCase
    ("JSON output. Postgres too", ["JSON"]),  # `Postgres` begins a sentence
    ("CI runs forever", ["CI"]),  # two capitals are a name, even first
    ("configure PyCharm, then PyCharm", ["PyCharm"]),  # each once
])
def test_the_names_a_question_gives(question: str, expected: list[str]) -> None:
    assert names(question) == expected


def test_a_name_counts_as_known_only_when_held_whole() -> None:
    held = {"py", "installer", "json"}.__contains__
    assert unknown_names("bundle with PyInstaller to JSON", held) == ("PyInstaller",)


def test_another_phrasing_naming_only_known_things_lifts_it() -> None:
    held = {"bundl", "execut"}.__contains__
    assert unknown_in_every(["bundle with PyInstaller"], held) == ("PyInstaller",)
    assert unknown_in_every(["bundle with PyInstaller", "bundle an executable"], held) == ()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    note = note_text("bundling", body="Bundle the executable before release.\n")
    make_repo(tmp_path / "r", {"docs/packaging.md": PACKAGING,
                               ".omh/notes/bundling.md": note})
    return tmp_path / "r"


def _keys(repo: Path, question: str) -> tuple[list[str], tuple[str, ...]]:
    answer = ask(open_workspace(repo), Question(question)).answer
    return [h.doc.key for h in answer.results], answer.unknown


def test_a_question_naming_what_nothing_mentions_gets_no_document(repo: Path) -> None:
    found, unknown = _keys(repo, "bundle the application into one executable with Bundler")
    assert "docs/packaging" not in found
    assert "bundling" in found  # a written note still answers
    assert unknown == ("Bundler",)


def test_the_same_question_without_the_name_gets_the_document(repo: Path) -> None:
    found, unknown = _keys(repo, "bundle the application into one executable")
    assert "docs/packaging" in found
    assert unknown == ()


def test_a_name_the_store_holds_keeps_the_document(repo: Path) -> None:
    found, _ = _keys(repo, "bundle the application into one Executable")
    assert "docs/packaging" in found


def test_the_answer_says_which_name_in_text_and_json(repo: Path) -> None:
    question = "bundle the application into one executable with Bundler"
    text = omh(repo, "memory", "recall", question)
    assert text.code == 0
    assert "nothing here mentions Bundler, so no document is returned" in text.out
    data = json.loads(omh(repo, "memory", "recall", question, "--json").out)
    assert data["unknown_names"] == ["Bundler"]
