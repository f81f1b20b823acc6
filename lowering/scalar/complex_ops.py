"""Complex arithmetic on (re, im) pairs, principal branches as NumPy.

Division uses Smith's algorithm (no overflow of |b|^2 for large divisors,
unlike the reference runtime's textbook formula); |z| is computed with
scaling, so log and sqrt are accurate across the whole range.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.lowering.core.element_types import ComplexValue
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.scalar import math_approx as m

C = ComplexValue


def add(e: Emitter, a: C, b: C) -> C:
    return C(e.fadd(a.re, b.re), e.fadd(a.im, b.im))


def sub(e: Emitter, a: C, b: C) -> C:
    return C(e.fsub(a.re, b.re), e.fsub(a.im, b.im))


def mul(e: Emitter, a: C, b: C) -> C:
    re = e.fsub(e.fmul(a.re, b.re), e.fmul(a.im, b.im))
    im = e.fadd(e.fmul(a.re, b.im), e.fmul(a.im, b.re))
    return C(re, im)


def div(e: Emitter, a: C, b: C) -> C:
    """Smith's algorithm: scale by the larger component of the divisor."""
    re_big = e.fcmp("oge", e.fabs(b.re), e.fabs(b.im))
    # |b.re| >= |b.im|: r = b.im / b.re, den = b.re + b.im r
    r1 = e.fdiv(b.im, b.re)
    den1 = e.fadd(b.re, e.fmul(b.im, r1))
    re1 = e.fdiv(e.fadd(a.re, e.fmul(a.im, r1)), den1)
    im1 = e.fdiv(e.fsub(a.im, e.fmul(a.re, r1)), den1)
    # otherwise: r = b.re / b.im, den = b.re r + b.im
    r2 = e.fdiv(b.re, b.im)
    den2 = e.fadd(e.fmul(b.re, r2), b.im)
    re2 = e.fdiv(e.fadd(e.fmul(a.re, r2), a.im), den2)
    im2 = e.fdiv(e.fsub(e.fmul(a.im, r2), a.re), den2)
    return C(e.select(re_big, re1, re2), e.select(re_big, im1, im2))


def neg(e: Emitter, a: C) -> C:
    return C(e.fneg(a.re), e.fneg(a.im))


def exp(e: Emitter, a: C) -> C:
    """e^re (cos im + i sin im); a zero imaginary part stays exactly zero."""
    scale = m.exp(e, a.re)
    im = e.fmul(scale, m.sin(e, a.im))
    is_real = e.fcmp("oeq", a.im, e.const_like(a.im, 0.0))
    return C(e.fmul(scale, m.cos(e, a.im)), e.select(is_real, a.im, im))


def _scaled_modulus(e: Emitter, a: C) -> tuple[SSAValue, SSAValue]:
    """(big, small/big) of |re|, |im|: |z| = big * sqrt(1 + ratio^2) without overflow."""
    x, y = e.fabs(a.re), e.fabs(a.im)
    big = e.select(e.fcmp("oge", x, y), x, y)
    small = e.select(e.fcmp("oge", x, y), y, x)
    ratio = e.fdiv(small, big)
    zero = e.const_like(big, 0.0)
    ratio = e.select(e.fcmp("oeq", big, zero), zero, ratio)
    inf = e.const_like(big, float("inf"))
    ratio = e.select(e.fcmp("oeq", big, inf), zero, ratio)  # inf with finite or inf: |z| = inf
    return big, ratio


def log(e: Emitter, a: C) -> C:
    """log|z| + i arg z, with log|z| = log(big) + log1p(ratio^2)/2."""
    big, ratio = _scaled_modulus(e, a)
    half_log1p = e.fmul(m.log1p(e, e.fmul(ratio, ratio)), e.const_like(big, 0.5))
    return C(e.fadd(m.log(e, big), half_log1p), m.atan2(e, a.im, a.re))


def sqrt(e: Emitter, a: C) -> C:
    """Principal root: t = sqrt((|re| + |z|)/2); re >= 0 -> (t, im/2t) else (|im|/2t, ±t)."""
    big, ratio = _scaled_modulus(e, a)
    modulus = e.fmul(big, e.sqrt(e.fadd(e.const_like(big, 1.0), e.fmul(ratio, ratio))))
    t = e.sqrt(e.fmul(e.fadd(e.fabs(a.re), modulus), e.const_like(big, 0.5)))
    two_t = e.fadd(t, t)
    nonneg = e.fcmp("oge", a.re, e.const_like(big, 0.0))
    re = e.select(nonneg, t, e.fdiv(e.fabs(a.im), two_t))
    im = e.select(nonneg, e.fdiv(a.im, two_t), e.copysign(t, a.im))
    is_zero = e.fcmp("oeq", modulus, e.const_like(big, 0.0))
    return C(e.select(is_zero, e.const_like(big, 0.0), re), e.select(is_zero, a.im, im))


def eq(e: Emitter, a: C, b: C) -> SSAValue:
    return e.and_(e.fcmp("oeq", a.re, b.re), e.fcmp("oeq", a.im, b.im))


def ne(e: Emitter, a: C, b: C) -> SSAValue:
    return e.or_(e.fcmp("une", a.re, b.re), e.fcmp("une", a.im, b.im))


UNARY: dict[type[ew.UnaryOp], Callable[[Emitter, C], C]] = {
    ew.NegOp: neg,
    ew.ExpOp: exp,
    ew.LogOp: log,
    ew.SqrtOp: sqrt,
}
BINARY: dict[type[ew.BinaryOp], Callable[[Emitter, C, C], C]] = {
    ew.AddOp: add,
    ew.SubOp: sub,
    ew.MulOp: mul,
    ew.DivOp: div,
}
COMPARE: dict[type[ew.CompareOp], Callable[[Emitter, C, C], SSAValue]] = {ew.EqOp: eq, ew.NeOp: ne}
