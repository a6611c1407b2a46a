"""`omh memory recall` and `omh memory reindex` (cli/recall.py): the warning for a
moved clone given only where the local layer is read, the numbers `--json` carries
and the line reindex says."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.helpers import git, make_repo, note_text, omh
from tests.helpers.notes import moved_clone

WARNING = "semantic recall is on in .omh/memory.toml but its extra is not installed"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A repository of three documents (three stubs and the repository topic)."""
    path = tmp_path / "repo"
    make_repo(path, {"README.md": "# Tiny\n\nA tiny server; sockets close on idle.\n",
                     "docs/sockets.md": "# Sockets\n\nWhy does the socket close? Idle.\n",
                     "docs/ports.md": "# Ports\n\nThe socket binds port 8080.\n"})
    return path


def test_recall_tells_a_moved_clone_where_its_notes_went_but_not_under_ref(
        tmp_path: Path) -> None:
    old, new = moved_clone(tmp_path)
    now = omh(new, "memory", "recall", "credential file")
    assert now.code == 0 and "omh adopt" in now.err and str(old) in now.err, now.err
    pinned = omh(new, "memory", "recall", "credential file", "--ref", "HEAD")
    assert pinned.code == 0 and pinned.err == "", pinned.err  # a commit holds no local note


def test_recall_json_scores_carry_four_decimals(docs: Path) -> None:
    run = omh(docs, "memory", "recall", "why does the socket close on idle", "--json")
    assert run.code == 0, run.err
    scores = [r["score"] for r in run.json()["results"]]
    assert len(scores) >= 2
    assert all(s == round(s, 4) for s in scores), scores


def test_reindex_json_counts_the_documents_and_the_seconds_it_took(docs: Path) -> None:
    started = time.perf_counter()
    run = omh(docs, "memory", "reindex", "--json")
    took = time.perf_counter() - started
    assert run.code == 0, run.err
    built = run.json()
    assert built["documents"] == 4 and built["analysed"] == 4 and built["reused"] == 0
    assert 0 <= built["seconds"] <= took, (built, took)
    assert built["seconds"] == round(built["seconds"], 3)
    again = omh(docs, "memory", "reindex", "--full", "--json").json()
    assert again["documents"] == 4 and again["analysed"] == 4


def test_reindex_says_the_commit_in_twelve_characters(docs: Path) -> None:
    head = git(docs, "rev-parse", "HEAD").strip()
    run = omh(docs, "memory", "reindex")
    assert run.code == 0, run.err
    assert run.out.startswith(f"indexed {head[:12]}: 4 documents (4 analysed, 0 reused) in ")
    assert run.out.endswith(" s\n")


@pytest.fixture
def no_extra(tmp_path: Path) -> dict[str, str]:
    """The semantic extra made unimportable, as tests/recall/test_semantic_fallback.py does."""
    shim = tmp_path / "shim" / "onnxruntime"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('onnxruntime is not installed')\n")
    path = os.pathsep.join(p for p in (str(shim.parent), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}


def test_reindex_builds_the_vectors_only_when_the_settings_turn_them_on(
        repo_dir: Path, no_extra: dict[str, str]) -> None:
    assert omh(repo_dir, "init").code == 0
    notes = repo_dir / ".omh/notes"
    notes.mkdir()
    (notes / "ports.md").write_text(note_text("ports", body="CI listens on port 8080.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "one note")
    off = omh(repo_dir, "memory", "reindex", env=no_extra)
    assert off.code == 0 and WARNING not in off.err, off.err  # off: the extra is never asked
    config = repo_dir / ".omh/memory.toml"
    config.write_text(config.read_text().replace("semantic = false", "semantic = true"))
    on = omh(repo_dir, "memory", "reindex", env=no_extra)
    assert on.code == 0 and on.err.count(WARNING) == 1, on.err
