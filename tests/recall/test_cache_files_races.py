"""Cache files (omh_git_memory/recall/cache_files.py) when a system call fails as
it would on a disk fault or for an account that is not root: the cache is then a
miss, never an error (a review found these listed as "root never meets
it"; a wrapper on the one `os` function places the failure, tests/helpers/races.py);
and a crashed writer's temporary file against a clock held still."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from omh_git_memory.recall import cache_files as cache_files_module
from omh_git_memory.recall.cache_files import cache_files, prune, read_checked, write_checked
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


def test_a_temporary_file_is_a_crashed_writers_once_over_ten_minutes_old(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/recall.md: removed once it is ten minutes old; the clock held still, so the
    # ages are exact (no race with a clock that moves)
    now = 1_800_000_000.0
    monkeypatch.setattr(cache_files_module, "time", SimpleNamespace(time=lambda: now))
    ages = {"at.idx": 600.0, "past.idx": 600.5, "young.idx": 599.0}
    for name, age in ages.items():
        path = tmp_path / f".tmp-1-aaaa-{name}"
        path.write_bytes(b"half")
        os.utime(path, (now - age, now - age))
    prune(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".tmp-1-aaaa-at.idx", ".tmp-1-aaaa-young.idx"]
