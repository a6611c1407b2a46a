"""Opening a repository as git would from a directory (any subdirectory or linked
worktree, and the environment that redirects git), the checkouts of a clone, and
making a new repository (the demo's).

pygit2 lives only in the modules of this folder; the rest of the package talks to
:class:`GitRepo` and plain paths. No `git` subprocess anywhere in the product.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omh_git_memory.model.errors import GitFailure, NotARepository


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
