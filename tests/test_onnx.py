"""ONNX import (rlx_mlir/frontends/onnx/): models exported by torch.onnx
against onnxruntime, and the importer's errors (ONNX's own node tests are in
tests/test_onnx_node_tests.py)."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import helper, numpy_helper
from onnx_models import MODELS, Model, export

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.one, self.two = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.norm(self.one(x)))
        return torch.softmax(self.two(h).reshape(x.shape[0], 2, 4), dim=-1)


def exported(model: torch.nn.Module, example: torch.Tensor, dynamic: bool = False) -> bytes:
    buffer = io.BytesIO()
    axes = {"x": {0: "batch"}} if dynamic else None
    torch.onnx.export(
        model,
        (example,),
        buffer,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    return buffer.getvalue()


def test_a_torch_export_matches_onnxruntime() -> None:
    torch.manual_seed(0)
    x = torch.randn(5, 16)
    blob = exported(MLP().eval(), x)
    (want,) = onnxruntime.InferenceSession(blob).run(None, {"x": x.numpy()})
    (got,) = rlx.compile(load(blob))(x.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_dynamic_dimensions_take_input_shapes() -> None:
    torch.manual_seed(1)
    blob = exported(MLP().eval(), torch.randn(3, 16), dynamic=True)
    with pytest.raises(rlx.CompileError, match="input .x. has a dynamic dimension .batch.: give its shape"):
        load(blob)
    x = np.random.default_rng(0).standard_normal((7, 16)).astype(np.float32)
    (want,) = onnxruntime.InferenceSession(blob).run(None, {"x": x})
    (got,) = rlx.compile(load(blob, input_shapes={"x": (7, 16)}))(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell", ["LSTM", "GRU", "RNN"])
def test_an_exported_recurrent_layer_matches_onnxruntime(cell: str) -> None:
    """torch.nn.LSTM/GRU/RNN as torch.onnx exports them (sequence first, ONNX gate
    order, GRU with linear_before_reset = 1): repacked into rlx's ops at import."""
    torch.manual_seed(2)
    layer = getattr(torch.nn, cell)(6, 5, bidirectional=True).eval()
    x = torch.randn(7, 3, 6)  # [S, B, I]
    buffer = io.BytesIO()
    torch.onnx.export(layer, (x,), buffer, input_names=["x"], opset_version=17, dynamo=False)
    blob = buffer.getvalue()
    want = onnxruntime.InferenceSession(blob).run(None, {"x": x.numpy()})
    got = rlx.compile(load(blob))(x.numpy())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


EXPORTERS = [
    pytest.param(False, id="torchscript"),
    # torch's dynamo exporter needs the onnxscript package, which the test extra lists
    # but an environment installed before may lack: then these cases say so and skip.
    pytest.param(True, id="dynamo"),
]


@pytest.mark.parametrize("dynamo", EXPORTERS)
@pytest.mark.parametrize("spec", MODELS, ids=[m.name for m in MODELS])
def test_an_exported_model_matches_onnxruntime(spec: Model, dynamo: bool) -> None:
    """The text classifier (embedding, 2-layer bidirectional LSTM, linear, log-softmax),
    the GRU encoder and the transformer encoder layer, exported with a dynamic batch
    dimension and imported at another batch size: every output within 1e-4."""
    if dynamo:
        pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript (test extra)")
    torch.manual_seed(3)
    rng = np.random.default_rng(3)
    blob = export(spec.build().eval(), spec.example(rng, 2), dynamo=dynamo)
    x = spec.example(rng, 5)
    want = onnxruntime.InferenceSession(blob).run(None, {"x": x})
    got = rlx.compile(load(blob, input_shapes={"x": x.shape}))(x)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.fixture(scope="module")
def mlp_blob() -> bytes:
    torch.manual_seed(4)
    return export(MLP().eval(), np.zeros((2, 16), np.float32))


def test_a_truncated_or_corrupt_model_is_an_argument_error(mlp_blob: bytes) -> None:
    with pytest.raises(rlx.ArgumentError, match="cannot read the ONNX model"):
        load(mlp_blob[: len(mlp_blob) // 2])
    corrupt = bytearray(mlp_blob)
    corrupt[0:4] = b"\xff\xff\xff\xff"  # an invalid field tag and length
    with pytest.raises(rlx.ArgumentError, match="cannot read the ONNX model"):
        load(bytes(corrupt))


def test_a_missing_initializer_names_the_value_and_its_node(mlp_blob: bytes) -> None:
    model = onnx.load_from_string(mlp_blob)
    dropped = model.graph.initializer[0].name
    del model.graph.initializer[0]
    with pytest.raises(rlx.CompileError) as info:
        load(model, input_shapes={"x": (2, 16)})
    message = str(info.value)
    assert f"input '{dropped}' is no graph input, initializer or node output (a missing initializer?)" in message


def test_wrong_input_shapes_are_errors_at_import_and_at_the_call(mlp_blob: bytes) -> None:
    """A shape the model's declared input cannot take fails at import naming the
    input and the dimension; arrays of another shape than the imported one fail
    at the call."""
    with pytest.raises(
        rlx.ArgumentError, match=r"input_shapes\['x'\] gives dimension 1 size 15, the model fixes it at 16"
    ):
        load(mlp_blob, input_shapes={"x": (2, 15)})
    with pytest.raises(rlx.ArgumentError, match="input_shapes names no graph input: y"):
        load(mlp_blob, input_shapes={"x": (2, 16), "y": (2, 8)})
    exe = rlx.compile(load(mlp_blob, input_shapes={"x": (2, 16)}))
    with pytest.raises(rlx.ArgumentError, match="shape"):
        exe(np.zeros((3, 16), np.float32))


def test_a_node_of_an_unknown_domain_is_not_taken_for_a_standard_op() -> None:
    """A custom op that happens to share a standard op's name (here Relu) is reported,
    never imported as the standard op."""
    node = helper.make_node("Relu", ["x"], ["y"], name="custom", domain="com.example")
    model = single_node("Relu", {"x": (onnx.TensorProto.FLOAT, [4])}, (onnx.TensorProto.FLOAT, [4]))
    model.graph.node[0].CopyFrom(node)
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(rlx.CompileError, match="Relu 'custom': domain 'com.example' is not ONNX's standard one"):
        load(model)


def test_every_unsupported_node_is_listed_in_one_error() -> None:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("NonMaxSuppression", ["a"], ["b"], name="nms"),
        helper.make_node("NonZero", ["a"], ["y"], name="nz"),
    ]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y]))
    with pytest.raises(rlx.CompileError) as info:
        load(model)
    message = str(info.value)
    assert "cannot import 2 node(s) or output(s)" in message
    assert "NonMaxSuppression 'nms': no importer for this op type" in message
    assert "NonZero 'nz': no importer for this op type" in message


def test_an_import_error_names_its_root_causes_first_and_sums_up_their_knock_on_failures() -> None:
    """Two unsupported nodes (nms, nz) feed chains of 7 nodes that fail only through
    them, one a Scan whose body reads a failed value (no input of the Scan itself);
    a node with no importer (Det) is a cause even behind a failure. The error lists
    the 3 causes, located, then one line for the 7 knock-on nodes."""
    f = onnx.TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "e1"], ["s_out"])],
        "body",
        [helper.make_tensor_value_info("s_in", f, [2, 3])],
        [helper.make_tensor_value_info("s_out", f, [2, 3])],
    )
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="ok"),
        helper.make_node("NonMaxSuppression", ["r"], ["n"], name="nms"),
        helper.make_node("Add", ["n", "x"], ["a1"], name="a1"),
        helper.make_node("Mul", ["a1", "r"], ["m1"], name="m1"),
        helper.make_node("Exp", ["m1"], ["e1"], name="e1"),
        helper.make_node("Add", ["e1", "x"], ["a2"], name="a2"),
        helper.make_node("Det", ["a2"], ["d"], name="det"),
        helper.make_node("Scan", ["x"], ["s"], body=body, num_scan_inputs=0, name="scan"),
        helper.make_node("NonZero", ["r"], ["h"], name="nz"),
        helper.make_node("Softmax", ["h"], ["sm"], name="sm"),
        helper.make_node("Add", ["sm", "s"], ["y"], name="a3"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", f, [2, 3])],
        [helper.make_tensor_value_info(name, f, None) for name in ("y", "d")],
    )
    with pytest.raises(rlx.CompileError) as info:
        load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert str(info.value).splitlines() == [
        "cannot import 3 node(s) or output(s) of the ONNX graph:",
        "  NonMaxSuppression 'nms': no importer for this op type",
        "  Det 'det': no importer for this op type",
        "  NonZero 'nz': no importer for this op type",
        "  and 7 node(s) not imported only because an input was not: Add 'a1', Mul 'm1', Exp 'e1', ... "
        "(by op type: Add 3, Mul 1, Exp 1, 2 other op type(s))",
    ]


def test_mod_with_fmod_0_takes_the_divisors_sign() -> None:
    """ONNX Mod(fmod=0) is Python's %, not C's fmod (rlx.mod): composed, never mapped naively."""
    a = helper.make_tensor_value_info("a", onnx.TensorProto.INT32, [6])
    b = helper.make_tensor_value_info("b", onnx.TensorProto.INT32, [6])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.INT32, [6])
    model = helper.make_model(helper.make_graph([helper.make_node("Mod", ["a", "b"], ["y"])], "g", [a, b], [y]))
    x1, x2 = np.array([7, -7, 7, -7, 6, 0], np.int32), np.array([3, 3, -3, -3, 3, -2], np.int32)
    (got,) = rlx.compile(load(model))(x1, x2)
    np.testing.assert_array_equal(got, np.mod(x1, x2))


def single_node(op: str, inputs: dict[str, tuple[int, list[int]]], output: tuple[int, list[int]]) -> onnx.ModelProto:
    """A model of one node `op` over the named graph inputs (element type, shape) with output `y`."""
    values = [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()]
    y = helper.make_tensor_value_info("y", *output)
    return helper.make_model(helper.make_graph([helper.make_node(op, list(inputs), ["y"])], "g", values, [y]))


def test_integer_pow_is_exact_and_integer_relu_keeps_its_type() -> None:
    """Pow on int64 squares and multiplies (no float rounding: 3**39 needs 62 bits);
    a float exponent to an integer base follows ONNX's np.power(x, y).astype(x.dtype)."""
    model = single_node(
        "Pow", {"x": (onnx.TensorProto.INT64, [4]), "e": (onnx.TensorProto.INT64, [4])}, (onnx.TensorProto.INT64, [4])
    )
    x, e = np.array([3, -7, 2, 5], np.int64), np.array([39, 21, 62, 0], np.int64)
    (got,) = rlx.compile(load(model))(x, e)
    np.testing.assert_array_equal(got, np.power(x, e))
    model = single_node(
        "Pow", {"x": (onnx.TensorProto.INT32, [3]), "e": (onnx.TensorProto.FLOAT, [3])}, (onnx.TensorProto.INT32, [3])
    )
    x32, f = np.array([4, 9, 2], np.int32), np.array([0.5, 1.5, 3.0], np.float32)
    (got,) = rlx.compile(load(model))(x32, f)
    np.testing.assert_array_equal(got, np.power(x32, f).astype(np.int32))
    model = single_node("Relu", {"x": (onnx.TensorProto.INT8, [5])}, (onnx.TensorProto.INT8, [5]))
    x8 = np.array([-128, -1, 0, 1, 127], np.int8)
    (got,) = rlx.compile(load(model))(x8)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, np.maximum(x8, 0))


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_and_nd_with_duplicate_and_negative_indices_match_onnxruntime(reduction: str) -> None:
    """Negative indices wrap; with a reduction, duplicate indices all combine (with
    none the updates apply in order, so the last write wins, as onnxruntime does)."""
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array([[0, -1, 3], [1, 1, -4]], np.int64)
    updates = np.array([[5, 6, 7], [8, 9, 10]], np.float32)
    if reduction == "none":  # duplicates are not defined without a reduction: keep them distinct
        indices = np.array([[0, -1, 2], [1, 2, -4]], np.int64)
    nodes = [helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1, reduction=reduction)]
    rows = np.array([[-1], [0], [-1]], np.int64) if reduction != "none" else np.array([[-1], [0]], np.int64)
    nodes.append(helper.make_node("ScatterND", ["data", "rows", "row_updates"], ["z"], reduction=reduction))
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("data", onnx.TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("updates", onnx.TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("row_updates", onnx.TensorProto.FLOAT, [len(rows), 4]),
        ],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [3, 4]),
        ],
        [numpy_helper.from_array(indices, "indices"), numpy_helper.from_array(rows, "rows")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    row_updates = np.arange(len(rows) * 4, dtype=np.float32).reshape(len(rows), 4) - 3
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(
        None, {"data": data, "updates": updates, "row_updates": row_updates}
    )
    got = rlx.compile(load(model))(data, updates, row_updates)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_opsets_below_13_give_shape_operands_as_attributes() -> None:
    """Split (sizes), Pad (pads, value), Clip (min, max), Slice (starts, ends, axes) and
    Unsqueeze/ReduceSum (axes) as opset-9 models write them, against onnxruntime."""
    nodes = [
        helper.make_node("Split", ["x"], ["s0", "s1"], axis=1, split=[1, 3]),
        helper.make_node("Pad", ["s1"], ["p"], pads=[0, 1, 1, 0], value=-2.0, mode="constant"),
        helper.make_node("Clip", ["p"], ["c"], min=-1.5, max=1.0),
        helper.make_node("Slice", ["c"], ["sl"], starts=[1, -3], ends=[3, 100], axes=[0, 1]),
        helper.make_node("Unsqueeze", ["sl"], ["u"], axes=[0]),
        helper.make_node("ReduceSum", ["u"], ["y"], axes=[2], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4])],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None),
            helper.make_tensor_value_info("s0", onnx.TensorProto.FLOAT, None),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    x = np.array([[0.5, -3, 2, 0.25], [4, -0.5, 1, -1], [2, 3, -4, 0.75]], np.float32)
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    got = rlx.compile(load(model))(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_negative_pads_crop_as_onnxruntime_does(mode: str) -> None:
    """RWKV's time shift pads one step at the start and crops one at the end; with
    pads of both signs on each axis, every mode reads the cropped tensor."""
    pads = np.array([1, -1, -2, 0, -1, 2], np.int64)  # begins of axes 0-2, then their ends
    node = helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4, 5])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(pads, "pads")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    (want,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (got,) = rlx.compile(load(model))(x)
    assert got.shape == want.shape == (4, 2, 5)
    np.testing.assert_array_equal(got, want)


def test_scan_with_two_states_axes_directions_and_outer_values_matches_onnxruntime() -> None:
    """ONNX Scan as rlx.scan: two state variables (h [2, 3] and a step count [1]), a
    scan input scanned along axis 1 in reverse, a per-step output stacked along
    axis 1, and a body that reads an outer graph input (w) and an outer initializer (c)."""
    f = onnx.TensorProto.FLOAT
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
            helper.make_node("Add", ["hw", "x_t"], ["pre"]),
            helper.make_node("Tanh", ["pre"], ["h_out"]),
            helper.make_node("Add", ["n_in", "c"], ["n_out"]),
            helper.make_node("Mul", ["h_out", "n_out"], ["y_t"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("h_in", f, [2, 3]),
            helper.make_tensor_value_info("n_in", f, [1]),
            helper.make_tensor_value_info("x_t", f, [2, 3]),
        ],
        [
            helper.make_tensor_value_info("h_out", f, [2, 3]),
            helper.make_tensor_value_info("n_out", f, [1]),
            helper.make_tensor_value_info("y_t", f, [2, 3]),
        ],
    )
    scan = helper.make_node(
        "Scan",
        ["h0", "n0", "xs"],
        ["h", "n", "ys"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    graph = helper.make_graph(
        [scan],
        "g",
        [
            helper.make_tensor_value_info("h0", f, [2, 3]),
            helper.make_tensor_value_info("n0", f, [1]),
            helper.make_tensor_value_info("xs", f, [2, 5, 3]),
            helper.make_tensor_value_info("w", f, [3, 3]),
        ],
        [
            helper.make_tensor_value_info("h", f, [2, 3]),
            helper.make_tensor_value_info("n", f, [1]),
            helper.make_tensor_value_info("ys", f, [2, 5, 3]),
        ],
        [numpy_helper.from_array(np.array([0.5], np.float32), "c")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    rng = np.random.default_rng(5)
    arrays = {
        "h0": rng.standard_normal((2, 3)),
        "n0": np.array([1.0]),
        "xs": rng.standard_normal((2, 5, 3)),
        "w": rng.standard_normal((3, 3)) / 2,
    }
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, arrays)
    got = rlx.compile(load(model))(*arrays.values())
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell", ["GRU", "LSTM"])
def test_recurrences_rlx_lacks_are_scans_matching_onnxruntime(cell: str) -> None:
    """ONNX's default GRU (linear_before_reset = 0) and LSTM with peepholes, which
    rlx.gru/rlx.lstm do not compute, composed as one rlx.scan per direction:
    bidirectional, biases, initial states. (onnxruntime has no batch-first layout = 1;
    ONNX's test_gru_batchwise covers it.)"""
    f, (seq, batch, inputs, hidden) = onnx.TensorProto.FLOAT, (6, 3, 4, 5)
    gates, states = {"GRU": (3, ["h0"]), "LSTM": (4, ["h0", "c0"])}[cell]
    rng = np.random.default_rng(6)
    weights = {
        "W": rng.standard_normal((2, gates * hidden, inputs)),
        "R": rng.standard_normal((2, gates * hidden, hidden)),
        "B": rng.standard_normal((2, 2 * gates * hidden)),
    }
    if cell == "LSTM":
        weights["P"] = rng.standard_normal((2, 3 * hidden))
    names = ["x", "W", "R", "B", "", *states, *(["P"] if cell == "LSTM" else [])]
    node = helper.make_node(
        cell, names, ["y", "y_h", *(["y_c"] if cell == "LSTM" else [])], hidden_size=hidden, direction="bidirectional"
    )
    shapes = {"x": [seq, batch, inputs], **{name: [2, batch, hidden] for name in states}}
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, f, shape) for n, shape in shapes.items()],
        [helper.make_tensor_value_info(n, f, None) for n in node.output],
        [numpy_helper.from_array((v / 2).astype(np.float32), k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    arrays = {n: rng.standard_normal(shape).astype(np.float32) for n, shape in shapes.items()}
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, arrays)
    got = rlx.compile(load(model))(*arrays.values())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (
            helper.make_node("Concat", ["x", "x"], ["y"]),
            "Concat '#0': invalid node: Required attribute 'axis' is missing",
        ),
        (helper.make_node("MatMul", ["x"], ["y"]), "MatMul '#0': invalid node: Node with schema(::MatMul:13)"),
        (helper.make_node("Scan", ["x", "x"], ["y"], num_scan_inputs=1), "Required attribute 'body' is missing"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[0, 5]), "perm [0, 5] is not a permutation of the 2 axes"),
        (helper.make_node("Transpose", ["x"], ["y"], perm=[-3, 0]), "perm [-3, 0] is not a permutation of the 2 axes"),
        (helper.make_node("Split", ["x"], ["y", "z"], axis=9), "Split '#0': axis 9 is out of range for rank 2"),
        (helper.make_node("LSTM", ["x", "x", "x"], ["y"]), "LSTM '#0': malformed node ("),
    ],
)
def test_a_malformed_node_is_a_compile_error_naming_it(node: onnx.NodeProto, message: str) -> None:
    """Missing attributes and inputs (ONNX's schema check), attributes out of range,
    and what the schema allows but the importer cannot read: errors, never tracebacks."""
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
    )
    with pytest.raises(rlx.CompileError) as info:
        load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert message in str(info.value)


def test_a_negative_transpose_axis_counts_from_the_end() -> None:
    """torch's TorchScript export of Mamba2 writes perm [0, -2, -1, 1]: NumPy's and
    ONNX's reference meaning (onnxruntime refuses it), on a run-time and a known input."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["y"], perm=[0, -2, -1, 1]),
        helper.make_node("Transpose", ["w"], ["z"], perm=[-1, 0]),
    ]
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in ("y", "z")],
        [numpy_helper.from_array(w, "w")],
    )
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    y, z = rlx.compile(load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])))(x)
    np.testing.assert_array_equal(y, x.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(z, w.T)


def test_an_unreadable_model_is_an_argument_error() -> None:
    with pytest.raises(rlx.ArgumentError, match="cannot read the ONNX model"):
        load(b"not a model")


def test_shape_arithmetic_of_expanded_functions_folds_at_import() -> None:
    """The head-count, scale and padding arithmetic ONNX's expanded functions write
    (Shape, Div truncating toward zero, Mod, Equal/Not/Where, Sqrt, Pow of a float or an
    integer base, CastLike onto a run-time tensor, Abs, ReduceProd, Expand of a constant)
    folds to constants, so the
    Reshape, Expand and Pad operands are known; the results match onnxruntime."""
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["batch"], start=0, end=1),
        helper.make_node("Shape", ["x"], ["n"], start=1, end=2),
        helper.make_node("Shape", ["x"], ["last"], start=-1),
        helper.make_node("Pow", ["sixteen_f", "quarter"], ["two_f"]),  # DINOv2's side = positions ** 0.5
        helper.make_node("Cast", ["two_f"], ["two"], to=onnx.TensorProto.INT64),
        helper.make_node("Pow", ["two", "two_f"], ["four"]),  # an integer base keeps its type
        helper.make_node("Sub", ["four", "two"], ["also_two"]),
        helper.make_node("Neg", ["seven"], ["minus_seven"]),
        helper.make_node("Div", ["minus_seven", "also_two"], ["minus_three"]),  # -3.5 truncates to -3 (floor: -4)
        helper.make_node("Abs", ["minus_three"], ["heads"]),
        helper.make_node("Div", ["n", "heads"], ["per_head"]),
        helper.make_node("Mod", ["n", "heads"], ["rest"]),
        helper.make_node("Equal", ["rest", "zero"], ["even"]),
        helper.make_node("Not", ["even"], ["uneven"]),
        helper.make_node("Where", ["uneven", "one", "per_head"], ["width"]),
        helper.make_node("Concat", ["batch", "heads", "width", "last"], ["split_shape"], axis=0),
        helper.make_node("Reshape", ["x", "split_shape"], ["split"]),
        helper.make_node("Cast", ["last"], ["last_f"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Sqrt", ["last_f"], ["root"]),
        helper.make_node("Div", ["one_f", "root"], ["scale64"]),
        helper.make_node("CastLike", ["scale64", "x"], ["scale"]),
        helper.make_node("Mul", ["split", "scale"], ["y"]),
        helper.make_node("Shape", ["x"], ["x_shape"]),
        helper.make_node("ReduceProd", ["x_shape"], ["count"], keepdims=1),
        helper.make_node("Expand", ["one", "count"], ["ones"]),
        helper.make_node("ReduceSum", ["ones"], ["total"], keepdims=1),
        helper.make_node("Sub", ["total", "forty_six"], ["pad_after"]),
        helper.make_node("Concat", ["zero", "pad_after"], ["pads"], axis=0),
        helper.make_node("CastLike", ["minus_two", "x"], ["fill"]),
        helper.make_node("Pad", ["x", "pads", "fill", "last_axis"], ["z"], mode="constant"),
    ]
    constants = {
        "seven": i64(7),
        "sixteen_f": np.array(16.0, np.float32),
        "quarter": np.array(0.25),
        "zero": i64(0),
        "one": i64(1),
        "forty_six": i64(46),
        "last_axis": i64(-1),
        "one_f": np.array([1.0], np.float32),
        "minus_two": np.array(-2.0),
    }
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 6, 4])],
        [
            helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None),
            helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None),
        ],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    module = load(model)
    assert "rlx.sqrt" not in str(module) and "rlx.mod" not in str(module)
    x = np.arange(48, dtype=np.float32).reshape(2, 6, 4) - 20
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    got = rlx.compile(module)(x)
    assert [g.shape for g in got] == [(2, 3, 2, 4), (2, 6, 6)] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_shape_computed_from_input_data_is_an_error_naming_the_node() -> None:
    """A shape that depends on a graph input's data (not its static shape) cannot fold."""
    nodes = [
        helper.make_node("Add", ["dims", "one"], ["target"], name="grow"),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape_by_data"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("dims", onnx.TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(1, np.int64), "one")],
    )
    with pytest.raises(rlx.CompileError) as info:
        load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert "cannot import 1 node(s)" in str(info.value)
    assert (
        "Reshape 'reshape_by_data': its target shape depends on the inputs at run time; rlx needs it at import"
    ) in str(info.value)


def test_size_and_range_of_known_values_fold_and_a_range_of_input_data_is_an_error() -> None:
    """Size reads only the static shape; Range over it (as the expanded RMS and layer
    normalizations write their axes) is known at import and feeds ReduceMean's axes.
    A Range whose limit is an input's data cannot have a static length."""
    nodes = [
        helper.make_node("Size", ["x"], ["count"]),
        helper.make_node("Div", ["count", "twelve"], ["rank_minus_one"]),  # 24 // 12 = 2
        helper.make_node("Range", ["one", "rank_minus_one", "one"], ["axes"]),  # [1]
        helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in {"one": 1, "twelve": 12}.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,) = rlx.compile(load(model))(x)
    np.testing.assert_allclose(got, x.mean(axis=1), rtol=1e-6)
    graph = helper.make_graph(
        [helper.make_node("Range", ["zero", "n", "one"], ["y"], name="iota")],
        "g",
        [helper.make_tensor_value_info("n", onnx.TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.INT64, None)],
        [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in {"zero": 0, "one": 1}.items()],
    )
    with pytest.raises(rlx.CompileError, match="Range 'iota': its limit depends on the inputs at run time"):
        load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
