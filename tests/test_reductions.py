"""Reductions against NumPy, on every element type each op accepts.

reduce_sum/mean/prod/max/min, argmax/argmin and softmax/log_softmax: each
(op family, element type) test compiles ONE module holding every shape case
(compiling is the slow part) and compares each result with a float64 (or
complex128, or exact integer) NumPy reference:

- sums and means: |got - ref| <= (log2(n) + 8) eps_acc sum|x| plus half an
  ulp of the result type (eps_acc: the accumulator's, f32 for f16/bf16) - the
  bound of a pairwise sum, which a serial f32 sum of 1000 values exceeds;
- products: (n + 4) eps_acc |prod| (complex: the product of the moduli);
- max/min, argmax/argmin and integer sums/products: exact (integers wrap);
- softmax: eps_w (r + 2|x - max|) |ref| (the rounding of x - max is
  amplified by exp), log_softmax: eps_w (r + 2|x - max| + 2|log s|), with
  r = 8 + 2 log2(n) + n/8 for the sum s of n exps (a tree per block of 16,
  blocks added in order), plus half an ulp of the result type; NaN and
  infinity positions exactly.

Also: NaN propagation, signed zeros, zero-size axes, integer wrap-around, f16
accumulation in f32, argmax ties/NaN/select_last_index, softmax of rows with
-inf/+inf/NaN, results independent of the thread count, scratch buffers in the
memory plan, the Builder methods, and the accuracy of an f32 sum of 2^24
elements against NumPy's pairwise np.sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest
from movement_reference import BF16, COMPLEX, FLOATS, REALS, TYPES, arr, compile_text, sample, ttype

import rlx_mlir as rlx
from rlx_mlir.dialects import reduction as rd

NUMERIC = (*REALS, *COMPLEX)
# the types whose codecs and accumulators differ get every shape case; the others a subset
CORE_TYPES = ("f16", "bf16", "f32", "i8", "ui32", "complex<f64>")

# (shape, axes, keepdims): every path of the reduction kernels (lowering/core/slabs.py)
SHAPES: list[tuple[tuple[int, ...], tuple[int, ...], bool]] = [
    ((7,), (0,), False),  # short: one tree per output
    ((3, 50), (1,), False),  # a row over the lanes, with a tail
    ((50, 3), (0,), True),  # rows folded into lanes (inner 3), keepdims
    ((4, 37, 5), (-2,), False),  # negative axis, folded
    ((2, 3, 70), (0, 2), False),  # non-adjacent axes: two stages
    ((5, 130), (0,), False),  # column chunks, the last one narrower
    ((2, 3, 4), (0, 1, 2), False),  # every axis: rank 0
    ((6, 5, 4), (), False),  # empty axes reduce nothing
    ((1, 300, 1), (1,), True),  # unit axes
    ((3, 1000), (-1,), False),  # several blocks and stack levels
    ((0, 4), (1,), False),  # empty result
    ((3, 0, 4), (1,), False),  # zero-size reduced axis: the identity (not max/min)
    ((40, 300), (0,), False),  # wide column chunks, the last one overlapping the one before
]
# the shape cases each op runs for the core types (sums see every path; the others a cover of them)
OP_SHAPES = {
    "reduce_sum": tuple(range(len(SHAPES))),
    "reduce_mean": (0, 2, 4, 6, 11),
    "reduce_prod": (1, 3, 5, 8, 12),
    "reduce_max": (2, 4, 9, 12),
    "reduce_min": (1, 5, 7),
}
SUBSET = (0, 3, 4, 5, 9, 11)  # for the other types
LONG = [((140000,), (0,), False), ((40000, 7), (0,), False)]  # split into parts across threads: two stages


def kinds(name: str) -> str:
    return "complex" if name in COMPLEX else "float" if name in FLOATS else "int"


def accumulator_eps(name: str) -> float:
    return {"f64": 2.0**-53, "complex<f64>": 2.0**-53}.get(name, 2.0**-24)


def half_ulp(ref: np.ndarray, name: str) -> np.ndarray:
    """Half an ulp of the result type at |ref| (at least half its smallest subnormal)."""
    part = {"complex<f32>": np.float32, "complex<f64>": np.float64}.get(name, TYPES[name])
    info = ml_dtypes.finfo(part)
    return np.maximum(np.abs(ref) * float(info.eps), float(info.smallest_subnormal)) / 2


def wide(x: np.ndarray) -> np.ndarray:
    """float64 / complex128 / int64 (uint64 for unsigned, so ui64 stays exact) copy of x."""
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind == "u":
        return x.astype(np.uint64)
    if x.dtype.kind in "ib":
        return x.astype(np.int64)
    return x.astype(np.float32 if x.dtype == BF16 else x.dtype).astype(np.float64)


def close(got: np.ndarray, ref: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """Per element: both NaN, equal (infinities), or within tol (per component for complex)."""
    if ref.dtype.kind == "c":
        g = got.astype(np.complex128)
        return close(g.real, ref.real, tol) & close(g.imag, ref.imag, tol)
    g = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return (np.isnan(g) & np.isnan(ref)) | (g == ref) | (np.abs(g - ref) <= tol)


@dataclass
class Case:
    op: str
    x: np.ndarray
    attrs: str
    out_shape: tuple[int, ...]
    out_type: str
    check: Callable[[np.ndarray], np.ndarray]
    """got -> boolean mask of the elements that are right"""


def run(cases: Sequence[Case], threads: int = 0) -> list[str]:
    """Compile all cases as one module, run, and describe every wrong case."""
    args, lines, results = [], [], []
    for k, c in enumerate(cases):
        src = ttype(c.x.shape, NAME[c.x.dtype])
        dst = ttype(c.out_shape, c.out_type)
        args.append(f"%x{k}: {src}")
        lines.append(f"  %r{k} = rlx.{c.op} %x{k} {{{c.attrs}}} : ({src}) -> {dst}")
        results.append((f"%r{k}", dst))
    text = (
        f"func.func @f({', '.join(args)}) -> ({', '.join(t for _, t in results)}) {{\n"
        + "\n".join(lines)
        + f"\n  func.return {', '.join(n for n, _ in results)} : {', '.join(t for _, t in results)}\n}}\n"
    )
    exe = rlx.compile(text, threads=threads) if threads else compile_text(text)
    failures = []
    for c, got in zip(cases, exe(*[c.x for c in cases])):
        ok = c.check(got)
        if got.shape != c.out_shape or not np.all(ok):
            bad = np.argwhere(~np.asarray(ok))[:3].tolist()
            failures.append(f"rlx.{c.op} {c.x.shape} {{{c.attrs}}}: wrong at {bad}\n  got {got!r}")
    return failures


NAME = {v: k for k, v in TYPES.items()}


def normalized(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(a % len(shape) for a in axes)) if shape else ()


def out_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple[int, ...]:
    axes = normalized(shape, axes)
    if keepdims:
        return tuple(1 if a in axes else n for a, n in enumerate(shape))
    return tuple(n for a, n in enumerate(shape) if a not in axes)


# ---------------------------------------------------------------------------
# reduce_*: references and cases
# ---------------------------------------------------------------------------


def reduce_case(op: str, x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> Case:
    name = NAME[x.dtype]
    ax = normalized(x.shape, axes)
    n = math.prod(x.shape[a] for a in ax)
    x64 = wide(x)
    attrs = f"axes = {arr(axes)}, keepdims = {str(keepdims).lower()}"
    shape = out_shape(x.shape, axes, keepdims)

    def np_reduce(f: Callable, values: np.ndarray, **kw) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(f(values, axis=ax, keepdims=keepdims, **kw)).reshape(shape)

    if kinds(name) == "int":
        if op in ("reduce_sum", "reduce_prod"):
            f = np.sum if op == "reduce_sum" else np.prod
            want = np_reduce(f, x, dtype=x.dtype)
        else:
            want = np_reduce(np.max if op == "reduce_max" else np.min, x)
        return Case(op, x, attrs, shape, name, lambda got: got == want)
    if op in ("reduce_max", "reduce_min"):
        want = np_reduce(np.max if op == "reduce_max" else np.min, x64)
        return Case(op, x, attrs, shape, name, lambda got: close(got, want, np.zeros(shape)))
    eps = accumulator_eps(name)
    magnitude = np.abs(x64.real) + np.abs(x64.imag) if x64.dtype.kind == "c" else np.abs(x64)
    if op == "reduce_prod":
        want = np_reduce(np.prod, x64)
        scale = np_reduce(np.prod, np.abs(x64))
        tol = (n + 4) * eps * 2 * scale + half_ulp(scale, name)
    else:
        want = np_reduce(np.sum, x64)
        depth = math.log2(max(n, 1)) + 8
        tol = depth * eps * np_reduce(np.sum, magnitude)
        if op == "reduce_mean":
            want, tol = want / n if n else want * np.nan, tol / max(n, 1)
        tol = tol + half_ulp(want, name)
    with np.errstate(all="ignore"):
        rounded = want.astype(x.dtype).astype(want.dtype)  # what the exact value rounds to (inf on overflow)
    return Case(op, x, attrs, shape, name, lambda got: close(got, want, tol) | close(got, rounded, np.zeros(shape)))


def factors(shape: tuple[int, ...], name: str, seed: int) -> np.ndarray:
    """Values whose products of 1000 stay finite: moduli in [0.8, 1.25], any sign or phase."""
    if kinds(name) == "int":
        return sample(shape, name, seed=seed, small=True)
    rng = np.random.default_rng(seed)
    size = rng.uniform(0.8, 1.25, shape)
    phase = rng.uniform(-np.pi, np.pi, shape) if name in COMPLEX else np.pi * rng.integers(0, 2, shape)
    return (size * np.exp(1j * phase) if name in COMPLEX else size * np.cos(phase)).astype(TYPES[name])


REDUCE_TYPES = {
    "reduce_sum": NUMERIC,
    "reduce_mean": (*FLOATS, *COMPLEX),
    "reduce_prod": NUMERIC,
    "reduce_max": REALS,
    "reduce_min": REALS,
}
REDUCE_OPS = tuple(REDUCE_TYPES)


@pytest.mark.parametrize("name", NUMERIC)
def test_reduce_ops_match_numpy(name: str) -> None:
    cases = []
    for op, types in REDUCE_TYPES.items():
        if name not in types:
            continue
        chosen = OP_SHAPES[op] if name in CORE_TYPES else SUBSET[: 6 if op == "reduce_sum" else 2]
        for k in chosen:
            shape, axes, keepdims = SHAPES[k]
            zero_axis = any(shape[a] == 0 for a in normalized(shape, axes))
            if zero_axis and op in ("reduce_max", "reduce_min"):
                continue
            specials = op in ("reduce_max", "reduce_min")
            x = factors(shape, name, k) if op == "reduce_prod" else sample(shape, name, seed=k, specials=specials)
            cases.append(reduce_case(op, x, axes, keepdims))
    assert not (failures := run(cases)), "\n".join(failures)


@pytest.mark.parametrize("name", ("f32", "f16", "i32", "complex<f32>"))
def test_long_reductions_split_across_threads(name: str) -> None:
    cases = [
        reduce_case(op, sample(shape, name, seed=k, specials=False), axes, keepdims)
        for k, (shape, axes, keepdims) in enumerate(LONG)
        for op in ("reduce_sum", "reduce_mean")
        if name in REDUCE_TYPES[op]
    ]
    assert not (failures := run(cases, threads=2)), "\n".join(failures)


Call = tuple[str, np.ndarray, str, tuple[int, ...], str]
"""(op, input, attrs, result shape, result type) of one op application"""


def apply(calls: Sequence[Call], threads: int = 0) -> list[np.ndarray]:
    """Every call in one compiled module; their results."""
    got: list[np.ndarray] = []
    run([Case(*call, lambda g: got.append(g) or np.True_) for call in calls], threads)
    return got


def reducing(op: str, x: np.ndarray, axes: Sequence[int], keepdims: bool = False) -> Call:
    attrs = f"axes = {arr(axes)}, keepdims = {str(keepdims).lower()}"
    return op, x, attrs, out_shape(x.shape, axes, keepdims), NAME[x.dtype]


def test_nan_and_infinities_propagate() -> None:
    calls = []
    for n in (7, 100, 5000):  # short, a row over the lanes, several blocks
        x = np.ones((4, n), np.float32)
        x[0, n // 2] = np.nan
        x[1, 1], x[1, n - 1] = np.inf, -np.inf
        x[2, 3] = np.inf
        calls += [reducing(op, x, [1]) for op in REDUCE_OPS]
    nan, inf = np.nan, np.inf
    want = [[nan, nan, inf, 1], [nan, nan, inf, 1], [nan, -inf, inf, 1], [nan, inf, inf, 1], [nan, -inf, 1, 1]]
    for k, got in enumerate(apply(calls)):
        if k % 5 < 2:  # sums: the finite row is n (mean 1)
            assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == inf and np.isfinite(got[3]), (k, got)
        else:
            np.testing.assert_array_equal(got, want[k % 5])


def test_sum_keeps_negative_zero() -> None:
    for n, got in zip(
        (5, 300),
        apply([reducing("reduce_sum", np.full((2, n), -0.0, np.float32) * [[1], [-1]], [1]) for n in (5, 300)]),
    ):
        assert np.signbit(got[0]) and not np.signbit(got[1]), (n, got)


def test_zero_size_axis_gives_the_identity() -> None:
    names = ("f32", "f16", "i32", "complex<f64>")
    calls = [
        reducing(op, np.zeros((3, 0, 2), TYPES[name]), [1]) for name in names for op in ("reduce_sum", "reduce_prod")
    ]
    calls += [reducing("reduce_mean", np.zeros((0, 4), TYPES[name]), [0]) for name in ("f32", "bf16", "complex<f32>")]
    got = apply(calls)
    for total, product in zip(got[0:8:2], got[1:8:2]):
        assert total.shape == (3, 2) and np.all(total == 0) and not np.any(np.signbit(total.real)), total
        assert np.all(product == 1), product
    assert all(np.all(np.isnan(mean)) for mean in got[8:])


def test_integer_sums_and_products_wrap() -> None:
    x8, u8, i32 = np.full((2, 300), 100, np.int8), np.full((300,), 255, np.uint8), np.full((1000,), 2**30, np.int32)
    threes = np.full((40,), 3, np.int64)
    calls = [
        reducing("reduce_sum", x8, [1]),
        reducing("reduce_sum", u8, [0]),
        reducing("reduce_sum", i32, [0]),
        reducing("reduce_prod", threes, [0]),
    ]
    got = apply(calls)
    np.testing.assert_array_equal(got[0], np.sum(x8, axis=1, dtype=np.int8))
    assert got[1] == np.uint8(300 * 255 % 256) and got[2] == 0 and got[3] == np.prod(threes)


def test_f16_and_bf16_accumulate_in_f32() -> None:
    """Rounded once: the sum of 4096 values in [0, 1) is the exact sum rounded to the
    type (the f32 accumulator's error is ~1e-3 of the result's half ulp). Rounding
    partial sums to f16 or bf16 instead is off by several ulps."""
    rng = np.random.default_rng(16)
    calls, wants = [], []
    for dtype in (np.float16, ml_dtypes.bfloat16):
        x = rng.random((8, 4096)).astype(dtype)
        total = x.astype(np.float64).sum(axis=1)
        calls += [reducing("reduce_sum", x, [1]), reducing("reduce_mean", x, [1])]
        wants += [total.astype(dtype), (total / 4096).astype(dtype)]
    for got, want in zip(apply(calls), wants):
        np.testing.assert_array_equal(got, want)


def test_results_do_not_depend_on_the_thread_count() -> None:
    x = sample((300, 4000), "f32", specials=False)
    calls = [
        reducing(op, x, axes)
        for op, axes in (("reduce_sum", [1]), ("reduce_sum", [0, 1]), ("reduce_prod", [0]), ("reduce_max", [0, 1]))
    ]
    calls.append(("softmax", x, "axis = -1 : i64", x.shape, "f32"))
    for one, two in zip(apply(calls, threads=1), apply(calls, threads=2)):
        assert one.tobytes() == two.tobytes()


PART, SPLIT = rd.PART_ELEMENTS, rd.SPLIT_MIN_ELEMENTS
FULL = [  # (shape, axes): reductions to one value, split into parts from SPLIT elements on
    ((SPLIT - 1,), (0,)),  # just below: one work item
    ((SPLIT,), (0,)),  # just above: two parts
    ((4 * PART + 12345,), (0,)),  # a shorter last part
    ((1000, 300), (0, 1)),  # 218 rows a part, the last 128
    ((3, PART + 7), (1, 0)),  # rows longer than a part: one row each
    ((1, 70, 4000, 1), (0, 1, 2)),  # unit axes; keepdims below
]


@pytest.mark.parametrize("name", ("f32", "f64", "f16"))
def test_full_reductions_do_not_depend_on_the_thread_count(name: str) -> None:
    """Large reductions to one value are cut into parts of a fixed size that the
    threads share, then combined in order: each op equals the float64 reference
    within the usual tolerance, and the bytes are the same with 1 and 2 threads.
    Each split (a shape of `FULL`) runs three of the five ops, in turn: how a shape
    is split does not depend on the op, and each op combines parts on three or four
    of the shapes, at least two of them split."""
    cases = []
    for k, (shape, axes) in enumerate(FULL):
        for op in (REDUCE_OPS[(k + j) % len(REDUCE_OPS)] for j in range(3)):
            if op == "reduce_prod":  # near 1, either sign: the product stays finite
                rng = np.random.default_rng(k)
                x = ((1 + rng.uniform(-1e-3, 1e-3, shape)) * rng.choice([-1, 1], shape)).astype(TYPES[name])
            else:
                x = sample(shape, name, seed=k, specials=False)
            cases.append(reduce_case(op, x, axes, keepdims=k == len(FULL) - 1))
    assert not (failures := run(cases, threads=1)), "\n".join(failures)
    assert not (failures := run(cases, threads=2)), "\n".join(failures)
    calls = [(c.op, c.x, c.attrs, c.out_shape, c.out_type) for c in cases]
    for case, one, two in zip(cases, apply(calls, threads=1), apply(calls, threads=2)):
        assert one.tobytes() == two.tobytes(), (case.op, case.x.shape, one, two)


@pytest.mark.target_independent
def test_full_reduction_splits_only_from_the_threshold() -> None:
    """The split is a function of the shape alone: parts of PART elements along
    the outermost reduced axis of extent > 1, from SPLIT elements on."""
    assert rd.full_reduction_split((SPLIT - 1,), (0,)) is None
    assert rd.full_reduction_split((2, SPLIT), (1,)) is None  # one value per row: not a full reduction
    assert rd.full_reduction_split((SPLIT,), (0,)) == rd.Split(0, PART, 2)
    assert rd.full_reduction_split((1, 1000, 300), (0, 1, 2)) == rd.Split(1, PART // 300, 5)
    assert rd.full_reduction_split((3, PART + 7), (0, 1)) == rd.Split(0, 1, 3)
    assert rd.full_reduction_split((10**12,), (0,)) == rd.Split(0, -(-(10**12) // rd.MAX_PARTS), rd.MAX_PARTS)


@pytest.mark.parametrize("n", [10**9, 10**12])
def test_a_broadcast_splat_stays_one_value(n: int) -> None:
    """Issue 22: reduce_sum of a splat constant of 10^9 or 10^12 elements: the splat
    is one value, the broadcast a read of it in the reduction's map (fuse-reductions
    makes the reduce a region, canonicalize-broadcast folds the expand), so the arena
    holds the scalar and at most MAX_PARTS partials, and compiling takes well under
    a second (nothing of size n is ever made). The 10^9 sum runs: it is exact."""
    text = f"""func.func @f() -> tensor<f32> {{
  %c = rlx.constant dense<1.0> : tensor<{n}xf32>
  %s = rlx.reduce_sum %c {{axes = array<i64: 0>}} : (tensor<{n}xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}}"""
    exe = rlx.compile(text)
    assert exe.memory_plan.arena_size <= 64 + rd.MAX_PARTS * 8
    assert "rlx.expand" not in exe.planned_ir
    if n == 10**9:
        assert exe()[0] == np.float32(n)


@pytest.mark.slow
def test_sum_2_24_f32_accuracy() -> None:
    """Issue 8: an f32 sum of 2^24 elements is no worse than 2x NumPy's pairwise
    np.sum against float64. Both errors are random walks, so one array's ratio
    swings either way (0.1x to 3x over seeds): the test compares the RMS error over
    8 normal arrays, and on values in [0, 1) - where a serial or blocked sum drifts
    by hundreds - the error itself, with half an ulp of the result as the floor
    (both end with one rounding to f32)."""
    n = 1 << 24
    exe = rlx.compile(
        f"""func.func @f(%x: tensor<{n}xf32>) -> tensor<f32> {{
          %s = rlx.reduce_sum %x {{axes = array<i64: 0>, keepdims = false}} : (tensor<{n}xf32>) -> tensor<f32>
          func.return %s : tensor<f32>
        }}"""
    )

    def errors(x: np.ndarray) -> tuple[float, float]:
        exact = np.sum(x, dtype=np.float64)  # its own error is ~1e-16 relative
        return abs(float(exe(x)[0]) - exact), abs(float(np.sum(x)) - exact)

    normal = [errors(np.random.default_rng(seed).standard_normal(n, dtype=np.float32)) for seed in range(8)]
    ours, numpy = (math.sqrt(np.mean(np.square(e))) for e in zip(*normal))
    assert ours <= 2 * numpy, (ours, numpy)
    x = np.random.default_rng(24).random(n, dtype=np.float32)
    ours, numpy = errors(x)
    assert ours <= 2 * max(numpy, float(np.spacing(np.float32(np.sum(x, dtype=np.float64)))) / 2), (ours, numpy)


# ---------------------------------------------------------------------------
# argmax / argmin
# ---------------------------------------------------------------------------


def ref_arg(x: np.ndarray, axis: int, maximum: bool, last: bool) -> np.ndarray:
    """np.argmax/argmin; with select_last the last of equal extremes, but still the first NaN."""
    x = wide(x)
    pick = np.argmax if maximum else np.argmin
    first = pick(x, axis=axis)
    if not last:
        return first
    has_nan = np.isnan(x).any(axis=axis) if x.dtype.kind == "f" else np.zeros(first.shape, bool)
    return np.where(has_nan, first, x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis))


ARG_SHAPES = [
    ((7,), 0),
    ((3, 50), 1),
    ((50, 3), 0),
    ((4, 37, 5), -2),
    ((40, 300), 0),
    ((3, 1000), -1),
    ((0, 4), 1),
    ((2, 40, 20), 2),
    ((5, 130), 0),
]


def arg_case(op: str, x: np.ndarray, axis: int, keepdims: bool, last: bool) -> Case:
    want = ref_arg(x, axis, op == "argmax", last)
    shape = out_shape(x.shape, [axis], keepdims)
    attrs = f"axis = {axis} : i64, keepdims = {str(keepdims).lower()}, select_last_index = {str(last).lower()}"
    return Case(op, x, attrs, shape, "i64", lambda got: got == want.reshape(shape))


def ties(shape: tuple[int, ...], name: str, seed: int) -> np.ndarray:
    """Few distinct values (many ties), some NaN for floats."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, shape).astype(np.float64)
    if name in FLOATS:
        x[rng.random(shape) < 0.02] = np.nan
        x[rng.random(shape) < 0.05] = -np.inf
    return x.astype(TYPES[name])


@pytest.mark.parametrize("name", REALS)
def test_argmax_argmin_match_numpy(name: str) -> None:
    cases = []
    shapes = ARG_SHAPES if name in CORE_TYPES else ARG_SHAPES[::3]
    for k, (shape, axis) in enumerate(shapes):
        last = k % 2 == 1
        cases.append(arg_case("argmax", ties(shape, name, k), axis, k % 3 == 0, last))
        cases.append(arg_case("argmin", ties(shape, name, k + 1), axis, False, not last))
        if k % 2 == 0:
            cases.append(arg_case("argmax" if k % 4 else "argmin", sample(shape, name, seed=k), axis, False, False))
    assert not (failures := run(cases)), "\n".join(failures)


def test_argmax_nan_and_tie_rules() -> None:
    nan = np.nan
    rows = np.array([[1, 3, 3, 2], [1, nan, 3, nan], [-np.inf, -np.inf, -np.inf, -np.inf], [2, 2, 2, 2]], np.float32)
    attrs = "axis = 1 : i64, keepdims = false, select_last_index = {}"
    calls = []
    for n in (4, 100):  # short, and over the lanes
        x = np.repeat(rows, n // 4, axis=1)
        calls += [
            ("argmax", x, attrs.format("false"), (4,), "i64"),
            ("argmax", x, attrs.format("true"), (4,), "i64"),
            ("argmin", x, attrs.format("true"), (4,), "i64"),
        ]
    got = apply(calls)
    for n, (first, last, last_min) in zip((4, 100), (got[:3], got[3:])):
        k = n // 4
        np.testing.assert_array_equal(first, [k, k, 0, 0])
        np.testing.assert_array_equal(last, [3 * k - 1, k, n - 1, n - 1])
        np.testing.assert_array_equal(last_min, [k - 1, k, n - 1, n - 1])


# ---------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------


def softmax_case(op: str, x: np.ndarray, axis: int) -> Case:
    name = NAME[x.dtype]
    x64 = wide(x)
    with np.errstate(all="ignore"):
        top = np.max(x64, axis=axis, keepdims=True)
        shifted = x64 - top
        s = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        want = np.exp(shifted) / s if op == "softmax" else shifted - np.log(s)
        eps = 2.0**-53 if name == "f64" else 2.0**-24
        size = np.where(np.isfinite(shifted), np.abs(shifted), 0)
        n = x.shape[axis]
        rounding = 8 + 2 * math.log2(max(n, 1)) + n / 8  # exps, then s: a tree per block, blocks in order
        if op == "softmax":  # exp(x - max) * (1/s), 1/s <= 1: two ulps where the result is subnormal
            part = np.float32 if name in ("f16", "bf16") else TYPES[name]
            tol = eps * (rounding + 2 * size) * np.abs(want) + 2 * float(ml_dtypes.finfo(part).smallest_subnormal)
        else:
            tol = eps * (rounding + 2 * size + 2 * np.abs(np.log(s)))
        tol = np.nan_to_num(tol) + half_ulp(np.nan_to_num(want), name)
    return Case(op, x, f"axis = {axis} : i64", x.shape, name, lambda got: close(got, want, tol))


SOFTMAX_SHAPES = [
    ((7,), 0),
    ((3, 50), 1),
    ((50, 3), 0),
    ((4, 37, 5), -2),
    ((40, 300), 0),
    ((3, 1000), -1),
    ((0, 4), 1),
    ((2, 300, 40), 1),
    ((5, 130), 0),
]


@pytest.mark.parametrize("name", FLOATS)
def test_softmax_matches_numpy(name: str) -> None:
    """The ops alternate over the shapes; f32 runs both on three of them."""
    ops = ("softmax", "log_softmax")
    cases = [
        softmax_case(op, sample(shape, name, seed=k, specials=False), axis)
        for k, (shape, axis) in enumerate(SOFTMAX_SHAPES)
        for op in (ops if name == "f32" and k in (1, 3, 5) else ops[k % 2 :][:1])
    ]
    # a maximum that keeps growing along the row (and one that shrinks)
    ramp = np.linspace(-300, 300, 4000).astype(TYPES[name]).reshape(2, 2000)
    cases += [softmax_case("softmax", ramp, -1), softmax_case("log_softmax", ramp[:, ::-1].copy(), -1)]
    assert not (failures := run(cases)), "\n".join(failures)


def test_softmax_special_rows() -> None:
    """All -inf gives NaN (as PyTorch); -inf entries give 0 (log: -inf); +inf or NaN make the row NaN."""
    cases, inputs = [], []
    for n, axis in ((5, 1), (100, 1), (100, 0)):  # short, over the lanes, column chunks
        rows = np.zeros((5, n), np.float32) + np.linspace(-3, 3, n, dtype=np.float32)
        rows[0] = -np.inf
        rows[1, ::2] = -np.inf
        rows[2, n // 2] = np.inf
        rows[3, n - 1] = np.nan
        x = rows if axis == 1 else np.ascontiguousarray(rows.T)
        cases += [softmax_case(op, x, axis) for op in ("softmax", "log_softmax")]
        inputs.append((x, axis))
    assert not (failures := run(cases)), "\n".join(failures)
    outputs = apply([("softmax", x, f"axis = {axis} : i64", x.shape, "f32") for x, axis in inputs])
    for (_, axis), got in zip(inputs, outputs):
        got = got if axis == 1 else got.T
        assert np.all(np.isnan(got[[0, 2, 3]])) and np.all(got[1, ::2] == 0) and np.all(np.isfinite(got[4]))


# ---------------------------------------------------------------------------
# plan and builder
# ---------------------------------------------------------------------------


def test_f16_sum_accumulates_in_f32() -> None:
    n = 1 << 18
    exe = rlx.compile(
        f"""func.func @f(%x: tensor<{n}xf16>) -> tensor<f16> {{
          %s = rlx.reduce_sum %x {{axes = array<i64: 0>, keepdims = false}} : (tensor<{n}xf16>) -> tensor<f16>
          func.return %s : tensor<f16>
        }}"""
    )
    x = np.full(n, 2.0**-8, np.float16)  # an f16 accumulator would stall at 8
    assert exe(x)[0] == 1024


def test_builder_reductions_match_numpy() -> None:
    b = rlx.Builder("reductions")
    x = b.input((4, 6))
    b.output(
        b.reduce_sum(x, [1]),
        b.reduce_mean(x, [0], keepdims=True),
        b.reduce_prod(x),
        b.reduce_max(x, [-1]),
        b.reduce_min(x, [0, 1]),
        b.argmax(x, 1),
        b.argmin(x, 0, keepdims=True, select_last_index=True),
        b.softmax(x),
        b.log_softmax(x, axis=0),
    )
    xv = (np.arange(24, dtype=np.float32).reshape(4, 6) - 7) / 4
    got = rlx.compile(b.module())(xv)
    x64 = xv.astype(np.float64)
    np.testing.assert_allclose(got[0], x64.sum(1), rtol=1e-6)
    np.testing.assert_allclose(got[1], x64.mean(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(got[2], x64.prod(), rtol=1e-5)
    np.testing.assert_array_equal(got[3], xv.max(-1))
    np.testing.assert_array_equal(got[4], xv.min())
    np.testing.assert_array_equal(got[5], xv.argmax(1))
    np.testing.assert_array_equal(got[6], xv.argmin(0)[None])
    e = np.exp(x64 - x64.max(-1, keepdims=True))
    np.testing.assert_allclose(got[7], e / e.sum(-1, keepdims=True), rtol=1e-6)
    shifted = x64 - x64.max(0)
    np.testing.assert_allclose(got[8], shifted - np.log(np.exp(shifted).sum(0)), rtol=1e-6, atol=1e-6)
