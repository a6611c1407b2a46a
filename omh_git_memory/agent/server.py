"""`omh mcp serve`: the agent's surface, two tools over the official MCP SDK (stdio).

- `remember` writes a surprise note to the local layer only (invariant 3), always
  strict, with `source` set here from `OMH_SESSION` and the connecting client's
  name and version — the caller cannot set it.
- `recall` returns the tree, every line with its layer and date, the note's title
  and where to read it in full, then short excerpts of the best results. Its
  description is generated at launch from the store's census (counts, never titles).

The mcp SDK lives only in this module (it costs ~0.5 s to import, so only
`omh mcp serve` and `omh doctor` load it). Nothing but protocol goes to stdout;
logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from omh_git_memory.actions.near_duplicate import (
    NAMED,
    Pair,
    fold_command,
    more_than_named,
    repeated,
)
from omh_git_memory.actions.remember import KeyTaken, Observation, TeamKeys, remember
from omh_git_memory.actions.update import (
    ChangedMeanwhile,
    NotYourNote,
    agent_owned,
    record_agent_write,
    replace_own,
)
from omh_git_memory.actions.workspace import Workspace, open_workspace
from omh_git_memory.agent.census import Census, own_prefixes, take_census
from omh_git_memory.expiry.stale import pin_trigger, stale_marks
from omh_git_memory.model import faults
from omh_git_memory.model.errors import OmhError
from omh_git_memory.model.keys import Key, shell_word
from omh_git_memory.model.layers import Layer
from omh_git_memory.model.note import Note, render
from omh_git_memory.model.plural import agree
from omh_git_memory.recall.answer import shown_docs
from omh_git_memory.recall.bm25 import Searcher
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.render import EXCERPTS, render_excerpts, render_tree
from omh_git_memory.recall.reread import note_of
from omh_git_memory.stores.store import LocalStore

# A note is a page of prose; an argument this long is a pasted log, not a note.
MAX_TEXT: Final = 16 * 1024
MAX_ITEMS: Final = 32

log = logging.getLogger("omh.mcp")

REMEMBER_DESCRIPTION: Final = (
    "Record something that surprised you in this repository, so later sessions find it. "
    "Call it when an assumption turned out wrong: `expected` is what you assumed, "
    "`observed` what happened (its first sentence becomes the title and the key), "
    "`evidence` the command, error or file that shows it, `answers` the questions this "
    "note answers in the words someone would ask them. `relates_to` takes keys of notes "
    "that exist (recall shows them); `invalidated_by` optionally says what makes the "
    "note stale (e.g. base:2026-09). The note goes to your local layer; a person "
    "promotes it to the team. To correct a note this session recorded (and nobody has "
    "changed since), pass its key as `replaces`: the note keeps its key and becomes what "
    "these arguments say."
)

Text = Annotated[str, Field(max_length=MAX_TEXT)]
Items = Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_ITEMS)]


def recall_description(census: Census) -> str:
    return (
        "Search this repository's accumulated notes — what earlier sessions learned, and a "
        f"pointer to every document it has. The store holds {census.sentence()}. Most "
        "notes exist because an assumption turned out wrong, so query before assuming how "
        "something here works (build, tests, deploy, conventions, a surprising error). "
        "Ask in your own words; add `also_phrased_as` with other wordings. Every result "
        "carries its layer (team: reviewed and committed; local: this machine, unreviewed) "
        "and its date — weigh them."
    )


@dataclass
class _State:
    """What the server keeps between calls: the searcher of the HEAD and local
    store it last saw, rebuilt when either changes (checked on every call)."""

    ws: Workspace
    commit: str | None = None
    local: tuple[tuple[str, int, int], ...] = ()
    current: Searcher | None = None
    embedder: Any = None  # the semantic model, loaded once when semantic recall is on
    view: Any = None
    no_extra: bool = False  # semantic recall is on but its extra is missing: by words

    def searcher(self) -> Searcher:
        from omh_git_memory.git.repository import head_id

        commit, local = head_id(self.ws.repo), self.ws.local.signature()
        if self.current is None or commit != self.commit or local != self.local:
            self.current = self.ws.searcher()  # through the cache of parsed notes
            self.commit, self.local, self.view = commit, local, None
        return self.current

    def semantic(self) -> Any:
        """The semantic view of the current searcher, or None when it is off or
        its extra is not installed (recall then goes on by words)."""
        if self.no_extra or not self.ws.config().semantic:
            return None
        searcher = self.searcher()
        if self.view is None:
            from omh_git_memory.recall.semantic import Embedder, SemanticUnavailable

            try:
                self.embedder = self.embedder or Embedder()
            except SemanticUnavailable as err:  # said once, in the server's log
                log.warning(err.fallback())
                self.no_extra = True
                return None
            self.view = self.ws.semantic(searcher, self.embedder)
        return self.view


# How much of each of the client's name, its version and OMH_SESSION goes into
# `source`: enough to tell clients apart, never enough to bloat a note.
MAX_SOURCE_PART: Final = 64


def _source(ctx: Context) -> str:
    """`session s03, claude 1.2` — from the environment and the handshake, never the caller."""
    client = "unknown client"
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None) if params is not None else None
    if info is not None:
        name, version = clean_source_part(info.name), clean_source_part(info.version or "")
        client = f"{name} {version}".strip() or client
    from omh_git_memory.actions.review import clean_session  # the hook finds it cleaned alike

    session = clean_session(os.environ.get("OMH_SESSION", ""))
    return f"session {session}, {client}" if session else f"mcp, {client}"


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


# A key is a path of at most a few segments; anything longer is not one.
MAX_KEY: Final = 512


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


def _replace(ws: Workspace, key: str, obs: Observation,
             repeats_of: Callable[[Note], Sequence[Pair]]) -> str:
    """`remember(replaces=KEY)`: correct this session's own local note, in place."""
    try:
        done = replace_own(ws, key, obs, ws.config().keys, dt.date.today())
    except NotYourNote as err:
        raise ToolError(_not_yours(err)) from None
    except ChangedMeanwhile:
        raise ToolError(f"local/{key} changed while it was being replaced, so nothing was "
                        "written; recall it to see what it holds now, then call again") from None
    if not done.changed:
        return f"local/{done.key} already says exactly that; nothing changed."
    _record(ws, done.key, done.note)
    repeats = [p for p in repeats_of(done.note)  # not the note it was before
               if not (p.original.layer is Layer.LOCAL and p.original.key == done.key.value)]
    return (f"replaced local/{done.key} ({done.note.recorded.isoformat()}); it keeps its key. "
            f"A person can share it with `omh memory promote {shell_word(done.key)}`."
            + "".join(_correction_warning(p, done.key.value) for p in repeats))


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


def written_notes(docs: list[Doc | None]) -> int:
    """The notes that are files (both layers), not stubs or the topic."""
    return sum(1 for d in docs if d is not None and not d.derived)


def build_server(ws: Workspace) -> MCPServer:
    from omh_git_memory.agent.lint_summary import LINT_AT_START, refresh_later, summary_at_start

    state = _State(ws)
    docs = state.searcher().docs
    census = take_census(docs, own_prefixes(ws.config().keys.templates))
    written = written_notes(docs)
    # Lint's warnings re-fire in every session: one line with the counts, none when clean.
    summary = summary_at_start(ws, written)
    lint_line = f" {summary.line()}" if summary is not None and summary.line() else ""
    state.semantic()  # load the model now, not on the first question
    server = MCPServer(name="omh", instructions="Repository memory: recall before assuming; "
                       "remember what surprised you.")

    def remember_tool(
        expected: Text,
        observed: Text,
        evidence: Text,
        answers: Items,
        ctx: Context,
        relates_to: Items | None = None,
        invalidated_by: Annotated[str, Field(max_length=200)] | None = None,
        replaces: Annotated[str, Field(max_length=MAX_KEY)] | None = None,
    ) -> str:
        faults.point("mcp:call")
        searcher = state.searcher()
        known = {d.key for d in searcher.docs if d is not None and not d.problem}
        source = _source(ctx)
        try:
            obs = Observation(
                expected=expected, observed=observed, evidence=evidence, answers=answers,
                relates_to=relates_to or [], source=source,
                invalidated_by=pin_trigger(invalidated_by, ws.facts()),
            )
            config = ws.config()

            def repeats_of(note: Note) -> list[Pair]:
                return repeated(note, searcher, lambda doc: note_of(
                    ws.repo, config, doc, searcher.local_notes))

            if replaces is not None:
                return _replace(ws, replaces, obs, repeats_of)
            done = remember(ws.local, obs, config.keys, today=dt.date.today(),
                            known_keys=known, team=TeamKeys.of(searcher.snapshot.docs),
                            repeats_of=repeats_of)
        except KeyTaken as err:  # say it without the command line's --if-exists
            raise ToolError(_taken(ws, err, source)) from None
        except OmhError as err:
            raise ToolError(str(err)) from None
        if done.layer is Layer.LOCAL and done.written:
            _record(ws, done.key, done.note)
        if written > LINT_AT_START:  # so the next session starts with fresh counts
            refresh_later(ws)
        return (f"remembered local/{done.key} ({done.note.recorded.isoformat()}). "
                f"A person can share it with `omh memory promote {shell_word(done.key)}`."
                + "".join(_repeat_warning(p, searcher, ws.local, source, done.key.value)
                          for p in done.repeats[:NAMED])
                + (f" Warning: {more}." if (more := more_than_named(done.repeats)) else ""))

    def recall_tool(
        question: Text,
        also_phrased_as: Items | None = None,
    ) -> str:
        faults.point("mcp:call")
        if not question.strip():
            raise ToolError("`question` is empty; ask what you want to know")
        try:
            searcher = state.searcher()
            answer = recall(searcher, question, also_phrased_as or [],
                            semantic=state.semantic())
            fired = stale_marks(shown_docs(answer), ws.facts())
            notes = {}
            for hit in answer.results[:EXCERPTS]:
                note = note_of(ws.repo, ws.config(), hit.doc, searcher.local_notes)
                if note is not None:
                    notes[(hit.doc.layer, hit.doc.key)] = note
        except OmhError as err:
            raise ToolError(str(err)) from None
        quoted = render_excerpts(answer, notes)
        best = min(EXCERPTS, len(answer.results))
        return render_tree(answer, fired, also="`also_phrased_as`") + (
            f"\nWhat the best {agree(best, 'note says', f'{best} say')}:\n{quoted}"
            if quoted else "") + (
            "\nEach line: key, layer · date, title — where to read it in full (a team "
            "note's file in this repository, a local note's file, or the document a stub "
            "points at).\n" if answer.results else "")

    server.add_tool(remember_tool, name="remember", description=REMEMBER_DESCRIPTION,
                    structured_output=False)
    # A moved clone's notes are not lost, only not adopted yet: tell the agent, so it
    # can tell its user (only checked while this clone's own store holds no note).
    moved = "".join(f" Not yet here: {lb.message()}." for lb in ws.left_behind())
    server.add_tool(recall_tool, name="recall",
                    description=recall_description(census) + lint_line + moved,
                    structured_output=False)
    return server


def serve(start: Path) -> None:
    """Serve until the client goes away or a signal stops it. Every such end is a
    normal one (docs/mcp.md, "How the server ends"): EOF on stdin, a broken pipe on
    stdout, SIGTERM or SIGHUP return; SIGINT raises KeyboardInterrupt (exit 130)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="omh mcp: %(levelname)s %(message)s")
    server = build_server(open_workspace(start))
    if asyncio.run(_serve_stdio(server)) == signal.SIGINT:
        raise KeyboardInterrupt


# The signals that end the server normally; SIGINT is Ctrl-C, which every omh
# command answers with exit 130.
STOPPING: Final = (signal.SIGTERM, signal.SIGHUP)
EXIT_AT_ONCE: Final = {signal.SIGINT: 130, signal.SIGTERM: 0, signal.SIGHUP: 0}


def _client_gone(err: BaseException, stopping: bool) -> bool:
    """Whether `err` — every error inside it, for an exception group — says only
    that the connection ended: the client closed its end of a pipe (EPIPE, a reset),
    or one of the SDK's streams was closed under a task during the teardown that
    follows; when a signal is `stopping` the server, a cancellation as well."""
    import anyio

    if isinstance(err, BaseExceptionGroup):
        return all(_client_gone(e, stopping) for e in err.exceptions)
    if isinstance(err, anyio.BrokenResourceError | anyio.ClosedResourceError | anyio.EndOfStream):
        return True
    if stopping and isinstance(err, asyncio.CancelledError):
        return True
    return isinstance(err, OSError) and err.errno in (errno.EPIPE, errno.ECONNRESET)


# JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object).
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600


def unanswered(line: str) -> tuple[Any, int, str] | None:
    """The error reply a line needs that the SDK would never send, as (id, code,
    message), or None when the SDK reads the line and answers it itself.

    The SDK's transport drops a line its JSON parser refuses — a lone surrogate
    (`"\\ud800"`) in any string, a key included — and takes a request whose id
    is not a string or an integer (an object, a float, true, null) for a
    notification, which gets no reply: either way the client waits forever.
    """
    import json

    from mcp_types import jsonrpc_message_adapter

    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        message = None
    try:
        raw = json.loads(line)  # Python's parser accepts what the SDK's refuses
    except (ValueError, RecursionError) as err:  # RecursionError: nested too deeply
        if message is not None:
            return None
        return (None, PARSE_ERROR, f"parse error: the line is not JSON omh can read ({err})"[:300])
    if not isinstance(raw, dict):
        return (None, INVALID_REQUEST, "invalid request: send one JSON-RPC object per line")
    request_id = raw.get("id")
    usable_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool))
    if message is not None:
        if "id" in raw and "method" in raw and not usable_id:
            return (None, INVALID_REQUEST,
                    "invalid request: its id must be a string or an integer")
        return None
    if "method" not in raw or "id" not in raw:
        return None  # a notification or a response: JSON-RPC sends nothing back
    answer_to = request_id if usable_id else None
    try:
        surrogate = _has_lone_surrogate(raw)
    except RecursionError:
        surrogate = False
    if surrogate:
        return (answer_to, INVALID_REQUEST, "invalid request: it holds a lone surrogate "
                "(an escape between \\ud800 and \\udfff not in a pair), which is not text")
    return (answer_to, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


class _Requests:
    """stdin as the SDK's transport reads it, one line at a time, except that a line
    :func:`unanswered` says the SDK would drop is answered here with an error, so
    every request gets a reply."""

    def __init__(self, lines: Any) -> None:
        import anyio

        self.lines = lines
        self.replies: Any = None  # the transport's write stream, once it exists
        self.ready = anyio.Event()

    def __aiter__(self) -> Any:
        return self._read()

    async def _read(self) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError

        async for line in self.lines:
            refusal = unanswered(line) if line.strip() else None
            if refusal is None:
                yield line
                continue
            request_id, code, message = refusal
            log.warning("answered a request the SDK cannot read: %s", message)
            await self.ready.wait()
            error = JSONRPCError(jsonrpc="2.0", id=request_id,
                                 error=ErrorData(code=code, message=message))
            await self.replies.send(SessionMessage(error))


async def _stdin_lines(binary: Any) -> Any:
    """The lines of the client's stdin, as text. A daemon thread reads them (a
    blocking read works for every kind of stdin: pipe, socket, terminal, file), so
    the server can end while the read still waits: a thread of the SDK's would be
    waited for, and with the client's stdout gone but its stdin open, forever."""
    import io
    import threading

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    room = threading.Semaphore(1)  # one line read ahead at most, as the SDK's reader
    text = io.TextIOWrapper(binary, encoding="utf-8", errors="replace")

    def pump() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: the server ended
            try:
                for line in text:
                    room.acquire()
                    loop.call_soon_threadsafe(queue.put_nowait, line)
            except (OSError, ValueError):  # a read error is an end of input
                pass
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, name="omh mcp stdin", daemon=True).start()
    while (line := await queue.get()) is not None:
        room.release()
        yield line


async def _serve_stdio(server: MCPServer) -> int | None:
    """`server.run_stdio_async()`, with :class:`_Requests` in front of the SDK's
    line reader, until the client goes away or a signal stops it; the signal that
    did, if one did. stdin is read from a private copy of fd 0 and fd 0 itself
    points at the null device, as the SDK does, so nothing else can take the
    client's bytes.

    A client that goes away — EOF on stdin, its end of stdout closed, with or
    without calls pending — ends the server normally, as SIGTERM and SIGHUP do
    (a call under way is finished first: a note being written is written whole).
    A second signal while it ends exits at once."""
    import anyio
    from mcp.server.stdio import stdio_server

    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    # closefd=False: the reading thread may still wait on it as the server ends.
    requests = _Requests(_stdin_lines(os.fdopen(private, "rb", closefd=False)))
    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK has no public name
    loop = asyncio.get_running_loop()
    stopped_by: list[int] = []
    with anyio.CancelScope() as scope:

        def stop(sig: int) -> None:
            if stopped_by:  # asked twice: the person means it
                os._exit(EXIT_AT_ONCE[signal.Signals(stopped_by[0])])
            stopped_by.append(sig)
            scope.cancel()

        for sig in (signal.SIGINT, *STOPPING):
            loop.add_signal_handler(sig, stop, sig)
        try:
            async with stdio_server(stdin=requests) as (read_stream,  # type: ignore[arg-type]
                                                        write_stream):
                requests.replies = write_stream
                requests.ready.set()
                await lowlevel.run(read_stream, write_stream,
                                   lowlevel.create_initialization_options())
        except (Exception, BaseExceptionGroup) as err:
            if not _client_gone(err, stopping=bool(stopped_by)):
                raise
        finally:
            for sig in (signal.SIGINT, *STOPPING):
                loop.remove_signal_handler(sig)
            if stopped_by:  # the end may still wait (an answer stuck in a full pipe)
                for sig in (signal.SIGINT, *STOPPING):
                    signal.signal(sig, lambda *_: os._exit(EXIT_AT_ONCE[
                        signal.Signals(stopped_by[0])]))
    return stopped_by[0] if stopped_by else None


@dataclass(frozen=True)
class Probe:
    """What a client saw when it started the server the way a harness would."""

    tools: dict[str, str]  # name -> description
    server_name: str
    recall_text: str
    log: str = ""  # what the server wrote on stderr


class ProbeFailed(Exception):
    """The server did not answer; `log` is what it wrote on stderr meanwhile."""

    def __init__(self, reason: str, log: str) -> None:
        super().__init__(reason)
        self.log = log


def _first_cause(err: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: an SDK task group
    wraps what went wrong in "unhandled errors in a TaskGroup"."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


async def _probe(command: str, args: list[str], cwd: Path, env: dict[str, str],
                 errlog: Any) -> Probe:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
        read, write, client_info=Implementation(name="omh-doctor", version="1")
    ) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        tools = {t.name: t.description or "" for t in listed.tools}
        text = ""
        if "recall" in tools:
            result = await session.call_tool("recall", {"question": "how do I build and test"})
            text = "".join(getattr(c, "text", "") for c in result.content)
        return Probe(tools, init.server_info.name, text)


def probe(command: str, args: list[str], cwd: Path, env: dict[str, str],
          timeout: float = 60.0) -> Probe:
    """Start `command args` in `cwd`, initialize, list tools and ask one question.
    Raises ProbeFailed with the first real cause and the server's stderr."""
    import dataclasses
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            seen = asyncio.run(asyncio.wait_for(_probe(command, args, cwd, env, errlog),
                                                timeout))
        except Exception as err:
            cause = _first_cause(err)
            errlog.seek(0)
            raise ProbeFailed(str(cause) or type(cause).__name__, errlog.read()) from err
        errlog.seek(0)
        return dataclasses.replace(seen, log=errlog.read())
