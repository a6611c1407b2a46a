"""`omh init`: the repository's settings file, its ignore file, and the local store.

Safe to run twice: each file is created only when absent, never refreshed. Never
starts a second local store beside the one a moved clone left behind (see adopt.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.adopt import LeftBehind
from omh_git_memory.config import CONFIG_NAME, GITIGNORE, OMH_DIR, config_text, load_config
from omh_git_memory.errors import StoreError
from omh_git_memory.workspace import Workspace


@dataclass(frozen=True)
class InitReport:
    config: Path
    config_created: bool
    gitignore: Path
    gitignore_created: bool
    store: Path
    store_created: bool
    left_behind: list[LeftBehind]  # stores that may be this clone's from before a move


def initialise(ws: Workspace) -> InitReport:
    """Set the repository up. Refuses, before writing anything, to start a second
    local store while the store this clone left behind by moving is waiting to be
    adopted; stores that are only perhaps this clone's come back as hints."""
    hints = ws.left_behind(every=True)
    store_created = ws.local.create_root()
    omh_dir = ws.checkout / OMH_DIR
    try:
        omh_dir.mkdir(exist_ok=True)
    except OSError as err:
        raise StoreError(f"cannot create {omh_dir}: {err.strerror}") from None
    config = omh_dir / CONFIG_NAME
    gitignore = omh_dir / ".gitignore"
    # The repository's name is written once, here, and committed with the file: the
    # topic is then called the same in every clone, whatever its folder is called.
    name = ws.repo.main_checkout.name.removesuffix(".git") or "repo"
    config_created = _create_once(config, config_text(name))
    gitignore_created = _create_once(gitignore, GITIGNORE)
    load_config(ws.checkout)  # an existing file must still be usable: say so now
    return InitReport(
        config, config_created, gitignore, gitignore_created, ws.local.root, store_created,
        hints,
    )


def _create_once(path: Path, text: str) -> bool:
    """Write `path` unless it exists; True when this call created it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    except OSError as err:
        raise StoreError(f"cannot create {path}: {err.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True
