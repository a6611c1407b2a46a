"""A call whose arguments do not fit a tool's schema is answered in omh's words —
each argument's problem and that nothing happened — and the server names its
version in the handshake (agent/sdk.py). Through a real MCP client, in process."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mcp import Client

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.agent.tools import MAX_ITEMS, MAX_TEXT
from tests.helpers.mcp import GOOD, text_of


def calls(repo: Path, *asked: tuple[str, dict[str, Any]]) -> tuple[Any, list[Any]]:
    async def run() -> tuple[Any, list[Any]]:
        async with Client(build_server(open_workspace(repo))) as client:
            return client.server_info, [await client.call_tool(n, a) for n, a in asked]
    return asyncio.run(run())


def test_missing_and_oversized_arguments_are_named_in_plain_words(repo_dir: Path) -> None:
    _, (answer,) = calls(repo_dir, ("remember", {"expected": "x", "observed": "y" * (MAX_TEXT + 1),
                                                 "evidence": 3}))
    assert answer.is_error
    text = text_of(answer)
    assert text.startswith("remember cannot take these arguments: ")
    assert f"`observed` is over {MAX_TEXT} characters" in text
    assert "`evidence` must be text" in text and "`answers` is missing" in text
    assert "nothing was written" in text
    assert "pydantic" not in text and "validation error" not in text.lower()
    assert not list(open_workspace(repo_dir).local.scan())


def test_too_many_items_and_a_missing_question(repo_dir: Path) -> None:
    many = {**GOOD, "answers": ["q"] * (MAX_ITEMS + 1)}
    _, (remembered, recalled) = calls(repo_dir, ("remember", many), ("recall", {}))
    assert f"`answers` has over {MAX_ITEMS} items" in text_of(remembered)
    assert text_of(recalled) == ("recall cannot take these arguments: `question` is missing; "
                                 "nothing was searched. Call it again with them fixed (the "
                                 "tool's schema gives each argument and its limits)")


def test_a_call_that_fits_is_answered_as_before(repo_dir: Path) -> None:
    _, (answer,) = calls(repo_dir, ("remember", GOOD))
    assert not answer.is_error and "remembered local/" in text_of(answer)


def test_the_handshake_names_omhs_version(repo_dir: Path) -> None:
    info, _ = calls(repo_dir)
    assert info.name == "omh" and info.version == version("omh-git-memory") != ""


def test_omhs_own_refusals_come_in_its_own_words_only(repo_dir: Path) -> None:
    _, (empty, blank) = calls(repo_dir, ("remember", {**GOOD, "answers": []}),
                              ("recall", {"question": "  "}))
    assert empty.is_error and text_of(empty).startswith("`answers` is empty")
    assert blank.is_error and text_of(blank).startswith("`question` is empty")
    assert "Error executing tool" not in text_of(empty) + text_of(blank)


def test_a_source_tree_nobody_installed_names_no_version(monkeypatch: Any) -> None:
    import importlib.metadata

    from omh_git_memory.agent import sdk

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert sdk._version() == ""


def test_an_argument_the_tool_does_not_take_is_refused_not_dropped(repo_dir: Path) -> None:
    """An agent that guesses `ref` must not believe it got the answer as of that
    commit: the SDK alone drops an unknown argument without a word."""
    _, (recalled, remembered) = calls(
        repo_dir, ("recall", {"question": "mount", "ref": "v1", "also_phrased": ["x"]}),
        ("remember", {**GOOD, "tags": ["x"]}))
    assert recalled.is_error and remembered.is_error
    assert text_of(recalled) == (
        "recall takes no `also_phrased`, `ref` (it takes `question`, `also_phrased_as`); "
        "nothing was searched. Call it again without them")
    assert text_of(remembered).startswith("remember takes no `tags` (it takes `expected`, ")
    assert "nothing was written" in text_of(remembered)
    assert not list(open_workspace(repo_dir).local.scan())
