"""The recall index is derived: an old document's blob pruned by `git gc` after a
rewritten commit is no damage, recall builds afresh instead of failing."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import commit_files, git, omh


def test_recall_after_an_amended_document_is_pruned_rebuilds_its_index(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    commit_files(repo_dir, {"docs/deploy.md": "# Deploying\n\n## Rolling back\n\nRun it.\n"})
    first = omh(repo_dir, "memory", "recall", "rolling back a deploy")
    assert first.code == 0 and "docs/deploy" in first.out, first
    old = git(repo_dir, "rev-parse", "HEAD:docs/deploy.md").strip()
    (repo_dir / "docs/deploy.md").write_text("# Deploying\n\n## Rolling forward\n\nNever.\n")
    git(repo_dir, "commit", "-qa", "--amend", "-m", "docs, rewritten")
    git(repo_dir, "reflog", "expire", "--expire=now", "--all")
    git(repo_dir, "gc", "-q", "--prune=now")
    assert old not in git(repo_dir, "cat-file", "--batch-all-objects", "--batch-check")
    again = omh(repo_dir, "memory", "recall", "rolling forward")
    assert again.code == 0, again.err
    assert "docs/deploy" in again.out and "damaged" not in again.err
