"""Day one for a harness: a fresh clone of a repository of some 2,000 Markdown files,
`omh init`, then `omh mcp serve` started by the MCP SDK's stdio client as a harness
starts it, with a harness's time limit.

    python bench/first_connect.py [--copies 4] [--limit 30]

The repository is docs-dev's rust book copied `--copies` times (each copy under its
own folder) plus poetry's documents, committed, then cloned afresh (pygit2), so no
index is cached when the server starts, as in a new clone. Printed, in one run:

- spawn → initialize → tools/list answered, the first time (no index) and again
  (index cached), and whether it came within `--limit` seconds (Claude Code and
  Codex give a server 30 s and 10 s by default: docs/mcp.md);
- the first `recall` call's round trip, and what it said while the index was built;
- beside them, in the same run: `python -c pass` and `python -c "import mcp"`, the
  SDK import a server cannot avoid, and the ratio of omh's own start-up (tools/list
  with the index cached, less the SDK import) to it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
DOCS_DEV = ROOT.parent / "shared" / "bench" / "docs-dev"
SIG = pygit2.Signature("bench", "bench@omh.invalid", 1_700_000_000, 0)


def docs_repo(where: Path, copies: int) -> int:
    """A repository at `where` holding the book `copies` times and poetry once; the
    number of Markdown files."""
    for n in range(copies):
        shutil.copytree(DOCS_DEV / "book", where / f"book{n}")
    shutil.copytree(DOCS_DEV / "poetry", where / "poetry")
    repo = pygit2.init_repository(str(where), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "documents", repo.index.write_tree(), [])
    return sum(1 for _ in where.rglob("*.md"))


def omh(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=cwd, env=env,
                   check=True, capture_output=True)


async def connect(params: StdioServerParameters, limit: float,
                  question: str | None) -> tuple[float, float | None, str]:
    """Seconds to tools/list; seconds to the first recall answered and its first line."""
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await asyncio.wait_for(session.initialize(), limit)
        await asyncio.wait_for(session.list_tools(), limit)
        listed = time.perf_counter() - started
        if question is None:
            return listed, None, ""
        asked = time.perf_counter()
        result = await session.call_tool("recall", {"question": question})
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        return listed, time.perf_counter() - asked, text.splitlines()[0] if text else ""


def python_time(code: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--limit", type=float, default=30.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        origin = Path(tmp) / "origin"
        files = docs_repo(origin, args.copies)
        clone = Path(tmp) / "clone"
        pygit2.clone_repository(str(origin), str(clone))
        env = {**os.environ, "OMH_HOME": str(Path(tmp) / "home"),
               "OMH_LOCAL_STORE": str(Path(tmp) / "local")}
        omh(clone, env, "init")
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "omh_git_memory", "mcp", "serve"],
                                       cwd=str(clone), env=env)
        question = "how do I run the tests for the book's code examples"
        first, recall_first, said = asyncio.run(connect(params, args.limit, question))
        warm = sorted(asyncio.run(connect(params, args.limit, None))[0] for _ in range(3))[1]
    bare = python_time("pass")
    sdk = python_time("import mcp")
    own = max(warm - sdk, 0.0)
    print(f"{files:,} Markdown files, a fresh clone, limit {args.limit:.0f} s\n")
    print("| what | seconds |")
    print("|---|---:|")
    print(f"| start → tools/list, no index yet | {first:.2f} "
          f"({'within' if first <= args.limit else 'OVER'} the limit) |")
    print(f"| first recall's round trip | {recall_first or 0:.2f} |")
    print(f"| start → tools/list, index cached (median of 3) | {warm:.2f} |")
    print(f"| python -c pass | {bare:.2f} |")
    print(f"| python -c 'import mcp' | {sdk:.2f} |")
    print(f"| omh's own start-up (cached tools/list − SDK import) / SDK import | "
          f"{own / sdk if sdk else 0:.2f} |")
    print(f"\nfirst recall said: {said}")


if __name__ == "__main__":
    main()
