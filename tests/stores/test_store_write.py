"""Writing a note into the local store (omh_git_memory/stores/store.py): a folder in
the note's place is refused whatever the policy, and a folder that a removal prunes
between its making and the write is made again, a bounded number of times.

Found by mutation testing (docs/records/mutation-passes.md): each case kills
mutants of store.py that no test caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.stores.store import IfExists, LocalStore
from tests.helpers import note_text


def _store(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "store")
    store.create_root()
    return store


@pytest.mark.parametrize("policy", [IfExists.ERROR, IfExists.SKIP, IfExists.OVERRIDE])
def test_a_folder_where_the_note_should_be_is_refused(tmp_path: Path,
                                                      policy: IfExists) -> None:
    store = _store(tmp_path)
    folder = store.root / "topic" / "a.md"
    (folder / "inside").mkdir(parents=True)
    with pytest.raises(StoreError, match="is a directory where a note should be"):
        store.write(Key("topic/a"), lambda k: note_text(k.value), policy)
    assert (folder / "inside").is_dir()


def _pruned(times: int, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The note's folder is removed just before the write opens it, `times` times: a
    removal of the folder's last note pruning it meanwhile (placed, not raced)."""
    real = nofollow.open_root
    pruned: list[Path] = []

    def open_root(folder: Path) -> int:
        if len(pruned) < times:
            folder.rmdir()
            pruned.append(folder)
        return real(folder)

    monkeypatch.setattr(nofollow, "open_root", open_root)
    return pruned


def test_a_folder_pruned_before_the_write_is_made_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    pruned = _pruned(2, monkeypatch)
    assert store.write(Key("topic/a"), lambda k: note_text(k.value)) == (Key("topic/a"), True)
    assert len(pruned) == 2
    assert [s.relpath for s in store.scan()] == ["topic/a.md"]


def test_a_folder_that_keeps_disappearing_is_given_up_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    pruned = _pruned(99, monkeypatch)
    with pytest.raises(StoreError, match="it keeps disappearing"):
        store.write(Key("topic/a"), lambda k: note_text(k.value))
    assert len(pruned) == 3
    assert store.scan() == []
