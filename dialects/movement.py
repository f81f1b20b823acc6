"""Data movement and indexing ops of the `rlx` dialect.

Attributes are properties with predictable generic forms: integers are i64
(`axis = 1 : i64`), lists are `array<i64: ...>`, `mode`/`reduction` are
strings and the pad `value` is an f64. Every op infers its result shape from
its operands and attributes; a result type that disagrees is a diagnostic
showing both shapes.

```mlir
%t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
%g = rlx.gather %table, %ids {axis = 0 : i64} : (tensor<100x64xf32>, tensor<8xi64>) -> tensor<8x64xf32>
%p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>, mode = "reflect", value = 0.0 : f64}
       : (tensor<3x4xf32>) -> tensor<5x6xf32>
```

Index semantics (all gather/scatter ops): indices are i32 or i64; an index in
[-n, -1] counts from the end (NumPy/ONNX); anything else out of range raises
IndexError from the compiled function (checked inside the kernel).
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, get_args

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import index_maps
from rlx_mlir.broadcast import broadcasts_to
from rlx_mlir.dialects.common import (
    TensorOp,
    array_values,
    check_index_type,
    check_kind,
    check_result_shape,
    check_same_element_type,
    check_value_type,
    i64_array,
    i64_attr,
    normalize_axis,
    shape_of,
)
from rlx_mlir.dialects.elementwise import AddOp, BinaryOp, MaxOp, MinOp, MulOp
from rlx_mlir.index_maps import Access

PAD_MODES = ("constant", "replicate", "circular", "reflect")
REDUCTIONS: dict[str, type[BinaryOp] | None] = {"none": None, "add": AddOp, "mul": MulOp, "max": MaxOp, "min": MinOp}
"""A scatter's `reduction`: the binary op combining an update with the old value (none: it replaces it)."""


# ---------------------------------------------------------------------------
# result shapes (shared by the verifiers and rlx_mlir.Builder)
# ---------------------------------------------------------------------------


def transposed_shape(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(shape[a] for a in perm)


def narrowed_shape(shape: Sequence[int], axis: int, length: int) -> tuple[int, ...]:
    return tuple(length if a == axis else n for a, n in enumerate(shape))


def padded_shape(shape: Sequence[int], before: Sequence[int], after: Sequence[int]) -> tuple[int, ...]:
    return tuple(n + b + a for n, b, a in zip(shape, before, after))


def gathered_shape(data: Sequence[int], indices: Sequence[int], axis: int) -> tuple[int, ...]:
    return tuple(data[:axis]) + tuple(indices) + tuple(data[axis + 1 :])


def gathered_nd_shape(data: Sequence[int], indices: Sequence[int], batch_dims: int) -> tuple[int, ...]:
    return tuple(indices[:-1]) + tuple(data[batch_dims + indices[-1] :])


def concatenated_shape(shapes: Sequence[Sequence[int]], axis: int) -> tuple[int, ...]:
    """Inputs aligned to the trailing axes; lower-rank ones broadcast; extents add up on `axis`."""
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    total = 0
    for shape in shapes:
        lead = rank - len(shape)
        total += shape[axis - lead] if axis >= lead else 1
        for a, n in enumerate(shape):
            if a + lead != axis and n != 1:
                out[a + lead] = n
    out[axis] = total
    return tuple(out)


class _LayoutCanonicalization(HasCanonicalizationPatternsTrait):
    """Points xDSL's `canonicalize` at the patterns at the end of this module."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (
            FoldTransposeChain(),
            RemoveIdentityTranspose(),
            FoldReverseChain(),
            RemoveIdentityReverse(),
            RemoveIdentitySlice(),
            RemoveZeroPad(),
        )


class MovementOp(TensorOp, ABC):
    """Data movement and indexing: the common verifier skeleton of `TensorOp`."""


# ---------------------------------------------------------------------------
# layout: transpose, slice, narrow, reverse, pad, concat
# ---------------------------------------------------------------------------


class LayoutOp(MovementOp, ABC):
    """One input rearranged into a result of the same element type."""

    traits = traits_def(Pure(), _LayoutCanonicalization())
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def verify_rules(self) -> None:
        check_same_element_type(self, "result", self.result, self.input)
        self.verify_layout()

    def verify_layout(self) -> None: ...


@irdl_op_definition
class TransposeOp(LayoutOp):
    """`rlx.transpose {perm}`: result axis k is input axis perm[k] (np.transpose)."""

    name = "rlx.transpose"
    perm = prop_def(DenseArrayBase)

    def __init__(self, input: SSAValue, perm: Sequence[int], result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type], properties={"perm": i64_array(perm)})

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(self.perm.get_values())

    def input_map(self) -> tuple[Access, ...]:
        """Where result index d reads the input (see `index_maps`)."""
        return index_maps.transpose(self.permutation)

    def verify_layout(self) -> None:
        shape = shape_of(self.input.type)
        perm = array_values(self, "perm", self.perm, len(shape))
        if sorted(perm) != list(range(len(shape))):
            raise VerifyException(f"'{self.name}' perm {list(perm)} is not a permutation of 0..{len(shape) - 1}")
        check_result_shape(self, transposed_shape(shape, perm))


@irdl_op_definition
class SliceOp(LayoutOp):
    """`rlx.slice {starts, steps}`: result[i] = input[starts + steps * i] per axis;
    the result type gives the lengths. Negative steps walk backwards; a negative
    start counts from the end."""

    name = "rlx.slice"
    starts = prop_def(DenseArrayBase)
    steps = prop_def(DenseArrayBase)

    def __init__(self, input: SSAValue, starts: Sequence[int], steps: Sequence[int], result_type: Attribute) -> None:
        props = {"starts": i64_array(starts), "steps": i64_array(steps)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def normalized_starts(self) -> tuple[int, ...]:
        shape = shape_of(self.input.type)
        return tuple(s + n if s < 0 else s for s, n in zip(self.starts.get_values(), shape))

    def step_values(self) -> tuple[int, ...]:
        return tuple(self.steps.get_values())

    def input_map(self) -> tuple[Access, ...]:
        return index_maps.strided(self.normalized_starts(), self.step_values())

    def verify_layout(self) -> None:
        shape = shape_of(self.input.type)
        array_values(self, "starts", self.starts, len(shape))
        steps = array_values(self, "steps", self.steps, len(shape))
        lengths = shape_of(self.result.type)
        if len(lengths) != len(shape):
            raise VerifyException(f"'{self.name}' result rank {len(lengths)} must equal the input rank {len(shape)}")
        for axis, (start, step, length, size) in enumerate(zip(self.normalized_starts(), steps, lengths, shape)):
            if step == 0:
                raise VerifyException(f"'{self.name}' step on axis {axis} must not be 0")
            if length == 0:
                continue
            last = start + step * (length - 1)
            if not (0 <= start < size and 0 <= last < size):
                raise VerifyException(
                    f"'{self.name}' axis {axis} reads indices {start}..{last} (step {step}) of a dimension of size {size}"
                )


@irdl_op_definition
class NarrowOp(LayoutOp):
    """`rlx.narrow {axis, start, length}`: input[..., start:start+length, ...] on one axis."""

    name = "rlx.narrow"
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    length = prop_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue, axis: int, start: int, length: int, result_type: Attribute) -> None:
        props = {"axis": i64_attr(axis), "start": i64_attr(start), "length": i64_attr(length)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def input_map(self) -> tuple[Access, ...]:
        rank = len(shape_of(self.input.type))
        axis = normalize_axis(self, self.axis.value.data, rank)
        starts = [self.start.value.data if a == axis else 0 for a in range(rank)]
        return index_maps.strided(starts, [1] * rank)

    def verify_layout(self) -> None:
        shape = shape_of(self.input.type)
        axis = normalize_axis(self, self.axis.value.data, len(shape))
        start, length = self.start.value.data, self.length.value.data
        if start < 0 or length < 0 or start + length > shape[axis]:
            raise VerifyException(
                f"'{self.name}' start {start} and length {length} do not fit axis {axis} of size {shape[axis]}"
            )
        check_result_shape(self, narrowed_shape(shape, axis, length))


@irdl_op_definition
class ReverseOp(LayoutOp):
    """`rlx.reverse {axes}`: flip the listed axes (np.flip)."""

    name = "rlx.reverse"
    axes = prop_def(DenseArrayBase)

    def __init__(self, input: SSAValue, axes: Sequence[int], result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type], properties={"axes": i64_array(axes)})

    def normalized_axes(self) -> tuple[int, ...]:
        rank = len(shape_of(self.input.type))
        return tuple(sorted({normalize_axis(self, a, rank) for a in self.axes.get_values()}))

    def input_map(self) -> tuple[Access, ...]:
        shape, flipped = shape_of(self.input.type), self.normalized_axes()
        starts = [n - 1 if a in flipped else 0 for a, n in enumerate(shape)]
        return index_maps.strided(starts, [-1 if a in flipped else 1 for a in range(len(shape))])

    def verify_layout(self) -> None:
        array_values(self, "axes", self.axes)
        axes = [normalize_axis(self, a, len(shape_of(self.input.type))) for a in self.axes.get_values()]
        if len(set(axes)) != len(axes):
            raise VerifyException(f"'{self.name}' axes {list(self.axes.get_values())} repeat an axis")
        check_result_shape(self, shape_of(self.input.type))


@irdl_op_definition
class PadOp(LayoutOp):
    """`rlx.pad {before, after, mode, value}`; modes `constant replicate circular
    reflect` are np.pad's `constant edge wrap reflect` (any pad width)."""

    name = "rlx.pad"
    before = prop_def(DenseArrayBase)
    after = prop_def(DenseArrayBase)
    mode = prop_def(StringAttr, default_value=StringAttr("constant"))
    value = prop_def(FloatAttr[Float64Type], default_value=FloatAttr(0.0, Float64Type()))

    def __init__(
        self,
        input: SSAValue,
        before: Sequence[int],
        after: Sequence[int],
        mode: str,
        value: float,
        result_type: Attribute,
    ) -> None:
        props = {
            "before": i64_array(before),
            "after": i64_array(after),
            "mode": StringAttr(mode),
            "value": FloatAttr(value, Float64Type()),
        }
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    def widths(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(self.before.get_values()), tuple(self.after.get_values())

    def verify_layout(self) -> None:
        shape = shape_of(self.input.type)
        before = array_values(self, "before", self.before, len(shape))
        after = array_values(self, "after", self.after, len(shape))
        mode = self.mode.data
        if mode not in PAD_MODES:
            raise VerifyException(f"'{self.name}' mode \"{mode}\" is not one of {', '.join(PAD_MODES)}")
        for axis, (b, a, n) in enumerate(zip(before, after, shape)):
            if b < 0 or a < 0:
                raise VerifyException(f"'{self.name}' pad widths must be >= 0 (axis {axis} has {b}, {a})")
            if (b or a) and mode != "constant" and n < (2 if mode == "reflect" else 1):
                raise VerifyException(f"'{self.name}' mode \"{mode}\" cannot pad axis {axis} of size {n}")
        check_result_shape(self, padded_shape(shape, before, after))


@irdl_op_definition
class ConcatOp(MovementOp):
    """`rlx.concat {axis}` of any number of inputs of one element type.

    An input of lower rank is aligned to the trailing axes of the result and
    broadcast along the others (its extent on `axis` is its own, or 1 if it
    has no such axis) - the reference runtime's outer-dim broadcast, e.g. a
    [1, D] class token concatenated to every [T, D] row block of [B, T, D].
    """

    name = "rlx.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    def __init__(self, inputs: Sequence[SSAValue], axis: int, result_type: Attribute) -> None:
        super().__init__(operands=[list(inputs)], result_types=[result_type], properties={"axis": i64_attr(axis)})

    def normalized_axis(self) -> int:
        return normalize_axis(self, self.axis.value.data, len(shape_of(self.result.type)))

    def extent(self, value: SSAValue) -> int:
        """How many result positions along `axis` this input fills."""
        shape, rank = shape_of(value.type), len(shape_of(self.result.type))
        local = self.normalized_axis() - (rank - len(shape))
        return shape[local] if local >= 0 else 1

    def verify_rules(self) -> None:
        if not self.inputs:
            raise VerifyException(f"'{self.name}' needs at least one input")
        out = shape_of(self.result.type)
        axis = self.normalized_axis()
        for k, value in enumerate(self.inputs):
            check_same_element_type(self, f"input #{k}", value, self.result)
            shape = shape_of(value.type)
            if len(shape) > len(out):
                raise VerifyException(f"'{self.name}' input #{k} has rank {len(shape)} above the result's {len(out)}")
            target = list(out)
            target[axis] = self.extent(value)
            lead = len(out) - len(shape)
            padded = (1,) * lead + shape
            if not broadcasts_to(padded, target) or padded[axis] != target[axis]:
                raise VerifyException(
                    f"'{self.name}' input #{k} of shape {list(shape)} does not fit the result {list(out)} on axis {axis}"
                )
        total = sum(self.extent(v) for v in self.inputs)
        if total != out[axis]:
            raise VerifyException(
                f"'{self.name}' inputs fill {total} positions on axis {axis}, the result has {out[axis]}"
            )


# ---------------------------------------------------------------------------
# gathers
# ---------------------------------------------------------------------------


class IndexedOp(MovementOp, ABC):
    """Gathers and scatters: an `indices` operand of i32/i64."""

    if TYPE_CHECKING:  # what every subclass declares, in its own operand order
        indices: SSAValue

    def verify_rules(self) -> None:
        check_index_type(self, self.indices)
        self.verify_shapes()

    def verify_shapes(self) -> None: ...


class AxisIndexedOp(IndexedOp, ABC):
    """An indexed op working along one `axis` of its data (or, for
    gather_backward, of its result)."""

    axis = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    if TYPE_CHECKING:  # declared by each subclass but gather_backward, which overrides axis_rank
        data: SSAValue

    def axis_rank(self) -> int:
        return len(shape_of(self.data.type))

    def normalized_axis(self) -> int:
        return normalize_axis(self, self.axis.value.data, self.axis_rank())


@irdl_op_definition
class GatherOp(AxisIndexedOp):
    """`rlx.gather {axis}` (data, indices): np.take(data, indices, axis); the result
    shape is data[:axis] + indices.shape + data[axis+1:]."""

    name = "rlx.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int, result_type: Attribute) -> None:
        super().__init__(operands=[data, indices], result_types=[result_type], properties={"axis": i64_attr(axis)})

    def verify_shapes(self) -> None:
        data = shape_of(self.data.type)
        axis = self.normalized_axis()
        check_same_element_type(self, "result", self.result, self.data)
        check_result_shape(self, gathered_shape(data, shape_of(self.indices.type), axis))


@irdl_op_definition
class GatherElementsOp(AxisIndexedOp):
    """`rlx.gather_elements {axis}` (data, indices): np.take_along_axis; indices have
    data's rank and at most its extent on every other axis; result shape = indices shape."""

    name = "rlx.gather_elements"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int, result_type: Attribute) -> None:
        super().__init__(operands=[data, indices], result_types=[result_type], properties={"axis": i64_attr(axis)})

    def verify_shapes(self) -> None:
        data, indices = shape_of(self.data.type), shape_of(self.indices.type)
        axis = self.normalized_axis()
        if len(indices) != len(data):
            raise VerifyException(f"'{self.name}' indices rank {len(indices)} must equal the data rank {len(data)}")
        for d, (n, m) in enumerate(zip(data, indices)):
            if d != axis and m > n:
                raise VerifyException(f"'{self.name}' indices extent {m} on axis {d} exceeds the data's {n}")
        check_same_element_type(self, "result", self.result, self.data)
        check_result_shape(self, indices)


@irdl_op_definition
class GatherNdOp(IndexedOp):
    """`rlx.gather_nd {batch_dims}` (data, indices): ONNX GatherND. The last indices
    axis holds k coordinates into data[batch_dims:]; the result shape is
    indices.shape[:-1] + data.shape[batch_dims + k:]."""

    name = "rlx.gather_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))

    def __init__(self, data: SSAValue, indices: SSAValue, batch_dims: int, result_type: Attribute) -> None:
        props = {"batch_dims": i64_attr(batch_dims)}
        super().__init__(operands=[data, indices], result_types=[result_type], properties=props)

    def verify_shapes(self) -> None:
        data, indices = shape_of(self.data.type), shape_of(self.indices.type)
        b = self.batch_dims.value.data
        if not indices:
            raise VerifyException(f"'{self.name}' indices must have rank >= 1")
        k = indices[-1]
        if b < 0 or b >= len(indices) or b > len(data):
            raise VerifyException(f"'{self.name}' batch_dims {b} is out of range")
        if indices[:b] != data[:b]:
            raise VerifyException(
                f"'{self.name}' batch dims of indices {list(indices[:b])} and data {list(data[:b])} differ"
            )
        if k < 1 or b + k > len(data):
            raise VerifyException(
                f"'{self.name}' {k} coordinates per index do not fit data of rank {len(data)} after {b} batch dims"
            )
        check_same_element_type(self, "result", self.result, self.data)
        check_result_shape(self, gathered_nd_shape(data, indices, b))


@irdl_op_definition
class GatherBackwardOp(AxisIndexedOp):
    """`rlx.gather_backward {axis}` (dy, indices): the adjoint of gather, zeros of
    the result type with `np.add.at` of dy at the gathered positions."""

    name = "rlx.gather_backward"
    dy = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, dy: SSAValue, indices: SSAValue, axis: int, result_type: Attribute) -> None:
        super().__init__(operands=[dy, indices], result_types=[result_type], properties={"axis": i64_attr(axis)})

    def axis_rank(self) -> int:
        return len(shape_of(self.result.type))

    def verify_shapes(self) -> None:
        out = shape_of(self.result.type)
        axis = self.normalized_axis()
        expected = out[:axis] + shape_of(self.indices.type) + out[axis + 1 :]
        if shape_of(self.dy.type) != expected:
            raise VerifyException(
                f"'{self.name}' dy shape {list(shape_of(self.dy.type))} does not match the expected shape {list(expected)}"
            )
        check_same_element_type(self, "result", self.result, self.dy)
        check_kind(self, check_value_type(self, self.dy.type, "dy"), AddOp.ALLOWED, "dy")


# ---------------------------------------------------------------------------
# scatters
# ---------------------------------------------------------------------------


class ReducingScatter(IndexedOp, ABC):
    if TYPE_CHECKING:  # what every subclass declares, in its own order
        data: SSAValue
        reduction: StringAttr

    def check_reduction(self) -> str:
        """One of REDUCTIONS, and (but for none) defined on the element type as the rlx op of that name."""
        reduction = self.reduction.data
        if reduction not in REDUCTIONS:
            raise VerifyException(f"'{self.name}' reduction \"{reduction}\" is not one of {', '.join(REDUCTIONS)}")
        combine = REDUCTIONS[reduction]
        if combine is not None:
            dtype = check_value_type(self, self.data.type, "data")
            check_kind(self, dtype, combine.ALLOWED, f'reduction "{reduction}" data')
        return reduction

    @property
    def combine(self) -> type[BinaryOp] | None:
        """The rlx op that merges an update into the old value, or None (the update replaces it)."""
        return REDUCTIONS[self.reduction.data]


@irdl_op_definition
class ScatterAddOp(IndexedOp):
    """`rlx.scatter_add` (updates [N, ...], indices [N]) -> [M, ...]: zeros, then
    row indices[i] += updates[i]."""

    name = "rlx.scatter_add"
    updates = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(self, updates: SSAValue, indices: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[updates, indices], result_types=[result_type])

    def verify_shapes(self) -> None:
        updates, indices, out = shape_of(self.updates.type), shape_of(self.indices.type), shape_of(self.result.type)
        if len(indices) != 1 or not updates or updates[0] != indices[0]:
            raise VerifyException(
                f"'{self.name}' needs indices [N] for updates [N, ...], got {list(indices)} and {list(updates)}"
            )
        if not out or out[1:] != updates[1:]:
            raise VerifyException(f"'{self.name}' result shape {list(out)} must be [M] + {list(updates[1:])}")
        check_same_element_type(self, "result", self.result, self.updates)
        check_kind(self, check_value_type(self, self.updates.type, "updates"), AddOp.ALLOWED, "updates")


@irdl_op_definition
class ScatterNdOp(ReducingScatter):
    """`rlx.scatter_nd {reduction}` (data, indices, updates): ONNX ScatterND; the result
    is data with updates applied at the index tuples, in order."""

    name = "rlx.scatter_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    reduction = prop_def(StringAttr, default_value=StringAttr("none"))

    def __init__(
        self, data: SSAValue, indices: SSAValue, updates: SSAValue, reduction: str, result_type: Attribute
    ) -> None:
        props = {"reduction": StringAttr(reduction)}
        super().__init__(operands=[data, indices, updates], result_types=[result_type], properties=props)

    def verify_shapes(self) -> None:
        self.check_reduction()
        data, indices, updates = (shape_of(v.type) for v in (self.data, self.indices, self.updates))
        if not indices or not 1 <= indices[-1] <= len(data):
            raise VerifyException(f"'{self.name}' indices {list(indices)} must end in 1..{len(data)} coordinates")
        expected = indices[:-1] + data[indices[-1] :]
        if updates != expected:
            raise VerifyException(
                f"'{self.name}' updates shape {list(updates)} does not match the expected shape {list(expected)}"
            )
        check_same_element_type(self, "updates", self.updates, self.data)
        check_same_element_type(self, "result", self.result, self.data)
        check_result_shape(self, data)


@irdl_op_definition
class ScatterElementsOp(ReducingScatter, AxisIndexedOp):
    """`rlx.scatter_elements {axis, reduction}` (data, indices, updates): ONNX
    ScatterElements; indices and updates share a shape of data's rank."""

    name = "rlx.scatter_elements"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    result = result_def(TensorType)
    reduction = prop_def(StringAttr, default_value=StringAttr("none"))

    def __init__(
        self, data: SSAValue, indices: SSAValue, updates: SSAValue, axis: int, reduction: str, result_type: Attribute
    ) -> None:
        props = {"axis": i64_attr(axis), "reduction": StringAttr(reduction)}
        super().__init__(operands=[data, indices, updates], result_types=[result_type], properties=props)

    def verify_shapes(self) -> None:
        self.check_reduction()
        data, indices, updates = (shape_of(v.type) for v in (self.data, self.indices, self.updates))
        axis = self.normalized_axis()
        if indices != updates or len(indices) != len(data):
            raise VerifyException(
                f"'{self.name}' indices {list(indices)} and updates {list(updates)} must share a shape of rank {len(data)}"
            )
        for d, (n, m) in enumerate(zip(data, indices)):
            if d != axis and m > n:
                raise VerifyException(f"'{self.name}' indices extent {m} on axis {d} exceeds the data's {n}")
        check_same_element_type(self, "updates", self.updates, self.data)
        check_same_element_type(self, "result", self.result, self.data)
        check_result_shape(self, data)


LAYOUT_OPS = (TransposeOp, SliceOp, NarrowOp, ReverseOp, PadOp, ConcatOp)
IndexMapOp: TypeAlias = TransposeOp | SliceOp | NarrowOp | ReverseOp
"""Ops whose every result element is one input element at an affine index (`input_map`)."""
INDEX_MAP_OPS: tuple[type[IndexMapOp], ...] = get_args(IndexMapOp)
"""The same ops as a tuple of classes."""
INDEXED_OPS = (GatherOp, GatherElementsOp, GatherNdOp, GatherBackwardOp, ScatterAddOp, ScatterNdOp, ScatterElementsOp)
MOVEMENT_OPS = (*LAYOUT_OPS, *INDEXED_OPS)


# ---------------------------------------------------------------------------
# canonicalization patterns (run by xDSL's `canonicalize`, as MLIR keeps them
# beside the ops):
# - transpose(transpose(x)) is one transpose, or x when the perms cancel;
# - reverse(reverse(x)) reverses the symmetric difference of the axes, or is x;
# - a transpose by the identity, a full unit-step slice or narrow, a zero pad
#   and a reverse of no axes (or only of size-1 axes) are x.
# ---------------------------------------------------------------------------


class FoldTransposeChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        outer_perm, inner_perm = op.permutation, inner.permutation
        combined = [inner_perm[axis] for axis in outer_perm]
        if combined == sorted(combined):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, TransposeOp(inner.input, combined, op.result.type))


class RemoveIdentityTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        if list(op.permutation) == list(range(len(op.permutation))):
            rewriter.replace(op, [], [op.input])


class FoldReverseChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReverseOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, ReverseOp):
            return
        axes = sorted(set(op.normalized_axes()) ^ set(inner.normalized_axes()))
        if axes:
            rewriter.replace(op, ReverseOp(inner.input, axes, op.result.type))
        else:
            rewriter.replace(op, [], [inner.input])


class RemoveIdentityReverse(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReverseOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.input.type)
        if all(shape[a] <= 1 for a in op.normalized_axes()):
            rewriter.replace(op, [], [op.input])


class RemoveIdentitySlice(RewritePattern):
    """A slice or narrow that reads every element in order is its input."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (SliceOp, NarrowOp)) or op.input.type != op.result.type:
            return
        shape = shape_of(op.input.type)
        if all(a.offset == 0 and (a.scale == 1 or n <= 1) for a, n in zip(op.input_map(), shape)):
            rewriter.replace(op, [], [op.input])


class RemoveZeroPad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        before, after = op.widths()
        if not any(before) and not any(after):
            rewriter.replace(op, [], [op.input])
