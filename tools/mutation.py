"""Mutation testing for the core: which small defects do the tests catch?

    python tools/mutation.py map                      # once: which test runs which line
    python tools/mutation.py map --tests tests/model/test_keys.py  # add or refresh some
    python tools/mutation.py run --module store       # mutate one module, test each mutant
    python tools/mutation.py table                    # the per-module table (Markdown)
    python tools/mutation.py restore                  # put back a file a killed run left

A dev tool, not part of CI: `pip install -e '.[mutation]'` (cosmic-ray, coverage).

How it works. Cosmic Ray's operators make the mutants (one small change each:
`==` to `!=`, `and` to `or`, `True` to `False`, a condition negated, an `except`
that no longer catches, a number changed, a loop that never runs). Each mutant is
written over the module's file *in place*, so the CLI subprocesses and the MCP
server the tests start import it too. For each mutant only the tests that ran one
of its lines are run (fastest first, stopping at the first failure, with a
timeout), and the file is put back before the next one.

The map of which test ran which line comes from coverage with one context per
test, measured in every Python process the tests start (a `sitecustomize` on
PYTHONPATH starts coverage in subprocesses under the test's name).

Nothing is left mutated: the original is copied to `.mutation/backup/` before each
mutant and put back afterwards, on Ctrl-C and SIGTERM too; a run killed outright
(SIGKILL, power cut) is repaired by `restore`, which every command runs first.

Results land in tools/mutation_results.json (one entry per module, survivors with
file:line and the change); `table` prints the table docs/reliability.md shows.
Mutants listed in tools/mutation_equivalent.toml (equivalent, or not observable by
any test) are counted apart, with the reason, and left out of the score.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE = "omh_git_memory"

# One counterpart per site keeps the mutant count small enough to run a module in
# minutes; the counterparts are the changes a slip of the hand makes.
OPERATORS = (
    "core/ReplaceComparisonOperator_Eq_NotEq",
    "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Lt_LtE",
    "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE",
    "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Is_IsNot",
    "core/ReplaceComparisonOperator_IsNot_Is",
    "omh/ReplaceIn_NotIn",  # Cosmic Ray has no membership operators: see _membership
    "omh/ReplaceNotIn_In",
    "core/ReplaceBinaryOperator_Add_Sub",
    "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_Div",
    "core/ReplaceBinaryOperator_Div_Mul",
    "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ReplaceBinaryOperator_BitOr_BitAnd",
    "core/ReplaceBinaryOperator_BitAnd_BitOr",
    "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceUnaryOperator_USub_UAdd",
    "core/AddNot",
    "core/ReplaceTrueWithFalse",
    "core/ReplaceFalseWithTrue",
    "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd",
    "core/ReplaceBreakWithContinue",
    "core/ReplaceContinueWithBreak",
    "core/ExceptionReplacer",
    "core/NumberReplacer",
    "core/ZeroIterationForLoop",
)

# The core modules issue 14 measures (short name -> path under the package).
MODULES = {
    "keys": "model/keys.py",
    "note": "model/note.py",
    "lint": "actions/lint.py",
    "store": "stores/store.py",
    "location": "stores/location.py",
    "reading": "stores/reading.py",
    "fileops": "stores/fileops.py",
    "promote": "actions/promote.py",
    "listing": "actions/listing.py",
    "repository": "git/repository.py",
    "git_config": "git/config.py",
    "history": "git/history.py",
    "trees": "git/trees.py",
    "staging": "git/staging.py",
    "filters": "git/filters.py",
    "obstacles": "git/obstacles.py",
    "commit": "git/commit.py",
    "recovery": "git/recovery.py",
    "last_changed": "git/last_changed.py",
    "graph": "stores/graph.py",
    "layers": "model/layers.py",
    "document": "recall/document.py",
    "postings": "recall/postings.py",
    "cache_files": "recall/cache_files.py",
    "snapshot": "recall/snapshot.py",
    "shape": "recall/shape.py",
    "sources": "recall/sources.py",
    "build": "recall/build.py",
    "reread": "recall/reread.py",
    "local_notes": "recall/local_notes.py",
    "bm25": "recall/bm25.py",
    "answer": "recall/answer.py",
    "neighbours": "recall/neighbours.py",
    "fusion": "recall/fusion.py",
    "floor": "recall/floor.py",
    "render": "recall/render.py",
    "sections": "recall/sections.py",
    "triggers": "expiry/triggers.py",
    "stale": "expiry/stale.py",
    "secret_scan": "model/secret_scan.py",
    "server_tools": "agent/tools.py",
    "server_transport": "agent/transport.py",
    "server_probe": "agent/probe.py",
    "server_sdk": "agent/sdk.py",
}



def every_module(package: Path) -> dict[str, str]:
    """Every module of the package by short name: MODULES' names first, then each other
    module by its file's stem, or `part_stem` where two parts hold the same stem."""
    named = dict(MODULES)
    taken = set(named.values())
    rest = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py")
                  if p.name not in ("__init__.py", "__main__.py"))
    rest = [rel for rel in rest if rel not in taken]
    stems: dict[str, int] = {}
    for rel in rest:
        stem = Path(rel).stem
        stems[stem] = stems.get(stem, 0) + 1
    for rel in rest:
        stem = Path(rel).stem
        name = stem if stems[stem] == 1 and stem not in named else rel[:-3].replace("/", "_")
        named[name] = rel
    return named


IMPORT = "<import>"
KILLED, SURVIVED, TIMEOUT, UNCOVERED, ERROR = "killed", "survived", "timeout", "uncovered", "error"


class Paths:
    """Where one checkout keeps its sources, tests and the tool's working files."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.package = self.root / PACKAGE
        self.work = self.root / ".mutation"
        self.backup = self.work / "backup"
        self.pending = self.work / "pending.json"
        self.map = self.work / "map.json"
        self.results = self.root / "tools" / "mutation_results.json"
        self.equivalent = self.root / "tools" / "mutation_equivalent.toml"

    def module_file(self, name: str) -> Path:
        rel = every_module(self.package).get(
            name, name if name.endswith(".py") else f"{name}.py")
        path = (self.package / rel).resolve()
        if self.package not in path.parents or not path.is_file():
            raise SystemExit(f"mutation: no module {name!r} under {self.package}")
        return path


# --- never leave a mutated file behind ------------------------------------------------


def restore(paths: Paths) -> bool:
    """Put back the file a mutant run left, if any. True when something was restored."""
    if not paths.pending.exists():
        return False
    pending = json.loads(paths.pending.read_text(encoding="utf-8"))
    target = Path(pending["file"])
    saved = paths.backup / pending["backup"]
    original = saved.read_bytes()
    if hashlib.sha256(original).hexdigest() != pending["sha256"]:
        raise SystemExit(f"mutation: the backup {saved} is damaged; restore {target} from git")
    _write(target, original, pending["mtime_ns"])
    paths.pending.unlink()
    saved.unlink()
    return True


def _write(target: Path, data: bytes, mtime_ns: int | None = None) -> None:
    tmp = target.with_name(f".{target.name}.mutation-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    if mtime_ns is not None:
        os.utime(target, ns=(mtime_ns, mtime_ns))
    for cached in (target.parent / "__pycache__").glob(f"{target.stem}.*.pyc"):
        cached.unlink(missing_ok=True)


class _Interrupted(BaseException):
    pass


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise _Interrupted(signum)


@contextlib.contextmanager
def mutated(paths: Paths, target: Path, code: str) -> Iterator[None]:
    """`target` holds `code` for the with-block and its original bytes afterwards."""
    original = target.read_bytes()
    mtime_ns = target.stat().st_mtime_ns
    paths.backup.mkdir(parents=True, exist_ok=True)
    name = f"{target.relative_to(paths.root).as_posix().replace('/', '__')}.orig"
    (paths.backup / name).write_bytes(original)
    record = {"file": str(target), "backup": name, "mtime_ns": mtime_ns,
              "sha256": hashlib.sha256(original).hexdigest()}
    tmp = paths.pending.with_suffix(".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, paths.pending)
    try:
        _write(target, code.encode("utf-8"))
        yield
    finally:
        restore(paths)


# --- which test runs which line -------------------------------------------------------

SITECUSTOMIZE = '''\
import os
if os.environ.get("OMH_MUT_COVER"):
    import atexit
    import signal

    import coverage

    _cov = coverage.Coverage(
        data_file=os.path.join(os.environ["OMH_MUT_COVER"], "cov"), data_suffix=True,
        include=[os.environ["OMH_MUT_INCLUDE"]], context=os.environ.get("OMH_MUT_CTX") or None,
        config_file=False)
    _cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured",
                    "module-not-imported", "couldnt-parse", "already-imported", "no-ctracer"])
    _cov.start()

    def _save():
        _cov.stop()
        _cov.save()

    atexit.register(_save)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: os._exit(_save() or 143))
'''

PLUGIN = '''\
import json
import os
import time

import pytest

_durations = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ["OMH_MUT_CTX"] = item.nodeid
    import coverage
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    path = os.path.join(os.environ["OMH_MUT_COVER"], "durations.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump(_durations, out)
'''


def build_map(paths: Paths, tests: list[str]) -> None:
    """Run the tests under coverage, one context per test, and keep line -> tests."""
    from coverage import CoverageData

    with tempfile.TemporaryDirectory(prefix="omh-mutation-map-") as scratch:
        site = Path(scratch) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
        (site / "omh_mutation_ctx.py").write_text(PLUGIN, encoding="utf-8")
        data = Path(scratch) / "data"
        data.mkdir()
        env = {**os.environ, "OMH_MUT_COVER": str(data),
               "OMH_MUT_INCLUDE": str(paths.package / "*"),
               "PYTHONPATH": os.pathsep.join(
                   [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "omh_mutation_ctx",
                   "-p", "no:randomly", "-p", "no:cacheprovider", *tests]
        print("mutation: mapping", " ".join(tests) or "all tests", "(this runs them once)")
        started = time.monotonic()
        done = subprocess.run(command, cwd=paths.root, env=env, check=False)
        print(f"mutation: mapped in {time.monotonic() - started:.0f} s "
              f"(pytest exit {done.returncode})")
        lines: dict[str, dict[str, set[str]]] = {}
        for part in data.glob("cov.*"):
            cov = CoverageData(basename=str(part))
            cov.read()
            for measured in cov.measured_files():
                rel = Path(measured).resolve().relative_to(paths.root).as_posix()
                per_line = lines.setdefault(rel, {})
                for line, contexts in cov.contexts_by_lineno(measured).items():
                    # A line run with no test's name ran while a test module was
                    # imported (a definition, a constant): every test may need it.
                    per_line.setdefault(str(line), set()).update(c or IMPORT for c in contexts)
        durations_file = data / "durations.json"
        durations = (json.loads(durations_file.read_text(encoding="utf-8"))
                     if durations_file.exists() else {})

    old: dict[str, Any] = {"lines": {}, "durations": {}, "sources": {}}
    if tests and paths.map.exists():
        old = json.loads(paths.map.read_text(encoding="utf-8"))
    fresh = set(durations)
    # A test file mapped again replaces all it held: a test renamed or a case of a
    # parametrisation renumbered since would otherwise stay, an id pytest no longer
    # finds (a run of it errs, and its mutant is not counted as killed).
    remapped = {t.split("::", 1)[0] for t in fresh}
    merged: dict[str, dict[str, list[str]]] = {}
    for rel in set(old["lines"]) | set(lines):
        out = merged.setdefault(rel, {})
        for line in set(old["lines"].get(rel, {})) | set(lines.get(rel, {})):
            kept = {t for t in old["lines"].get(rel, {}).get(line, [])
                    if t not in fresh and t.split("::", 1)[0] not in remapped}
            out[line] = sorted(kept | lines.get(rel, {}).get(line, set()))
    sources = {**old["sources"], **{
        p.relative_to(paths.root).as_posix(): _digest(p) for p in paths.package.rglob("*.py")}}
    paths.work.mkdir(parents=True, exist_ok=True)
    everything = {"lines": merged, "durations": {**old["durations"], **durations},
                  "sources": sources}
    paths.map.write_text(json.dumps(everything), encoding="utf-8")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the mutants ----------------------------------------------------------------------


@dataclass
class Mutant:
    operator: str
    occurrence: int
    line: int
    end_line: int
    code: str
    before: str
    after: str
    outcome: str = ""
    seconds: float = 0.0
    tests: int = 0
    reason: str = ""
    killer: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def change(self) -> str:
        return f"{self.before.strip()}  ->  {self.after.strip()}"


class _StripAnnotations(ast.NodeTransformer):
    """Annotations do not run (`from __future__ import annotations`), so a change
    to one alone is no mutant."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        node.annotation = ast.Constant(None)
        self.generic_visit(node)
        return node


def _shape(code: str) -> str:
    return ast.dump(_StripAnnotations().visit(ast.parse(code)))


def _membership(from_op: str, to_op: str) -> Any:
    """`in` <-> `not in`, written like Cosmic Ray's comparison operators."""
    import parso
    from cosmic_ray.operators.operator import Example, Operator

    class Replace(Operator):  # type: ignore[misc]
        def _points(self, node: Any) -> Iterator[tuple[int, Any]]:
            for index, op in enumerate(node.children[1::2]):
                if " ".join(op.get_code().split()) == from_op:
                    yield index, op

        def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
            if node.type == "comparison":
                for _, op in self._points(node):
                    yield op.start_pos, op.end_pos

        def mutate(self, node: Any, index: int) -> Any:
            op_index, _ = list(self._points(node))[index]
            node.children[op_index * 2 + 1] = parso.parse(" " + to_op)
            return node

        @classmethod
        def examples(cls) -> tuple[Any, ...]:
            return (Example(f"x {from_op} y", f"x {to_op} y"),)

    return Replace


def _operator(name: str) -> Any:
    import cosmic_ray.plugins

    if name == "omh/ReplaceIn_NotIn":
        return _membership("in", "not in")()
    if name == "omh/ReplaceNotIn_In":
        return _membership("not in", "in")()
    return cosmic_ray.plugins.get_operator(name)()


def _catching_nothing(code: str) -> str:
    """Cosmic Ray's stand-in exception, which exists only inside its workers, written
    as plain Python. Alone it becomes `()`, a handler that catches nothing; one name of
    a tuple is dropped from it (`except (A, B)` -> `except (B)`): Python refuses a
    `()` inside the tuple, so the handler would raise TypeError for every exception
    that reached it, the half that was kept too."""
    stand_in = r"CosmicRayTestingException(?:\.\w+)*"
    code = re.sub(stand_in + r"\s*,\s*", "", code)
    code = re.sub(r"\s*,\s*" + stand_in, "", code)
    return re.sub(stand_in, "()", code)


def mutants_of(path: Path) -> list[Mutant]:
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    source = path.read_text(encoding="utf-8")
    shape = _shape(source)
    old_lines = source.splitlines()
    found: list[Mutant] = []
    for name in OPERATORS:
        operator = _operator(name)
        module = get_ast(source)
        positions = [pos for node in ast_nodes(module) for pos in operator.mutation_positions(node)]
        seen: set[tuple[Any, Any]] = set()
        for occurrence, (start, end) in enumerate(positions):
            if name == "core/NumberReplacer" and (start, end) in seen:
                continue  # n+1 only: n-1 at the same place rarely tells anything new
            seen.add((start, end))
            try:
                code = mutate_code(source, operator, occurrence)
            except (AttributeError, AssertionError):
                continue  # Cosmic Ray cannot rewrite this node (a dotted exception name)
            if code is None:
                continue
            code = _catching_nothing(code)
            try:
                if _shape(code) == shape:
                    continue
            except SyntaxError:
                continue
            new_lines = code.splitlines()
            diff = [d for d in difflib.ndiff(old_lines, new_lines) if d[:1] in "-+"]
            before = " / ".join(d[2:].strip() for d in diff if d[0] == "-")
            after = " / ".join(d[2:].strip() for d in diff if d[0] == "+")
            found.append(Mutant(name.split("/", 1)[1], occurrence, start[0], end[0], code,
                                before, after))
    found.sort(key=lambda m: (m.line, m.operator, m.occurrence))
    return found


def _equivalents(paths: Paths, module: str) -> list[dict[str, str]]:
    if not paths.equivalent.exists():
        return []
    table = tomllib.loads(paths.equivalent.read_text(encoding="utf-8"))
    return [e for e in table.get("mutant", []) if e.get("module") == module]


def _is_listed(mutant: Mutant, listed: list[dict[str, str]]) -> str:
    for entry in listed:
        if (entry["before"].strip() == mutant.before.strip()
                and entry["after"].strip() == mutant.after.strip()
                and mutant.operator in ("", entry.get("operator", mutant.operator))
                # `lines`, when given, names the sites the reason holds for (a text
                # such as `except OSError as err:` may stand at sites a test reaches)
                and mutant.line in entry.get("lines", [mutant.line])):
            return entry["reason"]
    return ""


def run_module(paths: Paths, module: str, limit: int | None, verbose: bool,
               max_tests: int, recheck: bool = False,
               only: str | None = None) -> dict[str, Any]:
    target = paths.module_file(module)
    rel = target.relative_to(paths.root).as_posix()
    if not paths.map.exists():
        build_map(paths, [])
    cover = json.loads(paths.map.read_text(encoding="utf-8"))
    if cover["sources"].get(rel) != _digest(target):
        raise SystemExit(f"mutation: {rel} changed since the map was made; "
                         "run `python tools/mutation.py map` again")
    by_line: dict[str, list[str]] = cover["lines"].get(rel, {})
    durations: dict[str, float] = cover["durations"]
    listed = _equivalents(paths, module)
    everyone = sorted({t for tests in by_line.values() for t in tests if t != IMPORT})
    mutants = mutants_of(target)[:limit]
    starts = _statement_starts(target.read_text(encoding="utf-8"))
    # The module's own test files first (for model/keys.py, tests/model/test_keys.py
    # and tests/model/test_keys_*.py), then the other tests of its part: a line run at
    # import counts as run by every test, and a module every command runs (the local
    # notes' index) is run by most of them, so under --max-tests the fastest of all
    # of them are seldom the ones that check it.
    part, stem = target.parent.name, target.stem
    kept: dict[str, Any] | None = None
    if only is not None:
        # Only these mutants again (after the tool changed how they are written): the
        # saved run's entries for them are replaced, the rest of its figures kept.
        mutants = [m for m in mutants if re.search(only, f"{m.operator}: {m.before}")]
        kept = _without(json.loads(paths.results.read_text(encoding="utf-8"))[module],
                        only, len(mutants))
    elif recheck:
        # Only the survivors of the saved run: after tests were added, test those again.
        kept = json.loads(paths.results.read_text(encoding="utf-8"))[module]
        again = {(s["where"], s["operator"], s["change"]) for s in kept["survivors"]}
        mutants = [m for m in mutants if (f"{rel}:{m.line}", m.operator, m.change()) in again]
    print(f"mutation: {module}: {len(mutants)} mutants in {rel}")
    started = time.monotonic()
    for number, mutant in enumerate(mutants, 1):
        mutant.reason = _is_listed(mutant, listed)
        lines = set(range(mutant.line, mutant.end_line + 1))
        lines |= {starts[line] for line in lines if line in starts}
        tests = sorted({t for line in lines
                        for t in by_line.get(str(line), [])
                        for t in (everyone if t == IMPORT else [t])},
                       key=lambda t: (not _tests_of(part, stem, t),
                                      not _in_part(part, t),
                                      durations.get(t, 60.0), t))
        tests = tests[:max_tests] if max_tests else tests
        mutant.tests = len(tests)
        if not tests:
            mutant.outcome = UNCOVERED
        else:
            _test(paths, target, mutant, tests, durations)
        if mutant.outcome in (KILLED, TIMEOUT):
            mutant.reason = ""  # a listed mutant a test kills was not equivalent after all
        if verbose or mutant.outcome not in (KILLED, TIMEOUT) or number % 20 == 0:
            print(f"  [{number}/{len(mutants)}] {mutant.outcome:9} {rel}:{mutant.line} "
                  f"{mutant.operator}: {mutant.change()}"
                  + (f"  (listed: {mutant.reason})" if mutant.reason else ""), flush=True)
    minutes = (time.monotonic() - started) / 60
    if kept is None:
        return _summary(module, rel, mutants, minutes)
    caught = [m for m in mutants if m.outcome in (KILLED, TIMEOUT)]
    if only is not None:
        fresh = _summary(module, rel, mutants, 0.0)
        kept["survivors"] += fresh["survivors"]
        kept["listed"] += fresh["listed"]
        kept["equivalent"] = len(kept["listed"])
    gone = {(f"{rel}:{m.line}", m.operator, m.change()) for m in caught}
    kept["survivors"] = [s for s in kept["survivors"]
                         if (s["where"], s["operator"], s["change"]) not in gone]
    kept["killed"] += len(caught)
    for k in (SURVIVED, UNCOVERED, ERROR):
        kept[k] = sum(1 for s in kept["survivors"] if s["outcome"] == k)
    scored = kept["mutants"] - kept["equivalent"]
    kept["score"] = round(100 * (kept["killed"] + kept["timeout"]) / scored, 1)
    kept["minutes"] = round(kept["minutes"] + minutes, 1)
    kept["rechecked"] = True
    return kept


def _without(kept: dict[str, Any], only: str, count: int) -> dict[str, Any]:
    """The saved results `kept` less the `count` mutants `only` matches (a regular
    expression over `operator: before`): their survivors and listed entries dropped,
    and the rest of them, which were killed, taken from the killed."""
    def matches(entry: dict[str, Any]) -> bool:
        return re.search(only, f"{entry['operator']}: {entry['change'].partition('  ->  ')[0]}"
                         ) is not None

    dropped = sum(1 for e in kept["survivors"] + kept["listed"] if matches(e))
    kept["survivors"] = [e for e in kept["survivors"] if not matches(e)]
    kept["listed"] = [e for e in kept["listed"] if not matches(e)]
    kept["killed"] = kept["killed"] + kept["timeout"] - (count - dropped)
    kept["timeout"] = 0
    return kept


def _tests_of(part: str, stem: str, test: str) -> bool:
    """Whether the test id `test` is in a file of the module `part/stem.py`'s own:
    tests/<part>/test_<stem>.py or tests/<part>/test_<stem>_<aspect>.py."""
    path = Path(test.split("::")[0])
    return path.parent.name == part and (path.stem == f"test_{stem}"
                                         or path.stem.startswith(f"test_{stem}_"))


def _in_part(part: str, test: str) -> bool:
    """Whether the test id `test` is in the folder of the module's part, tests/<part>/:
    a module with no test file of its own (one a split made) is tested there first,
    not by the fastest tests anywhere that merely run its lines."""
    return Path(test.split("::")[0]).parent.name == part


def _statement_starts(source: str) -> dict[int, int]:
    """Each line -> the first line of the innermost statement holding it. Coverage
    counts a statement run at its first line only, so a mutant on a later line of a
    statement written over several lines (a long tuple, a wrapped condition) is run
    by the tests that ran that first line."""
    starts: dict[int, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                starts[line] = max(starts.get(line, 0), node.lineno)
    return starts


def _test(paths: Paths, target: Path, mutant: Mutant, tests: list[str],
          durations: dict[str, float]) -> None:
    budget = min(300.0, 30.0 + 3.0 * sum(durations.get(t, 10.0) for t in tests))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("OMH_MUT_COVER", None)
    with tempfile.NamedTemporaryFile("w", suffix=".args", delete=False) as args:
        args.write("\n".join(tests))
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly",
               "-p", "no:cacheprovider", f"@{args.name}"]
    began = time.monotonic()
    try:
        with mutated(paths, target, mutant.code):
            child = subprocess.Popen(command, cwd=paths.root, env=env, start_new_session=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                output, _ = child.communicate(timeout=budget)
                mutant.outcome = {0: SURVIVED, 1: KILLED, 2: KILLED}.get(child.returncode, ERROR)
                if child.returncode == 4 and (
                        "found no collectors" in output or "while loading conftest" in output
                        or any(ln.startswith("ERROR tests/") for ln in output.splitlines())):
                    # The mutant broke an import (the package's, so the conftest's, or
                    # a test module's): pytest then finds none of the tests asked for
                    # and exits 4, but every one of them failed to load.
                    mutant.outcome = KILLED
                    mutant.killer = "(import failed)"
                if mutant.outcome == KILLED:
                    mutant.killer = next((ln.split()[1] for ln in output.splitlines()
                                          if ln.startswith(("FAILED ", "ERROR "))),
                                         mutant.killer)
                elif mutant.outcome == ERROR:
                    mutant.extra["output"] = output[-2000:]
            except subprocess.TimeoutExpired:
                mutant.outcome = TIMEOUT
            finally:
                if child.poll() is None:
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait()
    finally:
        os.unlink(args.name)
        mutant.seconds = time.monotonic() - began


def _summary(module: str, rel: str, mutants: list[Mutant], minutes: float) -> dict[str, Any]:
    count = {k: sum(1 for m in mutants if m.outcome == k and not m.reason)
             for k in (KILLED, SURVIVED, TIMEOUT, UNCOVERED, ERROR)}
    equivalent = sum(1 for m in mutants if m.reason)
    scored = len(mutants) - equivalent
    caught = count[KILLED] + count[TIMEOUT]
    return {
        "module": module, "file": rel, "mutants": len(mutants), **count,
        "equivalent": equivalent,
        "score": round(100 * caught / scored, 1) if scored else 100.0,
        "minutes": round(minutes, 1),
        "survivors": [{"where": f"{rel}:{m.line}", "operator": m.operator, "change": m.change(),
                       "outcome": m.outcome}
                      for m in mutants if m.outcome in (SURVIVED, UNCOVERED, ERROR)
                      and not m.reason],
        "listed": [{"where": f"{rel}:{m.line}", "operator": m.operator, "change": m.change(),
                    "outcome": m.outcome, "reason": m.reason} for m in mutants if m.reason],
    }


def save(paths: Paths, summary: dict[str, Any]) -> None:
    results = (json.loads(paths.results.read_text(encoding="utf-8"))
               if paths.results.exists() else {})
    results[summary["module"]] = summary
    paths.results.write_text(json.dumps(dict(sorted(results.items())), indent=1) + "\n",
                             encoding="utf-8")


def rescore(paths: Paths) -> None:
    """Apply tools/mutation_equivalent.toml again to the saved results (after a
    mutant was listed, or a listed one turned out to be killed) without a new run."""
    results = json.loads(paths.results.read_text(encoding="utf-8"))
    for module, r in results.items():
        listed = _equivalents(paths, module)
        mutants = []
        for entry in r["survivors"] + r["listed"]:
            before, _, after = entry["change"].partition("  ->  ")
            line = int(entry["where"].rpartition(":")[2])
            m = Mutant(entry.get("operator", ""), 0, line, line, "", before, after,
                       outcome=entry["outcome"])
            m.reason = "" if m.outcome in (KILLED, TIMEOUT) else _is_listed(m, listed)
            m.extra["where"] = entry["where"]
            mutants.append(m)
        caught = r["killed"] + r["timeout"]
        caught += sum(1 for m in mutants if m.outcome in (KILLED, TIMEOUT))
        r["killed"], r["timeout"] = caught, 0
        for k in (SURVIVED, UNCOVERED, ERROR):
            r[k] = sum(1 for m in mutants if m.outcome == k and not m.reason)
        r["equivalent"] = sum(1 for m in mutants if m.reason)
        scored = r["mutants"] - r["equivalent"]
        r["score"] = round(100 * caught / scored, 1) if scored else 100.0
        r["survivors"] = [{"where": m.extra["where"], "operator": m.operator,
                           "change": m.change(), "outcome": m.outcome}
                          for m in mutants if m.outcome in (SURVIVED, UNCOVERED, ERROR)
                          and not m.reason]
        r["listed"] = [{"where": m.extra["where"], "operator": m.operator, "change": m.change(),
                        "outcome": m.outcome, "reason": m.reason} for m in mutants if m.reason]
    paths.results.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def table(paths: Paths) -> str:
    results = json.loads(paths.results.read_text(encoding="utf-8"))
    rows = ["| module | mutants | killed | survived | no test runs it | equivalent | score "
            "| minutes |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results.values():
        rows.append(f"| {r['module']} | {r['mutants']} | {r['killed'] + r['timeout']} "
                    f"| {r['survived'] + r['error']} | {r['uncovered']} | {r['equivalent']} "
                    f"| {r['score']}% | {r['minutes']} |")
    return "\n".join(rows)


def listing(paths: Paths) -> str:
    """One line a module: its short name, its file, and its score or `unmeasured`."""
    results = (json.loads(paths.results.read_text(encoding="utf-8"))
               if paths.results.exists() else {})
    scores = {r["module"]: f"{r['score']}%" for r in results.values()}
    return "\n".join(f"{name}\t{rel}\t{scores.get(name, 'unmeasured')}"
                     for name, rel in sorted(every_module(paths.package).items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout")
    sub = parser.add_subparsers(dest="command", required=True)
    mapping = sub.add_parser("map", help="run the tests once under coverage")
    mapping.add_argument("--tests", nargs="*", default=[], help="only these (merged in)")
    running = sub.add_parser("run", help="mutate modules and test each mutant")
    running.add_argument("--module", action="append", required=True,
                         help="a module's short name (`list` prints them; repeatable)")
    running.add_argument("--limit", type=int, help="only the first N mutants (a smoke run)")
    running.add_argument("--verbose", action="store_true", help="print killed mutants too")
    running.add_argument("--recheck", action="store_true",
                         help="test only the saved run's survivors again (after adding tests)")
    running.add_argument("--only", metavar="REGEX",
                         help="run only the mutants whose `operator: line` matches, replacing "
                              "the saved run's entries for them (after the tool changed them)")
    running.add_argument("--max-tests", type=int, default=30,
                         help="run at most the N fastest covering tests per mutant (0: all)")
    sub.add_parser("table", help="print the per-module table")
    sub.add_parser("list", help="every module's short name, its file, and whether it is measured")
    sub.add_parser("rescore", help="apply the equivalent list again to the saved results")
    sub.add_parser("restore", help="put back a file a killed run left mutated")
    args = parser.parse_args(argv)
    paths = Paths(args.root)
    if restore(paths):
        print("mutation: restored a file an earlier run left mutated", file=sys.stderr)
    signal.signal(signal.SIGTERM, _raise_interrupted)
    signal.signal(signal.SIGHUP, _raise_interrupted)
    # Python leaves SIGINT ignored when it starts so (a job a shell put in the
    # background): a `kill -INT` must still stop a run and put the module back.
    signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        if args.command == "map":
            build_map(paths, args.tests)
        elif args.command == "run":
            for module in args.module:
                summary = run_module(paths, module, args.limit, args.verbose,
                                     args.max_tests, args.recheck, args.only)
                summary["only_max_tests" if args.only else "recheck_max_tests"
                        if args.recheck else "max_tests"] = args.max_tests
                if args.limit is None:
                    save(paths, summary)
                print(f"mutation: {module}: {summary['mutants']} mutants, "
                      f"{summary['killed'] + summary['timeout']} killed, "
                      f"{summary['survived'] + summary['error']} survived, "
                      f"{summary['uncovered']} run by no test, {summary['equivalent']} listed "
                      f"equivalent; score {summary['score']}% in {summary['minutes']} min")
        elif args.command == "rescore":
            rescore(paths)
            print(table(paths))
        elif args.command == "table":
            print(table(paths))
        elif args.command == "list":
            print(listing(paths))
    except (KeyboardInterrupt, _Interrupted):
        restore(paths)
        print("mutation: interrupted; the module is back as it was", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
