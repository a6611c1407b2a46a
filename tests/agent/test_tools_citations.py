"""The MCP tools and citations: `remember` records the blob ids
of the files its evidence names, and `recall` marks a result whose cited files
changed since, on the same line the command line prints. In process, through the
SDK's own client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import Implementation

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.model.note import parse, render
from tests.helpers import commit_files, git, make_repo, omh
from tests.helpers.mcp import text_of

KEY = "surprise/ci-already-listens-on-8080"
NOTE = {"expected": "port 8080 would be free", "observed": "CI already listens on 8080.",
        "evidence": "bind: address already in use, from src/server.py:3",
        "answers": ["why do tests fail on CI?"]}


@pytest.fixture(autouse=True)
def session(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_SESSION", "s03")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, {"src/server.py": "PORT = 8080\n\ndef serve():\n    pass\n"})
    assert omh(path, "init").code == 0
    return path


def _calls(repo: Path, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def run() -> list[Any]:
        server = build_server(open_workspace(repo))
        client = Implementation(name="claude-code", version="2.1")
        async with Client(server, client_info=client) as c:
            return [await c.call_tool(tool, args) for tool, args in calls]

    return asyncio.run(run())


def test_remember_over_mcp_records_the_cited_files_blob(repo: Path) -> None:
    (done,) = _calls(repo, ("remember", NOTE))
    assert not done.is_error, text_of(done)
    text = (open_workspace(repo).local.root / f"{KEY}.md").read_text()
    blob = git(repo, "rev-parse", "HEAD:src/server.py").strip()
    assert parse(text).field("cites") == f"src/server.py@{blob}"
    assert render(parse(text)) == text
    assert "It cites src/server.py; recall says when that changes." in text_of(done)


def test_a_replaced_note_says_what_it_cites_as_a_new_one_does(repo: Path) -> None:
    corrected = {**NOTE, "evidence": "bind: address already in use, from src/server.py:1",
                 "replaces": KEY}
    first, second = _calls(repo, ("remember", NOTE), ("remember", corrected))
    assert not first.is_error and not second.is_error, text_of(second)
    assert text_of(second).startswith(f"replaced local/{KEY}")
    assert "It cites src/server.py; recall says when that changes." in text_of(second)


def test_remember_on_the_command_line_says_what_it_cites(repo: Path) -> None:
    args = ["memory", "remember", "--expected", NOTE["expected"], "--observed",
            NOTE["observed"], "--evidence", NOTE["evidence"], "--answers", "why?"]
    run = omh(repo, *args)
    assert run.code == 0
    assert "  cites src/server.py (recall says when it changes)" in run.out.splitlines()
    again = omh(repo, *args, "--json", "--if-exists", "suffix")
    assert again.json()["cites"] == ["src/server.py"]


def test_recall_over_mcp_marks_a_result_whose_cited_file_changed(repo: Path) -> None:
    (done,) = _calls(repo, ("remember", NOTE))
    assert not done.is_error, text_of(done)
    question = ("recall", {"question": "why do tests fail on CI?"})
    (before,) = _calls(repo, question)
    assert "cites" not in text_of(before)
    commit_files(repo, {"src/server.py": "PORT = 8081\n\ndef serve():\n    pass\n"})
    (after,) = _calls(repo, question)
    line = next(ln for ln in text_of(after).splitlines() if ln.startswith(KEY))
    assert line.endswith(" · cites src/server.py, changed since (1 commit)")
    cli = omh(repo, "memory", "recall", "why do tests fail on CI?").out
    assert line in cli.splitlines()  # the same line the command line prints
