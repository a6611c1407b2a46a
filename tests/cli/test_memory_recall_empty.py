"""An empty question is refused at the command line as the MCP recall refuses it."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh


def test_an_empty_question_is_refused_like_the_mcp_tool_refuses_it(repo_dir: Path) -> None:
    for question in ("", "   ", "\t\n"):
        run = omh(repo_dir, "memory", "recall", question)
        assert run.code == 1 and run.out == "", question
        assert run.err == "omh: `question` is empty; ask what you want to know\n"
        assert omh(repo_dir, "memory", "recall", question, "--json").out == ""
    assert omh(repo_dir, "memory", "recall", "", "--also", "the readme").code == 1  # as MCP
