"""What stands in the way of writing a path as a regular file, checked before
anything is written.

Nothing omh writes follows a symlink: a path is written only when every directory
on the way to it is a plain directory in HEAD's tree, in the index and on disk (a
symlink, a submodule or a file in the way is refused before anything is written),
and the working tree is written through directory descriptors opened with
O_NOFOLLOW (gitfiles.py), so a symlink put in place meanwhile is refused, not
followed.
"""

from __future__ import annotations

import pygit2

from omh_git_memory.git.gitfiles import disk_obstacle, refusal
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.staging import read_index
from omh_git_memory.git.trees import REGULAR


def _kind(mode: int) -> str:
    if mode == pygit2.enums.FileMode.LINK:
        return "a symlink"
    if mode == pygit2.enums.FileMode.COMMIT:
        return "a submodule"
    if mode == pygit2.enums.FileMode.TREE:
        return "a directory"
    return "a file"


def tree_obstacle(tree: pygit2.Tree | None, path: str) -> str | None:
    """Why `path` cannot be a regular file in `tree`: something other than a plain
    directory on the way, or something other than a regular file at the path."""
    current = tree
    parts = path.split("/")
    for depth, name in enumerate(parts):
        if current is None:
            return None
        try:
            entry = current[name]
        except KeyError:
            return None
        here = "/".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if last:
            return None if entry.filemode in REGULAR else refusal(
                here, _kind(entry.filemode), "in HEAD", path)
        if entry.filemode != pygit2.enums.FileMode.TREE:
            return refusal(here, _kind(entry.filemode), "in HEAD", path)
        current = entry if isinstance(entry, pygit2.Tree) else None
    return None


def index_obstacle(index: pygit2.Index, path: str) -> str | None:
    """The same for the index: a staged entry where a directory must be, or a
    staged directory (or symlink, or submodule) at the path."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        here = "/".join(parts[:depth])
        if here in index:
            kind = _kind(index[here].mode)
            return refusal(here, kind, "staged in the index", path) + (
                f"; unstage it first (git rm --cached {here})")
    if path in index and index[path].mode not in REGULAR:
        kind = _kind(index[path].mode)
        return refusal(path, kind, "staged in the index", path) + (
            f"; unstage it first (git rm --cached {path})")
    below = path + "/"
    if any(entry.path.startswith(below) for entry in index):
        return refusal(path, "a directory", "staged in the index", path)
    return None


def staged_edit(index: pygit2.Index, tree: pygit2.Tree | None, path: str) -> str | None:
    """Why committing a change of `path` would drop what the index holds for it: an
    entry staged that differs from HEAD's. Checked under the index lock, so no
    `git add` can slip in between."""
    if tree is None or path not in index:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    staged = index[path]
    if staged.id != entry.id or int(staged.mode) != int(entry.filemode):
        return (f"{path} has changes staged in the index; commit them (git commit {path}) "
                f"or unstage them (git restore --staged {path}) first")
    return None


def write_obstacle(repo: GitRepo, path: str) -> str | None:
    """Why the team layer's file `path` cannot be written as a regular file — a
    symlink, submodule or file in the way in HEAD, the index or on disk — or None."""
    commit = resolve_commit(repo, "HEAD")
    why = tree_obstacle(commit.tree if commit is not None else None, path)
    why = why or index_obstacle(read_index(repo), path)
    if why is None and repo.workdir is not None:
        why = disk_obstacle(repo.workdir, path, None)
    return why
