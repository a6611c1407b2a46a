"""Finishing what a killed omh process left (omh_git_memory/git/recovery.py's
finish_interrupted): which jobs are finished, which are dropped with a warning or
quietly, which locks are taken over or left alone, and what a finish keeps of the
user's.

In-process against real repositories: `killed_after_landing` (tests/helpers/repo.py)
leaves a repository as an omh process killed just after moving its branch does;
the git CLI plays the user.

Found by mutation testing (docs/records/mutation-passes.md): each case kills a
mutant of recovery.py that no test caught before.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pygit2
import pytest

from omh_git_memory.git.gitfiles import IndexLock
from omh_git_memory.git.recovery import finish_interrupted
from omh_git_memory.git.repository import open_repo
from omh_git_memory.model.errors import GitFailure
from tests.helpers import IDENTITY, git, make_repo
from tests.helpers.repo import killed_after_landing

LEFTOVERS = ("index.lock", "omh-index.lock.pid", "omh-unfinished.json", "omh-index.new")


def _leftovers(path: Path) -> list[str]:
    return [name for name in LEFTOVERS if (path / ".git" / name).exists()]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "omh"]


def _moved_on(path: Path) -> str:
    """The user commits on top of HEAD (git's lock is omh's, so not with the CLI)."""
    r = pygit2.Repository(str(path))
    head = r.head.peel(pygit2.Commit)
    signature = pygit2.Signature(*IDENTITY)
    return str(r.create_commit("HEAD", signature, signature, "mine", head.tree.id, [head.id]))


def _elsewhere(new: str, head: str) -> str:
    return (f"omh: an interrupted omh command had committed {new[:12]} on main without "
            f"updating the index and working tree; HEAD is at {head} now, so omh left both "
            "as they are: check `git status` before you commit")


def test_a_job_whose_lock_was_removed_by_hand_is_finished(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"a.md": "a\n"})
    _, new = killed_after_landing(path, {"a.md": b"changed\n", "b.md": b"b\n"},
                                  lock_left=False)
    assert finish_interrupted(open_repo(path)) == new
    assert (path / "a.md").read_bytes() == b"changed\n"
    assert (path / "b.md").read_bytes() == b"b\n"
    assert git(path, "status", "--porcelain") == ""
    assert _leftovers(path) == []


def test_a_dead_omh_processs_lock_with_no_job_is_only_released(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    lock = IndexLock(path / ".git")
    lock.acquire()
    lock.abandon()  # taken, then left: as by an omh process killed before its branch moved
    head = git(path, "rev-parse", "HEAD")
    assert finish_interrupted(open_repo(path)) is None
    assert _leftovers(path) == []
    assert git(path, "rev-parse", "HEAD") == head
    assert git(path, "status", "--porcelain") == ""


def test_gits_own_lock_with_no_job_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    (path / ".git" / "index.lock").write_bytes(b"")  # a git command at work
    assert finish_interrupted(open_repo(path)) is None
    assert _leftovers(path) == ["index.lock"]


def test_a_job_on_a_branch_moved_on_since_is_dropped_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    _, new = killed_after_landing(path, {"b.md": b"b\n"})
    mine = _moved_on(path)
    with caplog.at_level(logging.WARNING, logger="omh"):
        assert finish_interrupted(open_repo(path)) is None
    assert _warnings(caplog) == [_elsewhere(new, f"{mine[:12]} (main)")]
    assert not (path / "b.md").exists()
    assert _leftovers(path) == []


def test_a_job_left_behind_a_detached_head_is_dropped_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    old, new = killed_after_landing(path, {"b.md": b"b\n"})
    assert old is not None
    pygit2.Repository(str(path)).set_head(pygit2.Oid(hex=old))
    with caplog.at_level(logging.WARNING, logger="omh"):
        assert finish_interrupted(open_repo(path)) is None
    assert _warnings(caplog) == [_elsewhere(new, f"{old[:12]} (a detached HEAD)")]
    assert not (path / "b.md").exists()


def test_a_job_no_branch_holds_is_dropped_quietly(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    old, _ = killed_after_landing(path, {"b.md": b"b\n"})
    assert old is not None
    pygit2.Repository(str(path)).references.create("refs/heads/main", old, force=True)
    with caplog.at_level(logging.WARNING, logger="omh"):
        assert finish_interrupted(open_repo(path)) is None
    assert _warnings(caplog) == []
    assert not (path / "b.md").exists()
    assert _leftovers(path) == []


def test_a_job_whose_commit_is_no_hex_is_dropped_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    old, _ = killed_after_landing(path, {"b.md": b"b\n"}, lock_left=False)
    damaged = "é" * 40  # cannot be told: omh says so rather than finish or stay silent
    (path / ".git" / "omh-unfinished.json").write_text(json.dumps(
        {"branch": "refs/heads/main", "old": old, "new": damaged}), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="omh"):
        assert finish_interrupted(open_repo(path)) is None
    head = git(path, "rev-parse", "HEAD").strip()
    assert _warnings(caplog) == [_elsewhere(damaged, f"{head[:12]} (main)")]
    assert _leftovers(path) == []


@pytest.mark.parametrize("field", ["branch", "old", "new"])
def test_a_damaged_job_is_dropped_and_nothing_changes(
        field: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    old, new = killed_after_landing(path, {"b.md": b"b\n"}, lock_left=False)
    job: dict[str, object] = {"branch": "refs/heads/main", "old": old, "new": new}
    job[field] = 5 if field != "branch" else None
    (path / ".git" / "omh-unfinished.json").write_text(json.dumps(job), encoding="utf-8")
    index = (path / ".git" / "index").read_bytes()
    with caplog.at_level(logging.WARNING, logger="omh"):
        assert finish_interrupted(open_repo(path)) is None
    assert _warnings(caplog) == []
    assert not (path / "b.md").exists()
    assert (path / ".git" / "index").read_bytes() == index
    assert _leftovers(path) == []


def test_the_first_commit_of_an_unborn_branch_is_finished(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    pygit2.init_repository(str(path), initial_head="main")
    old, new = killed_after_landing(path, {"team/a.md": b"a\n"})
    assert old is None
    assert finish_interrupted(open_repo(path)) == new
    assert (path / "team" / "a.md").read_bytes() == b"a\n"
    assert git(path, "status", "--porcelain") == ""
    assert _leftovers(path) == []


def test_a_change_to_a_symlink_is_skipped_and_the_files_after_it_are_finished(
        tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    _, new = killed_after_landing(path, {"a-link": b"README.md", "b.md": b"b\n"},
                                  symlinks=("a-link",))
    assert finish_interrupted(open_repo(path)) == new
    assert (path / "b.md").read_bytes() == b"b\n"
    assert git(path, "ls-files", "--stage", "b.md").split()[1] == \
        git(path, "rev-parse", "HEAD:b.md").strip()
    assert not os.path.lexists(path / "a-link")  # omh never writes a symlink


def test_a_deleted_file_the_user_staged_again_keeps_their_entry(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    make_repo(path, {"a.md": "a\n", "c.md": "c\n"})
    _, new = killed_after_landing(path, {"a.md": None, "c.md": None}, lock_left=False)
    (path / "a.md").write_text("mine\n", encoding="utf-8")
    git(path, "add", "a.md")
    mine = git(path, "rev-parse", ":a.md").strip()
    assert finish_interrupted(open_repo(path)) == new
    assert git(path, "rev-parse", ":a.md").strip() == mine
    assert (path / "a.md").read_text(encoding="utf-8") == "mine\n"
    assert not (path / "c.md").exists()  # untouched since: the commit's deletion is done
    assert git(path, "ls-files").split() == ["a.md"]


def test_a_failed_finish_names_the_commit_and_keeps_the_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "repo"
    make_repo(path)
    _, new = killed_after_landing(path, {"b.md": b"b\n"})
    monkeypatch.setenv("OMH_FAULT", "commit:finish")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "EIO")
    with pytest.raises(GitFailure) as caught:
        finish_interrupted(open_repo(path))
    assert str(caught.value) == (
        f"an interrupted omh command left its commit {new[:12]} on refs/heads/main "
        "unfinished, and finishing it failed (Input/output error); run the command again")
    assert not (path / "b.md").exists()
    monkeypatch.delenv("OMH_FAULT")
    assert finish_interrupted(open_repo(path)) == new
    assert (path / "b.md").read_bytes() == b"b\n"
    assert _leftovers(path) == []



@pytest.mark.parametrize("lock_left", [True, False])
def test_a_job_on_a_branch_with_the_longest_name_git_allows_is_finished(
        tmp_path: Path, lock_left: bool) -> None:
    # libgit2 takes ref names of up to 1,024 bytes; JSON writes each two-byte character
    # as six, so the records beside the lock reach about 3.4 KB, under the 4 KiB read
    branch = "x/" + "/".join(["ж" * 100] * 5) + "/y" + "ж" * 2
    assert len(f"refs/heads/{branch}".encode()) == 1023  # one byte more is refused
    path = tmp_path / "repo"
    make_repo(path, {"a.md": "a\n"})
    git(path, "checkout", "-q", "-b", branch)
    _, new = killed_after_landing(path, {"a.md": b"changed\n"}, lock_left=lock_left)
    assert len((path / ".git" / "omh-unfinished.json").read_bytes()) > 3000
    assert finish_interrupted(open_repo(path)) == new
    assert (path / "a.md").read_bytes() == b"changed\n"
    assert git(path, "status", "--porcelain") == ""
    assert _leftovers(path) == []
