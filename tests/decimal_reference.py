"""High-precision scalar references in `decimal`, for the edges of the float range.

float64 references round their own intermediates (e^x overflows, x^2 costs
x^2 ULPs in e^(-x^2/2), results become subnormal), so where a float64 result
is itself in doubt, tests/test_numeric_edges.py compares against these: each
function takes and returns a `Decimal` evaluated at 50 digits (`at_50_digits`
turns one into a float -> float function). pi comes from Machin's formula in
integers, independent of the compiler's own constants.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, localcontext

D = Decimal


def _pi(digits: int) -> Decimal:
    """pi to `digits` digits by Machin's formula in integers (independent of the compiler's own)."""
    scale = 10 ** (digits + 10)

    def arctan_inv(k: int) -> int:
        total, term, n = 0, scale // k, 0
        while term:
            total += (-1) ** n * (term // (2 * n + 1))
            term //= k * k
            n += 1
        return total

    with localcontext() as ctx:
        ctx.prec = digits + 10
        return Decimal(16 * arctan_inv(5) - 4 * arctan_inv(239)) / scale


PI = _pi(420)
SQRT_PI = D("1.7724538509055160272981674833411451827975494561223871")


def at_50_digits(fn: Callable[[Decimal], Decimal]) -> Callable[[float], float]:
    """`fn` as a float -> float function evaluated at 50 digits."""

    def ref(v: float) -> float:
        with localcontext() as ctx:
            ctx.prec = 50
            return float(fn(D(v)))

    return ref


def w(x: Decimal) -> Decimal:
    """e^-|x|: the only exponential the references need (it cannot overflow)."""
    return (-abs(x)).exp()


def expm1(y: Decimal) -> Decimal:
    return y + y * y / 2 + y**3 / 6 if abs(y) < D("1e-20") else y.exp() - 1


def log1p(v: Decimal) -> Decimal:
    return v - v * v / 2 + v**3 / 3 if abs(v) < D("1e-20") else (1 + v).ln()


def sigmoid(x: Decimal) -> Decimal:
    t = w(x)
    return 1 / (1 + t) if x >= 0 else t / (1 + t)


def tanh(x: Decimal) -> Decimal:
    em = expm1(-2 * abs(x))
    return -em / (2 + em) * (1 if x >= 0 else -1)


def softplus(x: Decimal) -> Decimal:
    return max(x, D(0)) + log1p(w(x))


def log_sigmoid(x: Decimal) -> Decimal:
    return min(x, D(0)) - log1p(w(x))


def mish(x: Decimal) -> Decimal:
    """x tanh(softplus(x)); for x < 0, tanh(log(1 + t)) = t(t + 2) / (t(t + 2) + 2), t = e^x,
    which keeps its digits where softplus(x) is below the decimal precision."""
    if x >= 0:
        return x * tanh(softplus(x))
    t = w(x)
    return x * t * (t + 2) / (t * (t + 2) + 2)


def elu(x: Decimal) -> Decimal:
    return x if x > 0 else expm1(x)


def erfc(t: Decimal) -> Decimal:
    """erfc at ~45 digits: 1 - erf by its series of positive terms for t < 3, else the continued
    fraction e^(-t^2) / (sqrt(pi) (t + (1/2) / (t + 1 / (t + ...)))) (math.erfc would need t rounded)."""
    if t < 0:
        return 2 - erfc(-t)
    if t < 3:
        term = total = t
        n = 0
        while term > D("1e-48") * total:
            n += 1
            term = term * 2 * t * t / (2 * n + 1)
            total += term
        return 1 - 2 / SQRT_PI * (-t * t).exp() * total
    acc = t
    for n in range(600, 0, -1):
        acc = t + D(n) / 2 / acc
    return (-t * t).exp() / (SQRT_PI * acc)


def gelu(x: Decimal) -> Decimal:
    return x / 2 * erfc(-x / D(2).sqrt())


def gelu_approx(x: Decimal) -> Decimal:
    z = (2 / PI).sqrt() * (x + D("0.044715") * x**3)
    return x * sigmoid(2 * z)
