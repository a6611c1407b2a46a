"""`record` (actions/record.py) as a caller that gives only the draft gets it: links to
notes not written yet are kept and named, and a note that repeats another is written."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.record import record
from omh_git_memory.actions.remember import Observation
from omh_git_memory.actions.workspace import open_workspace
from tests.helpers import omh

PORT = Observation(expected="a free port", observed="The port 8080 is taken by CI.",
                   evidence="bind: address in use", answers=("who holds port 8080?",))


def test_record_by_default_keeps_a_link_to_a_note_not_written_yet(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    draft = Observation(**{**PORT.__dict__, "relates_to": ("later/x",)})
    done = record(open_workspace(repo_dir), draft)
    assert done.written and done.waiting == ("later/x",)
    assert Path(done.path).read_text(encoding="utf-8").count("[[later/x]]") == 1


def test_record_by_default_writes_a_note_that_repeats_another(repo_dir: Path) -> None:
    assert omh(repo_dir, "init").code == 0
    first = record(open_workspace(repo_dir), PORT)
    again = Observation(**{**PORT.__dict__, "observed": "The port 8080 is taken by CI jobs."})
    second = record(open_workspace(repo_dir), again)
    assert second.written and second.key != first.key and Path(second.path).exists()
    assert [p.original.key for p in second.repeats] == [first.key.value]
