"""The local store: one directory of note files per clone, outside the checkout.

Location: `$OMH_LOCAL_STORE` when set, else `$OMH_HOME/memory/<repo-id>`
(`OMH_HOME` defaults to `~/.omh`). `<repo-id>` is the main checkout's name and
a digest of its path, derived from the common git dir, so every worktree of a
clone shares one store and two clones called `api` get two.

Writes are atomic: a note is written to a temporary file in its directory and
then hard-linked into place, which fails if the name exists. No reader sees a
half-written note, and of two writers of one key exactly one wins.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

from omh_git_memory.errors import InvalidKey, KeyConflict, NoteNotFound, StoreError
from omh_git_memory.git import GitRepo
from omh_git_memory.keys import NOTE_SUFFIX, Key, slug
from omh_git_memory.layers import Layer
from omh_git_memory.note import MAX_NOTE_BYTES, Note, NoteParseError, decode, encode, parse

TMP_PREFIX: Final = ".omh-tmp-"


class IfExists(StrEnum):
    """What writing an existing key does. Only `error` is implicit."""

    ERROR = "error"
    SKIP = "skip"
    SUFFIX = "suffix"
    OVERRIDE = "override"


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


def read_note_bytes(
    layer: Layer, relpath: str, location: str, data: bytes
) -> StoredNote:
    """Parse one file's bytes into a :class:`StoredNote`, never raising on content."""
    if len(data) > MAX_NOTE_BYTES:
        return StoredNote(
            layer, relpath, location, None,
            f"is {len(data)} bytes; a note may hold at most {MAX_NOTE_BYTES}",
        )
    try:
        note = parse(decode(data))
    except NoteParseError as err:
        return StoredNote(layer, relpath, location, None, str(err), err.line)
    return StoredNote(layer, relpath, location, note)


def local_store_root(repo: GitRepo, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    override = env.get("OMH_LOCAL_STORE")
    if override:
        return Path(override).expanduser().absolute()
    home = Path(env["OMH_HOME"]).expanduser() if env.get("OMH_HOME") else Path.home() / ".omh"
    return home.absolute() / "memory" / repo_id(repo)


def repo_id(repo: GitRepo) -> str:
    checkout = repo.main_checkout
    name = slug(checkout.name.removesuffix(".git")) or "repo"
    digest = hashlib.sha256(str(checkout).encode("utf-8")).hexdigest()[:12]
    return f"{name}-{digest}"


class LocalStore:
    """A directory of note files — the local layer's, or (read-only, for linting
    before a commit) the checkout's `.omh/notes/`. Every path it touches is
    checked to stay inside."""

    def __init__(self, root: Path, layer: Layer = Layer.LOCAL) -> None:
        self.root = root
        self.layer = layer

    def create_root(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(
                f"cannot create the local store at {self.root}: {err.strerror}"
            ) from None

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

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        """What changes whenever a note is written, replaced or removed: each
        file's path, modification time and size. Cheap: no file is read."""
        if not self.root.is_dir():
            return ()
        found = []
        for relpath in self._walk():
            try:
                st = os.lstat(self.root / relpath)
            except OSError:
                continue
            found.append((relpath, st.st_mtime_ns, st.st_size))
        return tuple(found)

    def scan(self) -> list[StoredNote]:
        """Every note file in the store, read or with the reason it cannot be."""
        if not self.root.is_dir():
            return []
        found = [self._read_file(relpath) for relpath in self._walk()]
        return sorted(found, key=lambda s: s.relpath)

    def _walk(self) -> Iterator[str]:
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            for name in sorted(filenames):
                if name.startswith(".") or not name.endswith(NOTE_SUFFIX):
                    continue
                yield name if rel_dir == "." else f"{rel_dir}/{name}"

    def _read_file(self, relpath: str) -> StoredNote:
        path = self.root / relpath
        location = str(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as err:
            if err.errno == errno.ELOOP:
                reason = "is a symlink; a note must be a regular file inside the store"
            else:
                reason = f"cannot be read: {err.strerror}"
            return StoredNote(self.layer, relpath, location, None, reason)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return StoredNote(self.layer, relpath, location, None, "is not a regular file")
            data = handle.read(MAX_NOTE_BYTES + 1)
        return read_note_bytes(self.layer, relpath, location, data)

    def write(
        self,
        key: Key,
        text_for: Callable[[Key], str],
        if_exists: IfExists = IfExists.ERROR,
    ) -> tuple[Key, bool]:
        """Write the note `key` with the text `text_for(key)` gives. Returns the key
        written (another one under `suffix`) and whether anything was written
        (False only for `skip` on an existing key)."""
        if if_exists is IfExists.OVERRIDE:
            self._replace(key, text_for(key))
            return key, True
        candidates = [key]
        if if_exists is IfExists.SUFFIX:
            candidates += [key.with_suffix_number(n) for n in range(2, 1000)]
        for candidate in candidates:
            if self._link_new(candidate, text_for(candidate)):
                return candidate, True
            if if_exists is IfExists.SKIP:
                return key, False
        if if_exists is IfExists.SUFFIX:
            raise KeyConflict(f"{key} and its suffixes up to -999 all exist; pick another wording")
        raise KeyConflict(
            f"note {key} already exists in the local layer; update it instead "
            f"(`omh memory show {key}`), or choose --if-exists skip|suffix|override"
        )

    def remove(self, key: Key) -> Path:
        path = self.path_for(key)
        try:
            os.unlink(path)
        except FileNotFoundError:
            raise NoteNotFound(f"no local note {key}; `omh memory` lists the notes") from None
        except IsADirectoryError:
            raise StoreError(f"{path} is a directory, not a note; remove it by hand") from None
        except OSError as err:
            raise StoreError(f"cannot remove {path}: {err.strerror}") from None
        self._prune_empty_dirs(path.parent)
        return path

    def _prune_empty_dirs(self, directory: Path) -> None:
        while directory != self.root and self.root in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def _link_new(self, key: Key, text: str) -> bool:
        """Create `key` with `text` if no such file exists; False if one does."""
        path = self.path_for(key)
        with self._temporary(path, text) as tmp:
            try:
                os.link(tmp, path)
            except FileExistsError:
                if path.is_dir() and not path.is_symlink():
                    raise StoreError(f"{path} is a directory where a note should be; "
                                     "move it away") from None
                return False
            except IsADirectoryError:
                raise StoreError(f"{path} is a directory where a note should be") from None
            except OSError as err:
                raise StoreError(f"cannot write {path}: {err.strerror}") from None
        _sync_dir(path.parent)
        return True

    def _replace(self, key: Key, text: str) -> None:
        path = self.path_for(key)
        if path.is_dir() and not path.is_symlink():
            raise StoreError(f"{path} is a directory where a note should be")
        with self._temporary(path, text) as tmp:
            try:
                os.replace(tmp, path)
            except OSError as err:
                raise StoreError(f"cannot write {path}: {err.strerror}") from None
        _sync_dir(path.parent)

    @contextlib.contextmanager
    def _temporary(self, path: Path, text: str) -> Iterator[Path]:
        """A fully written, synced temporary file beside `path`; removed afterwards."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"cannot create {path.parent}: {err.strerror}") from None
        data = encode(text)  # the reader's byte rules, checked before any file exists
        tmp = path.parent / f"{TMP_PREFIX}{secrets.token_hex(8)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise StoreError(f"cannot write into {path.parent}: {err.strerror}") from None
        try:
            yield tmp
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def _sync_dir(directory: Path) -> None:
    # Make the new directory entry itself durable, not only the file's bytes.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
