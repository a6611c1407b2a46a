"""`promote`: move local notes into the team layer as one atomic commit.

Promote is the one place a person gates anything, because it is the one place a
note reaches somebody else. It refuses what is not shareable, builds one commit
with libgit2 (HEAD's tree plus the notes), moves the branch only if it has not
moved, updates the index and working-tree files of exactly those paths, and only
then removes the local copies. A failure at any step leaves every note in at
least one layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omh_git_memory import faults
from omh_git_memory.errors import OmhError
from omh_git_memory.git import (
    Change,
    blob_in_tree,
    check_out_paths,
    commit_change,
    head_id,
    path_in_tree,
    path_is_dirty,
    resolve_commit,
    write_obstacle,
)
from omh_git_memory.graph import Graph
from omh_git_memory.keys import Key
from omh_git_memory.layers import Layer
from omh_git_memory.lint import note_refusals
from omh_git_memory.note import render
from omh_git_memory.secret_scan import find_secrets
from omh_git_memory.store import StoredNote
from omh_git_memory.team import team_path
from omh_git_memory.workspace import Workspace


class PromoteRefused(OmhError):
    """One or more notes cannot be shared; nothing was committed."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n  ".join(self.problems)
        super().__init__(f"promote refused, nothing was committed:\n  {lines}")


@dataclass(frozen=True)
class Promoted:
    commit: str
    keys: tuple[Key, ...]
    paths: tuple[str, ...]
    left_in_local: tuple[Key, ...]  # local copies that could not be removed
    finished: tuple[Key, ...] = ()  # already committed by an interrupted promote


@dataclass(frozen=True)
class Plan:
    commit: list[tuple[Key, StoredNote]]  # to add in a new commit
    finish: list[tuple[Key, StoredNote]]  # already at HEAD, byte for byte: finish the job


def plan(ws: Workspace, graph: Graph, keys: Sequence[str]) -> Plan:
    """The notes to promote, or :class:`PromoteRefused` listing every problem.

    A note HEAD already holds byte for byte was committed by a promote that was
    interrupted before it finished; it is finished rather than refused."""
    problems: list[str] = []
    chosen: list[tuple[Key, StoredNote]] = []
    finish: list[tuple[Key, StoredNote]] = []
    head = resolve_commit(ws.repo, "HEAD")
    for raw in dict.fromkeys(keys):
        entries = graph.claimants(Layer.LOCAL, raw)
        if not entries:
            broken = [e for e in graph.entries if e.layer is Layer.LOCAL and e.key == raw]
            if broken:
                problems.append(f"{raw}: does not read back as a note: {broken[0].problem}")
            else:
                problems.append(f"{raw}: no local note has this key (`omh memory` lists them)")
            continue
        entry = entries[0]
        note = entry.note
        assert note is not None
        if entry.path_key != note.key:
            problems.append(f"{raw}: its key and its file name disagree ({entry.location})")
            continue
        key = note.key
        for rule, line, message in note_refusals(note):
            at = f" (line {line})" if line else ""
            problems.append(f"{key}: {rule}{at}: {message}")
        path = team_path(key)
        blocked = write_obstacle(ws.repo, path)
        if blocked is not None:  # a symlink, a submodule or a file in the way
            problems.append(f"{key}: {blocked}")
            continue
        if blob_in_tree(head, path) == render(note).encode("utf-8"):
            finish.append((key, entry))
            continue
        if path_in_tree(head, path):
            problems.append(f"{key}: the team layer already has {path}; update that note instead")
        elif path_is_dirty(ws.repo, path):
            problems.append(
                f"{key}: {path} already exists in the index or working tree; "
                "commit or remove it first"
            )
        for hit in find_secrets(render(note)):
            problems.append(
                f"{key}: line {hit.line} looks like {hit.kind}; remove it before sharing"
            )
        chosen.append((key, entry))
    batch = {key.value for key, _ in (*chosen, *finish)}
    for key, entry in chosen:
        assert entry.note is not None
        for target in entry.note.links:
            if target in batch or graph.reaches(target, Layer.TEAM):
                continue
            if graph.claimants(Layer.LOCAL, target):
                problems.append(
                    f"{key}: [[{target}]] would dangle for a teammate, who does not have "
                    f"your local notes; promote both: omh memory promote {key} {target}"
                )
            else:
                problems.append(f"{key}: [[{target}]] names no note; fix or remove the link")
    if problems:
        raise PromoteRefused(problems)
    return Plan(chosen, finish)


def _bytes(entries: Sequence[tuple[Key, StoredNote]]) -> dict[str, bytes]:
    out = {}
    for key, entry in entries:
        assert entry.note is not None
        out[team_path(key)] = render(entry.note).encode("utf-8")
    return out


def promote(ws: Workspace, keys: Sequence[str]) -> Promoted:
    steps = plan(ws, ws.graph(), keys)
    add = _bytes(steps.commit)
    commit = head_id(ws.repo) or ""
    if add:
        names = ", ".join(key.value for key, _ in steps.commit)
        message = (f"omh: promote {names}\n\n"
                   "Promoted from the local layer by `omh memory promote`.\n")
        commit = commit_change(ws.repo, Change(add=add, delete=(), message=message))
    if steps.finish:
        check_out_paths(ws.repo, _bytes(steps.finish))
    left: list[Key] = []
    for index, (key, _entry) in enumerate((*steps.commit, *steps.finish)):
        if index == 1:
            faults.point("promote:local")
        try:
            ws.local.remove(key)
        except OmhError:
            left.append(key)
    done = (*steps.commit, *steps.finish)
    return Promoted(commit, tuple(k for k, _ in done), tuple(_bytes(done)), tuple(left),
                    tuple(k for k, _ in steps.finish))


def remove_team_note(ws: Workspace, key: Key) -> str:
    """Remove a team note with a commit of its own; history keeps it recoverable."""
    path = team_path(key)
    message = f"omh: remove {key}\n\nRemoved from the team layer by `omh memory rm`.\n"
    return commit_change(ws.repo, Change(add={}, delete=(path,), message=message))
