"""Reading a store's files: the bytes of a note file become a :class:`StoredNote`,
its note when it reads back, else why not. Content never raises here: a file too
large or that does not parse is a problem carried with it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.model.errors import InvalidKey, NoteParseError
from omh_git_memory.model.keys import NOTE_SUFFIX, Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES, Note, decode, parse


@dataclass(frozen=True)
class StoredNote:
    """One file of a layer: its note when it reads back, else why not."""

    layer: Layer
    relpath: str  # POSIX path relative to the layer's root
    location: str  # where a user finds it (an absolute path, or a repo path)
    note: Note | None
    problem: str | None = None
    problem_line: int | None = None

    @property
    def path_key(self) -> Key | None:
        """The key the file's path says it holds, or None if the path is no key."""
        try:
            return Key.from_relpath(self.relpath)
        except InvalidKey:
            return None

    @property
    def key(self) -> str:
        """The note's own key when it reads back, else the path's."""
        if self.note is not None:
            return self.note.key.value
        return self.relpath.removesuffix(NOTE_SUFFIX)


def too_large(size: int) -> str:
    """The problem of a note file of `size` bytes, over the limit."""
    return f"is {size} bytes; a note may hold at most {MAX_NOTE_BYTES}"


Identity = tuple[int, int, int, int, int]  # device, inode, size, mtime_ns, ctime_ns


def identity(info: os.stat_result) -> Identity:
    """What says a file is the one read before: if any of these changed, it may
    have (the change time moves on every change, and no one can set it)."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_kind(mode: int) -> str:
    """What a file of this `st_mode` is, in words."""
    for test, name in ((stat.S_ISREG, "regular file"), (stat.S_ISDIR, "directory"),
                       (stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "FIFO (named pipe)"),
                       (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device")):
        if test(mode):
            return name
    return "special file"


def read_note_bytes(
    layer: Layer, relpath: str, location: str, data: bytes
) -> StoredNote:
    """Parse one file's bytes into a :class:`StoredNote`, never raising on content."""
    if len(data) > MAX_NOTE_BYTES:
        return StoredNote(layer, relpath, location, None, too_large(len(data)))
    try:
        note = parse(decode(data))
    except NoteParseError as err:
        return StoredNote(layer, relpath, location, None, str(err), err.line)
    return StoredNote(layer, relpath, location, note)


def read_regular(path: Path, limit: int = -1) -> bytes | None:
    """The bytes of `path` (at most `limit`) if it is a regular file, else None: a
    symlink is not followed and a FIFO, socket or device is never read from."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        # Checked before wrapping: a directory opens, but fdopen refuses it.
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit)
    finally:
        os.close(fd)
