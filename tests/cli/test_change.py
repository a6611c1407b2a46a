"""What `omh memory update`, `edit` and `mv` tell the person who ran them: the note
changed and where, the commit a team change made, the list items a replacing
option dropped, a title left behind, and the links a rename rewrote or left."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import local_store, omh, remember_linked, with_linked_team_notes
from tests.helpers.repo import head_of

A = "surprise/alpha-fails"

# Stands in for the person's editor: replaces EDIT_FROM with EDIT_TO, if given.
EDITOR = """\
import os, sys
path = sys.argv[-1]
text = open(path, encoding="utf-8").read()
if os.environ.get("EDIT_FROM"):
    text = text.replace(os.environ["EDIT_FROM"], os.environ["EDIT_TO"])
open(path, "w", encoding="utf-8").write(text)
"""


@pytest.fixture
def team_repo(repo_dir: Path) -> Path:
    """Three team notes, `ci` linking `deploy`."""
    return with_linked_team_notes(repo_dir)


@pytest.fixture
def editor(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    return {"VISUAL": f"{sys.executable} {script}", "EDITOR": ""}


# --- update -------------------------------------------------------------------

def test_update_of_a_local_note_names_it_and_its_file_and_nothing_more(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    run = omh(repo_dir, "memory", "update", A, "--evidence", "strace shows it")
    assert run.code == 0, run.err
    assert run.out == f"updated local/{A}\n  {local_store(repo_dir) / A}.md\n"


def test_update_of_the_same_text_is_no_change(repo_dir: Path) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "update", A, "--evidence", "v")
    assert (run.code, run.out) == (0, f"no change: local/{A} already holds that\n")


def test_update_of_a_team_note_names_the_commit_it_made(team_repo: Path) -> None:
    run = omh(team_repo, "memory", "update", "deploy", "--title", "How we deploy")
    assert run.code == 0, run.err
    commit = head_of(team_repo)
    assert run.out == (f"updated team/deploy: commit {commit[:12]} changes "
                       ".omh/notes/deploy.md; push the branch to share it\n")


def test_update_says_which_items_a_replacing_list_dropped(repo_dir: Path) -> None:
    remember_linked(repo_dir, "Alpha fails.", "first-link")
    run = omh(repo_dir, "memory", "update", A, "--answers", "new?", "--relates-to", "other")
    assert run.code == 0, run.err
    assert run.out.splitlines()[2:] == [
        "note: --answers replaced the whole list; no longer in it: q? "
        "(--add-answers adds to the list instead)",
        "note: --relates-to replaced the whole list; no longer in it: first-link "
        "(--add-relates-to adds to the list instead)",
    ]


def test_update_of_observed_says_the_title_stays_and_how_to_change_it(repo_dir: Path) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "update", A, "--observed", "Alpha fails twice.")
    assert run.code == 0, run.err
    assert run.out.splitlines()[2:] == [
        "note: the title still reads 'Alpha fails.', no longer the first sentence of "
        f"Observed; --title changes it, and `omh memory mv {A} NEW` renames the key"]


def test_update_keeps_a_link_to_no_note_yet_unless_strict(repo_dir: Path) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    strict = omh(repo_dir, "memory", "update", A, "--add-relates-to", "later", "--strict")
    assert strict.code == 1 and "later" in strict.err
    run = omh(repo_dir, "memory", "update", A, "--add-relates-to", "later", "--json")
    assert run.code == 0, run.err
    assert run.json()["changed"] is True
    assert "[[later]]" in (local_store(repo_dir) / f"{A}.md").read_text()


def test_update_json_of_a_team_note_carries_its_commit_and_a_local_one_none(
    team_repo: Path,
) -> None:
    team = omh(team_repo, "memory", "update", "deploy", "--title", "Ship", "--json").json()
    assert team["commit"] == head_of(team_repo) and team["layer"] == "team"
    remember_linked(team_repo, "Alpha fails.")
    local = omh(team_repo, "memory", "update", A, "--evidence", "w", "--json").json()
    assert "commit" not in local and local["layer"] == "local"


# --- edit -----------------------------------------------------------------------

def test_edit_says_what_it_edited_and_where(repo_dir: Path, editor: dict[str, str]) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "edit", A, env={**editor, "EDIT_FROM": "\nv\n",
                                                   "EDIT_TO": "\nstrace shows it\n"})
    assert run.code == 0, run.err
    assert run.out == f"edited local/{A}\n  {local_store(repo_dir) / A}.md\n"


def test_edit_saved_as_it_was_is_no_change_in_text_and_json(
    repo_dir: Path, editor: dict[str, str],
) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "edit", A, env=editor)
    assert (run.code, run.out) == (0, f"no change: {A} was saved as it was\n")
    run = omh(repo_dir, "memory", "edit", A, "--json", env=editor)
    assert run.json() == {"key": A, "changed": False}


def test_edit_keeps_a_link_to_no_note_yet_unless_strict(
    repo_dir: Path, editor: dict[str, str],
) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    env = {**editor, "EDIT_FROM": "## Answers\n", "EDIT_TO": "## Related\n\n- [[later]]\n\n"
           "## Answers\n"}
    assert omh(repo_dir, "memory", "edit", A, "--strict", env=env).code == 1
    run = omh(repo_dir, "memory", "edit", A, env=env)
    assert run.code == 0, run.err
    assert "[[later]]" in (local_store(repo_dir) / f"{A}.md").read_text()


# --- mv -------------------------------------------------------------------------

def test_local_mv_with_no_links_to_it_says_one_line(repo_dir: Path) -> None:
    remember_linked(repo_dir, "Alpha fails.")
    run = omh(repo_dir, "memory", "mv", A, "alpha")
    assert run.code == 0, run.err
    assert run.out == f"renamed local/{A} to alpha ({local_store(repo_dir) / 'alpha.md'})\n"
    assert "commit" not in omh(repo_dir, "memory", "mv", "alpha", A, "--json").json()["renamed"]


def test_team_mv_names_its_commit_and_every_note_it_relinked(team_repo: Path) -> None:
    mine = remember_linked(team_repo, "Local thing.", "deploy")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy")
    assert run.code == 0, run.err
    commit = head_of(team_repo)
    assert run.out.splitlines() == [
        f"renamed team/deploy to ops/deploy: commit {commit[:12]} moves it to "
        ".omh/notes/ops/deploy.md; push the branch to share the rename",
        f"rewrote [[deploy]] to [[ops/deploy]] in 2 notes: ci, local/{mine}",
    ]
    back = omh(team_repo, "memory", "mv", "ops/deploy", "deploy", "--json").json()
    assert back["renamed"]["commit"] == head_of(team_repo)


def test_team_mv_leaving_one_local_link_says_so_in_the_singular(team_repo: Path) -> None:
    mine = remember_linked(team_repo, "Local thing.", "deploy")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--no-relink-local")
    assert run.code == 0, run.err
    assert run.out.splitlines()[2:] == [
        "1 note of another layer still links to [[deploy]], which omh leaves as it is "
        "(--no-relink-local); change it yourself (`omh memory edit KEY`):",
        f"  local/{mine}",
    ]


def test_team_mv_leaving_two_local_links_says_so_in_the_plural(team_repo: Path) -> None:
    first = remember_linked(team_repo, "Local thing.", "deploy")
    second = remember_linked(team_repo, "Other local thing.", "deploy")
    run = omh(team_repo, "memory", "mv", "deploy", "ops/deploy", "--no-relink-local")
    assert run.code == 0, run.err
    assert run.out.splitlines()[2:] == [
        "2 notes of another layer still link to [[deploy]], which omh leaves as they are "
        "(--no-relink-local); change them yourself (`omh memory edit KEY`):",
        *sorted([f"  local/{first}", f"  local/{second}"]),
    ]
