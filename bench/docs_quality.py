"""Recall over real repositories' documents (docs-dev), beside stemmed BM25, in one run.

    python bench/docs_quality.py [DOCS_DEV] [--semantic]

DOCS_DEV defaults to ../shared/bench/docs-dev: one folder per repository (its tracked
Markdown files as they are) and questions.tsv (`repo sha question expected_path
also_ok section kind`). Each folder is committed into a temporary git repository, set
up with omh's own init, committed again, and every question is asked through omh's
recall. A relevant question counts at the rank of the first result that is its
expected document or one of `also_ok`; an off-topic one counts as silent when no note
is returned at all.

Printed per repository and pooled: P@1, top-3, top-8, MRR, mean notes returned (the
relevant questions), off-topic answered with nothing (%) and the notes those got, for
stemmed BM25 (k1 1.2, b 0.75) over whole documents (every document sharing a word:
the baseline) and omh recall as shipped (and with --semantic, fused).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_quality import BM25, SHARED, mcnemar, plain_words  # noqa: E402

from omh_git_memory.actions import ask as asking  # noqa: E402
from omh_git_memory.actions.init import initialise  # noqa: E402
from omh_git_memory.actions.workspace import Workspace, open_workspace  # noqa: E402
from omh_git_memory.recall import fusion  # noqa: E402
from omh_git_memory.recall.answer import shown_docs  # noqa: E402
from omh_git_memory.recall.bm25 import Searcher  # noqa: E402
from omh_git_memory.recall.floor import MIN_SHARE, recall  # noqa: E402

# The section check's evidence (docs/recall.md): (a document's share in one section,
# the share some document returned must reach), 0.0 turning either off.
TOGETHER_TRIED = ((0.2, 0.0), (0.3, 0.0), (0.0, 0.3), (0.2, 0.25), (0.2, 0.3), (0.25, 0.3),
                  (0.2, 0.35), (0.3, 0.3))

# The embedding's bar for a document it alone vouches for (recall/fusion.py SURE), with
# --semantic: 0.0 keeps every nominee (as before the bar), 1.1 none.
SURE_TRIED = (0.0, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 1.1)

DOCS_DEV = SHARED / "docs-dev"
FOLDERS = {"python-poetry/poetry": "poetry", "rust-lang/book": "book"}


@dataclass(frozen=True)
class Question:
    repo: str
    text: str
    expected: frozenset[str]  # the documents that answer it
    offtopic: bool
    cross: bool = False  # another repository's question: nothing here should answer it
    path: str = ""  # the document whose section answers it
    section: str = ""  # that section's heading


@dataclass(frozen=True)
class Row:
    rank: int | None  # of the first answering document; None when absent or off-topic
    shown: int  # notes returned, neighbours included
    offtopic: bool
    cross: bool = False


Ranker = Callable[[str], tuple[list[str], int]]  # question -> (paths in order, notes shown)


def questions(docs_dev: Path) -> list[Question]:
    with (docs_dev / "questions.tsv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [Question(r["repo"], r["question"],
                     frozenset([r["expected_path"], *filter(None, r["also_ok"].split(","))]),
                     r["kind"] == "offtopic", path=r["expected_path"], section=r["section"])
            for r in rows]


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def heading_lines(text: str, heading: str) -> tuple[int, int] | None:
    """The lines (1-based) of the part of `text` under the heading whose text is
    `heading` (code spans' backticks and case aside): to the next heading of its
    level or above. None when no heading reads so."""
    def plain(h: str) -> str:
        return " ".join(h.replace("`", "").split()).lower()
    lines = text.split("\n")
    start = level = 0
    for i, line in enumerate(lines, start=1):
        match = _HEADING.match(line)
        if not match:
            continue
        if not start and plain(match.group(2)) == plain(heading):
            start, level = i, len(match.group(1))
        elif start and len(match.group(1)) <= level:
            return start, i - 1
    return (start, len(lines)) if start else None


def sections_named(ws: Workspace, searcher: Searcher, checkout: Path,
                   asked: Sequence[Question]) -> tuple[int, int]:
    """Of the relevant questions whose answering document omh returns, how many have
    it named at the answering section (one that starts under its heading)."""
    right = returned = 0
    for q in asked:
        if q.offtopic or q.cross or not q.section:
            continue
        answered = asking.ask(ws, asking.Question(q.text), searcher=searcher)
        hit = next((h for h in answered.answer.results if h.doc.location == q.path), None)
        lines = heading_lines((checkout / q.path).read_text(encoding="utf-8", errors="replace"),
                              q.section)
        if hit is None or lines is None:
            continue
        returned += 1
        named = answered.sections.get((hit.doc.layer, hit.doc.key))
        right += named is not None and lines[0] <= named.start <= lines[1]
    return right, returned


def commit_all(repo: pygit2.Repository, message: str) -> None:
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("bench", "bench@omh.invalid")
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", sig, sig, message, repo.index.write_tree(), parents)


def checkout_of(folder: Path, where: Path) -> Path:
    """`folder`'s documents committed, then omh's init committed, as a user would."""
    shutil.copytree(folder, where)
    repo = pygit2.init_repository(str(where), initial_head="main")
    commit_all(repo, "documents")
    initialise(open_workspace(where))
    commit_all(repo, "omh init")
    return where


def bm25_ranker(checkout: Path) -> Ranker:
    texts = {str(p.relative_to(checkout)): p.read_text(encoding="utf-8", errors="replace")
             for p in checkout.rglob("*.md") if ".git" not in p.parts and ".omh" not in p.parts}
    model = BM25({k: Counter(plain_words(k.replace("/", " ") + " " + t))
                  for k, t in texts.items()}, plain_words)

    def ask(question: str) -> tuple[list[str], int]:
        ranked = model.rank(question)
        return ranked, len(ranked)
    return ask


def omh_ranker(ws: Workspace, searcher: Searcher, **options: object) -> Ranker:
    """omh's recall as both edges ask it (actions/ask), or, with `options`, the floor's
    recall called with them (the section check's documents read as ask reads them)."""
    def shipped(question: str) -> tuple[list[str], int]:
        answer = asking.ask(ws, asking.Question(question), searcher=searcher).answer
        return [h.doc.location for h in answer.results], len(shown_docs(answer))

    def varied(question: str) -> tuple[list[str], int]:
        answer = recall(searcher, question, **options)  # type: ignore[arg-type]
        return [h.doc.location for h in answer.results], len(shown_docs(answer))
    return varied if options else shipped


def with_sure(sure: float, ask: Ranker) -> Ranker:
    """`ask` with the embedding's bar for documents at `sure`."""
    def asked(question: str) -> tuple[list[str], int]:
        shipped, fusion.SURE = fusion.SURE, sure
        try:
            return ask(question)
        finally:
            fusion.SURE = shipped
    return asked


def score(ask: Ranker, asked: Sequence[Question]) -> list[Row]:
    rows = []
    for q in asked:
        paths, shown = ask(q.text)
        if q.offtopic or q.cross:
            rows.append(Row(None, shown, q.offtopic, q.cross))
            continue
        ranks = [i + 1 for i, p in enumerate(paths) if p in q.expected]
        rows.append(Row(ranks[0] if ranks else None, shown, False))
    return rows


def metrics(rows: Sequence[Row]) -> dict[str, float]:
    relevant = [r for r in rows if not r.offtopic and not r.cross]
    off = [r for r in rows if r.offtopic]
    cross = [r for r in rows if r.cross]
    n = len(relevant) or 1
    ranks = [r.rank for r in relevant]
    return {
        "P@1": 100 * sum(r == 1 for r in ranks) / n,
        "top-3": 100 * sum(r is not None and r <= 3 for r in ranks) / n,
        "top-8": 100 * sum(r is not None and r <= 8 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r is not None and r <= 8) / n,
        "returned": sum(r.shown for r in relevant) / n,
        "silent": 100 * sum(r.shown == 0 for r in off) / (len(off) or 1),
        "off returned": sum(r.shown for r in off) / (len(off) or 1),
        "cross silent": 100 * sum(r.shown == 0 for r in cross) / (len(cross) or 1),
    }


NAMED: list[tuple[int, int]] = []  # per repository: (sections named right, answers)


def run_repo(folder: Path, asked: Sequence[Question], semantic: bool) -> dict[str, list[Row]]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        checkout = checkout_of(folder, Path(tmp) / "repo")
        ws = open_workspace(checkout)
        searcher = ws.searcher()
        places = asking.Documents(ws).places
        rankers: dict[str, Ranker] = {
            "stemmed BM25, whole documents": bm25_ranker(checkout),
            "omh recall (shipped)": omh_ranker(ws, searcher),
            "omh recall, no section check": omh_ranker(ws, searcher, min_share=MIN_SHARE),
            "omh recall, no check of names nothing mentions": omh_ranker(
                ws, searcher, places=places, names=False),
        }
        for need, must in TOGETHER_TRIED:
            rankers[f"section check {need:.2f}, answers {must:.2f}"] = omh_ranker(
                ws, searcher, places=places, together=need, answers=must)
        if semantic:
            view = ws.semantic(searcher)
            rankers["omh recall + semantic"] = omh_ranker(
                ws, searcher, semantic=view, places=places)
            for sure in SURE_TRIED:
                rankers[f"+ semantic, documents vouched for at {sure:.2f}"] = with_sure(
                    sure, omh_ranker(ws, searcher, semantic=view, places=places))
        named = sections_named(ws, searcher, checkout, asked)
        print(f"  ({folder.name}: the answering section named in {named[0]} of the {named[1]} "
              "answers that return its document)", file=sys.stderr)
        NAMED.append(named)
        return {name: score(ranker, asked) for name, ranker in rankers.items()}


def table(title: str, results: dict[str, list[Row]], base: str) -> None:
    print(f"\n{title}\n")
    print("| ranker | P@1 | top-3 | top-8 | MRR | notes returned | off-topic silent % "
          "| off-topic notes | other repository's questions silent % | p vs BM25 (P@1) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, rows in results.items():
        m = metrics(rows)
        firsts = [r.rank == 1 for r in rows if not r.offtopic and not r.cross]
        theirs = [r.rank == 1 for r in results[base] if not r.offtopic and not r.cross]
        p = "—" if name == base else f"{mcnemar(firsts, theirs):.3f}"
        print(f"| {name} | {m['P@1']:.1f} | {m['top-3']:.1f} | {m['top-8']:.1f} | "
              f"{m['MRR']:.3f} | {m['returned']:.1f} | {m['silent']:.0f} | "
              f"{m['off returned']:.1f} | {m['cross silent']:.0f} | {p} |")


def main(docs_dev: Path, semantic: bool) -> None:
    asked = questions(docs_dev)
    per_repo: dict[str, dict[str, list[Row]]] = {}
    for repo, name in FOLDERS.items():
        mine = [q for q in asked if q.repo == repo]
        mine += [Question(q.repo, q.text, frozenset(), False, True) for q in asked
                 if q.repo != repo and not q.offtopic]
        per_repo[name] = run_repo(docs_dev / name, mine, semantic)
        own = sum(not q.cross for q in mine)
        table(f"{name}: {own} questions, and {len(mine) - own} of the other repository's",
              per_repo[name], "stemmed BM25, whole documents")
    pooled = {n: [r for rows in per_repo.values() for r in rows[n]]
              for n in next(iter(per_repo.values()))}
    own = sum(not r.cross for r in pooled["omh recall (shipped)"])
    table(f"pooled: {own} questions, and each repository's asked of the other", pooled,
          "stemmed BM25, whole documents")
    print(f"\nomh recall (shipped) names the answering section in {sum(r for r, _ in NAMED)} "
          f"of the {sum(n for _, n in NAMED)} answers that return its document (pooled)")


if __name__ == "__main__":
    args = sys.argv[1:]
    paths = [Path(a) for a in args if not a.startswith("--")]
    main(paths[0] if paths else DOCS_DEV, semantic="--semantic" in args)
