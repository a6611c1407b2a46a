"""docs/ stays true: every command and option a user meets is described."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from omh_git_memory.cli import app
from omh_git_memory.lint import RULES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        found.append((prefix, command))
        # typer ships its own copy of click, so test the shape, not the class.
        for name, sub in getattr(command, "commands", {}).items():
            walk(f"{prefix} {name}", sub)

    walk("omh", typer.main.get_command(app))
    return found


@pytest.mark.parametrize(("name", "command"), _commands(), ids=lambda x: str(x))
def test_every_command_and_option_is_in_the_command_reference(
    name: str, command: Any
) -> None:
    text = (DOCS / "commands.md").read_text()
    if name != "omh":
        assert f"`{name}" in text, f"{name} is not documented"
    for param in command.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--") and opt != "--help":
                assert f"`{opt}" in text, f"{name} {opt} is not documented"


def test_every_lint_rule_is_in_the_lint_page() -> None:
    text = (DOCS / "lint.md").read_text()
    for rule in RULES:
        assert f"| `{rule.name}` | {rule.severity} |" in text
