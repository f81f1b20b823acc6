"""What each elementwise rlx op computes on one element, as `llvm` dialect ops.

This is the single source of truth for elementwise semantics: a standalone op
and the same op inside a fused region both lower through `emit_scalar_op`.
Formulas are tables keyed by op name; transcendentals come from
`math_approx` (vectorizable, no libm calls).

f16 and bf16 compute in f32 and each op's result is rounded once to the
type (`Codec.round`). Integer semantics (documented in the README): add/sub/mul
wrap; division truncates toward zero and `x / 0 = 0`, `INT_MIN / -1 = INT_MIN`
(wrapping); `mod` is the truncated remainder (sign of the dividend, like
`np.fmod`) with `x mod 0 = 0`; shifts by a negative amount or by at least the
bit width give 0 (`shl`, unsigned `shr`) or the sign fill (signed `shr`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dialects import rlx
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering import complex_ops
from rlx_mlir.lowering import math_approx as m
from rlx_mlir.lowering.activation_grads import DERIVATIVES
from rlx_mlir.lowering.element_types import Value, codec, convert, select_value
from rlx_mlir.lowering.emitter import Emitter

Unary = Callable[[Emitter, SSAValue], SSAValue]
Binary = Callable[[Emitter, SSAValue, SSAValue], SSAValue]

SQRT1_2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _c(e: Emitter, like: SSAValue, value: float) -> SSAValue:
    return e.const_like(like, value)


def _softplus(e: Emitter, x: SSAValue) -> SSAValue:
    """max(x, 0) + log1p(exp(-|x|)): never overflows."""
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fadd(e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _log_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fsub(e.select(e.fcmp("olt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _gelu(e: Emitter, x: SSAValue) -> SSAValue:
    """Exact GELU: x * (1 + erf(x / sqrt 2)) / 2."""
    half_x = e.fmul(x, _c(e, x, 0.5))
    return e.fma(half_x, m.erf(e, e.fmul(x, _c(e, x, SQRT1_2))), half_x)


def _gelu_approx(e: Emitter, x: SSAValue) -> SSAValue:
    """The tanh form x/2 * (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated
    as x * sigmoid(2z): the same function without the cancellation of 1 + tanh(z)
    for negative x."""
    two_z = e.fmul(_c(e, x, 2 * SQRT_2_OVER_PI), e.fma(e.fmul(_c(e, x, 0.044715), e.fmul(x, x)), x, x))
    return e.fmul(x, m.sigmoid(e, two_z))


def _sign(e: Emitter, x: SSAValue) -> SSAValue:
    """1, -1, +0 for ±0 and NaN for NaN (as np.sign)."""
    one, zero = _c(e, x, 1.0), _c(e, x, 0.0)
    neg = e.select(e.fcmp("olt", x, zero), e.fneg(one), e.fadd(x, zero))
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), one, neg)


def _hard_swish(e: Emitter, x: SSAValue) -> SSAValue:
    return e.fdiv(e.fmul(x, e.clamp(e.fadd(x, _c(e, x, 3.0)), 0.0, 6.0)), _c(e, x, 6.0))


def _hard_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    return e.clamp(e.fadd(e.fdiv(x, _c(e, x, 6.0)), _c(e, x, 0.5)), 0.0, 1.0)


def _elu(e: Emitter, x: SSAValue) -> SSAValue:
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, m.expm1(e, x))


def _relu(e: Emitter, x: SSAValue) -> SSAValue:
    """x < 0 ? 0 : x, so NaN passes through as in np.maximum(x, 0)."""
    return e.select(e.fcmp("olt", x, _c(e, x, 0.0)), _c(e, x, 0.0), x)


UNARY_FLOAT: dict[str, Unary] = {
    "relu": _relu,
    "gelu": _gelu,
    "gelu_approx": _gelu_approx,
    "silu": lambda e, x: e.fmul(x, m.sigmoid(e, x)),
    "sigmoid": m.sigmoid,
    "tanh": m.tanh,
    "exp": m.exp,
    "log": m.log,
    "sqrt": lambda e, x: e.sqrt(x),
    "rsqrt": lambda e, x: e.fdiv(_c(e, x, 1.0), e.sqrt(x)),
    "neg": lambda e, x: e.fneg(x),
    "abs": lambda e, x: e.fabs(x),
    "round": lambda e, x: e.roundeven(x),
    "sin": m.sin,
    "cos": m.cos,
    "tan": m.tan,
    "atan": m.atan,
    "recip": lambda e, x: e.fdiv(_c(e, x, 1.0), x),
    "floor": lambda e, x: e.floor(x),
    "ceil": lambda e, x: e.ceil(x),
    "sign": _sign,
    "softplus": _softplus,
    "elu": _elu,
    "erf": m.erf,
    "hard_swish": _hard_swish,
    "hard_sigmoid": _hard_sigmoid,
    "mish": lambda e, x: e.fmul(x, m.tanh(e, _softplus(e, x))),
    "softsign": lambda e, x: e.fdiv(x, e.fadd(_c(e, x, 1.0), e.fabs(x))),
    "log_sigmoid": _log_sigmoid,
}

BINARY_FLOAT: dict[str, Binary] = {
    "add": lambda e, a, b: e.fadd(a, b),
    "sub": lambda e, a, b: e.fsub(a, b),
    "mul": lambda e, a, b: e.fmul(a, b),
    "div": lambda e, a, b: e.fdiv(a, b),
    "max": lambda e, a, b: e.maximum(a, b),
    "min": lambda e, a, b: e.minimum(a, b),
    "pow": m.pow,
    "mod": lambda e, a, b: e.frem(a, b),
    "atan2": m.atan2,
}


def _int_min(t: IntegerType) -> int:
    return -(1 << (t.width.data - 1))


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
    width = e.const_like(b, a.type.width.data)  # type: ignore[attr-defined]
    in_range = e.icmp("ult", b, width)
    safe = e.select(in_range, b, e.const_like(b, 0))
    if left or not signed:
        shifted = e.shl(a, safe) if left else e.lshr(a, safe)
        return e.select(in_range, shifted, e.const_like(a, 0))
    fill = e.ashr(a, e.const_like(a, a.type.width.data - 1))  # type: ignore[attr-defined]
    return e.select(in_range, e.ashr(a, safe), fill)


def _pick(e: Emitter, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
    """max/min of two integers by an icmp predicate (sgt/ugt/slt/ult)."""
    return e.select(e.icmp(pred, a, b), a, b)


IntBinary = Callable[[Emitter, SSAValue, SSAValue, bool], SSAValue]

BINARY_INT: dict[str, IntBinary] = {
    "add": lambda e, a, b, signed: e.add(a, b),
    "sub": lambda e, a, b, signed: e.sub(a, b),
    "mul": lambda e, a, b, signed: e.mul(a, b),
    "div": lambda e, a, b, signed: _guarded_division(e, a, b, signed, remainder=False),
    "mod": lambda e, a, b, signed: _guarded_division(e, a, b, signed, remainder=True),
    "max": lambda e, a, b, signed: _pick(e, a, b, "sgt" if signed else "ugt"),
    "min": lambda e, a, b, signed: _pick(e, a, b, "slt" if signed else "ult"),
    "bit_and": lambda e, a, b, signed: e.and_(a, b),
    "bit_or": lambda e, a, b, signed: e.or_(a, b),
    "bit_xor": lambda e, a, b, signed: e.xor(a, b),
    "shl": lambda e, a, b, signed: _guarded_shift(e, a, b, signed, left=True),
    "shr": lambda e, a, b, signed: _guarded_shift(e, a, b, signed, left=False),
}

UNARY_INT: dict[str, Unary] = {
    "neg": lambda e, x: e.sub(e.const_like(x, 0), x),
    "abs": lambda e, x: e.select(e.icmp("slt", x, e.const_like(x, 0)), e.sub(e.const_like(x, 0), x), x),
    "sign": lambda e, x: e.sub(e.zext(e.icmp("sgt", x, e.const_like(x, 0)), x.type),
                               e.zext(e.icmp("slt", x, e.const_like(x, 0)), x.type)),
}

# compare predicates: (ordered float, signed int, unsigned int and bool)
COMPARE: dict[str, tuple[str, str, str]] = {
    "eq": ("oeq", "eq", "eq"),
    "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"),
}


def _compare(e: Emitter, name: str, a: SSAValue, b: SSAValue, kind: Kind) -> SSAValue:
    float_pred, signed_pred, unsigned_pred = COMPARE[name]
    if kind is Kind.FLOAT:
        return e.fcmp(float_pred, a, b)
    return e.icmp(signed_pred if kind is Kind.INT else unsigned_pred, a, b)


def binary_value(e: Emitter, name: str, a: Value, b: Value, element: Attribute) -> Value:
    """`rlx.<name>` of two loaded elements of type `element`, rounded as the op
    rounds (also the reductions of the scatter kernels)."""
    kind = dtypes.from_ir(element).kind
    if kind is Kind.COMPLEX:
        return complex_ops.BINARY[name](e, a, b)  # type: ignore[arg-type]
    if kind is Kind.FLOAT:
        value = BINARY_FLOAT[name](e, a, b)  # type: ignore[arg-type]
    else:
        value = BINARY_INT[name](e, a, b, kind is Kind.INT)  # type: ignore[arg-type]
    return codec(element).round(e, value)


def emit_scalar_op(e: Emitter, op: Operation, operands: list[Value]) -> Value:
    """Emit one scalar rlx op on already-loaded operand values (see `element_types`)."""
    name = op.name.removeprefix("rlx.")
    result = codec(rlx.element_type(op.results[0].type))
    operand_type = rlx.element_type(op.operands[-1].type)
    kind = dtypes.from_ir(operand_type).kind
    if isinstance(op, rlx.CastOp):
        return convert(e, operands[0], operand_type, result.dtype.ir_type)
    if isinstance(op, rlx.WhereOp):
        return select_value(e, *operands)  # type: ignore[arg-type]
    if kind is Kind.COMPLEX:
        table = complex_ops.COMPARE if isinstance(op, rlx.CompareOp) else (
            complex_ops.UNARY if isinstance(op, rlx.UnaryOp) else complex_ops.BINARY)
        return table[name](e, *operands)  # type: ignore[operator]
    if isinstance(op, rlx.CompareOp):
        return _compare(e, name, *operands, kind)  # type: ignore[arg-type]
    if isinstance(op, rlx.ReluBackwardOp):
        x, dy = operands
        value = e.select(e.fcmp("ogt", x, e.const_like(x, 0.0)), dy, e.const_like(dy, 0.0))  # type: ignore[arg-type]
    elif isinstance(op, rlx.ActivationBackwardOp):
        x, dy = operands
        value = e.fmul(dy, DERIVATIVES[op.kind.data](e, x))  # type: ignore[arg-type]
    elif isinstance(op, rlx.UnaryOp):
        value = UNARY_FLOAT[name](e, operands[0]) if kind is Kind.FLOAT else UNARY_INT[name](e, operands[0])
    elif isinstance(op, rlx.BinaryOp):
        return binary_value(e, name, *operands, operand_type)  # type: ignore[misc]
    elif isinstance(op, rlx.FmaOp):
        value = e.fma(*operands)  # type: ignore[arg-type]
    else:
        raise ValueError(f"no scalar lowering for '{op.name}'")
    return result.round(e, value)
