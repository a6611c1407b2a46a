"""Lint's counts for recall's description: cached per fingerprint, linted in the
background when the store is too big to lint at start."""

from __future__ import annotations

import threading
from pathlib import Path

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.agent import lint_summary
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
