"""Element types: one table row per type, looked up everywhere else.

A row ties together the xDSL type used in IR, the NumPy dtype at the
boundary (`bfloat16`, the float8 formats and `int4`/`uint4` from ml_dtypes),
the storage size the memory planner needs and the *kind* the verifiers and
emitters dispatch on. Adding a type is adding a row here (plus its codec in
`lowering/core/element_types.py` and tests); nothing else lists types.

The storage types - f16, bf16, the four float8 formats (computed in f32) and
i4/ui4 (computed in i8) - are full members of their kind: an op on them
computes in the wider type and rounds its result once to the storage type.
i4 and ui4 take one byte per element, as ml_dtypes' `int4`/`uint4` arrays
do (the value in the low four bits; the high four are written zero and
ignored when read); rlx does not pack two to a byte.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from functools import cache
from types import ModuleType

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute


class Kind(Enum):
    FLOAT = "float"
    INT = "int"
    UINT = "uint"
    BOOL = "bool"
    COMPLEX = "complex"


@dataclass(frozen=True)
class MlDtype:
    """An ml_dtypes type, named, with its item size: verifying and planning IR
    need only the size, and importing ml_dtypes costs ~0.7 s of a CLI run's start."""

    name: str
    itemsize: int


@dataclass(frozen=True)
class DType:
    name: str
    ir_type: Attribute
    storage: np.dtype | MlDtype
    """NumPy's own dtype, or an ml_dtypes type (imported at first use)."""
    kind: Kind

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype at the boundary (for an ml_dtypes row, this imports ml_dtypes)."""
        return _ml_dtype(self.storage.name) if isinstance(self.storage, MlDtype) else self.storage

    @property
    def nbytes(self) -> int:
        return self.storage.itemsize

    @property
    def bits(self) -> int:
        """Bits of the value (i1: 1, i4: 4), which may be fewer than it is stored in."""
        if isinstance(self.ir_type, IntegerType):
            return self.ir_type.width.data
        return 8 * self.nbytes

    @property
    def int_range(self) -> tuple[int, int]:
        """(min, max) of an integer type (i4/ui4 included, which np.iinfo does not know)."""
        info = _ml_dtypes().iinfo(self.numpy) if isinstance(self.storage, MlDtype) else np.iinfo(self.storage)
        return int(info.min), int(info.max)

    @property
    def largest(self) -> float:
        """The largest finite value of a float type (the float8 formats included, which np.finfo does not know)."""
        info = _ml_dtypes().finfo(self.numpy) if isinstance(self.storage, MlDtype) else np.finfo(self.storage)
        return float(info.max)


def _ml_dtypes() -> ModuleType:
    import ml_dtypes

    return ml_dtypes


@cache
def _ml_dtype(name: str) -> np.dtype:
    return np.dtype(getattr(_ml_dtypes(), name))


i4 = IntegerType(4)
ui4 = IntegerType(4, Signedness.UNSIGNED)
ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)
bf16 = BFloat16Type()
c64 = ComplexType(f32)
c128 = ComplexType(f64)

DTYPES: tuple[DType, ...] = (
    DType("f16", f16, np.dtype(np.float16), Kind.FLOAT),
    DType("bf16", bf16, MlDtype("bfloat16", 2), Kind.FLOAT),
    DType("f32", f32, np.dtype(np.float32), Kind.FLOAT),
    DType("f64", f64, np.dtype(np.float64), Kind.FLOAT),
    DType("f8E4M3FN", Float8E4M3FNType(), MlDtype("float8_e4m3fn", 1), Kind.FLOAT),
    DType("f8E4M3FNUZ", Float8E4M3FNUZType(), MlDtype("float8_e4m3fnuz", 1), Kind.FLOAT),
    DType("f8E5M2", Float8E5M2Type(), MlDtype("float8_e5m2", 1), Kind.FLOAT),
    DType("f8E5M2FNUZ", Float8E5M2FNUZType(), MlDtype("float8_e5m2fnuz", 1), Kind.FLOAT),
    DType("i1", i1, np.dtype(np.bool_), Kind.BOOL),
    DType("i4", i4, MlDtype("int4", 1), Kind.INT),
    DType("i8", i8, np.dtype(np.int8), Kind.INT),
    DType("i16", i16, np.dtype(np.int16), Kind.INT),
    DType("i32", i32, np.dtype(np.int32), Kind.INT),
    DType("i64", i64, np.dtype(np.int64), Kind.INT),
    DType("ui4", ui4, MlDtype("uint4", 1), Kind.UINT),
    DType("ui8", ui8, np.dtype(np.uint8), Kind.UINT),
    DType("ui16", ui16, np.dtype(np.uint16), Kind.UINT),
    DType("ui32", ui32, np.dtype(np.uint32), Kind.UINT),
    DType("ui64", ui64, np.dtype(np.uint64), Kind.UINT),
    DType("complex<f32>", c64, np.dtype(np.complex64), Kind.COMPLEX),
    DType("complex<f64>", c128, np.dtype(np.complex128), Kind.COMPLEX),
)

_BY_IR = {d.ir_type: d for d in DTYPES}
_BY_NUMPY = {d.storage: d for d in DTYPES if not isinstance(d.storage, MlDtype)}
_BY_NAME = {d.name: d for d in DTYPES} | {"c64": _BY_IR[c64], "c128": _BY_IR[c128]}


def lookup(ir_type: Attribute) -> DType | None:
    """The row for an IR element type, or None if rlx does not support it."""
    return _BY_IR.get(ir_type)


def from_ir(ir_type: Attribute) -> DType:
    dtype = _BY_IR.get(ir_type)
    if dtype is None:
        raise KeyError(f"unsupported element type {ir_type}")
    return dtype


def from_numpy(dtype: np.dtype) -> DType | None:
    dtype = np.dtype(dtype)
    found = _BY_NUMPY.get(dtype)
    if found is None and "ml_dtypes" in sys.modules:  # only then can `dtype` be one of its types
        found = _by_ml_dtype().get(dtype)
    return found


@cache
def _by_ml_dtype() -> dict[np.dtype, DType]:
    return {d.numpy: d for d in DTYPES if isinstance(d.storage, MlDtype)}


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def supported_names() -> str:
    return ", ".join(d.name for d in DTYPES)
