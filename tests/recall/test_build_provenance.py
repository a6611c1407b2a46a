"""Who said it: each team note and document in an answer carries the commit that last
changed it, its author and its day — in text, `--json` and over MCP — found as the
index is built (git/last_changed.py), not by a walk of the history per question."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pygit2
import pytest
from mcp import Client

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.recall import build
from tests.helpers import commit_as, make_repo, note_text, omh
from tests.helpers.mcp import text_of

NOTE = ".omh/notes/deploy-uses-blue-green.md"


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OMH_LOCAL_STORE", str(tmp_path / "local"))
    path = tmp_path / "repo"
    make_repo(path)
    return path


def _changed(repo: Path, question: str) -> dict[str, tuple[str, str, int]]:
    answered = ask(open_workspace(repo), Question(question))
    return {key: change for (_layer, key), change in answered.changed.items()}


def test_a_team_note_is_attributed_to_the_commit_that_last_changed_it(repo: Path) -> None:
    ada = commit_as(repo, "Ada", {NOTE: note_text("deploy-uses-blue-green",
                                                    body="Deploys switch blue and green.\n")}, 10)
    commit_as(repo, "Bob", {"README.md": "# Project\n\nSomething else.\n"}, 20)
    commit, author, _day = _changed(repo, "blue green deploys")["deploy-uses-blue-green"]
    assert (commit, author) == (ada, "Ada")
    carol = commit_as(repo, "Carol", {NOTE: note_text(
        "deploy-uses-blue-green", body="Deploys switch blue and green, twice.\n")}, 30)
    # The index of Carol's commit is built from Bob's: the note changed, so it is hers.
    commit, author, day = _changed(repo, "blue green deploys")["deploy-uses-blue-green"]
    assert (commit, author) == (carol, "Carol")
    assert day == pygit2.Repository(str(repo))[carol].peel(pygit2.Commit).commit_time // 86400 \
        + 719163  # the commit's day as a date ordinal (1970-01-01 is ordinal 719163)


def test_an_incremental_index_attributes_as_a_full_build_does(repo: Path) -> None:
    ws = open_workspace(repo)
    commit_as(repo, "Ada", {NOTE: note_text("deploy-uses-blue-green", body="Blue green.\n"),
                             "docs/guide.md": "# Guide\n\nBlue green deploys.\n"}, 10)
    assert ws.snapshot().reused == 0  # from nothing
    commit_as(repo, "Bob", {"docs/guide.md": "# Guide\n\nBlue green deploys, again.\n"}, 20)
    ws.snapshot()
    commit_as(repo, "Carol", {"docs/other.md": "# Other\n\nNothing to do with it.\n"}, 30)
    snap = ws.snapshot()
    assert snap.reused > 0  # built from Bob's commit's index
    incremental = snap.changes
    full = ws.snapshot(rebuild=True).changes
    assert incremental == full
    assert full[NOTE][1] == "Ada" and full["docs/guide.md"][1] == "Bob"


def test_no_history_is_walked_to_answer_once_the_index_is_built(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    commit_as(repo, "Ada", {NOTE: note_text("deploy-uses-blue-green", body="Blue green.\n")}, 10)
    assert _changed(repo, "blue green")  # builds the index

    def walk(*args: object, **kw: object) -> object:
        raise AssertionError("a walk of the history while answering")

    monkeypatch.setattr(build, "last_changes", walk)
    assert _changed(repo, "blue green")["deploy-uses-blue-green"][1] == "Ada"


def test_text_json_and_mcp_name_the_author_and_commit_and_a_local_note_none(
        repo: Path) -> None:
    ada = commit_as(repo, "Ada", {NOTE: note_text("deploy-uses-blue-green", body="Blue green.\n")},
                     10)
    text = omh(repo, "memory", "recall", "blue green deploys").out
    assert f"by Ada in {ada[:8]}" in text
    assert omh(repo, "memory", "remember", "--type", "topic", "--title", "Blue green local",
               "--section", "Notes=Blue green deploys, locally.", "--answers",
               "how do blue green deploys work locally?").code == 0
    found = json.loads(omh(repo, "memory", "recall", "blue green deploys", "--json").out)[
        "results"]
    changed = {r["key"]: r["changed"] for r in found}
    assert changed["deploy-uses-blue-green"] == {"commit": ada, "author": "Ada",
                                                "date": "2026-01-11"}
    assert changed["blue-green-local"] is None  # a local note was shared by no commit

    async def run() -> str:
        async with Client(build_server(open_workspace(repo))) as client:
            return text_of(await client.call_tool("recall", {"question": "blue green deploys"}))
    assert f"by Ada in {ada[:8]}" in asyncio.run(run())


def test_an_author_name_with_control_characters_is_shown_escaped(repo: Path) -> None:
    commit_as(repo, "Ada\x1b[2J\x07\u202e", {NOTE: note_text("deploy-uses-blue-green",
                                                                body="Blue green.\n")}, 10)
    text = omh(repo, "memory", "recall", "blue green deploys").out
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "by Ada\\x1b[2J\\x07\\u202e in" in text


def test_an_incremental_build_walks_only_for_what_changed_since_its_base(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = open_workspace(repo)
    commit_as(repo, "Ada", {NOTE: note_text("deploy-uses-blue-green", body="Blue green.\n")}, 10)
    ws.snapshot()
    asked: list[set[str]] = []
    real = build.last_changes

    def counting(repo_: object, start: str, paths: object, *rest: object) -> object:
        asked.append(set(paths))  # type: ignore[call-overload]
        return real(repo_, start, paths, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "last_changes", counting)
    commit_as(repo, "Bob", {"docs/new.md": "# New\n\nA new page.\n"}, 20)
    assert ws.snapshot().changes[NOTE][1] == "Ada"
    assert asked == [{"docs/new.md"}]  # the note is dated from the base, not walked for


def test_a_commit_whose_author_has_no_name_is_still_attributed(repo: Path) -> None:
    """libgit2 makes no such commit, but other tools do: a nameless author is named so."""
    git_repo = pygit2.Repository(str(repo))
    blob = git_repo.create_blob(note_text("deploy-uses-blue-green", body="Blue green.\n"))
    builder = git_repo.TreeBuilder(git_repo.head.peel(pygit2.Commit).tree)
    notes = git_repo.TreeBuilder()
    notes.insert("deploy-uses-blue-green.md", blob, pygit2.enums.FileMode.BLOB)
    omh_dir = git_repo.TreeBuilder()
    omh_dir.insert("notes", notes.write(), pygit2.enums.FileMode.TREE)
    builder.insert(".omh", omh_dir.write(), pygit2.enums.FileMode.TREE)
    raw = (f"tree {builder.write()}\nparent {git_repo.head.target}\n"
           "author  <x@example.invalid> 1767225600 +0000\n"
           "committer  <x@example.invalid> 1767225600 +0000\n\nno name\n").encode()
    commit = git_repo.odb.write(pygit2.enums.ObjectType.COMMIT, raw)
    git_repo.references["refs/heads/main"].set_target(commit)
    text = omh(repo, "memory", "recall", "blue green").out
    assert f"by an unnamed author in {str(commit)[:8]}" in text
