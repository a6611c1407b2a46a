"""`omh memory stale` and `omh memory lint` (cli/checks.py) as text: each finding on
its line under its heading, keys padded to one width, the counts line, and the exit
status only `--check` (stale) or a refusal (lint) makes non-zero."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from omh_git_memory.actions.lint import RULES
from tests.helpers import FIXTURES, git, make_repo, note_text, omh
from tests.helpers.notes import remembered


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "app"
    make_repo(path, {"src/app.py": "def parse_header(x):\n    return x\n",
                     "Dockerfile": "FROM debian:12\n", "README.md": "# App\n"})
    return path


def _lines(repo: Path, kind: str) -> list[str]:
    """The lines `stale` prints for each finding of `kind`, built from its --json."""
    rows = omh(repo, "memory", "stale", "--json").json()[kind]
    width = max(len(r["key"]) for r in rows)
    return [f"  {r['key'].ljust(width)}  {r['layer']} · {r['recorded']}  {r['trigger']}: "
            f"{r['reason']}" for r in sorted(rows, key=lambda r: str(r["key"]))]


def test_stale_as_text_lists_each_finding_under_its_heading(repo: Path) -> None:
    changed = remembered(repo, "App parses.", trigger="file:src/app.py")
    gone = remembered(repo, "The header parser is defined in the app.",
                      trigger="symbol:parse_header")
    unknown = remembered(repo, "Base is bookworm.", trigger="base:2026-09")
    remembered(repo, "Docker base.", trigger="file:Dockerfile")
    first = omh(repo, "memory", "stale")
    assert first.code == 0, first.err
    assert first.out.splitlines() == [  # nothing stale: the unknown one is still listed
        "cannot tell (1):", *_lines(repo, "unknown"),
        "4 notes with a trigger checked at HEAD: 0 stale, 1 cannot tell, 3 fresh"]
    assert unknown in first.out
    (repo / "src/app.py").write_text("print('no parser')\n")
    git(repo, "commit", "-qam", "the parser goes")
    run = omh(repo, "memory", "stale")
    assert run.code == 0, run.err  # without --check, stale notes are no failure
    stale = _lines(repo, "stale")
    assert len(stale) == 2 and changed in run.out and gone in run.out
    assert len({line.index(" local · ") for line in stale}) == 1  # one width for the keys
    assert run.out.splitlines() == [
        "stale (2):", *stale, "cannot tell (1):", *_lines(repo, "unknown"),
        "4 notes with a trigger checked at HEAD: 2 stale, 1 cannot tell, 1 fresh"]
    assert omh(repo, "memory", "stale", "--check").code == 1


def _rule_table(counts: dict[str, int]) -> list[str]:
    """The table lint prints: each rule, its severity and its count, in RULES' order."""
    width = max(len(rule.name) for rule in RULES)
    return [f"  {rule.name.ljust(width)}  {rule.severity:<7}  {counts[rule.name]}"
            for rule in RULES]


def test_lint_as_text_names_each_finding_by_path_and_line_then_the_table(
        repo_dir: Path) -> None:
    store = repo_dir.parent / "store"
    shutil.copytree(FIXTURES / "lint/store", store)
    env = {"OMH_LOCAL_STORE": str(store)}
    report = omh(repo_dir, "memory", "lint", "--json", env=env).json()
    found = report["findings"]
    assert any(f["line"] for f in found) and any(not f["line"] for f in found)
    run = omh(repo_dir, "memory", "lint", env=env)
    assert run.code == 1
    refusals = sum(1 for f in found if f["severity"] == "refused")
    assert run.out.splitlines() == [
        *(f"{f['path']}:{f['line']}: {f['rule']} ({f['severity']}): {f['message']}"
          if f["line"] else f"{f['path']}: {f['rule']} ({f['severity']}): {f['message']}"
          for f in found),
        "", *_rule_table(report["counts"]),
        f"{report['notes']} notes read from {report['read']}: {refusals} refusals, "
        f"{len(found) - refusals} warnings"]


def test_lint_of_a_clean_store_prints_the_table_alone(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "lint")
    assert run.code == 0, run.out
    counts = omh(repo_dir, "memory", "lint", "--json").json()["counts"]
    assert run.out.splitlines()[:-1] == _rule_table(counts)  # no blank line first
    assert run.out.splitlines()[-1].endswith(": 0 refusals, 0 warnings")


def test_lint_ref_fails_on_a_dangling_team_link_and_says_why(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "a.md").write_text(note_text("a", body="## Related\n\n- [[no-such-note]]\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a dangling team link")
    run = omh(repo_dir, "memory", "lint", "--ref", "HEAD")
    assert run.code == 1
    assert run.out.endswith("\nfailed: a team note links to a key no team note has\n")
    assert "0 refusals" in run.out


def test_lint_given_ref_and_worktree_says_to_give_one_before_reading_the_ref(
        repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "lint", "--ref", "no-such-rev", "--worktree")
    assert run.code != 0 and run.out == ""
    assert "--ref and --worktree name two different sets of notes; give one" in run.err
