"""The floor's section check: a document (a stub) is returned only when the
question's words come together in one of its sections, and nothing is returned when
no document returned holds enough of them in one place (recall/floor.py)."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.ask import Documents, Question, ask
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall import floor
from omh_git_memory.recall.document import Doc
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.sections import counted, places
from omh_git_memory.recall.tokens import words
from tests.helpers import make_repo, note_text

FILLER = "".join(f"## Part {n}\n\nSomething else entirely, number {n}.\n\n" for n in range(6))

# Six words, each under a fifth of the question's weight on its own.
ASKED = "kernel scheduler quota timeout retry budget"

SPREAD = f"""# Notes

## Kernel

The kernel module loads early.

{FILLER}
## Scheduler

The scheduler runs every minute.

## Quota

A quota applies per user.

## Timeout

The timeout is long.

## Retry

A retry waits.

## Budget

The budget is small.
"""

TOGETHER = """# Tuning

## When the scheduler starves

Raise the kernel scheduler quota, the timeout and the retry budget together.
"""


def keys(ws_path: Path, question: str) -> list[str]:
    ws = open_workspace(ws_path)
    return [h.doc.key for h in ask(ws, Question(question)).answer.results]


def test_a_document_holding_the_words_in_one_section_answers_and_one_spreading_them_does_not(
    tmp_path: Path,
) -> None:
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD, "docs/together.md": TOGETHER})
    found = keys(tmp_path / "r", ASKED)
    assert "docs/together" in found
    assert "docs/spread" not in found


def test_without_the_check_the_spread_document_is_returned(tmp_path: Path) -> None:
    """The same store and question as above, asked of the floor without `places`:
    the spread document passes the whole-document share, so the check is what
    turns it away."""
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD, "docs/together.md": TOGETHER})
    searcher = open_workspace(tmp_path / "r").searcher()
    assert "docs/spread" in [h.doc.key for h in recall(searcher, ASKED)
                             .results]


def test_nothing_answers_when_no_document_holds_the_words_in_one_place(
    tmp_path: Path,
) -> None:
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD})
    ws = open_workspace(tmp_path / "r")
    answer = ask(ws, Question(ASKED)).answer
    assert answer.results == ()
    assert answer.left_out == 0  # a document turned away is not "more that matched"


def test_the_path_and_title_count_in_every_section(tmp_path: Path) -> None:
    """`docs/kernel-scheduler.md`, titled `Quota`, says `timeout` in one section:
    with its path's and title's words the question comes together there."""
    body = f"# Quota\n\n{FILLER}## Limits\n\nThe timeout is per user.\n"
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/kernel-scheduler.md": body,
                               "docs/spread.md": SPREAD})
    assert "docs/kernel-scheduler" in keys(tmp_path / "r", ASKED)


def test_a_document_turned_away_leaves_room_for_the_next(tmp_path: Path) -> None:
    """Nine documents spread the words and score higher (they say them more); the
    one holding them together scores lowest, past the first eight, and is still
    found: the check draws from more candidates than it returns."""
    loud = (f"# Notes\n\n## Kernel\n\nkernel kernel kernel kernel.\n\n{FILLER}"
            "## Scheduler\n\nscheduler scheduler scheduler.\n\n## Quota\n\nquota quota.\n"
            "\n## Timeout\n\ntimeout timeout.\n\n## Retry\n\nretry retry.\n\n"
            "## Budget\n\nbudget budget.\n")
    files = {f"docs/loud-{n}.md": loud for n in range(9)}
    files["docs/quiet.md"] = ("# Quiet\n\n" + "Words that pad the page out. " * 40 +
                              "\n\n## Tuning\n\nkernel scheduler quota timeout retry budget.\n")
    make_repo(tmp_path / "r", files)
    searcher = open_workspace(tmp_path / "r").searcher()
    plain = [h.doc.key for h in recall(searcher, ASKED).results]
    assert "docs/quiet" not in plain  # without the check it is not among the eight
    assert keys(tmp_path / "r", ASKED) == ["docs/quiet"]


def test_a_written_note_is_one_place_and_not_checked(tmp_path: Path) -> None:
    note = note_text("tuning", body="".join(f"## {w.title()}\n\nThe {w}.\n\n"
                                            for w in ASKED.split()))
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               ".omh/notes/tuning.md": note})
    assert keys(tmp_path / "r", ASKED) == ["tuning"]


def test_an_unreadable_document_counts_as_holding_what_it_holds(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD})
    searcher = open_workspace(tmp_path / "r").searcher()

    def unreadable(doc: Doc) -> None:
        return None

    found = recall(searcher, ASKED, places=unreadable)
    assert [h.doc.key for h in found.results] == ["docs/spread"]


def test_the_thresholds_are_the_ones_the_benchmark_chose() -> None:
    """docs/recall.md gives the evidence for these two numbers; a change to either
    must come with a new measurement there."""
    assert (floor.TOGETHER, floor.ANSWERS) == (0.2, 0.3)


def test_the_check_reads_each_candidate_through_its_places(tmp_path: Path) -> None:
    """Each share is measured against the document's own sections: a document whose
    places are replaced by one holding every word passes, the same document with
    empty places does not."""
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD})
    searcher = open_workspace(tmp_path / "r").searcher()
    everything = (frozenset(words(ASKED)),)
    held = recall(searcher, ASKED, places=lambda d: everything)
    assert [h.doc.key for h in held.results] == ["docs/spread"]
    empty = recall(searcher, ASKED, places=lambda d: ())
    assert empty.results == ()


def test_documents_reads_a_blob_once_and_keeps_its_sections(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"docs/together.md": TOGETHER})
    ws = open_workspace(tmp_path / "r")
    searcher = ws.searcher()
    doc = next(d for d in searcher.docs if d is not None and d.is_stub)
    first = Documents(ws).sections(doc)
    assert first is not None and first == counted(TOGETHER)
    assert Documents(ws).sections(doc) is first  # kept for the next question
    assert Documents(ws).places(doc) == places(first)


def test_places_are_each_sections_words_with_its_heading() -> None:
    found = places(counted("intro words\n# Kernel\n\nloads early\n## Quota\n\nper user\n"))
    assert found == (frozenset({"intro", "word"}), frozenset({"kernel", "load", "earli"}),
                     frozenset({"quota", "per", "user"}))


def test_a_document_holding_a_quarter_in_one_place_passes_but_answers_nothing_alone(
    tmp_path: Path,
) -> None:
    """Four words, one in each of four sections: each section holds a quarter of
    the question, enough to be shown (TOGETHER) but not to be the answer
    (ANSWERS), and no other document answers, so nothing is returned."""
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD})
    ws = open_workspace(tmp_path / "r")
    asked = "kernel scheduler quota timeout"
    assert ask(ws, Question(asked)).answer.results == ()
    searcher = ws.searcher()
    shown = recall(searcher, asked, places=Documents(ws).places, answers=0.25)
    assert [h.doc.key for h in shown.results] == ["docs/spread"]
