"""Branch-free, vectorizable approximations of transcendental functions.

Every function here takes an :class:`~.emitter.Emitter` and a scalar f32/f64
SSA value and returns the result as straight-line `llvm` dialect ops: no
blocks, no libm calls, and no LLVM intrinsics that lower to libm (no
``llvm.exp/log/sin/cos/pow``, no ``frem``).  Only arithmetic, FMA, fcmp +
select, bit casts, integer ops and the "cheap" intrinsics (fabs, sqrt, floor,
trunc, roundeven, copysign, fshl) are used, so a loop calling these
functions is vectorized by LLVM into packed AVX-512/AVX2 code.

Each algorithm is written once; the per-width numbers live in a `Constants`
table selected from ``x.type``.  Polynomial coefficients are Taylor
coefficients computed exactly at import time (so they cannot be mistyped),
except fits made in float64 on first use: `erf`'s f64 tail (Chebyshev), the
f32 e^-r - 1 of tanh and sigmoid (`tanh_sigmoid_q`, one term fewer than
expm1's Taylor table) and f32 erf's two pieces (`erf_head_poly`,
`erfc_log_poly`), the minimax ones by Lawson's iteration (`_lawson`).

Accuracy: the sweep range and the max error (in ULPs of each width, vs
NumPy float64) of every function are one table, ``MATH_APPROX_ACCURACY`` in
``tests/accuracy.py``, which every numeric test of these functions reads
(``tests/test_math_approx.py`` sweeps each kernel alone over ~2.25e6 points
per function and width, plus ±0, ±inf, NaN, subnormals, ±max and the
overflow/underflow thresholds). NaN/inf positions and signed zeros match
NumPy exactly; values outside a range saturate and are covered by the
special values. Every f32 input of tanh, sigmoid and erf is within its bound
(``tests/exhaustive_f32.py``, offline: 2 ULP for tanh and sigmoid, on 0.15% /
0.0006% of the inputs, 1 ULP for erf, on 8.4%; the test suite checks every
f32 in the windows around tanh's and sigmoid's maxima, the clamps and the
saturation points).

=========  ================================================
function   method
=========  ================================================
exp        k=rint(x/ln2) by magic add, 2-part ln2,
           Taylor p(r), 2^k as two exponent-bit factors
           (exp_nonpositive, softmax's: x <= 0, one
           factor, 0 where exp is subnormal)
exp2       2^(a·b) (exp2_product): k=rint(a·b), f32
           minimax p(a·b-k); in range: k and a·b-k by
           two FMAs with the magic, k added to p's
           exponent bits
expm1      same reduction, expm1(r)=r+r^2 q(r),
           s1*fma(s2, em, s2-2^-k1) (no overflow in 2^k)
log        x=2^k m, m in [sqrt.5,sqrt2), 2atanh(f/(2+f))
           series (fdlibm layout), subnormals pre-scaled
log1p      log core on u=1+x plus (x-(u-1))/u correction
tanh       x's sign on em/(em+2), em = e^-2|x| - 1
           = 2^k (e^-r - 1) + (2^k - 1), one FMA
sigmoid    2^-64 / (E + 2^-64), E = e^-x 2^-64
           = 2^(k-64) (e^-r - 1) + 2^(k-64), one FMA
           (both: k by one FMA with the magic, 2^k
           from the sum's bits, one e^-r - 1 table)
erf        |x| < cut: x + x P(x^2) (f32 minimax, f64
           Taylor); else 1 - erfc: f32 e^Q(u), Q a fit
           of log erfc in u = (|x|-cut)/(max-cut); f64
           e^(-x^2) R(|x|), R=erfc*exp(x^2) as fitted
           Chebyshev (Estrin)
sin/cos    q=rint(2x/pi), 3-part Cody-Waite pi/2 by FMA
           (|x| < 2^16 / 2^30), else exact Payne-Hanek
           in integers; Taylor kernels, quadrant by selects
tan        same reduction, sin(r)/cos(r) or -cos/sin
atan       |x|>1 -> pi/2-atan(1/x); t>tan(pi/8) ->
           pi/4+atan((t-1)/(t+1)); Taylor on [0,0.4143]
atan2      atan core on min/max(|x|,|y|) + quadrant fixes
pow        f64: double-double log (k ln2 + 2 atanh(s)),
           y*log as hi+lo, exp with low-part correction;
           f32: computed in f64 and rounded.  C99 specials.
=========  ================================================

sin/cos/tan hold their bounds for every finite input. Cody-Waite is exact
enough only while q pi/2 stays close to x in the working precision, so from
|x| >= 2^16 (f32) / 2^30 (f64) the exact reduction (`PayneHanek`) takes over:
y = x 2/pi mod 4 as a fixed-point integer, M times a window of the bits of
2/pi cut by the exponent, in 32-bit limb products (64/128 result bits for
f32/f64, enough for the closest approach of any float to a multiple of pi/2).
Both reductions run for every element and a select picks one, so loops stay
straight-line and vectorized; the exact path is then most of the cost (f32 sin
0.70 ns/element against 0.23 for Cody-Waite alone, f64 2.4 against 0.58:
128-bit products and the 19-word barrel). Flat elementwise kernels avoid it:
inside `exact_reduction_deferred` only Cody-Waite is emitted and each call
reports whether its element needs the exact path, so the kernel
(`lowering/kernels/elementwise.py`) computes a chunk the fast way and recomputes it
with the selects only when a flag is set, at the fast path's speed for
arguments below the limit (benchmarks/unary.py). Every f32 with |x| >= 2^-30 (exhaustively,
offline), every f16 and bf16 value, and the f64 sweeps and hardest cases of
tests/test_numeric_edges.py are within the bounds of tests/accuracy.py.

"(t + M) - M" rounding tricks are safe because the emitter sets no fast-math
flags (no ``reassoc``, and no ``contract`` either: FMAs are explicit).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal, getcontext
from fractions import Fraction
from functools import cache

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute, SSAValue

from rlx_mlir.lowering.core.emitter import Emitter, int_twin

getcontext().prec = 80
PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899")
_LN2 = Decimal("0.69314718055994530941723212145817656807550013436025525412068000949339362196969471")


# ---------------------------------------------------------------------------
# per-width constant tables
# ---------------------------------------------------------------------------
def _round_to(value: Decimal | Fraction | float, is_f32: bool) -> float:
    """Round a high-precision value to the target width (returned as a Python float)."""
    v = float(value)  # correctly rounded to double
    if is_f32:
        # re-round from the exact decimal to avoid double rounding where it matters
        v32 = float(np.float32(v))
        return v32
    return v


def split_constant(value: Decimal, parts: int, is_f32: bool) -> tuple[float, ...]:
    """Split `value` into `parts` floats of the target width whose sum is `value` to ~parts*p bits.

    Used for Cody-Waite style constants (ln2, pi/2): with FMA the products by
    the leading part are exact, so the reduced argument keeps full precision.
    """
    out = []
    rest = value
    for _ in range(parts):
        p = _round_to(rest, is_f32)
        out.append(p)
        rest = rest - Decimal(p)
    return tuple(out)


def _bits(value: float, is_f32: bool) -> int:
    """The IEEE bit pattern of `value` at the target width, as a Python int."""
    if is_f32:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _taylor(n_terms: int, coef) -> list[float]:
    """Exact Taylor coefficients coef(n) for n < n_terms, rounded once to double."""
    return [float(coef(n)) for n in range(n_terms)]


def _lawson(basis: np.ndarray, target: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Coefficients c minimizing max |(basis @ c - target) scale| over the nodes (the rows):
    Lawson's iteration, least squares reweighted by the error, which converges to the
    equioscillating fit. `scale` turns the error into the measure minimized (1/target: relative)."""
    weight = np.full(len(target), 1.0 / len(target))
    best_err, best = math.inf, np.zeros(basis.shape[1])
    for _ in range(60):
        root = np.sqrt(weight) * scale
        coeffs = np.linalg.lstsq(basis * root[:, None], target * root, rcond=None)[0]
        err = (basis @ coeffs - target) * scale
        if np.max(np.abs(err)) < best_err:
            best_err, best = float(np.max(np.abs(err))), coeffs
        weight = weight * np.abs(err)
        weight /= weight.sum()
    return best


def _chebyshev_nodes(count: int) -> np.ndarray:
    """`count` Chebyshev nodes in (-1, 1), none at 0 (an even count)."""
    return np.cos(np.pi * (np.arange(count) + 0.5) / count)


def expm1_minimax_q(n_terms: int) -> list[float]:
    """q with e^r - 1 ~ r + r^2 q(r) on the reduced range |r| <= ln2/2, of `n_terms` coefficients,
    minimax in relative error and rounded to f32 (tanh and sigmoid, whose 2-ULP bounds leave room
    for one term fewer than the 1-ULP expm1 needs: each term is an FMA per element of every fused
    kernel with either).

    Lawson's iteration (least squares reweighted by the error, which converges to the equioscillating
    fit) on Chebyshev nodes, in float64: its own error, ~2^-40 relative, is far below f32's; for f64
    a float64 fit could not reach the precision it needs, so f64 keeps the Taylor `expm1_q`. The
    range has a little room for the rounding of the reduced argument."""
    half = math.log(2) / 2 * 1.001
    s = _chebyshev_nodes(1000)  # r / half, never 0
    r = half * s
    em1 = np.expm1(r)
    basis = (s * s)[:, None] * s[:, None] ** np.arange(n_terms)  # in s for conditioning
    best = _lawson(basis, (em1 - r) / half**2, 1 / np.abs(em1))
    return [_round_to(v / half**j, True) for j, v in enumerate(best)]


@cache
def exp2_minimax_poly(n_terms: int) -> tuple[float, ...]:
    """p with 2^r ~ p(r) on |r| <= 1/2, `n_terms` coefficients, minimax in relative error and
    rounded to f32: Lawson's iteration as in `expm1_minimax_q`, for `exp2_product`."""
    half = 0.5 * 1.001
    s = _chebyshev_nodes(1000)
    target = np.exp2(half * s)
    best = _lawson(s[:, None] ** np.arange(n_terms), target, 1 / target)  # in s = r / half for conditioning
    return tuple(_round_to(v / half**j, True) for j, v in enumerate(best))


EXP2_TERMS = 7
"""Coefficients of `exp2_product`'s minimax polynomial (f32), one fewer than `exp`'s
Taylor table (6 measured 3 ULP)."""


@dataclass(frozen=True)
class Constants:
    """Everything width-specific: format parameters, split constants, polynomial tables."""

    is_f32: bool
    mant: int  # explicit mantissa bits
    bias: int
    magic: float  # 1.5 * 2^mant: adding it rounds to an integer in the low bits
    ln2: tuple[float, ...]
    log2e: float
    pio2: tuple[float, ...]
    pio4: tuple[float, ...]
    pi: tuple[float, ...]
    exp_clamp: tuple[float, float]
    expm1_lo: float
    exp_poly: list[float]  # p(r) ~ e^r on |r| <= ln2/2
    expm1_q: list[float]  # q(r) with e^r - 1 = r + r^2 q(r)
    log_r: list[float]  # R(z) / z, z = s^2 (2 atanh(s) = 2s + s R)
    sin_poly: list[float]  # sin r = r + r^3 S(r^2)
    cos_poly: list[float]  # cos r = 1 + r^2 C(r^2)
    atan_poly: list[float]  # atan u = u + u^3 A(u^2) on |u| <= tan(pi/8)
    erf_cut: float  # erf's head x + x P(x^2) below, its tail 1 - erfc above
    erf_max: float  # erf(x) rounds to 1 beyond this
    erf_cheb_deg: int
    min_normal: float


def _make_constants(is_f32: bool) -> Constants:
    mant = 23 if is_f32 else 52
    # Term counts are the fewest that keep the bounds of tests/accuracy.py: for f32, one exp or
    # expm1 term fewer fails the exp or expm1 sweep (tanh and sigmoid: `tanh_sigmoid_q`); each
    # term is an FMA in every exp of a fused kernel.
    n_exp, n_em, n_log, n_sin, n_cos, n_atan = (8, 7, 5, 5, 6, 10) if is_f32 else (15, 14, 11, 9, 9, 22)
    return Constants(
        is_f32=is_f32,
        mant=mant,
        bias=127 if is_f32 else 1023,
        magic=1.5 * 2.0**mant,
        ln2=split_constant(_LN2, 2, is_f32),
        log2e=_round_to(1 / _LN2, is_f32),
        pio2=split_constant(PI / 2, 3, is_f32),
        pio4=split_constant(PI / 4, 2, is_f32),
        pi=split_constant(PI, 2, is_f32),
        exp_clamp=(-110.0, 90.0) if is_f32 else (-750.0, 712.0),
        expm1_lo=-30.0 if is_f32 else -60.0,
        exp_poly=_taylor(n_exp, lambda n: Fraction(1, math.factorial(n))),
        expm1_q=_taylor(n_em, lambda n: Fraction(1, math.factorial(n + 2))),
        log_r=_taylor(n_log, lambda n: Fraction(2, 2 * n + 3)),
        sin_poly=_taylor(n_sin, lambda n: Fraction((-1) ** (n + 1), math.factorial(2 * n + 3))),
        cos_poly=_taylor(n_cos, lambda n: Fraction((-1) ** (n + 1), math.factorial(2 * n + 2))),
        atan_poly=_taylor(n_atan, lambda n: Fraction((-1) ** (n + 1), 2 * n + 3)),
        erf_cut=0.875 if is_f32 else 1.0,
        erf_max=4.0 if is_f32 else 6.0,
        erf_cheb_deg=14 if is_f32 else 30,
        min_normal=2.0 ** (-126 if is_f32 else -1022),
    )


_F32 = _make_constants(True)
_F64 = _make_constants(False)


def constants_for(x: SSAValue) -> Constants:
    """Dispatch on the SSA value's float type."""
    if isinstance(x.type, Float32Type):
        return _F32
    if isinstance(x.type, Float64Type):
        return _F64
    raise TypeError(f"math_approx supports f32/f64 only, got {x.type}")


@cache
def erf_tail_chebyshev(is_f32: bool) -> tuple[float, ...]:
    """Chebyshev coefficients of R(t) = erfc(t) exp(t^2) on [1, erf_max].

    R only needs modest *relative* accuracy because erf = 1 - exp(-t^2) R(t)
    and exp(-t^2) R(t) <= 0.16 there; a float64 least-squares fit on
    Chebyshev nodes (with t^2 exact, so exp(t^2) is accurate) is plenty.
    """
    c = _F32 if is_f32 else _F64
    a, b = 1.0, c.erf_max
    n = 400
    k = np.arange(n)
    s = np.cos(np.pi * (k + 0.5) / n)
    t = (a + b) / 2 + (b - a) / 2 * s
    t = np.round(t * 2.0**20) / 2.0**20  # t^2 exact in double
    s = (2 * t - (a + b)) / (b - a)
    y = np.array([math.erfc(v) * math.exp(v * v) for v in t])
    coeffs = np.polynomial.chebyshev.chebfit(s, y, c.erf_cheb_deg, w=1 / y)
    return tuple(float(v) for v in coeffs)


@cache
def tanh_sigmoid_q(is_f32: bool) -> tuple[float, ...]:
    """q of e^-r - 1 = -r + r^2 q(-r) in tanh and sigmoid. f32: the 5-term minimax fit, one term
    fewer than `expm1_q` (4 fail their sweeps; each term is an FMA per element of every fused kernel
    with either); f64: `expm1_q`. Fitted on first use, not at import (~10 ms)."""
    return tuple(expm1_minimax_q(5)) if is_f32 else tuple(_F64.expm1_q)


# ---------------------------------------------------------------------------
# small building blocks
# ---------------------------------------------------------------------------
def _k(e: Emitter, x: SSAValue, v: float) -> SSAValue:
    return e.const_like(x, v)


def _ik(e: Emitter, x: SSAValue, v: int) -> SSAValue:
    """Integer constant of x's twin width."""
    return e.const(int_twin(x.type), v)


def _pow2_factor(e: Emitter, k: SSAValue, c: Constants, ft: Attribute) -> SSAValue:
    """2^k as a float built from exponent bits (k must be a normal exponent)."""
    return e.from_bits(e.shl(e.add(k, e.const(k.type, c.bias)), e.const(k.type, c.mant)), ft)


def _ldexp(e: Emitter, p: SSAValue, k: SSAValue, c: Constants) -> SSAValue:
    """p * 2^k as two exact factors: overflow gives inf, underflow a correctly rounded subnormal."""
    k1 = e.ashr(k, e.const(k.type, 1))
    k2 = e.sub(k, k1)
    return e.fmul(e.fmul(p, _pow2_factor(e, k1, c, p.type)), _pow2_factor(e, k2, c, p.type))


def _rint_magic(e: Emitter, t: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """(round(t) as float, as twin int) via the 1.5*2^p magic add; valid for |t| < 2^(p-1)."""
    m = _k(e, t, c.magic)
    tm = e.fadd(t, m)
    kf = e.fsub(tm, m)
    ki = e.sub(e.as_bits(tm), _ik(e, t, _bits(c.magic, c.is_f32)))
    return kf, ki


def _exp_reduce(e: Emitter, x: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """x = k ln2 + r with |r| <= ln2/2 (+ rounding); returns (r, k as twin int)."""
    kf, ki = _rint_magic(e, e.fmul(x, _k(e, x, c.log2e)), c)
    nk = e.fneg(kf)
    r = e.fma(nk, _k(e, x, c.ln2[0]), x)
    r = e.fma(nk, _k(e, x, c.ln2[1]), r)
    return r, ki


def exp_core(e: Emitter, x: SSAValue, c: Constants, lo: SSAValue | None = None) -> SSAValue:
    """e^(x + lo) for x already clamped to c.exp_clamp (NaN passes through)."""
    r, ki = _exp_reduce(e, x, c)
    if lo is not None:
        r = e.fadd(r, lo)
    return _ldexp(e, e.poly(r, c.exp_poly), ki, c)


def _sign_bit_set(e: Emitter, x: SSAValue) -> SSAValue:
    """True where x's sign bit is set (also for -0 and negative NaNs)."""
    return e.icmp("slt", e.as_bits(x), _ik(e, x, 0))


def _nan(e: Emitter, x: SSAValue) -> SSAValue:
    return _k(e, x, math.nan)


# ---------------------------------------------------------------------------
# exp family
# ---------------------------------------------------------------------------
def exp(e: Emitter, x: SSAValue) -> SSAValue:
    """e^x; the clamp keeps the reduction in range and makes ±inf fall out of the scaling."""
    c = constants_for(x)
    return exp_core(e, e.clamp(x, *c.exp_clamp), c)


def exp_nonpositive(e: Emitter, x: SSAValue) -> SSAValue:
    """e^x for x <= 0 or NaN, as a softmax's probabilities e^(s - max) need: `exp`
    where e^x is at least the smallest normal number, bit for bit, with one exponent
    factor where `exp` takes two, and 0 below it, where `exp` rounds into the
    subnormals (and at -inf). Its terms are then below 2^-126 times the row's largest,
    which is 1."""
    c = constants_for(x)
    floor = _k(e, x, math.log(c.min_normal))
    low = e.fcmp("olt", x, floor)
    return e.select(low, _k(e, x, 0.0), exp_normal(e, e.select(low, floor, x)))


def exp_normal(e: Emitter, x: SSAValue) -> SSAValue:
    """e^x for x where the caller knows it is a normal number (or NaN): `exp` bit for bit,
    with 2^k as one exponent factor and no clamp."""
    c = constants_for(x)
    r, ki = _exp_reduce(e, x, c)
    return e.fmul(e.poly(r, c.exp_poly), _pow2_factor(e, ki, c, x.type))


def exp_scaled(e: Emitter, x: SSAValue, log2_scale: int, lo: SSAValue | None = None) -> SSAValue:
    """e^(x + lo) 2^s (s = log2_scale > 0) with the scale folded into the exponent, so e^x far in
    the subnormal range keeps full precision: a product x e^x that underflows is then rounded
    once, by the caller's final multiply by 2^-s. Below the range where the scaled value itself
    underflows (and at -inf) the result is 0."""
    c = constants_for(x)
    floor = -math.log(2) * (2 * (c.bias - 1) + log2_scale - 2)  # keeps both halves of k + s normal
    r, ki = _exp_reduce(e, e.clamp(x, floor, c.exp_clamp[1]), c)
    if lo is not None:
        r = e.fadd(r, lo)
    res = _ldexp(e, e.poly(r, c.exp_poly), e.add(ki, _ik(e, x, log2_scale)), c)
    return e.select(e.fcmp("olt", x, _k(e, x, floor)), _k(e, x, 0.0), res)


@cache
def exp2_poly(is_f32: bool) -> tuple[float, ...]:
    """p(r) ~ 2^r on |r| <= 1/2: for f32 the `EXP2_TERMS`-term minimax, for f64 `exp`'s
    Taylor table of e^r with each coefficient scaled by its power of ln2."""
    if is_f32:
        return exp2_minimax_poly(EXP2_TERMS)
    return tuple(v * math.log(2) ** j for j, v in enumerate(_F64.exp_poly))


def exp2_product(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """2^(a·b) for any a and b: the product rounded, clamped as `exp` clamps (so ±inf and
    the subnormal range come out of the two-factor scaling), k = rint, and p(a·b - k),
    where the difference is exact. NaN passes through."""
    c = constants_for(a)
    x = e.clamp(e.fmul(a, b), *(bound / math.log(2) for bound in c.exp_clamp))
    kf, ki = _rint_magic(e, x, c)
    return _ldexp(e, e.poly(e.fsub(x, kf), exp2_poly(c.is_f32)), ki, c)


def exp2_product_in_range_bound(x: SSAValue) -> float:
    """The |a·b| up to which `exp2_product_in_range` holds (125 for f32, 1021 for f64):
    2^k p with p in [1/sqrt2, sqrt2] stays normal."""
    return -math.log2(constants_for(x).min_normal) - 1


def exp2_product_in_range(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`exp2_product` for |a·b| <= exp2_product_in_range_bound, which the caller guarantees
    (no clamp, no special values). The product is never rounded by itself: one FMA with
    the magic constant rounds it to the integer k, whose bits in the sum's low end, shifted
    by the mantissa width, are 2^k's exponent field, and a second FMA gives r = a·b - k for
    the polynomial. For the selective scan's decays, e^(Δ·A) = 2^(Δ·(A log2e)) with A log2e
    computed once: 8 FMA-unit operations (f32) where the product and a reduction by a
    2-part ln2 took 10."""
    c = constants_for(a)
    magic = _k(e, a, c.magic)
    tm = e.fma(a, b, magic)
    r = e.fma(a, b, e.fneg(e.fsub(tm, magic)))
    scaled = e.add(e.as_bits(e.poly(r, exp2_poly(c.is_f32))), e.shl(e.as_bits(tm), _ik(e, a, c.mant)))
    return e.from_bits(scaled, a.type)


def expm1(e: Emitter, x: SSAValue) -> SSAValue:
    """e^x - 1 without cancellation: 2^k (1 + em) - 1 folded into one FMA, scaled in two halves."""
    c = constants_for(x)
    xc = e.clamp(x, c.expm1_lo, c.exp_clamp[1])
    r, k = _exp_reduce(e, xc, c)
    em = e.fma(e.fmul(r, r), e.poly(r, c.expm1_q), r)  # e^r - 1
    k1 = e.ashr(k, e.const(k.type, 1))
    k2 = e.sub(k, k1)
    s1 = _pow2_factor(e, k1, c, x.type)
    s2 = _pow2_factor(e, k2, c, x.type)
    inv_s1 = _pow2_factor(e, e.sub(e.const(k.type, 0), k1), c, x.type)
    res = e.fmul(s1, e.fma(s2, em, e.fsub(s2, inv_s1)))
    return e.copysign(res, x)  # expm1 has the sign of x (keeps -0)


SIGMOID_SCALE = 64
"""sigmoid scales e^-x by 2^-SIGMOID_SCALE, which keeps it normal wherever the result is not 0 or 1."""
SIGMOID_HI = 40.0
"""sigmoid's upper clamp: the result rounds to 1 from ~17.3 (f32) / ~37.5 (f64) on, and 2^(k - 64)
(k = round(-x log2e)) stays normal up to 43 in f32."""


def _exp_negated_reduce(
    e: Emitter, v: SSAValue, c: Constants, ln2_parts: int, k_offset: int
) -> tuple[SSAValue, SSAValue]:
    """e^-v = 2^k e^-r with k = round(-v log2e) and r = v + k ln2 (|r| <= ln2/2, ln2 in
    `ln2_parts` parts). k is rounded by one FMA with the magic constant, whose sum then holds
    k + k_offset in its low bits: shifted by the mantissa width, they are the exponent field of
    2^(k + k_offset) (the magic's own bits shift out). Returns (r, that shifted field)."""
    magic = _k(e, v, c.magic + k_offset)
    tm = e.fma(v, _k(e, v, -c.log2e), magic)
    kf = e.fsub(tm, magic)
    r = v
    for part in c.ln2[:ln2_parts]:
        r = e.fma(kf, _k(e, v, part), r)
    return r, e.shl(e.as_bits(tm), _ik(e, v, c.mant))


def _expm1_negated(e: Emitter, r: SSAValue, c: Constants) -> SSAValue:
    """e^-r - 1 = -r + r^2 q(-r) for |r| <= ln2/2, with q = `tanh_sigmoid_q`."""
    q = [v if j % 2 == 0 else -v for j, v in enumerate(tanh_sigmoid_q(c.is_f32))]
    return e.fma(e.fmul(r, r), e.poly(r, q), e.fneg(r))


def sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    """1/(1 + e^-x) as 2^-64 / (E + 2^-64) with E = e^-x 2^-64 = 2^(k-64) (1 + em), em = e^-r - 1:
    the denominator is one FMA, 2^(k-64) em + (2^(k-64) + 2^-64), and the division rounds the
    quotient once, also where it is subnormal. With x clamped to [exp_clamp[0], SIGMOID_HI],
    2^(k-64) stays normal and nothing overflows; neither tail cancels, and x = -inf gives 0,
    +inf 1, NaN NaN."""
    c = constants_for(x)
    xc = e.clamp(x, c.exp_clamp[0], SIGMOID_HI)
    r, k_bits = _exp_negated_reduce(e, xc, c, 2, -SIGMOID_SCALE)
    em = _expm1_negated(e, r, c)
    scale = e.from_bits(e.add(k_bits, _ik(e, x, c.bias << c.mant)), x.type)  # 2^(k-64)
    tiny = _k(e, x, 2.0**-SIGMOID_SCALE)
    return e.fdiv(tiny, e.fma(scale, em, e.fadd(scale, tiny)))


def tanh(e: Emitter, x: SSAValue) -> SSAValue:
    """tanh|x| = -em/(2 + em) with em = e^-2|x| - 1 = 2^k e^-r - 1 = 2^k (e^-r - 1) + (2^k - 1)
    in [-1, 0] (one FMA, no cancellation), computed as em/(em + 2) with x's sign copied on (which
    also keeps -0). 2|x| is clamped where
    tanh has long rounded to 1 (30 / 60) so 2^k stays normal. ln2 is one part: the error of
    k ln2 (k times ln2's rounding) moves e^-2|x| by that much relative, which tanh's slope in it,
    2 e^-2|x| / (1 + e^-2|x|)^2, keeps below 0.03 ULP in f32 (0.2 in f64). The magic is sigmoid's
    (one constant in a kernel with both)."""
    c = constants_for(x)
    ax = e.fabs(x)
    hi = _k(e, x, -c.expm1_lo)
    v = e.fadd(ax, ax)
    v = e.select(e.fcmp("ogt", v, hi), hi, v)
    r, k_bits = _exp_negated_reduce(e, v, c, 1, -SIGMOID_SCALE)
    s = e.from_bits(e.add(k_bits, _ik(e, x, (c.bias + SIGMOID_SCALE) << c.mant)), x.type)  # 2^k
    em = e.fma(s, _expm1_negated(e, r, c), e.fsub(s, _k(e, x, 1.0)))
    return e.copysign(e.fdiv(em, e.fadd(em, _k(e, x, 2.0))), x)


# ---------------------------------------------------------------------------
# log family
# ---------------------------------------------------------------------------
def _log_split(e: Emitter, u: SSAValue, c: Constants, k_off: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
    """u = 2^k m with m in [sqrt(1/2), sqrt(2)); returns (f = m - 1 exactly, k + k_off as float)."""
    sq = _bits(_round_to(Decimal("0.5").sqrt(), c.is_f32), c.is_f32)
    one = _bits(1.0, c.is_f32)
    ix = e.add(e.as_bits(u), _ik(e, u, one - sq))
    k = e.sub(e.ashr(ix, _ik(e, u, c.mant)), _ik(e, u, c.bias))
    mbits = e.add(e.and_(ix, _ik(e, u, (1 << c.mant) - 1)), _ik(e, u, sq))
    f = e.fsub(e.from_bits(mbits, u.type), _k(e, u, 1.0))
    kf = e.sitofp(k, u.type)
    return f, kf if k_off is None else e.fadd(kf, k_off)


def _log_core(e: Emitter, u: SSAValue, c: Constants, corr: SSAValue | None, k_off: SSAValue | None = None) -> SSAValue:
    """log(u) (+ corr) for positive normal u, fdlibm layout: k ln2_hi + (f - (hfsq - (s(hfsq+R) + k ln2_lo)))."""
    f, kf = _log_split(e, u, c, k_off)
    s = e.fdiv(f, e.fadd(_k(e, u, 2.0), f))
    z = e.fmul(s, s)
    big_r = e.fmul(z, e.poly(z, c.log_r))
    hfsq = e.fmul(e.fmul(f, f), _k(e, u, 0.5))
    low = e.fmul(kf, _k(e, u, c.ln2[1]))
    if corr is not None:
        low = e.fadd(low, corr)
    tail = e.fsub(hfsq, e.fma(s, e.fadd(hfsq, big_r), low))
    return e.fma(kf, _k(e, u, c.ln2[0]), e.fsub(f, tail))


def _prescale_subnormal(e: Emitter, x: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """Scale subnormal x by 2^(mant+2) so the bit split sees a normal number; returns (x', exponent offset)."""
    shift = c.mant + 2
    tiny = e.fcmp("olt", x, _k(e, x, c.min_normal))
    xs = e.select(tiny, e.fmul(x, _k(e, x, 2.0**shift)), x)
    k_off = e.select(tiny, _k(e, x, -float(shift)), _k(e, x, 0.0))
    return xs, k_off


def log(e: Emitter, x: SSAValue) -> SSAValue:
    """Natural log; specials (0 -> -inf, <0/NaN -> NaN, inf -> inf) by final selects."""
    c = constants_for(x)
    xs, k_off = _prescale_subnormal(e, x, c)
    res = _log_core(e, xs, c, None, k_off)
    res = e.select(e.fcmp("oeq", x, _k(e, x, math.inf)), x, res)
    res = e.select(e.fcmp("oeq", x, _k(e, x, 0.0)), _k(e, x, -math.inf), res)
    return e.select(e.fcmp("ult", x, _k(e, x, 0.0)), _nan(e, x), res)


def log1p(e: Emitter, x: SSAValue) -> SSAValue:
    """log(1+x): log core on u = fl(1+x) plus the first-order correction (1+x-u)/u."""
    c = constants_for(x)
    one = _k(e, x, 1.0)
    u = e.fadd(one, x)
    big = e.fcmp("ogt", x, one)
    c_num = e.select(big, e.fsub(one, e.fsub(u, x)), e.fsub(x, e.fsub(u, one)))
    res = e.copysign(_log_core(e, u, c, e.fdiv(c_num, u)), x)
    res = e.select(e.fcmp("oeq", x, _k(e, x, math.inf)), x, res)
    res = e.select(e.fcmp("oeq", x, _k(e, x, -1.0)), _k(e, x, -math.inf), res)
    return e.select(e.fcmp("ult", x, _k(e, x, -1.0)), _nan(e, x), res)


# ---------------------------------------------------------------------------
# erf
# ---------------------------------------------------------------------------
@cache
def _monomial(coeffs: tuple[float, ...]) -> tuple[float, ...]:
    """The power-series coefficients of sum c_k T_k(s), converted in float64."""
    return tuple(float(v) for v in np.polynomial.chebyshev.cheb2poly(coeffs))


def chebyshev_series(e: Emitter, s: SSAValue, coeffs: tuple[float, ...]) -> SSAValue:
    """sum c_k T_k(s) for s in [-1, 1], as the equal power series by Estrin's scheme.

    Clenshaw's recurrence is a chain of 2n dependent operations (98 cycles at
    degree 14 on Zen 3): AVX2's out-of-order window held fewer than three
    vectors of erf in flight, and erf ran at a third of the FMA units' rate. The
    power series of these fits is well conditioned (sum |a_i s^i| within 5x of
    the sum over [-1, 1]: their Chebyshev coefficients decay fast), so Estrin's
    tree of about log2(n) levels keeps the bounds of tests/accuracy.py, with the
    constant term added last (added inside the tree, GELU's f32 tail lost a ULP)."""
    first, *rest = _monomial(coeffs)
    return e.fma(e.estrin(s, rest), s, _k(e, s, first))  # c0 last: rounded once, at the sum's size


ERF_HEAD_TERMS = 6
"""Terms of f32 erf's P: 6 fit erf(x)/x to 0.14 x 2^-24 relative, 5 to 5.3 x 2^-24."""

ERF_TAIL_DEGREE = 6
"""Degree of f32 erf's Q, the fit of log erfc: erf holds 1 ULP with 6, 2 with 5."""


@cache
def erf_head_poly(is_f32: bool) -> tuple[float, ...]:
    """P with erf x = x + x P(x^2) for |x| < `Constants.erf_cut`. The leading 2/sqrt(pi) is
    split as 1 + 0.128..., so its rounding costs 0.128/1.128 of what rounding 2/sqrt(pi)
    would: in f32 that was a ULP below erf = 1/2. f32: an `ERF_HEAD_TERMS`-term minimax fit in
    relative error (Taylor needed 11); f64: Taylor's 18 terms, exact rationals rounded once."""
    if not is_f32:
        taylor = [Decimal((-1) ** n) * 2 / PI.sqrt() / (math.factorial(n) * (2 * n + 1)) for n in range(18)]
        return tuple(float(v - (1 if n == 0 else 0)) for n, v in enumerate(taylor))
    cut = _F32.erf_cut
    x = cut * (_chebyshev_nodes(1000) + 1) / 2  # never 0
    ratio = np.array([math.erf(v) / v for v in x])
    basis = ((x / cut) ** 2)[:, None] ** np.arange(ERF_HEAD_TERMS)  # in (x/cut)^2 for conditioning
    best = _lawson(basis, ratio, 1 / ratio)
    coeffs = [v / cut ** (2 * j) for j, v in enumerate(best)]
    return tuple(_round_to(v - (1 if j == 0 else 0), True) for j, v in enumerate(coeffs))


@cache
def erfc_log_poly() -> tuple[float, ...]:
    """Q(u) ~ log erfc(t), u = (t - cut) / (erf_max - cut) in [0, 1], for f32 erf's tail
    1 - e^Q(u): minimax in the error it makes in erf, |e^Q - erfc| (relative error times
    erfc, which falls from 0.22 to 2e-8), so 7 coefficients reach 0.03 ULP where
    e^(-t^2) R(t) took an exp, a product and R of degree 14. In u from the cut, Q's
    constant term is log erfc(cut) = -1.5, rounded to f32 at a fifth of a ULP of erf; the
    same fit centred (s in [-1, 1]) had a constant of -8, whose rounding alone cost
    1.7 ULP at the cut."""
    c = _F32
    u = (_chebyshev_nodes(1000) + 1) / 2
    erfc = np.array([math.erfc(v) for v in c.erf_cut + (c.erf_max - c.erf_cut) * u])
    best = _lawson(u[:, None] ** np.arange(ERF_TAIL_DEGREE + 1), np.log(erfc), erfc)
    return tuple(_round_to(v, True) for v in best)


def erf_small(e: Emitter, x: SSAValue) -> SSAValue:
    """erf x = x + x P(x^2): the branch of `erf` below `Constants.erf_cut` (odd, keeps -0)."""
    return e.fma(x, e.poly(e.fmul(x, x), erf_head_poly(constants_for(x).is_f32)), x)


def _erfc_tail(e: Emitter, t: SSAValue, c: Constants) -> SSAValue:
    """erfc t for t in [erf_cut, erf_max]. f32: e^Q(u) (`erfc_log_poly`); f64: e^(-t^2)
    R(t), R = erfc e^(t^2) Chebyshev-fitted on [1, erf_max] (a float64 fit of log erfc
    cannot be held to f64's own precision)."""
    lo, hi = c.erf_cut, c.erf_max
    if c.is_f32:
        u = e.fma(t, _k(e, t, 1 / (hi - lo)), _k(e, t, -lo / (hi - lo)))
        return exp_normal(e, e.poly(u, erfc_log_poly()))
    s = e.fma(t, _k(e, t, 2 / (hi - lo)), _k(e, t, -(hi + lo) / (hi - lo)))
    return e.fmul(exp_core(e, e.fneg(e.fmul(t, t)), c), chebyshev_series(e, s, erf_tail_chebyshev(c.is_f32)))


def erf(e: Emitter, x: SSAValue) -> SSAValue:
    """erf: `erf_small` below the cut, 1 - `_erfc_tail` from there to erf_max, 1 beyond;
    both branches computed, then selected (branch-free)."""
    c = constants_for(x)
    ax = e.fabs(x)
    one = _k(e, x, 1.0)
    large = e.fsub(one, _erfc_tail(e, e.clamp(ax, c.erf_cut, c.erf_max), c))
    res = e.select(e.fcmp("olt", ax, _k(e, x, c.erf_cut)), erf_small(e, ax), large)
    res = e.select(e.fcmp("oge", ax, _k(e, x, c.erf_max)), one, res)
    return e.copysign(res, x)


NORMAL_TAIL_PIECES = {True: ((0.5, 10.6, 16),), False: ((0.5, 2.0, 25), (2.0, 27.5, 22))}
"""Pieces (t_lo, t_hi, degree) of the fit of S(t) = t e^(t^2) erfc(t) in u = 1/t; erfc(t) underflows
(times anything gelu multiplies it by) past t_hi. f64 needs two pieces for ~2 ULP fits."""


def _erfcx_continued_fraction(t: float) -> float:
    """e^(t^2) erfc(t) = 1 / (sqrt(pi) (t + (1/2) / (t + 1 / (t + (3/2) / (t + ...))))), evaluated
    backwards; the depth gives double precision from t = 0.5 on."""
    acc = t
    for n in range(4000 if t < 2 else 400, 0, -1):
        acc = t + (n / 2) / acc
    return 1 / (math.sqrt(math.pi) * acc)


@cache
def normal_tail_chebyshev(is_f32: bool) -> tuple[tuple[float, float, tuple[float, ...]], ...]:
    """(u_lo, u_hi, Chebyshev coefficients) of S = t e^(t^2) erfc(t) over u = 1/t, per piece.

    S is smooth in u (S -> 1/sqrt(pi) as u -> 0), so a float64 least-squares fit on Chebyshev
    nodes of each piece, from the continued fraction (no overflow of e^(t^2), no cancellation),
    reaches ~1e-16 relative.
    """
    pieces = []
    for t_lo, t_hi, deg in NORMAL_TAIL_PIECES[is_f32]:
        a, b = 1 / t_hi, 1 / t_lo
        n = 4 * deg
        s = np.cos(np.pi * (np.arange(n) + 0.5) / n)
        u = (a + b) / 2 + (b - a) / 2 * s
        y = np.array([_erfcx_continued_fraction(1 / v) / v for v in u])
        pieces.append((a, b, tuple(float(v) for v in np.polynomial.chebyshev.chebfit(s, y, deg))))
    return tuple(pieces)


def normal_tail_scaled(e: Emitter, x: SSAValue, log2_scale: int) -> SSAValue:
    """|x| (1 - Phi(|x|)) 2^s for |x| >= 1/sqrt2, Phi the standard normal CDF, with full relative
    accuracy down to where it underflows: e^(-x^2/2) S(sqrt2/|x|) / sqrt2, the exponent taken
    from x^2 as an exact hi + lo pair (no error from rounding x/sqrt2 or x^2), e^(-x^2/2) scaled
    by 2^s as in `exp_scaled` so a subnormal result is rounded once by the caller."""
    c = constants_for(x)
    a = e.fabs(x)
    sq = e.fmul(a, a)
    sq_lo = e.fma(a, a, e.fneg(sq))
    half = _k(e, x, -0.5)
    w = exp_scaled(e, e.fmul(sq, half), log2_scale, e.fmul(sq_lo, half))
    pieces = sorted(normal_tail_chebyshev(c.is_f32))  # by u
    u = e.clamp(e.fdiv(_k(e, x, math.sqrt(2.0)), a), pieces[0][0], pieces[-1][1])
    tail: SSAValue | None = None
    for lo, hi, coeffs in pieces:
        val = chebyshev_series(e, e.fma(u, _k(e, x, 2 / (hi - lo)), _k(e, x, -(hi + lo) / (hi - lo))), coeffs)
        tail = val if tail is None else e.select(e.fcmp("oge", u, _k(e, x, lo)), val, tail)
    assert tail is not None, "no pieces"
    return e.fmul(w, e.fmul(tail, _k(e, x, 1 / math.sqrt(2.0))))


# ---------------------------------------------------------------------------
# trigonometry
# ---------------------------------------------------------------------------
def _reduce_pio2_fast(e: Emitter, x: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """x = q pi/2 + r, |r| <~ pi/4, by 3-part Cody-Waite with FMA; returns (r, q as twin int).

    Right for |x| < `PayneHanek.fast_limit`; q comes from the magic add (no fptosi, which
    LLVM scalarizes), so it is garbage beyond 2^(p-1) pi/2, where the slow path takes over.
    """
    q, qi = _rint_magic(e, e.fmul(x, _k(e, x, float(_round_to(2 / PI, c.is_f32)))), c)
    nq = e.fneg(q)
    r = e.fma(nq, _k(e, x, c.pio2[0]), x)
    r = e.fma(nq, _k(e, x, c.pio2[1]), r)
    r = e.fma(nq, _k(e, x, c.pio2[2]), r)
    return r, qi


@dataclass(frozen=True)
class PayneHanek:
    """The exact reduction of one width: x = M 2^(e-bias-mant) times the bits of 2/pi, in integers.

    With y = x 2/pi, the fixed-point Y = y 2^(64 words - 2) mod 2^(64 words) is M times a window
    W of the bits of 2/pi whose position depends only on the exponent e: Y = (M W) >> (32 guard),
    computed exactly with 32x32->64-bit limb products (vpmuludq) in i64 lanes. The window is cut
    from `table` (2/pi with `pad` leading zero bits, as 64-bit words) by a barrel of selects on
    the word index and a funnel shift on the bit offset: no table loads, so it vectorizes.
    The top two bits of Y (rounded) are the quadrant, the rest the reduced argument; truncating
    W and the dropped low limbs err by < 2 units of the last bit of Y.
    """

    mant: int
    bias: int
    limbs_m: int  # 32-bit limbs of the mantissa M
    guard: int  # 32-bit limbs of M*W below Y (their truncation errs by < 1 unit of Y)
    words: int  # 64-bit words of Y: 2 integer (quadrant) bits + 64 words - 2 fraction bits
    fast_limit: float  # |x| below this takes the Cody-Waite path
    table: tuple[int, ...]

    @property
    def pad(self) -> int:
        """Zero bits before 2/pi in `table`, so the window of exponent e starts at bit e - bias."""
        return self.mant + 2

    @property
    def window_limbs(self) -> int:
        return self.guard + 2 * self.words

    @property
    def chunks(self) -> int:
        """64-bit funnel extracts that cover the window."""
        return (self.window_limbs + 1) // 2


def _two_over_pi_bits(n: int) -> int:
    """floor(2/pi * 2^n), exactly: pi from Machin's formula in integers with guard bits."""
    bits = n + 64
    one = 1 << bits

    def arctan_inv(k: int) -> int:
        total, term, i, sign = 0, one // k, 1, 1
        while term:
            total += sign * (term // i)
            term //= k * k
            i += 2
            sign = -sign
        return total

    pi = 16 * arctan_inv(5) - 4 * arctan_inv(239)  # pi * 2^bits, error a few units
    return (one * 2 << n) // pi


def _payne_hanek(is_f32: bool) -> PayneHanek:
    mant, bias = (23, 127) if is_f32 else (52, 1023)
    limbs_m, guard, words = (1, 1, 1) if is_f32 else (2, 2, 2)
    # windows start at bit p = e - bias for |x| >= 1, p <= bias: word index p >> 6
    count = (guard + 2 * words + 1) // 2 + 1
    n_words = (bias >> 6) + count
    pad = mant + 2
    g = _two_over_pi_bits(64 * n_words - pad)
    table = tuple((g >> (64 * (n_words - 1 - i))) & (2**64 - 1) for i in range(n_words))
    fast_limit = 2.0**16 if is_f32 else 2.0**30
    return PayneHanek(mant, bias, limbs_m, guard, words, fast_limit, table)


_PAYNE_HANEK = {True: _payne_hanek(True), False: _payne_hanek(False)}


def _window(e: Emitter, w: SSAValue, ph: PayneHanek) -> list[SSAValue]:
    """table[w + k] for k <= chunks, by a barrel of selects on the bits of w (largest first)."""
    count = ph.chunks + 1
    vals = [e.i64(v) for v in ph.table]
    w_max = len(ph.table) - count
    for s in reversed(range(w_max.bit_length())):
        step = 1 << s
        bit = e.icmp("ne", e.and_(w, e.i64(step)), e.i64(0))
        vals = [e.select(bit, vals[k + step], vals[k]) for k in range(count + step - 1)]
    return vals[:count]


def _fixed_to_double_double(e: Emitter, hi: SSAValue, lo: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The signed 128-bit integer hi 2^64 + lo (lo unsigned, |hi| < 2^62) as an unevaluated double pair.

    Its magnitude is split into exactly representable parts A 2^64 (A's low 11 bits cleared),
    T1 (A's low bits and lo's high half) and T2 (lo's low half), all of one sign, so their
    sum has no cancellation: Fast2Sum of the first two, the last added to the error.
    """
    f64 = Float64Type()
    m32 = e.i64(0xFFFFFFFF)
    neg = e.icmp("slt", hi, e.i64(0))
    # |hi 2^64 + lo| = mag_hi 2^64 + mag_lo with both parts >= 0
    borrow = e.and_(neg, e.icmp("ne", lo, e.i64(0)))
    mag_hi = e.select(neg, e.sub(e.i64(0), e.select(borrow, e.add(hi, e.i64(1)), hi)), hi)
    mag_lo = e.select(neg, e.sub(e.i64(0), lo), lo)
    top = e.sitofp(e.and_(mag_hi, e.i64(~0x7FF)), f64)
    mid = e.sitofp(e.or_(e.shl(e.and_(mag_hi, e.i64(0x7FF)), e.i64(32)), e.lshr(mag_lo, e.i64(32))), f64)
    bottom = e.sitofp(e.and_(mag_lo, m32), f64)
    top = e.fmul(top, e.const(f64, 2.0**64))
    mid = e.fmul(mid, e.const(f64, 2.0**32))
    s = e.fadd(top, mid)
    err = e.fadd(e.fsub(mid, e.fsub(s, top)), bottom)
    return e.select(neg, e.fneg(s), s), e.select(neg, e.fneg(err), err)


def _reduce_pio2_exact(e: Emitter, x: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """x = n pi/2 + r for every finite |x| >= 1 (Payne-Hanek in integers); returns (r, n as twin int)."""
    ph = _PAYNE_HANEK[c.is_f32]
    i64t = IntegerType(64)
    bits = e.as_bits(x)
    ab = e.and_(bits, _ik(e, x, (1 << (int_twin(x.type).width.data - 1)) - 1))  # |x|
    if c.is_f32:
        ab = e.zext(ab, i64t)
    m32 = e.i64(0xFFFFFFFF)
    mantissa = e.or_(e.and_(ab, e.i64((1 << ph.mant) - 1)), e.i64(1 << ph.mant))
    expo = e.lshr(ab, e.i64(ph.mant))
    # window start for |x| >= 1; smaller, infinite or NaN x give garbage here, which the caller drops
    p = e.sub(expo, e.i64(ph.bias))
    g = _window(e, e.lshr(p, e.i64(6)), ph)
    off = e.and_(p, e.i64(63))
    limbs = []  # window limbs, most significant first
    for i in range(ph.chunks):
        chunk = e.intrinsic("llvm.fshl.i64", [g[i], g[i + 1], off], i64t)
        limbs += [e.lshr(chunk, e.i64(32)), e.and_(chunk, m32)]
    w = list(reversed(limbs[: ph.window_limbs]))  # least significant first
    m = [e.and_(mantissa, m32), e.lshr(mantissa, e.i64(32))][: ph.limbs_m]
    top = ph.guard + 2 * ph.words  # columns [guard, top) of M*W form Y
    cols: dict[int, SSAValue] = {}

    def accumulate(k: int, v: SSAValue) -> None:
        cols[k] = e.add(cols[k], v) if k in cols else v

    for a, ma in enumerate(m):
        for b, wb in enumerate(w):
            k = a + b  # the product's low half lands in column k, its high half in k + 1
            if k + 1 < ph.guard or k >= top:
                continue
            prod = e.mul(ma, wb)
            if k >= ph.guard:
                accumulate(k, prod if k == top - 1 else e.and_(prod, m32))  # bits above Y drop out
            if k + 1 < top:
                accumulate(k + 1, e.lshr(prod, e.i64(32)))
    for k in range(ph.guard, top - 1):
        cols[k + 1] = e.add(cols[k + 1], e.lshr(cols[k], e.i64(32)))
        cols[k] = e.and_(cols[k], m32)
    y = [e.or_(cols[ph.guard + 2 * j], e.shl(cols[ph.guard + 2 * j + 1], e.i64(32))) for j in range(ph.words)]
    ys = e.add(y[-1], e.i64(1 << 61))  # round to the nearest quadrant
    n = e.lshr(ys, e.i64(62))
    frac = e.sub(e.and_(ys, e.i64((1 << 62) - 1)), e.i64(1 << 61))  # signed, units 2^-62 (of quarter turns)
    f64 = Float64Type()
    s0, s1 = (e.const(f64, v) for v in split_constant(PI / 2 / Decimal(2) ** (64 * ph.words - 2), 2, False))
    if ph.words == 1:  # f32: one rounding to double is far below the f32 ulp
        units = e.sitofp(frac, f64)
        r = e.fma(units, s0, e.fmul(units, s1))
    else:
        units, units_lo = _fixed_to_double_double(e, frac, y[0])
        r_hi = e.fmul(units, s0)
        err = e.fma(units, s0, e.fneg(r_hi))
        r = e.fadd(r_hi, e.fadd(err, e.fma(units, s1, e.fmul(units_lo, s0))))
    if c.is_f32:
        r = e.fptrunc(r, x.type)
        n = e.itrunc(n, int_twin(x.type))
    negative = _sign_bit_set(e, x)
    r = e.select(negative, e.fneg(r), r)
    n = e.select(negative, e.sub(_ik(e, x, 0), n), n)
    return r, n


_DEFERRED: ContextVar[list[SSAValue] | None] = ContextVar("exact reductions deferred", default=None)


@contextmanager
def exact_reduction_deferred() -> Iterator[list[SSAValue]]:
    """Within the block, sin/cos/tan emit only the Cody-Waite reduction and append to the yielded
    list, per call, the i1 that says the element needs the exact one: a kernel that evaluates its
    body this way over a block of elements, and again with the exact reductions only where one
    of those flags is set, skips the exact path's cost wherever no argument is huge."""
    flags: list[SSAValue] = []
    token = _DEFERRED.set(flags)
    try:
        yield flags
    finally:
        _DEFERRED.reset(token)


def _reduce_pio2(e: Emitter, x: SSAValue, c: Constants) -> tuple[SSAValue, SSAValue]:
    """x = q pi/2 + r for every x: Cody-Waite below `fast_limit`, else the exact reduction,
    picked per element by selects (both are straight-line code, so the loop stays vectorized),
    or Cody-Waite alone while the exact one is deferred (`exact_reduction_deferred`).
    ±inf and NaN take the Cody-Waite path, which turns them into NaN."""
    ph = _PAYNE_HANEK[c.is_f32]
    r_fast, q_fast = _reduce_pio2_fast(e, x, c)
    ax = e.fabs(x)
    big = e.and_(e.fcmp("oge", ax, _k(e, x, ph.fast_limit)), e.fcmp("olt", ax, _k(e, x, math.inf)))
    deferred = _DEFERRED.get()
    if deferred is not None:
        deferred.append(big)
        return r_fast, q_fast
    r_big, q_big = _reduce_pio2_exact(e, x, c)
    return e.select(big, r_big, r_fast), e.select(big, q_big, q_fast)


def _sin_kernel(e: Emitter, r: SSAValue, z: SSAValue, c: Constants) -> SSAValue:
    return e.fma(e.fmul(r, z), e.poly(z, c.sin_poly), r)


def _cos_kernel(e: Emitter, z: SSAValue, c: Constants) -> SSAValue:
    return e.fma(z, e.poly(z, c.cos_poly), _k(e, z, 1.0))


def _sincos_quadrant(e: Emitter, x: SSAValue, offset: int) -> SSAValue:
    """sin(x + offset * pi/2): pick sin/cos kernel and sign from the quadrant bits."""
    c = constants_for(x)
    r, q = _reduce_pio2(e, x, c)
    q = e.add(q, _ik(e, x, offset))
    z = e.fmul(r, r)
    sn = _sin_kernel(e, r, z, c)
    cs = _cos_kernel(e, z, c)
    odd = e.icmp("ne", e.and_(q, _ik(e, x, 1)), _ik(e, x, 0))
    res = e.select(odd, cs, sn)
    neg = e.icmp("ne", e.and_(q, _ik(e, x, 2)), _ik(e, x, 0))
    return e.select(neg, e.fneg(res), res)


def sin(e: Emitter, x: SSAValue) -> SSAValue:
    """sin x; ±0 is returned unchanged (the FMA reduction would turn -0 into +0)."""
    res = _sincos_quadrant(e, x, 0)
    return e.select(e.fcmp("oeq", x, _k(e, x, 0.0)), x, res)


def cos(e: Emitter, x: SSAValue) -> SSAValue:
    """cos x = sin(x + pi/2) by quadrant offset (no extra rounding)."""
    return _sincos_quadrant(e, x, 1)


def tan(e: Emitter, x: SSAValue) -> SSAValue:
    """tan x = sin r / cos r, or -cos r / sin r in odd quadrants."""
    c = constants_for(x)
    r, q = _reduce_pio2(e, x, c)
    z = e.fmul(r, r)
    sn = _sin_kernel(e, r, z, c)
    cs = _cos_kernel(e, z, c)
    odd = e.icmp("ne", e.and_(q, _ik(e, x, 1)), _ik(e, x, 0))
    res = e.fdiv(e.select(odd, e.fneg(cs), sn), e.select(odd, sn, cs))
    return e.select(e.fcmp("oeq", x, _k(e, x, 0.0)), x, res)


def _atan_01(e: Emitter, t: SSAValue, c: Constants) -> SSAValue:
    """atan(t) for t in [0, 1] (or NaN): above tan(pi/8) use pi/4 + atan((t-1)/(t+1))."""
    one = _k(e, t, 1.0)
    hi = e.fcmp("ogt", t, _k(e, t, 0.41421356237309503))
    u = e.select(hi, e.fdiv(e.fsub(t, one), e.fadd(t, one)), t)
    z = e.fmul(u, u)
    base_hi = e.select(hi, _k(e, t, c.pio4[0]), _k(e, t, 0.0))
    base_lo = e.select(hi, _k(e, t, c.pio4[1]), _k(e, t, 0.0))
    p = e.fma(e.fmul(u, z), e.poly(z, c.atan_poly), base_lo)
    return e.fadd(base_hi, e.fadd(u, p))


def _pio2_minus(e: Emitter, a: SSAValue, c: Constants) -> SSAValue:
    """pi/2 - a with pi/2 in two parts (a <= pi/4 so the result is >= pi/4)."""
    return e.fadd(e.fsub(_k(e, a, c.pio2[0]), a), _k(e, a, c.pio2[1] + c.pio2[2]))


def atan(e: Emitter, x: SSAValue) -> SSAValue:
    """atan x: fold |x| > 1 onto 1/|x| (pi/2 - atan), then the [0,1] core; sign restored last."""
    c = constants_for(x)
    ax = e.fabs(x)
    one = _k(e, x, 1.0)
    big = e.fcmp("ogt", ax, one)
    t = e.select(big, e.fdiv(one, ax), ax)
    a = _atan_01(e, t, c)
    return e.copysign(e.select(big, _pio2_minus(e, a, c), a), x)


def atan2(e: Emitter, y: SSAValue, x: SSAValue) -> SSAValue:
    """atan2(y, x): atan core on min/max of |x|,|y|, then pi/2- and pi- folds; C99 specials via selects."""
    c = constants_for(x)
    ax, ay = e.fabs(x), e.fabs(y)
    swap = e.fcmp("ogt", ay, ax)
    num = e.select(swap, ax, ay)
    den = e.select(swap, ay, ax)
    t = e.fdiv(num, den)
    inf = _k(e, x, math.inf)
    both_inf = e.and_(e.fcmp("oeq", ax, inf), e.fcmp("oeq", ay, inf))
    t = e.select(both_inf, _k(e, x, 1.0), t)
    t = e.select(e.fcmp("oeq", den, _k(e, x, 0.0)), _k(e, x, 0.0), t)
    a = _atan_01(e, t, c)
    a = e.select(swap, _pio2_minus(e, a, c), a)
    pi_minus = e.fadd(e.fsub(_k(e, x, c.pi[0]), a), _k(e, x, c.pi[1]))
    a = e.select(_sign_bit_set(e, x), pi_minus, a)
    a = e.copysign(a, y)
    return e.select(e.fcmp("uno", x, y), e.fadd(x, y), a)


# ---------------------------------------------------------------------------
# pow
# ---------------------------------------------------------------------------
def two_sum(e: Emitter, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Knuth's TwoSum: s + err == a + b exactly (no magnitude precondition)."""
    s = e.fadd(a, b)
    bb = e.fsub(s, a)
    err = e.fadd(e.fsub(a, e.fsub(s, bb)), e.fsub(b, bb))
    return s, err


def _cube_dd(e: Emitter, s_hi: SSAValue, s_lo: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(s_hi + s_lo)^3 as hi + lo (error-free products by FMA, second-order terms in one word)."""
    s2 = e.fmul(s_hi, s_hi)
    s2_lo = e.fma(e.fadd(s_hi, s_hi), s_lo, e.fma(s_hi, s_hi, e.fneg(s2)))
    s3 = e.fmul(s2, s_hi)
    s3_lo = e.fma(s2_lo, s_hi, e.fma(s2, s_lo, e.fma(s2, s_hi, e.fneg(s3))))
    return s3, s3_lo


def _mul_dd_const(e: Emitter, a_hi: SSAValue, a_lo: SSAValue, c: tuple[float, ...]) -> tuple[SSAValue, SSAValue]:
    """(a_hi + a_lo) * (c[0] + c[1]) as hi + lo."""
    ch, cl = _k(e, a_hi, c[0]), _k(e, a_hi, c[1])
    p = e.fmul(a_hi, ch)
    p_lo = e.fma(a_hi, cl, e.fma(a_lo, ch, e.fma(a_hi, ch, e.fneg(p))))
    return p, p_lo


def _log_dd(e: Emitter, ax: SSAValue, c: Constants, k_off: SSAValue) -> tuple[SSAValue, SSAValue]:
    """log(ax) as an unevaluated hi + lo pair (~2^-65 relative) for positive normal ax.

    log = k ln2 + 2 atanh(s), s = f/(2+f); 2s is carried as a double-double
    (exact division remainder via FMA), the odd tail s^3 (2/3 + ...) in one word.
    """
    f, kf = _log_split(e, ax, c, k_off)
    two = _k(e, ax, 2.0)
    d_hi = e.fadd(two, f)
    d_lo = e.fsub(f, e.fsub(d_hi, two))  # exact: |f| < 2
    s_hi = e.fdiv(f, d_hi)
    rem = e.fsub(e.fma(e.fneg(s_hi), d_hi, f), e.fmul(s_hi, d_lo))
    s_lo = e.fdiv(rem, d_hi)
    z = e.fmul(s_hi, s_hi)
    s3_hi, s3_lo = _cube_dd(e, s_hi, s_lo)
    t1_hi, t1_lo = _mul_dd_const(e, s3_hi, s3_lo, split_constant(Decimal(2) / 3, 2, False))
    tail = e.fmul(e.fmul(s3_hi, z), e.poly(z, c.log_r[1:]))  # s^5 (2/5 + ...): one word is enough
    kh = e.fmul(kf, _k(e, ax, c.ln2[0]))
    kh_err = e.fma(kf, _k(e, ax, c.ln2[0]), e.fneg(kh))
    kl = e.fmul(kf, _k(e, ax, c.ln2[1]))
    hi, err = two_sum(e, kh, e.fadd(s_hi, s_hi))
    hi, err2 = two_sum(e, hi, t1_hi)
    lo = e.fadd(e.fadd(err, err2), e.fadd(e.fadd(s_lo, s_lo), t1_lo))
    lo = e.fadd(lo, e.fadd(e.fadd(tail, kl), kh_err))
    out_hi = e.fadd(hi, lo)
    out_lo = e.fsub(lo, e.fsub(out_hi, hi))
    return out_hi, out_lo


def _is_odd_int(e: Emitter, y: SSAValue) -> SSAValue:
    """y is an odd integer (inf and |y| >= 2^53 are even)."""
    half = e.fmul(y, _k(e, y, 0.5))
    is_int = e.fcmp("oeq", e.trunc(y), y)
    return e.and_(is_int, e.fcmp("une", e.trunc(half), half))


def _pow64(e: Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """pow for f64 (also used by f32): exp(y * log|x|) in double-double, then C99 special cases."""
    c = _F64
    ax = e.fabs(x)
    xs, k_off = _prescale_subnormal(e, ax, c)
    l_hi, l_lo = _log_dd(e, xs, c, k_off)
    # special logs: 0 -> -inf, inf -> inf, NaN -> NaN
    l_hi = e.select(e.fcmp("oeq", ax, _k(e, x, 0.0)), _k(e, x, -math.inf), l_hi)
    l_hi = e.select(e.fcmp("oeq", ax, _k(e, x, math.inf)), ax, l_hi)
    l_hi = e.select(e.fcmp("uno", ax, ax), ax, l_hi)
    p_hi = e.fmul(y, l_hi)
    p_lo = e.fma(y, l_lo, e.fma(y, l_hi, e.fneg(p_hi)))
    finite = e.fcmp("olt", e.fabs(p_hi), _k(e, x, math.inf))
    p_lo = e.select(finite, p_lo, _k(e, x, 0.0))
    pc = e.clamp(p_hi, *c.exp_clamp)
    p_lo = e.select(e.fcmp("oeq", pc, p_hi), p_lo, _k(e, x, 0.0))
    mag = exp_core(e, pc, c, p_lo)
    # signs and special cases, last selects win
    res = e.select(e.and_(_sign_bit_set(e, x), _is_odd_int(e, y)), e.fneg(mag), mag)
    neg_finite = e.and_(e.fcmp("olt", x, _k(e, x, 0.0)), e.fcmp("ogt", x, _k(e, x, -math.inf)))
    non_int = e.fcmp("une", e.trunc(y), y)
    res = e.select(e.and_(neg_finite, non_int), _nan(e, x), res)
    one = _k(e, x, 1.0)
    unit_inf = e.and_(e.fcmp("oeq", ax, one), e.fcmp("oeq", e.fabs(y), _k(e, x, math.inf)))
    res = e.select(unit_inf, one, res)
    res = e.select(e.fcmp("oeq", x, one), one, res)
    return e.select(e.fcmp("oeq", y, _k(e, y, 0.0)), one, res)


def pow(e: Emitter, x: SSAValue, y: SSAValue) -> SSAValue:
    """x**y with np.power/C99 semantics; f32 is evaluated in f64 and rounded once."""
    c = constants_for(x)
    if c.is_f32:
        f64 = Float64Type()
        return e.fptrunc(_pow64(e, e.fpext(x, f64), e.fpext(y, f64)), x.type)
    return _pow64(e, x, y)


__all__ = [
    "atan",
    "atan2",
    "cos",
    "erf",
    "erf_small",
    "exp",
    "exp_scaled",
    "expm1",
    "log",
    "log1p",
    "normal_tail_scaled",
    "pow",
    "sigmoid",
    "sin",
    "tan",
    "tanh",
]
