"""The team layer: notes committed under `.omh/notes/`, read from a commit's tree.

Read through libgit2 from HEAD (or any revision), never from the working
directory, so what omh sees is exactly what a teammate's clone sees at that
commit.
"""

from __future__ import annotations

from omh_git_memory.git import GitRepo, files_under, resolve_commit
from omh_git_memory.keys import Key
from omh_git_memory.layers import Layer
from omh_git_memory.store import StoredNote, read_note_bytes

NOTES_DIR = ".omh/notes"


def team_path(key: Key) -> str:
    """The repository path of the team note `key`."""
    return f"{NOTES_DIR}/{key.relpath().as_posix()}"


def scan_team(repo: GitRepo, rev: str = "HEAD") -> list[StoredNote]:
    """Every file under `.omh/notes/` at `rev`, read or with the reason it cannot be."""
    commit = resolve_commit(repo, rev)
    found: list[StoredNote] = []
    for item in files_under(repo, commit, NOTES_DIR):
        relpath = item.path[len(NOTES_DIR) + 1 :]
        if not relpath.endswith(".md") or any(p.startswith(".") for p in relpath.split("/")):
            continue
        location = f"{rev}:{item.path}"
        if item.data is None:
            reason = f"is a {item.kind} in the tree; a note must be a regular file"
            found.append(StoredNote(Layer.TEAM, relpath, location, None, reason))
        else:
            found.append(read_note_bytes(Layer.TEAM, relpath, location, item.data))
    return sorted(found, key=lambda s: s.relpath)
