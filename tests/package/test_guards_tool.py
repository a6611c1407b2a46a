"""The guard tool (tools/guards.py) takes out what a user relies on, and only that.

The finder runs here on small sources of its own; the run, which needs the
mutation extra (coverage), runs on a tiny project of its own, never on this
checkout.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import ROOT

TOOL = ROOT / "tools" / "guards.py"

SOURCE = '''\
import os
import stat

calls = []


def probe(value):
    calls.append(value)
    return value


def refuse(value):
    if probe(value) < 0:
        raise ValueError("negative")
    return value


def check(path):
    if stat.S_ISLNK(os.lstat(path).st_mode):
        return None
    return path


def plain(items):
    if not items:
        return []
    return items


def branch(path):
    if os.path.islink(path):
        return "link"
    else:
        return "file"
'''


def _tool_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("omh_guards_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_refusal_and_a_file_check_are_guards_and_a_plain_early_exit_is_not(
        tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(SOURCE, encoding="utf-8")
    found = {(g.line, g.extra["kind"]) for g in _tool_module().guards_of(source)}
    assert found == {(13, "refusal"), (19, "check")}


def test_a_guard_taken_out_still_runs_its_condition_but_never_its_body(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(SOURCE, encoding="utf-8")
    refusal = next(g for g in _tool_module().guards_of(source) if g.extra["kind"] == "refusal")
    assert refusal.before == 'if probe(value) < 0:'
    assert refusal.after == 'if (probe(value) < 0) and False:'
    assert refusal.extra["reach"] == 14
    namespace: dict[str, object] = {}
    exec(compile(refusal.code, "m.py", "exec"), namespace)
    assert namespace["refuse"](-1) == -1  # type: ignore[operator]
    assert namespace["calls"] == [-1]


def test_a_guard_written_over_lines_and_after_wide_characters_is_taken_out_whole(
        tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text('NAME = "é"\n\n\ndef f(a, b):\n    if ("é" != a\n            and b):  # «\n'
                      '        raise ValueError("é")\n    return 1\n', encoding="utf-8")
    (guard,) = _tool_module().guards_of(source)
    assert guard.after == 'if (("é" != a / and b) and False):  # «'
    namespace: dict[str, object] = {}
    exec(compile(guard.code, "m.py", "exec"), namespace)
    assert namespace["f"]("a", True) == 1  # type: ignore[operator]


PROJECT_MODULE = '''\
def refuse(value):
    if value < 0:
        raise ValueError("negative")
    return value


def unchecked(value):
    if value > 100:
        raise ValueError("too big")
    return value


def never(value):
    if value == "never":
        raise ValueError("never")
    return value


def exempt(value):
    if value == "":
        raise ValueError("empty")
    return value
'''

PROJECT_TEST = '''\
import pytest

from omh_git_memory.model import keys


def test_refuses_a_negative():
    with pytest.raises(ValueError):
        keys.refuse(-1)


def test_reaches_the_big_one_without_looking():
    try:
        keys.unchecked(101)
    except ValueError:
        pass
    assert keys.never(1) == 1
    try:
        keys.exempt("")
    except ValueError:
        pass
'''


def test_a_run_says_which_guards_a_test_holds_which_none_does_and_which_are_listed(
        tmp_path: Path) -> None:
    pytest.importorskip("coverage")
    root = tmp_path / "proj"
    (root / "omh_git_memory" / "model").mkdir(parents=True)
    (root / "omh_git_memory" / "__init__.py").write_text("", encoding="utf-8")
    (root / "omh_git_memory" / "model" / "__init__.py").write_text("", encoding="utf-8")
    (root / "omh_git_memory" / "model" / "keys.py").write_text(PROJECT_MODULE, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_k.py").write_text(PROJECT_TEST, encoding="utf-8")
    (root / "tools").mkdir()
    (root / "tools" / "guards_exempt.toml").write_text(
        '[[guard]]\nmodule = "keys"\nline = "if value == \\"\\":"\nlines = [20]\n'
        'reason = "a test case"\n\n'
        '[[guard]]\nmodule = "keys"\nline = "if value > 100:"\nlines = [99]\n'
        'reason = "another site of the same text"\n',
        encoding="utf-8")

    def tool(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), "--root", str(root), *args],
                              capture_output=True, text=True, check=False, timeout=300)

    assert tool(ROOT / "tools" / "mutation.py", "map").returncode == 0
    done = tool(TOOL, "run", "--module", "keys")
    assert done.returncode == 0, done.stderr
    result = json.loads((root / "tools" / "guard_results.json").read_text())["keys"]
    assert (result["guards"], result["red"], result["green"], result["unreached"],
            result["listed"]) == (4, 1, 1, 1, 1)
    assert result["share"] == pytest.approx(33.3)
    assert [g["where"] for g in result["open"]] == [
        "omh_git_memory/model/keys.py:8", "omh_git_memory/model/keys.py:14"]
    assert result["exempt"][0]["reason"] == "a test case"
    assert (root / "omh_git_memory" / "model" / "keys.py").read_text() == PROJECT_MODULE
    assert "| keys | 4 | 4 | 1 | 1 | 1 | 1 | 33.3% |" in tool(TOOL, "table").stdout
