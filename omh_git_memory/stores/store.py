"""The local store: one directory of note files per clone, outside the checkout
(where it lives: location.py; how its files read: reading.py).

Writes are atomic: a note is written to a temporary file in its directory and
then hard-linked into place, which fails if the name exists. No reader sees a
half-written note, and of two writers of one key exactly one wins. Removals
compare before they remove (fileops.py), and a change of several files goes
through the store's journal (journal.py).
"""

from __future__ import annotations

import errno
import operator
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from omh_git_memory.git import nofollow
from omh_git_memory.model.errors import ChangedMeanwhile, KeyConflict, NoteNotFound, StoreError
from omh_git_memory.model.keys import NOTE_SUFFIX, Key, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES, encode
from omh_git_memory.stores import journal
from omh_git_memory.stores.fileops import (
    TMP_PREFIX,
    holds,
    make_private,
    put_back,
    set_aside,
    sync_dir,
    unlink_quietly,
)
from omh_git_memory.stores.journal import FILE_MODE, make_private_dirs, prune_empty_dirs
from omh_git_memory.stores.reading import (
    Identity,
    StoredNote,
    file_kind,
    identity,
    read_note_bytes,
    too_large,
)

_T = TypeVar("_T")
# The caches of the store's notes, at its root (dot names: never read as notes), so
# that nothing of a local note is written outside its store: recall's index
# (recall/local_index.py) and the notes as parsed (recall/local_notes.py's NoteCache).
# Adopt drops them with an old store.
INDEX_FILE = ".omh-index"
PARSED_FILE = ".omh-parsed"
CACHE_FILES = (INDEX_FILE, PARSED_FILE)
# Each note file's path and identity (`LocalStore.signature`).
Signature = tuple[tuple[str, Identity], ...]


_name = operator.attrgetter("name")


class IfExists(StrEnum):
    """What writing an existing key does. Only `error` is implicit."""

    ERROR = "error"
    SKIP = "skip"
    SUFFIX = "suffix"
    OVERRIDE = "override"


class LocalStore:
    """A directory of note files — the local layer's, or (read-only, for linting
    before a commit) the checkout's `.omh/notes/`. Every path it touches is
    checked to stay inside.

    `before_create` may refuse to create the root (a moved clone's store was left
    behind: a second one would split its notes); `after_create` records whose
    store it is. `owner` refuses to open an existing store that is not this
    repository's (adopt.check_owner): it runs before anything in the store is read
    or written.

    The store is private: folders 0700 and files 0600 whatever the umask, and a
    store found wider (made by an older omh) is closed on first open."""

    def __init__(
        self,
        root: Path,
        layer: Layer = Layer.LOCAL,
        before_create: Callable[[], None] | None = None,
        after_create: Callable[[], None] | None = None,
        convert: Callable[[str, bytes], bytes] | None = None,
        owner: Callable[[], None] | None = None,
    ) -> None:
        self.root = root
        self.layer = layer
        self._before_create = before_create
        self._after_create = after_create
        # what a file's bytes become before they are read as a note (relpath, bytes):
        # git's clean filters, for the checkout's `.omh/notes/` (lint --worktree)
        self._convert = convert
        self._owner = owner
        self._opened = False

    def open(self) -> bool:
        """Check, once per instance, that the store may be used here, and close it
        to other accounts; False when there is no store yet."""
        if not self.root.is_dir():
            return False
        if not self._opened:
            if self._owner is not None:
                self._owner()
            if self.layer is Layer.LOCAL:
                make_private(self.root)
            self._opened = True
        return True

    # How a file's bytes become a note: parsed afresh, unless a cache of parsed notes
    # (recall/local_notes.py's NoteCache) is put in its place.
    read_bytes: Callable[[Layer, str, str, bytes], StoredNote] = staticmethod(read_note_bytes)

    def create_root(self) -> bool:
        """Make the store's directory if it is missing; True when this call made it."""
        if self.open():
            return False
        if self._before_create is not None:
            self._before_create()
        try:
            # Each folder made 0700, up from the deepest one that exists.
            make_private_dirs(self.root, next(p for p in self.root.parents if p.is_dir()))
        except OSError as err:
            raise StoreError(
                f"cannot create the local store at {self.root}: {err.strerror}"
            ) from None
        if self._after_create is not None:
            self._after_create()
        self.open()
        return True

    def path_for(self, key: Key) -> Path:
        """The file for `key`, refusing a route through a symlink or a non-directory."""
        path = self.root / key.relpath()
        current = self.root
        for part in key.segments[:-1]:
            current = current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                break
            if stat.S_ISLNK(mode):
                raise StoreError(
                    f"refusing to follow {current}: it is a symlink, which could lead "
                    "outside the store; replace it with a directory"
                )
            if not stat.S_ISDIR(mode):
                raise StoreError(f"{current} is a file where key {key} needs a directory")
        return path

    def signature(self) -> Signature:
        """What changes whenever a note is written, replaced or removed: each
        file's path, device, inode, size, modification and change times
        (`identity`). Cheap: no file is read. (A file changed again within its
        timestamp's tick, in place and to the same size, looks the same: see
        recall/local_index.py for what a reader does about that.)"""
        if not self.open():
            return ()
        return tuple((relpath, identity(info)) for relpath, info in self.files())

    def scan(self, locked: bool = False) -> list[StoredNote]:
        """Every note file in the store, read or with the reason it cannot be.
        `locked`: the caller holds the store's lock exclusively already."""
        if not self.open():
            return []
        if locked:
            found = [self._read_file(relpath) for relpath in self._walk()]
        else:
            found = self.consistently(
                lambda: [self._read_file(relpath) for relpath in self._walk()])
        return sorted(found, key=lambda s: s.relpath)

    def consistently(self, read: Callable[[], _T]) -> _T:
        """What `read` reads of the store, under the store's lock, so that a change of
        several files (journal.py) is seen whole or not at all; read again if the
        first such change began meanwhile. The caller opened the store."""
        with journal.reading(self.root) as locked:
            found = read()
        if not locked and journal.lock_exists(self.root):
            with journal.reading(self.root):
                found = read()
        return found

    def files(self) -> list[tuple[str, os.stat_result]]:
        """The store's note files as `scan` walks them (in the same order), each with
        what `lstat` says of it; no file is opened. A name gone between the listing
        and the `lstat` is left out. Each folder is listed and its names `lstat`ed
        through a descriptor, so a lookup reads one name, not a whole path (at 5,000
        notes this walk is mostly those system calls)."""
        found: list[tuple[str, os.stat_result]] = []
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            fd = self._open_folder(rel_dir)
            if fd is None:
                continue
            subdirs: list[str] = []
            prefix = f"{rel_dir}/" if rel_dir else ""
            try:
                names = sorted(os.listdir(fd))
                for name in names:
                    if name[0] == ".":
                        continue
                    try:
                        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        subdirs.append(prefix + name)
                    elif name.endswith(NOTE_SUFFIX) or stat.S_ISLNK(info.st_mode):
                        found.append((prefix + name, info))
            except OSError:
                continue
            finally:
                os.close(fd)
            stack.extend(reversed(subdirs))
        return found

    def _open_folder(self, rel_dir: str) -> int | None:
        """A descriptor of the store's folder `rel_dir` (not through a symlink at its
        last step: the walk checked the steps before), or None."""
        try:
            return os.open(self.root / rel_dir if rel_dir else self.root,
                           os.O_RDONLY | os.O_DIRECTORY | (os.O_NOFOLLOW if rel_dir else 0))
        except OSError:
            return None

    def _walk(self) -> Iterator[str]:
        """The relative paths of the note files, sorted, plus every symlink and
        special file among them so that reading reports it. Never follows a
        symlink, and walks iteratively: a tree thousands of folders deep must not
        exhaust the stack."""
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                with os.scandir(self.root / rel_dir if rel_dir else self.root) as it:
                    entries = sorted(it, key=_name)
            except OSError:
                continue
            subdirs: list[str] = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                relpath = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_link = entry.is_symlink()
                except OSError:
                    is_dir = is_link = False
                if is_dir:
                    subdirs.append(relpath)
                elif is_link or entry.name.endswith(NOTE_SUFFIX):
                    yield relpath
            stack.extend(reversed(subdirs))

    def _read_file(self, relpath: str) -> StoredNote:
        """Read one note file through `read_bytes`."""
        read = self.file_bytes(relpath)
        location = str(self.root / relpath)
        if isinstance(read, str):
            return StoredNote(self.layer, relpath, location, None, read)
        return self.read_bytes(self.layer, relpath, location, read[0])

    def file_bytes(self, relpath: str) -> tuple[bytes, os.stat_result] | str:
        """One note file's bytes and what `fstat` said of the file they were read
        from, or why it cannot be read. Only a regular file is opened: a FIFO, socket
        or device could block the reader forever or have effects, and a symlink could
        lead outside the store."""
        path = self.root / relpath
        try:
            before = os.lstat(path)
        except OSError as err:
            return f"cannot be read: {err.strerror}"
        if stat.S_ISLNK(before.st_mode):
            return ("is a symlink; a note must be a regular file inside the store, "
                    "and omh never follows one")
        if not stat.S_ISREG(before.st_mode):
            return f"is a {file_kind(before.st_mode)}; a note must be a regular file"
        if before.st_size > MAX_NOTE_BYTES:
            return too_large(before.st_size)
        try:
            # O_NONBLOCK: should the file be swapped for a FIFO after the lstat, the
            # open returns at once instead of waiting for a writer.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError as err:
            if err.errno == errno.ELOOP:
                return "is a symlink; a note must be a regular file inside the store"
            return f"cannot be read: {err.strerror}"
        with os.fdopen(fd, "rb") as handle:
            now = os.fstat(handle.fileno())
            if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (
                before.st_dev, before.st_ino
            ):
                return "changed while it was read; run the command again"
            try:
                data = handle.read(MAX_NOTE_BYTES + 1)
            except OSError as err:
                return f"cannot be read: {err.strerror}"
        if self._convert is not None:
            data = self._convert(relpath, data)
        return data, now

    def write(
        self,
        key: Key,
        text_for: Callable[[Key], str],
        if_exists: IfExists = IfExists.ERROR,
        taken: Callable[[Key], bool] = lambda _key: False,
        check: Callable[[], None] | None = None,
    ) -> tuple[Key, bool]:
        """Write the note `key` with the text `text_for(key)` gives. Returns the key
        written (another one under `suffix`) and whether anything was written
        (False only for `skip` on an existing key). `taken` names keys held
        elsewhere (another layer): `suffix` passes over them; the caller decides
        what the other policies do with such a key before calling. `check` runs
        under the store's lock just before the write, and may refuse it."""
        self.create_root()
        with journal.writing(self.root):
            if check is not None:
                check()
            return self._write(key, text_for, if_exists, taken)

    def _write(self, key: Key, text_for: Callable[[Key], str], if_exists: IfExists,
               taken: Callable[[Key], bool]) -> tuple[Key, bool]:
        if if_exists is IfExists.OVERRIDE:
            self._replace(key, text_for(key))
            return key, True
        candidates = [key]
        if if_exists is IfExists.SUFFIX:
            candidates += [key.with_suffix_number(n) for n in range(2, 1000)]
        for candidate in candidates:
            if if_exists is IfExists.SUFFIX and taken(candidate):
                continue
            if self._link_new(candidate, text_for(candidate)):
                return candidate, True
            if if_exists is IfExists.SKIP:
                return key, False
        if if_exists is IfExists.SUFFIX:
            raise KeyConflict(
                f"{key} and its suffixes up to -999 are all taken; pick another wording"
            )
        raise KeyConflict(
            f"note {key} already exists in the local layer; update it instead "
            f"(`omh memory update {shell_word(key)}`), or choose --if-exists skip|suffix|override"
        )

    def remove(self, key: Key) -> Path:
        path = self.path_for(key)
        if not self.open():
            raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes")
        try:
            with journal.writing(self.root):
                os.unlink(path)
        except FileNotFoundError:
            raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes") from None
        except IsADirectoryError:
            raise StoreError(f"{path} is a directory, not a note; remove it by hand") from None
        except OSError as err:
            raise StoreError(f"cannot remove {path}: {err.strerror}") from None
        self._prune_empty_dirs(path.parent)
        return path

    def remove_if(self, key: Key, expected: bytes) -> Path | None:
        """Remove the note `key` only if its file still holds `expected` (what the
        caller read, or committed). Returns the path removed, or None when the file
        holds something else — a rewrite that raced the caller — and was left as it
        is. :class:`NoteNotFound` when there is no such file."""
        path = self.path_for(key)
        if not self.open():
            raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes")
        with journal.writing(self.root):
            aside = set_aside(path)
            if aside is None:
                raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes")
            if holds(aside, expected):
                unlink_quietly(aside)
                sync_dir(path.parent)
                self._prune_empty_dirs(path.parent)
                return path
            put_back(aside, path)
        return None

    def replace_if(self, key: Key, expected: bytes, text: str) -> Path | None:
        """Replace the note `key` with `text` only if its file still holds `expected`
        (what the caller read). Returns the path written, or None when the file
        holds something else — a rewrite that raced the caller — and was left as it
        is. :class:`NoteNotFound` when there is no such file.

        The replacement is a switch of one file from the store's journal, under its
        lock (journal.py): the new text is written and synced into the journal, the
        change decided, and the file replaced by one rename. A reader sees the old
        bytes or the new; a process killed at any step leaves the note under its
        name, and the next command that reads the store finishes or drops the
        change. (Setting the note aside to compare it would leave, if killed then,
        no note at that name at all.)"""
        path = self.path_for(key)
        data = encode(text)  # the reader's byte rules, checked before any file exists
        if not self.open():
            raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes")
        with journal.exclusive(self.root):
            try:
                journal.switch(self.root, [journal.FileChange(key.relpath().as_posix(),
                                                              expected, data)])
            except ChangedMeanwhile:
                if not os.path.lexists(path):
                    raise NoteNotFound(f"no local note {key}; `omh memory` lists the "
                                       "notes") from None
                return None
        return path

    def _prune_empty_dirs(self, directory: Path) -> None:
        prune_empty_dirs(directory, self.root)

    def _link_new(self, key: Key, text: str) -> bool:
        """Create `key` with `text` if no such file exists; False if one does."""
        path = self.path_for(key)
        try:
            made = self._put(path, text, create_only=True)
        except IsADirectoryError:
            raise StoreError(f"{path} is a directory where a note should be") from None
        except OSError as err:
            raise StoreError(f"cannot write {path}: {err.strerror}") from None
        if not made and path.is_dir() and not path.is_symlink():
            raise StoreError(f"{path} is a directory where a note should be; "
                             "move it away") from None
        return made

    def _replace(self, key: Key, text: str) -> None:
        path = self.path_for(key)
        if path.is_dir() and not path.is_symlink():
            raise StoreError(f"{path} is a directory where a note should be")
        try:
            self._put(path, text, create_only=False)
        except OSError as err:
            raise StoreError(f"cannot write {path}: {err.strerror}") from None

    def _put(self, path: Path, text: str, create_only: bool) -> bool:
        """`text` written whole beside `path` and renamed over it (or, `create_only`,
        linked to it only if nothing has the name), private (0600) whatever the
        umask, through the one write path (`nofollow.put`). OSError from the rename
        or link; StoreError when the folder or the temporary file cannot be made."""
        data = encode(text)  # the reader's byte rules, checked before any file exists
        for attempt in range(3):
            try:
                make_private_dirs(path.parent, self.root)
            except OSError as err:
                raise StoreError(f"cannot create {path.parent}: {err.strerror}") from None
            try:
                fd = nofollow.open_root(path.parent)
            except FileNotFoundError:
                # A removal pruned the directory between mkdir and open: make it again.
                if attempt == 2:
                    raise StoreError(f"cannot write into {path.parent}: it keeps "
                                     "disappearing") from None
                continue
            except OSError as err:
                raise StoreError(f"cannot write into {path.parent}: {err.strerror}") from None
            try:
                return nofollow.put(fd, path.name, data, exact_mode=FILE_MODE,
                                    create_only=create_only,
                                    tmp=f"{TMP_PREFIX}{secrets.token_hex(8)}")
            except (nofollow.TempFailed, nofollow.TempWriteFailed) as err:
                raise StoreError(f"cannot write into {path.parent}: "
                                 f"{err.cause.strerror}") from None
            finally:
                os.close(fd)
        raise AssertionError("unreachable")
