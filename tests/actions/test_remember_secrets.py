"""A note that holds something shaped like a secret is still written (it stays in
the local layer), and the writer is told at once, on every surface, which line
looks like what: promote would refuse it later (actions/remember.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.sdk import build_server
from tests.helpers import omh
from tests.helpers.mcp import GOOD, text_of

TOKEN = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"  # the shape, not a real token
ARGS = ("memory", "remember", "--expected", "no token needed", "--observed",
        "The deploy uses a token.", "--evidence", f"export GITHUB_TOKEN={TOKEN}",
        "--answers", "how does the deploy authenticate?")


def test_the_command_line_warns_and_writes_the_note(repo_dir: Path) -> None:
    run = omh(repo_dir, *ARGS)
    assert run.code == 0, run.err
    assert ("warning: line 17 of local/surprise/the-deploy-uses-a-token looks like a GitHub "
            "token: the note stays local, and promote refuses it until that line is gone "
            "(omh memory edit surprise/the-deploy-uses-a-token)") in run.out
    path = open_workspace(repo_dir).local.root / "surprise/the-deploy-uses-a-token.md"
    assert TOKEN in path.read_text()  # nothing lost: the writer decides what goes


def test_json_lists_each_line_that_looks_like_a_secret(repo_dir: Path) -> None:
    run = omh(repo_dir, *ARGS, "--json")
    assert run.json()["secrets"] == [{"line": 17, "kind": "a GitHub token"}]
    clean = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                "Nothing secret here.", "--evidence", "ls", "--answers", "q", "--json")
    assert clean.json()["secrets"] == []
    assert "warning" not in omh(repo_dir, "memory", "remember", "--expected", "e",
                                "--observed", "Plain again.", "--evidence", "ls",
                                "--answers", "q").out


def test_the_tool_warns_in_its_answer_and_for_a_correction_too(repo_dir: Path) -> None:
    async def run() -> list[Any]:
        async with Client(build_server(open_workspace(repo_dir))) as client:
            first = await client.call_tool("remember", {**GOOD, "evidence": TOKEN})
            fixed = await client.call_tool("remember", {
                **GOOD, "evidence": f"token: {TOKEN}",
                "replaces": "surprise/ci-already-listens-on-8080"})
            return [first, fixed]

    first, fixed = asyncio.run(run())
    for answer in (first, fixed):
        assert not answer.is_error
        assert (" Warning: line 17 of local/surprise/ci-already-listens-on-8080 looks like a "
                "GitHub token: the note stays local, and promote refuses it until that line "
                "is gone (call remember again with replaces=surprise/ci-already-listens-on-"
                "8080 and that line left out).") in text_of(answer), text_of(answer)
