"""The graph of notes, where the mutation pass showed defects no test
would notice: a note's link to itself, two files of one key linking to the same
note, and links to derived team notes (stubs, the repo topic), which are keys
without a file.

Found by mutation testing (docs/records/mutation-passes.md); was tests/test_mutants_graph.py.
"""

from __future__ import annotations

from pathlib import Path

from omh_git_memory.actions.lint import lint
from omh_git_memory.model.layers import Layer
from omh_git_memory.stores.graph import Graph
from omh_git_memory.stores.store import LocalStore
from tests.helpers import note_text


def _layers(tmp_path: Path, team: dict[str, str], local: dict[str, str],
            derived: tuple[str, ...] = ()) -> Graph:
    """A graph of two layers read from two plain directories (file name -> text)."""
    stores = []
    for layer, files in ((Layer.TEAM, team), (Layer.LOCAL, local)):
        root = tmp_path / layer.value
        root.mkdir()
        for name, text in files.items():
            (root / name).write_text(text)
        stores.append(LocalStore(root, layer).scan())
    return Graph.of(*stores, derived=derived)


def _rule(graph: Graph, rule: str) -> set[tuple[str, str]]:
    return {(f.layer.value, f.key) for f in lint(graph).findings if f.rule == rule}


def test_a_note_linking_only_to_itself_is_still_an_orphan(tmp_path: Path) -> None:
    graph = _layers(tmp_path, team={}, local={
        "loop.md": note_text("loop", body="See [[loop]].\n"),
    })
    assert graph.inbound().get((Layer.LOCAL, "loop"), []) == []
    assert _rule(graph, "Orphan") == {("local", "loop")}
    assert _rule(graph, "DanglingLink") == set()


def test_a_note_is_listed_once_as_a_linker_however_many_files_claim_its_key(
        tmp_path: Path) -> None:
    # Two files claim the key `a` (DuplicateKey); both link to `b`. `b` has one
    # distinct note linking to it, not two.
    graph = _layers(tmp_path, team={}, local={
        "a.md": note_text("a", body="See [[b]].\n"),
        "copy.md": note_text("a", body="See [[b]].\n"),
        "b.md": note_text("b", body="See [[a]].\n"),
    })
    assert graph.inbound()[(Layer.LOCAL, "b")] == [(Layer.LOCAL, "a")]
    assert graph.inbound()[(Layer.LOCAL, "a")] == [(Layer.LOCAL, "b")]


def test_a_link_to_a_derived_team_note_reaches_it_from_either_layer(tmp_path: Path) -> None:
    graph = _layers(tmp_path,
                    team={"t.md": note_text("t", body="See [[docs-guide]].\n")},
                    local={"l.md": note_text("l", body="See [[docs-guide]] and [[t]].\n")},
                    derived=("docs-guide",))
    assert graph.reaches("docs-guide", Layer.TEAM)
    assert graph.reaches("docs-guide", Layer.LOCAL)
    assert not graph.reaches("no-such-key", Layer.TEAM)
    assert not graph.reaches("no-such-key", Layer.LOCAL)
    assert _rule(graph, "DanglingLink") == set()
    # A derived key has no file: nothing resolves to a written note.
    assert graph.resolve("docs-guide", Layer.LOCAL) == []

