"""`actions.listing.list_notes`: the rows `omh memory list` shows, the files that do
not read back as notes, and the counts by layer. Real repositories, no CLI.

The cases after the first (a team note that does not parse, a slot a removed note
left in the index) came from a mutation pass (docs/records/mutation-passes.md)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.listing import list_notes
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import commit_files, note_text, omh, remember_linked
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


def _team_keys(repo: Path) -> list[str]:
    found = list_notes(open_workspace(repo))
    return [str(r["key"]) for r in found.rows if r["layer"] == "team" and not r["derived"]]


def test_a_team_note_that_does_not_parse_hides_none_after_it(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    commit_files(repo_dir, {".omh/notes/a-broken.md": "not a note\n",
                            ".omh/notes/b-fine.md": note_text("b-fine"),
                            ".omh/notes/c-fine.md": note_text("c-fine")}, "team notes")
    found = list_notes(open_workspace(repo_dir))
    assert [r["key"] for r in found.rows if r["layer"] == "team" and not r["derived"]] == [
        "b-fine", "c-fine"]
    assert [(u["layer"], Path(str(u["path"])).name) for u in found.unreadable] == [
        ("team", "a-broken.md")]
    assert found.counts["team"]["notes"] == 2


def test_a_note_removed_since_the_index_was_built_hides_none_after_it(
        repo_dir: Path) -> None:
    # The index of the new commit is built from the last one: the removed note's
    # slot is left empty, and the notes after it are listed all the same.
    assert omh(repo_dir, "init").code == 0
    notes: dict[str, str | None] = {
        f".omh/notes/{k}.md": note_text(k) for k in ("a-gone", "b-kept", "c-kept")}
    commit_files(repo_dir, notes, "team notes")
    assert _team_keys(repo_dir) == ["a-gone", "b-kept", "c-kept"]
    commit_files(repo_dir, {".omh/notes/a-gone.md": None}, "a note removed")
    first = remember_linked(repo_dir, "The build needs make.")
    found = list_notes(open_workspace(repo_dir))
    assert [(r["layer"], r["key"]) for r in found.rows if not r["derived"]] == [
        ("local", first), ("team", "b-kept"), ("team", "c-kept")]
