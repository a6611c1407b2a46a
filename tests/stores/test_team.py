"""The team layer read from disk for `lint --worktree` (omh_git_memory/stores/team.py):
`.omh` and `.omh/notes` must be real folders, or lint would judge notes from
anywhere; what stands there instead is reported, never followed.

Found by mutation testing (docs/records/mutation-newer-stores.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.reading import too_large
from omh_git_memory.stores.team import is_team_entry, scan_team, scan_worktree_team, tree_note
from tests.helpers import IDENTITY, make_repo, note_text


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

    assert not is_team_entry(".omh/notes", "file")  # a file there holds no notes
    assert not is_team_entry(".omh", "file")
    assert not is_team_entry("docs/link", "symlink")  # outside the notes: not a note


# --- the team layer read from a commit's tree ---------------------------------------------


def _commit_links(repo: pygit2.Repository, links: dict[str, str]) -> None:
    """Commit symlinks (path -> target) on top of HEAD."""
    root = Path(repo.workdir)
    for name, target in links.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature(*IDENTITY)
    repo.create_commit("HEAD", sig, sig, "links", repo.index.write_tree(), [repo.head.target])


def test_tree_notes_are_located_by_the_revision_or_the_name_given(tmp_path: Path) -> None:
    made = make_repo(tmp_path / "r", {".omh/notes/a.md": note_text("a")})
    repo = open_repo(tmp_path / "r")
    assert [s.location for s in scan_team(repo)] == ["HEAD:.omh/notes/a.md"]
    sha = str(made.head.target)
    assert [s.location for s in scan_team(repo, sha, shown_as="main")] == [
        "main:.omh/notes/a.md"]


def test_files_left_out_or_too_large_do_not_end_the_scan(tmp_path: Path) -> None:
    big = note_text("a-big") + "x" * MAX_NOTE_BYTES
    make_repo(tmp_path / "r", {".omh/notes/.hidden.md": note_text("hidden"),
                         ".omh/notes/README.txt": "about the notes\n",
                         ".omh/notes/a-big.md": big, ".omh/notes/b.md": note_text("b")})
    found = scan_team(open_repo(tmp_path / "r"))
    assert [(s.relpath, s.problem) for s in found] == [
        ("a-big.md", too_large(len(big.encode()))), ("b.md", None)]


def test_a_symlink_in_the_tree_is_reported_where_it_stands(tmp_path: Path) -> None:
    inside = make_repo(tmp_path / "inside", {".omh/notes/a.md": note_text("a")})
    _commit_links(inside, {".omh/notes/b.md": "a.md"})
    [a, b] = scan_team(open_repo(tmp_path / "inside"))
    assert a.problem is None
    assert b.problem == ("is a symlink in the tree; omh never follows one; replace it with a "
                         "regular file or directory")
    instead = make_repo(tmp_path / "instead", {"elsewhere/a.md": note_text("a")})
    _commit_links(instead, {".omh/notes": "../elsewhere"})
    [found] = scan_team(open_repo(tmp_path / "instead"))
    assert found.problem == ("is a symlink in the tree where .omh/notes should be a folder; "
                             "omh never follows one; replace it with a regular file or directory")


def test_a_note_of_the_size_limit_exactly_is_read(tmp_path: Path) -> None:
    made = make_repo(tmp_path / "r")
    repo = open_repo(tmp_path / "r")
    text = note_text("a")
    at_limit = made.create_blob((text + "x" * (MAX_NOTE_BYTES - len(text))).encode())
    read = tree_note(repo, ".omh/notes/a.md", "file", str(at_limit), "HEAD:.omh/notes/a.md")
    assert read.problem is None and read.note is not None
    over = made.create_blob((text + "x" * (MAX_NOTE_BYTES + 1 - len(text))).encode())
    refused = tree_note(repo, ".omh/notes/a.md", "file", str(over), "HEAD:.omh/notes/a.md")
    assert refused.problem == too_large(MAX_NOTE_BYTES + 1)
