"""promote --signoff and rm --signoff: a Signed-off-by trailer from git's identity.

Promote commits through libgit2, so the repository's own commit hooks do not run
(documented in `promote --help`); a real hook proves it here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omh_git_memory.git.commit import signed_off
from tests.helpers import git, omh
from tests.helpers.repo import init_committed

KEY = "surprise/ports-are-taken"


@pytest.fixture
def one_note(repo_dir: Path) -> Path:
    init_committed(repo_dir)
    run = omh(repo_dir, "memory", "remember", "--expected", "a free port", "--observed",
              "Ports are taken.", "--evidence", "bind: address in use", "--answers", "why?")
    assert run.code == 0, run.err
    return repo_dir


def test_signed_off_appends_one_trailer_paragraph() -> None:
    assert signed_off("subject\n\nbody\n", "A B", "a@b") == (
        "subject\n\nbody\n\nSigned-off-by: A B <a@b>\n")
    assert signed_off("subject\n\nbody\n\nCo-authored-by: C <c@d>\n", "A B", "a@b") == (
        "subject\n\nbody\n\nCo-authored-by: C <c@d>\nSigned-off-by: A B <a@b>\n")
    once = signed_off("s\n\nb\n", "A B", "a@b")
    assert signed_off(once, "A B", "a@b") == once
    assert signed_off("subject only", "A", "a@b") == "subject only\n\nSigned-off-by: A <a@b>\n"


def test_promote_signoff_adds_the_committer_trailer(one_note: Path) -> None:
    git(one_note, "config", "user.name", "Signing Person")
    git(one_note, "config", "user.email", "sign@example.invalid")
    run = omh(one_note, "memory", "promote", KEY, "--signoff")
    assert run.code == 0, run.err
    body = git(one_note, "log", "-1", "--format=%B")
    assert body.rstrip("\n").endswith("\n\nSigned-off-by: Signing Person <sign@example.invalid>")
    trailers = git(one_note, "log", "-1", "--format=%(trailers:key=Signed-off-by,valueonly)")
    assert trailers.strip() == "Signing Person <sign@example.invalid>"


def test_without_signoff_there_is_no_trailer(one_note: Path) -> None:
    assert omh(one_note, "memory", "promote", KEY).code == 0
    assert "Signed-off-by" not in git(one_note, "log", "-1", "--format=%B")


def test_rm_of_a_team_note_signs_off_too(one_note: Path) -> None:
    assert omh(one_note, "memory", "promote", KEY).code == 0
    run = omh(one_note, "memory", "rm", KEY, "--signoff")
    assert run.code == 0, run.err
    trailers = git(one_note, "log", "-1", "--format=%(trailers:key=Signed-off-by,valueonly)")
    assert trailers.strip() == "Test Person <test@example.invalid>"


def test_rm_signoff_of_a_local_note_is_refused_and_removes_nothing(one_note: Path) -> None:
    run = omh(one_note, "memory", "rm", KEY, "--signoff")
    assert run.code == 1 and "makes none" in run.err
    assert omh(one_note, "memory", "show", KEY).code == 0


def test_promote_runs_no_git_hook_and_help_says_so(one_note: Path) -> None:
    hooks = one_note / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("pre-commit", "commit-msg"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho ran > '{one_note}/{name}.ran'\nexit 1\n")
        os.chmod(hook, 0o755)
    assert omh(one_note, "memory", "promote", KEY).code == 0
    assert not (one_note / "pre-commit.ran").exists()
    assert not (one_note / "commit-msg.ran").exists()
    help_text = " ".join(omh(one_note, "memory", "promote", "--help").out.split())
    assert "pre-commit and commit-msg hooks do not run" in help_text
    assert "--signoff" in help_text
