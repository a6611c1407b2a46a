"""The file operations the stores share: private modes, and removal by compare.

A store is private: folders 0700 and files 0600 whatever the umask, and a store
found wider (made by an older omh) is closed on first open.

Removals that must not lose a concurrent write compare and remove: the file is
renamed aside first (atomic, so no writer can change it in between), its bytes
are compared with what the caller read or committed, and only then is it
unlinked — or put back, never over a file written meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from omh_git_memory.model.errors import StoreError
from omh_git_memory.stores.journal import DIR_MODE, FILE_MODE
from omh_git_memory.stores.reading import read_regular

TMP_PREFIX: Final = ".omh-tmp-"
ASIDE_PREFIX: Final = ".omh-aside-"  # a file being compared before it is removed


def make_private(root: Path) -> None:
    """Close the store `root` to other accounts: the folder 0700 and, when it was
    wider (a store made before stores were private), every folder in it 0700 and
    every file 0600 — never through a symlink. Best effort: a store this account
    does not own (a mount) is left as it is."""
    try:
        mode = stat.S_IMODE(os.lstat(root).st_mode)
    except OSError:
        return
    if mode & 0o077 == 0:
        return
    with contextlib.suppress(OSError):
        os.chmod(root, DIR_MODE)
    # Iterative (a store thousands of folders deep must not exhaust the stack), and
    # each entry opened without following a link before its mode is set.
    pending = [str(root)]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                found = [(e.path, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError:
            continue
        for path, is_dir in found:
            if is_dir:
                pending.append(path)
            _chmod_nofollow(path, DIR_MODE if is_dir else FILE_MODE, is_dir)


def _chmod_nofollow(path: str, mode: int, is_dir: bool) -> None:
    """Set `path`'s mode if it is a regular file (or a directory), never through a
    symlink; anything else is left as it is."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags | (os.O_DIRECTORY if is_dir else 0))
    except OSError:
        return
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind) if is_dir else stat.S_ISREG(kind):
            os.fchmod(fd, mode)
    except OSError:
        pass
    finally:
        os.close(fd)


def set_aside(path: Path, *, with_pid: bool = False) -> Path | None:
    """Rename `path` to a unique hidden name beside it, in one atomic step, so nobody
    can change it while it is compared; None when nothing is there. A process that
    dies before :func:`put_back` or the unlink leaves it as `.omh-aside-<hex>-<name>`
    (`.omh-aside-<pid>-<hex>-<name>` `with_pid`, so a later run can tell whether its
    owner still lives)."""
    owner = f"{os.getpid()}-" if with_pid else ""
    aside = path.with_name(f"{ASIDE_PREFIX}{owner}{secrets.token_hex(8)}-{path.name}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise StoreError(f"cannot move {path} aside to check it: {err.strerror}") from None
    return aside


def put_back(aside: Path, path: Path) -> None:
    """Return a file set aside to `path`, never over a file written there meanwhile
    (a hard link fails when the name exists); if one was, the set-aside file keeps
    its name and :class:`StoreError` says where it is."""
    try:
        if stat.S_ISDIR(os.lstat(aside).st_mode):
            os.rename(aside, path)  # replaces at most an empty directory
            return
        os.link(aside, path, follow_symlinks=False)
    except FileExistsError:
        raise StoreError(
            f"{path} was written again while omh checked it; the text it held before "
            f"is kept at {aside}"
        ) from None
    except OSError as err:
        raise StoreError(
            f"cannot put {path} back ({err.strerror}); it is kept at {aside}"
        ) from None
    unlink_quietly(aside)


def holds(path: Path, expected: bytes) -> bool:
    """Whether `path` is a regular file (not followed if a link) holding `expected`."""
    return read_regular(path, len(expected) + 1) == expected


def unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def sync_dir(directory: Path) -> None:
    # Make the new directory entry itself durable, not only the file's bytes.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
