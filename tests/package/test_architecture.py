"""The package's shape: its parts, what each may import, and each library's one home."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "omh_git_memory"

# Every module lives in a part's folder; its part is the folder's name.
PARTS = ("model", "git", "stores", "recall", "expiry", "actions", "agent", "cli")
# What each part may import from the package (a part may always import itself).
MAY_IMPORT = {
    "model": set(),
    "git": {"model"},
    "stores": {"model", "git"},
    "recall": {"model", "git", "stores"},
    "expiry": {"model", "git", "stores", "recall"},
    "actions": {"model", "git", "stores", "recall", "expiry"},
    "agent": {"model", "git", "stores", "recall", "expiry", "actions"},
    "cli": {"model", "git", "stores", "recall", "expiry", "actions", "agent"},
}
# Each third-party library and the only modules allowed to import it.
HOMES = {
    "pygit2": {"git/repository.py", "git/config.py", "git/history.py", "git/trees.py",
               "git/staging.py", "git/filters.py", "git/obstacles.py", "git/commit.py",
               "git/recovery.py", "git/last_changed.py"},
    "mistune": {"model/note.py"},
    "typer": {"cli"},
    "mcp": {"agent/sdk.py"},
    "numpy": {"recall/semantic.py"},
    "onnxruntime": {"recall/semantic.py"},
    "onnx": {"recall/semantic.py"},
    "tomlkit": {"agent/config_edit.py"},
    "rapidfuzz": {"model/similar.py"},
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "omh_git_memory":  # `from omh_git_memory import faults`
                names.update(f"omh_git_memory.{alias.name}" for alias in node.names)
    return names


def _part(dotted: str) -> str:
    """The part a module belongs to: the folder it sits in inside the package."""
    head = dotted.split(".")[0]
    if head not in PARTS:
        raise AssertionError(f"omh_git_memory/{head} is in no part's folder: move it into one")
    return head


MODULES = sorted(path for path in PACKAGE.rglob("*.py") if path.name != "__main__.py")


def _name(path: Path) -> str:
    relative = path.relative_to(PACKAGE).with_suffix("")
    return ".".join(part for part in relative.parts if part != "__init__")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_each_part_imports_only_the_parts_below_it(path: Path) -> None:
    name = _name(path)
    if not name:  # the package's own __init__
        return
    part = _part(name)
    reached = {
        _part(imported.removeprefix("omh_git_memory."))
        for imported in _imports(path)
        if imported.startswith("omh_git_memory.")
    }
    forbidden = reached - MAY_IMPORT[part] - {part}
    assert not forbidden, f"{name} ({part}) imports {sorted(forbidden)}"


def test_every_module_sits_in_a_part_folder() -> None:
    for path in PACKAGE.iterdir():
        if path.suffix == ".py":
            assert path.stem in ("__init__", "__main__"), f"{path.name} sits in no part"
        elif path.is_dir() and (path / "__init__.py").exists():
            assert path.name in PARTS, f"{path.name}/ is not a declared part"
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert folders == set(PARTS)


def test_the_core_never_imports_the_agent_edge_or_the_cli() -> None:
    """The rule the parts above exist for, stated on its own so it cannot drift."""
    for part in ("model", "git", "stores", "recall", "expiry", "actions"):
        assert not MAY_IMPORT[part] & {"agent", "cli"}
    assert "cli" not in MAY_IMPORT["agent"]


@pytest.mark.parametrize("library", sorted(HOMES))
def test_each_library_lives_behind_one_module(library: str) -> None:
    users = {
        str(path.relative_to(PACKAGE))
        for path in MODULES
        if any(name == library or name.startswith(library + ".") for name in _imports(path))
    }
    allowed = HOMES[library]
    assert all(user in allowed or user.split("/")[0] in allowed for user in users), users


ERRORS = PACKAGE / "model" / "errors.py"


def _error_classes() -> set[str]:
    """The names of OmhError and of every class model/errors.py derives from it."""
    family = {"OmhError"}
    for node in ast.parse(ERRORS.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id in family for base in node.bases):
            family.add(node.name)
    return family


def _named(node: ast.expr) -> str | None:
    """`X` for `X` and `module.X`, else None."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def test_every_error_class_is_declared_in_model_errors() -> None:
    """One home for errors: a subclass of OmhError (or of one of its subclasses)
    declared anywhere but model/errors.py fails, and so does a bare `raise
    OmhError(…)`, which gives the failure no type of its own to catch or read."""
    family = _error_classes()
    assert {"InvalidKey", "StoreError"} <= family  # the file was read at all
    misplaced: list[str] = []
    bare: list[str] = []
    for path in MODULES:
        where = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {alias.asname: alias.name for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) for alias in node.names
                   if alias.asname and alias.name in family}
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and path != ERRORS:
                bases = {aliases.get(name, name) for name in map(_named, node.bases) if name}
                if bases & family:
                    misplaced.append(f"{where}:{node.lineno} {node.name}")
            elif isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = _named(raised)
                if name is not None and aliases.get(name, name) == "OmhError":
                    bare.append(f"{where}:{node.lineno}")
    assert not misplaced, f"declare these in model/errors.py: {misplaced}"
    assert not bare, f"raise a subclass of OmhError (in model/errors.py), not OmhError: {bare}"
