"""The store's journal (omh_git_memory/stores/journal.py) when a system call fails as
it would for an account that is not root, or on a disk fault: recovery and reading
go on, and never raise over a folder they could not list or remove.

A review found these listed as equivalent because "the tests run as root";
a wrapper on the one `os` function places the failure (tests/helpers/races.py)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from omh_git_memory.model.errors import KeyConflict
from omh_git_memory.stores import journal
from omh_git_memory.stores.journal import FileChange
from tests.helpers.journal import files as _files
from tests.helpers.journal import journal_store
from tests.helpers.journal import note as _note
from tests.helpers.journal import plant as _plant
from tests.helpers.journal import sha as _sha
from tests.helpers.journal import written_meanwhile as _written_meanwhile
from tests.helpers.races import fail_on


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return journal_store(tmp_path)

PLAN = [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"}]


def _journals(root: Path) -> list[str]:
    base = root / journal.JOURNAL_DIR
    return sorted(p.name for p in base.iterdir()) if base.exists() else []


def test_a_journal_folder_that_cannot_be_listed_is_no_pending_change_to_a_reader(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(root, PLAN, {"new-0": _note("c")})
    fail_on(monkeypatch, "scandir", root / journal.JOURNAL_DIR)
    with journal.reading(root) as locked:
        assert locked
    assert "c.md" not in _files(root)  # left for a command that can list it


def test_recovery_leaves_a_journal_folder_it_cannot_list(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(root, PLAN, {"new-0": _note("c")})
    with monkeypatch.context() as patch:
        fail_on(patch, "listdir", root / journal.JOURNAL_DIR)
        journal.recover(root)
    assert "c.md" not in _files(root)
    assert _journals(root) == ["planted"]


def test_a_plan_whose_folder_cannot_be_looked_at_is_dropped(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _plant(root, [{"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": None,
                   "staged": None}])
    fail_on(monkeypatch, "lstat", root / "sub")
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "sub/b.md": _note("sub/b")}


def _in_journal(root: Path) -> object:
    return lambda path: path.parent == root / journal.JOURNAL_DIR


@pytest.mark.parametrize("plan", ["undecided", "unreadable", "applied"])
def test_a_journal_folder_that_cannot_be_removed_is_left_without_an_error(
        root: Path, monkeypatch: pytest.MonkeyPatch, plan: str) -> None:
    folder = _plant(root, PLAN, {"new-0": _note("c")})
    if plan == "undecided":
        (folder / journal.PLAN_NAME).unlink()
    elif plan == "unreadable":
        (folder / journal.PLAN_NAME).write_text("{not json")
    fail_on(monkeypatch, "rmdir", _in_journal(root))
    journal.recover(root)
    assert ("c.md" in _files(root)) == (plan == "applied")
    assert _journals(root) == ["planted"]


def test_a_switch_whose_journal_cannot_be_removed_still_lands(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_on(monkeypatch, "rmdir", _in_journal(root))
    journal.switch(root, [FileChange("c.md", None, _note("c"))])
    assert _files(root)["c.md"] == _note("c")


def test_a_note_written_just_before_it_lands_is_a_conflict_even_if_the_journal_stays(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _written_meanwhile(root, monkeypatch)
    fail_on(monkeypatch, "rmdir", _in_journal(root))
    with pytest.raises(KeyConflict, match="was written while omh renamed a note onto it"):
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    assert (root / "c.md").read_bytes() == _note("c", "theirs")


def test_a_process_whose_descriptors_cannot_be_listed_is_passed_over(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fd = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        first = min(int(name) for name in os.listdir("/proc") if name.isdigit())
        assert first < os.getpid()
        fail_on(monkeypatch, "listdir", f"/proc/{first}/fd")
        assert os.getpid() in journal._holding_processes(os.fstat(fd))
    finally:
        os.close(fd)


def test_a_journal_folder_omh_cannot_look_at_is_never_acted_on(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # what it is (a real folder, or a symlink omh never follows) is unknown: left
    _plant(root, PLAN, {"new-0": _note("c")})
    with monkeypatch.context() as patch:
        fail_on(patch, "lstat", root / journal.JOURNAL_DIR)
        with journal.reading(root) as locked:
            assert locked
        journal.recover(root)
    assert "c.md" not in _files(root)
    assert _journals(root) == ["planted"]
