"""Remember as both edges ask it (`omh memory remember`, the MCP `remember` tool):
one note into the local layer, checked against the store as it is read now.

The writer's trigger is pinned to HEAD; a surprise (or a person's topic) is built,
refused when it links to nothing (strict) or takes a key either layer holds, and
written with the notes it repeats. An agent may instead correct its own note
(`replaces`, :func:`update.replace_own`), which keeps its key.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from omh_git_memory.actions.near_duplicate import repeated
from omh_git_memory.actions.remember import Observation, Remembered, TeamKeys, remember, write_local
from omh_git_memory.actions.topic import TopicDraft, build_topic
from omh_git_memory.actions.update import replace_own
from omh_git_memory.expiry.citations import as_written, cites_field
from omh_git_memory.expiry.stale import pin_trigger
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import render
from omh_git_memory.model.secret_scan import find_secrets
from omh_git_memory.recall.reread import note_of
from omh_git_memory.stores.store import IfExists

if TYPE_CHECKING:
    from omh_git_memory.actions.near_duplicate import Pair
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.model.note import Note
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.build import Progress


def record(ws: Workspace, draft: Observation | TopicDraft, *, searcher: Searcher | None = None,
           progress: Progress | None = None, if_exists: IfExists = IfExists.ERROR,
           strict: bool = False, refuse_repeats: bool = False,
           replaces: str | None = None) -> Remembered:
    """Write the note `draft` describes to `ws`'s local layer (invariant: remember
    writes only to the local layer).

    `searcher` is the store the note is checked against (by default the store as
    it is now, indexed with `progress`): with `strict`, every link must name one of
    its notes; the notes the new one says again are kept in the result, and with
    `refuse_repeats` any refuses the write. `if_exists` says what a taken key does
    (remember.remember). `replaces` (a surprise only) rewrites that local note,
    this session's own, instead: `written` then says whether its text changed."""
    facts = ws.facts()
    pinned = pin_trigger(draft.invalidated_by, facts)
    # The files the Evidence names, with their blobs as the writer sees them (an
    # uncommitted edit's): recall marks the note when they change. A soft signal: it
    # never refuses the write.
    evidence = draft.evidence if isinstance(draft, Observation) else draft.evidence()
    draft = dataclasses.replace(draft, cites=cites_field(evidence, as_written(ws.repo, facts)))
    topic = None
    if isinstance(draft, TopicDraft):  # built, and refused, before the store is read
        topic = build_topic(dataclasses.replace(draft, invalidated_by=pinned),
                            ws.config().keys, dt.date.today())
    if searcher is None:
        searcher = ws.searcher(progress=progress)
    repeats_of = _repeats_in(ws, searcher)
    keys = {d.key for d in searcher.docs if d is not None and not d.problem}
    if isinstance(draft, Observation) and replaces is not None:
        done = _replace(ws, replaces, dataclasses.replace(draft, invalidated_by=pinned),
                        repeats_of)
        return _with_waiting(done, keys)
    known = keys if strict else None
    team = TeamKeys.of(searcher.snapshot.docs)  # a taken team key conflicts
    if topic is not None:
        return _with_waiting(write_local(ws.local, topic, if_exists, known, team=team,
                                         repeats_of=repeats_of, refuse_repeats=refuse_repeats),
                             keys)
    assert isinstance(draft, Observation)
    return _with_waiting(remember(ws.local, dataclasses.replace(draft, invalidated_by=pinned),
                                  ws.config().keys, if_exists, known_keys=known, team=team,
                                  repeats_of=repeats_of, refuse_repeats=refuse_repeats), keys)


def _with_waiting(done: Remembered, keys: set[str]) -> Remembered:
    """`done` with the links of its note that name no note of the store yet."""
    waiting = tuple(t for t in done.note.links if t not in keys) if done.written else ()
    return dataclasses.replace(done, waiting=waiting) if waiting else done


def _repeats_in(ws: Workspace, searcher: Searcher) -> Callable[[Note], Sequence[Pair]]:
    """What a write asks first: the notes of `searcher`'s store a note repeats."""
    config = ws.config()
    return lambda note: repeated(
        note, searcher, lambda doc: note_of(ws.repo, config, doc, searcher.local_notes))


def _replace(ws: Workspace, key: str, obs: Observation,
             repeats_of: Callable[[Note], Sequence[Pair]]) -> Remembered:
    """The local note `key` becomes what `obs` says, keeping its key; the notes it
    repeats now, the note it was before left out."""
    done = replace_own(ws, key, obs, ws.config().keys, dt.date.today())
    repeats = () if not done.changed else tuple(
        p for p in repeats_of(done.note)
        if not (p.original.layer is Layer.LOCAL and p.original.key == done.key.value))
    secrets = tuple(find_secrets(render(done.note))) if done.changed else ()
    return Remembered(done.key, done.layer, done.path, done.changed, done.note, repeats,
                      secrets)
