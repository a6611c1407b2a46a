"""The plain files around a commit (omh_git_memory/git/gitfiles.py): what a failure
is called, why a path cannot be written, git's index lock and its takeover, and
working-tree writes that never follow a symlink and can be undone.

Real files in temp folders; a full disk is played by a stand-in for `os.statvfs`,
the one thing a test cannot make for real. Found by mutation testing: each case
kills a mutant of gitfiles.py that no test caught before.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pygit2
import pytest

from omh_git_memory.git import gitfiles, nofollow
from omh_git_memory.git.gitfiles import (
    IndexLock,
    WorkdirUndo,
    alive,
    describe,
    disk_full,
    disk_obstacle,
    read_nofollow,
    refusal,
)
from omh_git_memory.model.errors import GitFailure
from tests.helpers import make_repo

MIB = 1 << 20


def _statvfs(monkeypatch: pytest.MonkeyPatch, free: int, files: int = 1000,
             favail: int = 1000) -> None:
    """The file system reports `free` bytes free to an unprivileged writer."""
    info = SimpleNamespace(f_bavail=free // 512, f_frsize=512, f_files=files, f_favail=favail)
    monkeypatch.setattr(gitfiles.os, "statvfs", lambda _where: info)


@pytest.fixture(autouse=True)
def no_hangup() -> Iterator[None]:
    """`alive` probes a pid with signal 0, and the pid it probes most is this test
    run's own: a real signal sent there would end the whole run, not fail one test,
    so a hang-up received fails the test instead."""
    received: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, _frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert received == [], "the test process was sent SIGHUP"


@pytest.fixture
def umask() -> Iterator[int]:
    """The usual umask, 022, for the test."""
    previous = os.umask(0o022)
    try:
        yield 0o022
    finally:
        os.umask(previous)


# --- describe: what a failure is called ---------------------------------------------


def test_describe_says_a_missing_key_without_stray_quotes() -> None:
    assert describe(KeyError("refs/heads/main")) == "refs/heads/main"


def test_describe_names_a_key_error_with_no_key_as_coming_without_a_reason() -> None:
    assert describe(KeyError()) == "KeyError without a reason from libgit2"


def test_describe_keeps_every_argument_of_an_error_other_than_a_key_error() -> None:
    assert describe(RuntimeError("first", "second")) == "('first', 'second')"


def test_describe_drops_libgit2s_dangling_colon() -> None:
    err = pygit2.GitError("failed to lock file '/r/.git/index.lock' for writing: ")
    assert describe(err) == "failed to lock file '/r/.git/index.lock' for writing"


@pytest.mark.parametrize("said", ["(no error)", "None", ""])
def test_describe_names_libgit2s_empty_reasons(said: str) -> None:
    assert describe(pygit2.GitError(said)) == "GitError without a reason from libgit2"


def test_describe_says_the_disk_is_full_from_the_errno_alone() -> None:
    assert describe(OSError(errno.ENOSPC, "write error")) == (
        "the disk is full; free some space and run the command again")


def test_describe_says_the_disk_is_full_from_libgit2s_words_alone() -> None:
    err = pygit2.GitError("failed to write object: No space left on device")
    assert describe(err) == "the disk is full; free some space and run the command again"


def test_describe_says_the_quota_is_exceeded_from_the_errno_alone() -> None:
    assert describe(OSError(errno.EDQUOT, "write error")) == (
        "your disk quota is exceeded; free some space and run the command again")


def test_describe_says_the_quota_is_exceeded_from_libgit2s_words_alone() -> None:
    err = pygit2.GitError("failed to write: Disk Quota Exceeded")
    assert describe(err) == (
        "your disk quota is exceeded; free some space and run the command again")


def test_describe_names_the_file_an_os_error_is_about() -> None:
    err = OSError(errno.EACCES, "Permission denied", "/r/.git/objects")
    assert describe(err) == "Permission denied: /r/.git/objects"


def test_describe_of_an_os_error_without_a_file_is_its_reason() -> None:
    assert describe(OSError(errno.EIO, "Input/output error")) == "Input/output error"


def test_describe_names_a_full_disk_as_the_cause_of_a_silent_failure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _statvfs(monkeypatch, free=MIB - 512)
    assert describe(pygit2.GitError("(no error)"), tmp_path) == (
        "the disk is full (GitError without a reason from libgit2); free some space and "
        "run the command again")


def test_describe_with_room_on_the_disk_is_the_reason_alone(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _statvfs(monkeypatch, free=100 * MIB)
    assert describe(pygit2.GitError("object not found"), tmp_path) == "object not found"


def test_describe_checks_no_disk_without_a_place(monkeypatch: pytest.MonkeyPatch) -> None:
    _statvfs(monkeypatch, free=0)
    assert describe(pygit2.GitError("object not found")) == "object not found"


# --- disk_full ----------------------------------------------------------------------


def test_disk_full_below_one_mebibyte_free(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    _statvfs(monkeypatch, free=MIB - 512)
    assert disk_full(tmp_path) == "the disk is full"


@pytest.mark.parametrize("free", [MIB, MIB + MIB // 2])
def test_disk_full_not_with_a_mebibyte_or_more_free(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path, free: int) -> None:
    _statvfs(monkeypatch, free=free)
    assert disk_full(tmp_path) is None


def test_disk_full_when_no_inode_is_left(monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    _statvfs(monkeypatch, free=100 * MIB, files=1000, favail=0)
    assert disk_full(tmp_path) == "the disk has no free inodes left (it is full)"


def test_disk_full_not_where_the_file_system_counts_no_inodes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _statvfs(monkeypatch, free=100 * MIB, files=0, favail=0)
    assert disk_full(tmp_path) is None


def test_disk_full_of_a_real_folder_with_room_and_of_a_missing_one(tmp_path: Path) -> None:
    assert disk_full(tmp_path) is None
    assert disk_full(tmp_path / "missing") is None


# --- refusal: why a path cannot be written ------------------------------------------


def test_refusal_of_a_symlink_at_the_path_says_remove_it() -> None:
    assert refusal("a.md", "a symlink", "on disk", "a.md") == (
        "a.md is a symlink on disk; omh never writes through a symlink: remove it")


def test_refusal_of_a_committed_symlinked_folder_says_git_rm_it() -> None:
    assert refusal("notes", "a symlink", "in HEAD", "notes/a.md") == (
        "notes is a symlink in HEAD; omh never writes through a symlink: replace it with a "
        "plain directory (git rm it and commit)")


def test_refusal_of_a_symlinked_folder_on_disk_says_replace_it() -> None:
    assert refusal("notes", "a symlink", "on disk", "notes/a.md") == (
        "notes is a symlink on disk; omh never writes through a symlink: replace it with a "
        "plain directory")


def test_refusal_of_a_submodule() -> None:
    assert refusal("notes", "a submodule", "in HEAD", "notes/a.md") == (
        "notes is a submodule in HEAD; team notes live in a plain directory: remove it "
        "(git rm) and commit")


def test_refusal_of_another_repository() -> None:
    assert refusal("notes", "another repository", "on disk", "notes/a.md") == (
        "notes is another git repository on disk (it holds .git): move it away")


def test_refusal_of_a_file_above_the_path_and_at_it() -> None:
    assert refusal("notes", "a file", "in HEAD", "notes/a.md") == (
        "notes is a file in HEAD, so nothing can be written below it as notes/a.md: "
        "choose another key, or move it away")
    assert refusal("a.md", "a directory", "on disk", "a.md") == (
        "a.md is a directory on disk: choose another key, or move it away")


# --- disk_obstacle ------------------------------------------------------------------


def test_disk_obstacle_none_for_a_missing_path_and_a_missing_folder(tmp_path: Path) -> None:
    assert disk_obstacle(tmp_path, "a.md", b"x") is None
    assert disk_obstacle(tmp_path, "notes/deep/a.md", b"x") is None


def test_disk_obstacle_refuses_a_symlink_at_the_path_and_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "notes").symlink_to(tmp_path / "elsewhere")
    assert disk_obstacle(tmp_path, "notes/a.md", b"x") == refusal(
        "notes", "a symlink", "on disk", "notes/a.md")
    (tmp_path / "a.md").symlink_to(tmp_path / "missing")
    assert disk_obstacle(tmp_path, "a.md", None) == refusal(
        "a.md", "a symlink", "on disk", "a.md")


def test_disk_obstacle_refuses_a_file_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "notes").write_bytes(b"")
    assert disk_obstacle(tmp_path, "notes/a.md", b"x") == refusal(
        "notes", "a file", "on disk", "notes/a.md")


def test_disk_obstacle_refuses_another_repository_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "notes" / ".git").mkdir(parents=True)
    assert disk_obstacle(tmp_path, "notes/a.md", b"x") == refusal(
        "notes", "another repository", "on disk", "notes/a.md")


def test_disk_obstacle_passes_a_plain_folder_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_bytes(b"x")
    assert disk_obstacle(tmp_path, "notes/a.md", b"x") is None


def test_disk_obstacle_refuses_a_directory_and_a_fifo_at_the_path(tmp_path: Path) -> None:
    (tmp_path / "a.md").mkdir()
    assert disk_obstacle(tmp_path, "a.md", None) == refusal(
        "a.md", "a directory", "on disk", "a.md")
    os.mkfifo(tmp_path / "b.md")
    assert disk_obstacle(tmp_path, "b.md", None) == refusal(
        "b.md", "a special file", "on disk", "b.md")


def test_disk_obstacle_refuses_a_file_holding_other_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"the user's\n")
    assert disk_obstacle(tmp_path, "a.md", b"omh's\n", b"committed\n") == (
        "a.md exists on disk with other content, which omh will not overwrite: commit it "
        "or move it away")


def test_disk_obstacle_passes_a_file_holding_the_new_or_the_committed_bytes(
        tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"committed\n")
    assert disk_obstacle(tmp_path, "a.md", b"omh's\n", b"committed\n") is None
    assert disk_obstacle(tmp_path, "a.md", b"committed\n") is None
    assert disk_obstacle(tmp_path, "a.md", None) is None


def test_disk_obstacle_says_a_name_that_cannot_be_examined(tmp_path: Path) -> None:
    long = "n" * 300
    assert disk_obstacle(tmp_path, long, b"x") == (
        f"{long} cannot be examined: File name too long: {tmp_path / long}")


# --- IndexLock ----------------------------------------------------------------------


def _git_dir(tmp_path: Path) -> Path:
    make_repo(tmp_path / "repo")
    return tmp_path / "repo" / ".git"


def _left_by_a_dead_process(git_dir: Path, landed: bool = False) -> None:
    """An omh process takes the index lock (and, with `landed`, records a commit) and
    dies holding it."""
    script = ("import sys; from pathlib import Path; "
              "from omh_git_memory.git.gitfiles import IndexLock; "
              "lock = IndexLock(Path(sys.argv[1])); lock.acquire(); "
              "sys.argv[2:] and lock.landed('refs/heads/main', None, 'f' * 40)")
    args = [sys.executable, "-c", script, str(git_dir)] + (["landed"] if landed else [])
    subprocess.run(args, check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_index_lock_holds_its_pid_and_a_nonce_its_record_names(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    record = json.loads((git_dir / "omh-index.lock.pid").read_text())
    assert (git_dir / "index.lock").read_text() == f"omh {os.getpid()} {record['nonce']}\n"
    info = os.stat(git_dir / "index.lock")
    assert (record["pid"], record["dev"], record["ino"], record["size"],
            record["mtime_ns"]) == (os.getpid(), info.st_dev, info.st_ino, info.st_size,
                                    info.st_mtime_ns)
    lock.release()
    assert sorted(p.name for p in git_dir.glob("*lock*")) == []


def test_index_lock_refuses_gits_own_lock(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    (git_dir / "index.lock").write_bytes(b"")
    with pytest.raises(GitFailure, match=r"index\.lock exists: another git command is running"):
        IndexLock(git_dir).acquire()
    assert (git_dir / "index.lock").read_bytes() == b""


def test_index_lock_refuses_a_live_processs_lock(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    IndexLock(git_dir).acquire()  # held by this process, which lives
    assert IndexLock(git_dir).left_by_dead_omh() is False
    with pytest.raises(GitFailure, match="exists"):
        IndexLock(git_dir).acquire()


def test_index_lock_takes_over_a_dead_processs_lock(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir)
    assert IndexLock(git_dir).left_by_dead_omh() is True
    lock = IndexLock(git_dir)
    lock.acquire()
    assert (git_dir / "index.lock").read_text().startswith(f"omh {os.getpid()} ")
    assert lock.read_unfinished() is None  # it had landed nothing


def test_index_lock_takeover_keeps_the_commit_the_dead_process_landed(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir, landed=True)
    (git_dir / "omh-unfinished.json").unlink()  # as if removed by hand: the record has it
    lock = IndexLock(git_dir)
    lock.acquire()
    assert lock.read_unfinished() == {"branch": "refs/heads/main", "old": None,
                                      "new": "f" * 40}


def test_index_lock_refuses_a_takeover_when_the_job_cannot_be_kept(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir, landed=True)
    (git_dir / "omh-unfinished.json").unlink()
    (git_dir / "omh-unfinished.json").mkdir()  # nothing can be renamed over it
    with pytest.raises(GitFailure, match=r"cannot take over .*index\.lock, which an omh "
                                         r"process killed mid-way left"):
        IndexLock(git_dir).acquire()
    assert (git_dir / "index.lock").exists()


def _rewrite_record(git_dir: Path, **changes: object) -> None:
    path = git_dir / "omh-index.lock.pid"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("change", [{"host": "elsewhere"}, {"pidns": "pid:[1]"},
                                    {"nonce": "0" * 32}, {"size": 0}, {"ino": 1},
                                    {"dev": 1}, {"mtime_ns": 1}, {"pid": "x"}, {}])
def test_index_lock_refuses_a_lock_its_record_does_not_prove(
        tmp_path: Path, change: dict[str, object]) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir)
    if change:
        _rewrite_record(git_dir, **change)
    else:  # the lock removed and put back by hand: same bytes, another file
        data = (git_dir / "index.lock").read_bytes()
        (git_dir / "index.lock").unlink()
        (git_dir / "index.lock").write_bytes(data)
    assert IndexLock(git_dir).left_by_dead_omh() is False
    with pytest.raises(GitFailure, match="exists"):
        IndexLock(git_dir).acquire()


def test_index_lock_refuses_a_record_with_a_field_missing(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir)
    path = git_dir / "omh-index.lock.pid"
    record = json.loads(path.read_text())
    del record["mtime_ns"]
    path.write_text(json.dumps(record))
    assert IndexLock(git_dir).left_by_dead_omh() is False


def test_index_lock_refuses_a_dead_processs_record_beside_a_symlinked_lock(
        tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir)
    (git_dir / "index.lock").rename(git_dir / "moved")
    (git_dir / "index.lock").symlink_to(git_dir / "moved")
    assert IndexLock(git_dir).left_by_dead_omh() is False


def test_index_lock_abandoned_by_a_live_process_is_taken_over(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    first = IndexLock(git_dir)
    first.acquire()
    first.abandon()
    assert first.record is None
    assert json.loads((git_dir / "omh-index.lock.pid").read_text())["abandoned"] is True
    second = IndexLock(git_dir)
    second.acquire()
    assert second.record is not None
    assert json.loads((git_dir / "omh-index.lock.pid").read_text()).get("abandoned") is None


def test_index_lock_landed_records_the_move_in_both_files(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    lock.landed("refs/heads/main", "a" * 40, "b" * 40)
    owner = json.loads((git_dir / "omh-index.lock.pid").read_text())
    move = {"branch": "refs/heads/main", "old": "a" * 40, "new": "b" * 40}
    assert owner["landed"] == move
    assert lock.read_unfinished() == {**move, **{k: owner[k] for k in
                                                 ("pid", "host", "pidns", "nonce")}}
    job = lock.read_unfinished()
    assert job is not None and lock.unfinished_is_live(job) is True
    lock.drop_own_unfinished()
    assert lock.read_unfinished() is None


def test_index_lock_keeps_another_locks_unfinished_job(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    (git_dir / "omh-unfinished.json").write_text(json.dumps({"nonce": "someone else's"}))
    lock = IndexLock(git_dir)
    lock.drop_own_unfinished()  # holding no lock: nothing of its own
    lock.acquire()
    lock.drop_own_unfinished()
    assert lock.read_unfinished() == {"nonce": "someone else's"}
    lock.drop_unfinished()
    assert lock.read_unfinished() is None
    lock.drop_unfinished()  # twice is fine


@pytest.mark.parametrize("text", ["not json", "[1, 2]"])
def test_index_lock_reads_no_job_from_a_damaged_file(tmp_path: Path, text: str) -> None:
    git_dir = _git_dir(tmp_path)
    (git_dir / "omh-unfinished.json").write_text(text)
    assert IndexLock(git_dir).read_unfinished() is None


def _live_job(lock: IndexLock) -> dict[str, object]:
    lock.acquire()
    lock.landed("refs/heads/main", None, "b" * 40)
    job = lock.read_unfinished()
    assert job is not None
    return job


@pytest.mark.parametrize("change", [{"host": "elsewhere"}, {"pidns": "pid:[1]"},
                                    {"nonce": "0" * 32}, {"pid": "x"}])
def test_unfinished_is_not_live_unless_it_names_this_lock(
        tmp_path: Path, change: dict[str, object]) -> None:
    lock = IndexLock(_git_dir(tmp_path))
    assert lock.unfinished_is_live({**_live_job(lock), **change}) is False


def test_unfinished_recorded_at_a_takeover_is_not_live(tmp_path: Path) -> None:
    lock = IndexLock(_git_dir(tmp_path))
    job = _live_job(lock)
    del job["pid"]
    assert lock.unfinished_is_live(job) is False


def test_unfinished_of_a_dead_process_or_without_a_lock_is_not_live(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    _left_by_a_dead_process(git_dir, landed=True)
    lock = IndexLock(git_dir)
    job = lock.read_unfinished()
    assert job is not None and lock.unfinished_is_live(job) is False
    mine = IndexLock(_git_dir(tmp_path / "other"))
    job = _live_job(mine)
    mine.path.unlink()
    assert mine.unfinished_is_live(job) is False


def test_unfinished_of_an_abandoned_lock_is_not_live(tmp_path: Path) -> None:
    lock = IndexLock(_git_dir(tmp_path))
    job = _live_job(lock)
    lock.abandon()
    assert lock.unfinished_is_live(job) is False


def test_index_lock_commit_puts_the_staged_index_in_place(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    lock.landed("refs/heads/main", None, "b" * 40)
    lock.staged.write_bytes(b"new index")
    lock.commit(lock.staged)
    assert (git_dir / "index").read_bytes() == b"new index"
    assert [p.name for p in git_dir.iterdir() if p.name.startswith(("omh-", "index."))] == []


def test_index_lock_release_keeps_a_record_another_process_wrote(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    (git_dir / "omh-index.lock.pid").write_text("another's")
    lock.release()
    assert not (git_dir / "index.lock").exists()
    assert (git_dir / "omh-index.lock.pid").read_text() == "another's"
    lock.release()  # holding nothing: nothing happens
    lock.abandon()
    assert (git_dir / "omh-index.lock.pid").read_text() == "another's"


def test_index_lock_discard_removes_the_staged_index(tmp_path: Path) -> None:
    lock = IndexLock(_git_dir(tmp_path))
    lock.staged.write_bytes(b"new index")
    lock.discard()
    lock.discard()
    assert not lock.staged.exists()


def test_index_lock_that_cannot_be_made_says_why(tmp_path: Path) -> None:
    # A git dir whose path is just short enough to open, and index.lock's too long.
    git_dir = tmp_path
    while len(str(git_dir)) < 4090 - 200:
        git_dir = git_dir / ("d" * 200)
    git_dir = git_dir / ("d" * (4090 - len(str(git_dir)) - 1))
    git_dir.mkdir(parents=True)
    assert len(str(git_dir)) == 4090
    with pytest.raises(GitFailure, match=r"^cannot lock the index at .*index\.lock: File name "
                                         r"too long: "):
        IndexLock(git_dir).acquire()


def test_index_lock_whose_record_cannot_be_written_is_not_left_behind(tmp_path: Path) -> None:
    git_dir = _git_dir(tmp_path)
    (git_dir / "omh-index.lock.pid").mkdir()  # nothing can be renamed over it
    (git_dir / "omh-index.lock.pid" / "x").write_bytes(b"")
    with pytest.raises(GitFailure, match=r"^cannot lock the index at .*index\.lock: "):
        IndexLock(git_dir).acquire()
    assert not (git_dir / "index.lock").exists()


def test_the_lock_its_record_and_what_undo_writes_have_the_usual_modes(
        tmp_path: Path, umask: int) -> None:
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    modes = {name: stat.S_IMODE(os.stat(git_dir / name).st_mode)
             for name in ("index.lock", "omh-index.lock.pid")}
    lock.release()
    assert modes == {"index.lock": 0o644, "omh-index.lock.pid": 0o644}
    work = tmp_path / "work"
    work.mkdir()
    assert WorkdirUndo(work).write("notes/a.md", b"x") is True
    assert stat.S_IMODE(os.stat(work / "notes").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(work / "notes" / "a.md").st_mode) == 0o644


def test_unfinished_is_not_live_through_a_symlinked_lock(tmp_path: Path) -> None:
    lock = IndexLock(_git_dir(tmp_path))
    job = _live_job(lock)
    (tmp_path / "elsewhere").write_bytes(lock.path.read_bytes())  # the very line it holds
    lock.path.unlink()
    lock.path.symlink_to(tmp_path / "elsewhere")
    assert lock.unfinished_is_live(job) is False


def test_without_proc_the_lock_names_no_pid_namespace_and_still_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git_dir = _git_dir(tmp_path)

    def no_proc(path: str, *_: object, **__: object) -> str:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)

    monkeypatch.setattr(os, "readlink", no_proc)  # as where there is no /proc
    lock = IndexLock(git_dir)
    lock.acquire()
    assert json.loads(lock.owner.read_text())["pidns"] == ""
    lock.release()
    assert not lock.path.exists()


def test_alive_counts_another_accounts_process_as_running(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests run as root, whom no process refuses a signal: a stand-in refuses it.
    def not_yours(pid: int, sig: int) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "kill", not_yours)
    assert alive(1) is True


def test_alive_of_this_process_and_of_a_finished_one() -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    assert alive(os.getpid()) is True
    assert alive(int(done.stdout)) is False


# --- WorkdirUndo and read_nofollow --------------------------------------------------


def test_undo_removes_a_new_file_and_the_folders_made_for_it(tmp_path: Path) -> None:
    undo = WorkdirUndo(tmp_path)
    assert undo.write("notes/deep/a.md", b"omh's\n") is True
    assert (tmp_path / "notes/deep/a.md").read_bytes() == b"omh's\n"
    assert undo.run() == []
    assert list(tmp_path.iterdir()) == []


def test_undo_keeps_a_folder_the_user_put_a_file_in(tmp_path: Path) -> None:
    undo = WorkdirUndo(tmp_path)
    undo.write("notes/a.md", b"omh's\n")
    (tmp_path / "notes" / "mine.md").write_bytes(b"mine")
    assert undo.run() == []
    assert [p.name for p in (tmp_path / "notes").iterdir()] == ["mine.md"]


def test_undo_keeps_a_file_the_user_wrote_over_omhs(tmp_path: Path) -> None:
    undo = WorkdirUndo(tmp_path)
    undo.write("a.md", b"omh's\n")
    (tmp_path / "a.md").rename(tmp_path / "omhs.md")  # moved aside: its inode stays taken
    (tmp_path / "a.md").write_bytes(b"mine\n")
    assert undo.run() == []
    assert (tmp_path / "a.md").read_bytes() == b"mine\n"


def test_undo_puts_back_a_clean_copy_it_replaced(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    assert undo.write("a.md", b"omh's\n", replaceable=b"committed\n") is True
    assert (tmp_path / "a.md").read_bytes() == b"omh's\n"
    assert undo.run() == []
    assert (tmp_path / "a.md").read_bytes() == b"committed\n"


def test_undo_write_leaves_the_users_file_and_an_unchanged_one(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"mine\n")
    undo = WorkdirUndo(tmp_path)
    assert undo.write("a.md", b"omh's\n", replaceable=b"committed\n") is False
    assert undo.write("a.md", b"omh's\n") is False
    assert undo.write("a.md", b"mine\n") is False
    assert (tmp_path / "a.md").read_bytes() == b"mine\n"
    assert undo.run() == []
    assert (tmp_path / "a.md").read_bytes() == b"mine\n"


def test_undo_puts_back_a_deleted_file(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("notes/a.md", b"committed\n")
    assert not (tmp_path / "notes" / "a.md").exists()
    assert undo.run() == []
    assert (tmp_path / "notes" / "a.md").read_bytes() == b"committed\n"


def test_undo_delete_keeps_the_users_bytes_and_a_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"mine\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("a.md", b"committed\n")
    undo.delete("a.md", None)
    undo.delete("gone/a.md", b"committed\n")
    assert (tmp_path / "a.md").read_bytes() == b"mine\n"
    assert undo.deleted == []


def test_undo_lists_a_deleted_file_it_cannot_put_back(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("a.md", b"committed\n")
    (tmp_path / "a.md").write_bytes(b"mine\n")  # the user wrote it meanwhile
    assert undo.run() == ["a.md"]
    assert (tmp_path / "a.md").read_bytes() == b"mine\n"


def test_undo_lists_a_file_below_a_link_and_still_puts_the_rest_back(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("b.md", b"committed\n")
    undo.write("notes/a.md", b"omh's\n")
    (tmp_path / "notes").rename(tmp_path / "moved")
    (tmp_path / "notes").symlink_to(tmp_path / "moved")  # a link where its folder was
    assert undo.run() == ["notes/a.md"]
    assert (tmp_path / "moved" / "a.md").read_bytes() == b"omh's\n"
    assert (tmp_path / "b.md").read_bytes() == b"committed\n"


def test_undo_goes_on_past_a_file_whose_folder_the_user_removed(tmp_path: Path) -> None:
    undo = WorkdirUndo(tmp_path)
    undo.write("one/a.md", b"omh's\n")
    undo.write("two/b.md", b"omh's\n")
    shutil.rmtree(tmp_path / "two")
    assert undo.run() == []
    assert list(tmp_path.iterdir()) == []


def test_undo_keeps_a_link_the_user_put_where_omhs_file_was(tmp_path: Path) -> None:
    undo = WorkdirUndo(tmp_path)
    undo.write("a.md", b"omh's\n")
    (tmp_path / "a.md").rename(tmp_path / "kept.md")
    (tmp_path / "a.md").symlink_to("kept.md")  # a link to the very file omh wrote
    assert undo.run() == []
    assert (tmp_path / "a.md").is_symlink()


def test_undo_of_a_deleted_file_the_user_put_back_as_it_was_is_no_failure(
        tmp_path: Path) -> None:
    (tmp_path / "a.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("a.md", b"committed\n")
    (tmp_path / "a.md").write_bytes(b"committed\n")
    assert undo.run() == []
    assert (tmp_path / "a.md").read_bytes() == b"committed\n"


def test_undo_lists_a_deleted_file_below_a_link_and_puts_the_rest_back(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_bytes(b"committed\n")
    (tmp_path / "b.md").write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("notes/a.md", b"committed\n")
    undo.delete("b.md", b"committed\n")
    (tmp_path / "notes").rename(tmp_path / "moved")
    (tmp_path / "notes").symlink_to(tmp_path / "moved")  # a link where its folder was
    assert undo.run() == ["notes/a.md"]
    assert not (tmp_path / "moved" / "a.md").exists()
    assert (tmp_path / "b.md").read_bytes() == b"committed\n"


def test_undo_lists_a_deleted_file_it_fails_to_write_and_puts_the_rest_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.md", "b.md"):
        (tmp_path / name).write_bytes(b"committed\n")
    undo = WorkdirUndo(tmp_path)
    undo.delete("a.md", b"committed\n")
    undo.delete("b.md", b"committed\n")
    put = nofollow.put

    def full_for_a(fd: int, name: str, data: bytes, **kwargs: Any) -> bool:
        if name == "a.md":  # a full disk, played by a stand-in
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return put(fd, name, data, **kwargs)

    monkeypatch.setattr(nofollow, "put", full_for_a)
    assert undo.run() == ["a.md"]
    assert (tmp_path / "b.md").read_bytes() == b"committed\n"


def test_undo_without_a_working_tree_does_nothing(tmp_path: Path) -> None:
    undo = WorkdirUndo(None)
    assert undo.write("a.md", b"x") is False
    undo.delete("a.md", b"x")
    assert undo.run() == []


def test_undo_write_refuses_a_file_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "notes").write_bytes(b"")
    with pytest.raises(GitFailure, match="notes is not a plain directory on disk"):
        WorkdirUndo(tmp_path).write("notes/a.md", b"x")


def test_undo_write_names_the_first_folder_that_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "notes").write_bytes(b"")
    with pytest.raises(GitFailure, match=r"^notes is not a plain directory on disk"):
        WorkdirUndo(tmp_path).write("notes/deep/a.md", b"x")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
def test_a_refused_write_leaves_no_folder_open(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    undo = WorkdirUndo(tmp_path)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(GitFailure, match=r"^link is not a plain directory"):
            undo.write("link/a.md", b"x")
    assert len(os.listdir("/proc/self/fd")) == before


def test_read_nofollow_reads_a_regular_file_through_plain_folders(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_bytes(b"x" * (MIB + 1))
    assert read_nofollow(tmp_path, "notes/a.md") == b"x" * (MIB + 1)


def test_read_nofollow_reads_nothing_but_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_bytes(b"")
    (tmp_path / "a.md").symlink_to(tmp_path / "real" / "a.md")
    os.mkfifo(tmp_path / "fifo")
    for path in ("link/a.md", "file/a.md", "a.md", "fifo", "real", "missing/a.md", "missing"):
        assert read_nofollow(tmp_path, path) is None, path


def _padded(path: Path, size: int) -> None:
    """The JSON record at `path`, its object padded with blanks to `size` bytes."""
    text = path.read_text(encoding="utf-8")
    path.write_text("{" + " " * (size - len(text)) + text[1:], encoding="utf-8")


@pytest.mark.parametrize(("size", "read"), [(4096, True), (4097, False)])
def test_a_record_longer_than_omh_ever_writes_is_not_read(tmp_path: Path, size: int,
                                                          read: bool) -> None:
    # omh's records stay under 3.5 KB (a ref name is at most 1,024 bytes); one past
    # the 4 KiB read is no record of omh's, and is never read whole
    git_dir = _git_dir(tmp_path)
    lock = IndexLock(git_dir)
    lock.acquire()
    lock.landed("refs/heads/main", None, "f" * 40)
    lock.abandon()
    job = lock.read_unfinished()
    assert job is not None
    _padded(git_dir / "omh-index.lock.pid", size)
    _padded(git_dir / "omh-unfinished.json", size)
    assert IndexLock(git_dir).left_by_dead_omh() is read
    assert (IndexLock(git_dir).read_unfinished() is not None) is read
    # this process lives and holds the lock: only a record read says it gave it up
    assert IndexLock(git_dir).unfinished_is_live(job) is not read
