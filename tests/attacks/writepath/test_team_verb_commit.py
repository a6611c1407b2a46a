"""Items 1, 2 and 13 of the second hostile review (docs/records/review-issue-23.md):
the commit every team verb makes (promote, update,
edit, mv, rm) must leave git's index as git would — racily-clean entries still
re-checked —, must be finished by the next run after a kill once the branch has
moved, and must name a full disk as the cause of a failure. Test names start with
their class (dataloss, gitstate) for the report.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from omh_git_memory import cli
from omh_git_memory.model.faults import FINISH, TRANSACTION
from tests.helpers import Run, git, make_repo, note_text, omh, remember_linked
from tests.helpers.repo import init_committed

A_TEXT = note_text("deploy", body="How we ship.\n")
B_TEXT = note_text("ci", body="Runs after [[deploy]].\n")
NOTES_DIR = ".omh/notes"

EDITOR = """\
import sys
path = sys.argv[-1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace("How we ship.", "How we ship it now."))
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository every test copies (built once: `omh init` is a process)."""
    base = tmp_path_factory.mktemp("template")
    repo = base / "repo"
    make_repo(repo, {"README.md": "# r\n", "conf.txt": "value=1\n",
                     f"{NOTES_DIR}/deploy.md": A_TEXT, f"{NOTES_DIR}/ci.md": B_TEXT})
    home = {"HOME": str(base / "home"), "OMH_HOME": str(base / "home/.omh"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(base / "gitconfig")}
    init_committed(repo, env=home)
    return repo


@pytest.fixture
def team(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with omh initialised, two team notes (ci links to deploy), a
    user's file conf.txt, an editor that edits deploy, all committed."""
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, symlinks=True)
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.setenv("VISUAL", "")
    return repo


def _cli(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> Run:
    """The omh command, run in this process."""
    capsys.readouterr()
    with monkeypatch.context() as patch:
        patch.chdir(repo)
        try:
            cli.main(list(args))
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    out, err = capsys.readouterr()
    return Run(code, out, err)


# The team verbs, as the arguments that make each commit once (promote gets a fresh
# local note first).
VERBS: dict[str, Callable[[Path], list[str]]] = {
    "promote": lambda repo: ["memory", "promote", remember_linked(repo, "A local thing.")],
    "update": lambda _repo: ["memory", "update", "deploy", "--layer", "team", "--title",
                             "Deploying"],
    "edit": lambda _repo: ["memory", "edit", "deploy", "--layer", "team"],
    "mv": lambda _repo: ["memory", "mv", "deploy", "ops/deploy"],
    "rm": lambda _repo: ["memory", "rm", "deploy", "--layer", "team", "--leave-links"],
}


# --- item 1: a racily-staged edit stays visible ------------------------------------

def _racily_staged(repo: Path) -> None:
    """`git add conf.txt`, then a same-size edit of it within the same timestamp tick
    (as a script does): the index entry and the index file share one mtime, so git
    must compare the file's content to see the edit. The tick is set explicitly (in
    the past) so that the test never depends on how fast it runs."""
    conf, index = repo / "conf.txt", repo / ".git/index"
    tick = os.stat(index).st_mtime_ns - 100 * 10**9
    conf.write_text("value=2\n")
    os.utime(conf, ns=(tick, tick))
    git(repo, "add", "conf.txt")
    conf.write_text("value=3\n")  # same size, same tick
    os.utime(conf, ns=(tick, tick))
    os.utime(index, ns=(tick, tick))
    shown = git(repo, "--no-optional-locks", "status", "--porcelain", "conf.txt")
    assert shown == "MM conf.txt\n", shown  # what git itself says, before omh runs


@pytest.mark.parametrize("verb", list(VERBS))
def test_dataloss_an_omh_commit_keeps_a_racily_staged_edit_visible(
    team: Path, verb: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 1. A user stages conf.txt and edits it again in the same tick; any omh
    commit made the index trust the entry, so `git status` showed `M `, `git diff`
    nothing, and `git commit -a` committed the older text: the edit was one
    checkout away from being lost."""
    args = VERBS[verb](team)
    _racily_staged(team)
    run = _cli(team, monkeypatch, capsys, *args)
    assert run.code == 0, run.err
    assert git(team, "status", "--porcelain", "conf.txt") == "MM conf.txt\n"
    assert "+value=3" in git(team, "diff", "conf.txt")
    git(team, "commit", "-qam", "the user's commit")
    assert git(team, "show", "HEAD:conf.txt") == "value=3\n"


def test_dataloss_finishing_an_interrupted_promote_keeps_a_racily_staged_edit_visible(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 1, the other index write: promote finishing a commit a killed promote
    left (it stages the note's path again) must keep the racy entry too."""
    key = remember_linked(team, "A local thing.")
    _racily_staged(team)
    killed = omh(team, "memory", "promote", key, env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -9, killed.err
    run = _cli(team, monkeypatch, capsys, "memory", "promote", key)
    assert run.code == 0, run.err
    assert git(team, "status", "--porcelain", "conf.txt") == "MM conf.txt\n"


# --- item 2: a kill after the branch moved is finished by the next team verb -------

def _asides(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / NOTES_DIR).rglob(".omh-aside-*"))


def _leftovers(repo: Path) -> set[str]:
    names = {p.name for p in (repo / ".git").iterdir()}
    return names & {"index.lock", "omh-index.new", "omh-index.lock.pid", "omh-unfinished.json"}


OTHER = ["memory", "update", "ci", "--layer", "team", "--title", "Continuous integration"]


@pytest.mark.parametrize("next_verb", ["same", "other"])
@pytest.mark.parametrize("verb", list(VERBS))
def test_dataloss_a_team_verb_killed_after_the_branch_moved_is_finished_by_the_next(
    team: Path, verb: str, next_verb: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2. Killed once its commit had landed (fault point commit:ref), a team
    update/edit/mv/rm left git's index lock, an index of the old tree and its
    working copy set aside as `.omh-aside-…` under .omh/notes/; running it again
    said "no change" and repaired nothing, so the user's next `git commit -a`
    deleted the note (or reverted the rename and its link rewrites), and `git add
    -A` committed the set-aside copy. The next team verb must finish the job."""
    args = VERBS[verb](team)
    killed = omh(team, *args, env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -9, killed.err
    landed = git(team, "rev-parse", "HEAD").strip()
    assert git(team, "rev-parse", "HEAD~1").strip() != landed
    assert "index.lock" in _leftovers(team)  # what the kill left
    again = _cli(team, monkeypatch, capsys, *(args if next_verb == "same" else OTHER))
    if next_verb == "same" and verb in ("mv", "rm"):
        assert again.code == 1 and "no note deploy" in again.err, again.err  # done already
    else:
        assert again.code == 0, again.err
    assert _leftovers(team) == set()
    assert _asides(team) == []
    if next_verb == "same":
        assert git(team, "rev-parse", "HEAD").strip() == landed  # no second commit
        assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    git(team, "add", "-A")
    git(team, "commit", "-q", "--allow-empty", "-m", "the user's next commit")
    changed = git(team, "diff", "--name-status", landed, "HEAD").splitlines()
    assert changed in ([], ["M\t.omh/notes/ci.md"]), changed  # only the other verb's change
    assert git(team, "diff", "--name-status", "HEAD~1", "HEAD") == "" or next_verb == "other"


def test_dataloss_a_kill_while_finishing_leaves_the_same_job_for_the_next_run(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2. The run that finishes a killed mv is killed too, after it took the
    dead process's lock over: what the first one landed must not be forgotten with
    the lock it replaced, or the rename is reverted by the user's next commit."""
    killed = omh(team, *VERBS["mv"](team), env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -9, killed.err
    landed = git(team, "rev-parse", "HEAD").strip()
    again = omh(team, *OTHER, env={"OMH_FAULT": FINISH})
    assert again.code == -9, again.err
    run = _cli(team, monkeypatch, capsys, *OTHER)
    assert run.code == 0, run.err
    assert _leftovers(team) == set() and _asides(team) == []
    git(team, "commit", "-qa", "--allow-empty", "-m", "the user's next commit")
    changed = git(team, "diff", "--name-status", landed, "HEAD").splitlines()
    assert changed == ["M\t.omh/notes/ci.md"], changed
    assert (team / NOTES_DIR / "ops/deploy.md").exists()
    assert not (team / NOTES_DIR / "deploy.md").exists()


@pytest.mark.parametrize("point", ["commit:blobs", "commit:object", "commit:workdir",
                                   "commit:index"])
@pytest.mark.parametrize("verb", ["update", "edit", "rm"])
def test_dataloss_a_kill_at_any_step_leaves_no_set_aside_copy_behind(
    team: Path, verb: str, point: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2, the other steps: killed before its branch moved, after the working tree
    was written, or after the index was: the next team verb leaves the repository as
    one of the two commits has it, with no lock and no `.omh-aside-…` copy that
    `git add -A` would commit."""
    args = VERBS[verb](team)
    before = git(team, "rev-parse", "HEAD").strip()
    killed = omh(team, *args, env={"OMH_FAULT": point})
    assert killed.code == -9, killed.err
    again = _cli(team, monkeypatch, capsys, *OTHER)
    assert again.code == 0, again.err
    assert _leftovers(team) == set() and _asides(team) == []
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    head = git(team, "rev-parse", "HEAD~1").strip()
    assert (head == before) == (point in ("commit:blobs", "commit:object"))


# --- item 13: a full disk is named as the cause, at every write step ---------------

def _state(repo: Path) -> tuple[str, bytes, str]:
    """HEAD, the index's bytes and what git calls changed (read without letting git
    refresh the index)."""
    return (git(repo, "rev-parse", "HEAD"), (repo / ".git/index").read_bytes(),
            git(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"))


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("omh: "), err
    return lines[0]


@pytest.mark.parametrize("point", TRANSACTION)
@pytest.mark.parametrize("verb", list(VERBS))
def test_gitstate_a_full_disk_at_each_write_step_of_a_team_verb_is_named(
    team: Path, verb: str, point: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 13. The disk fills at one write of the commit (its blobs, the staged
    index, the tree, the commit object, the branch, the working tree): the one line
    says the disk is full, everything is as it was (the branch moved back), and the
    same verb works once there is room."""
    args = VERBS[verb](team)
    before = _state(team)
    with monkeypatch.context() as patch:
        patch.setenv("OMH_FAULT", point)
        patch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
        run = _cli(team, monkeypatch, capsys, *args)
    assert run.code == 1, run.err
    line = _one_line(run.err)
    assert "the disk is full" in line and "(no error)" not in line, line
    assert _state(team) == before
    assert _leftovers(team) == set() and _asides(team) == []
    again = _cli(team, monkeypatch, capsys, *args)
    assert again.code == 0, again.err
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""


def test_gitstate_a_full_disk_while_finishing_an_interrupted_commit_is_named(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Items 13 and 2. Finishing the commit a killed update landed fails for want of
    space: the line names the full disk and says to run again; git's lock stays
    (released, the user's `git commit -a` would delete the note), and the next run
    finishes the job."""
    killed = omh(team, *VERBS["update"](team), env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -9, killed.err
    with monkeypatch.context() as patch:
        patch.setenv("OMH_FAULT", FINISH)
        patch.setenv("OMH_FAULT_ERRNO", "ENOSPC")
        run = _cli(team, monkeypatch, capsys, *OTHER)
    assert run.code == 1
    line = _one_line(run.err)
    assert "the disk is full" in line and "run the command again" in line, line
    assert (team / ".git/index.lock").exists()
    again = _cli(team, monkeypatch, capsys, *OTHER)
    assert again.code == 0, again.err
    assert _leftovers(team) == set() and _asides(team) == []
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    assert "Deploying" in git(team, "show", f"HEAD:{NOTES_DIR}/deploy.md")


def _no_reason(*_args: object, **_kw: object) -> object:
    raise pygit2.GitError("(no error)")


def _lost_tree(*_args: object, **_kw: object) -> object:
    raise KeyError("the path 'notes' does not exist in the given tree")


@pytest.mark.parametrize("failure", ["no reason", "lost tree"])
@pytest.mark.parametrize("full", [True, False])
def test_gitstate_a_failure_libgit2_gives_no_reason_for_names_a_full_disk(
    team: Path, failure: str, full: bool, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 13. On a full disk libgit2 fails some writes with no reason ("committing
    failed (no error)"), and an object lost to it surfaces as "the path 'notes' does
    not exist in the given tree" (once a crash log): the line names the full disk,
    found from the file system's free space. On a disk with room, the same failure
    is reported as it is, with no false alarm."""
    from omh_git_memory.git import commit as gitmod
    from omh_git_memory.git import gitfiles

    real = os.statvfs

    def statvfs(path: object) -> os.statvfs_result:
        got = real(path)  # type: ignore[arg-type]
        if not full:
            return got
        values = list(got)
        values[4] = 0  # f_bavail: no block free for an unprivileged write
        return os.statvfs_result(values)

    before = _state(team)
    with monkeypatch.context() as patch:
        patch.setattr(gitfiles.os, "statvfs", statvfs)
        if failure == "no reason":
            patch.setattr(pygit2.Repository, "create_commit", _no_reason)
        else:
            patch.setattr(gitmod._Index, "write_tree", _lost_tree)
        run = _cli(team, monkeypatch, capsys, *VERBS["update"](team))
    assert run.code == 1, run.err
    line = _one_line(run.err)
    assert ("the disk is full" in line) == full, line
    assert "nothing was committed" in line and "internal error" not in line, line
    assert _state(team) == before and _leftovers(team) == set()


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0:
        return False
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.parametrize("verb", ["update", "mv", "rm"])
def test_gitstate_a_really_full_disk_at_every_step_of_a_team_verb(
    tmp_path: Path, verb: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 13 on a real full disk (a small tmpfs, filled, then one page more free
    each round): every failing run names the full disk in one line and leaves the
    repository as it was, until there is room and the verb succeeds."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "2m"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        template = disk / "template"
        make_repo(template, {"README.md": "# r\n", f"{NOTES_DIR}/deploy.md": A_TEXT,
                             f"{NOTES_DIR}/ci.md": B_TEXT})
        init_committed(template)
        repo, filler = disk / "repo", disk / "filler"
        outcomes = []
        for free_pages in range(40):
            subprocess.run(["rm", "-rf", str(repo)], check=True)
            subprocess.run(["cp", "-a", str(template), str(repo)], check=True)
            before = _state(repo)
            with open(filler, "wb", buffering=0) as handle, pytest.raises(OSError):
                while True:
                    handle.write(b"\0" * 4096)
            os.truncate(filler, max(0, filler.stat().st_size - free_pages * 4096))
            run = _cli(repo, monkeypatch, capsys, *VERBS[verb](repo))
            filler.unlink()
            outcomes.append(run.code)
            if run.code == 0:
                break
            line = _one_line(run.err)
            assert "disk is full" in line, (free_pages, line)
            assert _state(repo) == before, (free_pages, line)
            assert _leftovers(repo) == set() and _asides(repo) == [], (free_pages, line)
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    assert outcomes[0] == 1 and outcomes[-1] == 0, outcomes


# --- item 2, the review of its finish path: a job is finished only where it landed -

def _killed_at_ref(repo: Path) -> str:
    """A team update of deploy killed once its branch moved; the commit it landed."""
    killed = omh(repo, *VERBS["update"](repo), env={"OMH_FAULT": "commit:ref"})
    assert killed.code == -9, killed.err
    assert "index.lock" in _leftovers(repo)
    return git(repo, "rev-parse", "HEAD").strip()


def test_dataloss_a_kill_after_the_branch_moved_is_finished_once_the_user_removed_the_lock(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2 (review F1). The user removes the dead process's `index.lock`, as git's
    message advises; the next team verb found no lock to take over and finished
    nothing, silently, so `git add -A && git commit` undid the landed update (the
    note's old text, or the note deleted, committed back)."""
    landed = _killed_at_ref(team)
    (team / ".git/index.lock").unlink()
    run = _cli(team, monkeypatch, capsys, *OTHER)
    assert run.code == 0, run.err
    assert _leftovers(team) == set() and _asides(team) == []
    git(team, "add", "-A")
    git(team, "commit", "-q", "--allow-empty", "-m", "the user's next commit")
    changed = git(team, "diff", "--name-status", landed, "HEAD").splitlines()
    assert changed == ["M\t.omh/notes/ci.md"], changed


def test_dataloss_a_kill_after_the_branch_moved_is_finished_after_the_branch_is_renamed(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2 (review F2). `git branch -m main trunk` after the kill: the recorded
    branch is gone, so the job was dropped and git's lock released with the index
    unfinished; the user's next commit reverted the landed update."""
    landed = _killed_at_ref(team)
    git(team, "branch", "-m", "trunk")
    run = _cli(team, monkeypatch, capsys, *OTHER)
    assert run.code == 0, run.err
    assert _leftovers(team) == set() and _asides(team) == []
    git(team, "add", "-A")
    git(team, "commit", "-q", "--allow-empty", "-m", "the user's next commit")
    changed = git(team, "diff", "--name-status", landed, "HEAD").splitlines()
    assert changed == ["M\t.omh/notes/ci.md"], changed


def _killed_twice(repo: Path) -> str:
    """Killed at commit:ref, then the run finishing it killed at commit:finish; the
    user removes the lock and resets the working tree to HEAD's."""
    landed = _killed_at_ref(repo)
    again = omh(repo, *OTHER, env={"OMH_FAULT": FINISH})
    assert again.code == -9, again.err
    assert "omh-unfinished.json" in _leftovers(repo)
    (repo / ".git/index.lock").unlink()
    return landed


def test_wrong_an_unfinished_job_is_not_applied_to_another_branch(
    team: Path,
) -> None:
    """Item 2 (review F3). After the kills the user checks out another branch; the
    next team verb staged main's landed change into that branch's index and working
    tree, so the user's next commit on it carried a change they never made there.
    The job must be dropped with one warning naming the commit."""
    base = git(team, "rev-parse", "HEAD").strip()
    git(team, "branch", "other")
    landed = _killed_twice(team)
    git(team, "checkout", "-q", "other")
    note = git(team, "show", f"HEAD:{NOTES_DIR}/deploy.md").encode()
    run = omh(team, "memory", "update", "ci", "--layer", "team", "--title", "CI")
    assert run.code == 0, run.err
    assert _leftovers(team) == set() and _asides(team) == []
    assert (team / NOTES_DIR / "deploy.md").read_bytes() == note
    assert git(team, "rev-parse", "HEAD~1").strip() == base
    assert git(team, "diff", "--name-status", "HEAD~1", "HEAD") == "M\t.omh/notes/ci.md\n"
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    assert landed[:12] in run.err and "git status" in run.err, run.err  # never silent


def test_wrong_a_change_the_user_reverted_is_not_staged_again(team: Path) -> None:
    """Item 2 (review F4). After the kills the user resets to HEAD and reverts the
    landed commit; the next team verb staged the reverted change again and rewrote
    the note, so the user's next commit undid their revert. The job must be dropped
    with one warning naming the commit."""
    landed = _killed_twice(team)
    git(team, "reset", "-q", "--hard")
    for aside in _asides(team):
        aside.unlink()
    git(team, "revert", "--no-edit", "HEAD")
    reverted = git(team, "rev-parse", "HEAD").strip()
    note = (team / NOTES_DIR / "deploy.md").read_bytes()
    run = omh(team, "memory", "update", "ci", "--layer", "team", "--title", "CI")
    assert run.code == 0, run.err
    assert _leftovers(team) == set() and _asides(team) == []
    assert (team / NOTES_DIR / "deploy.md").read_bytes() == note
    assert git(team, "rev-parse", "HEAD~1").strip() == reverted
    assert git(team, "diff", "--name-status", "HEAD~1", "HEAD") == "M\t.omh/notes/ci.md\n"
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    assert landed[:12] in run.err and "git status" in run.err, run.err  # never silent


def _stopped(proc: subprocess.Popen[str]) -> bool:
    try:
        with open(f"/proc/{proc.pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


def test_race_a_running_omh_commits_job_is_left_to_it(
    team: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Item 2 (review, the guard). A team verb stopped just after its branch moved
    (alive, holding git's lock): another team verb must neither finish nor drop its
    job — it refuses as git refuses a held lock — and the first one then completes
    on its own, leaving nothing behind for the user's commit to undo."""
    args = VERBS["update"](team)
    proc = subprocess.Popen([sys.executable, "-m", "omh_git_memory", *args], cwd=team,
                            env={**os.environ, "OMH_FAULT": "commit:ref:stop"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if _stopped(proc) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert _stopped(proc), proc.poll()
        landed = git(team, "rev-parse", "HEAD").strip()
        index = (team / ".git/index").read_bytes()
        run = _cli(team, monkeypatch, capsys, *OTHER)
        assert run.code == 1 and "index.lock exists" in run.err, run.err
        assert (team / ".git/index").read_bytes() == index
        assert {"index.lock", "omh-unfinished.json"} <= _leftovers(team)
    finally:
        proc.send_signal(signal.SIGCONT)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert _leftovers(team) == set() and _asides(team) == []
    assert git(team, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(team, "rev-parse", "HEAD").strip() == landed
