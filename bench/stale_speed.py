"""`omh memory stale` on a repository of N source files and N notes with triggers.

    python bench/stale_speed.py [--size 10000]

Every note carries a trigger — a quarter each file:, symbol:, base: and image: —
and the run must cost one tree walk plus one pass over the source files for all
symbols together, whatever the number of notes. Printed beside `git ls-tree -r`
(one tree walk) and `git grep -w` for the same symbols, in the same run.

Then the symbol scan of one hostile C header (104 KB of `typedef ` with no `;`,
which once took 41 s) beside an ordinary header of the same size, in the same run:
the hostile one must stay within 3× of the ordinary one.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_speed import SIG, wall  # noqa: E402

from omh_git_memory.actions.workspace import open_workspace  # noqa: E402
from omh_git_memory.expiry.stale import TreeFacts, check  # noqa: E402


def make_repo(where: Path, n: int) -> list[str]:
    rng = random.Random(3)
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()

    def add(path: str, text: str) -> str:
        blob = repo.create_blob(text.encode())
        index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        return str(blob)

    blobs = []
    for i in range(n):
        body = "\n".join(f"def func_{i}_{j}(x):\n    return x + {j}\n" for j in range(5))
        blobs.append((f"src/pkg{i % 100}/mod_{i}.py", add(f"src/pkg{i % 100}/mod_{i}.py", body)))
    add("Dockerfile", "FROM debian:12\n")
    config = '[stale]\nbase = "2026-09"\n'
    add(".omh/memory.toml", config)
    (where / ".omh").mkdir()
    (where / ".omh" / "memory.toml").write_text(config)  # settings are read from the checkout
    symbols = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            path, blob = rng.choice(blobs)
            trigger = f"file:{path}@{blob}"
        elif kind == 1:
            name = f"func_{rng.randrange(n)}_{rng.randrange(5)}" if i % 8 == 1 else f"gone_{i}"
            symbols.append(name)
            trigger = f"symbol:{name}"
        elif kind == 2:
            trigger = "base:2026-09"
        else:
            trigger = "image:" + "0" * 64
        text = (f"---\nkey: n{i}\ntype: topic\nsource: bench\nrecorded: 2026-01-01\n"
                f"invalidated_by: {trigger}\n---\n\n# Note {i}\n\nbody\n")
        add(f".omh/notes/n{i}.md", text)
    repo.create_commit("HEAD", SIG, SIG, "bench", index.write_tree(repo), [])
    return symbols


HEADER_SIZE = 104 * 1024


def adversarial_header() -> str:
    return ("typedef " * (HEADER_SIZE // 8 + 1))[:HEADER_SIZE]


def normal_header() -> str:
    """Typical C: include guards, typedefs, structs, prototypes, comments."""
    parts = ["#ifndef BENCH_H\n#define BENCH_H\n#include <stddef.h>\n\n"]
    i = 0
    while sum(map(len, parts)) < HEADER_SIZE:
        parts.append(
            f"/* Part {i}: a record and what works on it. */\n"
            f"typedef struct rec_{i} {{\n    int id;\n    const char *name;\n"
            f"    size_t len;\n}} rec_{i}_t;\n"
            f"typedef unsigned long handle_{i};\n"
            f"#define REC_{i}_MAX {i * 7 + 1}\n"
            f"int rec_{i}_open(rec_{i}_t *r, const char *path, int flags);\n"
            f"static inline size_t rec_{i}_len(const rec_{i}_t *r) {{ return r->len; }}\n\n")
        i += 1
    return "".join(parts)[:HEADER_SIZE - 8] + "\n#endif\n"


def time_header(where: Path, text: str) -> float:
    """Median of three symbol scans of a repository holding only `text` as a header."""
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()
    index.add(pygit2.IndexEntry("include/bench.h", repo.create_blob(text.encode()),
                                pygit2.enums.FileMode.BLOB))
    repo.create_commit("HEAD", SIG, SIG, "header", index.write_tree(repo), [])
    ws = open_workspace(where)
    runs = []
    for _ in range(3):
        facts = TreeFacts(ws.repo, ws.config())
        started = time.perf_counter()
        facts.scan_symbols(["parse_header", "rec_1_open", "no_such_name"])
        runs.append(time.perf_counter() - started)
    return sorted(runs)[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10000)
    n = parser.parse_args().size
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "repo"
        symbols = make_repo(where, n)
        env = {**os.environ, "OMH_LOCAL_STORE": str(Path(tmp) / "local")}
        os.environ["OMH_LOCAL_STORE"] = env["OMH_LOCAL_STORE"]
        subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "reindex"],
                       cwd=where, env=env, check=True, capture_output=True)
        ws = open_workspace(where)
        docs = ws.searcher().docs
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            report = check(docs, TreeFacts(ws.repo, ws.config()))
            runs.append(time.perf_counter() - started)
        in_process = sorted(runs)[1]
        cli = wall([sys.executable, "-m", "omh_git_memory", "memory", "stale", "--json"],
                   where, env, runs=3)
        ls_tree = wall(["git", "ls-tree", "-r", "HEAD"], where, env, runs=3)
        grep_cmd = ["git", "grep", "-w", "-l"]
        for name in symbols[:200]:
            grep_cmd += ["-e", f"def {name}"]
        grep = wall([*grep_cmd, "HEAD"], where, env, runs=3)
        normal, hostile = normal_header(), adversarial_header()
        normal_s = time_header(Path(tmp) / "normal", normal)
        hostile_s = time_header(Path(tmp) / "hostile", hostile)
    print("| files | notes | stale / cannot tell | check (in-process) | `omh memory stale` (CLI) "
          "| git ls-tree -r | git grep (200 symbols) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {n:,} | {len(report.stale)} / {len(report.unknown)} | "
          f"{in_process * 1000:.0f} ms | {cli * 1000:.0f} ms | {ls_tree * 1000:.0f} ms | "
          f"{grep * 1000:.0f} ms |")
    print()
    print("| C header | size | symbol scan (median of 3) |")
    print("|---|---:|---:|")
    print(f"| ordinary (typedefs, structs, prototypes) | {len(normal):,} B | "
          f"{normal_s * 1000:.1f} ms |")
    print(f"| hostile (`typedef ` repeated, no `;`) | {len(hostile):,} B | "
          f"{hostile_s * 1000:.1f} ms |")
    print(f"\nhostile / ordinary: {hostile_s / normal_s:.2f}× (target: within 3×)")


if __name__ == "__main__":
    main()
