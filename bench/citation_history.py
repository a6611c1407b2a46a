"""Citations replayed over a real history: does recall's `cites … changed since` mark
fire when, and only when, a cited file changed? And what does it cost a recall?

    python bench/citation_history.py [--repo /work/main] [--notes 100] [--at 0.5]

A clone of `--repo` (pygit2 only, no `git` process) is walked along its first-parent
line. At commit N (`--at`: the fraction of that line) one note is made for each of
the `--notes` commits up to N, as an agent would have written it while making that
change: its Evidence names the files the commit touched (against its first parent),
and `cites` is recorded exactly as `remember` records it (expiry/citations.py: the
regular files of N's tree, at most 8). Then, at checkpoints after N (+10, +50, +100
commits and the tip), each note's citations are compared with the checkpoint's tree
as recall compares them, and set beside the truth read independently from the
diffs of the commits walked:

- recall of the signal: of the notes some commit after N touched a cited file of,
  how many are flagged (a file changed and then restored to the very blob recorded
  is not flagged, and is counted apart);
- false flags: flagged notes whose cited files no commit after N touched (0 by
  construction — a blob id differs only if some commit changed the file; checked);
- the `N commits since` count beside the number of first-parent commits that
  touched the file (equal when the walk reached the recorded blob).

Then the cost: the clone checked out at its tip, `omh init`, the notes written to
its local store, and each note's subject asked as a question through the same core
call the CLI and MCP make (`actions.ask.ask`), alternately with the citation check
and with it stubbed out, in the same process: the median time per recall of each
and their ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omh_git_memory.actions import ask as asking  # noqa: E402
from omh_git_memory.actions.init import initialise  # noqa: E402
from omh_git_memory.actions.remember import Observation, build_surprise  # noqa: E402
from omh_git_memory.actions.workspace import open_workspace  # noqa: E402
from omh_git_memory.expiry import citations  # noqa: E402
from omh_git_memory.expiry.stale import TreeFacts  # noqa: E402
from omh_git_memory.git.repository import open_repo  # noqa: E402
from omh_git_memory.model.config import Config  # noqa: E402
from omh_git_memory.model.errors import NoteRefused  # noqa: E402
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES  # noqa: E402
from omh_git_memory.model.note import render, with_field  # noqa: E402


def first_parent_line(repo: pygit2.Repository) -> list[pygit2.Commit]:
    """The first-parent line from the root to HEAD, oldest first."""
    line = []
    commit = repo.head.peel(pygit2.Commit)
    while True:
        line.append(commit)
        if not commit.parent_ids:
            break
        commit = repo[commit.parent_ids[0]].peel(pygit2.Commit)
    return line[::-1]


def touched(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    """The paths a commit changed against its first parent (both sides of a rename)."""
    if not commit.parent_ids:
        return sorted(_files(commit.tree))
    parent = repo[commit.parent_ids[0]].peel(pygit2.Commit)
    diff = repo.diff(parent.tree, commit.tree)
    return sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)})


def _files(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    out: list[str] = []
    for entry in tree:
        if entry.filemode == pygit2.enums.FileMode.TREE:
            out += _files(entry.peel(pygit2.Tree), prefix + entry.name + "/")
        else:
            out.append(prefix + (entry.name or ""))
    return out


def make_notes(ws_repo: object, line: list[pygit2.Commit], at: int, count: int,
               repo: pygit2.Repository) -> list[tuple[str, str, str]]:
    """(key, note text, subject) for the `count` commits up to line[at], cited at N."""
    facts = TreeFacts(ws_repo, Config(DEFAULT_KEY_TEMPLATES, None), str(line[at].id))  # type: ignore[arg-type]
    today = dt.date.today()
    made: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for i, commit in enumerate(line[max(0, at - count + 1): at + 1]):
        subject = commit.message.split("\n", 1)[0].strip() or "a commit"
        evidence = "Changed in this commit: " + ", ".join(touched(repo, commit))
        value = citations.cites_field(evidence, facts)
        if value is None:
            continue
        obs = Observation(expected="it would stay as it was", observed=subject + ".",
                          evidence=evidence[:8000], answers=[subject], cites=value,
                          recorded=today)
        try:
            note = build_surprise(obs, DEFAULT_KEY_TEMPLATES, today)
        except NoteRefused:
            continue
        key = f"surprise/c{i:04d}"
        if key in seen:
            continue
        seen.add(key)
        made.append((key, render(with_field(note, "key", key)), subject))
    return made


def evaluate(ws_repo: object, repo: pygit2.Repository, line: list[pygit2.Commit], at: int,
             notes: list[tuple[str, str, str]], end: int) -> dict[str, object]:
    """The notes' citations at line[end] against the diffs of line[at+1 .. end]."""
    from omh_git_memory.model.note import parse

    touched_after: dict[str, int] = {}
    for commit in line[at + 1: end + 1]:
        for path in touched(repo, commit):
            touched_after[path] = touched_after.get(path, 0) + 1
    tip = str(line[end].id)
    cited = {("local", key): parse(text).field("cites") for key, text, _ in notes}
    checked = citations.check(ws_repo, tip, cited)  # type: ignore[arg-type]
    changed_notes = flagged = hits = false = restored = 0
    every = [c for found in checked.values() for c in found]
    files_touched = sum(c.path in touched_after for c in every)
    files_flagged = sum(c.changed for c in every)
    files_false = sum(c.changed and c.path not in touched_after for c in every)
    files_hit = sum(c.changed and c.path in touched_after for c in every)
    counts_equal = counts_known = counts_changed = 0
    for (_, _key), found in checked.items():
        truth = any(c.path in touched_after for c in found)
        flag = any(c.changed for c in found)
        changed_notes += truth
        flagged += flag
        hits += flag and truth
        false += flag and not truth
        restored += truth and not flag
        for c in found:
            if c.changed:
                counts_changed += 1
                if c.commits is not None:
                    counts_known += 1
                    counts_equal += c.commits == touched_after.get(c.path, 0)
    return {"commits_after": end - at, "notes": len(checked), "changed": changed_notes,
            "flagged": flagged, "recall": hits / changed_notes if changed_notes else None,
            "false_flags": false, "touched_and_restored": restored,
            "citations": len(every), "cited_files_touched": files_touched,
            "cited_files_flagged": files_flagged,
            "citation_recall": files_hit / files_touched if files_touched else None,
            "citation_false_flags": files_false,
            # touched after N, but holding the recorded blob again at the checkpoint
            "cited_files_restored": files_touched - files_hit,
            "counts_known": f"{counts_known}/{counts_changed}",
            "counts_equal_to_diffs": f"{counts_equal}/{counts_known}"}


def cost(checkout: Path, notes: list[tuple[str, str, str]], rounds: int) -> dict[str, float]:
    """Median ms per recall with the citation check and with it stubbed out."""
    ws = open_workspace(checkout)
    initialise(ws)
    ws = open_workspace(checkout)
    ws.local.create_root()
    for key, text, _ in notes:
        path = ws.local.root / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    searcher = ws.searcher()
    real = asking.check_citations
    questions = [subject for _, _, subject in notes]
    with_c: list[float] = []
    without: list[float] = []
    marked = 0
    for r in range(rounds):
        for q in questions:
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                asking.check_citations = real if on else (lambda *a, **k: {})  # type: ignore
                started = time.perf_counter()
                done = asking.ask(ws, asking.Question(q), searcher=searcher)
                took = (time.perf_counter() - started) * 1000
                (with_c if on else without).append(took)
                if on and r == 0:
                    marked += bool(done.cited())
    asking.check_citations = real
    # The check alone, on each question's results: with the count of commits since
    # (a walk of at most MAX_WALK commits) and without it (path lookups only).
    asked: list[tuple[str | None, dict[tuple[str, str], str | None]]] = []
    asking.check_citations = lambda repo, commit, cited: asked.append((commit, cited)) or {}
    for q in questions:
        asking.ask(ws, asking.Question(q), searcher=searcher)
    asking.check_citations = real
    alone: dict[int, list[float]] = {citations.MAX_WALK: [], 0: []}
    for limit in alone:
        for commit, cited in asked:
            saved, citations.MAX_WALK = citations.MAX_WALK, limit
            started = time.perf_counter()
            citations.check(ws.repo, commit, cited)
            alone[limit].append((time.perf_counter() - started) * 1000)
            citations.MAX_WALK = saved
    walk, lookups = alone[citations.MAX_WALK], alone[0]
    return {"recalls": len(with_c), "with_ms": statistics.median(with_c),
            "without_ms": statistics.median(without),
            "ratio": statistics.median(with_c) / statistics.median(without),
            "with_p90_ms": sorted(with_c)[int(len(with_c) * 0.9)],
            "check_ms": statistics.median(walk), "check_max_ms": max(walk),
            "check_top5_ms": [round(x, 1) for x in sorted(walk)[-5:]], "check_first_ms": walk[0],
            "check_without_count_ms": statistics.median(lookups),
            "check_without_count_max_ms": max(lookups),
            "answers_marked": marked, "questions": len(questions)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=str(ROOT))
    parser.add_argument("--notes", type=int, default=100)
    parser.add_argument("--at", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_HOME"] = str(Path(tmp) / "home")
        clone = Path(tmp) / "clone"
        repo = pygit2.clone_repository(args.repo, str(clone))
        if (Path(args.repo) / ".git" / "shallow").exists():
            print(f"{args.repo} is a shallow clone: no history to replay")
            return
        line = first_parent_line(repo)
        at = int((len(line) - 1) * args.at)
        ws_repo = open_repo(clone)
        started = time.perf_counter()
        notes = make_notes(ws_repo, line, at, args.notes, repo)
        made_ms = (time.perf_counter() - started) * 1000
        cited = sum(len(citations.parse_cites(t.split("cites: ", 1)[1].split("\n", 1)[0]))
                    for _, t, _ in notes)
        print(f"{args.repo}: {len(line)} first-parent commits; N = {at} "
              f"({str(line[at].id)[:12]}); {len(notes)} notes citing {cited} files "
              f"(made in {made_ms:.0f} ms)")
        for after in (10, 50, 100, len(line) - 1 - at):
            end = min(at + after, len(line) - 1)
            print(" ", evaluate(ws_repo, repo, line, at, notes, end))
        print("  cost per recall:", {k: round(v, 2) if isinstance(v, float) else v
                                     for k, v in cost(clone, notes, args.rounds).items()})


if __name__ == "__main__":
    main()
