"""Recall speed on synthetic stores, beside `git grep` over the same notes.

    python bench/recall_speed.py [--sizes 1000,10000,100000] [--queries 200] [--documents 5000]

For each size: a repository whose HEAD commits N notes under .omh/notes/ (words
drawn from the recall-dev corpus with its own word frequencies), then

- full index build (in-process, from nothing);
- incremental rebuild after a commit that changes one note;
- warm in-process recall, p50 and p95 over the corpus questions;
- the CLI's cold `omh memory recall` wall time (index built), median of 7;
- `git grep -i -w` over the same notes at HEAD, one question's words, median of 7.

and a repository of 5,000 Markdown documents (no notes): the stubs' first
build and the commands after it.

Every figure is also printed as a ratio to `git grep` measured in the same run,
because these machines are noisy.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omh_git_memory.index import snapshot_for  # noqa: E402
from omh_git_memory.keys import slug  # noqa: E402
from omh_git_memory.recall import Searcher, recall  # noqa: E402
from omh_git_memory.workspace import open_workspace  # noqa: E402

CORPUS = next((p / "shared" / "bench" / "recall-dev" for p in ROOT.parents
               if (p / "shared" / "bench").is_dir()),
              ROOT.parent / "shared" / "bench" / "recall-dev")
SIG = pygit2.Signature("bench", "bench@omh.invalid")


def vocabulary() -> tuple[list[str], list[int]]:
    counts: Counter[str] = Counter()
    for path in (CORPUS / "notes").glob("*.md"):
        body = path.read_text(encoding="utf-8").split("---\n", 2)[2]
        counts.update(w for w in body.replace("\n", " ").split(" ") if w.isalnum())
    words, weights = zip(*counts.most_common(), strict=True)
    return list(words), list(weights)


def note(rng: random.Random, vocab: tuple[list[str], list[int]], i: int) -> tuple[str, bytes]:
    title = " ".join(rng.choices(vocab[0], vocab[1], k=rng.randint(6, 10)))
    body = " ".join(rng.choices(vocab[0], vocab[1], k=rng.randint(60, 160)))
    key = f"{slug(title)[:60].rstrip('-')}-{i}"
    text = (f"---\nkey: {key}\ntype: topic\nsource: bench\nrecorded: 2026-0{1 + i % 9}-1{i % 9}\n"
            f"---\n\n# {title}\n\n{body}\n")
    return key, text.encode()


def make_repo(where: Path, n: int, seed: int = 7) -> pygit2.Repository:
    rng = random.Random(seed)
    vocab = vocabulary()
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()
    for i in range(n):
        key, data = note(rng, vocab, i)
        index.add(pygit2.IndexEntry(f".omh/notes/{key}.md", repo.create_blob(data),
                                    pygit2.enums.FileMode.BLOB))
    repo.create_commit("HEAD", SIG, SIG, f"{n} notes", index.write_tree(repo), [])
    return repo


def change_one_note(repo: pygit2.Repository) -> None:
    head = repo.head.peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(head.tree)
    entry = next(e for e in index if e.path.startswith(".omh/notes/"))
    data = repo[entry.id].read_raw() + b"\nOne more line about sockets.\n"
    index.add(pygit2.IndexEntry(entry.path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    repo.create_commit("HEAD", SIG, SIG, "one note", index.write_tree(repo), [head.id])


def wall(cmd: list[str], cwd: Path, env: dict[str, str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(n: int, questions: list[str], tmp: Path) -> dict[str, float]:
    where = tmp / f"repo-{n}"
    env = {**os.environ, "OMH_LOCAL_STORE": str(tmp / f"local-{n}"), "PYTHONPATH": str(ROOT)}
    os.environ["OMH_LOCAL_STORE"] = env["OMH_LOCAL_STORE"]
    repo = make_repo(where, n)
    ws = open_workspace(where)
    config = ws.config()

    started = time.perf_counter()
    snapshot_for(ws.repo, config, rebuild=True)
    full = time.perf_counter() - started

    change_one_note(repo)
    started = time.perf_counter()
    snap = snapshot_for(ws.repo, config)
    incremental = time.perf_counter() - started
    assert snap.analysed == 1, snap.analysed

    searcher = Searcher(snap, [])
    times = []
    for q in questions:
        started = time.perf_counter()
        recall(searcher, q)
        times.append(time.perf_counter() - started)
    times.sort()
    p50 = times[len(times) // 2]
    p95 = times[int(len(times) * 0.95) - 1]
    before = []  # the same questions without the relevance floor, as recall was before it
    for q in questions:
        started = time.perf_counter()
        recall(searcher, q, floor=0.0, min_share=0.0)
        before.append(time.perf_counter() - started)
    before.sort()
    p95_before = before[int(len(before) * 0.95) - 1]

    question = questions[0]
    cli = wall([sys.executable, "-m", "omh_git_memory", "memory", "recall", question], where, env)
    grep_args = ["git", "grep", "-i", "-w", "-l"]
    for word in question.replace(":", " ").split():
        grep_args += ["-e", word]
    grep = wall([*grep_args, "HEAD", "--", ".omh/notes"], where, env)
    return {"full": full, "incremental": incremental, "p50": p50, "p95": p95,
            "p95_before": p95_before, "cli": cli, "grep": grep}


def documents(n: int, tmp: Path) -> None:
    """A repository of `n` Markdown documents and no notes: the stubs' first build."""
    rng = random.Random(11)
    vocab = vocabulary()
    where = tmp / f"docs-{n}"
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()
    for i in range(n):
        heads = "\n\n".join(
            f"## {' '.join(rng.choices(vocab[0], vocab[1], k=4))}\n\n"
            + " ".join(rng.choices(vocab[0], vocab[1], k=80)) for _ in range(rng.randint(1, 6)))
        text = f"# Document {i}\n\n{heads}\n".encode()
        index.add(pygit2.IndexEntry(f"docs/part{i % 50}/doc-{i}.md", repo.create_blob(text),
                                    pygit2.enums.FileMode.BLOB))
    repo.create_commit("HEAD", SIG, SIG, "docs", index.write_tree(repo), [])
    env = {**os.environ, "OMH_LOCAL_STORE": str(tmp / "local-docs"), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "reindex"], cwd=where,
                   env=env, check=True, capture_output=True)
    first = time.perf_counter() - started
    cli = wall([sys.executable, "-m", "omh_git_memory", "memory", "recall", "how to deploy"],
               where, env)
    listing = wall([sys.executable, "-m", "omh_git_memory", "memory"], where, env)
    print(f"\n{n:,} Markdown documents: first build (CLI) {first:.2f} s; then "
          f"`omh memory recall` {cli * 1000:.0f} ms, `omh memory` {listing * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--documents", type=int, default=5000)
    args = parser.parse_args()
    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")]
    questions = questions[: args.queries]
    print("| notes | full build | incremental (1 note) | incr/full | warm p50 | warm p95 | "
          "warm p95 without the floor | CLI recall (cold) | git grep -i -w | p95/grep | "
          "CLI/grep |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            m = measure(n, questions, Path(tmp))
            print(f"| {n:,} | {m['full']:.2f} s | {m['incremental'] * 1000:.0f} ms | "
                  f"{100 * m['incremental'] / m['full']:.1f}% | {m['p50'] * 1000:.1f} ms | "
                  f"{m['p95'] * 1000:.1f} ms | {m['p95_before'] * 1000:.1f} ms | "
                  f"{m['cli'] * 1000:.0f} ms | "
                  f"{m['grep'] * 1000:.0f} ms | {m['p95'] / m['grep']:.2f} | "
                  f"{m['cli'] / m['grep']:.2f} |", flush=True)
        if args.documents:
            documents(args.documents, Path(tmp))


if __name__ == "__main__":
    main()
