"""Derivatives of the unary activations, for `rlx.activation_backward` (dx = dy * f'(x)).

Each entry maps an activation name to f'(x) as branch-free straight-line IR
(fcmp + select, no libm calls), written with the same vectorizable primitives
as the activations themselves (`math_approx`, and the forward helpers of
`activations` where the derivative shares their structure). The lowering
multiplies the result by dy (`scalar_ops.emit_scalar_op`); f16/bf16 evaluate
this in f32 and round the product once.

============  ==============================================  =====  =====  ============================
kind          f'(x) as evaluated                              f32    f64    at kinks / specials
============  ==============================================  =====  =====  ============================
relu          x > 0 ? 1 : 0                                   0      0      0 at 0 and NaN (reference)
gelu          x >= -sqrt2: Phi + x phi, Phi=(1+erf(x/sqrt2))/2   3.6s   5s     limits 0 / 1 at -inf / inf
              else phi (M(|x|) - |x|), M the Mills ratio
              (erf's Chebyshev tail R, asymptotic series past
              erf_max); phi = e^(-x^2/2)/sqrt(2pi), x^2 hi+lo
gelu_approx   s(2z)(1 + 2c x(1+3a x^2) s(-2z)), 2z in hi+lo    5s     4s     limits 0 / 1
silu          s(x)(1 + x s(-x))                               3s     3s     limits 0 / 1
sigmoid       t/(1+t)^2, t = e^-|x|                           4      4      0 at ±inf
tanh          4u/(1+u)^2, u = e^-2|x| (sech^2)                4      6      0 at ±inf
exp           e^x                                             1      2      inf at inf
log           1/x                                             1      0      inf at 0 (closed form)
sqrt          0.5/sqrt(x)                                     2      0      0 at ±0 (reference); NaN x<0
rsqrt         -0.5 (1/sqrt(x)) / x                            3      3      0 at ±0 (reference); NaN x<0
neg           -1                                              0      0      -
abs           sign(x) (activations.sign)                      0      0      0 at ±0; NaN -> NaN
round         1 (straight-through estimator)                  0      0      reference (torch: 0)
sin           cos x                                           2      2      NaN at ±inf
cos           -sin x                                          2      2      NaN at ±inf
tan           1/cos^2 x                                       4      6      NaN at ±inf
atan          |x|<=1: 1/fma(x,x,1); else r/(|x|+r), r=1/|x|   2      3      0 at ±inf
recip         -(1/x)/x                                        2      3      -inf at 0
floor, ceil   0                                               0      0      0 everywhere (also NaN x)
sign          0                                               0      0      0 everywhere (also NaN x)
softplus      s(x) (math_approx.sigmoid)                      3      3      -
elu           x > 0 ? 1 : e^x                                 1      2      1 at 0+, e^0 = 1 at 0
erf           2/sqrt(pi) e^(-x^2), x^2 as hi+lo               3      4      0 at ±inf
hard_swish    x<-3: 0; x>3: 1; else (2x+3)/6                  2      0      -0.5 at -3, 1.5 at 3 (torch)
hard_sigmoid  |x| < 3 ? 1/6 : 0                               1      0      0 at ±3 (torch)
mish          A/B + 4x(1+v)W/B^2, v = e^-|x| (_mish_grad)     3.7s   5s     limits 0 / 1
softsign      r^2, r = 1/(1+|x|)                              4      4      0 at ±inf
log_sigmoid   s(-x)                                           3      3      -
============  ==============================================  =====  =====  ============================

s(x) = sigmoid; "s" after a number: ULPs of the cancelling terms' magnitude
(f' has a zero there), see below.

Errors: max over the sweeps of ``tests/test_backward.py`` (40k points per
kind and width over the derivative domains of tests/op_records.py, chosen so
results stay normal; ``python tests/measure.py rlx.<kind>`` reprints them; e.g.
gelu [-13, 10] | [-37, 12], tanh [-40, 40] | [-350, 350]; random dy in
±[0.5, 2); plus specials) of dx = dy * f'(x) against a float64 closed form
(math.erfc for gelu, 50-digit decimals for gelu_approx, e^(-x^2) with an
exact x^2 for erf/gelu); f32 in ULPs of f32 vs the reference rounded to f32,
f64 in ULPs of f64 (so f64 figures include the reference's own ~1 ULP). The
final multiply by dy is included (it alone can cost 0.5 ULP). Where f' has a
zero (silu, gelu, gelu_approx, mish) no ULP bound on the result exists near
it, so "s" figures are ULPs of the magnitude of the cancelling terms
(`scaled_error` of tests/reference.py). Subnormal results (the far tails of
exp-like derivatives) carry fewer bits and are not in these figures.

Conventions at kinks and singular points (reference = the RLX runtime's
`activation_backward_kernel`; where it has no rule, PyTorch's):

* relu: 1 for x > 0, else 0 (so relu'(0) = 0, and NaN -> 0, as the reference
  and `rlx.relu_backward`).
* abs: sign(x), 0 at x = ±0 (reference, PyTorch); NaN propagates.
* round: 1, the straight-through estimator of the reference runtime
  (dx = dy). PyTorch would give 0; the reference has an explicit rule, so it wins.
* floor, ceil, sign: 0 everywhere (reference, PyTorch), NaN x included.
* sqrt, rsqrt: 0 at x = ±0 (reference: "undefined at x=0; clamp to 0");
  NaN for x < 0 and NaN x (closed form; the reference returns 0 there).
* log, recip: the closed forms 1/x, -1/x^2 (±inf at 0, like the reference).
* elu (alpha = 1): 1 for x > 0, else exp(x) (continuous at 0).
* hard_swish: 0 for x < -3, (2x + 3)/6 for -3 <= x <= 3, 1 for x > 3
  (torch: -0.5 at x = -3 and 1.5 at x = 3); NaN propagates (torch: 1).
* hard_sigmoid: 1/6 for -3 < x < 3, else 0 (torch: 0 at ±3); NaN propagates
  (torch: 0).
* Infinities give the limits of f' (e.g. silu'(-inf) = 0, tanh'(±inf) = 0,
  exp'(inf) = inf, gelu'(inf) = 1), also where the float64 closed form itself
  evaluates 0 * inf = NaN (silu, gelu, gelu_approx, mish): x is clamped to
  ±1e3 (±1e4 for gelu_approx) first, where f' has long saturated. NaN in x
  gives NaN except for relu, round, floor, ceil, sign (constants above).
* gelu_approx: the exact derivative of the implemented tanh form (the f64
  reference kernel uses the erf-GELU derivative for it instead).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

from xdsl.ir import SSAValue

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.scalar import activations
from rlx_mlir.lowering.scalar import math_approx as m

Derivative = Callable[[Emitter, SSAValue], SSAValue]

SQRT1_2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_PI_OVER_2 = math.sqrt(math.pi / 2.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
GELU_A = 0.044715
_GELU_K = {f32: m.split_constant(2 * (2 / m.PI).sqrt(), 2, f32) for f32 in (True, False)}
_GELU_A_SPLIT = {f32: m.split_constant(Decimal("0.044715"), 2, f32) for f32 in (True, False)}
# |x| beyond which every derivative has saturated (x is clamped there so that
# 0 * inf never appears at x = ±inf)
SATURATE = 1e3


def _c(e: Emitter, like: SSAValue, value: float) -> SSAValue:
    return e.const_like(like, value)


def _nan_through(e: Emitter, x: SSAValue, value: SSAValue) -> SSAValue:
    """`value`, but x where x is NaN."""
    return e.select(e.fcmp("uno", x, x), x, value)


def _sigmoid_pair(e: Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(sigmoid(x), sigmoid(-x), t = e^-|x|) from one exp: (x >= 0 ? 1 : t) / (1 + t) and
    its mirror, which never overflow (`m.sigmoid` itself scales by 2^-64 instead, to
    need no select; here the pair shares t and the denominator)."""
    t = m.exp(e, e.fneg(e.fabs(x)))
    one = _c(e, x, 1.0)
    pos = e.fcmp("oge", x, _c(e, x, 0.0))
    d = e.fadd(one, t)
    return e.fdiv(e.select(pos, one, t), d), e.fdiv(e.select(pos, t, one), d), t


def _exp_neg_sq(e: Emitter, x: SSAValue, scale: float) -> SSAValue:
    """exp(-scale * x^2), scale a power of two, with x^2 carried as hi + lo (FMA) so the
    rounding of x^2 does not cost x^2 ULPs in the exponential."""
    c = m.constants_for(x)
    hi = e.fmul(x, x)
    lo = e.fma(x, x, e.fneg(hi))
    arg = e.fmul(hi, _c(e, x, -scale))
    clamped = e.clamp(arg, *c.exp_clamp)
    lo = e.select(e.fcmp("oeq", clamped, arg), e.fmul(lo, _c(e, x, -scale)), _c(e, x, 0.0))
    return m.exp_core(e, clamped, c, lo)


# ---------------------------------------------------------------------------
# smooth activations
# ---------------------------------------------------------------------------
def _sigmoid_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """s(x) s(-x) = t/(1+t)^2, t = e^-|x|: symmetric, no 1 - s cancellation."""
    t = m.exp(e, e.fneg(e.fabs(x)))
    d = e.fadd(_c(e, x, 1.0), t)
    return e.fdiv(t, e.fmul(d, d))


def _tanh_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """sech^2 x = 4u/(1+u)^2, u = e^-2|x| (= (1-t)(1+t) without the cancellation of 1 - t^2)."""
    u = m.exp(e, e.fmul(e.fabs(x), _c(e, x, -2.0)))
    d = e.fadd(_c(e, x, 1.0), u)
    return e.fdiv(e.fmul(u, _c(e, x, 4.0)), e.fmul(d, d))


def _silu_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """s(x) (1 + x s(-x))."""
    xc = e.clamp(x, -SATURATE, SATURATE)
    s, sm, _ = _sigmoid_pair(e, xc)
    return e.fmul(s, e.fma(xc, sm, _c(e, x, 1.0)))


def _gelu_approx_two_z(e: Emitter, x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """2z = K (x + a x^3), K = 2 sqrt(2/pi), as hi + lo (FMA products, TwoSum, K and a in
    two parts): in the negative tail f' ~ e^(2z), whose relative error is |2z| times that of 2z."""
    c = m.constants_for(x)
    k_hi, k_lo = (_c(e, x, v) for v in _GELU_K[c.is_f32])
    a_hi, a_lo = (_c(e, x, v) for v in _GELU_A_SPLIT[c.is_f32])
    x2 = e.fmul(x, x)
    x2_lo = e.fma(x, x, e.fneg(x2))
    x3 = e.fmul(x2, x)
    x3_lo = e.fma(x2_lo, x, e.fma(x2, x, e.fneg(x3)))
    p = e.fmul(a_hi, x3)
    p_lo = e.fma(a_lo, x3, e.fma(a_hi, x3_lo, e.fma(a_hi, x3, e.fneg(p))))
    s, s_err = m.two_sum(e, x, p)
    s_lo = e.fadd(s_err, p_lo)
    q = e.fmul(k_hi, s)
    q_lo = e.fma(k_lo, s, e.fma(k_hi, s_lo, e.fma(k_hi, s, e.fneg(q))))
    return q, q_lo


def _gelu_approx_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """d/dx x s(2z), z = sqrt(2/pi)(x + a x^3): s(2z) (1 + 2 sqrt(2/pi) x (1 + 3a x^2) s(-2z)),
    with s(±2z) from one t = e^-|2z| evaluated on the hi + lo 2z."""
    c = m.constants_for(x)
    xc = e.clamp(x, -10 * SATURATE, 10 * SATURATE)
    q, q_lo = _gelu_approx_two_z(e, xc)
    one, zero = _c(e, x, 1.0), _c(e, x, 0.0)
    pos = e.fcmp("oge", q, zero)
    arg = e.fneg(e.fabs(q))
    clamped = e.clamp(arg, *c.exp_clamp)
    lo = e.select(e.fcmp("oeq", clamped, arg), e.select(pos, e.fneg(q_lo), q_lo), zero)
    t = m.exp_core(e, clamped, c, lo)
    d = e.fadd(one, t)
    s = e.fdiv(e.select(pos, one, t), d)
    sm = e.fdiv(e.select(pos, t, one), d)
    x2 = e.fmul(xc, xc)
    dz = e.fmul(e.fmul(xc, _c(e, x, 2 * SQRT_2_OVER_PI)), e.fma(_c(e, x, 3 * GELU_A), x2, one))
    return e.fmul(s, e.fma(dz, sm, one))


def _double_factorials(n: int) -> list[float]:
    """(-1)^k (2k-1)!! for k < n: the asymptotic series of the Mills ratio in 1/a^2."""
    out, v = [], 1
    for k in range(n):
        out.append(float((-1) ** k * v))
        v *= 2 * k + 1
    return out


_MILLS_ASYMPTOTIC = {True: _double_factorials(16), False: _double_factorials(36)}


def _mills(e: Emitter, a: SSAValue) -> SSAValue:
    """M(a) = Phi(-a)/phi(a) for a >= sqrt 2: sqrt(pi/2) R(a/sqrt2) with R = erfc(t) e^(t^2)
    the Chebyshev fit of `math_approx.erf`'s tail on [1, erf_max], and beyond it the
    asymptotic series (1/a) sum (-1)^k (2k-1)!! a^-2k (truncated near its smallest term)."""
    c = m.constants_for(a)
    z = e.fmul(a, _c(e, a, SQRT1_2))
    lo, hi = 1.0, c.erf_max
    t = e.clamp(z, lo, hi)
    s = e.fma(t, _c(e, a, 2 / (hi - lo)), _c(e, a, -(lo + hi) / (hi - lo)))
    cheb = e.fmul(m.chebyshev_series(e, s, m.erf_tail_chebyshev(c.is_f32)), _c(e, a, SQRT_PI_OVER_2))
    inv_a = e.fdiv(_c(e, a, 1.0), a)
    asym = e.fmul(e.poly(e.fmul(inv_a, inv_a), _MILLS_ASYMPTOTIC[c.is_f32]), inv_a)
    return e.select(e.fcmp("ogt", z, _c(e, a, hi)), asym, cheb)


def _gelu_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """Phi(x) + x phi(x). For x >= -sqrt2: Phi = (1 + erf(x/sqrt2))/2 (no cancellation to
    speak of); below, Phi(x) = phi(x) M(|x|) (Mills ratio) so f' = phi(x) (M(|x|) - |x|)
    keeps full relative precision down to the underflow of phi."""
    xc = e.clamp(x, -SATURATE, SATURATE)
    pdf = e.fmul(_exp_neg_sq(e, xc, 0.5), _c(e, x, INV_SQRT_2PI))
    cdf = e.fma(_c(e, x, 0.5), m.erf(e, e.fmul(xc, _c(e, x, SQRT1_2))), _c(e, x, 0.5))
    near = e.fma(xc, pdf, cdf)
    a = e.fabs(xc)
    tail = e.fmul(pdf, e.fsub(_mills(e, a), a))
    return e.select(e.fcmp("olt", xc, _c(e, x, -math.sqrt(2.0))), tail, near)


def _mish_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """tanh(sp) + x sech^2(sp) s(x), sp = softplus(x), in v = e^-|x| (never overflows).

    With n = e^x (e^x + 2): tanh(sp) = n/(n+2) and sech^2(sp) s(x) = 4 e^x (1+e^x)/(n+2)^2.
    x < 0:  A = v(v+2), B = A + 2, W = v;   x >= 0 (divide through by e^2x):
    A = 1 + 2v, B = A + 2v^2, W = v^2;      f' = A/B + 4x(1+v) W / B^2.
    """
    xc = e.clamp(x, -SATURATE, SATURATE)
    v = m.exp(e, e.fneg(e.fabs(xc)))
    one, two = _c(e, x, 1.0), _c(e, x, 2.0)
    pos = e.fcmp("oge", xc, _c(e, x, 0.0))
    vv = e.fmul(v, v)
    two_v = e.fadd(v, v)
    big_a = e.select(pos, e.fadd(one, two_v), e.fma(v, v, two_v))
    big_b = e.fadd(big_a, e.select(pos, e.fadd(vv, vv), two))
    w = e.select(pos, vv, v)
    num = e.fmul(e.fmul(e.fmul(xc, _c(e, x, 4.0)), e.fadd(one, v)), w)
    return e.fadd(e.fdiv(big_a, big_b), e.fdiv(num, e.fmul(big_b, big_b)))


def _erf_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """2/sqrt(pi) e^(-x^2)."""
    return e.fmul(_exp_neg_sq(e, x, 1.0), _c(e, x, TWO_OVER_SQRT_PI))


def _softsign_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """r^2, r = 1/(1+|x|): no overflow of (1+|x|)^2."""
    r = e.fdiv(_c(e, x, 1.0), e.fadd(_c(e, x, 1.0), e.fabs(x)))
    return e.fmul(r, r)


def _atan_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """1/(1 + x^2) = 1/fma(x, x, 1) for |x| <= 1, else r/(|x| + r), r = 1/|x| (no overflow of x^2)."""
    one = _c(e, x, 1.0)
    ax = e.fabs(x)
    r = e.fdiv(one, ax)
    big = e.fdiv(r, e.fadd(ax, r))
    small = e.fdiv(one, e.fma(x, x, one))
    return e.select(e.fcmp("ogt", ax, one), big, small)


def _tan_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """sec^2 x = 1/cos^2 x (the reduced cos kernel is accurate near the poles; 1 + tan^2 is not)."""
    c = m.cos(e, x)
    return e.fdiv(_c(e, x, 1.0), e.fmul(c, c))


# ---------------------------------------------------------------------------
# algebraic
# ---------------------------------------------------------------------------
def _zero_at_zero(e: Emitter, x: SSAValue, value: SSAValue) -> SSAValue:
    return e.select(e.fcmp("oeq", x, _c(e, x, 0.0)), _c(e, x, 0.0), value)


def _sqrt_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """0.5/sqrt(x); 0 at x = 0 (reference runtime)."""
    return _zero_at_zero(e, x, e.fdiv(_c(e, x, 0.5), activations.FLOAT[ew.SqrtOp](e, x)))


def _rsqrt_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """-0.5 rsqrt(x)/x (no overflow of x sqrt(x)); 0 at x = 0 (reference runtime)."""
    r = activations.FLOAT[ew.RsqrtOp](e, x)
    return _zero_at_zero(e, x, e.fdiv(e.fmul(r, _c(e, x, -0.5)), x))


def _recip_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """-(1/x)/x: no intermediate overflow/underflow of x^2."""
    return e.fneg(e.fdiv(activations.FLOAT[ew.RecipOp](e, x), x))


# ---------------------------------------------------------------------------
# piecewise
# ---------------------------------------------------------------------------
def _relu_grad(e: Emitter, x: SSAValue) -> SSAValue:
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), _c(e, x, 1.0), _c(e, x, 0.0))


def _elu_grad(e: Emitter, x: SSAValue) -> SSAValue:
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), _c(e, x, 1.0), m.exp(e, x))


def _hard_swish_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """(2x + 3)/6 on [-3, 3] (2x + 3 is exact near the zero at -1.5), 0 below, 1 above."""
    mid = e.fdiv(e.fadd(e.fadd(x, x), _c(e, x, 3.0)), _c(e, x, 6.0))
    upper = e.select(e.fcmp("ogt", x, _c(e, x, 3.0)), _c(e, x, 1.0), mid)
    return e.select(e.fcmp("olt", x, _c(e, x, -3.0)), _c(e, x, 0.0), upper)


def _hard_sigmoid_grad(e: Emitter, x: SSAValue) -> SSAValue:
    inside = e.fcmp("olt", e.fabs(x), _c(e, x, 3.0))
    return _nan_through(e, x, e.select(inside, _c(e, x, 1.0 / 6.0), _c(e, x, 0.0)))


def _const(value: float) -> Derivative:
    return lambda e, x: _c(e, x, value)


DERIVATIVES: dict[type[ew.UnaryOp], Derivative] = {
    ew.ReluOp: _relu_grad,
    ew.GeluOp: _gelu_grad,
    ew.GeluApproxOp: _gelu_approx_grad,
    ew.SiluOp: _silu_grad,
    ew.SigmoidOp: _sigmoid_grad,
    ew.TanhOp: _tanh_grad,
    ew.ExpOp: m.exp,
    ew.LogOp: lambda e, x: e.fdiv(_c(e, x, 1.0), x),
    ew.SqrtOp: _sqrt_grad,
    ew.RsqrtOp: _rsqrt_grad,
    ew.NegOp: _const(-1.0),
    ew.AbsOp: activations.sign,
    ew.RoundOp: _const(1.0),
    ew.SinOp: m.cos,
    ew.CosOp: lambda e, x: e.fneg(m.sin(e, x)),
    ew.TanOp: _tan_grad,
    ew.AtanOp: _atan_grad,
    ew.RecipOp: _recip_grad,
    ew.FloorOp: _const(0.0),
    ew.CeilOp: _const(0.0),
    ew.SignOp: _const(0.0),
    ew.SoftplusOp: m.sigmoid,
    ew.EluOp: _elu_grad,
    ew.ErfOp: _erf_grad,
    ew.HardSwishOp: _hard_swish_grad,
    ew.HardSigmoidOp: _hard_sigmoid_grad,
    ew.MishOp: _mish_grad,
    ew.SoftsignOp: _softsign_grad,
    ew.LogSigmoidOp: lambda e, x: m.sigmoid(e, e.fneg(x)),
}
