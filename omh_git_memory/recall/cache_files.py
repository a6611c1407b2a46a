"""The clone's cache folder and the checked files in it.

The caches live under the common git dir (`<common>/omh/index/`), so every
worktree of a clone shares them and nothing is ever committed.

A cache file is never trusted: each one starts with a magic line and the SHA-256
of what follows, is written to a temporary file, flushed to disk and renamed into
place, and is checked when read. A file that fails the check (truncated, flipped,
empty, or not a regular file) is removed and rebuilt, and never serves as the
base of an incremental build. The folder keeps the snapshots of the
KEEP_SNAPSHOTS most recent commits, and a crashed writer's temporary files are
removed once they are old.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import secrets
import stat
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Final

from omh_git_memory.git import nofollow
from omh_git_memory.git.repository import GitRepo

MAGIC: Final = b"omh-cache 1\n"  # then 32 bytes of SHA-256 over the payload, then the payload
_DIGEST_SIZE: Final = 32
STALE_TEMP: Final = 600  # seconds after which a temporary file is a crashed writer's
KEEP_SNAPSHOTS: Final = 8  # recent commits kept on disk; older ones are rebuilt on demand


LEGACY_NOTES_CACHE: Final = "local-notes.cache"  # before it moved into the local store


def index_dir(repo: GitRepo) -> Path:
    return repo.common_dir / "omh" / "index"


def write_checked(path: Path, payload: bytes | bytearray, mode: int = 0o644) -> None:
    """Write a cache file atomically through the one write path (`nofollow.put`):
    magic, digest and payload to a new temporary file, flushed to disk, then
    renamed over `path` (never through a symlink: the rename replaces the link
    itself). Readers see the old file or the new one. `mode` 0o600 for a file that
    holds what only its owner may read (local notes): that one stays private
    whatever the umask. OSError when it cannot be written."""
    fd = nofollow.open_root(path.parent)
    try:
        nofollow.put(fd, path.name, (MAGIC + hashlib.sha256(payload).digest(), payload),
                     new_mode=mode, exact_mode=mode if mode & 0o077 == 0 else None,
                     tmp=f".tmp-{os.getpid()}-{secrets.token_hex(4)}-{path.name}")
    finally:
        os.close(fd)


def read_checked(path: Path) -> bytes | None:
    """A cache file's payload, or None when it is missing or fails its check; a
    file that fails is discarded so that it is rebuilt. Only a regular file is
    read: a symlink, a directory or a FIFO at the path is not opened."""
    checked = read_checked_digest(path)
    return checked[0] if checked else None


def read_checked_digest(path: Path) -> tuple[bytes, bytes] | None:
    """`read_checked`, with the payload's SHA-256 (checked against it just now), so
    that a partner file naming this digest need not hash the payload again."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:  # a symlink (ELOOP), a directory on some systems, no permission
        discard(path)
        return None
    head = len(MAGIC) + _DIGEST_SIZE
    try:
        with os.fdopen(fd, "rb") as handle:
            regular = stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
            # Header and payload read apart: the payload is never copied again.
            header = handle.read(head) if regular else b""
            payload = handle.read() if regular else b""
    except OSError:
        header = b""
    if (len(header) < head or not header.startswith(MAGIC)
            or hashlib.sha256(payload).digest() != header[len(MAGIC):]):
        discard(path)
        return None
    return payload, header[len(MAGIC):]


def discard(path: Path) -> None:
    """Remove a cache file that failed its check (an empty directory too; anything
    else someone put there is left alone and simply never read)."""
    with contextlib.suppress(OSError):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            path.rmdir()


def cache_files(folder: Path, pattern: str) -> list[Path]:
    """Regular files in `folder` matching `pattern`, newest first (symlinks and
    directories are never candidates)."""
    found: list[tuple[float, Path]] = []
    try:
        for path in folder.glob(pattern):
            with contextlib.suppress(OSError):
                info = path.lstat()
                if stat.S_ISREG(info.st_mode) and not _in_progress(path, pattern):
                    found.append((info.st_mtime, path))
    except OSError:
        return []
    return [path for _, path in sorted(found, key=lambda t: t[0], reverse=True)]


def _in_progress(path: Path, pattern: str) -> bool:
    """A writer's temporary file (`.tmp-…`, see `write_checked`), which a pattern for
    cache files such as `*.idx` matches too: never read, discarded or pruned as a
    cache file while its writer may still rename it into place."""
    return path.name.startswith(".tmp-") and not pattern.startswith(".tmp-")


def prune(folder: Path, keep: Collection[str] = ()) -> None:
    """Keep the snapshots (and the embeddings saved beside them) of the
    KEEP_SNAPSHOTS newest commits and of the commits `keep` names (every worktree's
    HEAD: an index built for a past commit, `--ref`, never evicts one that recall at
    a HEAD reads), and
    remove a crashed writer's old temporary files and the old cache of parsed local
    notes."""
    kept = set(keep)
    for old in [p for p in cache_files(folder, "*.idx") if p.stem not in kept][
            max(0, KEEP_SNAPSHOTS - len(kept)):]:
        for path in (old, old.with_suffix(".post"), old.with_suffix(".vec.npy"),
                     old.with_suffix(".vec.keys")):
            with contextlib.suppress(OSError):
                path.unlink()
    # The cache of parsed local notes an older omh kept here: it lives in the local
    # store now, and nothing of a local note is to stay under the git directory.
    with contextlib.suppress(OSError):
        (folder / LEGACY_NOTES_CACHE).unlink()
    now = time.time()
    for tmp in cache_files(folder, ".tmp-*"):  # left by a writer that crashed
        with contextlib.suppress(OSError):
            if now - tmp.lstat().st_mtime > STALE_TEMP:
                tmp.unlink()


def rank_below(paths: Collection[Path], newer: Path) -> None:
    """Date `paths` (a snapshot's files) just before `newer`, when that exists: the
    newest snapshot is the base the next build patches, and one built for a past
    commit (`--ref`) must not take that place from HEAD's."""
    with contextlib.suppress(OSError):
        info = newer.lstat()
        if not stat.S_ISREG(info.st_mode):
            return
        when = info.st_mtime_ns - 1_000_000  # a millisecond older
        for path in paths:
            os.utime(path, ns=(when, when), follow_symlinks=False)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a block makes many objects that form
    no cycle (the documents of a loaded index, the searcher's tables), as
    Mercurial's `util.nogc` does while it builds large containers: every 700 new
    objects the collector walks the young ones, and now and then every object of
    the process, none of which this block could have made garbage. At 10,000 notes
    that was a fifth of a cold `omh memory recall`. Reference counting frees what
    the block drops as usual; the collector resumes after it (unless it was off
    already)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
