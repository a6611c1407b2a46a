"""The package's shape: its parts, what each may import, and each library's one home."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "omh_git_memory"

# The top level holds three groups of plain modules; the rest are folders.
MODEL = {"errors", "note", "keys", "config", "layers", "plural", "secret_scan"}
STORES = {"git", "gitfiles", "identity", "store", "journal", "team", "graph", "adopt", "faults",
          "nofollow"}
ACTIONS = {"remember", "topic", "update", "edit", "rename", "promote", "review", "lint",
           "init", "workspace", "near_duplicate"}
FOLDERS = {"recall", "expiry", "agent", "cli"}
# What each part may import from the package (a part may always import itself).
MAY_IMPORT = {
    "model": {"model"},
    "stores": {"model", "stores"},
    "recall": {"model", "stores"},
    "expiry": {"model", "stores", "recall"},
    "actions": {"model", "stores", "recall", "expiry", "actions"},
    "agent": {"model", "stores", "recall", "expiry", "actions"},
    "cli": {"model", "stores", "recall", "expiry", "actions", "agent"},
}
# Each third-party library and the only modules allowed to import it.
HOMES = {
    "pygit2": {"git.py"},
    "mistune": {"note.py"},
    "typer": {"cli"},
    "mcp": {"agent/server.py"},
    "numpy": {"recall/semantic.py"},
    "onnxruntime": {"recall/semantic.py"},
    "onnx": {"recall/semantic.py"},
    "tomlkit": {"agent/config_edit.py"},
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
    """The part a module belongs to, from its name inside the package."""
    head = dotted.split(".")[0]
    if head in FOLDERS:
        return head
    for part, members in (("model", MODEL), ("stores", STORES), ("actions", ACTIONS)):
        if head in members:
            return part
    raise AssertionError(f"omh_git_memory/{head} belongs to no part: add it to one above")


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


def test_every_top_level_module_belongs_to_a_part() -> None:
    for path in PACKAGE.iterdir():
        if path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            _part(path.stem)
        elif path.is_dir() and (path / "__init__.py").exists():
            assert path.name in FOLDERS, f"{path.name}/ is not a declared part"


def test_the_core_never_imports_the_agent_edge_or_the_cli() -> None:
    """The rule the parts above exist for, stated on its own so it cannot drift."""
    for part in ("model", "stores", "recall", "expiry", "actions"):
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
