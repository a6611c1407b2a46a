"""Semantic recall's cost: first build, reuse after a one-note commit, warm latency.

    python bench/semantic_speed.py [--notes 10000]

On a synthetic store (as bench/recall_speed.py builds): embedding every note from
nothing; the vectors of the next commit, which changed one note; and warm
in-process recall with the model loaded (what the MCP server sees), lexical-only
beside lexical + semantic, p50/p95 over 200 questions, in the same run.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_speed import CORPUS, change_one_note, make_repo  # noqa: E402

from omh_git_memory.recall import recall  # noqa: E402
from omh_git_memory.semantic import Embedder  # noqa: E402
from omh_git_memory.workspace import open_workspace  # noqa: E402


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return times[len(times) // 2], times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10000)
    n = parser.parse_args().notes
    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")][:200]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        repo = make_repo(Path(tmp) / "repo", n)
        ws = open_workspace(Path(tmp) / "repo")
        started = time.perf_counter()
        embedder = Embedder()
        load = time.perf_counter() - started
        searcher = ws.searcher()
        started = time.perf_counter()
        ws.semantic(searcher, embedder)
        build = time.perf_counter() - started
        change_one_note(repo)
        searcher = ws.searcher()
        started = time.perf_counter()
        view = ws.semantic(searcher, embedder)
        reuse = time.perf_counter() - started
        lexical, fused = [], []
        for q in questions:
            started = time.perf_counter()
            recall(searcher, q)
            lexical.append(time.perf_counter() - started)
            started = time.perf_counter()
            recall(searcher, q, semantic=view)
            fused.append(time.perf_counter() - started)
    lp50, lp95 = percentiles(lexical)
    fp50, fp95 = percentiles(fused)
    print("| notes | model load | first build (embed all) | after a one-note commit | "
          "warm recall p50/p95, lexical | warm recall p50/p95, + semantic |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {load:.2f} s | {build:.1f} s ({n / build:.0f} notes/s) | "
          f"{reuse * 1000:.0f} ms | {lp50 * 1000:.1f} / {lp95 * 1000:.1f} ms | "
          f"{fp50 * 1000:.1f} / {fp95 * 1000:.1f} ms |")


if __name__ == "__main__":
    main()
