"""autodiff: turn every function into its vector-Jacobian product (reverse mode).

```mlir
// rlx-opt -p 'autodiff{wrt=0}'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {          // y = tanh(x)
  %y = rlx.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// becomes
func.func @f(%x: tensor<4xf32>, %d_y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %y = rlx.tanh %x : (tensor<4xf32>) -> tensor<4xf32>
  %0 = rlx.activation_backward %x, %d_y {kind = "tanh"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y, %0 : tensor<4xf32>, tensor<4xf32>
}
```

Conventions:
- Inputs: the original inputs, then one cotangent per output (the output's
  type). Outputs: the original outputs, then one gradient per `wrt` argument,
  in `wrt` order. A cotangent of a non-float output is accepted and unused
  (an i1 mask or an argmax has no derivative to seed).
- `wrt` lists argument positions or names (`%x` -> "x", as rlx-opt prints
  the arguments: `argument_names`); empty means every float argument.
- Only values that depend on a `wrt` argument (the forward "active" set)
  receive cotangents, so an op without an adjoint is an error only if a
  gradient must flow through it to reach a `wrt` argument. Gradients of
  several uses are summed with `rlx.add`; a `wrt` argument nothing reaches
  gets zeros. The backward ops are appended after the forward ones, then
  common-subexpression and dead-code elimination merge duplicates and drop
  whatever no output needs.
- Adjoints are ordinary rlx ops (`activation_backward`, `reduce_sum` to undo
  broadcasting, `gather_backward`, `matmul` with transpose flags, ...), one
  small function per op class in `ADJOINTS`, so the result fuses and plans
  like any other graph.
- Linearization points where the derivative is not unique: `max`/`min` send
  the gradient to the lhs on ties; `reduce_max`/`reduce_min` split it evenly
  among tied maxima (PyTorch's amax); `round` passes it through (the
  straight-through convention of `activation_backward`); scatters with
  `reduction = "none"` assume their indices are unique (as PyTorch's
  scatter); `reduce_prod` divides by its input (zeros give inf/NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, DenseIntOrFPElementsAttr, ModuleOp, TensorType, i1, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes, numel
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects import scan as sc
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.verification import function_block

Cotangents = Iterator[tuple[SSAValue, SSAValue]]
"""What an adjoint yields: (operand, its cotangent contribution), for the operands it was asked for."""


def is_float(value: SSAValue) -> bool:
    """A real floating-point tensor: the only values gradients flow into."""
    dtype = dtypes.lookup(element_type(value.type))
    return dtype is not None and dtype.kind is Kind.FLOAT


def argument_names(function: func.FuncOp) -> list[str | None]:
    """The arguments' names as printed: their name hints, with `_1`, `_2`, ... on
    repeats (xDSL's parser keeps `%x_1` as the hint "x" and its printer adds the
    suffix back), so a name from the IR text finds its argument."""
    seen: dict[str, int] = {}
    names: list[str | None] = []
    for arg in function_block(function).args:
        hint = arg.name_hint
        if hint is None:
            names.append(None)
            continue
        names.append(f"{hint}_{seen[hint]}" if seen.get(hint) else hint)
        seen[hint] = seen.get(hint, 0) + 1
    return names


def resolve_wrt(function: func.FuncOp, wrt: Sequence[int | str]) -> list[int]:
    """Argument positions for `wrt` (positions or names; empty = every float
    argument); ValueError says which entry is bad."""
    args = function_block(function).args
    name = function.sym_name.data
    if not wrt:
        return [a.index for a in args if is_float(a)]
    names = argument_names(function)
    positions: list[int] = []
    for entry in wrt:
        if isinstance(entry, str):
            if entry not in names:
                known = ", ".join(f"'{n}'" for n in names if n) or "none"
                raise ValueError(f"@{name} has no argument named '{entry}' (named arguments: {known})")
            position = names.index(entry)
        else:
            position = entry
            if not 0 <= position < len(args):
                raise ValueError(f"wrt position {position} is out of range: @{name} has {len(args)} arguments")
        if not is_float(args[position]):
            raise ValueError(
                f"cannot differentiate @{name} with respect to argument {position} of type {args[position].type} "
                "(not a float tensor)"
            )
        if position in positions:
            raise ValueError(f"wrt lists argument {position} of @{name} twice")
        positions.append(position)
    return positions


class NoAdjoint(Exception):
    """A gradient must flow through an op that has none (as the pass reports it)."""


class ScanCheckpointing(Enum):
    """How a differentiated scan keeps its carries for the backward: every one,
    or ceil(sqrt(length)) checkpoints with the `segments` or `griewank`
    recompute of `rlx.scan_backward` (the same gradients, bit for bit). Its
    own name, apart from the number of checkpoints a scan saves."""

    ALL = "all"
    SEGMENTS = "segments"
    GRIEWANK = "griewank"

    @classmethod
    def spellings(cls) -> tuple[str, ...]:
        """The values the `checkpoints` option accepts, in order."""
        return tuple(mode.value for mode in cls)


# ---------------------------------------------------------------------------
# the backward graph builder: ops appended before the function's return
# ---------------------------------------------------------------------------


class Backward:
    """Emits the backward ops of one function (before its return) and holds
    the accumulated cotangent of every active value."""

    def __init__(
        self,
        block: Block,
        before: Operation,
        active: set[SSAValue],
        checkpointing: ScanCheckpointing = ScanCheckpointing.ALL,
    ) -> None:
        self.block = block
        self.before = before
        self.active = active
        self.checkpointing = checkpointing
        """How the scans differentiated here keep their carries."""
        self.cotangent: dict[SSAValue, SSAValue] = {}

    def wants(self, value: SSAValue) -> bool:
        """Whether `value` needs a cotangent: it depends on a `wrt` argument."""
        return value in self.active

    def accumulate(self, value: SSAValue, cotangent: SSAValue) -> None:
        old = self.cotangent.get(value)
        self.cotangent[value] = cotangent if old is None else self.binary(ew.AddOp, old, cotangent)

    def emit(self, op: Operation) -> SSAValue:
        self.block.insert_op_before(op, self.before)
        return op.results[0]

    # constants ------------------------------------------------------------
    def constant(self, value: float, t: Attribute) -> SSAValue:
        """`value` splat over the float tensor type `t` (a gradient's type)."""
        assert isinstance(t, TensorType) and isinstance(t.element_type, AnyFloat), f"not a float tensor: {t}"
        return self.emit(rlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [value])))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant of `like`'s element type (broadcasts in any binary op)."""
        return self.constant(value, TensorType(element_type(like.type), []))

    def zeros(self, like: SSAValue) -> SSAValue:
        return self.constant(0.0, like.type)

    def indices(self, values: np.ndarray) -> SSAValue:
        t = TensorType(i64, list(values.shape))
        return self.emit(rlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, values.reshape(-1).tolist())))

    # elementwise ----------------------------------------------------------
    def _type(self, *values: SSAValue, element: Attribute | None = None) -> TensorType:
        shape = broadcast_shapes(*(shape_of(v.type) for v in values))
        assert shape is not None, "operands of a verified op broadcast"
        return TensorType(element or element_type(values[-1].type), list(shape))

    def binary(self, cls: type[ew.BinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(cls(a, b, self._type(a, b)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ew.AddOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ew.MulOp, a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(ew.DivOp, a, b)

    def neg(self, a: SSAValue) -> SSAValue:
        return self.emit(ew.NegOp(a))

    def compare(self, cls: type[ew.CompareOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(cls(a, b, self._type(a, b, element=i1)))

    def where(self, condition: SSAValue, t: SSAValue, f: SSAValue) -> SSAValue:
        return self.emit(ew.WhereOp(condition, t, f, self._type(condition, t, f, element=element_type(t.type))))

    def cast(self, x: SSAValue, element: Attribute) -> SSAValue:
        return self.emit(ew.CastOp(x, TensorType(element, list(shape_of(x.type)))))

    # shapes ---------------------------------------------------------------
    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        if shape_of(x.type) == tuple(shape):
            return x
        return self.emit(rlx.ReshapeOp(x, TensorType(element_type(x.type), list(shape))))

    def reduce_sum(self, x: SSAValue, axes: Sequence[int], keepdims: bool) -> SSAValue:
        shape = rd.reduced_shape(shape_of(x.type), axes, keepdims)
        return self.emit(rd.ReduceSumOp(x, axes, keepdims, TensorType(element_type(x.type), list(shape))))

    def unbroadcast(self, g: SSAValue, like: SSAValue) -> SSAValue:
        """Sum `g` over the axes NumPy broadcasting added or stretched to reach
        its shape from `like`'s: the adjoint of broadcasting."""
        g_shape, shape = shape_of(g.type), shape_of(like.type)
        lead = len(g_shape) - len(shape)
        axes = [*range(lead), *(lead + a for a, n in enumerate(shape) if n == 1 and g_shape[lead + a] != 1)]
        if axes:
            g = self.reduce_sum(g, axes, keepdims=False)
        return self.reshape(g, shape)

    def expand(self, g: SSAValue, like: SSAValue) -> SSAValue:
        if g.type == like.type:
            return g
        return self.emit(rlx.ExpandOp(g, TensorType(element_type(g.type), list(shape_of(like.type)))))

    def pad(self, g: SSAValue, before: Sequence[int], after: Sequence[int]) -> SSAValue:
        """Zeros around `g` (the adjoint of taking a box out of a tensor)."""
        if not any(before) and not any(after):
            return g
        shape = mv.padded_shape(shape_of(g.type), before, after)
        return self.emit(mv.PadOp(g, before, after, "constant", 0.0, TensorType(element_type(g.type), list(shape))))

    def narrow(self, g: SSAValue, axis: int, start: int, length: int) -> SSAValue:
        shape = mv.narrowed_shape(shape_of(g.type), axis, length)
        return self.emit(mv.NarrowOp(g, axis, start, length, TensorType(element_type(g.type), list(shape))))

    def matmul(self, a: SSAValue, b: SSAValue, transpose_a: bool, transpose_b: bool) -> SSAValue:
        shape = ct.matmul_shape(shape_of(a.type), shape_of(b.type), transpose_a, transpose_b)
        return self.emit(ct.MatmulOp(a, b, TensorType(element_type(a.type), list(shape)), transpose_a, transpose_b))


# ---------------------------------------------------------------------------
# adjoints, one per op class: (backward, op, cotangent of op's result) -> cotangents
# ---------------------------------------------------------------------------


def _unary(b: Backward, op: ew.UnaryOp, g: SSAValue) -> Cotangents:
    kind = op.name.removeprefix("rlx.")
    yield op.input, b.emit(ew.ActivationBackwardOp(op.input, g, kind, op.result.type))


def _relu(b: Backward, op: ew.ReluOp, g: SSAValue) -> Cotangents:
    yield op.input, b.emit(ew.ReluBackwardOp(op.input, g, op.result.type))


def _each(b: Backward, pairs: Sequence[tuple[SSAValue, SSAValue]]) -> Cotangents:
    """The wanted operands' cotangents, unbroadcast to the operand's shape. (The
    others were built for nothing: dead-code elimination drops them.)"""
    for operand, cotangent in pairs:
        if b.wants(operand):
            yield operand, b.unbroadcast(cotangent, operand)


def _add(b: Backward, op: ew.AddOp, g: SSAValue) -> Cotangents:
    return _each(b, [(op.lhs, g), (op.rhs, g)])


def _sub(b: Backward, op: ew.SubOp, g: SSAValue) -> Cotangents:
    return _each(b, [(op.lhs, g), (op.rhs, b.neg(g))])


def _mul(b: Backward, op: ew.MulOp, g: SSAValue) -> Cotangents:
    return _each(b, [(op.lhs, b.mul(g, op.rhs)), (op.rhs, b.mul(g, op.lhs))])


def _div(b: Backward, op: ew.DivOp, g: SSAValue) -> Cotangents:
    # d(a/b)/db = -a/b^2 = -y/b
    return _each(b, [(op.lhs, b.div(g, op.rhs)), (op.rhs, b.neg(b.div(b.mul(g, op.result), op.rhs)))])


def _mod(b: Backward, op: ew.ModOp, g: SSAValue) -> Cotangents:
    # fmod(a, b) = a - trunc(a/b) b, and trunc(a/b) = (a - y)/b
    quotient = b.div(b.binary(ew.SubOp, op.lhs, op.result), op.rhs)
    return _each(b, [(op.lhs, g), (op.rhs, b.neg(b.mul(g, quotient)))])


def _select(b: Backward, op: ew.BinaryOp, g: SSAValue, to_lhs: type[ew.CompareOp]) -> Cotangents:
    """max/min: the gradient goes to the operand that was chosen (the lhs on ties)."""
    zero, mask = b.scalar(0.0, g), b.compare(to_lhs, op.lhs, op.rhs)
    return _each(b, [(op.lhs, b.where(mask, g, zero)), (op.rhs, b.where(mask, zero, g))])


def _max(b: Backward, op: ew.MaxOp, g: SSAValue) -> Cotangents:
    return _select(b, op, g, ew.GeOp)


def _min(b: Backward, op: ew.MinOp, g: SSAValue) -> Cotangents:
    return _select(b, op, g, ew.LeOp)


def _pow(b: Backward, op: ew.PowOp, g: SSAValue) -> Cotangents:
    # d(a^e)/da = e a^(e-1); d(a^e)/de = a^e log a
    base, exponent = op.lhs, op.rhs
    lowered = b.binary(ew.SubOp, exponent, b.scalar(1.0, exponent))
    d_base = b.mul(g, b.mul(exponent, b.binary(ew.PowOp, base, lowered)))
    return _each(b, [(base, d_base), (exponent, b.mul(b.mul(g, op.result), b.emit(ew.LogOp(base))))])


def _atan2(b: Backward, op: ew.Atan2Op, g: SSAValue) -> Cotangents:
    # atan2(a, c): d/da = c / (a^2 + c^2), d/dc = -a / (a^2 + c^2)
    a, c = op.lhs, op.rhs
    scaled = b.div(g, b.add(b.mul(a, a), b.mul(c, c)))
    return _each(b, [(a, b.mul(scaled, c)), (c, b.neg(b.mul(scaled, a)))])


def _where(b: Backward, op: ew.WhereOp, g: SSAValue) -> Cotangents:
    zero = b.scalar(0.0, g)
    return _each(b, [(op.true_value, b.where(op.condition, g, zero)), (op.false_value, b.where(op.condition, zero, g))])


def _fma(b: Backward, op: ew.FmaOp, g: SSAValue) -> Cotangents:
    return _each(b, [(op.a, b.mul(g, op.b)), (op.b, b.mul(g, op.a)), (op.c, g)])


def _cast(b: Backward, op: ew.CastOp, g: SSAValue) -> Cotangents:
    if not is_float(op.input):
        raise NoAdjoint(f"'{op.name}' from {element_type(op.input.type)} has no adjoint (only float -> float casts do)")
    yield op.input, b.cast(g, element_type(op.input.type))


def _relu_backward(b: Backward, op: ew.ReluBackwardOp, g: SSAValue) -> Cotangents:
    # linear in dy (the same mask again); piecewise constant in x, so x gets nothing
    yield op.dy, b.unbroadcast(b.emit(ew.ReluBackwardOp(op.x, g, op.result.type)), op.dy)


def _activation_backward(b: Backward, op: ew.ActivationBackwardOp, g: SSAValue) -> Cotangents:
    if b.wants(op.x):
        raise NoAdjoint(f"'{op.name}' has no adjoint with respect to x (second derivatives are not implemented)")
    yield op.dy, b.unbroadcast(b.emit(ew.ActivationBackwardOp(op.x, g, op.kind.data, op.result.type)), op.dy)


def _gather_backward(b: Backward, op: mv.GatherBackwardOp, g: SSAValue) -> Cotangents:
    # gather_backward is linear in dy, and gather is its adjoint
    if b.wants(op.dy):
        yield op.dy, b.emit(mv.GatherOp(g, op.indices, op.normalized_axis(), op.dy.type))


# movement -------------------------------------------------------------------


def _transpose(b: Backward, op: mv.TransposeOp, g: SSAValue) -> Cotangents:
    inverse = [0] * len(op.permutation)
    for k, axis in enumerate(op.permutation):
        inverse[axis] = k
    yield op.input, b.emit(mv.TransposeOp(g, inverse, op.input.type))


def _reverse(b: Backward, op: mv.ReverseOp, g: SSAValue) -> Cotangents:
    yield op.input, b.emit(mv.ReverseOp(g, op.normalized_axes(), op.input.type))


def _reshape(b: Backward, op: rlx.ReshapeOp, g: SSAValue) -> Cotangents:
    yield op.input, b.reshape(g, shape_of(op.input.type))


def _expand(b: Backward, op: rlx.ExpandOp, g: SSAValue) -> Cotangents:
    yield op.input, b.unbroadcast(g, op.input)


def _narrow(b: Backward, op: mv.NarrowOp, g: SSAValue) -> Cotangents:
    shape = shape_of(op.input.type)
    axis = op.axis.value.data % len(shape)
    start, length = op.start.value.data, op.length.value.data
    before = [start if a == axis else 0 for a in range(len(shape))]
    after = [shape[axis] - start - length if a == axis else 0 for a in range(len(shape))]
    yield op.input, b.pad(g, before, after)


def _spread(b: Backward, g: SSAValue, axis: int, step: int) -> SSAValue:
    """Put `step - 1` zeros after each element of `g` along `axis` (and none after
    the last): [L, ...] -> [step (L - 1) + 1, ...], the adjoint of a strided read."""
    shape = shape_of(g.type)
    length = shape[axis]
    if step == 1 or length <= 1:
        return g
    split = (*shape[: axis + 1], 1, *shape[axis + 1 :])
    widths = [step - 1 if a == axis + 1 else 0 for a in range(len(split))]
    padded = b.pad(b.reshape(g, split), [0] * len(split), widths)
    flat = b.reshape(padded, (*shape[:axis], length * step, *shape[axis + 1 :]))
    return b.narrow(flat, axis, 0, step * (length - 1) + 1)


def _slice(b: Backward, op: mv.SliceOp, g: SSAValue) -> Cotangents:
    shape = shape_of(op.input.type)
    lengths = shape_of(op.result.type)
    if 0 in lengths:
        yield op.input, b.zeros(op.input)
        return
    flipped = [a for a, s in enumerate(op.step_values()) if s < 0]
    if flipped:
        g = b.emit(mv.ReverseOp(g, flipped, g.type))
    before, after = [], []
    for axis, (start, step, length, size) in enumerate(zip(op.normalized_starts(), op.step_values(), lengths, shape)):
        g = _spread(b, g, axis, abs(step))
        first = min(start, start + step * (length - 1))  # the lowest index read on this axis
        before.append(first)
        after.append(size - first - abs(step) * (length - 1) - 1)
    yield op.input, b.pad(g, before, after)


_NUMPY_PAD_MODES: dict[str, Literal["edge", "wrap", "reflect"]] = {
    "replicate": "edge",
    "circular": "wrap",
    "reflect": "reflect",
}


def _pad(b: Backward, op: mv.PadOp, g: SSAValue) -> Cotangents:
    before, after = op.widths()
    shape = shape_of(op.input.type)
    if op.mode.data == "constant":
        starts = list(before)
        yield op.input, b.emit(mv.SliceOp(g, starts, [1] * len(shape), op.input.type))
        return
    # Every other mode reads each result element from one input element, axis by
    # axis: the adjoint scatters back with one gather_backward per padded axis.
    mode = _NUMPY_PAD_MODES[op.mode.data]
    for axis in reversed(range(len(shape))):
        if not before[axis] and not after[axis]:
            continue
        source = np.pad(np.arange(shape[axis]), (before[axis], after[axis]), mode=mode)
        out_shape = (*shape_of(g.type)[:axis], shape[axis], *shape_of(g.type)[axis + 1 :])
        result = TensorType(element_type(g.type), list(out_shape))
        g = b.emit(mv.GatherBackwardOp(g, b.indices(source), axis, result))
    yield op.input, g


def _concat(b: Backward, op: mv.ConcatOp, g: SSAValue) -> Cotangents:
    axis, offset = op.normalized_axis(), 0
    for value in op.inputs:
        extent = op.extent(value)
        if b.wants(value):
            yield value, b.unbroadcast(b.narrow(g, axis, offset, extent), value)
        offset += extent


def _gather(b: Backward, op: mv.GatherOp, g: SSAValue) -> Cotangents:
    if b.wants(op.data):
        yield op.data, b.emit(mv.GatherBackwardOp(g, op.indices, op.normalized_axis(), op.data.type))


def _gather_elements(b: Backward, op: mv.GatherElementsOp, g: SSAValue) -> Cotangents:
    if b.wants(op.data):
        scatter = mv.ScatterElementsOp(b.zeros(op.data), op.indices, g, op.normalized_axis(), "add", op.data.type)
        yield op.data, b.emit(scatter)


def _gather_nd(b: Backward, op: mv.GatherNdOp, g: SSAValue) -> Cotangents:
    if not b.wants(op.data):
        return
    if op.batch_dims.value.data:
        raise NoAdjoint(f"'{op.name}' with batch_dims > 0 has no adjoint (rlx.scatter_nd has no batch dims)")
    yield op.data, b.emit(mv.ScatterNdOp(b.zeros(op.data), op.indices, g, "add", op.data.type))


def _scatter_add(b: Backward, op: mv.ScatterAddOp, g: SSAValue) -> Cotangents:
    if b.wants(op.updates):
        yield op.updates, b.emit(mv.GatherOp(g, op.indices, 0, op.updates.type))


def _check_scatter(op: mv.ReducingScatter) -> str:
    reduction = op.reduction.data
    if reduction not in ("none", "add"):
        raise NoAdjoint(f'\'{op.name}\' with reduction "{reduction}" has no adjoint (only "none" and "add" do)')
    return reduction


def _scatter_nd(b: Backward, op: mv.ScatterNdOp, g: SSAValue) -> Cotangents:
    reduction = _check_scatter(op)
    if b.wants(op.data):
        if reduction == "add":
            yield op.data, g
        else:  # the scattered positions were overwritten: no gradient reaches them
            yield op.data, b.emit(mv.ScatterNdOp(g, op.indices, b.zeros(op.updates), "none", g.type))
    if b.wants(op.updates):
        yield op.updates, b.emit(mv.GatherNdOp(g, op.indices, 0, op.updates.type))


def _scatter_elements(b: Backward, op: mv.ScatterElementsOp, g: SSAValue) -> Cotangents:
    reduction = _check_scatter(op)
    axis = op.normalized_axis()
    if b.wants(op.data):
        zeros = b.zeros(op.updates)
        cleared = g if reduction == "add" else b.emit(mv.ScatterElementsOp(g, op.indices, zeros, axis, "none", g.type))
        yield op.data, cleared
    if b.wants(op.updates):
        yield op.updates, b.emit(mv.GatherElementsOp(g, op.indices, axis, op.updates.type))


# convolution ----------------------------------------------------------------


def _dilate(b: Backward, g: SSAValue, strides: Sequence[int]) -> SSAValue:
    """`g` [N, M, O...] with strides − 1 zeros between neighbours on each spatial axis
    ([..., (O − 1)·s + 1, ...]): the outputs placed where a stride-1 conv would put them."""
    for axis, s in enumerate(strides, 2):
        if s == 1:
            continue
        shape = shape_of(g.type)
        spread = b.pad(
            b.reshape(g, (*shape[: axis + 1], 1, *shape[axis + 1 :])),
            [0] * (len(shape) + 1),
            [0] * (axis + 1) + [s - 1] + [0] * (len(shape) - axis - 1),
        )
        merged = b.reshape(spread, (*shape[:axis], shape[axis] * s, *shape[axis + 1 :]))
        g = b.narrow(merged, axis, 0, (shape[axis] - 1) * s + 1)
    return g


def _conv_op(b: Backward, x: SSAValue, w: SSAValue, geometry: cv.ConvGeometry) -> SSAValue:
    shape = cv.conv_shape(shape_of(x.type), shape_of(w.type), geometry)
    return b.emit(cv.ConvOp(x, w, None, geometry, TensorType(element_type(x.type), list(shape))))


def _transpose_to(b: Backward, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    shape = mv.transposed_shape(shape_of(x.type), perm)
    return b.emit(mv.TransposeOp(x, perm, TensorType(element_type(x.type), list(shape))))


def _conv_input_grad(b: Backward, op: cv.ConvOp, g: SSAValue) -> SSAValue:
    """dx: the transposed conv, a stride-1 conv of the dilated `g` with the kernel
    flipped and its channel axes swapped per group, padded to reach every input
    (cropped where the forward padding exceeded the kernel's span)."""
    geo, x_shape, w_shape = op.geometry, shape_of(op.input.type), shape_of(op.weight.type)
    groups, kernel = geo.groups, w_shape[2:]
    g = _dilate(b, g, geo.strides)
    before, after = [], []
    for axis, (i, k, d, pb) in enumerate(zip(x_shape[2:], kernel, geo.dilations, geo.pad_before), 2):
        length = shape_of(g.type)[axis]
        span = d * (k - 1) + 1
        low, high = span - 1 - pb, i - length + pb
        if low < 0 or high < 0:
            g = b.narrow(g, axis, max(0, -low), length - max(0, -low) - max(0, -high))
        before.append(max(0, low))
        after.append(max(0, high))
    m, per_group = w_shape[:2]
    w = b.reshape(op.weight, (groups, m // groups, per_group, *kernel))
    w = _transpose_to(b, w, (0, 2, 1, *range(3, len(w_shape) + 1)))
    w = b.reshape(w, (groups * per_group, m // groups, *kernel))
    spatial = tuple(range(2, len(w_shape)))
    w = b.emit(mv.ReverseOp(w, spatial, w.type))
    ones = (1,) * len(kernel)
    return _conv_op(b, g, w, cv.ConvGeometry(ones, geo.dilations, tuple(before), tuple(after), groups))


def _conv_weight_grad(b: Backward, op: cv.ConvOp, g: SSAValue) -> SSAValue:
    """dw[m, c, k] = Σ_{n, o} g[n, m, o] · x[n, c', o·s + k·d − p]: a conv of x with
    the batch as its channels and g as the kernel (strides and dilations swapped),
    cut to the kernel's extent."""
    geo, x_shape, w_shape = op.geometry, shape_of(op.input.type), shape_of(op.weight.type)
    groups, n, spatial = geo.groups, x_shape[0], tuple(range(3, len(x_shape) + 1))
    per_group = w_shape[1]
    x = b.reshape(op.input, (n, groups, per_group, *x_shape[2:]))
    x = b.reshape(_transpose_to(b, x, (2, 1, 0, *spatial)), (per_group, groups * n, *x_shape[2:]))
    kernels = _transpose_to(b, g, (1, 0, *range(2, len(x_shape))))
    swapped = cv.ConvGeometry(geo.dilations, geo.strides, geo.pad_before, geo.pad_after, groups)
    dw = _conv_op(b, x, kernels, swapped)  # [C/groups, M, K' >= K...]
    for axis, k in enumerate(w_shape[2:], 2):
        if shape_of(dw.type)[axis] != k:
            dw = b.narrow(dw, axis, 0, k)
    return _transpose_to(b, dw, (1, 0, *range(2, len(x_shape))))


def _conv(b: Backward, op: cv.ConvOp, g: SSAValue) -> Cotangents:
    if op.lanes:
        raise NoAdjoint(f"'{op.name}' with a packed weight has no adjoint (differentiate before pack-conv-weights)")
    if op.bias is not None and b.wants(op.bias):
        yield op.bias, b.reduce_sum(g, [0, *range(2, len(shape_of(g.type)))], keepdims=False)
    if b.wants(op.input):
        yield op.input, _conv_input_grad(b, op, g)
    if b.wants(op.weight):
        yield op.weight, _conv_weight_grad(b, op, g)


# contraction ----------------------------------------------------------------


def _as_matrix(b: Backward, value: SSAValue, is_lhs: bool) -> SSAValue:
    """A 1-D matmul operand as the matrix NumPy promotes it to: [K] -> [1, K] (lhs) or [K, 1] (rhs)."""
    shape = shape_of(value.type)
    if len(shape) != 1:
        return value
    return b.reshape(value, (1, shape[0]) if is_lhs else (shape[0], 1))


def _matmul(b: Backward, op: ct.MatmulOp, g: SSAValue) -> Cotangents:
    if op.panels:
        raise NoAdjoint(f"'{op.name}' with an rhs in panels has no adjoint (differentiate before pack-matmul-weights)")
    ta, tb = op.transposes
    lhs, rhs = _as_matrix(b, op.lhs, True), _as_matrix(b, op.rhs, False)
    # g with the axes a 1-D operand dropped put back: [..., M, N]
    g = b.reshape(g, ct.matmul_shape(shape_of(lhs.type), shape_of(rhs.type), ta, tb))
    if b.wants(op.lhs):
        # C = A' B' => dA' = g B'^T; stored transposed: dA = B' g^T
        d = b.matmul(rhs, g, tb, True) if ta else b.matmul(g, rhs, False, not tb)
        yield op.lhs, b.reshape(b.unbroadcast(d, lhs), shape_of(op.lhs.type))
    if b.wants(op.rhs):
        lhs_shape = shape_of(lhs.type)
        if len(shape_of(rhs.type)) == 2 and len(lhs_shape) > 2 and not ta:
            # an unbatched rhs: the lhs batch folds into the rows of one GEMM
            # (x @ W over all steps: dW = Xᵀ g with X [steps·rows, K]), not a
            # product per batch entry summed afterwards
            rows = numel(lhs_shape[:-1])
            lhs = b.reshape(lhs, (rows, lhs_shape[-1]))
            g = b.reshape(g, (rows, shape_of(g.type)[-1]))
        # dB' = A'^T g; stored transposed: dB = g^T A'
        d = b.matmul(g, lhs, True, ta) if tb else b.matmul(lhs, g, not ta, False)
        yield op.rhs, b.reshape(b.unbroadcast(d, rhs), shape_of(op.rhs.type))


# attention ------------------------------------------------------------------


def _kv_heads_spread(b: Backward, x: SSAValue, heads: int) -> SSAValue:
    """k or v [B, Hkv, Sk, E] with each kv head repeated for the Hq / Hkv query
    heads that share it: [B, Hq, Sk, E] (reshape, expand, reshape)."""
    batch, kv_heads, keys, size = shape_of(x.type)
    if kv_heads == heads:
        return x
    grouped = (batch, kv_heads, heads // kv_heads, keys, size)
    one = b.reshape(x, (batch, kv_heads, 1, keys, size))
    spread = b.emit(rlx.ExpandOp(one, TensorType(element_type(x.type), list(grouped))))
    return b.reshape(spread, (batch, heads, keys, size))


def _kv_heads_sum(b: Backward, g: SSAValue, like: SSAValue) -> SSAValue:
    """The adjoint of `_kv_heads_spread`: the query heads' gradients summed per kv head."""
    batch, heads, keys, size = shape_of(g.type)
    kv_heads = shape_of(like.type)[1]
    if kv_heads == heads:
        return g
    grouped = b.reshape(g, (batch, kv_heads, heads // kv_heads, keys, size))
    return b.reduce_sum(grouped, [2], keepdims=False)


def _attention_probabilities(b: Backward, op: at.AttentionOp, k: SSAValue) -> SSAValue:
    """P = softmax(q kᵀ · scale + mask (+ causal)), recomputed [B, Hq, Sq, Sk];
    a row with every key masked is 0 (as the forward's output), not NaN."""
    scores = b.mul(b.matmul(op.query, k, False, True), b.scalar(op.scale_value, op.query))
    if op.mask is not None:
        scores = b.add(scores, op.mask)
    queries, keys = shape_of(op.query.type)[2], shape_of(k.type)[2]
    if op.is_causal:
        above = np.triu(np.ones((queries, keys), dtype=bool), 1)
        element = element_type(op.query.type)
        assert isinstance(element, AnyFloat), "the verifier admits float types only"
        causal = TensorType(element, [queries, keys])
        values = np.where(above, -np.inf, 0.0).reshape(-1).tolist()
        scores = b.add(scores, b.emit(rlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(causal, values))))
    p = b.emit(rd.SoftmaxOp(scores, -1))
    if op.mask is None:
        return p  # a causal row always sees key 0; without a mask no row is all -inf
    kept = TensorType(element_type(p.type), list(rd.reduced_shape(shape_of(p.type), [3], True)))
    top = b.emit(rd.ReduceMaxOp(scores, [3], True, kept))
    masked = b.compare(ew.EqOp, top, b.scalar(-math.inf, top))
    return b.where(masked, b.zeros(p), p)


def _attention(b: Backward, op: at.AttentionOp, g: SSAValue) -> Cotangents:
    """FlashAttention's backward, composed of rlx ops (so the [Sq, Sk] matrices are
    materialized here): with P recomputed, dV = Pᵀ dO, dP = dO Vᵀ,
    dS = P ⊙ (dP − rowsum(dO ⊙ O)), dQ = dS K · scale, dK = dSᵀ Q · scale, the
    query heads' dK and dV summed per kv head (GQA), and the mask's gradient dS
    summed over the axes it was broadcast along."""
    heads = shape_of(op.query.type)[1]
    k, v = _kv_heads_spread(b, op.key, heads), _kv_heads_spread(b, op.value, heads)
    p = _attention_probabilities(b, op, k)
    if b.wants(op.value):
        yield op.value, _kv_heads_sum(b, b.matmul(p, g, True, False), op.value)
    wanted = [x for x in (op.query, op.key, op.mask) if x is not None and b.wants(x)]
    if not wanted:
        return
    row = b.reduce_sum(b.mul(g, op.result), [3], keepdims=True)
    ds = b.mul(p, b.binary(ew.SubOp, b.matmul(g, v, False, True), row))
    scale = b.scalar(op.scale_value, op.query)
    if b.wants(op.query):
        yield op.query, b.mul(b.matmul(ds, k, False, False), scale)
    if b.wants(op.key):
        yield op.key, _kv_heads_sum(b, b.mul(b.matmul(ds, op.query, True, False), scale), op.key)
    if op.mask is not None and b.wants(op.mask):
        yield op.mask, b.unbroadcast(ds, op.mask)


# reductions -----------------------------------------------------------------


def _kept(b: Backward, op: rd.ReductionOp, value: SSAValue) -> SSAValue:
    """A reduction's result (or its cotangent) with the reduced axes kept as 1,
    so that it broadcasts against the input."""
    return b.reshape(value, rd.reduced_shape(shape_of(op.input.type), op.reduced_axes(), True))


def _reduce_sum(b: Backward, op: rd.ReduceSumOp, g: SSAValue) -> Cotangents:
    yield op.input, b.expand(_kept(b, op, g), op.input)


def _reduce_mean(b: Backward, op: rd.ReduceMeanOp, g: SSAValue) -> Cotangents:
    shape = shape_of(op.input.type)
    count = numel([shape[a] for a in op.reduced_axes()])
    yield op.input, b.expand(b.mul(_kept(b, op, g), b.scalar(1.0 / count if count else float("nan"), g)), op.input)


def _reduce_prod(b: Backward, op: rd.ReduceProdOp, g: SSAValue) -> Cotangents:
    # d(prod x)/dx_i = prod / x_i
    yield op.input, b.div(b.mul(_kept(b, op, g), _kept(b, op, op.result)), op.input)


def _reduce_extreme(b: Backward, op: rd.ReduceOp, g: SSAValue) -> Cotangents:
    """max/min: the gradient split evenly among the elements equal to the result."""
    chosen = b.cast(b.compare(ew.EqOp, op.input, _kept(b, op, op.result)), element_type(g.type))
    count = b.reduce_sum(chosen, op.reduced_axes(), keepdims=True)
    yield op.input, b.mul(chosen, b.div(_kept(b, op, g), count))


def _softmax(b: Backward, op: rd.SoftmaxOp, g: SSAValue) -> Cotangents:
    # dx = y (g - sum(g y))
    (axis,) = op.reduced_axes()
    total = b.reduce_sum(b.mul(g, op.result), [axis], keepdims=True)
    yield op.input, b.mul(op.result, b.binary(ew.SubOp, g, total))


def _log_softmax(b: Backward, op: rd.LogSoftmaxOp, g: SSAValue) -> Cotangents:
    # dx = g - softmax(x) sum(g)
    (axis,) = op.reduced_axes()
    total = b.reduce_sum(g, [axis], keepdims=True)
    yield op.input, b.binary(ew.SubOp, g, b.mul(b.emit(ew.ExpOp(op.result)), total))


def _scan(b: Backward, op: sc.ScanOp, g: SSAValue) -> Cotangents:
    """rlx.scan_backward over the carries the forward saves: the scan is
    replaced by one that saves them (every carry, or checkpoints, per
    `b.checkpointing`), whose last row is the original result when that was
    the final carry; the vjp body is the body differentiated by this pass."""
    inputs = [op.init, *op.inputs]
    if not all(is_float(v) for v in inputs):
        raise NoAdjoint(f"'{op.name}' with a non-float operand has no adjoint")
    saved, num_checkpoints = _saved_carries(b, op)
    rows = op.rows or 0
    vjp = _body_vjp(op.body.block, b.checkpointing)
    forward = op.body.clone() if 0 < num_checkpoints < op.steps else None
    griewank = b.checkpointing is ScanCheckpointing.GRIEWANK and forward is not None
    mode = "griewank" if griewank else "segments"
    backward = sc.ScanBackwardOp(
        op.init, saved, g, op.broadcast, op.xs, vjp, forward, op.steps, num_checkpoints, mode, rows
    )
    b.emit(backward)
    return _each(b, list(zip(inputs, backward.results)))


def _saved_carries(b: Backward, op: sc.ScanOp) -> tuple[SSAValue, int]:
    """The carries the backward reads, and how many (0: every one): the scan's
    own result when it saves every carry, else a scan that does, in its place."""
    if op.rows == op.steps:
        return op.result, 0
    length = op.steps
    num_checkpoints = 0 if b.checkpointing is ScanCheckpointing.ALL else max(1, math.isqrt(length - 1) + 1)
    num_checkpoints = 0 if num_checkpoints >= length else num_checkpoints
    saving = sc.ScanOp(op.init, op.broadcast, op.xs, op.body.clone(), length, True, num_checkpoints)
    b.block.insert_op_before(saving, op)
    if op.rows is None:  # the final carry is the last saved row: a view of it
        rows = num_checkpoints or length
        carry = shape_of(op.init.type)
        last = mv.NarrowOp(saving.result, 0, rows - 1, 1, TensorType(element_type(op.init.type), [1, *carry]))
        final = rlx.ReshapeOp(last.result, op.init.type)
        b.block.insert_op_before(last, op)
        b.block.insert_op_before(final, op)
        op.result.replace_all_uses_with(final.result)  # the original scan is dead now: DCE drops it
    return saving.result, num_checkpoints


def _body_vjp(body: Block, checkpointing: ScanCheckpointing) -> Region:
    """The body's VJP as a scan_backward `vjp` region: (carry, broadcast...,
    x_t..., d_next) -> (d_carry, d_broadcast..., d_x_t...), made by
    differentiating the body as a function of all its arguments."""
    terminator = body.last_op
    assert isinstance(terminator, rg.YieldOp), "a verified scan body ends in rlx.yield"
    function = func.FuncOp("body", ([a.type for a in body.args], [terminator.values[0].type]))
    block = function.body.block
    values: dict[SSAValue, SSAValue] = dict(zip(body.args, block.args))
    for inner in body.ops:
        if isinstance(inner, rg.YieldOp):
            block.add_op(func.ReturnOp(values[inner.values[0]]))
            break
        clone = inner.clone(value_mapper=values)
        block.add_op(clone)
    differentiate(function, list(range(len(body.args))), checkpointing)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    gradients = list(ret.arguments[1:])
    ret.detach()
    ret.erase()
    block.add_op(rg.YieldOp(*gradients))
    region_dce(function.body)
    region = function.body
    function.detach_region(region)
    return region


Adjoint = Callable[[Backward, Any, SSAValue], Cotangents]
"""An adjoint takes an op of its key's class; a dict's type cannot tie each
key to its value's parameter, so the op is typed Any here."""

ADJOINTS: dict[type[Operation], Adjoint] = {
    **{cls: _unary for cls in ew.UNARY_OPS.values()},
    ew.ReluOp: _relu,
    ew.AddOp: _add,
    ew.SubOp: _sub,
    ew.MulOp: _mul,
    ew.DivOp: _div,
    ew.ModOp: _mod,
    ew.MaxOp: _max,
    ew.MinOp: _min,
    ew.PowOp: _pow,
    ew.Atan2Op: _atan2,
    ew.WhereOp: _where,
    ew.FmaOp: _fma,
    ew.CastOp: _cast,
    ew.ReluBackwardOp: _relu_backward,
    ew.ActivationBackwardOp: _activation_backward,
    mv.TransposeOp: _transpose,
    mv.SliceOp: _slice,
    mv.NarrowOp: _narrow,
    mv.ReverseOp: _reverse,
    mv.PadOp: _pad,
    mv.ConcatOp: _concat,
    mv.GatherOp: _gather,
    mv.GatherElementsOp: _gather_elements,
    mv.GatherNdOp: _gather_nd,
    mv.GatherBackwardOp: _gather_backward,
    mv.ScatterAddOp: _scatter_add,
    mv.ScatterNdOp: _scatter_nd,
    mv.ScatterElementsOp: _scatter_elements,
    rlx.ExpandOp: _expand,
    rlx.ReshapeOp: _reshape,
    ct.MatmulOp: _matmul,
    cv.ConvOp: _conv,
    at.AttentionOp: _attention,
    rd.ReduceSumOp: _reduce_sum,
    rd.ReduceMeanOp: _reduce_mean,
    rd.ReduceProdOp: _reduce_prod,
    rd.ReduceMaxOp: _reduce_extreme,
    rd.ReduceMinOp: _reduce_extreme,
    rd.SoftmaxOp: _softmax,
    rd.LogSoftmaxOp: _log_softmax,
    sc.ScanOp: _scan,
}
"""The vector-Jacobian product of each differentiable op class. Anything else
(comparisons, bitwise and integer-only ops, the recurrent ops, regions) has
none: a gradient reaching it is an error."""


# ---------------------------------------------------------------------------
# the transformation
# ---------------------------------------------------------------------------


def _active(block: Block, wrt: Sequence[int]) -> set[SSAValue]:
    """The values that depend on a `wrt` argument (any type: an integer in the
    way is reported when a gradient reaches it)."""
    active: set[SSAValue] = {block.args[k] for k in wrt}
    for op in block.ops:
        if any(v in active for v in op.operands):
            active.update(op.results)
    return active


def _propagate(b: Backward, op: Operation) -> None:
    """Add the cotangents of `op`'s operands, given those of its results."""
    flowing = [r for r in op.results if r in b.cotangent]
    if not flowing:
        return
    adjoint = ADJOINTS.get(type(op))
    if adjoint is None or len(op.results) != 1:
        raise NoAdjoint(f"'{op.name}' has no adjoint")
    if not is_float(op.results[0]):
        raise NoAdjoint(f"'{op.name}' on {element_type(op.results[0].type)} has no adjoint (only float ops do)")
    for operand, cotangent in adjoint(b, op, b.cotangent[op.results[0]]):
        if b.wants(operand):
            b.accumulate(operand, cotangent)


def _cotangent_name(value: SSAValue, index: int) -> str:
    return f"d_{value.name_hint}" if value.name_hint else f"d_out{index}"


def differentiate(
    function: func.FuncOp, wrt: Sequence[int], checkpointing: ScanCheckpointing = ScanCheckpointing.ALL
) -> None:
    """Rewrite `function` in place into its VJP function (see the module docstring)."""
    block = function_block(function)
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp), "a verified function ends in func.return"
    outputs = list(ret.arguments)
    seeds = [block.insert_arg(v.type, len(block.args)) for v in outputs]
    for k, (seed, value) in enumerate(zip(seeds, outputs)):
        seed.name_hint = _cotangent_name(value, k)
    b = Backward(block, ret, _active(block, wrt), checkpointing)
    for seed, value in zip(seeds, outputs):
        if b.wants(value) and is_float(value):
            b.accumulate(value, seed)
    for op in reversed([op for op in block.ops if op is not ret and any(r in b.active for r in op.results)]):
        try:
            _propagate(b, op)
        except NoAdjoint as error:
            where = f"@{function.sym_name.data}"
            raise PassFailedException(f"autodiff: {error}; a gradient of {where} flows through it") from None
    grads = []
    for k in wrt:
        arg = block.args[k]
        grads.append(b.cotangent[arg] if arg in b.cotangent else b.zeros(arg))
    ret.operands = (*ret.operands[: len(outputs)], *grads)  # an adjoint may have rewired an output (scan)
    function.update_function_type()
    cse(function.body)  # x * x: the two equal products of its adjoint are one
    region_dce(function.body)


def _is_function(op: Operation) -> bool:
    return isinstance(op, func.FuncOp) and bool(op.body.blocks)


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Every function with a body becomes its vector-Jacobian product."""

    name = "autodiff"

    wrt: tuple[int | str, ...] = ()
    """Argument positions or names to differentiate with respect to; empty: every float argument."""

    checkpoints: str = "all"
    """The option's spelling of a `ScanCheckpointing`: how differentiated scans
    keep their carries, "all", or ceil(sqrt(length)) checkpoints recomputed by
    "segments" or "griewank" (bit-identical results)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.ops if _is_function(f)]:
            assert isinstance(function, func.FuncOp)
            checkpointing = self._checkpointing()
            try:
                positions = resolve_wrt(function, self.wrt)
            except ValueError as error:
                raise PassFailedException(f"autodiff: {error}") from None
            differentiate(function, positions, checkpointing)

    def _checkpointing(self) -> ScanCheckpointing:
        try:
            return ScanCheckpointing(self.checkpoints)
        except ValueError:
            modes = ", ".join(ScanCheckpointing.spellings())
            raise PassFailedException(f"autodiff: checkpoints={self.checkpoints} is not one of {modes}") from None
