"""Holes the mutation pass found in the incremental recall index.

An index of a new commit is built from the newest one on disk: what did not
change is reused. What is reused must still be true of the new commit: a stub
keeps the day its document last changed and the repository topic is dated as of
the commit it is derived from (invariant: every answer shows its layer and date,
and the date is true), and a document that was replaced is no longer found by the
words it used to hold.

Found by mutation testing (the holes it left: docs/records/mutation-holes.md);
was tests/test_holes_index.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import commit_files, omh


def _commit(repo: Path, monkeypatch: pytest.MonkeyPatch, when: str,
            files: dict[str, str | None]) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"{when}T12:00:00+0000")
    commit_files(repo, files, f"commit of {when}")


def _reindex(repo: Path) -> dict[str, Any]:
    run = omh(repo, "memory", "reindex", "--json")
    assert run.code == 0, run.err
    data: dict[str, Any] = run.json()
    return data


def _recall(repo: Path, question: str) -> list[dict[str, Any]]:
    run = omh(repo, "memory", "recall", question, "--json")
    assert run.code == 0, run.err  # a removed document left in the postings crashed here
    results: list[dict[str, Any]] = run.json()["results"]
    return results


def _shown(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for r in results for d in (r, *r["neighbours"])]


def _listed(repo: Path) -> dict[str, dict[str, Any]]:
    return {n["key"]: n for n in omh(repo, "memory", "--json").json()["notes"]}


DOC = "# Building\n\n## Running the tests\n"


def test_a_reused_stub_keeps_its_documents_date_and_the_topic_the_commits(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was: every reused derived note carried the new commit's date, so every
    document looked written on the day of the last commit."""
    _commit(repo_dir, monkeypatch, "2026-03-01", {"docs/build.md": DOC})
    _reindex(repo_dir)
    # A change that touches no document and nothing the topic is made of.
    _commit(repo_dir, monkeypatch, "2026-07-15", {"assets/data.txt": "data\n"})
    built = _reindex(repo_dir)
    assert built["analysed"] == 0 and built["reused"] == 3  # two stubs and the topic
    shown = {d["key"]: d["recorded"] for d in _shown(_recall(repo_dir, "running the tests"))}
    assert shown["docs/build"] == "2026-03-01" and shown["repo"] == "2026-07-15"
    listed = _listed(repo_dir)
    assert listed["docs/build"]["recorded"] == "2026-03-01"
    assert listed["repo"]["recorded"] == "2026-07-15"


def test_a_reused_stub_is_dated_like_one_built_afresh(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(repo_dir, monkeypatch, "2026-03-01", {"docs/build.md": DOC})
    _reindex(repo_dir)
    _commit(repo_dir, monkeypatch, "2026-07-15", {"assets/data.txt": "data\n"})
    incremental = _listed(repo_dir)
    assert omh(repo_dir, "memory", "reindex", "--full").code == 0
    assert _listed(repo_dir) == incremental


MAKE = {"Makefile": "all:\n\ttrue\n"}


def test_a_replaced_topic_is_not_found_by_its_old_words(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(repo_dir, monkeypatch, "2026-03-01", MAKE)
    _reindex(repo_dir)
    assert "repo" in {r["key"] for r in _recall(repo_dir, "built with make")}
    # The topic is made of the top-level files: swapping them replaces it.
    _commit(repo_dir, monkeypatch, "2026-03-02", {"Makefile": None, "Cargo.toml": "[package]\n"})
    built = _reindex(repo_dir)
    assert built["analysed"] == 1  # the topic, and nothing else
    assert _recall(repo_dir, "built with make") == []
    assert "repo" in {r["key"] for r in _recall(repo_dir, "rust crate")}


def test_a_topic_replaced_after_being_reused_is_not_found_by_its_old_words(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The topic's words are kept beside the index (it cannot be re-read from git):
    # a snapshot that reused the topic must still know them when it is replaced.
    _commit(repo_dir, monkeypatch, "2026-03-01", MAKE)
    _reindex(repo_dir)
    _commit(repo_dir, monkeypatch, "2026-03-02", {"assets/data.txt": "data\n"})
    assert _reindex(repo_dir)["analysed"] == 0
    _commit(repo_dir, monkeypatch, "2026-03-03", {"Makefile": None, "Cargo.toml": "[package]\n"})
    assert _reindex(repo_dir)["analysed"] == 1
    assert _recall(repo_dir, "built with make") == []


def test_a_replaced_stub_is_not_found_by_its_old_words(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _commit(repo_dir, monkeypatch, "2026-03-01", {"docs/build.md": DOC})
    _reindex(repo_dir)
    assert [r["key"] for r in _recall(repo_dir, "running")] == ["docs/build"]
    _commit(repo_dir, monkeypatch, "2026-03-02", {"docs/build.md": "# Building\n\n## Quokkas\n"})
    _reindex(repo_dir)
    assert _recall(repo_dir, "running") == []
    assert [r["key"] for r in _recall(repo_dir, "quokkas")] == ["docs/build"]


def test_an_incremental_topic_holds_what_a_rebuild_holds(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The topic counts source files anywhere in the tree and names one of each
    # language: a file added in a folder changes it, though no top-level file moved.
    _commit(repo_dir, monkeypatch, "2026-03-01", {"src/app.py": "x = 1\n"})
    _reindex(repo_dir)
    _commit(repo_dir, monkeypatch, "2026-03-02", {"lib/zanzibar.rs": "fn main() {}\n"})
    _reindex(repo_dir)
    incremental = _recall(repo_dir, "zanzibar rust")
    assert omh(repo_dir, "memory", "reindex", "--full").code == 0
    assert _recall(repo_dir, "zanzibar rust") == incremental
    assert "repo" in {r["key"] for r in incremental}


def test_a_licence_in_a_folder_changes_the_topic_incrementally_too(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `LICENSE*` matches `LICENSES/MIT.txt`: a marker file need not be top-level.
    _commit(repo_dir, monkeypatch, "2026-03-01", {"src/app.py": "x = 1\n"})
    _reindex(repo_dir)
    _commit(repo_dir, monkeypatch, "2026-03-02", {"LICENSES/MIT.txt": "MIT\n"})
    _reindex(repo_dir)
    incremental = _recall(repo_dir, "licence")
    assert "repo" in {r["key"] for r in incremental}
    assert omh(repo_dir, "memory", "reindex", "--full").code == 0
    assert _recall(repo_dir, "licence") == incremental
