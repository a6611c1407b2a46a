"""`mv`: rename a note, so that its key and its path agree, and rewrite the links.

A note's key is its identity and its path, so a rename changes three things at
once: the file's name, its `key:` field, and every `[[old]]` link in the same
layer — only the link's target text, nothing else of any note. A layer never
sees half of it:

- local: the files are switched under the store's lock from a journal
  (journal.py), so a reader sees the store before or after, and a rename cut
  short is finished by the next command that reads the store;
- team: one commit built like promote's and `rm`'s (git/commit.py), refused as they
  are when the index or working copy of any path it touches holds something
  HEAD does not.

Links from another layer are not rewritten unless asked — a team note cannot link
to a local one, and a local note linking a renamed team note is yours to change —
so they are reported instead; `relink_local` (`mv --relink-local`) rewrites your
local notes' links to a renamed team note too, after its commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from omh_git_memory.actions.promote import finish_team_commit
from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.git.commit import Change, commit_change
from omh_git_memory.git.filters import as_committed
from omh_git_memory.git.gitfiles import read_nofollow
from omh_git_memory.git.history import resolve_commit
from omh_git_memory.git.obstacles import write_obstacle
from omh_git_memory.git.staging import index_change, path_is_dirty
from omh_git_memory.git.trees import blob_in_tree, path_in_tree, tree_file
from omh_git_memory.model import faults
from omh_git_memory.model.errors import KeyConflict, NoteNotFound, RenameRefused
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note, render, retarget_links, with_field
from omh_git_memory.model.secret_scan import find_secret_in_key
from omh_git_memory.stores import journal
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.journal import prune_empty_dirs
from omh_git_memory.stores.reading import StoredNote
from omh_git_memory.stores.team import NOTES_DIR, team_path


@dataclass(frozen=True)
class Renamed:
    layer: Layer
    old: Key
    new: Key
    path: str  # where the note is now: a file of the local store, or a repository path
    relinked: tuple[str, ...]  # other notes of the layer whose [[old]] links now name new
    untouched: tuple[tuple[Layer, str], ...]  # notes of another layer still linking [[old]]
    commit: str | None = None  # the team layer's commit


def rename(ws: Workspace, old: str, new: str, layer: Layer | None = None,
           relink_local: bool = False) -> Renamed:
    """Rename the note `old` to `new` in its layer (`layer`, or the one that holds it),
    rewriting every `[[old]]` link of that layer. Refused, with nothing changed,
    when `new` is no valid key or is taken (in that layer, or as a key a local note
    would shadow or be shadowed by), when `old` is not a written note of one layer,
    or when a file the rename touches holds something omh did not read. With
    `relink_local`, a team rename also rewrites your local notes' `[[old]]` links
    once its commit is made (a local write, under the store's lock)."""
    new_key = Key(new)  # InvalidKey: one line, exit 1
    finish_team_commit(ws)
    if new_key.value == old:
        raise RenameRefused(f"{old} is already called {new}; nothing to rename")
    graph = ws.graph()
    entry, note = _the_note(ws, graph, old, layer)
    _refuse_taken(ws, graph, entry.layer, new_key)
    carried = find_secret_in_key(new_key.value)
    if entry.layer is Layer.TEAM and carried is not None:
        raise RenameRefused(f"{new} holds {carried} (in its slug form), which would be the "
                            "team path and the commit subject; choose a key without it")
    linking = [(e, n) for e, n in graph.readable
               if e.layer is entry.layer and e is not entry and old in n.links]
    moved = retarget_links(with_field(note, "key", new_key.value), old, new_key.value)
    rewritten = [(e, n, retarget_links(n, old, new_key.value)) for e, n in linking]
    untouched = tuple(sorted(
        (e.layer, n.key.value) for e, n in graph.readable
        if e.layer is not entry.layer and old in n.links and entry.layer is Layer.TEAM
    ))
    relinked = tuple(sorted(n.key.value for _, n in linking))
    if entry.layer is Layer.LOCAL:
        path, relinked = _rename_local(ws, entry, note, new_key, moved, rewritten, old)
        return Renamed(Layer.LOCAL, note.key, new_key, path, relinked, untouched)
    commit = _rename_team(ws, entry, new_key, moved, rewritten, old)
    if relink_local and untouched:
        local = _relink_local(ws, old, new_key)
        untouched = tuple(u for u in untouched if u[1] not in local)
        relinked = tuple(sorted((*relinked, *(f"local/{k}" for k in local))))
    return Renamed(Layer.TEAM, note.key, new_key, team_path(new_key), relinked, untouched,
                   commit)


def _relink_local(ws: Workspace, old: str, new: Key) -> set[str]:
    """Rewrite every `[[old]]` link of the local notes to `[[new]]`, the files
    switched under the store's lock as a local rename switches them; the keys of the
    notes rewritten."""
    store = ws.local
    with journal.exclusive(store.root):
        linking = [(e, e.note) for e in store.scan(locked=True)
                   if e.note is not None and old in e.note.links]
        journal.switch(store.root, [
            journal.FileChange(e.relpath, _bytes(n), _bytes(retarget_links(n, old, new.value)))
            for e, n in linking])
    return {n.key.value for _, n in linking}


def _the_note(ws: Workspace, graph: Graph, old: str, layer: Layer | None
              ) -> tuple[StoredNote, Note]:
    layers = [layer] if layer is not None else list(Layer)
    found = [e for lay in layers for e in graph.claimants(lay, old)]
    if not found:
        if Layer.TEAM in layers and old in graph.derived:
            raise RenameRefused(_derived_refusal(ws, old))
        broken = [e for e in graph.entries if e.layer in layers and e.key == old]
        if broken:
            raise RenameRefused(f"{broken[0].location} does not read back as a note "
                                f"({broken[0].problem}); fix it first (omh memory lint)")
        where = f"the {layer} layer" if layer is not None else "any layer"
        others = [lay for lay in Layer if lay not in layers and graph.claimants(lay, old)]
        hint = (f"; the {others[0]} layer holds it: use --layer {others[0]}" if others
                else "; `omh memory` lists the keys")
        raise NoteNotFound(f"no note {old} in {where}{hint}")
    if len({e.layer for e in found}) > 1:
        raise RenameRefused(f"{old} is in both layers; say which with --layer team or "
                            "--layer local")
    if len(found) > 1:
        raise RenameRefused(f"{old} is claimed by {len(found)} files ({found[0].location}, "
                            f"{found[1].location}: DuplicateKey); make it one first")
    entry = found[0]
    assert entry.note is not None
    return entry, entry.note


def _derived_refusal(ws: Workspace, key: str) -> str:
    doc = next((d for _, d in ws.snapshot().live() if d.key == key and d.derived), None)
    if doc is not None and doc.is_stub:
        return (f"{key} is the stub of {doc.location}, derived from the document, not "
                "written; rename the document (git mv) and its stub follows")
    return (f"{key} is the repository topic, derived from the repository; its name is "
            "[repo] name in .omh/memory.toml: change that and commit it")


def _refuse_taken(ws: Workspace, graph: Graph, layer: Layer, new: Key) -> None:
    """Refuse a `new` key that is taken where the note would land, or that a note of
    the other layer holds (a local note never shadows a team one, as for remember)."""
    head = resolve_commit(ws.repo, "HEAD")
    if graph.claimants(layer, new.value) or any(
            e.layer is layer and e.key == new.value for e in graph.entries):
        raise KeyConflict(f"note {new} already exists in the {layer} layer; choose another "
                          "key, or remove that note first")
    if new.value in graph.derived:
        raise KeyConflict(f"{new} is the key of a derived team note (a document's stub or "
                          "the repository topic); choose another key")
    if layer is Layer.LOCAL:
        if graph.claimants(Layer.TEAM, new.value) or path_in_tree(head, team_path(new)):
            raise KeyConflict(f"note {new} exists in the team layer, and a local note of the "
                              "same key would shadow it; choose another key")
        return
    if graph.claimants(Layer.LOCAL, new.value):
        raise KeyConflict(f"your local layer has a note {new}, which would shadow the team "
                          "note; rename or remove the local one first")
    path = team_path(new)
    if path_in_tree(head, path):
        raise KeyConflict(f"{path} exists at HEAD; choose another key")
    if path_is_dirty(ws.repo, path):
        raise KeyConflict(f"{path} already exists in the index or working tree; commit or "
                          "remove it first")


def _bytes(note: Note) -> bytes:
    return render(note).encode("utf-8")


def _rename_local(ws: Workspace, entry: StoredNote, note: Note, new: Key, moved: Note,
                  rewritten: list[tuple[StoredNote, Note, Note]], old: str
                  ) -> tuple[str, tuple[str, ...]]:
    """Switch the local files, the plan completed under the store's lock: every
    writer of the store takes that lock (shared), so the notes read under it are
    all there are until the switch is made. A note that links `old` and was written
    while the rename was being checked (a remember meanwhile) is relinked too; a
    note the plan read and that changed since refuses the rename (journal.switch).
    Returns the new file and the keys of the notes relinked."""
    store = ws.local
    target = store.path_for(new)  # refuses a symlink on the way (a scan never follows one)
    faults.point("mv:planned")
    with journal.exclusive(store.root):
        planned = {entry.relpath, *(e.relpath for e, _, _ in rewritten)}
        late = [(e, e.note) for e in store.scan(locked=True) if e.note is not None
                and e.relpath not in planned and old in e.note.links]
        changes = [journal.FileChange(new.relpath().as_posix(), None, _bytes(moved))]
        changes += [journal.FileChange(e.relpath, _bytes(before), _bytes(after))
                    for e, before, after in rewritten]
        changes += [journal.FileChange(e.relpath, _bytes(n), _bytes(retarget_links(
            n, old, new.value))) for e, n in late]
        changes.append(journal.FileChange(entry.relpath, _bytes(note), None))
        journal.switch(store.root, changes)
    keys = [n.key.value for _, n, _ in rewritten] + [n.key.value for _, n in late]
    return str(target), tuple(sorted(keys))


def _rename_team(ws: Workspace, entry: StoredNote, new: Key, moved: Note,
                 rewritten: list[tuple[StoredNote, Note, Note]], old: str) -> str:
    old_path = f"{NOTES_DIR}/{entry.relpath}"
    touched = [old_path, *(f"{NOTES_DIR}/{e.relpath}" for e, _, _ in rewritten)]
    for path in touched:
        _refuse_unclean(ws, path, may_be_missing=path == old_path)
    new_path = team_path(new)
    blocked = write_obstacle(ws.repo, new_path)
    if blocked is not None:
        raise RenameRefused(blocked)
    add = {new_path: _bytes(moved)}
    add.update({f"{NOTES_DIR}/{e.relpath}": _bytes(after) for e, _, after in rewritten})
    links = len(rewritten)
    # A key that carried a token is not repeated in the message that moves it away.
    named = "a note whose key held a token" if find_secret_in_key(old) else old
    message = (f"omh: rename {named} to {new}\n\nRenamed by `omh memory mv`"
               + (f"; the links of {links} other note{'s' if links != 1 else ''} rewritten"
                  if links else "") + ".\n")
    commit = commit_change(ws.repo, Change(add=add, delete=(old_path,), message=message))
    if ws.repo.workdir is not None:
        prune_empty_dirs((ws.repo.workdir / old_path).parent, ws.repo.workdir / NOTES_DIR)
    return commit


def _refuse_unclean(ws: Workspace, path: str, may_be_missing: bool) -> None:
    """Refuse when the index or the working copy of `path` holds something HEAD does
    not (an edit, staged or not; a symlink in its place): the commit would drop it."""
    blocked = write_obstacle(ws.repo, path)
    if blocked is not None:
        raise RenameRefused(blocked)
    head = resolve_commit(ws.repo, "HEAD")
    committed = tree_file(head, path)
    if committed is None:
        raise RenameRefused(f"{path} is not a regular file at HEAD")
    staged = index_change(ws.repo, path, committed)
    if staged is not None:
        raise RenameRefused(_commit_first(path, staged))
    if ws.repo.workdir is None:
        return
    on_disk = read_nofollow(ws.repo.workdir, path)
    if on_disk is None and may_be_missing:
        return
    # compared as git compares: the working copy through the clean filters
    # (.gitattributes, core.autocrlf), so a CRLF checkout git calls clean is clean
    if on_disk is None or as_committed(ws.repo, path, on_disk) != blob_in_tree(head, path):
        state = "is deleted in the working tree" if on_disk is None else \
            "has changes not committed"
        raise RenameRefused(_commit_first(path, state))


def _commit_first(path: str, what: str) -> str:
    return (f"{path} {what}, which the rename's commit would drop; commit it "
            f"(git commit {path}) or drop it (git restore --source=HEAD --staged --worktree "
            f"{path}), then run mv again")
