"""Malformed and hostile ONNX models (issue 22): every one is a documented error
naming the tensor, input or rule, never a NumPy or onnx traceback, a hang, or a
model accepted that should not be."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load


def model(
    initializers: list[TensorProto] = (),
    inputs: list | None = None,
    nodes: list | None = None,
    outputs: list | None = None,
) -> onnx.ModelProto:
    """y = x + w, with `w` an initializer unless replaced."""
    w = initializers or [helper.make_tensor("w", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])]
    graph = helper.make_graph(
        nodes if nodes is not None else [helper.make_node("Add", ["x", "w"], ["y"])],
        "g",
        inputs if inputs is not None else [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        outputs if outputs is not None else [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        initializer=list(w),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def raw(name: str, dims: list[int], data: bytes, data_type: int = TensorProto.FLOAT) -> TensorProto:
    tensor = TensorProto(name=name, data_type=data_type, dims=dims)
    tensor.raw_data = data
    return tensor


def floats(name: str, dims: list[int], values: list[float]) -> TensorProto:
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    tensor.float_data.extend(values)
    return tensor


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])

CASES: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    "empty bytes": (lambda: load(b""), rlx.ArgumentError, "it has no graph"),
    "not a model": (lambda: load(3), rlx.ArgumentError, "a path, bytes or a ModelProto, got int"),
    "raw_data short": (lambda: load(model([raw("w", [3], b"\0" * 8)])), rlx.CompileError, "initializer 'w': its data"),
    "raw_data long": (lambda: load(model([raw("w", [3], b"\0" * 16)])), rlx.CompileError, "initializer 'w'"),
    "raw_data odd-sized": (lambda: load(model([raw("w", [3], b"\0" * 13)])), rlx.CompileError, "initializer 'w'"),
    "float_data short": (lambda: load(model([floats("w", [3], [1.0])])), rlx.CompileError, "initializer 'w'"),
    "undefined data type": (
        lambda: load(model([raw("w", [3], b"\0" * 12, TensorProto.UNDEFINED)])),
        rlx.CompileError,
        "initializer 'w' has element type UNDEFINED",
    ),
    "out-of-enum data type": (
        lambda: load(model([raw("w", [3], b"\0" * 12, 999)])),
        rlx.CompileError,
        "initializer 'w' has element type 999",
    ),
    "negative dims": (lambda: load(model([raw("w", [-3], b"")])), rlx.CompileError, "negative dimension"),
    "huge dims": (
        lambda: load(model([raw("w", [1 << 30, 1 << 30], b"")])),
        rlx.CompileError,
        "declares 1152921504606846976 elements",
    ),
    "input_shapes of strings": (
        lambda: load(model(), input_shapes={"x": "3"}),
        rlx.ArgumentError,
        "input_shapes['x'] must be a list of dimensions",
    ),
    "input_shapes with a string dim": (
        lambda: load(model(), input_shapes={"x": ["3"]}),
        rlx.ArgumentError,
        "must be a list of dimensions",
    ),
    "input_shapes of the wrong rank": (
        lambda: load(model(), input_shapes={"x": [1, 3]}),
        rlx.ArgumentError,
        "has rank 2, the model declares rank 1",
    ),
    "input_shapes not a mapping": (
        lambda: load(model(), input_shapes=[3]),
        rlx.ArgumentError,
        "input_shapes is a mapping",
    ),
    "duplicate node outputs": (
        lambda: load(
            model(nodes=[helper.make_node("Add", ["x", "w"], ["y"]), helper.make_node("Sub", ["x", "w"], ["y"])])
        ),
        rlx.CompileError,
        "defines 'y' twice",
    ),
    "duplicate graph inputs": (lambda: load(model(inputs=[X, X])), rlx.CompileError, "defines 'x' twice"),
    "nodes out of topological order": (
        lambda: load(
            model(nodes=[helper.make_node("Relu", ["a"], ["y"], name="r"), helper.make_node("Neg", ["x"], ["a"])])
        ),
        rlx.CompileError,
        "Relu 'r': input 'a' comes from a later node",
    ),
    "no outputs": (lambda: load(model(outputs=[])), rlx.CompileError, "has no outputs"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_model_is_a_documented_error(case: str) -> None:
    call, error, message = CASES[case]
    with pytest.raises(error, match=message.replace("[", r"\[").replace("(", r"\(")):
        call()


def external(tmp_path: Path, location: str, length: int | None = None) -> Path:
    """A model file whose initializer w keeps its data in `location`."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3], data_location=TensorProto.EXTERNAL)
    entries = {"location": location, **({"length": str(length)} if length is not None else {})}
    for key, value in entries.items():
        w.external_data.add(key=key, value=value)
    path = tmp_path / "model.onnx"
    path.write_bytes(model([w]).SerializeToString())
    return path


def test_external_data_inside_the_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "w.bin").write_bytes(np.array([1, 2, 3], np.float32).tobytes())
    exe = rlx.compile(load(external(tmp_path, "w.bin")))
    np.testing.assert_array_equal(exe(np.zeros(3, np.float32))[0], [1, 2, 3])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: "/etc/passwd", "is not a file inside the model's folder"),
        (lambda d: "../w.bin", "is not a file inside the model's folder"),
        (lambda d: (os.symlink("/etc/passwd", d / "link"), "link")[1], "is not a file inside the model's folder"),
        (lambda d: "missing.bin", "cannot read external data 'missing.bin'"),
        (lambda d: (os.mkfifo(d / "fifo"), "fifo")[1], "is not a regular file"),
        (lambda d: ((d / "short.bin").write_bytes(b"\0" * 4), "short.bin")[1], "has 4 bytes, the tensor needs 12"),
    ],
    ids=["absolute", "dot-dot", "symlink", "missing", "fifo", "short"],
)
def test_external_data_outside_or_short_is_refused(tmp_path: Path, make: Callable[[Path], str], message: str) -> None:
    path = external(tmp_path, make(tmp_path))
    with pytest.raises(rlx.CompileError, match=message):
        load(path)


def test_a_sparse_terabyte_is_not_read(tmp_path: Path) -> None:
    """Only the bytes the tensor needs are read from a huge (sparse) data file."""
    with open(tmp_path / "huge.bin", "wb") as stream:
        stream.truncate(1 << 40)
    exe = rlx.compile(load(external(tmp_path, "huge.bin")))
    np.testing.assert_array_equal(exe(np.zeros(3, np.float32))[0], [0, 0, 0])
