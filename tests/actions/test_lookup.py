"""A note by its key (actions/lookup.py): which files claim it, why none does and the
key probably meant, and what `show` gives of it, derived notes included."""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.lookup import find_notes, shown_notes, written
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.errors import NoteNotFound
from omh_git_memory.model.layers import Layer
from tests.helpers import commit_files, git, make_repo, note_text, omh, remember_linked

LOCAL_KEY = "surprise/the-port-is-taken"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a README (a stub), a team note `shared` and a local note."""
    path = tmp_path / "widget"
    make_repo(path, {"README.md": "# Widget\n\nHow to build the widget.\n"})
    assert omh(path, "init").code == 0
    commit_files(path, {".omh/notes/shared.md": note_text("shared", body="team text\n")})
    assert remember_linked(path, "The port is taken.") == LOCAL_KEY
    return path


def _refusal(repo: Path, key: str, layer: Layer | None) -> str:
    with pytest.raises(NoteNotFound) as err:
        find_notes(open_workspace(repo).graph(), key, layer)
    return str(err.value)


def test_a_key_asked_for_in_the_wrong_layer_names_the_layer_holding_it(repo: Path) -> None:
    assert _refusal(repo, "shared", Layer.LOCAL) == (
        "no note shared in the local layer; the team layer holds it: use --layer team, "
        "or leave --layer out")
    assert _refusal(repo, LOCAL_KEY, Layer.TEAM) == (
        f"no note {LOCAL_KEY} in the team layer; the local layer holds it: use --layer local, "
        "or leave --layer out")
    assert _refusal(repo, "readme", Layer.LOCAL).startswith(
        "no note readme in the local layer; the team layer holds it")


def test_a_key_no_layer_holds_offers_the_nearest_key_or_the_listing(repo: Path) -> None:
    assert _refusal(repo, "sharde", None) == "no note sharde in any layer; did you mean shared?"
    assert _refusal(repo, "readm", Layer.TEAM) == (
        "no note readm in the team layer; did you mean readme?")
    assert _refusal(repo, "zzzzzz", None) == (
        "no note zzzzzz in any layer; `omh memory` lists the keys")


def test_a_key_both_layers_hold_is_found_in_each_and_written_filters_by_layer(
    repo: Path,
) -> None:
    commit_files(repo, {f".omh/notes/{LOCAL_KEY}.md": note_text(LOCAL_KEY, body="x\n")})
    graph = open_workspace(repo).graph()
    assert [e.layer for e in find_notes(graph, LOCAL_KEY, None)] == [Layer.TEAM, Layer.LOCAL]
    assert [e.layer for e in find_notes(graph, LOCAL_KEY, Layer.LOCAL)] == [Layer.LOCAL]
    assert [e.layer for e in written(graph, LOCAL_KEY, None)] == [Layer.TEAM, Layer.LOCAL]
    assert [e.layer for e in written(graph, LOCAL_KEY, Layer.TEAM)] == [Layer.TEAM]
    assert written(graph, "readme", None) == []  # a derived note is written nowhere


def test_show_of_a_stub_gives_its_derived_text_and_what_it_derives_from(repo: Path) -> None:
    ws = open_workspace(repo)
    [shown] = shown_notes(ws, "readme", None)
    assert (shown.layer, shown.where, shown.path) == ("team", "derived from README.md",
                                                      "README.md")
    assert shown.recorded == git(repo, "log", "-1", "--format=%cs", "--", "README.md").strip()
    assert "type: stub" in shown.text and "Read `README.md`" in shown.text
    assert shown_notes(ws, "readme", Layer.TEAM) == [shown]
    with pytest.raises(NoteNotFound, match="the team layer holds it"):
        shown_notes(ws, "readme", Layer.LOCAL)


def test_show_of_the_repository_topic_says_it_derives_from_the_repository(repo: Path) -> None:
    [shown] = shown_notes(open_workspace(repo), "widget", None)
    assert (shown.layer, shown.where, shown.path) == ("team", "derived from the repository",
                                                      None)
    assert "type: topic" in shown.text


def test_show_of_written_notes_gives_each_layer_as_stored(repo: Path) -> None:
    ws = open_workspace(repo)
    [team] = shown_notes(ws, "shared", None)
    assert (team.layer, team.where, team.path) == ("team", "HEAD:.omh/notes/shared.md",
                                                   ".omh/notes/shared.md")
    assert team.text == (repo / ".omh/notes/shared.md").read_text(encoding="utf-8")
    assert team.recorded == "2026-11-01"
    [local] = shown_notes(ws, LOCAL_KEY, Layer.LOCAL)
    assert local.layer == "local" and local.where.endswith(f"{LOCAL_KEY}.md")
    assert local.text == Path(local.where).read_text(encoding="utf-8")


def test_show_of_a_key_a_file_claims_beside_a_stub_gives_the_stub_then_the_file(
    repo: Path,
) -> None:
    commit_files(repo, {".omh/notes/readme.md": note_text("readme", body="written\n")})
    shown = shown_notes(open_workspace(repo), "readme", None)
    assert [s.where for s in shown] == ["derived from README.md", "HEAD:.omh/notes/readme.md"]
    assert "written" in shown[1].text


def test_a_stub_asked_for_in_the_team_layer_is_not_said_to_be_local(repo: Path) -> None:
    # find_notes reports only written notes: a stub is the team layer's, never the local's
    assert "the local layer holds it" not in _refusal(repo, "readme", Layer.TEAM)


def test_a_file_that_is_no_note_is_not_offered_as_its_own_nearest_key(repo: Path) -> None:
    store = Path(open_workspace(repo).local.root)
    (store / "broken.md").write_text("not a note\n", encoding="utf-8")
    assert _refusal(repo, "broken", None) == (
        "no note broken in any layer; `omh memory` lists the keys")
