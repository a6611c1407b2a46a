"""The official MCP SDK, behind this one module (it costs ~0.5 s to import, so only
`omh mcp serve` and `omh doctor` load it).

The server object with the two tools' signatures (their argument types and limits
are the schema the agent is shown), the SDK's session over stdio, the JSON-RPC
replies the transport sends itself, and the SDK's client the doctor's probe uses.
What a tool answers is agent/tools.py's; how the server is started and ended,
agent/transport.py's.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from omh_git_memory.agent.tools import (
    INSTRUCTIONS,
    MAX_ITEMS,
    MAX_KEY,
    MAX_TEXT,
    REMEMBER_DESCRIPTION,
    Tools,
)
from omh_git_memory.model.errors import ToolRefused

if TYPE_CHECKING:
    from omh_git_memory.actions.workspace import Workspace
    from omh_git_memory.agent.transport import Requests

Server = MCPServer  # what build_server makes, for the modules that hold one

Text = Annotated[str, Field(max_length=MAX_TEXT)]
Items = Annotated[list[Annotated[str, Field(max_length=MAX_TEXT)]], Field(max_length=MAX_ITEMS)]


class _Server(MCPServer):
    """The SDK's server, with a call whose arguments do not fit the tool's schema
    answered in omh's words rather than pydantic's, and a call that gives an argument
    the tool does not take refused (the SDK would drop it without a word: an agent
    that guessed `ref` would believe it got what it asked for)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.takes: dict[str, tuple[str, ...]] = {}  # tool → the arguments it takes

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context | None = None) -> Any:
        known = self.takes.get(name)
        unknown = sorted(set(arguments) - set(known)) if known is not None else []
        if unknown and known is not None:
            raise ToolError(unknown_arguments(name, unknown, known))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as err:
            if isinstance(err.__cause__, ValidationError):
                raise ToolError(arguments_refused(name, err.__cause__)) from None
            said, prefix = str(err), f"Error executing tool {name}: "
            if said.startswith(prefix):  # omh's own refusal, in its own words only
                raise ToolError(said[len(prefix):]) from None
            raise


def unknown_arguments(tool: str, unknown: list[str], known: tuple[str, ...]) -> str:
    """What a call giving arguments `tool` does not take is told, and that nothing
    happened."""
    did = "nothing was written" if tool == "remember" else "nothing was searched"
    named = ", ".join(f"`{a}`" for a in unknown)
    return (f"{tool} takes no {named} (it takes {', '.join(f'`{a}`' for a in known)}); "
            f"{did}. Call it again without {'it' if len(unknown) == 1 else 'them'}")


def arguments_refused(tool: str, err: ValidationError) -> str:
    """What the agent reads when its arguments do not fit `tool`'s schema: each
    argument's problem, and that nothing happened."""
    problems = []
    for problem in err.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "the arguments"
        kind, limits = problem["type"], problem.get("ctx") or {}
        if kind == "missing":
            problems.append(f"`{where}` is missing")
        elif kind == "string_too_long":
            problems.append(f"`{where}` is over {limits.get('max_length')} characters")
        elif kind == "too_long":
            problems.append(f"`{where}` has over {limits.get('max_length')} items")
        elif kind in ("string_type", "list_type"):
            problems.append(f"`{where}` must be {'text' if kind == 'string_type' else 'a list'}")
        else:
            problems.append(f"`{where}`: {problem['msg']}")
    did = "nothing was written" if tool == "remember" else "nothing was searched"
    return (f"{tool} cannot take these arguments: {'; '.join(problems)}; {did}. Call it "
            "again with them fixed (the tool's schema gives each argument and its limits)")


def build_server(ws: Workspace) -> MCPServer:
    """The MCP server of `ws`: the remember and recall tools, as agents see them."""
    tools = Tools(ws)
    server = _Server(name="omh", instructions=INSTRUCTIONS, version=_version())

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
        try:
            return tools.remember(expected, observed, evidence, answers, _client(ctx),
                                  relates_to, invalidated_by, replaces)
        except ToolRefused as err:
            raise ToolError(str(err)) from None

    def recall_tool(
        question: Text,
        also_phrased_as: Items | None = None,
    ) -> str:
        try:
            return tools.recall(question, also_phrased_as)
        except ToolRefused as err:
            raise ToolError(str(err)) from None

    server.add_tool(remember_tool, name="remember", description=REMEMBER_DESCRIPTION,
                    structured_output=False)
    server.add_tool(recall_tool, name="recall", description=tools.recall_description,
                    structured_output=False)
    server.takes = {name: tuple(p for p in inspect.signature(fn).parameters if p != "ctx")
                    for name, fn in (("remember", remember_tool), ("recall", recall_tool))}
    return server


def _version() -> str:
    """omh's version as installed, as `omh --version` gives it ("" from a source tree
    nobody installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("omh-git-memory")
    except PackageNotFoundError:
        return ""


def _client(ctx: Context) -> tuple[str, str] | None:
    """The connecting client's (name, version), as its handshake gave them."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None) if params is not None else None
    return None if info is None else (info.name, info.version or "")


# --- the stdio session -----------------------------------------------------------


def sdk_reads(line: str) -> bool:
    """Whether the SDK's transport reads `line` as a JSON-RPC message (it drops one
    its parser refuses, without a word)."""
    from mcp_types import jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return False
    return True


def error_reply(request_id: Any, code: int, message: str) -> Any:
    """A JSON-RPC error reply, as the SDK's write stream sends it."""
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError

    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                       error=ErrorData(code=code, message=message)))


async def run_stdio(server: MCPServer, requests: Requests) -> None:
    """`server.run_stdio_async()`, reading the client's lines from `requests`, which
    is handed the write stream its own replies go to."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # what run_stdio_async runs; the SDK has no public name
    async with stdio_server(stdin=requests) as (read_stream,  # type: ignore[arg-type]
                                                write_stream):
        requests.connected(write_stream)
        await lowlevel.run(read_stream, _Watched(write_stream, requests.answered),
                           lowlevel.create_initialization_options())


class _Watched:
    """A send stream that tells `seen` of each message before sending it on."""

    def __init__(self, stream: Any, seen: Any) -> None:
        self._stream = stream
        self._seen = seen

    async def send(self, item: Any) -> None:
        await self._stream.send(item)
        self._seen(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def __aenter__(self) -> Any:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)


# --- the client ------------------------------------------------------------------


async def client_sees(command: str, args: list[str], cwd: Path, env: dict[str, str],
                      errlog: Any) -> tuple[dict[str, str], str, str, tuple[float, ...]]:
    """Start `command args` in `cwd` as a harness would, initialize, list the tools and
    ask recall one question: the tools (name → description), the server's name,
    recall's answer, and the seconds from the start to `tools/list` answered and to
    the answer. The server's stderr goes to `errlog`."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    started = time.monotonic()
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
        read, write, client_info=Implementation(name="omh-doctor", version="1")
    ) as session:
        init = await session.initialize()
        listed = await session.list_tools()
        timings = [time.monotonic() - started]
        tools = {t.name: t.description or "" for t in listed.tools}
        text = ""
        if "recall" in tools:
            result = await session.call_tool("recall", {"question": "how do I build and test"})
            text = "".join(getattr(c, "text", "") for c in result.content)
            timings.append(time.monotonic() - started)
        return tools, init.server_info.name, text, tuple(timings)
