"""A server that starts without an index answers the handshake at once and builds
the index in the background; a call that comes meanwhile waits for it, within a
bound, and then says the index is still being built (agent/tools.py)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from omh_git_memory.actions.workspace import Workspace, open_workspace
from omh_git_memory.agent import tools as tools_module
from omh_git_memory.agent.sdk import build_server
from omh_git_memory.agent.tools import Tools
from omh_git_memory.model.errors import GitFailure, IndexBuilding, ToolRefused
from tests.helpers.mcp import GOOD, text_of, with_deploy_note


@pytest.fixture
def served(repo_dir: Path) -> Path:
    return with_deploy_note(repo_dir)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Every build of the index waits until the test sets the event (the progress
    callback is told 3 of 7 documents first)."""
    release = threading.Event()
    real = Workspace.searcher

    def slow(self: Workspace, progress: Any = None, local: Any = None) -> Any:
        if progress is not None:
            progress(3, 7)
        assert release.wait(10)
        return real(self, progress, local)

    monkeypatch.setattr(Workspace, "searcher", slow)
    monkeypatch.setattr(tools_module, "WAIT_AT_START", 0.05)
    monkeypatch.setattr(tools_module, "WAIT_FOR_INDEX", 0.05)
    return release


def test_a_server_without_an_index_starts_at_once_and_says_it_is_building(
    served: Path, held: threading.Event
) -> None:
    started = time.monotonic()
    tools = Tools(open_workspace(served))
    assert time.monotonic() - started < 2  # not waiting for the held build
    assert "being built" in tools.recall_description
    assert "The store holds" not in tools.recall_description
    with pytest.raises(ToolRefused) as refused:
        tools.recall("how do I deploy")
    assert "still being built (3 of 7 documents read)" in str(refused.value)
    tools.state.building.progress = (7, 7)  # type: ignore[union-attr]
    with pytest.raises(ToolRefused, match=r"all 7 documents read; the index is being written"):
        tools.recall("how do I deploy")
    assert "nothing was searched or written" in str(refused.value)
    with pytest.raises(IndexBuilding):
        tools.remember(**GOOD, client=None)  # nothing written while it waits
    assert not list(open_workspace(served).local.scan())
    held.set()
    assert "deploy" in tools.recall("how do I deploy")


def test_a_call_waits_for_a_build_that_ends_within_the_bound(
    served: Path, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = Tools(open_workspace(served))
    monkeypatch.setattr(tools_module, "WAIT_FOR_INDEX", 5.0)
    threading.Timer(0.2, held.set).start()
    assert "deploy" in tools.recall("how do I deploy")


def test_a_server_with_its_index_cached_gives_the_census_and_builds_nothing(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_workspace(served).searcher()  # the index of HEAD, cached
    started: list[str] = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    tools = Tools(open_workspace(served))
    assert "The store holds 3 notes (3 team)" in tools.recall_description
    assert started == []
    assert "deploy" in tools.recall("how do I deploy")


def test_a_small_store_built_at_start_still_gets_its_census(served: Path) -> None:
    """No index cached, but built within WAIT_AT_START: the description counts."""
    tools = Tools(open_workspace(served))
    assert "The store holds 3 notes (3 team)" in tools.recall_description


def test_a_build_that_fails_is_said_on_the_call_that_waited(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Workspace, progress: Any = None, local: Any = None) -> Any:
        time.sleep(0.2)  # after the server has answered without the census
        raise GitFailure("the object database cannot be read")

    monkeypatch.setattr(Workspace, "searcher", broken)
    monkeypatch.setattr(tools_module, "WAIT_AT_START", 0.0)
    tools = Tools(open_workspace(served))
    with pytest.raises(ToolRefused, match="object database cannot be read"):
        tools.recall("how do I deploy")


def test_the_build_uses_a_repository_handle_of_its_own(
    served: Path, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[object] = []
    real = tools_module._Build.run

    def spy(self: Any, ws: Workspace) -> None:
        seen.append(ws.repo)
        real(self, ws)

    monkeypatch.setattr(tools_module._Build, "run", spy)
    ws = open_workspace(served)
    Tools(ws)
    held.set()
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen and seen[0] is not ws.repo


def test_a_real_client_lists_the_tools_while_the_index_is_built(
    served: Path, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def run() -> Any:
        server = build_server(open_workspace(served))
        async with Client(server) as client:
            listed = await client.list_tools()
            early = await client.call_tool("recall", {"question": "how do I deploy"})
            held.set()
            # the build, let go, may take longer than the held wait on a loaded machine
            monkeypatch.setattr(tools_module, "WAIT_FOR_INDEX", 10.0)
            later = await client.call_tool("recall", {"question": "how do I deploy"})
            return listed, early, later

    listed, early, later = asyncio.run(run())
    assert sorted(t.name for t in listed.tools) == ["recall", "remember"]
    assert early.is_error and "still being built" in text_of(early)
    assert not later.is_error and "deploy" in text_of(later)
