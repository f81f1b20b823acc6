"""What each elementwise rlx op computes on one element, as `llvm` dialect ops.

This is the single source of truth for elementwise semantics: a standalone op
and the same op inside a fused region both lower through `emit_scalar_op`.
Formulas are tables keyed by op name; transcendentals come from
`math_approx` (vectorizable, no libm calls).

Integer semantics (documented in the README): add/sub/mul wrap; division
truncates toward zero and `x / 0 = 0`, `INT_MIN / -1 = INT_MIN` (wrapping);
`mod` is the truncated remainder (sign of the dividend, like `np.fmod`) with
`x mod 0 = 0`; shifts by a negative amount or by at least the bit width give
0 (`shl`) or the sign fill (`shr`, arithmetic).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import AnyFloat, IntegerType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from rlx_mlir.dialects import rlx
from rlx_mlir.lowering import math_approx as m
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


def _guarded_division(e: Emitter, a: SSAValue, b: SSAValue, remainder: bool) -> SSAValue:
    """sdiv/srem that never traps: x/0 -> 0, INT_MIN/-1 -> INT_MIN (rem 0)."""
    zero, one = e.const_like(a, 0), e.const_like(a, 1)
    by_zero = e.icmp("eq", b, zero)
    overflow = e.and_(e.icmp("eq", a, e.const_like(a, _int_min(a.type))), e.icmp("eq", b, e.const_like(b, -1)))
    unsafe = e.or_(by_zero, overflow)
    quotient = (e.srem if remainder else e.sdiv)(a, e.select(unsafe, one, b))
    on_overflow = zero if remainder else a
    return e.select(by_zero, zero, e.select(overflow, on_overflow, quotient))


def _guarded_shift(e: Emitter, a: SSAValue, b: SSAValue, left: bool) -> SSAValue:
    """Shifts by >= width (or negative) are defined: 0 for shl, the sign fill for shr."""
    width = e.const_like(b, a.type.width.data)  # type: ignore[attr-defined]
    in_range = e.icmp("ult", b, width)
    safe = e.select(in_range, b, e.const_like(b, 0))
    if left:
        return e.select(in_range, e.shl(a, safe), e.const_like(a, 0))
    fill = e.ashr(a, e.const_like(a, a.type.width.data - 1))  # type: ignore[attr-defined]
    return e.select(in_range, e.ashr(a, safe), fill)


def _int_minmax(e: Emitter, a: SSAValue, b: SSAValue, pred: str) -> SSAValue:
    return e.select(e.icmp(pred, a, b), a, b)


BINARY_INT: dict[str, Binary] = {
    "add": lambda e, a, b: e.add(a, b),
    "sub": lambda e, a, b: e.sub(a, b),
    "mul": lambda e, a, b: e.mul(a, b),
    "div": lambda e, a, b: _guarded_division(e, a, b, remainder=False),
    "mod": lambda e, a, b: _guarded_division(e, a, b, remainder=True),
    "max": lambda e, a, b: _int_minmax(e, a, b, "sgt"),
    "min": lambda e, a, b: _int_minmax(e, a, b, "slt"),
    "bit_and": lambda e, a, b: e.and_(a, b),
    "bit_or": lambda e, a, b: e.or_(a, b),
    "bit_xor": lambda e, a, b: e.xor(a, b),
    "shl": lambda e, a, b: _guarded_shift(e, a, b, left=True),
    "shr": lambda e, a, b: _guarded_shift(e, a, b, left=False),
}

# compare predicates: (ordered float, signed int, bool as unsigned)
COMPARE: dict[str, tuple[str, str, str]] = {
    "eq": ("oeq", "eq", "eq"),
    "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"),
}


def _is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def _width(t: Attribute) -> int:
    return t.bitwidth if _is_float(t) else t.width.data  # type: ignore[attr-defined]


def emit_cast(e: Emitter, x: SSAValue, target: Attribute) -> SSAValue:
    """The cast rules: float->int saturates (NaN->0), int->int wraps, ->i1 is != 0."""
    source = x.type
    if source == target:
        return x
    if target == i1:
        if _is_float(source):
            return e.fcmp("une", x, e.const_like(x, 0.0))
        return e.icmp("ne", x, e.const_like(x, 0))
    if _is_float(source) and _is_float(target):
        return e.fpext(x, target) if _width(target) > _width(source) else e.fptrunc(x, target)
    if _is_float(source):
        return e.fptosi_sat(x, target)  # type: ignore[arg-type]
    if source == i1:
        if _is_float(target):
            return e.select(x, e.const(target, 1.0), e.const(target, 0.0))
        return e.zext(x, target)
    if _is_float(target):
        return e.sitofp(x, target)
    if _width(target) > _width(source):
        return e.sext(x, target)
    return e.itrunc(x, target)


def emit_scalar_op(e: Emitter, op: Operation, operands: list[SSAValue]) -> SSAValue:
    """Emit one scalar rlx op on already-loaded operand values."""
    name = op.name.removeprefix("rlx.")
    result_type = rlx.element_type(op.results[0].type)
    if isinstance(op, rlx.UnaryOp):
        return UNARY_FLOAT[name](e, operands[0])
    if isinstance(op, rlx.CompareOp):
        a, b = operands
        float_pred, int_pred, bool_pred = COMPARE[name]
        if _is_float(a.type):
            return e.fcmp(float_pred, a, b)
        return e.icmp(bool_pred if a.type == i1 else int_pred, a, b)
    if isinstance(op, rlx.BinaryOp):
        table = BINARY_FLOAT if _is_float(result_type) else BINARY_INT
        return table[name](e, *operands)
    if isinstance(op, rlx.WhereOp):
        return e.select(*operands)
    if isinstance(op, rlx.FmaOp):
        return e.fma(*operands)
    if isinstance(op, rlx.CastOp):
        return emit_cast(e, operands[0], result_type)
    raise NotImplementedError(f"no scalar lowering for '{op.name}'")
