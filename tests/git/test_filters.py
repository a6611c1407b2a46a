"""git/filters.py: the working tree's bytes of a file as git's filters see them
(.gitattributes' line endings), in real repositories."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.git.filters import disk_form, worktree_blob
from omh_git_memory.git.repository import open_repo
from tests.helpers import git, make_repo


def test_a_file_that_cleans_to_the_blob_is_its_own_disk_form(tmp_path: Path) -> None:
    # git would call CRLF on disk the LF blob (`text`), though it checks out LF
    path = tmp_path / "r"
    make_repo(path, {".gitattributes": "*.md text eol=lf\n", "a.md": "one\ntwo\n"})
    (path / "a.md").write_bytes(b"one\r\ntwo\r\n")
    repo = open_repo(path)
    assert disk_form(repo, "a.md", b"one\ntwo\n") == b"one\r\ntwo\r\n"
    assert disk_form(repo, "a.md", b"other\n") == b"other\n"  # not this file's blob


def test_a_path_the_file_system_cannot_hold_has_no_blob(tmp_path: Path) -> None:
    path = tmp_path / "r"
    make_repo(path, {"a.md": "a\n"})
    repo = open_repo(path)
    assert worktree_blob(repo, "a.md") == git(path, "rev-parse", "HEAD:a.md").strip()
    assert worktree_blob(repo, "a\0.md") is None
