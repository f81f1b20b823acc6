"""One record per unary rlx op, keyed by the op class: everything the tests know about it.

In the spirit of PyTorch's OpInfo: each `OpRecord` carries the op's float64
reference (written independently of the kernel's formula), the domain its
dense sweep covers and the special values added to it, the largest error
allowed per float width, its derivative's float64 reference, domain and
bound, and its ONNX name. tests/test_unary.py, tests/test_backward.py,
tests/test_numeric_edges.py, tests/test_autodiff.py and the fuzzer
(tests/fuzz_graphs.py) all read `RECORDS`, so a new unary op is one record
here, and `record(op)` names an op that has none.

The bounds are maxima measured by `python -m tests.measure rlx.<op>` (the
sweeps of test_unary and test_backward, fixed seeds), plus a margin where
noted: forward bounds have none where the measurement is the kernel table's
(tests/accuracy.py) and otherwise allow up to 4 ULP for composites;
derivative bounds are the measured maxima + 1 (+2 where the float64
reference itself is ~1-2 ULP off: 1/cosh^2, 1/cos^2, erfc-based gelu,
tanh(softplus)-based mish). Errors are in ULPs of the output width (f32:
against the float64 reference rounded to f32), or, where the result is a
cancellation of larger terms, in ULPs of those terms (`Cancellation`).
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

import decimal_reference as dr
import numpy as np
from accuracy import accuracy

from rlx_mlir.dialects import elementwise as ew

F64 = Callable[[np.ndarray], np.ndarray]
"""A float64 array function."""
Range = tuple[float, float]
T = TypeVar("T")


class PerWidth(NamedTuple, Generic[T]):
    """One value for f32 and one for f64."""

    f32: T
    f64: T

    def at(self, dtype: type | np.dtype) -> T:
        """The value for `dtype` (np.float32 or np.float64)."""
        return self.f64 if np.dtype(dtype) == np.float64 else self.f32


FOUR_ULP: PerWidth[float] = PerWidth(4, 4)
NORMAL_TINY: PerWidth[float] = PerWidth(1e-30, 1e-300)


@dataclass(frozen=True)
class Cancellation:
    """Where the result cancels larger terms, its error counted in ULPs of `scale(x)`.

    The plain ULP bound of the record then holds only for x >= `ulp_from`
    (inf: nowhere); everywhere the error is at most `bound` ULPs of the scale.
    """

    scale: F64
    bound: float
    ulp_from: float = math.inf


@dataclass(frozen=True)
class Edges:
    """A `decimal` reference (float -> float, tests/decimal_reference.py) for the float range's edges
    (overflow and underflow thresholds, subnormals, ±max), and its bound per width there."""

    reference: Callable[[float], float]
    ulp: PerWidth[float] = FOUR_ULP


@dataclass(frozen=True)
class Derivative:
    """f'(x) of the op, as `rlx.activation_backward` computes it (dx = dy f'(x))."""

    reference: F64
    domain: PerWidth[Range]
    """The dense sweep, where the result stays normal (subnormal tails are checked by the specials)."""
    ulp: PerWidth[float]
    """Largest error of dy f'(x) over the domain and the kinks."""
    kinks: tuple[float, ...] = ()
    """Special values beyond ±0, ±inf, NaN, ±1: kinks, limits, zeros of f'."""
    scale: F64 | None = None
    """Magnitude of the cancelling terms, for an f' with a zero: the error is then in ULPs of it."""
    tiny: PerWidth[float] = NORMAL_TINY
    """Smallest |x| of the log-uniform part of the sweep."""
    straight_through: bool = False
    """f' is a convention, not the derivative of the reference (round: dx = dy)."""
    fd_range: Range = (-12.0, 12.0)
    """Where central differences of the float64 forward are well conditioned (autodiff's checks)."""


@dataclass(frozen=True)
class OpRecord:
    """What the tests know about one unary op."""

    reference: F64
    """The float64 result, independent of the kernel's formula."""
    domain: PerWidth[Range]
    """The dense forward sweep; `special_values` and ±0, ±inf, NaN, subnormals, ±max are added."""
    ulp: PerWidth[float]
    """Largest error on the sweep, in ULPs of the output width."""
    derivative: Derivative
    onnx: str | None = None
    """The ONNX operator it imports (with default attributes), if one maps to it alone."""
    same_dtype: F64 | None = None
    """The NumPy formula in the input's own dtype that the result must equal bit for bit."""
    special_values: tuple[float, ...] = ()
    cancellation: Cancellation | None = None
    edges: Edges | None = None
    fuzz: Range | None = (-30.0, 30.0)
    """The range the fuzzer clamps this op's input to (infinite: no clamp; None: not fuzzed)."""


class MissingRecordError(LookupError):
    """A unary op of the dialect has no record here."""


def short_name(op: type[ew.UnaryOp]) -> str:
    """`rlx.gelu_approx` -> `gelu_approx`: the IR keyword and the Builder method."""
    return op.name.removeprefix("rlx.")


def record(op: type[ew.UnaryOp]) -> OpRecord:
    """The record of `op`, or an error naming it and this file."""
    if op not in RECORDS:
        raise MissingRecordError(f"'{op.name}' ({op.__name__}) has no record in tests/op_records.py:RECORDS")
    return RECORDS[op]


def unary_ops() -> list[type[ew.UnaryOp]]:
    """Every unary op class of the dialect, in its table's order (the tests' parameters)."""
    return list(ew.UNARY_OPS.values())


def reference(op: type[ew.UnaryOp], x: np.ndarray) -> np.ndarray:
    """The op's float64 reference on `x`, floating-point warnings silenced."""
    with np.errstate(all="ignore"):
        return np.asarray(record(op).reference(np.asarray(x, np.float64)), np.float64)


def derivative(op: type[ew.UnaryOp], x: np.ndarray) -> np.ndarray:
    """f'(x) of the op in float64."""
    with np.errstate(all="ignore"):
        return np.asarray(record(op).derivative.reference(np.asarray(x, np.float64)), np.float64)


# ---------------------------------------------------------------------------
# float64 building blocks
# ---------------------------------------------------------------------------
_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_INF = math.inf
ALL_F32, ALL_F64 = (-3.4e38, 3.4e38), (-1.7e308, 1.7e308)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1/(1+exp(-x)) without overflow: exp(x)/(1+exp(x)) for x < 0. Evaluated in long double (a
    64-bit mantissa on x86-64, where the suites run): in float64, the roundings of exp, 1 + e and
    the division put the reference itself up to 2 ULP off an f64 result."""
    xl = np.asarray(x, dtype=np.longdouble)
    e = np.exp(-np.abs(xl))
    return np.where(xl >= 0, 1 / (1 + e), e / (1 + e)).astype(np.float64)


def _sig(x: np.ndarray) -> np.ndarray:
    """sigmoid in float64 (enough for the derivative references)."""
    t = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + t), t / (1.0 + t))


def _gelu(x: np.ndarray) -> np.ndarray:
    """x/2 * (1 + erf(x/sqrt2)), written with erfc so the negative tail keeps its precision."""
    return 0.5 * x * _erfc(-x / math.sqrt(2.0))


def _gelu_approx(x: np.ndarray) -> np.ndarray:
    """x/2 * (1 + tanh(z)) = x * sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3)."""
    z = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    # at x = -inf: -inf * 0 = NaN, as the x/2 * (1 + tanh) form gives
    return x * sigmoid(2.0 * z)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x, 0.0)


def _exp_neg_sq(x: np.ndarray, s: float) -> np.ndarray:
    """exp(-s x^2) with x^2 as an exact Dekker product hi + lo (x^2 rounded in f64 would
    cost x^2 ULPs)."""
    xs = np.clip(x, -1e100, 1e100)
    c = 134217729.0 * xs
    xh = c - (c - xs)
    xl = xs - xh
    hi = xs * xs
    lo = ((xh * xh - hi) + 2 * xh * xl) + xl * xl
    return np.exp(-s * hi) * (1.0 - s * lo)


def _gelu_d(x: np.ndarray) -> np.ndarray:
    phi = _exp_neg_sq(x, 0.5) / math.sqrt(2 * math.pi)
    return 0.5 * _erfc(-x / math.sqrt(2.0)) + np.where(np.isinf(x), 0.0, x * phi)


_D = decimal.Context(prec=50)
_PI_DEC = _D.create_decimal("3.14159265358979323846264338327950288419716939937510582")
_K_DEC = 2 * (_D.divide(2, _PI_DEC)).sqrt(_D)


def _gelu_approx_d_scalar(x: float) -> float:
    """s(2z) (1 + 2c x (1 + 3a x^2) s(-2z)) in 50-digit decimals: in the tail f' ~ e^(2z) and
    a float64 2z would cost |2z| ULPs (~1000 at x = -20)."""
    if not math.isfinite(x):
        return math.nan if math.isnan(x) else float(x > 0)
    with decimal.localcontext(_D):
        xd = decimal.Decimal(x)
        a = decimal.Decimal("0.044715")
        two_z = _K_DEC * (xd + a * xd**3)
        t = (-abs(two_z)).exp()
        s, sm = (1 / (1 + t), t / (1 + t)) if two_z >= 0 else (t / (1 + t), 1 / (1 + t))
        return float(s * (1 + _K_DEC * xd * (1 + 3 * a * xd * xd) * sm))


_gelu_approx_d = np.vectorize(_gelu_approx_d_scalar, otypes=[np.float64])


def _mish_d(x: np.ndarray) -> np.ndarray:
    sp = np.logaddexp(x, 0.0)
    sech2 = 1.0 / np.cosh(sp) ** 2
    return np.where(np.isinf(x), (x > 0) * 1.0, np.tanh(sp) + np.nan_to_num(x * sech2 * _sig(x)))


def _silu_d(x: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(x), (x > 0) * 1.0, _sig(x) * (1 + np.nan_to_num(x * _sig(-x))))


def _gelu_approx_scale(x: np.ndarray) -> np.ndarray:
    c, a = math.sqrt(2 / math.pi), 0.044715
    two_z = 2 * c * (x + a * x**3)
    return _sig(two_z) * (1 + np.abs(2 * c * x * (1 + 3 * a * x * x)) * _sig(-two_z))


def _gelu_scale(x: np.ndarray) -> np.ndarray:
    return 0.5 * _erfc(-x / math.sqrt(2)) + np.abs(x) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _mish_scale(x: np.ndarray) -> np.ndarray:
    sp = np.logaddexp(x, 0)
    return np.tanh(sp) + np.abs(x) * _sig(x) / np.cosh(sp) ** 2


def _kernel(name: str) -> tuple[PerWidth[Range], PerWidth[float]]:
    """(domain, ulp) of an op that is one kernel of lowering/scalar/math_approx.py: tests/accuracy.py's rows."""
    f32, f64 = accuracy(name, np.float32), accuracy(name, np.float64)
    assert f32.sweep is not None and f64.sweep is not None
    return PerWidth(f32.sweep, f64.sweep), PerWidth(f32.max_ulp, f64.max_ulp)


def _same(fn: Callable[[np.ndarray, Callable[[float], np.generic]], np.ndarray]) -> F64:
    """A formula in the input's own dtype: `fn(x, c)` with `c(v)` the constant v in x's dtype."""
    return lambda x: fn(x, x.dtype.type)


def _w(lo: float, hi: float) -> PerWidth[Range]:
    """The same range at both widths."""
    return PerWidth((lo, hi), (lo, hi))


_ROUNDING = tuple(k + 0.5 for k in range(-200, 200))  # halves: ties to even
_STEP = Derivative(np.zeros_like, _w(-1e4, 1e4), PerWidth(1, 1), kinks=(2.0, -2.0))
_EXP_LIKE = PerWidth((-80.0, 80.0), (-700.0, 700.0))

# ---------------------------------------------------------------------------
# the records
# ---------------------------------------------------------------------------
RECORDS: dict[type[ew.UnaryOp], OpRecord] = {
    ew.ReluOp: OpRecord(
        lambda x: np.where(x < 0, 0.0, x),
        _w(-1e6, 1e6),
        PerWidth(0, 0),
        Derivative(lambda x: np.where(x > 0, 1.0, 0.0), _w(-1e3, 1e3), PerWidth(1, 1), kinks=(1e-30, -1e-30)),
        onnx="Relu",
        same_dtype=_same(lambda x, c: np.where(x < 0, c(0), x)),
        edges=Edges(lambda v: max(v, 0.0), PerWidth(0, 0)),
        fuzz=(-_INF, _INF),
    ),
    ew.GeluOp: OpRecord(
        _gelu,
        PerWidth((-10.0, 10.0), (-40.0, 40.0)),
        PerWidth(4, 4),  # on x >= -0.5, see the cancellation
        # the float64 reference rounds its argument, which e^(-x^2/2) magnifies by ~x^2 in the negative
        # tail: there the bound is in ULPs of |x|/2 (measured 1.73 / 2.25; 1e6-point runs up to 3.0), and
        # the decimal reference of the edges checks the kernel itself (measured 7 ULP in f64: e^(-x^2/2)
        # times a fitted erfc(t) e^(t^2))
        Derivative(
            _gelu_d,
            PerWidth((-13.0, 10.0), (-37.0, 12.0)),
            PerWidth(4, 7),
            kinks=(-0.7518, -40.0, -5.657, -8.486, -1.4142, -1.4143),
            scale=_gelu_scale,
        ),
        onnx="Gelu",
        cancellation=Cancellation(lambda x: x / 2, 4, ulp_from=-0.5),
        edges=Edges(dr.at_50_digits(dr.gelu), PerWidth(4, 8)),
    ),
    ew.GeluApproxOp: OpRecord(
        _gelu_approx,
        PerWidth((-10.0, 10.0), (-40.0, 40.0)),
        PerWidth(4, 4),  # as gelu; measured 2.33 / 2.34
        Derivative(_gelu_approx_d, PerWidth((-9.0, 10.0), (-20.0, 20.0)), PerWidth(6, 5), scale=_gelu_approx_scale),
        cancellation=Cancellation(lambda x: x / 2, 4, ulp_from=-0.5),
        edges=Edges(dr.at_50_digits(dr.gelu_approx)),
    ),
    ew.SiluOp: OpRecord(
        # below ~-87 (f32) the sigmoid factor is subnormal and carries fewer bits (52 ULP on [-104, -87]),
        # so the sweep stops where intermediates are normal
        lambda x: x * sigmoid(x),
        PerWidth((-80.0, 80.0), (-700.0, 700.0)),
        PerWidth(4, 4),
        Derivative(
            _silu_d,
            _EXP_LIKE,
            PerWidth(4, 4),
            kinks=(-1.2785, -1000.0, 1000.0),
            scale=lambda x: _sig(x) * (1 + np.abs(x) * _sig(-x)),
        ),
        edges=Edges(dr.at_50_digits(lambda x: x * dr.sigmoid(x))),
    ),
    ew.SigmoidOp: OpRecord(
        sigmoid,
        *_kernel("sigmoid"),
        derivative=Derivative(lambda x: _sig(x) * _sig(-x), _EXP_LIKE, PerWidth(5, 5)),
        onnx="Sigmoid",
        edges=Edges(dr.at_50_digits(dr.sigmoid), _kernel("sigmoid")[1]),
        fuzz=(-_INF, _INF),
    ),
    ew.TanhOp: OpRecord(
        np.tanh,
        *_kernel("tanh"),
        derivative=Derivative(
            lambda x: 1.0 / np.cosh(x) ** 2, PerWidth((-40.0, 40.0), (-350.0, 350.0)), PerWidth(5, 8)
        ),
        onnx="Tanh",
        edges=Edges(dr.at_50_digits(dr.tanh), _kernel("tanh")[1]),
        fuzz=(-_INF, _INF),
    ),
    ew.ExpOp: OpRecord(
        np.exp,
        *_kernel("exp"),
        derivative=Derivative(
            np.exp, PerWidth((-80.0, 88.0), (-700.0, 709.0)), PerWidth(2, 3), kinks=(1000.0, -1000.0)
        ),
        onnx="Exp",
    ),
    ew.LogOp: OpRecord(
        np.log,
        *_kernel("log"),
        derivative=Derivative(
            lambda x: 1.0 / x,
            PerWidth((1e-30, 1e30), (1e-300, 1e300)),
            PerWidth(2, 1),
            kinks=(-1.0, -2.0),
            fd_range=(0.05, 20.0),
        ),
        onnx="Log",
        fuzz=(0.5, 30.0),
    ),
    ew.SqrtOp: OpRecord(
        np.sqrt,
        PerWidth((0.0, 3.4e38), (0.0, 1.7e308)),
        PerWidth(0, 0),
        Derivative(
            lambda x: np.where(x == 0, 0.0, 0.5 / np.sqrt(x)),
            PerWidth((1e-30, 1e30), (1e-300, 1e300)),
            PerWidth(3, 1),
            fd_range=(0.05, 20.0),
        ),
        onnx="Sqrt",
        same_dtype=np.sqrt,
        fuzz=(0.5, 30.0),
    ),
    ew.RsqrtOp: OpRecord(
        lambda x: 1.0 / np.sqrt(x),
        PerWidth((0.0, 3.4e38), (0.0, 1.7e308)),
        PerWidth(1, 1),
        Derivative(
            lambda x: np.where(x == 0, 0.0, -0.5 / (x * np.sqrt(x))),
            PerWidth((1e-20, 1e20), (1e-200, 1e200)),
            PerWidth(4, 4),
            fd_range=(0.05, 20.0),
        ),
        same_dtype=_same(lambda x, c: c(1) / np.sqrt(x)),
        fuzz=(0.5, 30.0),
    ),
    ew.NegOp: OpRecord(
        np.negative,
        PerWidth(ALL_F32, ALL_F64),
        PerWidth(0, 0),
        Derivative(lambda x: -np.ones_like(x), _w(-1e6, 1e6), PerWidth(1, 1)),
        onnx="Neg",
        same_dtype=np.negative,
        fuzz=(-_INF, _INF),
    ),
    ew.AbsOp: OpRecord(
        np.abs,
        PerWidth(ALL_F32, ALL_F64),
        PerWidth(0, 0),
        Derivative(np.sign, _w(-1e6, 1e6), PerWidth(1, 1), kinks=(1e-30, -1e-30)),
        onnx="Abs",
        same_dtype=np.abs,
        fuzz=(-_INF, _INF),
    ),
    ew.RoundOp: OpRecord(
        np.round,
        _w(-1e4, 1e4),
        PerWidth(0, 0),  # half to even
        Derivative(np.ones_like, _w(-1e4, 1e4), PerWidth(1, 1), kinks=(0.5, 1.5, -2.5), straight_through=True),
        onnx="Round",
        same_dtype=np.round,
        special_values=_ROUNDING,
        fuzz=None,
    ),
    ew.SinOp: OpRecord(
        np.sin,
        *_kernel("sin"),
        derivative=Derivative(np.cos, PerWidth((-1e4, 1e4), (-1e6, 1e6)), PerWidth(3, 3)),
        onnx="Sin",
        fuzz=(-_INF, _INF),
    ),
    ew.CosOp: OpRecord(
        np.cos,
        *_kernel("cos"),
        derivative=Derivative(lambda x: -np.sin(x), PerWidth((-1e4, 1e4), (-1e6, 1e6)), PerWidth(3, 3)),
        onnx="Cos",
        fuzz=(-_INF, _INF),
    ),
    ew.TanOp: OpRecord(
        np.tan,
        *_kernel("tan"),
        derivative=Derivative(
            lambda x: 1.0 / np.cos(x) ** 2,
            PerWidth((-1e4, 1e4), (-1e6, 1e6)),
            PerWidth(5, 8),
            kinks=(math.pi / 2,),
            fd_range=(-1.4, 1.4),
        ),
        onnx="Tan",
        fuzz=(-1.2, 1.2),
    ),
    ew.AtanOp: OpRecord(
        np.arctan,
        *_kernel("atan"),
        derivative=Derivative(lambda x: 1.0 / (1.0 + x * x), PerWidth((-1e18, 1e18), (-1e150, 1e150)), PerWidth(3, 4)),
        onnx="Atan",
        fuzz=(-_INF, _INF),
    ),
    ew.RecipOp: OpRecord(
        lambda x: 1.0 / x,
        PerWidth(ALL_F32, ALL_F64),
        PerWidth(0, 0),
        # |x| >= tiny: no 1/x^2 overflow boundary
        Derivative(
            lambda x: -1.0 / (x * x),
            PerWidth((-1e18, 1e18), (-1e150, 1e150)),
            PerWidth(3, 4),
            kinks=(-2.0,),
            tiny=PerWidth(1e-19, 1e-153),
            fd_range=(0.05, 20.0),
        ),
        onnx="Reciprocal",
        same_dtype=_same(lambda x, c: c(1) / x),
        fuzz=(0.5, 30.0),
    ),
    ew.FloorOp: OpRecord(
        np.floor,
        _w(-1e4, 1e4),
        PerWidth(0, 0),
        _STEP,
        onnx="Floor",
        same_dtype=np.floor,
        special_values=_ROUNDING,
        fuzz=None,
    ),
    ew.CeilOp: OpRecord(
        np.ceil,
        _w(-1e4, 1e4),
        PerWidth(0, 0),
        _STEP,
        onnx="Ceil",
        same_dtype=np.ceil,
        special_values=_ROUNDING,
        fuzz=None,
    ),
    ew.SignOp: OpRecord(
        np.sign,
        _w(-1e6, 1e6),
        PerWidth(0, 0),
        Derivative(np.zeros_like, _w(-1e4, 1e4), PerWidth(1, 1), kinks=(1e-30,)),
        onnx="Sign",
        same_dtype=np.sign,
        fuzz=None,
    ),
    ew.SoftplusOp: OpRecord(
        _softplus,
        PerWidth((-100.0, 100.0), (-750.0, 750.0)),
        PerWidth(4, 4),
        Derivative(_sig, _EXP_LIKE, PerWidth(4, 4)),
        onnx="Softplus",
        edges=Edges(dr.at_50_digits(dr.softplus)),
    ),
    ew.EluOp: OpRecord(
        lambda x: np.where(x > 0, x, np.expm1(x)),
        PerWidth((-40.0, 90.0), (-60.0, 710.0)),
        PerWidth(4, 4),
        Derivative(lambda x: np.where(x > 0, 1.0, np.exp(x)), _EXP_LIKE, PerWidth(2, 3), kinks=(1e-30, -1e-30)),
        # ONNX Elu (any alpha) imports as alpha (exp(x) - 1) under a where, not as rlx.elu
        edges=Edges(dr.at_50_digits(dr.elu)),
    ),
    ew.ErfOp: OpRecord(
        _erf,
        *_kernel("erf"),
        derivative=Derivative(
            lambda x: 2 / math.sqrt(math.pi) * _exp_neg_sq(x, 1.0), PerWidth((-9.0, 9.0), (-26.0, 26.0)), PerWidth(4, 5)
        ),
        onnx="Erf",
        edges=Edges(math.erf, _kernel("erf")[1]),
    ),
    ew.HardSwishOp: OpRecord(
        # the factor <= 1: no overflow at ±max; f32: x*c rounded, then /6 rounded: 2 roundings
        lambda x: x * (np.clip(x + 3.0, 0.0, 6.0) / 6.0),
        _w(-10.0, 10.0),
        PerWidth(2, 1),
        Derivative(
            lambda x: np.where(x < -3, 0.0, np.where(x > 3, 1.0, (2 * x + 3) / 6)),
            _w(-6.0, 6.0),
            PerWidth(3, 1),
            kinks=(-3.0, 3.0, -1.5, float(np.nextafter(-3.0, -4)), float(np.nextafter(3.0, 4))),
        ),
        onnx="HardSwish",
        same_dtype=_same(lambda x, c: x * (np.clip(x + c(3), c(0), c(6)) / c(6))),
        edges=Edges(dr.at_50_digits(lambda x: x * min(max(x + 3, dr.D(0)), dr.D(6)) / 6), PerWidth(2, 2)),
    ),
    ew.HardSigmoidOp: OpRecord(
        # x/6 + 0.5 cancels near x = -3 (f32 up to 5461 ULP vs the float64 reference: the rounding of
        # x/6 is large relative to the result): measured in ULPs of the term 0.5 (0.67)
        lambda x: np.clip(x / 6.0 + 0.5, 0.0, 1.0),
        _w(-10.0, 10.0),
        PerWidth(_INF, _INF),  # no plain ULP bound
        Derivative(
            lambda x: np.where(np.isnan(x), np.nan, np.where(np.abs(x) < 3, 1 / 6, 0.0)),
            _w(-6.0, 6.0),
            PerWidth(2, 1),
            kinks=(-3.0, 3.0, float(np.nextafter(-3.0, 0)), float(np.nextafter(3.0, 0))),
        ),
        same_dtype=_same(lambda x, c: np.clip(x / c(6) + c(0.5), c(0), c(1))),
        cancellation=Cancellation(lambda x: np.full(x.shape, 0.5), 1),
        edges=Edges(dr.at_50_digits(lambda x: min(max(x / 6 + dr.D("0.5"), dr.D(0)), dr.D(1)))),
    ),
    ew.MishOp: OpRecord(
        lambda x: x * np.tanh(_softplus(x)),
        PerWidth((-80.0, 80.0), (-700.0, 700.0)),
        PerWidth(4, 4),
        Derivative(_mish_d, _EXP_LIKE, PerWidth(4, 7), kinks=(-1.1924, -1000.0), scale=_mish_scale),
        onnx="Mish",
        edges=Edges(dr.at_50_digits(dr.mish)),
    ),
    ew.SoftsignOp: OpRecord(
        lambda x: x / (1.0 + np.abs(x)),
        PerWidth((-1e6, 1e6), (-1e10, 1e10)),
        PerWidth(4, 4),
        Derivative(lambda x: 1.0 / (1.0 + np.abs(x)) ** 2, PerWidth((-1e18, 1e18), (-1e150, 1e150)), PerWidth(5, 5)),
        onnx="Softsign",
        edges=Edges(dr.at_50_digits(lambda x: x / (1 + abs(x)))),
        fuzz=(-_INF, _INF),
    ),
    ew.LogSigmoidOp: OpRecord(
        lambda x: -np.logaddexp(-x, 0.0),
        PerWidth((-100.0, 100.0), (-750.0, 750.0)),
        PerWidth(4, 4),
        Derivative(lambda x: _sig(-x), _EXP_LIKE, PerWidth(4, 4)),
        edges=Edges(dr.at_50_digits(dr.log_sigmoid)),
    ),
}
