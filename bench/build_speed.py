"""The first build of the recall index, beside baselines measured in the same run.

    python bench/build_speed.py [--notes 10000] [--docs 4] [--pages 38000]
                                [--repo PATH ...] [--against CHECKOUT] [--rounds 2]

Each corpus is a git repository whose HEAD holds, in one commit:

- `--notes N`: N notes under .omh/notes/ (60–160 words each, drawn from the
  recall-dev corpus with its word frequencies, as bench/recall_speed.py makes them);
- `--docs C`: docs-dev's rust book copied C times, each under its own folder, and
  poetry's documents once (C = 4: 1,943 Markdown files, 11.5 MB, about the size of
  fastapi's docs);
- `--pages N`: N small pages laid out as tldr-pages' are (a title, a quoted summary,
  examples each with a line of code), about 600 bytes each;
- `--repo PATH`: a real repository, cloned (without a checkout) as it is at its HEAD.

For each, in a new process (so that its peak RSS is the build's): the first build of
the index (`snapshot_for(..., rebuild=True)`, what `omh memory reindex --full` does),
as CPU seconds (the process's own: load on the machine inflates it far less than the
wall clock), wall seconds and peak RSS; then one question asked of it (the "first
recall" of a fresh clone is the build plus that). Beside it, in the same run and on
the same blobs: reading every note and document and splitting it into recall's words
alone (`tokens.words`: what any build must do), and `git grep -i -w` for one word.
The ratios to those are what to compare between runs on a shared machine.

With --against CHECKOUT (another checkout of omh, e.g. a worktree of an older
commit), the same repositories are built with that code too, alternately with this
one, each figure the best of --rounds; and the two indexes are compared: their
documents, postings, topic, clashes and dates, and the answers to 40 questions (keys,
scores, left-out counts) must be identical, else the run fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import marshal
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = next((p / "shared" / "bench" for p in ROOT.parents if (p / "shared" / "bench").is_dir()),
              ROOT.parent / "shared" / "bench")
QUESTIONS = 40


def worker(where: Path, dump: Path | None) -> dict[str, float]:
    """In this process, with the omh code on PYTHONPATH: the first build, one
    question, and (with `dump`) the index's content and answers written there."""
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.recall.bm25 import Searcher
    from omh_git_memory.recall.build import snapshot_for
    from omh_git_memory.recall.floor import recall

    ws = open_workspace(where)
    config = ws.config()
    started_rss = _peak_rss()
    cpu, wall = time.process_time(), time.perf_counter()
    snap = snapshot_for(ws.repo, config, rebuild=True)
    out = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
           "rss": _peak_rss(), "rss_start": started_rss, "documents": len(snap.docs)}
    questions = _questions()
    cpu = time.process_time()
    searcher = Searcher(snap, [])
    recall(searcher, questions[0])
    out["question"] = time.process_time() - cpu
    if dump is not None:
        postings = {}
        for term in snap.postings.table:
            got = snap.postings.get(term)
            assert got is not None
            postings[term] = (list(got[0]), list(got[1]))
        answers = []
        for q in questions:
            a = recall(searcher, q)
            answers.append(([(h.doc.key, h.score, [n.key for n in h.neighbours],
                              h.more_neighbours) for h in a.results], a.left_out))
        dump.write_bytes(marshal.dumps((
            [tuple(d) if d else None for d in snap.docs], sorted(postings.items()),
            sorted(snap.topic_terms.items()), [tuple(c) for c in snap.clashes],
            sorted(snap.changes.items()), answers)))
    return out


def baseline(where: Path) -> dict[str, float]:
    """In this process: every note and Markdown document of HEAD read and split into
    recall's words, nothing else (CPU seconds)."""
    import pygit2

    from omh_git_memory.recall.tokens import words

    repo = pygit2.Repository(str(where))
    started = time.process_time()
    ids = []
    stack = [("", repo.head.peel(pygit2.Commit).tree)]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            path = prefix + entry.name
            if entry.type_str == "tree":
                stack.append((path + "/", repo[entry.id]))
            elif path.lower().endswith(".md"):
                ids.append(entry.id)
    count = 0
    for oid in ids:
        count += len(words(repo[oid].read_raw().decode("utf-8", "replace")))
    return {"cpu": time.process_time() - started, "words": count}


def _peak_rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)


def _questions() -> list[str]:
    with (SHARED / "recall-dev" / "queries.tsv").open() as handle:
        return [row["query"] for row in csv.DictReader(handle, delimiter="\t")][:QUESTIONS]


def run(code: Path, script: str, *args: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), script, *args],
                          env={**os.environ, "PYTHONPATH": str(code)},
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{script} failed with the code in {code}:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def grep_cpu(where: Path, word: str, runs: int = 3) -> float:
    """The CPU time (user + system) of `git grep -i -w` for `word` over HEAD's
    Markdown files, the best of `runs`."""
    best = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["git", "grep", "-i", "-w", "-l", "-e", word, "HEAD", "--", "*.md"],
                       cwd=where, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


# -- the corpora ---------------------------------------------------------------

def _commit(where: Path, files: list[tuple[str, bytes]]) -> None:
    import pygit2

    sig = pygit2.Signature("bench", "bench@omh.invalid", 1_700_000_000, 0)
    repo = pygit2.init_repository(str(where), initial_head="main")
    index = pygit2.Index()
    for path, data in files:
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    repo.create_commit("HEAD", sig, sig, "corpus", index.write_tree(repo), [])


def notes_repo(where: Path, n: int) -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    from recall_speed import make_repo

    make_repo(where, n)
    return f"{n:,} notes"


def docs_repo(where: Path, copies: int) -> str:
    docs = SHARED / "docs-dev"
    files = [(f"book{n}/{p.relative_to(docs / 'book')}", p.read_bytes())
             for n in range(copies) for p in sorted((docs / "book").rglob("*.md"))]
    files += [(f"poetry/{p.relative_to(docs / 'poetry')}", p.read_bytes())
              for p in sorted((docs / "poetry").rglob("*.md"))]
    _commit(where, files)
    size = sum(len(data) for _, data in files) / 1e6
    return f"docs-dev's book ×{copies} and poetry: {len(files):,} Markdown files, {size:.1f} MB"


def pages_repo(where: Path, n: int) -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    from recall_speed import vocabulary

    rng = random.Random(5)
    words, weights = vocabulary()

    def some(k: int) -> str:
        return " ".join(rng.choices(words, weights, k=k))

    files = []
    for i in range(n):
        name = f"cmd{i}"
        lines = [f"# {name}\n", f"> {some(12)}.\n> More information: <https://example.com/{name}>.\n"]
        lines += [f"- {some(8)}:\n\n`{name} --{rng.choice(words)} {{{{path/to/file}}}}`\n"
                  for _ in range(rng.randint(3, 8))]
        folder = ("common", "linux", "osx", "windows")[i % 4]
        files.append((f"pages/{folder}/{name}.md", "\n".join(lines).encode()))
    _commit(where, files)
    size = sum(len(data) for _, data in files) / 1e6
    return f"{n:,} small pages (tldr-pages' layout), {size:.1f} MB"


def real_repo(where: Path, source: Path) -> str:
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(source), str(where)],
                   check=True)
    return f"{source} at its HEAD"


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        dump = Path(sys.argv[3]) if len(sys.argv) > 3 else None
        print(json.dumps(worker(Path(sys.argv[2]), dump)))
        return
    if sys.argv[1:2] == ["--baseline"]:
        print(json.dumps(baseline(Path(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, action="append", default=[])
    parser.add_argument("--docs", type=int, action="append", default=[])
    parser.add_argument("--pages", type=int, action="append", default=[])
    parser.add_argument("--repo", type=Path, action="append", default=[])
    parser.add_argument("--against", type=Path, help="another checkout of omh to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not (args.notes or args.docs or args.pages or args.repo):
        args.notes, args.docs, args.pages = [10000], [4], [38000]
    against = args.against.resolve() if args.against else None
    print(f"load average at the start: {_load_average()}\n")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        corpora = ([(notes_repo, n) for n in args.notes] + [(docs_repo, c) for c in args.docs]
                   + [(pages_repo, n) for n in args.pages]
                   + [(real_repo, r.resolve()) for r in args.repo])
        for i, (make, arg) in enumerate(corpora):
            where = Path(tmp) / f"corpus-{i}"
            label = make(where, arg)  # type: ignore[operator]
            other = Path(tmp) / f"against-{i}"
            if against is not None:
                shutil.copytree(where, other, symlinks=True)
            ours: list[dict[str, float]] = []
            theirs: list[dict[str, float]] = []
            base: list[dict[str, float]] = []
            ours_dump, theirs_dump = Path(tmp) / f"ours-{i}", Path(tmp) / f"theirs-{i}"
            for round_ in range(args.rounds):
                dump = round_ == 0 and against is not None  # the indexes compared once
                ours.append(run(ROOT, "--worker", str(where), *[str(ours_dump)] * dump))
                if against is not None:
                    theirs.append(run(against, "--worker", str(other),
                                      *[str(theirs_dump)] * dump))
                base.append(run(ROOT, "--baseline", str(where)))
            grep = grep_cpu(where, "socket")
            print(f"{label}: {int(ours[0]['documents']):,} documents indexed")
            print("| code | first build (CPU) | wall | peak RSS | one question (CPU) | "
                  "read + split words (CPU) | build / that | git grep -i -w (CPU) |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|")
            best_base = min(b["cpu"] for b in base)
            for name, runs in (("this", ours), ("that", theirs)):
                if not runs:
                    continue
                best = {k: min(r[k] for r in runs) for k in runs[0]}
                print(f"| {name} | {best['cpu']:.2f} s | {best['wall']:.2f} s | "
                      f"{best['rss']:.0f} MiB ({best['rss'] - best['rss_start']:+.0f}) | "
                      f"{best['question'] * 1000:.0f} ms | {best_base:.2f} s | "
                      f"{best['cpu'] / best_base:.1f}× | {grep * 1000:.0f} ms |")
            if theirs:
                ratio = min(r["cpu"] for r in ours) / min(r["cpu"] for r in theirs)
                same = _same(ours_dump, theirs_dump)
                failed |= not same
                print(f"\nthis / that (CPU): {ratio:.2f}; the two indexes and the answers to "
                      f"{QUESTIONS} questions are {'identical' if same else 'DIFFERENT'}")
            print(flush=True)
            shutil.rmtree(where, ignore_errors=True)
            shutil.rmtree(other, ignore_errors=True)
    print(f"load average at the end: {_load_average()}")
    if failed:
        sys.exit("the indexes differ")


def _same(a: Path, b: Path) -> bool:
    """The two dumps hold equal values (marshal may spell equal values differently)."""
    return bool(marshal.loads(a.read_bytes()) == marshal.loads(b.read_bytes()))


def _load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
