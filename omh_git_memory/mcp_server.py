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
import datetime as dt
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from omh_git_memory.census import Census, take_census
from omh_git_memory.errors import OmhError
from omh_git_memory.index import note_of
from omh_git_memory.recall import (
    EXCERPTS,
    Searcher,
    recall,
    render_excerpts,
    render_tree,
    shown_docs,
)
from omh_git_memory.remember import Observation, remember
from omh_git_memory.stale import pin_trigger, stale_marks
from omh_git_memory.workspace import Workspace, open_workspace

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
    "promotes it to the team."
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

    def searcher(self) -> Searcher:
        from omh_git_memory.git import head_id
        from omh_git_memory.index import local_docs

        commit, local = head_id(self.ws.repo), self.ws.local.signature()
        if self.current is None or commit != self.commit or local != self.local:
            self.current = Searcher(self.ws.snapshot(), local_docs(self.ws.local.scan()))
            self.commit, self.local, self.view = commit, local, None
        return self.current

    def semantic(self) -> Any:
        """The semantic view of the current searcher, or None when it is off."""
        if not self.ws.config().semantic:
            return None
        searcher = self.searcher()
        if self.view is None:
            from omh_git_memory.semantic import Embedder

            self.embedder = self.embedder or Embedder()
            self.view = self.ws.semantic(searcher, self.embedder)
        return self.view


def _source(ctx: Context) -> str:
    """`session s03, claude 1.2` — from the environment and the handshake, never the caller."""
    client = "unknown client"
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None) if params is not None else None
    if info is not None:
        client = f"{info.name} {info.version}".strip()
    session = os.environ.get("OMH_SESSION", "").strip()
    return f"session {session}, {client}" if session else f"mcp, {client}"


def build_server(ws: Workspace) -> MCPServer:
    state = _State(ws)
    census = take_census(state.searcher().docs)
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
    ) -> str:
        searcher = state.searcher()
        known = {d.key for d in searcher.docs if d is not None and not d.problem}
        try:
            obs = Observation(
                expected=expected, observed=observed, evidence=evidence, answers=answers,
                relates_to=relates_to or [], source=_source(ctx),
                invalidated_by=pin_trigger(invalidated_by, ws.facts()),
            )
            done = remember(ws.local, obs, ws.config().keys, today=dt.date.today(),
                            known_keys=known)
        except OmhError as err:
            raise ToolError(str(err)) from None
        return (f"remembered local/{done.key} ({done.note.recorded.isoformat()}). "
                f"A person can share it with `omh memory promote {done.key}`.")

    def recall_tool(
        question: Text,
        also_phrased_as: Items | None = None,
    ) -> str:
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
        return render_tree(answer, fired, also="`also_phrased_as`") + (
            f"\nWhat the best {min(EXCERPTS, len(answer.results))} say:\n{quoted}"
            if quoted else "") + (
            "\nEach line: key, layer · date, title — where to read it in full (a team "
            "note's file in this repository, a local note's file, or the document a stub "
            "points at).\n" if answer.results else "")

    server.add_tool(remember_tool, name="remember", description=REMEMBER_DESCRIPTION,
                    structured_output=False)
    server.add_tool(recall_tool, name="recall", description=recall_description(census),
                    structured_output=False)
    return server


def serve(start: Path) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="omh mcp: %(levelname)s %(message)s")
    server = build_server(open_workspace(start))
    asyncio.run(server.run_stdio_async())


@dataclass(frozen=True)
class Probe:
    """What a client saw when it started the server the way a harness would."""

    tools: dict[str, str]  # name -> description
    server_name: str
    recall_text: str


async def _probe(command: str, args: list[str], cwd: Path, env: dict[str, str]) -> Probe:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    async with stdio_client(params) as (read, write), ClientSession(
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
    """Start `command args` in `cwd`, initialize, list tools and ask one question."""
    return asyncio.run(asyncio.wait_for(_probe(command, args, cwd, env), timeout))
