"""`Executable.profile` and `rlx-run --profile`: one row per op that runs code,
with the bytes and FLOPs of the planned op, timed in a profiling build whose
results are those of the plain build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

import rlx_mlir as rlx
import rlx_mlir.onnx as rlx_onnx
from rlx_mlir.errors import ArgumentError
from rlx_mlir.frontends.onnx.context import value_name

MLP = """
func.func @mlp(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<64xf32> {
  %y = rlx.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %z = rlx.add %y, %b : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  %s = rlx.reduce_sum %z {axes = array<i64: 1>, keepdims = false} : (tensor<64x16xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}
"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s, dtype=np.float32) for s in ((64, 32), (32, 16), (16,))]


@pytest.fixture(scope="module")
def mlp() -> rlx.Executable:
    return rlx.compile(MLP, tune=False)


def test_rows_name_each_op_with_its_bytes_and_flops(mlp: rlx.Executable) -> None:
    profile = mlp.profile(*_inputs(), repeat=3)
    names = [row.op.name for row in profile.rows]
    assert names == ["rlx.matmul", "rlx.reduction_region(add)"]  # the bias add is the sum's prologue
    gemm, reduce = profile.rows
    assert gemm.op.shapes == "64x32xf32, 32x16xf32 -> 64x16xf32"
    assert (gemm.op.source, reduce.op.source) == ("y", "s")  # a fused region keeps its tail's name
    assert gemm.op.bytes == 4 * (64 * 32 + 32 * 16 + 64 * 16)
    assert gemm.op.flops == 2 * 64 * 16 * 32
    assert reduce.op.bytes == 4 * (64 * 16 + 16 + 64)
    assert reduce.op.flops == 2 * 64 * 16  # the add and the sum at each point
    assert all(row.seconds >= 0 for row in profile.rows) and profile.overhead >= 0
    assert profile.runs == 3 and profile.total > 0


def test_positions_are_those_of_the_planned_function(mlp: rlx.Executable) -> None:
    body = [line for line in mlp.planned_ir.splitlines() if line.startswith(("  %", "  func.return"))]
    for row in mlp.profile(*_inputs(), repeat=1).rows:
        assert row.op.name.split("(")[0].split("[")[0] in body[row.op.position]


def test_the_table_lists_every_row_and_the_launch_overhead(mlp: rlx.Executable) -> None:
    text = str(mlp.profile(*_inputs(), repeat=2))
    assert text.startswith("profile of @mlp: median of 2 runs")
    assert "rlx.reduction_region(add)" in text and "launch overhead" in text
    assert f"target {mlp.target.name}" in text


def test_a_profiling_build_computes_what_the_plain_build_does(mlp: rlx.Executable) -> None:
    profiled = rlx.compile(MLP, tune=False, profile=True)
    inputs = _inputs()
    np.testing.assert_array_equal(profiled(*inputs)[0], mlp(*inputs)[0])
    stamps = profiled._stamps()
    assert len(stamps) == 3 and stamps[0] <= stamps[1] <= stamps[2]


def test_a_scan_is_one_row() -> None:
    b = rlx.Builder("cumulative")
    xs, h0 = b.input((16, 8)), b.input((8,))

    b.output(b.scan(h0, lambda s, h, x: s.add(h, x), xs=[xs]))
    exe = rlx.compile(b.module(), tune=False)
    x, h = np.ones((16, 8), np.float32), np.zeros(8, np.float32)
    rows = exe.profile(x, h, repeat=2).rows
    assert [row.op.name for row in rows] == ["rlx.scan"]
    assert rows[0].op.flops is None


def test_state_space_scans_count_their_work_per_step() -> None:
    """5·P·N per step and head for Mamba2, 7·N per step and channel for the selective
    scan, 7·N² per step and head for the gated delta rule (benchmarks/recurrent.py's)."""
    batch, steps, heads, p, n, channels = 2, 6, 3, 4, 5, 7
    shapes = {
        "x": (batch, steps, heads, p),
        "dt": (batch, steps, heads),
        "a": (heads,),
        "bc": (batch, steps, heads, n),
        "u": (batch, steps, channels),
        "a2": (channels, n),
        "bc2": (batch, steps, n),
    }
    b = rlx.Builder("scans")
    v = {name: b.input(shape) for name, shape in shapes.items()}
    b.output(
        b.mamba2(v["x"], v["dt"], v["a"], v["bc"], v["bc"]),
        b.selective_scan(v["u"], v["u"], v["a2"], v["bc2"], v["bc2"]),
        b.gated_delta_net(v["bc"], v["bc"], v["bc"], v["dt"], v["dt"]),
    )
    exe = rlx.compile(b.module(), tune=False)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.1, 0.5, shape).astype(np.float32) for shape in shapes.values()]
    flops = {row.op.name: row.op.flops for row in exe.profile(*arrays, repeat=1).rows}
    assert flops == {
        "rlx.mamba2": 5 * p * n * batch * steps * heads,
        "rlx.selective_scan": 7 * n * batch * steps * channels,
        "rlx.gated_delta_net": 7 * n * n * batch * steps * heads,
    }


def test_recurrent_layers_count_their_gate_products() -> None:
    """2·(I + H)·G·H per row, step, direction and layer (layer 2 reads both directions)."""
    batch, steps, inputs, hidden, gates = 2, 5, 6, 4, 4 * 4
    shapes = [(batch, steps, inputs), (2 * gates * inputs + 2 * gates * 2 * hidden,), (2 * 2 * gates * hidden,)]
    shapes.append((2 * 2 * gates,))
    b = rlx.Builder("lstm")
    x, w_ih, w_hh, bias = (b.input(shape) for shape in shapes)
    b.output(b.lstm(x, w_ih, w_hh, bias, hidden, num_layers=2, bidirectional=True))
    exe = rlx.compile(b.module(), tune=False)
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-0.1, 0.1, shape).astype(np.float32) for shape in shapes]
    (row,) = exe.profile(*arrays, repeat=1).rows
    per_step = 2 * gates * (inputs + hidden) + 2 * gates * (2 * hidden + hidden)  # both directions, both layers
    assert row.op.flops == 2 * batch * steps * per_step


@pytest.mark.parametrize("repeat", [0, -1, 2.5, True])
def test_bad_repeat_is_refused(mlp: rlx.Executable, repeat: object) -> None:
    with pytest.raises(ArgumentError, match="repeat >= 1"):
        mlp.profile(*_inputs(), repeat=repeat)  # type: ignore[arg-type]


def test_wrong_inputs_get_the_call_error(mlp: rlx.Executable) -> None:
    with pytest.raises(ArgumentError):
        mlp.profile(np.zeros((3, 3), np.float32))


def _onnx_mlp() -> bytes:
    """max(relu(x @ W + b)), by nodes named as TorchScript (`/l1/MatMul`) and dynamo (`node_Relu_3`) name them."""
    rng = np.random.default_rng(0)
    weights = [
        onnx.numpy_helper.from_array(rng.standard_normal(s, dtype=np.float32), name)
        for name, s in (("W", (32, 16)), ("b", (16,)))
    ]
    nodes = [
        onnx.helper.make_node("MatMul", ["x", "W"], ["xw"], name="/l1/MatMul"),
        onnx.helper.make_node("Add", ["xw", "b"], ["h"], name="/l1/Add"),
        onnx.helper.make_node("Relu", ["h"], ["r"], name="node_Relu_3"),
        onnx.helper.make_node("ReduceMax", ["r"], ["y"], name="/head/ReduceMax", keepdims=0),
    ]
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, 32])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [])
    graph = onnx.helper.make_graph(nodes, "mlp", [x], [y], weights)
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]).SerializeToString()


def test_rows_of_an_onnx_model_name_its_nodes() -> None:
    session = rlx_onnx.InferenceSession(_onnx_mlp())
    x = np.ones((8, 32), np.float32)
    profile = session.executable({"x": x}).profile(x, repeat=2)
    assert [(row.op.name, row.op.source) for row in profile.rows] == [
        ("rlx.matmul", "l1_MatMul"),
        ("rlx.reduction_region(add, relu)", "head_ReduceMax"),  # the Add and Relu fused in: the tail's name
    ]
    assert "[head_ReduceMax]" in str(profile)
    planned = session.executable({"x": x}).planned_ir
    assert "%W_panels" in planned and "%node_Relu.3 = rlx.relu" in planned  # initializers: their own names (packed)


@pytest.mark.parametrize(
    ("node", "value"),
    [
        ("/encoder/layer.0/MatMul", "encoder_layer.0_MatMul"),
        ("node_MatMul_12", "node_MatMul.12"),
        ("", "node"),
        ("3d", "_3d"),
        ("h\u00e9 w\u00f6rld", "h__w_rld"),  # MLIR names are ASCII
    ],
)
def test_node_names_become_value_names(node: str, value: str) -> None:
    assert value_name(node) == value


def test_rlx_run_prints_the_profile(tmp_path: Path) -> None:
    source = tmp_path / "mlp.mlir"
    source.write_text(MLP)
    files = []
    for k, array in enumerate(_inputs()):
        files += ["-i", str(tmp_path / f"{k}.npy")]
        np.save(files[-1], array)
    out = tmp_path / "out.npz"
    result = subprocess.run(
        [sys.executable, "-m", "rlx_mlir.cli.run", str(source), *files, "-o", str(out), "--profile", "3"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "profile of @mlp: median of 3 runs" in result.stdout
    assert "launch overhead" in result.stdout
