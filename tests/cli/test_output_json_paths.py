"""One note, one `path`: every `--json` answer names a note's file the same way.

A local note by its absolute path, a team note by its path from the repository
root (`.omh/notes/<key>.md`), a stub by its document's path, the repository
topic (which no file holds) as null."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import git, note_text, omh
from tests.helpers.repo import init_committed


def _team_and_local(repo: Path) -> Path:
    (repo / ".omh/notes").mkdir(parents=True)
    (repo / ".omh/notes/shared.md").write_text(
        note_text("shared", body="Shared words about pipelines.\n"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a team note")
    store = Path(omh(repo, "memory", "--json").json()["local_store"])
    store.mkdir(parents=True, exist_ok=True)
    (store / "mine.md").write_text(note_text("mine", body="My words about pipelines.\n"),
                                   encoding="utf-8")
    return store


def test_memory_show_recall_and_rm_give_one_path_per_note(repo_dir: Path) -> None:
    store = _team_and_local(repo_dir)
    listed = omh(repo_dir, "memory", "--json").json()
    topic = next(n["key"] for n in listed["notes"] if n["type"] == "topic" and n["derived"])
    expected = {("team", "shared"): ".omh/notes/shared.md",
                ("local", "mine"): str(store / "mine.md"),
                ("team", "readme"): "README.md",
                ("team", topic): None}
    assert {(n["layer"], n["key"]): n["path"] for n in listed["notes"]} == expected
    for (layer, key), path in expected.items():
        (shown,) = omh(repo_dir, "memory", "show", key, "--json").json()["notes"]
        assert (shown["layer"], shown["path"]) == (layer, path), key
    answer = omh(repo_dir, "memory", "recall", "pipelines", "--json").json()["results"]
    recalled = {(r["layer"], r["key"]): r["path"] for r in answer}
    recalled |= {(n["layer"], n["key"]): n["path"] for r in answer for n in r["neighbours"]}
    assert {k: v for k, v in expected.items() if k in recalled} == recalled
    assert ("team", "shared") in recalled and ("local", "mine") in recalled
    for key in ("shared", "mine"):
        removed = omh(repo_dir, "memory", "rm", key, "--json").json()["removed"]
        assert removed["path"] == expected[(removed["layer"], key)]


def test_the_topic_recalled_has_no_path_but_its_text_line_says_how_to_read_it(
    repo_dir: Path,
) -> None:
    init_committed(repo_dir)
    name = repo_dir.name
    answer = omh(repo_dir, "memory", "recall", name, "--json").json()["results"]
    topic = [r for r in answer if r["key"] == name]
    assert topic and topic[0]["path"] is None
    out = omh(repo_dir, "memory", "recall", name).out
    assert f"(omh memory show {name})" in out


def test_an_unreadable_team_file_is_named_by_its_repository_path(repo_dir: Path) -> None:
    (repo_dir / ".omh/notes").mkdir(parents=True)
    (repo_dir / ".omh/notes/broken.md").write_text("no frontmatter\n", encoding="utf-8")
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "a broken team note")
    listed = omh(repo_dir, "memory", "--json").json()
    assert listed["unreadable"] and [(u["layer"], u["path"]) for u in listed["unreadable"]] == [
        ("team", ".omh/notes/broken.md")]
