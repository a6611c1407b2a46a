"""What the census says, and what it costs, on real stores.

    python bench/census_examples.py [DIR ...]

Each DIR is either a development corpus (a folder with `notes/`, as
/work/shared/bench/recall-dev*: its notes are committed to a throw-away
repository at `.omh/notes/`) or a checkout, read as it is. Default: both dev
corpora and this repository. Prints the census sentence and the time it took
(the best of 5, in-process, the index already built). `--synthetic N` also times
N notes whose keys and links say nothing, the census's worst case.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent.census import own_prefixes, take_census
from omh_git_memory.recall.document import Doc

ROOT = Path(__file__).resolve().parents[1]
CORPORA = [Path("/work/shared/bench/recall-dev"), Path("/work/shared/bench/recall-dev-libgit2")]


def store_of(src: Path, tmp: Path) -> Path:
    if not (src / "notes").is_dir():
        return src
    where = tmp / src.name
    (where / ".omh").mkdir(parents=True)
    shutil.copytree(src / "notes", where / ".omh/notes")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "notes"]):
        subprocess.run(["git", *args], cwd=where, env=env, check=True)
    return where


def best_of(runs: int, fn: object) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--synthetic", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        (Path(tmp) / "local").mkdir()
        for src in args.dirs or [*[c for c in CORPORA if c.is_dir()], ROOT]:
            ws = open_workspace(store_of(src, Path(tmp)))
            docs = ws.searcher().docs
            prefixes = own_prefixes(ws.config().keys.templates)
            took = best_of(5, lambda: take_census(docs, prefixes))  # noqa: B023
            print(f"{src}: {take_census(docs, prefixes).sentence()}  ({took * 1000:.1f} ms)")
    if args.synthetic:
        rng = random.Random(7)
        vocab = [f"word{i}x" for i in range(3000)]
        docs = [Doc("team", f"n{i}", "topic", 1, " ".join(rng.choice(vocab) for _ in range(12)),
                    (), f"n:{i}", 10, f"n{i}.md") for i in range(args.synthetic)]
        took = best_of(3, lambda: take_census(docs))
        print(f"{args.synthetic:,} synthetic notes, nothing but titles: {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
