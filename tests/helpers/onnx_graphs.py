"""Small hand-made ONNX graphs, for the tests of the semantic model's rewrite and load."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model_bytes(nodes: list[Any], initializers: dict[str, np.ndarray[Any, Any]],
                inputs: dict[str, tuple[int, list[int]]], outputs: list[str]) -> bytes:
    """A serialized opset-17 model of `nodes`, with `initializers`, typed `inputs`
    (name → (element type, shape)) and float `outputs`."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    raw: bytes = model.SerializeToString()
    return raw
