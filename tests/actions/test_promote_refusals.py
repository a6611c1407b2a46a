"""Promote's survivors of the mutation pass (pass 3): what promote tells a
caller when several keys are named at once, each refusal's wording, a note already
in the team layer, a note that does not read back, finishing beside committing,
and `rm` of a team note whose working-tree copy is not a plain file.

Each test states what a user or caller sees (the refusals, the result's fields, the
branch, the files), not how promote gets there.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_promote.py.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
from pathlib import Path

import pytest

from omh_git_memory.actions.promote import promote, refuse_symlinked_dirs, remove_team_note
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import GitFailure, NoteNotFound, PromoteRefused, UncommittedEdit
from omh_git_memory.model.keys import Key
from tests.helpers import (
    git,
    note_text,
    omh,
    promote_ready,
    remember_linked,
    resume,
    start_at_fault,
    wait_stopped,
)
from tests.helpers.repo import head_of, init_committed

A = "surprise/mutants-note-a"
B = "surprise/mutants-note-b"


@pytest.fixture
def ready(repo_dir: Path) -> Path:
    """omh initialised and committed, two local notes A and B ready to promote."""
    assert promote_ready(repo_dir, "Mutants note a.", "Mutants note b.") == [A, B]
    return repo_dir


def _store(repo: Path) -> Path:
    return open_workspace(repo).local.root


def _in_head(repo: Path, path: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"HEAD:{path}"], cwd=repo,
                          check=False).returncode == 0


def _path(key: str) -> str:
    return f".omh/notes/{key}.md"


def _refused(repo: Path, keys: list[str]) -> list[str]:
    head = head_of(repo)
    with pytest.raises(PromoteRefused) as refused:
        promote(open_workspace(repo), keys)
    assert head_of(repo) == head
    return refused.value.problems


def _commit_by_hand(repo: Path, key: str) -> None:
    """Put the local note's exact bytes at its team path and commit them with git,
    as a promote cut short after its commit leaves things."""
    target = repo / _path(key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((_store(repo) / f"{key}.md").read_bytes())
    git(repo, "add", _path(key))
    git(repo, "commit", "-qm", f"by hand {key}")


# --- a key named with no local copy ------------------------------------------------

def test_a_key_only_the_team_has_is_reported_already_there_not_unknown(ready: Path) -> None:
    assert promote(open_workspace(ready), [A]).keys == (Key(A),)
    alone = _refused(ready, [A])
    assert alone == [f"{A}: already in the team layer ({_path(A)} at HEAD) and not in the "
                     "local one; nothing to promote"]
    done = promote(open_workspace(ready), [A, B])
    assert done.already_in_team == (Key(A),)
    assert done.keys == (Key(B),) and done.finished == ()
    assert _in_head(ready, _path(B))


def test_an_unknown_key_is_refused_as_unknown(ready: Path) -> None:
    assert _refused(ready, ["surprise/nobody-wrote-this"]) == [
        "surprise/nobody-wrote-this: no local note has this key (`omh memory` lists them)"]


def test_a_team_note_that_does_not_read_back_is_not_a_local_one(ready: Path) -> None:
    """A team file whose key is named but that is no note: with no local copy there
    is nothing to promote; the team file's problem is not promote's to report."""
    broken = ready / ".omh/notes/surprise/not-a-note.md"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("no front matter here\n")
    git(ready, "add", "-A")
    git(ready, "commit", "-qm", "a broken team file")
    assert _refused(ready, ["surprise/not-a-note"]) == [
        "surprise/not-a-note: already in the team layer (.omh/notes/surprise/not-a-note.md "
        "at HEAD) and not in the local one; nothing to promote"]


def test_a_local_file_that_does_not_read_back_is_named_with_its_problem(ready: Path) -> None:
    (_store(ready) / "surprise" / "garbled.md").write_text("no front matter here\n")
    problems = _refused(ready, ["surprise/garbled"])
    assert len(problems) == 1
    assert problems[0].startswith("surprise/garbled: does not read back as a note: ")
    assert problems[0] != "surprise/garbled: does not read back as a note: None"


# --- every problem of every key, in one refusal ---------------------------------

def test_every_key_is_checked_after_one_is_refused(ready: Path) -> None:
    """Each kind of refusal comes before the others in turn: the keys after it are
    still checked, so one refusal lists everything that is wrong."""
    store = _store(ready)
    (store / "filed-as.md").write_text(note_text("claims-key"))
    blocked = ready / _path(B)
    blocked.parent.mkdir(parents=True, exist_ok=True)
    blocked.symlink_to(ready / "README.md")  # a symlink where B's team file goes
    secret = "surprise/holds-a-secret"
    (store / f"{secret}.md").write_text(note_text(
        secret, "topic", "password = hunter2hunter2hunter2\n"))
    missing = "surprise/nobody-wrote-this"
    order = [missing, "claims-key", B, secret]
    for first in range(len(order)):
        keys = order[first:] + order[:first]
        problems = _refused(ready, keys)
        said = {k for k in order for p in problems if p.startswith(f"{k}: ")}
        assert said == set(order), (keys, problems)


def test_a_note_being_finished_does_not_stop_the_next_from_being_committed(
    ready: Path,
) -> None:
    _commit_by_hand(ready, A)
    done = promote(open_workspace(ready), [A, B])
    assert done.finished == (Key(A),)
    assert done.keys == (Key(B), Key(A))  # committed first, then finished
    assert _in_head(ready, _path(B))
    assert git(ready, "log", "-1", "--format=%s").strip() == f"omh: promote {B}"
    assert not (_store(ready) / f"{A}.md").exists()
    assert not (_store(ready) / f"{B}.md").exists()
    assert git(ready, "status", "--porcelain") == ""


# --- each refusal's wording --------------------------------------------------------

def test_a_schema_refusal_names_its_rule_and_line(ready: Path) -> None:
    local = _store(ready) / f"{A}.md"
    text = local.read_text() + "\n```\nnever closed\n"
    local.write_text(text)
    line = text.splitlines().index("```") + 1
    problems = _refused(ready, [A])
    fence = [p for p in problems if "UnclosedFence" in p]
    assert fence and fence[0].startswith(f"{A}: UnclosedFence (line {line}): "), problems


def test_a_refusal_without_a_line_names_no_line(ready: Path) -> None:
    local = _store(ready) / f"{A}.md"
    text = local.read_text()
    local.write_text(re.sub(r"## Evidence\nv\n\n", "", text))
    problems = _refused(ready, [A])
    missing = [p for p in problems if "MissingSection" in p]
    assert missing, problems
    assert missing[0].startswith(f"{A}: MissingSection: "), missing
    assert "None" not in missing[0]


def test_another_team_file_claiming_the_key_is_named_by_its_path(ready: Path) -> None:
    other = ready / ".omh/notes/else:where.md"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text((_store(ready) / f"{A}.md").read_text().replace("Mutants", "Theirs"))
    git(ready, "add", "-A")
    git(ready, "commit", "-qm", "a teammate's note")
    problems = _refused(ready, [A])
    assert f"{A}: the team note .omh/notes/else:where.md already has this key; " \
           "update that note instead" in problems, problems


def test_every_link_of_a_note_is_checked_after_one_that_reaches(ready: Path) -> None:
    linker = remember_linked(ready, "Mutants note c.", A, "surprise/nobody-wrote-this")
    problems = _refused(ready, [linker, A])
    assert problems == [f"{linker}: [[surprise/nobody-wrote-this]] names no note; "
                        "fix or remove the link"]


# --- rm of a team note: what stands in the working tree --------------------------

@pytest.fixture
def promoted(ready: Path) -> Path:
    """A is a team note, committed and checked out."""
    promote(open_workspace(ready), [A])
    assert (ready / _path(A)).is_file()
    return ready


def _rm_refused(repo: Path) -> str:
    head = head_of(repo)
    with pytest.raises(UncommittedEdit) as refused:
        remove_team_note(open_workspace(repo), Key(A))
    assert head_of(repo) == head and _in_head(repo, _path(A))
    return str(refused.value)


def test_rm_names_a_directory_where_the_note_is(promoted: Path) -> None:
    path = promoted / _path(A)
    path.unlink()
    path.mkdir()
    (path / "mine.md").write_text("mine\n")
    assert f"{_path(A)} is a directory in the working tree" in _rm_refused(promoted)
    assert (path / "mine.md").read_text() == "mine\n"


def test_rm_names_a_fifo_where_the_note_is(promoted: Path) -> None:
    path = promoted / _path(A)
    path.unlink()
    os.mkfifo(path)
    assert f"{_path(A)} is not a regular file in the working tree" in _rm_refused(promoted)
    assert path.exists() and not path.is_file()


def test_rm_names_a_file_where_a_directory_of_the_path_is(promoted: Path) -> None:
    folder = promoted / _path(A).rsplit("/", 1)[0]
    (folder / f"{A.rsplit('/', 1)[1]}.md").unlink()
    folder.rmdir()
    folder.write_text("a file of mine\n")
    why = _rm_refused(promoted)
    assert why.startswith(f"{folder.relative_to(promoted)} is not a directory in the working "
                          "tree; omh changes nothing through it"), why
    assert why.endswith("and run rm again")
    assert folder.read_text() == "a file of mine\n"


def test_rm_of_a_note_whose_folder_is_gone_commits_the_removal(promoted: Path) -> None:
    folder = promoted / ".omh/notes/surprise"
    (folder / f"{A.rsplit('/', 1)[1]}.md").unlink()
    folder.rmdir()
    commit = remove_team_note(open_workspace(promoted), Key(A))
    assert commit == head_of(promoted) and not _in_head(promoted, _path(A))
    assert git(promoted, "status", "--porcelain") == ""
    assert git(promoted, "log", "-1", "--format=%B").strip() == (
        f"omh: remove {A}\n\nRemoved from the team layer by `omh memory rm`.")  # no sign-off


def test_rm_of_a_team_note_head_lacks_is_not_found(ready: Path) -> None:
    with pytest.raises(NoteNotFound):
        remove_team_note(open_workspace(ready), Key(A))


def test_a_missing_directory_on_the_path_is_no_refusal_a_symlinked_one_is(
        tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    refuse_symlinked_dirs(tmp_path, "a/missing/b/c.md")  # as for git rm: nothing to lose
    (tmp_path / "a" / "b").symlink_to(tmp_path)
    with pytest.raises(UncommittedEdit, match="a/b is a symlink in the working tree"):
        refuse_symlinked_dirs(tmp_path, "a/b/c.md")


def test_rm_puts_the_working_copy_back_when_the_commit_fails(
    promoted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = promoted / _path(A)
    committed = path.read_bytes()
    head = head_of(promoted)
    monkeypatch.setenv("OMH_FAULT", "commit:object")  # the commit's write fails (EIO)
    monkeypatch.setenv("OMH_FAULT_ERRNO", "EIO")
    with pytest.raises(GitFailure, match="nothing was committed"):
        remove_team_note(open_workspace(promoted), Key(A))
    assert path.read_bytes() == committed and head_of(promoted) == head
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # nothing set aside
    monkeypatch.delenv("OMH_FAULT")
    remove_team_note(open_workspace(promoted), Key(A))
    assert not path.exists() and not path.parent.exists()  # unlinked, empty folder pruned


def test_a_name_that_is_no_key_is_refused_with_the_others(ready: Path) -> None:
    problems = _refused(ready, ["Not A Key!", "surprise/nobody-wrote-this"])
    assert problems == [
        "Not A Key!: no local note has this key (`omh memory` lists them)",
        "surprise/nobody-wrote-this: no local note has this key (`omh memory` lists them)"]


def test_a_promote_signs_off_only_when_asked(ready: Path) -> None:
    promote(open_workspace(ready), [A])
    assert "Signed-off-by" not in git(ready, "log", "-1", "--format=%B")
    promote(open_workspace(ready), [B], signoff=True)
    assert "Signed-off-by: Test Person <test@example.invalid>" in git(
        ready, "log", "-1", "--format=%B")


# --- shown: only what review showed is committed -------------------------------

def _text(repo: Path, key: str) -> bytes:
    return (_store(repo) / f"{key}.md").read_bytes()


def test_what_review_showed_is_committed(ready: Path) -> None:
    shown = {A: _text(ready, A), B: _text(ready, B), "surprise/not-named": b"other"}
    done = promote(open_workspace(ready), [A, B], shown=shown)
    assert set(done.keys) == {Key(A), Key(B)}
    assert _in_head(ready, _path(A)) and _in_head(ready, _path(B))


def test_a_note_changed_since_review_showed_it_is_refused_by_name(ready: Path) -> None:
    before = {A: _text(ready, A), B: _text(ready, B)}
    shown = {A: before[A], B: before[B].replace(b"Mutants", b"Shown")}
    with pytest.raises(PromoteRefused) as refused:
        promote(open_workspace(ready), [A, B], shown=shown)
    assert refused.value.problems == [
        f"local/{B} changed since review showed it, so nothing was committed; look at it "
        f"(omh memory show {B} --layer local) and review again"]
    assert not _in_head(ready, _path(A)) and not _in_head(ready, _path(B))
    assert {A: _text(ready, A), B: _text(ready, B)} == before  # both local copies kept


def test_finishing_only_reports_the_commit_head_holds(ready: Path) -> None:
    _commit_by_hand(ready, A)
    done = promote(open_workspace(ready), [A])
    assert done.commit == head_of(ready)
    assert done.finished == (Key(A),) and not (_store(ready) / f"{A}.md").exists()


def test_the_promote_local_fault_point_is_after_the_first_local_copy(
    ready: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`promote:local` (faults.py) stands between the first local copy removed and
    the others: the crash tests rely on that moment."""
    monkeypatch.setenv("OMH_FAULT", "promote:local")
    monkeypatch.setenv("OMH_FAULT_ERRNO", "EIO")
    with pytest.raises(OSError) as failed:
        promote(open_workspace(ready), [A, B])
    assert failed.value.errno == errno.EIO  # the fault point's, no other failure
    assert _in_head(ready, _path(A)) and _in_head(ready, _path(B))
    assert not (_store(ready) / f"{A}.md").exists()
    assert (_store(ready) / f"{B}.md").exists()


def test_a_local_copy_removed_while_promote_ran_is_not_reported_left(ready: Path) -> None:
    proc = start_at_fault(ready, "promote:remove:stop", "memory", "promote", A, B, "--json")
    wait_stopped(proc)
    (_store(ready) / f"{A}.md").unlink()  # the user removed it meanwhile
    run = resume(proc)
    assert run.code == 0, run.err
    out = run.json()
    assert out["left_in_local"] == [] and out["changed_in_local"] == []
    assert sorted(out["promoted"]) == sorted([A, B])
    assert not (_store(ready) / f"{B}.md").exists()


def test_rm_names_a_symlink_where_the_note_is(promoted: Path) -> None:
    path = promoted / _path(A)
    path.unlink()
    path.symlink_to(promoted / "README.md")
    assert f"{_path(A)} is a symlink in the working tree" in _rm_refused(promoted)
    assert path.is_symlink()


def test_a_copy_that_cannot_be_hashed_is_put_back(
    promoted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the copy set aside fails (an I/O error): rm fails, the file stays."""
    import omh_git_memory.actions.promote as promote_module

    def unreadable(*_args: object) -> str:
        raise GitFailure("hashing failed")

    monkeypatch.setattr(promote_module, "worktree_blob_id", unreadable)
    path = promoted / _path(A)
    committed = path.read_bytes()
    head = head_of(promoted)
    with pytest.raises(GitFailure):
        remove_team_note(open_workspace(promoted), Key(A))
    assert path.read_bytes() == committed and head_of(promoted) == head
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_the_advice_names_every_local_note_a_chain_of_links_needs(repo_dir: Path) -> None:
    """A → B → C, all local: promoting A alone is refused, and the command the advice
    gives promotes the whole chain at once (before, it named B only, and failed
    again on C)."""
    init_committed(repo_dir)
    c = "surprise/the-cache-is-cold"
    b = "surprise/the-build-reads-the-cache"
    a = "surprise/ci-is-slow"
    for observed, link in (("The cache is cold.", None), ("The build reads the cache.", c),
                           ("CI is slow.", b)):
        extra = ["--relates-to", link] if link else []
        assert omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", observed,
                   "--evidence", "v", "--answers", "q", *extra).code == 0
    run = omh(repo_dir, "memory", "promote", a)
    assert run.code == 1
    advice = f"omh memory promote {a} {b} {c}"
    assert advice in run.err, run.err
    again = omh(repo_dir, *advice.split()[1:])
    assert again.code == 0, again.err
