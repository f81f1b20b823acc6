"""Numeric tests of `rlx.activation_backward` (dx = dy * f'(x)) and `rlx.relu_backward`.

For f32 and f64, one function per dtype computes every kind at once (one x
argument per kind, a shared dy), so there are two compilations for the whole
sweep. Each kind's x is the derivative sweep of tests/measure.py: special
values (±0, ±inf, NaN, the record's kinks) followed by a dense sweep over the
domain of the op's record; dy is random in ±[0.5, 2).

The expected values are the float64 closed forms of tests/op_records.py
(written independently of lowering/scalar/activation_grads.py), themselves
cross-checked here against central finite differences of the records'
float64 forward functions. Bounds are the records' (ULPs of the output dtype,
or of the cancelling terms where f' has a zero); `python tests/measure.py
rlx.<op>` prints the measured maxima.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from measure import BF16, N_SPECIAL, N_SWEEP, backward_text, derivative_errors, make_dy, run_backward
from op_records import RECORDS, derivative, record, reference, short_name, unary_ops
from reference import compile_text

import rlx_mlir
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects.elementwise import UNARY_OPS

F32, F64 = np.float32, np.float64
OPS = tuple(unary_ops())
KINDS = tuple(UNARY_OPS)
_RUNS: dict[type, dict[object, tuple[np.ndarray, ...]]] = {}


def run_all(dtype: type) -> dict[object, tuple[np.ndarray, ...]]:
    """{op: (x, dy, dx)} plus 'relu_backward', compiled and run once per dtype."""
    if dtype not in _RUNS:
        _RUNS[dtype] = run_backward(OPS, dtype)
    return _RUNS[dtype]


def test_every_kind_has_a_straight_line_derivative() -> None:
    """Every unary op is lowered, and without calls (no libm; only llvm.* intrinsics,
    and the thread pool's entry when a kernel is split across threads)."""
    from rlx_mlir import thread_pool
    from rlx_mlir.lowering.scalar.activation_grads import DERIVATIVES

    assert set(DERIVATIVES) == set(UNARY_OPS.values())
    run_all(F32)
    exe = compile_text(backward_text(F32, N_SPECIAL + N_SWEEP, KINDS, extra_relu_backward=True))
    lines = exe.llvm_ir.splitlines()
    declared = {line.split("@")[1].split("(")[0].strip('"') for line in lines if line.startswith("declare")}
    assert declared and all(d.startswith("llvm.") or d == thread_pool.SYMBOL for d in declared), declared
    libm = ("llvm.exp.", "llvm.exp2.", "llvm.log.", "llvm.sin.", "llvm.cos.", "llvm.tan.", "llvm.pow.")
    assert not any(d.startswith(libm) for d in declared), declared


DTYPES = [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")]
OP_PARAMS = [pytest.param(op, id=short_name(op)) for op in OPS]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OP_PARAMS)
def test_sweep_against_closed_form(op: type[ew.UnaryOp], dtype: type) -> None:
    x, dy, got = (a[N_SPECIAL:] for a in run_all(dtype)[op])
    err = derivative_errors(op, x, dy, got)
    worst, bound = float(np.max(err)), record(op).derivative.ulp.at(dtype)
    assert worst <= bound, (op.name, worst, bound, x[np.argmax(err)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OP_PARAMS)
def test_specials_and_kinks(op: type[ew.UnaryOp], dtype: type) -> None:
    """NaN/inf positions, kinks and limits: exactly the reference's (ULP bound of the sweep for finite values)."""
    x, dy, got = (a[:N_SPECIAL] for a in run_all(dtype)[op])
    with np.errstate(all="ignore"):
        want = derivative(op, x) * dy.astype(np.float64)
    bad = derivative_errors(op, x, dy, got) > record(op).derivative.ulp.at(dtype)
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
    ("relu", 0.0, 0.0),
    ("relu", -0.0, 0.0),
    ("relu", NAN, 0.0),
    ("relu", 2.0, 1.0),
    ("abs", 0.0, 0.0),
    ("abs", -0.0, 0.0),
    ("abs", -2.0, -1.0),
    ("abs", NAN, NAN),
    ("round", 0.5, 1.0),
    ("round", 7.3, 1.0),
    ("floor", 2.0, 0.0),
    ("ceil", -1.5, 0.0),
    ("sign", 0.0, 0.0),
    ("sign", NAN, 0.0),
    ("neg", 3.0, -1.0),
    ("sqrt", 0.0, 0.0),
    ("sqrt", -0.0, 0.0),
    ("sqrt", -1.0, NAN),
    ("sqrt", INF, 0.0),
    ("sqrt", 4.0, 0.25),
    ("rsqrt", 0.0, 0.0),
    ("rsqrt", -1.0, NAN),
    ("rsqrt", 4.0, -1 / 16),
    ("rsqrt", INF, 0.0),
    ("log", 0.0, INF),
    ("log", 2.0, 0.5),
    ("log", INF, 0.0),
    ("recip", 0.0, -INF),
    ("recip", 2.0, -0.25),
    ("hard_swish", -3.0, -0.5),
    ("hard_swish", 3.0, 1.5),
    ("hard_swish", -1.5, 0.0),
    ("hard_swish", -4.0, 0.0),
    ("hard_swish", 4.0, 1.0),
    ("hard_swish", INF, 1.0),
    ("hard_swish", NAN, NAN),
    ("hard_sigmoid", -3.0, 0.0),
    ("hard_sigmoid", 3.0, 0.0),
    ("hard_sigmoid", 0.0, 1 / 6),
    ("hard_sigmoid", NAN, NAN),
    ("elu", 0.0, 1.0),
    ("elu", -INF, 0.0),
    ("elu", INF, 1.0),
    ("exp", INF, INF),
    ("exp", -INF, 0.0),
    ("exp", 0.0, 1.0),
    ("tanh", INF, 0.0),
    ("tanh", -INF, 0.0),
    ("tanh", 0.0, 1.0),
    ("sigmoid", 0.0, 0.25),
    ("sigmoid", -INF, 0.0),
    ("silu", -INF, 0.0),
    ("silu", INF, 1.0),
    ("silu", 0.0, 0.5),
    ("gelu", -INF, 0.0),
    ("gelu", INF, 1.0),
    ("gelu", 0.0, 0.5),
    ("gelu_approx", -INF, 0.0),
    ("gelu_approx", INF, 1.0),
    ("gelu_approx", 0.0, 0.5),
    ("mish", -INF, 0.0),
    ("mish", INF, 1.0),
    ("softplus", INF, 1.0),
    ("softplus", -INF, 0.0),
    ("log_sigmoid", -INF, 1.0),
    ("log_sigmoid", INF, 0.0),
    ("erf", INF, 0.0),
    ("erf", 0.0, 2 / math.sqrt(math.pi)),
    ("atan", INF, 0.0),
    ("atan", 0.0, 1.0),
    ("softsign", -INF, 0.0),
    ("softsign", 0.0, 1.0),
    ("sin", 0.0, 1.0),
    ("sin", INF, NAN),
    ("cos", 0.0, -0.0),
    ("tan", 0.0, 1.0),
    ("tan", INF, NAN),
    *[(k, NAN, NAN) for k in KINDS if k not in ("relu", "round", "floor", "ceil", "sign", "neg")],
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_conventions_at_kinks_and_specials(dtype: type) -> None:
    kinds = tuple(dict.fromkeys(k for k, _, _ in CONVENTIONS))
    per = {k: [(x, want) for kk, x, want in CONVENTIONS if kk == k] for k in kinds}
    n = max(len(v) for v in per.values())
    xs = [np.array([x for x, _ in per[k]] + [1.0] * (n - len(per[k])), dtype) for k in kinds]
    outs = compile_text(backward_text(dtype, n, kinds, extra_relu_backward=False))(*xs, np.ones(n, dtype))
    for k, out in zip(kinds, outs):
        for (x, want), got in zip(per[k], out):
            ok = got == want or (math.isnan(want) and math.isnan(got)) or abs(got - want) <= 2e-7 * abs(want)
            assert ok, (k, x, got, want)
        if k == "neg":  # dx = -dy exactly
            assert out[0] == -1


# ---------------------------------------------------------------------------
# the test's references vs finite differences of the forward functions
# ---------------------------------------------------------------------------
FD_OPS = [
    pytest.param(op, id=short_name(op))
    for op in OPS
    if op not in RECORDS or not RECORDS[op].derivative.straight_through
]  # no record: the test names it


@pytest.mark.parametrize("op", FD_OPS)
def test_reference_matches_finite_differences(op: type[ew.UnaryOp]) -> None:
    """Central differences (h = 2^-17 max(1,|x|)) of the record's float64 forward over its `fd_range`,
    off its kinks, match its float64 derivative."""
    d = record(op).derivative
    lo, hi = d.fd_range
    x = np.linspace(lo, hi, 2001) + (1e-3 if lo < 0 else 0.0)  # off the kinks at 0 and ±3 too
    for kink in (*d.kinks, 0.0, 3.0, -3.0):
        x = x[np.abs(x - kink) > 1e-3]
    h = 2.0**-17 * np.maximum(1.0, np.abs(x))
    fd = (reference(op, x + h) - reference(op, x - h)) / (2 * h)
    want = derivative(op, x)
    scale = np.abs(want) + np.abs(reference(op, x)) / np.maximum(1.0, np.abs(x)) * 1e-3 + 1e-12
    rel = np.abs(fd - want) / scale
    assert rel.max() < 1e-6, (op.name, x[np.argmax(rel)], rel.max())


# ---------------------------------------------------------------------------
# f16 / bf16: f32 math, one rounding
# ---------------------------------------------------------------------------
HALF_KINDS = (
    "tanh",
    "sigmoid",
    "silu",
    "gelu",
    "gelu_approx",
    "mish",
    "softplus",
    "elu",
    "erf",
    "sqrt",
    "recip",
    "tan",
    "hard_swish",
    "abs",
)


@pytest.mark.parametrize("name", ("f16", "bf16"))
def test_half_precision_is_the_f32_result_rounded(name: str) -> None:
    narrow = np.dtype(np.float16) if name == "f16" else BF16
    n = 4001
    base = np.linspace(-8, 8, n)
    xs = [np.abs(base).astype(narrow) + narrow.type(0.01) if k == "sqrt" else base.astype(narrow) for k in HALF_KINDS]
    dy = make_dy(F32, n).astype(narrow)
    got = compile_text(backward_text(narrow, n, HALF_KINDS, extra_relu_backward=False))(*xs, dy)
    wide = compile_text(backward_text(F32, n, HALF_KINDS, extra_relu_backward=False))(
        *(x.astype(F32) for x in xs), dy.astype(F32)
    )
    for k, g, w in zip(HALF_KINDS, got, wide):
        assert g.dtype == narrow
        with np.errstate(all="ignore"):
            near = w.astype(narrow)
            step = np.abs(np.spacing(near)).astype(F32)
            diff = np.abs(g.astype(F32) - near.astype(F32))
        ok = (
            (diff <= step)
            | (np.isnan(g.astype(F32)) & np.isnan(near.astype(F32)))
            | (g.astype(F32) == near.astype(F32))
        )
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
