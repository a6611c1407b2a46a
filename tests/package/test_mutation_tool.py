"""The mutation tool (tools/mutation.py) never leaves a mutated file behind.

It rewrites a module in place while the tests run, so an interrupted run must put
the file back: on SIGTERM / Ctrl-C at once, after SIGKILL with `restore`. These
tests run the tool on a tiny project of their own, never on this checkout. The
tool is a dev extra (`.[mutation]`); without it installed they are skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT

pytest.importorskip("cosmic_ray")
pytest.importorskip("coverage")

TOOL = ROOT / "tools" / "mutation.py"

MODULE = "def same(a, b):\n    return a == b\n"

TEST = '''\
import os
import time

from omh_git_memory.model import keys


def test_same():
    if not keys.same(1, 1):  # only a mutant gets here: hang, so the run can be stopped
        with open(os.environ["HANG_PID_FILE"], "w") as out:
            out.write(str(os.getpid()))
        time.sleep(120)
    assert keys.same(2, 2)
    assert not keys.same(1, 2)
'''


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "omh_git_memory" / "model").mkdir(parents=True)
    (root / "omh_git_memory" / "__init__.py").write_text("", encoding="utf-8")
    (root / "omh_git_memory" / "model" / "__init__.py").write_text("", encoding="utf-8")
    (root / "omh_git_memory" / "model" / "keys.py").write_text(MODULE, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_k.py").write_text(TEST, encoding="utf-8")
    (root / "tools").mkdir()
    return root


def _tool(root: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args],
                          capture_output=True, text=True, check=False, timeout=300, **kw)


def _start_hanging_run(root: Path, pid_file: Path) -> subprocess.Popen[str]:
    assert _tool(root, "map").returncode == 0
    env = {**os.environ, "HANG_PID_FILE": str(pid_file)}
    # started as a shell starts a background job, with SIGINT ignored: the tool must
    # stop on it all the same
    run = subprocess.Popen([sys.executable, str(TOOL), "--root", str(root), "run",
                            "--module", "keys"], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 120
    while not pid_file.exists():
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "the mutant never ran"
        time.sleep(0.2)
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text(encoding="utf-8") != MODULE
    return run


def _kill_hanging_test(pid_file: Path) -> None:
    with_pid = int(pid_file.read_text(encoding="utf-8"))
    with contextlib.suppress(ProcessLookupError):
        os.kill(with_pid, signal.SIGKILL)


def test_a_run_kills_the_mutant_a_test_catches_and_saves_the_result(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "tests" / "test_k.py").write_text(
        "from omh_git_memory.model import keys\n\n\ndef test_same():\n"
        "    assert keys.same(2, 2)\n    assert not keys.same(1, 2)\n", encoding="utf-8")
    assert _tool(root, "map").returncode == 0
    done = _tool(root, "run", "--module", "keys")
    assert done.returncode == 0, done.stderr
    result = json.loads((root / "tools" / "mutation_results.json").read_text())["keys"]
    assert result["mutants"] == 1 and result["killed"] == 1 and result["score"] == 100.0
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text(encoding="utf-8") == MODULE


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_stopping_a_run_puts_the_module_back_at_once(tmp_path: Path, how: int) -> None:
    root = _project(tmp_path)
    pid_file = tmp_path / "hang.pid"
    run = _start_hanging_run(root, pid_file)
    try:
        run.send_signal(how)
        run.communicate(timeout=60)
    finally:
        _kill_hanging_test(pid_file)
    assert run.returncode == 130
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text(encoding="utf-8") == MODULE
    assert not (root / ".mutation" / "pending.json").exists()
    with pytest.raises(ProcessLookupError):  # the mutant's test run went with it
        os.kill(int(pid_file.read_text(encoding="utf-8")), 0)


def test_a_run_killed_outright_is_repaired_by_restore(tmp_path: Path) -> None:
    root = _project(tmp_path)
    pid_file = tmp_path / "hang.pid"
    run = _start_hanging_run(root, pid_file)
    run.kill()
    run.communicate(timeout=60)
    _kill_hanging_test(pid_file)
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text(encoding="utf-8") != MODULE
    done = _tool(root, "restore")
    assert done.returncode == 0 and "restored" in done.stderr
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text(encoding="utf-8") == MODULE
    assert _tool(root, "restore").stderr == ""  # nothing left to do


def test_a_mutant_that_breaks_the_modules_import_counts_as_killed(tmp_path: Path) -> None:
    # Negating the guard makes importing the module fail: no listed test can even be
    # collected (pytest exits 4 for node ids it cannot collect), so every test fails.
    root = _project(tmp_path)
    (root / "omh_git_memory" / "model" / "keys.py").write_text(
        "def check():\n    if 2 > 3:\n        raise ImportError('a mutant ran')\n\n\n"
        "check()\n", encoding="utf-8")
    (root / "tests" / "test_k.py").write_text(
        "from omh_git_memory.model import keys\n\n\ndef test_check():\n"
        "    keys.check()\n", encoding="utf-8")
    assert _tool(root, "map").returncode == 0
    done = _tool(root, "run", "--module", "keys")
    assert done.returncode == 0, done.stderr
    result = json.loads((root / "tools" / "mutation_results.json").read_text())["keys"]
    negated = [m for m in result["survivors"] if m["operator"] == "AddNot"]
    assert negated == [] and result["error"] == 0, json.dumps(result)
    assert result["killed"] == 1


def test_an_equivalent_entry_naming_lines_covers_only_those_sites(tmp_path: Path) -> None:
    # The same text at two sites: the entry's reason holds for line 2 only, so the
    # mutant at line 6 still counts against the score, in a run and after rescore.
    root = _project(tmp_path)
    (root / "omh_git_memory" / "model" / "keys.py").write_text(
        "def same(a, b):\n    return a == b\n\n\ndef also(a, b):\n    return a == b\n",
        encoding="utf-8")
    (root / "tests" / "test_k.py").write_text(
        "from omh_git_memory.model import keys\n\n\ndef test_runs():\n"
        "    keys.same(1, 2)\n    keys.also(1, 2)\n", encoding="utf-8")
    (root / "tools" / "mutation_equivalent.toml").write_text(
        '[[mutant]]\nmodule = "keys"\nbefore = "return a == b"\nafter = "return a != b"\n'
        'lines = [2]\nreason = "only this site"\n', encoding="utf-8")
    assert _tool(root, "map").returncode == 0
    assert _tool(root, "run", "--module", "keys").returncode == 0
    for _ in ("run", "rescore"):
        result = json.loads((root / "tools" / "mutation_results.json").read_text())["keys"]
        assert (result["mutants"], result["equivalent"], result["survived"]) == (2, 1, 1)
        assert [s["where"] for s in result["survivors"]] == ["omh_git_memory/model/keys.py:6"]
        assert _tool(root, "rescore").returncode == 0


def test_a_mutant_is_tested_by_its_modules_own_tests_then_its_parts_then_the_rest() -> None:
    """Under --max-tests the chosen tests are the module's own file's, then those of
    its part's folder, and only then the fastest of the rest: a module with no test
    file of its own (one a split made) is otherwise tested by whichever fast tests
    merely run its lines."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("omh_mutation_tool", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(tool)
    finally:
        del sys.modules[spec.name]
    assert tool._tests_of("recall", "bm25", "tests/recall/test_bm25_fast.py::t")
    assert not tool._tests_of("recall", "bm25", "tests/recall/test_floor.py::t")
    assert tool._in_part("recall", "tests/recall/test_floor.py::t")
    assert not tool._in_part("recall", "tests/cli/test_cli.py::t")


def _load_tool() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("omh_mutation_tool_names", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool
    try:
        spec.loader.exec_module(tool)
    finally:
        del sys.modules[spec.name]
    return tool


def test_every_module_of_the_package_has_a_short_name_and_no_name_two_files() -> None:
    """`run --module` reaches every module, not only those listed by hand: a module a
    later change adds is measurable without editing the tool, and a stem two parts
    share is named by its part so that neither hides the other."""
    tool: Any = _load_tool()
    package = ROOT / "omh_git_memory"
    named = tool.every_module(package)
    files = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py")
                   if p.name not in ("__init__.py", "__main__.py"))
    assert sorted(named.values()) == files
    assert len(set(named.values())) == len(named)
    assert named["server_tools"] == "agent/tools.py"  # a hand-given name is kept
    assert named["journal"] == "stores/journal.py"
    assert named["cli_adopt"] == "cli/adopt.py" and named["stores_adopt"] == "stores/adopt.py"
    assert "adopt" not in named


def test_a_test_file_mapped_again_replaces_the_ids_it_held(tmp_path: Path) -> None:
    """A test renamed since the last map must not stay in it: pytest would find no
    such test, and its mutant's run would err instead of being killed."""
    root = _project(tmp_path)
    test = root / "tests" / "test_k.py"
    test.write_text("from omh_git_memory.model import keys\n\n\ndef test_old():\n"
                    "    assert not keys.same(1, 2)\n", encoding="utf-8")
    assert _tool(root, "map").returncode == 0
    test.write_text(test.read_text(encoding="utf-8").replace("test_old", "test_new"),
                    encoding="utf-8")
    assert _tool(root, "map", "--tests", "tests/test_k.py").returncode == 0
    mapped = json.loads((root / ".mutation" / "map.json").read_text())["lines"]
    ids = {t for per_line in mapped["omh_git_memory/model/keys.py"].values() for t in per_line}
    assert "tests/test_k.py::test_new" in ids
    assert "tests/test_k.py::test_old" not in ids


TUPLE_HANDLER = ("def parse(x):\n    try:\n        return int(x)\n"
                 "    except (TypeError, ValueError):\n        return None\n")


def test_one_name_of_an_except_tuple_is_dropped_not_made_an_empty_tuple(tmp_path: Path) -> None:
    # `except ((), ValueError)` raises TypeError for every exception, ValueError too
    source = tmp_path / "m.py"
    source.write_text(TUPLE_HANDLER, encoding="utf-8")
    tool: Any = _load_tool()
    changes = [m.change() for m in tool.mutants_of(source) if m.operator == "ExceptionReplacer"]
    assert changes == ["except (TypeError, ValueError):  ->  except (ValueError):",
                       "except (TypeError, ValueError):  ->  except (TypeError):"]


def test_only_reruns_the_matching_mutants_and_keeps_the_rest_of_the_saved_run(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "omh_git_memory" / "model" / "keys.py").write_text(
        "def same(a, b):\n    return a == b\n\n\n" + TUPLE_HANDLER, encoding="utf-8")
    (root / "tests" / "test_k.py").write_text(
        "from omh_git_memory.model import keys\n\n\ndef test_it():\n"
        "    assert keys.same(2, 2) and not keys.same(1, 2)\n"
        "    assert keys.parse('x') is None\n", encoding="utf-8")
    assert _tool(root, "map").returncode == 0
    assert _tool(root, "run", "--module", "keys").returncode == 0
    results = root / "tools" / "mutation_results.json"
    first = json.loads(results.read_text())["keys"]
    # as an older tool saved it: the TypeError half killed, the ValueError half alive
    first["survivors"] = [{"where": "omh_git_memory/model/keys.py:8",
                           "operator": "ExceptionReplacer", "outcome": "survived",
                           "change": "except (TypeError, ValueError):  ->  except ((), "
                                     "ValueError):"}]
    first["killed"] -= 1
    first["survived"] = 1
    results.write_text(json.dumps({"keys": first}))
    done = _tool(root, "run", "--module", "keys", "--only", r"^ExceptionReplacer: except \(")
    assert done.returncode == 0, done.stderr
    again = json.loads(results.read_text())["keys"]
    assert (again["mutants"], again["killed"], again["survived"]) == (
        first["mutants"], first["killed"], 1)
    assert [s["change"] for s in again["survivors"]] == [
        "except (TypeError, ValueError):  ->  except (ValueError):"]
