"""The two walks of a store that left_behind.py makes: whether a store holds any
note (run on every listing and recall, so it stops at the first), and its note
files. Both skip dot names, never follow a symlink, and count only regular `.md`
files; a store that cannot be read holds none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.stores.left_behind import holds_a_note, note_files


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store holding only what is no note: dot names, a text file, a folder named
    like a note, and symlinks to a folder and to a note outside it."""
    store = tmp_path / "store"
    (store / ".hidden").mkdir(parents=True)
    (store / ".hidden" / "n.md").write_text("x\n")
    (store / ".n.md").write_text("x\n")
    (store / "readme.txt").write_text("x\n")
    (store / "dir.md").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("x\n")
    os.symlink(outside, store / "linked")
    os.symlink(outside / "o.md", store / "link.md")
    return store


def test_a_store_of_what_is_no_note_holds_none(store: Path) -> None:
    assert not holds_a_note(store)
    assert list(note_files(store)) == []


def test_a_note_anywhere_below_is_found(store: Path) -> None:
    (store / "a" / "b").mkdir(parents=True)
    (store / "a" / "b" / "n.md").write_text("x\n")
    (store / "top.md").write_text("x\n")
    assert holds_a_note(store)
    assert list(note_files(store)) == ["top.md", "a/b/n.md"]


def test_a_store_that_cannot_be_read_holds_none(tmp_path: Path) -> None:
    assert not holds_a_note(tmp_path / "missing")
    assert list(note_files(tmp_path / "missing")) == []
