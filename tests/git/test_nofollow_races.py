"""The no-follow write path (omh_git_memory/git/nofollow.py) when a folder it just
made is swapped for a symlink or a FIFO, and what `sync` does.

The swap is placed by a wrapper on os.mkdir that runs it right after the real call
(tests/helpers/races.py): then the open's O_NOFOLLOW and O_DIRECTORY are the only
guards. A review found these listed as equivalent ("a race no test can
place"), and `sync` as unobservable; these tests tell them apart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import UnsafePath
from tests.helpers.races import never_blocks, swap_after


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return root


def test_a_folder_swapped_for_a_symlink_right_after_it_was_made_is_refused(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap() -> None:
        os.rmdir(root / "a")
        os.symlink(outside, root / "a")

    swap_after(monkeypatch, "mkdir", "a", swap)
    with pytest.raises(UnsafePath) as raised:
        nofollow.write(root, "a/b.md", b"text\n")
    assert str(raised.value) == (
        f"{root / 'a'} is a symlink; omh never writes or reads through a symbolic link: "
        "replace it with a plain directory, or make the change by hand")
    assert list(outside.iterdir()) == []


def test_a_folder_swapped_for_a_fifo_right_after_it_was_made_is_refused_without_waiting(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def swap() -> None:
        os.rmdir(root / "a")
        os.mkfifo(root / "a")

    swap_after(monkeypatch, "mkdir", "a", swap)
    with never_blocks(), pytest.raises(UnsafePath) as raised:  # no O_DIRECTORY: waits
        nofollow.write(root, "a/b.md", b"text\n")
    assert str(raised.value) == (
        f"{root / 'a'} is a named pipe (FIFO), not a directory, so omh cannot write "
        "below it: move it away, or make the change by hand")


def _fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What each os.fsync synced, by the path its descriptor is open on."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_put_syncs_the_written_file_then_its_folder_unless_told_not_to(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _fsyncs(monkeypatch)
    fd = nofollow.open_root(root)
    try:
        assert nofollow.put(fd, "a.md", b"text\n", tmp=".omh-tmp-a")
        assert synced == [str(root / ".omh-tmp-a"), str(root)]
        synced.clear()
        assert nofollow.put(fd, "b.md", b"text\n", tmp=".omh-tmp-b", sync=False)
        assert synced == []
    finally:
        os.close(fd)
    assert (root / "a.md").read_bytes() == (root / "b.md").read_bytes() == b"text\n"
