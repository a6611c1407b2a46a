"""Issue 23, items 1, 2 and 13: the commit every team verb makes (promote, update,
edit, mv, rm) must leave git's index as git would — racily-clean entries still
re-checked —, must be finished by the next run after a kill once the branch has
moved, and must name a full disk as the cause of a failure. Test names start with
their class (dataloss, gitstate) for the report.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from omh_git_memory import cli
from tests.helpers import Run, git, make_repo, note_text, omh, remember_linked

A_TEXT = note_text("deploy", body="How we ship.\n")
B_TEXT = note_text("ci", body="Runs after [[deploy]].\n")
NOTES = ".omh/notes"

EDITOR = """\
import sys
path = sys.argv[-1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace("How we ship.", "How we ship it now."))
"""


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with omh initialised, two team notes (ci links to deploy), a
    user's file conf.txt, an editor that edits deploy, all committed."""
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# r\n", "conf.txt": "value=1\n",
                     f"{NOTES}/deploy.md": A_TEXT, f"{NOTES}/ci.md": B_TEXT})
    assert omh(repo, "init").code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "omh init")
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
    "rm": lambda _repo: ["memory", "rm", "deploy", "--layer", "team"],
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
