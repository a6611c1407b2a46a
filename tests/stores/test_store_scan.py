"""Opening and reading the local store (omh_git_memory/stores/store.py): a store is
checked and closed to other accounts once per instance, only the local layer is
made private, and a scan reads under the store's lock, finishes a change a dead
writer left, reads each file once, and never shows a change of several files
half made.

Found by mutation testing (docs/records/mutation-passes.md): each case kills
mutants of store.py that no test caught."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.stores import journal
from omh_git_memory.stores.reading import StoredNote, read_note_bytes
from omh_git_memory.stores.store import LocalStore
from tests.helpers import note_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _by_hand(root: Path, key: str, body: str = "b") -> Path:
    """A note file written as an older omh or a person would: no lock file made."""
    path = root / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(key, body=body), encoding="utf-8")
    return path


def _bodies(found: list[StoredNote]) -> dict[str, str | None]:
    return {s.relpath: (s.note.body.split()[-1] if s.note else s.problem) for s in found}


# --- open: once per instance, private only for the local layer ----------------------


def test_the_owner_check_runs_once_per_store_instance(tmp_path: Path) -> None:
    checked: list[Path] = []
    root = tmp_path / "store"
    root.mkdir()
    store = LocalStore(root, owner=lambda: checked.append(root))
    assert store.open() and store.open()
    store.scan()
    assert checked == [root]
    assert LocalStore(root, owner=lambda: checked.append(root)).open()
    assert checked == [root, root]  # a new instance checks again


def test_a_missing_store_is_not_opened_and_not_checked(tmp_path: Path) -> None:
    checked: list[Path] = []
    store = LocalStore(tmp_path / "store", owner=lambda: checked.append(tmp_path))
    assert not store.open()
    assert checked == []
    store.create_root()
    assert checked == [tmp_path]


def test_a_wide_local_store_is_closed_when_first_opened(tmp_path: Path) -> None:
    root = tmp_path / "store"
    note = _by_hand(root, "topic/a")
    for path, mode in ((root, 0o755), (root / "topic", 0o755), (note, 0o644)):
        os.chmod(path, mode)
    assert LocalStore(root).open()
    assert (_mode(root), _mode(root / "topic"), _mode(note)) == (0o700, 0o700, 0o600)


def test_a_team_layers_folder_keeps_its_modes(tmp_path: Path) -> None:
    # The checkout's .omh/notes/ is read through a store of the team layer: its
    # files are git's, shared, and never made private.
    root = tmp_path / "notes"
    note = _by_hand(root, "topic/a")
    for path, mode in ((root, 0o755), (root / "topic", 0o755), (note, 0o644)):
        os.chmod(path, mode)
    store = LocalStore(root, Layer.TEAM)
    assert store.open()
    assert [s.relpath for s in store.scan()] == ["topic/a.md"]
    assert (_mode(root), _mode(root / "topic"), _mode(note)) == (0o755, 0o755, 0o644)


# --- scan: under the lock, recovered, each file once, never a change half made ------


# journal._pending once left its scandir iterator to the garbage collector when the
# journal folder held a plan: a ResourceWarning, which pytest reports as an error.
def test_a_scan_finishes_a_change_a_dead_writer_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = LocalStore(tmp_path / "store")
    store.write(Key("a"), lambda k: note_text(k.value, body="old"))
    old = (store.root / "a.md").read_bytes()
    # The writer fails just after its change was decided, before any file switched.
    monkeypatch.setenv("OMH_FAULT", "journal:decided")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "EIO")
    with pytest.raises(OSError):
        store.replace_if(Key("a"), old, note_text("a", body="new"))
    monkeypatch.delenv("OMH_FAULT")
    assert (store.root / "a.md").read_bytes() == old  # nothing switched yet
    assert _bodies(LocalStore(store.root).scan()) == {"a.md": "new"}
    assert not (store.root / ".omh-journal").exists()


def test_a_scan_by_the_lock_holder_does_not_wait_on_its_own_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")  # a wait for the lock fails at once
    store = LocalStore(tmp_path / "store")
    store.write(Key("a"), lambda k: note_text(k.value))
    with journal.exclusive(store.root):
        assert [s.relpath for s in store.scan(locked=True)] == ["a.md"]
        with pytest.raises(StoreError):
            store.scan()  # a reader waits for the holder (here: not at all)


def test_a_scan_reads_each_file_once(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    for key in ("a", "b/c", "d"):
        store.write(Key(key), lambda k: note_text(k.value))
    assert journal.lock_exists(store.root)  # every writer takes the lock
    read: list[str] = []

    def counting(layer: Layer, relpath: str, location: str, data: bytes) -> StoredNote:
        read.append(relpath)
        return read_note_bytes(layer, relpath, location, data)

    store.read_bytes = counting
    assert [s.relpath for s in store.scan()] == ["a.md", "b/c.md", "d.md"]
    assert sorted(read) == ["a.md", "b/c.md", "d.md"]


def test_a_scan_never_shows_a_rename_half_made(tmp_path: Path) -> None:
    # A store with no lock file yet (written by hand) is read without one; a rename
    # that begins meanwhile (here: while the first file is read) makes the lock
    # file, and the store is read again under it: never `m` gone and `b` missing.
    root = tmp_path / "store"
    _by_hand(root, "a")
    moved = _by_hand(root, "m", body="moving")
    store = LocalStore(root)
    renamed: list[bool] = []

    def rename_meanwhile(layer: Layer, relpath: str, location: str,
                         data: bytes) -> StoredNote:
        if not renamed:
            renamed.append(True)
            with journal.exclusive(root):
                journal.switch(root, [
                    journal.FileChange("b.md", None, note_text("b", body="moving").encode()),
                    journal.FileChange("m.md", moved.read_bytes(), None)])
        return read_note_bytes(layer, relpath, location, data)

    assert not journal.lock_exists(root)
    store.read_bytes = rename_meanwhile
    assert _bodies(store.scan()) == {"a.md": "b", "b.md": "moving"}
