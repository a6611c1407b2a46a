"""The repository's name as a commit's own `.omh/memory.toml` gives it, for the topic.

Its cases came from a mutation pass over recall/sources.py (tools/mutation.py): a
committed settings file of up to 1 MiB (1,048,576 bytes) is read, a larger one is a
mistake and names nothing. They call `committed_repo_name` on a
commit's tree, so they hold whatever date a derived note is given.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from omh_git_memory.git.repository import open_repo
from omh_git_memory.git.trees import list_tree
from omh_git_memory.recall.sources import committed_repo_name
from tests.helpers import make_repo

LIMIT = 1 << 20  # bytes: 1 MiB
NAMING = '[repo]\nname = "widgets"\n'


def _settings(size: int) -> str:
    """A memory.toml of `size` bytes naming the repository `widgets`, padded with a
    comment line."""
    padding = size - len(NAMING) - len("#\n")
    return NAMING + "#" + "x" * padding + "\n"


def _name_in_commit(path: Path, settings: str) -> str:
    make_repo(path, {"README.md": "# Test repo\n", ".omh/memory.toml": settings})
    repo = open_repo(path)
    return committed_repo_name(repo, list_tree(repo, repo.repo.head.peel(pygit2.Commit)))


def test_a_committed_name_names_the_repository(tmp_path: Path) -> None:
    assert _name_in_commit(tmp_path / "r", NAMING) == "widgets"


def test_a_settings_file_of_exactly_one_mib_is_read(tmp_path: Path) -> None:
    settings = _settings(LIMIT)
    assert len(settings.encode()) == LIMIT
    assert _name_in_commit(tmp_path / "r", settings) == "widgets"


def test_a_settings_file_one_byte_over_one_mib_names_nothing(tmp_path: Path) -> None:
    settings = _settings(LIMIT + 1)
    assert len(settings.encode()) == LIMIT + 1
    assert _name_in_commit(tmp_path / "r", settings) == "repo"
