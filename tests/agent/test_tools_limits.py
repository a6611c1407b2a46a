"""Holes the mutation pass found in the MCP server: recall's stale marks,
through a real MCP client, and the argument limits docs/mcp.md states, tested with
the numbers the page gives (never the server's constants, which a change would
move with the test).

Found by mutation testing (the holes docs/records/mutation-holes.md lists);
was tests/test_holes_mcp.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.helpers import git, make_repo, omh
from tests.helpers.mcp import GOOD, over_stdio, text_of

# docs/mcp.md: "every text argument is at most 16,384 characters and every list at
# most 32 items"; `invalidated_by` at most 200 characters, `replaces` at most 512.
TEXT_LIMIT = 16384
LIST_LIMIT = 32
TRIGGER_LIMIT = 200
KEY_LIMIT = 512


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, {"src/app.py": "def parse_header(x):\n    return x\n", "README.md": "# App\n"})
    assert omh(path, "init").code == 0
    return path


def _note(observed: str, **more: Any) -> dict[str, Any]:
    return {**GOOD, "observed": observed, **more}


# --- recall's stale marks ------------------------------------------------------------


def test_mcp_recall_marks_a_fired_trigger_and_not_one_it_cannot_tell(app: Path) -> None:
    async def body(session: ClientSession) -> Any:
        for args in (_note("Headers parse lazily.", invalidated_by="file:src/app.py"),
                     _note("Headers parse on the base image.", invalidated_by="base:2026-09")):
            done = await session.call_tool("remember", args)
            assert not done.is_error, text_of(done)
        before = await session.call_tool("recall", {"question": "headers parse"})
        # The file changes in a commit while the server runs: it sees the new HEAD.
        (app / "src/app.py").write_text("def parse_header(x):\n    return x.strip()\n")
        git(app, "commit", "-qam", "parse_header strips")
        after = await session.call_tool("recall", {"question": "headers parse"})
        return text_of(before), text_of(after)

    before, after = over_stdio(app, body)
    assert "· stale" not in before and "stale:" not in before
    tree = after.split("\nWhat the best ")[0]  # the tree, not the excerpts after it
    lines = {line.split()[0]: line for line in tree.splitlines()
             if line.startswith("surprise/")}
    fired = lines["surprise/headers-parse-lazily"]
    assert "local · " in fired and " · stale  " in fired, after
    assert " · stale" not in lines["surprise/headers-parse-on-the-base-image"]  # cannot tell
    assert ("stale: a note's invalidated_by has fired; `omh memory stale` says why"
            in after.splitlines())


# --- the size limits, by the numbers on the page ---------------------------------------


def test_a_text_argument_of_the_documented_length_is_taken_and_one_more_is_not(
    app: Path,
) -> None:
    at, over = "x" * TEXT_LIMIT, "x" * (TEXT_LIMIT + 1)

    async def body(session: ClientSession) -> Any:
        results = {}
        for name in ("expected", "evidence"):
            results[name, "at"] = await session.call_tool(
                "remember", _note(f"Limit {name} holds.", **{name: at}))
            results[name, "over"] = await session.call_tool(
                "remember", _note(f"Limit {name} overflows.", **{name: over}))
        long_observed = "Observed at the limit. " + "y" * (TEXT_LIMIT - 23)
        results["observed", "at"] = await session.call_tool("remember", _note(long_observed))
        results["observed", "over"] = await session.call_tool(
            "remember", _note(long_observed + "y"))
        results["answers", "at"] = await session.call_tool(
            "remember", _note("Answer at the limit.", answers=[at]))
        results["answers", "over"] = await session.call_tool(
            "remember", _note("Answer over the limit.", answers=[over]))
        results["question", "at"] = await session.call_tool("recall", {"question": at})
        results["question", "over"] = await session.call_tool("recall", {"question": over})
        wide = "é" * TEXT_LIMIT  # characters, not bytes: 32 KiB of UTF-8
        results["wide", "at"] = await session.call_tool(
            "remember", _note("Wide evidence holds.", evidence=wide))
        return results

    results = over_stdio(app, body)
    for (name, where), result in results.items():
        assert result.is_error is (where == "over"), (name, where, text_of(result)[:200])


def test_a_list_of_the_documented_length_is_taken_and_one_more_is_not(app: Path) -> None:
    async def body(session: ClientSession) -> Any:
        results = {}
        questions = [f"question number {i}?" for i in range(LIST_LIMIT + 1)]
        results["answers", "at"] = await session.call_tool(
            "remember", _note("Many answers hold.", answers=questions[:LIST_LIMIT]))
        results["answers", "over"] = await session.call_tool(
            "remember", _note("Too many answers.", answers=questions))
        links = ["readme"] * (LIST_LIMIT + 1)
        results["relates_to", "at"] = await session.call_tool(
            "remember", _note("Many links hold.", relates_to=links[:LIST_LIMIT]))
        results["relates_to", "over"] = await session.call_tool(
            "remember", _note("Too many links.", relates_to=links))
        results["also", "at"] = await session.call_tool(
            "recall", {"question": "app", "also_phrased_as": questions[:LIST_LIMIT]})
        results["also", "over"] = await session.call_tool(
            "recall", {"question": "app", "also_phrased_as": questions})
        return results

    results = over_stdio(app, body)
    for (name, where), result in results.items():
        assert result.is_error is (where == "over"), (name, where, text_of(result)[:200])


def test_trigger_and_replaces_limits_are_the_documented_ones(app: Path) -> None:
    symbol = "s" * (TRIGGER_LIMIT - len("symbol:"))
    key = "k" * KEY_LIMIT

    async def body(session: ClientSession) -> Any:
        return (
            await session.call_tool("remember", _note("Trigger at the limit.",
                                                      invalidated_by=f"symbol:{symbol}")),
            await session.call_tool("remember", _note("Trigger over the limit.",
                                                      invalidated_by=f"symbol:{symbol}s")),
            await session.call_tool("remember", _note("Replaces at the limit.", replaces=key)),
            await session.call_tool("remember", _note("Replaces over.", replaces=key + "k")),
        )

    trigger_at, trigger_over, replaces_at, replaces_over = over_stdio(app, body)
    assert not trigger_at.is_error, text_of(trigger_at)
    assert trigger_over.is_error
    # A key of the limit's length passes the schema and is then looked for: no note.
    assert replaces_at.is_error and "no local note" in text_of(replaces_at)
    assert replaces_over.is_error and "no local note" not in text_of(replaces_over)
    assert "512" in text_of(replaces_over) and "200" in text_of(trigger_over)
