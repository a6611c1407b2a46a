"""The team layer read from disk for `lint --worktree` (omh_git_memory/stores/team.py):
`.omh` and `.omh/notes` must be real folders, or lint would judge notes from
anywhere; what stands there instead is reported, never followed.

Found by mutation testing (docs/records/mutation-newer-stores.md)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.git.repository import open_repo
from omh_git_memory.stores.team import is_team_entry, scan_worktree_team
from tests.helpers import note_text


def test_worktree_team_notes_are_read_from_a_real_notes_folder(repo_dir: Path) -> None:
    notes = repo_dir / ".omh" / "notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text(note_text("a"))
    found = scan_worktree_team(repo_dir, open_repo(repo_dir))
    assert [(s.relpath, s.problem) for s in found] == [("a.md", None)]


def test_worktree_without_a_notes_folder_has_no_team_notes(repo_dir: Path) -> None:
    assert scan_worktree_team(repo_dir, open_repo(repo_dir)) == []


def test_worktree_notes_folder_that_is_a_symlink_is_reported_not_followed(
        repo_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.md").write_text(note_text("a"))
    (repo_dir / ".omh").mkdir()
    (repo_dir / ".omh" / "notes").symlink_to(elsewhere)
    [found] = scan_worktree_team(repo_dir, open_repo(repo_dir))
    assert found.note is None and found.location == str(repo_dir / ".omh" / "notes")
    assert found.problem is not None
    assert found.problem == ("is a symlink where .omh/notes should be a folder; omh never "
                             "follows one; replace it with a regular file or directory")


def test_worktree_omh_that_is_a_file_is_reported(repo_dir: Path) -> None:
    (repo_dir / ".omh").write_text("not a folder")
    [found] = scan_worktree_team(repo_dir, open_repo(repo_dir))
    assert found.problem == "is a regular file where .omh/notes should be a folder"


def test_team_entries_are_notes_under_the_folder_and_whatever_is_no_file() -> None:
    assert is_team_entry(".omh/notes/a.md", "file")
    assert not is_team_entry(".omh/notes/a.txt", "file")
    assert not is_team_entry(".omh/notes/.hidden/a.md", "file")
    assert not is_team_entry(".omh/notesx/a.md", "file")
    assert is_team_entry(".omh/notes/link", "symlink")  # reported, never followed
    assert is_team_entry(".omh", "symlink") and is_team_entry(".omh/notes", "submodule")
