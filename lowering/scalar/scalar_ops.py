"""What each elementwise rlx op computes on one element, as `llvm` dialect ops.

This is the single source of truth for elementwise semantics: a standalone op
and the same op inside a fused region both lower through `emit_scalar_op`.
Formulas are tables keyed by op class (the activations are in
`activations`, their derivatives in `activation_grads`, complex arithmetic in
`complex_ops`); transcendentals come from `math_approx` (vectorizable, no
libm calls).

f16 and bf16 compute in f32 and each op's result is rounded once to the
type (`Codec.round`). Integer semantics (documented in the README): add/sub/mul
wrap; division truncates toward zero and `x / 0 = 0`, `INT_MIN / -1 = INT_MIN`
(wrapping); `mod` is the truncated remainder (sign of the dividend, like
`np.fmod`) with `x mod 0 = 0`; shifts by a negative amount or by at least the
bit width give 0 (`shl`, unsigned `shr`) or the sign fill (signed `shr`);
`pow` is exact (square and multiply, wrapping like `mul`, as `np.power`), and a
negative exponent gives the real power truncated toward zero: 1 for a base of 1,
±1 for -1, 0 for every other base, 0 included (as `x / 0 = 0`). `relu` on
signed integers is max(x, 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.ir import Attribute, Block, Operation, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.core.element_types import Value, codec, complex_value, convert, int_width, real, select_value
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.scalar import activations, complex_ops
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.lowering.scalar.activation_grads import DERIVATIVES

Unary = Callable[[Emitter, SSAValue], SSAValue]
Binary = Callable[[Emitter, SSAValue, SSAValue], SSAValue]

BINARY_FLOAT: dict[type[ew.BinaryOp], Binary] = {
    ew.AddOp: lambda e, a, b: e.fadd(a, b),
    ew.SubOp: lambda e, a, b: e.fsub(a, b),
    ew.MulOp: lambda e, a, b: e.fmul(a, b),
    ew.DivOp: lambda e, a, b: e.fdiv(a, b),
    ew.MaxOp: lambda e, a, b: e.maximum(a, b),
    ew.MinOp: lambda e, a, b: e.minimum(a, b),
    ew.PowOp: m.pow,
    ew.ModOp: lambda e, a, b: e.frem(a, b),
    ew.Atan2Op: m.atan2,
}


def _int_min(t: Attribute) -> int:
    return -(1 << (int_width(t) - 1))


def _guarded_division(e: Emitter, a: SSAValue, b: SSAValue, signed: bool, remainder: bool) -> SSAValue:
    """Division that never traps: x/0 -> 0, INT_MIN/-1 -> INT_MIN (remainder 0)."""
    zero, one = e.const_like(a, 0), e.const_like(a, 1)
    by_zero = e.icmp("eq", b, zero)
    if not signed:
        quotient = (e.urem if remainder else e.udiv)(a, e.select(by_zero, one, b))
        return e.select(by_zero, zero, quotient)
    overflow = e.and_(e.icmp("eq", a, e.const_like(a, _int_min(a.type))), e.icmp("eq", b, e.const_like(b, -1)))
    unsafe = e.or_(by_zero, overflow)
    quotient = (e.srem if remainder else e.sdiv)(a, e.select(unsafe, one, b))
    on_overflow = zero if remainder else a
    return e.select(by_zero, zero, e.select(overflow, on_overflow, quotient))


def _guarded_shift(e: Emitter, a: SSAValue, b: SSAValue, signed: bool, left: bool) -> SSAValue:
    """Shifts by >= width (or a negative amount) are defined: 0 for shl and unsigned
    shr, the sign fill for signed shr."""
    width = e.const_like(b, int_width(a.type))
    in_range = e.icmp("ult", b, width)
    safe = e.select(in_range, b, e.const_like(b, 0))
    if left or not signed:
        shifted = e.shl(a, safe) if left else e.lshr(a, safe)
        return e.select(in_range, shifted, e.const_like(a, 0))
    fill = e.ashr(a, e.const_like(a, int_width(a.type) - 1))
    return e.select(in_range, e.ashr(a, safe), fill)


def _pick(e: Emitter, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
    """max/min of two integers by an icmp predicate (sgt/ugt/slt/ult)."""
    return e.select(e.icmp(pred, a, b), a, b)


def _int_pow(e: Emitter, base: SSAValue, exponent: SSAValue, signed: bool) -> SSAValue:
    """base ** exponent by square and multiply over every exponent bit: straight-line
    code (a select per bit, no loop or branch), so an elementwise loop still vectorizes.
    Modulo 2^width the product of the squares is exact, so wrapping matches np.power.
    A negative exponent's bits give base ** (exponent mod 2^width), which is already
    the truncated power for bases ±1 (its parity is the exponent's); every other base gives 0."""
    width = int_width(base.type)
    result, square = e.const_like(base, 1), base
    for k in range(width):
        bit = e.icmp("ne", e.and_(exponent, e.const_like(exponent, 1 << k)), e.const_like(exponent, 0))
        result = e.select(bit, e.mul(result, square), result)
        if k < width - 1:
            square = e.mul(square, square)
    if not signed:
        return result
    unit = e.or_(e.icmp("eq", base, e.const_like(base, 1)), e.icmp("eq", base, e.const_like(base, -1)))
    truncated = e.select(unit, result, e.const_like(base, 0))
    return e.select(e.icmp("slt", exponent, e.const_like(exponent, 0)), truncated, result)


IntBinary = Callable[[Emitter, SSAValue, SSAValue, bool], SSAValue]

BINARY_INT: dict[type[ew.BinaryOp], IntBinary] = {
    ew.AddOp: lambda e, a, b, signed: e.add(a, b),
    ew.SubOp: lambda e, a, b, signed: e.sub(a, b),
    ew.MulOp: lambda e, a, b, signed: e.mul(a, b),
    ew.DivOp: lambda e, a, b, signed: _guarded_division(e, a, b, signed, remainder=False),
    ew.ModOp: lambda e, a, b, signed: _guarded_division(e, a, b, signed, remainder=True),
    ew.MaxOp: lambda e, a, b, signed: _pick(e, a, b, "sgt" if signed else "ugt"),
    ew.MinOp: lambda e, a, b, signed: _pick(e, a, b, "slt" if signed else "ult"),
    ew.PowOp: _int_pow,
    ew.BitAndOp: lambda e, a, b, signed: e.and_(a, b),
    ew.BitOrOp: lambda e, a, b, signed: e.or_(a, b),
    ew.BitXorOp: lambda e, a, b, signed: e.xor(a, b),
    ew.ShlOp: lambda e, a, b, signed: _guarded_shift(e, a, b, signed, left=True),
    ew.ShrOp: lambda e, a, b, signed: _guarded_shift(e, a, b, signed, left=False),
}

UNARY_INT: dict[type[ew.UnaryOp], Unary] = {
    ew.ReluOp: lambda e, x: _pick(e, x, e.const_like(x, 0), "sgt"),
    ew.NegOp: lambda e, x: e.sub(e.const_like(x, 0), x),
    ew.AbsOp: lambda e, x: e.select(e.icmp("slt", x, e.const_like(x, 0)), e.sub(e.const_like(x, 0), x), x),
    ew.SignOp: lambda e, x: e.sub(
        e.zext(e.icmp("sgt", x, e.const_like(x, 0)), x.type), e.zext(e.icmp("slt", x, e.const_like(x, 0)), x.type)
    ),
}

# compare predicates: (ordered float, signed int, unsigned int and bool)
COMPARE: dict[type[ew.CompareOp], tuple[str, str, str]] = {
    ew.EqOp: ("oeq", "eq", "eq"),
    ew.NeOp: ("une", "ne", "ne"),
    ew.LtOp: ("olt", "slt", "ult"),
    ew.LeOp: ("ole", "sle", "ule"),
    ew.GtOp: ("ogt", "sgt", "ugt"),
    ew.GeOp: ("oge", "sge", "uge"),
}


def _compare(e: Emitter, op: type[ew.CompareOp], a: SSAValue, b: SSAValue, kind: Kind) -> SSAValue:
    float_pred, signed_pred, unsigned_pred = COMPARE[op]
    if kind is Kind.FLOAT:
        return e.fcmp(float_pred, a, b)
    return e.icmp(signed_pred if kind is Kind.INT else unsigned_pred, a, b)


def binary_value(e: Emitter, op: type[ew.BinaryOp], a: Value, b: Value, element: Attribute) -> Value:
    """`op` on two loaded elements of type `element`, rounded as the op
    rounds (also the reductions of the scatter kernels)."""
    return codec(element).round(e, unrounded_binary_value(e, op, a, b, element))


def unrounded_binary_value(e: Emitter, op: type[ew.BinaryOp], a: Value, b: Value, element: Attribute) -> Value:
    """`op` on two elements of type `element` in its compute type (f32 for
    f16/bf16), not rounded to the type: what an accumulator keeps."""
    kind = dtypes.from_ir(element).kind
    if kind is Kind.COMPLEX:
        return complex_ops.BINARY[op](e, complex_value(a), complex_value(b))
    if kind is Kind.FLOAT:
        return BINARY_FLOAT[op](e, real(a), real(b))
    return BINARY_INT[op](e, real(a), real(b), kind is Kind.INT)


def emit_scalar_op(e: Emitter, op: Operation, operands: list[Value]) -> Value:
    """Emit one scalar rlx op on already-loaded operand values (see `element_types`)."""
    result = codec(element_type(op.results[0].type))
    operand_type = element_type(op.operands[-1].type)
    kind = dtypes.from_ir(operand_type).kind
    if isinstance(op, ew.CastOp):
        return convert(e, operands[0], operand_type, result.dtype.ir_type, bool(op.saturate.value.data))
    if isinstance(op, ew.WhereOp):
        condition, a, b = operands
        return select_value(e, real(condition), a, b)
    if isinstance(op, ew.BinaryOp) and not isinstance(op, ew.CompareOp):
        a, b = operands
        return binary_value(e, type(op), a, b, operand_type)
    if kind is Kind.COMPLEX:
        if isinstance(op, ew.CompareOp):
            a, b = (complex_value(v) for v in operands)
            return complex_ops.COMPARE[type(op)](e, a, b)
        if isinstance(op, ew.UnaryOp):
            return complex_ops.UNARY[type(op)](e, complex_value(operands[0]))
        raise ValueError(f"no scalar lowering for '{op.name}'")
    reals = [real(v) for v in operands]
    if isinstance(op, ew.CompareOp):
        a, b = reals
        return _compare(e, type(op), a, b, kind)
    value: SSAValue
    if isinstance(op, ew.ReluBackwardOp):
        x, dy = reals
        value = e.select(e.fcmp("ogt", x, e.const_like(x, 0.0)), dy, e.const_like(dy, 0.0))
    elif isinstance(op, ew.ActivationBackwardOp):
        x, dy = reals
        value = e.fmul(dy, DERIVATIVES[op.activation](e, x))
    elif isinstance(op, ew.UnaryOp):
        table = activations.FLOAT if kind is Kind.FLOAT else UNARY_INT
        value = table[type(op)](e, reals[0])
    elif isinstance(op, ew.FmaOp):
        value = e.fma(*reals)
    else:
        raise ValueError(f"no scalar lowering for '{op.name}'")
    return result.round(e, value)


def yielded(block: Block) -> tuple[SSAValue, ...]:
    """The values a body yields: its terminator's operands."""
    if block.last_op is None:
        raise ValueError("an empty region body")
    return tuple(block.last_op.operands)


def emit_body(e: Emitter, block: Block, load: Callable[[int], Value]) -> list[Value | None]:
    """Evaluate a region body on the inputs `load(k)` gives (each loaded once, and
    only if an op reads it); the yielded values, None for a block argument that
    is yielded but read by no op (the caller copies or loads it)."""
    used = {v for op in block.ops if not isinstance(op, rg.YieldOp) for v in op.operands}
    values: dict[SSAValue, Value] = {arg: load(k) for k, arg in enumerate(block.args) if arg in used}
    for op in block.ops:
        if isinstance(op, rg.YieldOp):
            return [values.get(v) for v in op.values]
        values[op.results[0]] = emit_scalar_op(e, op, [values[v] for v in op.operands])
    raise ValueError("region body has no rlx.yield")


def body_value(e: Emitter, block: Block, load: Callable[[int], Value]) -> Value:
    """The one value a body yields (a yielded argument loaded through `load`)."""
    (value,) = emit_body(e, block, load)
    if value is not None:
        return value
    arguments: list[SSAValue] = list(block.args)
    return load(arguments.index(yielded(block)[0]))


T = TypeVar("T")


def pairwise(e: Emitter, values: Sequence[T], combine: Callable[[Emitter, T, T], T]) -> T:
    """Balanced pairwise combination of `values`, in order: the reductions' trees."""
    while len(values) > 1:
        pairs = [combine(e, values[k], values[k + 1]) for k in range(0, len(values) - 1, 2)]
        values = pairs + ([values[-1]] if len(values) % 2 else [])
    return values[0]
