"""Recall quality on a corpus of notes and questions, beside an Okapi BM25 baseline.

    python bench/recall_quality.py [CORPUS] [--semantic]   (default: ../shared/bench/recall-dev)

Loads every note of CORPUS/notes into a temporary git repository as committed team
notes, asks each question of CORPUS/queries.tsv through omh's own recall, and
prints P@1, top-3, top-8, MRR (over the returned list) and mean notes returned,
beside BM25 (k1 = 1.2, b = 0.75) over the same stemmed words of the same notes,
computed in the same run. McNemar's exact test compares each row with BM25.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pygit2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from omh_git_memory.note import parse  # noqa: E402
from omh_git_memory.recall import MAX_RESULTS, Searcher, area_label, recall  # noqa: E402
from omh_git_memory.tokens import without_links, words  # noqa: E402
from omh_git_memory.workspace import open_workspace  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "bench" / "recall-dev"


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


class BM25:
    """Okapi BM25 over the words of each note's text (title and body)."""

    def __init__(self, docs: dict[str, Counter[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = docs
        self.k1, self.b = k1, b
        self.avg = sum(sum(c.values()) for c in docs.values()) / len(docs)
        self.df: Counter[str] = Counter()
        for terms in docs.values():
            self.df.update(terms.keys())
        self.n = len(docs)

    def rank(self, question: str) -> list[str]:
        scores: Counter[str] = Counter()
        for term in dict.fromkeys(words(question)):
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


def metrics(ranks: Sequence[int | None], returned: Sequence[int]) -> dict[str, float]:
    n = len(ranks)
    return {
        "P@1": 100 * sum(r == 1 for r in ranks) / n,
        "top-3": 100 * sum(r is not None and r <= 3 for r in ranks) / n,
        "top-8": 100 * sum(r is not None and r <= 8 for r in ranks) / n,
        "MRR": sum(1 / r for r in ranks if r is not None and r <= 8) / n,
        "returned": sum(returned) / n,
    }


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


def rank_of(keys: Sequence[str], expected: str) -> int | None:
    return keys.index(expected) + 1 if expected in keys else None


def main(corpus: Path, semantic: bool) -> None:
    queries = list(csv.DictReader((corpus / "queries.tsv").open(), delimiter="\t"))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        repo = make_repo(corpus, Path(tmp) / "repo")
        ws = open_workspace(repo)
        searcher: Searcher = ws.searcher()
        texts = {}
        for path in (repo / ".omh" / "notes").glob("*.md"):
            note = parse(path.read_text(encoding="utf-8"))
            texts[note.key.value] = Counter(words(without_links(note.body)))
        bm25 = BM25(texts)

        def ours(question: str) -> tuple[list[str], int]:
            answer = recall(searcher, question)
            keys = [h.doc.key for h in answer.results]
            shown = {h.doc.key for h in answer.results}
            shown.update(n.key for h in answer.results for n in h.neighbours)
            return keys, len(shown)

        view = ws.semantic(searcher) if semantic else None

        def fused(question: str) -> tuple[list[str], int]:
            answer = recall(searcher, question, semantic=view)
            return [h.doc.key for h in answer.results], len(answer.results)

        def fused_zero_counted(question: str) -> tuple[list[str], int]:
            answer = recall(searcher, question, semantic=view, zero_is_evidence=True)
            return [h.doc.key for h in answer.results], len(answer.results)

        def embeddings_alone(question: str) -> tuple[list[str], int]:
            assert view is not None
            sims = view.similarities([question])
            usable = [i for i, d in enumerate(searcher.docs) if d is not None]
            top = sorted(usable, key=lambda i: -sims[i])[:MAX_RESULTS]
            return [searcher.docs[i].key for i in top], len(top)  # type: ignore[union-attr]

        def ours_without_area(question: str) -> tuple[list[str], int]:
            # Evidence for keeping the area label (`docs:`, `ws:`) in the question.
            label = area_label(question)
            return ours(question.split(":", 1)[1] if label else question)

        def baseline(question: str) -> tuple[list[str], int]:
            ranked = bm25.rank(question)
            return ranked, len(ranked)

        rows: list[tuple[str, Callable[[str], tuple[list[str], int]]]] = [
            ("BM25 (k1=1.2, b=0.75), all matches", baseline),
            ("omh recall (≤ 8 notes)", ours),
            ("omh recall, area label removed from questions", ours_without_area),
        ]
        if view is not None:
            rows += [
                ("embeddings alone (top 8 by cosine)", embeddings_alone),
                ("lexical + semantic, a lexical 0 averaged in", fused_zero_counted),
                ("omh recall + semantic (shipped)", fused),
            ]
        results: dict[str, tuple[list[int | None], list[int]]] = {}
        for name, run in rows:
            ranks, returned = [], []
            for q in queries:
                keys, count = run(q["query"])
                ranks.append(rank_of(keys, q["expected_key"]))
                returned.append(count)
            results[name] = (ranks, returned)

    print(f"corpus: {corpus} — {len(texts)} notes, {len(queries)} questions\n")
    print(f"| {'ranker':<46} | P@1   | top-3 | top-8 | MRR   | notes returned "
          "| p (P@1, top-8 vs BM25) |")
    print(f"|{'-' * 48}|-------|-------|-------|-------|----------------|------------------------|")
    base_ranks = results[rows[0][0]][0]
    for name, (ranks, returned) in results.items():
        m = metrics(ranks, returned)
        if name == rows[0][0]:
            p = "—"
        else:
            p1 = mcnemar([r == 1 for r in ranks], [r == 1 for r in base_ranks])
            p8 = mcnemar([r is not None and r <= 8 for r in ranks],
                         [r is not None and r <= 8 for r in base_ranks])
            p = f"{p1:.3f}, {p8:.3f}"
        print(f"| {name:<46} | {m['P@1']:5.1f} | {m['top-3']:5.1f} | {m['top-8']:5.1f} | "
              f"{m['MRR']:.3f} | {m['returned']:14.1f} | {p:<22} |")
    zero = [i for i, q in enumerate(queries)
            if not set(words(q["query"])) & set(texts[q["expected_key"]])]
    print(f"\nquestions sharing no word with their note: {len(zero)}; found in the top 8 by:")
    for name, (ranks, _) in results.items():
        found = sum(1 for i in zero if ranks[i] is not None and ranks[i] <= 8)
        print(f"  {name}: {found}")
    print(f"\nomh returns at most {MAX_RESULTS} matched notes (plus their neighbours); "
          "BM25 returns every note that shares a word.")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(Path(args[0]) if args else DEFAULT, semantic="--semantic" in sys.argv)
