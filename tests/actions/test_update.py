"""`omh memory update` and `edit`, and `remember(replaces=…)` over MCP: real
repositories, the real CLI (tests.helpers.omh), a real MCP client."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.helpers import (
    SEED_ARGS,
    SEED_NOTE,
    Run,
    demo_run,
    git,
    local_store,
    omh,
    remember_linked,
    resume,
    start_at_fault,
    wait_stopped,
)
from tests.helpers.mcp import GOOD, remember_calls, text_of
from tests.helpers.repo import head_of

SEED_KEY = "surprise/mounting-a-credential-file-returns-ebusy"

# A note as a person might leave it: fields in their own order, one omh does not
# know, a section of its own, link text with spaces, blank lines of its own.
HAND_NOTE = """\
---
type: surprise
key: surprise/odd
recorded: 2026-11-02
reviewer:   Ada
source: cli
---

# The odd one.

Some intro prose.

## Expected
It would be plain.


## Observed
It is odd. Very odd.

## Evidence
the first evidence

## Notes
A section of the writer's own, with [[ readme ]] inside.

## Answers

- why is it odd?
"""


def _plant(repo: Path, key: str, text: str) -> Path:
    path = local_store(repo) / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _remember_seed(repo: Path) -> Path:
    run = omh(repo, *SEED_ARGS)
    assert run.code == 0, run.err
    return local_store(repo) / f"{SEED_KEY}.md"


# --- item 9: one trigger a note ------------------------------------------------------


def test_a_second_invalidated_by_is_refused_on_remember(repo_dir: Path) -> None:
    # The second --invalidated-by silently replaced the first.
    run = omh(repo_dir, *SEED_ARGS, "--invalidated-by", "base:2026-09",
              "--invalidated-by", "base:2026-10")
    assert run.code == 1, run.out
    assert "a note holds one trigger" in run.err, run.err
    assert run.err.count("\n") == 1
    assert not any(n["layer"] == "local" for n in omh(repo_dir, "memory", "--json")
                   .json()["notes"])


def test_a_second_invalidated_by_is_refused_on_update(repo_dir: Path) -> None:
    path = _remember_seed(repo_dir)
    before = path.read_bytes()
    run = omh(repo_dir, "memory", "update", SEED_KEY, "--invalidated-by", "base:2026-09",
              "--invalidated-by", "base:2026-10")
    assert run.code == 1 and "a note holds one trigger" in run.err, run.err
    assert path.read_bytes() == before


# --- update: only what is asked changes ----------------------------------------------


def test_update_changes_one_section_and_keeps_every_other_byte(repo_dir: Path) -> None:
    path = _plant(repo_dir, "surprise/odd", HAND_NOTE)
    run = omh(repo_dir, "memory", "update", "surprise/odd", "--evidence", "the new evidence\n"
              "on two lines", "--invalidated-by", "base:2026-09")
    assert run.code == 0, run.err
    assert "updated local/surprise/odd" in run.out
    expected = HAND_NOTE.replace("the first evidence", "the new evidence\non two lines")
    expected = expected.replace("source: cli\n", "source: cli\ninvalidated_by: base:2026-09\n")
    assert path.read_text() == expected


def test_update_replaces_lists_and_adds_a_missing_related_section(repo_dir: Path) -> None:
    path = _plant(repo_dir, "surprise/odd", HAND_NOTE)
    run = omh(repo_dir, "memory", "update", "surprise/odd", "--answers", "q one?",
              "--answers", "q two?", "--relates-to", "readme", "--relates-to", "readme")
    assert run.code == 0, run.err
    expected = HAND_NOTE.replace("- why is it odd?\n", "- q one?\n- q two?\n")
    assert path.read_text() == expected + "\n## Related\n\n- [[readme]]\n"
    again = omh(repo_dir, "memory", "update", "surprise/odd", "--relates-to", "readme",
                "--json")
    assert again.code == 0 and again.json()["changed"] is False  # the same text: no write


def test_update_of_observed_keeps_the_key_and_the_title_unless_told(repo_dir: Path) -> None:
    path = _remember_seed(repo_dir)
    run = omh(repo_dir, "memory", "update", SEED_KEY, "--observed", "Mounting it works now.")
    assert run.code == 0, run.err
    text = path.read_text()
    assert f"key: {SEED_KEY}\n" in text and "# Mounting a credential file returns EBUSY.\n" in text
    assert "## Observed\nMounting it works now.\n" in text
    assert "--title" in run.out and f"omh memory mv {SEED_KEY}" in run.out  # said, not done
    quiet = omh(repo_dir, "memory", "update", SEED_KEY, "--observed", "It works.", "--json")
    assert quiet.json()["title_differs"] is True
    told = omh(repo_dir, "memory", "update", SEED_KEY, "--title", "Mounting it works now.")
    assert told.code == 0, told.err
    assert "# Mounting it works now.\n" in path.read_text()
    assert path.exists() and len(list(local_store(repo_dir).rglob("*.md"))) == 1


@pytest.mark.parametrize(("args", "message"), [
    (["--evidence", "a line\n## Heading"], "changed the note's structure"),
    (["--evidence", "```\nunclosed"], "changed the note's structure"),
    (["--expected", "  "], "`expected` is empty"),
    (["--evidence", "bad \x1b escape"], "control character U+001B"),
    (["--invalidated-by", "whenever"], "not a trigger omh can evaluate"),
    (["--relates-to", "../x"], "relates_to:"),
    (["--relates-to", "no/such-note", "--strict"], "names no note"),
    (["--title", " \n "], "`title` is empty"),
    (["--recorded", "2026-02-30"], "not a date that exists"),
    ([], "nothing to update"),
])
def test_a_refused_update_writes_nothing(repo_dir: Path, args: list[str], message: str) -> None:
    path = _remember_seed(repo_dir)
    before = path.read_bytes()
    run = omh(repo_dir, "memory", "update", SEED_KEY, *args)
    assert run.code == 1, (run.out, run.err)
    assert message in run.err, run.err
    assert "Traceback" not in run.err
    assert path.read_bytes() == before


def test_update_refuses_a_section_of_another_note_type(repo_dir: Path) -> None:
    topic = "---\nkey: area\ntype: topic\nsource: cli\nrecorded: 2026-11-01\n---\n\n# Area\n"
    path = _plant(repo_dir, "area", topic)
    run = omh(repo_dir, "memory", "update", "area", "--evidence", "x")
    assert run.code == 1 and "topic note" in run.err and "omh memory edit" in run.err
    ok = omh(repo_dir, "memory", "update", "area", "--relates-to", "readme")
    assert ok.code == 0, ok.err
    assert path.read_text() == topic + "\n## Related\n\n- [[readme]]\n"


def test_a_mistyped_key_gets_the_nearest_one(repo_dir: Path) -> None:
    _remember_seed(repo_dir)
    run = omh(repo_dir, "memory", "update", SEED_KEY.replace("ebusy", "ebusi"), "--evidence",
              "x")
    assert run.code == 1 and f"did you mean {SEED_KEY}?" in run.err, run.err


def test_derived_notes_cannot_be_updated_and_say_why(repo_dir: Path) -> None:
    (repo_dir / "docs").mkdir()
    (repo_dir / "docs/deploy.md").write_text("# Deploy\n\n## Rolling back\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "docs")
    run = omh(repo_dir, "memory", "update", "docs/deploy", "--answers", "x")
    assert run.code == 1
    assert "derived from docs/deploy.md" in run.err and "edit the document" in run.err
    topic = [n["key"] for n in omh(repo_dir, "memory", "--json").json()["notes"]
             if n["type"] == "topic"]
    run = omh(repo_dir, "memory", "update", topic[0], "--answers", "x")
    assert run.code == 1 and "computed from the documents" in run.err, run.err
    assert git(repo_dir, "status", "--porcelain") == ""


def test_a_key_in_both_layers_needs_a_layer(repo_dir: Path) -> None:
    notes = repo_dir / ".omh/notes/surprise"
    notes.mkdir(parents=True)
    (notes / "odd.md").write_text(HAND_NOTE)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team note")
    local = _plant(repo_dir, "surprise/odd", HAND_NOTE)
    run = omh(repo_dir, "memory", "update", "surprise/odd", "--evidence", "x")
    assert run.code == 1 and "--layer team or --layer local" in run.err
    run = omh(repo_dir, "memory", "update", "surprise/odd", "--evidence", "x", "--layer", "local")
    assert run.code == 0, run.err
    assert "## Evidence\nx\n" in local.read_text()
    assert "the first evidence" in (notes / "odd.md").read_text()


# --- update: a local note changed meanwhile is not overwritten ------------------------


def _race(repo: Path, *args: str) -> tuple[subprocess.Popen[str], Callable[[], Run]]:
    """`omh ARGS` stopped just before it writes; and the call that lets it go on."""
    proc = start_at_fault(repo, "update:write:stop", *args)
    wait_stopped(proc)
    return proc, functools.partial(resume, proc)


def test_update_refuses_a_local_note_rewritten_since_it_was_read(repo_dir: Path) -> None:
    path = _remember_seed(repo_dir)
    _proc, resume = _race(repo_dir, "memory", "update", SEED_KEY, "--evidence", "mine")
    theirs = path.read_text().replace("EBUSY from the mount syscall", "written meanwhile")
    path.write_text(theirs)
    run = resume()
    assert run.code == 1 and "changed while update ran" in run.err, run.err
    assert path.read_text() == theirs
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # nothing left aside


def test_a_reader_never_sees_part_of_an_updated_local_note(repo_dir: Path) -> None:
    # A reader polls the file while updates rewrite it with large texts: every read
    # is one whole note (or, for the instant of the compare, no file at all).
    import threading

    path = _remember_seed(repo_dir)
    seen: list[bytes] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            with contextlib.suppress(FileNotFoundError):
                seen.append(path.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for fill in "abc":
            run = omh(repo_dir, "memory", "update", SEED_KEY, "--evidence", fill * 100_000)
            assert run.code == 0, run.err
    finally:
        stop.set()
        reader.join()
    complete = {SEED_NOTE.encode(), *(_seed_with(f * 100_000).encode() for f in "abc")}
    assert seen and all(data in complete for data in seen), {len(d) for d in seen}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".omh-")]


# --- update of a team note: a commit of its own ----------------------------------------

TEAM = "surprise/odd"
TEAM_PATH = ".omh/notes/surprise/odd.md"


@pytest.fixture
def team_repo(repo_dir: Path) -> Path:
    notes = repo_dir / ".omh/notes/surprise"
    notes.mkdir(parents=True)
    (notes / "odd.md").write_text(HAND_NOTE)
    (repo_dir / "other.txt").write_text("untouched\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "team note")
    return repo_dir


def test_update_of_a_team_note_is_a_commit_of_its_own(team_repo: Path) -> None:
    head = head_of(team_repo)
    (team_repo / "other.txt").write_text("a change of the user's, not committed\n")
    run = omh(team_repo, "memory", "update", TEAM, "--evidence", "the new evidence", "--json")
    assert run.code == 0, run.err
    commit = run.json()["commit"]
    assert head_of(team_repo) == commit and git(team_repo, "rev-parse", "HEAD~1").strip() == head
    assert git(team_repo, "show", "--name-only", "--format=%s", commit).split() == [
        "omh:", "update", TEAM, TEAM_PATH]
    expected = HAND_NOTE.replace("the first evidence", "the new evidence")
    assert git(team_repo, "show", f"HEAD:{TEAM_PATH}") == expected
    assert (team_repo / TEAM_PATH).read_text() == expected
    assert git(team_repo, "status", "--porcelain") == " M other.txt\n"


def test_update_of_a_team_note_refuses_an_uncommitted_edit(team_repo: Path) -> None:
    path = team_repo / TEAM_PATH
    edited = HAND_NOTE + "\nan edit nobody committed\n"
    path.write_text(edited)
    head = head_of(team_repo)
    run = omh(team_repo, "memory", "update", TEAM, "--evidence", "x")
    assert run.code == 1 and "not committed" in run.err, run.err
    assert "git commit" in run.err and "git restore" in run.err
    assert path.read_text() == edited and head_of(team_repo) == head
    git(team_repo, "add", TEAM_PATH)
    run = omh(team_repo, "memory", "update", TEAM, "--evidence", "x")
    assert run.code == 1 and "staged" in run.err, run.err
    assert path.read_text() == edited and head_of(team_repo) == head


def test_update_of_a_team_note_refuses_a_staged_removal(team_repo: Path) -> None:
    git(team_repo, "rm", "-q", "--cached", TEAM_PATH)
    head = head_of(team_repo)
    run = omh(team_repo, "memory", "update", TEAM, "--evidence", "x")
    assert run.code == 1 and "staged for removal" in run.err, run.err
    assert head_of(team_repo) == head


def test_update_of_a_team_note_never_writes_through_a_symlink(team_repo: Path,
                                                              tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "odd.md").write_text(HAND_NOTE)
    notes = team_repo / ".omh/notes/surprise"
    for child in notes.iterdir():
        child.unlink()
    notes.rmdir()
    notes.symlink_to(outside)
    head = head_of(team_repo)
    touched = outside.stat().st_mtime_ns
    run = omh(team_repo, "memory", "update", TEAM, "--evidence", "x")
    assert run.code == 1 and "symlink" in run.err, run.err
    assert (outside / "odd.md").read_text() == HAND_NOTE and head_of(team_repo) == head
    # Not even moved aside and back: nothing happened behind the symlink at all.
    assert outside.stat().st_mtime_ns == touched


@pytest.mark.parametrize(("args", "message"), [
    (["--evidence", "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"], "looks like"),
    (["--relates-to", "surprise/only-local"], "a teammate does not have"),
    (["--relates-to", "no/such"], "names no note"),
])
def test_update_of_a_team_note_refuses_what_promote_refuses(team_repo: Path, args: list[str],
                                                            message: str) -> None:
    run = omh(team_repo, "memory", "remember", "--expected", "a", "--observed", "Only local.",
              "--evidence", "e", "--answers", "q")
    assert run.code == 0, run.err
    head = head_of(team_repo)
    run = omh(team_repo, "memory", "update", TEAM, *args)
    assert run.code == 1 and message in run.err, run.err
    assert head_of(team_repo) == head and (team_repo / TEAM_PATH).read_text() == HAND_NOTE


def test_a_team_note_changed_at_head_meanwhile_is_not_committed_over(team_repo: Path) -> None:
    _proc, resume = _race(team_repo, "memory", "update", TEAM, "--evidence", "mine")
    path = team_repo / TEAM_PATH
    path.write_text(HAND_NOTE.replace("the first evidence", "a teammate's"))
    git(team_repo, "commit", "-qam", "a teammate's change")
    head = head_of(team_repo)
    run = resume()
    assert run.code == 1 and "changed at HEAD" in run.err, run.err
    assert head_of(team_repo) == head and "a teammate's" in path.read_text()


# --- edit ----------------------------------------------------------------------------

EDITOR = """\
import json, os, stat, sys
path = sys.argv[-1]
info = os.stat(path)
with open(os.environ["EDIT_LOG"], "w") as log:
    json.dump({"argv": sys.argv[1:], "path": path,
               "mode": stat.S_IMODE(info.st_mode),
               "dir_mode": stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)}, log)
text = open(path, encoding="utf-8").read()
old, new = os.environ.get("EDIT_FROM", ""), os.environ.get("EDIT_TO", "").replace("<NUL>", "\\0")
if old:
    text = text.replace(old, new)
open(path, "w", encoding="utf-8").write(text)
sys.exit(int(os.environ.get("EDIT_EXIT", "0")))
"""


@pytest.fixture
def editor(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    return {"EDITOR": f"{sys.executable} {script}", "VISUAL": "",
            "EDIT_LOG": str(tmp_path / "edit.json")}


def _log(env: dict[str, str]) -> Any:
    return json.loads(Path(env["EDIT_LOG"]).read_text())


def test_edit_writes_what_was_saved_from_a_private_copy_outside_the_checkout(
    repo_dir: Path, editor: dict[str, str],
) -> None:
    path = _remember_seed(repo_dir)
    env = {**editor, "EDIT_FROM": "EBUSY from the mount syscall", "EDIT_TO": "strace shows it"}
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env=env)
    assert run.code == 0, run.err
    assert "edited local/" in run.out
    assert path.read_text() == _seed_with("strace shows it")
    seen = _log(env)
    scratch = Path(seen["path"])
    assert repo_dir.resolve() not in scratch.resolve().parents
    assert scratch.name == "mounting-a-credential-file-returns-ebusy.md"
    assert seen["mode"] == 0o600 and seen["dir_mode"] == 0o700
    assert not scratch.exists()  # cleaned up after a successful edit
    assert git(repo_dir, "status", "--porcelain") == ""


def _seed_with(evidence: str) -> str:
    return SEED_NOTE.replace("EBUSY from the mount syscall", evidence)


def test_visual_wins_over_editor_and_is_split_like_a_command_line(
    repo_dir: Path, editor: dict[str, str],
) -> None:
    _remember_seed(repo_dir)
    env = {**editor, "VISUAL": editor["EDITOR"] + " --wait", "EDITOR": "false"}
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env=env)
    assert run.code == 0, run.err
    assert _log(env)["argv"][0] == "--wait"
    assert "no change" in run.out


def test_an_unchanged_save_is_no_change(repo_dir: Path, editor: dict[str, str]) -> None:
    path = _remember_seed(repo_dir)
    before = path.stat()
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env=editor)
    assert run.code == 0 and "no change" in run.out, run.err
    assert path.stat().st_ino == before.st_ino and path.stat().st_mtime_ns == before.st_mtime_ns


@pytest.mark.parametrize(("edit_from", "edit_to", "message"), [
    ("## Evidence\nEBUSY from the mount syscall\n", "", "MissingSection"),
    ("key: surprise/mounting", "key: surprise/renamed-mounting", "omh memory mv"),
    ("recorded: 2026-10-11", "recorded: someday", "does not read back"),
    ("- why does", "why does", "ProseInListSection"),
    ("EBUSY from", "EBUSY<NUL>from", "the saved text (line 17) holds a NUL byte"),
])
def test_a_refused_edit_is_kept_and_the_note_left_as_it_was(
    repo_dir: Path, editor: dict[str, str], edit_from: str, edit_to: str, message: str,
) -> None:
    path = _remember_seed(repo_dir)
    before = path.read_bytes()
    env = {**editor, "EDIT_FROM": edit_from, "EDIT_TO": edit_to}
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env=env)
    assert run.code == 1, (run.out, run.err)
    assert message in run.err, run.err
    assert path.read_bytes() == before
    kept = Path(_log(env)["path"])
    assert f"your edit is kept in {kept}" in run.err
    assert kept.read_text() == before.decode().replace(edit_from, edit_to.replace("<NUL>", "\0"))


def test_an_editor_that_fails_keeps_the_edit(repo_dir: Path, editor: dict[str, str]) -> None:
    path = _remember_seed(repo_dir)
    before = path.read_bytes()
    env = {**editor, "EDIT_FROM": "EBUSY from", "EDIT_TO": "half", "EDIT_EXIT": "3"}
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env=env)
    assert run.code == 1 and "exited with status 3" in run.err and "kept in" in run.err
    assert path.read_bytes() == before


def test_edit_without_an_editor_says_how_to_set_one(repo_dir: Path) -> None:
    _remember_seed(repo_dir)
    run = omh(repo_dir, "memory", "edit", SEED_KEY, env={"VISUAL": "", "EDITOR": ""})
    assert run.code == 1 and "set VISUAL or EDITOR" in run.err


def test_edit_of_a_team_note_commits_it(team_repo: Path, editor: dict[str, str]) -> None:
    env = {**editor, "EDIT_FROM": "Some intro prose.", "EDIT_TO": "A better intro."}
    run = omh(team_repo, "memory", "edit", TEAM, env=env)
    assert run.code == 0, run.err
    assert git(team_repo, "log", "-1", "--format=%s") == f"omh: edit {TEAM}\n"
    assert git(team_repo, "show", f"HEAD:{TEAM_PATH}") == HAND_NOTE.replace(
        "Some intro prose.", "A better intro.")
    assert git(team_repo, "status", "--porcelain") == ""


# --- the conflict messages name the way that exists --------------------------------


def test_the_cli_conflict_names_update(repo_dir: Path) -> None:
    _remember_seed(repo_dir)
    run = omh(repo_dir, *SEED_ARGS)
    assert run.code == 1 and f"`omh memory update {SEED_KEY}`" in run.err, run.err
    assert "--if-exists" in run.err


# --- MCP: an agent corrects its own local note, never anything else ---------------------

OWN = "surprise/ci-already-listens-on-8080"


def test_an_agent_replaces_its_own_note_and_it_keeps_its_key(repo_dir: Path) -> None:
    fixed = {**GOOD, "observed": "CI runs a server on 8080 during the tests.",
             "evidence": "ss -ltnp shows it", "replaces": OWN}
    first, again, second = remember_calls(repo_dir, [GOOD, GOOD, fixed])
    assert not first.is_error, text_of(first)
    assert again.is_error and f"pass replaces={OWN}" in text_of(again)  # the way that exists
    assert "--" not in text_of(again)  # no command-line flag over MCP
    assert not second.is_error, text_of(second)
    assert "replaced local/" in text_of(second)
    text = (local_store(repo_dir) / f"{OWN}.md").read_text()
    assert f"key: {OWN}\n" in text and "# CI runs a server on 8080 during the tests.\n" in text
    assert "ss -ltnp shows it" in text and "source: session s03, claude-code 2.1\n" in text
    assert len(list(local_store(repo_dir).rglob("*.md"))) == 1
    assert git(repo_dir, "status", "--porcelain") == ""


def test_an_agent_cannot_replace_another_sessions_note(repo_dir: Path) -> None:
    (done,) = remember_calls(repo_dir, [GOOD], session="s01")
    assert not done.is_error
    path = local_store(repo_dir) / f"{OWN}.md"
    before = path.read_bytes()
    again, replaced = remember_calls(repo_dir, [GOOD, {**GOOD, "evidence": "x", "replaces": OWN}],
                                     session="s02")
    assert again.is_error and "another writer" in text_of(again)
    assert "replaces=" not in text_of(again)
    assert replaced.is_error and "session s01" in text_of(replaced), text_of(replaced)
    assert "not by this session" in text_of(replaced)
    assert path.read_bytes() == before


def test_an_agent_cannot_replace_a_cli_team_or_derived_note(team_repo: Path) -> None:
    cli = omh(team_repo, "memory", "remember", "--expected", "a", "--observed", "By hand.",
              "--evidence", "e", "--answers", "q")
    assert cli.code == 0
    head = head_of(team_repo)
    results = remember_calls(team_repo, [{**GOOD, "replaces": key} for key in
                                         ("surprise/by-hand", TEAM, "readme", "no/such")])
    texts = [text_of(r) for r in results]
    assert all(r.is_error for r in results), texts
    assert "recorded by 'cli'" in texts[0]
    assert "team note" in texts[1] and "a person changes" in texts[1]
    assert "derived from README.md" in texts[2]
    assert "no local note no/such" in texts[3]
    assert not any("--" in t for t in texts)
    assert head_of(team_repo) == head and git(team_repo, "status", "--porcelain") == ""


def test_replaces_passes_the_same_refusals_as_remember(repo_dir: Path) -> None:
    (first,) = remember_calls(repo_dir, [GOOD])
    assert not first.is_error
    path = local_store(repo_dir) / f"{OWN}.md"
    before = path.read_bytes()
    (broken,) = remember_calls(repo_dir, [{**GOOD, "evidence": "a\n## Heading",
                                           "replaces": OWN}])
    assert broken.is_error and "structure" in text_of(broken)
    assert path.read_bytes() == before


def test_replaces_keeps_a_link_to_a_note_not_written_yet_as_remember_does(
    repo_dir: Path,
) -> None:
    """A key is known before its note exists: a correction may link to one, or keep a
    link whose note was removed since; the answer says the link waits (before, the
    tool refused it, unlike the command line)."""
    target = remember_linked(repo_dir, "The target note.")
    (done,) = remember_calls(repo_dir, [{**GOOD, "relates_to": [target]}])
    assert not done.is_error, text_of(done)
    assert omh(repo_dir, "memory", "rm", target).code == 0
    (kept,) = remember_calls(repo_dir, [{**GOOD, "relates_to": [target, "no/such"],
                                         "replaces": OWN}])
    assert not kept.is_error, text_of(kept)
    assert f"Its links to {target}, no/such name no note yet" in text_of(kept), text_of(kept)
    text = (local_store(repo_dir) / f"{OWN}.md").read_text()
    assert f"[[{target}]]" in text and "[[no/such]]" in text


def test_the_replaces_argument_is_described_tightly(repo_dir: Path) -> None:
    env = {**os.environ, "OMH_SESSION": "s03"}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "omh_git_memory", "mcp", "serve"],
                                   cwd=str(repo_dir), env=env)

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await s.list_tools()

    tools = {t.name: t for t in asyncio.run(run()).tools}
    schema = tools["remember"].input_schema
    assert "replaces" in schema["properties"] and "replaces" not in schema.get("required", [])
    assert "`replaces`" in (tools["remember"].description or "")
    assert len(tools["remember"].description or "") < 1000


def test_scratch_copy_mode_is_private(repo_dir: Path, editor: dict[str, str]) -> None:
    # Guard against a world-readable copy even under a permissive umask.
    _remember_seed(repo_dir)
    done = subprocess.run(
        [sys.executable, "-c", "import os, sys; os.umask(0); from omh_git_memory.cli import main;"
         " main(sys.argv[1:])", "memory", "edit", SEED_KEY],
        cwd=repo_dir, env={**os.environ, **editor}, capture_output=True, text=True,
        check=False)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(_log(editor)["mode"]) == 0o600


def test_the_demo_ends_with_an_update() -> None:
    run = demo_run()  # one run of the demo for every test that reads it
    assert run.code == 0, run.err
    tail = run.out.split("$ omh memory update", 1)[1]
    assert "updated local/surprise/credentials-are-a-named-volume" in tail
    assert "## Evidence\ndocker volume inspect omh-credentials\n" in tail
    assert "## Expected\nCredentials could be files mounted one by one.\n" in tail
    edited = run.out.split("$ omh memory edit", 1)[1]
    assert "edited local/surprise/credentials-are-a-named-volume" in edited


def test_ctrl_c_in_the_editor_is_the_editors_not_a_kill(repo_dir: Path, tmp_path: Path) -> None:
    # A terminal sends Ctrl-C to the whole foreground group; Vim takes it as a key.
    # omh must neither die nor kill the editor then (git ignores it the same way).
    path = _remember_seed(repo_dir)
    script = tmp_path / "ctrl_c_editor.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "os.killpg(0, signal.SIGINT)\n"
        "time.sleep(0.5)\n"
        "p = sys.argv[-1]\n"
        "t = open(p).read().replace('EBUSY from the mount syscall', 'after ctrl-c')\n"
        "open(p, 'w').write(t)\n")
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "edit", SEED_KEY],
                          cwd=repo_dir, env={**os.environ, "VISUAL": f"{sys.executable} {script}"},
                          capture_output=True, text=True, check=False, start_new_session=True)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert path.read_text() == _seed_with("after ctrl-c")


def test_the_core_update_pins_a_file_trigger_as_remember_does(repo_dir: Path) -> None:
    """The pinning moved from the CLI into `actions.update.update` (one core call an
    edge); a caller of the core gets a pinned trigger, not the shorthand."""
    from omh_git_memory.actions.update import Changes, update
    from omh_git_memory.actions.workspace import open_workspace

    path = _remember_seed(repo_dir)
    done = update(open_workspace(repo_dir), SEED_KEY, Changes(invalidated_by="file:README.md"))
    blob = git(repo_dir, "rev-parse", "HEAD:README.md").strip()
    assert done.changed
    assert f"invalidated_by: file:README.md@{blob}\n" in path.read_text(encoding="utf-8")
