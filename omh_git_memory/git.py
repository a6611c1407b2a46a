"""All git access, over libgit2 (pygit2). No `git` subprocess anywhere in the product.

pygit2 lives only in this module; the rest of the package talks to
:class:`GitRepo` and plain paths.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import os
import secrets
import shutil
import socket
import stat
from collections.abc import Iterator
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
        repo = pygit2.Repository(found)
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
    if path in _read_index(repo):
        return True
    return repo.workdir is not None and os.path.lexists(repo.workdir / path)


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
        raise GitFailure(f"reading the index {repo.git_dir / 'index'}: {_reason(err)}") from None
    return index


def _reason(err: BaseException) -> str:
    """What went wrong, in words, never libgit2's '(no error)' or a bare None."""
    number = err.errno if isinstance(err, OSError) else None
    text = (err.strerror if isinstance(err, OSError) else None) or str(err).strip()
    if number == errno.ENOSPC or "No space left on device" in text:
        return "the disk is full; free some space and run the command again"
    if number == errno.EDQUOT or "quota exceeded" in text.lower():
        return "your disk quota is exceeded; free some space and run the command again"
    if not text or text in ("(no error)", "None"):
        return f"{type(err).__name__} without a reason from libgit2"
    if isinstance(err, OSError) and err.filename:
        return f"{text}: {err.filename}"
    return text


def _kind(mode: int) -> str:
    if mode == pygit2.enums.FileMode.LINK:
        return "a symlink"
    if mode == pygit2.enums.FileMode.COMMIT:
        return "a submodule"
    if mode == pygit2.enums.FileMode.TREE:
        return "a directory"
    return "a file"


def _refusal(here: str, kind: str, where: str, path: str) -> str:
    """Why `path` cannot be written, `here` (itself, or a directory above it) being
    `kind` in `where` (the commit, the index, on disk), and what to do."""
    if kind == "a symlink":
        return (f"{here} is a symlink {where}; omh never writes through a symlink: replace it "
                "with a plain directory" + (" (git rm it and commit)" if where == "in HEAD" else "")
                if here != path else
                f"{here} is a symlink {where}; omh never writes through a symlink: remove it")
    if kind == "a submodule":
        return (f"{here} is a submodule {where}; team notes live in a plain directory: "
                "remove it (git rm) and commit")
    if kind == "another repository":
        return f"{here} is another git repository on disk (it holds .git): move it away"
    if here != path:
        return (f"{here} is {kind} {where}, so nothing can be written below it as {path}: "
                "choose another key, or move it away")
    return f"{path} is {kind} {where}: choose another key, or move it away"


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
            return None if entry.filemode in _REGULAR else _refusal(
                here, _kind(entry.filemode), "in HEAD", path)
        if entry.filemode != pygit2.enums.FileMode.TREE:
            return _refusal(here, _kind(entry.filemode), "in HEAD", path)
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
            return _refusal(here, kind, "staged in the index", path) + (
                f"; unstage it first (git rm --cached {here})")
    if path in index and index[path].mode not in _REGULAR:
        kind = _kind(index[path].mode)
        return _refusal(path, kind, "staged in the index", path) + (
            f"; unstage it first (git rm --cached {path})")
    below = path + "/"
    if any(entry.path.startswith(below) for entry in index):
        return _refusal(path, "a directory", "staged in the index", path)
    return None


def _disk_obstacle(workdir: Path, path: str, data: bytes | None) -> str | None:
    """The same on disk, without following a symlink. A regular file at the path is
    in the way only when `data` is given and the file holds other bytes."""
    current = workdir
    parts = path.split("/")
    for depth, name in enumerate(parts):
        current = current / name
        here = "/".join(parts[: depth + 1])
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None
        except OSError as err:
            return f"{here} cannot be examined: {_reason(err)}"
        if stat.S_ISLNK(info.st_mode):
            return _refusal(here, "a symlink", "on disk", path)
        if depth < len(parts) - 1:
            if not stat.S_ISDIR(info.st_mode):
                return _refusal(here, "a file", "on disk", path)
            if os.path.lexists(current / ".git"):
                return _refusal(here, "another repository", "on disk", path)
        elif not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a special file"
            return _refusal(here, kind, "on disk", path)
        elif data is not None and _read_nofollow(workdir, path) != data:
            return (f"{path} exists on disk with other content, which omh will not "
                    "overwrite: commit it or move it away")
    return None


def write_obstacle(repo: GitRepo, path: str) -> str | None:
    """Why the team layer's file `path` cannot be written as a regular file — a
    symlink, submodule or file in the way in HEAD, the index or on disk — or None."""
    commit = resolve_commit(repo, "HEAD")
    why = _tree_obstacle(commit.tree if commit is not None else None, path)
    why = why or _index_obstacle(_read_index(repo), path)
    if why is None and repo.workdir is not None:
        why = _disk_obstacle(repo.workdir, path, None)
    return why


@dataclass(frozen=True)
class Change:
    """Files to add (path → bytes) and paths to delete, in one commit."""

    add: dict[str, bytes]
    delete: tuple[str, ...]
    message: str


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
    undo = _WorkdirUndo(repo.workdir)
    moved: tuple[pygit2.Oid, pygit2.Oid | None] | None = None
    try:
        index = _read_index(repo)
        ref = r.references.get(branch)
        parent = ref.target if ref is not None else None
        assert parent is None or isinstance(parent, pygit2.Oid)
        old_tree = r[parent].peel(pygit2.Commit).tree if parent is not None else None
        for path, data in change.add.items():
            why = _tree_obstacle(old_tree, path) or _index_obstacle(index, path)
            if why is None and repo.workdir is not None:
                why = _disk_obstacle(repo.workdir, path, data)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        tree = pygit2.Index()
        if old_tree is not None:
            tree.read_tree(old_tree)
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
        _move(r, branch, ref, new, f"omh: {change.message.splitlines()[0]}")
        moved = (new, parent)
        faults.point("commit:ref")
        for path, data in change.add.items():
            undo.write(path, data)
        for path in change.delete:
            undo.delete(path, _blob_at(r, old_tree, path))
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
        reason = _reason(err)
        if reason.startswith(("the disk is full", "your disk quota")):
            raise GitFailure(f"could not move {branch}, nothing was changed: {reason}") from None
        # GitError when the branch moved; OSError when git holds the ref's lock.
        raise GitFailure(
            f"could not move {branch}: {reason} (another process committed meanwhile?); "
            "nothing was changed, run the command again"
        ) from None


def _undo(lock: _IndexLock, undo: _WorkdirUndo, r: pygit2.Repository, branch: str,
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
            kept = _reason(failure)
    lock.release()
    if not isinstance(err, (pygit2.GitError, OSError, GitFailure)):
        return  # KeyboardInterrupt and bugs go on as they are
    what = str(err) if isinstance(err, GitFailure) else _reason(err)
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


def _blob_at(r: pygit2.Repository, tree: pygit2.Tree | None, path: str) -> bytes | None:
    if tree is None:
        return None
    try:
        entry = tree[path]
    except KeyError:
        return None
    return r[entry.id].read_raw() if entry.filemode in _REGULAR else None


class _IndexLock:
    """git's own lock on the index: `index.lock`, created exclusively. The new index
    is staged beside it and renamed into place before the lock is released.

    A lock left by an omh process that died is taken over — but only when it is
    provably that lock: the record beside it (`omh-index.lock.pid`) names the
    process, its host and pid namespace, the lock file's device, inode, size and
    modification time, and a random nonce that the lock file itself holds. A
    live process's lock, git's own lock, or a lock put back by hand after the
    original was removed never matches, and is refused as git refuses it. omh
    processes serialise taking and releasing the lock with an advisory lock on the
    git dir, so two of them never race over one takeover."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self.index = git_dir / "index"
        self.path = git_dir / "index.lock"
        self.owner = git_dir / "omh-index.lock.pid"
        self.staged = git_dir / "omh-index.new"
        self.record: str | None = None

    def acquire(self) -> None:
        with _serialised(self.git_dir):
            self._take_over_stale()
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644)
            except FileExistsError:
                raise GitFailure(
                    f"{self.path} exists: another git command is running, or one crashed; "
                    "wait for it, or remove the file if no git command is running"
                ) from None
            except OSError as err:
                raise GitFailure(f"cannot lock the index at {self.path}: {_reason(err)}") from None
            try:
                nonce = secrets.token_hex(16)
                _write_all(fd, f"omh {os.getpid()} {nonce}\n".encode())
                info = os.fstat(fd)
                record = json.dumps({
                    "pid": os.getpid(), "host": socket.gethostname(), "pidns": _pid_namespace(),
                    "dev": info.st_dev, "ino": info.st_ino, "size": info.st_size,
                    "mtime_ns": info.st_mtime_ns, "nonce": nonce,
                })
                _replace_text(self.owner, record)
            except OSError as err:
                os.close(fd)
                with contextlib.suppress(OSError):
                    self.path.unlink()
                raise GitFailure(f"cannot lock the index at {self.path}: {_reason(err)}") from None
            os.close(fd)
            self.record = record

    def _take_over_stale(self) -> None:
        """Remove `index.lock` if it is provably the one a dead omh process left."""
        try:
            with open(self.owner, "rb") as handle:
                record = json.loads(handle.read(4096))
            pid, nonce = int(record["pid"]), str(record["nonce"])
            identity = (record["dev"], record["ino"], record["size"], record["mtime_ns"])
            same_place = (record["host"], record["pidns"]) == (socket.gethostname(),
                                                              _pid_namespace())
        except (OSError, ValueError, KeyError, TypeError):
            return  # no record, or not one this version wrote: nothing is provable
        if not same_place or _alive(pid):
            return
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return
        try:
            info = os.fstat(fd)
            content = os.read(fd, 4096)
        finally:
            os.close(fd)
        if (stat.S_ISREG(info.st_mode)
                and (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == identity
                and content == f"omh {pid} {nonce}\n".encode()):
            with contextlib.suppress(OSError):
                self.path.unlink()
            with contextlib.suppress(OSError):
                self.owner.unlink()

    def stage(self, blobs: dict[str, pygit2.Oid], delete: tuple[str, ...]) -> Path:
        """Write the index as it must be after the commit, beside the lock."""
        if self.index.exists():
            shutil.copyfile(self.index, self.staged)
        else:
            self.staged.unlink(missing_ok=True)
        index = pygit2.Index(str(self.staged))
        for path, blob in blobs.items():
            index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        for path in delete:
            if path in index:
                index.remove(path)
        index.write()
        return self.staged

    def commit(self, staged: Path) -> None:
        """Put the staged index in place, then release the lock."""
        os.replace(staged, self.index)
        self.release()

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.staged.unlink()

    def release(self) -> None:
        if self.record is None:
            return
        with _serialised(self.git_dir):
            with contextlib.suppress(OSError):
                self.path.unlink()
            with contextlib.suppress(OSError):
                if self.owner.read_text(encoding="utf-8") == self.record:
                    self.owner.unlink()
        self.record = None


@contextlib.contextmanager
def _serialised(git_dir: Path) -> Iterator[None]:
    """An advisory lock on the git dir, among omh processes only (git ignores it),
    released by the kernel if the process dies."""
    fd = os.open(git_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pid_namespace() -> str:
    """Which pid namespace this process lives in ("" where there is no /proc): a pid
    from another namespace (a container sharing the checkout) says nothing here."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _replace_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all (a temporary file renamed over it)."""
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            _write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


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


class _WorkdirUndo:
    """Working-tree writes that never follow a symlink, remembered so that they
    can be undone: files written are removed, directories made are removed if
    empty, files deleted are written back."""

    def __init__(self, workdir: Path | None) -> None:
        self.workdir = workdir
        self.written: list[tuple[str, int]] = []  # path, inode
        self.made: list[str] = []
        self.deleted: list[tuple[str, bytes]] = []

    def write(self, path: str, data: bytes) -> None:
        """Write `path` (whole, through a temporary file) unless it already holds
        `data`."""
        if self.workdir is None or _read_nofollow(self.workdir, path) == data:
            return
        fd = _open_dir(self.workdir, path, self.made)
        assert fd is not None
        try:
            name = path.rsplit("/", 1)[-1]
            tmp = f".omh-tmp-{secrets.token_hex(8)}"
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666,
                          dir_fd=fd)
            try:
                try:
                    _write_all(out, data)
                finally:
                    os.close(out)
                os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=fd)
                raise
            self.written.append((path, os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino))
        finally:
            os.close(fd)

    def delete(self, path: str, committed: bytes | None) -> None:
        """Remove `path` if it is a regular file holding exactly the bytes that were
        committed; anything else is the user's, and stays (untracked)."""
        if self.workdir is None or committed is None:
            return
        if _read_nofollow(self.workdir, path) != committed:
            return
        fd = _open_dir(self.workdir, path, None)
        if fd is None:
            return
        try:
            os.unlink(path.rsplit("/", 1)[-1], dir_fd=fd)
        finally:
            os.close(fd)
        self.deleted.append((path, committed))

    def run(self) -> list[str]:
        """Undo everything; returns the paths that could not be put back."""
        left: list[str] = []
        if self.workdir is None:
            return left
        for path, inode in reversed(self.written):
            try:
                fd = _open_dir(self.workdir, path, None)
                if fd is None:
                    continue
                try:
                    name = path.rsplit("/", 1)[-1]
                    if os.stat(name, dir_fd=fd, follow_symlinks=False).st_ino == inode:
                        os.unlink(name, dir_fd=fd)
                finally:
                    os.close(fd)
            except OSError:
                left.append(path)
        for path in reversed(self.made):
            with contextlib.suppress(OSError):
                fd = _open_dir(self.workdir, path, None)
                if fd is not None:
                    try:
                        os.rmdir(path.rsplit("/", 1)[-1], dir_fd=fd)
                    finally:
                        os.close(fd)
        for path, data in self.deleted:
            try:
                self.write(path, data)
            except OSError:
                left.append(path)
        self.written, self.made, self.deleted = [], [], []
        return left


def _open_dir(workdir: Path, path: str, made: list[str] | None) -> int | None:
    """A descriptor of the directory `path` is in, reached from `workdir` without
    following a symlink. Missing directories are made (and listed in `made`) when
    `made` is given; otherwise a missing one gives None."""
    fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
    parts = path.split("/")[:-1]
    try:
        for depth, name in enumerate(parts):
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if made is None:
                    os.close(fd)
                    return None
                os.mkdir(name, 0o777, dir_fd=fd)
                made.append("/".join(parts[: depth + 1]))
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    here = "/".join(parts[: depth + 1])
                    raise GitFailure(
                        f"{here} is not a plain directory on disk (a symlink?); omh never "
                        "writes through a symlink"
                    ) from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_nofollow(workdir: Path, path: str) -> bytes | None:
    """The bytes of the regular file `path`, or None (missing, or not a regular file
    reached through plain directories)."""
    try:
        fd = _open_dir(workdir, path, None)
    except (OSError, GitFailure):
        return None
    if fd is None:
        return None
    try:
        inner = os.open(path.rsplit("/", 1)[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                        dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(inner).st_mode):
            return None
        chunks = []
        while chunk := os.read(inner, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(inner)


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
    A working-tree file that exists is left alone; nothing follows a symlink."""
    r = repo.repo
    lock = _IndexLock(repo.git_dir)
    lock.acquire()
    undo = _WorkdirUndo(repo.workdir)
    try:
        index = _read_index(repo)
        head = resolve_commit(repo, "HEAD")
        for path in files:
            why = _tree_obstacle(head.tree if head is not None else None, path)
            why = why or _index_obstacle(index, path)
            if why is None and repo.workdir is not None:
                why = _disk_obstacle(repo.workdir, path, None)
            if why is not None:
                raise GitFailure(f"{why}; nothing was changed")
        blobs = {path: r.create_blob(data) for path, data in files.items()}
        staged = lock.stage(blobs, ())
        if repo.workdir is not None:
            for path, data in files.items():
                if not os.path.lexists(repo.workdir / path):
                    undo.write(path, data)
        lock.commit(staged)
    except BaseException as err:
        lock.discard()
        undo.run()
        lock.release()
        if isinstance(err, (pygit2.GitError, OSError)):
            raise GitFailure(
                f"bringing {', '.join(files)} in line with HEAD failed ({_reason(err)}); "
                "nothing was changed"
            ) from None
        raise
