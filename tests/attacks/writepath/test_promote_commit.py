"""The git write path (promote's commit) under attack: symlinks and submodules in the
way, git's own live lock, failures after the branch moved, a full disk, a sparse
index. Test names start with their class (escape, gitstate) for the report.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.faults import TRANSACTION
from omh_git_memory.model.keys import Key
from tests.helpers import git, make_repo, note_text, omh
from tests.helpers.notes import remembered
from tests.helpers.repo import git_state, init_committed

NOTE = "surprise/write-path-note"
NOTE_PATH = f".omh/notes/{NOTE}.md"


def _setup(repo: Path) -> None:
    """omh initialised and committed, one local note ready to promote."""
    init_committed(repo)
    remembered(repo, "Write path note.")


def _layers(repo: Path) -> set[tuple[str, str]]:
    notes = omh(repo, "memory", "--json").json()["notes"]
    return {(n["layer"], n["key"]) for n in notes}


def _no_leftovers(repo: Path) -> None:
    names = {p.name for p in (repo / ".git").iterdir()}
    assert not names & {"index.lock", "omh-index.new", "omh-index.lock.pid"}, names


def _one_line(err: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) >= 1 and lines[0].startswith("omh: "), err
    assert "(no error)" not in err and "None" not in err and "Traceback" not in err, err
    assert "internal error" not in err, err


def _tree_mode(repo: Path, path: str) -> str:
    return git(repo, "ls-tree", "HEAD", path).split(" ")[0]


# --- escape: a symlink or a submodule in the way ---------------------------------

@pytest.mark.parametrize("where", [".omh", ".omh/notes", ".omh/notes/surprise"])
def test_escape_a_committed_symlinked_directory_is_never_written_through(
    repo_dir: Path, tmp_path: Path, where: str
) -> None:
    _setup(repo_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    target = repo_dir / where
    if target.exists():
        for item in target.iterdir():  # keep what was there (memory.toml) beside the link
            item.rename(outside / item.name)
        target.rmdir()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a symlink in the way")
    before_outside = sorted(p.name for p in outside.rglob("*"))
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1, run.err
    _one_line(run.err)
    assert where in run.err and "symlink" in run.err
    assert sorted(p.name for p in outside.rglob("*")) == before_outside  # nothing written there
    assert git_state(repo_dir) == before
    assert _tree_mode(repo_dir, where) == "120000"  # the symlink was not replaced in the tree
    assert ("local", NOTE) in _layers(repo_dir)
    _no_leftovers(repo_dir)


def test_escape_a_committed_symlink_at_the_notes_own_path(repo_dir: Path, tmp_path: Path) -> None:
    _setup(repo_dir)
    outside = tmp_path / "outside.md"
    outside.write_text("not yours\n")
    link = repo_dir / NOTE_PATH
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a symlink at the note's path")
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert "symlink" in run.err and NOTE_PATH in run.err
    assert outside.read_text() == "not yours\n"
    assert git_state(repo_dir) == before
    _no_leftovers(repo_dir)


@pytest.mark.parametrize("where", [".omh/notes", ".omh/notes/surprise"])
def test_escape_a_symlink_on_disk_but_not_in_the_tree(
    repo_dir: Path, tmp_path: Path, where: str
) -> None:
    _setup(repo_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = repo_dir / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)  # untracked: git status shows it, the tree does not hold it
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert where in run.err and "symlink" in run.err
    assert list(outside.rglob("*")) == []
    assert git_state(repo_dir) == before
    _no_leftovers(repo_dir)


def test_escape_a_symlink_put_in_place_before_an_interrupted_promote_is_finished(
    repo_dir: Path, tmp_path: Path
) -> None:
    """The finishing path (a note HEAD already holds) writes the working tree too."""
    _setup(repo_dir)
    killed = omh(repo_dir, "memory", "promote", NOTE, env={"OMH_FAULT": "commit:ref"})
    assert killed.code < 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo_dir / ".omh/notes").mkdir(exist_ok=True)
    (repo_dir / ".omh/notes/surprise").symlink_to(outside)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert "symlink" in run.err
    assert list(outside.rglob("*")) == []
    lock = repo_dir / ".git/index.lock"  # the dead promote's, to be taken over later
    assert not lock.exists() or (repo_dir / ".git/omh-index.lock.pid").exists()
    (repo_dir / ".omh/notes/surprise").unlink()
    assert omh(repo_dir, "memory", "promote", NOTE).code == 0
    assert list(outside.rglob("*")) == []
    assert not lock.exists()
    assert git(repo_dir, "status", "--porcelain") == ""


def test_escape_a_submodule_in_the_way_is_refused(repo_dir: Path) -> None:
    _setup(repo_dir)
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    git(repo_dir, "update-index", "--add", "--cacheinfo", f"160000,{head},.omh/notes")
    git(repo_dir, "commit", "-qm", "a gitlink where the notes go")
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert ".omh/notes" in run.err and "submodule" in run.err
    assert git_state(repo_dir) == before
    assert _tree_mode(repo_dir, ".omh/notes") == "160000"


def test_escape_a_staged_symlink_in_the_way_is_kept_and_refused(
    repo_dir: Path, tmp_path: Path
) -> None:
    _setup(repo_dir)
    (repo_dir / ".omh/notes").symlink_to(tmp_path)
    git(repo_dir, "add", ".omh/notes")
    (repo_dir / ".omh/notes").unlink()  # staged as a symlink, gone from disk
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert ".omh/notes" in run.err and "staged" in run.err
    assert git_state(repo_dir) == before


# --- gitstate: git's own lock ----------------------------------------------------

WAITING_EDITOR = """#!/bin/sh
while [ ! -e "$GO" ]; do sleep 0.05; done
echo "work from the user" > "$1"
"""


def test_gitstate_a_stale_pid_file_never_takes_over_gits_live_lock(
    repo_dir: Path, tmp_path: Path
) -> None:
    _setup(repo_dir)
    killed = omh(repo_dir, "memory", "promote", NOTE, env={"OMH_FAULT": "commit:blobs"})
    assert killed.code < 0
    lock = repo_dir / ".git/index.lock"
    assert lock.exists()
    lock.unlink()  # as git's own message advises
    (repo_dir / "README.md").write_text("changed by the user\n")
    editor = tmp_path / "editor.sh"
    editor.write_text(WAITING_EDITOR)
    editor.chmod(0o755)
    go = tmp_path / "go"
    env = {**os.environ, "GIT_EDITOR": str(editor), "GO": str(go)}
    commit = subprocess.Popen(["git", "commit", "-a"], cwd=repo_dir, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not lock.exists():
            assert time.monotonic() < deadline and commit.poll() is None
            time.sleep(0.02)
        held = lock.stat()
        run = omh(repo_dir, "memory", "promote", NOTE)
        assert run.code == 1
        _one_line(run.err)
        assert "index.lock" in run.err
        assert lock.exists() and lock.stat().st_ino == held.st_ino  # git's lock, untouched
    finally:
        go.write_text("")
        _out, err = commit.communicate(timeout=60)
    assert commit.returncode == 0, err
    assert (repo_dir / ".git/index").stat().st_size > 0
    assert git(repo_dir, "log", "-1", "--format=%s").strip() == "work from the user"
    assert git(repo_dir, "status", "--porcelain") == ""
    assert ("local", NOTE) in _layers(repo_dir)


def _hold_lock(repo: str, held: object, done: object) -> None:
    from omh_git_memory.git.gitfiles import IndexLock
    from omh_git_memory.git.repository import open_repo

    lock = IndexLock(open_repo(Path(repo)).git_dir)
    lock.acquire()
    held.set()  # type: ignore[attr-defined]
    done.wait(60)  # type: ignore[attr-defined]
    lock.release()


def test_gitstate_a_live_omh_processs_lock_is_never_taken_over(repo_dir: Path) -> None:
    _setup(repo_dir)
    ctx = multiprocessing.get_context("fork")
    held, done = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(repo_dir), held, done))
    holder.start()
    try:
        assert held.wait(30)
        lock = repo_dir / ".git/index.lock"
        before = lock.read_bytes(), lock.stat().st_ino
        run = omh(repo_dir, "memory", "promote", NOTE)
        assert run.code == 1
        _one_line(run.err)
        assert "index.lock" in run.err
        assert (lock.read_bytes(), lock.stat().st_ino) == before
    finally:
        done.set()
        holder.join(30)
    assert omh(repo_dir, "memory", "promote", NOTE).code == 0


def test_gitstate_a_lock_recorded_in_the_old_way_is_not_taken_over(repo_dir: Path) -> None:
    """A pid alone proves nothing about whose lock it is."""
    _setup(repo_dir)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (repo_dir / ".git/omh-index.lock.pid").write_text(dead.stdout.strip())
    (repo_dir / ".git/index.lock").write_bytes(b"")
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    assert (repo_dir / ".git/index.lock").exists()


# --- gitstate: the undo restores everything --------------------------------------

def test_gitstate_an_untracked_file_where_the_notes_directory_goes(repo_dir: Path) -> None:
    _setup(repo_dir)
    (repo_dir / ".omh/notes").write_text("untracked work\n")
    (repo_dir / "staged.txt").write_text("staged\n")
    git(repo_dir, "add", "staged.txt")
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1
    _one_line(run.err)
    assert ".omh/notes" in run.err
    assert git_state(repo_dir) == before
    assert (repo_dir / ".omh/notes").read_text() == "untracked work\n"
    assert ("local", NOTE) in _layers(repo_dir)
    _no_leftovers(repo_dir)


def test_gitstate_a_key_below_a_team_note_is_refused(repo_dir: Path) -> None:
    _setup(repo_dir)
    notes = repo_dir / ".omh/notes"
    notes.mkdir()
    (notes / "a.md").write_text(note_text("a"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team note a")
    ws = open_workspace(repo_dir)
    ws.local.write(Key("a.md/x"), lambda k: note_text(k.value))
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", "a.md/x")
    assert run.code == 1
    _one_line(run.err)
    assert ".omh/notes/a.md" in run.err
    assert git_state(repo_dir) == before
    assert _tree_mode(repo_dir, ".omh/notes/a.md") == "100644"  # the team note stays
    _no_leftovers(repo_dir)


@pytest.mark.parametrize("point", TRANSACTION)
@pytest.mark.parametrize("code", ["ENOSPC", "EIO"])
def test_gitstate_a_failure_inside_the_commit_restores_index_tree_and_branch(
    repo_dir: Path, point: str, code: str
) -> None:
    """Including after the branch moved and the working tree was written."""
    _setup(repo_dir)
    (repo_dir / "staged.txt").write_text("staged\n")
    git(repo_dir, "add", "staged.txt")
    (repo_dir / "README.md").write_text("unstaged\n")
    before = git_state(repo_dir)
    run = omh(repo_dir, "memory", "promote", NOTE,
              env={"OMH_FAULT": point, "OMH_FAULT_ERRNO": code})
    assert run.code == 1, run.err
    _one_line(run.err)
    assert ("undone" if point in ("commit:ref", "commit:workdir") else "nothing was committed") \
        in run.err
    if code == "ENOSPC":
        assert "disk is full" in run.err
    assert git_state(repo_dir) == before
    assert not (repo_dir / NOTE_PATH).exists()
    _no_leftovers(repo_dir)
    assert ("local", NOTE) in _layers(repo_dir)
    assert omh(repo_dir, "memory", "promote", NOTE).code == 0
    assert _layers(repo_dir) >= {("team", NOTE)}
    assert ("local", NOTE) not in _layers(repo_dir)


# --- gitstate: a full disk -------------------------------------------------------

def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, check=False)
    return done.returncode == 0


def test_gitstate_a_full_disk_at_every_step_of_promote(tmp_path: Path) -> None:
    """Fill a small tmpfs, give back one page more each round: promote fails at each
    of its writes in turn, and every time cleanly, until it has room and succeeds."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "2m"):
        pytest.skip("needs root to mount a small tmpfs")
    repo, template = disk / "repo", disk / "template"
    outcomes: list[tuple[int, int]] = []
    try:
        make_repo(template)
        _setup(template)
        store = Path(omh(template, "memory", "--json").json()["local_store"])
        note = (store / f"{NOTE}.md").read_bytes()
        subprocess.run(["cp", "-a", str(template), str(repo)], check=True)
        # the store is keyed by the checkout's path: give the copy its own note
        store = Path(omh(repo, "memory", "--json").json()["local_store"])
        for free_pages in range(0, 8):
            (store / NOTE).parent.mkdir(parents=True, exist_ok=True)
            (store / f"{NOTE}.md").write_bytes(note)
            filler = disk / "filler"
            with open(filler, "wb", buffering=0) as handle:  # fill the disk
                try:
                    while True:
                        handle.write(b"\0" * 4096)
                except OSError:
                    pass
            os.truncate(filler, max(0, filler.stat().st_size - free_pages * 4096))
            run = omh(repo, "memory", "promote", NOTE)
            outcomes.append((free_pages, run.code))
            assert run.code in (0, 1), (free_pages, run.err)
            if run.code:
                _one_line(run.err)
            assert not (repo / ".git/index.lock").exists(), (free_pages, run.err)
            filler.unlink()
            in_team = subprocess.run(["git", "cat-file", "-e", f"HEAD:{NOTE_PATH}"], cwd=repo,
                                     check=False).returncode == 0
            in_local = (store / f"{NOTE}.md").exists()
            assert in_team or in_local, (free_pages, run.err)
            if in_local:
                again = omh(repo, "memory", "promote", NOTE)
                assert again.code == 0, (free_pages, run.err, again.err)
            assert not (store / f"{NOTE}.md").exists()
            assert git(repo, "status", "--porcelain") == "", (free_pages, run.err)
            fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True,
                                  text=True, check=False)
            assert fsck.returncode == 0, fsck.stderr
            _no_leftovers(repo)
            git(repo, "reset", "-q", "--hard", "HEAD~1")  # the same promote again, next round
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    codes = [code for _, code in outcomes]
    assert codes[0] == 1 and codes[-1] == 0, outcomes  # failed for want of space, then not


# --- gitstate: a sparse index ----------------------------------------------------

def test_gitstate_promote_in_a_sparse_index_checkout_names_the_cure(repo_dir: Path) -> None:
    (repo_dir / "sub").mkdir()
    (repo_dir / "sub/f.txt").write_text("x\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "sub")
    _setup(repo_dir)
    git(repo_dir, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo_dir, "sparse-checkout", "set", "sub")
    head = git(repo_dir, "rev-parse", "HEAD")
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1, run.err
    _one_line(run.err)
    assert "sparse index" in run.err
    assert "git sparse-checkout init --no-sparse-index" in run.err
    assert git(repo_dir, "rev-parse", "HEAD") == head
    _no_leftovers(repo_dir)
    git(repo_dir, "sparse-checkout", "init", "--no-sparse-index")
    done = omh(repo_dir, "memory", "promote", NOTE)
    assert done.code == 0, done.err
    assert git(repo_dir, "sparse-checkout", "list").split() == ["sub"]
    assert git(repo_dir, "status", "--porcelain") == ""


def test_gitstate_a_commit_that_cannot_be_undone_says_how_to_finish_or_drop_it(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure after the branch moved, and then moving it back fails too (a full
    disk can refuse the ref update): the commit stays, the note stays local, the
    lock is released, and the one line names both ways out — both of which work."""
    from omh_git_memory.actions.promote import promote
    from omh_git_memory.git import commit as gitmod
    from omh_git_memory.model.errors import GitFailure

    _setup(repo_dir)
    before = git(repo_dir, "rev-parse", "HEAD").strip()

    def cannot_move_back(*_args: object) -> bool:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setenv("OMH_FAULT", "commit:workdir")
        patch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
        patch.setattr(gitmod, "_move_back", cannot_move_back)
        with pytest.raises(GitFailure) as caught:
            promote(open_workspace(repo_dir), [NOTE])
    message = str(caught.value)
    assert "could not be undone" in message and f"git reset --soft {before}" in message
    assert "\n" not in message and "(no error)" not in message
    _no_leftovers(repo_dir)
    assert not (repo_dir / NOTE_PATH).exists()  # the working-tree write was taken back
    assert ("local", NOTE) in _layers(repo_dir)
    git(repo_dir, "reset", "--soft", before)  # the way out that drops it...
    assert git(repo_dir, "status", "--porcelain") == ""
    assert omh(repo_dir, "memory", "promote", NOTE).code == 0  # ...and promote works after it
    assert git(repo_dir, "status", "--porcelain") == ""


def test_gitstate_a_commit_that_cannot_be_undone_is_finished_by_promoting_again(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from omh_git_memory.actions.promote import promote
    from omh_git_memory.git import commit as gitmod
    from omh_git_memory.model.errors import GitFailure

    _setup(repo_dir)

    def cannot_move_back(*_args: object) -> bool:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setenv("OMH_FAULT", "commit:ref")
        patch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
        patch.setattr(gitmod, "_move_back", cannot_move_back)
        with pytest.raises(GitFailure, match="run the same omh command again to finish it"):
            promote(open_workspace(repo_dir), [NOTE])
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 0, run.err
    assert "finished an interrupted promote" in run.out
    assert git(repo_dir, "status", "--porcelain") == ""
    assert ("local", NOTE) not in _layers(repo_dir) and ("team", NOTE) in _layers(repo_dir)


def test_gitstate_promote_with_a_split_index_names_the_cure(repo_dir: Path) -> None:
    _setup(repo_dir)
    git(repo_dir, "update-index", "--split-index")
    head = git(repo_dir, "rev-parse", "HEAD")
    run = omh(repo_dir, "memory", "promote", NOTE)
    assert run.code == 1, run.err
    _one_line(run.err)
    assert "split index" in run.err and "git update-index --no-split-index" in run.err
    assert git(repo_dir, "rev-parse", "HEAD") == head
    _no_leftovers(repo_dir)
    git(repo_dir, "update-index", "--no-split-index")
    assert omh(repo_dir, "memory", "promote", NOTE).code == 0
    assert git(repo_dir, "status", "--porcelain") == ""
