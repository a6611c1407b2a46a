"""The one way omh writes a file it does not keep in a store: below a trusted
folder (the checkout, the git dir, the hooks folder), never through a symlink.

Every folder on the way is opened relative to the one above it with
`O_NOFOLLOW` (openat-style), so a symlink anywhere between the trusted folder and
the file — committed by a repository or left by a user — is refused, not
followed. The file is written whole or not at all: a temporary file beside it,
synced, then renamed over it (which replaces a name, never what a link points
at), and the folder synced. A file that is replaced keeps its permission bits.
A symlink, directory, FIFO, socket or device at the path is refused in one line,
and is never opened for writing or read from (a FIFO would block).

The trusted folder itself is reached as the user named it (their config, their
checkout); only what lies below it is checked.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from omh_git_memory.model.errors import UnsafePath

TMP_PREFIX = ".omh-tmp-"


def describe(err: BaseException) -> str:
    """`gitfiles.describe` (imported when needed: gitfiles writes through this module)."""
    from omh_git_memory.git.gitfiles import describe as said

    return said(err)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"not a plain relative path: {rel!r}")
    return parts


def _refuse_on_way(shown: Path, mode: int | None) -> UnsafePath:
    what = _kind(mode) if mode is not None else "not a plain directory"
    if mode is not None and stat.S_ISLNK(mode):
        return UnsafePath(f"{shown} is a symlink; omh never writes or reads through a "
                          "symbolic link: "
                          "replace it with a plain directory, or make the change by hand")
    return UnsafePath(f"{shown} is {what}, not a directory, so omh cannot write below it: "
                      "move it away, or make the change by hand")


def open_folder(root: Path, rel: str = "", *, make: bool = False,
                dir_mode: int = 0o777) -> int | None:
    """A descriptor of the folder `rel` below `root` (`root` itself for ""), each
    folder below `root` opened without following a link; missing folders are made
    (`dir_mode` less the umask) when `make`, else None. The caller closes it. A link
    or anything but a folder on the way is refused (:class:`UnsafePath`)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"not a plain relative path: {rel!r}")
    return _open_dirs(root, parts, make, dir_mode)


def _open_parent(root: Path, rel: str, make: bool, dir_mode: int = 0o777) -> int | None:
    """A descriptor of the folder `rel` is in, reached from `root` without following
    a link; missing folders are made (0o777 less the umask) when `make`, else None."""
    return _open_dirs(root, _parts(rel)[:-1], make, dir_mode)


def open_root(root: Path) -> int:
    """A descriptor of the trusted folder `root` itself, reached as named (OSError as
    raised): for a caller that trusts a whole path and checks only the file's name."""
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY)


def _open_dirs(root: Path, parts: list[str], make: bool, dir_mode: int) -> int | None:
    try:
        fd = open_root(root)
    except FileNotFoundError:
        if not make:
            return None
        try:
            root.mkdir(mode=dir_mode, parents=True, exist_ok=True)
            fd = open_root(root)
        except OSError as err:
            raise UnsafePath(f"cannot create {root}: {describe(err)}") from None
    except OSError as err:
        raise UnsafePath(f"cannot open {root}: {describe(err)}") from None
    try:
        for depth, name in enumerate(parts):
            shown = root.joinpath(*parts[: depth + 1])
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    os.close(fd)
                    return None
                try:
                    os.mkdir(name, dir_mode, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened (and checked) below
                except OSError as err:
                    raise UnsafePath(f"cannot create {shown}: {describe(err)}") from None
                inner = _open_dir_at(fd, name, shown)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse_on_way(shown, _lmode(fd, name)) from None
                raise UnsafePath(f"cannot open {shown}: {describe(err)}") from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_dir_at(fd: int, name: str, shown: Path) -> int:
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _refuse_on_way(shown, _lmode(fd, name)) from None
        raise UnsafePath(f"cannot open {shown}: {describe(err)}") from None


def _lmode(fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return None


def _refuse_at(shown: Path, mode: int, doing: str) -> UnsafePath:
    if stat.S_ISLNK(mode):
        return UnsafePath(f"{shown} is a symlink; omh never writes or reads through a "
                          "symbolic link: "
                          "replace it with a plain file, or make the change by hand")
    return UnsafePath(f"{shown} is {_kind(mode)}, not a regular file; omh leaves it alone: "
                      "move it away, or make the change by hand")


def read(root: Path, rel: str, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file `rel` below `root`, None when nothing is there.
    A link on the way or at the path, or anything but a regular file at it, is
    refused; more than `limit` bytes is refused too."""
    shown = root / rel
    fd = _open_parent(root, rel, make=False)
    if fd is None:
        return None
    name = _parts(rel)[-1]
    try:
        try:
            inner = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY,
                            dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as err:
            mode = _lmode(fd, name)
            if mode is not None and not stat.S_ISREG(mode):
                raise _refuse_at(shown, mode, "reads") from None
            raise UnsafePath(f"cannot read {shown}: {describe(err)}") from None
    finally:
        os.close(fd)
    try:
        mode = os.fstat(inner).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse_at(shown, mode, "reads")
        chunks, size = [], 0
        while chunk := os.read(inner, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise UnsafePath(f"{shown} is larger than {limit} bytes; omh does not read "
                                 "it as a configuration file: fix it, then run this again")
        return b"".join(chunks)
    except OSError as err:
        raise UnsafePath(f"cannot read {shown}: {describe(err)}") from None
    finally:
        os.close(inner)


def check_writable(root: Path, rel: str) -> None:
    """Refuse now what :func:`write` would refuse on the way or at the path (without
    making anything), so a change of several files can refuse before the first."""
    fd = _open_parent(root, rel, make=False)
    if fd is None:
        return
    try:
        mode = _lmode(fd, _parts(rel)[-1])
        if mode is not None and not stat.S_ISREG(mode):
            raise _refuse_at(root / rel, mode, "writes")
    finally:
        os.close(fd)


def write(root: Path, rel: str, data: bytes, *, new_mode: int = 0o644,
          executable: bool = False, only_if_absent: bool = False) -> bool:
    """Write `data` as the file `rel` below `root`, whole or not at all, never through
    a link; missing folders are made. A new file gets `new_mode` (less the umask);
    a file replaced keeps its permission bits (with `executable`, plus an execute
    bit wherever it has a read bit). With `only_if_absent`, an existing file is left
    alone and False returned. True when the file was written."""
    shown = root / rel
    name = _parts(rel)[-1]
    fd = _open_parent(root, rel, make=True)
    assert fd is not None
    try:
        mode = _lmode(fd, name)
        if mode is not None and not stat.S_ISREG(mode):
            raise _refuse_at(shown, mode, "writes")
        if mode is not None and only_if_absent:
            return False
        try:
            return put(fd, name, data, new_mode=new_mode, like=mode, executable=executable,
                       create_only=only_if_absent)
        except TempFailed as err:
            raise UnsafePath(f"cannot write into {shown.parent}: {describe(err.cause)}") from None
        except OSError as err:
            now = _lmode(fd, name)
            if now is not None and not stat.S_ISREG(now):
                raise _refuse_at(shown, now, "writes") from None
            raise UnsafePath(f"cannot write {shown}: {describe(err)}") from None
    finally:
        os.close(fd)


class TempFailed(OSError):
    """The temporary file could not be made (`cause` says why)."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror, cause.filename)
        self.cause = cause


class TempWriteFailed(OSError):
    """The temporary file was made but could not be written or synced (`cause`
    says why); it is removed, nothing else changed."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror, cause.filename)
        self.cause = cause


def put(fd: int, name: str, data: bytes | tuple[bytes | bytearray, ...], *,
        new_mode: int = 0o644, exact_mode: int | None = None, like: int | None = None,
        executable: bool = False, create_only: bool = False, tmp: str | None = None,
        sync: bool = True) -> bool:
    """The one temporary-file write, in the folder open as `fd` (from
    :func:`open_folder`): `data` (or its parts, one after the other: a large
    payload is not copied to put a header before it) goes to a new temporary file
    (`tmp`, default
    `.omh-tmp-…-NAME`; never through a link), is synced, then renamed over `name`
    — which replaces a name, never what a link there points at — or, with
    `create_only`, linked to it only if nothing has that name (False then, and
    nothing changed); then the folder is synced. Its mode: `exact_mode` whatever
    the umask; else the bits of `like` (the st_mode of the file it replaces), with
    `executable` an execute bit wherever a read bit; else `new_mode` less the
    umask. What is at `name` is the caller's to check. OSError as raised (the
    temporary file removed); True when the file was written."""
    tmp = tmp or f"{TMP_PREFIX}{secrets.token_hex(8)}-{name}"[:255]
    try:
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                      new_mode if exact_mode is None else exact_mode, dir_fd=fd)
    except OSError as err:
        raise TempFailed(err) from None
    try:
        try:
            if exact_mode is not None:
                os.fchmod(out, exact_mode)
            elif like is not None:
                bits = stat.S_IMODE(like)
                if executable:
                    bits |= (bits & 0o444) >> 2
                os.fchmod(out, bits)
            elif executable:
                bits = stat.S_IMODE(os.fstat(out).st_mode)
                os.fchmod(out, bits | (bits & 0o444) >> 2)
            for part in data if isinstance(data, tuple) else (data,):
                view = memoryview(part)
                while view:
                    view = view[os.write(out, view):]
            if sync:
                os.fsync(out)
        except OSError as err:
            raise TempWriteFailed(err) from None
        finally:
            os.close(out)
        if create_only:  # never over a file made meanwhile
            if not _link_new(fd, tmp, name):
                os.unlink(tmp, dir_fd=fd)
                return False
        else:
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=fd)
        raise
    if sync:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    return True


def _link_new(fd: int, tmp: str, name: str) -> bool:
    """Give the written file `tmp` the name `name` only if nothing has it (a hard link
    fails when the name exists), consuming `tmp`; False when something has it. Where
    the file system has no hard links, a rename after a last look for the name."""
    try:
        os.link(tmp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if _lmode(fd, name) is not None:
            return False
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        return True
    os.unlink(tmp, dir_fd=fd)
    return True


def remove(root: Path, rel: str, *, folder_too: bool = False) -> bool:
    """Remove the regular file `rel` below `root` (never a link's target, never
    through a link on the way); with `folder_too`, its folder as well when that
    leaves it empty. True when the folder went too."""
    shown = root / rel
    name = _parts(rel)[-1]
    fd = _open_parent(root, rel, make=False)
    if fd is None:
        return False
    try:
        mode = _lmode(fd, name)
        if mode is not None and not stat.S_ISREG(mode):
            raise _refuse_at(shown, mode, "removes")
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass  # gone already (removed meanwhile): what was asked
        except OSError as err:
            raise UnsafePath(f"cannot remove {shown}: {describe(err)}") from None
    finally:
        os.close(fd)
    parts = _parts(rel)
    if not folder_too or len(parts) < 2:
        return False
    above = _open_parent(root, "/".join(parts[:-1]), make=False)
    if above is None:
        return False
    try:
        os.rmdir(parts[-2], dir_fd=above)  # only when empty; a link is not a folder
    except OSError:
        return False
    finally:
        os.close(above)
    return True
