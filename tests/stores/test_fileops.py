"""The file operations the stores share (omh_git_memory/stores/fileops.py): closing a
store found wider than private, never through a symlink and never stuck on a FIFO,
and setting a file aside and putting it back.

Found by mutation testing (docs/records/mutation-passes.md): each case kills
mutants of fileops.py that no test caught."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.model.errors import StoreError
from omh_git_memory.stores.fileops import make_private, put_back, set_aside


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _file(path: Path, mode: int = 0o644, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)
    return path


def _wide_store(tmp_path: Path) -> Path:
    """A store as an older omh made it: every folder 0755, every file 0644."""
    root = tmp_path / "store"
    for rel in ("a.md", "team/b.md", "team/deep/c.md"):
        _file(root / rel)
    for folder in (root, root / "team", root / "team/deep"):
        os.chmod(folder, 0o755)
    return root


def test_a_wide_store_is_closed_folder_by_folder_and_file_by_file(tmp_path: Path) -> None:
    root = _wide_store(tmp_path)
    make_private(root)
    assert {p.relative_to(root).as_posix(): _mode(p) for p in [root, *root.rglob("*")]} == {
        ".": 0o700, "a.md": 0o600, "team": 0o700, "team/b.md": 0o600,
        "team/deep": 0o700, "team/deep/c.md": 0o600}


def test_a_private_store_is_not_walked_again(tmp_path: Path) -> None:
    # Only a store found wider is walked: a private one's files are left as they are
    # (here a file someone opened on purpose keeps its mode).
    root = tmp_path / "store"
    root.mkdir(mode=0o700)
    os.chmod(root, 0o700)
    shared = _file(root / "folder/shared.md")
    os.chmod(root / "folder", 0o755)
    make_private(root)
    assert (_mode(root), _mode(root / "folder"), _mode(shared)) == (0o700, 0o755, 0o644)


def test_no_store_there_is_no_error(tmp_path: Path) -> None:
    make_private(tmp_path / "missing")  # nothing to close, nothing raised
    assert not (tmp_path / "missing").exists()


def test_closing_never_goes_through_a_symlink(tmp_path: Path) -> None:
    # A link to a folder or to a file outside the store: what it points at keeps its
    # mode, and the folder's files are not walked.
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(outside, 0o755)
    elsewhere = _file(outside / "elsewhere.md")
    root = _wide_store(tmp_path)
    (root / "to-folder").symlink_to(outside, target_is_directory=True)
    (root / "team/to-file.md").symlink_to(elsewhere)
    make_private(root)
    assert (_mode(outside), _mode(elsewhere)) == (0o755, 0o644)
    assert _mode(root / "team/deep/c.md") == 0o600


def test_a_fifo_in_the_store_is_left_and_never_waited_on(tmp_path: Path) -> None:
    root = _wide_store(tmp_path)
    fifo = root / "team/pipe.md"
    os.mkfifo(fifo)
    os.chmod(fifo, 0o644)
    done = threading.Thread(target=make_private, args=(root,), daemon=True)
    done.start()
    done.join(timeout=2)
    hung = done.is_alive()
    if hung:  # a writer lets the blocked open return, so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        done.join(timeout=2)
    assert not hung, "make_private waited on a FIFO"
    assert (_mode(fifo), _mode(root / "team/deep/c.md")) == (0o644, 0o600)


def test_a_program_running_from_the_store_is_still_closed(tmp_path: Path) -> None:
    # A file is closed through a read-only open: a file open for writing is refused
    # while it runs (ETXTBSY), a read-only open is not.
    sleep = shutil.which("sleep")
    if sleep is None:
        pytest.skip("no sleep program")
    root = _wide_store(tmp_path)
    program = root / "team/run"
    shutil.copy(sleep, program)
    os.chmod(program, 0o755)
    running = subprocess.Popen([program, "5"])
    try:
        make_private(root)
    finally:
        running.kill()
        running.wait()
    assert _mode(program) == 0o600


@pytest.fixture
def one_listing_fails(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The second folder make_private lists cannot be listed (the tests run as root,
    who can list any folder, so the failure is made); the folders it failed for."""
    real = os.scandir
    listed: list[str] = []
    failed: list[str] = []

    def scandir(path: str) -> object:
        listed.append(path)
        if len(listed) == 2:
            failed.append(path)
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    yield failed


def test_a_folder_that_cannot_be_listed_is_skipped_and_the_rest_closed(
        tmp_path: Path, one_listing_fails: list[str]) -> None:
    root = tmp_path / "store"
    for name in ("one", "two", "three"):
        _file(root / name / "note.md")
    os.chmod(root, 0o755)
    make_private(root)
    [skipped] = one_listing_fails
    rest = [p for p in root.glob("*/note.md") if p.parent != Path(skipped)]
    assert len(rest) == 2
    assert [_mode(p) for p in rest] == [0o600, 0o600]
    assert _mode(Path(skipped) / "note.md") == 0o644


def test_a_file_whose_mode_cannot_be_set_is_left_and_the_rest_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (An immutable file, or a mount that refuses chmod: made here by failing the
    # first fchmod of a file.)
    real = os.fchmod
    refused: list[int] = []

    def fchmod(fd: int, mode: int) -> None:
        if not refused and stat.S_ISREG(os.fstat(fd).st_mode):
            refused.append(fd)
            raise PermissionError(1, "Operation not permitted")
        real(fd, mode)

    monkeypatch.setattr(os, "fchmod", fchmod)
    root = _wide_store(tmp_path)
    make_private(root)
    modes = sorted(_mode(p) for p in root.rglob("*.md"))
    assert modes == [0o600, 0o600, 0o644]


def test_a_set_aside_name_is_the_one_the_docstring_gives(tmp_path: Path) -> None:
    # `.omh-aside-<hex>-<name>`, or `.omh-aside-<pid>-<hex>-<name>` with_pid: the
    # next team verb reads the pid and 16 hex digits back from the name to tell a
    # dead process's copy from a live one's (actions/promote.py).
    note = _file(tmp_path / "note.md")
    plain = set_aside(note)
    assert plain is not None
    assert re.fullmatch(r"\.omh-aside-[0-9a-f]{16}-note\.md", plain.name), plain.name
    assert plain.read_text(encoding="utf-8") == "x" and not note.exists()
    put_back(plain, note)
    owned = set_aside(note, with_pid=True)
    assert owned is not None
    assert re.fullmatch(rf"\.omh-aside-{os.getpid()}-[0-9a-f]{{16}}-note\.md", owned.name)


def test_nothing_to_set_aside_is_none(tmp_path: Path) -> None:
    assert set_aside(tmp_path / "gone.md") is None


def test_a_symlink_set_aside_is_put_back_as_the_same_symlink(tmp_path: Path) -> None:
    # Put back as the link itself, never as a second name of what it points at.
    target = _file(tmp_path / "target.md")
    link = tmp_path / "note.md"
    link.symlink_to(target)
    aside = set_aside(link)
    assert aside is not None
    put_back(aside, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert os.lstat(target).st_nlink == 1
    assert not aside.exists() and not aside.is_symlink()


def test_a_file_written_meanwhile_is_never_overwritten_by_put_back(tmp_path: Path) -> None:
    note = _file(tmp_path / "note.md", text="old")
    aside = set_aside(note)
    assert aside is not None
    _file(note, text="new")
    with pytest.raises(StoreError, match="was written again while omh checked it") as err:
        put_back(aside, note)
    assert str(aside) in str(err.value)
    assert note.read_text(encoding="utf-8") == "new"
    assert aside.read_text(encoding="utf-8") == "old"
