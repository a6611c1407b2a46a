"""All git access, over libgit2 (pygit2). No `git` subprocess anywhere in the product.

pygit2 lives only in this module; the rest of the package talks to
:class:`GitRepo` and plain paths.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omh_git_memory import faults
from omh_git_memory.errors import GitFailure, NotARepository


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


def open_repo(start: Path) -> GitRepo:
    """Discover the repository holding `start` (any subdirectory or linked worktree)."""
    try:
        found = pygit2.discover_repository(str(start))
    except pygit2.GitError as err:
        raise GitFailure(f"looking for a git repository from {start}: {err}") from None
    if found is None:
        raise NotARepository(
            f"{start} is not inside a git repository; cd into one, or run `git init` first"
        )
    try:
        # Open from `start`, not from the git dir found: only then does libgit2 see a
        # `.git` file, so a `--separate-git-dir` checkout is its own working tree.
        repo = pygit2.Repository(str(start))
    except pygit2.GitError as err:
        raise GitFailure(f"opening the git repository at {found}: {err}") from None
    git_dir = Path(repo.path).resolve()
    workdir = Path(repo.workdir).resolve() if repo.workdir else None
    return GitRepo(repo=repo, git_dir=git_dir, common_dir=_common_dir(git_dir), workdir=workdir)


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
    repository shares. None before the first commit (or when history is unreadable)."""
    try:
        if repo.repo.head_is_unborn:
            return None
        walker = repo.repo.walk(repo.repo.head.target)
        walker.simplify_first_parent()
        roots = [str(commit.id) for commit in walker if not commit.parent_ids]
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return roots[0] if roots else None


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
    return open_repo(path)


@dataclass(frozen=True)
class TreeFile:
    """A file in a commit's tree."""

    path: str  # repository-relative, POSIX
    blob_id: str
    data: bytes | None  # None when the entry is not a regular file
    kind: str  # "file", "symlink", "submodule"


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


def files_under(repo: GitRepo, commit: pygit2.Commit | None, prefix: str) -> list[TreeFile]:
    """Every file below directory `prefix` in `commit`'s tree, read without touching
    the working tree or the index."""
    if commit is None:
        return []
    try:
        entry = commit.tree[prefix]
    except KeyError:
        return []
    if not isinstance(entry, pygit2.Tree):
        return []
    found: list[TreeFile] = []
    _walk(repo.repo, entry, prefix, found)
    return found


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str, out: list[TreeFile]) -> None:
    for entry in tree:
        path = f"{prefix}/{entry.name}"
        mode = entry.filemode
        if mode == pygit2.enums.FileMode.TREE:
            _walk(repo, repo[entry.id].peel(pygit2.Tree), path, out)
        elif mode == pygit2.enums.FileMode.LINK:
            out.append(TreeFile(path, str(entry.id), None, "symlink"))
        elif mode == pygit2.enums.FileMode.COMMIT:
            out.append(TreeFile(path, str(entry.id), None, "submodule"))
        else:
            out.append(TreeFile(path, str(entry.id), repo[entry.id].read_raw(), "file"))


def path_in_tree(commit: pygit2.Commit | None, path: str) -> bool:
    if commit is None:
        return False
    try:
        commit.tree[path]
    except KeyError:
        return False
    return True


def path_is_dirty(repo: GitRepo, path: str) -> bool:
    """True when `path` exists in the index or the working tree."""
    index = repo.repo.index
    index.read(False)
    if path in index:
        return True
    return repo.workdir is not None and os.path.lexists(repo.workdir / path)


@dataclass(frozen=True)
class Change:
    """Files to add (path → bytes) and paths to delete, in one commit."""

    add: dict[str, bytes]
    delete: tuple[str, ...]
    message: str


def commit_change(repo: GitRepo, change: Change) -> str:
    """Commit `change` on the current branch without touching other work, then bring
    the index entries and working-tree files of exactly those paths in line.

    git's index lock (`index.lock`) is held from before the branch moves until the
    new index is in place, so no `git commit` can slip in between and commit a
    tree that lacks the change. The branch moves only if it still points where it
    did (compare-and-swap). Any failure before the working tree is written leaves
    the repository as it was: a moved branch is moved back, the lock released.
    """
    r = repo.repo
    if r.head_is_detached:
        raise GitFailure("HEAD is detached; check out a branch first (git switch <branch>)")
    branch = r.references["HEAD"].target
    assert isinstance(branch, str)
    try:
        signature = r.default_signature
    except (KeyError, pygit2.GitError):
        raise GitFailure(
            "git does not know who you are: set it with git config user.name 'Your Name' "
            "and git config user.email you@example.com"
        ) from None
    lock = _IndexLock(repo.git_dir)
    lock.acquire()
    moved: tuple[pygit2.Oid, pygit2.Oid | None] | None = None
    try:
        ref = r.references.get(branch)
        parent = ref.target if ref is not None else None
        assert parent is None or isinstance(parent, pygit2.Oid)
        tree = pygit2.Index()
        if parent is not None:
            tree.read_tree(r[parent].peel(pygit2.Commit).tree)
        blobs = {path: r.create_blob(data) for path, data in change.add.items()}
        faults.point("commit:blobs")
        for path, blob in blobs.items():
            tree.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        for path in change.delete:
            tree.remove(path)
        staged = lock.stage(blobs, change.delete)
        new = r.create_commit(
            None, signature, signature, change.message, tree.write_tree(r),
            [parent] if parent is not None else [],
        )
        faults.point("commit:object")
        try:
            if ref is None:
                r.references.create(branch, new)
            else:
                ref.set_target(new, f"omh: {change.message.splitlines()[0]}")
        except (pygit2.GitError, OSError) as err:
            # GitError when the branch moved; OSError when git holds the ref's lock.
            raise GitFailure(
                f"could not move {branch}: {err} (another process committed meanwhile?); "
                "nothing was changed, run the command again"
            ) from None
        moved = (new, parent)
        faults.point("commit:ref")
        lock.commit(staged)
    except BaseException as err:
        lock.release()
        if moved is not None:
            _move_back(r, branch, *moved)
        if isinstance(err, (pygit2.GitError, OSError)):
            raise GitFailure(f"updating the index failed ({err}); the commit was undone") from None
        raise
    faults.point("commit:index")
    try:
        _update_workdir(repo, change)
    except OSError as err:
        with contextlib.suppress(pygit2.GitError, OSError):
            _forget_added(repo, change)
        _move_back(r, branch, new, parent)
        raise GitFailure(
            f"writing the working tree failed ({err.strerror}); the commit was undone"
        ) from None
    faults.point("commit:workdir")
    return str(new)


class _IndexLock:
    """git's own lock on the index: `index.lock`, created exclusively. The new index
    is written beside it and renamed over the lock into place, as git does. A lock
    left by an omh process that died (its pid recorded beside it) is taken over."""

    def __init__(self, git_dir: Path) -> None:
        self.index = git_dir / "index"
        self.path = git_dir / "index.lock"
        self.owner = git_dir / "omh-index.lock.pid"
        self.held = False

    def acquire(self) -> None:
        self._clear_stale()
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise GitFailure(
                f"{self.path} exists: another git command is running, or one crashed; wait "
                "for it, or remove the file if no git command is running"
            ) from None
        except OSError as err:
            raise GitFailure(f"cannot lock the index at {self.path}: {err.strerror}") from None
        os.close(fd)
        self.held = True
        self.owner.write_text(str(os.getpid()))

    def _clear_stale(self) -> None:
        try:
            pid = int(self.owner.read_text().strip())
        except (OSError, ValueError):
            return
        if _alive(pid):
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.owner.unlink()

    def stage(self, blobs: dict[str, pygit2.Oid], delete: tuple[str, ...]) -> Path:
        """Write the index as it must be after the commit, beside the lock."""
        staged = self.path.with_name("omh-index.new")
        if self.index.exists():
            shutil.copyfile(self.index, staged)
        else:
            staged.unlink(missing_ok=True)
        index = pygit2.Index(str(staged))
        for path, blob in blobs.items():
            index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        for path in delete:
            if path in index:
                index.remove(path)
        index.write()
        return staged

    def commit(self, staged: Path) -> None:
        """Put the staged index in place and release the lock, as one rename."""
        os.replace(staged, self.path)
        os.replace(self.path, self.index)
        self.held = False
        with contextlib.suppress(OSError):
            self.owner.unlink()

    def release(self) -> None:
        with contextlib.suppress(OSError):
            self.path.with_name("omh-index.new").unlink()
        if self.held:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.held = False
        with contextlib.suppress(OSError):
            self.owner.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _forget_added(repo: GitRepo, change: Change) -> None:
    index = repo.repo.index
    index.read(False)
    for path in change.add:
        if path in index:
            index.remove(path)
        if repo.workdir is not None:
            with contextlib.suppress(FileNotFoundError):
                (repo.workdir / path).unlink()
    index.write()


def _move_back(r: pygit2.Repository, branch: str, new: pygit2.Oid, old: pygit2.Oid | None) -> None:
    ref = r.references.get(branch)
    if ref is None or ref.target != new:
        return  # somebody moved it since: leave their work alone
    if old is None:
        ref.delete()
    else:
        ref.set_target(old, "omh: undo")


def _update_workdir(repo: GitRepo, change: Change) -> None:
    if repo.workdir is None:
        return
    for path, data in change.add.items():
        target = repo.workdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".omh-tmp-{target.name}")
        tmp.write_bytes(data)
        os.replace(tmp, target)
    for path in change.delete:
        with contextlib.suppress(FileNotFoundError):
            (repo.workdir / path).unlink()


@dataclass(frozen=True)
class TreeEntry:
    path: str
    blob_id: str
    kind: str  # "file", "symlink", "submodule"


def list_tree(repo: GitRepo, commit: pygit2.Commit) -> list[TreeEntry]:
    """Every file of `commit`'s tree with its blob id, without reading any blob."""
    out: list[TreeEntry] = []
    stack: list[tuple[str, pygit2.Tree]] = [("", commit.tree)]
    r = repo.repo
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            path = f"{prefix}{entry.name}"
            mode = entry.filemode
            if mode == pygit2.enums.FileMode.TREE:
                stack.append((path + "/", r[entry.id].peel(pygit2.Tree)))
            elif mode == pygit2.enums.FileMode.LINK:
                out.append(TreeEntry(path, str(entry.id), "symlink"))
            elif mode == pygit2.enums.FileMode.COMMIT:
                out.append(TreeEntry(path, str(entry.id), "submodule"))
            else:
                out.append(TreeEntry(path, str(entry.id), "file"))
    return out


def read_blob(repo: GitRepo, blob_id: str) -> bytes:
    try:
        return repo.repo[blob_id].read_raw()
    except (KeyError, ValueError) as err:
        raise GitFailure(f"reading blob {blob_id}: {err}") from None


def commit_id(commit: pygit2.Commit) -> str:
    return str(commit.id)


def commit_date(commit: pygit2.Commit) -> dt.date:
    """The day the commit was made, in its committer's time zone."""
    tz = dt.timezone(dt.timedelta(minutes=commit.commit_time_offset))
    return dt.datetime.fromtimestamp(commit.commit_time, tz).date()


def config_value(repo: GitRepo, name: str) -> str | None:
    """A git configuration value as git itself would read it, or None."""
    try:
        value = repo.repo.config[name]
    except KeyError:
        return None
    return str(value)


def head_id(repo: GitRepo) -> str | None:
    """The commit HEAD names now, or None on a branch with no commit yet."""
    commit = resolve_commit(repo, "HEAD")
    return None if commit is None else str(commit.id)


def blob_in_tree(commit: pygit2.Commit | None, path: str) -> bytes | None:
    """The content of the file at `path` in `commit`, or None."""
    if commit is None:
        return None
    try:
        entry = commit.tree[path]
    except KeyError:
        return None
    return entry.read_raw() if isinstance(entry, pygit2.Blob) else None


def check_out_paths(repo: GitRepo, files: dict[str, bytes]) -> None:
    """Bring the index entries and working-tree files of `files` in line with HEAD,
    where a crash left them behind (taking over a lock a dead omh process left).
    A working-tree file that exists is left alone."""
    r = repo.repo
    lock = _IndexLock(repo.git_dir)
    lock.acquire()
    try:
        blobs = {path: r.create_blob(data) for path, data in files.items()}
        lock.commit(lock.stage(blobs, ()))
        if repo.workdir is not None:
            for path, data in files.items():
                target = repo.workdir / path
                if not os.path.lexists(target):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
    except (pygit2.GitError, OSError) as err:
        raise GitFailure(f"bringing {', '.join(files)} back in line failed: {err}") from None
    finally:
        lock.release()
