from __future__ import annotations

from pathlib import Path

from omh_git_memory.agent.agents_md import BEGIN, END
from tests.helpers import omh


def test_the_block_is_written_and_refreshed_without_touching_other_text(repo_dir: Path) -> None:
    agents = repo_dir / "AGENTS.md"
    agents.write_text("# Agents\n\nHouse rules stay.\n")
    assert omh(repo_dir, "memory", "agents-md").code == 0
    text = agents.read_text()
    assert text.startswith("# Agents\n\nHouse rules stay.\n\n" + BEGIN)
    assert "Record what surprised you" in text and "never with `mv`" in text
    assert "2 notes (2 team)" in text  # README's stub and the repo topic
    agents.write_text(text + "\nA line after the block.\n")
    omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Something.",
        "--evidence", "v", "--answers", "q")
    assert omh(repo_dir, "memory", "agents-md").code == 0
    refreshed = agents.read_text()
    assert refreshed.startswith("# Agents\n\nHouse rules stay.\n\n" + BEGIN)
    assert refreshed.endswith(END + "\n\nA line after the block.\n")
    assert "3 notes (2 team, 1 local)" in refreshed
    assert refreshed.count(BEGIN) == 1


def test_broken_markers_are_refused_and_nothing_changes(repo_dir: Path) -> None:
    agents = repo_dir / "AGENTS.md"
    agents.write_text(f"{BEGIN}\nno end marker\n")
    run = omh(repo_dir, "memory", "agents-md")
    assert run.code == 1 and "markers" in run.err
    assert agents.read_text() == f"{BEGIN}\nno end marker\n"
