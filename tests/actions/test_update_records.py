"""update.py's record of what an agent wrote (`record_agent_write`) and the check
`replaces` makes against it (`agent_owned`), called directly on a local store: the
record is private, never written through what is not a folder, and proves a note the
agent's only while the file is the one written, with the bytes written. The MCP round
trips are in test_update.py and tests/attacks/mcp/test_server_end.py."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from omh_git_memory.actions import update as update_module
from omh_git_memory.actions.update import (
    AGENT_RECORDS,
    MAX_RECORD,
    agent_owned,
    record_agent_write,
)
from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import Key
from omh_git_memory.model.note import Note, parse, render
from omh_git_memory.stores.store import LocalStore
from tests.helpers import note_text, remember_linked

KEY = Key("surprise/port-taken")
AGENT = "session s01, claude-code 2.1"


def _store(tmp_path: Path) -> LocalStore:
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    return LocalStore(root)


def _written(store: LocalStore, source: str = AGENT) -> tuple[Note, bytes]:
    """The note KEY written in `store` as an agent of `source` writes it, recorded."""
    note = parse(note_text(KEY.value, kind="topic", source=source))
    data = render(note).encode("utf-8")
    path = store.path_for(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    record_agent_write(store, KEY, data)
    return note, data


def _record_file(store: LocalStore) -> Path:
    (path,) = (store.root / AGENT_RECORDS).iterdir()
    return path


def test_a_recorded_unchanged_note_is_the_agents_and_the_record_is_private(
        tmp_path: Path) -> None:
    store = _store(tmp_path)
    note, _ = _written(store)
    assert agent_owned(store, KEY, note, AGENT) is None
    assert stat.S_IMODE((store.root / AGENT_RECORDS).stat().st_mode) == 0o700
    record = _record_file(store)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert json.loads(record.read_bytes())["key"] == KEY.value
    assert agent_owned(store, KEY, note, "session s02, claude-code 2.1") == "other"


def test_a_note_with_no_record_or_a_record_of_another_key_is_unrecorded(
        tmp_path: Path) -> None:
    store = _store(tmp_path)
    note, _ = _written(store)
    record = _record_file(store)
    good = json.loads(record.read_bytes())
    record.write_text(json.dumps({**good, "key": "surprise/other"}))
    assert agent_owned(store, KEY, note, AGENT) == "unrecorded"
    record.write_text(json.dumps([good]))  # not a record at all
    assert agent_owned(store, KEY, note, AGENT) == "unrecorded"
    record.write_text(json.dumps(good)[:-3])  # torn
    assert agent_owned(store, KEY, note, AGENT) == "unrecorded"
    record.unlink()
    assert agent_owned(store, KEY, note, AGENT) == "unrecorded"


def test_a_record_longer_than_the_cap_proves_nothing(tmp_path: Path) -> None:
    """Only 4 KiB of a record are read (MAX_RECORD): one a byte longer does not
    parse, one exactly that long does."""
    store = _store(tmp_path)
    note, _ = _written(store)
    record = _record_file(store)
    good = json.loads(record.read_bytes())
    bare = len(json.dumps({**good, "pad": ""}).encode("utf-8"))
    assert MAX_RECORD == 4096
    for size, owned in ((4096, None), (4097, "unrecorded")):
        data = json.dumps({**good, "pad": "x" * (size - bare)}).encode("utf-8")
        assert len(data) == size
        record.write_bytes(data)
        assert agent_owned(store, KEY, note, AGENT) == owned


def test_the_same_bytes_in_another_file_or_other_bytes_in_the_file_are_changed(
        tmp_path: Path) -> None:
    store = _store(tmp_path)
    note, data = _written(store)
    path = store.path_for(KEY)
    copy = path.with_name("copy")
    copy.write_bytes(data)
    os.replace(copy, path)  # the same bytes, another file (a text editor's save)
    assert path.read_bytes() == data
    assert agent_owned(store, KEY, note, AGENT) == "changed"
    record_agent_write(store, KEY, data)
    assert agent_owned(store, KEY, note, AGENT) is None
    # The same file, other bytes: the note as read is not the note recorded.
    changed = parse(render(note).replace(f"# {KEY.value}", "# Another title"))
    assert agent_owned(store, KEY, changed, AGENT) == "changed"


def test_a_note_whose_file_is_gone_or_behind_a_link_is_changed(tmp_path: Path) -> None:
    store = _store(tmp_path)
    note, _ = _written(store)
    folder = store.root / "surprise"
    moved = tmp_path / "moved"
    folder.rename(moved)
    assert agent_owned(store, KEY, note, AGENT) == "changed"  # no file: OSError
    folder.symlink_to(moved)  # the file reached through a link: StoreError
    assert (folder / "port-taken.md").exists()
    assert agent_owned(store, KEY, note, AGENT) == "changed"


def test_recording_a_note_with_no_file_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(StoreError) as err:
        record_agent_write(store, KEY, b"text")
    assert str(err.value).startswith(f"cannot record that an agent wrote local/{KEY}")


def test_a_file_where_the_records_folder_goes_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / AGENT_RECORDS).write_bytes(b"")
    with pytest.raises(StoreError) as err:
        _written(store)
    assert str(err.value).endswith("is not a folder; move it away so omh can record which "
                                   "notes an agent wrote")
    assert (store.root / AGENT_RECORDS).read_bytes() == b""


def test_a_records_folder_swapped_for_a_link_after_the_check_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race the check cannot see: the folder becomes a link between its check and
    its opening; the record is not written where the link points."""
    store = _store(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = nofollow.open_folder

    def swapped(root: Path, rel: str = "", **kw: object) -> int | None:
        (root / rel).rmdir()
        (root / rel).symlink_to(elsewhere)
        return real(root, rel, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(update_module.nofollow, "open_folder", swapped)
    with pytest.raises(StoreError):
        _written(store)
    assert list(elsewhere.iterdir()) == []


def test_a_records_folder_removed_after_the_check_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    real = nofollow.open_folder

    def removed(root: Path, rel: str = "", **kw: object) -> int | None:
        (root / rel).rmdir()
        return real(root, rel, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(update_module.nofollow, "open_folder", removed)
    with pytest.raises(StoreError) as err:
        _written(store)
    assert "No such file or directory" in str(err.value)


def test_a_correction_the_longer_key_pushes_past_the_size_cap_is_refused(
        repo_dir: Path) -> None:
    """`replaces` keeps the note's key: a correction built just under the size cap
    with its own short key goes over it with the long key it keeps; refused as one
    that would not read back, the note left as it was."""
    import datetime as dt

    from omh_git_memory.actions.remember import Observation, build_surprise
    from omh_git_memory.actions.update import replace_own
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.model.errors import NoteRefused
    from omh_git_memory.model.note import MAX_NOTE_BYTES

    remember_linked(repo_dir, "Alpha fails.")  # the store made as omh makes it
    ws = open_workspace(repo_dir)
    long = Key("surprise/" + "a" * 180)
    path = ws.local.path_for(long)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = render(parse(note_text(long.value, kind="topic", source=AGENT))).encode("utf-8")
    path.write_bytes(data)
    record_agent_write(ws.local, long, data)
    templates, today = ws.config().keys, dt.date(2026, 12, 1)
    small = Observation(expected="e", observed="Short.", evidence="x", answers=("q?",),
                        source=AGENT)
    size = len(render(build_surprise(small, templates, today)).encode("utf-8"))
    obs = Observation(**{**small.__dict__, "evidence": "x" * (MAX_NOTE_BYTES - size - 20)})
    assert len(render(build_surprise(obs, templates, today)).encode("utf-8")) < MAX_NOTE_BYTES
    with pytest.raises(NoteRefused) as err:
        replace_own(ws, long.value, obs, templates, today)
    assert str(err.value).startswith("the note would not read back: is 10487")
    assert path.read_bytes() == data
