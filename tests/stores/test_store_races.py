"""The local store's guards against a file swapped between two system calls, and
its answers when a system call fails as it would for an account that is not root.

Each race is placed, not waited for: a wrapper on the one `os` function runs the
swap right after the real call (tests/helpers/races.py). A review found
the flags of file_bytes' open and its fstat check listed as equivalent ("only a
race tells them apart"); these tests tell them apart."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.reading import too_large
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import note_text
from tests.helpers.races import Blocked, fail_on, never_blocks, read_fails, swap_after

NOTE = note_text("gotchas/a", body="the note's own words").encode()
CHANGED = "changed while it was read; run the command again"


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    store.create_root()
    (store.root / "a.md").write_bytes(NOTE)
    return store


def test_a_note_moved_out_and_linked_back_after_the_check_is_refused_not_followed(
        store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same file (same device and inode) now reached through a symlink: only
    # O_NOFOLLOW stops the open from reading a file outside the store
    outside = tmp_path / "outside.md"

    def swap() -> None:
        os.rename(store.root / "a.md", outside)
        os.symlink(outside, store.root / "a.md")

    swap_after(monkeypatch, "lstat", store.root / "a.md", swap)
    assert store.file_bytes("a.md") == (
        "is a symlink; a note must be a regular file inside the store")


def test_a_fifo_swapped_in_after_the_check_is_refused_without_waiting(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def swap() -> None:
        os.unlink(store.root / "a.md")
        os.mkfifo(store.root / "a.md")

    swap_after(monkeypatch, "lstat", store.root / "a.md", swap)
    with never_blocks():  # without O_NONBLOCK the open waits for a writer forever
        assert store.file_bytes("a.md") == CHANGED


def test_another_file_swapped_in_after_the_check_is_refused_not_read(
        store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.md"
    other.write_bytes(NOTE.replace(b"own words", b"other words"))
    swap_after(monkeypatch, "lstat", store.root / "a.md",
               lambda: os.replace(other, store.root / "a.md"))
    assert store.file_bytes("a.md") == CHANGED


def test_a_note_that_grows_past_the_limit_after_the_check_is_read_one_byte_past_it(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # the lstat saw a note within the limit; it grows before the read, in place (the
    # same inode): the read stops one byte past the limit, never reads it whole
    (store.root / "a.md").write_bytes(b"x" * MAX_NOTE_BYTES)

    def grow() -> None:
        with open(store.root / "a.md", "ab") as handle:
            handle.write(b"y" * 10)

    swap_after(monkeypatch, "lstat", store.root / "a.md", grow)
    assert [s.problem for s in store.scan()] == [too_large(MAX_NOTE_BYTES + 1)]


def test_the_note_itself_is_read_with_what_fstat_says_of_it(store: LocalStore) -> None:
    got = store.file_bytes("a.md")
    assert isinstance(got, tuple)
    assert got[0] == NOTE
    assert got[1].st_ino == os.lstat(store.root / "a.md").st_ino


def test_a_note_that_cannot_be_looked_at_or_opened_says_why(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store.file_bytes("gone.md") == "cannot be read: No such file or directory"
    with monkeypatch.context() as patch:
        fail_on(patch, "lstat", store.root / "a.md")
        assert store.file_bytes("a.md") == "cannot be read: Permission denied"
    # the open refused (not a symlink's ELOOP): the reason is the open's, not "symlink"
    fail_on(monkeypatch, "open", store.root / "a.md")
    assert store.file_bytes("a.md") == "cannot be read: Permission denied"


def test_a_note_whose_read_fails_says_why(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    read_fails(monkeypatch, store.root / "a.md")
    assert store.file_bytes("a.md") == "cannot be read: Input/output error"


def test_a_folder_that_cannot_be_listed_is_passed_over_and_the_walk_goes_on(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("a1", "b1"):
        (store.root / folder).mkdir()
        (store.root / folder / "x.md").write_bytes(NOTE)
    fail_on(monkeypatch, "scandir", store.root / "a1")
    assert [s.relpath for s in store.scan()] == ["a.md", "b1/x.md"]
    fail_on(monkeypatch, "open", store.root / "a1")
    assert [relpath for relpath, _ in store.files()] == ["a.md", "b1/x.md"]


def test_a_name_gone_or_a_folder_unlistable_during_the_walk_is_left_out_and_the_walk_goes_on(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    (store.root / "b.md").write_bytes(NOTE)
    for folder in ("a1", "b1"):
        (store.root / folder).mkdir()
        (store.root / folder / "x.md").write_bytes(NOTE)
    with monkeypatch.context() as patch:
        # removed between the listing and its lstat
        fail_on(patch, "stat", "a.md", FileNotFoundError(2, "No such file or directory"))
        assert [relpath for relpath, _ in store.files()] == ["b.md", "a1/x.md", "b1/x.md"]
    fail_on(monkeypatch, "listdir", store.root / "a1")
    assert [relpath for relpath, _ in store.files()] == ["a.md", "b.md", "b1/x.md"]


class _Untyped:
    """A directory entry whose type cannot be read (its lstat fails)."""

    def __init__(self, entry: os.DirEntry[str]) -> None:
        self.name, self.path = entry.name, entry.path

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        raise PermissionError(13, "Permission denied")

    is_symlink = is_dir


def test_an_entry_whose_type_cannot_be_read_is_read_as_a_file(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.scandir

    class Listing:
        def __init__(self, path: Any) -> None:
            self.inner = real(path)

        def __enter__(self) -> Any:
            return (_Untyped(e) if e.name == "a.md" else e for e in self.inner)

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

    monkeypatch.setattr(os, "scandir", Listing)
    assert [(s.relpath, s.problem) for s in store.scan()] == [("a.md", None)]


def test_a_symlink_in_the_store_is_listed_as_itself_never_followed(
        store: LocalStore, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_bytes(NOTE)
    os.symlink(tmp_path / "outside", store.root / "folder")
    os.symlink(tmp_path / "outside" / "x.md", store.root / "b.md")
    found = store.files()
    assert [relpath for relpath, _ in found] == ["a.md", "b.md", "folder"]
    assert [stat.S_ISLNK(info.st_mode) for _, info in found] == [False, True, True]


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_folder_swapped_after_the_walk_looked_at_it_is_not_walked(
        store: LocalStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    # files() saw a folder; before it is opened it becomes a symlink to a folder
    # outside the store, or a FIFO: O_NOFOLLOW and O_DIRECTORY keep the walk in
    (store.root / "a1").mkdir()
    (store.root / "a1" / "x.md").write_bytes(NOTE)

    def swap() -> None:
        os.rename(store.root / "a1", tmp_path / "outside")
        if kind == "symlink":
            os.symlink(tmp_path / "outside", store.root / "a1")
        else:
            os.mkfifo(store.root / "a1")

    swap_after(monkeypatch, "stat", "a1", swap)
    with never_blocks():  # without O_DIRECTORY the open of a FIFO waits for a writer
        assert [relpath for relpath, _ in store.files()] == ["a.md"]


def _put_refused(*_args: object, **_kwargs: object) -> bool:
    raise PermissionError(13, "Permission denied")


def test_a_write_the_system_refuses_is_a_store_error(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def text(k: Key) -> str:
        return note_text(k.value)

    with monkeypatch.context() as patch:
        patch.setattr(nofollow, "put", _put_refused)
        with pytest.raises(StoreError, match=r"cannot write .*b\.md: Permission denied"):
            store.write(Key("b"), text)
        with pytest.raises(StoreError, match=r"cannot write .*a\.md: Permission denied"):
            store.write(Key("a"), text, if_exists=IfExists.OVERRIDE)
    def put_on_a_folder(*_args: object, **_kwargs: object) -> bool:
        raise IsADirectoryError(21, "Is a directory")

    with monkeypatch.context() as patch:
        patch.setattr(nofollow, "put", put_on_a_folder)
        with pytest.raises(StoreError, match=r"b\.md is a directory where a note should be$"):
            store.write(Key("b"), text)
    with monkeypatch.context() as patch:
        fail_on(patch, "mkdir", store.root / "topic")
        with pytest.raises(StoreError, match=r"cannot create .*topic: Permission denied"):
            store.write(Key("topic/b"), text)
    (store.root / "topic").mkdir()
    fail_on(monkeypatch, "open", store.root / "topic")
    with pytest.raises(StoreError, match=r"cannot write into .*topic: Permission denied"):
        store.write(Key("topic/b"), text)


def test_a_removal_the_system_refuses_is_a_store_error(
        store: LocalStore, monkeypatch: pytest.MonkeyPatch) -> None:
    fail_on(monkeypatch, "unlink", store.root / "a.md")
    with pytest.raises(StoreError, match=r"cannot remove .*a\.md: Permission denied"):
        store.remove(Key("a"))
    assert (store.root / "a.md").read_bytes() == NOTE


def test_blocked_is_no_os_error() -> None:
    # file_bytes catches OSError: a wait interrupted must not pass as a refusal
    assert not issubclass(Blocked, OSError)
