"""Lint's counts for recall's description: cached per fingerprint, linted in the
background when the store is too big to lint at start."""

from __future__ import annotations

import threading
from pathlib import Path

from omh_git_memory.actions import lint_summary
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import note_text, omh


def _wait_for_refresh() -> None:
    for thread in threading.enumerate():
        if thread.name == "omh-lint":
            thread.join(30)


def test_a_big_store_is_linted_in_the_background_for_the_next_start(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    ws = open_workspace(repo_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    big = lint_summary.LINT_AT_START + 1
    original = lint_summary.REFRESH_DELAY
    try:
        lint_summary.refresh_later.__defaults__ = (0.0,)
        assert lint_summary.summary_at_start(ws, big) is None  # not linted at start
        _wait_for_refresh()
    finally:
        lint_summary.refresh_later.__defaults__ = (original,)
    found = lint_summary.summary_at_start(ws, big)  # the cache, not a lint
    assert found is not None and found.refused == 1 and "UnclosedFence" in found.line()


def test_the_cache_is_for_one_fingerprint_and_a_broken_cache_is_ignored(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    ws = open_workspace(repo_dir)
    clean = lint_summary.summary_at_start(ws, 1)
    assert clean is not None and clean.line() == ""
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    assert lint_summary.cached(ws, lint_summary.fingerprint(ws)) is None
    path = lint_summary._cache_path(ws)
    path.write_bytes(b"garbage")
    assert lint_summary.summary_at_start(ws, 1) is not None  # linted again, not a crash


def test_a_whole_store_lint_keeps_its_counts_and_a_team_only_lint_does_not(
        repo_dir: Path) -> None:
    """`lint_workspace` over the whole store saves the counts recall's description
    shows (the CLI's job once); a lint of the team notes alone
    (--ref, --worktree) counts another set of notes and must not."""
    from omh_git_memory.actions.lint import lint_workspace
    from omh_git_memory.model.errors import BadArguments

    assert omh(repo_dir, "init").code == 0
    ws = open_workspace(repo_dir)
    (ws.local.root / "fence.md").write_text(note_text("fence", body="```\nopen\n"))
    assert lint_workspace(ws, worktree=True).report.refused == 0
    assert lint_workspace(ws, ref="HEAD").report.refused == 0
    assert lint_summary.cached(ws, lint_summary.fingerprint(ws)) is None
    linted = lint_workspace(ws)
    assert linted.failed and linted.report.refused == 1
    kept = lint_summary.cached(ws, lint_summary.fingerprint(ws))
    assert kept is not None and kept.refused == 1 and "UnclosedFence" in kept.line()
    try:
        lint_workspace(ws, ref="HEAD", worktree=True)
    except BadArguments as err:
        assert "--ref and --worktree" in str(err)
    else:
        raise AssertionError("--ref with --worktree was not refused")
