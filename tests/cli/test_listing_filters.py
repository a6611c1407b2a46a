"""`omh memory` lists the notes people and agents wrote and counts the stubs in one
line; `--layer`, `--type` and `--all` choose what is listed (cli/listing.py,
actions/listing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import git, note_text, omh


@pytest.fixture
def store(repo_dir: Path) -> Path:
    """A team topic, three documents, and one local surprise."""
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "deploy-rollback.md").write_text(note_text("deploy-rollback", kind="topic"))
    for name in ("a", "b"):
        (repo_dir / f"{name}.md").write_text(f"# {name}\n\ntext\n")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "notes and docs")
    assert omh(repo_dir, "memory", "remember", "--expected", "e", "--observed",
               "The port is taken.", "--evidence", "ss", "--answers", "q").code == 0
    return repo_dir


def listed(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines() if line.startswith("  ") and
            not line.startswith("  (")]


def test_by_default_written_notes_are_listed_and_stubs_counted(store: Path) -> None:
    out = omh(store, "memory").out
    assert listed(out) == ["deploy-rollback", "surprise/the-port-is-taken"]
    assert ("  (not listed, derived from the tree: 3 stubs and 1 repository topic; "
            "--all lists them, --type stub the stubs alone)") in out
    assert out.splitlines()[0].startswith("team · 1 note, 3 stubs, 1 repository topic")
    assert omh(store, "memory", "list").out == out


def test_all_lists_the_derived_notes_too(store: Path) -> None:
    out = omh(store, "memory", "list", "--all").out
    assert listed(out) == ["a", "b", "deploy-rollback", "readme", "repo",
                           "surprise/the-port-is-taken"]
    assert "not listed" not in out


def test_type_and_layer_choose_what_is_listed(store: Path) -> None:
    assert listed(omh(store, "memory", "list", "--type", "stub").out) == ["a", "b", "readme"]
    assert listed(omh(store, "memory", "list", "--type", "surprise", "--type", "topic").out
                  ) == ["deploy-rollback", "repo", "surprise/the-port-is-taken"]
    local = omh(store, "memory", "list", "--layer", "local").out
    assert listed(local) == ["surprise/the-port-is-taken"]
    assert not local.startswith("team")


def test_json_holds_every_note_unless_filtered_and_counts_the_whole_store(
    store: Path,
) -> None:
    every = omh(store, "memory", "--json").json()
    assert len(every["notes"]) == 6
    stubs = omh(store, "memory", "list", "--type", "stub", "--json").json()
    assert [n["key"] for n in stubs["notes"]] == ["a", "b", "readme"]
    assert stubs["counts"] == every["counts"] == {
        "team": {"notes": 1, "stubs": 3, "topic": 1}, "local": {"notes": 1}}
    local = omh(store, "memory", "list", "--layer", "local", "--json").json()
    assert [n["layer"] for n in local["notes"]] == ["local"]


def test_the_options_work_on_omh_memory_itself_as_the_hint_says(store: Path) -> None:
    assert omh(store, "memory", "--all").out == omh(store, "memory", "list", "--all").out
    assert listed(omh(store, "memory", "--type", "stub").out) == ["a", "b", "readme"]
    assert listed(omh(store, "memory", "--layer", "local").out) == ["surprise/the-port-is-taken"]
    before = omh(store, "memory", "--all", "recall", "port")
    assert before.code == 2 and "not before `recall`" in before.err


def test_an_unknown_type_is_refused_with_the_types_named(store: Path) -> None:
    run = omh(store, "memory", "list", "--type", "surprises")
    assert run.code == 2
    assert "--type 'surprises' is no type of note; the types are surprise, topic, stub" in run.err
