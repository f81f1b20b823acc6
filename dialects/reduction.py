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
"""

from __future__ import annotations

from abc import ABC
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
    check_kind,
    check_result_shape,
    check_same_element_type,
    check_value_type,
    i64_array,
    i64_attr,
    normalize_axis,
    shape_of,
)
from rlx_mlir.dialects.contraction import bool_attr
from rlx_mlir.dtypes import Kind


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple[int, ...]:
    """`shape` with the (normalized) `axes` dropped, or kept as 1."""
    if keepdims:
        return tuple(1 if a in axes else n for a, n in enumerate(shape))
    return tuple(n for a, n in enumerate(shape) if a not in axes)


def accumulator(dtype: dtypes.DType) -> dtypes.DType:
    """The type a reduction accumulates `dtype` in: f32 for f16/bf16, else the type itself."""
    return dtypes.from_name("f32") if dtype.name in ("f16", "bf16") else dtype


@dataclass(frozen=True)
class Stage:
    """One pass of a reduction: a contiguous source viewed as [outer, length, inner]
    reduced along `length` into [outer, parts, inner]. With parts > 1 each part
    reduces one chunk of `length` (of `chunk` rows, the last one shorter) so
    that a reduction with few outputs still splits across threads; the next
    stage reduces the parts."""

    outer: int
    length: int
    inner: int
    parts: int = 1

    @property
    def chunk(self) -> int:
        return -(-self.length // self.parts)

    @property
    def outputs(self) -> int:
        return self.outer * self.parts * self.inner


# The split is decided here, with the shapes, because it decides the scratch sizes
# `plan-memory` reserves; `lowering/reduction.py` only reads the stages.
SPLIT_ITEMS = 16
"""A stage with fewer independent work items than this is split along `length`..."""
SPLIT_MIN_ELEMENTS = 1 << 16
"""...into parts of at least this many elements."""
_LANE_GUESS = 256  # columns per work item: the kernels' column chunks span 1 KB of a row (256 f32)


def _split(stage: Stage) -> tuple[Stage, ...]:
    items = stage.outer * max(1, stage.inner // _LANE_GUESS)
    size = stage.length * stage.inner
    if items >= SPLIT_ITEMS or size < 2 * SPLIT_MIN_ELEMENTS:
        return (stage,)
    parts = min(-(-SPLIT_ITEMS // items), size // SPLIT_MIN_ELEMENTS, stage.length)
    chunk = -(-stage.length // parts)
    parts = -(-stage.length // chunk)
    if parts < 2:
        return (stage,)
    return Stage(stage.outer, stage.length, stage.inner, parts), Stage(stage.outer, parts, stage.inner)


def reduction_stages(shape: Sequence[int], axes: Sequence[int]) -> tuple[Stage, ...]:
    """How a reduction of `shape` over the normalized `axes` runs: one stage per
    run of adjacent reduced axes (unit axes dropped), innermost run first, each
    split in two when it has too few work items. Every stage but the last writes
    a scratch buffer in the accumulator type; the last writes the result. No
    reduced axis left: one copying stage; an empty input: one stage of length 0
    (the identity); an empty result: no stage."""
    out = numel(reduced_shape(shape, axes, False))
    if out == 0:
        return ()
    if numel(shape) == 0:
        return (Stage(out, 0, 1),)
    runs: list[tuple[bool, int]] = []  # (reduced, extent) of the maximal runs of non-unit axes
    for a, n in enumerate(shape):
        if n == 1:
            continue
        if runs and runs[-1][0] == (a in axes):
            runs[-1] = (a in axes, runs[-1][1] * n)
        else:
            runs.append((a in axes, n))
    stages: list[Stage] = []
    while any(reduced for reduced, _ in runs):
        k = max(i for i, (reduced, _) in enumerate(runs) if reduced)
        outer = numel([n for _, n in runs[:k]])
        inner = numel([n for _, n in runs[k + 1 :]])
        stages += _split(Stage(outer, runs[k][1], inner))
        del runs[k]
    return tuple(stages) or (Stage(out, 1, 1),)


class ReductionOp(TensorOp, ABC):
    """One input, one result, computed along some axes of the input."""

    ALLOWED: ClassVar[frozenset[Kind]] = REALS
    IDENTITY: ClassVar[bool] = True
    """Whether a reduction over nothing has a value (sum 0, prod 1, mean NaN)."""

    input = operand_def(TensorType)
    result = result_def(TensorType)

    def reduced_axes(self) -> tuple[int, ...]:
        """The normalized, sorted reduced axes (checked to be in range and distinct)."""
        ...

    def verify_rules(self) -> None:
        shape = shape_of(self.input.type)
        axes = self.reduced_axes()
        empty = [a for a in axes if shape[a] == 0]
        if empty and not self.IDENTITY:
            raise VerifyException(f"'{self.name}' cannot reduce the zero-size axis {empty[0]}: it has no identity")
        check_kind(self, check_value_type(self, self.input.type, "operand"), self.ALLOWED, "operand")
        self.verify_result(shape, axes)

    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        check_same_element_type(self, "result", self.result, self.input)
        check_result_shape(self, reduced_shape(shape, axes, self.keeps_dims))

    @property
    def keeps_dims(self) -> bool:
        return bool(self.keepdims.value.data)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------
# reduce_*
# ---------------------------------------------------------------------------


class ReduceOp(ReductionOp, NeedsScratch, ABC):
    """`{axes, keepdims}`: the elements along `axes` combined into one. A reduction
    that runs in several stages (`reduction_stages`) keeps the partial results
    between them in scratch buffers of the accumulator type."""

    axes = prop_def(DenseArrayBase)
    keepdims = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool, result_type: Attribute) -> None:
        props = {"axes": i64_array(axes), "keepdims": bool_attr(keepdims)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def reduced_axes(self) -> tuple[int, ...]:
        rank = len(shape_of(self.input.type))
        axes = [normalize_axis(self, a, rank, "axes entry") for a in array_values(self, "axes", self.axes)]
        if len(set(axes)) != len(axes):
            raise VerifyException(f"'{self.name}' axes {list(self.axes.get_values())} repeat an axis")
        return tuple(sorted(axes))

    def stages(self) -> tuple[Stage, ...]:
        return reduction_stages(shape_of(self.input.type), self.reduced_axes())

    def scratch_bytes(self) -> tuple[int, ...]:
        size = accumulator(dtypes.from_ir(self.input.type.get_element_type())).nbytes  # type: ignore[attr-defined]
        return tuple(stage.outputs * size for stage in self.stages()[:-1])


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """`rlx.reduce_sum`: the sum along `axes` (np.sum; integers wrap; 0 over nothing)."""

    name = "rlx.reduce_sum"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """`rlx.reduce_mean`: the mean along `axes` (np.mean; NaN over nothing)."""

    name = "rlx.reduce_mean"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.COMPLEX}


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """`rlx.reduce_prod`: the product along `axes` (np.prod; integers wrap; 1 over nothing)."""

    name = "rlx.reduce_prod"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """`rlx.reduce_max`: the maximum along `axes` (np.max; NaN propagates)."""

    name = "rlx.reduce_max"
    IDENTITY: ClassVar[bool] = False


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """`rlx.reduce_min`: the minimum along `axes` (np.min; NaN propagates)."""

    name = "rlx.reduce_min"
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
    def selects_last(self) -> bool:
        return bool(self.select_last_index.value.data)

    def reduced_axes(self) -> tuple[int, ...]:
        return (normalize_axis(self, self.axis.value.data, len(shape_of(self.input.type))),)

    def verify_result(self, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
        result = dtypes.from_ir(self.result.type.get_element_type())  # type: ignore[attr-defined]
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
