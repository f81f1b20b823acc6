"""Numeric tests of the binary rlx ops (NumPy broadcasting) against tests/reference.py.

Float ops (f32, f64): add/sub/mul/div/max/min/mod are correctly rounded, so they
must equal the float64 reference rounded to the dtype (0 ULP, NaN/inf positions
included); pow/atan2 are held to the ULP bounds of tests/accuracy.py (the table
lowering/scalar/math_approx.py documents). Integer ops (i32, i64) follow the rules documented in
lowering/scalar/scalar_ops.py (wrapping arithmetic, truncating division with x/0 = 0 and
INT_MIN/-1 = INT_MIN, truncated remainder with x mod 0 = 0, shifts by a negative
amount or >= width give 0 / the sign fill, exact wrapping pow whose negative exponents
truncate toward zero); bitwise ops also run on i1.

All ops of one family share one compiled function per (dtype, shapes).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from accuracy import accuracy
from reference import (
    REF_BINARY_FLOAT,
    bits_equal,
    ref_binary_float,
    ref_binary_int,
    run_op,
    run_ops,
    specials,
    ulp_error,
)

import rlx_mlir as rlx

F32, F64, I32, I64, BOOL = np.float32, np.float64, np.int32, np.int64, np.bool_
FLOAT_DTYPES = [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")]
INT_DTYPES = [pytest.param(I32, id="i32"), pytest.param(I64, id="i64")]

FLOAT_OPS = sorted(REF_BINARY_FLOAT)  # add sub mul div max min pow mod atan2
INT_OPS = ["add", "sub", "mul", "div", "mod", "max", "min", "pow", "bit_and", "bit_or", "bit_xor", "shl", "shr"]
BOOL_OPS = ["bit_and", "bit_or", "bit_xor"]

# max ULP, (f32, f64): 0 for the correctly rounded ops, tests/accuracy.py's bound for pow/atan2
FLOAT_BOUND = {op: (0, 0) for op in FLOAT_OPS} | {
    op: (accuracy(op, F32).max_ulp, accuracy(op, F64).max_ulp) for op in ("pow", "atan2")
}

SHAPES = [
    pytest.param(((4, 3), (3,)), id="4x3,3"),
    pytest.param(((2, 1, 5), (4, 1)), id="2x1x5,4x1"),
    pytest.param(((1,), (6,)), id="1,6"),
    pytest.param(((5,), (1,)), id="5,1"),
    pytest.param(((), ()), id="rank0,rank0"),
    pytest.param(((), (4, 3)), id="rank0,4x3"),
    pytest.param(((3, 1), ()), id="3x1,rank0"),
]


def float_pool(dtype: type) -> np.ndarray:
    extra = [1.0, -1.0, 2.0, -3.0, 0.25, 7.5, -100.25, 3.0e-3, np.pi, -np.e, 10.0, 0.1, 1e10, -1e-10]
    return np.concatenate([specials(dtype), np.array(extra, dtype=dtype)])


def int_pool(dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    w = info.bits
    vals = [
        0,
        1,
        -1,
        2,
        -2,
        3,
        -3,
        7,
        -7,
        100,
        -100,
        12345,
        -98765,
        w - 1,
        w,
        w + 1,
        -w,
        2 * w,
        -(w - 1),
        info.max,
        info.min,
        info.max - 1,
        info.min + 1,
        info.max // 2,
        info.min // 2,
        1 << (w - 2),
    ]
    return np.array(vals, dtype=dtype)


def pairs(pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(pool, pool, indexing="ij")
    return a.ravel(), b.ravel()


def check_float(op: str, dtype: type, a: np.ndarray, b: np.ndarray, got: np.ndarray) -> None:
    ref = ref_binary_float(op, a, b)
    assert got.shape == ref.shape and got.dtype == dtype
    err = ulp_error(got, ref, dtype).ravel()
    bound = FLOAT_BOUND[op][0 if dtype == F32 else 1]
    if err.max() > bound:
        i = int(np.argmax(err))
        ab = np.broadcast_arrays(a, b)
        raise AssertionError(
            f"{op}[{np.dtype(dtype).name}] {err[i]} ULP > {bound} at a={ab[0].ravel()[i]!r} b={ab[1].ravel()[i]!r}: "
            f"got {got.ravel()[i]!r}, want {ref.astype(dtype).ravel()[i]!r}"
        )


# ---------------------------------------------------------------------------
# floats
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_all_special_pairs(op: str, dtype: type) -> None:
    """Every pair of special/interesting values (±0, ±inf, NaN, subnormals, ±max, ...)."""
    a, b = pairs(float_pool(dtype))
    got = run_ops(FLOAT_OPS, a, b)[op]
    check_float(op, dtype, a, b, got)


def _random_operands(op: str, dtype: type, n: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([len(op), np.dtype(dtype).itemsize])
    if op == "pow":
        # positive bases with |y log x| in range, and negative bases with integer / non-integer exponents
        x = np.concatenate([rng.uniform(0, 4, n), 10.0 ** rng.uniform(-30, 30, n), -rng.uniform(0, 10, n)])
        y = np.concatenate(
            [
                rng.uniform(-40, 40, n),
                rng.uniform(-1, 1, n) * (80.0 if dtype == F32 else 700.0) / 69.1,
                np.where(rng.random(n) < 0.5, np.round(rng.uniform(-30, 30, n)), rng.uniform(-30, 30, n)),
            ]
        )
        return x.astype(dtype), y.astype(dtype)
    mag = 30.0 if dtype == F32 else 300.0
    a = 10.0 ** rng.uniform(-mag, mag, 2 * n) * np.where(rng.random(2 * n) < 0.5, -1, 1)
    b = 10.0 ** rng.uniform(-mag, mag, 2 * n) * np.where(rng.random(2 * n) < 0.5, -1, 1)
    a[:n] = rng.uniform(-10, 10, n)  # all four atan2 quadrants, comparable magnitudes
    b[:n] = rng.uniform(-10, 10, n)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_random(op: str, dtype: type) -> None:
    a, b = _random_operands(op, dtype)
    got = run_op(op, a, b)
    check_float(op, dtype, a, b, got)


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_broadcast(op: str, dtype: type, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    rng = np.random.default_rng(7)
    pool = float_pool(dtype)
    a = rng.choice(pool, size=shapes[0]).astype(dtype)
    b = rng.choice(pool, size=shapes[1]).astype(dtype)
    got = run_ops(FLOAT_OPS, a, b)[op]
    assert got.shape == np.broadcast_shapes(shapes[0], shapes[1])
    check_float(op, dtype, a, b, got)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_min_propagate_nan(dtype: type) -> None:
    nan, inf = np.nan, np.inf
    a = np.array([nan, 1.0, nan, -inf, inf, nan, 0.0], dtype=dtype)
    b = np.array([1.0, nan, nan, nan, -inf, inf, nan], dtype=dtype)
    out = run_ops(["max", "min"], a, b)
    np.testing.assert_array_equal(out["max"], np.array([nan, nan, nan, nan, inf, nan, nan], dtype=dtype))
    np.testing.assert_array_equal(out["min"], np.array([nan, nan, nan, nan, -inf, nan, nan], dtype=dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pow_special_cases(dtype: type) -> None:
    """C99 pow: integer exponents of negative bases, signed zeros, pow(x, 0) = 1, pow(1, y) = 1."""
    inf, nan = np.inf, np.nan
    cases = [
        (-2.0, 3.0, -8.0),
        (-2.0, 2.0, 4.0),
        (-2.0, -3.0, -0.125),
        (-2.0, -2.0, 0.25),
        (-8.0, 1 / 3, nan),
        (-0.5, 3.0, -0.125),
        (-1.0, inf, 1.0),
        (-1.0, -inf, 1.0),
        (1.0, nan, 1.0),
        (nan, 0.0, 1.0),
        (nan, -0.0, 1.0),
        (0.0, -1.0, inf),
        (-0.0, -1.0, -inf),
        (-0.0, -2.0, inf),
        (-0.0, 3.0, -0.0),
        (0.0, 3.0, 0.0),
        (-0.0, 2.0, 0.0),
        (0.5, inf, 0.0),
        (0.5, -inf, inf),
        (2.0, inf, inf),
        (2.0, -inf, 0.0),
        (-inf, 3.0, -inf),
        (-inf, 2.0, inf),
        (-inf, -3.0, -0.0),
        (-inf, -2.0, 0.0),
        (inf, -1.0, 0.0),
        (-3.0, 0.5, nan),
        (-10.0, 7.0, -1e7),
        (3.0, 4.0, 81.0),
    ]
    a, b, want = (np.array(c, dtype=dtype) for c in zip(*cases))
    got = run_op("pow", a, b)
    np.testing.assert_array_equal(got, want)
    assert bits_equal(got, want), f"signed zeros: {got} vs {want}"
    with np.errstate(all="ignore"):
        assert bits_equal(want, np.power(a, b))  # the table is NumPy's


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_atan2_quadrants_and_zeros(dtype: type) -> None:
    """atan2(y, x): all quadrants, axes, signed zeros (±0, ±pi) and infinities."""
    pi = np.pi
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.0, -0.5]
    y, x = pairs(np.array(vals, dtype=dtype))
    got = run_op("atan2", y, x)
    want = np.arctan2(y, x)
    err = ulp_error(got, want.astype(np.float64), dtype)
    assert err.max() <= FLOAT_BOUND["atan2"][0 if dtype == F32 else 1], (y, x, got, want)
    # results ±0 / ±pi (y = ±0, or x = ±inf) are exact, signed zeros included. (atan2(y, -0) and
    # atan2(±inf, x < 0) = ±pi/2 come out 1 ULP from the rounded pi/2, within the documented bound.)
    exact = (y == 0) | np.isinf(x)
    assert bits_equal(got[exact], want[exact]), list(zip(y[exact], x[exact], got[exact], want[exact]))
    assert got[(y == 0) & (x == 0) & np.signbit(x) & ~np.signbit(y)][0] == dtype(pi)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_mod_sign_of_dividend(dtype: type) -> None:
    a = np.array([5.5, -5.5, 5.5, -5.5, 1.0, -0.0, 3.0, np.inf, 2.0], dtype=dtype)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 1.0, np.inf, 1.0, 1e-30], dtype=dtype)
    got = run_op("mod", a, b)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    assert bits_equal(got, want), (got, want)


# ---------------------------------------------------------------------------
# integers
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", INT_OPS)
def test_int_all_pairs(op: str, dtype: type) -> None:
    """All pairs of 0, ±1, INT_MIN/INT_MAX, width-ish shift amounts, ...: wraparound, /0, INT_MIN/-1."""
    a, b = pairs(int_pool(dtype))
    got = run_ops(INT_OPS, a, b)[op]
    want = ref_binary_int(op, a, b)
    assert got.dtype == dtype
    bad = got != want
    assert not bad.any(), f"{op}: a={a[bad][:8]} b={b[bad][:8]} got={got[bad][:8]} want={want[bad][:8]}"


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", INT_OPS)
def test_int_random(op: str, dtype: type) -> None:
    rng = np.random.default_rng([len(op), np.dtype(dtype).itemsize])
    info = np.iinfo(dtype)
    n = 4000
    a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if op in ("shl", "shr"):
        b = rng.integers(-2 * info.bits, 2 * info.bits, n, dtype=dtype)
    else:
        b = np.where(
            rng.random(n) < 0.5,
            rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),
            rng.integers(-50, 50, n, dtype=dtype),
        )
    got = run_op(op, a, b)
    want = ref_binary_int(op, a, b)
    bad = got != want
    assert not bad.any(), f"{op}: a={a[bad][:8]} b={b[bad][:8]} got={got[bad][:8]} want={want[bad][:8]}"


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", INT_OPS)
def test_int_broadcast(op: str, dtype: type, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    rng = np.random.default_rng(11)
    pool = int_pool(dtype)
    a = rng.choice(pool, size=shapes[0]).astype(dtype)
    b = rng.choice(pool, size=shapes[1]).astype(dtype)
    got = run_ops(INT_OPS, a, b)[op]
    want = ref_binary_int(op, a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_documented_edge_cases(dtype: type) -> None:
    """The rules of lowering/scalar/scalar_ops.py, spelled out."""
    info = np.iinfo(dtype)
    w = info.bits
    lo, hi = int(info.min), int(info.max)
    a = np.array([7, -7, 7, -7, 5, lo, lo, hi, lo, 0, -5], dtype=dtype)
    b = np.array([2, 2, -2, -2, 0, -1, 0, 1, 1, 0, 0], dtype=dtype)
    out = run_ops(["div", "mod", "add", "sub", "mul"], a, b)
    np.testing.assert_array_equal(out["div"], np.array([3, -3, -3, 3, 0, lo, 0, hi, lo, 0, 0], dtype=dtype))
    np.testing.assert_array_equal(out["mod"], np.array([1, -1, 1, -1, 0, 0, 0, 0, 0, 0, 0], dtype=dtype))
    assert out["add"][7] == lo and out["sub"][8] == hi  # INT_MAX + 1 and INT_MIN - 1 wrap
    assert out["mul"][5] == lo  # INT_MIN * -1 wraps
    s = np.array([0, 1, w - 1, w, w + 1, -1, -w, 2 * w, lo], dtype=dtype)
    x1 = np.full(s.shape, 1, dtype=dtype)
    xm = np.full(s.shape, -8, dtype=dtype)
    shl = run_op("shl", x1, s)
    np.testing.assert_array_equal(shl, np.array([1, 2, lo, 0, 0, 0, 0, 0, 0], dtype=dtype))
    shr = run_op("shr", xm, s)
    np.testing.assert_array_equal(shr, np.array([-8, -4, -1, -1, -1, -1, -1, -1, -1], dtype=dtype))
    shr_pos = run_op("shr", np.full(s.shape, hi, dtype=dtype), s)
    np.testing.assert_array_equal(shr_pos, np.array([hi, hi >> 1, 0, 0, 0, 0, 0, 0, 0], dtype=dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_pow_matches_numpy_and_truncates_negative_exponents(dtype: type) -> None:
    """Non-negative exponents: np.power exactly (wraparound included); negative ones
    (np.power refuses them): the real power truncated toward zero, 0 ** -n = 0."""
    base = np.array([3, -3, 2, 7, -1, 0, 1, 5, -2], dtype=dtype)
    exponent = np.array([4, 3, 70, 0, 0, 0, 1000, 31, 63], dtype=dtype)
    np.testing.assert_array_equal(run_op("pow", base, exponent), np.power(base, exponent))
    base = np.array([1, -1, -1, 2, -2, 0, 5], dtype=dtype)
    exponent = np.array([-5, -3, -4, -1, -2, -1, np.iinfo(dtype).min], dtype=dtype)
    np.testing.assert_array_equal(run_op("pow", base, exponent), np.array([1, -1, 1, 0, 0, 0, 0], dtype=dtype))


@pytest.mark.parametrize("shapes", [pytest.param(((4,), (4,)), id="4,4"), *SHAPES])
@pytest.mark.parametrize("op", BOOL_OPS)
def test_bool_bitwise(op: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    if shapes == ((4,), (4,)):
        a = np.array([False, False, True, True])
        b = np.array([False, True, False, True])
    else:
        rng = np.random.default_rng(3)
        a = rng.random(shapes[0]) < 0.5
        b = rng.random(shapes[1]) < 0.5
        a, b = np.asarray(a, dtype=BOOL), np.asarray(b, dtype=BOOL)
    got = run_ops(BOOL_OPS, a, b)[op]
    assert got.dtype == BOOL
    np.testing.assert_array_equal(got, ref_binary_int(op, a, b))


def test_int_pool_covers_every_pair_kind() -> None:
    """Sanity of the test data itself: division by zero and INT_MIN/-1 are among the pairs."""
    for dtype in (I32, I64):
        a, b = pairs(int_pool(dtype))
        assert (b == 0).any() and ((a == np.iinfo(dtype).min) & (b == -1)).any()
        assert (b < 0).any() and (b >= np.iinfo(dtype).bits).any()


STREAMED = [  # (element type, NumPy dtype): 4-, 8-, 2- and 1-byte outputs, the last two narrow or bool
    ("f32", np.float32),
    ("f64", np.float64),
    ("f16", np.float16),
    ("i8", np.int8),
]


@pytest.mark.parametrize(("t", "dtype"), STREAMED, ids=[t for t, _ in STREAMED])
def test_streamed_output_at_every_alignment(t: str, dtype: type) -> None:
    """An output larger than the last-level cache (forced here by a 1 KiB one) is computed 4 KiB at a
    time on the stack and stored by whole lines, non-temporally, from its first cache line on; the
    elements before it and after the last whole chunk are stored directly. At every byte offset of
    the output (also where it is not element-aligned, which stores everything directly) and with
    a scalar broadcast, the results are the bytes of the ordinary kernel."""
    n = 3 * 4096 + 29
    ty = f"tensor<{n}x{t}>"
    text = (
        f"func.func @f(%a: {ty}, %b: {ty}, %s: tensor<{t}>) -> {ty} {{\n"
        f"  %m = rlx.mul %a, %b : ({ty}, {ty}) -> {ty}\n"
        f"  %r = rlx.sub %m, %s : ({ty}, tensor<{t}>) -> {ty}\n  func.return %r : {ty}\n}}\n"
    )
    rng = np.random.default_rng(5)
    a, b = (rng.integers(-9, 9, n).astype(dtype) for _ in range(2))
    s = np.array(3, dtype)
    (want,) = rlx.compile(text)(a, b, s)
    streamed = rlx.compile(text, tuning={"nontemporal_min_bytes": 1024})
    assert "!nontemporal" in streamed.llvm_ir
    assert want.tobytes() == (a * b - s).astype(dtype).tobytes()
    for offset in range(0, 64, 3):
        out = np.full(want.nbytes + 64, 0x5A, np.uint8)[offset : offset + want.nbytes].view(dtype)
        streamed(a, b, s, out=(out,))
        assert out.tobytes() == want.tobytes(), f"output at byte offset {offset}"


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_a_constant_square_or_cube_is_correctly_rounded(dtype: str) -> None:
    """`canonicalize` turns x ** 2 and x ** 3 (constant exponent) into products
    (dialects/rlx.py:SmallPowerToProducts): a square is x * x, correctly
    rounded; a cube is the f64 cube (the square is exact) rounded to x's type,
    as the pow kernel rounds its f64 result: specials and overflow included."""
    np_type = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[dtype]
    x = np.concatenate([specials(np_type), np.linspace(-60, 60, 4001, dtype=np.float64).astype(np_type)])
    t = f"tensor<{x.size}x{dtype}>"
    exe = rlx.compile(
        f"func.func @f(%x: {t}) -> ({t}, {t}) {{\n"
        f"  %two = rlx.constant dense<2.0> : tensor<{dtype}>\n"
        f"  %three = rlx.constant dense<3.0> : tensor<{dtype}>\n"
        f"  %s = rlx.pow %x, %two : ({t}, tensor<{dtype}>) -> {t}\n"
        f"  %c = rlx.pow %x, %three : ({t}, tensor<{dtype}>) -> {t}\n"
        f"  func.return %s, %c : {t}, {t}\n}}"
    )
    assert "rlx.pow" not in exe.planned_ir
    square, cube = exe(x)
    wide = x.astype(np.float64)
    with np.errstate(over="ignore"):  # the largest values overflow to inf, as they should
        assert bits_equal(square.astype(np.float32), (wide * wide).astype(np_type).astype(np.float32))
        assert ulp_error(cube, wide * wide * wide, np_type).max() == 0
