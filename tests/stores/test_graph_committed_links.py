"""Invariant: team notes link only to team notes — where the mutation pass showed
no test would notice it broken: lint, the
layers a link reaches, and recall's neighbourhoods.

Each case tells "reaches only a local note" apart from "reaches no note at all"
and from "reaches a team note", which the older tests never did: their team
links pointed at keys that exist in no layer.

Found by mutation testing (the holes docs/records/mutation-holes.md lists);
was tests/test_holes_invariant2.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omh_git_memory.actions.lint import lint
from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.layers import Layer, reachable_layers
from omh_git_memory.recall.floor import recall
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.store import LocalStore
from tests.helpers import git, note_text, omh

ONLY_LOCAL = "[[only-local]] is only in your local layer, which teammates do not have; " \
    "promote it too"
NO_NOTE = "[[only-local]] names no note in the store"


def _commit_team(repo: Path, notes: dict[str, str]) -> None:
    for key, text in notes.items():
        path = repo / ".omh/notes" / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "team notes")


def _write_local(repo: Path, notes: dict[str, str]) -> Path:
    root = open_workspace(repo).local.root
    for key, text in notes.items():
        path = root / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _layer_dirs(tmp_path: Path, team: dict[str, str], local: dict[str, str]) -> Graph:
    """A graph of two layers read from two plain directories (no git needed)."""
    stores = []
    for layer, notes in ((Layer.TEAM, team), (Layer.LOCAL, local)):
        root = tmp_path / layer.value
        root.mkdir()
        for key, text in notes.items():
            (root / f"{key}.md").write_text(text)
        stores.append(LocalStore(root, layer).scan())
    return Graph.of(*stores)


def _dangling(findings: object) -> list[tuple[str, str, str]]:
    return [(f.layer.value, f.key, f.message) for f in findings  # type: ignore[attr-defined]
            if f.rule == "DanglingLink"]


# --- the layers a link reaches ---------------------------------------------------

def test_a_team_link_reaches_the_team_layer_only_and_a_local_link_both() -> None:
    assert reachable_layers(Layer.TEAM) == (Layer.TEAM,)
    assert set(reachable_layers(Layer.LOCAL)) == {Layer.LOCAL, Layer.TEAM}


def test_a_local_notes_link_to_a_team_note_resolves(tmp_path: Path) -> None:
    graph = _layer_dirs(tmp_path, team={"shared": note_text("shared")},
                       local={"mine": note_text("mine", body="See [[shared]].\n")})
    reached = graph.resolve("shared", Layer.LOCAL)
    assert [(e.layer, e.key) for e in reached] == [(Layer.TEAM, "shared")]
    report = lint(graph)
    assert _dangling(report.findings) == []
    # The team note is linked to, so it is no orphan; the local note is.
    orphans = {(f.layer.value, f.key) for f in report.findings if f.rule == "Orphan"}
    assert orphans == {("local", "mine")}


def test_a_team_notes_link_to_a_local_only_note_does_not_resolve(tmp_path: Path) -> None:
    graph = _layer_dirs(tmp_path, team={"a": note_text("a", body="See [[only-local]].\n")},
                       local={"only-local": note_text("only-local")})
    assert graph.resolve("only-local", Layer.TEAM) == []
    assert not graph.reaches("only-local", Layer.TEAM)
    assert graph.reaches("only-local", Layer.LOCAL)
    # The team note's link gives the local note no inbound link: it stays an orphan.
    assert graph.inbound().get((Layer.LOCAL, "only-local"), []) == []


def test_a_key_in_both_layers_is_reached_in_the_team_layer_from_a_team_note(
    tmp_path: Path
) -> None:
    graph = _layer_dirs(tmp_path, team={"a": note_text("a", body="[[b]]\n"), "b": note_text("b")},
                       local={"b": note_text("b")})
    assert [e.layer for e in graph.resolve("b", Layer.TEAM)] == [Layer.TEAM]
    assert sorted(e.layer.value for e in graph.resolve("b", Layer.LOCAL)) == ["local", "team"]


# --- lint ----------------------------------------------------------------------

def test_lint_names_a_team_link_that_reaches_only_the_local_layer(tmp_path: Path) -> None:
    graph = _layer_dirs(tmp_path, team={"a": note_text("a", body="See [[only-local]].\n")},
                       local={"only-local": note_text("only-local")})
    report = lint(graph)
    assert _dangling(report.findings) == [("team", "a", ONLY_LOCAL)]
    assert not report.refused  # a warning in plain lint


def test_lint_tells_a_team_link_to_nothing_from_one_to_a_local_note(tmp_path: Path) -> None:
    graph = _layer_dirs(tmp_path, team={"a": note_text("a", body="See [[only-local]].\n")},
                       local={})
    assert _dangling(lint(graph).findings) == [("team", "a", NO_NOTE)]


def test_the_same_link_from_a_local_note_does_not_dangle(tmp_path: Path) -> None:
    graph = _layer_dirs(tmp_path, team={},
                       local={"a": note_text("a", body="See [[only-local]].\n"),
                              "only-local": note_text("only-local")})
    assert _dangling(lint(graph).findings) == []


@pytest.fixture
def team_links_local(repo_dir: Path) -> Path:
    """A committed team note `a` linking to `only-local`, which only the local layer
    of this machine holds."""
    assert omh(repo_dir, "init").code == 0
    _commit_team(repo_dir, {"a": note_text("a", body="See [[only-local]].\n")})
    _write_local(repo_dir, {"only-local": note_text("only-local")})
    return repo_dir


def test_cli_lint_reports_the_team_link_as_reaching_only_local(team_links_local: Path) -> None:
    run = omh(team_links_local, "memory", "lint", "--json")
    assert run.code == 0, run.out + run.err  # a warning: plain lint does not fail on it
    out = run.json()
    found = [(f["layer"], f["key"], f["path"], f["message"]) for f in out["findings"]
             if f["rule"] == "DanglingLink"]
    assert found == [("team", "a", "HEAD:.omh/notes/a.md", ONLY_LOCAL)]
    text = omh(team_links_local, "memory", "lint")
    assert f"HEAD:.omh/notes/a.md:10: DanglingLink (warning): {ONLY_LOCAL}" in text.out


@pytest.mark.parametrize("flag", [["--ref", "HEAD"], ["--worktree"]])
def test_cli_lint_of_the_team_notes_alone_fails_on_that_link(
    team_links_local: Path, flag: list[str]
) -> None:
    """The CI check and the pre-commit hook read the team notes alone: a link a
    teammate cannot follow fails, whether or not this machine has the note."""
    with_local = omh(team_links_local, "memory", "lint", *flag, "--json")
    assert with_local.code == 1, with_local.out + with_local.err
    out = with_local.json()
    assert out["failed"] and not out["refused"]
    assert [(f["rule"], f["layer"], f["key"], f["message"]) for f in out["findings"]
            if f["rule"] == "DanglingLink"] == [("DanglingLink", "team", "a", NO_NOTE)]
    (open_workspace(team_links_local).local.root / "only-local.md").unlink()
    without = omh(team_links_local, "memory", "lint", *flag, "--json")
    assert without.code == 1
    assert without.json()["findings"] == out["findings"]  # the local layer was never read


# --- recall's neighbourhoods -----------------------------------------------------

TEAM_HIT = note_text("deploy-steps", body="Canary rollout first. See [[rollback-plan]].\n")
LOCAL_ONLY = note_text("rollback-plan", body="My own rollback notes.\n")


def _neighbours_of(repo: Path, question: str, key: str, layer: str) -> list[tuple[str, str]]:
    answer = recall(open_workspace(repo).searcher(), question)
    (hit,) = [h for h in answer.results if (h.doc.key, h.doc.layer) == (key, layer)]
    return [(n.layer, n.key) for n in hit.neighbours]


def test_recall_a_team_notes_neighbours_leave_out_a_local_only_target(repo_dir: Path) -> None:
    _commit_team(repo_dir, {"deploy-steps": TEAM_HIT})
    _write_local(repo_dir, {"rollback-plan": LOCAL_ONLY})
    assert _neighbours_of(repo_dir, "canary rollout", "deploy-steps", "team") == []


def test_recall_a_team_notes_link_reaches_the_team_copy_of_a_key_both_layers_hold(
    repo_dir: Path
) -> None:
    _commit_team(repo_dir, {"deploy-steps": TEAM_HIT,
                            "rollback-plan": note_text("rollback-plan", body="Team plan.\n")})
    _write_local(repo_dir, {"rollback-plan": LOCAL_ONLY})
    assert _neighbours_of(repo_dir, "canary rollout", "deploy-steps", "team") == [
        ("team", "rollback-plan")]


def test_recall_a_local_notes_link_reaches_a_team_note(repo_dir: Path) -> None:
    _commit_team(repo_dir, {"rollback-plan": note_text("rollback-plan", body="Team plan.\n")})
    _write_local(repo_dir, {"deploy-steps": TEAM_HIT})
    assert _neighbours_of(repo_dir, "canary rollout", "deploy-steps", "local") == [
        ("team", "rollback-plan")]


def test_cli_recall_shows_no_local_note_under_a_team_note_it_cannot_reach(
    repo_dir: Path
) -> None:
    _commit_team(repo_dir, {"deploy-steps": TEAM_HIT})
    _write_local(repo_dir, {"rollback-plan": LOCAL_ONLY})
    run = omh(repo_dir, "memory", "recall", "canary rollout", "--json")
    assert run.code == 0, run.err
    (hit,) = [r for r in run.json()["results"] if r["key"] == "deploy-steps"]
    assert hit["layer"] == "team"
    assert hit["neighbours"] == [] and hit["more_neighbours"] == 0
    tree = omh(repo_dir, "memory", "recall", "canary rollout").out
    assert "rollback-plan" not in tree
