"""`omh memory review`: the local notes waiting for a person, and the end-of-session line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omh_git_memory.actions.review import Source, pending, session_line
from omh_git_memory.stores.store import LocalStore
from tests.helpers import demo_run, git, local_store, omh
from tests.helpers.notes import PORT_NOTE, remembered
from tests.helpers.review import NEW, OLD, TOPIC, on_a_terminal, waiting_notes


@pytest.fixture
def store(repo_dir: Path) -> Path:
    """Three local notes: two from session s1 (one older), one from the command line."""
    return waiting_notes(repo_dir)


def test_source_reads_session_and_harness() -> None:
    assert Source.of("session s03, claude-code 2.1") == Source(
        "session s03, claude-code 2.1", "s03", "claude-code 2.1")
    assert Source.of("mcp, cursor 1.0") == Source("mcp, cursor 1.0", None, "cursor 1.0")
    assert Source.of("cli") == Source("cli", None, None)


def test_the_list_is_newest_first_with_title_source_and_date(store: Path) -> None:
    run = omh(store, "memory", "review", "--json")
    assert run.code == 0, run.err
    notes = run.json()["notes"]
    assert [n["key"] for n in notes] == [NEW, TOPIC, OLD]
    first = notes[0]
    assert first["title"] == "CI uses port 8080."
    assert first["source"] == "session s1, claude-code 2.1"
    assert (first["session"], first["harness"]) == ("s1", "claude-code 2.1")
    assert first["recorded"] == "2026-11-03"
    assert notes[1]["source"] == "cli" and notes[1]["session"] is None
    text = omh(store, "memory", "review")
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0] == "3 local notes not yet promoted, newest first:"
    assert NEW in lines[1] and "2026-11-03" in lines[1]
    assert "session s1, claude-code 2.1" in lines[1]
    assert "CI uses port 8080." in lines[2]


def test_within_a_day_the_last_written_comes_first(repo_dir: Path) -> None:
    omh(repo_dir, "init")
    for observed in ("Apple first.", "Zebra second."):
        remembered(repo_dir, observed, recorded="2026-11-01", source="cli", **PORT_NOTE)
        time.sleep(0.02)
    notes = omh(repo_dir, "memory", "review", "--json").json()["notes"]
    # Written last, so first — although a key order would put it last.
    assert [n["key"] for n in notes] == ["surprise/zebra-second", "surprise/apple-first"]


def test_session_limits_the_list(store: Path) -> None:
    notes = omh(store, "memory", "review", "--session", "s1", "--json").json()["notes"]
    assert [n["key"] for n in notes] == [NEW, OLD]
    none = omh(store, "memory", "review", "--session", "s2")
    assert none.code == 0
    assert none.out == "no local notes recorded by session s2 waiting for review\n"


def test_off_a_terminal_it_only_lists(store: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "omh_git_memory", "memory", "review"],
                          cwd=store, input="r\nr\nr\n", capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0
    assert "promote, remove" not in done.stdout
    assert len(omh(store, "memory", "review", "--json").json()["notes"]) == 3


def test_unreadable_files_are_named(store: Path) -> None:
    root = Path(omh(store, "memory", "--json").json()["local_store"])
    (root / "broken.md").write_text("no frontmatter\n")
    run = omh(store, "memory", "review")
    assert "unreadable: " in run.out and "broken.md" in run.out
    assert omh(store, "memory", "review", "--json").json()["unreadable"][0]["path"].endswith(
        "broken.md")


# --- the interactive path, on a real pseudo-terminal -------------------------------


def test_on_a_terminal_each_note_is_promoted_removed_or_kept(store: Path) -> None:
    # Newest first: NEW links nothing, TOPIC, then OLD.
    code, out = on_a_terminal(store, ["p", "r", "k"])
    assert code == 0, out
    assert out.count("promote, edit, remove, keep, view or quit? [p/e/r/k/v/q]") == 3
    assert "committed " in out and f"{NEW} is now in team" in out
    assert f"removed local/{TOPIC}" in out
    assert "promoted 1, removed 1, kept 1; push the branch" in out
    assert (store / ".omh/notes" / f"{NEW}.md").is_file()
    left = omh(store, "memory", "review", "--json").json()["notes"]
    assert [n["key"] for n in left] == [OLD]
    assert "omh: promote " + NEW in git(store, "log", "-1", "--format=%s")


def test_view_shows_the_whole_note_then_asks_again(store: Path) -> None:
    code, out = on_a_terminal(store, ["v", "q"])
    assert code == 0, out
    assert out.count("[p/e/r/k/v/q]") == 2  # asked again about the same note
    assert f"  | key: {NEW}" in out and "  | ## Observed" in out
    assert "promoted 0, removed 0, kept 0, not reached 3" in out
    assert len(omh(store, "memory", "review", "--json").json()["notes"]) == 3


def test_view_shows_the_note_as_its_file_reads_now(store: Path) -> None:
    # edited in another window after review listed it: view shows the edit, so
    # what the person decides on is what promote would take
    def edit_then_view() -> str:
        path = local_store(store) / f"{NEW}.md"
        path.write_text(path.read_text() + "\nA line added in another window.\n")
        return "v"

    code, out = on_a_terminal(store, [edit_then_view, "q"])
    assert code == 0, out
    assert "  | A line added in another window." in out


def test_a_refused_promote_prints_why_and_goes_on(store: Path) -> None:
    remembered(store, "Links to a local note.", "--relates-to", OLD, recorded="2026-11-04",
               source="cli", **PORT_NOTE)
    code, out = on_a_terminal(store, ["promote", "q"])
    assert code == 0, out
    assert "promote refused, nothing was committed:" in out
    assert "would dangle for a teammate" in out
    assert out.count("[p/e/r/k/v/q]") == 2  # it went on to the next note, then quit
    assert "promoted 0, removed 0, kept 1" in out
    assert len(omh(store, "memory", "review", "--json").json()["notes"]) == 4


def test_an_unknown_answer_asks_again_and_end_of_input_quits(store: Path) -> None:
    code, out = on_a_terminal(store, ["x", ""])  # then ^D
    assert code == 0, out
    assert "'x' is not a choice: answer p, e, r, k, v or q" in out
    assert "promoted 0, removed 0, kept 1" in out  # Enter keeps
    assert len(omh(store, "memory", "review", "--json").json()["notes"]) == 3


def test_signoff_reaches_promotes_made_in_review(store: Path) -> None:
    code, out = on_a_terminal(store, ["p", "q"], "--signoff")
    assert code == 0, out
    body = git(store, "log", "-1", "--format=%B")
    assert body.rstrip().endswith("Signed-off-by: Test Person <test@example.invalid>")


def test_json_on_a_terminal_never_asks(store: Path) -> None:
    code, out = on_a_terminal(store, [], "--json")
    assert code == 0 and "[p/e/r/k/v/q]" not in out and '"notes"' in out


def test_remove_in_review_leaves_a_note_rewritten_meanwhile(store: Path) -> None:
    from omh_git_memory.actions.review import remove_pending
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.model.errors import ChangedMeanwhile

    ws = open_workspace(store)
    item = pending(ws.local.scan())[0]
    path = Path(item.path)
    path.write_text(path.read_text() + "\nA line added by an editor.\n")
    with pytest.raises(ChangedMeanwhile):
        remove_pending(ws.local, item)
    assert path.is_file()


# --- the end-of-session line ---------------------------------------------------------

def test_the_summary_counts_the_session_notes(store: Path) -> None:
    run = omh(store, "memory", "review", "--summary", env={"OMH_SESSION": "s1"})
    assert (run.code, run.out, run.err) == (
        0, "2 notes recorded during this session — `omh memory review` to review\n", "")
    by_arg = omh(store, "memory", "review", "--summary", "--session", "s1",
                 env={"OMH_SESSION": "other"})
    assert by_arg.out == run.out


def test_one_note_is_singular_and_none_is_silence(store: Path) -> None:
    remembered(store, "Only one here.", recorded="2026-11-05", source="session s7, codex",
               **PORT_NOTE)
    one = omh(store, "memory", "review", "--summary", "--session", "s7")
    assert one.out == "1 note recorded during this session — `omh memory review` to review\n"
    for env in ({"OMH_SESSION": "s9"}, {"OMH_SESSION": ""}):
        quiet = omh(store, "memory", "review", "--summary", env=env)
        assert (quiet.code, quiet.out, quiet.err) == (0, "", "")


def test_the_summary_under_json_is_only_json(store: Path) -> None:
    run = omh(store, "memory", "review", "--summary", "--json", env={"OMH_SESSION": "s1"})
    assert run.code == 0 and run.err == ""
    assert run.json() == {"session": "s1", "count": 2, "keys": [NEW, OLD],
                          "line": session_line(2)}
    none = omh(store, "memory", "review", "--summary", "--json", env={"OMH_SESSION": "s9"})
    assert none.json() == {"session": "s9", "count": 0, "keys": [], "line": None}


def test_the_summary_for_claude_is_a_system_message(store: Path) -> None:
    run = omh(store, "memory", "review", "--summary", "--for", "claude",
              env={"OMH_SESSION": "s1"})
    assert run.code == 0 and run.json() == {"systemMessage": session_line(2)}
    quiet = omh(store, "memory", "review", "--summary", "--for", "claude",
                env={"OMH_SESSION": "s9"})
    assert (quiet.code, quiet.out) == (0, "")
    assert omh(store, "memory", "review", "--for", "claude").code == 2


def test_the_summary_without_a_store_is_silent(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "review", "--summary", env={"OMH_SESSION": "s1"})
    assert (run.code, run.out, run.err) == (0, "", "")


def test_promoted_notes_no_longer_count(store: Path) -> None:
    assert omh(store, "memory", "promote", NEW).code == 0
    run = omh(store, "memory", "review", "--summary", env={"OMH_SESSION": "s1"})
    assert run.out.startswith("1 note recorded")


def test_pending_skips_unreadable_and_sorts(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "s")
    assert pending(store.scan()) == []


def test_the_demo_ends_with_a_topic_and_a_review() -> None:
    run = demo_run()  # one run of the demo for every test that reads it
    assert run.code == 0, run.err
    assert "remembered local/credentials-in-the-sandbox" in run.out
    tail = run.out[run.out.index("$ omh memory review"):]
    assert "3 local notes not yet promoted, newest first:" in tail
    assert tail.index("credentials-in-the-sandbox") < tail.index(
        "surprise/credentials-are-a-named-volume")


@pytest.mark.parametrize("session", [
    "s03", "my  session", "tab\there", "line\nbreak", "x" * 200, "bidi\u202eover",
    "a, b", " padded ",
])
def test_a_session_is_cleaned_as_the_server_cleans_it(session: str) -> None:
    from omh_git_memory.actions.review import clean_session, of_session
    from omh_git_memory.agent.tools import clean_source_part

    # As the server cleans a client's name, and a comma too (it would end the session).
    assert clean_session(session) == clean_source_part(session.replace(",", "?"))
    written = f"session {clean_session(session)}, claude-code 2.1"  # as _source writes it
    assert of_session(written, session)
    assert not of_session("session other, claude-code 2.1", session)


def test_the_summary_finds_a_session_the_server_had_to_clean(store: Path) -> None:
    remembered(store, "Odd session.", recorded="2026-11-05", source="session my session, codex",
               **PORT_NOTE)
    run = omh(store, "memory", "review", "--summary", env={"OMH_SESSION": "my   session"})
    assert run.out.startswith("1 note recorded")


def test_the_summary_counts_by_source_not_by_words_in_the_text(store: Path) -> None:
    remembered(store, "Quotes a session.", "--answers",
               "what did session s1, claude-code 2.1 see?", recorded="2026-11-05", source="cli",
               **PORT_NOTE)
    run = omh(store, "memory", "review", "--summary", "--json", env={"OMH_SESSION": "s1"})
    assert run.json()["count"] == 2


def test_edit_in_review_opens_the_editor_then_asks_again_about_the_note_as_saved(
        store: Path, tmp_path: Path) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\n"
                      "t = open(p).read().replace('## Evidence\\n', '## Evidence\\nEDITED. ')\n"
                      "open(p, 'w').write(t)\n")
    env = {**os.environ, "VISUAL": f"{sys.executable} {editor}"}
    code, out = on_a_terminal(store, ["e", "r", "q"], env=env)
    assert code == 0, out
    assert f"edited local/{NEW}" in out
    assert out.count("[p/e/r/k/v/q]") == 3  # asked again after the edit, then the next note
    # The remove after the edit acts on the note as saved, not the one first shown.
    assert f"removed local/{NEW}" in out
    left = [n["key"] for n in omh(store, "memory", "review", "--json").json()["notes"]]
    assert NEW not in left and len(left) == 2
