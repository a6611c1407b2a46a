"""The one no-follow write path (omh_git_memory/git/nofollow.py): folders walked
without following a link, files read and written whole, what each refusal says,
and which permission bits a written file gets.

Real files in temp folders. Found by mutation testing: each case kills a mutant of
nofollow.py that no test caught before.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import UnsafePath


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- paths and folders --------------------------------------------------------------


@pytest.mark.parametrize("rel", ["", ".", "a/../b", "..", "./"])
def test_a_path_that_is_not_plainly_relative_is_refused(tmp_path: Path, rel: str) -> None:
    with pytest.raises(ValueError, match="not a plain relative path"):
        nofollow.read(tmp_path, rel)


def test_open_folder_refuses_a_parent_step(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("not a plain relative path: 'a/../b'")):
        nofollow.open_folder(tmp_path, "a/../b")


def test_open_folder_of_the_root_itself_and_of_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    fd = nofollow.open_folder(tmp_path, "./a/")
    assert fd is not None
    try:
        assert os.fstat(fd).st_ino == os.stat(tmp_path / "a").st_ino
    finally:
        os.close(fd)
    assert nofollow.open_folder(tmp_path, "a/missing") is None
    assert nofollow.open_folder(tmp_path / "missing") is None
    assert not (tmp_path / "missing").exists()


def test_open_folder_makes_missing_folders_with_the_mode_asked(tmp_path: Path,
                                                               umask_022: None) -> None:
    fd = nofollow.open_folder(tmp_path / "root", "a/b", make=True, dir_mode=0o700)
    assert fd is not None
    os.close(fd)
    assert _mode(tmp_path / "root") == 0o700
    assert _mode(tmp_path / "root" / "a") == 0o700
    assert _mode(tmp_path / "root" / "a" / "b") == 0o700


def test_open_folder_says_a_root_it_cannot_make_or_open(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(UnsafePath, match=f"cannot open {tmp_path / 'file' / 'x'}: "):
        nofollow.open_folder(tmp_path / "file" / "x", make=True)
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    with pytest.raises(UnsafePath, match=f"cannot create {tmp_path / 'dangling'}: "):
        nofollow.open_folder(tmp_path / "dangling", make=True)
    assert not (tmp_path / "missing").exists()


def test_open_folder_says_a_folder_it_cannot_make(tmp_path: Path) -> None:
    long = "n" * 300
    with pytest.raises(UnsafePath, match=f"cannot (create|open) {tmp_path / long}: "):
        nofollow.open_folder(tmp_path, long, make=True)


def test_open_folder_refuses_a_link_on_the_way_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "sub").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafePath) as raised:
        nofollow.open_folder(tmp_path, "sub/deeper")
    assert str(raised.value) == (
        f"{tmp_path / 'sub'} is a symlink; omh never writes or reads through a symbolic link: "
        "replace it with a plain directory, or make the change by hand")


@pytest.mark.parametrize(("make", "what"), [
    (lambda p: p.write_bytes(b""), "a file"),
    (os.mkfifo, "a named pipe (FIFO)"),
])
def test_open_folder_refuses_something_else_on_the_way(tmp_path: Path, make: object,
                                                       what: str) -> None:
    make(tmp_path / "sub")  # type: ignore[operator]
    with pytest.raises(UnsafePath) as raised:
        nofollow.open_folder(tmp_path, "sub/deeper", make=True)
    assert str(raised.value) == (
        f"{tmp_path / 'sub'} is {what}, not a directory, so omh cannot write below it: "
        "move it away, or make the change by hand")


def test_open_folder_says_a_long_name_it_cannot_open(tmp_path: Path) -> None:
    long = "n" * 300
    with pytest.raises(UnsafePath, match=f"cannot open {tmp_path / long}: File name too long"):
        nofollow.open_folder(tmp_path, f"{long}/x")


# --- read ---------------------------------------------------------------------------


def test_read_a_file_whole_and_nothing_for_a_missing_one(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"x" * ((1 << 20) + 3))
    assert nofollow.read(tmp_path, "a/f") == b"x" * ((1 << 20) + 3)
    assert nofollow.read(tmp_path, "a/missing") is None
    assert nofollow.read(tmp_path, "missing/f") is None


def test_read_up_to_its_limit_and_refuses_more(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"12345")
    assert nofollow.read(tmp_path, "f", limit=5) == b"12345"
    with pytest.raises(UnsafePath) as raised:
        nofollow.read(tmp_path, "f", limit=4)
    assert str(raised.value) == (f"{tmp_path / 'f'} is larger than 4 bytes; omh does not read "
                                 "it as a configuration file: fix it, then run this again")


def test_read_refuses_a_link_at_the_path(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"x")
    (tmp_path / "f").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafePath) as raised:
        nofollow.read(tmp_path, "f")
    assert str(raised.value) == (
        f"{tmp_path / 'f'} is a symlink; omh never writes or reads through a symbolic link: "
        "replace it with a plain file, or make the change by hand")


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    elif kind == "directory":
        path.mkdir()
    else:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))


KINDS = [("fifo", "a named pipe (FIFO)"), ("socket", "a socket"),
         ("directory", "a directory"), ("device", "a device")]


@pytest.mark.parametrize(("kind", "what"), KINDS)
def test_read_refuses_anything_but_a_regular_file_without_opening_it(
        tmp_path: Path, kind: str, what: str) -> None:
    _special(tmp_path / "f", kind)
    with pytest.raises(UnsafePath) as raised:
        nofollow.read(tmp_path, "f")
    assert str(raised.value) == (f"{tmp_path / 'f'} is {what}, not a regular file; omh leaves "
                                 "it alone: move it away, or make the change by hand")


def test_read_says_a_name_it_cannot_open(tmp_path: Path) -> None:
    long = "n" * 300
    with pytest.raises(UnsafePath, match=f"cannot read {tmp_path / long}: File name too long"):
        nofollow.read(tmp_path, long)


# --- check_writable, write ------------------------------------------------------------


@pytest.mark.parametrize(("kind", "what"), KINDS)
def test_check_writable_refuses_what_write_refuses(tmp_path: Path, kind: str,
                                                   what: str) -> None:
    _special(tmp_path / "f", kind)
    said = f"{tmp_path / 'f'} is {what}, not a regular file; omh leaves it alone"
    with pytest.raises(UnsafePath, match=re.escape(said)):
        nofollow.check_writable(tmp_path, "f")
    with pytest.raises(UnsafePath, match=re.escape(said)):
        nofollow.write(tmp_path, "f", b"data")


def test_check_writable_passes_a_file_a_missing_name_and_a_missing_folder(
        tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    for rel in ("f", "new", "missing/new"):
        nofollow.check_writable(tmp_path, rel)
    assert _names(tmp_path) == ["f"]


def test_write_a_new_file_with_its_mode_less_the_umask(tmp_path: Path,
                                                       umask_022: None) -> None:
    assert nofollow.write(tmp_path, "a/b/f", b"data", new_mode=0o666) is True
    assert (tmp_path / "a/b/f").read_bytes() == b"data"
    assert _mode(tmp_path / "a/b/f") == 0o644
    assert _names(tmp_path / "a/b") == ["f"]  # no temporary file left


def test_write_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"old")
    os.chmod(tmp_path / "f", 0o640)
    assert nofollow.write(tmp_path, "f", b"new") is True
    assert (tmp_path / "f").read_bytes() == b"new" and _mode(tmp_path / "f") == 0o640


def test_write_executable_adds_an_execute_bit_wherever_a_read_bit(tmp_path: Path,
                                                                  umask_022: None) -> None:
    (tmp_path / "hook").write_bytes(b"old")
    os.chmod(tmp_path / "hook", 0o640)
    nofollow.write(tmp_path, "hook", b"#!/bin/sh\n", executable=True)
    assert _mode(tmp_path / "hook") == 0o750
    nofollow.write(tmp_path, "new-hook", b"#!/bin/sh\n", new_mode=0o644, executable=True)
    assert _mode(tmp_path / "new-hook") == 0o755


def test_write_only_if_absent_leaves_a_file_there(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"the user's")
    assert nofollow.write(tmp_path, "f", b"omh's", only_if_absent=True) is False
    assert (tmp_path / "f").read_bytes() == b"the user's"
    assert nofollow.write(tmp_path, "g", b"omh's", only_if_absent=True) is True
    assert (tmp_path / "g").read_bytes() == b"omh's"


def test_write_replaces_a_link_at_its_name_never_its_target(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"kept")
    (tmp_path / "f").symlink_to(tmp_path / "target")
    with pytest.raises(UnsafePath, match="is a symlink"):
        nofollow.write(tmp_path, "f", b"omh's")
    assert (tmp_path / "target").read_bytes() == b"kept"


def test_write_says_a_temporary_file_it_cannot_make(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_args: object, **_kw: object) -> bool:
        raise nofollow.TempFailed(OSError(errno.ENOSPC, "No space left on device"))

    monkeypatch.setattr(nofollow, "put", full)
    with pytest.raises(UnsafePath) as raised:
        nofollow.write(tmp_path, "a/f", b"x")
    assert str(raised.value) == (f"cannot write into {tmp_path / 'a'}: the disk is full; free "
                                 "some space and run the command again")


def test_write_says_a_file_it_cannot_put_in_place(tmp_path: Path) -> None:
    long = "n" * 256
    with pytest.raises(UnsafePath) as raised:
        nofollow.write(tmp_path, long, b"x")
    assert str(raised.value).startswith(f"cannot write {tmp_path / long}: File name too long")
    assert _names(tmp_path) == []


def test_write_refuses_what_was_put_at_its_name_meanwhile(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    real_put = nofollow.put

    def raced(fd: int, name: str, data: bytes, **kw: object) -> bool:
        (tmp_path / name).mkdir()  # a folder appears before the rename
        (tmp_path / name / "inner").write_bytes(b"")
        return real_put(fd, name, data, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(nofollow, "put", raced)
    with pytest.raises(UnsafePath, match="f is a directory, not a regular file"):
        nofollow.write(tmp_path, "f", b"x")
    assert _names(tmp_path) == ["f"] and _names(tmp_path / "f") == ["inner"]


# --- put ------------------------------------------------------------------------------


def _put(folder: Path, name: str, data: bytes, **options: object) -> bool:
    fd = nofollow.open_root(folder)
    try:
        return nofollow.put(fd, name, data, **options)  # type: ignore[arg-type]
    finally:
        os.close(fd)


def test_put_with_an_exact_mode_ignores_the_umask(tmp_path: Path, umask_022: None) -> None:
    assert _put(tmp_path, "f", b"x", exact_mode=0o666) is True
    assert _mode(tmp_path / "f") == 0o666


def test_put_create_only_leaves_a_file_there_and_no_temporary(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"the user's")
    assert _put(tmp_path, "f", b"omh's", create_only=True) is False
    assert (tmp_path / "f").read_bytes() == b"the user's"
    assert _names(tmp_path) == ["f"]
    assert _put(tmp_path, "g", b"omh's", create_only=True, tmp="mine.tmp") is True
    assert (tmp_path / "g").read_bytes() == b"omh's"
    assert _names(tmp_path) == ["f", "g"]


def test_put_names_its_temporary_file_as_asked_and_leaves_none(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: str, **kw: int) -> None:
        seen.append(src)
        real_replace(src, dst, **kw)

    monkeypatch.setattr(nofollow.os, "replace", replace)
    _put(tmp_path, "f", b"x", sync=False)
    _put(tmp_path, "f", b"y", tmp="chosen")
    assert seen[0].startswith(nofollow.TMP_PREFIX) and seen[0].endswith("-f")
    assert seen[1] == "chosen"
    assert _names(tmp_path) == ["f"] and (tmp_path / "f").read_bytes() == b"y"


def test_put_refuses_a_temporary_name_already_taken(tmp_path: Path) -> None:
    (tmp_path / "taken").write_bytes(b"the user's")
    with pytest.raises(nofollow.TempFailed) as raised:
        _put(tmp_path, "f", b"x", tmp="taken")
    assert raised.value.errno == errno.EEXIST and raised.value.cause.errno == errno.EEXIST
    assert (tmp_path / "taken").read_bytes() == b"the user's"
    assert _names(tmp_path) == ["taken"]


def test_put_removes_its_temporary_file_when_the_rename_fails(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "inner").write_bytes(b"")
    with pytest.raises(OSError):
        _put(tmp_path, "d", b"x")
    assert _names(tmp_path) == ["d"]


def test_put_without_hard_links_renames_after_a_last_look(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    def no_links(*_args: object, **_kw: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(nofollow.os, "link", no_links)
    (tmp_path / "f").write_bytes(b"the user's")
    assert _put(tmp_path, "f", b"omh's", create_only=True) is False
    assert _put(tmp_path, "g", b"omh's", create_only=True) is True
    assert (tmp_path / "f").read_bytes() == b"the user's"
    assert (tmp_path / "g").read_bytes() == b"omh's"
    assert _names(tmp_path) == ["f", "g"]


def test_put_create_only_passes_on_another_link_failure(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kw: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(nofollow.os, "link", broken)
    with pytest.raises(OSError, match="Input/output error"):
        _put(tmp_path, "g", b"omh's", create_only=True)
    assert _names(tmp_path) == []


# --- remove ---------------------------------------------------------------------------


def test_remove_a_file_and_its_folder_when_that_leaves_it_empty(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_bytes(b"")
    (tmp_path / "a" / "b" / "g").write_bytes(b"")
    assert nofollow.remove(tmp_path, "a/b/f", folder_too=True) is False
    assert _names(tmp_path / "a" / "b") == ["g"]
    assert nofollow.remove(tmp_path, "a/b/g", folder_too=True) is True
    assert _names(tmp_path / "a") == []


def test_remove_leaves_the_folder_unless_asked(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_bytes(b"")
    assert nofollow.remove(tmp_path, "a/f") is False
    assert _names(tmp_path) == ["a"] and _names(tmp_path / "a") == []


def test_remove_never_the_root_and_nothing_missing(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"")
    assert nofollow.remove(tmp_path, "f", folder_too=True) is False
    assert tmp_path.is_dir() and _names(tmp_path) == []
    assert nofollow.remove(tmp_path, "missing/f", folder_too=True) is False


def test_remove_of_a_file_gone_meanwhile_still_removes_its_empty_folder(
        tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    assert nofollow.remove(tmp_path, ".claude/settings.json", folder_too=True) is True
    assert _names(tmp_path) == []
    assert nofollow.remove(tmp_path, "settings.json") is False


def test_remove_refuses_a_link_at_the_path_and_keeps_its_target(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"kept")
    (tmp_path / "f").symlink_to(tmp_path / "target")
    with pytest.raises(UnsafePath, match="is a symlink"):
        nofollow.remove(tmp_path, "f")
    assert (tmp_path / "f").is_symlink() and (tmp_path / "target").read_bytes() == b"kept"


def test_remove_says_a_file_it_cannot_remove(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f").write_bytes(b"")

    def busy(*_args: object, **_kw: object) -> None:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(nofollow.os, "unlink", busy)
    with pytest.raises(UnsafePath) as raised:
        nofollow.remove(tmp_path, "f")
    assert str(raised.value) == f"cannot remove {tmp_path / 'f'}: Device or resource busy"


def test_folders_made_without_a_mode_asked_are_0777_less_the_umask(
        tmp_path: Path, umask_022: None) -> None:
    """What `mkdir -p` makes: open_folder's default, and the folders `write` makes."""
    fd = nofollow.open_folder(tmp_path, "a/b", make=True)
    assert fd is not None
    os.close(fd)
    assert nofollow.write(tmp_path, "c/d/f", b"data") is True
    for folder in ("a", "a/b", "c", "c/d"):
        assert _mode(tmp_path / folder) == 0o755, folder
    assert _mode(tmp_path / "c/d/f") == 0o644  # write's own default, less the umask


def test_put_by_default_replaces_a_file_with_one_0644_less_the_umask(
        tmp_path: Path, umask_022: None) -> None:
    (tmp_path / "f").write_bytes(b"old")
    os.chmod(tmp_path / "f", 0o600)
    assert _put(tmp_path, "f", b"new") is True
    assert (tmp_path / "f").read_bytes() == b"new"
    assert _mode(tmp_path / "f") == 0o644  # not the old file's mode: no `like` given
    assert _names(tmp_path) == ["f"]


def test_open_folder_makes_a_root_whose_parents_are_missing_too(tmp_path: Path) -> None:
    fd = nofollow.open_folder(tmp_path / "x" / "y", "a", make=True)
    assert fd is not None
    os.close(fd)
    assert (tmp_path / "x" / "y" / "a").is_dir()


def test_read_of_a_file_in_a_missing_folder_makes_no_folder(tmp_path: Path) -> None:
    assert nofollow.read(tmp_path, "missing/deeper/f") is None
    assert _names(tmp_path) == []


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_refusal_on_the_way_leaves_no_descriptor_open(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path)
    before = _open_fds()
    for _ in range(3):
        with pytest.raises(UnsafePath):
            nofollow.open_folder(tmp_path, "a/link/b", make=True)
        with pytest.raises(UnsafePath):
            nofollow.write(tmp_path, "a/link/f", b"x")
    assert _open_fds() == before


def test_a_root_that_is_a_file_is_no_folder_to_open(tmp_path: Path) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(UnsafePath, match=r"^cannot open .*/file: "):
        nofollow.open_folder(tmp_path / "file")
    with pytest.raises(UnsafePath, match=r"^cannot open .*/file: "):
        nofollow.read(tmp_path / "file", "f")


def test_a_folder_that_cannot_be_made_is_said(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "mkdir", full)
    with pytest.raises(UnsafePath, match=r"^cannot create .*/a: the disk is full; free some space"):
        nofollow.open_folder(tmp_path, "a", make=True)


def test_a_new_executable_gets_an_execute_bit_only_where_it_has_a_read_bit(
        tmp_path: Path, umask_022: None) -> None:
    assert nofollow.write(tmp_path, "run", b"#!/bin/sh\n", new_mode=0o600, executable=True)
    assert _mode(tmp_path / "run") == 0o700
