from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from omh_git_memory.actions.lint import RULES, Severity, lint, note_refusals
from omh_git_memory.model.note import parse
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.store import LocalStore
from tests.helpers import FIXTURES, note_text


def _expected() -> set[tuple[str, str, int | None]]:
    with (FIXTURES / "lint/expected.tsv").open() as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return {(r["rule"], r["file"], int(r["line"]) if r["line"] else None) for r in rows}


def _lint_dir(root: Path):  # type: ignore[no-untyped-def]
    return lint(Graph.of(LocalStore(root).scan()))


def test_the_rule_names_and_severities_are_the_published_ones() -> None:
    assert [(r.name, r.severity) for r in RULES] == [
        ("Unreadable", Severity.REFUSED),
        ("UnclosedFence", Severity.REFUSED),
        ("MissingSection", Severity.REFUSED),
        ("ProseInListSection", Severity.REFUSED),
        ("KeyDisagreesWithPath", Severity.REFUSED),
        ("UnevaluatableTrigger", Severity.REFUSED),
        ("LooksLikeSecret", Severity.REFUSED),
        ("DuplicateKey", Severity.WARNING),
        ("DanglingLink", Severity.WARNING),
        ("Orphan", Severity.WARNING),
        ("NearDuplicate", Severity.WARNING),
    ]


def test_a_store_with_one_violation_of_each_rule_names_each_rule_once(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "lint/store", tmp_path / "store")
    report = _lint_dir(tmp_path / "store")
    got = {(f.rule, Path(f.path).name, f.line) for f in report.findings}
    assert got == _expected()
    # LooksLikeSecret reads team notes only (tests/test_reliability_secrets.py).
    assert report.counts == {rule.name: int(rule.name != "LooksLikeSecret") for rule in RULES}
    assert report.refused


def test_warnings_alone_do_not_fail(tmp_path: Path) -> None:
    (tmp_path / "lonely.md").write_text(note_text("lonely", body="See [[missing]].\n"))
    report = _lint_dir(tmp_path)
    assert {f.rule for f in report.findings} == {"Orphan", "DanglingLink"}
    assert not report.refused


def test_links_make_notes_not_orphans_and_not_dangling(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(note_text("a", body="See [[b]].\n"))
    (tmp_path / "b.md").write_text(note_text("b", body="See [[a]].\n"))
    assert _lint_dir(tmp_path).findings == ()


@pytest.mark.parametrize(
    ("kind", "body", "rule"),
    [
        ("stub", "## Answers\n\nA paragraph, not a list.\n", "ProseInListSection"),
        ("surprise", "## Expected\nx\n\n## Observed\ny\n\n## Evidence\nz\n", "MissingSection"),
        ("topic", "```\nnever closed\n", "UnclosedFence"),
    ],
)
def test_the_write_path_refuses_what_lint_refuses(kind: str, body: str, rule: str) -> None:
    refusals = note_refusals(parse(note_text("k", kind, body)))
    assert [name for name, _, _ in refusals] == [rule]


def test_a_well_formed_trigger_is_accepted_and_a_bad_month_is_not() -> None:
    good = parse(note_text("k", invalidated_by="base:2026-09"))
    assert note_refusals(good) == []
    bad = parse(note_text("k", invalidated_by="base:2026-13"))
    assert [name for name, _, _ in note_refusals(bad)] == ["UnevaluatableTrigger"]


@pytest.mark.parametrize("link", ["[[gone]]", "[[ gone ]]"])
def test_a_dangling_link_is_named_at_its_prose_line_not_at_code_before_it(
    tmp_path: Path, link: str
) -> None:
    # line 10 is an indented code block showing the link, line 12 the link itself
    body = f"    {link}\n\nsee {link} here\n"
    (tmp_path / "k.md").write_text(note_text("k", body=body))
    found = [f for f in _lint_dir(tmp_path).findings if f.rule == "DanglingLink"]
    assert [(f.message, f.line) for f in found] == [("[[gone]] names no note in the store", 12)]
