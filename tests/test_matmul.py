"""rlx.matmul against NumPy on every element type it accepts.

The reference is np.matmul on the inputs widened to float64 / complex128
(exact inputs, so it is the exact product up to float64 rounding); integers
are compared exactly with np.matmul in their own type, whose arithmetic wraps
like the kernel's. Tolerance, per element, with K the contracting dimension,
u the unit roundoff of the type the product is computed in (f32 for f16 and
bf16) and u_out that of the stored type:

    |got - ref| <= 4·K·u·(|A| @ |B|) + u_out·|ref| + tiny_out

the textbook GEMM bound K·u·|A||B| with room for the complex products and
any summation order, plus the one final rounding of f16/bf16 (tiny_out,
half the smallest subnormal, covers that rounding in the subnormal range). A product
accumulated in f16 or bf16 instead of f32 would miss it by orders of
magnitude.

Shapes cover the three kernels of each real type (the emitted tile kernel
below M·N·K = 2^18, the packed-panel kernel above it for a K x tile panel
within `Tuning.gemm_panel_max_bytes`, BLAS for longer K), batch broadcasting
(one folded GEMM, a loop with stride-0 operands), 1-D operands, 1xN / Nx1 /
K = 1, zero-size dimensions, stored transposes (flags, and rlx.transpose
folded by canonicalize-broadcast), 1 vs 2 threads, and the AVX2 target's
narrower tiles (x86-64-v3: 6 rows x two 256-bit vectors).
"""

from __future__ import annotations

import ctypes
import math
import subprocess
import sys
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import pytest
from closeness import assert_close

import rlx_mlir as rlx
from rlx_mlir import blas
from rlx_mlir.builder import Builder
from rlx_mlir.tuning import Tuning

TYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}
INTS = ("i32", "i64")
UNIT_ROUNDOFF = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
HALF_SUBNORMAL = {"f16": 2.0**-25, "bf16": 2.0**-134}
COMPUTED_IN = {"f16": "f32", "bf16": "f32", "complex<f32>": "f32", "complex<f64>": "f64"}

Case = tuple[tuple[int, ...], tuple[int, ...], bool, bool]  # lhs shape, rhs shape, transpose_lhs, transpose_rhs


def sample(shape: Sequence[int], t: str, seed: int) -> np.ndarray:
    """Random values; integers over the whole range, so products and sums wrap."""
    rng = np.random.default_rng(seed)
    dtype = TYPES[t]
    if t in INTS:
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def stored(x: np.ndarray, transposed: bool) -> np.ndarray:
    """The matrix an operand holds when its last two axes are stored swapped."""
    return np.swapaxes(x, -1, -2) if transposed else x


def reference(a: np.ndarray, b: np.ndarray, tl: bool, tr: bool, t: str) -> np.ndarray:
    if t in INTS:
        return np.matmul(stored(a, tl), stored(b, tr))
    wide = np.complex128 if TYPES[t].kind == "c" else np.float64
    return np.matmul(stored(a, tl).astype(wide), stored(b, tr).astype(wide))


def assert_matmul_close(
    got: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    tl: bool,
    tr: bool,
    t: str,
    then: Callable[[np.ndarray], np.ndarray] = lambda x: x,
) -> None:
    """`got` within the bound of op(a) · op(b), or of `then` of it: an exact
    epilogue that moves no two values further apart (relu), so the bound holds."""
    want = then(reference(a, b, tl, tr, t))
    assert got.dtype == TYPES[t] and got.shape == want.shape
    if t in INTS:
        np.testing.assert_array_equal(got, want)
        return
    k = stored(a, tl).shape[-1]
    scale = np.matmul(np.abs(stored(a, tl)).astype(np.float64), np.abs(stored(b, tr)).astype(np.float64))
    u = UNIT_ROUNDOFF[COMPUTED_IN.get(t, t)]
    u_out = UNIT_ROUNDOFF.get(t, 0.0)
    assert_close(got, want, rtol=u_out, atol=4 * k * u * scale + HALF_SUBNORMAL.get(t, 0.0), what=t)


def build(cases: Sequence[Case], t: str) -> Builder:
    b = Builder("mm")
    results = []
    for lhs, rhs, tl, tr in cases:
        results.append(b.matmul(b.input(lhs, t), b.input(rhs, t), tl, tr))
    b.output(*results)
    return b


def run(cases: Sequence[Case], t: str, threads: int = 0, target: str | None = None) -> rlx.runtime.Executable:
    """Compile all cases as one function (compiling is the slow part) and check each result."""
    exe = rlx.compile(build(cases, t).module(), threads=threads, target=target)
    arrays = [sample(shape, t, seed) for seed, case in enumerate(cases) for shape in case[:2]]
    results = exe(*arrays)
    for k, (case, got) in enumerate(zip(cases, results)):
        assert_matmul_close(got, arrays[2 * k], arrays[2 * k + 1], case[2], case[3], t)
    return exe


# ---------------------------------------------------------------------------
# every type
# ---------------------------------------------------------------------------

EVERY_TYPE_CASES: list[Case] = [
    ((3, 5), (5, 4), False, False),  # tiny: a tail tile of 3 rows x 4 columns
    ((2, 1, 9, 17), (3, 17, 33), False, False),  # broadcast batch; tail rows and columns
    ((4, 9, 5), (4, 7, 5), False, True),  # small with a transposed rhs (real: packed panels; complex: BLAS)
    ((70, 90), (90, 50), False, False),  # M·N·K = 315000 > 2^18: packed panels (complex: one BLAS call)
    ((2, 90, 70), (50, 90), True, True),  # both transposed, lhs batch not foldable
    ((3, 40, 64), (64, 120), False, False),  # lhs batch folded into M = 120
    ((12, 4200), (4200, 20), False, False),  # K x tile panel > gemm_panel_max_bytes: one BLAS call for every type
]


@pytest.mark.parametrize("t", list(TYPES))
def test_every_type_against_numpy(t: str) -> None:
    run(EVERY_TYPE_CASES, t)


@pytest.mark.parametrize("t", INTS)
def test_integer_products_wrap(t: str) -> None:
    """Full-range integers: nearly every product and sum overflows; the result is the wrapped one."""
    a, b = sample((4, 6), t, 1), sample((6, 5), t, 2)
    exe = rlx.compile(build([((4, 6), (6, 5), False, False)], t).module())
    (got,) = exe(a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))
    wide = np.matmul(a.astype(object), b.astype(object))
    assert np.any(got.astype(object) != wide), "the test values must overflow"


# ---------------------------------------------------------------------------
# shapes
# ---------------------------------------------------------------------------

BROADCAST_CASES: list[Case] = [
    ((2, 3, 4), (4, 5), False, False),  # rhs unbatched: folded
    ((3, 4), (2, 4, 5), False, False),  # lhs unbatched: lhs batch stride 0
    ((2, 1, 3, 4), (1, 5, 4, 6), False, False),  # both broadcast, on different axes
    ((1, 3, 4), (2, 1, 4, 5), False, False),  # ranks differ
    ((2, 1, 3, 4), (5, 6, 4), False, True),  # with a transposed rhs
    ((80, 70), (3, 70, 60), False, False),  # BLAS-sized loop, lhs broadcast (stride 0)
    ((3, 1, 60, 70), (2, 70, 80), False, False),  # BLAS-sized loop over a 3 x 2 batch
]


@pytest.mark.parametrize("t", ["f32", "complex<f64>", "i32"])
def test_batch_broadcasting(t: str) -> None:
    run(BROADCAST_CASES, t)


VECTOR_CASES: list[Case] = [
    ((7,), (7,), False, False),  # dot product: a 0-d result
    ((7,), (7, 5), False, False),  # row vector
    ((6, 7), (7,), False, False),  # column vector
    ((7,), (3, 7, 5), False, False),  # 1-D lhs against a batch
    ((2, 6, 7), (7,), False, False),  # batch against a 1-D rhs
    ((7,), (5, 7), False, True),  # 1-D lhs, transposed rhs
    ((7, 6), (7,), True, False),  # transposed lhs, 1-D rhs
    ((300,), (300, 900), False, False),  # BLAS-sized row vector
    ((900, 300), (300,), False, False),  # BLAS-sized column vector
]


@pytest.mark.parametrize("t", ["f32", "f64", "complex<f32>", "i64"])
def test_one_dimensional_operands(t: str) -> None:
    run(VECTOR_CASES, t)


EDGE_CASES: list[Case] = [
    ((1, 9), (9, 40), False, False),  # 1 x N result
    ((40, 9), (9, 1), False, False),  # N x 1 result
    ((40, 1), (1, 33), False, False),  # K = 1: an outer product
    ((1, 1), (1, 1), False, False),
    ((1, 40), (40, 1), True, True),  # K = 1 with both flags
    ((1, 1000), (1000, 1), False, False),  # 1 x 1 result, long K
    ((1, 70), (70, 300), False, False),  # M = 1: tiles up to 8 vectors wide, whole ones and a rest
    ((3, 70), (70, 300), False, False),  # M = 3: 4 vectors wide
]


@pytest.mark.parametrize("t", ["f32", "f16", "complex<f32>", "i32"])
def test_thin_shapes(t: str) -> None:
    run(EDGE_CASES, t)


ZERO_CASES: list[Case] = [
    ((3, 0), (0, 4), False, False),  # K = 0: zeros
    ((70, 0), (50, 0), False, True),  # K = 0 with a transposed rhs: the packed-panel kernel
    ((0,), (0,), False, False),  # empty dot: 0
    ((2, 3, 0), (0, 5), False, False),  # K = 0 with a batch
    ((0, 3), (3, 4), False, False),  # M = 0: empty result
    ((3, 4), (4, 0), False, False),  # N = 0
    ((0, 3, 4), (4, 5), False, False),  # empty batch
    ((2, 0, 3, 4), (1, 4, 5), False, False),
]


@pytest.mark.parametrize("t", ["f32", "f64", "bf16", "complex<f64>", "i64"])
def test_zero_size_dimensions(t: str) -> None:
    """An empty sum is zero: results are written over out= buffers full of garbage."""
    exe = rlx.compile(build(ZERO_CASES, t).module())
    arrays = [sample(shape, t, 0) for case in ZERO_CASES for shape in case[:2]]
    garbage = 7 if t in INTS else np.nan
    outs = tuple(np.full(spec.shape, garbage, dtype=TYPES[t]) for spec in exe.outputs)
    results = exe(*arrays, out=outs)
    for k, got in enumerate(results):
        want = reference(arrays[2 * k], arrays[2 * k + 1], *ZERO_CASES[k][2:], t)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, np.zeros_like(got))


# ---------------------------------------------------------------------------
# stored transposes
# ---------------------------------------------------------------------------


def flagged(batch: tuple[int, ...], m: int, k: int, n: int, tl: bool, tr: bool) -> Case:
    """A (batch x) [m x k] @ [k x n] product with the flagged operands stored transposed."""
    return ((*batch, k, m) if tl else (*batch, m, k)), ((n, k) if tr else (k, n)), tl, tr


FLAG_CASES: list[Case] = [
    flagged(batch, m, k, n, tl, tr)
    for batch, m, k, n in [((), 11, 13, 21), ((2,), 70, 90, 50)]
    for tl in (False, True)
    for tr in (False, True)
]


@pytest.mark.parametrize("t", ["f32", "f64", "bf16", "complex<f32>", "complex<f64>", "i32"])
def test_transpose_flags(t: str) -> None:
    """All four flag combinations, small (tile kernel or per-entry BLAS) and BLAS-sized;
    complex flags are plain transposes, not conjugates."""
    run(FLAG_CASES, t)


@pytest.mark.parametrize("t", ["f32", "complex<f32>", "i64"])
def test_rlx_transpose_folds_into_the_flag(t: str) -> None:
    """`matmul(transpose(x), transpose(w))` with perms swapping the last two axes:
    canonicalize-broadcast sets both flags and no transpose is left to run; the
    graph with the transposes kept as copies (pipeline "") gives the same result."""
    b = Builder("folded")
    x, w = b.input((2, 40, 30), t), b.input((50, 40), t)
    b.output(b.matmul(b.transpose(x, [0, 2, 1]), b.transpose(w, [1, 0])))
    module = b.module()
    folded = rlx.compile(module)
    assert "rlx.transpose" not in folded.planned_ir
    assert "transpose_lhs = true, transpose_rhs = true" in folded.planned_ir
    copied = rlx.compile(module, pipeline="")
    assert "rlx.transpose" in copied.planned_ir
    a, c = sample((2, 40, 30), t, 3), sample((50, 40), t, 4)
    for exe in (folded, copied):
        (got,) = exe(a, c)
        assert_matmul_close(got, a, c, True, True, t)


# ---------------------------------------------------------------------------
# threads and the BLAS library
# ---------------------------------------------------------------------------

THREAD_CASES: list[Case] = [
    ((64, 4200), (4200, 48), False, False),  # one BLAS GEMM (K beyond the panels) in row blocks
    ((512, 16, 32), (512, 32, 16), False, False),  # real: tile kernel; complex: a cgemm per entry
    ((64, 32, 32), (64, 32, 32), False, True),  # a small BLAS call per batch entry
]


@pytest.mark.parametrize("t", ["f32", "complex<f32>", "i32"])
def test_one_and_two_threads_agree(t: str) -> None:
    """The entry splits every GEMM's work (row tiles, row blocks, batch entries,
    integer rows), cut the same way whatever the thread count, and a thread never
    splits a sum, so 1 and 2 threads are bit-identical."""
    arrays = [sample(shape, t, seed) for seed, case in enumerate(THREAD_CASES) for shape in case[:2]]
    results = []
    for threads in (1, 2):
        exe = rlx.compile(build(THREAD_CASES, t).module(), threads=threads)
        results.append(exe(*arrays))
    for k, (one, two) in enumerate(zip(*results)):
        a, b, (_, _, tl, tr) = arrays[2 * k], arrays[2 * k + 1], THREAD_CASES[k]
        np.testing.assert_array_equal(one, two)
        assert_matmul_close(one, a, b, tl, tr, t)
        assert_matmul_close(two, a, b, tl, tr, t)


@pytest.mark.parametrize("t", ["f32", "complex<f32>"])
def test_split_kernels_use_the_thread_launcher(t: str) -> None:
    """With 2 threads the entry splits every kernel across its threads: the batched
    ones (tile kernel or per-entry BLAS calls) and the large GEMM's row blocks,
    each block a single-threaded BLAS call; OpenBLAS is never asked for threads."""
    exe = rlx.compile(build(THREAD_CASES, t).module(), threads=2)
    for k in range(len(THREAD_CASES)):
        assert f"mm_k{k}_parallel" in exe.llvm_ir
    assert 'call void @"scipy_openblas_set_num_threads"(i32 1)' in exe.llvm_ir
    assert 'call void @"scipy_openblas_set_num_threads"(i32 2)' not in exe.llvm_ir


PANEL_CASES: list[Case] = [
    ((200, 64), (300, 64), False, True),  # ten column panels (the last 12 wide in f32), split by panel
    ((4000, 64), (64, 20), False, False),  # one panel: the rows are cut into blocks, one per unit
    ((3, 64, 120), (64, 40), True, False),  # a transposed lhs batch, not foldable
]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_packed_panel_kernel_splits_without_splitting_sums(t: str) -> None:
    """GEMMs above the in-place tiles run the packed-panel kernel: the entry splits
    its (entry, row block, panel) units across threads, each of which computes
    whole dot products, so 1 and 2 threads agree bit for bit, with no BLAS call."""
    arrays = [sample(shape, t, seed) for seed, case in enumerate(PANEL_CASES) for shape in case[:2]]
    results = []
    for threads in (1, 2):
        exe = rlx.compile(build(PANEL_CASES, t).module(), threads=threads)
        assert "gemm" not in exe.llvm_ir
        results.append(exe(*arrays))
    assert all(f"mm_k{k}_parallel" in exe.llvm_ir for k in range(2))
    for k, (one, two) in enumerate(zip(*results)):
        np.testing.assert_array_equal(one, two)
        tl, tr = PANEL_CASES[k][2:]
        assert_matmul_close(one, arrays[2 * k], arrays[2 * k + 1], tl, tr, t)


GROUP_CASES: list[Case] = [
    ((50, 96), (96, 150), False, False),  # ten panels or fewer, three to a unit: the tail panel alone in the last group
    ((50, 96), (150, 96), False, True),  # the same with a transposed rhs
    ((2, 20, 96), (96, 150), False, False),  # a batch folded into M = 40
]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_packed_panel_groups(t: str) -> None:
    """A unit of the packed-panel kernel packs as many panels as
    `gemm_panel_max_bytes` holds and crosses each row tile over all of them:
    with room for three, the groups end mid-matrix and the narrower tail panel
    is the last group's; 1 and 2 threads (row blocks) agree bit for bit."""
    tile_bytes = Tuning.for_target(rlx.target.target()).tile_bytes()
    overrides = {"gemm_panel_max_bytes": 3 * 96 * tile_bytes}
    arrays = [sample(shape, t, seed) for seed, case in enumerate(GROUP_CASES) for shape in case[:2]]
    results = []
    for threads in (1, 2):
        exe = rlx.compile(build(GROUP_CASES, t).module(), threads=threads, tuning=overrides, tune=False)
        assert "gemm" not in exe.llvm_ir
        results.append(exe(*arrays))
    for k, (one, two) in enumerate(zip(*results)):
        np.testing.assert_array_equal(one, two)
        tl, tr = GROUP_CASES[k][2:]
        assert_matmul_close(one, arrays[2 * k], arrays[2 * k + 1], tl, tr, t)


AVX2_CASES: list[Case] = [
    ((13, 40), (40, 29), False, False),  # tile kernel: two 6-row tiles and a 1-row tail, a full and a tail panel
    ((70, 90), (90, 50), False, False),  # packed panels: eleven 6-row tiles and a 4-row tail
    ((2, 30, 20), (35, 20), False, True),  # transposed rhs: packed panels over the folded batch (M = 60)
    ((12, 4200), (4200, 20), False, False),  # K beyond the panels: one BLAS call
]
WIDEST = {"f32": ("<8 x float>", "<16 x float>"), "f64": ("<4 x double>", "<8 x double>")}
"""The widest vector of an AVX2 build's tiles, and the AVX-512 one it must not use."""


@pytest.mark.target_independent
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_avx2_target_tiles_and_panels(t: str) -> None:
    """Compiled for x86-64-v3 (AVX2; it runs on an AVX-512 host too): register
    tiles of 6 rows x two 256-bit vectors, panels packed as wide as those
    tiles, and the same results within the same bound."""
    exe = run(AVX2_CASES, t, threads=2, target="x86-64-v3")
    assert (exe.tuning.gemm_tile_rows, exe.tuning.tile_bytes()) == (6, 64)
    widest, wider = WIDEST[t]
    assert widest in exe.llvm_ir and wider not in exe.llvm_ir
    assert exe.llvm_ir.count('call void @"scipy_cblas_') == 1  # only the long-K case calls BLAS


@pytest.mark.target_independent
def test_avx2_target_epilogues() -> None:
    """relu(x @ w) as `rlx.contraction_region`s at x86-64-v3, in f32 and f64: the
    tile kernel, the packed panels and the BLAS row blocks, each finished by the
    epilogue."""
    cases: list[tuple[Case, str]] = [
        (((37, 19), (19, 23), False, False), "f32"),  # tiles: six 6-row tiles and a 1-row tail
        (((130, 64), (64, 70), False, False), "f64"),  # packed panels of 8 doubles
        (((130, 64), (64, 70), False, False), "f32"),  # packed panels of 16 floats
        (((60, 4500), (4500, 40), False, False), "f32"),  # K beyond the panels: BLAS row blocks
    ]
    b = Builder("epilogue")
    b.output(*(b.relu(b.matmul(b.input(lhs, t), b.input(rhs, t))) for (lhs, rhs, _, _), t in cases))
    exe = rlx.compile(b.module(), threads=2, target="x86-64-v3")
    assert exe.planned_ir.count("= rlx.contraction_region") == len(cases)
    assert "<16 x float>" not in exe.llvm_ir and "<8 x double>" not in exe.llvm_ir
    assert exe.llvm_ir.count('call void @"scipy_cblas_') == 1  # only the long-K case calls BLAS
    arrays = [sample(shape, t, seed) for seed, (case, t) in enumerate(cases) for shape in case[:2]]
    for k, (got, (_, t)) in enumerate(zip(exe(*arrays), cases)):
        assert_matmul_close(got, arrays[2 * k], arrays[2 * k + 1], False, False, t, then=lambda x: np.maximum(x, 0))


@pytest.mark.target_independent
@pytest.mark.parametrize("tr", [False, True], ids=["plain", "transposed"])
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_avx2_target_loop_weights(t: str, tr: bool) -> None:
    """A loop packs a weight its body's matmul reads (before the loop, in one
    kernel) and the body's tiles read the panels (in another): at x86-64-v3
    both use the AVX2 tile's width. Each step is h @ op(W) on the carry, 13
    rows (two 6-row tiles and a tail) by 40 columns (full panels, in f32 a
    narrower one), checked against the step's own input."""
    length, rows, n = 3, 13, 40
    b = Builder("loop")
    h0, w, xs = b.input((rows, n), t), b.input((n, n), t), b.input((length, 1), t)
    b.output(b.scan(h0, lambda b, h, w, x: b.matmul(h, w, transpose_rhs=tr), [xs], [w], save_trajectory=True))
    exe = rlx.compile(b.module(), threads=2, target="x86-64-v3")
    assert "_pack" in exe.llvm_ir and "gemm" not in exe.llvm_ir  # the tiles read the packed panels
    hv, wv, xv = sample((rows, n), t, 0), sample((n, n), t, 1), sample((length, 1), t, 2)
    (got,) = exe(hv, wv, xv)
    for step in range(length):
        assert_matmul_close(got[step], got[step - 1] if step else hv, wv, False, tr, t)


WEIGHT_CASES: list[Case] = [
    ((70, 90), (90, 50), False, False),  # panels of 16 f32 (8 f64) on AVX2: the last zero-padded
    ((8, 256), (1000, 256), False, True),  # a decode step's rows by a transposed weight
    ((2, 60, 40), (40, 70), False, False),  # a batch folded into M = 120
    ((3, 64, 120), (64, 40), True, False),  # a transposed lhs batch: three GEMMs read the panels
]


def _weights_module(cases: Sequence[Case], t: str, weights: Sequence[np.ndarray]) -> Builder:
    """`build`'s products with each rhs a constant."""
    b = Builder("mm")
    b.output(*(b.matmul(b.input(lhs, t), b.constant(w), tl, tr) for (lhs, _, tl, tr), w in zip(cases, weights)))
    return b


@pytest.mark.parametrize("target", [None, "x86-64-v3"], ids=["native", "avx2"])
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_constant_weights_are_read_in_panels(t: str, target: str | None) -> None:
    """A constant rhs of a product the panel kernel runs is stored in its panels at
    compile time (`pack-matmul-weights`), transposed or not: the kernel reads them in
    place and gets, bit for bit, what packing them at every call gets (the same sums
    in the same order), within the bound."""
    weights = [sample(case[1], t, 2 * k + 1) for k, case in enumerate(WEIGHT_CASES)]
    lhs = [sample(case[0], t, 2 * k) for k, case in enumerate(WEIGHT_CASES)]
    module = _weights_module(WEIGHT_CASES, t, weights).module()
    packed = rlx.compile(module, threads=2, target=target)
    per_call = rlx.compile(module, threads=2, target=target, tuning={"gemm_packed_weights_max_mnk": 0})
    assert packed.planned_ir.count("rhs_panels") == len(WEIGHT_CASES) and "rhs_panels" not in per_call.planned_ir
    for k, (got, again) in enumerate(zip(packed(*lhs), per_call(*lhs), strict=True)):
        np.testing.assert_array_equal(got, again)
        assert_matmul_close(got, lhs[k], weights[k], *WEIGHT_CASES[k][2:], t)


def test_panels_of_another_target_are_a_compile_error() -> None:
    """Panels as wide as one target's tiles, compiled for a target of other tiles, are
    a CompileError that says so, never a kernel reading them at the wrong stride."""
    tiles = Tuning.for_target(rlx.target.target()).tile_bytes() // 4
    other = tiles // 2
    text = f"""
    func.func @f(%x: tensor<4x8xf32>, %p: tensor<2x8x{other}xf32>) -> tensor<4x{2 * other}xf32> {{
      %y = rlx.matmul %x, %p {{rhs_panels = {other} : i64}} : (tensor<4x8xf32>, tensor<2x8x{other}xf32>) -> tensor<4x{2 * other}xf32>
      func.return %y : tensor<4x{2 * other}xf32>
    }}"""
    with pytest.raises(rlx.CompileError, match=f"panels {other} wide, but this target's tiles are {tiles} wide"):
        rlx.compile(text)


BLAS_ONLY = {"gemm_tiled_max_mnk": 0, "gemm_panel_max_mnk": 0}
"""Tuning under which every real GEMM is a BLAS call."""


def _blas_threads() -> int:
    library = ctypes.CDLL(blas.load())
    return library[blas.symbol("openblas_get_num_threads")]()


@pytest.mark.parametrize(
    ("m", "n", "transpose_rhs"), [(300, 40, False), (40, 300, False), (40, 300, True), (1, 300, True)]
)
def test_blas_runs_single_threaded_on_the_entrys_threads(m: int, n: int, transpose_rhs: bool) -> None:
    """Whatever an executable's `threads`, OpenBLAS runs on one thread: the entry cuts
    the GEMM into blocks of rows (M >= N) or of columns (a wide or one-row product),
    the same blocks for 1 and 2 threads, so both agree bit for bit (the emitted
    kernels are turned off: on AVX2 the panels would take these GEMMs)."""
    k = 300
    rhs = (n, k) if transpose_rhs else (k, n)
    a, c = sample((m, k), "f64", 0), sample(rhs, "f64", 1)
    module = build([((m, k), rhs, False, transpose_rhs)], "f64").module()
    exes = {threads: rlx.compile(module, threads=threads, tuning=BLAS_ONLY) for threads in (1, 2)}
    results = {}
    for threads in (2, 1, 2):
        (results[threads],) = exes[threads](a, c)
        assert _blas_threads() == 1
        assert_matmul_close(results[threads], a, c, False, transpose_rhs, "f64")
    np.testing.assert_array_equal(results[1], results[2])


def test_importing_rlx_does_not_load_blas() -> None:
    """The BLAS is loaded when a matmul is first lowered, not on `import rlx_mlir`."""
    code = (
        "import sys, rlx_mlir\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('scipy_openblas32' in sys.modules, 'scipy_openblas32/lib' in maps)\n"
    )
    if sys.platform != "linux":
        pytest.skip("reads /proc/self/maps")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_entry_may_not_be_named_like_a_blas_symbol() -> None:
    b = Builder("scipy_cblas_sgemm")
    b.output(b.matmul(b.input((70, 90)), b.input((90, 50))))
    with pytest.raises(rlx.CompileError, match="cannot be a JIT symbol"):
        rlx.compile(b.module())


def test_matmul_feeds_fused_elementwise_ops() -> None:
    """gelu(x @ w + b): the matmul result is planned and read by a fused region."""
    b = Builder("mlp")
    x, w, bias = b.input((64, 48)), b.input((48, 96)), b.input((96,))
    b.output(b.gelu(b.add(b.matmul(x, w), bias)))
    exe = rlx.compile(b.module())
    xs, ws, bs = sample((64, 48), "f32", 0), sample((48, 96), "f32", 1), sample((96,), "f32", 2)
    (got,) = exe(xs, ws, bs)
    h = xs.astype(np.float64) @ ws.astype(np.float64) + bs
    want = 0.5 * h * (1 + np.vectorize(math.erf)(h / np.sqrt(2)))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(h).max())


def test_dimension_beyond_32_bit_blas_is_a_clear_error() -> None:
    """CBLAS sizes are 32-bit: K = 2^31 cannot be passed, and lowering says so
    (no array of that size is ever allocated: inputs are bound by pointer), as
    the documented CompileError."""
    b = Builder("huge")
    b.output(b.matmul(b.input((1, 2**31)), b.input((2**31, 2))))
    message = r"@huge: 'rlx.matmul' has a matrix dimension above 2147483647.*K = 2147483648"
    with pytest.raises(rlx.CompileError, match=message):
        rlx.compile(b.module())
