"""Numeric tests of `rlx.activation_backward` (dx = dy * f'(x)) and `rlx.relu_backward`.

For f32 and f64, one function per dtype computes every kind at once (one x
argument per kind, a shared dy), so there are two compilations for the whole
sweep. Each kind's x starts with special values (±0, ±inf, NaN, kinks, ...)
followed by a dense sweep over the kind's domain (uniform + a dense band near
0 + log-uniform magnitudes); dy is random in ±[0.5, 2).

The expected values are float64 closed forms written here (independently of
lowering/scalar/activation_grads.py), themselves cross-checked against central
finite differences of the float64 forward functions of tests/reference.py.
Bounds are in ULPs of the output dtype (f32: vs the f64 reference rounded to
f32); where f' has a zero (silu, gelu, gelu_approx, mish) the bound is in
ULPs of the magnitude of the cancelling terms (`scaled_error`). The measured
maxima (fixed seed) are recorded in MEASURED; bounds leave a small margin.
"""

from __future__ import annotations

import decimal
import math

import ml_dtypes
import numpy as np
import pytest
from reference import compile_text, ref_unary, scaled_error, ulp_error

import rlx_mlir
from rlx_mlir.dialects.elementwise import UNARY_OPS

F32, F64 = np.float32, np.float64
BF16 = np.dtype(ml_dtypes.bfloat16)
IR = {np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(F32): "f32", np.dtype(F64): "f64"}
N_SWEEP = 40_000
KINDS = tuple(UNARY_OPS)

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


def _gelu_approx_scale(x: np.ndarray) -> np.ndarray:
    c, a = math.sqrt(2 / math.pi), 0.044715
    two_z = 2 * c * (x + a * x**3)
    return _sig(two_z) * (1 + np.abs(2 * c * x * (1 + 3 * a * x * x)) * _sig(-two_z))


def _gelu_scale(x: np.ndarray) -> np.ndarray:
    return 0.5 * _erfc(-x / math.sqrt(2)) + np.abs(x) * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _mish_scale(x: np.ndarray) -> np.ndarray:
    sp = np.logaddexp(x, 0)
    return np.tanh(sp) + np.abs(x) * _sig(x) / np.cosh(sp) ** 2


# magnitude of the cancelling terms, for kinds whose derivative has a zero
SCALE = {
    "silu": lambda x: _sig(x) * (1 + np.abs(x) * _sig(-x)),
    "gelu": _gelu_scale,
    "gelu_approx": _gelu_approx_scale,
    "mish": _mish_scale,
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
    "recip": ((-1e18, 1e18), (-1e150, 1e150)),  # |x| >= MIN_MAG: no 1/x^2 overflow boundary
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
# smallest |x| of the log-uniform part (f32, f64), where not the default 1e-30 / 1e-300
MIN_MAG = {"recip": (1e-19, 1e-153)}
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
        tiny = MIN_MAG.get(kind, (1e-30, 1e-300))[dtype is F64]
        mags = np.exp(rng.uniform(math.log(tiny), math.log(mx), n3))
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
    with np.errstate(all="ignore"):
        want = ref_d(kind, x) * dy.astype(np.float64)
    if kind in SCALE:
        with np.errstate(all="ignore"):
            scale = SCALE[kind](x.astype(np.float64)) * np.abs(dy.astype(np.float64))
        return scaled_error(got, want, scale)
    return ulp_error(got, want)


# Measured max error of the sweep (f32 ULPs, f64 ULPs; scaled ULPs for SCALE kinds), fixed seed,
# 40k points per kind and width; the product by dy is included.
MEASURED: dict[str, tuple[float, float]] = {
    "relu": (0, 0), "neg": (0, 0), "abs": (0, 0), "round": (0, 0), "floor": (0, 0), "ceil": (0, 0),
    "sign": (0, 0), "hard_sigmoid": (1, 0), "hard_swish": (2, 0),
    "exp": (1, 2), "log": (1, 0), "sqrt": (2, 0), "rsqrt": (3, 3), "recip": (2, 3),
    "elu": (1, 2), "sin": (2, 2), "cos": (2, 2), "tan": (4, 6), "atan": (2, 3), "softsign": (4, 4),
    "sigmoid": (4, 4), "tanh": (4, 6), "softplus": (3, 3), "log_sigmoid": (3, 3), "erf": (3, 4),
    "silu": (3, 3), "gelu": (3.56, 5), "gelu_approx": (5, 4), "mish": (3.67, 5),  # scaled
}
assert set(MEASURED) == set(KINDS)
# Bounds: the measured maxima + 1 (+2 where the f64 reference itself is ~1-2 ULP off:
# 1/cosh^2, 1/cos^2, erfc-based gelu, tanh(softplus)-based mish).
BOUND: dict[str, tuple[float, float]] = {
    k: (math.floor(f) + 1, math.floor(d) + (2 if k in ("tanh", "tan", "gelu", "mish") else 1))
    for k, (f, d) in MEASURED.items()
}


def test_every_kind_has_a_straight_line_derivative() -> None:
    """All 29 kinds are lowered, and without calls (no libm; only llvm.* intrinsics,
    and the thread pool's entry when a kernel is split across threads)."""
    from rlx_mlir import thread_pool
    from rlx_mlir.dialects.elementwise import UNARY_OPS
    from rlx_mlir.lowering.scalar.activation_grads import DERIVATIVES

    assert set(DERIVATIVES) == set(UNARY_OPS.values())
    run_all(F32)
    exe = compile_text(module_text(F32, N_SPECIAL + N_SWEEP))
    lines = exe.llvm_ir.splitlines()
    declared = {line.split("@")[1].split("(")[0].strip('"') for line in lines if line.startswith("declare")}
    assert declared and all(d.startswith("llvm.") or d == thread_pool.SYMBOL for d in declared), declared
    libm = ("llvm.exp.", "llvm.exp2.", "llvm.log.", "llvm.sin.", "llvm.cos.", "llvm.tan.", "llvm.pow.")
    assert not any(d.startswith(libm) for d in declared), declared


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
    bad = err > BOUND[kind][dtype is F64]
    assert not bad.any(), list(zip(x[bad], got[bad], want[bad]))


def test_relu_backward_is_dy_where_x_positive() -> None:
    """Bit-identical to np.where(x > 0, dy, 0), NaN x included (-> 0), on both widths."""
    for dtype in (F32, F64):
        x, dy, got = run_all(dtype)["relu_backward"]
        want = np.where(x > 0, dy, dtype(0))
        bits = np.int32 if dtype is F32 else np.int64
        assert np.array_equal(got.view(bits), want.view(bits))
        assert got[4] == 0 and np.isnan(x[4])  # NaN x


# ---------------------------------------------------------------------------
# the conventions, spelled out (dy = 1)
# ---------------------------------------------------------------------------
INF, NAN = math.inf, math.nan
CONVENTIONS: list[tuple[str, float, float]] = [
    ("relu", 0.0, 0.0), ("relu", -0.0, 0.0), ("relu", NAN, 0.0), ("relu", 2.0, 1.0),
    ("abs", 0.0, 0.0), ("abs", -0.0, 0.0), ("abs", -2.0, -1.0), ("abs", NAN, NAN),
    ("round", 0.5, 1.0), ("round", 7.3, 1.0), ("floor", 2.0, 0.0), ("ceil", -1.5, 0.0),
    ("sign", 0.0, 0.0), ("sign", NAN, 0.0), ("neg", 3.0, -1.0),
    ("sqrt", 0.0, 0.0), ("sqrt", -0.0, 0.0), ("sqrt", -1.0, NAN), ("sqrt", INF, 0.0), ("sqrt", 4.0, 0.25),
    ("rsqrt", 0.0, 0.0), ("rsqrt", -1.0, NAN), ("rsqrt", 4.0, -1 / 16), ("rsqrt", INF, 0.0),
    ("log", 0.0, INF), ("log", 2.0, 0.5), ("log", INF, 0.0), ("recip", 0.0, -INF), ("recip", 2.0, -0.25),
    ("hard_swish", -3.0, -0.5), ("hard_swish", 3.0, 1.5), ("hard_swish", -1.5, 0.0), ("hard_swish", -4.0, 0.0),
    ("hard_swish", 4.0, 1.0), ("hard_swish", INF, 1.0), ("hard_swish", NAN, NAN),
    ("hard_sigmoid", -3.0, 0.0), ("hard_sigmoid", 3.0, 0.0), ("hard_sigmoid", 0.0, 1 / 6), ("hard_sigmoid", NAN, NAN),
    ("elu", 0.0, 1.0), ("elu", -INF, 0.0), ("elu", INF, 1.0),
    ("exp", INF, INF), ("exp", -INF, 0.0), ("exp", 0.0, 1.0),
    ("tanh", INF, 0.0), ("tanh", -INF, 0.0), ("tanh", 0.0, 1.0), ("sigmoid", 0.0, 0.25), ("sigmoid", -INF, 0.0),
    ("silu", -INF, 0.0), ("silu", INF, 1.0), ("silu", 0.0, 0.5),
    ("gelu", -INF, 0.0), ("gelu", INF, 1.0), ("gelu", 0.0, 0.5),
    ("gelu_approx", -INF, 0.0), ("gelu_approx", INF, 1.0), ("gelu_approx", 0.0, 0.5),
    ("mish", -INF, 0.0), ("mish", INF, 1.0), ("softplus", INF, 1.0), ("softplus", -INF, 0.0),
    ("log_sigmoid", -INF, 1.0), ("log_sigmoid", INF, 0.0), ("erf", INF, 0.0), ("erf", 0.0, 2 / math.sqrt(math.pi)),
    ("atan", INF, 0.0), ("atan", 0.0, 1.0), ("softsign", -INF, 0.0), ("softsign", 0.0, 1.0),
    ("sin", 0.0, 1.0), ("sin", INF, NAN), ("cos", 0.0, -0.0), ("tan", 0.0, 1.0), ("tan", INF, NAN),
    *[(k, NAN, NAN) for k in KINDS if k not in ("relu", "round", "floor", "ceil", "sign", "neg")],
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_conventions_at_kinks_and_specials(dtype) -> None:  # noqa: ANN001
    kinds = tuple(dict.fromkeys(k for k, _, _ in CONVENTIONS))
    per = {k: [(x, want) for kk, x, want in CONVENTIONS if kk == k] for k in kinds}
    n = max(len(v) for v in per.values())
    xs = [np.array([x for x, _ in per[k]] + [1.0] * (n - len(per[k])), dtype) for k in kinds]
    outs = compile_text(module_text(dtype, n, kinds, extra_relu_backward=False))(*xs, np.ones(n, dtype))
    for k, out in zip(kinds, outs):
        for (x, want), got in zip(per[k], out):
            ok = got == want or (math.isnan(want) and math.isnan(got)) or abs(got - want) <= 2e-7 * abs(want)
            assert ok, (k, x, got, want)
        if k == "neg":  # dx = -dy exactly
            assert out[0] == -1


# ---------------------------------------------------------------------------
# the test's references vs finite differences of the forward functions
# ---------------------------------------------------------------------------
SMOOTH = ("gelu", "gelu_approx", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "sin", "cos",
          "tan", "atan", "recip", "softplus", "elu", "erf", "hard_swish", "mish", "softsign", "log_sigmoid")


@pytest.mark.parametrize("kind", SMOOTH)
def test_reference_matches_finite_differences(kind: str) -> None:
    """Central differences (h = 2^-17 max(1,|x|)) of tests/reference.py's float64 forward."""
    if kind in POSITIVE:
        x = np.linspace(0.05, 20, 2001)
    elif kind == "recip":
        x = np.concatenate([np.linspace(-20, -0.05, 1000), np.linspace(0.05, 20, 1000)])
    elif kind == "tan":
        x = np.linspace(-1.4, 1.4, 2001)
    else:
        x = np.linspace(-12, 12, 2001) + 1e-3  # off the kinks (0, ±3)
    if kind in ("hard_swish", "elu"):
        x = x[np.abs(np.abs(x) - 3) > 1e-3]
    h = 2.0**-17 * np.maximum(1.0, np.abs(x))
    fd = (ref_unary(kind, x + h) - ref_unary(kind, x - h)) / (2 * h)
    want = ref_d(kind, x)
    scale = np.abs(want) + np.abs(ref_unary(kind, x)) / np.maximum(1.0, np.abs(x)) * 1e-3 + 1e-12
    rel = np.abs(fd - want) / scale
    assert rel.max() < 1e-6, (kind, x[np.argmax(rel)], rel.max())


# ---------------------------------------------------------------------------
# f16 / bf16: f32 math, one rounding
# ---------------------------------------------------------------------------
HALF_KINDS = ("tanh", "sigmoid", "silu", "gelu", "gelu_approx", "mish", "softplus", "elu", "erf", "sqrt", "recip",
              "tan", "hard_swish", "abs")


@pytest.mark.parametrize("name", ("f16", "bf16"))
def test_half_precision_is_the_f32_result_rounded(name: str) -> None:
    narrow = np.dtype(np.float16) if name == "f16" else BF16
    n = 4001
    base = np.linspace(-8, 8, n)
    xs = [np.abs(base).astype(narrow) + narrow.type(0.01) if k == "sqrt" else base.astype(narrow) for k in HALF_KINDS]
    dy = make_dy(F32, n).astype(narrow)
    got = compile_text(module_text(narrow, n, HALF_KINDS, extra_relu_backward=False))(*xs, dy)
    wide = compile_text(module_text(F32, n, HALF_KINDS, extra_relu_backward=False))(
        *(x.astype(F32) for x in xs), dy.astype(F32))
    for k, g, w in zip(HALF_KINDS, got, wide):
        assert g.dtype == narrow
        with np.errstate(all="ignore"):
            near = w.astype(narrow)
            step = np.abs(np.spacing(near)).astype(F32)
            diff = np.abs(g.astype(F32) - near.astype(F32))
        ok = (diff <= step) | (np.isnan(g.astype(F32)) & np.isnan(near.astype(F32))) | (g.astype(F32) == near.astype(F32))
        assert ok.all(), (k, base[~ok][:4], g[~ok][:4], w[~ok][:4])
        assert (g.astype(F32) == near.astype(F32)).mean() > 0.99, k  # almost always exactly the rounded f32 value


# ---------------------------------------------------------------------------
# fusion
# ---------------------------------------------------------------------------
def test_activation_backward_fuses_with_elementwise_ops() -> None:
    """gelu'/tanh' backward feeding mul/add: one elementwise region, bit-identical to unfused."""
    n = 1000
    t = f"tensor<{n}xf32>"
    text = (
        f"func.func @f(%x: {t}, %dy: {t}, %w: {t}) -> {t} {{\n"
        f'  %g = rlx.activation_backward %x, %dy {{kind = "gelu"}} : ({t}, {t}) -> {t}\n'
        f'  %h = rlx.activation_backward %x, %g {{kind = "tanh"}} : ({t}, {t}) -> {t}\n'
        f"  %m = rlx.mul %h, %w : ({t}, {t}) -> {t}\n"
        f"  %r = rlx.add %m, %x : ({t}, {t}) -> {t}\n"
        f"  func.return %r : {t}\n}}\n"
    )
    rng = np.random.default_rng(3)
    x, dy, w = (rng.uniform(-6, 6, n).astype(F32) for _ in range(3))
    fused = rlx_mlir.compile(text)
    unfused = rlx_mlir.compile(text, pipeline="")
    assert "rlx.elementwise_region" in fused.planned_ir
    assert "rlx.elementwise_region" not in unfused.planned_ir
    (a,), (b,) = fused(x, dy, w), unfused(x, dy, w)
    assert np.array_equal(a.view(np.int32), b.view(np.int32))
