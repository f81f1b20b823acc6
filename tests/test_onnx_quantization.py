"""ONNX QuantizeLinear and DequantizeLinear (rlx_mlir/frontends/onnx/quantization.py):
a QDQ model written by onnxruntime's own quantization tool against onnxruntime
running its nodes as written, each scale layout against ONNX's reference, and the
located errors of what the importer does not take. ONNX's node tests
(test_onnx_node_tests.py) cover the integer and float8 types besides."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from test_onnx_normalization import node_model

import rlx_mlir as rlx
from rlx_mlir.errors import CompileError
from rlx_mlir.frontends.onnx import load

RNG = np.random.default_rng(37)


class Samples(CalibrationDataReader):
    """Calibration inputs for onnxruntime's quantizer."""

    def __init__(self, batches: list[np.ndarray]) -> None:
        self.batches = iter(batches)

    def get_next(self) -> dict[str, np.ndarray] | None:
        batch = next(self.batches, None)
        return None if batch is None else {"x": batch}


def test_a_qdq_model_from_onnxruntimes_quantizer_matches_onnxruntime(tmp_path: Path) -> None:
    """A conv net quantized statically (int8 weights per channel, uint8 activations):
    its weights are dequantized at import, its activations quantized and dequantized
    at run time, as onnxruntime computes the nodes without its QDQ fusions."""
    torch.manual_seed(3)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, stride=2),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 3 * 3, 5),
    ).eval()
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    float_path, quantized_path = tmp_path / "float.onnx", tmp_path / "qdq.onnx"
    torch.onnx.export(net, (torch.from_numpy(x),), str(float_path), input_names=["x"], dynamo=False)
    calibration = Samples([RNG.standard_normal(x.shape).astype(np.float32) for _ in range(4)])
    quantize_static(
        str(float_path),
        str(quantized_path),
        calibration,
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    blob = quantized_path.read_bytes()
    types = {n.op_type for n in onnx.load_from_string(blob).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= types
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    (want,) = onnxruntime.InferenceSession(blob, options, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    (got,) = rlx.compile(load(blob))(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


LAYOUTS = [
    ("tensor", (4, 6), {}, ()),
    ("axis", (4, 6), {"axis": 1}, (6,)),
    ("negative-axis", (2, 5, 3), {"axis": -2}, (5,)),
    ("blocked", (4, 7), {"axis": 1, "block_size": 3}, (4, 3)),
]
"""(name, x's shape, attributes, the scale's shape): per tensor, per axis, blocked (the last block short)."""


@pytest.mark.parametrize("known", [True, False], ids=["initializers", "inputs"])
@pytest.mark.parametrize(("name", "shape", "attributes", "scale_shape"), LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_quantize_then_dequantize_in_each_layout_matches_onnx_reference(
    name: str, shape: tuple[int, ...], attributes: dict, scale_shape: tuple[int, ...], known: bool
) -> None:
    x = (RNG.standard_normal(shape) * 40).astype(np.float32)  # beyond int8's range after scaling: clipped
    scale = RNG.uniform(0.05, 0.5, scale_shape).astype(np.float32)
    zero = RNG.integers(-20, 20, scale_shape).astype(np.int8)
    quantize = node_model("QuantizeLinear", x, {"scale": scale, "zero": zero}, known, **attributes)
    arrays = {"x": x} if known else {"x": x, "scale": scale, "zero": zero}
    (want,) = ReferenceEvaluator(quantize).run(None, arrays)
    (got,) = rlx.compile(load(quantize))(*arrays.values())
    assert got.dtype == np.int8 and (got == 127).any() and (got == -128).any()
    np.testing.assert_array_equal(got, want)
    dequantize = node_model("DequantizeLinear", want, {"scale": scale, "zero": zero}, known, **attributes)
    arrays = {"x": want} if known else {"x": want, "scale": scale, "zero": zero}
    (expected,) = ReferenceEvaluator(dequantize).run(None, arrays)
    (got,) = rlx.compile(load(dequantize))(*arrays.values())
    np.testing.assert_array_equal(got, expected)


def test_known_weights_are_dequantized_at_import() -> None:
    """An int8 weight and its per-channel scales become one float constant."""
    weight = RNG.integers(-128, 127, (3, 4)).astype(np.int8)
    scale = RNG.uniform(0.01, 0.1, 4).astype(np.float16)
    nodes = [
        helper.make_node("DequantizeLinear", ["weight", "scale"], ["w"], axis=1),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT16, (2, 3))
    known = [numpy_helper.from_array(weight, "weight"), numpy_helper.from_array(scale, "scale")]
    graph = helper.make_graph(nodes, "g", [value], [helper.make_empty_tensor_value_info("y")], known)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    module = load(model)
    assert "rlx.cast" not in str(module) and "tensor<3x4xf16>" in str(module)
    x = RNG.standard_normal((2, 3)).astype(np.float16)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(rlx.compile(module)(x)[0], want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    ("op", "operands", "attributes", "message"),
    [
        (
            "QuantizeLinear",
            {"scale": np.float32(0.5)},
            {"output_dtype": onnx.TensorProto.INT32},
            "output type i32 is not a quantized type",
        ),
        (
            "QuantizeLinear",
            {"scale": np.ones(3, np.float32)},
            {"axis": 1},
            r"a per-axis scale or zero point of shape \[3\] for 4 entries",
        ),
        ("DequantizeLinear", {"scale": np.ones(3, np.float32)}, {"axis": 2}, "axis 2 is out of range for rank 2"),
    ],
)
def test_what_the_importer_does_not_take_is_a_located_error(
    op: str, operands: dict, attributes: dict, message: str
) -> None:
    x = np.zeros((2, 4), np.float32 if op == "QuantizeLinear" else np.uint8)
    arrays = {n: np.asarray(a) for n, a in operands.items()}
    with pytest.raises(CompileError, match=message) as error:
        load(node_model(op, x, arrays, True, **attributes))
    assert op in str(error.value)
