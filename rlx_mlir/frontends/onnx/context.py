"""The state of one ONNX import and what its modules share: graph values
(run-time or known at import), `Unsupported`, attribute and operand access."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.common import element_type, shape_of

ELEMENT_TYPES: dict[int, str] = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.DOUBLE: "f64",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.FLOAT8E4M3FN: "f8E4M3FN",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "f8E4M3FNUZ",
    onnx.TensorProto.FLOAT8E5M2: "f8E5M2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "f8E5M2FNUZ",
    onnx.TensorProto.BOOL: "i1",
    onnx.TensorProto.INT4: "i4",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT16: "i16",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.UINT4: "ui4",
    onnx.TensorProto.UINT8: "ui8",
    onnx.TensorProto.UINT16: "ui16",
    onnx.TensorProto.UINT32: "ui32",
    onnx.TensorProto.UINT64: "ui64",
    onnx.TensorProto.COMPLEX64: "complex<f32>",
    onnx.TensorProto.COMPLEX128: "complex<f64>",
}
"""ONNX element types rlx computes on (not: strings, FLOAT8E8M0, FLOAT4E2M1, INT2/UINT2)."""

NUMPY_NAMES = {d.numpy: d.name for d in dtypes.DTYPES}
"""The rlx name of each NumPy dtype a known array may have (ml_dtypes' included)."""

Value = SSAValue | np.ndarray
"""A graph value: computed at run time, or known at import (folded with NumPy)."""


VALUE_NAME_INVALID = re.compile(r"[^A-Za-z0-9_$.-]")
"""What an SSA value's name cannot hold: MLIR's suffix-id characters, ASCII (xDSL's check takes any `\\w`)."""


def value_name(onnx_name: str) -> str:
    """An ONNX node's name as an SSA value name, still telling nodes apart:
    `/encoder/layer.0/MatMul` -> `encoder_layer.0_MatMul`; a numbered
    `node_MatMul_12` -> `node_MatMul.12` (xDSL drops a `_12` suffix, which its
    printer uses to tell equal names apart)."""
    name = VALUE_NAME_INVALID.sub("_", onnx_name).lstrip("_") or "node"
    name = re.sub(r"_(\d+)$", r".\1", name)
    return name if not name[0].isdigit() else f"_{name}"


class Unsupported(Exception):
    """A node the importer cannot map (the reason is the message)."""


@dataclass
class Import:
    """The state of one import: the Builder and what each ONNX name holds."""

    builder: Builder
    importers: Mapping[str, Importer]
    """How each supported op type becomes rlx ops (`load.IMPORTERS`; a Scan body's
    nodes are imported with its enclosing graph's table)."""
    values: dict[str, Value] = field(default_factory=dict)
    opset: int = 13
    """The model's version of the standard domain (ops whose meaning changed by version check it)."""
    names: dict[int, str] = field(default_factory=dict)
    """The initializer name of each known array of `values` (by id: they live as
    long as the import), which its constant's resource is called."""
    value_names: Counter[str] = field(default_factory=Counter)
    """How many values each imported node's name has named (`nodes._name_results`)."""

    def tensor(self, value: Value | None) -> SSAValue:
        """`value` as an rlx value (a known array becomes an `rlx.constant`)."""
        value = present(value)
        if isinstance(value, SSAValue):
            return value
        name = NUMPY_NAMES.get(value.dtype)
        if name is None:
            raise Unsupported(f"a constant of element type {value.dtype} is not supported")
        initializer = self.names.get(id(value))
        constant = self.builder.constant(value, name, initializer)
        if initializer is not None:
            constant.name_hint = value_name(initializer)
        return constant

    def shape(self, value: Value | None) -> tuple[int, ...]:
        value = present(value)
        return tuple(value.shape) if isinstance(value, np.ndarray) else shape_of(value.type)


def present(value: Value | None) -> Value:
    """An input the importer requires: None (an omitted optional input, or one the
    schema check let through) is `Unsupported`."""
    if value is None:
        raise Unsupported("a required input is missing")
    return value


def element_name(value: Value) -> str:
    """The rlx name of a value's element type, run-time or known (for constants of the same type)."""
    if isinstance(value, np.ndarray):
        return NUMPY_NAMES[value.dtype]
    return dtypes.from_ir(element_type(value.type)).name


def checked_axis(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` of a rank-`rank` value, negative ones counted from the end."""
    if not -rank <= axis < rank:
        raise Unsupported(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def known(value: Value | None, what: str) -> np.ndarray:
    """A shape-like operand must be known at import."""
    if value is None or not isinstance(value, np.ndarray):
        raise Unsupported(f"its {what} depends on the inputs at run time; rlx needs it at import")
    return value


def node_attribute(node: onnx.NodeProto, name: str, default: Any = None) -> Any:
    """The value of the node's attribute `name` (its Python form depends on the attribute's
    type: int, float, bytes, a list, a TensorProto, a GraphProto), else `default`."""
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def axes_operand(node: onnx.NodeProto, inputs: Sequence[Value | None], position: int) -> list[int] | None:
    """`axes` from the input at `position` (opset 13+) or the attribute."""
    if len(inputs) > position and inputs[position] is not None:
        return [int(a) for a in known(inputs[position], "axes")]
    value = node_attribute(node, "axes")
    return None if value is None else [int(a) for a in value]


Importer = Callable[[Import, onnx.NodeProto, list[Value | None]], list[Value]]
"""(import, node, inputs) -> outputs."""
