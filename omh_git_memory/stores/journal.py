"""A change of several local-store files that no reader sees half done.

One file is replaced atomically by a rename; several files are not. A change of
several (`omh memory mv`: the renamed note, the notes whose links name it, the
old file removed) is therefore made under the store's lock, `.omh-lock` at the
store's root: readers hold it shared while they scan, a switch holds it
exclusively. Each switch is journalled first: every new file is written and
synced into `.omh-journal/<id>/`, then the plan naming each file's old and new
content is renamed into place. From that moment the change is decided; files
are then switched in order — the new note first, the old one removed last — and
the journal removed.

A writer that dies part way leaves its journal. Whoever takes the lock next (any
reader or writer of the store) finishes the change from it: a file that already
holds its new content is left, one that still holds its old content is switched,
one that holds anything else — someone edited it since — is left as it is, so
nothing is ever lost. A journal without a plan was never decided and is dropped.
The names start with a dot, so a scan of the store never reads them as notes.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import socket
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    BadLockTimeout,
    ChangedMeanwhile,
    InvalidKey,
    KeyConflict,
    StoreBusy,
    StoreError,
)
from omh_git_memory.model.keys import Key

LOCK_NAME: Final = ".omh-lock"
JOURNAL_DIR: Final = ".omh-journal"
PLAN_NAME: Final = "plan.json"
# A store is private to its owner whatever the umask: its notes are not yet
# reviewed nor scanned for secrets (docs/store.md, "Private to you").
DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600
# How long anyone waits for the store's lock, in seconds, unless OMH_LOCK_TIMEOUT
# says otherwise. A switch holds it for milliseconds; a longer wait means the
# holder is stopped or hung, and waiting on would be waiting for ever.
LOCK_TIMEOUT: Final = 10.0


@dataclass(frozen=True)
class FileChange:
    """One file of a switch: `relpath` must hold `old` (None: must not exist) and
    will hold `new` (None: removed)."""

    relpath: str
    old: bytes | None
    new: bytes | None


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _content(path: Path) -> bytes | None:
    """The bytes of the regular file `path`, never through a symlink; None when
    nothing is there. A symlink, directory or special file is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise StoreError(f"{path} is a symlink; omh never follows one") from None
        raise StoreError(f"cannot read {path}: {err.strerror}") from None
    # A directory opens for reading (only reading it fails): told apart before that.
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise StoreError(f"{path} is a directory where a note should be")
        raise StoreError(f"{path} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _sync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_synced(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    os.fchmod(fd, FILE_MODE)  # exactly, whatever the umask: it becomes a note
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _open_lock(root: Path, create: bool) -> int | None:
    """A descriptor of the store's lock file, or None when there is none (and
    `create` is False) or it cannot be opened (a read-only store: nobody can switch
    files in it either). A writer (`create`) opens it for writing, to say in it who
    holds it."""
    path = root / LOCK_NAME
    # Never blocks: a FIFO put at the lock's name would hang every reader on open.
    flags = (os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
             | (os.O_CREAT | os.O_RDWR if create else os.O_RDONLY))
    try:
        fd = os.open(path, flags, FILE_MODE)
    except FileNotFoundError:
        return None
    except OSError as err:
        if create:
            raise StoreError(f"cannot lock the local store at {path}: {err.strerror}") from None
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        if create:
            raise StoreError(f"cannot lock the local store at {path}: it is not a regular "
                             "file; remove it (omh makes it again)")
        return None
    if create:
        with contextlib.suppress(OSError):
            os.fchmod(fd, FILE_MODE)
    return fd


def lock_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds to wait for the store's lock: OMH_LOCK_TIMEOUT, else LOCK_TIMEOUT
    (unset or empty). A value that is not a finite number 0 or more is refused, never
    read as the default: whoever set it meant some other wait."""
    raw = (os.environ if environ is None else environ).get("OMH_LOCK_TIMEOUT", "")
    if not raw.strip():
        return LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise BadLockTimeout(
            f"OMH_LOCK_TIMEOUT={raw!r} is not a number of seconds; set it to 0 or more "
            f"(the default is {LOCK_TIMEOUT:g}) or unset it; nothing was read or changed")
    return value


def _lock(fd: int, root: Path, shared: bool, doing: str) -> None:
    """Take the lock on `fd`, waiting at most :func:`lock_timeout`; else StoreBusy
    naming whoever holds it."""
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    waited = lock_timeout()
    deadline = time.monotonic() + waited
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES):
                raise StoreError(f"cannot lock the local store at {root / LOCK_NAME}: "
                                 f"{err.strerror}") from None
        left = deadline - time.monotonic()
        if left <= 0:
            raise StoreBusy(_busy_message(root, fd, doing, waited))
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.1)


def _mark_holder(fd: int) -> None:
    """Say in the lock file who holds it exclusively, for anyone who waits."""
    with contextlib.suppress(OSError):
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "since": time.time()}).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)


# What a wait that timed out was for, and what it therefore left undone.
_UNDONE: Final = {
    "read it": "nothing was read, and nothing written or changed",
    "write a note": "nothing was written",
    "change it": "nothing was changed or written",
}


def _busy_message(root: Path, fd: int, doing: str, waited: float) -> str:
    who = _holders(fd)
    said = _said_holder(fd)
    if not who and said is not None:
        pid, host, since = said
        who = [f"perhaps by pid {pid} on {host} (the last to change the store, since "
               f"{since})"]
    held = "; ".join(who) if who else "by a process omh cannot see (another host?)"
    return (f"the local store {root} stayed locked for {waited:g}s while omh waited to "
            f"{doing}, held {held}; {_UNDONE.get(doing, 'nothing was changed or written')}: "
            "let that process finish (resume a stopped one, or end it) and run the command "
            "again (OMH_LOCK_TIMEOUT sets the wait)")


def _said_holder(fd: int) -> tuple[int, str, str] | None:
    """What the last exclusive holder wrote into the lock file."""
    try:
        raw = json.loads(os.pread(fd, 4096, 0) or b"null")
        pid, host, since = int(raw["pid"]), str(raw["host"]), float(raw["since"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return pid, host, time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(since))


def _holders(fd: int) -> list[str]:
    """The processes of this machine holding the lock, from /proc/locks (Linux),
    each with what it runs and whether it is stopped."""
    st = os.fstat(fd)
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    said = _said_holder(fd)
    found: list[str] = []
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or "->" in parts or parts[1] != "FLOCK" or parts[5] != inode:
            continue
        try:
            pid = int(parts[4])
        except ValueError:
            continue
        if pid <= 0 or pid == os.getpid():  # 0: a process of another pid namespace
            continue
        what = "exclusively" if parts[3] == "WRITE" else "shared"
        since = f", since {said[2]}" if said is not None and said[0] == pid else ""
        if os.path.exists(f"/proc/{pid}"):
            found.append(f"by {_holder(pid, what, since)}")
            continue
        # /proc/locks names the process that took the lock; once it has exited, a
        # child it forked holds the lock through the descriptor it inherited.
        heirs = [p for p in _holding_processes(st) if p != os.getpid()]
        found.extend(f"by {_holder(heir, what, '')}, which inherited it from pid {pid}"
                     f"{since} (that process has exited)" for heir in heirs)
        if not heirs:
            found.append(f"by a process that inherited it from pid {pid}{since} (that "
                         "process has exited; omh cannot see which holds it now)")
    return found


def _holder(pid: int, what: str, since: str) -> str:
    """`pid N (how, its command, since when)`, and how to resume it when stopped."""
    command = _command_of(pid)
    text = f"pid {pid} ({what}{', ' + command if command else ''}{since})"
    if _stopped(pid):
        text += (f", which is stopped (Ctrl-Z or a debugger): `kill -CONT {pid}` "
                 "resumes it")
    return text


def _holding_processes(st: os.stat_result) -> list[int]:
    """The processes of this machine (those omh may look into) with a descriptor of
    the lock file that holds its flock: /proc/PID/fdinfo lists, for a descriptor,
    the locks of its open file, which a forked child shares."""
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found: list[int] = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return found
    for pid in sorted(pids):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                other = os.stat(f"/proc/{pid}/fd/{fd}")
                if (other.st_dev, other.st_ino) != (st.st_dev, st.st_ino):
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii",
                          errors="replace") as handle:
                    info = handle.read()
            except OSError:
                continue
            if any(line.startswith("lock:") and " FLOCK " in line and inode in line.split()
                   for line in info.splitlines()):
                found.append(pid)
                break
    return found


def _command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
    except OSError:
        return ""
    shown = " ".join(w.decode("utf-8", "replace") for w in words if w)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


@contextlib.contextmanager
def reading(root: Path) -> Iterator[bool]:
    """Hold the store's lock shared while reading it, after finishing any switch a
    writer that died left behind. Yields whether the lock is held: without a lock
    file no switch has ever run, and the caller reads again if one appears."""
    lock_timeout()  # a wait set wrongly is refused whether or not there is a lock
    fd = _open_lock(root, create=False)
    if fd is None:
        yield False
        return
    try:
        _lock(fd, root, shared=True, doing="read it")
        if _pending(root):
            with contextlib.suppress(StoreError, OSError):  # the read goes on regardless
                # Converting the lock may drop it first: taken again below, bounded.
                _lock(fd, root, shared=False, doing="finish a change cut short")
                recover(root)
            _lock(fd, root, shared=True, doing="read it")
        yield True
    finally:
        os.close(fd)


@contextlib.contextmanager
def writing(root: Path) -> Iterator[None]:
    """Hold the store's lock shared while writing one file (a note made, replaced
    or removed, each one atomic step): writers of single files go on side by side
    and with readers, but never while a switch of several files (:func:`exclusive`)
    is planned or made — so `mv` sees every note written before it, or the note
    is written after it."""
    fd = _open_lock(root, create=True)
    assert fd is not None
    try:
        _lock(fd, root, shared=True, doing="write a note")
        yield
    finally:
        os.close(fd)


def lock_exists(root: Path) -> bool:
    return os.path.lexists(root / LOCK_NAME)


def _pending(root: Path) -> bool:
    if not _real_dir(root / JOURNAL_DIR):
        return False
    try:
        with os.scandir(root / JOURNAL_DIR) as entries:  # closed, not left to the collector
            return any(True for _ in entries)
    except OSError:
        return False


def _real_dir(path: Path) -> bool:
    """Whether `path` is a directory itself, not a symlink to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _target(root: Path, relpath: object) -> Path | None:
    """The store file a plan names, or None when the name is no note's path or the
    way to it is not plain directories: a plan is a file in the store, and whoever
    can write one (an agent with the store mounted) must not steer omh outside."""
    if not isinstance(relpath, str):
        return None
    try:
        Key.from_relpath(relpath)
    except InvalidKey:
        return None
    current = root
    for part in relpath.split("/")[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return None
        except FileNotFoundError:
            break
        except OSError:
            return None
    return root / relpath


@contextlib.contextmanager
def exclusive(root: Path) -> Iterator[None]:
    """Hold the store's lock exclusively (no reader reads meanwhile), after finishing
    whatever switch a writer that died left behind."""
    fd = _open_lock(root, create=True)
    assert fd is not None
    try:
        _lock(fd, root, shared=False, doing="change it")
        _mark_holder(fd)
        recover(root)
        yield
    finally:
        os.close(fd)


def switch(root: Path, changes: Sequence[FileChange]) -> None:
    """Make `changes` as one step for every reader of the store. Call it holding
    :func:`exclusive`. The first change is the one the others depend on (the
    renamed note, created): it is made first, and if it cannot be, none is.
    Refused with nothing changed (:class:`ChangedMeanwhile`) when a file no longer
    holds what the caller read, or (:class:`KeyConflict`) when a file to create
    exists by then."""
    for change in changes:
        now = _content(root / change.relpath)
        if now != change.old:
            state = "exists now" if change.old is None else (
                "is gone" if now is None else "changed")
            raise ChangedMeanwhile(f"{root / change.relpath} {state} since omh read the "
                                   "store; nothing was changed, run the command again")
    base = root / JOURNAL_DIR
    if os.path.lexists(base) and not _real_dir(base):
        raise StoreError(f"{base} is not a plain directory (a symlink?); omh never writes "
                         "through one: remove it")
    journal = base / secrets.token_hex(8)
    try:
        base.mkdir(mode=DIR_MODE, exist_ok=True)
        journal.mkdir(mode=DIR_MODE)
        for folder in (base, journal):
            os.chmod(folder, DIR_MODE, follow_symlinks=False)
        plan = []
        for index, change in enumerate(changes):
            staged = None
            if change.new is not None:
                staged = f"new-{index}"
                _write_synced(journal / staged, change.new)
            plan.append({"path": change.relpath, "old": _digest(change.old),
                         "new": _digest(change.new), "staged": staged})
        _write_synced(journal / f".{PLAN_NAME}", json.dumps(plan).encode())
        _sync_dir(journal)
    except OSError as err:
        shutil.rmtree(journal, ignore_errors=True)
        raise StoreError(f"cannot write into {root}: {err.strerror}; nothing was "
                         "changed") from None
    faults.point("journal:prepared")
    os.rename(journal / f".{PLAN_NAME}", journal / PLAN_NAME)  # the change is decided
    _sync_dir(journal)
    faults.point("journal:decided")
    try:
        _apply(root, journal, first_run=True)
    except OSError as err:
        raise StoreError(f"the change of {root} was cut short ({err.strerror}); the next "
                         "omh command that reads the store finishes it") from None


def recover(root: Path) -> None:
    """Finish every decided switch a writer that died left behind; drop the rest."""
    base = root / JOURNAL_DIR
    if not _real_dir(base):
        return  # none, or something omh did not make: never followed
    try:
        journals = sorted(base.iterdir())
    except OSError:
        return
    for journal in journals:
        if not _real_dir(journal):
            continue
        if os.path.lexists(journal / PLAN_NAME):
            _apply(root, journal, first_run=False)
        else:
            shutil.rmtree(journal, ignore_errors=True)
    with contextlib.suppress(OSError):
        base.rmdir()


def _apply(root: Path, journal: Path, first_run: bool) -> None:
    """Switch the files of a decided plan, in order; then remove the journal."""
    try:
        plan = json.loads(_content(journal / PLAN_NAME) or b"")
        if not isinstance(plan, list) or not all(isinstance(step, dict) for step in plan):
            raise ValueError("not a plan")
    except (StoreError, ValueError):
        shutil.rmtree(journal, ignore_errors=True)  # unreadable: nothing can be done with it
        return
    dropped = False  # the first file could not be placed: nothing was switched
    for index, step in enumerate(plan):
        if index == 1:
            faults.point("journal:switching")
        target = _target(root, step.get("path"))
        staged_name = step.get("staged")
        if target is None or not (staged_name is None or (
                isinstance(staged_name, str) and staged_name.startswith("new-")
                and "/" not in staged_name)):
            if index == 0:
                dropped = True
                break
            continue
        try:
            now = _digest(_content(target))
        except StoreError:  # something that is no note file stands there now: left alone
            if index == 0:
                dropped = True
                break
            continue
        if now == step.get("new"):
            continue  # done already
        if now != step.get("old"):
            if index == 0:
                # The first file is the one the rest depend on (the renamed note):
                # if it cannot be placed, nothing was switched; the change is dropped.
                dropped = True
                break
            continue  # edited since: the person's text wins
        if step.get("new") is None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
            prune_empty_dirs(target.parent, root)
            continue
        if not isinstance(staged_name, str):
            continue
        staged = journal / staged_name
        try:
            make_private_dirs(target.parent, root)
            if step.get("old") is None:
                os.link(staged, target)  # never over a file written meanwhile
            else:
                os.replace(staged, target)
        except FileExistsError:
            if index == 0:
                shutil.rmtree(journal, ignore_errors=True)
                raise KeyConflict(f"{target} was written while omh renamed a note onto it; "
                                  "nothing was changed") from None
            continue
        except OSError:
            if first_run:
                raise
            if index == 0:
                dropped = True
                break
            continue  # recovery goes on with what it can do
        _sync_dir(target.parent)
    os.unlink(journal / PLAN_NAME)
    shutil.rmtree(journal, ignore_errors=True)
    with contextlib.suppress(OSError):
        (root / JOURNAL_DIR).rmdir()
    if dropped and first_run:
        raise ChangedMeanwhile(f"{root} changed while omh switched its files; nothing was "
                               "changed, run the command again")


def make_private_dirs(directory: Path, root: Path) -> None:
    """Make `directory` and its missing parents below `root`, each 0700 whatever
    the umask (mkdir's mode is masked; the chmod is not)."""
    missing: list[Path] = []
    current = directory
    while current != root and root in current.parents and not os.path.isdir(current):
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            os.chmod(folder, DIR_MODE, follow_symlinks=False)


def prune_empty_dirs(directory: Path, root: Path) -> None:
    """Remove `directory` and its parents up to (not including) `root` while empty."""
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent
