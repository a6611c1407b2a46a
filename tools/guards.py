"""Guards taken out one at a time: does a test notice? (issue 30, item 3)

    python tools/mutation.py map                        # once: which test runs which line
    python tools/guards.py list --module journal        # the guards found in a module
    python tools/guards.py run --module journal         # take each out, run the tests
    python tools/guards.py table                        # the per-module table (Markdown)

A mutant that negates a guard's condition is caught by any test that passes the
guard, refusal or not; a guard *taken out* is caught only by a test that makes the
guard act. This tool takes each guard out in turn and runs every test that reaches
the guard's body (from the mutation tool's map), stopping at the first failure.

What counts as a guard, found in the module's syntax tree:
- a *refusal*: an `if`/`elif` with a `raise` at the top level of its body;
- a *check*: an `if` with no `else` whose body ends in `return` or `continue`, and
  whose condition reads a file's kind or identity, a digest, or a clone's identity
  (a name matching CHECKS below).

Taking a guard out writes `if (condition) and False:`: the condition is still
evaluated (a call in it still runs, a name it binds is still bound), but the body
never runs. Only a test that ran the body can tell, so those are the tests run.

Outcomes: *red* (a test failed: the guard is held), *green* (every test that reaches
the guard still passed: nobody would notice it gone), *unreached* (no test makes the
guard act). A guard that is not one a user relies on (a defensive branch, an early
exit that only saves work) is listed in tools/guards_exempt.toml with the reason and
left out of the share. Results land in tools/guard_results.json. Like the mutation
tool, the file is rewritten in place and always put back (`python tools/mutation.py
restore` after a SIGKILL).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import re
import signal
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutation  # tools/ is no package: found through sys.path above
from mutation import (
    ERROR,
    IMPORT,
    KILLED,
    SURVIVED,
    TIMEOUT,
    UNCOVERED,
    Mutant,
    Paths,
)

OPERATOR = "RemoveGuard"

# Names in a condition that make an early exit a check: the kind of a file (a
# symlink, a FIFO, a folder), whether it exists, its identity or digest, a clone's
# identity, and "changed meanwhile".
CHECKS = re.compile(
    r"S_IS[A-Z]+|islink|is_symlink|lexists|exists|is_file|is_dir|is_plain_dir|NOFOLLOW"
    r"|digest|sha\d*|st_ino|st_dev|st_size|mtime|clone|identity|owner|same|changed"
    r"|unrelated|signature|fingerprint", re.IGNORECASE)


def _offsets(source: str) -> list[int]:
    """The byte offset of each line's start (ast's columns count UTF-8 bytes)."""
    starts, total = [], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    return starts


def kind_of(node: ast.If, source: str) -> str:
    """'refusal', 'check', or '' when the `if` is no guard."""
    if any(isinstance(statement, ast.Raise) for statement in node.body):
        return "refusal"
    condition = ast.get_source_segment(source, node.test) or ""
    if (not node.orelse and isinstance(node.body[-1], (ast.Return, ast.Continue))
            and CHECKS.search(condition)):
        return "check"
    return ""


def guards_of(path: Path) -> list[Mutant]:
    """One mutant per guard of the module at `path`: the guard taken out."""
    source = path.read_text(encoding="utf-8")
    data = source.encode("utf-8")
    starts = _offsets(source)
    old_lines = source.splitlines()
    found: list[Mutant] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.If) or not (kind := kind_of(node, source)):
            continue
        test = node.test
        begin = starts[test.lineno - 1] + test.col_offset
        end = starts[(test.end_lineno or test.lineno) - 1] + (test.end_col_offset or 0)
        code = (data[:begin] + b"(" + data[begin:end] + b") and False" + data[end:]).decode()
        diff = [d for d in difflib.ndiff(old_lines, code.splitlines()) if d[:1] in "-+"]
        mutant = Mutant(OPERATOR, len(found), node.lineno, test.end_lineno or node.lineno,
                        code, " / ".join(d[2:].strip() for d in diff if d[0] == "-"),
                        " / ".join(d[2:].strip() for d in diff if d[0] == "+"))
        mutant.extra = {"kind": kind, "reach": node.body[0].lineno}
        found.append(mutant)
    found.sort(key=lambda m: m.line)
    return found


def _exempt(paths: Paths, module: str) -> list[dict[str, Any]]:
    """The guards listed for `module`: its `if` line (stripped), the reason, and
    optionally `lines`, the only sites the reason holds for."""
    listing = paths.root / "tools" / "guards_exempt.toml"
    if not listing.exists():
        return []
    table = tomllib.loads(listing.read_text(encoding="utf-8"))
    return [entry for entry in table.get("guard", []) if entry["module"] == module]


def _reason(guard: Mutant, listed: list[dict[str, Any]]) -> str:
    text = guard.before.split(" / ")[0].strip()
    return next((entry["reason"] for entry in listed if entry["line"].strip() == text
                 and guard.line in entry.get("lines", [guard.line])), "")


def run_module(paths: Paths, module: str) -> dict[str, Any]:
    target = paths.module_file(module)
    rel = target.relative_to(paths.root).as_posix()
    if not paths.map.exists():
        raise SystemExit("guards: no map yet; run `python tools/mutation.py map` first")
    cover = json.loads(paths.map.read_text(encoding="utf-8"))
    if cover["sources"].get(rel) != mutation._digest(target):
        raise SystemExit(f"guards: {rel} changed since the map was made; "
                         "run `python tools/mutation.py map` again")
    by_line: dict[str, list[str]] = cover["lines"].get(rel, {})
    durations: dict[str, float] = cover["durations"]
    everyone = sorted({t for tests in by_line.values() for t in tests if t != IMPORT})
    exempt = _exempt(paths, module)
    part, stem = target.parent.name, target.stem
    guards = guards_of(target)
    print(f"guards: {module}: {len(guards)} guards in {rel}")
    started = time.monotonic()
    for number, guard in enumerate(guards, 1):
        guard.reason = _reason(guard, exempt)
        reach = str(guard.extra["reach"])
        tests = sorted({t for t in by_line.get(reach, [])
                        for t in (everyone if t == IMPORT else [t])},
                       key=lambda t: (not mutation._tests_of(part, stem, t),
                                      not mutation._in_part(part, t),
                                      durations.get(t, 60.0), t))
        guard.tests = len(tests)
        if tests:
            mutation._test(paths, target, guard, tests, durations)
        else:
            guard.outcome = UNCOVERED
        print(f"  [{number}/{len(guards)}] {_word(guard.outcome):9} {rel}:{guard.line} "
              f"({guard.extra['kind']}, {len(tests)} tests) {guard.before[:70]}"
              + (f"  (listed: {guard.reason})" if guard.reason else ""), flush=True)
    return _summary(module, rel, guards, (time.monotonic() - started) / 60)


def _word(outcome: str) -> str:
    return {KILLED: "red", TIMEOUT: "red", SURVIVED: "green", UNCOVERED: "unreached",
            ERROR: "error"}.get(outcome, outcome)


def _summary(module: str, rel: str, guards: list[Mutant], minutes: float) -> dict[str, Any]:
    held = [g for g in guards if g.outcome in (KILLED, TIMEOUT)]
    listed = [g for g in guards if g.reason and g not in held]
    open_ = [g for g in guards if g not in held and g not in listed]
    counted = len(guards) - len(listed)

    def entry(g: Mutant) -> dict[str, Any]:
        return {"where": f"{rel}:{g.line}", "kind": g.extra["kind"], "guard": g.before,
                "outcome": _word(g.outcome), "tests": g.tests,
                **({"reason": g.reason} if g.reason and g not in held else {}),
                **({"by": g.killer} if g in held and g.killer else {})}

    return {"module": module, "file": rel, "guards": len(guards),
            "refusals": sum(1 for g in guards if g.extra["kind"] == "refusal"),
            "red": len(held),
            "green": sum(1 for g in open_ if g.outcome == SURVIVED),
            "unreached": sum(1 for g in open_ if g.outcome == UNCOVERED),
            "error": sum(1 for g in open_ if g.outcome == ERROR),
            "listed": len(listed),
            "share": round(100 * len(held) / counted, 1) if counted else 100.0,
            "minutes": round(minutes, 1),
            "open": [entry(g) for g in open_], "exempt": [entry(g) for g in listed],
            "held": [entry(g) for g in held]}


def save(paths: Paths, summary: dict[str, Any]) -> None:
    results_file = paths.root / "tools" / "guard_results.json"
    results = (json.loads(results_file.read_text(encoding="utf-8"))
               if results_file.exists() else {})
    results[summary["module"]] = summary
    results_file.write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n",
                            encoding="utf-8")


def table(paths: Paths) -> str:
    results_file = paths.root / "tools" / "guard_results.json"
    results = json.loads(results_file.read_text(encoding="utf-8"))
    rows = ["| module | guards | refusals | red | green | no test makes it act | listed "
            "| held | minutes |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results.values():
        rows.append(f"| {r['module']} | {r['guards']} | {r['refusals']} | {r['red']} "
                    f"| {r['green'] + r['error']} | {r['unreached']} | {r['listed']} "
                    f"| {r['share']}% | {r['minutes']} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("list", "print the guards found"),
                       ("run", "take each guard out and run the tests that reach it")):
        command = sub.add_parser(name, help=text)
        command.add_argument("--module", action="append", required=True,
                             help="a module's short name (as the mutation tool's `list`)")
    sub.add_parser("table", help="print the per-module table")
    args = parser.parse_args(argv)
    paths = Paths(args.root)
    if mutation.restore(paths):
        print("guards: restored a file an earlier run left changed", file=sys.stderr)
    if args.command == "table":
        print(table(paths))
        return 0
    if args.command == "list":
        for module in args.module:
            for guard in guards_of(paths.module_file(module)):
                print(f"{module}:{guard.line}\t{guard.extra['kind']}\t{guard.before}")
        return 0
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, mutation._raise_interrupted)
    try:
        for module in args.module:
            summary = run_module(paths, module)
            save(paths, summary)
            print(f"guards: {module}: {summary['guards']} guards, {summary['red']} red, "
                  f"{summary['green'] + summary['error']} green, {summary['unreached']} "
                  f"reached by no test, {summary['listed']} listed; held "
                  f"{summary['share']}% in {summary['minutes']} min")
    except (KeyboardInterrupt, mutation._Interrupted):
        mutation.restore(paths)
        print("guards: interrupted; the module is back as it was", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
