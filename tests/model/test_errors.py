"""The messages of the failures that compose their own (omh_git_memory/model/errors.py):
what a person or an agent reads when omh refuses."""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.model.errors import (
    ConfigError,
    EditRefused,
    ForeignServer,
    KeyConflict,
    KeyTaken,
    NoteParseError,
    NotYourNote,
    OmhError,
    PromoteRefused,
    RepeatsANote,
    SemanticUnavailable,
)
from omh_git_memory.model.keys import Key
from omh_git_memory.model.layers import Layer

NEW = ("to record something new, word the first sentence of `observed` so it says what "
       "is new (it becomes the key)")


def test_an_error_is_one_line_unless_it_lists_several() -> None:
    assert OmhError("it went wrong; do this").lines() == ["it went wrong; do this"]
    refused = PromoteRefused(["a: no evidence", "b: a secret"])
    assert refused.problems == ["a: no evidence", "b: a secret"]
    assert str(refused) == ("promote refused, nothing was committed:\n  a: no evidence\n"
                            "  b: a secret")
    assert refused.lines() == ["promote refused, nothing was committed:", "  a: no evidence",
                               "  b: a secret"]


def test_key_taken_in_the_local_layer_by_the_agents_own_note() -> None:
    err = KeyTaken("taken", Key("surprise/a"), Layer.LOCAL, "/store/surprise/a.md")
    assert isinstance(err, KeyConflict) and str(err) == "taken"
    assert (err.key, err.layer, err.where, err.derived) == (
        Key("surprise/a"), Layer.LOCAL, "/store/surprise/a.md", False)
    assert err.for_agent(own=True) == (
        "note surprise/a already exists in your local layer (recall shows it); it is your own "
        f"note: pass replaces=surprise/a to correct it; {NEW}")
    assert err.for_agent() == (
        "note surprise/a already exists in your local layer (recall shows it); another writer "
        f"recorded it, so you cannot change it; {NEW}")


def test_key_taken_in_the_team_layer() -> None:
    err = KeyTaken("taken", Key("surprise/a"), Layer.TEAM, ".omh/notes/surprise/a.md")
    assert err.for_agent(own=True) == (
        "note surprise/a already exists in the team layer (.omh/notes/surprise/a.md) and a "
        "local note may not shadow it; a person changes it by editing "
        f".omh/notes/surprise/a.md and committing it; {NEW}")


def test_key_taken_by_a_derived_note() -> None:
    err = KeyTaken("taken", Key("docs/deploy"), Layer.TEAM, "docs/deploy.md", derived=True)
    assert err.for_agent() == (
        f"docs/deploy is a derived team note whose text comes from docs/deploy.md; {NEW}")


def test_errors_keep_what_they_were_raised_with(tmp_path: Path) -> None:
    assert NoteParseError("bad front matter", line=3).line == 3
    assert NoteParseError("bad").line is None
    repeats = RepeatsANote("repeats", [("a", "b")])
    assert repeats.repeats == (("a", "b"),) and str(repeats) == "repeats"
    mine = NotYourNote(Key("surprise/a"), "team", ".omh/notes/surprise/a.md")
    assert (str(mine), mine.key, mine.reason, mine.where) == (
        "surprise/a: team", "surprise/a", "team", ".omh/notes/surprise/a.md")
    kept = EditRefused("the editor exited with status 1", tmp_path / "edit.md")
    assert kept.kept == tmp_path / "edit.md"
    assert str(kept) == (f"the editor exited with status 1; the note was left as it was, and "
                         f"your edit is kept in {tmp_path / 'edit.md'}")
    server = ForeignServer("not omh's", ("npx", "other"))
    assert isinstance(server, ConfigError)
    assert (str(server), server.server) == ("not omh's", ("npx", "other"))


def test_semantic_fallback_names_the_extra() -> None:
    assert SemanticUnavailable.fallback() == (
        "semantic recall is on in .omh/memory.toml but its extra is not installed: "
        "pip install 'omh-git-memory[semantic]'; recalling by words only until then")
