"""When a path last changed: the newest commit on the first-parent line back from a
commit in which the path's blob differs from the first parent's (or the parent
lacks the path). It is a stub's date (docs/recall.md#a-stubs-date).

The walk compares each commit's tree with its first parent's along the paths
asked only, skipping every subtree whose id is the same on both sides, so a
commit costs a few lookups whatever the size of its tree. (pygit2's tree diff
takes no pathspec; it lists every change of a commit and measured some 45 times
slower on 5,000 commits of 4,000 files.) Only trees are read, never a blob: a
blobless clone walks its whole history.

The walk ends when every path is dated, or at a root, a shallow boundary (libgit2
gives such a commit no parents), a commit or tree this clone lacks (a treeless
clone), or after `limit` commits: the paths left get the date of the oldest commit
walked.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable
from typing import Final, NamedTuple

import pygit2

from omh_git_memory.git.history import commit_date, resolve_commit
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.git.trees import REGULAR

MAX_COMMITS: Final = 10_000  # the commits one walk compares at most
# A commit changing more files than this is not searched for a moved file: pairing
# them costs seconds (12,000 files: 3.8 s), and git gives up on it as well (its
# diff.renameLimit is 1,000).
RENAME_LIMIT: Final = 1_000

# A folder's part of the paths still to date: name -> the path (a file) or the
# folder below it.
_Node = dict[str, "str | _Node"]


class Change(NamedTuple):
    """The commit that last changed a path: its id, its author's name, and its day in
    the committer's time zone (as `commit_date`), as a date ordinal."""

    commit: str
    author: str
    day: int


def last_changed(
    repo: GitRepo, start: str, paths: Iterable[str],
    base: str | None = None, base_paths: Collection[str] = (), limit: int = MAX_COMMITS,
) -> dict[str, dt.date]:
    """The day each of `paths` (files of the tree of commit `start`) last changed,
    in the committer's time zone (as `commit_date`); see `last_changes`."""
    return {path: dt.date.fromordinal(change.day) for path, change in
            last_changes(repo, start, paths, base, base_paths, limit).items()}


def last_changes(
    repo: GitRepo, start: str, paths: Iterable[str],
    base: str | None = None, base_paths: Collection[str] = (), limit: int = MAX_COMMITS,
) -> dict[str, Change]:
    """The commit that last changed each of `paths` (files of the tree of commit
    `start`); a path the walk did not reach the change of gets the oldest commit it
    walked.

    `base_paths` are paths whose dates the caller knows as of commit `base` (an
    index built before): they are dated only when they changed between `commit`
    and `base`, and a path of them missing from the answer is unchanged since. When
    `base` is not on the first-parent line they are dated like `paths`."""
    commit = resolve_commit(repo, start)
    if commit is None:
        return {}
    fresh = set(paths)
    trie = _trie(sorted(fresh | set(base_paths)))  # sorted: the same walk every run
    dates: dict[str, Change] = {}
    walked = 0
    while True:
        if str(commit.id) == base:  # the rest of base_paths are as they were there
            trie = _trie(sorted(fresh - dates.keys()))
        if not trie:
            break
        parent = _first_parent(repo, commit)
        if parent is None:
            break
        try:
            _compare(repo, trie, commit.tree, parent.tree, _change(commit), dates)
        except _Missing:
            break
        walked += 1
        if walked >= limit:
            break
        commit = parent
    left = _leaves(trie)  # unchanged as far as the walk went: the oldest commit it read
    dates.update(dict.fromkeys(left, _change(commit)))
    return dates


def changes_since(repo: GitRepo, start: str, wanted: Collection[tuple[str, str]],
                  limit: int) -> dict[tuple[str, str], int]:
    """For each (path, blob id) of `wanted`, how many commits on the first-parent
    line back from commit `start` changed the path since it last held that blob (a
    prefix of the id will do): the walk goes back until each path holds its blob
    again, at most `limit` commits. A pair the walk did not settle (its blob not
    met within `limit`, a root, a shallow boundary, a commit this clone lacks) is
    left out: the count is unknown, never a guess. A commit costs one path lookup
    in its parent's tree for each path still open (its own was looked up one
    step before)."""
    commit = resolve_commit(repo, start)
    open_pairs = set(wanted)
    counts = dict.fromkeys(open_pairs, 0)
    found: dict[tuple[str, str], int] = {}
    ids = _ids_at(commit, open_pairs) if commit is not None else {}
    for _ in range(limit):
        if commit is None or not open_pairs:
            break
        parent = _first_parent(repo, commit)
        before = _ids_at(parent, open_pairs) if parent is not None else {}
        for pair in sorted(open_pairs):
            path, blob = pair
            here = ids[path]
            if here is not None and str(here).startswith(blob):
                found[pair] = counts[pair]
                open_pairs.discard(pair)
            elif parent is not None and here != before[path]:
                counts[pair] += 1
        commit, ids = parent, before
    return found


def renamed_to(repo: GitRepo, start: str, paths: Collection[str], limit: int
               ) -> dict[str, str]:
    """Where each of `paths` that commit `start` lacks was moved: the walk goes back
    along the first-parent line, at most `limit` commits, to the commit that took
    the path away, and asks git's rename detection of that one commit (a file at
    least half alike, as `git log --follow` finds it). Only a move to a path that
    `start` still holds is given; a path deleted outright, moved on again, or not
    taken away within the walk is left out. In a clone that lacks the blobs to
    compare (a blobless one), only a move that kept the content is found."""
    commit = resolve_commit(repo, start)
    if commit is None:
        return {}
    held = commit.tree
    open_paths = {p for p in paths if _file_at(held, p) is None}
    moves: dict[str, str] = {}
    for _ in range(limit):
        if not open_paths:
            break
        parent = _first_parent(repo, commit)
        if parent is None:
            break
        before = parent.tree
        taken = {p: old for p in open_paths if (old := _file_at(before, p)) is not None}
        if taken:
            moves.update(_moves(before, commit.tree, taken))
            open_paths.difference_update(taken)
        commit = parent
    return {old: new for old, new in moves.items() if _file_at(held, new) is not None}


def _file_at(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    """The blob id of the regular file at `path`; None for no entry, a folder, a
    symlink or a submodule (a cited file is a regular file, and so is what it moved to)."""
    try:
        entry = tree[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return entry.id if entry.filemode in REGULAR else None


def _moves(before: pygit2.Tree, after: pygit2.Tree, taken: dict[str, pygit2.Oid]
           ) -> dict[str, str]:
    """The paths that `taken` (paths of `before` that `after` lacks, with their blob
    ids) moved to between the two trees."""
    diff = before.diff_to_tree(after)
    if len(diff) > RENAME_LIMIT:  # as `git log -M` skips such a commit: too costly to pair
        return {}
    try:
        diff.find_similar(flags=pygit2.enums.DiffFind.FIND_RENAMES)
    except (KeyError, ValueError, pygit2.GitError):  # a blob this clone lacks
        diff = before.diff_to_tree(after)  # compare ids only: the same content
        added = {d.new_file.id: d.new_file.path for d in diff.deltas
                 if d.status == pygit2.enums.DeltaStatus.ADDED}
        return {p: added[old] for p, old in taken.items() if old in added}
    return {d.old_file.path: d.new_file.path for d in diff.deltas
            if d.status == pygit2.enums.DeltaStatus.RENAMED and d.old_file.path in taken}


def _ids_at(commit: pygit2.Commit, pairs: Iterable[tuple[str, str]]
            ) -> dict[str, pygit2.Oid | None]:
    tree = commit.tree  # read once: each `.tree` makes a new object
    return {path: _id_at(tree, path) for path, _ in pairs}


def _id_at(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _change(commit: pygit2.Commit) -> Change:
    # raw: a name in another encoding, or not text at all, is still a name to show
    author = commit.author.raw_name.decode("utf-8", errors="replace")
    return Change(str(commit.id), author, commit_date(commit).toordinal())


class _Missing(Exception):
    """A tree this clone lacks (a partial clone): the walk ends there."""


def _first_parent(repo: GitRepo, commit: pygit2.Commit) -> pygit2.Commit | None:
    """The first parent, its tree read; None at a root, a shallow boundary (libgit2
    lists no parents there), or a commit or tree this clone lacks."""
    if not commit.parent_ids:
        return None
    try:
        parent = repo.repo[commit.parent_ids[0]].peel(pygit2.Commit)
        parent.tree  # noqa: B018 -- a treeless clone lacks it: found here, not mid-walk
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return parent


def _compare(repo: GitRepo, trie: _Node, ours: pygit2.Tree, theirs: pygit2.Tree,
             day: Change, dates: dict[str, Change]) -> None:
    """Give `day` to every path of `trie` that differs between `ours` and `theirs`, and
    take it out of `trie`. Iterative: a path nested thousands deep must not
    exhaust the stack."""
    stack: list[tuple[_Node, pygit2.Tree, pygit2.Tree]] = [(trie, ours, theirs)]
    while stack:
        node, mine, other = stack.pop()
        for name, below in list(node.items()):
            if not below:  # a folder whose paths an earlier commit dated
                del node[name]
                continue
            here, there = _entry(mine, name), _entry(other, name)
            if _id(here) == _id(there):
                continue  # the same blob, or the same subtree: nothing below changed
            if not isinstance(below, str):
                folder, parent_folder = _tree(repo, here), _tree(repo, there)
                if folder is not None and parent_folder is not None:
                    stack.append((below, folder, parent_folder))
                    continue
            for path in _leaves({name: below}):  # new here, or a folder that was not one
                dates[path] = day
            del node[name]


def _entry(tree: pygit2.Tree, name: str) -> pygit2.Object | None:
    try:
        return tree[name]
    except KeyError:
        return None


def _id(entry: pygit2.Object | None) -> pygit2.Oid | None:
    return None if entry is None else entry.id


def _tree(repo: GitRepo, entry: pygit2.Object | None) -> pygit2.Tree | None:
    """The folder `entry` is; None when it is absent or not a folder. _Missing when
    this clone lacks it."""
    if entry is None or entry.filemode != pygit2.enums.FileMode.TREE:
        return None
    try:
        return repo.repo[entry.id].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError):
        raise _Missing from None


def _trie(paths: Iterable[str]) -> _Node:
    top: _Node = {}
    for path in paths:
        node = top
        *folders, name = path.split("/")
        for folder in folders:
            step = node.setdefault(folder, {})
            assert not isinstance(step, str), path  # paths of one tree: no file is a folder
            node = step
        node[name] = path
    return top


def _leaves(node: _Node) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        for below in stack.pop().values():
            if isinstance(below, str):
                found.append(below)
            else:
                stack.append(below)
    return found
