"""Elementwise epilogues fused into matmuls (`fuse-epilogues`, `rlx.contraction_region`).

Every kernel path is covered: GEMMs the tile kernels run (small ones with B
read in place, larger ones from packed column panels while a K-long panel fits a
quarter of L2 (K <= 2048 on a Zen 3 or 4); each
register tile finished by the epilogue right after it) and BLAS GEMMs
computed by row or column blocks, each finished by the epilogue while in cache.
References are float64; a fused product may differ from the unfused one in
the last bits only where OpenBLAS splits the GEMM differently.
"""

from __future__ import annotations

from math import erf

import numpy as np
import pytest
from pipelines import ELEMENTWISE_FUSION_ONLY, tensor_passes

import rlx_mlir as rlx
from rlx_mlir.dialects import region as rg
from rlx_mlir.lowering.kernels.contraction import _epilogue_blocks, gemm_layout
from rlx_mlir.target import target
from rlx_mlir.tuning import Tuning

UNFUSED = ELEMENTWISE_FUSION_ONLY
BLAS = {"gemm_panel_max_mnk": 0}
"""Larger GEMMs go to OpenBLAS whatever the target's panel limit."""
_erf = np.vectorize(erf, otypes=[np.float64])


def _dense(m: int, k: int, n: int, dtype: str, transpose_lhs: bool = False):
    builder = rlx.Builder("f")
    x = builder.input((k, m) if transpose_lhs else (m, k), dtype)
    w = builder.input((k, n), dtype)
    bias = builder.input((n,), dtype)
    residual = builder.input((m, n), dtype)
    product = builder.matmul(x, w, transpose_lhs=transpose_lhs)
    builder.output(builder.sub(residual, builder.gelu(builder.add(product, bias))))
    return builder.module()


def _reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, residual: np.ndarray) -> np.ndarray:
    h = x.astype(np.float64) @ w + bias
    return residual - 0.5 * h * (1 + _erf(h / np.sqrt(2)))


@pytest.mark.parametrize(
    ("m", "k", "n"),
    [(8, 4, 8), (37, 19, 23), (130, 64, 70), (1500, 200, 400), (1500, 300, 400), (64, 300, 520)],
    ids=["tiny", "odd", "tiled", "panels", "blas-blocks", "blas-column-blocks"],
)
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_epilogue_matches_float64(m: int, k: int, n: int, dtype: str) -> None:
    exe = rlx.compile(_dense(m, k, n, dtype))
    assert "rlx.contraction_region" in exe.planned_ir
    rng = np.random.default_rng(m + n)
    numpy_type = np.float32 if dtype == "f32" else np.float64
    x, w, bias, residual = (rng.standard_normal(s).astype(numpy_type) for s in ((m, k), (k, n), (n,), (m, n)))
    (got,) = exe(x, w, bias, residual)
    want = _reference(x, w, bias, residual)
    scale = np.abs(x).max() * np.abs(w).max() * k  # the GEMM's error is relative to this
    eps = np.finfo(numpy_type).eps
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * eps * scale)


@pytest.mark.parametrize(("batch", "m", "k", "n"), [(3, 50, 64, 40), (2, 75, 300, 64)], ids=["panels", "blas"])
def test_products_over_rows_fuse_and_match_float64(batch: int, m: int, k: int, n: int) -> None:
    """[B, M, K] x [K, N] with a bias, GELU and residual: one [B·M, N] contraction region
    between reshapes, as the unfused pipeline computes it and within the float64 bound."""
    builder = rlx.Builder("f")
    x, w = builder.input((batch, m, k)), builder.input((k, n))
    bias, residual = builder.input((n,)), builder.input((batch, m, n))
    builder.output(builder.sub(residual, builder.gelu(builder.add(builder.matmul(x, w), bias))))
    module = builder.module()
    exe = rlx.compile(module)
    assert "rlx.contraction_region" in exe.planned_ir and "rlx.elementwise_region" not in exe.planned_ir
    rng = np.random.default_rng(batch + k)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((batch, m, k), (k, n), (n,), (batch, m, n))]
    (got,) = exe(*args)
    scale = np.abs(args[0]).max() * np.abs(args[1]).max() * k
    np.testing.assert_allclose(got, _reference(*args), rtol=0, atol=8 * np.finfo(np.float32).eps * scale)
    (unfused,) = rlx.compile(module, pipeline=UNFUSED)(*args)
    np.testing.assert_allclose(got, unfused, rtol=0, atol=1e-4)


def test_transposed_lhs_blocks_start_at_the_right_column() -> None:
    """A transposed lhs is stored [K, M]: a block of op(A) starts `first` columns in.
    The BLAS blocks' epilogue loops over their rows: its IR does not grow with M (with
    the rows unrolled, as a register tile's are, M = 1100 took LLVM minutes). The panel
    kernel, whose K limit covers K = 300, is ruled out."""
    m, k, n = 1100, 300, 2048
    exe = rlx.compile(_dense(m, k, n, "f32", transpose_lhs=True), tuning=BLAS)
    assert "scipy_" in exe.llvm_ir, "the BLAS path"
    half = rlx.compile(_dense(m // 2, k, n, "f32", transpose_lhs=True), tuning=BLAS)
    assert len(exe.llvm_ir.splitlines()) == len(half.llvm_ir.splitlines())
    rng = np.random.default_rng(3)
    xt, w, bias, residual = (rng.standard_normal(s).astype(np.float32) for s in ((k, m), (k, n), (n,), (m, n)))
    (got,) = exe(xt, w, bias, residual)
    np.testing.assert_allclose(got, _reference(xt.T, w, bias, residual), rtol=0, atol=1e-3)


def test_fused_agrees_with_unfused_and_threads() -> None:
    m, k, n = 1500, 300, 400
    module = _dense(m, k, n, "f32")
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (n,), (m, n))]
    (fused,) = rlx.compile(module)(*args)
    (one_thread,) = rlx.compile(module, threads=1)(*args)
    (unfused,) = rlx.compile(module, pipeline=UNFUSED)(*args)
    np.testing.assert_array_equal(fused, one_thread)  # a thread computes whole dot products either way
    np.testing.assert_allclose(fused, unfused, rtol=0, atol=1e-4)


def test_a_product_in_one_cache_block_still_splits_across_threads() -> None:
    """[1024, 512] x [512, 256] f32 is 1 MiB of product, one epilogue cache block:
    it is still cut into `gemm_min_units` row blocks for the entry's threads (one
    unit, as before that knob, leaves the second thread idle), and the cut is the
    target's, so 1 and 2 threads agree bit for bit (the BLAS path: the panel kernel
    would take K = 512)."""
    module = _dense(1024, 512, 256, "f32")
    split = rlx.compile(module, threads=2, tuning=BLAS)
    assert "scipy_" in split.llvm_ir and 'define internal void @"f_k0_parallel"' in split.llvm_ir
    assert "f_k0_parallel" not in rlx.compile(module, threads=2, tuning={**BLAS, "gemm_min_units": 1}).llvm_ir
    rng = np.random.default_rng(5)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((1024, 512), (512, 256), (256,), (1024, 256))]
    np.testing.assert_array_equal(split(*args)[0], rlx.compile(module, threads=1, tuning=BLAS)(*args)[0])
    np.testing.assert_allclose(split(*args)[0], _reference(*args), rtol=0, atol=2e-3)


def test_epilogue_is_not_a_pass_of_its_own() -> None:
    """No path has a kernel that only runs the epilogue over the product: the BLAS
    row blocks, the packed panels' tiles and the in-place tiles (here full and
    tail rows) finish their own output."""
    for m, k, n in ((1500, 300, 400), (1500, 200, 400)):
        assert "_epilogue" not in rlx.compile(_dense(m, k, n, "f32")).llvm_ir
    small = rlx.compile(_dense(37, 19, 23, "f32"))
    kernels = {line.split('"')[1] for line in small.llvm_ir.splitlines() if line.startswith("define internal void")}
    assert {"f_k0", "f_k0_tail"} <= kernels
    assert not any("epilogue" in name or name.endswith("_gemm") for name in kernels)


def _region(m: int, k: int, n: int) -> rg.ContractionRegionOp:
    module = tensor_passes(_dense(m, k, n, "f32"))
    return next(op for op in module.walk() if isinstance(op, rg.ContractionRegionOp))


def test_blas_epilogues_cut_the_longer_side() -> None:
    """BLAS blocks of a product with an epilogue are cut as a plain product's (the longer
    side: column blocks repack only A) where a block fits the epilogue's cache block:
    GPT-2's [128, 1024] x [1024, 256] + bias in row blocks repacked B per block. A
    product whose column blocks would not fit is cut into rows of at most that block."""
    tuning = Tuning.for_target(target("x86-64-v4")).replace({"gemm_min_units": 8})
    columns = _epilogue_blocks(gemm_layout(_region(128, 1024, 512)), "f32", tuning)
    assert (columns.by_rows, columns.count) == (False, 8)
    small = tuning.replace({"gemm_epilogue_block_bytes": 128 << 10})  # column blocks of [512, 128]: 256 KiB
    rows = _epilogue_blocks(gemm_layout(_region(512, 1024, 1024)), "f32", small)
    assert rows.by_rows and rows.size * 1024 * 4 <= 128 << 10


@pytest.mark.parametrize(("m", "k", "n"), [(37, 19, 23), (64, 256, 256)], ids=["tiles", "panels"])
def test_tile_epilogues_vectorize_along_rows(m: int, k: int, n: int) -> None:
    """A register tile's epilogue (here a bias add) runs its rows unrolled, so LLVM
    vectorizes along each row with contiguous vectors: as a loop over the rows it was
    vectorized across them, with a gather and a scatter per column."""
    builder = rlx.Builder("f")
    x, w, bias = builder.input((m, k)), builder.input((k, n)), builder.input((n,))
    builder.output(builder.add(builder.matmul(x, w), bias))
    ir = rlx.compile(builder.module()).optimized_llvm_ir
    assert "fadd <" in ir
    assert "masked.gather" not in ir and "masked.scatter" not in ir
