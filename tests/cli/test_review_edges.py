"""`omh memory review` (cli/review.py) at its edges, in this process: the options
that do not go together, an empty --session, what the list and its JSON carry, the
end-of-session line for Claude Code (never reading a terminal), and each answer of
the interactive review — promote, remove, keep, view, edit, quit and end of input —
asked through `_ask` with the person's answers on a stdin of our own.

The pseudo-terminal runs of tests/actions/test_review.py show the same review as a
person sees it; here each branch is asked alone, in milliseconds."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from omh_git_memory.actions.review import pending, session_line
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.cli import review as cli_review
from tests.helpers import git, omh
from tests.helpers.notes import PORT_NOTE, remembered
from tests.helpers.review import NEW, OLD, TOPIC, waiting_notes


@pytest.fixture
def store(repo_dir: Path) -> Path:
    """Three local notes, newest first NEW (session s1), TOPIC (cli), OLD (session s1)."""
    return waiting_notes(repo_dir)


# --- options -------------------------------------------------------------------------


def test_for_goes_with_summary_only_and_never_with_json(store: Path) -> None:
    alone = omh(store, "memory", "review", "--for", "claude")
    assert (alone.code, alone.out) == (2, "")
    assert "--for shapes the end-of-session line: give it with --summary" in alone.err
    both = omh(store, "memory", "review", "--summary", "--for", "claude", "--json",
               env={"OMH_SESSION": "s1"})
    assert (both.code, both.out) == (2, "")
    assert "--for and --json are two output formats; give one" in both.err


def test_an_empty_session_names_no_session(store: Path) -> None:
    listed = omh(store, "memory", "review", "--session", "", "--json")
    assert listed.code == 0, listed.err
    assert listed.json()["session"] is None and len(listed.json()["notes"]) == 3
    # The line then counts OMH_SESSION's notes, as with no --session at all.
    line = omh(store, "memory", "review", "--summary", "--session", "", "--json",
               env={"OMH_SESSION": "s1"})
    assert line.json() == {"session": "s1", "count": 2, "keys": [NEW, OLD],
                           "line": session_line(2)}
    unset = omh(store, "memory", "review", "--summary", "--json", env={"OMH_SESSION": ""})
    assert unset.json() == {"session": None, "count": 0, "keys": [], "line": None}


# --- the list ------------------------------------------------------------------------


def test_the_list_aligns_its_keys_and_the_json_carries_each_note_s_repeats(
        store: Path) -> None:
    root = open_workspace(store).local.root
    (root / "broken.md").write_text("no frontmatter\n")
    run = omh(store, "memory", "review")
    assert run.code == 0, run.err
    width = len(NEW)
    lines = run.out.splitlines()
    assert lines[:7] == [
        "3 local notes not yet promoted, newest first:",
        f"  {NEW}  2026-11-03  session s1, claude-code 2.1",
        f"  {' ' * width}  CI uses port 8080.",
        f"  {TOPIC.ljust(width)}  2026-11-02  cli",
        f"  {' ' * width}  Credentials",
        f"  {OLD.ljust(width)}  2026-11-01  session s1, claude-code 2.1",
        f"  {' ' * width}  Ports are taken.",
    ]
    assert lines[7].startswith(f"unreadable: {root / 'broken.md'}: ")
    assert lines[7].endswith(" (omh memory lint says more)")
    listed = omh(store, "memory", "review", "--json").json()
    assert [n["near_duplicates"] for n in listed["notes"]] == [[], [], []]
    (broken,) = listed["unreadable"]
    assert broken["path"] == str(root / "broken.md") and broken["problem"]


def test_one_note_is_one_note_and_a_session_s_list_says_whose(store: Path) -> None:
    remembered(store, "Only one here.", recorded="2026-11-05", source="session s7, codex",
               **PORT_NOTE)
    run = omh(store, "memory", "review", "--session", "s7")
    assert run.out.splitlines()[0] == (
        "1 local note recorded by session s7 not yet promoted, newest first:")


def test_a_note_that_repeats_a_team_note_is_listed_with_the_fold(repo_dir: Path) -> None:
    """Of the team notes it repeats, the list names the most alike only."""
    from tests.helpers.near_duplicate import AGAIN, FIRST
    from tests.helpers.near_duplicate import NEW as AGAIN_KEY
    from tests.helpers.near_duplicate import OLD as FIRST_KEY

    # FIRST with its evidence as AGAIN's: AGAIN reads more like it than like FIRST.
    closer = [*FIRST[:4], "--evidence", AGAIN[5], *FIRST[6:]]
    closer[3] = closer[3].replace("The upload test", "Our upload test")
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *closer, "--json")
    assert run.code == 0, run.err
    closer_key = run.json()["key"]
    assert omh(repo_dir, "memory", "promote", FIRST_KEY, closer_key).code == 0
    assert omh(repo_dir, "memory", "remember", *AGAIN).code == 0
    run = omh(repo_dir, "memory", "review")
    assert run.code == 0, run.err
    (listed,) = omh(repo_dir, "memory", "review", "--json").json()["notes"]
    assert [(n["key"], n["layer"]) for n in listed["near_duplicates"]] == [
        (closer_key, "team"), (FIRST_KEY, "team")]
    (said,) = [line for line in run.out.splitlines() if "reads like" in line]
    assert said.startswith(f"  {' ' * len(AGAIN_KEY)}  reads like team/{closer_key} (")
    assert "% alike): rather than promote it, fold it into that note (`omh memory update " \
           f"{closer_key} --layer team` changes the sections you give) and remove this one" \
           in said


# --- the end-of-session line for Claude Code -----------------------------------------


class _Terminal(io.StringIO):
    """A stdin that is a terminal: reading it would wait for a person."""

    def isatty(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise AssertionError("the hook read a terminal")


def _hook(tmp_path: Path) -> str:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}\n')
    return json.dumps({"session_id": "abc", "transcript_path": str(transcript),
                       "stop_hook_active": False})


def test_the_claude_hook_reads_its_input_only_off_a_terminal(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(store)
    monkeypatch.setattr(sys, "stdin", _Terminal())
    cli_review._summary("s9", cli_review.HookFormat.claude, False)
    assert capsys.readouterr().out == ""  # a terminal: no hook input, so no question
    monkeypatch.setattr(sys, "stdin", io.StringIO(_hook(tmp_path)))
    cli_review._summary("s9", cli_review.HookFormat.claude, False)
    from omh_git_memory.agent.session_end import QUESTION

    assert json.loads(capsys.readouterr().out) == {"decision": "block", "reason": QUESTION}
    monkeypatch.setattr(sys, "stdin", None)  # `omh … <&-`: no stdin at all
    cli_review._summary("s8", cli_review.HookFormat.claude, False)
    assert capsys.readouterr().out == ""
    # A session that recorded notes gets the line, and no question.
    monkeypatch.setattr(sys, "stdin", io.StringIO(_hook(tmp_path)))
    cli_review._summary("s1", cli_review.HookFormat.claude, False)
    assert json.loads(capsys.readouterr().out) == {"systemMessage": session_line(2)}


# --- the interactive review, one answer at a time ------------------------------------


def _review(store: Path, answers: str, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str], signoff: bool = False) -> str:
    """`_ask` over the three waiting notes with `answers` typed; what it printed."""
    monkeypatch.chdir(store)
    ws = open_workspace(store)
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    cli_review._ask(ws, pending(ws.local.scan()), signoff)
    return capsys.readouterr().out


def _left(store: Path) -> list[str]:
    return [n["key"] for n in omh(store, "memory", "review", "--json").json()["notes"]]


def test_each_answer_does_what_it_says_and_the_tally_counts_it(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _review(store, "promote\nR\n\n", monkeypatch, capsys)
    assert f"[1/3] local/{NEW}  2026-11-03  session s1, claude-code 2.1\n" in out
    assert f"[2/3] local/{TOPIC}  2026-11-02  cli\n  Credentials\n" in out
    head = git(store, "rev-parse", "HEAD").strip()
    assert f"  committed {head[:12]}: {NEW} is now in team (.omh/notes/{NEW}.md)\n" in out
    # The prompt leaves the cursor on its line: the person's answer, then what it did.
    assert f"[p/e/r/k/v/q] (k)   removed local/{TOPIC} (" in out
    assert out.endswith("\npromoted 1, removed 1, kept 1; push the branch to share what was "
                        "promoted\n")
    assert _left(store) == [OLD]
    assert (store / ".omh" / "notes" / f"{NEW}.md").is_file()
    assert "Signed-off-by" not in git(store, "log", "-1", "--format=%B")


def test_a_review_that_promotes_nothing_says_nothing_of_pushing(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _review(store, "r\nk\nkeep\n", monkeypatch, capsys)
    assert out.endswith("\npromoted 0, removed 1, kept 2\n")
    assert _left(store) == [TOPIC, OLD]


def test_signoff_is_passed_to_the_promote(store: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _review(store, "p\nq\n", monkeypatch, capsys, signoff=True)
    assert "Signed-off-by: " in git(store, "log", "-1", "--format=%B")


def test_quit_and_end_of_input_leave_the_rest_unreached(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _review(store, "k\nquit\n", monkeypatch, capsys)
    assert out.endswith("\npromoted 0, removed 0, kept 1, not reached 2\n")
    assert "[3/3]" not in out
    out = _review(store, "", monkeypatch, capsys)  # end of input at the first question
    assert out.endswith("\npromoted 0, removed 0, kept 0, not reached 3\n")
    assert len(_left(store)) == 3


def test_an_unknown_answer_is_asked_again_and_enter_keeps(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _review(store, "maybe\n  P  \n\n\n", monkeypatch, capsys)
    assert "  'maybe' is not a choice: answer p, e, r, k, v or q\n" in out
    assert out.count("[p/e/r/k/v/q] (k) ") == 4  # asked again, then once a note
    assert out.endswith("\npromoted 1, removed 0, kept 2; push the branch to share what was "
                        "promoted\n")


def test_view_prints_the_whole_note_then_asks_again(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _review(store, "v\nview\nk\nq\n", monkeypatch, capsys)
    assert out.count(f"  | key: {NEW}\n") == 2 and "  | ## Observed\n" in out
    assert out.endswith("\npromoted 0, removed 0, kept 1, not reached 2\n")


def test_a_note_removed_meanwhile_is_said_and_kept_and_review_goes_on(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(store)
    ws = open_workspace(store)
    items = pending(ws.local.scan())
    Path(items[0].path).write_text(Path(items[0].path).read_text() + "\nEdited meanwhile.\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("r\nr\nq\n"))
    cli_review._ask(ws, items, False)
    out = capsys.readouterr().out
    assert f"  omh: local/{NEW} changed since review showed it, so nothing was removed" in out
    assert f"  removed local/{TOPIC} (" in out
    assert out.endswith("\npromoted 0, removed 1, kept 1, not reached 1\n")
    assert _left(store) == [NEW, OLD]


def test_a_promote_changed_meanwhile_commits_nothing(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(store)
    ws = open_workspace(store)
    items = pending(ws.local.scan())
    head = git(store, "rev-parse", "HEAD")
    path = Path(items[0].path)
    path.write_text(path.read_text().replace("bind: address in use", "bind: in use"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("p\nq\n"))
    cli_review._ask(ws, items, False)
    out = capsys.readouterr().out
    assert (f"  promote refused, nothing was committed:\n    local/{NEW} changed since "
            "review showed it, so nothing was committed") in out
    assert out.endswith("\npromoted 0, removed 0, kept 1, not reached 2\n")
    assert git(store, "rev-parse", "HEAD") == head


def _editor(tmp_path: Path, change: str | None) -> str:
    """An editor command that replaces the evidence line with `change` (None: saves
    the note as it was)."""
    editor = tmp_path / "editor.py"
    edit = ("t = t.replace('bind: address in use', " + repr(change) + ")\n") if change else ""
    editor.write_text("import sys\np = sys.argv[1]\nt = open(p).read()\n" + edit +
                      "open(p, 'w').write(t)\n")
    return f"{sys.executable} {editor}"


def test_edit_then_the_answer_acts_on_the_note_as_saved(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VISUAL", _editor(tmp_path, "EDITED evidence"))
    out = _review(store, "e\nv\nr\nq\n", monkeypatch, capsys)
    assert f"  edited local/{NEW}\n" in out
    assert "  | EDITED evidence\n" in out  # view after the edit shows the note as saved
    assert f"  removed local/{NEW} (" in out
    assert out.endswith("\npromoted 0, removed 1, kept 0, not reached 2\n")
    assert _left(store) == [TOPIC, OLD]


def test_an_edit_that_changes_nothing_says_so(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VISUAL", _editor(tmp_path, None))
    out = _review(store, "e\nr\nq\n", monkeypatch, capsys)
    assert "  no change\n" in out and "edited local/" not in out
    assert f"  removed local/{NEW} (" in out


def test_an_edit_that_fails_is_said_and_the_note_is_asked_about_again(
        store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("VISUAL", "/no/such/editor")
    monkeypatch.setenv("EDITOR", "/no/such/editor")
    out = _review(store, "e\nk\nq\n", monkeypatch, capsys)
    assert "  omh: " in out
    assert out.count("[p/e/r/k/v/q]") == 3
    assert out.endswith("\npromoted 0, removed 0, kept 1, not reached 2\n")
    assert len(_left(store)) == 3


def test_on_a_terminal_the_list_goes_on_to_the_questions_signed_off_only_if_asked(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[list[str], bool]] = []
    monkeypatch.setattr(cli_review, "is_terminal", lambda stream: stream is not None)
    monkeypatch.setattr(cli_review, "_ask", lambda ws, items, signoff: asked.append(
        ([i.key.value for i in items], signoff)))
    run = omh(store, "memory", "review")
    assert run.code == 0, run.err
    assert "promote with `omh memory promote KEY…`" not in run.out  # asked instead
    assert omh(store, "memory", "review", "--signoff").code == 0
    assert asked == [([NEW, TOPIC, OLD], False), ([NEW, TOPIC, OLD], True)]
    # Only when both ends are a terminal.
    for side in ("stdin", "stdout"):
        monkeypatch.setattr(cli_review, "is_terminal",
                            lambda stream, side=side: stream is not getattr(sys, side))
        assert "promote with `omh memory promote KEY…`" in omh(store, "memory", "review").out
    assert len(asked) == 2
