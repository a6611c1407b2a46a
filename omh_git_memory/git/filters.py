"""git's filters (`.gitattributes`, `core.autocrlf`) between a blob and the
working-tree file: a file as `git add` would store it, a blob as `git checkout`
would write it, and the bytes a working tree may hold for a blob."""

from __future__ import annotations

from pathlib import Path

import pygit2

from omh_git_memory.git.gitfiles import describe, read_nofollow
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import GitFailure


def as_committed(repo: GitRepo, path: str, data: bytes) -> bytes:
    """`data`, the working-tree bytes of `path`, as `git add` would store them: the
    clean filters `.gitattributes` and `core.autocrlf` name for the path applied
    (a `* text eol=crlf` checkout holds CRLF where the blob holds LF)."""
    return _filtered(repo, path, data, pygit2.enums.FilterMode.TO_ODB)


def as_checked_out(repo: GitRepo, path: str, data: bytes) -> bytes:
    """The blob `data` of `path` as `git checkout` would write it to the working
    tree (the smudge direction of the same filters)."""
    return _filtered(repo, path, data, pygit2.enums.FilterMode.TO_WORKTREE)


def _filtered(repo: GitRepo, path: str, data: bytes, mode: pygit2.enums.FilterMode) -> bytes:
    try:
        filters = repo.repo.load_filter_list(path, mode)
        return data if filters is None else bytes(filters.apply_to_buffer(data))
    except pygit2.GitError as err:
        raise GitFailure(f"applying git's filters (.gitattributes) to {path}: "
                         f"{describe(err)}") from None


def disk_form(repo: GitRepo, path: str, blob: bytes | None) -> bytes | None:
    """`blob` as the working tree may hold it: the file's own bytes when git would
    call them that blob (they clean to it), else `blob` as git would check it out.
    What a byte-for-byte look at the working tree must compare with."""
    if blob is None or repo.workdir is None:
        return blob
    disk = read_nofollow(repo.workdir, path)
    if disk is not None and (disk == blob or as_committed(repo, path, disk) == blob):
        return disk
    return as_checked_out(repo, path, blob)


WORKTREE_BLOB_LIMIT = 32 << 20  # bytes of a working file hashed for a citation, at most


def worktree_blob(repo: GitRepo, path: str) -> str | None:
    """The blob id `git add` would give the working tree's regular file `path` (its
    filters applied), or None: no working tree, nothing there, a link on the way or
    at it, anything but a regular file, or a file over WORKTREE_BLOB_LIMIT bytes."""
    if repo.workdir is None:
        return None
    try:
        if (repo.workdir / path).lstat().st_size > WORKTREE_BLOB_LIMIT:
            return None
    except (OSError, ValueError):
        return None
    data = read_nofollow(repo.workdir, path)
    if data is None:
        return None
    try:
        return str(pygit2.hash(as_committed(repo, path, data)))
    except GitFailure:
        return None


def worktree_blob_id(repo: GitRepo, file: Path, as_path: str) -> str:
    """The blob id `git add` would give `file` if it were at `as_path`: the
    repository's filters (line endings) applied, as git applies them."""
    try:
        return str(repo.repo.hashfile(str(file), as_path=as_path))
    except (pygit2.GitError, OSError) as err:
        raise GitFailure(f"hashing {as_path} as git would: {err}") from None
