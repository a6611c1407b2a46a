"""A local store for the journal's tests (stores/journal.py): the store, its notes, a
journal planted as a writer that died would leave it, and a writer that lands a note
meanwhile."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from omh_git_memory.stores import journal
from tests.helpers import note_text


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def note(key: str, body: str = "b") -> bytes:
    return note_text(key, body=body).encode()


def journal_store(tmp_path: Path) -> Path:
    """A store folder holding `a.md` and `sub/b.md`, and its lock file."""
    store = tmp_path / "store"
    (store / "sub").mkdir(parents=True)
    (store / "a.md").write_bytes(note("a"))
    (store / "sub" / "b.md").write_bytes(note("sub/b"))
    (store / journal.LOCK_NAME).touch()
    return store


def plant(root: Path, steps: list[dict[str, object]], staged: dict[str, bytes] | None = None,
          name: str = "planted") -> Path:
    """A decided journal as a writer that died (or someone with the store mounted)
    would leave it."""
    folder = root / journal.JOURNAL_DIR / name
    folder.mkdir(parents=True)
    for file, data in (staged or {}).items():
        (folder / file).write_bytes(data)
    (folder / journal.PLAN_NAME).write_text(json.dumps(steps))
    return folder


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and p.name != journal.LOCK_NAME}


def written_meanwhile(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer puts c.md in place once the journal's folders are made, just
    before omh's change lands."""
    real = journal.make_private_dirs

    def meanwhile(directory: Path, top: Path) -> None:
        real(directory, top)
        if not (root / "c.md").exists():
            (root / "c.md").write_bytes(note("c", "theirs"))

    monkeypatch.setattr(journal, "make_private_dirs", meanwhile)
