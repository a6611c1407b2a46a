"""The local store's journal and lock (omh_git_memory/stores/journal.py): a change of
several files is journalled, then switched in order, so no reader sees it half done;
a journal a dead writer left is finished by whoever takes the lock next, never by
following a link out of the store; the lock is waited for a bounded time, and a
wait that runs out names whoever holds it.

Found by mutation testing (docs/records/mutation-newer-stores.md): each case kills
mutants of journal.py that no test caught, or holds one of its guards."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import re
import secrets
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    BadLockTimeout,
    ChangedMeanwhile,
    KeyConflict,
    StoreBusy,
    StoreError,
)
from omh_git_memory.stores import journal
from omh_git_memory.stores.journal import FileChange
from tests.helpers.journal import files as _files
from tests.helpers.journal import journal_store
from tests.helpers.journal import note as _note
from tests.helpers.journal import plant as _plant
from tests.helpers.journal import sha as _sha
from tests.helpers.journal import written_meanwhile as _written_meanwhile


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return journal_store(tmp_path)


# --- switch: every file as planned, private, or nothing changed --------------------


def test_switch_makes_the_new_file_private_and_removes_the_old(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.umask(0o022)
    old = (root / "sub" / "b.md").read_bytes()
    with journal.exclusive(root):
        journal.switch(root, [FileChange("deep/er/c.md", None, _note("deep/er/c")),
                              FileChange("a.md", _note("a"), _note("a", "linked")),
                              FileChange("sub/b.md", old, None)])
    assert _files(root) == {"a.md": _note("a", "linked"), "deep/er/c.md": _note("deep/er/c")}
    assert _mode(root / "deep/er/c.md") == 0o600
    assert _mode(root / "deep") == 0o700 and _mode(root / "deep/er") == 0o700
    assert not (root / "sub").exists()  # emptied by the removal: pruned
    assert not (root / journal.JOURNAL_DIR).exists()


@pytest.mark.parametrize(("change", "said"), [
    (FileChange("new.md", _note("new", "x"), _note("new")), "is gone"),
    (FileChange("a.md", None, _note("a")), "exists now"),
    (FileChange("a.md", _note("a", "other"), _note("a", "new")), "changed"),
])
def test_switch_refuses_a_file_that_changed_since_it_was_read(
        root: Path, change: FileChange, said: str) -> None:
    before = _files(root)
    with journal.exclusive(root), pytest.raises(ChangedMeanwhile) as caught:
        journal.switch(root, [FileChange("c.md", None, _note("c")), change])
    assert f"{root / change.relpath} {said} since omh read the store" in str(caught.value)
    assert _files(root) == before
    assert not (root / journal.JOURNAL_DIR).exists()


@pytest.mark.parametrize(("kind", "said"), [
    ("symlink", "is a symlink; omh never follows one"),
    ("directory", "is a directory where a note should be"),
    ("fifo", "is not a regular file"),
])
def test_switch_never_reads_through_what_is_no_note_file(
        root: Path, tmp_path: Path, kind: str, said: str) -> None:
    outside = tmp_path / "outside.md"
    outside.write_bytes(_note("c"))
    path = root / "c.md"
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)
    with journal.exclusive(root), pytest.raises(StoreError) as caught:
        journal.switch(root, [FileChange("c.md", _note("c"), None)])
    assert str(caught.value) == f"{path} {said}"
    assert outside.read_bytes() == _note("c")


def test_switch_refuses_a_journal_folder_that_is_a_symlink(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / journal.JOURNAL_DIR).symlink_to(elsewhere)
    with pytest.raises(StoreError, match="is not a plain directory"):
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    assert list(elsewhere.iterdir()) == []
    assert not (root / "c.md").exists()


def test_switch_keeps_a_new_note_that_appears_while_it_switches(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Someone writes the renamed note's file between the plan and its switch.
    def meanwhile(name: str) -> None:
        if name == "journal:decided":
            (root / "c.md").write_bytes(_note("c", "theirs"))

    monkeypatch.setattr(faults, "point", meanwhile)
    with pytest.raises(ChangedMeanwhile, match="changed while omh switched its files"):
        journal.switch(root, [FileChange("c.md", None, _note("c")),
                              FileChange("a.md", _note("a"), None)])
    assert (root / "c.md").read_bytes() == _note("c", "theirs")
    assert (root / "a.md").read_bytes() == _note("a")
    assert not (root / journal.JOURNAL_DIR).exists()


def test_switch_drops_the_change_when_its_first_file_is_edited_meanwhile(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def meanwhile(name: str) -> None:
        if name == "journal:decided":
            (root / "a.md").write_bytes(_note("a", "edited"))

    monkeypatch.setattr(faults, "point", meanwhile)
    with pytest.raises(ChangedMeanwhile, match="changed while omh switched its files"):
        journal.switch(root, [FileChange("a.md", _note("a"), _note("a", "new")),
                              FileChange("sub/b.md", _note("sub/b"), None)])
    assert (root / "a.md").read_bytes() == _note("a", "edited")
    assert (root / "sub/b.md").read_bytes() == _note("sub/b")  # nothing else switched
    assert not (root / journal.JOURNAL_DIR).exists()


def test_switch_keeps_a_later_file_edited_meanwhile(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def meanwhile(name: str) -> None:
        if name == "journal:decided":
            (root / "sub/b.md").write_bytes(_note("sub/b", "edited"))

    monkeypatch.setattr(faults, "point", meanwhile)
    journal.switch(root, [FileChange("c.md", None, _note("c")),
                          FileChange("sub/b.md", _note("sub/b"), _note("sub/b", "linked")),
                          FileChange("a.md", _note("a"), None)])
    assert _files(root) == {"c.md": _note("c"), "sub/b.md": _note("sub/b", "edited")}


def test_switch_cut_short_is_finished_by_the_next_reader(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_FAULT", "journal:switching")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
    with pytest.raises(StoreError, match=r"cut short \(No space left on device\); the next"):
        journal.switch(root, [FileChange("c.md", None, _note("c")),
                              FileChange("a.md", _note("a"), None)])
    monkeypatch.delenv("OMH_FAULT")
    assert (root / "c.md").exists() and (root / "a.md").exists()  # half done
    with journal.reading(root) as locked:
        assert locked
        assert _files(root) == {"c.md": _note("c"), "sub/b.md": _note("sub/b")}
    assert not (root / journal.JOURNAL_DIR).exists()


def test_switch_that_cannot_write_its_journal_changes_nothing(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal, "_write_synced", full)
    with pytest.raises(StoreError, match="No space left on device; nothing was changed"):
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    assert list((root / journal.JOURNAL_DIR).iterdir()) == []
    assert not (root / "c.md").exists()


def test_switch_failing_to_place_a_file_says_the_next_command_finishes_it(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", refused)
    with pytest.raises(StoreError, match=r"cut short \(Input/output error\); the next omh"):
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    monkeypatch.undo()
    journal.recover(root)
    assert (root / "c.md").read_bytes() == _note("c")


# --- recover: a journal left behind, finished or dropped, never followed out ----------


def test_recover_finishes_a_decided_plan_and_drops_an_undecided_one(root: Path) -> None:
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}],
           {"new-0": _note("c")}, name="1")
    undecided = root / journal.JOURNAL_DIR / "2"
    undecided.mkdir()
    (undecided / "new-0").write_bytes(_note("d"))
    journal.recover(root)
    assert _files(root) == {"c.md": _note("c"), "sub/b.md": _note("sub/b")}
    assert not (root / journal.JOURNAL_DIR).exists()


def test_recover_leaves_a_file_edited_since_the_plan(root: Path) -> None:
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a", "x")), "new": None, "staged": None},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b", "y")),
                   "new": _sha(_note("sub/b", "z")), "staged": "new-2"}],
           {"new-0": _note("c"), "new-2": _note("sub/b", "z")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "c.md": _note("c"), "sub/b.md": _note("sub/b")}


def test_recover_drops_the_whole_plan_when_its_first_file_was_edited(root: Path) -> None:
    _plant(root, [{"path": "a.md", "old": _sha(_note("a", "x")), "new": _sha(_note("a", "y")),
                   "staged": "new-0"},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": None,
                   "staged": None}],
           {"new-0": _note("a", "y")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "sub/b.md": _note("sub/b")}
    assert not (root / journal.JOURNAL_DIR).exists()


def test_recover_replaces_a_file_still_holding_its_old_text(root: Path) -> None:
    _plant(root, [{"path": "a.md", "old": _sha(_note("a")), "new": _sha(_note("a", "y")),
                   "staged": "new-0"},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": _sha(_note("b2")),
                   "staged": "new-1"}],
           {"new-0": _note("a", "y"), "new-1": _note("b2")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a", "y"), "sub/b.md": _note("b2")}


def test_recover_skips_a_step_already_done(root: Path) -> None:
    # The first step's file holds its new text already: a second recovery (or a
    # writer that died after switching it) goes on with the rest.
    _plant(root, [{"path": "a.md", "old": _sha(_note("a", "x")), "new": _sha(_note("a")),
                   "staged": None},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": None,
                   "staged": None}])
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a")}


def test_recover_drops_an_unreadable_plan(root: Path) -> None:
    for name, text in (("1", "{not json"), ("2", '{"path": "a.md"}'), ("3", '["a.md"]')):
        folder = root / journal.JOURNAL_DIR / name
        folder.mkdir(parents=True)
        (folder / journal.PLAN_NAME).write_text(text)
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "sub/b.md": _note("sub/b")}
    assert not (root / journal.JOURNAL_DIR).exists()


def test_recover_never_follows_a_symlinked_journal(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "j").mkdir(parents=True)
    (outside / "j" / journal.PLAN_NAME).write_text(json.dumps(
        [{"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}]))
    (root / journal.JOURNAL_DIR).symlink_to(outside)
    journal.recover(root)
    assert (root / "a.md").exists()
    assert (outside / "j" / journal.PLAN_NAME).exists()


def test_recover_skips_a_symlink_inside_the_journal_folder(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / journal.PLAN_NAME).write_text(json.dumps(
        [{"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}]))
    (root / journal.JOURNAL_DIR).mkdir()
    (root / journal.JOURNAL_DIR / "x").symlink_to(outside)
    journal.recover(root)
    assert (root / "a.md").exists()
    assert (outside / journal.PLAN_NAME).exists()


def test_a_planted_plan_under_a_symlinked_folder_deletes_nothing_outside(
        root: Path, tmp_path: Path) -> None:
    # The store's `sub` is a symlink to a folder elsewhere; a plan naming
    # `sub/victim.md` must not remove (or write) the file it points at.
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.md"
    victim.write_bytes(_note("victim"))
    (root / "sub" / "b.md").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside)
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "sub/victim.md", "old": _sha(_note("victim")), "new": None,
                   "staged": None},
                  {"path": "sub/made.md", "old": None, "new": _sha(_note("c")),
                   "staged": "new-0"}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert victim.read_bytes() == _note("victim")
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"]
    assert (root / "c.md").read_bytes() == _note("c")


def test_a_planted_plan_whose_first_path_is_under_a_symlink_changes_nothing(
        root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_bytes(_note("victim"))
    (root / "link").symlink_to(outside)
    _plant(root, [{"path": "link/victim.md", "old": _sha(_note("victim")), "new": None,
                   "staged": None},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}])
    journal.recover(root)
    assert (outside / "victim.md").exists() and (root / "a.md").exists()


@pytest.mark.parametrize("path", ["../outside.md", "/abs.md", "a", 7, ".hidden.md"])
def test_a_planted_plan_naming_no_note_path_changes_nothing(
        root: Path, tmp_path: Path, path: object) -> None:
    (tmp_path / "outside.md").write_bytes(_note("a"))
    _plant(root, [{"path": path, "old": _sha(_note("a")), "new": None, "staged": None},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}])
    journal.recover(root)
    assert (tmp_path / "outside.md").exists() and (root / "a.md").exists()


@pytest.mark.parametrize("staged", ["../../../secret", "new-0/../../../../secret",
                                    "plan.json", 3])
def test_a_planted_plan_stages_only_its_own_new_files(
        root: Path, tmp_path: Path, staged: object) -> None:
    (tmp_path / "secret").write_bytes(b"secret")
    folder = _plant(root, [{"path": "a.md", "old": _sha(_note("a")), "new": _sha(b"secret"),
                            "staged": staged},
                           {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": None,
                            "staged": None}])
    (folder / "new-0").mkdir()  # so that a path through it would lead out of the store
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "sub/b.md": _note("sub/b")}
    assert (tmp_path / "secret").read_bytes() == b"secret"


def test_a_later_step_naming_no_note_path_is_skipped(root: Path) -> None:
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "../x.md", "old": None, "new": _sha(_note("c")),
                   "staged": "new-0"},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": _sha(_note("c")),
                   "staged": "bad"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert _files(root) == {"c.md": _note("c"), "sub/b.md": _note("sub/b")}


def test_a_later_step_where_a_folder_now_stands_is_skipped(root: Path) -> None:
    (root / "d.md").mkdir()
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "d.md", "old": None, "new": None, "staged": None},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert (root / "d.md").is_dir()
    assert _files(root) == {"c.md": _note("c"), "sub/b.md": _note("sub/b")}


def test_a_first_step_where_a_folder_now_stands_drops_the_plan(root: Path) -> None:
    (root / "d.md").mkdir()
    _plant(root, [{"path": "d.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert (root / "a.md").exists() and (root / "d.md").is_dir()


def test_recovery_goes_on_past_a_file_it_cannot_place(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_replace = os.replace

    def refuse_a(src: object, dst: object) -> None:
        if str(dst).endswith("a.md"):
            raise OSError(5, "Input/output error")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", refuse_a)
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": _sha(_note("a2")),
                   "staged": "new-1"},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": _sha(_note("b2")),
                   "staged": "new-2"}],
           {"new-0": _note("c"), "new-1": _note("a2"), "new-2": _note("b2")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "c.md": _note("c"), "sub/b.md": _note("b2")}


# --- the lock: a bounded wait, its holder named ----------------------------------------


@pytest.mark.parametrize(("raw", "wait"), [("", 10.0), ("  ", 10.0), ("0", 0.0),
                                           ("2.5", 2.5)])
def test_lock_timeout_reads_omh_lock_timeout(raw: str, wait: float) -> None:
    # unset or empty: the documented default of ten seconds
    assert journal.lock_timeout({"OMH_LOCK_TIMEOUT": raw}) == wait
    assert journal.lock_timeout({}) == 10.0


@pytest.mark.parametrize("raw", ["-1", "soon", "inf", "nan", "-0.001"])
def test_lock_timeout_refuses_what_is_no_wait(raw: str) -> None:
    with pytest.raises(BadLockTimeout) as caught:
        journal.lock_timeout({"OMH_LOCK_TIMEOUT": raw})
    assert f"OMH_LOCK_TIMEOUT={raw!r} is not a number of seconds" in str(caught.value)
    assert "(the default is 10)" in str(caught.value)


def test_a_bad_lock_timeout_is_refused_even_without_a_lock_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "-5")
    with pytest.raises(BadLockTimeout), journal.reading(tmp_path):
        pass


@pytest.fixture
def held(root: Path) -> Iterator[int]:
    """The store's lock held exclusively by another open file (flock conflicts
    between two opens of the file even in one process)."""
    fd = os.open(root / journal.LOCK_NAME, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield fd
    os.close(fd)


@pytest.mark.parametrize(("enter", "doing", "undone"), [
    (journal.reading, "read it", "nothing was read, and nothing written or changed"),
    (journal.writing, "write a note", "nothing was written"),
    (journal.exclusive, "change it", "nothing was changed or written"),
])
def test_a_wait_for_a_held_lock_ends_and_says_what_was_left_undone(
        root: Path, held: int, monkeypatch: pytest.MonkeyPatch, enter: object, doing: str,
        undone: str) -> None:
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0.02")
    with pytest.raises(StoreBusy) as caught, enter(root):  # type: ignore[operator]
        pass
    said = str(caught.value)
    assert said.startswith(f"the local store {root} stayed locked for 0.02s while omh "
                           f"waited to {doing}, held by a process omh cannot see")
    assert f"; {undone}: let that process finish" in said


def _busy_said(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a writer is told while this process holds the store's lock shared."""
    fd = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    try:
        with pytest.raises(StoreBusy) as caught, journal.exclusive(root):
            pass
    finally:
        os.close(fd)
    return str(caught.value)


def test_a_busy_lock_names_the_last_writer_it_recorded(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with journal.exclusive(root):
        pass
    record = json.loads((root / journal.LOCK_NAME).read_text())
    assert record["pid"] == os.getpid() and record["host"]
    assert re.search(f"perhaps by pid {os.getpid()} on {re.escape(record['host'])} .the last "
                     "to change", _busy_said(root, monkeypatch))


@pytest.mark.parametrize(("size", "named"), [(4096, True), (4097, False)])
def test_a_lock_record_longer_than_omh_writes_names_nobody(
        root: Path, monkeypatch: pytest.MonkeyPatch, size: int, named: bool) -> None:
    with journal.exclusive(root):
        pass
    text = (root / journal.LOCK_NAME).read_text()
    (root / journal.LOCK_NAME).write_text("{" + " " * (size - len(text)) + text[1:])
    said = _busy_said(root, monkeypatch)
    assert (f"perhaps by pid {os.getpid()} on " in said) is named
    assert ("held by a process omh cannot see" in said) is not named


@pytest.mark.parametrize("record", [b'{"pid": 7, "host": "h"}', b"unreadable"],
                         ids=["a record lacking its time", "a record that cannot be read"])
def test_a_lock_record_omh_cannot_use_names_nobody(
        root: Path, monkeypatch: pytest.MonkeyPatch, record: bytes) -> None:
    (root / journal.LOCK_NAME).write_bytes(record)
    if record == b"unreadable":
        def failing(fd: int, size: int, offset: int) -> bytes:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "pread", failing)
    said = _busy_said(root, monkeypatch)
    assert "held by a process omh cannot see" in said


def test_a_busy_lock_names_the_process_holding_it_and_what_it_runs(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl,os,sys;fd=os.open(sys.argv[1],os.O_RDONLY);"
         "fcntl.flock(fd,fcntl.LOCK_SH);print('held',flush=True);sys.stdin.read()",
         str(root / journal.LOCK_NAME), "holder-mark"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
        with pytest.raises(StoreBusy) as caught, journal.exclusive(root):
            pass
        said = str(caught.value)
        assert f"held by pid {holder.pid} (shared, {sys.executable} -c" in said
        assert "which is stopped" not in said
        with journal.reading(root) as locked:  # readers share it
            assert locked
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.wait()
        holder.stdout.close()


def test_a_lock_that_is_a_fifo_never_hangs_and_is_refused_to_a_writer(root: Path) -> None:
    (root / journal.LOCK_NAME).unlink()
    os.mkfifo(root / journal.LOCK_NAME)
    with journal.reading(root) as locked:
        assert not locked
    with pytest.raises(StoreError, match="it is not a regular file; remove it"), \
            journal.writing(root):
        pass


def test_a_lock_that_is_a_symlink_is_never_followed(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-lock"
    outside.write_text("keep")
    (root / journal.LOCK_NAME).unlink()
    (root / journal.LOCK_NAME).symlink_to(outside)
    with journal.reading(root) as locked:
        assert not locked
    with pytest.raises(StoreError, match="cannot lock the local store at"), \
            journal.exclusive(root):
        pass
    assert outside.read_text() == "keep"


def test_a_store_without_a_lock_file_is_read_unlocked_and_a_writer_makes_one(
        tmp_path: Path) -> None:
    os.umask(0o022)
    with journal.reading(tmp_path) as locked:
        assert not locked
    assert not journal.lock_exists(tmp_path)
    with journal.writing(tmp_path):
        pass
    assert journal.lock_exists(tmp_path) and _mode(tmp_path / journal.LOCK_NAME) == 0o600


def test_a_reader_finishes_a_journal_a_dead_writer_left(root: Path) -> None:
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"}],
           {"new-0": _note("c")})
    with journal.reading(root) as locked:
        assert locked and (root / "c.md").read_bytes() == _note("c")
    assert not (root / journal.JOURNAL_DIR).exists()


def test_a_reader_leaves_an_empty_journal_folder_alone(root: Path) -> None:
    (root / journal.JOURNAL_DIR).mkdir()
    with journal.reading(root) as locked:
        assert locked
    assert (root / journal.JOURNAL_DIR).is_dir()  # nothing pending: not even looked at


# --- folders made private, and pruned up to the store ---------------------------------


def test_private_dirs_are_made_0700_below_the_root_only(tmp_path: Path) -> None:
    os.umask(0o022)
    root = tmp_path / "store"
    root.mkdir()
    journal.make_private_dirs(root / "x" / "y", root)
    assert _mode(root / "x") == 0o700 and _mode(root / "x" / "y") == 0o700
    journal.make_private_dirs(tmp_path / "beside", root)  # not below the root: left
    assert not (tmp_path / "beside").exists()


def test_empty_dirs_are_pruned_up_to_the_root_and_no_further(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "x" / "y").mkdir(parents=True)
    (root / "x" / "keep.md").write_text("k")
    (root / "z" / "w").mkdir(parents=True)
    journal.prune_empty_dirs(root / "x" / "y", root)
    journal.prune_empty_dirs(root / "z" / "w", root)
    journal.prune_empty_dirs(root, root)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "x", "x/keep.md"]


def test_switch_never_links_over_a_note_written_just_before_it_lands(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _written_meanwhile(root, monkeypatch)
    with pytest.raises(KeyConflict, match="was written while omh renamed a note onto it"):
        journal.switch(root, [FileChange("c.md", None, _note("c")),
                              FileChange("a.md", _note("a"), None)])
    assert (root / "c.md").read_bytes() == _note("c", "theirs")
    assert (root / "a.md").read_bytes() == _note("a")
    assert not list((root / journal.JOURNAL_DIR).iterdir())


# --- the wait itself, on a clock the test moves (no real sleep) ------------------------


class _Clock:
    """`journal.time` with a monotonic clock that only `sleep` moves; the rest real."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds > 0, "a pause of nothing: the wait would spin"
        self.sleeps.append(seconds)
        self.now += seconds

    def __getattr__(self, name: str) -> object:
        import time

        return getattr(time, name)


@pytest.mark.parametrize("errno_held", [None, errno.EAGAIN, errno.EACCES])
def test_a_lock_freed_within_the_wait_is_taken_soon_after(
        root: Path, monkeypatch: pytest.MonkeyPatch, errno_held: int | None) -> None:
    """Held for 1.2 s of a 1.5 s wait: taken, at most 0.1 s after it was freed (the
    pauses between tries grow from 5 ms to at most 0.1 s). EAGAIN and EACCES are how
    some systems say "held", as BlockingIOError is."""
    clock = _Clock()
    monkeypatch.setattr(journal, "time", clock)
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "1.5")
    calls: list[int] = []
    free_at = clock.now + 1.2

    def flock(fd: int, operation: int) -> None:
        calls.append(operation)
        if clock.now >= free_at:
            return
        if errno_held is None:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        raise OSError(errno_held, "held")

    monkeypatch.setattr(fcntl, "flock", flock)
    with journal.exclusive(root):
        pass
    assert free_at <= clock.now <= free_at + 0.1
    assert clock.sleeps[:3] == [0.005, 0.01, 0.02] and max(clock.sleeps) == 0.1
    assert calls[0] == fcntl.LOCK_EX | fcntl.LOCK_NB


def test_a_wait_that_runs_out_ends_at_its_timeout_exactly(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never freed: StoreBusy once the whole wait has passed, not a pause later (the
    last pause is cut to what is left of the wait)."""
    clock = _Clock()
    start = clock.now
    monkeypatch.setattr(journal, "time", clock)
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0.33")

    def flock(fd: int, operation: int) -> None:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(fcntl, "flock", flock)
    with pytest.raises(StoreBusy, match=r"stayed locked for 0\.33s"), journal.reading(root):
        pass
    assert clock.now - start == pytest.approx(0.33)


def test_a_lock_that_fails_otherwise_is_refused_at_once(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flock that fails for another reason (no locks on this file system) is said,
    not waited out as if the lock were held."""
    clock = _Clock()
    monkeypatch.setattr(journal, "time", clock)

    def flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", flock)
    with pytest.raises(StoreError) as caught, journal.exclusive(root):
        pass
    assert not isinstance(caught.value, StoreBusy)
    assert str(caught.value) == (f"cannot lock the local store at {root / journal.LOCK_NAME}: "
                                 "No locks available")
    assert clock.sleeps == []


# --- who holds the lock: named from /proc, also when a forked child inherited it ------

_HOLD = r"""
import os, sys
from pathlib import Path
from omh_git_memory.stores import journal
with journal.exclusive(Path(sys.argv[1])):
    if sys.argv[2] == "fork" and os.fork() == 0:
        lock = os.path.realpath(Path(sys.argv[1]) / journal.LOCK_NAME)
        for fd in os.listdir("/proc/self/fd"):  # a second descriptor of the lock: one holder
            if os.path.realpath(f"/proc/self/fd/{fd}") == lock:
                os.dup(int(fd))
                break
        os.write(1, f"child {os.getpid()}\n".encode())  # one write: never interleaved
        sys.stdin.read()
        os._exit(0)
    os.write(1, f"holder {os.getpid()}\n".encode())
    if sys.argv[2] == "fork":
        os._exit(0)  # its child holds the lock through the descriptor it inherited
    sys.stdin.read()
"""


@pytest.fixture
def holder(root: Path, request: pytest.FixtureRequest) -> Iterator[dict[str, int]]:
    """A process that took the store's lock with `journal.exclusive` (so it recorded
    itself in the lock file) and holds it; with "fork", it forked a child and exited,
    leaving the lock to the child. The pids, by role."""
    from tests.helpers import ROOT

    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(root), request.param],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdin is not None and proc.stdout is not None
    pids: dict[str, int] = {}
    try:
        while len(pids) < (2 if request.param == "fork" else 1):
            role, pid = proc.stdout.readline().split()
            pids[role] = int(pid)
        if request.param == "fork":
            proc.wait(timeout=30)  # gone, not a zombie: /proc no longer has it
        yield pids
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        if "child" in pids:  # not ours to wait for: reparented when its parent exited
            with contextlib.suppress(ProcessLookupError):
                os.kill(pids["child"], signal.SIGTERM)


@pytest.mark.parametrize("holder", ["hold"], indirect=True)
def test_a_busy_lock_names_its_exclusive_holder_since_it_took_it(
        root: Path, holder: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    with pytest.raises(StoreBusy) as caught, journal.reading(root):
        pass
    said = str(caught.value)
    pid = holder["holder"]
    assert f"held by pid {pid} (exclusively, {sys.executable} -c " in said
    assert re.search(rf"held by pid {pid} \(exclusively, .*, since \d{{4}}-\d\d-\d\d ", said,
                     re.S)  # (the command shown is the -c script, line feeds and all)
    assert "perhaps" not in said and "which is stopped" not in said


@pytest.mark.parametrize("holder", ["hold"], indirect=True)
def test_a_busy_lock_held_by_a_stopped_process_says_how_to_resume_it(
        root: Path, holder: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    pid = holder["holder"]
    os.kill(pid, signal.SIGSTOP)
    try:
        for _ in range(1000):  # the stop is delivered asynchronously
            if journal._stopped(pid):
                break
        monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
        with pytest.raises(StoreBusy) as caught, journal.exclusive(root):
            pass
    finally:
        os.kill(pid, signal.SIGCONT)
    assert (f"which is stopped (Ctrl-Z or a debugger): `kill -CONT {pid}` resumes it"
            in str(caught.value))


@pytest.mark.parametrize("holder", ["fork"], indirect=True)
def test_a_busy_lock_a_child_inherited_names_the_child_and_its_exited_parent(
        root: Path, holder: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/locks names the process that took the lock; once it has exited, the
    message names the child that holds it now, found through /proc/PID/fdinfo (once,
    though it has two descriptors of the lock). A process with a POSIX lock on the
    same file (not the lock omh takes, nor one that blocks it) is no holder."""
    posix = _waiting("-c", "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); "
                           "fcntl.lockf(fd, fcntl.LOCK_EX); print('ok', flush=True); "
                           "sys.stdin.read()", str(root / journal.LOCK_NAME))
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    try:
        with pytest.raises(StoreBusy) as caught, journal.reading(root):
            pass
    finally:
        _done(posix)
    said = str(caught.value)
    assert f"pid {posix.pid}" not in said
    child, parent = holder["child"], holder["holder"]
    assert re.search(rf"held by pid {child} \(exclusively, {re.escape(sys.executable)} -c "
                     rf"[^;]*\), which inherited it from pid {parent}, since \d{{4}}-\d\d-\d\d "
                     r"[^;]* \(that process has exited\);", said, re.S), said
    assert said.count("held by") == 1 and said.count(f"pid {child}") == 1
    assert "cannot see which" not in said


@pytest.mark.parametrize("holder", ["fork"], indirect=True)
def test_a_busy_lock_whose_heir_omh_cannot_see_says_so(
        root: Path, holder: dict[str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """The child holding the lock is out of sight (another account's process, whose
    /proc/PID/fd omh may not read): the exited parent is named, and that much said."""
    monkeypatch.setattr(journal, "_holding_processes", lambda st: [])
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    with pytest.raises(StoreBusy) as caught, journal.reading(root):
        pass
    assert re.search(rf"held by a process that inherited it from pid {holder['holder']}, "
                     r"since [^;]* \(that process has exited; omh cannot see which holds it "
                     r"now\);", str(caught.value))


def test_the_holders_are_read_from_proc_locks_and_another_namespaces_is_left_out(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/locks shows pid 0 for a holder in another pid namespace, which omh cannot
    look into; pid 1 is a real holder (omh as a container's first process)."""
    with journal.exclusive(root):
        pass
    fd = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    st = os.fstat(fd)
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    table = (f"1: FLOCK  ADVISORY  WRITE 0 {inode} 0 EOF\n"
             f"2: FLOCK  ADVISORY  READ  1 {inode} 0 EOF\n"
             f"3: POSIX  ADVISORY  WRITE 1 {inode} 0 EOF\n")
    real_open = open
    monkeypatch.setattr(journal, "open", raising=False, value=lambda path, *a, **k: (
        io.StringIO(table) if path == "/proc/locks" else real_open(path, *a, **k)))
    monkeypatch.setattr(journal, "_holding_processes", lambda st: [])
    try:
        said = journal._holders(fd)
    finally:
        os.close(fd)
    assert [line.split(" (")[0] for line in said] == ["by pid 1"]
    assert said[0].startswith("by pid 1 (shared")

def _waiting(*argv: str, name: str | None = None) -> subprocess.Popen[str]:
    """A process of ours running `argv` after python, ready (it said so), waiting on
    its stdin. `name`: its argv[0] (what /proc shows first), by default python's
    path."""
    proc = subprocess.Popen([name or sys.executable, *argv], executable=sys.executable,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ok\n"
    return proc


def _done(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()


@pytest.mark.parametrize("length", [80, 81])
def test_a_holder_s_command_is_shown_whole_up_to_80_characters(length: int) -> None:
    script = "import sys; print('ok', flush=True); sys.stdin.read()"
    command = f"python -c {script} "  # a short argv[0]: a venv's path may be long
    command += "x" * (length - len(command))
    proc = _waiting("-c", script, command.rsplit(" ", 1)[1], name="python")
    try:
        shown = journal._command_of(proc.pid)
    finally:
        _done(proc)
    assert shown == (command if length <= 80 else command[:77] + "...")


def test_a_running_process_named_with_parentheses_is_not_taken_for_stopped() -> None:
    """/proc/PID/stat is `pid (name) state …`, and a name may hold parentheses: the
    state follows the last `)`."""
    proc = _waiting("-c", "import sys; open('/proc/self/comm', 'w').write('a) T (b'); "
                          "print('ok', flush=True); sys.stdin.read()")
    try:
        assert not journal._stopped(proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            assert any(journal._stopped(proc.pid) for _ in range(1000))
        finally:
            os.kill(proc.pid, signal.SIGCONT)
    finally:
        _done(proc)


def test_a_process_gone_has_no_command_and_is_not_stopped() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    assert journal._command_of(proc.pid) == ""
    assert journal._stopped(proc.pid) is False


def test_a_reader_finishes_a_journal_only_with_the_lock_to_itself(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another reader holds the lock shared: finishing the switch would change files
    under it, so the journal waits (this read goes on, unlocked from the change);
    the next reader alone finishes it."""
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"}],
           {"new-0": _note("c")})
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    other = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_SH)
        with journal.reading(root) as locked:
            assert locked and not (root / "c.md").exists()
    finally:
        os.close(other)
    assert (root / journal.JOURNAL_DIR / "planted" / journal.PLAN_NAME).exists()
    with journal.reading(root) as locked:
        assert locked and (root / "c.md").read_bytes() == _note("c")


def test_a_busy_lock_names_every_process_holding_it(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two readers of other processes share the lock (and this one holds it too, by
    another descriptor, which it never names): both are named."""
    hold = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
            "fcntl.flock(fd, fcntl.LOCK_SH); print('ok', flush=True); sys.stdin.read()")
    readers = [_waiting("-c", hold, str(root / journal.LOCK_NAME)) for _ in range(2)]
    mine = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "0")
    try:
        fcntl.flock(mine, fcntl.LOCK_SH)
        with pytest.raises(StoreBusy) as caught, journal.exclusive(root):
            pass
    finally:
        os.close(mine)
        for reader in readers:
            _done(reader)
    said = str(caught.value)
    for reader in readers:
        assert f"by pid {reader.pid} (shared, " in said
    assert f"pid {os.getpid()}" not in said


def test_a_switch_goes_on_beside_what_recovery_left_in_the_journal_folder(
        root: Path, tmp_path: Path) -> None:
    """A stray link in `.omh-journal` (never followed, so never removed) keeps the
    folder; recovery still finishes the journal after it, and a switch still runs."""
    (root / journal.JOURNAL_DIR).mkdir()
    (root / journal.JOURNAL_DIR / "a-stray").symlink_to(tmp_path)
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"}],
           {"new-0": _note("c")}, name="z")
    with journal.exclusive(root):
        assert (root / "c.md").read_bytes() == _note("c")
        journal.switch(root, [FileChange("d.md", None, _note("d"))])
    assert (root / "d.md").read_bytes() == _note("d")
    assert os.listdir(root / journal.JOURNAL_DIR) == ["a-stray"]


def test_the_journal_is_0700_whatever_the_umask(root: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """mkdir's mode is masked by the umask (here one that takes the owner's execute
    bit too); the folders are set to 0700 after."""
    seen: list[int] = []

    def look(name: str) -> None:
        if name == "journal:decided":
            base = root / journal.JOURNAL_DIR
            seen.extend(_mode(p) for p in (base, *base.iterdir()))

    monkeypatch.setattr(faults, "point", look)
    old = os.umask(0o177)
    try:
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    finally:
        os.umask(old)
    assert seen == [0o700, 0o700]
    assert (root / "c.md").read_bytes() == _note("c")


def test_a_journal_that_cannot_be_made_changes_nothing(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its name taken (by a file: as if the folder could not be made) — refused in
    words, nothing changed, and what holds the name left alone."""
    (root / journal.JOURNAL_DIR).mkdir()
    (root / journal.JOURNAL_DIR / "taken").write_text("someone's")
    monkeypatch.setattr(secrets, "token_hex", lambda n: "taken")
    with pytest.raises(StoreError, match=r"cannot write into .*; nothing was changed"):
        journal.switch(root, [FileChange("c.md", None, _note("c"))])
    assert not (root / "c.md").exists()
    assert (root / journal.JOURNAL_DIR / "taken").read_text() == "someone's"


def test_a_plan_that_is_a_symlink_is_never_followed_and_dropped(root: Path,
                                                              tmp_path: Path) -> None:
    elsewhere = tmp_path / "plan.json"
    plan = json.dumps([{"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}])
    elsewhere.write_text(plan)
    folder = root / journal.JOURNAL_DIR / "planted"
    folder.mkdir(parents=True)
    (folder / journal.PLAN_NAME).symlink_to(elsewhere)
    journal.recover(root)
    assert (root / "a.md").read_bytes() == _note("a")
    assert elsewhere.read_text() == plan
    assert not (root / journal.JOURNAL_DIR).exists()


def test_a_switch_whose_first_file_lies_under_a_symlink_is_dropped(
        root: Path, tmp_path: Path) -> None:
    """The renamed note's folder is a link out of the store: nothing is written there,
    nothing else is switched, and the caller is told to run the command again."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(ChangedMeanwhile, match="changed while omh switched its files"):
        journal.switch(root, [FileChange("link/c.md", None, _note("c")),
                              FileChange("a.md", _note("a"), None)])
    assert list(outside.iterdir()) == []
    assert (root / "a.md").read_bytes() == _note("a")


def test_a_switch_whose_first_file_became_a_folder_meanwhile_is_dropped(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def meanwhile(name: str) -> None:
        if name == "journal:decided":
            (root / "c.md").mkdir()

    monkeypatch.setattr(faults, "point", meanwhile)
    with pytest.raises(ChangedMeanwhile, match="changed while omh switched its files"):
        journal.switch(root, [FileChange("c.md", None, _note("c")),
                              FileChange("a.md", _note("a"), None)])
    assert (root / "c.md").is_dir() and (root / "a.md").read_bytes() == _note("a")


def test_a_switch_removes_every_file_it_names(root: Path) -> None:
    journal.switch(root, [FileChange("c.md", None, _note("c")),
                          FileChange("a.md", _note("a"), None),
                          FileChange("sub/b.md", _note("sub/b"), None)])
    assert _files(root) == {"c.md": _note("c")}


def test_recovery_skips_a_step_with_nothing_staged_and_goes_on(root: Path) -> None:
    """A planted step that would change a file but stages nothing: left as it is."""
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": _sha(b"x"),
                   "staged": None},
                  {"path": "sub/b.md", "old": _sha(_note("sub/b")), "new": None,
                   "staged": None}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "c.md": _note("c")}


def test_a_later_file_written_just_before_it_lands_is_kept_and_the_rest_switched(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = journal.make_private_dirs

    def meanwhile(directory: Path, top: Path) -> None:
        real(directory, top)
        if directory == root / "x" and not (root / "x" / "d.md").exists():
            (root / "x" / "d.md").write_bytes(_note("x/d", "theirs"))

    monkeypatch.setattr(journal, "make_private_dirs", meanwhile)
    journal.switch(root, [FileChange("c.md", None, _note("c")),
                          FileChange("x/d.md", None, _note("x/d")),
                          FileChange("y/e.md", None, _note("y/e"))])
    assert (root / "x" / "d.md").read_bytes() == _note("x/d", "theirs")
    assert (root / "c.md").exists() and (root / "y" / "e.md").read_bytes() == _note("y/e")


def test_recovery_that_cannot_place_the_first_file_switches_nothing(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "link", refused)
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"},
                  {"path": "a.md", "old": _sha(_note("a")), "new": None, "staged": None}],
           {"new-0": _note("c")})
    journal.recover(root)
    assert _files(root) == {"a.md": _note("a"), "sub/b.md": _note("sub/b")}
    assert not (root / journal.JOURNAL_DIR).exists()


def test_empty_dirs_outside_the_root_are_never_pruned(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (tmp_path / "beside" / "deeper").mkdir(parents=True)
    journal.prune_empty_dirs(tmp_path / "beside" / "deeper", root)
    assert (tmp_path / "beside" / "deeper").is_dir()


def _shared_too(root: Path) -> bool:
    """Whether another reader could take the lock shared now, without waiting."""
    fd = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_readers_and_writers_of_single_files_share_the_lock(root: Path) -> None:
    """Only a switch of several files holds the lock alone; a reader that finished a
    journal a dead writer left holds it shared again to read."""
    _plant(root, [{"path": "c.md", "old": None, "new": _sha(_note("c")), "staged": "new-0"}],
           {"new-0": _note("c")})
    with journal.reading(root) as locked:
        assert locked and (root / "c.md").exists()
        assert _shared_too(root)
    with journal.writing(root):
        assert _shared_too(root)
    with journal.exclusive(root):
        assert not _shared_too(root)


def test_a_reader_with_no_journal_left_never_waits_for_the_lock_to_itself(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another reader holds the lock: with nothing to finish (no journal folder, or an
    empty one), this reader reads beside it at once."""
    clock = _Clock()
    monkeypatch.setattr(journal, "time", clock)
    monkeypatch.setenv("OMH_LOCK_TIMEOUT", "5")
    other = os.open(root / journal.LOCK_NAME, os.O_RDONLY)
    try:
        fcntl.flock(other, fcntl.LOCK_SH)
        for make in (False, True):
            if make:
                (root / journal.JOURNAL_DIR).mkdir()
            with journal.reading(root) as locked:
                assert locked
    finally:
        os.close(other)
    assert clock.sleeps == []


def test_a_writer_makes_the_lock_file_private_and_a_reader_leaves_it(root: Path) -> None:
    """The lock file says who holds the store (a pid and a host): 0600 once anyone
    writes, whatever it was; a reader changes nothing in the store."""
    (root / journal.LOCK_NAME).chmod(0o644)
    with journal.reading(root) as locked:
        assert locked
    assert _mode(root / journal.LOCK_NAME) == 0o644
    with journal.writing(root):
        pass
    assert _mode(root / journal.LOCK_NAME) == 0o600
