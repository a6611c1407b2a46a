"""The model's rewrite to integer matrix products (recall/semantic.py's
`integer_model`), on small graphs made here: each pattern of the shipped model is
rewritten and gives what the original gives, and a graph that differs from the
pattern in any one way is left exactly as it was. (The shipped model itself is
rewritten and checked in tests/recall/test_semantic.py.)"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

from omh_git_memory.model.errors import SemanticUnavailable
from omh_git_memory.recall.semantic import integer_model
from tests.helpers.onnx_graphs import model_bytes

RNG = np.random.default_rng(7)
WEIGHTS = RNG.integers(-127, 128, (4, 4)).astype(np.int8)
COLUMN_SCALES = (RNG.random((1, 4)) * 0.02 + 0.005).astype(np.float32)
BIAS = RNG.random(4).astype(np.float32)
X = RNG.random((3, 4)).astype(np.float32)


def _rewrite(raw: bytes, tmp_path: Path) -> bytes:
    source = tmp_path / "model.onnx"
    source.write_bytes(raw)
    return integer_model(source, None)


def _ops(raw: bytes) -> list[str]:
    return [node.op_type for node in onnx.load_from_string(raw).graph.node]


def _run(raw: bytes, feeds: dict[str, np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(raw, options, providers=["CPUExecutionProvider"])
    return list(session.run(None, feeds))


def _linear(weights: np.ndarray[Any, Any] = WEIGHTS,
            scales: np.ndarray[Any, Any] = COLUMN_SCALES, *, bias: bool = True,
            bias_first: bool = False, scale_as_input: bool = False,
            weights_as_input: bool = False, widened_used_twice: bool = False,
            scaled_used_twice: bool = False, product_used_twice: bool = False,
            bias_as_input: bool = False, bias_values: np.ndarray[Any, Any] = BIAS,
            ) -> tuple[bytes, dict[str, np.ndarray[Any, Any]]]:
    """`MatMul(x, Mul(Cast(int8 weights), scales))`, then `Add` of a bias: the shipped
    model's linear layer, with one thing changed when asked."""
    nodes = [helper.make_node("Cast", ["w"], ["w_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["w_f", "s"], ["w_s"]),
             helper.make_node("MatMul", ["x", "w_s"], ["y"])]
    outputs = ["z" if bias else "y"]
    if bias:
        nodes.append(helper.make_node("Add", ["b", "y"] if bias_first else ["y", "b"], ["z"]))
    for used_twice, name in ((widened_used_twice, "w_f"), (scaled_used_twice, "w_s"),
                             (product_used_twice, "y")):
        if used_twice:
            nodes.append(helper.make_node("Identity", [name], [f"{name}_too"]))
            outputs.append(f"{name}_too")
    initializers: dict[str, np.ndarray[Any, Any]] = {"w": weights, "s": scales, "b": bias_values}
    inputs = {"x": (TensorProto.FLOAT, list(X.shape))}
    feeds = {"x": X}
    for asked, name, kind in ((scale_as_input, "s", TensorProto.FLOAT),
                              (weights_as_input, "w", TensorProto.INT8),
                              (bias_as_input, "b", TensorProto.FLOAT)):
        if asked:
            feeds[name] = initializers.pop(name)
            inputs[name] = (kind, list(feeds[name].shape))
    if not bias:
        initializers.pop("b", None)
    return model_bytes(nodes, initializers, inputs, outputs), feeds


def test_a_linear_layer_becomes_one_integer_product_with_its_bias(tmp_path: Path) -> None:
    raw, feeds = _linear()
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["DynamicQuantizeMatMul"]
    (node,) = onnx.load_from_string(rewritten).graph.node
    assert node.domain == "com.microsoft" and list(node.input) == ["x", "w", "s/columns", "", "b"]
    (want,), (got,) = _run(raw, feeds), _run(rewritten, feeds)
    assert got.shape == want.shape and np.allclose(got, want, atol=0.05)
    assert not np.array_equal(got, want)  # x is quantized to uint8: close, not the same


def test_the_float_copy_of_the_weights_is_gone_and_only_what_is_used_is_kept(
    tmp_path: Path,
) -> None:
    raw, _ = _linear()
    model = onnx.load_from_string(_rewrite(raw, tmp_path))
    assert sorted(t.name for t in model.graph.initializer) == ["b", "s/columns", "w"]
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17), ("com.microsoft", 1)]


def test_a_bias_added_first_is_taken_into_the_product_too(tmp_path: Path) -> None:
    raw, feeds = _linear(bias_first=True)
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["DynamicQuantizeMatMul"]
    assert np.allclose(_run(rewritten, feeds)[0], _run(raw, feeds)[0], atol=0.05)


@pytest.mark.parametrize("scales", [np.float32([0.01]), np.float32([[0.01]]),
                                    COLUMN_SCALES.reshape(-1)], ids=["one", "one by one", "row"])
def test_one_scale_or_one_per_column_in_any_layout_is_rewritten(
    tmp_path: Path, scales: np.ndarray[Any, Any]
) -> None:
    raw, feeds = _linear(scales=scales)
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["DynamicQuantizeMatMul"]
    (want,), (got,) = _run(raw, feeds), _run(rewritten, feeds)
    assert got.shape == want.shape and np.allclose(got, want, atol=0.05)


@pytest.mark.parametrize("how", ["bias an input", "bias of another length",
                                 "product used twice"])
def test_a_bias_that_is_not_one_per_column_stays_an_add(tmp_path: Path, how: str) -> None:
    raw, feeds = _linear(bias_as_input=how == "bias an input",
                         bias_values=np.float32([0.5]) if how == "bias of another length"
                         else BIAS, product_used_twice=how == "product used twice")
    rewritten = _rewrite(raw, tmp_path)
    assert sorted(_ops(rewritten)) == sorted(["DynamicQuantizeMatMul", "Add"]
                                             + (["Identity"] if "twice" in how else []))
    for got, want in zip(_run(rewritten, feeds), _run(raw, feeds), strict=True):
        assert got.shape == want.shape and np.allclose(got, want, atol=0.05)


def test_a_product_without_a_bias_is_rewritten_alone(tmp_path: Path) -> None:
    raw, feeds = _linear(bias=False)
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["DynamicQuantizeMatMul"]
    assert np.allclose(_run(rewritten, feeds)[0], _run(raw, feeds)[0], atol=0.05)


UNLIKE_THE_PATTERN: dict[str, dict[str, Any]] = {
    "scales an input": {"scale_as_input": True},
    "weights an input": {"weights_as_input": True},
    "float weights used twice": {"widened_used_twice": True},
    "scaled weights used twice": {"scaled_used_twice": True},
    "weights not int8": {"weights": WEIGHTS.astype(np.int16)},
    "weights of three axes": {"weights": np.stack([WEIGHTS, WEIGHTS])},
    "a scale per row": {"scales": COLUMN_SCALES.reshape(4, 1)},
    "a scale per weight": {"scales": np.full((4, 4), 0.01, np.float32)},
    "scales of three axes": {"scales": COLUMN_SCALES.reshape(1, 1, 4)},
}


@pytest.mark.parametrize("how", sorted(UNLIKE_THE_PATTERN))
def test_a_product_unlike_the_pattern_is_left_as_it_was(tmp_path: Path, how: str) -> None:
    raw, feeds = _linear(**UNLIKE_THE_PATTERN[how])
    rewritten = _rewrite(raw, tmp_path)
    assert "DynamicQuantizeMatMul" not in _ops(rewritten)
    assert _ops(rewritten) == _ops(raw)
    for got, want in zip(_run(rewritten, feeds), _run(raw, feeds), strict=True):
        assert np.array_equal(got, want)


def test_a_product_of_another_domain_is_left_as_it_was(tmp_path: Path) -> None:
    raw, _ = _linear(bias=False)
    model = onnx.load_from_string(raw)
    model.graph.node[2].domain = "com.example"
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    rewritten = onnx.load_from_string(_rewrite(model.SerializeToString(), tmp_path))
    assert [n.op_type for n in rewritten.graph.node] == ["Cast", "Mul", "MatMul"]


TABLE = RNG.integers(-127, 128, (6, 4)).astype(np.int8)
ROW_SCALES = (RNG.random((6, 1)) * 0.02 + 0.005).astype(np.float32)
IDS = np.array([[0, 5, 2, 2]], dtype=np.int64)


def _lookup(table: np.ndarray[Any, Any] = TABLE, scales: np.ndarray[Any, Any] = ROW_SCALES,
            *, axis: int = 0, scaled_used_twice: bool = False, widened_used_twice: bool = False,
            ) -> tuple[bytes, dict[str, np.ndarray[Any, Any]]]:
    """`Gather(Mul(Cast(int8 table), row scales), ids)`: the embedding lookup."""
    nodes = [helper.make_node("Cast", ["t"], ["t_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["t_f", "r"], ["t_s"]),
             helper.make_node("Gather", ["t_s", "ids"], ["e"], axis=axis)]
    outputs = ["e"]
    for used_twice, name in ((widened_used_twice, "t_f"), (scaled_used_twice, "t_s")):
        if used_twice:
            nodes.append(helper.make_node("Identity", [name], [f"{name}_too"]))
            outputs.append(f"{name}_too")
    ids = IDS if axis == 0 else IDS % 4
    raw = model_bytes(nodes, {"t": table, "r": scales},
                      {"ids": (TensorProto.INT64, list(ids.shape))}, outputs)
    return raw, {"ids": ids}


def test_an_embedding_lookup_gathers_int8_rows_and_widens_only_those(tmp_path: Path) -> None:
    raw, feeds = _lookup()
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["Gather", "Gather", "Cast", "Mul"]
    model = onnx.load_from_string(rewritten)
    assert [list(n.input) for n in model.graph.node[:2]] == [["t", "ids"], ["r", "ids"]]
    (want,), (got,) = _run(raw, feeds), _run(rewritten, feeds)
    assert np.array_equal(got, want)  # the same bits


LOOKUPS_UNLIKE_THE_PATTERN: dict[str, dict[str, Any]] = {
    "along another axis": {"axis": 1},
    "scaled table used twice": {"scaled_used_twice": True},
    "float table used twice": {"widened_used_twice": True},
    "table not int8": {"table": TABLE.astype(np.int16)},
    "one scale": {"scales": np.float32([[0.01]])},
    "a scale per column": {"scales": ROW_SCALES[:4].reshape(1, 4)},
}


@pytest.mark.parametrize("how", sorted(LOOKUPS_UNLIKE_THE_PATTERN))
def test_a_lookup_unlike_the_pattern_is_left_as_it_was(tmp_path: Path, how: str) -> None:
    raw, feeds = _lookup(**LOOKUPS_UNLIKE_THE_PATTERN[how])
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == _ops(raw)
    for got, want in zip(_run(rewritten, feeds), _run(raw, feeds), strict=True):
        assert np.array_equal(got, want)


def _guarded_softmax(*, after: str = "Softmax", guard_order: str = "c, p"
                     ) -> tuple[bytes, dict[str, np.ndarray[Any, Any]]]:
    """`Where(IsNaN(p), c, p)` after a Softmax, read by a later step."""
    nodes = [helper.make_node(after, ["x"], ["p"], **({"axis": -1} if after == "Softmax" else {})),
             helper.make_node("IsNaN", ["p"], ["nan"]),
             helper.make_node("Where", ["nan", *guard_order.split(", ")], ["q"]),
             helper.make_node("Mul", ["q", "two"], ["out"])]
    raw = model_bytes(nodes, {"c": np.float32([0.0]), "two": np.float32([2.0])},
                 {"x": (TensorProto.FLOAT, list(X.shape))}, ["out"])
    return raw, {"x": X}


def test_the_softmaxs_nan_guard_goes_and_its_reader_reads_the_softmax(tmp_path: Path) -> None:
    raw, feeds = _guarded_softmax()
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == ["Softmax", "Mul"]
    assert list(onnx.load_from_string(rewritten).graph.node[1].input) == ["p", "two"]
    assert np.array_equal(_run(rewritten, feeds)[0], _run(raw, feeds)[0])


@pytest.mark.parametrize(("after", "order"), [("Sigmoid", "c, p"), ("Softmax", "p, c")],
                         ids=["not after a softmax", "keeps the other value"])
def test_a_nan_test_that_is_not_the_softmaxs_guard_stays(tmp_path: Path, after: str,
                                                         order: str) -> None:
    raw, feeds = _guarded_softmax(after=after, guard_order=order)
    rewritten = _rewrite(raw, tmp_path)
    assert _ops(rewritten) == _ops(raw)
    assert np.array_equal(_run(rewritten, feeds)[0], _run(raw, feeds)[0])


def test_a_model_that_names_the_integer_domain_already_names_it_once(tmp_path: Path) -> None:
    raw, _ = _linear()
    model = onnx.load_from_string(raw)
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    rewritten = onnx.load_from_string(_rewrite(model.SerializeToString(), tmp_path))
    assert [o.domain for o in rewritten.opset_import].count("com.microsoft") == 1


def test_without_onnx_the_rewrite_says_which_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, _ = _linear()
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(SemanticUnavailable, match=r"pip install 'omh-git-memory\[semantic\]'"):
        _rewrite(raw, tmp_path)
