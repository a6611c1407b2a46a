"""The secret scan against maintained scanners, on one labelled corpus.

    python bench/secret_scan.py [--before REV] [--rounds 5] [--misses] [--only NAME,...]

The corpus: fixtures/secrets/corpus.tsv (label, family, shape, text; `\\n` in the
text is a line break) plus the older fixtures/secrets/secrets.txt (every line a
secret, family `known`) and lookalikes.txt (every line a look-alike). Each row is
one note's text (with a line before and after), scanned whole, as promote scans
a note.

Scanners, each run in this process on the same texts:
- `omh`: omh_git_memory.model.secret_scan.find_secrets as checked out;
- `omh@REV` (with --before REV): the same module as it was at REV (read with git);
- `detect-secrets` (Yelp's, `pip install detect-secrets`): its default plugins
  and filters, as `detect-secrets scan` reads a Markdown file, and
  `detect-secrets -entropy` without its two high-entropy plugins;
- `kingfisher` (MongoDB's, `pip install kingfisher-secret-scanner`, which ships
  the gitleaks/betterleaks rule set compiled with Vectorscan): its bundled rules
  at its default confidence, and `kingfisher-high` with high-confidence rules;
- `omh+X`: a note refused when either refuses it.
A scanner that is not installed is reported as such and skipped.

Printed: per scanner, the secrets found (overall and per family), the look-alikes
refused (each named), and the time per note over the whole corpus (the best of
--rounds, the scanners taking turns) and as a ratio to `omh`'s in the same run. With --misses: every
secret a scanner missed, by shape. Last, the key form: each case slugged as a key
would carry it, read by omh's key check (secrets found, look-alikes refused).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import re
import subprocess
import sys
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "secrets"
sys.path.insert(0, str(ROOT))

Scan = Callable[[str], bool]  # True: the note is refused


@dataclass(frozen=True)
class Scanner:
    scan: Scan
    session: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext


@dataclass(frozen=True)
class Case:
    label: str  # "secret" or "benign"
    family: str
    shape: str
    text: str  # as a note holds it
    raw: str  # as the corpus has it


_ESCAPE = re.compile(r"\\([nt\\])")


def unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: {"n": "\n", "t": "\t", "\\": "\\"}[m.group(1)], text)


def note(text: str) -> str:
    """A case as a note holds it: with a line before and after (a line is also read
    joined to the next one, so a case alone would not test that)."""
    return f"# What we found\n\n{text}\nSee the README.\n"


def load_corpus() -> list[Case]:
    cases: list[Case] = []
    for row in (FIXTURES / "corpus.tsv").read_text(encoding="utf-8").splitlines():
        if not row or row.startswith("#"):
            continue
        label, family, shape, text = row.split("\t", 3)
        assert label in ("secret", "benign"), row
        cases.append(Case(label, family, shape, note(unescape(text)), unescape(text)))
    for name, label in (("secrets.txt", "secret"), ("lookalikes.txt", "benign")):
        for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                cases.append(Case(label, "known", name, note(line), line))
    return cases


def omh_scan() -> Scan:
    from omh_git_memory.model.secret_scan import find_secrets
    return lambda text: bool(find_secrets(text))


def omh_at(rev: str) -> Scan:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:omh_git_memory/model/secret_scan.py"],
        check=True, capture_output=True, text=True).stdout
    module = types.ModuleType(f"secret_scan_at_{rev}")
    module.__dict__["__name__"] = module.__name__
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:secret_scan.py", "exec"), module.__dict__)
    find: Callable[[str], list[object]] = module.__dict__["find_secrets"]
    return lambda text: bool(find(text))


@contextlib.contextmanager
def detect_secrets_settings(entropy: bool) -> Iterator[None]:
    """detect-secrets keeps its plugins in a global: its default plugins, as
    `detect-secrets scan` has them, set once around a scanner's whole run."""
    from detect_secrets.settings import default_settings, get_settings

    with default_settings():
        if not entropy:
            get_settings().disable_plugins("HexHighEntropyString", "Base64HighEntropyString")
        yield


def detect_secrets_scan(text: str) -> bool:
    """As `detect-secrets scan` reads a Markdown file: line by line, with its filters.
    (Its `scan_line` is for ad-hoc strings: it searches eagerly, and so refuses
    nearly every look-alike; a file scan is its own fair measure.)"""
    from detect_secrets.core.scan import _process_line_based_plugins

    lines = list(enumerate(text.splitlines(), 1))
    return any(True for _ in _process_line_based_plugins(lines, "note.md"))


def kingfisher_scan(confidence: str) -> Scan:
    from kingfisher_sdk import Rules
    from kingfisher_sdk import Scanner as Kingfisher

    scanner = Kingfisher(Rules(confidence=confidence))
    return lambda text: any(f.visible for f in scanner.scan(text))


def either(a: Scanner, b: Scanner) -> Scanner:
    return Scanner(lambda text: a.scan(text) or b.scan(text), b.session)


def scanners(before: str | None) -> dict[str, Scanner | str]:
    found: dict[str, Scanner | str] = {"omh": Scanner(omh_scan())}
    if before:
        found[f"omh@{before}"] = Scanner(omh_at(before))
    packages = {"detect_secrets": "detect-secrets", "kingfisher_sdk": "kingfisher-secret-scanner"}
    makers: dict[str, tuple[str, Callable[[], Scanner]]] = {
        "detect-secrets": ("detect_secrets", lambda: Scanner(
            detect_secrets_scan, lambda: detect_secrets_settings(True))),
        "detect-secrets -entropy": ("detect_secrets", lambda: Scanner(
            detect_secrets_scan, lambda: detect_secrets_settings(False))),
        "kingfisher": ("kingfisher_sdk", lambda: Scanner(kingfisher_scan("medium"))),
        "kingfisher-high": ("kingfisher_sdk", lambda: Scanner(kingfisher_scan("high"))),
    }
    for name, (module, make) in makers.items():
        if importlib.util.find_spec(module) is None:
            found[name] = f"not installed (pip install {packages[module]})"
            continue
        found[name] = make()
    ours = found["omh"]
    assert isinstance(ours, Scanner)
    for name, scan in list(found.items()):
        if isinstance(scan, Scanner) and not name.startswith("omh"):
            found[f"omh+{name}"] = either(ours, scan)
    return found


def verdicts_of(scanner: Scanner, cases: list[Case]) -> list[bool]:
    with scanner.session():
        return [scanner.scan(case.text) for case in cases]


def timings(chosen: dict[str, Scanner], cases: list[Case], rounds: int) -> dict[str, float]:
    """Seconds per note of each scanner: the best of `rounds` passes over the corpus,
    the scanners taking turns within a round, so that load from elsewhere on the
    machine falls on all of them alike."""
    best = dict.fromkeys(chosen, float("inf"))
    for _ in range(rounds):
        for name, scanner in chosen.items():
            with scanner.session():
                scan = scanner.scan
                start = time.perf_counter()
                for case in cases:
                    scan(case.text)
                best[name] = min(best[name], time.perf_counter() - start)
    return {name: seconds / len(cases) for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="also run the scan as it was at this git revision")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--misses", action="store_true", help="list every secret missed")
    parser.add_argument("--only", help="comma-separated scanner names")
    args = parser.parse_args()
    cases = load_corpus()
    secrets = [c for c in cases if c.label == "secret"]
    benign = [c for c in cases if c.label == "benign"]
    families = sorted({c.family for c in secrets}, key=lambda f: (f != "issue23", f))
    print(f"corpus: {len(secrets)} secrets in {len({(c.family, c.shape) for c in secrets})} "
          f"shapes, {len(benign)} look-alikes\n")
    chosen = scanners(args.before)
    if args.only:
        keep = set(args.only.split(","))
        chosen = {k: v for k, v in chosen.items()
                  if k in keep or k.startswith("omh@") or k == "omh"}
    runnable: dict[str, Scanner] = {}
    for name, scan in chosen.items():
        if isinstance(scan, str):
            print(f"{name}: {scan}")
        else:
            runnable[name] = scan
    seconds = timings(runnable, cases, args.rounds)
    results = {name: (verdicts_of(scan, cases), seconds[name])
               for name, scan in runnable.items()}
    base = results["omh"][1]
    head = f"{'scanner':<32} {'secrets found':>14} " + " ".join(
        f"{f:>10}" for f in families) + f" {'refused':>8} {'µs/note':>8} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    for name, (verdicts, per_note) in results.items():
        by_family: dict[str, list[bool]] = defaultdict(list)
        for case, verdict in zip(cases, verdicts, strict=True):
            if case.label == "secret":
                by_family[case.family].append(verdict)
        found = sum(v for c, v in zip(cases, verdicts, strict=True) if c.label == "secret")
        refused = sum(v for c, v in zip(cases, verdicts, strict=True) if c.label == "benign")
        cells = " ".join(f"{sum(by_family[f]):>4}/{len(by_family[f]):<5}" for f in families)
        print(f"{name:<32} {found:>6}/{len(secrets):<3} {found / len(secrets):>4.0%} {cells} "
              f"{refused:>8} {per_note * 1e6:>8.1f} {per_note / base:>6.1f}")
    print("\nfamilies:", ", ".join(families), "(found/total)")
    for name, (verdicts, _) in results.items():
        wrong = [c for c, v in zip(cases, verdicts, strict=True) if c.label == "benign" and v]
        if wrong:
            print(f"\n{name} refuses {len(wrong)} look-alike(s):")
            for case in wrong:
                print(f"  [{case.family} / {case.shape}] {case.raw[:90]!r}")
        if args.misses:
            missed = sorted({f"{c.family} / {c.shape}" for c, v in
                             zip(cases, verdicts, strict=True) if c.label == "secret" and not v})
            if missed:
                print(f"\n{name} misses {len(missed)} shape(s): " + "; ".join(missed))
    key_form(cases)


def key_form(cases: list[Case]) -> None:
    """Each case as a key would carry it (keys.slug of its text, as remember derives a
    key from a title), read by the key check promote, team mv and lint make."""
    from omh_git_memory.model.keys import slug
    from omh_git_memory.model.secret_scan import find_secret_in_key
    found = [c for c in cases if c.label == "secret" and find_secret_in_key(slug(c.raw))]
    wrong = [c for c in cases if c.label == "benign" and find_secret_in_key(slug(c.raw))]
    secrets = sum(c.label == "secret" for c in cases)
    print(f"\nkey form (omh's key check on the slug of each case): {len(found)}/{secrets} "
          f"secrets found, {len(wrong)} look-alike(s) refused")
    for case in wrong:
        print(f"  [{case.family} / {case.shape}] {slug(case.raw)[:90]!r}")


if __name__ == "__main__":
    main()
