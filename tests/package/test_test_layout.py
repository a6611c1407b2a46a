"""The tests' own shape (tests/README.md): a folder per part of the package, a file per
module it tests, attacks by surface, and builders shared only through tests/helpers/."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.attacks import CATEGORIES
from tests.helpers import ROOT

TESTS = ROOT / "tests"
PACKAGE = ROOT / "omh_git_memory"
PARTS = ("model", "git", "stores", "recall", "expiry", "actions", "agent", "cli")
FILES = sorted(TESTS.rglob("*.py"))
TEST_FILES = [path for path in FILES if path.name.startswith("test_")]


def _rel(path: Path) -> str:
    return path.relative_to(TESTS).as_posix()


def _imported(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_test_module_imports_another() -> None:
    # What two test files share lives in tests/helpers/, never in one of them.
    found = {_rel(path): reached for path in FILES
             if (reached := sorted(name for name in _imported(path) if name.startswith("tests.")
                                   and name.split(".")[-1].startswith("test_")))}
    assert not found, f"move what these import to tests/helpers/: {found}"


def test_every_folder_is_a_package() -> None:
    # Packages keep two files of one name in two folders apart.
    folders = [TESTS, *(p for p in TESTS.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    assert [_rel(f) for f in folders if not (f / "__init__.py").is_file()] == []


def _misplaced(path: Path) -> str | None:
    """Why `path` is not where tests/README.md says a test file goes, or None."""
    where = path.relative_to(TESTS).parts[:-1]
    if not where or where[0] not in (*PARTS, "attacks", "package"):
        return "a test file sits in a part's folder, attacks/<surface>/ or package/"
    if where[0] == "attacks" and len(where) != 2:
        return "an attack sits in the folder of its surface"
    if where[0] in PARTS:
        modules = {p.stem for p in (PACKAGE / where[0]).glob("*.py")} - {"__init__"}
        stem = path.stem.removeprefix("test_")
        if not any(stem == m or stem.startswith(f"{m}_") for m in modules | {where[0]}):
            return (f"it names no module of omh_git_memory/{where[0]}/: name it "
                    "test_<module>[_<aspect>].py after the module it tests")
    return None


def test_each_file_is_named_for_what_it_tests() -> None:
    """tests/<part>/test_<module>[_<aspect>].py for a module of that part;
    tests/attacks/<surface>/test_<aspect>.py; tests/package/ for the whole."""
    found = {_rel(path): why for path in TEST_FILES if (why := _misplaced(path))}
    assert not found, found


def test_each_attack_is_named_by_its_category() -> None:
    # tests/conftest.py marks each attack by this name; bench/reliability_report.py
    # counts them by the mark.
    unnamed = [f"{_rel(path)}::{node.name}"
               for path in TEST_FILES if _rel(path).startswith("attacks/")
               for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
               and node.name.startswith("test_")
               and node.name.removeprefix("test_").split("_")[0] not in CATEGORIES]
    assert not unnamed, f"these start with no category of {CATEGORIES}: {unnamed}"
