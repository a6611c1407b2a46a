"""A stub result names the section of its document that matched — in text, in
`--json` and over MCP — and over MCP its lines are quoted with their line breaks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import omh_git_memory.actions.ask as asking
from omh_git_memory.actions.ask import Documents, Question, ask, question_weights
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.recall.content_id import stub_id
from omh_git_memory.recall.sections import Section
from tests.helpers import git, make_repo, omh
from tests.helpers.mcp import text_of

CONTRIBUTING = """\
# Contributing

Thanks for helping.

## Code style

Format with the formatter before you push.

## Running the tests

Install the toolchain, then:

    cargo run python install
    cargo nextest run

## Releases

Maintainers tag a release from main.
"""


def _repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    make_repo(path, {"CONTRIBUTING.md": CONTRIBUTING, "README.md": "# Demo\n\nA demo.\n"})
    return path


def test_the_core_answer_names_each_stub_results_section(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    answered = ask(open_workspace(repo), Question("how do I run the nextest tests"), excerpts=3)
    first = answered.answer.results[0].doc
    assert first.location == "CONTRIBUTING.md"
    assert answered.sections[(first.layer, first.key)] == Section("Running the tests", 9, 14)


def test_only_the_excerpted_results_have_their_lines_quoted(tmp_path: Path) -> None:
    """The command line asks for no excerpt, so it reads no lines to quote; a quote
    starts at the first line holding a content word of the question (`the` in
    "Install the toolchain" does not count)."""
    ws = open_workspace(_repo(tmp_path))
    assert ask(ws, Question("running the nextest tests")).quotes == {}
    quoted = ask(ws, Question("running the nextest tests"), excerpts=1).quotes
    section, lines = quoted[("team", "contributing")]
    assert section.heading == "Running the tests"
    assert lines == ["    cargo run python install", "    cargo nextest run"]


def test_a_heading_whose_text_is_all_in_its_subsections_is_quoted_with_them(
        tmp_path: Path) -> None:
    """A heading alone on its lines is no answer to read: the section named and
    quoted runs to the next heading of its level, its subsections' lines included."""
    repo = tmp_path / "repo"
    make_repo(repo, {"docs/lock.md": "# Lock files\n\nWhat they are.\n\n"
                     "## Committing the lock file to version control\n\n"
                     "### As an application developer\n\nCommit it, always.\n\n"
                     "### As a library developer\n\nCommit it too.\n\n"
                     "## Updating\n\nRun update.\n"})
    answered = ask(open_workspace(repo), Question("should I commit the lock file to version "
                                                  "control"), excerpts=1)
    where = ("team", "docs/lock")
    section, lines = answered.quotes[where]
    assert (section.heading, section.start, section.end) == (
        "Committing the lock file to version control", 5, 13)
    assert answered.sections[where] == section
    assert lines == ["Commit it, always.", "### As a library developer", "Commit it too."]


def test_a_result_that_is_not_a_stub_names_no_section(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    run = omh(repo, "memory", "remember", "--type", "topic", "--title", "Nextest runs the tests",
              "--section", "Summary=nextest runs the tests in parallel.")
    assert run.code == 0, run.err
    answered = ask(open_workspace(repo), Question("nextest tests"), excerpts=3)
    keys = {(h.doc.layer, h.doc.key) for h in answered.answer.results}
    assert ("local", "nextest-runs-the-tests") in keys
    assert set(answered.sections) == {("team", "contributing")}


def test_the_command_line_shows_the_section_and_its_lines(tmp_path: Path) -> None:
    run = omh(_repo(tmp_path), "memory", "recall", "who tags a release")
    assert run.code == 0, run.err
    line = next(ln for ln in run.out.splitlines() if ln.startswith("contributing"))
    assert line.split(" · by ")[0].endswith("— CONTRIBUTING.md § Releases, lines 16–18"), run.out


def test_json_gives_the_section_heading_and_line_range(tmp_path: Path) -> None:
    run = omh(_repo(tmp_path), "memory", "recall", "--json", "who tags a release")
    assert run.code == 0, run.err
    results = {r["key"]: r for r in run.json()["results"]}
    assert results["contributing"]["section"] == {
        "heading": "Releases", "within": None, "start_line": 16, "end_line": 18}


def test_json_section_is_null_for_a_document_with_no_matching_section(tmp_path: Path) -> None:
    """The README matches on its path's words only (`readme`), not on any line."""
    run = omh(_repo(tmp_path), "memory", "recall", "--json", "readme")
    assert run.code == 0, run.err
    results = {r["key"]: r for r in run.json()["results"]}
    assert results["readme"]["section"] is None


def _recall_over_mcp(repo: Path, question: str) -> str:
    async def run() -> Any:
        async with Client(build_server(open_workspace(repo))) as client:
            return await client.call_tool("recall", {"question": question})

    return text_of(asyncio.run(run()))


def test_over_mcp_two_commands_stay_on_two_lines(tmp_path: Path) -> None:
    said = _recall_over_mcp(_repo(tmp_path), "how do I install and run the tests")
    quoted = said.split("What the best", 1)[1]
    assert "  Read CONTRIBUTING.md § Running the tests, lines 9–14:\n" in quoted, said
    assert "      cargo run python install\n      cargo nextest run\n" in quoted, said
    assert "contributing  team · " in said.split("What the best", 1)[0]


def test_function_words_choose_no_section(tmp_path: Path) -> None:
    """`how do I install it`: the section holding `how` and `I` many times is not the
    one that says `install`; and a question whose only word a section holds is a
    function word names no section at all."""
    guide = ("# Guide\n\n## Questions\n\nHow do I ask? How do I answer? How do I know?\n\n"
             "## Setup\n\nInstall it with pip.\n")
    make_repo(tmp_path / "r", {"docs/guide.md": guide,
                               "docs/quantum/entanglement.md":
                                   "# Notes\n\n## Misc\n\nThis is about the coffee rota.\n"})
    ws = open_workspace(tmp_path / "r")
    answered = ask(ws, Question("how do I install it"))
    assert answered.sections[("team", "docs/guide")].heading == "Setup"
    other = ask(ws, Question("what is the quantum entanglement about"))
    assert [h.doc.key for h in other.answer.results] == ["docs/quantum/entanglement"]
    assert ("team", "docs/quantum/entanglement") not in other.sections


def test_json_names_the_heading_a_repeated_heading_is_under(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_repo(repo, {"docs/cli.md": "# Commands\n\n## add\n\n### Options\n\n--group adds "
                     "to a group.\n\n## remove\n\n### Options\n\n--dry-run prints.\n"})
    run = omh(repo, "memory", "recall", "--json", "which options does remove take, dry-run")
    assert run.code == 0, run.err
    (first, *_) = run.json()["results"]
    assert first["section"] == {"heading": "Options", "within": "remove",
                                "start_line": 11, "end_line": 13}
    text = omh(repo, "memory", "recall", "which options does remove take, dry-run").out
    assert "docs/cli.md § remove › Options, lines 11–13" in text

def test_a_word_every_document_holds_weighs_its_rarity_below_one(tmp_path: Path) -> None:
    """A section is chosen by each question word's rarity: a word the whole store
    holds weighs little (its idf is below 1), and is not raised to 1 by default."""
    make_repo(tmp_path / "r", {"README.md": "# Widget\n\nThe widget.\n",
                               "docs/a.md": "# A\n\nWidget setup.\n",
                               "docs/b.md": "# B\n\nWidget teardown.\n"})
    searcher = open_workspace(tmp_path / "r").searcher()
    (common,) = [t for t in searcher.terms("widget") if t.content]
    (rare,) = [t for t in searcher.terms("teardown") if t.content]
    assert 0 < common.idf < 1 < rare.idf
    weights = question_weights(searcher, ["widget", "widget teardown"])
    assert weights == {common.word: common.idf, rare.word: rare.idf}


def test_a_stub_whose_blob_the_clone_lacks_is_still_answered_without_a_section(
    tmp_path: Path,
) -> None:
    """A partial or damaged clone lacks the document's contents after the index was
    built: the command line's answer (no excerpts) still shows the result, with no
    section to name."""
    repo = _repo(tmp_path)
    ws = open_workspace(repo)
    ws.searcher()  # the index, built while the contents were there
    blob = git(repo, "rev-parse", "HEAD:CONTRIBUTING.md").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    answered = ask(ws, Question("how do I run the nextest tests"))
    assert answered.answer.results[0].doc.location == "CONTRIBUTING.md"
    assert answered.sections == {}
    # The MCP recall asks for excerpts: the same answer, with nothing to quote of it.
    quoted = ask(ws, Question("how do I run the nextest tests"), excerpts=3)
    assert quoted.answer.results[0].doc.location == "CONTRIBUTING.md"
    assert quoted.notes == {} and quoted.quotes == {}


def test_a_process_keeps_the_sections_of_the_last_256_documents_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server answering many questions tokenises a document once, within a bound:
    the 257th document read pushes out the first."""
    monkeypatch.setattr(asking, "_SECTIONS", {})
    pygit = make_repo(tmp_path / "r", {"docs/a.md": "# A\n\n## Part\n\nText.\n"})
    ws = open_workspace(tmp_path / "r")
    (stub,) = [d for d in ws.searcher().docs if d is not None and d.is_stub]
    docs = [stub._replace(source=stub_id(str(pygit.create_blob(f"# D{i}\n\nText {i}.\n")),
                                         f"docs/d{i}.md"))
            for i in range(257)]
    texts = Documents(ws)
    for doc in docs:
        assert texts.sections(doc) is not None
    kept = asking._SECTIONS
    assert len(kept) == 256
    where = [(d.content.blob_id, d.content.path) for d in docs]
    assert where[0] not in kept and where[1] in kept and where[-1] in kept
