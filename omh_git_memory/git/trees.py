"""Reading a commit's tree and blobs, without touching the index or the working
tree. Nothing is followed: a symlink or submodule is listed as such. A tree or
blob this clone lacks is refused by name, with the command that fetches it when
the clone is a partial one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2

from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import GitFailure


@dataclass(frozen=True)
class TreeFile:
    """A file in a commit's tree."""

    path: str  # repository-relative, POSIX
    blob_id: str
    data: bytes | None  # None when the entry is not a regular file, or over the limit read
    kind: str  # "file", "symlink", "submodule"
    size: int = 0  # a regular file's size in bytes, known without reading it


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob_id: str
    kind: str  # "file", "symlink", "submodule"


_KINDS: dict[int, str] = {
    pygit2.enums.FileMode.LINK: "symlink",
    pygit2.enums.FileMode.COMMIT: "submodule",
}


# The modes of a regular file (executable or not): what omh reads and writes.
REGULAR = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


def files_under(
    repo: GitRepo, commit: pygit2.Commit | None, prefix: str, max_bytes: int | None = None
) -> list[TreeFile]:
    """Every file below directory `prefix` in `commit`'s tree, read without touching
    the working tree or the index.

    Nothing is followed: a symlink or submodule below `prefix` is listed as such,
    and so is one standing where `prefix` or a directory above it should be (then
    it is the only entry). A file over `max_bytes` is listed with its size and not
    read. A blob this clone lacks (a partial clone) is refused by name."""
    if commit is None:
        return []
    r = repo.repo
    top = _tree_of(repo, commit)
    route = ""
    for name in prefix.split("/"):
        route = f"{route}/{name}" if route else name
        try:
            step = top[name]
        except KeyError:
            return []
        except pygit2.GitError:
            raise GitFailure(_missing_message(repo, str(commit.id), [route], route)) from None
        if step.filemode != pygit2.enums.FileMode.TREE:
            kind = _KINDS.get(step.filemode, "file")
            return [TreeFile(route, str(step.id), None, kind)]
        top = _load_tree(repo, commit, step.id, route)
    found: list[TreeFile] = []
    missing: list[str] = []
    for path, entry in _walk(repo, commit, prefix + "/", top):
        mode = entry.filemode
        if mode in _KINDS:
            found.append(TreeFile(path, str(entry.id), None, _KINDS[mode]))
        else:
            try:
                size = r.odb.read_header(entry.id)[1]
                data = None if max_bytes is not None and size > max_bytes else \
                    r.odb.read(entry.id)[1]
            except (KeyError, pygit2.GitError):
                missing.append(path)
                continue
            found.append(TreeFile(path, str(entry.id), data, "file", size))
    if missing:
        raise GitFailure(_missing_message(repo, str(commit.id), sorted(missing), prefix))
    return sorted(found, key=lambda f: f.path)


def list_tree(repo: GitRepo, commit: pygit2.Commit) -> list[TreeEntry]:
    """Every file of `commit`'s tree with its blob id, without reading any blob."""
    return [TreeEntry(path, str(entry.id), _KINDS.get(entry.filemode, "file"))
            for path, entry in _walk(repo, commit, "", _tree_of(repo, commit))]


def _walk(repo: GitRepo, commit: pygit2.Commit, prefix: str, top: pygit2.Tree
          ) -> Iterator[tuple[str, pygit2.Object]]:
    """Every entry below `top` that is not a tree, with its path (`prefix` + name)."""
    stack: list[tuple[str, pygit2.Tree]] = [(prefix, top)]
    while stack:  # iterative: a tree nested thousands deep must not exhaust the stack
        here, tree = stack.pop()
        for entry in tree:
            path = f"{here}{entry.name}"
            if entry.filemode == pygit2.enums.FileMode.TREE:
                stack.append((path + "/", _load_tree(repo, commit, entry.id, path)))
            else:
                yield path, entry


def _tree_of(repo: GitRepo, commit: pygit2.Commit) -> pygit2.Tree:
    try:
        return commit.tree
    except (KeyError, pygit2.GitError):
        raise GitFailure(_missing_message(repo, str(commit.id), ["its tree"], ".")) from None


def _load_tree(repo: GitRepo, commit: pygit2.Commit, oid: pygit2.Oid, path: str) -> pygit2.Tree:
    try:
        return repo.repo[oid].peel(pygit2.Tree)
    except (KeyError, pygit2.GitError):
        raise GitFailure(_missing_message(repo, str(commit.id), [path], path)) from None


def tree_file(commit: pygit2.Commit | None, path: str) -> tuple[str, int] | None:
    """The blob id and file mode of the file at `path` in `commit`, or None when
    there is none (or the entry is a directory or a submodule)."""
    if commit is None:
        return None
    try:
        entry = commit.tree[path]
    except KeyError:
        return None
    if not isinstance(entry, pygit2.Blob):
        return None
    return str(entry.id), int(entry.filemode)


def regular_blob_at(repo: GitRepo, commit: str, path: str) -> str | None:
    """The blob id of the regular file (executable or not) at `path` in commit
    `commit`, or None: no such path, a folder, a symlink (never followed, nor is one
    standing for a folder on the way), a submodule, or a tree this clone lacks."""
    try:
        entry = repo.repo[commit].peel(pygit2.Commit).tree[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if entry.filemode not in REGULAR:
        return None
    return str(entry.id)


def path_in_tree(commit: pygit2.Commit | None, path: str) -> bool:
    if commit is None:
        return False
    try:
        commit.tree[path]
    except pygit2.GitError:  # before KeyError: a missing object raises a subclass of both
        short = str(commit.id)[:12]
        raise GitFailure(
            f"cannot read {path} at {short}: part of its tree is not in this clone (a partial "
            f"clone?); fetch it (`git archive --format=tar {short} -- {path} >/dev/null`) or "
            "use a full clone"
        ) from None
    except KeyError:
        return False
    return True


def kind_at(commit: pygit2.Commit, path: str) -> str | None:
    """What stands at `path` in `commit`'s tree: "file", "symlink", "submodule" or
    "folder"; None when nothing does (or a tree on the way is not in this clone)."""
    try:
        entry = commit.tree[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    if entry.filemode == pygit2.enums.FileMode.TREE:
        return "folder"
    return _KINDS.get(entry.filemode, "file")


def blob_in_tree(commit: pygit2.Commit | None, path: str) -> bytes | None:
    """The content of the regular file at `path` in `commit`, or None (no such path,
    or a symlink, submodule or directory there)."""
    if commit is None:
        return None
    short = str(commit.id)[:12]
    refusal = (
        f"cannot read {path} at {short}: it is not in this clone (a partial clone?); fetch "
        f"it (`git archive --format=tar {short} -- {path} >/dev/null`) or use a full clone"
    )
    try:
        entry = commit.tree[path]
    except pygit2.GitError:  # before KeyError: a missing object raises a subclass of both
        raise GitFailure(refusal) from None
    except KeyError:
        return None
    if not isinstance(entry, pygit2.Blob) or entry.filemode not in (
        pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE
    ):
        return None
    try:
        return entry.read_raw()
    except (KeyError, pygit2.GitError):
        raise GitFailure(refusal) from None


def blob_size(repo: GitRepo, blob_id: str, path: str = "") -> int:
    """The size of a blob in bytes, read from the object's header, not its content."""
    try:
        return int(repo.repo.odb.read_header(pygit2.Oid(hex=blob_id))[1])
    except (KeyError, ValueError, pygit2.GitError):
        raise GitFailure(_missing_blob(repo, blob_id, path)) from None


def read_blob(repo: GitRepo, blob_id: str, path: str = "") -> bytes:
    """A blob's content; `path` (where it sits) names it in a refusal."""
    try:
        return bytes(repo.repo.odb.read(pygit2.Oid(hex=blob_id))[1])
    except (KeyError, ValueError, pygit2.GitError):
        raise GitFailure(_missing_blob(repo, blob_id, path)) from None


def _missing_blob(repo: GitRepo, blob_id: str, path: str) -> str:
    what = f"{path} (blob {blob_id[:12]})" if path else f"blob {blob_id}"
    if is_partial_clone(repo):
        return (
            f"{what} is not in this clone: it is a partial clone (made with --filter), which "
            "fetches contents on demand, and omh cannot fetch; fetch it with "
            f"`git cat-file -p {blob_id} >/dev/null`, or use a full clone"
        )
    return (
        f"{what} is missing from {repo.common_dir}: the repository is damaged; "
        "`git fsck` says more"
    )


def require_blobs(repo: GitRepo, rev: str, blobs: dict[str, str], pathspec: str) -> None:
    """Refuse, naming them, when any of `blobs` (path → blob id, at commit `rev`) is
    not in this clone — all at once, with one command that fetches every one."""
    odb = repo.repo.odb
    missing = sorted(path for path, blob in blobs.items() if not odb.exists(pygit2.Oid(hex=blob)))
    if missing:
        raise GitFailure(_missing_message(repo, rev, missing, pathspec))


def _missing_message(repo: GitRepo, rev: str, paths: list[str], pathspec: str) -> str:
    """Why `paths` at commit `rev` cannot be read, and the command that fetches them."""
    rev = rev[:12]
    what = paths[0] if len(paths) == 1 else f"{len(paths)} files ({paths[0]}, …)"
    if is_partial_clone(repo):
        return (
            f"{what} at {rev} is not in this clone: it is a partial clone (made with "
            "--filter), which fetches contents on demand, and omh cannot fetch; fetch them "
            f"with `git archive --format=tar {rev} -- {pathspec} >/dev/null`, or use a full "
            "clone"
        )
    return (
        f"{what} at {rev} is missing from {repo.common_dir}: the repository is damaged; "
        "`git fsck` says more"
    )


def is_partial_clone(repo: GitRepo) -> bool:
    """Whether the clone was made with `--filter` (a promisor remote is configured)."""
    for entry in repo.repo.config:
        name = entry.name.lower()
        if name == "extensions.partialclone" or (
            name.startswith("remote.") and name.endswith(".promisor") and
            (entry.value or "").lower() in ("true", "yes", "on", "1")
        ):
            return True
    return False
