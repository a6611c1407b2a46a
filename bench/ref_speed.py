"""What `omh memory recall --ref REV` costs: the first answer at a past commit (its
index built) and the next (its index loaded), beside recall at HEAD.

    python bench/ref_speed.py [--docs ../shared/bench/docs-dev/book] [--rounds 3]

Commits the Markdown documents under DOCS into a temporary repository in three
commits — the first half, the rest, then one document changed — with `omh init`,
and times the real `omh` command (a new process each time, wall clock) in turn:

- recall at HEAD with no index (built from nothing), then with HEAD's index;
- `--ref HEAD~1` with HEAD's index on disk (its index patched from HEAD's), then again;
- `--ref ROOT` (the first half) with HEAD's index on disk, then again;
- `--ref HEAD~1` with an empty cache (built from nothing).

Each figure is the best of --rounds rounds; before a "first" run the past commit's
index (or, for the cold ones, the whole cache) is removed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "how do I borrow a value mutably"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "b@example.invalid",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "b@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _omh(repo: Path, env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=repo,
                          env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"omh {' '.join(args)} failed: {done.stderr}")
    return took


def make_repo(where: Path, docs: Path, env: dict[str, str]) -> tuple[Path, int]:
    repo = where / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    files = sorted(p for p in docs.rglob("*.md") if p.is_file())
    half = len(files) // 2
    for batch, message in ((files[:half], "first half"), (files[half:], "the rest")):
        for path in batch:
            target = repo / "docs" / path.relative_to(docs)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        if message == "first half":
            _omh(repo, env, "init")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", message)
    changed = repo / "docs" / files[-1].relative_to(docs)
    changed.write_text(changed.read_text(encoding="utf-8") + "\nOne more line.\n",
                       encoding="utf-8")
    _git(repo, "commit", "-qam", "one document changed")
    return repo, len(files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=ROOT.parent / "shared/bench/docs-dev/book")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="omh-ref-speed-") as tmp:
        where = Path(tmp)
        env = {**os.environ, "OMH_HOME": str(where / "home"), "PYTHONPATH": str(ROOT)}
        repo, documents = make_repo(where, args.docs, env)
        cache = repo / ".git" / "omh" / "index"
        head, parent = _git(repo, "rev-parse", "HEAD"), _git(repo, "rev-parse", "HEAD~1")
        root = _git(repo, "rev-list", "--max-parents=0", "HEAD")

        def forget(commit: str | None) -> None:
            if commit is None:
                shutil.rmtree(cache, ignore_errors=True)
                return
            for path in cache.glob(f"{commit}.*"):
                path.unlink()

        cases: list[tuple[str, str | None, str | None, list[str]]] = [
            # label, which index to remove first (None: the whole cache; "": none), …
            ("recall at HEAD, no index", None, None, []),
            ("recall at HEAD, index cached", "", None, []),
            ("--ref HEAD~1, first (HEAD's index cached)", parent, head, ["--ref", "HEAD~1"]),
            ("--ref HEAD~1, again", "", head, ["--ref", "HEAD~1"]),
            ("--ref ROOT, first (HEAD's index cached)", root, head, ["--ref", root]),
            ("--ref ROOT, again", "", head, ["--ref", root]),
            ("--ref HEAD~1, first, empty cache", None, None, ["--ref", "HEAD~1"]),
        ]
        print(f"{documents} documents, 3 commits; question {QUESTION!r}; best of "
              f"{args.rounds} rounds, wall clock of a new `omh` process")
        for label, remove, needs, extra in cases:
            if remove is None and extra:  # before the cache is emptied
                kept = {p.stem for p in cache.glob("*.idx")}
                print(f"  (HEAD's index still cached after the --ref runs: {head in kept})")
            best = float("inf")
            for _ in range(args.rounds):
                if needs is not None and not (cache / f"{needs}.idx").is_file():
                    _omh(repo, env, "memory", "reindex")
                if remove is None or remove:
                    forget(remove)
                best = min(best, _omh(repo, env, "memory", "recall", QUESTION, *extra))
            print(f"  {label:<44} {best:6.2f} s")
        # The index alone, in this process: built (HEAD's on disk) and loaded.
        sys.path.insert(0, str(ROOT))
        os.environ["OMH_HOME"] = env["OMH_HOME"]
        from omh_git_memory.actions.workspace import open_workspace

        _omh(repo, env, "memory", "reindex")
        ws = open_workspace(repo)
        print("the index alone, in process (HEAD's index cached):")
        for label, commit in (("HEAD~1", parent), ("ROOT", root)):
            built = loaded = float("inf")
            for _ in range(args.rounds):
                forget(commit)
                started = time.perf_counter()
                snap = ws.at(commit).snapshot()
                built = min(built, time.perf_counter() - started)
                started = time.perf_counter()
                ws.at(commit).snapshot()
                loaded = min(loaded, time.perf_counter() - started)
            print(f"  --ref {label:<7} built {built:6.3f} s ({snap.analysed} analysed, "
                  f"{snap.reused} reused), loaded {loaded:6.3f} s")


if __name__ == "__main__":
    main()
