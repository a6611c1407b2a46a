"""rename() at its edges: what it does when not asked to relink your local notes, which
local notes it relinks when asked, a note that starts linking the old key while mv
checks, and the refusals whose wording tells the person where to look."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omh_git_memory.actions.rename import rename
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import KeyConflict, NoteNotFound
from omh_git_memory.model.layers import Layer
from tests.helpers import (
    local_store,
    remember_linked,
    resume,
    start_at_fault,
    wait_stopped,
    with_linked_team_notes,
)

A = "surprise/alpha-fails"


def test_a_team_rename_leaves_your_local_links_unless_asked(repo_dir: Path) -> None:
    with_linked_team_notes(repo_dir)
    mine = remember_linked(repo_dir, "Local thing.", "deploy")
    before = (local_store(repo_dir) / f"{mine}.md").read_bytes()
    done = rename(open_workspace(repo_dir), "deploy", "ops/deploy")
    assert done.untouched == ((Layer.LOCAL, mine),)
    assert done.relinked == ("ci",)
    assert (local_store(repo_dir) / f"{mine}.md").read_bytes() == before


def test_relink_local_rewrites_only_the_local_notes_that_link(repo_dir: Path) -> None:
    with_linked_team_notes(repo_dir)
    mine = remember_linked(repo_dir, "Local thing.", "deploy")
    unrelated = remember_linked(repo_dir, "Unrelated thing.", "ci")
    store = local_store(repo_dir)
    before = (store / f"{unrelated}.md").read_bytes()
    done = rename(open_workspace(repo_dir), "deploy", "ops/deploy", relink_local=True)
    assert done.relinked == ("ci", f"local/{mine}")
    assert done.untouched == ()
    assert "[[ops/deploy]]" in (store / f"{mine}.md").read_text()
    assert (store / f"{unrelated}.md").read_bytes() == before


def test_a_note_missing_from_the_layer_named_gets_no_hint_of_another(repo_dir: Path) -> None:
    with pytest.raises(NoteNotFound) as err:
        rename(open_workspace(repo_dir), "nowhere", "x", layer=Layer.LOCAL)
    assert str(err.value) == "no note nowhere in the local layer; `omh memory` lists the keys"


def test_a_key_a_local_file_holds_that_does_not_read_back_is_taken(repo_dir: Path) -> None:
    assert remember_linked(repo_dir, "Alpha fails.") == A
    broken = local_store(repo_dir) / "surprise" / "broken.md"
    broken.write_text("not a note\n")
    with pytest.raises(KeyConflict) as err:
        rename(open_workspace(repo_dir), A, "surprise/broken")
    assert str(err.value).startswith("note surprise/broken already exists in the local layer")
    assert broken.read_text() == "not a note\n"


def test_a_note_linking_the_old_key_written_while_mv_checks_is_relinked(repo_dir: Path) -> None:
    """Stopped after its plan, before it takes the store's lock: a remember meanwhile
    adds a note linking the old key. The switch relinks it too (no dangling link)."""
    assert remember_linked(repo_dir, "Alpha fails.") == A
    proc = start_at_fault(repo_dir, "mv:planned:stop", "memory", "mv", A, "surprise/x",
                          "--json")
    wait_stopped(proc)
    late = remember_linked(repo_dir, "Gamma fails.", A)
    done = resume(proc)
    assert done.code == 0, done.err
    assert json.loads(done.out)["relinked"] == [late]
    text = (local_store(repo_dir) / f"{late}.md").read_text()
    assert "[[surprise/x]]" in text and f"[[{A}]]" not in text
