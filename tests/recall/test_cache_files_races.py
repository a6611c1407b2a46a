"""Cache files (omh_git_memory/recall/cache_files.py) when a system call fails as
it would on a disk fault or for an account that is not root: the cache is then a
miss, never an error (issue 30's review found these listed as "root never meets
it"; a wrapper on the one `os` function places the failure, tests/helpers/races.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.recall.cache_files import cache_files, read_checked, write_checked
from tests.helpers.races import fail_on, read_fails


def test_a_cache_file_whose_read_fails_is_a_miss_and_discarded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c0.snapshot"
    write_checked(path, b"payload")
    assert read_checked(path) == b"payload"
    read_fails(monkeypatch, path)
    assert read_checked(path) is None
    assert not path.exists()  # rebuilt next time


def test_a_cache_folder_that_cannot_be_listed_has_no_candidates(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "c0.snapshot").write_bytes(b"x")
    assert cache_files(tmp_path, "*.snapshot") == [tmp_path / "c0.snapshot"]
    # pathlib's glob passes over PermissionError itself; EIO (a disk fault) it raises
    fail_on(monkeypatch, "scandir", tmp_path, OSError(5, "Input/output error"))
    assert cache_files(tmp_path, "*.snapshot") == []
