"""Type rules shared by every rlx op family: element kinds, shapes, diagnostics."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import TypeGuard

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    UnrankedTensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, traits_def
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import OpTrait, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes
from rlx_mlir.dtypes import Kind

FLOATS = frozenset({Kind.FLOAT})
INTS = frozenset({Kind.INT, Kind.UINT})
REALS = frozenset({Kind.FLOAT, Kind.INT, Kind.UINT})
FIELD = REALS | {Kind.COMPLEX}  # + - * / make sense
INTS_AND_BOOL = INTS | {Kind.BOOL}
ORDERED = REALS | {Kind.BOOL}
ANY = frozenset(Kind)

FUNCTIONAL_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


# ---------------------------------------------------------------------------
# type helpers shared by the verifiers
# ---------------------------------------------------------------------------


def element_type(t: Attribute) -> Attribute:
    return t.get_element_type() if isinstance(t, TensorType) else t


def shape_of(t: Attribute) -> tuple[int, ...]:
    """Static shape of a tensor type; scalars are rank 0."""
    if isinstance(t, TensorType):
        return tuple(t.get_shape())
    return ()


def _unsupported_container(t: Attribute) -> bool:
    """memrefs, vectors and unranked tensors: shaped, but not what rlx computes on."""
    return isinstance(t, UnrankedTensorType) or (isinstance(t, ShapedType) and not isinstance(t, TensorType))


MAX_BYTES = 1 << 62
"""No tensor may be larger than this (offsets and sizes are 64-bit)."""

MAX_RANK = 64
"""NumPy's limit on dimensions: a tensor of higher rank could not be passed in or out."""


def check_value_type(op: Operation, t: Attribute, what: str) -> dtypes.DType:
    """A tensor with static shape and a supported element type, or a supported scalar."""
    if _unsupported_container(t):
        raise VerifyException(f"'{op.name}' {what} has type {t}; rlx ops take ranked tensors (or scalars in a region)")
    if isinstance(t, TensorType):
        if any(d < 0 for d in t.get_shape()):
            raise VerifyException(f"'{op.name}' {what} has a dynamic shape {t}; rlx needs static shapes")
        if len(t.get_shape()) > MAX_RANK:
            raise VerifyException(
                f"'{op.name}' {what} has rank {len(t.get_shape())}; rlx tensors have at most {MAX_RANK} dimensions"
            )
    dtype = dtypes.lookup(element_type(t))
    if dtype is None:
        raise VerifyException(
            f"'{op.name}' {what} has unsupported element type {element_type(t)} (supported: {dtypes.supported_names()})"
        )
    size = dtype.nbytes
    for d in shape_of(t):
        size *= d
    if size >= MAX_BYTES:
        raise VerifyException(f"'{op.name}' {what} {t} is too large ({size} bytes)")
    return dtype


def check_kind(op: Operation, dtype: dtypes.DType, allowed: frozenset[Kind], what: str) -> None:
    if dtype.kind not in allowed:
        kinds = " or ".join(sorted(k.value for k in allowed))
        raise VerifyException(f"'{op.name}' {what} must be {kinds}, got {dtype.name}")


def check_same_level(op: Operation) -> bool:
    """Operands and results are all tensors (graph level) or all scalars (region body)."""
    types = [v.type for v in (*op.operands, *op.results)]
    for t in types:
        if _unsupported_container(t):
            raise VerifyException(f"'{op.name}' has a value of type {t}; rlx ops take ranked tensors or scalars")
    tensors = [isinstance(t, TensorType) for t in types]
    if any(tensors) and not all(tensors):
        raise VerifyException(f"'{op.name}' mixes tensor and scalar operands/results")
    return bool(tensors) and tensors[0]


def check_broadcast_result(op: Operation, operands: Sequence[SSAValue], result: SSAValue) -> None:
    shapes = [shape_of(v.type) for v in operands]
    expected = broadcast_shapes(*shapes)
    if expected is None:
        listed = ", ".join("x".join(map(str, s)) or "scalar" for s in shapes)
        raise VerifyException(f"'{op.name}' operands have incompatible broadcast shapes ({listed})")
    got = shape_of(result.type)
    if got != expected:
        raise VerifyException(
            f"'{op.name}' result shape {list(got)} does not match the broadcast shape {list(expected)}"
        )


def check_result_shape(op: Operation, expected: Sequence[int], result: SSAValue | None = None) -> None:
    """The result type must have the inferred shape; the message shows both."""
    result = result if result is not None else op.results[0]
    got = shape_of(result.type)
    if got != tuple(expected):
        raise VerifyException(
            f"'{op.name}' result shape {list(got)} does not match the expected shape {list(expected)}"
        )


def check_same_element_type(op: Operation, what: str, value: SSAValue, like: SSAValue) -> None:
    a, b = element_type(value.type), element_type(like.type)
    if a != b:
        raise VerifyException(f"'{op.name}' {what} element type {a} must equal {b}")


def check_index_type(op: Operation, value: SSAValue, what: str = "indices") -> None:
    """Indices are i32 or i64 tensors; anything else must be cast explicitly."""
    t = element_type(value.type)
    if dtypes.lookup(t) is None or dtypes.from_ir(t).name not in ("i32", "i64"):
        raise VerifyException(f"'{op.name}' {what} must have element type i32 or i64, got {t} (insert rlx.cast)")


def normalize_axis(op: Operation, axis: int, rank: int, what: str = "axis") -> int:
    """NumPy-style axis in [-rank, rank) -> [0, rank)."""
    if not -rank <= axis < rank:
        raise VerifyException(f"'{op.name}' {what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# ---------------------------------------------------------------------------
# properties and the tensor-op skeleton shared by the op families
# ---------------------------------------------------------------------------


def bool_attr(value: bool) -> BoolAttr:
    """A boolean property value (an i1 IntegerAttr)."""
    return IntegerAttr(int(value), i1)


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def is_i64_array(attr: DenseArrayBase) -> TypeGuard[DenseArrayBase[IntegerType]]:
    """Whether `attr` is `array<i64: ...>`; as a TypeGuard, its values type as ints."""
    return attr.elt_type == i64


def array_values(op: Operation, name: str, attr: DenseArrayBase, length: int | None = None) -> tuple[int, ...]:
    if not is_i64_array(attr):
        raise VerifyException(f"'{op.name}' {name} must be array<i64: ...>, got {attr}")
    values = tuple(attr.get_values())
    if length is not None and len(values) != length:
        raise VerifyException(f"'{op.name}' {name} has {len(values)} entries, expected {length} (one per axis)")
    return values


class TensorOp(IRDLOperation, ABC):
    """An op on static-shape tensors with properties in its attr-dict: every operand
    and result type is checked, then the family's and the op's own rules."""

    traits = traits_def(Pure())
    assembly_format = FUNCTIONAL_FORMAT
    irdl_options = (ParsePropInAttrDict(),)

    def verify_(self) -> None:
        for k, operand in enumerate(self.operands):
            check_value_type(self, operand.type, f"operand #{k}")
        for k, result in enumerate(self.results):
            check_value_type(self, result.type, f"result #{k}")
        self.verify_rules()

    def verify_rules(self) -> None: ...


class ArenaConstant(OpTrait):
    """The op's result is data fixed when the executable is made (outside the
    arena, read through its slot of the constants' table) and never written by a
    kernel: what a kernel derives from it on one call (a packed copy, kept in
    scratch) still holds on every later call."""


def holds_constant(value: SSAValue) -> bool:
    """Whether `value` is the result of an `ArenaConstant` op."""
    return isinstance(value.owner, Operation) and value.owner.has_trait(ArenaConstant)


class NeedsScratch:
    """An op whose kernel needs temporary arena buffers for the op's lifetime
    (BLAS operands widened to f32, per-row partial sums, ...). `plan-memory`
    places them beside the op's operands and results and counts them in the
    lower bound; the kernel gets one pointer per buffer."""

    def scratch_bytes(self) -> tuple[int, ...]:
        """The byte size of each scratch buffer (0-byte buffers are allowed)."""
        return ()

    def kept_scratch(self) -> frozenset[int]:
        """The scratch buffers whose contents are kept from one call to the next
        (`plan-memory` gives them the whole call's lifetime, so no other buffer
        shares their bytes): what the kernels derive once from constants."""
        return frozenset()
