"""`--ref REV` on `omh memory recall`, `show` and the listing: the answer of a past
commit says which commit it is and that the local notes are left out (one line of
text, `"ref"` in `--json`), every line still with its layer and date; a REV that
names no commit is one line on stderr and exit 1."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.helpers import commit_files, git, make_repo, note_text, omh, remember_linked
from tests.helpers.repo import init_committed

NOTE = ".omh/notes/blue-green.md"
DATED = re.compile(r"\b(team|local) · \d{4}-\d{2}-\d{2}\b")


@pytest.fixture()
def history(repo_dir: Path) -> tuple[Path, str]:
    """omh set up, a team note and a document at tag v1, then both changed, and a
    local note on the same subject; the repository and v1's commit."""
    init_committed(repo_dir)
    v1 = commit_files(repo_dir, {NOTE: note_text("blue-green", body="Deploys switch blue "
                                                 "and green.\n"),
                                 "docs/deploy.md": "# Deploy\n\n## Rollback\n\nSwitch blue "
                                 "and green back.\n"}, "blue-green")
    git(repo_dir, "tag", "v1")
    commit_files(repo_dir, {NOTE: None, "docs/deploy.md": "# Deploy\n\nA canary.\n"}, "canary")
    remember_linked(repo_dir, "Blue and green were both down.")
    return repo_dir, v1


def test_recall_at_a_commit_says_so_and_answers_with_that_commits_team_layer(
        history: tuple[Path, str]) -> None:
    repo, v1 = history
    now = omh(repo, "memory", "recall", "blue green")
    assert now.code == 0 and "local ·" in now.out and "blue-green " not in now.out
    run = omh(repo, "memory", "recall", "blue green", "--ref", "v1")
    assert run.code == 0, run.err
    first, *lines = run.out.splitlines()
    assert first == (f"at v1 ({v1[:12]}): the team notes and stubs of that commit; "
                     "local notes are left out")
    named = [line for line in lines if not line.startswith(("stale:", "no note"))]
    assert {line.split()[0] for line in named} >= {"blue-green", "docs/deploy"}
    assert all(DATED.search(line) and "team ·" in line for line in named)  # date and layer
    assert "local ·" not in run.out
    answer = omh(repo, "memory", "recall", "blue green", "--ref", "v1", "--json").json()
    assert answer["ref"] == {"rev": "v1", "commit": v1, "local": "excluded",
                             "settings": "committed"}
    assert {r["layer"] for r in answer["results"]} == {"team"}
    assert all(r["recorded"] for r in answer["results"])
    note = next(r for r in answer["results"] if r["key"] == "blue-green")
    assert note["changed"]["commit"] == v1  # who last changed it, as of v1
    assert "ref" not in omh(repo, "memory", "recall", "blue green", "--json").json()


def test_show_and_the_listing_at_a_commit_say_so_too(history: tuple[Path, str]) -> None:
    repo, v1 = history
    shown = omh(repo, "memory", "show", "blue-green", "--ref", "v1")
    assert shown.code == 0, shown.err
    first, header, *_ = shown.out.splitlines()
    assert first.startswith(f"at v1 ({v1[:12]}):") and "local notes are left out" in first
    assert header == f"blue-green  team · 2026-11-01  {v1[:12]}:{NOTE}"
    assert omh(repo, "memory", "show", "blue-green", "--ref", "v1", "--json").json()["ref"][
        "commit"] == v1
    gone = omh(repo, "memory", "show", "blue-green")
    assert gone.code == 1
    listed = omh(repo, "memory", "--ref", "v1")
    assert listed.code == 0, listed.err
    assert listed.out.splitlines()[:2] == [
        f"at v1 ({v1[:12]}): the team notes and stubs of that commit; local notes are left out",
        f"team · 1 note, 2 stubs, 1 repository topic at v1 {v1[:12]}"]
    assert "local · left out" in listed.out and "surprise/" not in listed.out
    data = omh(repo, "memory", "list", "--ref", "v1", "--json").json()
    assert data["head"] == v1 and data["ref"]["local"] == "excluded"
    assert {n["layer"] for n in data["notes"]} == {"team"}
    assert data["counts"]["local"] is None  # left out, not empty
    missing = omh(repo, "memory", "show", "no-such-note-anywhere-at-all", "--ref", "v1")
    assert missing.code == 1
    assert missing.err.rstrip().endswith("; `omh memory list --ref v1` lists the keys")


@pytest.mark.parametrize(("rev", "said"), [
    ("nope", "omh: revision 'nope' names no commit in "),
    ("HEAD~40", "omh: revision 'HEAD~40' names no commit in "),
    ("HEAD^{tree}", "omh: revision 'HEAD^{tree}' names a tree, not a commit"),
    ("v1:docs/deploy.md", "omh: revision 'v1:docs/deploy.md' names a blob, not a commit"),
    ("--json", "omh: revision '--json' names no commit in "),  # a value, not the option
    ("-x", "omh: revision '-x' names no commit in "),
    ("a\x1b]0;pwned\x07b", "omh: revision 'a\\x1b]0;pwned\\x07b' names no commit in "),
    ("HEAD\x00", "omh: revision 'HEAD\\x00' holds a NUL byte"),
])
@pytest.mark.parametrize("command", [["recall", "q"], ["show", "readme"], ["list"], []])
def test_a_revision_naming_no_commit_is_one_line_and_exit_1(
        history: tuple[Path, str], rev: str, said: str, command: list[str]) -> None:
    repo, _ = history
    run = omh(repo, "memory", *command, f"--ref={rev}")
    assert (run.code, run.out) == (1, ""), run.err
    assert run.err.startswith(said) and run.err.count("\n") == 1, run.err
    if "names no commit" in said:  # and what to name instead
        assert "name a branch, a tag or a commit id this clone has" in run.err


def test_a_revision_that_is_not_utf8_is_refused_as_every_such_argument_is(
        history: tuple[Path, str]) -> None:
    # The command line reads its arguments as UTF-8 (a usage error, exit 2), before
    # any revision is looked up; git/test_history.py finds such a branch by its bytes.
    repo, _ = history
    run = omh(repo, "memory", "recall", "q", "--ref", os.fsdecode(b"\xff\xfe"))
    assert run.code == 2 and "is not valid UTF-8" in run.err and run.out == ""


def test_the_option_is_a_usage_error_without_a_value_or_before_another_command(
        history: tuple[Path, str]) -> None:
    repo, _ = history
    assert omh(repo, "memory", "recall", "q", "--ref").code == 2
    before = omh(repo, "memory", "--ref", "v1", "recall", "q")
    assert before.code == 2 and "omh memory recall --ref REV" in before.err


def test_an_unborn_head_is_refused_in_words(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", "empty")
    run = omh(tmp_path / "empty", "memory", "recall", "q", "--ref", "HEAD")
    assert run.code == 1 and run.err.startswith("omh: HEAD names no commit yet")
    assert omh(tmp_path / "empty", "memory", "list", "--ref", "main").code == 1


def test_a_commit_before_omh_init_answers_with_its_stubs_and_says_whose_settings(
        repo_dir: Path) -> None:
    first = commit_files(repo_dir, {"docs/deploy.md": "# Deploy\n\nThe canary waits.\n"})
    init_committed(repo_dir)
    run = omh(repo_dir, "memory", "recall", "canary", "--ref", first)
    assert run.code == 0, run.err
    assert run.out.splitlines()[0].endswith(
        "(it holds no .omh/memory.toml: omh's default settings)")
    assert "docs/deploy" in run.out
    assert omh(repo_dir, "memory", "recall", "canary", "--ref", first, "--json").json()[
        "ref"]["settings"] == "defaults"


def test_a_shallow_clone_answers_at_its_boundary_and_refuses_beyond_it(tmp_path: Path) -> None:
    src = tmp_path / "src"
    make_repo(src)
    for n in range(3):
        commit_files(src, {f"docs/d{n}.md": f"# Doc {n}\n\nThe canary {n}.\n"}, f"doc {n}")
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{src}", "shallow")
    shallow = tmp_path / "shallow"
    boundary = git(shallow, "rev-parse", "HEAD~1").strip()
    answer = omh(shallow, "memory", "recall", "canary", "--ref", "HEAD~1", "--json").json()
    assert answer["ref"]["commit"] == boundary
    # older documents are dated by the oldest commit the clone holds, the boundary
    assert {r["changed"]["commit"] for r in answer["results"]} == {boundary}
    beyond = omh(shallow, "memory", "recall", "canary", "--ref", "HEAD~2")
    assert beyond.code == 1 and "this clone is shallow" in beyond.err


def test_lint_at_a_commit_derives_its_stubs_under_that_commits_settings(repo_dir: Path) -> None:
    # At v1 the guide is left out of the stubs, so a team note's link to its stub
    # dangles there; the checkout's settings (which keep the guide) must not hide it.
    init_committed(repo_dir)
    settings = (repo_dir / ".omh/memory.toml").read_text(encoding="utf-8")
    commit_files(repo_dir, {
        ".omh/memory.toml": settings.replace("[stubs]\nexclude = []",
                                             '[stubs]\nexclude = ["docs/guide.md"]'),
        "docs/guide.md": "# Guide\n\nRead me.\n",
        ".omh/notes/reading.md": note_text("reading", body="See [[docs/guide]].\n")})
    git(repo_dir, "tag", "v1")
    commit_files(repo_dir, {".omh/memory.toml": settings})
    assert omh(repo_dir, "memory", "lint", "--ref", "HEAD").code == 0
    past = omh(repo_dir, "memory", "lint", "--ref", "v1", "--json")
    assert past.code == 1, past.out
    assert "DanglingLink" in [f["rule"] for f in past.json()["findings"]]
