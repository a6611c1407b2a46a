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


def test_holding_exactly_the_share_needed_is_enough(tmp_path: Path) -> None:
    """The check is *at least* TOGETHER (and ANSWERS): a document holding every word
    of the question in one place holds 1.0, and passes at 1.0."""
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD})
    searcher = open_workspace(tmp_path / "r").searcher()
    everything = (frozenset(words(ASKED)),)
    held = recall(searcher, ASKED, places=lambda d: everything, together=1.0, answers=1.0)
    assert [h.doc.key for h in held.results] == ["docs/spread"]


def test_left_out_counts_what_passed_less_what_was_shown_and_turned_away(
    tmp_path: Path,
) -> None:
    """Ten documents hold the question together and two louder ones spread it: the
    two are turned away, five shown, and the answer says the other 5 matched too."""
    loud = (f"# Notes\n\n## Kernel\n\nkernel kernel kernel kernel.\n\n{FILLER}"
            "## Scheduler\n\nscheduler scheduler scheduler.\n\n## Quota\n\nquota quota.\n"
            "\n## Timeout\n\ntimeout timeout.\n\n## Retry\n\nretry retry.\n\n"
            "## Budget\n\nbudget budget.\n")
    files = {f"docs/loud-{n}.md": loud for n in range(2)}
    files.update({f"docs/quiet-{n}.md": f"# Quiet {n}\n\n## Tuning\n\n{ASKED}.\n"
                  for n in range(10)})
    make_repo(tmp_path / "r", files)
    answer = ask(open_workspace(tmp_path / "r"), Question(ASKED)).answer
    shown = floor.MAX_DOCUMENTS  # of documents, whatever MAX_RESULTS is
    assert sorted(h.doc.key for h in answer.results) == [f"docs/quiet-{n}" for n in range(shown)]
    assert answer.left_out == 10 - shown


def test_a_phrasing_of_function_words_only_is_no_trouble(tmp_path: Path) -> None:
    """Its content weight is 0: it holds no share anywhere, and the other phrasing
    still answers."""
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/together.md": TOGETHER})
    ws = open_workspace(tmp_path / "r")
    answer = ask(ws, Question("how do I do it", also=[ASKED])).answer
    assert [h.doc.key for h in answer.results] == ["docs/together"]


def test_without_a_content_share_floor_the_check_still_works(tmp_path: Path) -> None:
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD, "docs/together.md": TOGETHER})
    ws = open_workspace(tmp_path / "r")
    found = recall(ws.searcher(), ASKED, places=Documents(ws).places, min_share=0.0)
    assert [h.doc.key for h in found.results] == ["docs/together"]


def _loud_and_quiet(tmp_path: Path, loud_documents: int) -> list[str]:
    loud = (f"# Notes\n\n## Kernel\n\nkernel kernel kernel kernel.\n\n{FILLER}"
            "## Scheduler\n\nscheduler scheduler scheduler.\n\n## Quota\n\nquota quota.\n"
            "\n## Timeout\n\ntimeout timeout.\n\n## Retry\n\nretry retry.\n\n"
            "## Budget\n\nbudget budget.\n")
    files = {f"docs/loud-{n:02}.md": loud for n in range(loud_documents)}
    files["docs/quiet.md"] = ("# Quiet\n\n" + "Words that pad the page out. " * 40 +
                              f"\n\n## Tuning\n\n{ASKED}.\n")
    make_repo(tmp_path / "r", files)
    return keys(tmp_path / "r", ASKED)


def test_the_check_reads_at_most_three_times_eight_candidates(tmp_path: Path) -> None:
    """What a question may cost is bounded: behind 23 louder documents turned away
    the quiet one is still found; behind 24 it is not (nothing is returned)."""
    assert _loud_and_quiet(tmp_path / "a", 23) == ["docs/quiet"]
    assert _loud_and_quiet(tmp_path / "b", 24) == []


def test_left_out_never_counts_a_document_that_would_not_pass(tmp_path: Path) -> None:
    """Thirty documents spread the question and one holds it together: the answer is
    the one, and says nothing more matched — neither the checked ones turned away nor
    the unread ones past the candidates, which the check has not passed."""
    loud = (f"# Notes\n\n## Kernel\n\nkernel.\n\n{FILLER}## Scheduler\n\nscheduler.\n\n"
            "## Quota\n\nquota.\n\n## Timeout\n\ntimeout.\n\n## Retry\n\nretry.\n\n"
            "## Budget\n\nbudget.\n")
    files = {f"docs/loud-{n:02}.md": loud for n in range(30)}
    files["docs/together.md"] = f"# Tuning\n\n## All of it\n\n{ASKED}. {ASKED}. {ASKED}.\n"
    make_repo(tmp_path / "r", files)
    answer = ask(open_workspace(tmp_path / "r"), Question(ASKED)).answer
    assert [h.doc.key for h in answer.results] == ["docs/together"]
    assert answer.left_out == 0


def test_a_written_note_does_not_bring_back_documents_that_answer_nothing(
    tmp_path: Path,
) -> None:
    """The answer share is for documents: a note that matches (a note is one place)
    is shown, and the documents that hold a quarter of the question each are not."""
    note = note_text("kernel-budget", body="The kernel scheduler quota has a timeout.\n")
    make_repo(tmp_path / "r", {"README.md": "# Project\n\nA project.\n",
                               "docs/spread.md": SPREAD, ".omh/notes/kernel-budget.md": note})
    ws = open_workspace(tmp_path / "r")
    asked = "kernel scheduler quota timeout"
    assert [h.doc.key for h in ask(ws, Question(asked)).answer.results] == ["kernel-budget"]


def test_the_floor_is_measured_from_a_leader_holding_exactly_the_share_needed(
    tmp_path: Path,
) -> None:
    """Twenty-three louder documents hold nothing in one place; the quiet one holds
    the whole question (1.0, exactly what `together=1.0` asks): it leads, so the
    relative floor is measured from it, and it is returned."""
    _loud_and_quiet(tmp_path, 23)
    searcher = open_workspace(tmp_path / "r").searcher()
    everything = (frozenset(words(ASKED)),)

    def places(doc: Doc) -> tuple[frozenset[str], ...]:
        return everything if doc.location == "docs/quiet.md" else ()

    found = recall(searcher, ASKED, places=places, together=1.0, answers=1.0)
    assert [h.doc.key for h in found.results] == ["docs/quiet"]


def test_notes_past_the_candidates_are_counted_as_more(tmp_path: Path) -> None:
    """Thirty written notes match alike: eight are shown, and the answer counts the
    other 22 — the 16 candidates past the eighth and the 6 notes past the 24
    candidates, which need no check to be counted."""
    files = {f".omh/notes/n{n:02}.md": note_text(f"n{n:02}", body=f"{ASKED}.\n")
             for n in range(30)}
    make_repo(tmp_path / "r", files)
    answer = ask(open_workspace(tmp_path / "r"), Question(ASKED)).answer
    assert len(answer.results) == 8 and answer.left_out == 22


def test_an_answer_shows_at_most_five_documents_and_counts_the_rest(tmp_path: Path) -> None:
    """Seven documents answer alike: five are shown and two counted as more that
    matched; written notes are not held to the five (eight of them still show)."""
    files = {f"docs/tuning-{n}.md": TOGETHER for n in range(7)}
    make_repo(tmp_path / "docs", files)
    answer = ask(open_workspace(tmp_path / "docs"), Question(ASKED)).answer
    assert [h.doc.is_stub for h in answer.results] == [True] * floor.MAX_DOCUMENTS
    assert answer.left_out == 7 - floor.MAX_DOCUMENTS
    notes = {f".omh/notes/tuning-{n}.md": note_text(f"tuning-{n}", body=TOGETHER)
             for n in range(9)}
    make_repo(tmp_path / "notes", notes)
    answer = ask(open_workspace(tmp_path / "notes"), Question(ASKED)).answer
    assert len([h for h in answer.results if not h.doc.is_stub]) == 8
