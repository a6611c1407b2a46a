"""The files the git write path touches itself, without libgit2: git's index lock
(`index.lock`, and the record that lets omh take over a lock it left behind) and
working-tree writes that never follow a symlink and can be undone.

commit.py builds the commit and the index with libgit2 (and recovery.py finishes
one a killed process left); this module is everything around it that is plain
files: no pygit2 here.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import GitFailure

# Less free space than this on the file system of the git dir, and a write that
# failed without saying why is taken to have failed for want of space.
NEARLY_FULL: Final = 1 << 20


def describe(err: BaseException, where: Path | None = None) -> str:
    """What went wrong, in words, never libgit2's '(no error)' or a bare None.

    libgit2 does not always say that a write failed for want of space: some of its
    writes fail with no reason at all, and an object lost on a full disk surfaces
    later as a tree that lacks a path. So with `where` (the git dir written to), a
    failure whose reason does not already say it is checked against the file
    system's free space and inodes, and a full disk is named as its cause."""
    number = err.errno if isinstance(err, OSError) else None
    # libgit2 ends some messages in a colon with nothing after it ("failed to lock
    # file '…' for writing: "): drop the dangling colon
    said = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
    text = ((err.strerror if isinstance(err, OSError) else None)
            or str(said).strip().removesuffix(":").rstrip())
    if number == errno.ENOSPC or "No space left on device" in text:
        return "the disk is full; free some space and run the command again"
    if number == errno.EDQUOT or "quota exceeded" in text.lower():
        return "your disk quota is exceeded; free some space and run the command again"
    if not text or text in ("(no error)", "None"):
        text = f"{type(err).__name__} without a reason from libgit2"
    elif isinstance(err, OSError) and err.filename:
        text = f"{text}: {err.filename}"
    full = disk_full(where) if where is not None else None
    if full is not None:
        return f"{full} ({text}); free some space and run the command again"
    return text


def disk_full(where: Path) -> str | None:
    """'the disk is full' (or out of inodes) when the file system holding `where`
    has (nearly) no room left for an unprivileged write; else None."""
    try:
        info = os.statvfs(where)
    except OSError:
        return None
    if info.f_bavail * info.f_frsize < NEARLY_FULL:
        return "the disk is full"
    if info.f_files and not info.f_favail:
        return "the disk has no free inodes left (it is full)"
    return None


def refusal(here: str, kind: str, where: str, path: str) -> str:
    """Why `path` cannot be written, `here` (itself, or a directory above it) being
    `kind` in `where` (the commit, the index, on disk), and what to do."""
    if kind == "a symlink":
        if here == path:
            return f"{here} is a symlink {where}; omh never writes through a symlink: remove it"
        cure = " (git rm it and commit)" if where == "in HEAD" else ""
        return (f"{here} is a symlink {where}; omh never writes through a symlink: replace it "
                f"with a plain directory{cure}")
    if kind == "a submodule":
        return (f"{here} is a submodule {where}; team notes live in a plain directory: "
                "remove it (git rm) and commit")
    if kind == "another repository":
        return f"{here} is another git repository on disk (it holds .git): move it away"
    if here != path:
        return (f"{here} is {kind} {where}, so nothing can be written below it as {path}: "
                "choose another key, or move it away")
    return f"{path} is {kind} {where}: choose another key, or move it away"


def disk_obstacle(workdir: Path, path: str, data: bytes | None,
                  committed: bytes | None = None) -> str | None:
    """Why `path` cannot be written as a regular file below `workdir`: something
    other than a plain directory on the way (a symlink, a file, another repository),
    or other than a regular file at the path — all seen without following a
    symlink. A regular file at the path is in the way only when `data` is given
    and the file holds other bytes than `data` or `committed` (what HEAD has
    there: a clean copy of a file the commit changes)."""
    current = workdir
    parts = path.split("/")
    for depth, name in enumerate(parts):
        current = current / name
        here = "/".join(parts[: depth + 1])
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None
        except OSError as err:
            return f"{here} cannot be examined: {describe(err)}"
        if stat.S_ISLNK(info.st_mode):
            return refusal(here, "a symlink", "on disk", path)
        if depth < len(parts) - 1:
            if not stat.S_ISDIR(info.st_mode):
                return refusal(here, "a file", "on disk", path)
            if os.path.lexists(current / ".git"):
                return refusal(here, "another repository", "on disk", path)
        elif not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a special file"
            return refusal(here, kind, "on disk", path)
        elif data is not None and read_nofollow(workdir, path) not in (data, committed):
            return (f"{path} exists on disk with other content, which omh will not "
                    "overwrite: commit it or move it away")
    return None


class IndexLock:
    """git's own lock on the index: `index.lock`, created exclusively. The new index
    is staged beside it and renamed into place before the lock is released.

    A lock left by an omh process that died is taken over — but only when it is
    provably that lock: the record beside it (`omh-index.lock.pid`) names the
    process, its host and pid namespace, the lock file's device, inode, size and
    modification time, and a random nonce that the lock file itself holds. A
    live process's lock, git's own lock, or a lock put back by hand after the
    original was removed never matches, and is refused as git refuses it. omh
    processes serialise taking and releasing the lock with an advisory lock on the
    git dir, so two of them never race over one takeover."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.index = git_dir / "index"
        self.path = git_dir / "index.lock"
        self.owner = git_dir / "omh-index.lock.pid"
        self.staged = git_dir / "omh-index.new"
        self.unfinished = git_dir / "omh-unfinished.json"
        self.record: str | None = None

    def acquire(self) -> None:
        """Take the lock (a dead omh process's is taken over, a commit it landed
        kept in `unfinished` for :func:`omh_git_memory.git.recovery.finish_interrupted`)."""
        with _serialised(self.git_dir):
            self._take_over_stale()
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
            except FileExistsError:
                raise GitFailure(
                    f"{self.path} exists: another git command is running, or one crashed; "
                    "wait for it, or remove the file if no git command is running"
                ) from None
            except OSError as err:
                raise GitFailure(f"cannot lock the index at {self.path}: "
                                 f"{describe(err, self.git_dir)}") from None
            try:
                nonce = secrets.token_hex(16)
                _write_all(fd, f"omh {os.getpid()} {nonce}\n".encode())
                info = os.fstat(fd)
                record = json.dumps({
                    "pid": os.getpid(), "host": socket.gethostname(), "pidns": _pid_namespace(),
                    "dev": info.st_dev, "ino": info.st_ino, "size": info.st_size,
                    "mtime_ns": info.st_mtime_ns, "nonce": nonce,
                })
                _replace_text(self.owner, record)
            except OSError as err:
                os.close(fd)
                with contextlib.suppress(OSError):
                    self.path.unlink()
                raise GitFailure(f"cannot lock the index at {self.path}: "
                                 f"{describe(err, self.git_dir)}") from None
            os.close(fd)
            self.record = record

    def _stale_record(self) -> dict[str, object] | None:
        """The record of `index.lock` if it is provably the one a dead omh process
        left, else None."""
        try:
            with open(self.owner, "rb") as handle:
                record = json.loads(handle.read(4096))
            pid, nonce = int(record["pid"]), str(record["nonce"])
            identity = (record["dev"], record["ino"], record["size"], record["mtime_ns"])
            same_place = (record["host"], record["pidns"]) == (socket.gethostname(),
                                                              _pid_namespace())
        except (OSError, ValueError, KeyError, TypeError):
            return None  # no record, or not one this version wrote: nothing is provable
        if not same_place or (alive(pid) and record.get("abandoned") is not True):
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            content = os.read(fd, 4096)
        finally:
            os.close(fd)
        if (stat.S_ISREG(info.st_mode)
                and (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == identity
                and content == f"omh {pid} {nonce}\n".encode()):
            return dict(record)
        return None

    def left_by_dead_omh(self) -> bool:
        """Whether `index.lock` is one a dead omh process left (cheap when there is
        no record: one failed open)."""
        return self._stale_record() is not None

    def _take_over_stale(self) -> dict[str, object] | None:
        """Remove `index.lock` if it is provably the one a dead omh process left;
        its record, or None. A commit the record says the dead process landed is
        first written to `omh-unfinished.json` (which outlives the lock until the
        job is finished); if that cannot be written, nothing is removed."""
        record = self._stale_record()
        if record is None:
            return None
        if isinstance(record.get("landed"), dict):
            try:
                _replace_text(self.unfinished, json.dumps(record["landed"]))
            except OSError as err:
                raise GitFailure(
                    f"cannot take over {self.path}, which an omh process killed mid-way "
                    f"left: {describe(err, self.git_dir)}"
                ) from None
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.owner.unlink()
        return record

    def read_unfinished(self) -> dict[str, object] | None:
        """The commit a killed omh process landed and nobody has finished yet."""
        try:
            with open(self.unfinished, "rb") as handle:
                found = json.loads(handle.read(4096))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def drop_unfinished(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.unfinished.unlink()

    def drop_own_unfinished(self) -> None:
        """Drop the job :meth:`landed` recorded, once the index is in place (or the
        branch moved back): only this lock's own, never another's left to finish."""
        if self.record is None:
            return
        found = self.read_unfinished()
        if found is not None and found.get("nonce") == json.loads(self.record)["nonce"]:
            with contextlib.suppress(OSError):
                self.unfinished.unlink()

    def unfinished_is_live(self, job: dict[str, object]) -> bool:
        """Whether `job` is a running omh process's own commit: the process that
        recorded it lives here and still holds `index.lock` (which holds its nonce).
        Such a job is its owner's to finish, never another process's."""
        try:
            pid, nonce = int(str(job["pid"])), str(job["nonce"])
            if (job["host"], job["pidns"]) != (socket.gethostname(), _pid_namespace()):
                return False
        except (KeyError, ValueError):
            return False  # recorded when its lock was taken over: its owner is dead
        if not alive(pid):
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return False  # alive, but holding no lock: the pid is another process's now
        try:
            content = os.read(fd, 4096)
        finally:
            os.close(fd)
        if content != f"omh {pid} {nonce}\n".encode():
            return False
        record: object = None
        with contextlib.suppress(OSError, ValueError), open(self.owner, "rb") as handle:
            record = json.loads(handle.read(4096))
        return not (isinstance(record, dict) and record.get("abandoned") is True)

    def landed(self, branch: str, old: str | None, new: str) -> None:
        """Say, before the branch moves, that it moves from `old` to `new`: in the
        lock's record, and in `omh-unfinished.json`, which outlives a lock the user
        removes by hand. A process killed from then on leaves what the next one
        needs to finish the job (stage the commit's paths and write them out); the
        job is dropped once the index is in place (:meth:`drop_own_unfinished`)."""
        assert self.record is not None
        owner = json.loads(self.record)
        move = {"branch": branch, "old": old, "new": new}
        text = json.dumps({**owner, "landed": move})
        # OSError: the caller undoes, nothing moved yet
        _replace_text(self.unfinished, json.dumps({
            **move, **{k: owner[k] for k in ("pid", "host", "pidns", "nonce")}}))
        _replace_text(self.owner, text)
        self.record = text

    def abandon(self) -> None:
        """Leave the lock in place, its record marked as one nobody holds any more
        (even while this process lives), so that the next omh command takes it over
        and finishes the job its record names; git keeps refusing to write the
        index meanwhile, so no `git commit` can drop the change."""
        if self.record is None:
            return
        with contextlib.suppress(OSError, ValueError):
            _replace_text(self.owner, json.dumps({**json.loads(self.record),
                                                  "abandoned": True}))
        self.record = None

    def commit(self, staged: Path) -> None:
        """Put the staged index in place, then drop the job :meth:`landed` recorded
        and release the lock."""
        os.replace(staged, self.index)
        self.finish()

    def finish(self) -> None:
        """Once the staged index is in place: the job's record dropped, the lock
        released (also after an interrupt there: the commit is whole by then)."""
        self.drop_own_unfinished()
        self.release()

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.staged.unlink()

    def release(self) -> None:
        if self.record is None:
            return
        with _serialised(self.git_dir):
            with contextlib.suppress(OSError):
                self.path.unlink()
            with contextlib.suppress(OSError):
                if self.owner.read_text(encoding="utf-8") == self.record:
                    self.owner.unlink()
        self.record = None


@contextlib.contextmanager
def _serialised(git_dir: Path) -> Iterator[None]:
    """An advisory lock on the git dir, among omh processes only (git ignores it),
    released by the kernel if the process dies."""
    fd = os.open(git_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pid_namespace() -> str:
    """Which pid namespace this process lives in ("" where there is no /proc): a pid
    from another namespace (a container sharing the checkout) says nothing here."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Whether process `pid` is running (one of another account's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _replace_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all (`nofollow.put`: a temporary file renamed
    over it, never through a link at its name). OSError when it cannot."""
    fd = nofollow.open_root(path.parent)
    try:
        nofollow.put(fd, path.name, text.encode("utf-8"), new_mode=0o644,
                     tmp=f"{path.name}.{secrets.token_hex(4)}", sync=False)
    finally:
        os.close(fd)


class WorkdirUndo:
    """Working-tree writes that never follow a symlink, remembered so that they
    can be undone: files written are removed, directories made are removed if
    empty, files deleted are written back."""

    def __init__(self, workdir: Path | None) -> None:
        self.workdir = workdir
        self.written: list[tuple[str, int]] = []  # path, inode
        self.made: list[str] = []
        self.deleted: list[tuple[str, bytes]] = []
        # path, the bytes it held before, the bytes written over them
        self.replaced: list[tuple[str, bytes, bytes]] = []

    def write(self, path: str, data: bytes, replaceable: bytes | None = None) -> bool:
        """Write `path` (whole, through a temporary file) unless it already holds
        `data`; False when it was left alone. A file that is there is replaced only
        when it holds `replaceable` (HEAD's bytes: a clean copy), and written back by
        :meth:`run`; anything else at the path — a file written since it was checked,
        a symlink, a directory — is the user's and stays. A new file is linked into
        place, so one that appears meanwhile is never replaced either."""
        if self.workdir is None:
            return False
        before = read_nofollow(self.workdir, path)
        if before == data:
            return False
        if before is not None and before != replaceable:
            return False
        fd = _open_dir(self.workdir, path, self.made)
        assert fd is not None
        try:
            name = path.rsplit("/", 1)[-1]
            # a file there is replaced (renamed over); a new one is linked into place
            if not nofollow.put(fd, name, data, new_mode=0o666, create_only=before is None,
                                tmp=f".omh-tmp-{secrets.token_hex(8)}", sync=False):
                return False  # something was put there meanwhile: not ours
            if before is not None:
                self.replaced.append((path, before, data))
            else:
                self.written.append(
                    (path, os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino))
            return True
        finally:
            os.close(fd)

    def delete(self, path: str, committed: bytes | None) -> None:
        """Remove `path` if it is a regular file holding exactly the bytes that were
        committed; anything else is the user's, and stays (untracked)."""
        if self.workdir is None or committed is None:
            return
        if read_nofollow(self.workdir, path) != committed:
            return
        fd = _open_dir(self.workdir, path, None)
        if fd is None:
            return
        try:
            os.unlink(path.rsplit("/", 1)[-1], dir_fd=fd)
        finally:
            os.close(fd)
        self.deleted.append((path, committed))

    def run(self) -> list[str]:
        """Undo everything; returns the paths that could not be put back."""
        left: list[str] = []
        if self.workdir is None:
            return left
        for path, inode in reversed(self.written):
            try:
                fd = _open_dir(self.workdir, path, None)
                if fd is None:
                    continue
                try:
                    name = path.rsplit("/", 1)[-1]
                    if os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino == inode:
                        os.unlink(name, dir_fd=fd)
                finally:
                    os.close(fd)
            except (OSError, GitFailure):  # GitFailure: a link now where a folder was
                left.append(path)
        for path in reversed(self.made):
            with contextlib.suppress(OSError, GitFailure):
                fd = _open_dir(self.workdir, path, None)
                if fd is not None:
                    try:
                        os.rmdir(path.rsplit("/", 1)[-1], dir_fd=fd)
                    finally:
                        os.close(fd)
        back = [(p, data, None) for p, data in self.deleted] + self.replaced
        for path, data, ours in back:
            try:
                if not self.write(path, data, ours) and read_nofollow(self.workdir,
                                                                      path) != data:
                    left.append(path)
            except (OSError, GitFailure):
                left.append(path)
        self.written, self.made, self.deleted, self.replaced = [], [], [], []
        return left


def _open_dir(workdir: Path, path: str, made: list[str] | None) -> int | None:
    """A descriptor of the directory `path` is in, reached from `workdir` without
    following a symlink. Missing directories are made (and listed in `made`) when
    `made` is given; otherwise a missing one gives None."""
    fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
    parts = path.split("/")[:-1]
    try:
        for depth, name in enumerate(parts):
            try:
                try:
                    inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                    dir_fd=fd)
                except FileNotFoundError:
                    if made is None:
                        os.close(fd)
                        return None
                    os.mkdir(name, 0o777, dir_fd=fd)
                    made.append("/".join(parts[: depth + 1]))
                    # opened with the same guards and refusal: it may be swapped already
                    inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                                    dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    here = "/".join(parts[: depth + 1])
                    raise GitFailure(
                        f"{here} is not a plain directory on disk (a symlink?); omh never "
                        "writes through a symlink"
                    ) from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_nofollow(workdir: Path, path: str) -> bytes | None:
    """The bytes of the regular file `path`, or None (missing, or not a regular file
    reached through plain directories)."""
    try:
        fd = _open_dir(workdir, path, None)
    except (OSError, GitFailure):
        return None
    if fd is None:
        return None
    try:
        inner = os.open(path.rsplit("/", 1)[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                        dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(inner).st_mode):
            return None
        chunks = []
        while chunk := os.read(inner, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(inner)
