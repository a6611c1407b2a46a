"""Semantic recall reads a document by its sections: a stub gets one vector per
section of its document, and the document is as close to a question as its closest
section (recall/semantic.py). With the real model (the test extra installs it)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.semantic import (
    MAX_SECTIONS,
    Embedder,
    _sections_known,
    section_texts,
)
from tests.helpers import git, make_repo
from tests.helpers.semantic import count_embeddings

GUIDE = """# Operations guide

## Bread

Bake the loaf at 220 degrees for forty minutes.

## Containers

A bind mount of the token file fails with EBUSY, because the harness rewrites the
file in place; mount its folder instead.

## Gardening

Water the tomatoes every other morning.
"""


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return Embedder(cache=tmp_path_factory.mktemp("model-cache"))


def test_a_document_is_as_close_as_its_closest_section(tmp_path: Path,
                                                       embedder: Embedder) -> None:
    make_repo(tmp_path / "r", {"docs/guide.md": GUIDE})
    ws = open_workspace(tmp_path / "r")
    searcher = ws.searcher()
    view = ws.semantic(searcher, embedder)
    slot = next(i for i, d in enumerate(searcher.docs) if d is not None and d.is_stub)
    doc = searcher.docs[slot]
    assert doc is not None
    pieces = section_texts(GUIDE, doc.title)
    assert len(pieces) == 4  # the title's section and three more
    assert list(view.owner).count(slot) == 4
    question = "credentials vanish inside containers"
    q = embedder.embed([question])[0]
    each = embedder.embed(pieces) @ q
    assert view.similarities([question])[slot] == pytest.approx(float(each.max()), abs=1e-5)
    assert int(np.argmax(each)) == 2  # the Containers section, not the last one read


def test_a_section_deep_in_a_document_outranks_the_documents_headings_alone(
    tmp_path: Path, embedder: Embedder
) -> None:
    """What the stub alone says (its title and headings) is far from the question;
    the section is close. Before sections were embedded, the stub's own text was."""
    make_repo(tmp_path / "r", {"docs/guide.md": GUIDE})
    ws = open_workspace(tmp_path / "r")
    searcher = ws.searcher()
    view = ws.semantic(searcher, embedder)
    slot = next(i for i, d in enumerate(searcher.docs) if d is not None and d.is_stub)
    question = "why does bind-mounting the token file fail with EBUSY"
    q = embedder.embed([question])[0]
    headings = embedder.embed(["Operations guide\nBread\nContainers\nGardening"])[0]
    assert view.similarities([question])[slot] > float(headings @ q) + 0.1


def test_section_vectors_are_cached_and_a_changed_document_is_embedded_again(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path / "r", {"docs/guide.md": GUIDE, "README.md": "# R\n\nHello.\n"})
    embedded = count_embeddings(monkeypatch)
    ws = open_workspace(tmp_path / "r")
    ws.semantic(ws.searcher(), embedder)
    assert sum(embedded) == 4 + 1 + 1  # the guide's sections, the README's, the topic
    embedded.clear()
    again = ws.semantic(ws.searcher(), embedder)
    assert embedded == []  # read back, sections and all
    assert len(again.vectors) == 6
    (tmp_path / "r/docs/guide.md").write_text(GUIDE + "\n## Ports\n\nCI listens on 8080.\n")
    git(tmp_path / "r", "commit", "-qam", "a section more")
    ws.semantic(ws.searcher(), embedder)
    assert sum(embedded) == 5  # only the changed document, all its sections


def test_a_document_whose_blob_is_gone_gets_one_vector_of_its_title(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A partial clone lacks the blob (here: its object file removed after the index
    was built): semantic recall embeds the stub's title, and does not fail."""
    repo = make_repo(tmp_path / "r", {"docs/guide.md": GUIDE, "README.md": "# R\n\nHi.\n"})
    ws = open_workspace(tmp_path / "r")
    searcher = ws.searcher()
    blob = str(repo.revparse_single("HEAD:docs/guide.md").id)
    (Path(repo.path) / "objects" / blob[:2] / blob[2:]).unlink()
    view = ws.semantic(searcher, embedder)
    slot = next(i for i, d in enumerate(searcher.docs)
                if d is not None and d.is_stub and d.location == "docs/guide.md")
    assert list(view.owner).count(slot) == 1
    title = searcher.docs[slot].title  # type: ignore[union-attr]
    row = view.vectors[list(view.owner).index(slot)]
    assert float(row @ embedder.embed([title])[0]) == pytest.approx(1.0, abs=1e-5)


def test_a_path_holding_a_line_feed_keeps_the_cache_whole(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's keys name paths, one a line: a line feed in a path must not shift
    them (every document would be embedded again on every question)."""
    make_repo(tmp_path / "r", {"a.md": "# A\n\n## Walrus\n\nWalruses.\n",
                               "odd\nname.md": "# Odd\n\nodd.\n"})
    embedded = count_embeddings(monkeypatch)
    ws = open_workspace(tmp_path / "r")
    ws.semantic(ws.searcher(), embedder)
    assert sum(embedded) > 0
    embedded.clear()
    ws.semantic(ws.searcher(), embedder)
    assert embedded == []


def test_a_document_of_thousands_of_headings_embeds_its_first_sections_only() -> None:
    text = "".join(f"## H{n}\n\nword{n}\n\n" for n in range(1000))
    pieces = section_texts(text, "Many")
    assert len(pieces) == MAX_SECTIONS == 128
    assert pieces[0] == "Many\n## H0\n\nword0"


def test_the_cache_counts_a_stubs_sections_by_their_last_number() -> None:
    known = {"m:stub:b1:docs/a#b.md#0": 0, "m:stub:b1:docs/a#b.md#2": 0,
             "m:stub:b1:docs/a#b.md#1": 0, "m:note:b2:x.md": 0, "m:stub:b3:c.md#x": 0}
    assert _sections_known(known) == {"m:stub:b1:docs/a#b.md": 3}


def test_a_document_without_a_section_is_embedded_by_its_title() -> None:
    assert section_texts("", "Empty") == ["Empty"]
    assert section_texts("# A\n\nbody\n", "T") == ["T\n# A\n\nbody"]


def test_a_commits_vectors_are_dated_as_its_index(tmp_path: Path) -> None:
    """The next build reuses the newest vectors: a past commit's (`--ref`, its index
    dated below HEAD's) must not be newer than HEAD's because they were written later."""
    from omh_git_memory.recall.semantic import _save_rows

    stem = tmp_path / "abc123"
    stem.with_suffix(".idx").write_bytes(b"index")
    os.utime(stem.with_suffix(".idx"), ns=(1_000_000_000, 1_000_000_000))
    _save_rows(stem, ["k"], np.zeros((1, 384), dtype=np.float32))
    for suffix in (".vec.npy", ".vec.keys"):
        assert stem.with_suffix(suffix).stat().st_mtime_ns == 1_000_000_000
    lone = tmp_path / "local-model"  # no index beside it: dated when written
    _save_rows(lone, ["k"], np.zeros((1, 384), dtype=np.float32))
    assert lone.with_suffix(".vec.npy").stat().st_mtime_ns > 1_000_000_000
