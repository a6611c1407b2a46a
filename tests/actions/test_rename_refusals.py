"""`omh memory mv` refusals that change nothing, and what a team rename leaves behind.

Each refusal is one line on stderr, exit 1, with HEAD, the index and the store
as they were; a rename that goes through says where the note now is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, local_store, note_text, omh, remember_linked, with_linked_team_notes
from tests.helpers.repo import git_state


@pytest.fixture
def team_repo(repo_dir: Path) -> Path:
    """Three team notes, `ci` linking `deploy`."""
    return with_linked_team_notes(repo_dir)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _refused(repo: Path, says: str, *args: str) -> str:
    """`omh memory mv ARGS` refused with `says` in one line, nothing changed."""
    before = git_state(repo)
    store = local_store(repo)
    files = _files(store) if store.exists() else {}
    run = omh(repo, "memory", "mv", *args)
    assert run.code == 1, (run.out, run.err)
    assert says in run.err and run.err.count("\n") == 1, run.err
    assert git_state(repo) == before
    assert (_files(store) if store.exists() else {}) == files
    return run.err


def test_mv_of_a_key_two_team_files_claim_is_refused(team_repo: Path) -> None:
    git(team_repo, "mv", ".omh/notes/other.md", ".omh/notes/copy.md")
    (team_repo / ".omh/notes/copy.md").write_text(note_text("deploy", body="Copy.\n"))
    git(team_repo, "commit", "-qam", "a second file claims deploy")
    err = _refused(team_repo, "is claimed by 2 files", "deploy", "ops/deploy")
    assert "DuplicateKey" in err and "copy.md" in err and "deploy.md" in err


def test_mv_of_a_note_that_does_not_read_back_is_refused(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    store = local_store(repo_dir)
    (store / "broken.md").write_text("no frontmatter here\n")
    err = _refused(repo_dir, "does not read back as a note", "broken", "fixed")
    assert "omh memory lint" in err and "broken.md" in err


def test_mv_in_the_wrong_layer_names_the_layer_that_holds_it(team_repo: Path) -> None:
    err = _refused(team_repo, "no note deploy in the local layer", "deploy", "x",
                   "--layer", "local")
    assert "the team layer holds it: use --layer team" in err
    err = _refused(team_repo, "no note nothing/here in any layer", "nothing/here", "x")
    assert "`omh memory` lists the keys" in err


def test_team_mv_onto_a_path_held_at_head_is_refused(team_repo: Path) -> None:
    # .omh/notes/taken.md claims another key: no note is `taken`, but its path is.
    (team_repo / ".omh/notes/taken.md").write_text(note_text("elsewhere"))
    git(team_repo, "add", "-A")
    git(team_repo, "commit", "-qm", "a file whose key is not its path")
    _refused(team_repo, ".omh/notes/taken.md exists at HEAD", "deploy", "taken")


def test_local_mv_onto_a_team_path_held_at_head_is_refused(team_repo: Path) -> None:
    (team_repo / ".omh/notes/taken.md").write_text(note_text("elsewhere"))
    git(team_repo, "add", "-A")
    git(team_repo, "commit", "-qm", "a file whose key is not its path")
    mine = remember_linked(team_repo, "Local thing.")
    _refused(team_repo, "exists in the team layer", mine, "taken")


def test_team_mv_onto_an_untracked_file_is_refused(team_repo: Path) -> None:
    loose = team_repo / ".omh/notes/ops/deploy.md"
    loose.parent.mkdir()
    loose.write_text("my draft, not committed\n")
    _refused(team_repo, "already exists in the index or working tree", "deploy", "ops/deploy")
    assert loose.read_text() == "my draft, not committed\n"


def test_team_mv_refuses_a_linking_note_deleted_in_the_working_tree(team_repo: Path) -> None:
    (team_repo / ".omh/notes/ci.md").unlink()
    err = _refused(team_repo, "ci.md is deleted in the working tree", "deploy", "ops/deploy")
    assert "git restore" in err and not (team_repo / ".omh/notes/ci.md").exists()


def test_team_mv_of_a_note_deleted_in_the_working_tree_goes_through(team_repo: Path) -> None:
    """The old file is what the commit deletes: its absence on disk loses nothing."""
    (team_repo / ".omh/notes/deploy.md").unlink()
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--json")
    assert run.code == 0, run.err
    assert git(team_repo, "status", "--porcelain") == ""
    assert "key: ops/deploy\n" in (team_repo / ".omh/notes/ops/deploy.md").read_text()


def test_team_mv_commit_says_how_many_notes_were_relinked(team_repo: Path) -> None:
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--json")
    assert run.code == 0, run.err
    out = run.json()["renamed"]
    assert out["path"] == ".omh/notes/ops/deploy.md"
    assert out["commit"] == git(team_repo, "rev-parse", "HEAD").strip()
    assert git(team_repo, "log", "-1", "--format=%B").strip() == (
        "omh: rename deploy to ops/deploy\n\nRenamed by `omh memory mv`; the links of 1 "
        "other note rewritten.")
    run = omh(team_repo, "memory", "mv", "other", "misc/other")
    assert run.code == 0, run.err
    assert git(team_repo, "log", "-1", "--format=%B").strip() == (
        "omh: rename other to misc/other\n\nRenamed by `omh memory mv`.")


def test_team_mv_removes_the_folder_it_emptied(team_repo: Path) -> None:
    assert omh(team_repo, "memory", "mv", "deploy", "ops/deploy").code == 0
    assert omh(team_repo, "memory", "mv", "ops/deploy", "deploy").code == 0
    assert not (team_repo / ".omh/notes/ops").exists()
    assert (team_repo / ".omh/notes").is_dir()


def test_local_mv_says_the_new_file(repo_dir: Path) -> None:
    old = remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "mv", old, "surprise/alpha-breaks", "--json")
    assert run.code == 0, run.err
    out = run.json()["renamed"]
    assert out["path"] == str(local_store(repo_dir) / "surprise/alpha-breaks.md")
    assert "commit" not in out
    assert (local_store(repo_dir) / "surprise/alpha-breaks.md").is_file()


def test_team_mv_refuses_a_symlink_in_place_of_the_note(team_repo: Path, tmp_path: Path) -> None:
    """A symlink where the note's file was would be left behind, untracked, by a
    commit that deletes the note: refused before anything is written."""
    target = tmp_path / "elsewhere.md"
    target.write_text((team_repo / ".omh/notes/deploy.md").read_text())
    (team_repo / ".omh/notes/deploy.md").unlink()
    (team_repo / ".omh/notes/deploy.md").symlink_to(target)
    _refused(team_repo, ".omh/notes/deploy.md is a symlink on disk", "deploy", "ops/deploy")
    assert (team_repo / ".omh/notes/deploy.md").is_symlink()


def test_team_mv_names_a_symlinked_linking_note_as_a_symlink(team_repo: Path,
                                                             tmp_path: Path) -> None:
    target = tmp_path / "ci.md"
    target.write_text((team_repo / ".omh/notes/ci.md").read_text())
    (team_repo / ".omh/notes/ci.md").unlink()
    (team_repo / ".omh/notes/ci.md").symlink_to(target)
    _refused(team_repo, ".omh/notes/ci.md is a symlink on disk", "deploy", "ops/deploy")


def test_team_mv_refuses_a_staged_edit_with_what_to_run_before_mv_again(team_repo: Path
                                                                         ) -> None:
    ci = team_repo / ".omh/notes/ci.md"
    ci.write_text(ci.read_text() + "staged\n")
    git(team_repo, "add", str(ci))
    ci.write_text(ci.read_text().replace("staged\n", ""))
    err = _refused(team_repo, ".omh/notes/ci.md has changes staged in the index, which the "
                   "rename's commit would drop", "deploy", "ops/deploy")
    assert "then run mv again" in err
