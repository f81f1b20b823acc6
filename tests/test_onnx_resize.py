"""ONNX Resize (rlx_mlir/frontends/onnx/resize.py): torch's exports of
F.interpolate against torch, each mode and element type against ONNX's
reference evaluator (its float64 computation), and the located errors of what
the importer does not take. ONNX's own node tests (test_onnx_node_tests.py)
cover every coordinate mode and attribute besides."""

from __future__ import annotations

import io
import warnings

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import rlx_mlir as rlx
from rlx_mlir.errors import CompileError
from rlx_mlir.frontends.onnx import load

RNG = np.random.default_rng(23)


def resize_model(x: np.ndarray, known: dict[str, np.ndarray], **attributes: object) -> onnx.ModelProto:
    """One Resize of graph input x; roi, scales and sizes (those in `known`) are initializers."""
    operands = ["x", *(name if name in known else "" for name in ("roi", "scales", "sizes"))]
    while operands[-1] == "":
        operands.pop()
    node = helper.make_node("Resize", operands, ["y"], **attributes)
    value = helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
    initializers = [numpy_helper.from_array(a, n) for n, a in known.items()]
    graph = helper.make_graph([node], "g", [value], [helper.make_empty_tensor_value_info("y")], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def run_rlx(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    (y,) = rlx.compile(load(model))(x)
    return y


class Interpolate(torch.nn.Module):
    def __init__(self, **options: object) -> None:
        super().__init__()
        self.options = options

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.interpolate(x, **self.options)


INTERPOLATIONS = [
    ((2, 3, 7), {"scale_factor": 2.0, "mode": "nearest"}, "torchscript"),
    ((2, 3, 7), {"size": 11, "mode": "linear", "align_corners": False}, "torchscript"),
    ((2, 3, 7), {"size": 4, "mode": "linear", "align_corners": True}, "torchscript"),
    ((1, 2, 5, 6), {"size": (9, 4), "mode": "bilinear", "align_corners": False}, "torchscript"),
    ((1, 2, 5, 6), {"size": (9, 4), "mode": "bilinear", "align_corners": True}, "torchscript"),
    ((1, 2, 5, 6), {"scale_factor": 3.0, "mode": "bicubic", "align_corners": False}, "torchscript"),
    ((1, 2, 5, 6), {"size": (3, 13), "mode": "bicubic", "align_corners": True}, "torchscript"),
    ((1, 2, 12, 10), {"size": (5, 4), "mode": "bilinear", "antialias": True}, "dynamo"),
    ((1, 2, 12, 10), {"size": (5, 14), "mode": "bicubic", "antialias": True}, "dynamo"),
    ((1, 2, 3, 4, 5), {"scale_factor": 2.0, "mode": "trilinear"}, "torchscript"),
]
"""F.interpolate calls: 1-, 2- and 3-d; up and down; each mode torch exports as
Resize (antialias only through dynamo, which adds exclude_outside)."""


@pytest.mark.parametrize(("shape", "options", "exporter"), INTERPOLATIONS, ids=str)
def test_torch_exports_of_interpolate_match_torch(shape: tuple[int, ...], options: dict, exporter: str) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    module = Interpolate(**options)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, (torch.from_numpy(x),), buffer, input_names=["x"], opset_version=18, dynamo=exporter == "dynamo"
        )
    model = onnx.load_from_string(buffer.getvalue())
    assert "Resize" in {n.op_type for n in model.graph.node}
    want = module(torch.from_numpy(x)).numpy()
    got = run_rlx(model, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


FLOAT_TYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]
TOLERANCE = {np.float32: 1e-6, np.float64: 1e-13, np.float16: 2e-3, ml_dtypes.bfloat16: 1.6e-2}
"""Relative to the largest |y|: the type's rounding of the result, and f32's for the sums of f16 and bf16."""

REFERENCE_CUBIC_WEIGHTS = 2e-6
"""ONNX's reference computes cubic weights in float32 (its cubic_coeff_a is a
float32 and NumPy keeps the product in it); rlx computes them in float64, so an
f64 cubic resize differs from the reference by this much, relative."""

MODES = [
    {"mode": "linear"},
    {"mode": "cubic"},
    {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1},
    {"mode": "linear", "antialias": 1},
    {"mode": "cubic", "antialias": 1, "coordinate_transformation_mode": "align_corners"},
    {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
]


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("attributes", MODES, ids=lambda a: "-".join(str(v) for v in a.values()))
def test_each_mode_and_float_type_matches_onnx_reference(attributes: dict, dtype: type) -> None:
    """One axis shrinks (antialias widens its kernel), one grows, one stays."""
    x = RNG.standard_normal((2, 9, 5)).astype(dtype)
    model = resize_model(x, {"sizes": np.array([2, 4, 8], np.int64)}, **attributes)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    got = run_rlx(model, x)
    assert got.dtype == want.dtype and got.shape == want.shape == (2, 4, 8)
    scale = float(np.abs(want.astype(np.float64)).max())
    error = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    tolerance = max(TOLERANCE[dtype], REFERENCE_CUBIC_WEIGHTS if attributes["mode"] == "cubic" else 0)
    assert error <= tolerance * scale


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.uint8, np.bool_])
def test_nearest_moves_any_element_type_exactly(dtype: type) -> None:
    x = RNG.integers(0, 2 if dtype is np.bool_ else 100, (3, 4, 4)).astype(dtype)
    scales = {"scales": np.array([1, 1.5, 0.5], np.float32)}
    model = resize_model(x, scales, mode="nearest")
    as_bytes = x.astype(np.uint8)  # ONNX's reference computes in float64, which a bool is not
    (want,) = ReferenceEvaluator(resize_model(as_bytes, scales, mode="nearest")).run(None, {"x": as_bytes})
    np.testing.assert_array_equal(run_rlx(model, x), want.astype(dtype))


def test_axes_and_tf_crop_and_resize_extrapolate_outside_the_roi() -> None:
    x = RNG.standard_normal((2, 6, 7)).astype(np.float32)
    known = {"roi": np.array([-0.2, 0.1, 0.9, 1.3], np.float32), "sizes": np.array([5, 6], np.int64)}
    attributes = {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 7.5}
    model = resize_model(x, known, axes=[2, -2], **attributes)
    reference = resize_model(x, known, axes=[2, 1], **attributes)  # its evaluator takes no negative axis
    (want,) = ReferenceEvaluator(reference).run(None, {"x": x})
    got = run_rlx(model, x)
    assert (want == 7.5).any()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_known_input_is_resized_at_import() -> None:
    """A Resize of an initializer (an exporter's interpolated position table) becomes a constant."""
    table = RNG.standard_normal((1, 3, 4, 4)).astype(np.float32)
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    nodes = [
        helper.make_node("Resize", ["table", "", "", "sizes"], ["grown"], mode="linear"),
        helper.make_node("Add", ["x", "grown"], ["y"]),
    ]
    value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)
    known = [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array([1, 3, 6, 6]), "sizes")]
    graph = helper.make_graph(nodes, "g", [value], [helper.make_empty_tensor_value_info("y")], known)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    module = load(model)
    assert "rlx.gather" not in str(module)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = rlx.compile(module)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("x", "known", "attributes", "message"),
    [
        (
            np.zeros((2, 4), np.int32),
            {"scales": np.array([1, 2], np.float32)},
            {"mode": "linear"},
            "linear mode on element type i32",
        ),
        (
            np.zeros((2, 4), np.float32),
            {"scales": np.array([1, 2], np.float32), "sizes": np.array([2, 8])},
            {},
            "exactly one of scales and sizes",
        ),
        (np.zeros((2, 4), np.float32), {"sizes": np.array([8])}, {}, "sizes has 1 entries for 2 axes"),
        (np.zeros((2, 4), np.float32), {"scales": np.array([1, 0], np.float32)}, {}, "are not all > 0"),
        (np.zeros((2, 4), np.float32), {"sizes": np.array([2, 8])}, {"mode": "area"}, "mode 'area' is not one of"),
        (np.zeros((2, 4), np.float32), {"sizes": np.array([2, 8])}, {"antialias": 1}, "antialias applies to linear"),
        (np.zeros((2, 4), np.float32), {"sizes": np.array([8])}, {"axes": [1, -1]}, "are not distinct axes"),
        (
            np.zeros((2, 4), np.float32),
            {"sizes": np.array([2, 8])},
            {"coordinate_transformation_mode": "tf_crop_and_resize"},
            "needs roi with 4 entries",
        ),
    ],
)
def test_what_the_importer_does_not_take_is_a_located_error(
    x: np.ndarray, known: dict, attributes: dict, message: str
) -> None:
    with pytest.raises(CompileError, match=message) as error:
        load(resize_model(x, known, **attributes))
    assert "Resize" in str(error.value)


def test_sizes_computed_at_run_time_are_a_located_error() -> None:
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"])
    inputs = [
        helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4]),
        helper.make_tensor_value_info("sizes", onnx.TensorProto.INT64, [2]),
    ]
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(CompileError, match="its sizes depends on the inputs at run time"):
        load(model)
