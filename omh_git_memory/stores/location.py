"""Where a clone's local store lives, and its folder's name.

Location: `$OMH_LOCAL_STORE` when set, else `$OMH_HOME/memory/<repo-id>`
(`OMH_HOME` defaults to `~/.omh`). `<repo-id>` is the main checkout's name and
a digest of its path, derived from the common git dir, so every worktree of a
clone shares one store and two clones called `api` get two. A location that
depends on the working directory, or lies in the repository itself, is refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from omh_git_memory.git.repository import GitRepo, checkouts
from omh_git_memory.model.errors import StoreError
from omh_git_memory.model.keys import slug


def local_store_root(repo: GitRepo, environ: Mapping[str, str] | None = None) -> Path:
    """Where this clone's local notes live. Refuses a location that depends on the
    working directory (a relative path) or that lies in the repository itself,
    where `git add -A` would publish the notes and a checkout could overwrite them."""
    env = os.environ if environ is None else environ
    override = env.get("OMH_LOCAL_STORE")
    if override:
        root, named_by = _absolute("OMH_LOCAL_STORE", override), "OMH_LOCAL_STORE"
    else:
        home = _absolute("OMH_HOME", env["OMH_HOME"]) if env.get("OMH_HOME") else None
        named_by = "OMH_HOME" if home is not None else "HOME"
        root = (home or Path.home().absolute() / ".omh") / "memory" / repo_id(repo)
    _refuse_inside_repository(repo, root, named_by)
    return root


def refuse_a_missing_home(environ: Mapping[str, str] | None = None) -> None:
    """Before the default store is first made under `~/.omh`: refuse when the home
    folder itself does not exist (`HOME=/nonexistent`, as service accounts have)
    rather than make it. A folder OMH_HOME names (or OMH_LOCAL_STORE, whose store
    is made without this check) is the user's choice, and is made."""
    env = os.environ if environ is None else environ
    if env.get("OMH_HOME"):
        return
    fix = ("set OMH_LOCAL_STORE to an absolute folder for this clone's local notes (or "
           "OMH_HOME for all of omh's)")
    named = os.environ.get("HOME")
    if named is not None and not os.path.isabs(named):  # "" reads as `/`, `..` as a cwd's
        raise StoreError(f"HOME={named!r} is not an absolute path, so the default store "
                         f"would land somewhere else from each folder; {fix}")
    home = Path.home().absolute()
    if not home.is_dir():
        raise StoreError(f"the home folder {home} (HOME) does not exist, and omh does not "
                         f"make one; {fix}")


def _absolute(name: str, value: str) -> Path:
    try:
        path = Path(value).expanduser()
    except RuntimeError:  # `~someone` with no such user
        raise StoreError(f"{name}={value} names a home directory that does not exist; "
                         f"set {name} to an absolute path") from None
    if not path.is_absolute():
        raise StoreError(
            f"{name}={value} is a relative path, so it would name another folder from each "
            f"working directory (and can land inside the checkout); set {name} to an "
            "absolute path"
        )
    return Path(os.path.normpath(path))


def _refuse_inside_repository(repo: GitRepo, root: Path, named_by: str) -> None:
    # Compare real paths, so a symlink into the checkout is caught as well.
    try:
        real = root.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise StoreError(f"the local store {root} cannot be resolved ({err}); "
                         f"set {named_by} to a plain folder") from None
    via = "" if real == root else f" (through a symlink, it is {real})"
    fix = f"set {named_by} to a folder outside the repository"
    if real.is_relative_to(repo.common_dir) or real.is_relative_to(repo.git_dir):
        raise StoreError(f"the local store {root}{via} is inside the git directory "
                         f"{repo.common_dir}, which git prunes and a clone never carries; {fix}")
    for checkout in checkouts(repo):
        if real.is_relative_to(checkout):
            raise StoreError(f"the local store {root}{via} is inside the checkout {checkout}, "
                             f"where `git add -A` would publish its notes; {fix}")
        if checkout.is_relative_to(real):
            raise StoreError(f"the local store {root}{via} holds the checkout {checkout}, so "
                             f"the repository's own files would read as notes; {fix}")
    if repo.common_dir.is_relative_to(real):
        raise StoreError(f"the local store {root}{via} holds the git directory "
                         f"{repo.common_dir}, so a key could name a file inside it; {fix}")


def repo_id(repo: GitRepo) -> str:
    return store_id(repo.main_checkout)


def store_id(checkout: Path) -> str:
    """The store's folder name for a clone whose main checkout is `checkout`."""
    name = slug(checkout.name.removesuffix(".git")) or "repo"
    digest = hashlib.sha256(str(checkout).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{name}-{digest}"

