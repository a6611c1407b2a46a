"""Where omh is working: the repository, its settings and its stores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.config import Config, load_config
from omh_git_memory.git import GitRepo, open_repo
from omh_git_memory.store import LocalStore, local_store_root


@dataclass(frozen=True)
class Workspace:
    repo: GitRepo
    checkout: Path  # this worktree's top level
    local: LocalStore

    def config(self) -> Config:
        return load_config(self.checkout)


def open_workspace(start: Path, environ: Mapping[str, str] | None = None) -> Workspace:
    repo = open_repo(start)
    return Workspace(
        repo=repo,
        checkout=repo.require_workdir(),
        local=LocalStore(local_store_root(repo, environ)),
    )
