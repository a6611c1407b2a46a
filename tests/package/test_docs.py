"""docs/ stays true: every command and option a user meets is described."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from omh_git_memory.actions.lint import RULES
from omh_git_memory.cli import app
from tests.helpers import ROOT

DOCS = ROOT / "docs"


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


def _pages() -> dict[str, str]:
    root = DOCS.parent
    return {str(p.relative_to(root)): p.read_text() for p in [root / "README.md",
                                                              *sorted(DOCS.glob("*.md"))]}


def test_no_page_installs_omh_from_a_package_index() -> None:
    # docs/ci.md said `pip install omh-git-memory`; no index publishes it.
    import re

    for page, text in _pages().items():
        for command in re.findall(r"pip install ([^\n`]*)", text):
            for arg in command.split():
                assert not re.fullmatch(r"['\"]?omh-git-memory['\"]?", arg), (page, command)
    ci = (DOCS / "ci.md").read_text()
    assert 'pip install "git+https://' in ci


def test_the_lint_page_says_when_lint_fails() -> None:
    # It said "Only a refusal makes lint exit 1", but --ref fails on a dangling team link.
    text = (DOCS / "lint.md").read_text()
    intro = " ".join(text.split("\n\n")[1].split())
    assert "Only a refusal" not in intro
    assert "`--ref REV` or `--worktree`" in intro and "`DanglingLink` fails too" in intro


def test_the_mcp_page_says_codex_needs_a_trusted_project() -> None:
    text = " ".join((DOCS / "mcp.md").read_text().split())
    assert "only when you trust the project" in text
    assert 'trust_level = "trusted"' in (DOCS / "mcp.md").read_text()
