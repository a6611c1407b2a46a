"""What `omh memory remember` says on the command line: the note it wrote (or kept),
the lines that look like secrets, the links that wait for a note, the notes it
repeats; and which options make a topic rather than a surprise."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import local_store, omh
from tests.helpers.near_duplicate import AGAIN, FIRST, NEW, OLD

SURPRISE = ["--expected", "e", "--observed", "Alpha fails.", "--evidence", "v",
            "--answers", "q?"]
KEY = "surprise/alpha-fails"
TOKEN = "ghp_" + "a1B2" * 9  # the shape of a GitHub token, not a real one


def test_remember_names_the_note_it_wrote_and_its_file(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", *SURPRISE)
    assert run.code == 0, run.err
    assert run.out == f"remembered local/{KEY}\n  {local_store(repo_dir) / KEY}.md\n"


def test_remember_skip_says_it_kept_the_note_already_there(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *SURPRISE).code == 0
    run = omh(repo_dir, "memory", "remember", *SURPRISE, "--if-exists", "skip")
    assert run.code == 0, run.err
    assert run.out == f"kept the existing local/{KEY} (--if-exists skip)\n"


def test_remember_warns_of_a_line_that_looks_like_a_secret(repo_dir: Path) -> None:
    args = [a if a != "v" else f"token {TOKEN}" for a in SURPRISE]
    run = omh(repo_dir, "memory", "remember", *args)
    assert run.code == 0, run.err
    lines = (local_store(repo_dir) / f"{KEY}.md").read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if TOKEN in text)
    (warning,) = [w for w in run.out.splitlines() if w.startswith("warning:")]
    assert warning.startswith(f"warning: line {line} of local/{KEY} looks like ")
    assert warning.endswith(f"promote refuses it until that line is gone (omh memory edit {KEY})")


def test_remember_says_a_link_to_no_note_yet_is_kept_and_waits(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", *SURPRISE, "--relates-to", "later")
    assert run.code == 0, run.err
    assert run.out.splitlines()[2:] == [
        "note: [[later]] names no note yet; the link is kept, and reaches the note once one "
        "is written under that key (`omh memory lint` warns DanglingLink until then; "
        "--strict refuses such a link)"]


def test_a_repeat_just_written_says_to_remove_it_after_folding_it_in(repo_dir: Path) -> None:
    assert omh(repo_dir, "memory", "remember", *FIRST).code == 0
    run = omh(repo_dir, "memory", "remember", *AGAIN)
    assert run.code == 0, run.err
    (warning,) = [line for line in run.out.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: the note looks like {OLD} (local · ")
    assert warning.endswith(f"changes the sections you give), then `omh memory rm {NEW}`")


@pytest.mark.parametrize("topic_option", [
    ["--title", "Deploys"],
    ["--section", "Summary=How we ship"],
    ["--section-file", "Summary=notes.txt"],
])
def test_a_topic_option_without_type_topic_asks_for_it(repo_dir: Path,
                                                       topic_option: list[str]) -> None:
    run = omh(repo_dir, "memory", "remember", *topic_option)
    assert run.code == 2
    assert run.err == ("omh: --title, --section and --section-file make a topic note: "
                       "add --type topic\n")


def test_type_topic_alone_asks_for_its_title(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--type", "topic")
    assert (run.code, run.err) == (2, "omh: Missing option '--title': a topic is named by its "
                                      "title\n")


def test_a_surprise_missing_an_option_names_the_first_missing(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--answers", "q?")
    assert run.code == 2
    assert run.err.startswith("omh: Missing option '--observed': a surprise note needs")
    assert not local_store(repo_dir).exists() or not list(local_store(repo_dir).rglob("*.md"))
