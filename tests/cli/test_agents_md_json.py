"""`omh memory agents-md` (cli/agents_md.py): its JSON, and the census it writes."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh


def test_agents_md_json_says_the_path_and_whether_it_changed(repo_dir: Path) -> None:
    path = repo_dir / "AGENTS.md"
    first = omh(repo_dir, "memory", "agents-md", "--json")
    assert first.code == 0 and first.json() == {"path": str(path), "changed": True}
    assert "2 notes (2 team): 1 docs, 1 other" in path.read_text(encoding="utf-8")
    again = omh(repo_dir, "memory", "agents-md", "--json")
    assert again.json() == {"path": str(path), "changed": False}
