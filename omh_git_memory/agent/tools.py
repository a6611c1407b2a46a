"""The agent's two tools, as the agent sees them: their descriptions and limits,
and the answer each call gives (agent/sdk.py puts them behind the MCP SDK).

- `remember` writes a surprise note to the local layer only (invariant: remember
  writes only to the local layer), with `source` set here from
  `OMH_SESSION` and the connecting client's name and version — the caller cannot
  set it.
- `recall` returns the tree, every line with its layer and date, the note's title
  and where to read it in full, then short excerpts of the best results. Its
  description is generated at launch from the store's census (counts, never titles).

A call the tool refuses raises :class:`ToolRefused`, whose message is the answer the
agent reads. Nothing here imports the SDK, so it can be read, and tested, alone.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from omh_git_memory.actions.ask import Question, ask
from omh_git_memory.actions.near_duplicate import NAMED, Pair, fold_command, more_than_named
from omh_git_memory.actions.record import record
from omh_git_memory.actions.remember import Observation, Remembered
from omh_git_memory.actions.update import agent_owned, record_agent_write
from omh_git_memory.actions.workspace import Workspace
from omh_git_memory.agent.census import Census, own_prefixes, take_census
from omh_git_memory.model import faults
from omh_git_memory.model.errors import (
    ChangedMeanwhile,
    IndexBuilding,
    KeyTaken,
    NotYourNote,
    OmhError,
    ToolRefused,
)
from omh_git_memory.model.keys import Key, printable, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note, render
from omh_git_memory.model.plural import agree
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.render import EXCERPTS, render_excerpts, render_tree
from omh_git_memory.stores.store import LocalStore, Signature

# A note is a page of prose; an argument this long is a pasted log, not a note.
MAX_TEXT: Final = 16 * 1024
MAX_ITEMS: Final = 32

# A key is a path of at most a few segments; anything longer is not one.
MAX_KEY: Final = 512


log = logging.getLogger("omh.mcp")

REMEMBER_DESCRIPTION: Final = (
    "Record something that surprised you in this repository, so later sessions find it. "
    "Call it when an assumption turned out wrong: `expected` is what you assumed, "
    "`observed` what happened (its first sentence becomes the title and the key), "
    "`evidence` the command, error or file that shows it, `answers` the questions this "
    "note answers in the words someone would ask them. `relates_to` takes keys of notes "
    "(recall shows them; one not written yet is kept); `invalidated_by` optionally says "
    "what makes the note stale (e.g. base:2026-09). The note goes to your local layer; a "
    "person promotes it. To correct a note this session recorded (unchanged since), pass "
    "its key as `replaces`: it keeps its key and becomes what these arguments say. Write "
    "what the evidence says: keep its uncertainty and how it was settled, never a "
    "precision it did not give; say when the thing happened, not when you learned it; "
    "for state that changes, add a dated status line rather than rewriting the past."
)

INSTRUCTIONS: Final = "Repository memory: recall before assuming; remember what surprised you."


def recall_description(census: Census | None) -> str:
    """Recall's description; `census` None while the server builds its first index."""
    holds = (f"The store holds {census.sentence()}." if census is not None else
             "Its index is being built as this session starts; a call in the first "
             "seconds may be asked to come again.")
    return (
        "Search this repository's notes — what earlier sessions learned, and a pointer "
        f"to every document it has. {holds} Most "
        "notes exist because an assumption turned out wrong, so query before assuming how "
        "something here works (build, tests, deploy, conventions, an odd error). "
        "Ask in your own words; `also_phrased_as` adds other wordings. Every result "
        "carries its layer (team: reviewed and committed; local: this machine, unreviewed) "
        "and its date. When notes disagree, team beats local whatever the dates; within "
        "a layer, the newer note and your task decide; ask the person only if two team "
        "notes disagree or the conflict blocks the task."
    )


# How long a call waits for the index the server started building at launch before
# it answers that the index is still being built (a harness's tool call outlasts it).
WAIT_FOR_INDEX: Final = 20.0  # seconds
# How long a server starting without an index waits for it before it answers the
# handshake without the census (a small store's index is built within it).
WAIT_AT_START: Final = 2.0  # seconds


@dataclass
class _Build:
    """The index a server builds in the background when it starts without one, so
    that it answers `initialize` and `tools/list` at once."""

    done: threading.Event
    commit: str | None
    local: Signature
    made: Searcher | None = None
    failure: BaseException | None = None
    progress: tuple[int, int] = (0, 0)

    def run(self, ws: Workspace) -> None:
        try:
            self.made = ws.searcher(progress=self._tick)
        except BaseException as err:  # handed to the call that waits for it
            self.failure = err
        finally:
            self.done.set()

    def _tick(self, done: int, total: int) -> None:
        self.progress = (done, total)

    def waited_in_vain(self) -> IndexBuilding:
        done, total = self.progress
        so_far = (f" (all {total:,} documents read; the index is being written)"
                  if total and done >= total else
                  f" ({done:,} of {total:,} documents read)" if total else "")
        return IndexBuilding(
            f"the recall index of this repository is still being built{so_far}, the "
            "first time omh serves it; nothing was searched or written. Call again in a "
            "few seconds (the next server starts at once: the index is kept)")


@dataclass
class _State:
    """What the server keeps between calls: the searcher of the HEAD and local
    store it last saw, rebuilt when either changes (checked on every call), and
    while a local file changed too recently for its signature to show a change
    made in the same timestamp tick (`settled`, recall/local_index.py)."""

    ws: Workspace
    commit: str | None = None
    local: Signature = ()
    settled: bool = True
    current: Searcher | None = None
    embedder: Any = None  # the semantic model, loaded once when semantic recall is on
    view: Any = None
    no_extra: bool = False  # semantic recall is on but its extra is missing: by words
    building: _Build | None = None  # the first index, while it is built at launch

    def start(self) -> bool:
        """The searcher from the cache, or else a build started in the background:
        whether the searcher is ready now."""
        from omh_git_memory.git.history import head_id

        commit = head_id(self.ws.repo)
        cached = self.ws.cached_searcher()
        if cached is not None:
            self.current, self.commit = cached, commit
            self.local, self.settled = _read_from(cached, self.ws.local.signature)
            return True
        self.building = _Build(threading.Event(), commit, self.ws.local.signature())
        # A repository handle of its own: pygit2's objects are not shared across
        # threads, and the server's calls go on using theirs.
        threading.Thread(target=self.building.run, args=(self.ws.on_its_own_repository(),),
                         name="omh-index", daemon=True).start()
        return False

    def built_within(self, seconds: float) -> bool:
        """Whether the index started at launch is built within `seconds`."""
        return self.building is None or self.building.done.wait(seconds)

    def searcher(self, check: bool = True) -> Searcher:
        """The searcher of HEAD and the local store as they are now; without `check`,
        the one the server's start read a moment ago."""
        from omh_git_memory.git.history import head_id

        if self.building is not None:
            build = self.building
            if not build.done.wait(WAIT_FOR_INDEX):
                raise build.waited_in_vain()
            self.building = None
            if build.failure is not None:
                raise build.failure
            self.current, self.commit = build.made, build.commit
            if build.made is not None:
                self.local, self.settled = _read_from(build.made, lambda: build.local)
        if not check and self.current is not None:
            return self.current
        commit, local = head_id(self.ws.repo), self.ws.local.signature()
        if (self.current is None or commit != self.commit or local != self.local
                or not self.settled):
            self.current = self.ws.searcher()  # through the local index
            self.commit, self.view = commit, None
            self.local, self.settled = _read_from(self.current, lambda: local)
        return self.current

    def semantic(self) -> Any:
        """The semantic view of the current searcher, or None when it is off or
        its extra is not installed (recall then goes on by words)."""
        if self.no_extra or not self.ws.config().semantic:
            return None
        searcher = self.searcher()
        if self.view is None:
            from omh_git_memory.model.errors import SemanticUnavailable
            from omh_git_memory.recall.semantic import Embedder

            try:
                self.embedder = self.embedder or Embedder()
            except SemanticUnavailable as err:  # said once, in the server's log
                log.warning(err.fallback())
                self.no_extra = True
                return None
            self.view = self.ws.semantic(searcher, self.embedder)
        return self.view


def _read_from(searcher: Searcher, otherwise: Callable[[], Signature]) -> tuple[Signature, bool]:
    """The local store's signature as `searcher`'s local layer read it, and whether it
    was settled then; else `otherwise()`, taken as settled."""
    layer = searcher.local_layer
    if layer.signature is not None:
        return layer.signature, layer.settled
    return otherwise(), True


# How much of each of the client's name, its version and OMH_SESSION goes into
# `source`: enough to tell clients apart, never enough to bloat a note.
MAX_SOURCE_PART: Final = 64


def source_of(client: tuple[str, str] | None) -> str:
    """`session s03, claude 1.2` — from the environment and the handshake's client
    (name, version), never the caller."""
    name = "unknown client"
    if client is not None:
        named = f"{clean_source_part(client[0])} {clean_source_part(client[1])}".strip()
        name = named or name
    from omh_git_memory.actions.review import clean_session  # the hook finds it cleaned alike

    session = clean_session(os.environ.get("OMH_SESSION", ""))
    return f"session {session}, {name}" if session else f"mcp, {name}"


def clean_source_part(text: str) -> str:
    """A client-supplied name made fit for one frontmatter line: every character a
    note or a key display could not carry (controls, line breaks, invisibles, lone
    surrogates) becomes `?`, runs of spaces one space, and it is cut to
    MAX_SOURCE_PART characters — so a hostile or broken client name can neither
    make the note unwritable nor oversize it."""
    from omh_git_memory.model.keys import is_unsafe

    kept = "".join("?" if is_unsafe(c) or not c.isprintable() else c for c in text)
    flat = " ".join(kept.split())
    return flat if len(flat) <= MAX_SOURCE_PART else flat[: MAX_SOURCE_PART - 1] + "…"


def _taken(ws: Workspace, err: KeyTaken, source: str) -> str:
    """The answer when `remember` finds its key taken: `replaces` is offered only for
    a local note this session wrote and nobody changed since (:func:`agent_owned`)."""
    if err.layer is not Layer.LOCAL:
        return err.for_agent()
    reasons = [agent_owned(ws.local, err.key, e.note, source)
               for e in ws.graph().claimants(Layer.LOCAL, err.key.value) if e.note is not None]
    if None in reasons:
        return err.for_agent(own=True)
    if any(r in ("changed", "unrecorded") for r in reasons):
        return (f"note {err.key} already exists in your local layer (recall shows it); it "
                "carries this session's source but is not as this session wrote it (a person "
                "changed it since), so you cannot replace it; to record something new, word "
                "the first sentence of `observed` so it says what is new (it becomes the key)")
    return err.for_agent(own=False)


def _record(ws: Workspace, key: Key, note: Note) -> None:
    """Record that this server wrote `note` as local/`key`, so `replaces` may correct
    it while nobody else changes it; said in the log when it cannot be recorded."""
    try:
        record_agent_write(ws.local, key, render(note).encode("utf-8"))
    except OmhError as err:
        log.warning("%s; `replaces` will refuse this note", err)


def _repeat_warning(pair: Pair, searcher: Searcher, store: LocalStore, source: str,
                    written: str) -> str:
    """The answer's warning that the note just written (`written`) says what
    `pair.original` says: never silent; `replaces` only offered for this session's own
    local note. Keeping one also takes removing the copy, which no tool does, so the
    warning names the command."""
    other = pair.original
    said = (f" Warning: this note looks like {other.key} ({other.layer.value} · "
            f"{other.recorded.isoformat()}, {pair.similarity:.0f}% alike).")
    own = other.layer is Layer.LOCAL and any(
        doc.location == other.location and _owned(store, doc, note, source)
        for doc, note in searcher.local_notes)
    if own:
        return (f"{said} It is your own note: if both record the same thing, keep that one: "
                f"call remember again with replaces={other.key} to fold in what this one "
                f"adds, then remove this copy with `omh memory rm {shell_word(written)}` (the "
                "tools remove no note).")
    return (f"{said} If both record the same thing, recall {other.key} and make sure the "
            f"two agree; a person can merge them: fold in what this one adds "
            f"({fold_command(other)}), then `omh memory rm {shell_word(written)}`.")


def _owned(store: LocalStore, doc: Doc, note: Note, source: str) -> bool:
    """Whether the local note `note`, read from `doc`'s file, is this session's and
    unchanged since it wrote it."""
    from omh_git_memory.model.errors import InvalidKey

    try:
        key = Key.from_relpath(Path(doc.location).relative_to(store.root).as_posix())
        return agent_owned(store, key, note, source) is None
    except (InvalidKey, OmhError, ValueError):  # ValueError: not a file of the store
        return False


def _correction_warning(pair: Pair, key: str) -> str:
    """The answer's warning that a note just corrected (`replaces`) now says what
    `pair.original` says. The correction is the one to keep, unless the other is a
    team note: then that one is kept and the correction removed."""
    other = pair.original
    said = (f" Warning: it now looks like {other.key} ({other.layer.value} · "
            f"{other.recorded.isoformat()}, {pair.similarity:.0f}% alike).")
    if other.layer is Layer.TEAM:
        return (f"{said} If both record the same thing, a person can merge them: fold in what "
                f"this one adds ({fold_command(other)}), then `omh memory rm {shell_word(key)}`.")
    return (f"{said} If both record the same thing, keep this one: the other is a copy a person "
            f"removes with `omh memory rm {shell_word(other.key)}` (the tools remove no note).")


def _not_yours(err: NotYourNote) -> str:
    key = err.key
    if err.reason == "team":
        return (f"{key} is a team note ({err.where}); an agent corrects only its own local "
                "notes, and a person changes a team note. To record what is new, call "
                "remember without `replaces`")
    if err.reason == "derived":
        return (f"{key} is derived from {err.where}, not written: it cannot be replaced; "
                "call remember without `replaces` to record what is new")
    if err.reason == "missing":
        return (f"no local note {key} to replace; `replaces` takes the key of a note this "
                "session remembered (recall shows keys); leave it out to record a new note")
    if err.reason == "changed":
        return (f"local/{key} was changed after this session wrote it (a person's `omh memory "
                "update`, `edit`, review or text editor), so replacing it would lose their "
                "edit; call remember without `replaces` to record what is new as a note of "
                f"its own, or ask the person to fold it in (`omh memory update {shell_word(key)}`)")
    if err.reason == "unrecorded":
        return (f"local/{key} carries this session's source, but this server has no record "
                "of writing it as it stands (a person wrote, renamed or restored it), so you "
                "cannot replace it; call remember without `replaces` to record what is new, "
                f"or ask the person to fold it in (`omh memory update {shell_word(key)}`)")
    return (f"local/{key} was recorded by {err.where!r}, not by this session, so you cannot "
            "replace it; call remember without `replaces` to record your own note")


def _secret_warnings(done: Remembered) -> str:
    """The answer's warning for each line of the note that looks like a secret."""
    edit = f"call remember again with replaces={done.key} and that line left out"
    return "".join(f" Warning: {w}." for w in done.secret_warnings(edit))


def _cited(done: Remembered) -> str:
    """` It cites src/x.py; recall says when that changes.`, or nothing."""
    if not done.cited:
        return ""
    return (f" It cites {', '.join(printable(p) for p in done.cited)}; recall says when "
            f"{'that changes' if len(done.cited) == 1 else 'they change'}.")


def _waiting_links(done: Remembered) -> str:
    """What the answer says of the links that name no note yet: a key can be worked
    out before its note is written, so such a link is kept, and reaches the note once
    it exists (lint's DanglingLink warns until then)."""
    if not done.waiting:
        return ""
    one = len(done.waiting) == 1
    return (f" {'Its link' if one else 'Its links'} to {', '.join(done.waiting)} "
            f"{'names' if one else 'name'} no note yet: kept, to reach the note once one is "
            "written under that key (`omh memory lint` warns DanglingLink until then).")


def written_notes(docs: list[Doc | None]) -> int:
    """The notes that are files (both layers), not stubs or the topic."""
    return sum(1 for d in docs if d is not None and not d.derived)


class Tools:
    """The two tools over one workspace, as a server serves them: built at launch
    (the census and lint's counts for recall's description, the semantic model
    loaded), then one method a call."""

    def __init__(self, ws: Workspace) -> None:
        from omh_git_memory.actions.lint_summary import (
            LINT_AT_START,
            refresh_later,
            summary_at_start,
        )

        self.ws = ws
        self.state = _State(ws)
        self.lint_at_start, self.refresh_later = LINT_AT_START, refresh_later
        # A moved clone's notes are not lost, only not adopted yet: tell the agent, so it
        # can tell its user (only checked while this clone's own store holds no note).
        moved = "".join(f" Not yet here: {lb.message()}." for lb in ws.left_behind())
        self.remember_description = REMEMBER_DESCRIPTION
        if not self.state.start() and not self.state.built_within(WAIT_AT_START):
            # No index yet, and not one built in a moment: answer the handshake now and
            # build it meanwhile; the census and lint's counts wait for the next start.
            self.written = 0
            self.recall_description = recall_description(None) + moved
            return
        docs = self.state.searcher(check=False).docs  # the store was read just now
        census = take_census(docs, own_prefixes(ws.config().keys.templates))
        self.written = written_notes(docs)
        # Lint's warnings re-fire in every session: one line with the counts, none when clean.
        summary = summary_at_start(ws, self.written, self.state.local)
        lint_line = f" {summary.line()}" if summary is not None and summary.line() else ""
        self.state.semantic()  # load the model now, not on the first question
        self.recall_description = recall_description(census) + lint_line + moved

    def remember(self, expected: str, observed: str, evidence: str, answers: list[str],
                 client: tuple[str, str] | None, relates_to: list[str] | None = None,
                 invalidated_by: str | None = None, replaces: str | None = None) -> str:
        """`remember`: a new local note (or, with `replaces`, this session's own note
        corrected); `client` is the connecting client's (name, version)."""
        faults.point("mcp:call")
        ws = self.ws
        searcher = self.state.searcher()
        source = source_of(client)
        try:
            obs = Observation(
                expected=expected, observed=observed, evidence=evidence, answers=answers,
                relates_to=relates_to or [], source=source, invalidated_by=invalidated_by,
            )
            done = record(ws, obs, searcher=searcher, replaces=replaces)
        except NotYourNote as err:
            raise ToolRefused(_not_yours(err)) from None
        except ChangedMeanwhile:
            raise ToolRefused(f"local/{replaces} changed while it was being replaced, so "
                              "nothing was written; recall it to see what it holds now, then "
                              "call again") from None
        except KeyTaken as err:  # say it without the command line's --if-exists
            raise ToolRefused(_taken(ws, err, source)) from None
        except OmhError as err:
            raise ToolRefused(str(err)) from None
        if replaces is not None:
            if not done.written:
                return f"local/{done.key} already says exactly that; nothing changed."
            _record(ws, done.key, done.note)
            return (f"replaced local/{done.key} ({done.note.recorded.isoformat()}); it keeps "
                    f"its key. A person can share it with `omh memory promote "
                    f"{shell_word(done.key)}`." + _cited(done) + _waiting_links(done)
                    + _secret_warnings(done)
                    + "".join(_correction_warning(p, done.key.value) for p in done.repeats))
        if done.layer is Layer.LOCAL and done.written:
            _record(ws, done.key, done.note)
        if self.written > self.lint_at_start:  # so the next session starts with fresh counts
            self.refresh_later(ws)
        return (f"remembered local/{done.key} ({done.note.recorded.isoformat()}). "
                f"A person can share it with `omh memory promote {shell_word(done.key)}`."
                + _cited(done) + _waiting_links(done) + _secret_warnings(done)
                + "".join(_repeat_warning(p, searcher, ws.local, source, done.key.value)
                          for p in done.repeats[:NAMED])
                + (f" Warning: {more}." if (more := more_than_named(done.repeats)) else ""))

    def recall(self, question: str, also_phrased_as: list[str] | None = None) -> str:
        """`recall`: the tree of the best notes, then what the best of them say."""
        faults.point("mcp:call")
        try:
            answered = ask(self.ws, Question(question, also_phrased_as or []),
                           searcher=self.state.searcher(),
                           semantic=lambda _: self.state.semantic(), excerpts=EXCERPTS)
        except OmhError as err:
            raise ToolRefused(str(err)) from None
        answer = answered.answer
        quoted = render_excerpts(answer, answered.notes, answered.quotes)
        best = min(EXCERPTS, len(answer.results))
        return render_tree(answer, answered.stale, also="`also_phrased_as`",
                           sections=answered.sections, changed=answered.changed,
                           cited=answered.cited()) + (
            f"\nWhat the best {agree(best, 'note says', f'{best} say')}:\n{quoted}"
            if quoted else "") + (
            "\nEach line: key, layer · date, title — where to read it in full (a team "
            "note's file in this repository, a local note's file, or the document a stub "
            "points at, with the section that matched and its lines), and for a team note "
            "or document who last changed it in which commit.\n" if answer.results else "")
