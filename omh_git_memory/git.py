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
    stack: list[tuple[str, pygit2.Tree]] = [(prefix, top)]
    while stack:  # iterative: a tree nested thousands deep must not exhaust the stack
        here, current = stack.pop()
        for entry in current:
            path = f"{here}/{entry.name}"
            mode = entry.filemode
            if mode == pygit2.enums.FileMode.TREE:
                stack.append((path, _load_tree(repo, commit, entry.id, path)))
            elif mode in _KINDS:
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
    index = repo.repo.index
    index.read(False)
    if path in index:
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


def worktree_blob_id(repo: GitRepo, file: Path, as_path: str) -> str:
    """The blob id `git add` would give `file` if it were at `as_path`: the
    repository's filters (line endings) applied, as git applies them."""
    try:
        return str(repo.repo.hashfile(str(file), as_path=as_path))
    except (pygit2.GitError, OSError) as err:
        raise GitFailure(f"hashing {as_path} as git would: {err}") from None


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
        tree = _Index()
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
        index = _Index(str(staged))
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
    stack: list[tuple[str, pygit2.Tree]] = [("", _tree_of(repo, commit))]
    while stack:  # iterative: a tree nested thousands deep must not exhaust the stack
        prefix, tree = stack.pop()
        for entry in tree:
            path = f"{prefix}{entry.name}"
            mode = entry.filemode
            if mode == pygit2.enums.FileMode.TREE:
                stack.append((path + "/", _load_tree(repo, commit, entry.id, path)))
            elif mode in _KINDS:
                out.append(TreeEntry(path, str(entry.id), _KINDS[mode]))
            else:
                out.append(TreeEntry(path, str(entry.id), "file"))
    return out


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
