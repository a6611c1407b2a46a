"""`omh hooks install`: where the hooks go (`core.hooksPath` as git reads it), what
becomes of a hook already there, and the refusals (recall/hooks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import StoreError
from omh_git_memory.recall.hooks import HOOK_NAMES, MARKER, hook_text, hooks_dir, install
from tests.helpers import git, omh


def test_an_older_omh_hook_is_updated_without_force(repo_dir: Path) -> None:
    hook = repo_dir / ".git/hooks/post-merge"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(f"#!/bin/sh\n# {MARKER}\nomh memory reindex --old-flag\n")
    run = omh(repo_dir, "hooks", "install", "--json")
    assert run.code == 0, run.err
    assert {r["hook"]: r["action"] for r in run.json()} == {
        "post-merge": "updated", "post-checkout": "installed", "post-rewrite": "installed"}
    assert hook.read_text() == hook_text("post-merge")


def test_a_skipped_hook_says_why_and_the_others_are_still_installed(repo_dir: Path) -> None:
    mine = repo_dir / ".git/hooks/post-rewrite"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("#!/bin/sh\necho mine\n")
    results = {r.name: r for r in install(open_repo(repo_dir))}
    assert results["post-rewrite"].action == "skipped"
    assert "omh memory reindex" in results["post-rewrite"].reason
    assert [results[n].action for n in HOOK_NAMES[:2]] == ["installed", "installed"]
    assert results["post-merge"].reason == ""


def test_a_hooks_path_from_home_is_expanded_as_git_expands_it(
    repo_dir: Path, isolated_home: Path
) -> None:
    git(repo_dir, "config", "core.hooksPath", "~/my-hooks")
    assert hooks_dir(open_repo(repo_dir)) == isolated_home / "my-hooks"
    assert omh(repo_dir, "hooks", "install").code == 0
    assert MARKER in (isolated_home / "my-hooks/post-merge").read_text()


def test_a_hooks_path_inside_the_git_dir_is_written_there(repo_dir: Path) -> None:
    git(repo_dir, "config", "core.hooksPath", str(repo_dir / ".git/shared-hooks"))
    assert omh(repo_dir, "hooks", "install").code == 0
    assert MARKER in (repo_dir / ".git/shared-hooks/post-checkout").read_text()


def test_an_empty_hooks_path_is_the_git_dirs_hooks_folder(repo_dir: Path) -> None:
    git(repo_dir, "config", "core.hooksPath", "")
    assert hooks_dir(open_repo(repo_dir)) == repo_dir / ".git/hooks"


def test_a_hooks_path_that_is_the_checkout_itself_writes_at_its_top(
    repo_dir: Path,
) -> None:
    git(repo_dir, "config", "core.hooksPath", ".")
    assert hooks_dir(open_repo(repo_dir)) == repo_dir
    assert omh(repo_dir, "hooks", "install").code == 0
    assert MARKER in (repo_dir / "post-merge").read_text()


def test_a_hooks_path_through_a_link_outside_the_checkout_is_followed(
    repo_dir: Path, tmp_path: Path
) -> None:
    real = tmp_path / "real-hooks"
    real.mkdir()
    (tmp_path / "linked").symlink_to(real)
    git(repo_dir, "config", "core.hooksPath", str(tmp_path / "linked"))
    assert omh(repo_dir, "hooks", "install").code == 0
    assert MARKER in (real / "post-merge").read_text()


def test_a_relative_link_outside_the_checkout_is_followed_from_its_folder(
    repo_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "shared/hooks").mkdir(parents=True)
    (tmp_path / "shared/current").symlink_to("hooks")
    git(repo_dir, "config", "core.hooksPath", str(tmp_path / "shared/current"))
    assert hooks_dir(open_repo(repo_dir)) == tmp_path / "shared/hooks"


def test_a_hooks_path_in_a_loop_of_links_is_refused_in_one_line(
    repo_dir: Path, tmp_path: Path
) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    git(repo_dir, "config", "core.hooksPath", str(tmp_path / "a"))
    # A real process: were the loop followed for ever, the timeout fails the test.
    run = omh(repo_dir, "hooks", "install", timeout=60)
    assert run.code == 1
    (line,) = run.err.strip().splitlines()
    assert "too many symbolic links" in line and "git config core.hooksPath" in line
    assert not (repo_dir / ".git/hooks/post-merge").exists()


def test_forty_links_in_a_row_are_followed(repo_dir: Path, tmp_path: Path) -> None:
    # As the kernel: forty links on the way are followed, the forty-first is too many.
    (tmp_path / "hooks-0").mkdir()
    for n in range(1, 42):
        (tmp_path / f"hooks-{n}").symlink_to(tmp_path / f"hooks-{n - 1}")
    repo = open_repo(repo_dir)
    git(repo_dir, "config", "core.hooksPath", str(tmp_path / "hooks-40"))
    assert hooks_dir(open_repo(repo_dir)) == tmp_path / "hooks-0"
    git(repo_dir, "config", "core.hooksPath", str(tmp_path / "hooks-41"))
    with pytest.raises(StoreError, match="too many symbolic links"):
        hooks_dir(repo)


def test_a_hook_file_too_large_to_be_a_script_is_refused_untouched(repo_dir: Path) -> None:
    hook = repo_dir / ".git/hooks/post-merge"
    hook.parent.mkdir(parents=True, exist_ok=True)
    big = b"#" * ((1 << 20) + 1)  # one byte over a mebibyte
    hook.write_bytes(big)
    run = omh(repo_dir, "hooks", "install", "--force")
    assert run.code == 1
    assert "larger than" in run.err and "post-merge" in run.err
    assert hook.read_bytes() == big


def test_a_hook_omh_does_not_ship_is_named_with_what_to_do() -> None:
    with pytest.raises(StoreError, match=r"the pre-push hook script is missing.*reinstall omh"):
        hook_text("pre-push")
