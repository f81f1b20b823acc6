"""Reductions of the `rlx` dialect: reduce_*, argmax/argmin, softmax/log_softmax.

```mlir
%s = rlx.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
%i = rlx.argmax %x {axis = -1 : i64, keepdims = true, select_last_index = false}
       : (tensor<4x3xf32>) -> tensor<4x1xi64>
%p = rlx.softmax %x {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
```

Semantics (NumPy's, where it has them):
- `axes` may be negative and may not repeat; empty `axes` reduces nothing;
  `keepdims` keeps each reduced axis with extent 1.
- Over a zero-size axis, `reduce_sum` gives 0, `reduce_prod` 1 and
  `reduce_mean` NaN (0/0); `reduce_max`, `reduce_min`, `argmax` and `argmin`
  have no identity, so a zero-size reduced axis is a diagnostic.
- `reduce_max`/`reduce_min` propagate NaN (np.max); `argmax`/`argmin` return
  the first NaN's index (np.argmax), or of ties the first (or, with
  `select_last_index`, the last) index, as i64.
- Integer sums and products wrap; `reduce_mean` is defined on floats and
  complex only.
- `softmax`/`log_softmax` subtract the maximum first; a row of all -inf gives
  NaN (as PyTorch).

A reduction to one value of at least `SPLIT_MIN_ELEMENTS` elements is cut into
parts of about `PART_ELEMENTS` (`full_reduction_split`), reduced in parallel
into a scratch buffer of partials (`partials_bytes`) and then combined in
order: the parts depend only on the shape, so the result does not depend on
the thread count. The reduce op and the region that lowers it
(`dialects.region.ReductionRegionOp`) both declare that scratch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import (
    FIELD,
    FLOATS,
    REALS,
    NeedsScratch,
    TensorOp,
    array_values,
    bool_attr,
    check_kind,
    check_result_shape,
    check_same_element_type,
    check_value_type,
    element_type,
    i64_array,
    i64_attr,
    normalize_axis,
    shape_of,
)
from rlx_mlir.dialects.elementwise import AddOp, BinaryOp, MaxOp, MinOp, MulOp
from rlx_mlir.dtypes import Kind


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple[int, ...]:
    """`shape` with the (normalized) `axes` dropped, or kept as 1."""
    if keepdims:
        return tuple(1 if a in axes else n for a, n in enumerate(shape))
    return tuple(n for a, n in enumerate(shape) if a not in axes)


PART_ELEMENTS = 1 << 16
"""Elements per part of a split full reduction (256 KiB of f32). A constant of
the dialect, not of the `Tuning`: the parts fix the order of combination (so
the result must not depend on the target or the thread count) and the
scratch size plan-memory reserves. 2^16 makes the per-part work (flushing
the lanes, one store) vanish beside the reads, and leaves 256 parts for
2^24 elements: enough to balance many threads, while combining them in
order takes about a microsecond."""

MAX_PARTS = 1024
"""At most this many parts (16 KiB of partials in f64): past 2^26 elements the
parts grow instead, so a huge reduction (a broadcast splat of 10^12 elements)
keeps a small scratch."""

SPLIT_MIN_ELEMENTS = 2 * PART_ELEMENTS
"""The smallest full reduction that is split: two parts, each above
`Tuning.parallel_min_elements` (2^15), below which a launch on the pool
costs more than it saves."""


@dataclass(frozen=True)
class Split:
    """How a full reduction is cut: along its outermost reduced axis of
    extent > 1, `rows` indices of it per part (all the other reduced axes
    whole), `parts` parts, the last one possibly shorter."""

    axis: int
    rows: int
    parts: int


def full_reduction_split(space: Sequence[int], reduced: Sequence[int]) -> Split | None:
    """The split of a reduction over `reduced` axes of `space` to one value
    (every axis not reduced has extent 1), or None when it is not a full
    reduction of at least `SPLIT_MIN_ELEMENTS` elements. A function of the
    shape alone."""
    count = numel([space[d] for d in reduced])
    if count < SPLIT_MIN_ELEMENTS or numel([n for d, n in enumerate(space) if d not in reduced]) != 1:
        return None
    kept = [d for d in sorted(reduced) if space[d] != 1]
    outer = space[kept[0]]
    rows = max(1, PART_ELEMENTS // (count // outer), -(-outer // MAX_PARTS))
    return Split(kept[0], rows, -(-outer // rows))


def partials_bytes(split: Split | None, element: Attribute) -> tuple[int, ...]:
    """The scratch of a split full reduction of `element`s: a (total,
    compensation) pair per part in the accumulator type, which is never
    wider than the element or 4 bytes (f16/bf16 accumulate in f32)."""
    if split is None:
        return ()
    return (split.parts * 2 * max(4, dtypes.from_ir(element).nbytes),)


class ReductionOp(TensorOp, ABC):
    """One input, one result, computed along some axes of the input."""

    ALLOWED: ClassVar[frozenset[Kind]] = REALS
    IDENTITY: ClassVar[bool] = True
    """Whether a reduction over nothing has a value (sum 0, prod 1, mean NaN)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    @abstractmethod
    def reduced_axes(self) -> tuple[int, ...]:
        """The normalized, sorted reduced axes (checked to be in range and distinct)."""

    def verify_rules(self) -> None:
        shape = shape_of(self.input.type)
        axes = self.reduced_axes()
        empty = [a for a in axes if shape[a] == 0]
        if empty and not self.IDENTITY:
            raise VerifyException(f"'{self.name}' cannot reduce the zero-size axis {empty[0]}: it has no identity")
        check_kind(self, check_value_type(self, self.input.type, "operand"), self.ALLOWED, "operand")
        self.verify_result(shape, axes)

    @abstractmethod
    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        """The result's element type and shape, given the input's shape and the reduced axes."""


# ---------------------------------------------------------------------------
# reduce_*
# ---------------------------------------------------------------------------


class ReduceOp(ReductionOp, NeedsScratch, ABC):
    """`{axes, keepdims}`: the elements along `axes` combined into one by the
    binary op `COMBINE` (in any order: integer results are exact modulo
    wrapping, float ones within the documented rounding). A large reduction
    to one value needs scratch for its partials (`full_reduction_split`)."""

    COMBINE: ClassVar[type[BinaryOp]]

    axes = prop_def(DenseArrayBase)
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool, result_type: Attribute) -> None:
        props = {"axes": i64_array(axes), "keepdims": bool_attr(keepdims)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    @property
    def keeps_dims(self) -> bool:
        return bool(self.keepdims.value.data)

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(shape_of(self.input.type))
        axes = [normalize_axis(self, a, rank, "axes entry") for a in array_values(self, "axes", self.axes)]
        if len(set(axes)) != len(axes):
            raise VerifyException(f"'{self.name}' axes {list(self.axes.get_values())} repeat an axis")
        return tuple(sorted(axes))

    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        check_same_element_type(self, "result", self.result, self.input)
        check_result_shape(self, reduced_shape(shape, axes, self.keeps_dims))

    def scratch_bytes(self) -> tuple[int, ...]:
        split = full_reduction_split(shape_of(self.input.type), self.reduced_axes())
        return partials_bytes(split, element_type(self.input.type))


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """`rlx.reduce_sum`: the sum along `axes` (np.sum; integers wrap; 0 over nothing)."""

    name = "rlx.reduce_sum"
    COMBINE: ClassVar[type[BinaryOp]] = AddOp
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """`rlx.reduce_mean`: the mean along `axes` (np.mean; NaN over nothing)."""

    name = "rlx.reduce_mean"
    COMBINE: ClassVar[type[BinaryOp]] = AddOp
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.COMPLEX}


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """`rlx.reduce_prod`: the product along `axes` (np.prod; integers wrap; 1 over nothing)."""

    name = "rlx.reduce_prod"
    COMBINE: ClassVar[type[BinaryOp]] = MulOp
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """`rlx.reduce_max`: the maximum along `axes` (np.max; NaN propagates)."""

    name = "rlx.reduce_max"
    COMBINE: ClassVar[type[BinaryOp]] = MaxOp
    IDENTITY: ClassVar[bool] = False


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """`rlx.reduce_min`: the minimum along `axes` (np.min; NaN propagates)."""

    name = "rlx.reduce_min"
    COMBINE: ClassVar[type[BinaryOp]] = MinOp
    IDENTITY: ClassVar[bool] = False


# ---------------------------------------------------------------------------
# argmax / argmin
# ---------------------------------------------------------------------------


class ArgReduceOp(ReductionOp, ABC):
    """`{axis, keepdims, select_last_index}`: the i64 index of the extreme element along `axis`."""

    IDENTITY: ClassVar[bool] = False
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))
    select_last_index = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(
        self, input: SSAValue, axis: int, keepdims: bool, select_last_index: bool, result_type: Attribute
    ) -> None:
        props = {
            "axis": i64_attr(axis),
            "keepdims": bool_attr(keepdims),
            "select_last_index": bool_attr(select_last_index),
        }
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    @property
    def keeps_dims(self) -> bool:
        return bool(self.keepdims.value.data)

    @property
    def selects_last(self) -> bool:
        return bool(self.select_last_index.value.data)

    def reduced_axes(self) -> tuple[int, ...]:
        return (normalize_axis(self, self.axis.value.data, len(shape_of(self.input.type))),)

    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        result = dtypes.from_ir(self.result.type.get_element_type())
        if result.name != "i64":
            raise VerifyException(f"'{self.name}' result must have element type i64, got {result.name}")
        check_result_shape(self, reduced_shape(shape, axes, self.keeps_dims))


@irdl_op_definition
class ArgmaxOp(ArgReduceOp):
    """`rlx.argmax`: the index of the maximum along `axis` (np.argmax; the first NaN wins)."""

    name = "rlx.argmax"


@irdl_op_definition
class ArgminOp(ArgReduceOp):
    """`rlx.argmin`: the index of the minimum along `axis` (np.argmin; the first NaN wins)."""

    name = "rlx.argmin"


# ---------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------


class NormalizeOp(ReductionOp, ABC):
    """`{axis}`: each element against a reduction of its row along `axis`; same shape and type."""

    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS
    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(-1, i64))

    def __init__(self, input: SSAValue, axis: int, result_type: Attribute | None = None) -> None:
        props = {"axis": i64_attr(axis)}
        super().__init__(operands=[input], result_types=[result_type or input.type], properties=props)

    def reduced_axes(self) -> tuple[int, ...]:
        return (normalize_axis(self, self.axis.value.data, len(shape_of(self.input.type))),)

    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        check_same_element_type(self, "result", self.result, self.input)
        check_result_shape(self, shape)


@irdl_op_definition
class SoftmaxOp(NormalizeOp):
    """`rlx.softmax {axis}`: exp(x - max) / sum(exp(x - max)) along `axis`."""

    name = "rlx.softmax"


@irdl_op_definition
class LogSoftmaxOp(NormalizeOp):
    """`rlx.log_softmax {axis}`: (x - max) - log(sum(exp(x - max))) along `axis`."""

    name = "rlx.log_softmax"


REDUCE_OPS = (ReduceSumOp, ReduceMeanOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp)
ARG_REDUCE_OPS = (ArgmaxOp, ArgminOp)
NORMALIZE_OPS = (SoftmaxOp, LogSoftmaxOp)
REDUCTION_OPS = (*REDUCE_OPS, *ARG_REDUCE_OPS, *NORMALIZE_OPS)
