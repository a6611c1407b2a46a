"""What recall answers: at most eight matched notes, a count of the rest, and every
note the answer shows.

Its cases came from a mutation pass over recall/answer.py (tools/mutation.py):
the limit is the rule "recall names at most eight matched notes", so the number is
written out here rather than read from MAX_RESULTS.
"""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.answer import shown_docs
from omh_git_memory.recall.floor import recall
from tests.helpers import make_repo, note_text


def test_nine_equal_matches_give_eight_results_and_one_left_out(tmp_path: Path) -> None:
    notes = {f".omh/notes/n{i}.md": note_text(f"n{i}", body="the socket is busy\n")
             for i in range(9)}
    make_repo(tmp_path / "repo", {"README.md": "# Test repo\n", **notes})
    answer = recall(open_workspace(tmp_path / "repo").searcher(), "socket")
    assert len(answer.results) == 8 and answer.left_out == 1
    assert len(shown_docs(answer)) == 8  # no links: no neighbours shown


def test_the_notes_shown_are_each_result_then_its_neighbours(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo", {
        "README.md": "# Test repo\n",
        ".omh/notes/busy.md": note_text("busy", body="the socket is busy, see [[port]]\n"),
        ".omh/notes/port.md": note_text("port", body="the port is taken\n"),
    })
    answer = recall(open_workspace(tmp_path / "repo").searcher(), "socket")
    assert [h.doc.key for h in answer.results] == ["busy"]
    assert [d.key for d in shown_docs(answer)] == ["busy", "port"]
