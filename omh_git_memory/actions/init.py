"""`omh init`: the repository's settings file, its ignore file, and the local store.

Safe to run twice: each file is created only when absent, never refreshed. Never
starts a second local store beside the one a moved clone left behind (see left_behind.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.git import nofollow
from omh_git_memory.model.config import CONFIG_NAME, GITIGNORE, OMH_DIR, config_text, load_config
from omh_git_memory.stores.left_behind import LeftBehind


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
    # Checked first, so a refusal (a link at `.omh`, say) writes nothing at all.
    for file in (CONFIG_NAME, ".gitignore"):
        nofollow.check_writable(ws.checkout, f"{OMH_DIR}/{file}")
    store_created = ws.local.create_root()
    omh_dir = ws.checkout / OMH_DIR
    config = omh_dir / CONFIG_NAME
    gitignore = omh_dir / ".gitignore"
    # The repository's name is written once, here, and committed with the file: the
    # topic is then called the same in every clone, whatever its folder is called.
    name = ws.repo.main_checkout.name.removesuffix(".git") or "repo"
    config_created = _create_once(ws.checkout, CONFIG_NAME, config_text(name))
    gitignore_created = _create_once(ws.checkout, ".gitignore", GITIGNORE)
    load_config(ws.checkout)  # an existing file must still be usable: say so now
    return InitReport(
        config, config_created, gitignore, gitignore_created, ws.local.root, store_created,
        hints,
    )


def _create_once(checkout: Path, name: str, text: str) -> bool:
    """Write `.omh/<name>` unless something is there; True when this call created it.
    The one no-follow write path: a link at `.omh` or at the file is refused."""
    return nofollow.write(checkout, f"{OMH_DIR}/{name}", text.encode("utf-8"),
                          only_if_absent=True)
