"""The working-tree writes of omh_git_memory/git/gitfiles.py (WorkdirUndo) when a
folder they just made is swapped for a symlink or a FIFO.

The swap is placed by a wrapper on os.mkdir that runs it right after the real call
(tests/helpers/races.py): then the open's O_NOFOLLOW and O_DIRECTORY are the only
guards. A review found them listed as equivalent ("a race no test can
place"); these tests tell them apart. Before, the open after the mkdir let the
OSError out bare (the user saw an unexpected error, not the refusal a folder found
in the way one step earlier gives)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.git.gitfiles import WorkdirUndo
from omh_git_memory.model.errors import GitFailure
from tests.helpers.races import never_blocks, swap_after

REFUSED = "notes is not a plain directory on disk (a symlink?); omh never writes through a symlink"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    workdir = tmp_path / "work"
    workdir.mkdir()
    return workdir


def test_a_folder_swapped_for_a_symlink_right_after_it_was_made_is_refused(
        workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap() -> None:
        os.rmdir(workdir / "notes")
        os.symlink(outside, workdir / "notes")

    swap_after(monkeypatch, "mkdir", "notes", swap)
    with pytest.raises(GitFailure) as raised:
        WorkdirUndo(workdir).write("notes/a.md", b"x")
    assert str(raised.value) == REFUSED
    assert list(outside.iterdir()) == []


def test_a_folder_swapped_for_a_fifo_right_after_it_was_made_is_refused_without_waiting(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def swap() -> None:
        os.rmdir(workdir / "notes")
        os.mkfifo(workdir / "notes")

    swap_after(monkeypatch, "mkdir", "notes", swap)
    with never_blocks(), pytest.raises(GitFailure) as raised:  # no O_DIRECTORY: waits
        WorkdirUndo(workdir).write("notes/a.md", b"x")
    assert str(raised.value) == REFUSED


def test_a_folder_made_is_written_into_and_undone(workdir: Path) -> None:
    undo = WorkdirUndo(workdir)
    assert undo.write("notes/deep/a.md", b"x") is True
    assert (workdir / "notes" / "deep" / "a.md").read_bytes() == b"x"
    undo.run()
    assert list(workdir.iterdir()) == []


def test_a_file_written_there_meanwhile_is_left_as_it_is_and_not_undone(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # write() saw no file; one appears before its link lands: it is someone's, kept
    swap_after(monkeypatch, "mkdir", "notes",
               lambda: (workdir / "notes" / "a.md").write_bytes(b"theirs"))
    undo = WorkdirUndo(workdir)
    assert undo.write("notes/a.md", b"x") is False
    undo.run()
    assert (workdir / "notes" / "a.md").read_bytes() == b"theirs"
