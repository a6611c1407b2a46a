"""Commands whose line says what happened this time, not what happened once."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import omh


def test_agents_md_says_it_created_the_file_then_that_it_is_current(repo_dir: Path) -> None:
    path = repo_dir / "AGENTS.md"
    assert omh(repo_dir, "memory", "agents-md").out == f"created {path}\n"
    assert omh(repo_dir, "memory", "agents-md").out == f"already current: {path}\n"
    path.write_text("# Mine\n\nhand-written\n", encoding="utf-8")
    assert omh(repo_dir, "memory", "agents-md").out == f"refreshed {path}\n"
    assert path.read_text(encoding="utf-8").startswith("# Mine\n\nhand-written\n")


def test_reindex_of_an_index_built_already_says_so(repo_dir: Path) -> None:
    first = omh(repo_dir, "memory", "reindex")
    assert first.code == 0 and " analysed" in first.out, first.out
    again = omh(repo_dir, "memory", "reindex")
    assert again.code == 0
    commit = again.out.split()[3].rstrip(":") if again.out.startswith("the index") else ""
    assert again.out.startswith("the index of ") and "is built already" in again.out, again.out
    assert again.out.endswith("(--full builds it again)\n") and len(commit) == 12
    assert omh(repo_dir, "memory", "reindex", "--json").json()["analysed"] == 0
