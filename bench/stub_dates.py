"""What dating each stub by its document's last change costs an index build.

    python bench/stub_dates.py [--documents 2000] [--commits 5000] [--touch 3] [--rounds 3]

Builds a repository of DOCUMENTS Markdown documents and as many source files in
one commit, then COMMITS commits each changing TOUCH files picked at random (one
document is never touched again, so the walk goes all the way to the root: the
worst case within the bound), and measures in-process, in the same run:

- the full index build (`reindex --full`) with the dates, and without the walk
  (every stub given the commit's date, as before);
- the incremental build after a commit that changes one document, both ways;
- the walk alone (`last_changed` over every document).

Each figure is the best of --rounds rounds, the two ways alternating, and the
build with the dates is printed as a ratio to the one without.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omh_git_memory.actions.workspace import open_workspace  # noqa: E402
from omh_git_memory.git.history import commit_date, resolve_commit  # noqa: E402
from omh_git_memory.git.last_changed import (  # noqa: E402
    MAX_COMMITS,
    Change,
    last_changed,
    last_changes,
)
from omh_git_memory.recall import build  # noqa: E402
from omh_git_memory.recall.cache_files import index_dir  # noqa: E402

START = 1_700_000_000  # the root commit's time; each commit an hour after the last
WORDS = ("deploy", "build", "test", "release", "cache", "index", "commit", "branch", "merge",
         "rollback", "config", "token", "mount", "volume", "network", "retry", "timeout")


def make_history(where: Path, documents: int, commits: int, touch: int) -> list[str]:
    """The repository; its documents' paths."""
    rng = random.Random(5)
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()
    docs = [f"docs/part{i % 50}/doc-{i}.md" for i in range(documents)]
    code = [f"src/pkg{i % 40}/mod_{i}.py" for i in range(documents)]

    def text(path: str, n: int) -> bytes:
        heads = "\n\n".join(f"## {' '.join(rng.choices(WORDS, k=3))}\n\n"
                            + " ".join(rng.choices(WORDS, k=60)) for _ in range(3))
        return f"# {path} ({n})\n\n{heads}\n".encode()

    for path in (*docs, *code):
        index.add(pygit2.IndexEntry(path, repo.create_blob(text(path, 0)),
                                    pygit2.enums.FileMode.BLOB))
    head = repo.create_commit("refs/heads/main", _sig(0), _sig(0), "root",
                              index.write_tree(repo), [])
    movable = docs[1:] + code  # docs[0] stays as the root made it
    for n in range(1, commits + 1):
        for path in rng.sample(movable, touch):
            index.add(pygit2.IndexEntry(path, repo.create_blob(text(path, n)),
                                        pygit2.enums.FileMode.BLOB))
        head = repo.create_commit("refs/heads/main", _sig(n), _sig(n), f"change {n}",
                                  index.write_tree(repo), [head])
    return docs


def _sig(n: int) -> pygit2.Signature:
    return pygit2.Signature("bench", "bench@omh.invalid", START + 3600 * n, 0)


def change_one_document(where: Path, path: str, n: int) -> None:
    repo = pygit2.Repository(str(where))
    parent = repo[repo.head.target].peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(parent.tree)
    index.add(pygit2.IndexEntry(path, repo.create_blob(f"# {path}\n\nchanged\n".encode()),
                                pygit2.enums.FileMode.BLOB))
    repo.create_commit("refs/heads/main", _sig(n), _sig(n), "one document",
                       index.write_tree(repo), [parent.id])


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def no_walk(repo: object, start: str, paths: object, *_args: object, **_kwargs: object
            ) -> dict[str, Change]:
    """Every path given the commit built (its date, as before the walk)."""
    commit = resolve_commit(repo, start)  # type: ignore[arg-type]
    assert commit is not None
    found = Change(start, "", commit_date(commit).toordinal())
    return dict.fromkeys(paths, found)  # type: ignore[call-overload]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--touch", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_HOME"] = str(Path(tmp) / "home")
        where = Path(tmp) / "repo"
        made = timed(lambda: make_history(where, args.documents, args.commits, args.touch))
        docs = [f"docs/part{i % 50}/doc-{i}.md" for i in range(args.documents)]
        print(f"{args.documents:,} documents and {args.documents:,} source files, "
              f"{args.commits:,} commits of {args.touch} files each (made in {made:.1f} s); "
              f"load average {_load()}")
        ws = open_workspace(where)
        repo, config = ws.repo, ws.config()
        head = str(repo.repo.head.target)
        full: dict[str, list[float]] = {"dates": [], "no walk": []}
        walk: list[float] = []
        for _ in range(args.rounds):
            for way in full:
                with mock.patch.object(build, "last_changes",
                                       last_changes if way == "dates" else no_walk):
                    full[way].append(timed(lambda: build.snapshot_for(repo, config,
                                                                      rebuild=True)))
            walk.append(timed(lambda: last_changed(repo, head, docs)))
        dated = last_changed(repo, head, docs)
        root_day = dt.datetime.fromtimestamp(START, dt.UTC).date()
        print(f"the untouched document is dated {dated[docs[0]]} (the root's day: "
              f"{root_day}): the walk went through all {args.commits:,} commits "
              f"(bound {MAX_COMMITS:,})")
        build.snapshot_for(repo, config, rebuild=True)  # the base of the incremental build
        change_one_document(where, docs[7], args.commits + 1)
        new = str(pygit2.Repository(str(where)).head.target)
        incremental: dict[str, list[float]] = {"dates": [], "no walk": []}
        for _ in range(args.rounds):
            for way in incremental:
                for stale in index_dir(repo).glob(f"{new}.*"):
                    stale.unlink()
                with mock.patch.object(build, "last_changes",
                                       last_changes if way == "dates" else no_walk):
                    incremental[way].append(timed(lambda: build.snapshot_for(repo, config)))
        print("\n| build | with the dates | without the walk | ratio |\n|---|---:|---:|---:|")
        for name, runs in (("full", full), ("incremental (1 document)", incremental)):
            a, b = min(runs["dates"]), min(runs["no walk"])
            print(f"| {name} | {_ms(a)} | {_ms(b)} | {a / b:.2f} |")
        print(f"\nthe walk alone over {args.documents:,} documents: {_ms(min(walk))}; "
              f"best of {args.rounds} rounds; load average at the end {_load()}")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
