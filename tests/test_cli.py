"""rlx-opt and rlx-run from the outside: their results. Their one-line errors with
exit 1 are in tests/test_cli_errors.py (in-process, and one real process per tool)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from rlx_mlir.target import target

GRAPH = """
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
"""


def run(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"rlx_mlir.cli.{tool}", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    path = tmp_path / "graph.mlir"
    path.write_text(GRAPH)
    return path


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    a = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    b = np.array([0.5, -1.0, 2.0], np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    return tmp_path / "a.npy", tmp_path / "b.npy", a, b


def test_opt_runs_passes(graph: Path) -> None:
    result = run("opt", str(graph), "-p", "canonicalize-broadcast,fuse-elementwise,plan-memory")
    assert result.returncode == 0, result.stderr
    assert "rlx.elementwise_region" in result.stdout and "rlx.arena_size" in result.stdout


def test_opt_emits_llvm_ir(graph: Path, tmp_path: Path) -> None:
    """LLVM IR for the machine lower-to-llvm lowered for: its triple and data
    layout, so that `llc` (here: that machine's TargetMachine) compiles it as is."""
    out = tmp_path / "out.ll"
    result = run("opt", str(graph), "-p", "default", "-t", "llvm", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert 'define void @"f"(ptr' in out.read_text()
    machine = target()
    parsed = llvm.parse_assembly(out.read_text())
    parsed.verify()
    assert (parsed.triple, parsed.data_layout) == (machine.triple, str(machine.machine().target_data))
    assert machine.machine().emit_object(parsed)


def test_run_writes_npz(graph: Path, inputs, tmp_path: Path) -> None:
    a_path, b_path, a, b = inputs
    out = tmp_path / "out.npz"
    result = run("run", str(graph), "--input", str(a_path), "--input", f"b={b_path}", "--output", str(out))
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(np.load(out)["result0"], np.tanh(a.astype(np.float64) + b), rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------
# ONNX models (rlx-opt finds the importer by the .onnx extension, xDSL's frontend registry)
# ---------------------------------------------------------------------------
@pytest.fixture
def onnx_model(tmp_path: Path) -> Path:
    """y = Relu(x) · W over a dynamic batch dimension 'n'."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 2])
    w = numpy_helper.from_array(np.array([[1, 2], [3, 4], [5, 6]], np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("MatMul", ["r", "w"], ["y"])]
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "relu_matmul", [x], [y], [w])), str(path))
    return path


def test_opt_prints_rlx_ir_for_an_onnx_model(onnx_model: Path) -> None:
    result = run("opt", str(onnx_model), "-f", 'onnx{input-shapes="x=2x3"}')
    assert result.returncode == 0, result.stderr
    assert "func.func @relu_matmul(%x: tensor<2x3xf32>) -> tensor<2x2xf32>" in result.stdout
    assert "rlx.relu" in result.stdout and "rlx.matmul" in result.stdout
    lowered = run("opt", str(onnx_model), "-f", 'onnx{input-shapes="x=2x3"}', "-p", "default", "-t", "llvm")
    assert lowered.returncode == 0, lowered.stderr
    assert 'define void @"relu_matmul"(ptr' in lowered.stdout


def test_run_runs_an_onnx_model(onnx_model: Path, tmp_path: Path) -> None:
    x = np.array([[1, -2, 3], [-4, 5, -6], [0.5, 0.5, 0.5], [7, 8, 9]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npz"
    result = run("run", str(onnx_model), "--input", str(tmp_path / "x.npy"), "--input-shape", "x=4x3", "-o", str(out))
    assert result.returncode == 0, result.stderr
    want = np.maximum(x, 0) @ np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    np.testing.assert_allclose(np.load(out)["result0"], want, rtol=1e-6)


def test_run_takes_an_onnx_models_shapes_from_its_npy_files(tmp_path: Path) -> None:
    """No --input-shape: two inputs with a dynamic batch, one bound by NAME=, the
    other by position, on one thread."""
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])
    scale = helper.make_tensor_value_info("scale", onnx.TensorProto.FLOAT, ["n", 1])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "scale"], ["y"])], "scaled", [x, scale], [y])
    onnx.save(helper.make_model(graph), str(tmp_path / "scaled.onnx"))
    xs = np.arange(15, dtype=np.float32).reshape(5, 3)
    scales = np.array([[1], [-1], [2], [0.5], [3]], np.float32)
    np.save(tmp_path / "x.npy", xs)
    np.save(tmp_path / "s.npy", scales)
    out = tmp_path / "out.npz"
    model = str(tmp_path / "scaled.onnx")
    result = run(
        "run",
        model,
        "--input",
        f"scale={tmp_path / 's.npy'}",
        "--input",
        str(tmp_path / "x.npy"),
        "--threads",
        "1",
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(np.load(out)["result0"], xs * scales)
