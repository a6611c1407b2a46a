"""The real MCP server in a subprocess, driven by the SDK's own stdio client as an
agent's harness drives it (client `claude-code` 2.1)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from tests.helpers import git, note_text

# A surprise an agent remembers over the tool.
GOOD = {"expected": "port 8080 would be free", "observed": "CI already listens on 8080.",
        "evidence": "bind: address already in use", "answers": ["why do tests fail on CI?"]}


def server_params(repo: Path, session: str = "s03") -> StdioServerParameters:
    """`omh mcp serve` in `repo`, started for the agent session `session`."""
    env = {**os.environ, "OMH_SESSION": session}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "omh_git_memory", "mcp", "serve"],
                                 cwd=str(repo), env=env)


def over_stdio(repo: Path, body: Callable[[ClientSession], Awaitable[Any]],
               session: str = "s03") -> Any:
    """What `body` returns, given a client session initialised with the server."""
    async def run() -> Any:
        async with stdio_client(server_params(repo, session)) as (read, write), ClientSession(
            read, write, client_info=Implementation(name="claude-code", version="2.1")
        ) as client:
            await client.initialize()
            return await body(client)

    return asyncio.run(run())


def text_of(result: Any) -> str:
    """The text of a tool's answer."""
    return "".join(getattr(c, "text", "") for c in result.content)


def remember_calls(repo: Path, calls: list[dict[str, Any]], session: str = "s03") -> list[Any]:
    """The answers to one `remember` call per item of `calls`, in one session."""
    async def body(client: ClientSession) -> list[Any]:
        return [await client.call_tool("remember", args) for args in calls]

    return list(over_stdio(repo, body, session))


def remember_over_mcp(repo: Path, session: str, *calls: dict[str, Any]) -> list[str]:
    """The text of each answer to `remember` with `calls`, in one session; each must
    succeed."""
    async def body(client: ClientSession) -> list[str]:
        out = []
        for call in calls:
            result = await client.call_tool("remember", call)
            assert not result.is_error, result
            out.append(text_of(result))
        return out

    return list(over_stdio(repo, body, session))


def mcp_args(cli: list[str]) -> dict[str, Any]:
    """The `remember` tool's arguments for the same note as `omh memory remember CLI`."""
    given = dict(zip(cli[::2], cli[1::2], strict=True))
    return {"expected": given["--expected"], "observed": given["--observed"],
            "evidence": given["--evidence"], "answers": [given["--answers"]]}


def with_deploy_note(repo: Path) -> Path:
    """`repo` with one committed team note, `deploy`: the store most server tests
    serve."""
    notes = repo / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text(note_text("deploy", body="Deploy from the release branch.\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a team note")
    return repo
