"""All 21 element types: the cast matrix against a small rules-based reference,
elementwise ops on every type they support, and the NumPy boundary.

The cast reference implements the rules directly (NumPy's astype neither
saturates nor rounds bf16 from f64 once): float -> int truncates, saturates and
maps NaN to 0; int -> int wraps; -> bool is != 0; bool -> number is 0/1;
complex -> real keeps the real part; real -> complex has a zero imaginary part;
float narrowing rounds to nearest even exactly once (computed with Fractions);
a cast to float8 saturates (ONNX's default): out of range and +-inf give
+-largest, NaN stays NaN, and the FNUZ formats have no -0.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import ml_dtypes
import numpy as np
import pytest
from movement_reference import (  # the one test-side dtype table
    BF16,
    COMPLEX,
    FLOAT8,
    FLOATS,
    INT4,
    SIGNED,
    STORAGE,
    TYPES,
    UNSIGNED,
    int_range,
    is_float,
)
from reference import int_pow

import rlx_mlir as rlx

ALL = {**TYPES, **STORAGE}
REAL_FLOATS = (*FLOATS, *FLOAT8)
COMPONENT = {"complex<f32>": "f32", "complex<f64>": "f64"}


@dataclass(frozen=True)
class Format:
    """A binary float format as the reference needs it."""

    precision: int  # significand bits, the implicit one included
    emin: int  # exponent of the smallest normal
    largest: float
    infinity: bool  # overflow (unsaturated) gives +-inf; without infinities it gives NaN
    negative_zero: bool = True


def ieee(precision: int, emin: int, emax: int) -> Format:
    return Format(precision, emin, float((2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** emax), True)


FORMATS = {
    "f16": ieee(11, -14, 15),
    "bf16": ieee(8, -126, 127),
    "f32": ieee(24, -126, 127),
    "f64": ieee(53, -1022, 1023),
    "f8E4M3FN": Format(4, -6, 448.0, infinity=False),
    "f8E4M3FNUZ": Format(4, -7, 240.0, infinity=False, negative_zero=False),
    "f8E5M2": ieee(3, -14, 15),
    "f8E5M2FNUZ": Format(3, -15, 57344.0, infinity=False, negative_zero=False),
}


# ---------------------------------------------------------------------------
# reference
# ---------------------------------------------------------------------------
def round_to_format(value: float | int | Fraction, name: str, saturate: bool = False) -> float:
    """Round an exact value to float format `name`, nearest even; a result past
    the largest finite value is +-largest when `saturate`, else +-inf or NaN."""
    fmt = FORMATS[name]
    if isinstance(value, float) and math.isnan(value):
        return value
    if isinstance(value, float) and math.isinf(value):
        return math.copysign(fmt.largest, value) if saturate else value if fmt.infinity else math.nan
    exact = Fraction(value)
    sign = -1 if exact < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0) else 1
    magnitude = abs(exact)
    result = Fraction(0)
    if magnitude:
        exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
        if Fraction(2) ** exponent > magnitude:
            exponent -= 1
        ulp = Fraction(2) ** (max(exponent, fmt.emin) - fmt.precision + 1)
        quotient = magnitude / ulp
        whole = math.floor(quotient)
        rest = quotient - whole
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
            whole += 1
        result = whole * ulp
    if result > Fraction(fmt.largest):
        if not saturate:
            return sign * math.inf if fmt.infinity else math.nan
        result = Fraction(fmt.largest)
    if result == 0:
        return math.copysign(0.0, sign) if fmt.negative_zero else 0.0
    return sign * float(result)


def bits(name: str) -> int:
    return ml_dtypes.iinfo(ALL[name]).bits


def wrap(value: int, name: str) -> int:
    lo, hi = int_range(name)
    return (value - lo) % (hi - lo + 1) + lo


def cast_scalar(value: object, src: str, dst: str) -> object:
    if src == dst:  # the identity, even a saturating float8 cast (E5M2 keeps its infinities)
        return value
    if dst == "i1":
        return bool(value != 0) if not isinstance(value, float) or not math.isnan(value) else True
    if src == "i1":
        return complex(int(value), 0) if dst in COMPLEX else int(value)
    if src in COMPLEX:
        if dst in COMPLEX:
            return complex(round_to_format(value.real, COMPONENT[dst]), round_to_format(value.imag, COMPONENT[dst]))
        return cast_scalar(value.real, COMPONENT[src], dst)
    if dst in COMPLEX:
        return complex(cast_scalar(value, src, COMPONENT[dst]), 0.0)
    if dst in REAL_FLOATS:
        return round_to_format(value, dst, saturate=dst in FLOAT8)
    if src in REAL_FLOATS:
        if math.isnan(value):
            return 0
        lo, hi = int_range(dst)
        if math.isinf(value):
            return hi if value > 0 else lo
        return min(max(math.trunc(value), lo), hi)
    return wrap(int(value), dst)


def python_value(v: np.generic, name: str) -> object:
    """An element as an exact Python number (ml_dtypes' scalars included)."""
    if name in COMPLEX:
        return complex(v)
    if name == "i1":
        return bool(v)
    return float(v) if name in REAL_FLOATS else int(v)


def ref_cast(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    values = [cast_scalar(python_value(v, src), src, dst) for v in x.ravel()]
    with np.errstate(all="ignore"):
        return np.array(values, dtype=ALL[dst]).reshape(x.shape)


def cast_inputs(src: str) -> np.ndarray:
    """0, ±1, halves, extremes, out of every range, ±inf, NaN, subnormals."""
    if src == "i1":
        return np.array([False, True, True, False])
    if src in FLOAT8:  # every bit pattern
        return np.arange(256, dtype=np.uint8).view(ALL[src])
    if src in INT4:
        lo, hi = int_range(src)
        return np.arange(lo, hi + 1).astype(ALL[src])
    if src in FLOATS or src in COMPLEX:
        base = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            127.5,
            128.0,
            -129.0,
            255.0,
            256.0,
            300.0,
            -300.0,
            32767.0,
            65504.0,
            65520.0,
            70000.0,
            2.0**31,
            -(2.0**31) - 4096,
            4.3e9,
            1e10,
            -1e10,
            9.3e18,
            -9.3e18,
            1e30,
            3.4e38,
            -3.4e38,
            1e300,
            1e-8,
            6e-8,
            1e-40,
            1e-45,
            2.0**-1074,
            -1e-320,
            math.inf,
            -math.inf,
            math.nan,
            1.0000001,
            3.14159265358979,
            1 / 3,
            # just above a bf16 / f16 tie: rounding through f32 first would land on the tie
            1 + 2.0**-8 + 2.0**-30,
            -(1 + 2.0**-8 + 2.0**-30),
            1 + 2.0**-11 + 2.0**-30,
            3 * 2.0**-20 + 2.0**-50,
            # float8: ties and near-ties at the top (448/480, 240/256, 57344/61440) and in the subnormals
            449.0,
            464.0,
            -464.0,
            465.0,
            480.0,
            247.0,
            248.0,
            -248.0,
            57344.0,
            61439.0,
            61440.0,
            1.0625,
            1.1875,
            1.125,
            1.375,
            3 * 2.0**-10,
            2.0**-10,
            5 * 2.0**-10,
            3 * 2.0**-18,
            2.0**-18,
            -(2.0**-18),
            2.0**-17 + 2.0**-30,
            2.0**-11,
            -(2.0**-11),
            0.75 * 2.0**-14,
        ]
        if src in COMPLEX:
            with np.errstate(over="ignore"):
                return np.array([complex(v, w) for v, w in zip(base, base[::-1])], dtype=TYPES[src])
        with np.errstate(all="ignore"):
            return np.array(base, dtype=np.float64).astype(TYPES[src])
    lo, hi = int_range(src)
    raw = [
        0,
        1,
        -1,
        2,
        127,
        128,
        255,
        256,
        -129,
        32767,
        65535,
        65536,
        2**24 + 1,
        2**31 - 1,
        2**32 + 5,
        2**53 + 1,
        lo,
        hi,
        hi - 1,
        lo + 1,
        123456789,
        -987654321,
        # just above a bf16 / f16 tie once rounded to f32 or f64: one rounding must see the +1
        2**24 + 2**16 + 1,
        -(2**24 + 2**16 + 1),
        2**62 + 2**54 + 1,
        2**12 + 2**1 + 1,
        # ui64 at or above 2^63 (halved with a sticky bit): just past an f64 / f32 / bf16 tie, and the top
        2**63 + 2**10 + 1,
        2**63 + 2**39 + 1,
        2**63 + 2**55 + 1,
        2**64 - 1,
        2**63 + 2**11,
        2**63,
    ]
    return np.array([wrap(v, src) for v in raw], dtype=TYPES[src])


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and signed zeros apart for real floats."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if is_float(got.dtype):
        g, w = got.astype(np.complex128), want.astype(np.complex128)
        nan_g = np.isnan(g.real) | np.isnan(g.imag)
        nan_w = np.isnan(w.real) | np.isnan(w.imag)
        if not np.array_equal(nan_g, nan_w):
            return False
        eq = (g == w) | nan_g
        real = got.dtype.kind != "c"
        signs = np.signbit(got.astype(np.float64)) == np.signbit(want.astype(np.float64)) if real else True
        return bool(np.all(eq & signs))
    return bool(np.array_equal(got, want))


# ---------------------------------------------------------------------------
# compiling
# ---------------------------------------------------------------------------
def tensor(n: int, name: str) -> str:
    return f"tensor<{n}x{name}>"


@cache
def unary_exe(op: str, src: str, dst: str, n: int) -> rlx.runtime.Executable:
    t_in, t_out = tensor(n, src), tensor(n, dst)
    body = f"  %r = rlx.{op} %a : ({t_in}) -> {t_out}\n  func.return %r : {t_out}"
    return rlx.compile(f"func.func @f(%a: {t_in}) -> {t_out} {{\n{body}\n}}")


@cache
def binary_exe(op: str, src: str, dst: str, n: int) -> rlx.runtime.Executable:
    t, t_out = tensor(n, src), tensor(n, dst)
    return rlx.compile(
        f"func.func @f(%a: {t}, %b: {t}) -> {t_out} {{\n"
        f"  %r = rlx.{op} %a, %b : ({t}, {t}) -> {t_out}\n  func.return %r : {t_out}\n}}"
    )


# ---------------------------------------------------------------------------
# the cast matrix
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dst", list(ALL))
@pytest.mark.parametrize("src", list(ALL))
def test_cast_pair(src: str, dst: str) -> None:
    x = cast_inputs(src)
    (got,) = unary_exe("cast", src, dst, x.size)(x)
    want = ref_cast(x, src, dst)
    assert same(got, want), f"cast {src}->{dst}\n x    = {x}\n got  = {got}\n want = {want}"


# ---------------------------------------------------------------------------
# elementwise ops per type
# ---------------------------------------------------------------------------
def operands(name: str, n: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = ALL[name]
    if name in REAL_FLOATS:
        a, b = rng.uniform(-50, 50, n), rng.uniform(-50, 50, n)
        b[:4] = [0.0, -0.0, np.inf, np.nan]
        return a.astype(dtype), b.astype(dtype)
    if name in COMPLEX:
        a = rng.uniform(-5, 5, n) + 1j * rng.uniform(-5, 5, n)
        b = rng.uniform(-5, 5, n) + 1j * rng.uniform(-5, 5, n)
        b[:3] = [1e30 + 1j, 1j, -2.0]
        return a.astype(dtype), b.astype(dtype)
    if name == "i1":
        return rng.random(n) < 0.5, rng.random(n) < 0.5
    lo, hi = int_range(name)
    wide = np.uint64 if name == "ui64" else np.int64
    a = rng.integers(lo, hi, n, endpoint=True, dtype=wide)
    b = rng.integers(lo, hi, n, endpoint=True, dtype=wide)
    a[:6] = [lo, lo, hi, 0, 7, -7 if lo < 0 else 7]
    b[:6] = [-1 if lo < 0 else 1, 0, 0, 0, 3, 200 % (hi + 1)]
    return a.astype(dtype), b.astype(dtype)


def int_binary(op: str, a: int, b: int, name: str) -> int:
    width = bits(name)
    if op in ("div", "mod"):
        if b == 0:
            return 0
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return wrap(q, name) if op == "div" else a - q * b
    if op in ("shl", "shr"):
        amount = b if b >= 0 else width
        if op == "shl":
            return wrap(a << amount, name) if amount < width else 0
        return a >> amount if amount < width else (-1 if a < 0 else 0)
    if op == "pow":
        return wrap(int_pow(a, b, width), name)
    result = {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "max": max(a, b),
        "min": min(a, b),
        "bit_and": a & b,
        "bit_or": a | b,
        "bit_xor": a ^ b,
    }[op]
    return wrap(result, name)


INT_OPS = ("add", "sub", "mul", "div", "mod", "max", "min", "pow", "bit_and", "bit_or", "bit_xor", "shl", "shr")


@pytest.mark.parametrize("op", INT_OPS)
@pytest.mark.parametrize("name", [*SIGNED, *UNSIGNED, *INT4])
def test_integer_ops(name: str, op: str) -> None:
    a, b = operands(name)
    if op in ("shl", "shr"):
        b = (b.astype(np.int64) % (bits(name) + 4)).astype(ALL[name])
        if int_range(name)[0] < 0:
            b[0] = -1  # a negative amount acts as >= width
    (got,) = binary_exe(op, name, name, a.size)(a, b)
    want = np.array([int_binary(op, int(x), int(y), name) for x, y in zip(a, b)], dtype=ALL[name])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", [*SIGNED, "i4"])
def test_division_by_zero_and_int_min_over_minus_one_do_not_trap(name: str) -> None:
    lo, hi = int_range(name)
    a = np.array([lo, lo, 5, -5, hi, 0], ALL[name])
    b = np.array([-1, 0, 0, 0, -1, 0], ALL[name])
    (q,) = binary_exe("div", name, name, a.size)(a, b)
    (r,) = binary_exe("mod", name, name, a.size)(a, b)
    np.testing.assert_array_equal(q, np.array([lo, 0, 0, 0, -hi, 0], ALL[name]))
    np.testing.assert_array_equal(r, np.zeros(6, ALL[name]))


NARROW_FLOATS = ("f16", "bf16", *FLOAT8)


@pytest.mark.parametrize("op", ("add", "sub", "mul", "div", "max", "min", "mod"))
@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_half_precision_binary_ops_round_once_like_numpy(name: str, op: str) -> None:
    """f16/bf16/float8 ops compute in f32 and round once, as NumPy (ml_dtypes for
    float8: nearest even, overflow to NaN, or to inf for E5M2)."""
    a, b = operands(name)
    (got,) = binary_exe(op, name, name, a.size)(a, b)
    wide_a, wide_b = a.astype(np.float32), b.astype(np.float32)
    fn = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": np.divide,
        "max": np.maximum,
        "min": np.minimum,
        "mod": np.fmod,
    }[op]
    with np.errstate(all="ignore"):
        want = fn(wide_a, wide_b).astype(ALL[name])  # exact f32 result rounded once
    assert same(got, want)


@pytest.mark.parametrize("op", rlx.dialects.elementwise.UNARY_OPS)
@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_half_precision_unary_ops_within_one_ulp(name: str, op: str) -> None:
    x = np.linspace(0.01 if op in ("log", "sqrt", "rsqrt") else -8, 8, 4001).astype(ALL[name])
    (got,) = unary_exe(op, name, name, x.size)(x)
    (wide,) = unary_exe(op, "f32", "f32", x.size)(x.astype(np.float32))
    assert_within_one_half_ulp(got, wide, name, op)


def assert_within_one_half_ulp(got: np.ndarray, wide: np.ndarray, name: str, what: str) -> None:
    """`got` (f16/bf16/float8) is the f32 result rounded, or its neighbour: the
    f32 kernels are within a few f32 ulp, far below one ulp of the narrow type."""
    with np.errstate(all="ignore"):
        near = wide.astype(ALL[name]).astype(np.float32)
        step = np.abs(np.spacing(near.astype(ALL[name])).astype(np.float32))
        diff = np.abs(got.astype(np.float32) - near)
    both_nan = np.isnan(near) & np.isnan(got.astype(np.float32))
    assert np.all((diff <= step) | both_nan | (near == got.astype(np.float32))), what


@pytest.mark.parametrize("op", ("pow", "atan2"))
@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_half_precision_pow_atan2(name: str, op: str) -> None:
    a, b = operands(name)
    a = np.abs(a) if op == "pow" else a
    b = (b / 10).astype(ALL[name]) if op == "pow" else b
    (got,) = binary_exe(op, name, name, a.size)(a, b)
    (wide,) = binary_exe(op, "f32", "f32", a.size)(a.astype(np.float32), b.astype(np.float32))
    assert_within_one_half_ulp(got, wide, name, op)


@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_half_precision_fma_rounds_once(name: str) -> None:
    a, b = operands(name)
    c, _ = operands(name, seed=1)
    t = tensor(a.size, name)
    exe = rlx.compile(
        f"func.func @f(%a: {t}, %b: {t}, %c: {t}) -> {t} {{\n"
        f"  %r = rlx.fma %a, %b, %c : ({t}, {t}, {t}) -> {t}\n  func.return %r : {t}\n}}"
    )
    (got,) = exe(a, b, c)
    with np.errstate(all="ignore"):
        # the f16/bf16 product is exact in f64, so f64 fma then one rounding is the exact result
        want = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32).astype(ALL[name])
    assert_within_one_half_ulp(got, want.astype(np.float32), name, "fma")


@pytest.mark.parametrize("op", ("eq", "ne", "lt", "le", "gt", "ge"))
@pytest.mark.parametrize("name", [n for n in ALL if n not in COMPLEX])
def test_compare_every_real_type(name: str, op: str) -> None:
    a, b = operands(name)
    b[10:20] = a[10:20]
    (got,) = binary_exe(op, name, "i1", a.size)(a, b)
    fn = {
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "le": np.less_equal,
        "gt": np.greater,
        "ge": np.greater_equal,
    }[op]
    with np.errstate(invalid="ignore"):
        wide = name in ("bf16", *FLOAT8)  # NumPy compares these through float64
        want = fn(a.astype(np.float64) if wide else a, b.astype(np.float64) if wide else b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ("add", "sub", "mul", "div", "eq", "ne"))
@pytest.mark.parametrize("name", COMPLEX)
def test_complex_binary(name: str, op: str) -> None:
    a, b = operands(name)
    b[20:25] = a[20:25]
    result = "i1" if op in ("eq", "ne") else name
    (got,) = binary_exe(op, name, result, a.size)(a, b)
    wide_a, wide_b = a.astype(np.complex128), b.astype(np.complex128)
    if result == "i1":
        np.testing.assert_array_equal(got, (wide_a == wide_b) if op == "eq" else (wide_a != wide_b))
        return
    want = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](wide_a, wide_b)
    eps = np.finfo(TYPES[COMPONENT[name]]).eps
    np.testing.assert_allclose(got, want, rtol=4 * eps, atol=4 * eps * np.abs(want).max() * (op == "div"))


@pytest.mark.parametrize("op", ("neg", "exp", "log", "sqrt"))
@pytest.mark.parametrize("name", COMPLEX)
def test_complex_unary_principal_branches(name: str, op: str) -> None:
    a, _ = operands(name, n=256)
    a[:8] = [1, -1, 1j, -1j, -4, -4 - 0j, 3 + 4j, -3 - 4j]
    (got,) = unary_exe(op, name, name, a.size)(a)
    want = {"neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt}[op](a.astype(np.complex128))
    eps = np.finfo(TYPES[COMPONENT[name]]).eps
    np.testing.assert_allclose(got, want, rtol=8 * eps, atol=8 * eps)


@pytest.mark.parametrize("name", ("i4", "i8", "i16", "i32", "i64"))
def test_signed_integer_neg_abs_sign_relu(name: str) -> None:
    lo, hi = int_range(name)
    x = np.array([lo, lo + 1, -5, -1, 0, 1, 5, hi], ALL[name])
    for op, want in (
        ("neg", [wrap(-int(v), name) for v in x]),
        ("abs", [wrap(abs(int(v)), name) for v in x]),
        ("sign", [(v > 0) - (v < 0) for v in x.tolist()]),
        ("relu", np.maximum(x, 0)),
    ):
        (got,) = unary_exe(op, name, name, x.size)(x)
        np.testing.assert_array_equal(got, np.array(want, ALL[name]), err_msg=op)


@pytest.mark.parametrize(
    "name", ["f16", "bf16", "i8", "ui8", "ui16", "ui32", "ui64", "complex<f32>", "complex<f64>", "i1", *FLOAT8, *INT4]
)
def test_where_on_every_type(name: str) -> None:
    a, b = operands(name)
    cond = np.arange(a.size) % 3 == 0
    t = tensor(a.size, name)
    exe = rlx.compile(
        f"func.func @f(%c: {tensor(a.size, 'i1')}, %a: {t}, %b: {t}) -> {t} {{\n"
        f"  %r = rlx.where %c, %a, %b : ({tensor(a.size, 'i1')}, {t}, {t}) -> {t}\n  func.return %r : {t}\n}}"
    )
    assert same(exe(cond, a, b)[0], np.where(cond, a, b))


@pytest.mark.parametrize("name", list(ALL))
def test_arrays_of_every_type_go_in_and_out_zero_copy(name: str) -> None:
    """A select between two inputs: the out= array is the one written and returned."""
    a, b = operands(name)
    t, c = tensor(a.size, name), tensor(a.size, "i1")
    exe = rlx.compile(
        f"func.func @f(%c: {c}, %a: {t}, %b: {t}) -> {t} {{\n"
        f"  %r = rlx.where %c, %a, %b : ({c}, {t}, {t}) -> {t}\n  func.return %r : {t}\n}}"
    )
    cond = np.arange(a.size) % 2 == 0
    out = np.empty_like(a)
    (got,) = exe(cond, a, b, out=(out,))
    assert got is out
    assert same(out, np.where(cond, a, b))
    assert exe.inputs[1].dtype.numpy == a.dtype


@pytest.mark.parametrize("name", list(ALL))
def test_the_table_knows_each_types_size(name: str) -> None:
    """The planner takes sizes from the table, so an ml_dtypes row's declared size
    must be the size its arrays have."""
    assert rlx.dtypes.from_name(name).nbytes == np.dtype(ALL[name]).itemsize


def test_verifying_storage_types_does_not_import_ml_dtypes() -> None:
    """rlx-opt on bf16/f8/i4 IR only needs their sizes; importing ml_dtypes
    would add ~0.7 s to every such run (the lit suite has dozens)."""
    code = (
        "import sys, rlx_mlir as rlx\n"
        "rlx.parse('func.func @f(%a: tensor<4xbf16>, %b: tensor<4xi4>) -> tensor<4xbf16> {\\n"
        "  %r = rlx.add %a, %a : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>\\n"
        "  func.return %r : tensor<4xbf16>\\n}')\n"
        "assert 'ml_dtypes' not in sys.modules, 'ml_dtypes was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def constant_literal(name: str) -> tuple[str, object]:
    if name in COMPLEX:
        return "(1.5, -2.0)", 1.5 - 2j
    if name == "i1":
        return "true", True
    return ("-3", -3) if name in REAL_FLOATS or int_range(name)[0] < 0 else ("3", 3)


@pytest.mark.parametrize("name", list(ALL))
def test_constants_of_every_type_load(name: str) -> None:
    literal, value = constant_literal(name)
    t = tensor(4, name)
    exe = rlx.compile(
        f"func.func @f() -> {t} {{\n  %c = rlx.constant dense<{literal}> : {t}\n  func.return %c : {t}\n}}"
    )
    (got,) = exe()
    assert same(got, np.full(4, value, dtype=ALL[name]))


def test_mixed_type_fused_region_matches_unfused() -> None:
    """f16 in -> f32 math -> bf16 out, plus an integer side result: one region, same bits."""
    n = 1000
    text = f"""
    func.func @f(%h: tensor<{n}xf16>, %k: tensor<{n}xui8>) -> (tensor<{n}xbf16>, tensor<{n}xi16>) {{
      %x = rlx.cast %h : (tensor<{n}xf16>) -> tensor<{n}xf32>
      %t = rlx.tanh %x : (tensor<{n}xf32>) -> tensor<{n}xf32>
      %kf = rlx.cast %k : (tensor<{n}xui8>) -> tensor<{n}xf32>
      %s = rlx.mul %t, %kf : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xf32>
      %b = rlx.cast %s : (tensor<{n}xf32>) -> tensor<{n}xbf16>
      %i = rlx.cast %s : (tensor<{n}xf32>) -> tensor<{n}xi16>
      func.return %b, %i : tensor<{n}xbf16>, tensor<{n}xi16>
    }}"""
    fused, unfused = rlx.compile(text), rlx.compile(text, pipeline="")
    assert fused.planned_ir.count("rlx.elementwise_region") == 1
    rng = np.random.default_rng(3)
    h = rng.uniform(-3, 3, n).astype(np.float16)
    k = rng.integers(0, 255, n).astype(np.uint8)
    got_f, got_u = fused(h, k), unfused(h, k)
    for f, u in zip(got_f, got_u):
        assert same(f, u)
    (tanh32,) = unary_exe("tanh", "f32", "f32", n)(h.astype(np.float32))
    product = tanh32 * k.astype(np.float32)
    assert same(got_f[0], product.astype(BF16))
    assert same(got_f[1], ref_cast(product, "f32", "i16"))
