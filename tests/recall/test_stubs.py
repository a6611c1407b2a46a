"""Derived notes: the repository topic's name and stubs whose paths slug alike.

What is derived must be the same in every clone of the same commit, whatever the
folder the clone was made in (DESIGN: "no key or fact may depend on the
checkout's folder name or path").
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import git, make_repo, note_text, omh


def _commit_note(repo: Path, key: str, body: str) -> None:
    path = repo / ".omh/notes" / f"{key}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(key, body=body))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"add {key}")


def _topic_keys(repo: Path) -> list[str]:
    run = omh(repo, "memory", "--json")
    assert run.code == 0, run.err
    return [n["key"] for n in run.json()["notes"] if n["derived"] and n["type"] == "topic"]


def _lint(repo: Path) -> dict[str, object]:
    run = omh(repo, "memory", "lint", "--ref", "HEAD", "--json")
    out = run.json()
    out["code"] = run.code
    return out


def test_init_names_the_topic_in_memory_toml_and_every_clone_agrees(tmp_path: Path) -> None:
    origin = tmp_path / "tinyhttp"
    make_repo(origin, {"README.md": "# Tiny HTTP\n", "docs/guide.md": "# Guide\n"})
    assert omh(origin, "init").code == 0
    assert 'name = "tinyhttp"' in (origin / ".omh/memory.toml").read_text()
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "omh init")
    _commit_note(origin, "overview", "See [[tinyhttp]] and [[docs/guide]].\n")
    clone = tmp_path / "work" / "my-checkout"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    for repo in (origin, clone):
        assert _topic_keys(repo) == ["tinyhttp"]
    original, cloned = _lint(origin), _lint(clone)
    assert original == cloned
    assert original["code"] == 0 and original["counts"]["DanglingLink"] == 0  # type: ignore[index]
    recalled = omh(clone, "memory", "recall", "tiny http", "--json").json()
    assert "tinyhttp" in {r["key"] for r in recalled["results"]}


def test_without_a_committed_name_the_topic_is_repo_in_every_clone(tmp_path: Path) -> None:
    # A store made before init wrote a name (or with no memory.toml at all): the
    # topic's key may not come from the folder, so it is the fixed `repo`.
    origin = tmp_path / "alpha"
    make_repo(origin, {"README.md": "# Alpha\n"})
    _commit_note(origin, "overview", "See [[repo]].\n")
    clone = tmp_path / "beta"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    assert _topic_keys(origin) == _topic_keys(clone) == ["repo"]
    assert _lint(origin) == _lint(clone)
    assert _lint(clone)["code"] == 0
    # Unnamed, it reads as the repository's topic, not as the topic of a repo called "repo".
    text = omh(clone, "memory", "recall", "alpha").out
    assert "  the repository topic — " in text and "topic of repo" not in text, text


def test_a_copied_checkouts_cached_index_holds_what_a_rebuild_holds(tmp_path: Path) -> None:
    origin = tmp_path / "alpha"
    make_repo(origin, {"README.md": "# Alpha\n"})
    before = _topic_keys(origin)  # builds and caches the index under .git/omh
    copy = tmp_path / "gamma"
    shutil.copytree(origin, copy, symlinks=True)
    cached = _topic_keys(copy)
    assert omh(copy, "memory", "reindex", "--full").code == 0
    assert cached == _topic_keys(copy) == before


def test_the_topic_name_is_read_from_the_commit_not_the_folder(tmp_path: Path) -> None:
    origin = tmp_path / "somewhere"
    make_repo(origin, {"README.md": "# X\n",
                       ".omh/memory.toml": '[repo]\nname = "Api Server"\n'})
    assert _topic_keys(origin) == ["api-server"]
    shown = omh(origin, "memory", "show", "api-server")
    assert shown.code == 0 and "# Api Server\n" in shown.out


def test_a_bad_repo_name_is_refused_by_name(tmp_path: Path) -> None:
    origin = tmp_path / "somewhere"
    make_repo(origin, {"README.md": "# X\n", ".omh/memory.toml": "[repo]\nname = 3\n"})
    run = omh(origin, "memory", "lint")
    assert run.code == 1 and "[repo] name" in run.err


def _colliding(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    make_repo(repo, {"README.md": "# R\n",
                     "docs/deploy-notes.md": "# Lowercase\n\n## Second\n",
                     "docs/Deploy Notes.md": "# Deploying\n\n## First\n"})
    return repo


def test_two_documents_slugging_to_one_key_give_one_stub(tmp_path: Path) -> None:
    repo = _colliding(tmp_path)
    notes = [n for n in omh(repo, "memory", "--json").json()["notes"]
             if n["key"] == "docs/deploy-notes"]
    # The path that sorts first (byte order: "D" before "d") keeps the key.
    assert [n["path"] for n in notes] == ["docs/Deploy Notes.md"]
    shown = omh(repo, "memory", "show", "docs/deploy-notes").out
    assert shown.count("---\nkey:") == 1 and "source: docs/Deploy Notes.md" in shown
    topic = omh(repo, "memory", "show", "repo").out
    assert topic.count("[[docs/deploy-notes]]") == 1


def test_lint_names_the_document_that_lost_its_stub(tmp_path: Path) -> None:
    repo = _colliding(tmp_path)
    for args in (("memory", "lint", "--json"), ("memory", "lint", "--ref", "HEAD", "--json")):
        run = omh(repo, *args)
        assert run.code == 0, run.err  # a warning, as for two files claiming one key
        report = run.json()
        found = [f for f in report["findings"] if f["rule"] == "DuplicateKey"]
        assert [(f["key"], f["path"], f["severity"]) for f in found] == [
            ("docs/deploy-notes", "docs/deploy-notes.md", "warning")]
        assert "docs/Deploy Notes.md" in found[0]["message"]
    text = omh(repo, "memory", "lint").out
    assert "docs/deploy-notes.md: DuplicateKey (warning)" in text
