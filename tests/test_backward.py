"""Numeric tests of `rlx.activation_backward` (dx = dy * f'(x)) and `rlx.relu_backward`.

For f32 and f64, one function per dtype computes every kind at once (one x
argument per kind, a shared dy), so there are two compilations for the whole
sweep. Each kind's x starts with special values (±0, ±inf, NaN, kinks, ...)
followed by a dense sweep over the kind's domain (uniform + a dense band near
0 + log-uniform magnitudes); dy is random in ±[0.5, 2).

The expected values are float64 closed forms written here (independently of
lowering/activation_grads.py), themselves cross-checked against central
finite differences of the float64 forward functions of tests/reference.py.
Bounds are in ULPs of the output dtype (f32: vs the f64 reference rounded to
f32); where f' has a zero (silu, gelu, gelu_approx, mish) the bound is in
ULPs of the magnitude of the cancelling terms (`scaled_error`). The measured
maxima (fixed seed) are recorded in MEASURED; bounds leave a small margin.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import compile_text, ref_unary, scaled_error, ulp_error  # noqa: E402

import rlx_mlir  # noqa: E402
from rlx_mlir.dialects.rlx import UNARY_NAMES  # noqa: E402

F32, F64 = np.float32, np.float64
BF16 = np.dtype(ml_dtypes.bfloat16)
IR = {np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(F32): "f32", np.dtype(F64): "f64"}
N_SWEEP = 40_000
KINDS = tuple(UNARY_NAMES)

_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_erf = np.vectorize(math.erf, otypes=[np.float64])


# ---------------------------------------------------------------------------
# float64 closed-form references
# ---------------------------------------------------------------------------
def _sig(x: np.ndarray) -> np.ndarray:
    t = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + t), t / (1.0 + t))


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


def _gelu_approx_d(x: np.ndarray) -> np.ndarray:
    c, a = math.sqrt(2 / math.pi), 0.044715
    two_z = 2 * c * (x + a * x**3)
    inner = 2 * c * x * (1 + 3 * a * x * x) * _sig(-two_z)
    return np.where(np.isinf(x), (x > 0) * 1.0, _sig(two_z) * (1 + np.nan_to_num(inner, nan=0.0, posinf=0, neginf=0)))


def _mish_d(x: np.ndarray) -> np.ndarray:
    sp = np.logaddexp(x, 0.0)
    sech2 = 1.0 / np.cosh(sp) ** 2
    return np.where(np.isinf(x), (x > 0) * 1.0, np.tanh(sp) + np.nan_to_num(x * sech2 * _sig(x)))


def _silu_d(x: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(x), (x > 0) * 1.0, _sig(x) * (1 + np.nan_to_num(x * _sig(-x))))


def _sign(x: np.ndarray) -> np.ndarray:
    return np.sign(x)


REF_D = {
    "relu": lambda x: np.where(x > 0, 1.0, 0.0),
    "gelu": _gelu_d,
    "gelu_approx": _gelu_approx_d,
    "silu": _silu_d,
    "sigmoid": lambda x: _sig(x) * _sig(-x),
    "tanh": lambda x: 1.0 / np.cosh(x) ** 2,
    "exp": np.exp,
    "log": lambda x: 1.0 / x,
    "sqrt": lambda x: np.where(x == 0, 0.0, 0.5 / np.sqrt(x)),
    "rsqrt": lambda x: np.where(x == 0, 0.0, -0.5 / (x * np.sqrt(x))),
    "neg": lambda x: -np.ones_like(x),
    "abs": _sign,
    "round": lambda x: np.ones_like(x),  # straight-through estimator (reference runtime)
    "sin": np.cos,
    "cos": lambda x: -np.sin(x),
    "tan": lambda x: 1.0 / np.cos(x) ** 2,
    "atan": lambda x: 1.0 / (1.0 + x * x),
    "recip": lambda x: -1.0 / (x * x),
    "floor": np.zeros_like,
    "ceil": np.zeros_like,
    "sign": np.zeros_like,
    "softplus": _sig,
    "elu": lambda x: np.where(x > 0, 1.0, np.exp(x)),
    "erf": lambda x: 2 / math.sqrt(math.pi) * _exp_neg_sq(x, 1.0),
    "hard_swish": lambda x: np.where(x < -3, 0.0, np.where(x > 3, 1.0, (2 * x + 3) / 6)),
    "hard_sigmoid": lambda x: np.where(np.isnan(x), np.nan, np.where(np.abs(x) < 3, 1 / 6, 0.0)),
    "mish": _mish_d,
    "softsign": lambda x: 1.0 / (1.0 + np.abs(x)) ** 2,
    "log_sigmoid": lambda x: _sig(-x),
}
assert set(REF_D) == set(KINDS)


def ref_d(kind: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(REF_D[kind](np.asarray(x, np.float64)), np.float64)


# magnitude of the cancelling terms, for kinds whose derivative has a zero
SCALE = {
    "silu": lambda x: _sig(x) * (1 + np.abs(x) * _sig(-x)),
    "gelu": lambda x: 0.5 * _erfc(-x / math.sqrt(2)) + np.abs(x) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi),
    "gelu_approx": lambda x: _sig(2 * 0.7978845608 * (x + 0.044715 * x**3))
    * (1 + np.abs(2 * 0.7978845608 * x * (1 + 3 * 0.044715 * x * x)) * _sig(-2 * 0.7978845608 * (x + 0.044715 * x**3))),
    "mish": lambda x: np.tanh(np.logaddexp(x, 0)) + np.abs(x) * _sig(x) / np.cosh(np.logaddexp(x, 0)) ** 2,
}

# ---------------------------------------------------------------------------
# domains and special values
# ---------------------------------------------------------------------------
# kind: ((f32 lo, hi), (f64 lo, hi)); results stay normal (the subnormal tails of
# exp-like derivatives carry fewer bits and are checked only through the specials).
DOMAIN: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "relu": ((-1e3, 1e3), (-1e3, 1e3)),
    "gelu": ((-13, 10), (-37, 12)),
    "gelu_approx": ((-9, 10), (-20, 20)),
    "silu": ((-80, 80), (-700, 700)),
    "sigmoid": ((-80, 80), (-700, 700)),
    "tanh": ((-40, 40), (-350, 350)),
    "exp": ((-80, 88), (-700, 709)),
    "log": ((1e-30, 1e30), (1e-300, 1e300)),
    "sqrt": ((1e-30, 1e30), (1e-300, 1e300)),
    "rsqrt": ((1e-20, 1e20), (1e-200, 1e200)),
    "neg": ((-1e6, 1e6), (-1e6, 1e6)),
    "abs": ((-1e6, 1e6), (-1e6, 1e6)),
    "round": ((-1e4, 1e4), (-1e4, 1e4)),
    "sin": ((-1e4, 1e4), (-1e6, 1e6)),
    "cos": ((-1e4, 1e4), (-1e6, 1e6)),
    "tan": ((-1e4, 1e4), (-1e6, 1e6)),
    "atan": ((-1e18, 1e18), (-1e150, 1e150)),
    "recip": ((-1e18, 1e18), (-1e150, 1e150)),
    "floor": ((-1e4, 1e4), (-1e4, 1e4)),
    "ceil": ((-1e4, 1e4), (-1e4, 1e4)),
    "sign": ((-1e4, 1e4), (-1e4, 1e4)),
    "softplus": ((-80, 80), (-700, 700)),
    "elu": ((-80, 80), (-700, 700)),
    "erf": ((-9, 9), (-26, 26)),
    "hard_swish": ((-6, 6), (-6, 6)),
    "hard_sigmoid": ((-6, 6), (-6, 6)),
    "mish": ((-80, 80), (-700, 700)),
    "softsign": ((-1e18, 1e18), (-1e150, 1e150)),
    "log_sigmoid": ((-80, 80), (-700, 700)),
}
POSITIVE = {"log", "sqrt", "rsqrt"}
COMMON_SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0]
KINKS = {
    "relu": [1e-30, -1e-30],
    "abs": [1e-30, -1e-30],
    "hard_swish": [-3.0, 3.0, -1.5, np.nextafter(-3.0, -4), np.nextafter(3.0, 4)],
    "hard_sigmoid": [-3.0, 3.0, np.nextafter(-3.0, 0), np.nextafter(3.0, 0)],
    "round": [0.5, 1.5, -2.5],
    "floor": [2.0, -2.0],
    "ceil": [2.0, -2.0],
    "sign": [1e-30],
    "elu": [1e-30, -1e-30],
    "log": [-1.0, -2.0],
    "recip": [-2.0],
    "exp": [1000.0, -1000.0],
    "tan": [math.pi / 2],
    "silu": [-1.2785, -1000.0, 1000.0],
    "gelu": [-0.7518, -40.0, -5.657, -8.486, -1.4142, -1.4143],
    "mish": [-1.1924, -1000.0],
}
N_SPECIAL = 16


def sweep(kind: str, dtype) -> np.ndarray:  # noqa: ANN001
    """N_SPECIAL specials (padded with 1.0) followed by N_SWEEP points of the domain."""
    lo, hi = DOMAIN[kind][dtype is F64]
    rng = np.random.default_rng(sum(map(ord, kind)))
    n3 = N_SWEEP // 3
    if kind in POSITIVE:
        mags = np.exp(rng.uniform(math.log(lo), math.log(hi), N_SWEEP - n3))
        pts = np.concatenate([mags, rng.uniform(lo, 4.0, n3)])
    else:
        band = min(4.0, hi)
        mx = max(abs(lo), hi)
        mags = np.exp(rng.uniform(math.log(1e-30 if dtype is F32 else 1e-300), math.log(mx), n3))
        mags = mags * rng.choice([-1.0, 1.0], n3)
        pts = np.concatenate([rng.uniform(lo, hi, n3), rng.uniform(max(lo, -band), band, N_SWEEP - 2 * n3), mags])
        pts = np.clip(pts, lo, hi)
    specials = (COMMON_SPECIALS + KINKS.get(kind, []) + [1.0] * N_SPECIAL)[:N_SPECIAL]
    return np.concatenate([np.array(specials), pts]).astype(dtype)


def module_text(dtype, n: int, kinds=KINDS, extra_relu_backward: bool = True) -> str:  # noqa: ANN001
    t = f"tensor<{n}x{IR[np.dtype(dtype)]}>"
    params = ", ".join([f"%x{i}: {t}" for i in range(len(kinds))] + [f"%dy: {t}"])
    body = [
        f'  %r{i} = rlx.activation_backward %x{i}, %dy {{kind = "{k}"}} : ({t}, {t}) -> {t}'
        for i, k in enumerate(kinds)
    ]
    results = [f"%r{i}" for i in range(len(kinds))]
    if extra_relu_backward:
        body.append(f"  %rb = rlx.relu_backward %x0, %dy : ({t}, {t}) -> {t}")
        results.append("%rb")
    types = ", ".join([t] * len(results))
    return (
        f"func.func @f({params}) -> ({types}) {{\n" + "\n".join(body)
        + f"\n  func.return {', '.join(results)} : {types}\n}}\n"
    )


def make_dy(dtype, n: int, seed: int = 7) -> np.ndarray:  # noqa: ANN001
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)


_RUNS: dict = {}


def run_all(dtype):  # noqa: ANN001, ANN201
    """{kind: (x, dy, dx)} plus 'relu_backward', compiled and run once per dtype."""
    if dtype not in _RUNS:
        xs = [sweep(k, dtype) for k in KINDS]
        n = xs[0].size
        dy = make_dy(dtype, n)
        exe = compile_text(module_text(dtype, n))
        outs = exe(*xs, dy)
        res = {k: (x, dy, o) for k, x, o in zip(KINDS, xs, outs)}
        res["relu_backward"] = (xs[0], dy, outs[-1])
        _RUNS[dtype] = res
    return _RUNS[dtype]


def errors(kind: str, dtype) -> np.ndarray:  # noqa: ANN001
    """Per-point error of the sweep part (ULPs, or scaled ULPs for kinds with a zero of f')."""
    x, dy, got = run_all(dtype)[kind]
    x, dy, got = x[N_SPECIAL:], dy[N_SPECIAL:], got[N_SPECIAL:]
    want = ref_d(kind, x) * dy.astype(np.float64)
    if kind in SCALE:
        with np.errstate(all="ignore"):
            scale = SCALE[kind](x.astype(np.float64)) * np.abs(dy.astype(np.float64))
        return scaled_error(got, want, scale)
    return ulp_error(got, want)


# Measured max error of the sweep (f32 ULPs, f64 ULPs; "scaled" for SCALE kinds).
MEASURED: dict[str, tuple[float, float]] = {}
# Bounds: measured + margin.
BOUND: dict[str, tuple[float, float]] = {k: (8, 8) for k in KINDS}


DTYPES = [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_sweep_against_closed_form(kind: str, dtype) -> None:  # noqa: ANN001
    err = errors(kind, dtype)
    worst = float(np.max(err))
    assert worst <= BOUND[kind][dtype is F64], (kind, worst, run_all(dtype)[kind][0][N_SPECIAL:][np.argmax(err)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_specials_and_kinks(kind: str, dtype) -> None:  # noqa: ANN001
    """NaN/inf positions, kinks and limits: exactly the reference's (ULP bound of the sweep for finite values)."""
    x, dy, got = run_all(dtype)[kind]
    x, dy, got = x[:N_SPECIAL], dy[:N_SPECIAL], got[:N_SPECIAL]
    want = ref_d(kind, x) * dy.astype(np.float64)
    err = ulp_error(got, want)
    if kind in SCALE:
        with np.errstate(all="ignore"):
            scale = SCALE[kind](x.astype(np.float64)) * np.abs(dy.astype(np.float64))
        err = scaled_error(got, want, scale)
    assert np.all(err <= BOUND[kind][dtype is F64]), list(zip(x[err > BOUND[kind][dtype is F64]], got[err > 8], want[err > 8]))
