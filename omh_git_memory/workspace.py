"""Where omh is working: the repository, its settings and its stores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.config import Config, load_config
from omh_git_memory.git import GitRepo, open_repo
from omh_git_memory.graph import Graph
from omh_git_memory.layers import Layer
from omh_git_memory.store import LocalStore, local_store_root
from omh_git_memory.team import NOTES_DIR, scan_team


@dataclass(frozen=True)
class Workspace:
    repo: GitRepo
    checkout: Path  # this worktree's top level
    local: LocalStore

    def config(self) -> Config:
        return load_config(self.checkout)

    def graph(self, rev: str = "HEAD", local: bool = True) -> Graph:
        """Every note: the team layer at `rev` and (unless `local` is False) the local one."""
        team = scan_team(self.repo, rev)
        return Graph.of(team, self.local.scan() if local else [])

    def worktree_team_graph(self) -> Graph:
        """The team notes as they are in this checkout's working tree (before a commit)."""
        return Graph.of(LocalStore(self.checkout / NOTES_DIR, Layer.TEAM).scan())


def open_workspace(start: Path, environ: Mapping[str, str] | None = None) -> Workspace:
    repo = open_repo(start)
    return Workspace(
        repo=repo,
        checkout=repo.require_workdir(),
        local=LocalStore(local_store_root(repo, environ)),
    )
