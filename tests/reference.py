"""Plain NumPy/float64 references for every elementwise rlx op, plus IR-building helpers.

The references are written for clarity, not speed: float ops are evaluated in
float64 from the (exactly widened) inputs, integer ops on Python ints where the
wrapping/truncation rules matter, and correctly rounded results (fma, int ->
float casts) go through `fractions.Fraction`.

    (the unary ops' float64 references are their records': tests/op_records.py)
    REF_BINARY_FLOAT[name](a, b)    -> float64 array (a, b float64)
    ref_binary_int(name, a, b, dt)  -> array of dtype dt (int32/int64/bool)
    ref_compare / ref_where / ref_fma / ref_cast
    ulp_error(got, ref64, dtype)    -> error in ULPs of `dtype` (inf where NaN/inf positions differ)
    run_op(op, *arrays, ...)        -> the op compiled with rlx_mlir.compile and run
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache

import numpy as np

import rlx_mlir

# ---------------------------------------------------------------------------
# dtypes and IR text
# ---------------------------------------------------------------------------
IR_NAME = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.bool_): "i1",
}
NP_DTYPE = {v: k for k, v in IR_NAME.items()}
FLOAT_DTYPES = (np.float32, np.float64)
INT_DTYPES = (np.int32, np.int64)
ALL_DTYPES = (np.float32, np.float64, np.int32, np.int64, np.bool_)


def ir_type(shape: Sequence[int], dtype) -> str:
    """tensor<4x3xf32>, tensor<f32> for rank 0, tensor<0x3xf32> for zero-size."""
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{IR_NAME[np.dtype(dtype)]}>"


def op_ir(op: str, in_types: Sequence[tuple[tuple[int, ...], object]], out_type: tuple[tuple[int, ...], object]) -> str:
    """A function applying one `rlx.<op>` to its arguments and returning the result."""
    args = ", ".join(f"%a{k}: {ir_type(s, d)}" for k, (s, d) in enumerate(in_types))
    operands = ", ".join(f"%a{k}" for k in range(len(in_types)))
    ins = ", ".join(ir_type(s, d) for s, d in in_types)
    out = ir_type(*out_type)
    return (
        f"func.func @f({args}) -> {out} {{\n"
        f"  %r = rlx.{op} {operands} : ({ins}) -> {out}\n"
        f"  func.return %r : {out}\n"
        f"}}\n"
    )


def func_ir(
    args: Sequence[tuple[tuple[int, ...], object]],
    body: Sequence[str],
    results: Sequence[tuple[str, tuple[int, ...], object]],
) -> str:
    """A function `@f(%a0, %a1, ...)` with the given body lines returning `results` [(ssa, shape, dtype)]."""
    params = ", ".join(f"%a{k}: {ir_type(s, d)}" for k, (s, d) in enumerate(args))
    types = ", ".join(ir_type(s, d) for _, s, d in results)
    ret_types = types if len(results) == 1 else f"({types})"
    lines = [f"func.func @f({params}) -> {ret_types} {{", *(f"  {line}" for line in body)]
    lines.append(f"  func.return {', '.join(v for v, _, _ in results)} : {types}")
    return "\n".join([*lines, "}", ""])


def multi_op_ir(
    ops: Sequence[str], in_types: Sequence[tuple[tuple[int, ...], object]], out_type: tuple[tuple[int, ...], object]
) -> str:
    """Every op in `ops` applied to all the arguments; one result per op (in order)."""
    operands = ", ".join(f"%a{k}" for k in range(len(in_types)))
    ins = ", ".join(ir_type(s, d) for s, d in in_types)
    out = ir_type(*out_type)
    body = [f"%r{i} = rlx.{op} {operands} : ({ins}) -> {out}" for i, op in enumerate(ops)]
    return func_ir(in_types, body, [(f"%r{i}", *out_type) for i in range(len(ops))])


def run_ops(
    ops: Sequence[str], *arrays: np.ndarray, out_dtype=None, pipeline: str | None = None
) -> dict[str, np.ndarray]:
    """Like run_op for several ops over the same arguments in one compiled function."""
    arrays = tuple(np.asarray(a) for a in arrays)
    out_dtype = arrays[0].dtype if out_dtype is None else out_dtype
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    text = multi_op_ir(tuple(ops), [(a.shape, a.dtype) for a in arrays], (tuple(shape), out_dtype))
    return dict(zip(ops, compile_text(text, pipeline)(*arrays)))


@cache
def compile_text(text: str, pipeline: str | None = None):
    """rlx_mlir.compile, cached on (text, pipeline) so parametrized tests share executables."""
    return rlx_mlir.compile(text, pipeline=pipeline)


def run_op(op: str, *arrays: np.ndarray, out_dtype=None, out_shape=None, pipeline: str | None = None) -> np.ndarray:
    """Build, compile (cached) and run `rlx.<op>` on `arrays`; the result is broadcast-shaped by default."""
    arrays = tuple(np.asarray(a) for a in arrays)
    if out_dtype is None:
        out_dtype = arrays[0].dtype
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    text = op_ir(op, [(a.shape, a.dtype) for a in arrays], (tuple(out_shape), out_dtype))
    (result,) = compile_text(text, pipeline)(*arrays)
    return result


# ---------------------------------------------------------------------------
# ULP measurement
# ---------------------------------------------------------------------------
def _ordered(a: np.ndarray) -> np.ndarray:
    """Map floats to integers monotonically so ULP distance is a subtraction (-0 == +0)."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]  # f16/bf16, f32, f64
    bits = a.view(it).astype(np.int64)
    return np.where(bits < 0, np.iinfo(it).min - bits, bits)


def ulp_error(got: np.ndarray, ref64: np.ndarray, dtype=None) -> np.ndarray:
    """|got - round(ref64)| in ULPs of `dtype` (default got.dtype).

    The float64 reference is rounded to `dtype` first, so for f32 a correctly
    rounded result has error 0. NaN must match NaN and inf must match the same
    inf, otherwise the error is inf. -0 and +0 are equal.
    """
    dtype = np.dtype(dtype or got.dtype)
    got = np.asarray(got, dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.asarray(ref64, dtype=np.float64).astype(dtype)
    both_nan = np.isnan(got) & np.isnan(ref)
    nan_ok = np.isnan(got) == np.isnan(ref)
    inf_ok = (np.isinf(got) == np.isinf(ref)) & (~np.isinf(ref) | (got == ref))
    d = np.abs(_ordered(np.where(both_nan, 0, got).astype(dtype)) - _ordered(np.where(both_nan, 0, ref).astype(dtype)))
    return np.where(nan_ok & inf_ok, np.where(both_nan, 0, d).astype(np.float64), np.inf)


def scaled_error(got: np.ndarray, ref64: np.ndarray, scale: np.ndarray, dtype=None) -> np.ndarray:
    """|got - ref| in units of ulp(scale): the error of a formula whose terms have magnitude `scale`.

    Used where the result is a cancellation of larger terms (e.g. gelu's
    negative tail, x/2 * (1 + erf(x/sqrt2))): no fixed ULP bound on the result
    is achievable there, but the error stays a few ULPs of the terms.
    NaN/inf positions are handled as in `ulp_error`.
    """
    dtype = np.dtype(dtype or got.dtype)
    ulp = ulp_error(got, ref64, dtype)
    with np.errstate(all="ignore"):
        unit = np.spacing(np.abs(np.asarray(scale, dtype=dtype))).astype(np.float64)
        diff = np.abs(got.astype(np.float64) - ref64)
        scaled = np.where(np.isfinite(ulp) & np.isfinite(diff), diff / unit, ulp)
    return np.minimum(ulp, scaled)


# ---------------------------------------------------------------------------
# binary references
# ---------------------------------------------------------------------------
REF_BINARY_FLOAT: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,  # NaN-propagating
    "min": np.minimum,
    "pow": np.power,
    "mod": np.fmod,  # sign of the dividend
    "atan2": np.arctan2,
}


def ref_binary_float(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return REF_BINARY_FLOAT[name](np.asarray(a, np.float64), np.asarray(b, np.float64))


def wrap(v: int, bits: int) -> int:
    """Two's complement wraparound of a Python int to `bits` bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _trunc_div(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_mod(a: int, b: int) -> int:
    return 0 if b == 0 else a - b * _trunc_div(a, b)


def _shl(a: int, b: int, bits: int) -> int:
    return a << b if 0 <= b < bits else 0


def _shr(a: int, b: int, bits: int) -> int:
    # arithmetic; negative or >= width amounts give the sign fill
    return a >> b if 0 <= b < bits else (-1 if a < 0 else 0)


def int_pow(a: int, b: int, bits: int) -> int:
    """Integer a ** b, exact modulo 2^bits (np.power's wraparound); a negative
    exponent truncates the real power toward zero (1, ±1 for a = -1, else 0)."""
    if b < 0:
        return 1 if a == 1 else (-1) ** (b % 2) if a == -1 else 0
    return pow(a, b, 1 << bits)


_INT_SCALAR: dict[str, Callable[[int, int, int], int]] = {
    "add": lambda a, b, w: a + b,
    "sub": lambda a, b, w: a - b,
    "mul": lambda a, b, w: a * b,
    "div": lambda a, b, w: _trunc_div(a, b),  # INT_MIN / -1 = 2^(w-1) wraps back to INT_MIN
    "mod": lambda a, b, w: _trunc_mod(a, b),
    "max": lambda a, b, w: max(a, b),
    "min": lambda a, b, w: min(a, b),
    "pow": int_pow,
    "bit_and": lambda a, b, w: a & b,
    "bit_or": lambda a, b, w: a | b,
    "bit_xor": lambda a, b, w: a ^ b,
    "shl": _shl,
    "shr": _shr,
}


def ref_binary_int(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer (and i1 bitwise) ops on Python ints, wrapped to the operand width."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = a.dtype
    if dtype == np.bool_:
        fn = {"bit_and": np.logical_and, "bit_or": np.logical_or, "bit_xor": np.logical_xor}[name]
        return fn(a, b)
    bits = dtype.itemsize * 8
    f = _INT_SCALAR[name]
    out = [wrap(f(int(x), int(y), bits), bits) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array(out, dtype=dtype).reshape(a.shape)


REF_COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal,
    "ne": np.not_equal,  # NaN != anything is true
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def ref_compare(name: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return REF_COMPARE[name](a, b)


def ref_where(c: np.ndarray, t: np.ndarray, f: np.ndarray) -> np.ndarray:
    return np.where(c, t, f)


# ---------------------------------------------------------------------------
# correctly rounded results: fma, casts
# ---------------------------------------------------------------------------
def round_exact(value: Fraction | int, dtype) -> float:
    """Round an exact rational to float32/float64 with a single rounding (to nearest even).

    float(Fraction) is correctly rounded to float64. For float32, the float64
    value is first made round-to-odd (nudged one ulp toward the exact value when
    inexact and even), which makes the following float64 -> float32 rounding
    exact-equivalent to a single rounding (53 >= 24 + 2 bits).
    """
    value = Fraction(value)
    try:
        d = float(value)
    except OverflowError:
        d = math.inf if value > 0 else -math.inf
    if np.dtype(dtype) == np.float64:
        return d
    if math.isfinite(d) and Fraction(d) != value:
        bits = np.array(d).view(np.int64)
        if int(bits) & 1 == 0:
            d = float(np.nextafter(d, math.inf if value > Fraction(d) else -math.inf))
    with np.errstate(over="ignore"):
        return float(np.float32(d))


def ref_fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a*b + c with one rounding to the inputs' dtype (exact rationals; IEEE specials from float64)."""
    a, b, c = np.broadcast_arrays(a, b, c)
    dtype = a.dtype
    with np.errstate(all="ignore"):
        special = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    out = []
    for x, y, z, s in zip(a.ravel().tolist(), b.ravel().tolist(), c.ravel().tolist(), special.ravel().tolist()):
        if not (math.isfinite(x) and math.isfinite(y)):  # inf/NaN product: as in float64
            out.append(s)
            continue
        if not math.isfinite(z):  # finite (possibly huge) exact product + inf/NaN
            out.append(z)
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        r = round_exact(exact, dtype)
        if exact == 0:  # IEEE: -0 only for (-0 product) + (-0); cancellation gives +0
            product_is_neg_zero = (x == 0 or y == 0) and math.copysign(1.0, x) * math.copysign(1.0, y) < 0
            r = -0.0 if product_is_neg_zero and math.copysign(1.0, z) < 0 else 0.0
        elif r == 0:  # underflow keeps the sign of the exact value
            r = -0.0 if exact < 0 else 0.0
        out.append(r)
    with np.errstate(over="ignore"):
        return np.array(out, dtype=np.float64).astype(dtype).reshape(a.shape)


def ref_cast(x: np.ndarray, to) -> np.ndarray:
    """The rlx.cast rules.

    float -> int: truncate toward zero, saturate at the int range, NaN -> 0
    (NumPy's astype does not saturate, so this is explicit);
    int -> int: wrap (two's complement); anything -> bool: `!= 0` (NaN -> True);
    bool -> number: 0/1; int -> float and f64 -> f32: round to nearest even.
    """
    x = np.asarray(x)
    src, dst = x.dtype, np.dtype(to)
    if dst == np.bool_:
        return x != 0
    if src == np.bool_:
        return x.astype(dst)
    if src.kind == "f" and dst.kind == "i":
        bits = dst.itemsize * 8
        hi, lo = (1 << (bits - 1)) - 1, -(1 << (bits - 1))
        out = []
        for v in x.ravel().tolist():
            if math.isnan(v):
                out.append(0)
            elif v >= 2.0 ** (bits - 1):
                out.append(hi)
            elif v < -(2.0 ** (bits - 1)):
                out.append(lo)
            else:
                out.append(math.trunc(v))
        return np.array(out, dtype=dst).reshape(x.shape)
    if src.kind == "i" and dst.kind == "i":
        bits = dst.itemsize * 8
        return np.array([wrap(int(v), bits) for v in x.ravel().tolist()], dtype=dst).reshape(x.shape)
    if src.kind == "i" and dst.kind == "f":
        return np.array([round_exact(int(v), dst) for v in x.ravel().tolist()], dtype=dst).reshape(x.shape)
    # float -> float: widening is exact, narrowing is IEEE round to nearest even (overflow -> inf)
    with np.errstate(over="ignore"):
        return x.astype(dst)


def bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-identical (distinguishes -0/+0 and NaN payload-insensitive)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    nan = np.isnan(got)
    if not np.array_equal(nan, np.isnan(want)):
        return False
    it = np.int32 if got.dtype == np.float32 else np.int64
    return bool(np.array_equal(got[~nan].view(it), want[~nan].view(it)))


def specials(dtype) -> np.ndarray:
    """±0, ±inf, NaN, subnormals, ±tiny, ±max, eps and a few small integers/halves."""
    fi = np.finfo(dtype)
    vals = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        float(fi.tiny),
        -float(fi.tiny),
        float(fi.smallest_subnormal),
        -float(fi.smallest_subnormal),
        float(fi.tiny) / 3,
        -float(fi.tiny) / 7,
        float(fi.max),
        -float(fi.max),
        float(fi.eps),
        -float(fi.eps),
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        2.0,
        3.0,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
    ]
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=dtype)
