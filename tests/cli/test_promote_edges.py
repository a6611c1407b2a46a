"""`omh memory promote` (cli/promote.py): what the text says, line by line, for a
plain promote and for one that finishes a promote killed after its commit."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, omh
from tests.helpers.notes import remembered


def test_promote_says_the_commit_each_path_and_what_to_do_next(repo_dir: Path) -> None:
    keys = [remembered(repo_dir, observed) for observed in ("Port one.", "Port two.")]
    run = omh(repo_dir, "memory", "promote", *keys)
    assert run.code == 0, run.err
    head = git(repo_dir, "rev-parse", "HEAD").strip()
    assert run.out.splitlines() == [
        f"committed {head[:12]}: 2 notes now in team",
        *(f"  .omh/notes/{k}.md" for k in keys),
        "push the branch to share them",
    ]


def test_promote_after_one_killed_past_its_commit_says_it_finished_it(repo_dir: Path) -> None:
    key = remembered(repo_dir, "Port three.")
    killed = omh(repo_dir, "memory", "promote", key, env={"OMH_FAULT": "promote:remove"})
    assert killed.code != 0
    run = omh(repo_dir, "memory", "promote", key)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "finished an interrupted promote of 1 note"
    assert lines[1].startswith("committed ") and lines[-1] == "push the branch to share it"


def test_promote_names_a_key_left_out_because_only_the_team_holds_it(repo_dir: Path) -> None:
    shared = remembered(repo_dir, "Port four.")
    assert omh(repo_dir, "memory", "promote", shared).code == 0
    fresh = remembered(repo_dir, "Port five.")
    run = omh(repo_dir, "memory", "promote", shared, fresh)
    assert run.code == 0, run.err
    assert (f"left out {shared}: it is in the team layer already and not in the local one"
            in run.out.splitlines())
    assert f"  .omh/notes/{fresh}.md" in run.out.splitlines()
    assert run.out.endswith("push the branch to share it\n")
