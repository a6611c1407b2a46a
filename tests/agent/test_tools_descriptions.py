"""The rules only a prompt can carry are where the agent reads them: how to write a
note in `remember`'s description, how to weigh notes that disagree at the end of
`recall`'s, and both in the AGENTS.md block (agent/tools.py, agent/agents_md.py)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.agents_md import block
from omh_git_memory.agent.census import Census
from omh_git_memory.agent.tools import REMEMBER_DESCRIPTION, Tools

WRITING = ("keep its uncertainty and how it was settled", "not when you learned it",
           "add a dated status line rather than rewriting the past")
WEIGHING = ("team beats local whatever the dates",
            "within a layer, the newer note and your task decide",
            "two team notes disagree or the conflict blocks the task")


def test_remember_says_how_to_write_a_note() -> None:
    for rule in WRITING:
        assert rule in REMEMBER_DESCRIPTION, rule


def test_recall_says_how_to_weigh_notes_that_disagree(repo_dir: Path) -> None:
    description = Tools(open_workspace(repo_dir)).recall_description
    for rule in WEIGHING:
        assert rule in description, rule


def test_the_agents_md_block_carries_both() -> None:
    text = block(Census(total=3, by_layer={"team": 3}, groups=[]))
    for rule in ("Keep the evidence's uncertainty", "say when it happened, not when you "
                 "learned it", "add a dated status line", *WEIGHING[1:],
                 "a team note outranks a local one whatever their dates"):
        assert rule in text, rule
