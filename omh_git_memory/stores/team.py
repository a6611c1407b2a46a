"""The team layer: notes committed under `.omh/notes/`, read from a commit's tree.

Read through libgit2 from HEAD (or any revision), never from the working
directory, so what omh sees is exactly what a teammate's clone sees at that
commit. Nothing on the way is followed: a symlink or submodule in the tree, or a
symlink on disk for `lint --worktree`, is reported as a note that cannot be read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from omh_git_memory.git.filters import as_committed
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import blob_size, files_under, read_blob
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import MAX_NOTE_BYTES
from omh_git_memory.stores.reading import StoredNote, file_kind, read_note_bytes, too_large
from omh_git_memory.stores.store import LocalStore

NOTES_DIR = ".omh/notes"

_NOT_FOLLOWED = "omh never follows one; replace it with a regular file or directory"


def team_path(key: Key) -> str:
    """The repository path of the team note `key`."""
    return f"{NOTES_DIR}/{key.relpath().as_posix()}"


def is_team_entry(path: str, kind: str) -> bool:
    """Whether a tree entry is read as a team note: a `.md` file under `.omh/notes/`
    (no hidden part), or any symlink or submodule there or in its place — those are
    reported, never followed."""
    if kind != "file" and (path == NOTES_DIR or NOTES_DIR.startswith(path + "/")):
        return True
    if not path.startswith(NOTES_DIR + "/"):
        return False
    relpath = path[len(NOTES_DIR) + 1 :]
    if any(p.startswith(".") for p in relpath.split("/")):
        return False
    return kind != "file" or relpath.endswith(".md")


def tree_note(repo: GitRepo, path: str, kind: str, blob_id: str, location: str,
              data: bytes | None = None) -> StoredNote:
    """The team note at `path` of a tree, read only if it is a regular file within
    the size limit (its size is taken from the object's header first)."""
    relpath = path[len(NOTES_DIR) + 1 :] if path.startswith(NOTES_DIR + "/") else ""
    if kind != "file":
        where = "in the tree" if relpath else f"in the tree where {NOTES_DIR} should be a folder"
        return StoredNote(Layer.TEAM, relpath, location, None,
                          f"is a {kind} {where}; {_NOT_FOLLOWED}")
    if data is None:
        size = blob_size(repo, blob_id, path)
        if size > MAX_NOTE_BYTES:
            return StoredNote(Layer.TEAM, relpath, location, None, too_large(size))
        data = read_blob(repo, blob_id, path)
    return read_note_bytes(Layer.TEAM, relpath, location, data)


def scan_team(repo: GitRepo, rev: str = "HEAD", shown_as: str | None = None
              ) -> list[StoredNote]:
    """Every file under `.omh/notes/` at `rev`, read or with the reason it cannot be;
    each located as `<shown_as or rev>:<path>`."""
    commit = resolve_commit(repo, rev)
    found: list[StoredNote] = []
    for item in files_under(repo, commit, NOTES_DIR, MAX_NOTE_BYTES):
        if not is_team_entry(item.path, item.kind):
            continue
        location = f"{shown_as or rev}:{item.path}"
        if item.kind == "file" and item.data is None:  # over the limit: never read
            relpath = item.path[len(NOTES_DIR) + 1 :]
            found.append(StoredNote(Layer.TEAM, relpath, location, None, too_large(item.size)))
            continue
        found.append(tree_note(repo, item.path, item.kind, item.blob_id, location, item.data))
    return sorted(found, key=lambda s: s.relpath)


def scan_worktree_team(checkout: Path, repo: GitRepo) -> list[StoredNote]:
    """The team notes as they are on disk in `checkout` (for `lint --worktree`), each
    read as `git add` would store it: through the clean filters of `repo` (line
    endings a `.gitattributes` converts), so lint judges what would be committed.

    `.omh` and `.omh/notes` must be real directories: a symlink there would make
    the lint read (and pass) notes from anywhere, so it is reported instead."""
    route = checkout
    for name in NOTES_DIR.split("/"):
        route = route / name
        try:
            mode = os.lstat(route).st_mode
        except FileNotFoundError:
            return []
        except OSError as err:
            return [StoredNote(Layer.TEAM, "", str(route), None,
                               f"cannot be read: {err.strerror}")]
        if stat.S_ISLNK(mode):
            return [StoredNote(Layer.TEAM, "", str(route), None,
                               f"is a symlink where {NOTES_DIR} should be a folder; "
                               f"{_NOT_FOLLOWED}")]
        if not stat.S_ISDIR(mode):
            return [StoredNote(Layer.TEAM, "", str(route), None,
                               f"is a {file_kind(mode)} where {NOTES_DIR} should be a folder")]
    return LocalStore(route, Layer.TEAM, convert=lambda relpath, data: as_committed(
        repo, f"{NOTES_DIR}/{relpath}", data)).scan()
