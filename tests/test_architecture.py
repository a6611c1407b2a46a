"""The package's shape: the core never imports an edge, and each library has one home."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "omh_git_memory"
EDGES = ("omh_git_memory.cli", "omh_git_memory.mcp_server")
# Each third-party library and the only modules allowed to import it.
HOMES = {
    "pygit2": {"git.py"},
    "mistune": {"note.py"},
    "typer": {"cli"},
    "mcp": {"mcp_server.py"},
    "numpy": {"semantic.py"},
    "onnxruntime": {"semantic.py"},
    "onnx": {"semantic.py"},
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_core_never_imports_the_cli_or_the_server(path: Path) -> None:
    relative = path.relative_to(PACKAGE)
    # doctor checks the server from outside, as a harness would: it sits at the edge.
    if relative.parts[0] == "cli" or relative.name in ("mcp_server.py", "__main__.py",
                                                       "doctor.py"):
        return
    edges = {name for name in _imports(path) if name.startswith(EDGES)}
    assert not edges, f"{relative} imports {edges}"


@pytest.mark.parametrize("library", sorted(HOMES))
def test_each_library_lives_behind_one_module(library: str) -> None:
    users = {
        str(path.relative_to(PACKAGE))
        for path in MODULES
        if any(name == library or name.startswith(library + ".") for name in _imports(path))
    }
    allowed = HOMES[library]
    assert all(user in allowed or user.split("/")[0] in allowed for user in users), users
