"""Where omh is working: the repository, its settings and its stores."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from omh_git_memory.git.history import commit_at, head_id
from omh_git_memory.git.repository import GitRepo, open_repo
from omh_git_memory.git.trees import blob_in_tree, kind_at
from omh_git_memory.model.config import Config, load_config, parse_committed_config
from omh_git_memory.model.errors import ConfigError
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES
from omh_git_memory.recall.build import Progress, cached_snapshot, snapshot_for
from omh_git_memory.recall.cache_files import collector_paused
from omh_git_memory.recall.local_index import LocalIndex
from omh_git_memory.recall.local_notes import LocalLayer, NoteCache, local_docs, notes_cache
from omh_git_memory.recall.snapshot import Snapshot
from omh_git_memory.recall.sources import CONFIG_PATH
from omh_git_memory.stores.adopt import check_owner
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.left_behind import (
    LeftBehind,
    find_left_behind,
    holds_a_note,
    refuse_a_second_store,
)
from omh_git_memory.stores.record import keep_record

if TYPE_CHECKING:
    from omh_git_memory.recall.semantic import Embedder, SemanticView
from omh_git_memory.expiry.stale import TreeFacts
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.stores.location import local_store_root, refuse_a_missing_home
from omh_git_memory.stores.reading import StoredNote
from omh_git_memory.stores.store import LocalStore
from omh_git_memory.stores.team import scan_team, scan_worktree_team


class Settings(StrEnum):
    """Which settings a pinned workspace reads (`Pinned.settings`)."""

    CHECKOUT = "checkout"  # HEAD's commit: this checkout's .omh/memory.toml, as recall
    COMMITTED = "committed"  # the .omh/memory.toml the commit holds
    DEFAULTS = "defaults"  # the commit holds none: omh's defaults, as its clone would


@dataclass(frozen=True)
class Pinned:
    """A past commit read instead of HEAD (`--ref REV`): its team layer only, as a
    clone checked out there would see it, under that commit's own settings."""

    rev: str  # as asked
    commit: str  # the full commit id it named when asked
    settings: Settings
    config: Config


@dataclass(frozen=True)
class Workspace:
    repo: GitRepo
    checkout: Path  # this worktree's top level
    local: LocalStore
    mounted: bool = False  # the local store is named by OMH_LOCAL_STORE, not by the path
    notes: NoteCache | None = None  # the local notes as parsed before
    index: LocalIndex | None = None  # the local notes' words, for recall
    pinned: Pinned | None = None  # set: the team layer of that commit, and no local layer

    def at(self, rev: str) -> Workspace:
        """This workspace read at the commit `rev` names (`--ref`): the team notes and
        stubs of that commit, as a clone checked out there sees them, and no local
        note. Its settings are the commit's `.omh/memory.toml` (omh's defaults when it
        holds none) — this checkout's own at HEAD's commit, so that `--ref HEAD`
        answers as recall does, less the local notes, from the same index.
        NoSuchCommit when `rev` names no commit; ConfigError when the commit's
        settings cannot be read."""
        commit = commit_at(self.repo, rev)
        sha = str(commit.id)
        if sha == head_id(self.repo):
            settings, config = Settings.CHECKOUT, self.config()
        else:
            raw = blob_in_tree(commit, CONFIG_PATH)
            kind = kind_at(commit, CONFIG_PATH) if raw is None else "file"
            if kind not in (None, "file"):  # it holds one, only not one omh reads
                raise ConfigError(
                    f"{CONFIG_PATH} at {sha[:12]} is a {kind}, not a regular file: omh reads "
                    "a commit's settings only from a regular file (it never follows a "
                    "symlink in a commit); name another commit")
            if raw is None:
                settings, config = Settings.DEFAULTS, Config(keys=DEFAULT_KEY_TEMPLATES,
                                                             path=None)
            else:
                settings = Settings.COMMITTED
                config = parse_committed_config(raw, f"{CONFIG_PATH} at {sha[:12]}")
        return dataclasses.replace(self, pinned=Pinned(rev, sha, settings, config))

    def _rev(self, rev: str | None) -> str:
        """The commit a method reads: the one asked, else the pinned one, else HEAD."""
        if rev is not None:
            return rev
        return self.pinned.commit if self.pinned is not None else "HEAD"

    def local_entries(self) -> list[StoredNote]:
        """The local store's files, or none when pinned to a commit (`--ref`)."""
        return [] if self.pinned is not None else self.local.scan()

    def left_behind(self, every: bool = False) -> list[LeftBehind]:
        """Stores this clone may have left behind by moving, while its own store holds
        no note. Only the certain ones unless `every` — or unless the store does not
        exist yet, when the hints matter most."""
        if self.mounted or holds_a_note(self.local.root):
            return []
        every = every or not self.local.root.is_dir()
        return find_left_behind(self.repo, self.local.root, every)

    def config(self) -> Config:
        return self.pinned.config if self.pinned is not None else load_config(self.checkout)

    def graph(self, rev: str | None = None, local: bool = True) -> Graph:
        """Every note: the team layer at `rev` (written and derived; by default HEAD,
        or the pinned commit) and, unless `local` is False or the workspace is
        pinned, the local one."""
        rev = self._rev(rev)
        pinned = self.pinned is not None and rev == self.pinned.commit
        team = scan_team(self.repo, rev, rev[:12] if pinned else None)
        local_notes = self.local_entries() if local else []
        snap = self.snapshot(rev)
        return Graph.of(team, local_notes, derived=_derived(snap), clashes=snap.clashes,
                        shadows=_shadows(snap))

    def worktree_team_graph(self) -> Graph:
        """The team notes as they are in this checkout's working tree (before a commit)."""
        team = scan_worktree_team(self.checkout, self.repo)
        snap = self.snapshot("HEAD")
        return Graph.of(team, derived=_derived(snap), clashes=snap.clashes,
                        shadows=_shadows(snap))

    def snapshot(self, rev: str | None = None, progress: Progress | None = None,
                 rebuild: bool = False) -> Snapshot:
        return snapshot_for(self.repo, self.config(), self._rev(rev), progress, rebuild)

    def derived_keys(self, rev: str | None = None) -> set[str]:
        return _derived(self.snapshot(rev))

    def facts(self, rev: str | None = None) -> TreeFacts:
        """What triggers are evaluated against (one tree walk, made on first use)."""
        return TreeFacts(self.repo, self.config(), self._rev(rev))

    def searcher(self, progress: Progress | None = None,
                 local: list[StoredNote] | None = None) -> Searcher:
        """Recall's view: the team layer at HEAD and the local layer as it is now —
        from its index, or (`local`: the local store's files, when the caller has
        read them already) from those; pinned, the team layer of that commit alone."""
        snapshot, layer = self.snapshot(progress=progress), self.local_layer(local)
        with collector_paused():  # its tables: as many objects as documents, no cycle
            return Searcher(snapshot, layer)

    def local_layer(self, local: list[StoredNote] | None = None) -> LocalLayer:
        """The local layer for a searcher: none when pinned to a commit; made from the
        files `local` when given, else read through the store's index."""
        if local is not None or self.pinned is not None or self.index is None:
            return LocalLayer.parsed(local_docs(self.local_entries() if local is None
                                                else local, self.notes))
        return self.index.layer()

    def on_its_own_repository(self) -> Workspace:
        """This workspace with a repository handle of its own, for another thread
        (pygit2's objects are not shared across threads)."""
        return dataclasses.replace(self, repo=open_repo(self.checkout))

    def cached_searcher(self) -> Searcher | None:
        """`searcher()` when the team index of HEAD is in the cache, else None (a
        caller that must answer at once builds it elsewhere)."""
        snapshot = cached_snapshot(self.repo, self.config(), self._rev(None))
        if snapshot is None:
            return None
        layer = self.local_layer()
        with collector_paused():
            return Searcher(snapshot, layer)

    def semantic(self, searcher: Searcher, embedder: Embedder | None = None,
                 progress: Progress | None = None) -> SemanticView:
        """Vectors for `searcher`'s documents (embedding only what is new). Imports
        the model's libraries: call it only when semantic recall is on."""
        from omh_git_memory.recall.semantic import Embedder, SemanticView, vectors_for

        model = embedder or Embedder()
        rows, owner = vectors_for(self.repo, self.config(), searcher.snapshot,
                                  searcher.local_notes, model, progress)
        usable = [d is not None and not d.problem for d in searcher.docs]
        return SemanticView(model, rows, usable, owner)


def _derived(snap: Snapshot) -> set[str]:
    return {d.key for _, d in snap.live() if d.derived}


def _shadows(snap: Snapshot) -> list[tuple[str, str, str]]:
    """Derived notes whose key is held already: by a written team note (which keeps
    it), or — for the topic — by a document's stub. (Two stubs of one key are
    settled when the index is built: `Snapshot.clashes`.)"""
    holder: dict[str, str] = {}
    for _, d in snap.live():
        if not d.derived:
            holder.setdefault(d.key, d.location.split(":", 1)[-1])  # no commit id
    derived = sorted((d for _, d in snap.live() if d.derived),
                     key=lambda d: (d.is_topic, d.location))
    found: list[tuple[str, str, str]] = []
    for d in derived:
        what = (f"the stub of {d.location}" if d.is_stub else
                "the repository topic, named by [repo] name in .omh/memory.toml")
        if d.key in holder:
            found.append((d.key, what, holder[d.key]))
        else:
            holder[d.key] = f"the stub of {d.location}"
    return found


def open_workspace(start: Path, environ: Mapping[str, str] | None = None) -> Workspace:
    env = os.environ if environ is None else environ
    repo = open_repo(start)
    checkout = repo.require_workdir()
    root = local_store_root(repo, env)
    notes = notes_cache(root)
    if env.get("OMH_LOCAL_STORE"):
        # Chosen by the user, so keyed by no path; still never another repository's.
        def mounted_owner() -> None:
            check_owner(repo, root, mounted=True)
            keep_record(repo, root, only_if_missing=True)

        mounted = LocalStore(root, after_create=lambda: keep_record(repo, root),
                             owner=mounted_owner)
        return Workspace(repo, checkout, _cached(mounted, notes), mounted=True, notes=notes,
                         index=LocalIndex(mounted, notes))
    # The default store is named after the clone's path: record whose it is, never
    # open one another repository or clone made at this path (a moved clone's old
    # path), and never start a second one while a moved clone's store waits.
    keep_record(repo, root)

    def before_create() -> None:
        refuse_a_missing_home(env)
        refuse_a_second_store(repo, root)

    local = LocalStore(root, before_create=before_create,
                       after_create=lambda: keep_record(repo, root),
                       owner=lambda: check_owner(repo, root))
    return Workspace(repo, checkout, _cached(local, notes), notes=notes,
                     index=LocalIndex(local, notes))


def _cached(store: LocalStore, notes: NoteCache) -> LocalStore:
    """`store`, reading its files through `notes`: a file whose bytes were parsed
    before is not parsed again."""
    store.read_bytes = notes.read
    return store
