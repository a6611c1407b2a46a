"""The real MCP server in a subprocess, driven by the SDK's own clients."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from omh_git_memory.agent.tools import MAX_TEXT
from tests.helpers import git, note_text, omh
from tests.helpers.mcp import GOOD, over_stdio, server_params, text_of


@pytest.fixture
def served(repo_dir: Path) -> Path:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text(note_text("deploy", body="Deploy from the release branch.\n"))
    (repo_dir / "docs").mkdir()
    (repo_dir / "docs/build.md").write_text("# Building\n\n## Running the tests\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "notes and docs")
    return repo_dir


def test_exactly_two_tools_and_the_census_in_recalls_description(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return await session.list_tools()

    tools = {t.name: t for t in over_stdio(served, body).tools}
    assert sorted(tools) == ["recall", "remember"]
    description = tools["recall"].description or ""
    assert "4 notes (4 team)" in description  # deploy, the stub, README's stub, the topic
    assert "deploy" not in description.lower().split("notes (")[0]  # counts, not titles
    schema = tools["remember"].input_schema["properties"]
    assert sorted(schema) == sorted(["expected", "observed", "evidence", "answers",
                                     "relates_to", "invalidated_by", "replaces"])
    assert "source" not in schema


def test_the_description_stays_bounded_whatever_the_store_size(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    for group in range(30):
        for i in range(10):
            path = notes / f"g{group}" / f"n{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note_text(f"g{group}/n{i}"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "many")

    async def body(session: ClientSession) -> Any:
        return await session.list_tools()

    tools = {t.name: t for t in over_stdio(repo_dir, body).tools}
    description = tools["recall"].description or ""
    assert "302 notes" in description and "other" in description
    assert len(description) < 800


def test_remember_writes_local_with_a_source_the_caller_cannot_set(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        forged = await session.call_tool("remember", {**GOOD, "source": "the boss"})
        return (forged, await session.call_tool("remember", GOOD),
                await session.call_tool("remember", GOOD))

    forged, written_now, again = over_stdio(served, body)
    # The extra `source` is refused, not obeyed: nothing written, the call named.
    assert forged.is_error and "remember takes no `source`" in text_of(forged)
    assert not written_now.is_error, text_of(written_now)
    assert again.is_error and "already exists" in text_of(again)  # a taken key, over MCP
    store = Path(omh(served, "memory", "--json").json()["local_store"])
    written = (store / "surprise/ci-already-listens-on-8080.md").read_text()
    assert "source: session s03, claude-code 2.1\n" in written
    assert "the boss" not in written
    assert git(served, "status", "--porcelain") == ""  # nothing in the checkout


def test_recall_returns_the_tree_with_dates_and_layers(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        await session.call_tool("remember", GOOD)
        return await session.call_tool("recall", {"question": "tests fail on CI",
                                                  "also_phrased_as": ["port taken"]})

    text = text_of(over_stdio(served, body))
    first = text.splitlines()[0]
    assert first.startswith("surprise/ci-already-listens-on-8080 ")
    assert f"local · {__import__('datetime').date.today().isoformat()}  " in first
    assert "where to read it in full" in text


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        results = [
            await session.call_tool("remember", {"expected": "only this"}),
            await session.call_tool("remember", {**GOOD, "answers": "not a list"}),
            await session.call_tool("remember", {**GOOD, "answers": []}),
            await session.call_tool("remember", {**GOOD, "evidence": "x" * (MAX_TEXT + 1)}),
            await session.call_tool("remember", {**GOOD, "invalidated_by": "whenever"}),
            await session.call_tool("recall", {"question": ""}),
            await session.call_tool("no_such_tool", {}),
        ]
        after = await session.call_tool("recall", {"question": "deploy"})
        return results, after

    results, after = over_stdio(served, body)
    messages = [text_of(r) for r in results]
    assert all(r.is_error for r in results), messages
    assert "answers" in messages[2] and "nobody can find" in messages[2]
    assert "`expected` is" not in messages[0] and "`observed` is missing" in messages[0]
    assert not after.is_error and "deploy" in text_of(after)


def test_a_flood_of_calls_is_answered(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return await asyncio.gather(*(session.call_tool("recall", {"question": f"deploy {i}"})
                                      for i in range(40)))

    results = over_stdio(served, body)
    assert len(results) == 40 and not any(r.is_error for r in results)


def test_the_modern_client_mode_works_and_passes_its_name(served: Path) -> None:
    async def run() -> Any:
        async with Client(server_params(served, "s09"),
                          client_info=Implementation(name="codex", version="0.9")) as client:
            tools = await client.list_tools()
            result = await client.call_tool("remember", GOOD)
            return [t.name for t in tools.tools], result

    names, result = asyncio.run(run())
    assert sorted(names) == ["recall", "remember"] and not result.is_error
    store = Path(omh(served, "memory", "--json").json()["local_store"])
    written = (store / "surprise/ci-already-listens-on-8080.md").read_text()
    assert "source: session s09, codex 0.9\n" in written


def test_nothing_but_protocol_on_stdout(served: Path) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    bad = "this is not json\n"
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", "mcp", "serve"],
                          cwd=served, input=json.dumps(request) + "\n" + bad,
                          capture_output=True, text=True, timeout=60, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, done.stderr
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    # Answers come in the order they are ready (JSON-RPC matches them by id): the
    # refusal of the second line may come before the handshake's answer.
    (handshake,) = [json.loads(line) for line in lines if json.loads(line).get("id") == 1]
    assert handshake["result"]["serverInfo"]["name"] == "omh"


def test_remember_pins_a_file_trigger_over_mcp(served: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return await session.call_tool("remember", {**GOOD, "invalidated_by": "file:docs/build.md"})

    result = over_stdio(served, body)
    assert not result.is_error, text_of(result)
    store = Path(omh(served, "memory", "--json").json()["local_store"])
    blob = git(served, "rev-parse", "HEAD:docs/build.md").strip()
    written = (store / "surprise/ci-already-listens-on-8080.md").read_text()
    assert f"invalidated_by: file:docs/build.md@{blob}\n" in written


def test_recall_says_what_each_result_is_and_quotes_the_best_within_a_budget(
    served: Path,
) -> None:
    from omh_git_memory.recall.render import EXCERPT_BUDGET, EXCERPT_EACH

    long = {**GOOD, "observed": "CI already listens on 8080. " + "It is the runner's proxy. " * 40,
            "evidence": "bind: address already in use\nsecond line never quoted"}

    async def body(session: ClientSession) -> Any:
        await session.call_tool("remember", long)
        return (await session.call_tool("recall", {"question": "tests fail on CI: port 8080"}),
                await session.call_tool("recall", {"question": "running the tests"}),
                await session.call_tool("recall", {"question": "what is it?"}))

    surprise, stub, nothing = (text_of(r) for r in over_stdio(served, body))
    store = Path(omh(served, "memory", "--json").json()["local_store"])
    first = surprise.splitlines()[0]
    assert first.startswith("surprise/ci-already-listens-on-8080 ")
    assert "local · " in first and "CI already listens on 8080." in first
    assert first.endswith(str(store / "surprise/ci-already-listens-on-8080.md"))
    _tree, quoted = surprise.split("\nWhat the best ", 1)
    block = quoted.split("\n", 1)[1].split("\n\nEach line:")[0] + "\n"
    assert len(block.encode()) <= EXCERPT_BUDGET
    parts = block.split("\n  Evidence:")[0]
    assert "  Observed: CI already listens on 8080." in parts
    assert "  Evidence: bind: address already in use" in block
    assert "second line" not in block
    assert len(block.split("\nsurprise/", 1)[0].encode()) <= EXCERPT_EACH
    # a stub: the document it points at, and the section that matched (a heading alone)
    assert stub.splitlines()[0].split(" · by ")[0].endswith(
        "Building — docs/build.md § Running the tests, line 3")
    assert "  Read docs/build.md § Running the tests, line 3\n" in stub
    # messages over MCP name MCP arguments, not CLI flags
    assert "also_phrased_as" in nothing and "--also" not in nothing


def test_the_excerpt_heading_agrees_with_one_result(served: Path) -> None:
    # With one result the answer read "What the best 1 say:".
    async def body(session: ClientSession) -> Any:
        return await session.call_tool("recall", {"question": "release branch"})

    text = text_of(over_stdio(served, body))
    assert text.splitlines()[0].startswith("deploy "), text
    assert "\nWhat the best note says:\n" in text, text
def _surprise(key: str, related: str) -> str:
    return (f"---\nkey: {key}\ntype: surprise\nsource: test\nrecorded: 2026-11-01\n---\n\n"
            f"# {key}\n\n## Expected\nA.\n\n## Observed\nB.\n\n## Evidence\nC\n\n"
            f"## Answers\n\n- why?\n\n## Related\n\n- [[{related}]]\n")


def _recall_description(repo: Path) -> str:
    async def body(session: ClientSession) -> Any:
        return await session.list_tools()

    tools = {t.name: t for t in over_stdio(repo, body).tools}
    return tools["recall"].description or ""


def test_the_description_counts_notes_by_what_they_are_about(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    (notes / "surprise").mkdir(parents=True)
    for topic, n in (("credentials", 8), ("sandbox", 7), ("code-graph", 5)):
        (notes / f"{topic}.md").write_text(note_text(topic, body="What we know.\n"))
        for i in range(n):
            key = f"surprise/{topic}-{i}"
            (notes / f"{key}.md").write_text(_surprise(key, topic))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "agent notes")
    description = _recall_description(repo_dir)
    assert "25 notes (25 team): 9 credentials, 8 sandbox, 6 code graph, 1 docs, 1 other" in (
        description), description
    assert "surprise" not in description.split("The store holds")[1].split(".")[0]


def test_lint_findings_ride_in_the_description_and_nothing_when_clean(repo_dir: Path) -> None:
    from omh_git_memory.actions.workspace import open_workspace

    assert omh(repo_dir, "init").code == 0
    assert "omh memory lint" not in _recall_description(repo_dir)  # a clean store
    root = open_workspace(repo_dir).local.root
    (root / "alone.md").write_text(note_text("alone", body="Nothing links here.\n"))
    assert omh(repo_dir, "memory", "lint").out.count("Orphan") >= 1
    assert "omh memory lint" not in _recall_description(repo_dir)  # Orphan: the shape
    (root / "fence.md").write_text(note_text("fence", body="```\nnever closed\n"))
    described = _recall_description(repo_dir)  # the local store changed: linted again
    assert ("`omh memory lint` finds 1 refused note in this store "
            "(1 UnclosedFence); run it to list them.") in described, described
    assert omh(repo_dir, "memory", "lint").code == 1  # the same counts, listed
    (root / "fence.md").unlink()
    assert "omh memory lint" not in _recall_description(repo_dir)


def test_serve_repo_finds_the_store_from_dir_whatever_the_folder(
    served: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"  # not a repository: a harness's own folder
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "omh_git_memory", "mcp", "serve", "--repo",
                                      str(served)], cwd=str(elsewhere), env=dict(os.environ))

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = await s.list_tools()
            answer = await s.call_tool("recall", {"question": "deploy release branch"})
            return tools, answer

    tools, answer = asyncio.run(run())
    recall_tool = next(t for t in tools.tools if t.name == "recall")
    assert "4 notes (4 team)" in (recall_tool.description or "")
    assert "deploy" in text_of(answer)
    bad = omh(elsewhere, "mcp", "serve", "--repo", str(tmp_path / "missing"))
    assert bad.code == 1 and bad.err.startswith("omh: ")
