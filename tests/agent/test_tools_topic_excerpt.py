"""Over MCP, recall quotes a topic by its sections, not by its title line again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession

from tests.helpers import omh
from tests.helpers.mcp import over_stdio, text_of


def test_a_topic_is_quoted_section_by_section(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--type", "topic", "--title", "Running the tests",
              "--section", "Summary=Run one module at a time; the suite is slow.",
              "--section", "Where=tests/ holds one module per command.")
    assert run.code == 0, run.err

    async def body(session: ClientSession) -> Any:
        return await session.call_tool("recall", {"question": "running the tests"})

    said = text_of(over_stdio(repo_dir, body)).split("What the best", 1)[1]
    quoted = said.split("running-the-tests  local · ", 1)[1].split("\n", 1)[1]
    first_two = quoted.splitlines()[:2]
    assert first_two == ["  Summary: Run one module at a time; the suite is slow.",
                         "  Where: tests/ holds one module per command."], said
