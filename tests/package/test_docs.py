"""docs/ stays true: every command and option a user meets is described."""

from __future__ import annotations

import re
import tokenize
from pathlib import Path
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


# A citation by name ("invariant: rm never cascades"), and the kinds that point at
# nothing in the repository: a numbered invariant, an issue number, a page of the
# specification the project started from.
_CITATION = re.compile(r"\b(?:invariant|rule): ", re.IGNORECASE)
_POINTS_NOWHERE = re.compile(
    r"\binvariants? \d+|\bissues? #?\d+|\bthe\s+seed\b|\bseed\s+page", re.IGNORECASE)


def _prose(path: Path) -> str:
    """The comments and string literals of a Python file, as one line of words, so a
    name broken over two lines of a comment or a docstring reads whole."""
    with path.open("rb") as handle:
        tokens = [token.string.lstrip("#") for token in tokenize.tokenize(handle.readline)
                  if token.type in (tokenize.COMMENT, tokenize.STRING)]
    return " ".join(" ".join(tokens).split())


def _sources() -> list[Path]:
    return sorted(path for folder in ("omh_git_memory", "tests", "bench")
                  for path in (ROOT / folder).rglob("*.py"))


def test_every_invariant_and_rule_cited_is_in_the_invariants_page() -> None:
    names = [line[4:].lower() for line in (DOCS / "invariants.md").read_text().splitlines()
             if line.startswith("### ") and _CITATION.match(line[4:])]
    assert len(names) > 10, names
    unknown = []
    for path in _sources():
        prose = _prose(path)
        for found in _CITATION.finditer(prose):
            cited = prose[found.start():].lower()
            if not any(cited.startswith(name) for name in names):
                unknown.append(f"{path.relative_to(ROOT)}: {prose[found.start():][:60]}")
    assert not unknown, f"name these as docs/invariants.md does, or add them there: {unknown}"


def test_no_comment_cites_what_the_repository_does_not_hold() -> None:
    """A numbered invariant, an issue number or the specification's pages name
    something a reader of the repository cannot find: cite the invariant or rule by
    its name, or say what is meant."""
    found = [f"{path.relative_to(ROOT)}: {match.group()!r}" for path in _sources()
             for match in _POINTS_NOWHERE.finditer(_prose(path))]
    assert not found, found


def test_the_memory_toml_in_the_docs_is_the_file_init_writes(tmp_path: Path) -> None:
    """Byte for byte, comments included: what a user reads in the file is what the
    command reference shows (init names the repository after its folder)."""
    from omh_git_memory.actions.init import initialise
    from omh_git_memory.actions.workspace import open_workspace
    from tests.helpers import make_repo

    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    shown = page.split("<!-- memory-toml -->\n```toml\n", 1)[1].split("```\n", 1)[0]
    make_repo(tmp_path / "tinyhttp")
    initialise(open_workspace(tmp_path / "tinyhttp"))
    assert (tmp_path / "tinyhttp/.omh/memory.toml").read_text(encoding="utf-8") == shown


def test_the_readme_says_what_the_test_command_costs() -> None:
    """A newcomer about to run the second command learns first what it installs and
    how long it takes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = readme.split("What the second costs:", 1)[1].split("\n\n", 1)[0]
    assert "MB installed" in said and "minutes" in said and "semantic extra" in said
