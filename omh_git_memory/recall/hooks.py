"""Git hooks that warm the recall index after HEAD moves.

The hooks are an enhancement only: recall builds the index of a commit on
demand, so it is correct with no hook installed. `install` honours
`core.hooksPath` and never replaces a hook it did not write without saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from omh_git_memory.git import nofollow
from omh_git_memory.git.config import config_value
from omh_git_memory.git.repository import GitRepo
from omh_git_memory.model.errors import StoreError

HOOK_NAMES: Final = ("post-merge", "post-checkout", "post-rewrite")
MARKER: Final = "installed by omh hooks install"


@dataclass(frozen=True)
class HookResult:
    name: str
    path: Path
    action: str  # "installed", "updated", "unchanged", "skipped"
    reason: str = ""


def hooks_dir(repo: GitRepo) -> Path:
    """Where git looks for hooks: `core.hooksPath` (relative to the worktree top
    level, as git reads it) or the common git dir's `hooks/`."""
    root, folder = hooks_location(repo)
    return root / folder if folder else root


def hooks_location(repo: GitRepo) -> tuple[Path, str]:
    """The hooks folder as (a folder trusted as named, the path below it that is
    walked without following a link): the git dir and `hooks`, or — for a
    `core.hooksPath` — the path git means, resolved the way the kernel resolves it
    (see :func:`_place`), below the checkout or the git dir when it lies in either,
    however it is spelled; a folder outside both is trusted as the user named it."""
    configured = config_value(repo, "core.hooksPath")
    if not configured:
        return repo.common_dir, "hooks"
    path = Path(os.path.expanduser(configured))
    base = repo.workdir or repo.common_dir
    if not path.is_absolute():
        path = base / path
    roots = [base, repo.common_dir, repo.git_dir]
    return _place(path, roots)


_MAX_LINKS: Final = 40  # as the kernel's ELOOP limit


def _place(path: Path, roots: list[Path]) -> tuple[Path, str]:
    """`path` (absolute) as (trusted folder, rest): its components taken one by one,
    as the kernel does (`..` is the parent of the real folder reached so far, a
    link outside the trusted roots is followed), until the walk enters one of
    `roots` (by its real path): from there on nothing is followed — the rest, up to
    and including the first link in the way, is left to the no-follow walk, which
    refuses that link. So a linked spelling of the checkout, a `sub/..` or a link
    outside that points inside can never make a committed link look trusted."""
    real_roots = sorted({Path(os.path.realpath(r)) for r in roots},
                        key=lambda r: len(r.parts), reverse=True)

    def home(folder: Path) -> Path | None:
        return next((r for r in real_roots if folder.is_relative_to(r)), None)

    todo = list(path.parts[1:])
    here = Path(path.anchor)  # always a real folder: no link in it
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            here = here.parent
            continue
        step = here / part
        if not step.is_symlink():
            here = step
            continue
        root = home(here)
        if root is not None:  # a link inside the checkout or git dir: never followed
            rest = [] if ".." in todo else todo
            return root, "/".join([*here.relative_to(root).parts, part, *rest])
        hops += 1
        if hops > _MAX_LINKS:
            raise StoreError(f"core.hooksPath {path} goes through too many symbolic links; "
                             "fix it with `git config core.hooksPath DIR`")
        target = Path(os.readlink(step))
        if target.is_absolute():
            here = Path(target.anchor)
        todo = [*target.parts[1 if target.is_absolute() else 0:], *todo]
    root = home(here)
    if root is not None:
        return root, here.relative_to(root).as_posix() if here != root else ""
    return here, ""


def hook_text(name: str) -> str:
    packaged = Path(str(resources.files("omh_git_memory"))) / "_hooks" / name
    source = Path(__file__).resolve().parents[2] / "hooks" / name
    for path in (packaged, source):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise StoreError(f"the {name} hook script is missing from this installation; reinstall omh")


_LIMIT: Final = 1 << 20  # a hook script is small; a larger file is not one to compare


def install(repo: GitRepo, force: bool = False) -> list[HookResult]:
    """Write each hook omh ships, through the one no-follow write path: a link at a
    hook's path (or on the way to it), a FIFO, a folder or a device there is
    refused in one line, never written through, read from or replaced."""
    root, folder = hooks_location(repo)
    results = []
    for name in HOOK_NAMES:
        rel = f"{folder}/{name}" if folder else name
        path = root / rel
        text = hook_text(name)
        found = nofollow.read(root, rel, _LIMIT)
        if found is not None:
            current = found.decode("utf-8", errors="replace")
            if current == text:
                results.append(HookResult(name, path, "unchanged"))
                continue
            if MARKER not in current and not force:
                results.append(HookResult(
                    name, path, "skipped",
                    "a hook omh did not write is there; add `omh memory reindex` to it, "
                    "or pass --force to replace it"))
                continue
            action = "updated"
        else:
            action = "installed"
        nofollow.write(root, rel, text.encode("utf-8"), new_mode=0o755, executable=True)
        results.append(HookResult(name, path, action))
    return results
