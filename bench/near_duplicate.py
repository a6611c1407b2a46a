"""Calibration of the NearDuplicate lint rule, and its cost, in one run.

    python bench/near_duplicate.py [--seed 15] [--speed 10000] [--rounds 3] [--compare]

Known-good stores (nothing in them repeats another note): both dev corpora
(../shared/bench/recall-dev/notes and recall-dev-libgit2/notes, 400 notes each,
one per commit) and this project's own docs/ and README.md, read as lint would
see them: as stubs (which take no part in the rule; the line shows what they
would report if they did) and as written notes holding each page's text.

Made near-duplicates: for every real note of both corpora, one copy per edit an
agent makes when it records the same thing again (seeded, so every run makes the
same copies): a reworded title, the sentences reordered, a sentence added, a
sentence dropped, typos, a different evidence line for the same observation, and
all of title, typos and an added sentence at once. Each edit is a round: the 800
real notes plus one copy of each, and the rule is run over the 1,600 as lint runs
it (candidates blocked on shared rare words, then scored). A pair reported is a
hit when it is a note and its own copy, else a false alarm (two real notes that
share a topic and rare words, or a copy and another note).

Printed: false alarms on each known-good store; precision and recall per edit and
overall at the shipped threshold, and the curve around it; how many negatives
(pairs of real notes sharing rare words, the candidates the rule scores) come
near it. With --speed N: `lint` over N notes in-process (read and parse included,
as `omh memory lint` does) with the rule and without it, alternately, --rounds
times, and the ratio of the medians, in wall time and in the process's CPU time
(which other load on a shared machine mostly leaves alone). With --compare: each
measure in MEASURES (the shipped one among them) over the same stores, blocking and
copies, with its curve and the docs pages' most alike pair when every pair is scored.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import itertools
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from omh_git_memory.actions import lint as lint_module  # noqa: E402
from omh_git_memory.actions import near_duplicate as nd  # noqa: E402
from omh_git_memory.model.keys import DEFAULT_KEY_TEMPLATES  # noqa: E402
from omh_git_memory.model.layers import Layer  # noqa: E402
from omh_git_memory.model.note import Note, parse  # noqa: E402
from omh_git_memory.recall.stubs import stub_note  # noqa: E402

SHARED = next((p / "shared" / "bench" for p in ROOT.parents
               if (p / "shared" / "bench").is_dir()), ROOT.parent / "shared" / "bench")
CORPORA = ("recall-dev", "recall-dev-libgit2")
CURVE = (35, 40, 44, 45, 48, 50, 52, 55, 58, 60, 65, 70, 75, 80)

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_EVIDENCE = re.compile(r"https?://|#\d+|`|\d{2,}")
SYNONYMS = {
    "fix": "repair", "fixes": "repairs", "fixed": "repaired", "error": "failure",
    "fails": "breaks", "fail": "break", "failed": "broke", "when": "whenever",
    "make": "let", "makes": "lets", "use": "employ", "uses": "employs", "now": "from now on",
    "not": "never", "remove": "drop", "removed": "dropped", "add": "introduce",
    "added": "introduced", "avoid": "prevent", "because": "since", "function": "routine",
    "returns": "gives back", "return": "give back", "wrong": "incorrect", "bug": "defect",
    "test": "check", "tests": "checks", "build": "compile", "change": "alter",
    "changed": "altered", "after": "once", "before": "ahead of", "also": "as well",
    "allow": "permit", "allows": "permits", "could": "might", "can": "may",
}
OPENERS = ("It turns out that", "Found out that", "Surprise:", "Heads up:", "Noticed that")
ADDED = (
    "This bit me again while running the test suite today.",
    "I only noticed it after a second look at the logs.",
    "Worth checking before the next release.",
    "The same thing happens on a clean checkout.",
    "It took a while to track this down.",
    "Reproduced it twice to be sure.",
)
EVIDENCE = (
    "Seen in CI run 48213 on the Linux job.",
    "`make test` fails with exit status 2 on a fresh clone.",
    "See the failing job at https://ci.example.invalid/runs/7731.",
    "Reproduced with `./runtests.pl 1560` on the main branch.",
    "The log line reads: error 0x2f while reading the header.",
)


def read_store(folder: Path) -> list[Note]:
    """A known-good store's notes; none is an error, never a store reported clean."""
    notes = [parse(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.md"))]
    if not notes:
        raise SystemExit(f"no notes in {folder}: the benchmark corpora (shared/bench) are "
                         "needed beside the repository")
    return notes


def as_compared(notes: Sequence[Note], layer: Layer = Layer.TEAM) -> list[nd.Compared]:
    return [c for n in notes if (c := nd.compared(layer, n.key.value, n)) is not None]


# --- the edits ---------------------------------------------------------------------

def split(note: Note) -> tuple[str, list[str]]:
    """A corpus note's title and the sentences of its body (after the title)."""
    body = note.body.split("\n", 2)[-1] if note.body.startswith("# ") else note.body
    text = " ".join(body.split())
    return note.title, [s for s in _SENTENCE.split(text) if s]


def reword(rng: random.Random, title: str) -> str:
    words = title.split()
    out = []
    for w in words:
        low = w.lower()
        if low in ("the", "a", "an") and rng.random() < 0.7:
            continue
        if low in SYNONYMS and rng.random() < 0.8:
            out.append(SYNONYMS[low])
        else:
            out.append(w)
    if len(out) > 3:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    return f"{rng.choice(OPENERS)} {' '.join(out)}"


def typo(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    for i in rng.sample(long_words, min(len(long_words), max(2, len(words) // 25))):
        w = words[i]
        at = rng.randrange(1, len(w) - 1)
        kind = rng.randrange(3)
        words[i] = (w[:at] + w[at + 1] + w[at] + w[at + 2:] if kind == 0 else
                    w[:at] + w[at + 1:] if kind == 1 else w[:at] + w[at] + w[at:])
    return " ".join(words)


def edit_title(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    return reword(rng, title), body


def edit_reorder(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    shuffled = list(body)
    while len(shuffled) > 1 and shuffled == body:
        rng.shuffle(shuffled)
    return title, shuffled


def edit_add(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    out = list(body)
    out.insert(rng.randint(0, len(out)), rng.choice(ADDED))
    return title, out


def edit_drop(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    if not body:
        return title, body
    out = list(body)
    del out[rng.randrange(len(out))]
    return title, out


def edit_typos(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    return typo(rng, title), [typo(rng, s) for s in body]


def edit_evidence(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    out = list(body)
    where = [i for i, s in enumerate(out) if _EVIDENCE.search(s)]
    new = rng.choice(EVIDENCE)
    if where:
        out[rng.choice(where)] = new
    elif out:
        out[-1] = new
    else:
        out.append(new)
    return title, out


def edit_all(rng: random.Random, title: str, body: list[str]) -> tuple[str, list[str]]:
    title, body = edit_title(rng, title, body)
    title, body = edit_typos(rng, title, body)
    return edit_add(rng, title, body)


EDITS: dict[str, Callable[[random.Random, str, list[str]], tuple[str, list[str]]]] = {
    "reworded title": edit_title, "sentences reordered": edit_reorder,
    "a sentence added": edit_add, "a sentence dropped": edit_drop, "typos": edit_typos,
    "another evidence line": edit_evidence, "title + typos + a sentence": edit_all,
}


def copy_of(note: Note, title: str, body: list[str], key: str) -> Note:
    text = (f"---\nkey: {key}\ntype: topic\nsource: agent\nrecorded: 2026-11-30\n---\n\n"
            f"# {title}\n\n" + " ".join(body) + "\n")
    return parse(text)


# --- the measurements --------------------------------------------------------------

def found(items: Sequence[nd.Compared], threshold: float) -> list[tuple[str, str, float]]:
    return [(p.note.key, p.original.key, p.similarity) for p in nd.pairs(items, threshold)]


def docs_notes() -> tuple[list[Note], list[Note]]:
    """This project's documents: as stubs (as lint sees them) and as notes of their text."""
    paths = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])
    stubs, pages = [], []
    for i, path in enumerate(paths):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT).as_posix()
        stub = stub_note(rel, text, DEFAULT_KEY_TEMPLATES, dt.date(2026, 12, 1))
        if stub is not None:
            stubs.append(stub)
        title = next((line[2:] for line in text.splitlines() if line.startswith("# ")), rel)
        body = "\n".join(line for line in text.splitlines() if not line.startswith("# "))
        pages.append(parse(f"---\nkey: page-{i}\ntype: topic\nsource: docs\n"
                           f"recorded: 2026-12-01\n---\n\n# {title}\n\n{body.strip()}\n"))
    return stubs, pages


def stub_text(note: Note) -> nd.Compared:
    """A stub's words as if it took part: its title and its Answers (the headings)."""
    answers = note.section("Answers")
    words = " ".join([note.title, *(answers.items if answers else ())])
    return nd.Compared(Layer.TEAM, note.key.value, note.recorded, note.key.value,
                       " ".join(re.findall(r"[^\W_]+", words.lower())))


def unblocked(items: Sequence[nd.Compared], at: float) -> int:
    """Pairs scoring `at` or more when every pair is scored (no blocking): what the
    blocking might have hidden."""
    return sum(nd.similarity(a, b, at) >= at
               for i, a in enumerate(items) for b in items[i + 1:])


# --- the measures compared ----------------------------------------------------------

def _sort_ratio(a: nd.Compared, b: nd.Compared, cutoff: float = 0.0) -> float:
    """The measure shipped before: the character ratio of every word sorted."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(_every_sorted(a.text), _every_sorted(b.text), score_cutoff=cutoff))


@functools.cache
def _every_sorted(text: str) -> str:
    return " ".join(sorted(text.split(" ")))


@functools.cache
def _distinct_sorted(text: str) -> str:
    return " ".join(sorted(set(text.split(" "))))


def _distinct_ratio(a: nd.Compared, b: nd.Compared, cutoff: float = 0.0) -> float:
    """The character ratio of each note's distinct words sorted."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(_distinct_sorted(a.text), _distinct_sorted(b.text),
                            score_cutoff=cutoff))


@functools.cache
def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split(" "))


@functools.cache
def _shingles(text: str) -> frozenset[tuple[str, str]]:
    words = text.split(" ")
    return frozenset(itertools.pairwise(words))


def _dice(x: frozenset[object], y: frozenset[object]) -> float:
    return 200.0 * len(x & y) / max(1, len(x) + len(y))


def _word_dice(a: nd.Compared, b: nd.Compared, cutoff: float = 0.0) -> float:
    """Dice over each note's distinct words (a typo costs the whole word)."""
    s = _dice(_word_set(a.text), _word_set(b.text))  # type: ignore[arg-type]
    return s if s >= cutoff else 0.0


def _shingle_dice(a: nd.Compared, b: nd.Compared, cutoff: float = 0.0) -> float:
    """Dice over each note's word pairs (Broder's shingles, w = 2)."""
    s = _dice(_shingles(a.text), _shingles(b.text))  # type: ignore[arg-type]
    return s if s >= cutoff else 0.0


MEASURES: dict[str, Callable[[nd.Compared, nd.Compared, float], float]] = {
    "every word sorted, character ratio (token_sort_ratio)": _sort_ratio,
    "distinct words sorted, character ratio": _distinct_ratio,
    "distinct words, Dice": _word_dice,
    "word pairs, Dice (shipped; computed here in Python, the rule uses rapidfuzz)":
        _shingle_dice,
}


def calibrate(seed: int) -> None:
    t = nd.THRESHOLD
    low = min(CURVE)
    print(f"# NearDuplicate calibration (seed {seed}; shipped threshold {t:g}; "
          f"Dice of the word pairs; signature {nd.SIGNATURE} rarest words)\n")
    print("## False alarms on known-good stores\n")
    print("| store | notes compared | candidate pairs scored | max similarity | reported | "
          "every pair at or above, unblocked |")
    print("|---|---:|---:|---:|---:|---:|")
    stores: dict[str, list[Note]] = {c: read_store(SHARED / c / "notes") for c in CORPORA}
    stubs, pages = docs_notes()
    negatives: list[float] = []
    negative_pairs: list[nd.Pair] = []
    for name, items in [*((c, as_compared(n)) for c, n in stores.items()),
                        ("docs/ as stubs (if they took part)", [stub_text(s) for s in stubs]),
                        ("docs/ pages as notes", as_compared(pages))]:
        every = nd.pairs(items, 0.0)
        scores = [p.similarity for p in every]
        if name in CORPORA:
            negatives += scores
            negative_pairs += every
        top = max(scores, default=0.0)
        reported = sum(s >= t for s in scores)
        print(f"| {name} | {len(items)} | {len(scores)} | {top:.1f} | {reported} | "
              f"{unblocked(items, t)} |")
        for p in every[:reported]:
            if p.similarity >= t:
                print(f"|  ↳ {p.note.key} ~ {p.original.key} | | | {p.similarity:.1f} | | |")
    print("\n## Detection on made near-duplicates (every real note of both corpora)\n")
    rng = random.Random(seed)
    per_edit: dict[str, list[tuple[str, str, float]]] = {}
    wanted: dict[str, set[tuple[str, str]]] = {}
    for edit, make in EDITS.items():
        reported: list[tuple[str, str, float]] = []
        pairs_wanted: set[tuple[str, str]] = set()
        for corpus, notes in stores.items():
            copies = []
            for n in notes:
                title, body = make(rng, *split(n))
                key = f"copy/{n.key.value}"
                copies.append(copy_of(n, title, body, key))
                pairs_wanted.add((f"{corpus}:{key}", f"{corpus}:{n.key.value}"))
            items = as_compared([*notes, *copies])
            reported += [(f"{corpus}:{a}", f"{corpus}:{b}", s) for a, b, s in found(items, low)]
        per_edit[edit], wanted[edit] = reported, pairs_wanted

    def score(edit: str, at: float) -> tuple[int, int, int]:
        hits = sum((a, b) in wanted[edit] or (b, a) in wanted[edit]
                   for a, b, s in per_edit[edit] if s >= at)
        alarms = sum(s >= at for _, _, s in per_edit[edit]) - hits
        return hits, alarms, len(wanted[edit])

    print(f"At the threshold {t:g}:\n")
    print("| edit | copies | found | recall | false alarms | precision |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = [0, 0, 0]
    for edit in EDITS:
        hits, alarms, n = score(edit, t)
        totals = [totals[0] + hits, totals[1] + alarms, totals[2] + n]
        print(f"| {edit} | {n} | {hits} | {100 * hits / n:.1f}% | {alarms} | "
              f"{100 * hits / max(1, hits + alarms):.1f}% |")
    hits, alarms, n = totals
    print(f"| **all** | {n} | {hits} | {100 * hits / n:.1f}% | {alarms} | "
          f"{100 * hits / max(1, hits + alarms):.1f}% |")
    print("\nThe curve (all edits pooled; known-good reports = pairs of real notes of "
          f"both corpora at or above it, of {len(negatives)} sharing rare words):\n")
    print("| threshold | recall | precision | false alarms | known-good reports |")
    print("|---:|---:|---:|---:|---:|")
    for at in CURVE:
        h = a = n = 0
        for edit in EDITS:
            x, y, z = score(edit, at)
            h, a, n = h + x, a + y, n + z
        near = sum(s >= at for s in negatives)
        print(f"| {at} | {100 * h / n:.1f}% | {100 * h / max(1, h + a):.1f}% | {a} | {near} |")
    print("\nThe most alike pairs of real notes below the threshold (the nearest negatives):\n")
    for p in sorted((p for p in negative_pairs if p.similarity < t),
                    key=lambda p: -p.similarity)[:5]:
        print(f"- {p.similarity:.1f}: {p.note.key} ~ {p.original.key}")


def made(seed: int, stores: dict[str, list[Note]]
         ) -> dict[str, list[tuple[str, list[nd.Compared], set[tuple[str, str]]]]]:
    """Per edit, per corpus: the real notes with one copy of each, and the pairs wanted."""
    rng = random.Random(seed)
    out: dict[str, list[tuple[str, list[nd.Compared], set[tuple[str, str]]]]] = {}
    for edit, make in EDITS.items():
        out[edit] = []
        for corpus, notes in stores.items():
            copies, wanted = [], set()
            for n in notes:
                title, body = make(rng, *split(n))
                key = f"copy/{n.key.value}"
                copies.append(copy_of(n, title, body, key))
                wanted.add((key, n.key.value))
            out[edit].append((corpus, as_compared([*notes, *copies]), wanted))
    return out


VARIANT_CURVE = (40, 45, 50, 55, 60, 65, 68, 70, 72, 74, 76, 78, 80, 85)


def compare(seed: int) -> None:
    """Each measure in MEASURES over the same stores and copies, with the same blocking:
    its curve, and what it says of long unrelated notes when every pair is scored."""
    stores = {c: read_store(SHARED / c / "notes") for c in CORPORA}
    _stubs, pages = docs_notes()
    long_notes = as_compared(pages)
    corpora = {c: as_compared(n) for c, n in stores.items()}
    copies = made(seed, stores)
    shipped = nd.similarity
    print("\n## The measures compared (same blocking, same copies)\n")
    try:
        for name, measure in MEASURES.items():
            nd.similarity = measure  # type: ignore[assignment]
            docs_all = sorted((measure(a, b, 0.0), a.key, b.key)
                              for i, a in enumerate(long_notes) for b in long_notes[i + 1:])
            corpus_all = sorted(((measure(a, b, 0.0), a.key, b.key) for items in corpora.values()
                                 for i, a in enumerate(items) for b in items[i + 1:]),
                                reverse=True)[:12]
            reported = []
            for edit in EDITS:
                for _corpus, items, wanted in copies[edit]:
                    for p in nd.pairs(items, min(VARIANT_CURVE)):
                        hit = (p.note.key, p.original.key) in wanted or (
                            p.original.key, p.note.key) in wanted
                        reported.append((p.similarity, hit))
            total = sum(len(w) for e in EDITS for _c, _i, w in copies[e])
            blocked = [p.similarity for items in corpora.values()
                       for p in nd.pairs(items, min(VARIANT_CURVE))]
            print(f"### {name}\n")
            print(f"docs/ pages as notes, every one of {len(docs_all)} pairs scored: most "
                  f"alike {docs_all[-1][0]:.1f} ({docs_all[-1][1]} ~ {docs_all[-1][2]})\n")
            print("| threshold | recall | precision | known-good reports (as lint pairs) | "
                  "corpus pairs at or above, every pair | docs/ pairs at or above, every pair |")
            print("|---:|---:|---:|---:|---:|---:|")
            for at in VARIANT_CURVE:
                hits = sum(h for s, h in reported if s >= at)
                alarms = sum(not h for s, h in reported if s >= at)
                print(f"| {at} | {100 * hits / total:.1f}% | "
                      f"{100 * hits / max(1, hits + alarms):.1f}% | "
                      f"{sum(s >= at for s in blocked)} | "
                      f"{sum(s >= at for s, _a, _b in corpus_all)} | "
                      f"{sum(s >= at for s, _a, _b in docs_all)} |")
            print("\nThe most alike corpus pairs, every pair scored:\n")
            for sc, a, b in corpus_all[:8]:
                print(f"- {sc:.1f}: {a} ~ {b}")
            print()
    finally:
        nd.similarity = shipped  # type: ignore[assignment]


def speed(n: int, rounds: int) -> None:
    from recall_speed import make_repo

    from omh_git_memory.actions.workspace import open_workspace

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "repo"
        make_repo(where, n)
        import os
        os.environ["OMH_LOCAL_STORE"] = str(Path(tmp) / "local")
        ws = open_workspace(where)
        ws.snapshot()  # the index built, as any command before lint leaves it
        every = lint_module.RULES
        without = tuple(r for r in every if r.name != "NearDuplicate")
        times: dict[str, list[float]] = {"with": [], "without": []}
        cpu: dict[str, list[float]] = {"with": [], "without": []}
        found_n = 0
        for _ in range(rounds):
            for label, rules in (("without", without), ("with", every)):
                lint_module.RULES = rules  # type: ignore[misc]
                started, used = time.perf_counter(), time.process_time()
                report = lint_module.lint(ws.graph())
                times[label].append(time.perf_counter() - started)
                cpu[label].append(time.process_time() - used)
                if label == "with":
                    found_n = report.counts.get("NearDuplicate", 0)
        lint_module.RULES = every  # type: ignore[misc]
    print(f"\n## Speed: lint over {n:,} notes (read, parse, every rule), {rounds} rounds "
          "alternating\n")
    for what, figures in (("wall", times), ("CPU", cpu)):
        med = {k: statistics.median(v) for k, v in figures.items()}
        print(f"{what}: without NearDuplicate median {med['without']:.2f} s "
              f"({', '.join(f'{x:.2f}' for x in figures['without'])}); with it "
              f"{med['with']:.2f} s ({', '.join(f'{x:.2f}' for x in figures['with'])}); "
              f"ratio {med['with'] / med['without']:.2f}×")
    print(f"{found_n} reported (the store's notes are random draws of corpus words)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--speed", type=int, default=10000, help="notes (0: skip)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", action="store_true",
                        help="also every measure in MEASURES, side by side")
    args = parser.parse_args()
    calibrate(args.seed)
    if args.compare:
        compare(args.seed)
    if args.speed:
        speed(args.speed, args.rounds)


if __name__ == "__main__":
    main()
