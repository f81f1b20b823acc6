"""The unary activations on one float element, as `llvm` dialect ops.

`FLOAT` maps each unary op class to its formula; `scalar_ops.emit_scalar_op`
looks it up for a standalone op and for the same op inside a fused region
alike. Transcendentals come from `math_approx` (vectorizable, no libm calls;
accuracy in its docstring), and each formula is written to avoid overflow and
cancellation (softplus, log_sigmoid, the tails of gelu and gelu_approx), and to
stay right at ±max and where results are subnormal (hard_swish, silu, mish, gelu,
gelu_approx: e^x scaled by 2^64, the result scaled back once). Their edges are
tested per type in tests/test_numeric_edges.py. Integer and complex forms
of `neg abs sign exp log sqrt` are in `scalar_ops` and `complex_ops`; the
derivatives are in `activation_grads`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

from xdsl.ir import SSAValue

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.scalar import math_approx as m

Unary = Callable[[Emitter, SSAValue], SSAValue]

SQRT1_2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SUBNORMAL_SCALE = 64  # log2 of the scale that keeps e^x normal down to where x e^x underflows


def _c(e: Emitter, like: SSAValue, value: float) -> SSAValue:
    return e.const_like(like, value)


def softplus(e: Emitter, x: SSAValue) -> SSAValue:
    """max(x, 0) + log1p(exp(-|x|)): never overflows."""
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fadd(e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _log_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fsub(e.select(e.fcmp("olt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _gelu(e: Emitter, x: SSAValue) -> SSAValue:
    """Exact GELU x Phi(x): x/2 (1 + erf(x / sqrt2)) for |x| < 1/sqrt2; beyond, with g = |x| (1 - Phi(|x|))
    from `normal_tail_scaled`, x - g for x > 0 and -g for x < 0 (no cancellation: right down to
    where it underflows, rounded once there). gelu(-inf) stays NaN, as the formula gives."""
    half_x = e.fmul(x, _c(e, x, 0.5))
    head = e.copysign(e.fma(half_x, m.erf_small(e, e.fmul(x, _c(e, x, SQRT1_2))), half_x), x)  # keeps -0
    g_scaled = m.normal_tail_scaled(e, x, SUBNORMAL_SCALE)
    g = e.fmul(g_scaled, _c(e, x, 2.0**-SUBNORMAL_SCALE))
    tail = e.select(e.fcmp("oge", x, _c(e, x, 0.0)), e.fsub(x, g), e.fneg(g))
    res = e.select(e.fcmp("olt", e.fabs(x), _c(e, x, SQRT1_2)), head, tail)
    return e.select(e.fcmp("oeq", x, _c(e, x, -math.inf)), _c(e, x, math.nan), res)


_TWO_Z = (2 * (2 / m.PI).sqrt(), 2 * (2 / m.PI).sqrt() * Decimal("0.044715"))
GELU_APPROX_2Z = {is_f32: tuple(m.split_constant(c, 2, is_f32) for c in _TWO_Z) for is_f32 in (True, False)}
"""2z = c1 x + c3 x^3 with c1, c3 as unevaluated pairs of each width."""


def _gelu_approx(e: Emitter, x: SSAValue) -> SSAValue:
    """The tanh form x/2 * (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated
    as x * sigmoid(2z): the same function without the cancellation of 1 + tanh(z)
    for negative x. 2z is formed as a double-double (x^3 and the constants exact to ~2^-100),
    since e^(2z) magnifies its rounding by |2z| (up to ~100 in f32 before the result underflows)."""
    pairs = GELU_APPROX_2Z[m.constants_for(x).is_f32]
    (c1, c1_lo), (c3, c3_lo) = ((_c(e, x, hi), _c(e, x, lo)) for hi, lo in pairs)
    x2 = e.fmul(x, x)
    x2_lo = e.fma(x, x, e.fneg(x2))
    x3 = e.fmul(x2, x)
    x3_lo = e.fma(x2_lo, x, e.fma(x2, x, e.fneg(x3)))
    a = e.fmul(c1, x)
    a_lo = e.fma(c1_lo, x, e.fma(c1, x, e.fneg(a)))
    b = e.fmul(c3, x3)
    b_lo = e.fma(c3, x3_lo, e.fma(c3_lo, x3, e.fma(c3, x3, e.fneg(b))))
    w, w_err = m.two_sum(e, a, b)
    return _times_sigmoid(e, x, w, e.fadd(w_err, e.fadd(a_lo, b_lo)))


def _times_sigmoid(e: Emitter, x: SSAValue, w: SSAValue, w_lo: SSAValue | None = None) -> SSAValue:
    """x sigmoid(w + w_lo) for x with the sign of w: x / (1 + e^-w) for w >= 0; for w < 0
    (x e^w) / (1 + e^w) with e^w scaled by 2^64 and the quotient scaled back, so a subnormal
    result is rounded once (x e^w never overflows: e^w <= 1)."""
    pos = e.fcmp("oge", w, _c(e, x, 0.0))
    neg_abs = e.fneg(e.fabs(w))
    lo = None if w_lo is None else e.select(pos, e.fneg(w_lo), w_lo)
    ws = m.exp_scaled(e, neg_abs, SUBNORMAL_SCALE, lo)
    t = e.fmul(ws, _c(e, x, 2.0**-SUBNORMAL_SCALE))
    res = e.fdiv(e.select(pos, x, e.fmul(x, ws)), e.fadd(_c(e, x, 1.0), t))
    return e.select(pos, res, e.fmul(res, _c(e, x, 2.0**-SUBNORMAL_SCALE)))


def _silu(e: Emitter, x: SSAValue) -> SSAValue:
    return _times_sigmoid(e, x, x)


def _mish(e: Emitter, x: SSAValue) -> SSAValue:
    """x tanh(softplus(x)) as a rational function of w = e^-|x| (no tanh, log or overflow):
    x (1 + 2w) / (1 + 2w + 2w^2) for x >= 0, x w (w + 2) / (w (w + 2) + 2) for x < 0, the latter
    with w scaled as in silu so results in the subnormal range are rounded once."""
    ws = m.exp_scaled(e, e.fneg(e.fabs(x)), SUBNORMAL_SCALE)
    w = e.fmul(ws, _c(e, x, 2.0**-SUBNORMAL_SCALE))
    one, two = _c(e, x, 1.0), _c(e, x, 2.0)
    pos = e.fcmp("oge", x, _c(e, x, 0.0))
    two_w = e.fmul(two, w)
    one_2w = e.fadd(one, two_w)
    w_2 = e.fadd(w, two)
    num = e.select(pos, e.fmul(x, one_2w), e.fmul(x, e.fmul(ws, w_2)))
    den = e.select(pos, e.fma(two_w, w, one_2w), e.fma(w, w_2, two))
    res = e.fdiv(num, den)
    return e.select(pos, res, e.fmul(res, _c(e, x, 2.0**-SUBNORMAL_SCALE)))


def sign(e: Emitter, x: SSAValue) -> SSAValue:
    """1, -1, +0 for ±0 and NaN for NaN (as np.sign)."""
    one, zero = _c(e, x, 1.0), _c(e, x, 0.0)
    neg = e.select(e.fcmp("olt", x, zero), e.fneg(one), e.fadd(x, zero))
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), one, neg)


def _hard_swish(e: Emitter, x: SSAValue) -> SSAValue:
    """x * (clamp(x + 3, 0, 6) / 6): the factor is <= 1, so nothing overflows (= x for x >= 3)."""
    return e.fmul(x, e.fdiv(e.clamp(e.fadd(x, _c(e, x, 3.0)), 0.0, 6.0), _c(e, x, 6.0)))


def _hard_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    return e.clamp(e.fadd(e.fdiv(x, _c(e, x, 6.0)), _c(e, x, 0.5)), 0.0, 1.0)


def _elu(e: Emitter, x: SSAValue) -> SSAValue:
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, m.expm1(e, x))


def _relu(e: Emitter, x: SSAValue) -> SSAValue:
    """x < 0 ? 0 : x, so NaN passes through as in np.maximum(x, 0)."""
    return e.select(e.fcmp("olt", x, _c(e, x, 0.0)), _c(e, x, 0.0), x)


FLOAT: dict[type[ew.UnaryOp], Unary] = {
    ew.ReluOp: _relu,
    ew.GeluOp: _gelu,
    ew.GeluApproxOp: _gelu_approx,
    ew.SiluOp: _silu,
    ew.SigmoidOp: m.sigmoid,
    ew.TanhOp: m.tanh,
    ew.ExpOp: m.exp,
    ew.LogOp: m.log,
    ew.SqrtOp: lambda e, x: e.sqrt(x),
    ew.RsqrtOp: lambda e, x: e.fdiv(_c(e, x, 1.0), e.sqrt(x)),
    ew.NegOp: lambda e, x: e.fneg(x),
    ew.AbsOp: lambda e, x: e.fabs(x),
    ew.RoundOp: lambda e, x: e.roundeven(x),
    ew.SinOp: m.sin,
    ew.CosOp: m.cos,
    ew.TanOp: m.tan,
    ew.AtanOp: m.atan,
    ew.RecipOp: lambda e, x: e.fdiv(_c(e, x, 1.0), x),
    ew.FloorOp: lambda e, x: e.floor(x),
    ew.CeilOp: lambda e, x: e.ceil(x),
    ew.SignOp: sign,
    ew.SoftplusOp: softplus,
    ew.EluOp: _elu,
    ew.ErfOp: m.erf,
    ew.HardSwishOp: _hard_swish,
    ew.HardSigmoidOp: _hard_sigmoid,
    ew.MishOp: _mish,
    ew.SoftsignOp: lambda e, x: e.fdiv(x, e.fadd(_c(e, x, 1.0), e.fabs(x))),
    ew.LogSigmoidOp: _log_sigmoid,
}
