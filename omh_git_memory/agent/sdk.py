"""The official MCP SDK, behind this one module (it costs ~0.5 s to import, so only
`omh mcp serve` and `omh doctor` load it).

The server object with the two tools' signatures (their argument types and limits
are the schema the agent is shown), the SDK's session over stdio, the JSON-RPC
replies the transport sends itself, and the SDK's client the doctor's probe uses.
What a tool answers is agent/tools.py's; how the server is started and ended,
agent/transport.py's.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

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


def build_server(ws: Workspace) -> MCPServer:
    """The MCP server of `ws`: the remember and recall tools, as agents see them."""
    tools = Tools(ws)
    server = MCPServer(name="omh", instructions=INSTRUCTIONS)

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
    return server


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
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


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
