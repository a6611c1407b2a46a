"""The MCP server's speed: start to tools/list answered, and a recall round trip.

    python bench/mcp_speed.py [--notes 10000]

Builds a synthetic store (as bench/recall_speed.py does), indexes it, then starts
`omh mcp serve` with the SDK's stdio client the way a harness does. Reports the
median of 5 starts (spawn → initialize → tools/list answered) and the median and
p95 of 50 recall calls over one connection, beside `git grep -i -w` over the same
notes in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from recall_speed import CORPUS, make_repo, wall  # noqa: E402


async def start_once(params: StdioServerParameters) -> float:
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        return time.perf_counter() - started


async def recalls(params: StdioServerParameters, questions: list[str]) -> list[float]:
    times = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("recall", {"question": "warm up"})
        for q in questions:
            started = time.perf_counter()
            await session.call_tool("recall", {"question": q})
            times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10000)
    args = parser.parse_args()
    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")][:50]
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "repo"
        make_repo(where, args.notes)
        env = {**os.environ, "OMH_LOCAL_STORE": str(Path(tmp) / "local")}
        subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "reindex"],
                       cwd=where, env=env, check=True, capture_output=True)
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "omh_git_memory", "mcp", "serve"],
                                       cwd=str(where), env=env)
        starts = [asyncio.run(start_once(params)) for _ in range(5)]
        times = sorted(asyncio.run(recalls(params, questions)))
        grep_args = ["git", "grep", "-i", "-w", "-l"]
        for word in questions[0].replace(":", " ").split():
            grep_args += ["-e", word]
        grep = wall([*grep_args, "HEAD", "--", ".omh/notes"], where, env)
    start = statistics.median(starts)
    p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95) - 1]
    print("| notes | start → tools/list | recall round trip p50 | p95 | git grep -i -w |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {args.notes:,} | {start * 1000:.0f} ms | {p50 * 1000:.1f} ms | "
          f"{p95 * 1000:.1f} ms | {grep * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
