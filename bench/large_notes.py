"""The cost of large local notes: list, recall and remember beside `git grep`.

    python bench/large_notes.py [--counts 10,20] [--size 1047552] [--timeout 600] [--once]

For each count N: a repository and a local store (OMH_LOCAL_STORE) holding N
legal notes of about `--size` bytes each (the largest a note may be), written
as a person might paste them: prose, `## ` sections, bullet lists and code
fences. Then the real CLI, each command twice (the first run reads every note
afresh, the second finds what the first one cached): `omh memory` (list),
`omh memory recall`, and `omh memory remember` of one small note (removed
again before the next run). Each time is printed with its ratio to
`git grep -i -w` over the same files in the same run, wall time and CPU time
(the process's own, so other load on these noisy machines mostly cancels out).
A command over `--timeout` seconds is stopped and printed as such; `--once`
runs each command once only.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "why does the rollback lever stick"


def big_note(rng: random.Random, vocab: list[str], i: int, size: int) -> str:
    """A legal note of about `size` bytes: blocks of a section, prose, a list, a fence."""
    head = (f"---\nkey: pasted-log-{i}\ntype: topic\nsource: bench\nrecorded: 2026-11-01\n"
            f"---\n\n# A pasted log, part {i}\n\n")
    parts, total, block = [head], len(head), 0
    while total < size - 400:
        block += 1
        words = lambda k: " ".join(rng.choices(vocab, k=k))  # noqa: E731
        text = (f"## Step {block} {words(2)}\n\n{words(14)}.\n{words(12)}.\n\n"
                f"- {words(5)}\n- {words(6)}\n- {words(4)}\n\n```\n{words(8)}\n```\n\n")
        parts.append(text)
        total += len(text.encode())
    return "".join(parts)


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float
        ) -> tuple[float, float] | None:
    """The command's wall time and CPU time (its own, user and system), or None
    when it ran over `timeout` seconds."""
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-400:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return time.perf_counter() - start, cpu


def measure(count: int, size: int, timeout: float, work: Path, once: bool) -> None:
    rng = random.Random(count)
    vocab = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 9)))
             for _ in range(5000)] + ["rollback", "lever", "sticks"]
    repo, store = work / f"repo-{count}", work / f"store-{count}"
    repo.mkdir()
    store.mkdir(mode=0o700)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("# Bench\n")
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=git_env)
    subprocess.run(["git", "commit", "-qm", "bench"], cwd=repo, check=True, env=git_env)
    for i in range(count):
        (store / f"pasted-log-{i}.md").write_text(big_note(rng, vocab, i, size))
    total = sum(p.stat().st_size for p in store.iterdir())
    env = {**os.environ, "OMH_LOCAL_STORE": str(store), "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    omh = [sys.executable, "-m", "omh_git_memory"]
    remember = [*omh, "memory", "remember", "--expected", "the lever moves",
                "--observed", "the rollback lever sticks after a deploy",
                "--evidence", "seen twice", "--answers", "why does the lever stick?"]
    grep = ["git", "grep", "--no-index", "-i", "-w", "-e", "rollback", "-e", "lever"]
    grep_times = [run(grep, store, env, timeout) or (0.0, 0.0) for _ in range(7)]
    base = statistics.median(t[0] for t in grep_times)
    base_cpu = max(statistics.median(t[1] for t in grep_times), 1e-3)
    print(f"\n{count} notes, {total / 2**20:.1f} MiB; git grep {base * 1000:.1f} ms "
          f"(CPU {base_cpu * 1000:.1f} ms)")
    for name, argv in (("list", [*omh, "memory"]), ("recall", [*omh, "memory", "recall",
                                                                 QUESTION]),
                       ("remember", remember)):
        for attempt in ("first",) if once else ("first", "again"):
            took = run(argv, repo, env, timeout)
            if name == "remember":
                for written in store.glob("surprise/*.md"):
                    written.unlink()
            shown = (f"over {timeout:.0f} s (stopped)" if took is None
                     else f"{took[0]:7.2f} s  {took[0] / base:6.0f}× git grep;  CPU "
                          f"{took[1]:6.2f} s  {took[1] / base_cpu:6.0f}× git grep's")
            print(f"  {name:<8} {attempt:<5} {shown}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="10,20")
    parser.add_argument("--size", type=int, default=1024 * 1024 - 1024)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--once", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="omh-large-"))
    try:
        for count in (int(c) for c in args.counts.split(",")):
            measure(count, args.size, args.timeout, work, args.once)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
