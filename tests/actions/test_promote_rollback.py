"""Promote's holes from the mutation pass: the rollback after the branch
moved, git's index lock on every failure path and a live omh's lock, a note whose
file name disagrees with its key, `left_in_local`, finishing an interrupted
promote beside a user's own file, and a symlink committed under `.omh/notes`.

Each test states what a user sees (the branch, the index, the files, the notes of
each layer), not how promote gets there.

Found by mutation testing (the holes docs/records/mutation-holes.md lists);
was tests/test_holes_promote.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from omh_git_memory.actions.promote import promote
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import GitFailure
from omh_git_memory.model.faults import TRANSACTION
from tests.helpers import (
    Run,
    git,
    note_text,
    omh,
    promote_ready,
    resume,
    start_at_fault,
    wait_stopped,
)
from tests.helpers.repo import git_state

A = "surprise/holes-note-a"
B = "surprise/holes-note-b"
LEFTOVERS = {"index.lock", "omh-index.new", "omh-index.lock.pid"}


@pytest.fixture
def ready(repo_dir: Path) -> Path:
    """omh initialised and committed, two local notes A and B ready to promote."""
    assert promote_ready(repo_dir, "Holes note a.", "Holes note b.") == [A, B]
    return repo_dir


def _store(repo: Path) -> Path:
    return open_workspace(repo).local.root


def _local_bytes(repo: Path) -> dict[str, bytes]:
    root = _store(repo)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.md")}


def _leftovers(repo: Path) -> set[str]:
    return {p.name for p in (repo / ".git").iterdir()} & LEFTOVERS


def _in_head(repo: Path, path: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"HEAD:{path}"], cwd=repo,
                          check=False).returncode == 0


def _path(key: str) -> str:
    return f".omh/notes/{key}.md"


@contextlib.contextmanager
def _index_rename_fails(repo: Path) -> Iterator[None]:
    """The one write that puts the new index in place fails (a full disk, EIO):
    by then the commit exists and the branch has moved."""
    index = str(repo / ".git/index")
    real = os.replace

    def replace(src: object, dst: object, **kw: object) -> None:
        if os.fspath(dst) == index:  # type: ignore[call-overload]
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst, **kw)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(os, "replace", replace)
    try:
        yield
    finally:
        mp.undo()


# --- the rollback after the branch moved -----------------------------------------

def test_an_index_write_failing_after_the_commit_moves_the_branch_back(ready: Path) -> None:
    """The commit was created and the branch moved before the index write failed:
    the branch is moved back, the index, the working tree and the local notes are
    as they were, and the same promote run again succeeds."""
    before, local = git_state(ready), _local_bytes(ready)
    seen: list[str] = []
    real_point = __import__("omh_git_memory.model.faults", fromlist=["point"]).point

    def spy(name: str) -> None:  # records the branch the moment it moved
        if name == "commit:ref":
            seen.append(git(ready, "rev-parse", "HEAD").strip())
        real_point(name)

    with _index_rename_fails(ready), pytest.MonkeyPatch.context() as mp:
        mp.setattr("omh_git_memory.model.faults.point", spy)
        with pytest.raises(GitFailure, match="the commit was undone"):
            promote(open_workspace(ready), [A, B])
    assert seen and seen[0] != before[0].strip()  # the branch had moved
    assert git_state(ready) == before
    assert git(ready, "branch", "--contains", seen[0]) == ""  # the commit is on no branch
    assert not (ready / _path(A)).exists() and not (ready / _path(B)).exists()
    assert _local_bytes(ready) == local  # nothing lost
    assert _leftovers(ready) == set()
    done = omh(ready, "memory", "promote", A, B)
    assert done.code == 0, done.err
    assert _in_head(ready, _path(A)) and _in_head(ready, _path(B))
    assert git(ready, "status", "--porcelain") == ""


def test_the_index_write_failing_while_finishing_an_interrupted_promote(ready: Path) -> None:
    """A promote killed after the branch moved leaves the commit and its own lock;
    the promote that finishes it fails at the index write: the lock (taken over)
    stays, marked as abandoned (released, it would let `git commit -a` drop the
    note), HEAD keeps the commit, the local copy stays, and a
    third run finishes the job."""
    killed = omh(ready, "memory", "promote", A, env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -signal.SIGKILL
    assert (ready / ".git/index.lock").exists()  # the dead process's lock
    head, local = git(ready, "rev-parse", "HEAD"), _local_bytes(ready)
    with _index_rename_fails(ready), pytest.raises(GitFailure, match="run the command again"):
        promote(open_workspace(ready), [A])
    assert (ready / ".git/index.lock").exists()  # git still may not write the index
    assert git(ready, "rev-parse", "HEAD") == head
    assert not (ready / _path(A)).exists()  # the working-tree write was taken back
    assert _local_bytes(ready) == local
    done = omh(ready, "memory", "promote", A, "--json")
    assert done.code == 0, done.err
    assert done.json()["finished"] == [A]
    assert git(ready, "status", "--porcelain") == ""
    assert f"{A}.md" not in _local_bytes(ready)


# --- git's index lock on every failure path ------------------------------------

def _branch_moves_meanwhile(repo: Path) -> Run:
    proc = start_at_fault(repo, "commit:object:stop", "memory", "promote", A)
    wait_stopped(proc)
    other = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "someone else").strip()
    git(repo, "update-ref", "refs/heads/main", other)
    return resume(proc)


FAILURES = {
    **{point: (lambda repo, p=point: omh(repo, "memory", "promote", A,
                                          env={"OMH_FAULT": p, "OMH_FAULT_ERRNO": "EIO"}))
       for point in TRANSACTION},
    "branch-moved-meanwhile": _branch_moves_meanwhile,
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_no_index_lock_is_left_on_any_failure_path(ready: Path, failure: str) -> None:
    run = FAILURES[failure](ready)
    assert run.code == 1, (run.out, run.err)
    assert run.err.startswith("omh: ") and "Traceback" not in run.err
    assert _leftovers(ready) == set()
    assert not _in_head(ready, _path(A))
    assert f"{A}.md" in _local_bytes(ready)
    # git itself can take the index at once.
    (ready / "work.txt").write_text("the user's next commit\n")
    git(ready, "add", "work.txt")
    git(ready, "commit", "-qm", "work")


def test_a_live_omh_processs_lock_is_refused_not_taken_over(ready: Path) -> None:
    """One promote holds the index lock (stopped after writing its commit object);
    a second one must refuse as git would, leave that lock and its record exactly
    as they are, and the first one, let go, must finish its commit."""
    first = start_at_fault(ready, "commit:object:stop", "memory", "promote", A)
    try:
        wait_stopped(first)
        lock, record = ready / ".git/index.lock", ready / ".git/omh-index.lock.pid"
        held = (lock.read_bytes(), lock.stat().st_ino, record.read_bytes())
        second = omh(ready, "memory", "promote", B)
        assert second.code == 1, second.out
        assert "index.lock" in second.err and "another git command is running" in second.err
        assert (lock.read_bytes(), lock.stat().st_ino, record.read_bytes()) == held
    finally:
        run = resume(first)
    assert run.code == 0, run.err
    assert _in_head(ready, _path(A)) and not _in_head(ready, _path(B))
    assert _leftovers(ready) == set()
    assert f"{B}.md" in _local_bytes(ready)
    assert omh(ready, "memory", "promote", B).code == 0
    assert git(ready, "status", "--porcelain") == ""


def test_a_dead_omh_processs_lock_is_taken_over(ready: Path) -> None:
    killed = omh(ready, "memory", "promote", A, env={"OMH_FAULT": "commit:blobs"})
    assert killed.code == -signal.SIGKILL
    assert (ready / ".git/index.lock").exists()
    run = omh(ready, "memory", "promote", A)
    assert run.code == 0, run.err
    assert _leftovers(ready) == set()
    assert git(ready, "status", "--porcelain") == ""


# --- a note whose file name disagrees with its key --------------------------------

def test_promote_refuses_a_note_whose_file_name_disagrees_with_its_key(ready: Path) -> None:
    (_store(ready) / "filed-as.md").write_text(note_text("claims-key"))
    before, local = git_state(ready), _local_bytes(ready)
    by_key = omh(ready, "memory", "promote", "claims-key")
    assert by_key.code == 1
    assert "claims-key: its key and its file name disagree" in by_key.err
    assert "filed-as.md" in by_key.err
    by_file = omh(ready, "memory", "promote", "filed-as")
    assert by_file.code == 1
    assert "filed-as.md" in by_file.err and "claims-key" in by_file.err
    assert git_state(ready) == before and _local_bytes(ready) == local
    assert not _in_head(ready, ".omh/notes/claims-key.md")
    assert not _in_head(ready, ".omh/notes/filed-as.md")


# --- left_in_local -----------------------------------------------------------------

@contextlib.contextmanager
def _cannot_be_moved(path: Path) -> Iterator[None]:
    """Make `path` impossible to rename: an immutable file for root (chattr +i),
    a read-only directory for anybody else. Skips where neither works."""
    undo: list[str] = []
    if os.geteuid() == 0 and shutil.which("chattr"):
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0:
            undo = ["chattr", "-i", str(path)]
    elif os.geteuid() != 0:
        path.parent.chmod(0o555)
    probe = path.with_name(".probe")
    try:
        os.rename(path, probe)
    except OSError:
        pass
    else:
        os.rename(probe, path)
        path.parent.chmod(0o755)
        pytest.skip("cannot make a file impossible to rename here")
    try:
        yield
    finally:
        if undo:
            subprocess.run(undo, check=True)
        path.parent.chmod(0o755)


def test_a_local_copy_that_cannot_be_removed_is_reported_and_kept(ready: Path) -> None:
    local = _store(ready) / f"{A}.md"
    text = local.read_bytes()
    with _cannot_be_moved(local):
        run = omh(ready, "memory", "promote", A, B, "--json")
        assert run.code == 0, run.err
        out = run.json()
        assert out["left_in_local"] == [A] and out["changed_in_local"] == []
        assert sorted(out["promoted"]) == sorted([A, B])
        assert local.read_bytes() == text  # kept, and committed too
        assert _in_head(ready, _path(A)) and _in_head(ready, _path(B))
        assert f"{B}.md" not in _local_bytes(ready)
        plain = omh(ready, "memory", "promote", A)  # again: committed, copy still stuck
        assert plain.code == 0, plain.err
        assert f"the local copy of {A} could not be removed; remove it by hand" in plain.out
    again = omh(ready, "memory", "promote", A, "--json")
    assert again.code == 0, again.err
    assert again.json()["finished"] == [A] and again.json()["left_in_local"] == []
    assert not local.exists()
    assert git(ready, "status", "--porcelain") == ""


# --- finishing an interrupted promote beside the user's own file -----------------

@pytest.mark.parametrize("staged", [False, True], ids=["on-disk", "staged-then-edited"])
def test_finishing_an_interrupted_promote_keeps_the_users_own_file(
    ready: Path, staged: bool
) -> None:
    """Killed after the branch moved: the commit holds A, but the index and the
    working tree do not. The user then puts a file of their own at A's path (and
    maybe stages one version of it). Finishing the promote must keep both."""
    killed = omh(ready, "memory", "promote", A, env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -signal.SIGKILL
    mine = ready / _path(A)
    mine.parent.mkdir(parents=True, exist_ok=True)
    if staged:
        (ready / ".git/index.lock").unlink()  # the dead promote's, as git's message advises
        mine.write_text("my staged version\n")
        git(ready, "add", _path(A))
        staged_blob = git(ready, "rev-parse", f":{_path(A)}").strip()
    mine.write_text("my own version, not committed\n")
    run = omh(ready, "memory", "promote", A, "--json")
    assert mine.read_text() == "my own version, not committed\n"
    if staged:
        assert git(ready, "rev-parse", f":{_path(A)}").strip() == staged_blob
    assert _in_head(ready, _path(A))  # the committed note is there all along
    assert _leftovers(ready) == set()
    assert run.code == 0, run.err
    assert run.json()["finished"] == [A]
    assert f"{A}.md" not in _local_bytes(ready)  # HEAD holds it byte for byte
    # The user's work shows as their change against the committed note.
    assert git(ready, "status", "--porcelain", "--", _path(A)) == (
        f"MM {_path(A)}\n" if staged else f" M {_path(A)}\n")


# --- a symlink committed under .omh/notes ----------------------------------------

HIDDEN = note_text("smuggled", body="Zanzibar quokka tells.\n")


def _commit_symlink_whose_target_is_a_note(repo: Path, name: str) -> None:
    """A symlink entry (mode 120000) whose target text is a whole, valid note: read
    as a file, it would be one. Checked out too, so the working tree has it."""
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input=HIDDEN,
                          capture_output=True, text=True, check=True).stdout.strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"120000,{blob},{name}")
    git(repo, "commit", "-qm", "a symlink under .omh/notes")
    git(repo, "checkout", "HEAD", "--", name)
    assert (repo / name).is_symlink()


def _commit_symlink_to_a_note_file(repo: Path, name: str) -> None:
    """A real symlink to a valid note outside the checkout."""
    outside = repo.parent / "outside.md"
    outside.write_text(HIDDEN)
    link = repo / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a symlink under .omh/notes")


@pytest.mark.parametrize("make", [_commit_symlink_whose_target_is_a_note,
                                  _commit_symlink_to_a_note_file],
                         ids=["target-text-is-a-note", "points-at-a-note"])
@pytest.mark.parametrize("name", [".omh/notes/smuggled.md", ".omh/notes/sub/smuggled.md"])
def test_a_committed_symlink_is_reported_unreadable_never_read(
    ready: Path, make: object, name: str
) -> None:
    make(ready, name)  # type: ignore[operator]
    listed = omh(ready, "memory", "--json").json()
    assert "smuggled" not in {n["key"] for n in listed["notes"]}
    (bad,) = [u for u in listed["unreadable"] if u["layer"] == "team"]
    assert "symlink" in (bad["problem"] or "")
    for flag in (["--ref", "HEAD"], ["--worktree"], []):
        lint = omh(ready, "memory", "lint", *flag, "--json")
        assert lint.code == 1, (flag, lint.out)
        rules = [(f["rule"], f["layer"]) for f in lint.json()["findings"]
                 if "symlink" in f["message"]]
        assert rules == [("Unreadable", "team")], (flag, lint.out)
    recall = omh(ready, "memory", "recall", "zanzibar quokka", "--json")
    assert recall.code == 0, recall.err
    assert [r["key"] for r in recall.json()["results"]] == []
    shown = omh(ready, "memory", "show", "smuggled")
    assert shown.code == 1 and "Zanzibar" not in shown.out


def test_a_file_the_user_writes_at_the_path_while_promote_commits_is_kept(ready: Path) -> None:
    """The path was free when promote checked it; the user writes a file there after
    the branch moved and before the working tree is written. It is the user's: it
    stays, and shows as their change against the committed note."""
    proc = start_at_fault(ready, "commit:ref:stop", "memory", "promote", A, "--json")
    wait_stopped(proc)
    mine = ready / _path(A)
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("written by the user meanwhile\n")
    run = resume(proc)
    assert run.code == 0, run.err
    assert mine.read_text() == "written by the user meanwhile\n"
    assert _in_head(ready, _path(A)) and _leftovers(ready) == set()
    assert git(ready, "status", "--porcelain", "--", _path(A)) == f" M {_path(A)}\n"
    assert f"{A}.md" not in _local_bytes(ready)  # HEAD holds what was read


def test_an_interrupt_once_the_index_is_in_place_leaves_the_commit_whole(
        ready: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the lock's record is dropped, after the new index was renamed into
    place: the commit stands, with the index that holds it (not the branch moved back
    under an index that keeps the note staged), and promote again finishes the job."""
    from omh_git_memory.git.gitfiles import IndexLock

    real = IndexLock.drop_own_unfinished
    calls: list[int] = []

    def interrupted(self: IndexLock) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(IndexLock, "drop_own_unfinished", interrupted)
    run = omh(ready, "memory", "promote", A)
    assert run.code == 130, run.out + run.err
    monkeypatch.setattr(IndexLock, "drop_own_unfinished", real)
    assert f"omh: promote {A}" in git(ready, "log", "-1", "--format=%s")
    assert git(ready, "status", "--porcelain", "--", ".omh/notes") == ""  # index = HEAD
    assert not (ready / ".git" / "index.lock").exists()
    again = omh(ready, "memory", "promote", A)
    assert again.code == 0, again.err
    assert f"{A}.md" not in _local_bytes(ready)
