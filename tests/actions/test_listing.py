"""`actions.listing.list_notes`: the rows `omh memory list` shows, the files that do
not read back as notes, and the counts by layer. Real repositories, no CLI."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.listing import list_notes
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import commit_files, omh, remember_linked
from tests.helpers.repo import head_of


def test_the_listing_counts_links_separates_derived_notes_and_names_unreadable_files(
        repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    commit_files(repo_dir, {"docs/guide.md": "# Guide\n\nHow to build.\n"}, "a guide")
    first = remember_linked(repo_dir, "The build needs make.")
    second = remember_linked(repo_dir, "The guide is stale.", first)
    ws = open_workspace(repo_dir)
    (ws.local.root / "broken.md").write_text("not a note\n", encoding="utf-8")
    found = list_notes(ws)
    local = {r["key"]: r for r in found.rows if r["layer"] == "local"}
    assert set(local) == {first, second}
    assert local[first]["inbound"] == 1 and local[second]["inbound"] == 0
    assert not local[first]["derived"]
    stubs = [r for r in found.rows if r["type"] == "stub"]
    assert stubs and all(r["derived"] and r["layer"] == "team" for r in stubs)
    assert found.counts["local"] == {"notes": 2}
    assert found.counts["team"]["stubs"] == len(stubs) and found.counts["team"]["notes"] == 0
    assert [Path(str(u["path"])).name for u in found.unreadable] == ["broken.md"]
    assert found.unreadable[0]["problem"]
    assert found.rows == sorted(found.rows, key=lambda r: (r["layer"], r["key"]))
    assert found.head == head_of(repo_dir)
