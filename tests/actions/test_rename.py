"""`omh memory mv`: a rename that changes key, path and the links in its layer at once.

Local renames are switched from a journal under the store's lock (no reader sees
half; a kill at any step is finished or undone by the next command); team renames
are one commit, refused like `rm` when a touched path holds uncommitted bytes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omh_git_memory.model.faults import MV_POINTS
from tests.helpers import (
    Run,
    git,
    local_store,
    note_text,
    omh,
    remember_linked,
    resume,
    start_at_fault,
    wait_stopped,
    with_linked_team_notes,
)
from tests.helpers.repo import head_of


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` (hidden ones too), by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _notes(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in _files(root).items() if not k.startswith(".")}


A = "surprise/alpha-fails"
B = "surprise/beta-fails"


@pytest.fixture
def local_pair(repo_dir: Path) -> Path:
    """Two local notes, the second linking the first."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    assert remember_linked(repo_dir, "Beta fails.", A) == B
    return repo_dir


# --- local --------------------------------------------------------------------

def test_local_mv_moves_the_file_changes_the_key_and_rewrites_links(local_pair: Path) -> None:
    store = local_store(local_pair)
    before = _notes(store)
    run = omh(local_pair, "memory", "mv", A, "surprise/alpha-breaks", "--json")
    assert run.code == 0, run.err
    out = run.json()
    assert out["renamed"]["layer"] == "local" and out["relinked"] == [B]
    after = _notes(store)
    assert set(after) == {"surprise/alpha-breaks.md", f"{B}.md"}
    # Nothing changes but the key field and the link's target text, byte for byte.
    assert after["surprise/alpha-breaks.md"] == before[f"{A}.md"].replace(
        f"key: {A}\n".encode(), b"key: surprise/alpha-breaks\n")
    assert after[f"{B}.md"] == before[f"{B}.md"].replace(
        f"[[{A}]]".encode(), b"[[surprise/alpha-breaks]]")
    lint = omh(local_pair, "memory", "lint", "--json").json()
    assert lint["counts"]["KeyDisagreesWithPath"] == lint["counts"]["DanglingLink"] == 0
    assert not any(n.startswith(".omh-journal") for n in os.listdir(store))


def test_only_real_links_are_rewritten_and_their_spacing_kept(repo_dir: Path) -> None:
    omh(repo_dir, "init")
    store = local_store(repo_dir)
    (store / "old.md").write_text(note_text("old", body="Self: [[old]]\n"))
    body = ("See [[ old ]] and [[old]]; `[[old]]` is code, [[older]] another note.\n\n"
            "```\n[[old]]\n```\n")
    (store / "x.md").write_text(note_text("x", body=body))
    assert omh(repo_dir, "memory", "mv", "old", "renamed/new").code == 0
    assert (store / "x.md").read_text() == note_text("x", body=body.replace(
        "[[ old ]] and [[old]]", "[[ renamed/new ]] and [[renamed/new]]"))
    moved = (store / "renamed/new.md").read_text()
    assert "key: renamed/new\n" in moved and "Self: [[renamed/new]]" in moved
    assert "# old\n" in moved  # the title is the note's own text: kept


@pytest.mark.parametrize(("new", "says"), [
    (B, "already exists in the local layer"),
    ("readme", "derived team note"),
    ("../escape", "not a usable key"),
    ("Two Words", "not a usable key"),
    (A, "already called"),
])
def test_local_mv_refusals_change_nothing(local_pair: Path, new: str, says: str) -> None:
    store = local_store(local_pair)
    before = _files(store)
    run = omh(local_pair, "memory", "mv", A, new)
    assert run.code == 1 and says in run.err, run.err
    assert run.err.count("\n") == 1
    assert _files(store) == before


def test_a_local_note_may_not_take_a_team_key(local_pair: Path) -> None:
    path = local_pair / ".omh/notes/shared.md"
    path.parent.mkdir(parents=True)
    path.write_text(note_text("shared"))
    git(local_pair, "add", "-A")
    git(local_pair, "commit", "-qm", "team note")
    run = omh(local_pair, "memory", "mv", A, "shared")
    assert run.code == 1 and "would shadow it" in run.err


def test_mv_of_what_is_not_a_written_note_is_refused(local_pair: Path) -> None:
    missing = omh(local_pair, "memory", "mv", "no/such", "x")
    assert missing.code == 1 and "no note no/such" in missing.err
    stub = omh(local_pair, "memory", "mv", "readme", "x")
    assert stub.code == 1 and "stub of README.md" in stub.err and "git mv" in stub.err
    topic = omh(local_pair, "memory", "mv", "repo", "x")
    assert topic.code == 1 and "repository topic" in topic.err and "[repo] name" in topic.err


def test_a_note_changed_since_it_was_read_is_not_renamed(local_pair: Path) -> None:
    store = local_store(local_pair)
    proc = start_at_fault(local_pair, "mv:planned:stop", "memory", "mv", A, "surprise/x")
    wait_stopped(proc)
    (store / f"{B}.md").write_text((store / f"{B}.md").read_text() + "\nedited\n")
    before = _notes(store)
    done = resume(proc)
    assert done.code == 1 and "changed since omh read the store" in done.err, done.err
    assert _notes(store) == before


def test_an_edit_made_while_mv_switches_is_kept(local_pair: Path) -> None:
    # Stopped after it checked the files, holding the store's lock: an editor that
    # does not ask for the lock rewrites B. Its text wins over the link rewrite.
    store = local_store(local_pair)
    proc = start_at_fault(local_pair, "journal:prepared:stop", "memory", "mv", A, "surprise/x")
    wait_stopped(proc)
    (store / f"{B}.md").write_text((store / f"{B}.md").read_text() + "\nedited\n")
    done = resume(proc)
    assert done.code == 0, done.err
    assert (store / f"{B}.md").read_text().endswith("\nedited\n")
    assert (store / "surprise/x.md").exists() and not (store / f"{A}.md").exists()


@pytest.mark.parametrize("point", MV_POINTS)
def test_a_kill_at_any_step_leaves_the_store_before_or_after(local_pair: Path,
                                                              point: str) -> None:
    store = local_store(local_pair)
    before = _notes(store)
    killed = omh(local_pair, "memory", "mv", A, "surprise/alpha-breaks",
                 env={"OMH_FAULT": point})
    assert killed.code == -signal.SIGKILL
    listed = omh(local_pair, "memory", "--json").json()  # the next command reads the store
    keys = {n["key"] for n in listed["notes"] if n["layer"] == "local"}
    after = _notes(store)
    if point == "journal:prepared":  # not decided yet: nothing happened
        assert keys == {A, B} and after == before
    else:  # decided: finished by the reader
        assert keys == {"surprise/alpha-breaks", B}
        assert b"[[surprise/alpha-breaks]]" in after[f"{B}.md"]
    assert not (store / ".omh-journal").exists()
    assert omh(local_pair, "memory", "lint", "--json").json()["counts"]["DanglingLink"] == 0


def test_no_reader_sees_half_a_local_rename(local_pair: Path) -> None:
    # mv stops in the middle of its switch: the new note is there, B not yet
    # rewritten, the old note not yet removed. A reader waits, then sees it all.
    proc = start_at_fault(local_pair, "journal:switching:stop", "memory", "mv", A, "surprise/x")
    wait_stopped(proc)
    reader = subprocess.Popen([sys.executable, "-m", "omh_git_memory", "memory", "--json"],
                              cwd=local_pair, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    time.sleep(2)
    waiting = reader.poll() is None
    done = resume(proc)
    out, err = reader.communicate(timeout=120)
    assert done.code == 0, done.err
    assert waiting, "the reader read the store in the middle of the rename"
    import json
    keys = {n["key"] for n in json.loads(out)["notes"] if n["layer"] == "local"}
    assert keys == {"surprise/x", B}, err


# --- team ---------------------------------------------------------------------

@pytest.fixture
def team_repo(repo_dir: Path) -> Path:
    """Three team notes, `ci` linking `deploy`."""
    return with_linked_team_notes(repo_dir)


def test_team_mv_is_one_commit_with_exactly_the_paths_it_touches(team_repo: Path) -> None:
    mine = remember_linked(team_repo, "Local thing.", "deploy")
    head = head_of(team_repo)
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--json")
    assert run.code == 0, run.err
    out = run.json()
    assert out["renamed"]["layer"] == "team" and out["relinked"] == ["ci", f"local/{mine}"]
    assert out["untouched"] == []  # the local note's link was rewritten after the commit
    assert git(team_repo, "rev-parse", "HEAD~1").strip() == head
    changed = git(team_repo, "diff", "--name-status", "--no-renames", head, "HEAD").split("\n")
    assert sorted(filter(None, changed)) == [
        "A\t.omh/notes/ops/deploy.md", "D\t.omh/notes/deploy.md", "M\t.omh/notes/ci.md"]
    assert git(team_repo, "status", "--porcelain") == ""
    assert "[[ops/deploy]]" in (team_repo / ".omh/notes/ci.md").read_text()
    assert "key: ops/deploy\n" in (team_repo / ".omh/notes/ops/deploy.md").read_text()
    text = omh(team_repo, "memory", "mv", "ops/deploy", "deploy").out
    assert "still links to [[ops/deploy]]" not in text  # the local note followed again
    lint = omh(team_repo, "memory", "lint", "--ref", "HEAD", "--json")
    assert lint.code == 0 and lint.json()["counts"]["DanglingLink"] == 0


def test_team_mv_with_no_relink_local_reports_local_links_it_leaves(team_repo: Path) -> None:
    mine = remember_linked(team_repo, "Local thing.", "deploy")
    before = (local_store(team_repo) / f"{mine}.md").read_bytes()
    out = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--no-relink-local").out
    assert f"local/{mine}" in out and "change it yourself" in out
    assert (local_store(team_repo) / f"{mine}.md").read_bytes() == before


def test_team_mv_rewrites_your_local_links_to_it_after_the_commit(team_repo: Path) -> None:
    """Your local notes follow the rename you made (before, they kept [[deploy]],
    which then named nothing, and no command changed one link)."""
    mine = remember_linked(team_repo, "Local thing.", "deploy")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--json")
    assert run.code == 0, run.err
    assert f"local/{mine}" in run.json()["relinked"] and run.json()["untouched"] == []
    text = (local_store(team_repo) / f"{mine}.md").read_text()
    assert "[[ops/deploy]]" in text and "[[deploy]]" not in text
    lint = omh(team_repo, "memory", "lint", "--json").json()
    assert lint["counts"]["DanglingLink"] == 0


def _refused(repo: Path, run: Run, head: str) -> None:
    assert run.code == 1, (run.out, run.err)
    assert head_of(repo) == head
    assert (repo / ".omh/notes/deploy.md").exists()


def test_team_mv_refuses_an_uncommitted_edit_of_a_linking_note(team_repo: Path) -> None:
    head = head_of(team_repo)
    ci = team_repo / ".omh/notes/ci.md"
    ci.write_text(ci.read_text() + "an edit\n")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy")
    _refused(team_repo, run, head)
    assert "has changes not committed" in run.err
    assert ci.read_text().endswith("an edit\n")


def test_team_mv_refuses_a_staged_edit(team_repo: Path) -> None:
    head = head_of(team_repo)
    ci = team_repo / ".omh/notes/ci.md"
    ci.write_text(ci.read_text() + "staged\n")
    git(team_repo, "add", str(ci))
    ci.write_text(ci.read_text().replace("staged\n", ""))  # working copy as HEAD has it
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy")
    _refused(team_repo, run, head)
    assert "staged" in run.err
    assert "staged" in git(team_repo, "show", ":.omh/notes/ci.md")


def test_team_mv_refuses_a_held_index_lock_and_a_symlink(team_repo: Path,
                                                         tmp_path: Path) -> None:
    head = head_of(team_repo)
    lock = team_repo / ".git/index.lock"
    lock.write_text("")
    _refused(team_repo, omh(team_repo, "memory", "mv", "deploy", "ops/deploy"), head)
    lock.unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    (team_repo / ".omh/notes/ops").symlink_to(outside)
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy")
    _refused(team_repo, run, head)
    assert "symlink" in run.err and list(outside.iterdir()) == []


def test_team_mv_refuses_a_key_a_local_note_holds(team_repo: Path) -> None:
    mine = remember_linked(team_repo, "Local thing.")
    head = head_of(team_repo)
    run = omh(team_repo, "memory", "mv", "deploy", mine)
    _refused(team_repo, run, head)
    assert "would shadow" in run.err


def test_a_failed_team_commit_puts_the_changed_files_back(team_repo: Path) -> None:
    head = head_of(team_repo)
    before = _files(team_repo / ".omh/notes")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy",
              env={"OMH_FAULT": "commit:workdir", "OMH_FAULT_ERRNO": "EIO"})
    _refused(team_repo, run, head)
    assert _files(team_repo / ".omh/notes") == before  # ci.md holds HEAD's text again
    assert git(team_repo, "status", "--porcelain") == ""


def test_mv_in_both_layers_needs_a_layer(team_repo: Path) -> None:
    store = local_store(team_repo)
    store.mkdir(parents=True, exist_ok=True)
    (store / "other.md").write_text(note_text("other"))
    run = omh(team_repo, "memory", "mv", "other", "x")
    assert run.code == 1 and "--layer" in run.err
    done = omh(team_repo, "memory", "mv", "other", "x", "--layer", "local", "--json")
    assert done.code == 0 and done.json()["renamed"]["layer"] == "local"
    assert (team_repo / ".omh/notes/other.md").exists()


def test_a_clone_in_another_folder_sees_the_renamed_team_note(team_repo: Path,
                                                              tmp_path: Path) -> None:
    assert omh(team_repo, "memory", "mv", "deploy", "ops/deploy").code == 0
    clone = tmp_path / "elsewhere"
    git(tmp_path, "clone", "-q", str(team_repo), str(clone))
    lint = omh(clone, "memory", "lint", "--ref", "HEAD", "--json")
    assert lint.code == 0 and lint.json()["counts"]["DanglingLink"] == 0


# --- a journal is a file in the store: whoever can write the store must not steer omh

def test_a_planted_plan_never_reaches_outside_the_store(local_pair: Path,
                                                        tmp_path: Path) -> None:
    import hashlib
    import json

    store = local_store(local_pair)
    victim = tmp_path / "victim.md"
    victim.write_text("keep me\n")
    digest = hashlib.sha256(victim.read_bytes()).hexdigest()
    rel = os.path.relpath(victim, store)
    journal = store / ".omh-journal" / "planted"
    journal.mkdir(parents=True)
    (journal / "new-0").write_text("overwritten\n")
    (journal / "plan.json").write_text(json.dumps([
        {"path": rel, "old": digest, "new": None, "staged": None},
        {"path": rel, "old": digest, "new": "x", "staged": "new-0"},
        {"path": f"{A}.md", "old": "0" * 64, "new": None, "staged": "../../../x"},
    ]))
    (store / ".omh-lock").touch()
    assert omh(local_pair, "memory", "--json").code == 0  # a reader recovers the store
    assert victim.read_text() == "keep me\n"
    assert (store / f"{A}.md").exists()
    assert not (store / ".omh-journal").exists()


def test_a_symlinked_journal_is_never_followed(local_pair: Path, tmp_path: Path) -> None:
    store = local_store(local_pair)
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "precious").write_text("keep\n")
    (store / ".omh-journal").symlink_to(outside)
    (store / ".omh-lock").touch()
    assert omh(local_pair, "memory", "--json").code == 0
    assert (outside / "dir" / "precious").read_text() == "keep\n"
    run = omh(local_pair, "memory", "mv", A, "surprise/x")
    assert run.code == 1 and "symlink" in run.err
    assert sorted(p.name for p in outside.rglob("*")) == ["dir", "precious"]
    assert (store / f"{A}.md").exists()
