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

from omh_git_memory.errors import StoreError
from omh_git_memory.git import GitRepo, config_value

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
    configured = config_value(repo, "core.hooksPath")
    if configured:
        path = Path(os.path.expanduser(configured))
        if not path.is_absolute():
            path = (repo.workdir or repo.common_dir) / path
        return path
    return repo.common_dir / "hooks"


def hook_text(name: str) -> str:
    packaged = Path(str(resources.files("omh_git_memory"))) / "_hooks" / name
    source = Path(__file__).resolve().parents[2] / "hooks" / name
    for path in (packaged, source):
        if path.is_file():
            return path.read_text(encoding="utf-8")
    raise StoreError(f"the {name} hook script is missing from this installation; reinstall omh")


def install(repo: GitRepo, force: bool = False) -> list[HookResult]:
    folder = hooks_dir(repo)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StoreError(f"cannot create the hooks directory {folder}: {err.strerror}") from None
    results = []
    for name in HOOK_NAMES:
        path = folder / name
        text = hook_text(name)
        if path.exists():
            current = path.read_text(encoding="utf-8", errors="replace")
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
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
        results.append(HookResult(name, path, action))
    return results
