"""Recall quality on the dev corpora, beside stemmed BM25, in one run.

    python bench/recall_quality.py [CORPUS …] [--semantic] [--docs CHECKOUT]

CORPUS defaults to both dev corpora (../shared/bench/recall-dev and
recall-dev-libgit2). Each corpus's notes are committed as team notes in a temporary
git repository and every question of its queries.tsv is asked through omh's own
recall. Printed per corpus and pooled: P@1, top-3, top-8, MRR (over the returned
list) and mean notes returned (results and neighbours), for

- stemmed BM25 (k1 = 1.2, b = 0.75) over words of letters, digits and
  underscores, lowercased and stemmed as omh stems, every matching note: the
  baseline; and the same over omh's identifier-aware words;
- omh recall as shipped, and as it was before the relevance floor;
- the ranking ideas measured (area label at half weight or removed, the title
  as a field, the key not counted again), each compared with the shipped
  ranking by McNemar's exact test on the pooled questions;
- the relevance floor's evidence: notes returned, top-8 and left-out count at
  each floor;
- with --semantic, the fusion rows.

With --docs CHECKOUT, also asks bench/docs_questions.tsv (questions answered by
this project's own documents, written before they were ranked) of a clone of
CHECKOUT, with stubs indexed with and without their document's text.
"""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omh_git_memory.actions.ask import Documents  # noqa: E402
from omh_git_memory.actions.workspace import Workspace, open_workspace  # noqa: E402
from omh_git_memory.model.note import Note, parse  # noqa: E402
from omh_git_memory.recall import bm25 as bm25_module  # noqa: E402
from omh_git_memory.recall import build as build_module  # noqa: E402
from omh_git_memory.recall.answer import MAX_RESULTS, Answer, shown_docs  # noqa: E402
from omh_git_memory.recall.bm25 import Searcher, area_label  # noqa: E402
from omh_git_memory.recall.floor import FLOOR, MIN_SHARE, recall  # noqa: E402
from omh_git_memory.recall.tokens import stem, without_links, words  # noqa: E402

# ../shared/bench beside the checkout (or beside a parent folder of worktrees)
SHARED = next((p / "shared" / "bench" for p in ROOT.parents
               if (p / "shared" / "bench").is_dir()), ROOT.parent / "shared" / "bench")
DEFAULTS = [SHARED / "recall-dev", SHARED / "recall-dev-libgit2"]
FLOORS = (0.0, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5)

Row = tuple[int | None, int, int]  # rank of the expected note, notes shown, left out
Ranker = Callable[[str], tuple[list[str], int, int]]


def make_repo(corpus: Path, where: Path) -> Path:
    repo = pygit2.init_repository(str(where), initial_head="main")
    notes = where / ".omh" / "notes"
    notes.mkdir(parents=True)
    for path in sorted((corpus / "notes").glob("*.md")):
        (notes / path.name).write_bytes(path.read_bytes())
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("bench", "bench@omh.invalid")
    repo.create_commit("HEAD", sig, sig, "corpus", repo.index.write_tree(), [])
    return where


def plain_words(text: str) -> list[str]:
    """Stemmed BM25's words: runs of letters, digits and underscores, lowercased and
    stemmed as omh stems; an identifier stays one word."""
    return [stem(w.lower()) for w in re.findall(r"\w+", text)]


class BM25:
    """Okapi BM25 over each note's text (title and body)."""

    def __init__(self, docs: dict[str, Counter[str]], tokens: Callable[[str], list[str]],
                 k1: float = 1.2, b: float = 0.75) -> None:
        self.docs, self.tokens = docs, tokens
        self.k1, self.b = k1, b
        self.avg = sum(sum(c.values()) for c in docs.values()) / len(docs)
        self.df: Counter[str] = Counter()
        for terms in docs.values():
            self.df.update(terms.keys())
        self.n = len(docs)

    def rank(self, question: str) -> list[str]:
        scores: Counter[str] = Counter()
        for term in dict.fromkeys(self.tokens(question)):
            df = self.df.get(term, 0)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for key, terms in self.docs.items():
                tf = terms.get(term, 0)
                if tf:
                    length = sum(terms.values())
                    norm = self.k1 * (1 - self.b + self.b * length / self.avg)
                    scores[key] += idf * tf * (self.k1 + 1) / (tf + norm)
        return [k for k, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided exact McNemar p-value for paired successes `a` vs `b`."""
    only_a = sum(x and not y for x, y in zip(a, b, strict=True))
    only_b = sum(y and not x for x, y in zip(a, b, strict=True))
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def metrics(rows: Sequence[Row]) -> dict[str, float]:
    n = len(rows)
    ranks = [r for r, _, _ in rows]
    return {
        "P@1": 100 * sum(r == 1 for r in ranks) / n,
        "top-3": 100 * sum(r is not None and r <= 3 for r in ranks) / n,
        "top-8": 100 * sum(r is not None and r <= 8 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r is not None and r <= 8) / n,
        "returned": sum(c for _, c, _ in rows) / n,
        "left out": sum(lo for _, _, lo in rows) / n,
    }


def first(rows: Sequence[Row]) -> list[bool]:
    return [r == 1 for r, _, _ in rows]


def top8(rows: Sequence[Row]) -> list[bool]:
    return [r is not None and r <= MAX_RESULTS for r, _, _ in rows]


def reindexed(ws: Workspace, analyse: Callable[..., Counter[str]]) -> Searcher:
    """A searcher over the index rebuilt with `analyse` in place of omh's."""
    shipped = build_module.analyse
    build_module.analyse = analyse
    try:
        snap = ws.snapshot(rebuild=True)
    finally:
        build_module.analyse = shipped
    return Searcher(snap, [])


SHIPPED_ANALYSE = build_module.analyse


def with_title(note: Note, document: str | None = None) -> Counter[str]:
    terms = SHIPPED_ANALYSE(note, document)
    terms.update(words(note.title))
    return terms


def without_key(note: Note, document: str | None = None) -> Counter[str]:
    terms = SHIPPED_ANALYSE(note, document)
    terms.subtract(words(note.key.value.replace("/", " ")))
    return +terms


def omh_ranker(searcher: Searcher, **options: object) -> Ranker:
    def ask(question: str) -> tuple[list[str], int, int]:
        answer = recall(searcher, question, **options)  # type: ignore[arg-type]
        return [h.doc.key for h in answer.results], len({(d.layer, d.key) for d in
                                                          shown_docs(answer)}), answer.left_out
    return ask


def with_setting(ranker: Ranker, name: str, value: float) -> Ranker:
    """`ranker` with the scoring module's constant `name` set to `value` while it asks."""
    def ask(question: str) -> tuple[list[str], int, int]:
        shipped = getattr(bm25_module, name)
        setattr(bm25_module, name, value)
        try:
            return ranker(question)
        finally:
            setattr(bm25_module, name, shipped)
    return ask


def run_corpus(corpus: Path, semantic: bool) -> tuple[dict[str, list[Row]], int]:
    queries = list(csv.DictReader((corpus / "queries.tsv").open(), delimiter="\t"))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        repo = make_repo(corpus, Path(tmp) / "repo")
        ws = open_workspace(repo)
        searcher = ws.searcher()
        texts = {}
        for path in (repo / ".omh" / "notes").glob("*.md"):
            note = parse(path.read_text(encoding="utf-8"))
            texts[note.key.value] = without_links(note.body)
        plain = BM25({k: Counter(plain_words(t)) for k, t in texts.items()}, plain_words)
        ours_bm25 = BM25({k: Counter(words(t)) for k, t in texts.items()}, words)

        def bm25(model: BM25) -> Ranker:
            def ask(question: str) -> tuple[list[str], int, int]:
                ranked = model.rank(question)
                return ranked, len(ranked), 0
            return ask

        # As ask() calls it (actions/ask.py): stubs' sections checked (none here but the
        # topic, which is no stub), candidates drawn from a wider pool.
        shipped = omh_ranker(searcher, places=Documents(ws).places)

        def area_removed(question: str) -> tuple[list[str], int, int]:
            return shipped(question.split(":", 1)[1] if area_label(question) else question)

        rankers: dict[str, Ranker] = {
            "stemmed BM25, every matching note": bm25(plain),
            "BM25 over omh's identifier-aware words": bm25(ours_bm25),
            "omh recall before the floor": omh_ranker(searcher, floor=0.0, min_share=0.0),
            "omh recall (shipped)": shipped,
            "idea: area label at half weight": with_setting(shipped, "AREA_WEIGHT", 0.5),
            "idea: area label removed": area_removed,
            "idea: title as a field (counted again)": omh_ranker(reindexed(ws, with_title)),
            "idea: key not counted again": omh_ranker(reindexed(ws, without_key)),
            "idea: function words at full weight": with_setting(shipped, "FUNCTION_WEIGHT", 1.0),
            "idea: function words not counted": with_setting(shipped, "FUNCTION_WEIGHT", 0.0),
        }
        for floor in FLOORS:
            rankers[f"floor {floor:.2f} × best, share {MIN_SHARE}"] = omh_ranker(
                searcher, floor=floor, min_share=MIN_SHARE)
        if semantic:
            view = ws.semantic(searcher)
            rankers["omh recall + semantic (shipped)"] = omh_ranker(
                searcher, semantic=view)  # type: ignore[arg-type]
            rankers["lexical + semantic, a lexical 0 averaged in"] = omh_ranker(
                searcher, semantic=view, zero_is_evidence=True)  # type: ignore[arg-type]
        results: dict[str, list[Row]] = {}
        for name, ask in rankers.items():
            rows = []
            for q in queries:
                keys, shown, left_out = ask(q["query"])
                expected = q["expected_key"]
                rank = keys.index(expected) + 1 if expected in keys else None
                rows.append((rank, shown, left_out))
            results[name] = rows
        return results, len(texts)


def table(title: str, results: dict[str, list[Row]], base: str, shipped: str) -> None:
    print(f"\n{title}\n")
    print("| ranker | P@1 | top-3 | top-8 | MRR | notes returned | p vs BM25 (P@1, top-8) "
          "| p vs shipped (P@1, top-8) |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for name, rows in results.items():
        if name.startswith("floor "):
            continue
        m = metrics(rows)
        vs_base = "—" if name == base else (
            f"{mcnemar(first(rows), first(results[base])):.4f}, "
            f"{mcnemar(top8(rows), top8(results[base])):.4f}")
        vs_shipped = "—" if name in (shipped, base) else (
            f"{mcnemar(first(rows), first(results[shipped])):.3f}, "
            f"{mcnemar(top8(rows), top8(results[shipped])):.3f}")
        print(f"| {name} | {m['P@1']:.1f} | {m['top-3']:.1f} | {m['top-8']:.1f} | "
              f"{m['MRR']:.3f} | {m['returned']:.1f} | {vs_base} | {vs_shipped} |")


def floor_table(per_corpus: dict[str, dict[str, list[Row]]]) -> None:
    names = [n for n in next(iter(per_corpus.values())) if n.startswith("floor ")]
    corpora = list(per_corpus)
    print(f"\nThe relevance floor (shipped: {FLOOR} × the best score, and at least "
          f"{MIN_SHARE} of the question's content weight): top-8 and notes returned\n")
    print("| floor | " + " | ".join(f"{c} top-8 | {c} returned" for c in corpora)
          + " | pooled top-8 | pooled returned | pooled left out | p top-8 vs no floor |")
    print("|---|" + "---:|---:|" * len(corpora) + "---:|---:|---:|---|")
    none = [r for c in corpora for r in per_corpus[c]["omh recall before the floor"]]
    for name in ["omh recall before the floor", *names]:
        cells = []
        for c in corpora:
            m = metrics(per_corpus[c][name])
            cells.append(f"{m['top-8']:.1f} | {m['returned']:.2f}")
        pooled = [r for c in corpora for r in per_corpus[c][name]]
        m = metrics(pooled)
        label = "none" if name == "omh recall before the floor" else name[len("floor "):]
        print(f"| {label} | " + " | ".join(cells) + f" | {m['top-8']:.1f} | "
              f"{m['returned']:.2f} | {m['left out']:.1f} | "
              f"{mcnemar(top8(pooled), top8(none)):.3f} |")


def docs_benchmark(checkout: Path) -> None:
    """Questions answered by this project's own docs, stubs with and without their
    document's text (a clone, so the checkout's .git is never written)."""
    questions = list(csv.DictReader((ROOT / "bench" / "docs_questions.tsv").open(),
                                    delimiter="\t"))
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "checkout"
        subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True)
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        ws = open_workspace(clone)

        def headings_only(note: Note, document: str | None = None) -> Counter[str]:
            return SHIPPED_ANALYSE(note)

        headings = reindexed(ws, headings_only)
        text = reindexed(ws, SHIPPED_ANALYSE)
        variants = [
            ("stub = title, path, headings", headings, bm25_module.FUNCTION_WEIGHT),
            ("stub = title, path, headings + the document's text (shipped)", text,
             bm25_module.FUNCTION_WEIGHT),
            ("the same, function words at full weight (before)", text, 1.0),
        ]
        print(f"\nThis project's docs ({len(questions)} questions, bench/docs_questions.tsv, "
              f"in a clone of {checkout})\n")
        print("| stubs indexed as | P@1 | top-3 | top-8 | notes returned |")
        print("|---|---:|---:|---:|---:|")
        checks: list[str] = []
        shipped_weight = bm25_module.FUNCTION_WEIGHT
        for name, searcher, weight in variants:
            bm25_module.FUNCTION_WEIGHT = weight
            try:
                rows: list[Row] = []
                for q in questions:
                    answer = recall(searcher, q["question"])
                    paths = [h.doc.location for h in answer.results]
                    ranks = [paths.index(p) + 1 for p in q["expected"].split("|") if p in paths]
                    rows.append((min(ranks) if ranks else None, len(shown_docs(answer)), 0))
                m = metrics(rows)
                print(f"| {name} | {m['P@1']:.1f} | {m['top-3']:.1f} | {m['top-8']:.1f} | "
                      f"{m['returned']:.1f} |")
                checks.append(f"{name}:\n" + _targets(
                    clone, recall(searcher, "why does the build fail?"),
                    recall(searcher, "how do I run the tests")))
            finally:
                bm25_module.FUNCTION_WEIGHT = shipped_weight
        print("\n" + "\n".join(checks))


def _targets(clone: Path, build: Answer, tests: Answer) -> str:
    lacking = [h.doc.location for h in build.results if h.doc.location.endswith(".md")
               and not {"build", "fail"} & set(words((clone / h.doc.location).read_text(
                   encoding="utf-8", errors="replace")))]
    paths = [h.doc.location for h in tests.results]
    rank = paths.index("README.md") + 1 if "README.md" in paths else None
    return (f"  'why does the build fail?': {len(build.results)} results, stubs whose "
            f"document lacks both words: {lacking or 'none'}\n"
            f"  'how do I run the tests': README.md at rank {rank}")


def main(corpora: Sequence[Path], semantic: bool, docs: Path | None) -> None:
    per_corpus: dict[str, dict[str, list[Row]]] = {}
    base, shipped = "stemmed BM25, every matching note", "omh recall (shipped)"
    for corpus in corpora:
        results, count = run_corpus(corpus, semantic)
        per_corpus[corpus.name] = results
        table(f"{corpus.name}: {count} notes, {len(results[base])} questions",
              results, base, shipped)
    if len(corpora) > 1:
        pooled = {name: [r for c in per_corpus.values() for r in c[name]]
                  for name in next(iter(per_corpus.values()))}
        table(f"pooled: {len(pooled[base])} questions", pooled, base, shipped)
    floor_table(per_corpus)
    print(f"\nomh returns at most {MAX_RESULTS} matched notes (plus neighbours), and only "
          "those over the floor; BM25 returns every note that shares a word.")
    if docs is not None:
        docs_benchmark(docs)


if __name__ == "__main__":
    args = sys.argv[1:]
    docs_at = None
    if "--docs" in args:
        at = args.index("--docs")
        docs_at = Path(args[at + 1])
        del args[at: at + 2]
    paths = [Path(a) for a in args if not a.startswith("--")]
    main(paths or DEFAULTS, semantic="--semantic" in args, docs=docs_at)
