"""ONNX's node tests, generated in memory (`collect_testcases`: the wheel
ships their generators, not their data folders), run through the importer."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

import rlx_mlir as rlx
from rlx_mlir import dtypes
from rlx_mlir.frontends import onnx as onnx_import

SHAPE_OPERANDS = {
    "Reshape": {1},
    "Expand": {1},
    "Slice": {1, 2, 3, 4},
    "Squeeze": {1},
    "Unsqueeze": {1},
    "ReduceSum": {1},
    "ReduceMean": {1},
    "ReduceMax": {1},
    "ReduceMin": {1},
    "ReduceProd": {1},
    "ReduceL1": {1},
    "ReduceL2": {1},
    "ReduceSumSquare": {1},
    "ReduceLogSum": {1},
    "ReduceLogSumExp": {1},
    "Split": {1},
    "Pad": {1, 2, 3},
    "ConstantOfShape": {0},
    "Range": {0, 1, 2},
    "LSTM": {1, 2, 3, 4, 7},
    "GRU": {1, 2, 3, 4},
    "RNN": {1, 2, 3, 4},
    "CumSum": {1},
    "Trilu": {1},
    "OneHot": {1},
    "Tile": {1},
    "Resize": {1, 2, 3},
    "Dropout": {1, 2},
}
"""Operand positions that must be known at import (shapes, axes; the recurrent
ops' weights, repacked at import); node tests feed them as graph inputs."""


def supported_cases() -> list:
    """Every node test whose ops all have an importer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()
    return [c for c in cases if all(n.op_type in onnx_import.IMPORTERS for n in c.model.graph.node)]


@dataclass(frozen=True)
class Result:
    ok: bool
    reason: str = ""


def shape_like_inputs(graph: onnx.GraphProto) -> set[str]:
    """The names that reach a SHAPE_OPERANDS position, through any nodes but Shape and
    Size (which read only their input's shape): the graph inputs among them are fed
    as import-time constants (a function test computes its pads or axes from them)."""
    needed = {
        name for node in graph.node for k, name in enumerate(node.input) if k in SHAPE_OPERANDS.get(node.op_type, ())
    }
    for node in reversed(graph.node):  # nodes are in topological order
        if node.op_type not in ("Shape", "Size") and needed.intersection(node.output):
            needed.update(name for name in node.input if name)
    return needed


def run_case(case) -> Result:
    graph = case.model.graph
    fixed = shape_like_inputs(graph)
    names = [v.name for v in graph.input if v.name not in {t.name for t in graph.initializer}]
    for inputs, outputs in case.data_sets:
        types = {v.name: v.type.tensor_type.elem_type for v in graph.input}
        arrays = [_as_array(a, types.get(n)) for n, a in zip(names, inputs)]
        constants = {n: a for n, a in zip(names, arrays) if n in fixed}
        try:
            module = onnx_import.load(case.model, constants=constants)
            exe = rlx.compile(module)
            got = exe(*(a for n, a in zip(names, arrays) if n not in fixed))
        except rlx.RlxError as error:
            return Result(False, str(error).splitlines()[-1].strip())
        defined = _defined_casts(graph, arrays[0]) if arrays else None
        for g, want in zip(got, outputs):
            want = _as_array(want, None)  # the cast cases store theirs as TensorProtos
            if g.shape != want.shape:
                return Result(False, f"shape {g.shape} instead of {want.shape}")
            if defined is not None and defined.shape == g.shape:
                g, want = g[defined], want[defined]
            got_values = np.asarray(g, dtype=want.dtype) if want.dtype != object else g
            rtol = case.rtol
            if want.dtype.name == "bfloat16":  # as ONNX's own runner: two bf16 ULPs, compared in f32
                rtol, got_values, want = max(rtol, 2**-6), got_values.astype(np.float32), want.astype(np.float32)
            if not np.allclose(got_values, want, rtol=rtol, atol=case.atol, equal_nan=True):
                return Result(False, "values differ beyond the case's tolerance")
    return Result(True)


CASTS = {"Cast", "CastLike"}


def _defined_casts(graph: onnx.GraphProto, source: np.ndarray) -> np.ndarray | None:
    """Where a float -> integer Cast of `source` is defined: ONNX's Cast leaves a float
    out of the integer type's range undefined (the importer wraps it into int4/uint4
    through i32, as onnxruntime 1.32 does; onnx 1.23.2's node-test data holds other
    values, e.g. 0 for -9), so a node test of such a cast is compared only at the
    inputs in range. None for any other graph."""
    targets = [_cast_target(node, graph) for node in graph.node if node.op_type in CASTS]
    integers = (dtypes.Kind.INT, dtypes.Kind.UINT)
    if not targets or source.dtype.kind != "f" or any(t is None or t.kind not in integers for t in targets):
        return None
    low = max(t.int_range[0] for t in targets)  # type: ignore[union-attr]
    high = min(t.int_range[1] for t in targets)  # type: ignore[union-attr]
    rounded = np.rint(source.astype(np.float64))
    return (rounded >= low) & (rounded <= high)


def _cast_target(node: onnx.NodeProto, graph: onnx.GraphProto) -> dtypes.DType | None:
    """The type a Cast (its `to`) or CastLike (its second input's type) produces."""
    if node.op_type == "Cast":
        to = next(a.i for a in node.attribute if a.name == "to")
    else:
        to = next((v.type.tensor_type.elem_type for v in graph.input if v.name == node.input[1]), None)
    name = onnx_import.ELEMENT_TYPES.get(to) if to is not None else None
    return dtypes.from_name(name) if name else None


def _as_array(value, elem_type: int | None) -> np.ndarray:
    """A data set's input as the array its graph input declares (some are stored as TensorProtos or objects)."""
    array = numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)
    if array.dtype == object and elem_type in onnx_import.ELEMENT_TYPES:
        array = array.astype(dtypes.from_name(onnx_import.ELEMENT_TYPES[elem_type]).numpy)
    return array
