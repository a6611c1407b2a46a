"""All git access, over libgit2 (pygit2). No `git` subprocess anywhere in the product.

pygit2 lives only in this module; the rest of the package talks to
:class:`GitRepo` and plain paths.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import shlex
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omh_git_memory.git import identity
from omh_git_memory.git.gitfiles import (
    IndexLock,
    WorkdirUndo,
    describe,
    disk_obstacle,
    read_nofollow,
    refusal,
)
from omh_git_memory.model import faults
from omh_git_memory.model.errors import GitFailure, NotARepository

_log = logging.getLogger("omh")


@dataclass(frozen=True)
class GitRepo:
    """A repository as seen from one checkout (the main one or a linked worktree)."""

    repo: pygit2.Repository
    git_dir: Path  # this worktree's git dir (`.git`, or `.git/worktrees/<name>`)
    common_dir: Path  # shared by every worktree of the clone
    workdir: Path | None  # None for a bare repository

    @property
    def main_checkout(self) -> Path:
        """The clone's main checkout (for a bare repository, the repository itself).

        Derived from the common git dir, so every linked worktree of a clone
        answers the same.
        """
        if self.common_dir.name == ".git":
            return self.common_dir.parent
        return self.common_dir

    def require_workdir(self) -> Path:
        if self.workdir is None:
            raise NotARepository(
                f"{self.common_dir} is a bare repository; run omh inside a checkout"
            )
        return self.workdir


# The variables that make git (and omh) use another repository, working tree or
# index than the current directory's: a process omh starts in a repository of its
# own (the demo's) must not inherit them.
LOCATION_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                      "GIT_CEILING_DIRECTORIES", "GIT_OBJECT_DIRECTORY",
                      "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")


def open_repo(start: Path, environ: Mapping[str, str] | None = None) -> GitRepo:
    """The repository git would use from `start` (any subdirectory or linked worktree),
    following git's discovery rules and the environment that shapes them:
    `GIT_DIR` names the repository (the working tree is then `GIT_WORK_TREE`,
    `core.worktree`, or `start` itself, as git takes the current directory), and
    without it the search upwards stops at `GIT_CEILING_DIRECTORIES` and, unless
    `GIT_DISCOVERY_ACROSS_FILESYSTEM`, at a file system boundary. Relative paths
    are taken from `start`, as git takes them from the current directory."""
    env = os.environ if environ is None else environ
    if env.get("GIT_COMMON_DIR"):
        raise NotARepository(
            f"GIT_COMMON_DIR is set ({env['GIT_COMMON_DIR']}), which omh does not follow: "
            "it would read one repository and commit into another; unset it (open the "
            "linked worktree by its own directory instead)")
    named = env.get("GIT_DIR")
    tree = env.get("GIT_WORK_TREE")
    repo = _open_named(start, Path(named)) if named else _discover(start, env)
    workdir = _worktree_of(repo, start, named, tree)
    if workdir is not None and repo.workdir != f"{workdir}/":
        try:
            repo.workdir = str(workdir)
        except pygit2.GitError as err:
            raise GitFailure(f"using {workdir} as the working tree: {err}") from None
    git_dir = Path(repo.path).resolve()
    return GitRepo(repo=repo, git_dir=git_dir, common_dir=_common_dir(git_dir), workdir=workdir)


def _discover(start: Path, env: Mapping[str, str]) -> pygit2.Repository:
    ceilings = [c for c in env.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep) if c]
    across = (env.get("GIT_DISCOVERY_ACROSS_FILESYSTEM", "").strip().lower()
              in ("1", "true", "yes", "on"))
    try:
        if ceilings:
            found = pygit2.discover_repository(str(start), across, os.pathsep.join(ceilings))
        else:
            found = pygit2.discover_repository(str(start), across)
    except pygit2.GitError as err:
        raise GitFailure(f"looking for a git repository from {start}: {err}") from None
    if found is None:
        stop = " (the search stops at GIT_CEILING_DIRECTORIES)" if ceilings else ""
        raise NotARepository(
            f"{start} is not inside a git repository{stop}; cd into one, or run `git init` "
            "first"
        )
    try:
        # Open from `start`, not from the git dir found: only then does libgit2 see a
        # `.git` file, so a `--separate-git-dir` checkout is its own working tree.
        return pygit2.Repository(str(start))
    except pygit2.GitError as err:
        raise GitFailure(f"opening the git repository at {found}: {err}") from None


def _open_named(start: Path, named: Path) -> pygit2.Repository:
    """The repository `GIT_DIR` names (relative to `start`); no search."""
    where = named if named.is_absolute() else start / named
    try:
        return pygit2.Repository(str(where), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        raise NotARepository(
            f"GIT_DIR names {where}, which is not a git repository; unset GIT_DIR or point "
            "it at one") from None


def _worktree_of(repo: pygit2.Repository, start: Path, named: str | None,
                 tree: str | None) -> Path | None:
    """The working tree as git decides it (git help repository-layout, git help git)."""
    if tree:
        path = Path(tree) if Path(tree).is_absolute() else start / tree
        if not path.is_dir():
            raise NotARepository(f"GIT_WORK_TREE names {path}, which is not a directory; "
                                 "unset it or point it at the checkout")
        return path.resolve()
    if named is None:
        return Path(repo.workdir).resolve() if repo.workdir else None
    configured = _config_text(repo, "core.worktree")
    if configured:
        path = Path(configured)
        return (path if path.is_absolute() else Path(repo.path) / path).resolve()
    if _config_text(repo, "core.bare") in ("true", "yes", "on", "1", ""):
        return None
    return start.resolve()  # GIT_DIR alone: the current directory is the top


def _config_text(repo: pygit2.Repository, name: str) -> str | None:
    try:
        value = repo.config[name]
    except KeyError:
        return None
    return "" if value is None else str(value).strip().lower()


def _common_dir(git_dir: Path) -> Path:
    # pygit2 has no accessor for it: a linked worktree's git dir holds a
    # `commondir` file naming the shared one, relative to itself.
    marker = git_dir / "commondir"
    if not marker.is_file():
        return git_dir
    target = marker.read_text(encoding="utf-8").strip()
    return (git_dir / target).resolve()


def checkouts(repo: GitRepo) -> list[Path]:
    """Every working tree of the clone: the main checkout and each linked worktree
    (read from `<common>/worktrees/*/gitdir`, which names the worktree's `.git`)."""
    found = [repo.main_checkout] if repo.common_dir.name == ".git" else []
    if repo.workdir is not None:
        found.append(repo.workdir)
    with contextlib.suppress(OSError):
        for entry in sorted((repo.common_dir / "worktrees").iterdir()):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                gitdir = (entry / "gitdir").read_text(encoding="utf-8").strip()
                if gitdir:
                    found.append((entry / gitdir).parent)
    return list(dict.fromkeys(p.resolve() for p in found))


def first_root(repo: GitRepo) -> str | None:
    """The root commit reached from HEAD by first parents: what every clone of the
    repository shares, and what a store's record names. None before the first
    commit, when history is unreadable, and in a shallow clone whose first-parent
    line ends at a shallow boundary (a commit whose parents were not fetched is
    not a root: recording it would make every full clone look like another
    repository)."""
    try:
        if repo.repo.head_is_unborn:
            return None
        walker = repo.repo.walk(repo.repo.head.target)
        walker.simplify_first_parent()
        roots = [str(commit.id) for commit in walker if not commit.parent_ids]
    except (pygit2.GitError, KeyError, ValueError):
        return None
    if not roots or roots[0] in _shallow_boundary(repo):
        return None
    return roots[0]


def _shallow_boundary(repo: GitRepo) -> frozenset[str]:
    """The commits `<common>/shallow` lists: where a shallow clone's history stops."""
    try:
        with open(repo.common_dir / "shallow", "rb") as handle:
            text = handle.read(1 << 20).decode("ascii", "replace")
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def holds_in_history(repo: GitRepo, commit: str) -> bool | None:
    """Whether `commit` (a store record's root) is HEAD or one of its ancestors: True
    for a clone of the repository that recorded it, whichever of its roots HEAD's
    first parents now reach (a merge of unrelated histories adds roots); False
    when provably not (no commit yet, or a full history without it); None when
    this clone cannot tell, because it is shallow and the commit lies beyond (or
    on) its boundary."""
    try:
        if repo.repo.head_is_unborn:
            return False
        head = repo.repo.head.target
        target = pygit2.Oid(hex=commit)
        if target == head:
            return True
        if target in repo.repo and repo.repo.descendant_of(head, target):
            return True
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return None if _shallow_boundary(repo) else False


def create_repository(path: Path, message: str, name: str, email: str) -> GitRepo:
    """A new repository at `path` whose first commit holds every file already there."""
    try:
        repo = pygit2.init_repository(str(path), initial_head="main")
        repo.index.add_all()
        repo.index.write()
        tree = repo.index.write_tree()
        signature = pygit2.Signature(name, email)
        repo.create_commit("HEAD", signature, signature, message, tree, [])
    except pygit2.GitError as err:
        raise GitFailure(f"creating a repository at {path}: {err}") from None
    return open_repo(path, environ={})  # the repository just made, whatever GIT_DIR says


def commit_files(path: Path, names: list[str], message: str, name: str, email: str) -> None:
    """Commit the files `names` (paths from the root) of the repository at `path` on
    top of HEAD, as `git add NAMES && git commit` would (the demo's own step)."""
    try:
        repo = pygit2.Repository(str(path))
        for each in names:
            repo.index.add(each)
        repo.index.write()
        tree = repo.index.write_tree()
        signature = pygit2.Signature(name, email)
        repo.create_commit("HEAD", signature, signature, message, tree, [repo.head.target])
    except (pygit2.GitError, KeyError, OSError) as err:
        raise GitFailure(f"committing {', '.join(names)} in {path}: {err}") from None


class _Index(pygit2.Index):
    """pygit2's Index, safe to fail to open: pygit2's own `__del__` assumes the
    constructor got as far as opening the file, so a failed open (a damaged index,
    no memory) printed "Exception ignored in Index.__del__" and a traceback on
    stderr after the error had been reported."""

    def __del__(self) -> None:
        if "_index" in self.__dict__:
            super().__del__()


@dataclass(frozen=True)
class TreeFile:
    """A file in a commit's tree."""

    path: str  # repository-relative, POSIX
    blob_id: str
    data: bytes | None  # None when the entry is not a regular file, or over the limit read
    kind: str  # "file", "symlink", "submodule"
    size: int = 0  # a regular file's size in bytes, known without reading it


def resolve_commit(repo: GitRepo, rev: str) -> pygit2.Commit | None:
    """The commit `rev` names; None for `HEAD` on a branch with no commit yet."""
    if rev == "HEAD" and repo.repo.head_is_unborn:
        return None
    try:
        obj = repo.repo.revparse_single(rev)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise GitFailure(f"{rev!r} names no commit in {repo.common_dir}") from None
    return commit


_KINDS: dict[int, str] = {
    pygit2.enums.FileMode.LINK: "symlink",
    pygit2.enums.FileMode.COMMIT: "submodule",
}


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


def path_is_dirty(repo: GitRepo, path: str) -> bool:
    """True when `path` exists in the index or the working tree."""
    if path in _read_index(repo):
        return True
    return repo.workdir is not None and os.path.lexists(repo.workdir / path)


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


def index_change(repo: GitRepo, path: str, committed: tuple[str, int]) -> str | None:
    """How the index copy of `path` differs from `committed` (blob id, mode), or None
    when it holds the same — or holds nothing: a removal staged already risks no bytes."""
    index = repo.repo.index
    try:
        index.read(False)
        conflicts = index.conflicts
        if conflicts is not None and path in conflicts:
            return "has a merge conflict in the index"
        entry = index[path]
    except KeyError:
        return None
    except pygit2.GitError as err:
        raise GitFailure(f"reading the index entry of {path}: {err}") from None
    if (str(entry.id), int(entry.mode)) != committed:
        return "has changes staged in the index"
    return None


def in_index(repo: GitRepo, path: str) -> bool:
    """Whether the index holds an entry for `path` (False once `git rm` staged its
    removal)."""
    return path in _read_index(repo)


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


def checkout_holding(repo: GitRepo, path: Path) -> Path | None:
    """The checkout of this clone (the main one or any linked worktree) that holds
    `path`, compared as real paths; None when none does. A private file omh keeps
    must be in none of them: `git add -A` in any one would publish it."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        real = path.absolute()
    for checkout in checkouts(repo):
        if real == checkout or checkout in real.parents:
            return checkout
    return None


def worktree_blob_id(repo: GitRepo, file: Path, as_path: str) -> str:
    """The blob id `git add` would give `file` if it were at `as_path`: the
    repository's filters (line endings) applied, as git applies them."""
    try:
        return str(repo.repo.hashfile(str(file), as_path=as_path))
    except (pygit2.GitError, OSError) as err:
        raise GitFailure(f"hashing {as_path} as git would: {err}") from None


# --- the write side: the commit builder and what it writes -----------------------
#
# Nothing here follows a symlink: a path is written only when every directory on
# the way to it is a plain directory in HEAD's tree, in the index and on disk (a
# symlink, a submodule or a file in the way is refused before anything is
# written), and the working tree is written through directory descriptors opened
# with O_NOFOLLOW, so a symlink put in place meanwhile is refused, not followed.

_SPARSE = (
    "this checkout uses a sparse index, which libgit2 (and so omh) cannot read; turn it "
    "off with `git sparse-checkout init --no-sparse-index` (your sparse patterns stay) "
    "and run the command again"
)
_SPLIT = (
    "this checkout uses a split index (core.splitIndex), which libgit2 (and so omh) cannot "
    "read; turn it off with `git update-index --no-split-index` and run the command again"
)
_REGULAR = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


def _read_index(repo: GitRepo) -> pygit2.Index:
    """This checkout's index as it is on disk now."""
    try:
        index: pygit2.Index = repo.repo.index
        index.read(False)
    except pygit2.GitError as err:
        text = str(err)
        if "'sdir'" in text:
            raise GitFailure(_SPARSE) from None
        if "'link'" in text:
            raise GitFailure(_SPLIT) from None
        raise GitFailure(f"reading the index {repo.git_dir / 'index'}: "
                         f"{describe(err, repo.git_dir)}") from None
    return index


def _kind(mode: int) -> str:
    if mode == pygit2.enums.FileMode.LINK:
        return "a symlink"
    if mode == pygit2.enums.FileMode.COMMIT:
        return "a submodule"
    if mode == pygit2.enums.FileMode.TREE:
        return "a directory"
    return "a file"


def _tree_obstacle(tree: pygit2.Tree | None, path: str) -> str | None:
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
            return None if entry.filemode in _REGULAR else refusal(
                here, _kind(entry.filemode), "in HEAD", path)
        if entry.filemode != pygit2.enums.FileMode.TREE:
            return refusal(here, _kind(entry.filemode), "in HEAD", path)
        current = entry if isinstance(entry, pygit2.Tree) else None
    return None


def _index_obstacle(index: pygit2.Index, path: str) -> str | None:
    """The same for the index: a staged entry where a directory must be, or a
    staged directory (or symlink, or submodule) at the path."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        here = "/".join(parts[:depth])
        if here in index:
            kind = _kind(index[here].mode)
            return refusal(here, kind, "staged in the index", path) + (
                f"; unstage it first (git rm --cached {here})")
    if path in index and index[path].mode not in _REGULAR:
        kind = _kind(index[path].mode)
        return refusal(path, kind, "staged in the index", path) + (
            f"; unstage it first (git rm --cached {path})")
    below = path + "/"
    if any(entry.path.startswith(below) for entry in index):
        return refusal(path, "a directory", "staged in the index", path)
    return None


def _staged_edit(index: pygit2.Index, tree: pygit2.Tree | None, path: str) -> str | None:
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
    why = _tree_obstacle(commit.tree if commit is not None else None, path)
    why = why or _index_obstacle(_read_index(repo), path)
    if why is None and repo.workdir is not None:
        why = disk_obstacle(repo.workdir, path, None)
    return why


@dataclass(frozen=True)
class Change:
    """Files to add (path → bytes) and paths to delete, in one commit."""

    add: dict[str, bytes]
    delete: tuple[str, ...]
    message: str
    signoff: bool = False  # end the message with a Signed-off-by trailer (git commit -s)


def signed_off(message: str, name: str, email: str) -> str:
    """`message` ending in `Signed-off-by: name <email>`, as `git commit --signoff`
    writes it: in the message's last paragraph when that is already trailers, else
    in a paragraph of its own; never twice."""
    trailer = f"Signed-off-by: {name} <{email}>"
    body = message.rstrip("\n")
    paragraphs = body.split("\n\n")
    last = paragraphs[-1].split("\n") if len(paragraphs) > 1 else []
    if trailer in last:
        return body + "\n"
    is_trailers = bool(last) and all(re.match(r"[A-Za-z0-9-]+: ", line) for line in last)
    return body + ("\n" if is_trailers else "\n\n") + trailer + "\n"


def commit_change(repo: GitRepo, change: Change) -> str:
    """Commit `change` on the current branch without touching other work, then bring
    the working-tree files and index entries of exactly those paths in line.

    git's index lock (`index.lock`) is held from before the branch moves until the
    new index is in place, so no `git commit` can slip in between and commit a
    tree that lacks the change. The branch moves only if it still points where it
    did (compare-and-swap). The working tree is written before the new index is
    put in place, so any failure leaves the index exactly as it was: the files
    written are removed again, the branch is moved back, the lock released.
    """
    r = repo.repo
    if r.head_is_detached:
        raise GitFailure("HEAD is detached; check out a branch first (git switch <branch>)")
    refuse_other_index(repo)
    branch = r.references["HEAD"].target
    assert isinstance(branch, str)
    author, committer = identities(repo)
    message = change.message
    if change.signoff:  # the committer's identity, as git's own --signoff uses
        message = signed_off(message, committer.name, committer.email)
    lock = IndexLock(repo.git_dir)
    lock.acquire()
    undo = WorkdirUndo(repo.workdir)
    moved: tuple[pygit2.Oid, pygit2.Oid | None] | None = None
    try:
        index = _read_index(repo)
        ref = r.references.get(branch)
        parent = ref.target if ref is not None else None
        assert parent is None or isinstance(parent, pygit2.Oid)
        old_tree = r[parent].peel(pygit2.Commit).tree if parent is not None else None
        for path, data in change.add.items():
            why = (_tree_obstacle(old_tree, path) or _index_obstacle(index, path)
                   or _staged_edit(index, old_tree, path))
            if why is None and repo.workdir is not None:
                # A file the commit changes may stand there as HEAD has it.
                why = disk_obstacle(repo.workdir, path, *_on_disk(repo, path, data, old_tree))
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        for path in change.delete:
            why = _staged_edit(index, old_tree, path)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        tree = _Index()
        if old_tree is not None:
            tree.read_tree(old_tree)
        blobs = {path: r.create_blob(data) for path, data in change.add.items()}
        faults.point("commit:blobs")
        for path, blob in blobs.items():
            tree.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        for path in change.delete:
            tree.remove(path)
        staged = _stage(lock, blobs, change.delete)
        faults.point("commit:stage")
        tree_id = tree.write_tree(r)
        faults.point("commit:tree")
        new = create_commit(
            repo, author, committer, message, tree_id,
            [parent] if parent is not None else [],
        )
        faults.point("commit:object")
        lock.landed(branch, str(parent) if parent is not None else None, str(new))
        _move(r, branch, ref, new, f"omh: {change.message.splitlines()[0]}")
        moved = (new, parent)
        faults.point("commit:ref")
        for path, data in change.add.items():
            # A clean copy of HEAD's file is replaced; a file written there since
            # the check above is the user's and stays (it shows as their change).
            undo.write(path, *_on_disk(repo, path, data, old_tree))
        for path in change.delete:
            undo.delete(path, disk_form(repo, path, _blob_at(r, old_tree, path)))
        faults.point("commit:workdir")
        lock.commit(staged)
    except BaseException as err:
        _undo(lock, undo, r, branch, moved, err)
        raise  # _undo raises the failure to report; this is for anything else
    faults.point("commit:index")
    return str(new)


def _move(r: pygit2.Repository, branch: str, ref: pygit2.Reference | None, new: pygit2.Oid,
          message: str) -> None:
    """Point `branch` at `new` if it still points where `ref` did (compare-and-swap)."""
    try:
        if ref is None:
            r.references.create(branch, new)
        else:
            ref.set_target(new, message)
    except (pygit2.GitError, OSError) as err:
        with contextlib.suppress(pygit2.GitError, OSError):
            now = r.references.get(branch)
            if now is not None and now.target == new:
                return  # it moved, and only the reflog failed
        reason = describe(err, Path(r.path))
        if reason.startswith(("the disk", "your disk quota")):
            raise GitFailure(f"could not move {branch}, nothing was changed: {reason}") from None
        # GitError when the branch moved; OSError when git holds the ref's lock.
        raise GitFailure(
            f"could not move {branch}: {reason} (another process committed meanwhile?); "
            "nothing was changed, run the command again"
        ) from None


def _undo(lock: IndexLock, undo: WorkdirUndo, r: pygit2.Repository, branch: str,
          moved: tuple[pygit2.Oid, pygit2.Oid | None] | None, err: BaseException) -> None:
    """Put everything back after `err`: the staged index dropped (the index itself was
    never replaced), the working-tree files restored, the branch moved back, the lock
    released — then raise one clear failure. Space is freed before the branch is
    moved back, so a full disk can still take the ref update."""
    lock.discard()
    left = undo.run()
    kept: str | None = None
    if moved is not None:
        try:
            if not _move_back(r, branch, *moved):
                kept = "somebody moved the branch on since"
        except (pygit2.GitError, OSError) as failure:
            kept = describe(failure, Path(r.path))
    if kept is None:
        lock.drop_own_unfinished()  # the branch is where it was: nothing to finish
    lock.release()
    if not isinstance(err, (pygit2.GitError, OSError, KeyError, GitFailure)):
        return  # KeyboardInterrupt and bugs go on as they are (a KeyError here is
        # libgit2's: an object or path it cannot find, as a full disk can leave)
    what = str(err) if isinstance(err, GitFailure) else describe(err, Path(r.path))
    if moved is None:
        if isinstance(err, GitFailure):
            raise err.with_traceback(None) from None
        raise GitFailure(f"committing failed ({what}); nothing was committed or changed") from None
    new, parent = moved
    if kept is not None:
        back = f"git reset --soft {parent}" if parent is not None else "git update-ref -d HEAD"
        raise GitFailure(
            f"committing failed ({what}), and the commit {str(new)[:12]} could not be undone "
            f"({kept}): it stays on {branch}, but the index and working tree lack it; run "
            f"the same omh command again to finish it, or drop it with `{back}`"
        ) from None
    extra = f"; could not remove {', '.join(left)} again" if left else ""
    raise GitFailure(
        f"committing failed ({what}); the commit was undone and nothing else changed{extra}"
    ) from None


def _on_disk(repo: GitRepo, path: str, data: bytes, tree: pygit2.Tree | None
             ) -> tuple[bytes, bytes | None]:
    """The new bytes of `path` and HEAD's, each as the working tree holds (or git
    would write) them, so that a clean copy under line-ending filters is seen as
    clean."""
    new = disk_form(repo, path, data)
    assert new is not None
    return new, disk_form(repo, path, _blob_at(repo.repo, tree, path))


def _blob_at(r: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    return r[entry.id].read_raw() if entry.filemode in _REGULAR else None


def _stage(lock: IndexLock, blobs: dict[str, pygit2.Oid], delete: tuple[str, ...]) -> Path:
    """Write the index as it must be after the commit beside the lock (to be renamed
    into place by `lock.commit`).

    The staged index keeps the modification time of the index it copies. git trusts
    an entry's stat data only when the entry is older than the index file; one
    stamped in the same tick as the index (a file edited right after `git add`)
    is "racily clean" and must be compared by content. A fresh mtime on the copy
    would make such entries trusted, and hide the edit (`git status` shows `M `
    where it showed `MM`). Keeping the timestamp keeps exactly the entries git
    would re-check; the entries added here carry no stat data, so git hashes
    them anyway."""
    stamp: os.stat_result | None = None
    if lock.index.exists():
        stamp = os.stat(lock.index)
        shutil.copyfile(lock.index, lock.staged)
    else:
        lock.staged.unlink(missing_ok=True)
    index = _Index(str(lock.staged))
    for path, blob in blobs.items():
        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
    for path in delete:
        if path in index:
            index.remove(path)
    index.write()
    if stamp is not None:
        os.utime(lock.staged, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return lock.staged


def _move_back(r: pygit2.Repository, branch: str, new: pygit2.Oid, old: pygit2.Oid | None) -> bool:
    """Point `branch` back at `old`; False when somebody moved it since (their work
    is left alone)."""
    ref = r.references.get(branch)
    if ref is None or ref.target != new:
        return False
    if old is None:
        ref.delete()
    else:
        ref.set_target(old, "omh: undo")
    return True


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob_id: str
    kind: str  # "file", "symlink", "submodule"


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


def commit_id(commit: pygit2.Commit) -> str:
    return str(commit.id)


def commit_date(commit: pygit2.Commit) -> dt.date:
    """The day the commit was made, in its committer's time zone."""
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz).date()


def config_value(repo: GitRepo, name: str, environ: Mapping[str, str] | None = None
                 ) -> str | None:
    """A git configuration value as git itself would read it, or None; a key given
    without a value (`[commit] gpgSign`, which git reads as true) is "". What
    `git -c` passes on to the commands it runs (`GIT_CONFIG_PARAMETERS`, and
    `GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_<n>` / `_VALUE_<n>`) comes first, as
    for git; libgit2 reads only the files."""
    given = _config_from_environment(os.environ if environ is None else environ)
    if _config_key(name) in given:
        return given[_config_key(name)]
    try:
        value = repo.repo.config[name]
    except KeyError:
        return None
    return "" if value is None else str(value)


def _config_key(name: str) -> str:
    # the section and the variable are case-insensitive, a subsection is not
    section, _, rest = name.partition(".")
    middle, _, variable = rest.rpartition(".")
    return ".".join(p for p in (section.lower(), middle, variable.lower()) if p)


def _config_from_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The settings git's environment carries, the later one winning: the
    `GIT_CONFIG_COUNT` pairs, then `GIT_CONFIG_PARAMETERS` (git reads them so)."""
    found: dict[str, str] = {}
    count = env.get("GIT_CONFIG_COUNT", "").strip()
    if count:
        if not count.isdigit():
            raise GitFailure(f"GIT_CONFIG_COUNT={count!r} is not a number; git refuses it too")
        for n in range(int(count)):
            key = env.get(f"GIT_CONFIG_KEY_{n}")
            value = env.get(f"GIT_CONFIG_VALUE_{n}")
            if not key or value is None:
                raise GitFailure(f"GIT_CONFIG_COUNT is {count} but GIT_CONFIG_KEY_{n} or "
                                 f"GIT_CONFIG_VALUE_{n} is missing; git refuses it too")
            found[_config_key(key)] = value
    parameters = env.get("GIT_CONFIG_PARAMETERS", "").strip()
    if parameters:
        try:
            words = shlex.split(parameters)
        except ValueError:
            raise GitFailure("GIT_CONFIG_PARAMETERS cannot be read (it is what `git -c` "
                             "sets); unset it") from None
        for word in words:
            key, has_value, value = word.partition("=")
            found[_config_key(key)] = value if has_value else ""
    return found


def identities(repo: GitRepo, environ: Mapping[str, str] | None = None
               ) -> tuple[pygit2.Signature, pygit2.Signature]:
    """The author and the committer `git commit` would record here: `GIT_AUTHOR_*` /
    `GIT_COMMITTER_*` before configuration, as git reads them (identity.py)."""
    env = os.environ if environ is None else environ
    found = [identity.person(role, lambda name: config_value(repo, name), env)
             for role in ("author", "committer")]
    try:
        return _signature(found[0]), _signature(found[1])
    except (ValueError, pygit2.GitError) as err:
        raise GitFailure(f"git's identity cannot be used ({err}); set user.name and "
                         "user.email (or GIT_AUTHOR_* / GIT_COMMITTER_*) to plain text") from None


def refuse_other_index(repo: GitRepo, environ: Mapping[str, str] | None = None) -> None:
    """Refuse to write an index when `GIT_INDEX_FILE` names another file than the
    one omh locks and writes (`<git dir>/index`): git would stage into that one.
    (git sets it for its hooks, naming this index or its lock: reading is fine.)"""
    env = os.environ if environ is None else environ
    named = env.get("GIT_INDEX_FILE")
    if not named:
        return
    where = Path(named) if Path(named).is_absolute() else Path.cwd() / named
    if where.resolve() != (repo.git_dir / "index").resolve():
        raise GitFailure(
            f"GIT_INDEX_FILE names {where}, but omh commits through the repository's own "
            f"index ({repo.git_dir / 'index'}); nothing was changed. Unset GIT_INDEX_FILE (a "
            "git hook that runs omh while git holds the index cannot commit either)")


def _signature(who: identity.Person) -> pygit2.Signature:
    if who.when is None:
        return pygit2.Signature(who.name, who.email)
    return pygit2.Signature(who.name, who.email, who.when[0], who.when[1])


def create_commit(repo: GitRepo, author: pygit2.Signature, committer: pygit2.Signature,
                  message: str, tree: pygit2.Oid, parents: list[pygit2.Oid]) -> pygit2.Oid:
    """A commit object (no ref moves), signed as `git commit` would sign it when
    `commit.gpgSign` is on; a signature that cannot be made is refused, never
    left out."""
    r = repo.repo
    how = identity.signer(lambda name: config_value(repo, name),
                          identity.Person(committer.name, committer.email))
    if how is None:
        return r.create_commit(None, author, committer, message, tree, parents)
    heads: list[pygit2.Oid | str] = list(parents)
    # a str, whatever pygit2's stub says: the object's text, to sign and then store
    payload = str(r.create_commit_string(author, committer, message, tree, heads))
    signature = identity.sign(how, payload.encode("utf-8"))
    try:
        return r.create_commit_with_signature(payload, signature)
    except pygit2.GitError as err:
        raise GitFailure(f"storing the signed commit: {describe(err)}") from None


def head_id(repo: GitRepo) -> str | None:
    """The commit HEAD names now, or None on a branch with no commit yet."""
    commit = resolve_commit(repo, "HEAD")
    return None if commit is None else str(commit.id)


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


def check_out_paths(repo: GitRepo, files: dict[str, bytes]) -> None:
    """Bring the index entries and working-tree files of `files` in line with HEAD,
    where a crash left them behind (taking over a lock a dead omh process left).
    A working-tree file or an index entry that exists is left alone (a user's own,
    written or staged since); nothing follows a symlink."""
    r = repo.repo
    refuse_other_index(repo)
    lock = IndexLock(repo.git_dir)
    lock.acquire()
    undo = WorkdirUndo(repo.workdir)
    try:
        index = _read_index(repo)
        head = resolve_commit(repo, "HEAD")
        for path in files:
            why = _tree_obstacle(head.tree if head is not None else None, path)
            why = why or _index_obstacle(index, path)
            if why is None and repo.workdir is not None:
                why = disk_obstacle(repo.workdir, path, None)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        # An entry the index holds already is the user's (staged since the crash):
        # like a working-tree file that exists, it is left alone.
        blobs = {path: r.create_blob(data) for path, data in files.items()
                 if path not in index}
        staged = _stage(lock, blobs, ())
        if repo.workdir is not None:
            for path, data in files.items():
                if not os.path.lexists(repo.workdir / path):
                    undo.write(path, as_checked_out(repo, path, data))
        lock.commit(staged)
    except BaseException as err:
        lock.discard()
        undo.run()
        lock.release()
        if isinstance(err, (pygit2.GitError, OSError, KeyError)):
            raise GitFailure(
                f"bringing {', '.join(files)} in line with HEAD failed "
                f"({describe(err, repo.git_dir)}); "
                "nothing was changed"
            ) from None
        raise


def finish_interrupted(repo: GitRepo) -> str | None:
    """Finish the commit an omh process landed before it was killed: the branch
    moved, but the index and working tree of the commit's paths were left as they
    were (and git's index lock with them, so the user's next `git commit -a` would
    drop the change once they removed it). Each path's index entry and file are
    brought to the commit's — only where they still hold what the commit's parent
    had (or nothing, for a path it adds): anything else is the user's and stays.
    Then the lock is released.

    The job is the one recorded in `omh-unfinished.json` before the branch moved
    (it outlives a lock the user removed by hand). It is finished only while HEAD,
    on whatever branch, is exactly the landed commit. Once HEAD is elsewhere (the
    user committed on, checked out another branch, reverted, reset), the index and
    working tree are the user's: nothing is finished, the job is dropped with a
    warning naming the commit (logged: one line on stderr); a job whose commit no branch
    holds never landed and is dropped quietly. A running omh process's own job is
    never touched, and nothing is locked unless a job is recorded or `index.lock`
    is provably a dead omh process's (a lock left before its branch moved is only
    released). The commit finished, or None. A failure keeps the lock (marked
    abandoned) and the job, so that running the command again finishes it."""
    lock = IndexLock(repo.git_dir)
    recorded = lock.unfinished.exists()
    if not recorded and not lock.left_by_dead_omh():
        return None
    found = lock.read_unfinished()
    if found is not None and lock.unfinished_is_live(found):
        return None  # its owner is still at work, and holds the index lock
    lock.acquire()  # a dead process's landed commit is kept in lock.unfinished
    r = repo.repo
    landed = _landed(lock.read_unfinished())
    where = _where_landed(r, landed[2]) if landed is not None else "never"
    if landed is None or where != "here":
        lock.drop_unfinished()
        lock.release()
        if landed is not None and where == "elsewhere":
            _log.warning(
                "omh: an interrupted omh command had committed %s on %s without updating "
                "the index and working tree; HEAD is at %s now, so omh left both as they "
                "are: check `git status` before you commit", landed[2][:12],
                landed[0].removeprefix("refs/heads/"),
                _head_name(r))
        return None
    branch, old, new = landed
    undo = WorkdirUndo(repo.workdir)
    try:
        index = _read_index(repo)
        new_tree = r[new].peel(pygit2.Commit).tree
        if old is None:
            diff = new_tree.diff_to_tree(swap=True)
        else:
            diff = r[old].peel(pygit2.Commit).tree.diff_to_tree(new_tree)
        blobs: dict[str, pygit2.Oid] = {}
        delete: list[str] = []
        writes: list[tuple[str, bytes, bytes | None]] = []
        removals: list[tuple[str, bytes]] = []
        for delta in diff.deltas:
            before = delta.old_file if int(delta.old_file.mode) in _REGULAR else None
            after = delta.new_file if int(delta.new_file.mode) in _REGULAR else None
            if before is None and after is None:
                continue
            path = str(after.path if after is not None else delta.old_file.path)
            entry = _entry(index, path)
            ours = entry.id == before.id if entry is not None and before is not None \
                else entry is None and before is None
            old_bytes = r[before.id].read_raw() if before is not None else None
            if after is not None:
                if ours:
                    blobs[path] = after.id
                writes.append((path, r[after.id].read_raw(), old_bytes))
            elif before is not None and old_bytes is not None:
                if entry is not None and ours:
                    delete.append(path)
                removals.append((path, old_bytes))
        staged = _stage(lock, blobs, tuple(delete))
        faults.point(faults.FINISH)
        for path, data, replaceable in writes:
            undo.write(path, data, replaceable)
        for path, data in removals:
            undo.delete(path, data)
        lock.commit(staged)
        lock.drop_unfinished()  # killed just before: finishing again changes nothing
    except BaseException as err:
        lock.discard()
        undo.run()
        lock.abandon()  # the lock and the job stay: the next run finishes it
        if isinstance(err, (pygit2.GitError, OSError, KeyError, ValueError)):
            reason = describe(err, repo.git_dir)
            raise GitFailure(
                f"an interrupted omh command left its commit {new[:12]} on {branch} "
                f"unfinished, and finishing it failed ({reason}); run the command again"
            ) from None
        raise
    return new


def _entry(index: pygit2.Index, path: str) -> pygit2.IndexEntry | None:
    try:
        return index[path]
    except KeyError:
        return None


def _landed(landed: object) -> tuple[str, str | None, str] | None:
    """The move a killed omh process recorded: (branch, the commit it pointed at,
    the new commit), or None."""
    if not isinstance(landed, dict):
        return None
    branch, old, new = landed.get("branch"), landed.get("old"), landed.get("new")
    if not isinstance(branch, str) or not isinstance(new, str) or not (
            old is None or isinstance(old, str)):
        return None
    return branch, old, new


def _where_landed(r: pygit2.Repository, new: str) -> str:
    """"here" when HEAD is exactly the landed commit `new` (whatever its branch is
    called now); "never" when no branch holds `new` (the move never happened, or
    the user dropped the commit: the index is theirs either way, nothing was left
    half-done); "elsewhere" when a branch holds it but HEAD is not it."""
    try:
        wanted = pygit2.Oid(hex=new)
        head = None if r.head_is_unborn else r.head.target
        if head == wanted:
            return "here"
        tips = [head] + [r.references[name].resolve().target
                         for name in r.references if name.startswith("refs/heads/")]
        for tip in tips:
            if isinstance(tip, pygit2.Oid) and (tip == wanted or r.descendant_of(tip, wanted)):
                return "elsewhere"
    except (pygit2.GitError, KeyError, ValueError):
        return "elsewhere"  # cannot tell: say so rather than finish or stay silent
    return "never"


def _head_name(r: pygit2.Repository) -> str:
    try:
        if r.head_is_unborn:
            return "an unborn branch"
        name = "a detached HEAD" if r.head_is_detached else r.head.shorthand
        return f"{str(r.head.target)[:12]} ({name})"
    except pygit2.GitError:
        return "an unreadable HEAD"

