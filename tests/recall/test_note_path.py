"""The `path` of a note in every `--json` answer (omh_git_memory/recall/note_path.py)."""

from __future__ import annotations

from omh_git_memory.recall import content_id
from omh_git_memory.recall.note_path import json_path


def test_a_team_note_is_its_path_from_the_root_without_the_revision() -> None:
    source = content_id.note_id("ab12", ".omh/notes/a.md")
    assert json_path("team", "HEAD:.omh/notes/a.md", source) == ".omh/notes/a.md"
    assert json_path("team", "abc123:.omh/notes/x:y.md", source) == ".omh/notes/x:y.md"


def test_a_team_note_named_without_a_revision_is_its_path() -> None:
    assert json_path("team", ".omh/notes/a.md") == ".omh/notes/a.md"


def test_a_local_note_is_its_files_path_even_with_a_colon_in_it() -> None:
    assert json_path("local", "/home/u/.omh/stores/x/a:b.md", content_id.LOCAL) == (
        "/home/u/.omh/stores/x/a:b.md")


def test_a_stub_is_its_documents_path() -> None:
    assert json_path("team", "docs/a:b.md", content_id.stub_id("cd34", "docs/a:b.md")) == (
        "docs/a:b.md")


def test_the_repository_topic_has_no_path() -> None:
    assert json_path("team", "HEAD:", content_id.topic_id("repo")) is None
