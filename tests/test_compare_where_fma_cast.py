"""Numeric tests of rlx compare ops, where, fma and cast against tests/reference.py.

* compare (eq ne lt le gt ge) -> i1 on f32, f64, i32, i64, i1: every pair of
  interesting values (NaN compares false except `ne`; i1 compares as unsigned),
  plus broadcasting;
* where: broadcasting of all three operands, every branch dtype, selection is
  bit-exact (signed zeros, NaN);
* fma: a*b + c with a single rounding (the reference rounds the exact rational),
  including cases where a separate multiply and add would round differently;
* cast: all 25 (source, target) pairs among f32, f64, i32, i64, i1 on zeros, ±1,
  .5 ties, extremes, out-of-range values, ±inf, NaN and subnormals.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import (
    REF_COMPARE,
    bits_equal,
    compile_text,
    func_ir,
    ir_type,
    ref_cast,
    ref_compare,
    ref_fma,
    ref_where,
    run_op,
    run_ops,
    specials,
)

F32, F64, I32, I64, BOOL = np.float32, np.float64, np.int32, np.int64, np.bool_
ALL = [
    pytest.param(F32, id="f32"),
    pytest.param(F64, id="f64"),
    pytest.param(I32, id="i32"),
    pytest.param(I64, id="i64"),
    pytest.param(BOOL, id="i1"),
]
FLOATS = [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")]
COMPARE_OPS = sorted(REF_COMPARE)
NAMES = {F32: "f32", F64: "f64", I32: "i32", I64: "i64", BOOL: "i1"}


def pool(dtype: type) -> np.ndarray:
    if dtype == BOOL:
        return np.array([False, True])
    if np.dtype(dtype).kind == "f":
        return np.concatenate(
            [specials(dtype), np.array([1.0, 1.0 + np.finfo(dtype).eps, 7.0, -7.0, 0.1], dtype=dtype)]
        )
    info = np.iinfo(dtype)
    return np.array([0, 1, -1, 2, -2, 7, -7, 1000, info.max, info.min, info.max - 1, info.min + 1], dtype=dtype)


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", COMPARE_OPS)
def test_compare_all_pairs(op: str, dtype: type) -> None:
    a, b = (m.ravel() for m in np.meshgrid(pool(dtype), pool(dtype), indexing="ij"))
    got = run_ops(COMPARE_OPS, a, b, out_dtype=BOOL)[op]
    want = ref_compare(op, a, b)
    assert got.dtype == BOOL
    bad = got != want
    assert not bad.any(), f"{op}: a={a[bad][:8]} b={b[bad][:8]} got={got[bad][:8]}"


@pytest.mark.parametrize("dtype", [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")])
def test_compare_nan(dtype: type) -> None:
    nan = dtype(np.nan)
    a = np.array([nan, nan, 1.0, np.inf], dtype=dtype)
    b = np.array([nan, 1.0, nan, nan], dtype=dtype)
    out = run_ops(COMPARE_OPS, a, b, out_dtype=BOOL)
    for op in COMPARE_OPS:
        np.testing.assert_array_equal(out[op], np.full(4, op == "ne"), err_msg=op)


@pytest.mark.parametrize("shapes", [((4, 3), (3,)), ((2, 1, 5), (4, 1)), ((), (3, 2)), ((1,), ())], ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_compare_broadcast(dtype: type, shapes: tuple) -> None:
    rng = np.random.default_rng(5)
    a = np.asarray(rng.choice(pool(dtype), size=shapes[0]), dtype=dtype)
    b = np.asarray(rng.choice(pool(dtype), size=shapes[1]), dtype=dtype)
    out = run_ops(COMPARE_OPS, a, b, out_dtype=BOOL)
    for op in COMPARE_OPS:
        want = ref_compare(op, a, b)
        assert out[op].shape == want.shape
        np.testing.assert_array_equal(out[op], want, err_msg=op)


# ---------------------------------------------------------------------------
# where
# ---------------------------------------------------------------------------
WHERE_SHAPES = [
    ((4, 1), (3,), (1, 1)),
    ((), (2, 3), (3,)),
    ((2, 1, 3), (4, 1), ()),
    ((5,), (5,), (5,)),
    ((3,), (), ()),
    ((), (), ()),
]


@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_where_broadcast(dtype: type, shapes: tuple) -> None:
    rng = np.random.default_rng(9)
    c = np.asarray(rng.random(shapes[0]) < 0.5)
    t = np.asarray(rng.choice(pool(dtype), size=shapes[1]), dtype=dtype)
    f = np.asarray(rng.choice(pool(dtype), size=shapes[2]), dtype=dtype)
    got = run_op("where", c, t, f, out_dtype=dtype)
    want = ref_where(c, t, f)
    assert got.shape == want.shape
    assert bits_equal(got, want), (c, t, f, got, want)


# ---------------------------------------------------------------------------
# fma
# ---------------------------------------------------------------------------
def fma_operands(dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    n = 3000
    a = rng.uniform(-10, 10, n)
    b = rng.uniform(-10, 10, n)
    c = rng.uniform(-100, 100, n)
    a, b, c = (v.astype(dtype) for v in (a, b, c))
    # c = -round(a*b) + tiny: the result is the rounding error of a*b, which only a fused op keeps
    c2 = (-(a * b)).astype(dtype)
    # single vs double rounding: (1 + 2^-h)^2 = 1 + 2^(1-h) + 2^-2h is a tie once rounded, c breaks it
    h = 12 if dtype == F32 else 27
    p = 1.0 + 2.0**-h
    tie_a = np.array([p, p, -p, p], dtype=dtype)
    tie_b = np.array([p, p, p, -p], dtype=dtype)
    tie_c = (
        np.array([2.0**-60, -(2.0**-60), 2.0**-60, -(2.0**-60)], dtype=dtype)
        if dtype == F32
        else np.array([2.0**-100, -(2.0**-100), 2.0**-100, -(2.0**-100)], dtype=dtype)
    )
    sp = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            np.inf,
            -np.inf,
            np.nan,
            float(np.finfo(dtype).max),
            float(np.finfo(dtype).smallest_subnormal),
            2.0,
        ],
        dtype=dtype,
    )
    ga, gb, gc = (m.ravel() for m in np.meshgrid(sp, sp, sp, indexing="ij"))
    return (np.concatenate([a, a, tie_a, ga]), np.concatenate([b, b, tie_b, gb]), np.concatenate([c, c2, tie_c, gc]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_fma_single_rounding(dtype: type) -> None:
    a, b, c = fma_operands(dtype)
    got = run_op("fma", a, b, c)
    want = ref_fma(a, b, c)
    same = got.view(np.int32 if dtype == F32 else np.int64) == want.view(np.int32 if dtype == F32 else np.int64)
    same |= np.isnan(got) & np.isnan(want)
    assert same.all(), (
        f"a={a[~same][:5]!r} b={b[~same][:5]!r} c={c[~same][:5]!r} got={got[~same][:5]!r} want={want[~same][:5]!r}"
    )
    # the constructed cases really distinguish fused from unfused evaluation
    with np.errstate(all="ignore"):
        unfused = ((a * b).astype(dtype) + c).astype(dtype)
    assert (unfused != want).sum() > 1000


@pytest.mark.parametrize("shapes", [((4, 3), (3,), (4, 1)), ((), (2, 3), ()), ((2, 1, 3), (1,), (4, 3))], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_fma_broadcast(dtype: type, shapes: tuple) -> None:
    rng = np.random.default_rng(2)
    a, b, c = (np.asarray(rng.uniform(-4, 4, s), dtype=dtype) for s in shapes)
    got = run_op("fma", a, b, c)
    want = ref_fma(a, b, c)
    assert got.shape == want.shape
    assert bits_equal(got, want)


# ---------------------------------------------------------------------------
# cast
# ---------------------------------------------------------------------------
def cast_values(dtype: type) -> np.ndarray:
    if dtype == BOOL:
        return np.array([False, True, True, False])
    if dtype in (I32, I64):
        info = np.iinfo(dtype)
        vals = [
            0,
            1,
            -1,
            2,
            -2,
            127,
            255,
            256,
            -129,
            65535,
            2**24 + 1,
            -(2**24 + 3),
            2**31 - 1,
            -(2**31),
            info.max,
            info.min,
            info.max - 1,
            info.min + 1,
            12345678,
            -87654321,
        ]
        if dtype == I64:
            vals += [
                2**31,
                -(2**31) - 1,
                2**32 + 5,
                2**53 + 1,
                -(2**53 + 1),
                2**62 + 2**40 + 1,
                2**63 - 2**39,
                2**63 - 2**39 - 1,
                2**63 - 2**40,
                -(2**63) + 2**39 + 1,
            ]
        return np.array(vals, dtype=dtype)
    fi = np.finfo(dtype)
    vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        0.9999999,
        -0.9999999,
        1e-45,
        1e-30,
        2.0**31 - 128,
        2.0**31,
        2.0**31 - 1,
        -(2.0**31),
        -(2.0**31) - 1,
        -(2.0**31) - 256,
        2.0**32,
        3e9,
        -3e9,
        2.0**63,
        -(2.0**63),
        2.0**63 - 1024,
        2.0**64,
        1e20,
        -1e20,
        16777217.0,
        123.75,
        -123.75,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        float(fi.max),
        -float(fi.max),
        float(fi.tiny),
        float(fi.smallest_subnormal),
        -float(fi.smallest_subnormal),
    ]
    if dtype == F64:
        vals += [
            2.0**63 - 2048,
            1e-50,
            -1e-50,
            3.4028235677973366e38,
            3.4028236e38,
            -3.5e38,
            1e300,
            1.0 + 2.0**-24,
            1.0 + 2.0**-24 + 2.0**-50,
            1.0 + 3 * 2.0**-24,
            2.0**-149,
            2.0**-150,
            1.5 * 2.0**-149,
            2.0**31 - 0.5,
            -(2.0**31) - 0.5,
            2.0**31 - 1.5,
            9007199254740993.0,
            2147483647.9,
        ]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=dtype)


def _cast_all(src: type) -> dict[type, np.ndarray]:
    """One function casting one argument to all five types (identity included)."""
    x = cast_values(src)
    targets = (F32, F64, I32, I64, BOOL)
    body = [f"%r{k} = rlx.cast %a0 : ({ir_type(x.shape, src)}) -> {ir_type(x.shape, t)}" for k, t in enumerate(targets)]
    text = func_ir([(x.shape, src)], body, [(f"%r{k}", x.shape, t) for k, t in enumerate(targets)])
    return dict(zip(targets, compile_text(text)(x)))


@pytest.mark.parametrize("dst", ALL)
@pytest.mark.parametrize("src", ALL)
def test_cast(src: type, dst: type) -> None:
    x = cast_values(src)
    got = _cast_all(src)[dst]
    want = ref_cast(x, dst)
    assert got.dtype == dst and got.shape == x.shape
    if np.dtype(dst).kind == "f":
        ok = got.view(np.int32 if dst == F32 else np.int64) == want.view(np.int32 if dst == F32 else np.int64)
        ok |= np.isnan(got) & np.isnan(want)
    else:
        ok = got == want
    assert ok.all(), f"{NAMES[src]}->{NAMES[dst]}: x={x[~ok]!r} got={got[~ok]!r} want={want[~ok]!r}"


@pytest.mark.parametrize("src", FLOATS)
def test_cast_float_to_int_saturates(src: type) -> None:
    """The documented rules spelled out: saturation, NaN -> 0, truncation toward zero, NaN -> true."""
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9, -2.9, -0.0], dtype=src)
    got32 = run_op("cast", x, out_dtype=I32)
    np.testing.assert_array_equal(got32, np.array([0, 2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2, -2, 0], dtype=I32))
    got64 = run_op("cast", x, out_dtype=I64)
    np.testing.assert_array_equal(got64, np.array([0, 2**63 - 1, -(2**63), 2**63 - 1, -(2**63), 2, -2, 0], dtype=I64))
    gotb = run_op("cast", x, out_dtype=BOOL)
    np.testing.assert_array_equal(gotb, np.array([True] * 7 + [False]))
