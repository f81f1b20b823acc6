"""Numerics at the edges, per float type (f16, bf16, f32, f64), through compiled rlx ops.

* sin/cos/tan over huge arguments up to ±max: every power of two, floats nearest to multiples
  of pi/2 and their neighbours, random bit patterns (every exponent equally; every f16 and bf16
  value), the hardest cases for argument reduction known; against a `decimal` reference (the float64 value reduced by pi/2
  at 420 digits, then Taylor series at 60), within the bounds of the op records (1 ULP for
  f16/bf16, which compute in f32 and round once). libm is not a safe reference here: glibc's
  cos(5.319372648326541e+255) is 8 ULP off.
* every op whose record (tests/op_records.py) has `edges`, at ±0, ±inf, NaN, ±max, the overflow
  and underflow thresholds of e^x, the bands where results become subnormal, and subnormal
  inputs, against its reference evaluated in `decimal` at 50 digits (tests/decimal_reference.py,
  so float64's own overflow and subnormal rounding do not leak into it), within the record's
  edge bound (f16/bf16: 1 ULP, 0 for an op exact in f32/f64). Non-finite inputs follow the
  record's float64 reference, as test_unary checks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from functools import cache

import ml_dtypes
import numpy as np
import pytest
from decimal_reference import PI
from op_records import RECORDS, record, reference, short_name
from reference import scaled_error, ulp_error

import rlx_mlir
from rlx_mlir.dialects import elementwise as ew

TYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
NARROW = ("f16", "bf16")


@cache
def _compiled(name: str, ty: str, n: int) -> Callable[[np.ndarray], np.ndarray]:
    t = f"tensor<{n}x{ty}>"
    exe = rlx_mlir.compile(
        f"func.func @f(%a: {t}) -> {t} {{\n  %r = rlx.{name} %a : ({t}) -> {t}\n  func.return %r : {t}\n}}\n"
    )
    return lambda x: exe(x)[0]


def run(name: str, ty: str, x: np.ndarray) -> np.ndarray:
    return _compiled(name, ty, x.size)(x)


def _neighbours(x: np.ndarray) -> np.ndarray:
    """x and the floats one ULP above and below (bit patterns ±1), finite ones only."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    bits = x.view(it)
    out = np.concatenate([x, (bits + 1).view(x.dtype), (bits - 1).view(x.dtype)])
    return out[np.isfinite(out.astype(np.float64))]


def _finfo(ty: str):
    return ml_dtypes.finfo(TYPES[ty])


def _check(name: str, ty: str, x: np.ndarray, got: np.ndarray, ref: np.ndarray, bound: float) -> None:
    err = ulp_error(got, ref, TYPES[ty])
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (
        f"{name}[{ty}] {err[worst]} ULP > {bound} at x={x[worst]!r}: got {got[worst]!r}, want {ref[worst]!r}"
    )


# ---------------------------------------------------------------------------
# sin / cos / tan over every finite input
# ---------------------------------------------------------------------------
TRIG = ("sin", "cos", "tan")


def _sin_cos_tan(v: float) -> tuple[float, float, float]:
    """sin, cos, tan of the float64 value v, correctly rounded (x reduced at 420 digits)."""
    with localcontext() as ctx:
        ctx.prec = 420
        x = Decimal(v)
        n = (x * 2 / PI).to_integral_value()
        r = x - n * PI / 2
        ctx.prec = 60
        r = +r
        s, c, term, k = Decimal(0), Decimal(0), Decimal(1), 0
        while k < 200 and (k < 4 or abs(term) > Decimal("1e-70")):
            if k % 2:
                s += term if k % 4 == 1 else -term
            else:
                c += term if k % 4 == 0 else -term
            k += 1
            term = term * r / k
        q = int(n) % 4
        sin, cos = [(s, c), (c, -s), (-s, -c), (-c, s)][q]
        return float(sin), float(cos), float(sin / cos)


HARD_CASES = {  # the floats closest to a multiple of pi/2 (|r| = 2^-29.2 and 2^-60.9; Muller, "Elementary Functions")
    "f32": [16367173.0 * 2.0**72],
    "f64": [6381956970095103.0 * 2.0**797],
}


@cache
def _trig_inputs(ty: str) -> np.ndarray:
    dt = TYPES[ty]
    fi = _finfo(ty)
    rng = np.random.default_rng(11)
    top = int(fi.maxexp)
    powers = [2.0**k for k in range(int(fi.minexp), top)]
    # floats nearest to k pi/2 for k spread over every magnitude up to max / (pi/2)
    ks = {int(2.0**e) + int(rng.integers(0, 1 << 20)) for e in rng.uniform(0, top - 1, 1500)}
    with localcontext() as ctx:
        ctx.prec = 400
        near = [float(Decimal(k) * PI / 2) for k in sorted(ks)]
    it = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    if dt.itemsize == 2:  # f16, bf16: every bit pattern
        patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)
    else:
        patterns = rng.integers(0, np.iinfo(it).max, 20000, dtype=it, endpoint=True).view(dt)
    values = np.array(powers + near + HARD_CASES.get(ty, []) + [float(fi.max), 3.4e38, 2.95e6, 1.77e15])
    with np.errstate(over="ignore"):
        x = values.astype(dt)
    x = _neighbours(x[np.isfinite(x.astype(np.float64))])
    x = np.concatenate([x, -x, patterns])
    with np.errstate(invalid="ignore"):
        return x[np.isfinite(x.astype(np.float64))]


@cache
def _trig_reference(ty: str) -> np.ndarray:
    return np.array([_sin_cos_tan(v) for v in _trig_inputs(ty).astype(np.float64).tolist()])


@pytest.mark.parametrize("ty", TYPES)
def test_trig_every_finite_input(ty: str) -> None:
    """sin, cos and tan of a type in one test: they share its reference (1-4 s of
    `decimal`, which a test per op computed again on each worker it ran on)."""
    x = _trig_inputs(ty)
    refs = _trig_reference(ty)
    for k, name in enumerate(TRIG):
        bound = 1 if ty in NARROW else record(ew.UNARY_OPS[name]).ulp.at(TYPES[ty])
        _check(name, ty, x, run(name, ty, x), refs[:, k], bound)


@pytest.mark.parametrize("ty", TYPES)
def test_trig_issue_example_and_specials(ty: str) -> None:
    """f32 sin(±3.4e38) is ∓0.2441 (not the ∓0.54 of a reduction that ran out of bits), and the
    other types right at ±max; ±inf and NaN give NaN, sin(-0) = -0, cos(0) = 1."""
    top = 3.4e38 if ty == "f32" else float(_finfo(ty).max)
    big = np.array([top, -top], np.float64).astype(TYPES[ty])
    want = np.array([_sin_cos_tan(v)[0] for v in big.astype(np.float64).tolist()])
    np.testing.assert_allclose(run("sin", ty, big).astype(np.float64), want, rtol=float(_finfo(ty).eps))
    if ty == "f32":
        assert abs(want[0] + 0.2441) < 1e-4
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0], TYPES[ty])
    for name in TRIG:
        got = run(name, ty, x).astype(np.float64)
        assert np.isnan(got[:3]).all(), (name, got)
    assert np.signbit(run("sin", ty, x)[3]) and run("cos", ty, x)[4] == 1


# ---------------------------------------------------------------------------
# activations at the edges
# ---------------------------------------------------------------------------
EDGE_OPS = [pytest.param(op, id=short_name(op)) for op, rec in RECORDS.items() if rec.edges is not None]


def _bound(op: type[ew.UnaryOp], ty: str) -> float:
    """The record's edge bound; f16/bf16 compute in f32 and round once: 1 ULP (0 for an exact op)."""
    rec = record(op)
    assert rec.edges is not None
    if ty in NARROW:
        return 0 if rec.ulp == (0, 0) else 1
    return rec.edges.ulp.at(TYPES[ty])


@cache
def _edge_inputs(ty: str) -> np.ndarray:
    dt = TYPES[ty]
    fi = _finfo(ty)
    big, tiny, sub = float(fi.max), float(fi.tiny), float(fi.smallest_subnormal)
    points = [
        0.0,
        big,
        big / 2,
        big / 6,
        big / 7,
        math.sqrt(big),
        big ** (1 / 3),
        tiny,
        sub,
        3 * sub,
        tiny / 3,
        1e-30,
        30.0,
        100.0,
        1e4,
        1e10,
        1e20,
        3.0,
        6.0,
        9.01,
        15.0,
        40.0,
    ]  # tanh rounds to 1 (f32), its clamp of 2|x| (f32), sigmoid's clamp
    bands = []
    # e^x overflows / underflows to subnormal / to 0; x e^x (silu, mish, gelu) underflows a little further out
    for t in (math.log(big), -math.log(big), math.log(tiny), math.log(sub), math.log(sub) - 10, math.log(tiny) / 2):
        bands.append(np.linspace(t - 3, t + 3, 401))
    # gelu = x Phi(x) underflows near -sqrt(-2 log(sub)); its tail starts at -1/sqrt2
    bands += [np.linspace(-math.sqrt(-2 * math.log(sub)) - 2, -0.5, 801)]
    x = np.concatenate([np.array(points), -np.array(points), *bands])
    with np.errstate(over="ignore"):
        x = x.astype(dt)
    x = _neighbours(x[np.isfinite(x.astype(np.float64))])
    return np.unique(np.concatenate([x, np.array([np.inf, -np.inf, np.nan], dt)]))


@pytest.mark.parametrize("ty", TYPES)
@pytest.mark.parametrize("op", EDGE_OPS)
def test_activation_edges(op: type[ew.UnaryOp], ty: str) -> None:
    rec, name = record(op), short_name(op)
    assert rec.edges is not None
    x = _edge_inputs(ty)
    x64 = x.astype(np.float64)
    finite = np.isfinite(x64)
    ref = np.empty_like(x64)
    ref[finite] = [rec.edges.reference(v) for v in x64[finite].tolist()]
    ref[~finite] = reference(op, x64[~finite])  # ±inf and NaN: as the float64 reference
    got = run(name, ty, x)
    if rec.cancellation is not None and rec.cancellation.ulp_from == math.inf:
        err = scaled_error(got, ref, rec.cancellation.scale(x64), TYPES[ty])
        assert err.max() <= rec.cancellation.bound, (x[np.argmax(err)], err.max())
    else:
        _check(name, ty, x, got, ref, _bound(op, ty))
    # signed zeros of the odd-at-zero activations survive
    if rec.reference(np.array([-0.0])).item() == 0 and np.signbit(rec.reference(np.array([-0.0]))).item():
        z = run(name, ty, np.array([-0.0], TYPES[ty]))
        assert z[0] == 0 and np.signbit(z[0]), f"{name}[{ty}](-0) = {z[0]!r}"


@pytest.mark.parametrize("ty", ["f32", "f64"])
@pytest.mark.parametrize("name", TRIG)
def test_trig_exact_reduction_only_where_needed(name: str, ty: str) -> None:
    """A flat kernel computes each 4 KiB chunk with the fast reduction and recomputes it with the
    exact one only if some argument needs it: huge arguments alone in one chunk, in the elements
    after the last whole chunk, and in no chunk at all, all within the bounds."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-100, 100, 2600).astype(TYPES[ty])
    chunk = 4096 // x.itemsize
    huge = [chunk + 188, x.size - 10]  # in the second chunk and in the tail
    x[huge] = np.array([1e30, -3.3e37], TYPES[ty])
    got = run(name, ty, x)
    ref = np.array([_sin_cos_tan(v)[TRIG.index(name)] for v in x.astype(np.float64).tolist()])
    _check(name, ty, x, got, ref, record(ew.UNARY_OPS[name]).ulp.at(TYPES[ty]))
