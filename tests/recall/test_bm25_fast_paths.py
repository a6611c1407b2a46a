"""Recall's fast paths against the slow definitions they replace.

Recall scores every document in one pass per phrasing (rare words posting by
posting, common words as cached whole columns), loads the cached index without
the dataclass constructor, and splits each distinct token once. These tests hold
them to scoring every document from `Searcher.contribution`, to `Doc(*row)` and
to splitting every word afresh.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall import bm25 as bm25_module
from omh_git_memory.recall import floor as floor_module
from omh_git_memory.recall import tokens
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import index_dir
from omh_git_memory.recall.document import Doc, docs_from_tuples
from omh_git_memory.recall.floor import recall
from tests.helpers import git, make_repo, note_text
from tests.helpers.rank import full, held, reference


def _store(tmp_path: Path, notes: int = 150, seed: int = 3) -> Path:
    """Notes over a small vocabulary: a few words in nearly every note (added as
    whole columns), many in a few (added posting by posting), function words too."""
    rng = random.Random(seed)
    common = ["the", "how", "does", "build", "fails"]
    rare = [f"w{chr(97 + i)}{chr(97 + j)}" for i in range(6) for j in range(6)]
    repo = tmp_path / "r"
    make_repo(repo)
    folder = repo / ".omh/notes"
    folder.mkdir(parents=True)
    for i in range(notes):
        body = " ".join(rng.choices(common, k=rng.randint(0, 6))
                        + rng.choices(rare, weights=range(len(rare), 0, -1),
                                      k=rng.randint(1, 12)))
        key = f"n{i}"
        (folder / f"{key}.md").write_text(
            note_text(key, body=body + "\n", recorded=f"2026-0{1 + i % 9}-0{1 + i % 7}"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "notes")
    return repo


@pytest.mark.parametrize("area_weight", [1.0, 0.5, 0.0])
def test_one_pass_scoring_equals_scoring_every_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, area_weight: float,
) -> None:
    monkeypatch.setattr(bm25_module, "AREA_WEIGHT", area_weight)
    repo = _store(tmp_path)
    searcher = open_workspace(repo).searcher()  # one searcher: its columns are reused
    rng = random.Random(9)
    vocab = ["the", "how", "does", "build", "fails", "nothing", "wab", "wfa", "wcc", "wdd",
             "wee", "wff", "wba", "wab-wfa"]
    asked = 0
    for _ in range(60):
        question = " ".join(rng.choices(vocab, k=rng.randint(1, 6)))
        if rng.random() < 0.4:  # an area label: its words at AREA_WEIGHT
            question = f"{rng.choice(vocab)}: {question}"
        also = [" ".join(rng.choices(vocab, k=3))] if rng.random() < 0.3 else []
        terms = searcher.terms(question)
        scan = searcher.scan(terms)  # every document, to the last bit
        assert scan.scores == [full(searcher, terms, s) for s in range(len(searcher.docs))]
        assert scan.held == [held(terms, s) for s in range(len(searcher.docs))]
        for floor, least in ((floor_module.FLOOR, floor_module.MIN_SHARE), (0.0, 0.0),
                             (0.7, 0.5), (0.0, 1.0)):  # 1.0: held == total exactly
            got = recall(searcher, question, also, floor=floor, min_share=least)
            want = reference(searcher, question, also, floor, least)
            assert ([(h.doc.key, h.score) for h in got.results], got.left_out) == want, (
                question, also, floor, least)
            asked += bool(want[0])
    assert asked > 100  # most questions matched something


def test_loading_the_index_gives_the_documents_it_built(tmp_path: Path) -> None:
    repo = _store(tmp_path, notes=20)
    ws = open_workspace(repo)
    built = snapshot_for(ws.repo, ws.config(), rebuild=True)
    assert any(index_dir(ws.repo).glob("*.idx"))
    loaded = snapshot_for(ws.repo, ws.config())
    assert loaded.analysed == 0 and loaded.docs == built.docs
    assert loaded.postings.table == built.postings.table
    assert loaded.postings.blob == built.postings.blob
    rows = [d.as_tuple() if d else None for d in built.docs] + [None]
    assert docs_from_tuples(rows) == [Doc.from_tuple(r) if r else None for r in rows]
    with pytest.raises(TypeError):
        docs_from_tuples([rows[0][:-1]])  # type: ignore[index]


def _slow_words(text: str) -> list[str]:
    """`tokens.words` as first written: every match split and stemmed afresh."""
    out: list[str] = []
    for match in tokens._WORD.finditer(text):
        token = match.group()
        parts = [p for piece in token.split("_") if piece for p in tokens._parts(piece)]
        whole = tokens.stem(token.lower())
        out.append(whole)
        if len(parts) > 1:
            out.extend(s for s in (tokens.stem(p.lower()) for p in parts) if s != whole)
    return out


def test_cached_token_words_equal_splitting_every_match() -> None:
    rng = random.Random(4)
    alphabet = "aZ_9é中ǅ²ßİ -\u0301x_Y1.:"
    texts = ["parseHeaderLine CURLOPT_SSL_VERIFYPEER http2 HTTPServer mounted_files",
             *("".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(3000))]
    for text in texts * 2:  # the second time from the cache
        assert tokens.words(text) == _slow_words(text), text
