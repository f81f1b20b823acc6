"""Element types: one table row per type, looked up everywhere else.

A row ties together the xDSL type used in IR, the NumPy dtype at the
boundary, the storage size the memory planner needs and the *kind* the
verifiers and emitters dispatch on. Adding a type is adding a row here (plus
its tests); nothing else lists types.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute


class Kind(Enum):
    FLOAT = "float"
    INT = "int"
    BOOL = "bool"


@dataclass(frozen=True)
class DType:
    name: str
    ir_type: Attribute
    numpy: np.dtype
    kind: Kind

    @property
    def nbytes(self) -> int:
        return self.numpy.itemsize


DTYPES: tuple[DType, ...] = (
    DType("f32", f32, np.dtype(np.float32), Kind.FLOAT),
    DType("f64", f64, np.dtype(np.float64), Kind.FLOAT),
    DType("i1", i1, np.dtype(np.bool_), Kind.BOOL),
    DType("i32", i32, np.dtype(np.int32), Kind.INT),
    DType("i64", i64, np.dtype(np.int64), Kind.INT),
)

_BY_IR = {d.ir_type: d for d in DTYPES}
_BY_NUMPY = {d.numpy: d for d in DTYPES}
_BY_NAME = {d.name: d for d in DTYPES}


def lookup(ir_type: Attribute) -> DType | None:
    """The row for an IR element type, or None if rlx does not support it."""
    return _BY_IR.get(ir_type)


def from_ir(ir_type: Attribute) -> DType:
    dtype = _BY_IR.get(ir_type)
    if dtype is None:
        raise KeyError(f"unsupported element type {ir_type}")
    return dtype


def from_numpy(dtype: np.dtype) -> DType | None:
    return _BY_NUMPY.get(np.dtype(dtype))


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def supported_names() -> str:
    return ", ".join(d.name for d in DTYPES)


__all__ = ["DType", "DTYPES", "Kind", "lookup", "from_ir", "from_numpy", "from_name",
           "Float32Type", "Float64Type", "IntegerType", "Signedness"]
