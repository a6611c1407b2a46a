"""Recall speed on synthetic stores, beside `git grep` over the same notes.

    python bench/recall_speed.py [--sizes 1000,10000,100000] [--queries 200] [--documents 5000]
                                 [--against CHECKOUT] [--rounds 2]

For each size: a repository whose HEAD commits N notes under .omh/notes/ (words
drawn from the recall-dev corpus with its own word frequencies), then

- full index build (in-process, from nothing);
- incremental rebuild after a commit that changes one note;
- warm in-process recall, p50 and p95 over the corpus questions;
- the CLI's cold `omh memory recall` wall time (index built), median of 7;
- `git grep -i -w` over the same notes at HEAD, one question's words, median of 7.

and a repository of 5,000 Markdown documents (no notes): the stubs' first
build and the commands after it; and (`--local N`, 10,000 by default) N team notes
against N/2 team and N/2 local ones: the CPU time of the CLI's cold recall, of the
MCP server's start and of one question with the searcher built afresh, on each,
and their ratios (with --against, that code's too).

Every figure is also printed as a ratio to `git grep` measured in the same run,
because these machines are noisy, and warm recall and the CLI also as CPU time
(the process's own, so other load on the machine mostly cancels out). The CLI
runs with bytecode compiled, as a pip install leaves it (PYTHONDONTWRITEBYTECODE
is dropped for it), after one run that is not counted.

With --against CHECKOUT (another checkout of this project, e.g. a worktree of an
older commit), the same store is measured with that code too, alternately with
this code, --rounds times, each figure the best of its rounds, and printed with
the ratio of this code to that one.
"""

from __future__ import annotations

import argparse
import csv
import inspect
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
# `--worker CODE REPO` measures the omh code in CODE (another checkout), so it is
# put first on the path before anything of omh is imported.
CODE = Path(sys.argv[sys.argv.index("--worker") + 1]) if "--worker" in sys.argv else ROOT
sys.path.insert(0, str(CODE))

from omh_git_memory.actions.workspace import open_workspace  # noqa: E402
from omh_git_memory.model.keys import slug  # noqa: E402
from omh_git_memory.recall.bm25 import Searcher  # noqa: E402
from omh_git_memory.recall.build import snapshot_for  # noqa: E402
from omh_git_memory.recall.floor import recall  # noqa: E402

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
    return timed(cmd, cwd, env, runs)[0]


def timed(cmd: list[str], cwd: Path, env: dict[str, str], runs: int = 7) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of `runs` runs."""
    times, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return times[len(times) // 2], times[int(len(times) * 0.95) - 1]


def worker(where: Path, incremental: bool) -> dict[str, float]:
    """In this process, with the code in CODE: the full build, the incremental
    one (when asked), and warm recall over the questions (wall and CPU)."""
    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")]
    questions = questions[: int(os.environ.get("BENCH_QUERIES", "200"))]
    ws = open_workspace(where)
    config = ws.config()
    out: dict[str, float] = {}
    started = time.perf_counter()
    snapshot_for(ws.repo, config, rebuild=True)
    out["full"] = time.perf_counter() - started
    if incremental:
        change_one_note(pygit2.Repository(str(where)))
        started = time.perf_counter()
        snap = snapshot_for(ws.repo, config)
        out["incremental"] = time.perf_counter() - started
        assert snap.analysed == 1, snap.analysed
    snap = snapshot_for(ws.repo, config)
    searcher = Searcher(snap, [])
    searcher.inbound()
    floors = "floor" in inspect.signature(recall).parameters  # not in older code
    for name, kwargs in (("", {}), ("_before", {"floor": 0.0, "min_share": 0.0})):
        if name and not floors:
            continue
        walls, cpus = [], []
        for q in questions:
            started, cpu = time.perf_counter(), time.thread_time()
            recall(searcher, q, **kwargs)  # type: ignore[arg-type]
            cpus.append(time.thread_time() - cpu)
            walls.append(time.perf_counter() - started)
        out[f"p50{name}"], out[f"p95{name}"] = percentiles(walls)
        out[f"cpu_p50{name}"], out[f"cpu_p95{name}"] = percentiles(cpus)
    return out


def run_worker(code: Path, where: Path, env: dict[str, str], incremental: bool
               ) -> dict[str, float]:
    run = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", str(code), str(where),
         *(["--incremental"] if incremental else [])],
        env={**env, "PYTHONPATH": str(code)}, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(run.stdout.splitlines()[-1])
    return result


def cli(code: Path, where: Path, env: dict[str, str], question: str) -> tuple[float, float]:
    """The CLI's cold recall with `code`, bytecode compiled as an install leaves it."""
    env = {**env, "PYTHONPATH": str(code)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "omh_git_memory", "memory", "recall", question]
    timed(cmd, where, env, runs=1)  # writes the bytecode and loads the index once
    return timed(cmd, where, env)


def measure(n: int, questions: list[str], tmp: Path, against: Path | None,
            rounds: int) -> tuple[dict[str, float], dict[str, float] | None]:
    """This code's figures on a store of `n` notes, and `against`'s on a copy of it
    (its own cache), measured alternately; each figure the best of `rounds`."""
    where = tmp / f"repo-{n}"
    env = {**os.environ, "OMH_LOCAL_STORE": str(tmp / f"local-{n}"),
           "BENCH_QUERIES": str(len(questions))}
    make_repo(where, n)
    other = tmp / f"against-{n}" / where.name
    if against is not None:
        shutil.copytree(where, other, symlinks=True)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for round_ in range(rounds):
        ours.append(run_worker(ROOT, where, env, incremental=round_ == 0))
        ours[-1]["cli"], ours[-1]["cli_cpu"] = cli(ROOT, where, env, questions[0])
        if against is not None:
            theirs.append(run_worker(against, other, env, incremental=round_ == 0))
            theirs[-1]["cli"], theirs[-1]["cli_cpu"] = cli(against, other, env, questions[0])
    grep_args = ["git", "grep", "-i", "-w", "-l"]
    for word in questions[0].replace(":", " ").split():
        grep_args += ["-e", word]
    grep = wall([*grep_args, "HEAD", "--", ".omh/notes"], where, env)

    def best(runs: list[dict[str, float]]) -> dict[str, float]:
        return {k: min(r[k] for r in runs if k in r) for k in runs[0]} | {"grep": grep}

    return best(ours), best(theirs) if theirs else None


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
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode compiled, as an install leaves it
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "reindex"], cwd=where,
                   env=env, check=True, capture_output=True)
    first = time.perf_counter() - started
    cli = wall([sys.executable, "-m", "omh_git_memory", "memory", "recall", "how to deploy"],
               where, env)
    listing = wall([sys.executable, "-m", "omh_git_memory", "memory"], where, env)
    print(f"\n{n:,} Markdown documents: first build (CLI) {first:.2f} s; then "
          f"`omh memory recall` {cli * 1000:.0f} ms, `omh memory` {listing * 1000:.0f} ms")


# What the local-layer comparison runs in one process with the code under test, on
# both stores in turn (so that the load of a shared machine falls on both alike): the
# server's start (the `Tools` a server builds at launch: the searcher from the
# caches, the census, lint's counts) and one question with the searcher built afresh
# (what the MCP server does when the store changed); each the median CPU time of
# its runs, after one that is not counted.
_IN_PROCESS = """
import json, os, statistics, sys, time
from pathlib import Path
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.tools import Tools
from omh_git_memory.recall.floor import recall

question, runs, stores = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])

def at(label):
    os.environ["OMH_LOCAL_STORE"] = stores[label][1]
    return Path(stores[label][0])

spaces = {label: open_workspace(at(label)) for label in stores}
steps = {"start": lambda label: Tools(open_workspace(at(label))),
         "question": lambda label: recall(spaces[label].searcher(), question)}
times = {}
for name, step in steps.items():
    for label in stores:
        at(label)
        step(label)
    for _ in range(runs):
        for label in stores:
            at(label)
            started = time.process_time()
            step(label)
            times.setdefault(label, {}).setdefault(name, []).append(
                time.process_time() - started)
print(json.dumps({label: {name: statistics.median(t) for name, t in by.items()}
                  for label, by in times.items()}))
"""
LOCAL_FIGURES = (("cli", "CLI recall (a new process)"),
                 ("question", "a question, searcher built afresh (MCP)"),
                 ("start", "server start (Tools built, in process)"))


def local_stores(n: int, tmp: Path, name: str) -> dict[str, tuple[Path, dict[str, str]]]:
    """Two repositories of the same `n` notes: all team, and half team with the other
    half in the local store (an agent's, `source: cli`); each with its environment."""
    rng = random.Random(7)
    vocab = vocabulary()
    made = [note(rng, vocab, i) for i in range(n)]
    out = {}
    for label, team in (("team only", n), ("half local", n // 2)):
        where = tmp / name / f"local-layer-{team}"
        where.mkdir(parents=True)
        repo = pygit2.init_repository(str(where), initial_head="main")
        index = pygit2.Index()
        for key, data in made[:team]:
            index.add(pygit2.IndexEntry(f".omh/notes/{key}.md", repo.create_blob(data),
                                        pygit2.enums.FileMode.BLOB))
        repo.create_commit("HEAD", SIG, SIG, "notes", index.write_tree(repo), [])
        env = {**os.environ, "OMH_LOCAL_STORE": str(tmp / name / f"local-store-{team}")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        store = Path(env["OMH_LOCAL_STORE"])
        store.mkdir(parents=True, mode=0o700)
        for key, data in made[team:]:
            (store / f"{key}.md").write_bytes(data.replace(b"source: bench", b"source: cli"))
        out[label] = (where, env)
    return out


def local_figures(code: Path, stores: dict[str, tuple[Path, dict[str, str]]],
                  question: str, runs: int, first: bool) -> dict[str, dict[str, float]]:
    """For each store, the CPU time of the CLI's cold recall (the median of `runs` new
    processes, the stores taken in turn), of the server's start and of one question
    with the searcher built afresh (in one process, in turn)."""
    cmd = [sys.executable, "-m", "omh_git_memory", "memory", "recall", question]
    envs = {label: {**env, "PYTHONPATH": str(code)} for label, (_, env) in stores.items()}
    for label, (where, _) in stores.items() if first else ():
        # lint's counts kept, as `omh memory lint` keeps them: else the server's start
        # lints in a thread that would run while the figures are taken
        subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "lint"],
                       cwd=where, env=envs[label], capture_output=True, check=False)
        timed(cmd, where, envs[label], runs=1)  # bytecode written, the caches made
    cli: dict[str, list[float]] = {}
    for _ in range(runs):
        for label, (where, _) in stores.items():
            cli.setdefault(label, []).append(timed(cmd, where, envs[label], runs=1)[1])
    where = {label: (str(w), env["OMH_LOCAL_STORE"]) for label, (w, env) in stores.items()}
    inside = subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, question, str(runs), json.dumps(where)],
        cwd=next(iter(stores.values()))[0], env=next(iter(envs.values())),
        capture_output=True, text=True, check=True)
    figures: dict[str, dict[str, float]] = json.loads(inside.stdout.splitlines()[-1])
    return {label: {"cli": statistics.median(cli[label]), **figures[label]}
            for label in stores}


def local_layer(n: int, question: str, tmp: Path, against: Path | None, rounds: int) -> None:
    """`n` team notes against `n / 2` team and `n / 2` local notes (the local ones an
    agent's, in the local store): the CLI's cold recall, the server's start and one
    question with the searcher built afresh, as CPU time and as the ratio of the
    mixed store to the team-only one; with `against`, that code too on copies of the
    stores (caches of its own), measured alternately, each figure the best of
    `rounds`."""
    codes = {"this": (ROOT, local_stores(n, tmp, "this"))}
    if against is not None:
        codes["that"] = (against, local_stores(n, tmp, "that"))
    time.sleep(2.5)  # the notes just written are older than the local index's RACY
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_ in range(rounds):
        for name, (code, stores) in codes.items():
            for label, figures in local_figures(code, stores, question, runs=9,
                                                first=round_ == 0).items():
                runs.setdefault((name, label), []).append(figures)
    best = {k: {f: min(r[f] for r in rs) for f in rs[0]} for k, rs in runs.items()}
    print(f"\n{n:,} notes all team, against {n // 2:,} team and {n // 2:,} local (CPU time, "
          f"the median of 9 runs taking the two stores in turn, the best of {rounds} "
          "rounds):\n")
    print("| code | figure | team only | half local | ratio |")
    print("|---|---|---:|---:|---:|")
    for name in codes:
        for figure, label in LOCAL_FIGURES:
            team, mixed = best[(name, "team only")][figure], best[(name, "half local")][figure]
            print(f"| {name} | {label} | {team * 1000:.0f} ms | {mixed * 1000:.0f} ms | "
                  f"{mixed / team:.2f}x |", flush=True)


def main() -> None:
    if "--worker" in sys.argv:
        at = sys.argv.index("--worker")
        print(json.dumps(worker(Path(sys.argv[at + 2]), "--incremental" in sys.argv)))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--documents", type=int, default=5000)
    parser.add_argument("--against", type=Path, help="another checkout of omh to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--local", type=int, default=10000,
                        help="notes of the local-layer comparison (0: skip it)")
    args = parser.parse_args()
    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")]
    questions = questions[: args.queries]
    against = args.against.resolve() if args.against else None
    print(f"load average at the start: {_load_average()}; the CLI runs with bytecode "
          "compiled, as a pip install leaves it (PYTHONDONTWRITEBYTECODE dropped for it)\n")
    print("| notes | full build | incremental (1 note) | incr/full | warm p50 | warm p95 | "
          "warm p95 without the floor | warm p95 (CPU) | CLI recall (cold) | CLI (CPU) | "
          "git grep -i -w | p95/grep | CLI/grep |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    compared = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            m, other = measure(n, questions, Path(tmp), against, args.rounds)
            print(f"| {n:,} | {m['full']:.2f} s | {m['incremental'] * 1000:.0f} ms | "
                  f"{100 * m['incremental'] / m['full']:.1f}% | {m['p50'] * 1000:.1f} ms | "
                  f"{m['p95'] * 1000:.1f} ms | {m['p95_before'] * 1000:.1f} ms | "
                  f"{m['cpu_p95'] * 1000:.1f} ms | {m['cli'] * 1000:.0f} ms | "
                  f"{m['cli_cpu'] * 1000:.0f} ms | "
                  f"{m['grep'] * 1000:.0f} ms | {m['p95'] / m['grep']:.2f} | "
                  f"{m['cli'] / m['grep']:.2f} |", flush=True)
            if other is not None:
                compared.append((n, m, other))
        if compared:
            print(f"\nThe same stores with the code in {against}, measured alternately "
                  f"({args.rounds} rounds, best of each); ratio = this code / that code:\n")
            print("| notes | code | full build | warm p50 | warm p95 | warm p95 (CPU) | "
                  "CLI recall (cold) | CLI (CPU) |")
            print("|---:|---|---:|---:|---:|---:|---:|---:|")
            for n, m, o in compared:
                for name, r in (("this", m), ("that", o)):
                    print(f"| {n:,} | {name} | {r['full']:.2f} s | {r['p50'] * 1000:.1f} ms | "
                          f"{r['p95'] * 1000:.1f} ms | {r['cpu_p95'] * 1000:.1f} ms | "
                          f"{r['cli'] * 1000:.0f} ms | {r['cli_cpu'] * 1000:.0f} ms |")
                print(f"| {n:,} | ratio | {m['full'] / o['full']:.2f} | "
                      f"{m['p50'] / o['p50']:.2f} | {m['p95'] / o['p95']:.2f} | "
                      f"{m['cpu_p95'] / o['cpu_p95']:.2f} | {m['cli'] / o['cli']:.2f} | "
                      f"{m['cli_cpu'] / o['cli_cpu']:.2f} |", flush=True)
        if args.local:
            local_layer(args.local, questions[0], Path(tmp), against, args.rounds)
        if args.documents:
            documents(args.documents, Path(tmp))
    print(f"\nload average at the end: {_load_average()} (on a shared machine the wall "
          "times are inflated: compare the ratios and CPU times of one run)")


def _load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
