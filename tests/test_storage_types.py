"""The float8 and 4-bit codecs (`lowering/core/element_types.py`), bit for bit.

- float8 loads: all 256 bit patterns of each format, against ml_dtypes;
- float8 stores: every f16 and every bf16 value, and f32/f64 values at and
  next to each rounding tie, against ml_dtypes (`saturate = false`, which is
  ml_dtypes' astype) and against ONNX's reference Cast (`saturate = true`,
  ONNX's default: +-inf and overflow become +-largest). ml_dtypes (and so
  ONNX's helpers) convert f64 through f32, rounding twice: just above a tie
  it can round down. For f64 the references get the value rounded to odd f32
  instead, whose one further rounding is exact;
- i4/ui4: one byte per element with the value in the low four bits; int -> int4
  wraps, float -> int4 saturates (NaN -> 0), as rlx's other integer casts.
"""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np
import onnx
import pytest
from movement_reference import BF16, FLOAT8, STORAGE
from onnx import helper
from onnx.reference import ReferenceEvaluator

import rlx_mlir as rlx
from rlx_mlir.lowering.core.element_types import FLOAT8_FORMATS

ONNX_TYPE = {
    "f8E4M3FN": onnx.TensorProto.FLOAT8E4M3FN,
    "f8E4M3FNUZ": onnx.TensorProto.FLOAT8E4M3FNUZ,
    "f8E5M2": onnx.TensorProto.FLOAT8E5M2,
    "f8E5M2FNUZ": onnx.TensorProto.FLOAT8E5M2FNUZ,
}
SOURCES = {"f16": np.dtype(np.float16), "bf16": BF16, "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}


@cache
def cast_exe(src: str, dst: str, n: int, saturate: bool = True) -> rlx.runtime.Executable:
    t_in, t_out = f"tensor<{n}x{src}>", f"tensor<{n}x{dst}>"
    attr = "" if saturate else " {saturate = false}"
    return rlx.compile(
        f"func.func @f(%a: {t_in}) -> {t_out} {{\n  %r = rlx.cast %a{attr} : ({t_in}) -> {t_out}\n"
        f"  func.return %r : {t_out}\n}}"
    )


def cast(x: np.ndarray, src: str, dst: str, saturate: bool = True) -> np.ndarray:
    (got,) = cast_exe(src, dst, x.size, saturate)(x)
    return got


def assert_same_bits(got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    """float8 results equal byte for byte, except that any NaN matches any NaN."""
    assert got.dtype == want.dtype
    nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
    bad = (got.view(np.uint8) != want.view(np.uint8)) & ~nan
    assert not bad.any(), f"{bad.sum()} differ, e.g. x={x[bad][:6]} got={got[bad][:6]} want={want[bad][:6]}"


def round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """f64 -> f32 truncated toward zero, with the lowest bit set when inexact."""
    t = x.astype(np.float32)
    overshot = np.abs(t.astype(np.float64)) > np.abs(x)
    t = np.where(overshot, np.nextafter(t, np.float32(0)), t)
    inexact = np.isfinite(x) & (t.astype(np.float64) != x)
    return np.where(inexact, (t.view(np.uint32) | 1).view(np.float32), t)


def exact_source(x: np.ndarray) -> np.ndarray:
    """What to give ml_dtypes so that it rounds once: f64 as odd f32, bf16 widened."""
    if x.dtype == np.float64:
        with np.errstate(all="ignore"):
            return round_to_odd_f32(x)
    return x.astype(np.float32) if x.dtype == BF16 else x


def every_value(name: str) -> np.ndarray:
    """All 65536 bit patterns of a 16-bit float type."""
    return np.arange(1 << 16, dtype=np.uint16).view(SOURCES[name])


def near_ties(name: str, wide: np.dtype) -> np.ndarray:
    """For each pair of neighbouring finite float8 values (both signs, and the
    pair past the largest): the midpoint and the next `wide` value on each side
    of it, the float8 values themselves, and the specials."""
    bits = np.arange(256, dtype=np.uint8).view(STORAGE[name])
    finite = np.unique(bits.astype(np.float64)[np.isfinite(bits.astype(np.float64))])
    positive = finite[finite >= 0]
    step_past = positive[-1] - positive[-2]
    grid = np.concatenate([positive, [positive[-1] + step_past]])
    mids = ((grid[:-1] + grid[1:]) / 2).astype(wide)
    around = np.concatenate([mids, np.nextafter(mids, wide.type(np.inf)), np.nextafter(mids, wide.type(0)), grid])
    specials = np.array([np.inf, np.nan, 0.0, 1e30 if wide == np.float32 else 1e300, 1e-30], dtype=wide)
    values = np.concatenate([around, specials]).astype(wide)
    return np.concatenate([values, -values])


# ---------------------------------------------------------------------------
# the format table
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", FLOAT8)
def test_format_table_matches_ml_dtypes(name: str) -> None:
    fmt, info = FLOAT8_FORMATS[name], ml_dtypes.finfo(STORAGE[name])
    assert fmt.largest == float(info.max)
    assert fmt.smallest_normal == float(info.smallest_normal)
    assert fmt.mantissa == info.nmant and fmt.exponent == info.nexp


# ---------------------------------------------------------------------------
# loads
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("name", FLOAT8)
def test_every_bit_pattern_loads_as_ml_dtypes_does(name: str, target: str) -> None:
    x = np.arange(256, dtype=np.uint8).view(STORAGE[name])
    got = cast(x, name, target)
    want = x.astype(SOURCES[target])
    nan = np.isnan(want.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan)
    wide_bits = np.dtype(f"u{SOURCES[target].itemsize}")
    np.testing.assert_array_equal(got[~nan].view(wide_bits), want[~nan].view(wide_bits))  # -0.0 included


# ---------------------------------------------------------------------------
# stores
# ---------------------------------------------------------------------------
def inputs(source: str, name: str) -> np.ndarray:
    if source in ("f16", "bf16"):
        return every_value(source)
    return near_ties(name, SOURCES[source])


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("name", FLOAT8)
def test_unsaturated_store_is_ml_dtypes_astype(name: str, source: str) -> None:
    """Nearest even from the exact value (f64 too: no double rounding through
    f32); overflow and +-inf give NaN, or +-inf for E5M2; FNUZ has no -0."""
    x = inputs(source, name)
    with np.errstate(all="ignore"):
        want = exact_source(x).astype(STORAGE[name])
    assert_same_bits(cast(x, source, name, saturate=False), want, x)


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("name", FLOAT8)
def test_saturated_store_is_onnx_saturate_cast(name: str, source: str) -> None:
    x = inputs(source, name)
    with np.errstate(all="ignore"):
        want = onnx.numpy_helper.saturate_cast(exact_source(x), STORAGE[name])
    assert_same_bits(cast(x, source, name), want, x)


def test_f64_rounds_once_where_ml_dtypes_rounds_twice() -> None:
    """2^-10 (+ a little) is just above the tie between 0 and E4M3FN's smallest
    subnormal 2^-9: it rounds up. Through f32 it would become the tie and round
    to even, 0 (what ml_dtypes before 0.7 answered)."""
    x = np.array([2.0**-10 + 2.0**-40, 2.0**-10, 1 + 2.0**-4 + 2.0**-40, 1 + 2.0**-4])
    got = cast(x, "f64", "f8E4M3FN").astype(np.float64)
    np.testing.assert_array_equal(got, [2.0**-9, 0.0, 1.125, 1.0])
    assert np.float64(np.float32(x[0])) == 2.0**-10  # f32 loses the "little": a second rounding would see a tie


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("name", FLOAT8)
def test_cast_matches_onnx_reference_evaluator(name: str, saturate: bool) -> None:
    """ONNX's own Cast (onnx.reference) with the `saturate` attribute, from f32."""
    x = near_ties(name, np.dtype(np.float32))
    node = helper.make_node("Cast", ["x"], ["y"], to=ONNX_TYPE[name], saturate=int(saturate))
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [x.size])],
        [helper.make_tensor_value_info("y", ONNX_TYPE[name], [x.size])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert_same_bits(cast(x, "f32", name, saturate), want.astype(STORAGE[name]), x)


def test_saturate_examples_from_the_onnx_table() -> None:
    """The rows of ONNX's Cast tables that differ between the two modes."""
    x = np.array([np.inf, -np.inf, 1e6, -1e6, 470.0, 449.0, np.nan, -0.0], np.float32)
    want = {  # (saturate, name) -> values; None is NaN
        (True, "f8E4M3FN"): [448, -448, 448, -448, 448, 448, None, -0.0],
        (False, "f8E4M3FN"): [None, None, None, None, None, 448, None, -0.0],
        (True, "f8E5M2"): [57344, -57344, 57344, -57344, 448, 448, None, -0.0],
        (False, "f8E5M2"): [np.inf, -np.inf, np.inf, -np.inf, 448, 448, None, -0.0],
        (True, "f8E4M3FNUZ"): [240, -240, 240, -240, 240, 240, None, 0.0],
        (False, "f8E4M3FNUZ"): [None, None, None, None, None, None, None, 0.0],
    }
    for (saturate, name), values in want.items():
        got = cast(x, "f32", name, saturate).astype(np.float64)
        expected = np.array([np.nan if v is None else v for v in values])
        np.testing.assert_array_equal(got, expected, err_msg=f"{name} saturate={saturate}")
        np.testing.assert_array_equal(np.signbit(got[-1]), np.signbit(expected[-1]))


@pytest.mark.parametrize("name", FLOAT8)
def test_load_store_round_trip_keeps_every_value(name: str) -> None:
    """float8 -> f32 -> float8 gives the same bits (NaN stays NaN); saturating,
    E5M2's infinities become +-largest."""
    x = np.arange(256, dtype=np.uint8).view(STORAGE[name])
    wide = cast(x, name, "f32")
    assert_same_bits(cast(wide, "f32", name, saturate=False), x, x)
    assert_same_bits(cast(wide, "f32", name), onnx.numpy_helper.saturate_cast(x, STORAGE[name]), x)


def test_integers_round_once_to_float8() -> None:
    """int -> float8 rounds the exact integer once (i64 and ui64 near 2^63 too)."""
    ints = np.array([0, 1, -1, 17, 19, 23, 25, 449, 464, 465, 2**40 + 1, -(2**62) - 1], np.int64)
    unsigned = np.array([0, 1, 23, 465, 2**63, 2**64 - 1, 2**63 + 2**60 + 1], np.uint64)
    for name in FLOAT8:
        for x, src in ((ints, "i64"), (unsigned, "ui64"), (ints.astype(np.int32), "i32")):
            want = onnx.numpy_helper.saturate_cast(x.astype(np.float64), STORAGE[name])
            assert_same_bits(cast(x, src, name), want, x)


# ---------------------------------------------------------------------------
# i4 / ui4
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["i4", "ui4"])
def test_int4_is_one_byte_with_the_value_in_the_low_nibble(name: str) -> None:
    x = np.arange(-20, 21, dtype=np.int32)
    got = cast(x, "i32", name)
    want = x.astype(STORAGE[name])  # ml_dtypes wraps int -> int4, as rlx does
    assert got.itemsize == 1
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(got.view(np.uint8) >> 4, 0)


@pytest.mark.parametrize("name", ["i4", "ui4"])
def test_int4_loads_ignore_the_high_nibble(name: str) -> None:
    raw = np.arange(256, dtype=np.uint8)
    got = cast(raw.view(STORAGE[name]), name, "i32")
    low = (raw & 0x0F).astype(np.int32)
    np.testing.assert_array_equal(got, np.where(low > 7, low - 16, low) if name == "i4" else low)


def test_float_to_int4_saturates_and_truncates() -> None:
    x = np.array([-100.0, -9.5, -8.9, -0.7, 0.7, 6.9, 7.9, 15.5, 100.0, np.nan, np.inf, -np.inf], np.float32)
    np.testing.assert_array_equal(cast(x, "f32", "i4").astype(np.int32), [-8, -8, -8, 0, 0, 6, 7, 7, 7, 0, 7, -8])
    np.testing.assert_array_equal(cast(x, "f32", "ui4").astype(np.int32), [0, 0, 0, 0, 0, 6, 7, 15, 15, 0, 15, 0])


# ---------------------------------------------------------------------------
# beyond elementwise: reductions compute in the wide type and round once
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", [*FLOAT8, "i4", "ui4"])
def test_reduce_sum_and_max_round_once(name: str) -> None:
    """Sums of float8 values are exact in f32 here (16 of them, within 2^-9..448),
    so one rounding of the exact sum is the answer; i4/ui4 sums wrap."""
    rng = np.random.default_rng(7)
    dtype = STORAGE[name]
    if name in FLOAT8:
        x = (rng.standard_normal((8, 16)) * 8).astype(np.float32).astype(dtype)
        exact = x.astype(np.float64).sum(axis=1)
        with np.errstate(all="ignore"):
            want_sum = exact.astype(np.float32).astype(dtype)
    else:
        lo, hi = int(ml_dtypes.iinfo(dtype).min), int(ml_dtypes.iinfo(dtype).max)
        x = rng.integers(lo, hi, (8, 16), endpoint=True).astype(dtype)
        want_sum = x.astype(np.int64).sum(axis=1).astype(dtype)  # ml_dtypes wraps int -> int4
    t_in, t_out = f"tensor<8x16x{name}>", f"tensor<8x{name}>"
    exe = rlx.compile(
        f"func.func @f(%a: {t_in}) -> ({t_out}, {t_out}) {{\n"
        f"  %s = rlx.reduce_sum %a {{axes = array<i64: 1>, keepdims = false}} : ({t_in}) -> {t_out}\n"
        f"  %m = rlx.reduce_max %a {{axes = array<i64: 1>, keepdims = false}} : ({t_in}) -> {t_out}\n"
        f"  func.return %s, %m : {t_out}, {t_out}\n}}"
    )
    got_sum, got_max = exe(x)
    np.testing.assert_array_equal(got_sum.astype(np.float64), want_sum.astype(np.float64))
    np.testing.assert_array_equal(got_max.astype(np.float64), x.astype(np.float64).max(axis=1))


@pytest.mark.parametrize("name", ["i4", "ui4"])
def test_fused_int4_chain_wraps_after_every_op(name: str) -> None:
    """(a + b) / 2 in one fused region: the sum wraps to four bits before the
    division (7 + 7 = -2 in i4, so -1; 15 + 3 = 2 in ui4, so 1), as it would
    through memory."""
    dtype = STORAGE[name]
    a = np.array([7, 7, -8, 3, 0, 5] if name == "i4" else [15, 8, 7, 3, 0, 9]).astype(dtype)
    b = np.array([7, 1, -8, -4, 0, 5] if name == "i4" else [3, 8, 9, 4, 0, 9]).astype(dtype)
    t = f"tensor<6x{name}>"
    exe = rlx.compile(
        f"func.func @f(%a: {t}, %b: {t}, %two: {t}) -> {t} {{\n"
        f"  %s = rlx.add %a, %b : ({t}, {t}) -> {t}\n  %q = rlx.div %s, %two : ({t}, {t}) -> {t}\n"
        f"  func.return %q : {t}\n}}"
    )
    assert exe.planned_ir.count("rlx.elementwise_region") == 1
    (got,) = exe(a, b, np.full(6, 2).astype(dtype))
    wrapped = (a.astype(np.int64) + b.astype(np.int64)).astype(dtype).astype(np.int64)
    np.testing.assert_array_equal(got.astype(np.int64), np.trunc(wrapped / 2).astype(np.int64))
