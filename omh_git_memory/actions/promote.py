"""`promote`: move local notes into the team layer as one atomic commit.

Promote is the one place a person gates anything, because it is the one place a
note reaches somebody else. It refuses what is not shareable, builds one commit
with libgit2 (HEAD's tree plus the notes), moves the branch only if it has not
moved, updates the index and working-tree files of exactly those paths, and only
then removes the local copies — each only if it still holds the bytes committed.
A failure at any step leaves every note in at least one layer.

`rm` of a team note never drops bytes git does not have: it refuses, as `git rm`
does, when the index or the working-tree copy differs from HEAD.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from omh_git_memory.actions.lint import note_refusals
from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.git.commit import Change, commit_change
from omh_git_memory.git.filters import worktree_blob_id
from omh_git_memory.git.gitfiles import alive
from omh_git_memory.git.history import head_id, resolve_commit
from omh_git_memory.git.obstacles import write_obstacle
from omh_git_memory.git.recovery import check_out_paths, finish_interrupted
from omh_git_memory.git.staging import index_change, path_is_dirty
from omh_git_memory.git.trees import blob_in_tree, path_in_tree, tree_file
from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    NoteNotFound,
    OmhError,
    PromoteRefused,
    StoreError,
    UncommittedEdit,
)
from omh_git_memory.model.keys import Key, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import render
from omh_git_memory.model.secret_scan import find_secret_in_key, find_secrets
from omh_git_memory.stores.fileops import ASIDE_PREFIX, put_back, set_aside
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.journal import prune_empty_dirs
from omh_git_memory.stores.reading import StoredNote, read_regular
from omh_git_memory.stores.team import NOTES_DIR, team_path


def key_secret_problem(key: str, kind: str) -> str:
    """The refusal of a key that carries a token (it would be the team path and the
    commit subject, where no later edit of the text removes it)."""
    return (f"{key}: the key holds {kind} (in its slug form), which would be the team "
            f"path and the commit subject; rename the note first (omh memory mv "
            f"{shell_word(key)} NEW-KEY), then promote it")


@dataclass(frozen=True)
class Promoted:
    commit: str
    keys: tuple[Key, ...]
    paths: tuple[str, ...]
    left_in_local: tuple[Key, ...]  # local copies that could not be removed
    finished: tuple[Key, ...] = ()  # already committed by an interrupted promote
    # Local copies rewritten while promote ran: the text read was committed, the
    # newer text is left in the local layer.
    changed_in_local: tuple[Key, ...] = ()
    # Named, but with no local copy and already in the team layer at HEAD (an
    # earlier promote of the same keys was cut short after it removed them).
    already_in_team: tuple[Key, ...] = ()
    # Cited files the commit holds at another blob than the note recorded (an edit the
    # note saw, not committed): a teammate sees the note marked changed until it is.
    cites_uncommitted: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    commit: list[tuple[Key, StoredNote]]  # to add in a new commit
    finish: list[tuple[Key, StoredNote]]  # already at HEAD, byte for byte: finish the job
    already: tuple[Key, ...] = ()  # no local copy, in the team layer at HEAD: nothing to do


def plan(ws: Workspace, graph: Graph, keys: Sequence[str]) -> Plan:
    """The notes to promote, or :class:`PromoteRefused` listing every problem.

    A note HEAD already holds byte for byte was committed by a promote that was
    interrupted before it finished; it is finished rather than refused."""
    problems: list[str] = []
    chosen: list[tuple[Key, StoredNote]] = []
    finish: list[tuple[Key, StoredNote]] = []
    already: list[Key] = []
    head = resolve_commit(ws.repo, "HEAD")
    for raw in dict.fromkeys(keys):
        entries = graph.claimants(Layer.LOCAL, raw)
        if not entries:
            broken = [e for e in graph.entries if e.layer is Layer.LOCAL and e.key == raw]
            misfiled = [e for e in graph.entries if e.layer is Layer.LOCAL
                        and e.note is not None and e.relpath.removesuffix(".md") == raw]
            if broken:
                problems.append(f"{raw}: does not read back as a note: {broken[0].problem}")
            elif misfiled and misfiled[0].note is not None:
                problems.append(f"{raw}: the file {misfiled[0].location} holds the note "
                                f"{misfiled[0].note.key}: its key and its file name disagree; "
                                "rename one so they agree")
            elif (done := _key_or_none(raw)) is not None and path_in_tree(head,
                                                                           team_path(done)):
                already.append(done)
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
        claimed = graph.claimants(Layer.TEAM, key.value)
        if path_in_tree(head, path):
            problems.append(f"{key}: the team layer already has {path}; update that note "
                            f"instead (omh memory update {shell_word(key)} --layer team)")
        elif claimed:
            where = claimed[0].location.split(":", 1)[-1]
            problems.append(f"{key}: the team note {where} already has this key; "
                            "update that note instead")
        elif key.value in graph.derived:
            problems.append(
                f"{key}: the key is taken by a derived team note (a document's stub or the "
                "repository topic); remember it again under another key (--if-exists suffix) "
                "and remove this one"
            )
        elif path_is_dirty(ws.repo, path):
            problems.append(
                f"{key}: {path} already exists in the index or working tree; "
                "commit or remove it first"
            )
        for hit in find_secrets(render(note)):
            problems.append(
                f"{key}: line {hit.line} looks like {hit.kind}; remove it before sharing"
            )
        carried = find_secret_in_key(key.value)
        if carried is not None:
            problems.append(key_secret_problem(key.value, carried))
        chosen.append((key, entry))
    batch = {key.value for key, _ in (*chosen, *finish)}
    together = [key.value for key, _ in (*chosen, *finish)] + _needed_too(graph, batch, chosen)
    for key, entry in chosen:
        assert entry.note is not None
        for target in entry.note.links:
            if target in batch or graph.reaches(target, Layer.TEAM):
                continue
            if graph.claimants(Layer.LOCAL, target):
                problems.append(
                    f"{key}: [[{target}]] would dangle for a teammate, who does not have "
                    "your local notes; promote them together (the local notes these link "
                    f"to, and theirs, all the way): omh memory promote "
                    + " ".join(map(shell_word, together))
                )
            else:
                problems.append(f"{key}: [[{target}]] names no note; fix or remove the link")
    if already and not (chosen or finish):
        problems += [f"{key}: already in the team layer ({team_path(key)} at HEAD) and not "
                     "in the local one; nothing to promote" for key in already]
    if problems:
        raise PromoteRefused(problems)
    return Plan(chosen, finish, tuple(already))


def _needed_too(graph: Graph, batch: set[str], chosen: Sequence[tuple[Key, StoredNote]]
                ) -> list[str]:
    """The local notes the chosen ones link to that the team layer lacks, and the ones
    those link to, all the way (A → B → C: promoting A needs B and C), in the order
    they are reached: what must be promoted with the batch so no link dangles."""
    needed: list[str] = []
    seen = set(batch)
    waiting = [t for _, e in chosen if e.note is not None for t in e.note.links]
    while waiting:
        target = waiting.pop(0)
        if target in seen or graph.reaches(target, Layer.TEAM):
            continue
        seen.add(target)
        notes = [e.note for e in graph.claimants(Layer.LOCAL, target) if e.note is not None]
        if notes:
            needed.append(target)
            waiting.extend(notes[0].links)
    return needed


def _key_or_none(raw: str) -> Key | None:
    try:
        return Key(raw)
    except OmhError:
        return None


def _bytes(entries: Sequence[tuple[Key, StoredNote]]) -> dict[str, bytes]:
    out = {}
    for key, entry in entries:
        assert entry.note is not None
        out[team_path(key)] = render(entry.note).encode("utf-8")
    return out


def promote(ws: Workspace, keys: Sequence[str], signoff: bool = False,
            shown: Mapping[str, bytes] | None = None) -> Promoted:
    """Commit the notes `keys` name to the team layer, then remove their local copies.
    The commit is built with libgit2, so no git hook runs (pre-commit, commit-msg);
    `signoff` adds a Signed-off-by trailer from the committer's identity. `shown`:
    the text a person decided on, by key (review); a note that reads otherwise now
    is refused, so that only what was shown is committed."""
    finish_team_commit(ws)
    steps = plan(ws, ws.graph(), keys)
    if shown is not None:
        now = {key.value: render(entry.note).encode("utf-8")
               for key, entry in (*steps.commit, *steps.finish) if entry.note is not None}
        differ = [k for k, data in shown.items() if k in now and now[k] != data]
        if differ:
            raise PromoteRefused([f"local/{k} changed since review showed it, so nothing was "
                                  "committed; look at it "
                                  f"(omh memory show {shell_word(k)} --layer local)"
                                  " and review again" for k in differ])
    faults.point("promote:planned")
    add = _bytes(steps.commit)
    commit = head_id(ws.repo) or ""
    if add:
        names = ", ".join(key.value for key, _ in steps.commit)
        message = (f"omh: promote {names}\n\n"
                   "Promoted from the local layer by `omh memory promote`.\n")
        commit = commit_change(ws.repo, Change(add=add, delete=(), message=message,
                                               signoff=signoff))
    if steps.finish:
        check_out_paths(ws.repo, _bytes(steps.finish))
    left: list[Key] = []
    changed: list[Key] = []
    done = (*steps.commit, *steps.finish)
    committed = _bytes(done)
    faults.point("promote:remove")
    for index, (key, _entry) in enumerate(done):
        if index == 1:
            faults.point("promote:local")
        # Compare and remove: a note rewritten since it was read (remember
        # --if-exists override, an editor) is not what was committed; keep it.
        try:
            if ws.local.remove_if(key, committed[team_path(key)]) is None:
                changed.append(key)
        except NoteNotFound:
            pass  # removed meanwhile: nothing is left to remove
        except OmhError:
            left.append(key)
    return Promoted(commit, tuple(k for k, _ in done), tuple(committed), tuple(left),
                    tuple(k for k, _ in steps.finish), tuple(changed), steps.already,
                    _cites_uncommitted(ws, commit, done))


def _cites_uncommitted(ws: Workspace, commit: str, done: Sequence[tuple[Key, StoredNote]]
                       ) -> dict[str, tuple[str, ...]]:
    """For each note promoted, the files it cites that `commit` holds otherwise."""
    from omh_git_memory.expiry.citations import check

    cited = {("team", key.value): entry.note.field("cites") for key, entry in done
             if entry.note is not None and entry.note.field("cites")}
    return {key: moved for (_, key), found in check(ws.repo, commit or None, cited).items()
            if (moved := tuple(c.path for c in found if c.changed))}


def remove_team_note(ws: Workspace, key: Key, signoff: bool = False) -> str:
    """Remove a team note with a commit of its own; history keeps it recoverable.

    Refused, with nothing changed, when the index or working-tree copy holds
    something HEAD does not (an edit, staged or not; a directory or a symlink in
    its place): only bytes git has may be removed."""
    finish_team_commit(ws)
    path = team_path(key)
    head = resolve_commit(ws.repo, "HEAD")
    committed = tree_file(head, path)
    if committed is None:
        raise NoteNotFound(f"no team note {key} at HEAD ({path}); `omh memory` lists the notes")
    staged = index_change(ws.repo, path, committed)
    if staged is not None:
        raise UncommittedEdit(_keep_or_drop(path, staged))
    message = f"omh: remove {key}\n\nRemoved from the team layer by `omh memory rm`.\n"
    with working_copy_set_aside(ws, path, committed[0]):
        return commit_change(ws.repo, Change(add={}, delete=(path,), message=message,
                                             signoff=signoff))


def _keep_or_drop(path: str, what: str) -> str:
    return (f"{path} {what}; removing the note would lose that. To keep it, commit it "
            f"(git commit {path}) and run rm again; to drop it, run "
            f"git restore --source=HEAD --staged --worktree {path} first")


@contextlib.contextmanager
def working_copy_set_aside(ws: Workspace, path: str, blob_id: str, verb: str = "rm",
                           error: type[OmhError] = UncommittedEdit,
                           keep_or_drop: Callable[[str, str], str] | None = None,
                           ) -> Iterator[None]:
    """Move the working-tree copy of `path` aside while a commit that changes it is
    made, after checking that it holds exactly HEAD's blob (so no edit of the user's
    is lost); put it back if the commit fails, unlink it once the commit stands. A
    missing copy is fine (as for git rm). Refusals are `error`, worded by
    `keep_or_drop(path, what)` (rm's wording by default)."""
    message = keep_or_drop or _keep_or_drop
    target = ws.checkout / path
    refuse_symlinked_dirs(ws.checkout, path, verb, error)
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        yield
        return
    if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):
        kind = "a symlink" if stat.S_ISLNK(mode) else (
            "a directory" if stat.S_ISDIR(mode) else "not a regular file")
        raise error(message(path, f"is {kind} in the working tree, not the committed note"))
    aside = _set_aside(target)
    if aside is None:  # removed meanwhile
        yield
        return
    try:
        same = (stat.S_ISREG(os.lstat(aside).st_mode)
                and worktree_blob_id(ws.repo, aside, path) == blob_id)
    except BaseException:
        put_back(aside, target)
        raise
    if not same:
        put_back(aside, target)
        raise error(message(path, "has changes not committed"))
    try:
        yield
    except BaseException:
        put_back(aside, target)
        raise
    with contextlib.suppress(FileNotFoundError):
        os.unlink(aside)
    prune_empty_dirs(target.parent, ws.checkout / NOTES_DIR)


def refuse_symlinked_dirs(checkout: Path, path: str, verb: str = "rm",
                          error: type[OmhError] = UncommittedEdit) -> None:
    """Refuse (with `error`) when a directory on the way to `path` is a symlink (it
    could lead out of the checkout) or not a directory; a missing one is fine."""
    current = checkout
    for part in path.split("/")[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(mode):
            what = "a symlink" if stat.S_ISLNK(mode) else "not a directory"
            raise error(
                f"{current.relative_to(checkout)} is {what} in the working tree; omh changes "
                f"nothing through it. Put the directory back (git restore --source=HEAD "
                f"--staged --worktree {path}) and run {verb} again"
            )


# --- finishing what a killed team verb left -------------------------------------

# `.omh-aside-<pid>-<hex>-<name>`: the working copy a team verb moved aside while
# it committed; the pid says whose it is.
_ASIDE = re.compile(rf"{re.escape(ASIDE_PREFIX)}(\d+)-[0-9a-f]{{16}}-(.+)\Z", re.DOTALL)


def _set_aside(path: Path) -> Path | None:
    """`path` renamed aside under a name that names this process (fileops.set_aside): a
    process killed before it is put back or removed leaves it, and the next team verb
    (:func:`finish_team_commit`) clears it."""
    return set_aside(path, with_pid=True)


def finish_team_commit(ws: Workspace) -> str | None:
    """Finish what a team verb (promote, update, edit, mv, rm) killed mid-way left:
    the index and working-tree files of a commit that landed (see
    :func:`omh_git_memory.git.recovery.finish_interrupted`), git's index lock, and the
    working copies it had moved aside under `.omh/notes/`, where `git add -A` would
    commit them. Every team verb runs it first. The commit finished, or None."""
    finished = finish_interrupted(ws.repo)
    _clear_asides(ws)
    return finished


def _clear_asides(ws: Workspace) -> None:
    """Each copy a dead omh process moved aside goes: removed when git has its
    bytes (HEAD's, or its parent's: the commit landed), put back when its place is
    free; bytes git lacks with a file in their place go into the git dir, never
    into history."""
    top = ws.checkout / NOTES_DIR
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.lstat(top).st_mode):
            return
    found = [(Path(here), name) for here, _dirs, names in os.walk(top)
             for name in names if name.startswith(ASIDE_PREFIX)]
    if not found:
        return
    head = resolve_commit(ws.repo, "HEAD")
    parents = [head, *head.parents[:1]] if head is not None else []
    for here, name in found:
        match = _ASIDE.match(name)
        if match is None or alive(int(match[1])):
            continue  # a live process's (or not one of ours): left to its owner
        aside, target = here / name, here / match[2]
        rel = target.relative_to(ws.checkout).as_posix()
        data = read_regular(aside)
        if data is None:
            continue
        known = [blob_in_tree(commit, rel) for commit in parents]
        free = not os.path.lexists(target)
        with contextlib.suppress(OSError, StoreError):
            if free and data == known[0]:
                put_back(aside, target)  # the verb was killed before its commit
            elif data in known:
                os.unlink(aside)  # git has these bytes
            elif free:
                put_back(aside, target)
            else:
                kept = ws.repo.git_dir / "omh-kept"
                kept.mkdir(exist_ok=True)
                shutil.move(aside, kept / name)
