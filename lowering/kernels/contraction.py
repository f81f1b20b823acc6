"""Kernels for `rlx.matmul`.

Every matmul is a batch of row-major GEMMs C[b] (M x N) = op(A[b]) · op(B[b]),
op a transpose where the operand's flag says so (`gemm_layout`). A 1-D lhs is
one row (M = 1) and a 1-D rhs one column (N = 1): the axes NumPy squeezes
from the result do not change its memory layout. A kernel walks the batch by
its flat index and finds each operand's offset from its broadcast strides (0
on an axis it broadcasts along); when the rhs has no batch and the lhs is not
transposed, the lhs batch folds into M and the whole matmul is one GEMM.

By element type:
- f32, f64, complex<f32>, complex<f64>: CBLAS sgemm/dgemm/cgemm/zgemm of
  `rlx_mlir.blas` (OpenBLAS), transpose flags as CblasTrans (a plain
  transpose for complex too). OpenBLAS always runs on one thread: the entry
  splits the batch's GEMMs, each cut into blocks of rows or columns
  (`_gemm_blocks`), across its own threads (`_blas_kernel`; a contraction
  region's epilogue runs on each row block in cache). OpenBLAS's own
  threads fought the pool's: they spin after a GEMM while the pool runs the
  next kernel, and their static split waits for a thread on a busy core.
- Small real GEMMs (M·N·K <= `Tuning.gemm_tiled_max_mnk`, rhs not
  transposed) skip the call: a register-tiled kernel in explicit vector IR
  (`_tiled_gemm_kernels`) runs them about twice as fast as OpenBLAS does
  (benchmarks/contractions.py); larger ones with K short enough run the
  packed-panel kernel (`_panel_gemm_kernel`). Both read a constant weight in
  the panels `pack-matmul-weights` stored it in at compile time (`rhs_panels`;
  `packed_panel_width`), so no call packs or strides through it.
- f16, bf16: the operands are widened into f32 scratch buffers
  (`MatmulOp.scratch_bytes`), the f32 GEMM writes an f32 scratch and one
  store per element rounds it into the result: computed in f32, rounded once.
- i32, i64: emitted loops in (row i, k, column j) order, so the innermost loop
  streams a row of the rhs and of the result and vectorizes; arithmetic wraps.
- K = 0 (an empty sum) needs no special case: every path writes zeros (the
  tile and integer loops store their zero-initialized accumulators; CBLAS
  with beta = 0 sets C to zero, given leading dimensions of at least 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import blas, dtypes, index_maps
from rlx_mlir.broadcast import broadcast_shapes, numel, row_major_strides
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Codec, Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import (
    COMPONENT,
    MACS_PER_ELEMENT,
    Matrix,
    Packing,
    byte_pointer,
    emit_panel,
    gemm_call,
    gemm_external,
    register_tile,
    single_threaded_blas,
    weight_packing,
)
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, emit_nest_kernel, kernel_function
from rlx_mlir.lowering.core.loops import advance, coalesce, for_range, if_then, read_strides
from rlx_mlir.lowering.scalar.scalar_ops import body_value
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning


@dataclass(frozen=True)
class GemmLayout:
    """A matmul as `count` GEMMs C (m x n) = op(A) (m x k) · op(B) (k x n), row-major.

    `batch` are the coalesced batch extents (outermost first) and `strides`
    the element strides of lhs, rhs and result along them (0: broadcast)."""

    m: int
    n: int
    k: int
    transposes: tuple[bool, bool]
    batch: tuple[int, ...]
    strides: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]

    @property
    def count(self) -> int:
        return numel(self.batch)

    @property
    def leading(self) -> tuple[int, int, int]:
        """lda, ldb, ldc: the stored row lengths (at least 1, as CBLAS requires)."""
        transpose_lhs, transpose_rhs = self.transposes
        lda = self.m if transpose_lhs else self.k
        ldb = self.k if transpose_rhs else self.n
        return max(1, lda), max(1, ldb), max(1, self.n)

    @property
    def work(self) -> int:
        """In `Kernel.work` units (simple elements): MACS_PER_ELEMENT multiply-adds each."""
        return self.count * self.m * self.n * self.k // MACS_PER_ELEMENT


def _batch_strides(matrix: Sequence[int], batch: Sequence[int]) -> tuple[int, ...]:
    """Element strides of an operand (promoted to rank >= 2) along the result's batch axes."""
    own = row_major_strides(tuple(matrix))
    skip = len(batch) - (len(matrix) - 2)
    return tuple(0 if d < skip or matrix[d - skip] == 1 else own[d - skip] for d in range(len(batch)))


def gemm_layout(op: ct.Product) -> GemmLayout:
    transpose_lhs, transpose_rhs = op.transposes
    lhs, rhs = shape_of(op.lhs.type), op.rhs_shape
    a = lhs if len(lhs) > 1 else (1, lhs[0])
    b = rhs if len(rhs) > 1 else (rhs[0], 1)
    m, k = ct.matrix_dims(a, transpose_lhs)
    n = ct.matrix_dims(b, transpose_rhs)[1]
    batch = broadcast_shapes(a[:-2], b[:-2])
    assert batch is not None, "verified by MatmulOp"
    out_strides = row_major_strides((*batch, m, n))[: len(batch)]
    nest = coalesce(batch, [_batch_strides(a, batch), _batch_strides(b, batch), out_strides])
    rows = nest.sizes[0] * m
    if (
        len(nest.sizes) == 1
        and not transpose_lhs
        and nest.strides == ((m * k,), (0,), (m * n,))
        and rows <= blas.INT_MAX
    ):
        return GemmLayout(rows, n, k, op.transposes, (), ((), (), ()))  # the lhs batch folds into M
    lhs_strides, rhs_strides, out_strides = nest.strides
    return GemmLayout(m, n, k, op.transposes, nest.sizes, (lhs_strides, rhs_strides, out_strides))


def _batch_offsets(e: Emitter, layout: GemmLayout, index: SSAValue) -> list[SSAValue]:
    """Element offsets of the lhs, rhs and result matrices of flat batch `index`."""
    offsets = [e.i64(0)] * 3
    rest = index
    axes = list(zip(layout.batch, zip(*layout.strides)))
    for position, (size, strides) in reversed(list(enumerate(axes))):
        here = rest if position == 0 else e.urem(rest, e.i64(size))
        if position:
            rest = e.udiv(rest, e.i64(size))
        offsets = [off if s == 0 else e.add(off, e.mul(here, e.i64(s))) for off, s in zip(offsets, strides)]
    return offsets


# ---------------------------------------------------------------------------
# BLAS
# ---------------------------------------------------------------------------


def _check_blas_sizes(op: Operation, layout: GemmLayout) -> None:
    if max(layout.m, layout.n, layout.k, *layout.leading) > blas.INT_MAX:
        raise ValueError(
            f"'{op.name}' has a matrix dimension above {blas.INT_MAX}, more than a 32-bit BLAS call takes "
            f"(M = {layout.m}, N = {layout.n}, K = {layout.k})"
        )


def _gemm_call(e: Emitter, layout: GemmLayout, dtype: str) -> Callable[..., None]:
    """The GEMM of `layout` (sizes, flags, leading dimensions) for `gemm.gemm_call`."""
    return gemm_call(e, dtype, (layout.m, layout.n, layout.k), layout.transposes, layout.leading)


MIN_BLOCK = 16
"""The fewest rows (columns) a row (column) block of a GEMM gets: each block's
call packs op(B) (op(A)) again, K·N loads against its rows·N·K multiply-adds,
so 16 rows keep the repacking near 1/16 of the block's work whatever the CPU."""


@dataclass(frozen=True)
class _Blocks:
    """How each GEMM of a batch is cut into units for the entry's threads: `count`
    blocks of `size` rows (`by_rows`) or columns of C, the last one shorter."""

    count: int
    size: int
    by_rows: bool


def _gemm_blocks(layout: GemmLayout, tuning: Tuning, most_rows: int | None = None) -> _Blocks:
    """Enough blocks that the batch has `tuning.gemm_min_units` units, none under
    MIN_BLOCK. A block's call packs the operand it does not cut again, so
    the longer of M and N is cut: a row block repacks op(B) (K·N), a column
    block op(A) (M·K). With `most_rows` (an epilogue's cache block), rows are
    cut, into blocks of at most that many. Cutting by the cache block alone
    left a product of one block on one thread: [1024, 1024] x [1024, 256] +
    bias took 3.34 ms on 2 threads, 1.99 ms in 8 blocks (a Xeon 6, 2 cores)."""
    by_rows = most_rows is not None or layout.m >= layout.n
    extent = layout.m if by_rows else layout.n
    wanted = -(-tuning.gemm_min_units // layout.count)
    if most_rows is not None:
        wanted = max(wanted, -(-layout.m // max(1, most_rows)))
    count = max(1, min(wanted, extent // MIN_BLOCK))
    size = -(-extent // count)
    return _Blocks(-(-extent // size), size, by_rows)


def _blas_kernel(
    name: str,
    layout: GemmLayout,
    dtype: str,
    buffers: list[SSAValue | str | Scratch],
    blocks: _Blocks,
    finish: Epilogue | None = None,
) -> list[Kernel]:
    """The batch's GEMMs cut into (batch entry, block) units (`_gemm_blocks`), each
    a single-threaded BLAS call (after `single_threaded_blas`) on one of the
    entry's threads, then `finish` over the block's rows and columns while they
    are in cache (a contraction region's epilogue). OpenBLAS's own
    threads are never used. Two pools on two cores fought: OpenBLAS's workers
    spin after a GEMM (up to ~0.1 s) while the pool's run the next kernel, and
    its static split waits for a worker on a busy core. The pool hands out
    units as threads free up. Buffers: lhs, rhs, ..., result.

    Measured on a 2-vCPU Xeon 6 guest, 2 threads, `benchmarks/models.py`
    (dynamo exports, same code but this kernel, runs alternating): GPT-2 b8
    33 ms against 46 with OpenBLAS's threads, the Whisper encoder b8 182
    against 306, ViT b8 61 against 96; beside one busy process GPT-2 b1 took
    7.6-9.3 ms against 132-136 and BERT b1 12-13 against 148-158. A lone large
    GEMM timed in a short loop is the exception: the pool's sleeping worker
    wakes slowly on that guest, and 1024³ took 17.0 ms against OpenBLAS's
    spinning threads' 7.3 (1 thread: 14-18)."""
    blas.load()
    gemm = gemm_external(dtype)
    item_bytes = dtypes.from_name(dtype).nbytes
    a_row = 1 if layout.transposes[0] else layout.leading[0]  # elements between rows of op(A)
    b_col = layout.leading[1] if layout.transposes[1] else 1  # elements between columns of op(B)
    extent = layout.m if blocks.by_rows else layout.n

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        call = _gemm_call(e, layout, dtype)
        operands = (pointers[0], pointers[1], pointers[-1])

        def one(unit: SSAValue) -> None:
            if blocks.count == 1:  # whole GEMMs, one per batch entry
                offsets = _batch_offsets(e, layout, unit)
                first, last, span = e.i64(0), e.i64(extent), None
            else:
                offsets = _batch_offsets(e, layout, e.udiv(unit, e.i64(blocks.count)))
                first = e.mul(e.urem(unit, e.i64(blocks.count)), e.i64(blocks.size))
                last = e.smin(e.add(first, e.i64(blocks.size)), e.i64(extent))
                span = e.itrunc(e.sub(last, first), i32)
                a_at, b_at, c_at = offsets
                if blocks.by_rows:
                    offsets = [
                        e.add(a_at, e.mul(first, e.i64(a_row))),
                        b_at,
                        e.add(c_at, e.mul(first, e.i64(layout.n))),
                    ]
                else:
                    offsets = [a_at, e.add(b_at, e.mul(first, e.i64(b_col))), e.add(c_at, first)]
            a, b, c = (byte_pointer(e, p, at, item_bytes) for p, at in zip(operands, offsets))
            call(a, b, c, span if blocks.by_rows else None, None if blocks.by_rows else span)
            if finish is not None:  # a block's rows are a loop (unrolled, M = 1100 took minutes of LLVM)
                count = e.sub(last, first)
                at, extents = (
                    ((first, e.i64(0)), (count, layout.n))
                    if blocks.by_rows
                    else ((e.i64(0), first), (e.i64(layout.m), count))
                )
                finish(e, region, pointers, at, extents)

        for_range(e, region, begin, end, one)

    function = kernel_function(name, len(buffers), build)
    units = layout.count * blocks.count
    work = layout.work + (layout.m * layout.n if finish is not None else 0)
    return [single_threaded_blas(f"{name}_blas1"), Kernel(function, buffers, units, work, externals=(gemm,))]


def _convert_kernel(
    name: str, count: int, source: Codec, target: Codec, buffers: list[SSAValue | str | Scratch]
) -> Kernel:
    """target[i] = source[i] for i < count: one codec load and one codec store per element
    (widening f16/bf16 to f32 is exact; storing f32 as f16/bf16 rounds once)."""

    def body(e: Emitter, pointers: list[SSAValue], offsets: list[SSAValue]) -> None:
        target.store(e, source.load(e, pointers[0], offsets[0]), pointers[1], offsets[1])

    function = emit_nest_kernel(name, coalesce((count,), [(1,), (1,)]), 2, body)
    return Kernel(function, buffers, count, count)


def _widened_kernels(op: ct.MatmulOp, layout: GemmLayout, ctx: KernelContext) -> list[Kernel]:
    narrow = codec(element_type(op.result.type))
    wide = codec(f32)
    lhs, rhs, product = (Scratch(op, k) for k in range(3))
    return [
        _convert_kernel(f"{ctx.name}_lhs", numel(shape_of(op.lhs.type)), narrow, wide, [op.lhs, lhs]),
        _convert_kernel(f"{ctx.name}_rhs", numel(shape_of(op.rhs.type)), narrow, wide, [op.rhs, rhs]),
        *_gemm_kernels(f"{ctx.name}_gemm", layout, "f32", [lhs, rhs, product], ctx.threads, ctx.tuning),
        _convert_kernel(f"{ctx.name}_round", numel(shape_of(op.result.type)), wide, narrow, [product, op.result]),
    ]


# ---------------------------------------------------------------------------
# emitted small GEMMs
# ---------------------------------------------------------------------------

Extent = SSAValue | int
Epilogue = Callable[[Emitter, Region, list[SSAValue], tuple[SSAValue, SSAValue], tuple[Extent, Extent]], None]
"""finish(e, region, pointers, (first row, first column), (rows, columns)): applies a
contraction region's body to that block of C in place, right after it was stored
(extents static where they are: a register tile's)."""


def _tiled_gemm_kernels(
    name: str,
    layout: GemmLayout,
    dtype: str,
    buffers: list[SSAValue | str | Scratch],
    tuning: Tuning,
    packing: Packing | None = None,
    finish: Epilogue | None = None,
) -> list[Kernel]:
    """Register-tiled GEMMs in explicit vector IR: for each tile of
    `tuning.gemm_tile_rows` rows x `tuning.tile_bytes()` of C (the rows left
    below `gemm_tile_rows`: wider tiles, `_tile_width`), acc +=
    splat(A[i, kk]) * B[kk, j0:j1] over kk with vector FMAs, then one store,
    then `finish` (an epilogue) over the tile while it is in L1. B is read in
    place (rhs not transposed), or from the column panels of `packing` (any
    transpose; packed with the same `tuning`) when the rhs buffer holds them.
    One kernel runs the full row tiles and one the M % gemm_tile_rows rows
    left, each over (batch, row tile, column panel) units, which the entry splits across
    threads (so a large GEMM of a few rows, a scan body's, still uses every
    core). Buffers: lhs, rhs, the epilogue's inputs, C."""
    item = codec(COMPONENT[dtype])
    m, n, k = layout.m, layout.n, layout.k
    a_row, a_col = (1, m) if layout.transposes[0] else (k, 1)  # element strides of A[i, kk] along i and kk
    tile_rows, vector_bytes = tuning.gemm_tile_rows, tuning.vector_bytes
    assert packing is None or packing.panel == tuning.tile_bytes() // item.dtype.nbytes, "panels are tile-wide"

    def kernel(suffix: str, first: int, rows: int, tiles: int) -> Kernel:
        width = _tile_width(rows, tuning, item, packing is None)
        full, tail = n // width, n % width
        panels = full + (tail > 0)

        def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
            lhs, rhs, out = pointers[0], pointers[1], pointers[-1]

            def tile(i0: SSAValue, bases: list[SSAValue], j0: SSAValue, cols: int) -> None:
                a_base, b_base, c_base = bases
                a = Matrix(lhs, a_base, a_row, a_col)
                b = Matrix(rhs, e.add(b_base, j0), n) if packing is None else packing.panel_matrix(e, rhs, j0, cols)
                c = Matrix(out, e.add(c_base, j0), n)
                register_tile(e, region, item, (rows, cols, k), a, b, c, vector_bytes)
                if finish is not None:
                    finish(e, region, pointers, (i0, j0), (rows, cols))

            def one(t: SSAValue) -> None:
                rest, p = e.udiv(t, e.i64(panels)), e.urem(t, e.i64(panels))
                a_base, b_base, c_base = _batch_offsets(e, layout, e.udiv(rest, e.i64(tiles)))
                i0 = e.add(e.mul(e.urem(rest, e.i64(tiles)), e.i64(rows)), e.i64(first))
                bases = [e.add(a_base, e.mul(i0, e.i64(a_row))), b_base, e.add(c_base, e.mul(i0, e.i64(n)))]
                j0 = e.mul(p, e.i64(width))
                if full:
                    if_then(e, region, e.icmp("slt", p, e.i64(full)), lambda: tile(i0, bases, j0, width))
                if tail:
                    if_then(e, region, e.icmp("eq", p, e.i64(full)), lambda: tile(i0, bases, j0, tail))

            for_range(e, region, begin, end, one)

        extent = layout.count * tiles * panels
        work = layout.count * tiles * max(rows * n * k // MACS_PER_ELEMENT, n * k)  # B streams once per row tile
        return Kernel(kernel_function(f"{name}{suffix}", len(buffers), build), buffers, extent, work)

    kernels = []
    if m // tile_rows:
        kernels.append(kernel("", 0, tile_rows, m // tile_rows))
    if m % tile_rows:
        kernels.append(kernel("_tail", m // tile_rows * tile_rows, m % tile_rows, 1))
    return kernels


def _panel_gemm_kernel(
    name: str,
    layout: GemmLayout,
    dtype: str,
    buffers: list[SSAValue | str | Scratch],
    threads: int,
    tuning: Tuning,
    finish: Epilogue | None = None,
    packed_rhs: bool = False,
) -> Kernel:
    """Real GEMMs beyond the in-place tile kernel (larger, or a transposed rhs):
    one unit per (batch entry, block of rows, group of column panels of C) packs
    its panels of op(B) [K x `tuning.tile_bytes()` each, together at most
    `tuning.gemm_panel_max_bytes`] into a stack buffer, where they stay in L2
    while the block's row tiles of A (`tuning.gemm_tile_rows` rows, then the
    M % gemm_tile_rows rows left) stream past, each tile crossing every panel of
    the group while its rows of A are in L1. `finish` then runs on the tile's
    rows across the whole group, in L1: one loop along each row, as an
    elementwise kernel's. Finished after each register tile instead, 12 vectors
    of straight-line code, a GELU epilogue took 1.3-1.8x its time as its own
    kernel on a Zen 3 (AVX2 has 16 registers). Row by row, ViT's MLP-up
    [1576 x 256] x [256 x 1024] with `rlx.gelu`, 2 threads: 11.8 -> 10.4 ms;
    with the erf form of TorchScript exports 10.9 -> 10.2.
    The units split across the entry's threads; rows are cut into blocks only
    when there are too few groups to keep every thread busy (a block repacks its
    panels). `rlx.rnn`'s projection is built the same way. Measured on one
    thread (AVX-512 tiles, one panel per unit), about 2x OpenBLAS's sgemm/dgemm
    here (`OPENBLAS_CORETYPE=Haswell` kernels) for K <= 256 (see `_panels`):
    1024x256x256ᵀ 0.57 vs 1.14 ms, 1500x300x400 1.5 vs 3.1 ms, 300³ f64 0.45
    vs 0.89 ms. On a Zen 3 (AVX2 tiles, 2 threads) 1.07-1.12x OpenBLAS's blocks
    from K = 256 to 2048, with panels up to 128 KiB in L2
    (benchmarks/contractions.py: [1024 x 1024] x [1024 x 256] 3.65 vs 3.90 ms).
    One panel per unit streamed A from L3 once per panel; eight (the Zen 3's
    128 KiB at K = 256) stream it an eighth as often: ViT's MLP-up [1576 x 256]
    x [256 x 1024] 5.6 -> 4.9 ms on 2 threads, 12.6 -> 11.7 on one.
    With `packed_rhs`, the rhs holds its panels already (`rlx.matmul`'s
    `rhs_panels`: a constant weight `pack-matmul-weights` packed at compile time),
    and the units read them in place instead of packing them at every call,
    which cost most of a GEMM of a few rows (a decode step's) and 3-30% of a
    longer one (Zen 3, 2 threads: see `packed_panel_width`)."""
    item = codec(COMPONENT[dtype])
    m, n, k = layout.m, layout.n, layout.k
    a_row, a_col = (1, m) if layout.transposes[0] else (k, 1)  # element strides of A[i, kk] along i and kk
    b_row, b_col = (1, k) if layout.transposes[1] else (n, 1)  # ... of op(B)[kk, j] along kk and j
    tile_rows, vector_bytes = tuning.gemm_tile_rows, tuning.vector_bytes
    width = tuning.tile_bytes() // item.dtype.nbytes
    full, tail = n // width, n % width
    panels = full + (tail > 0)
    panel_size = k * width
    group = max(1, min(panels, tuning.gemm_panel_max_bytes // max(1, panel_size * item.dtype.nbytes)))
    groups = -(-panels // group)
    tiles = -(-m // tile_rows)
    blocks = max(1, min(tiles, -(-2 * threads // (layout.count * groups))))
    block_rows = -(-tiles // blocks) * tile_rows
    blocks = -(-m // block_rows)
    whole = m // tile_rows * tile_rows

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        lhs, rhs, out = pointers[0], pointers[1], pointers[-1]
        if packed_rhs:
            packed = rhs
        else:
            packed = e.op(llvm.AllocaOp(e.i64(max(1, group * panel_size)), item.storage, alignment=64))

        def unit(u: SSAValue) -> None:
            a_base, b_base, c_base = _batch_offsets(e, layout, e.udiv(u, e.i64(blocks * groups)))
            first = e.mul(e.urem(e.udiv(u, e.i64(groups)), e.i64(blocks)), e.i64(block_rows))
            last = e.smin(e.add(first, e.i64(block_rows)), e.i64(m))
            p0 = e.mul(e.urem(u, e.i64(groups)), e.i64(group))
            p1 = e.smin(e.add(p0, e.i64(group)), e.i64(panels))
            g0 = e.mul(p0, e.i64(width))
            columns = e.sub(e.smin(e.mul(p1, e.i64(width)), e.i64(n)), g0)  # of the group

            def at(p: SSAValue) -> SSAValue:
                """Where panel p starts: in the rhs's panels, or in this unit's group."""
                return e.mul(p if packed_rhs else e.sub(p, p0), e.i64(panel_size))

            def pack(p: SSAValue) -> None:
                c0 = e.mul(p, e.i64(width))
                source = Matrix(rhs, e.add(b_base, e.mul(c0, e.i64(b_col))), b_row, b_col)
                emit_panel(e, region, item, source, (packed, at(p)), k, e.smin(e.i64(width), e.sub(e.i64(n), c0)))

            def tile(i0: SSAValue, rows: int) -> None:
                a = Matrix(lhs, e.add(a_base, e.mul(i0, e.i64(a_row))), a_row, a_col)

                def one(p: SSAValue, cols: int) -> None:
                    c0 = e.mul(p, e.i64(width))
                    c = Matrix(out, e.add(e.add(c_base, e.mul(i0, e.i64(n))), c0), n)
                    b = Matrix(packed, at(p), width if packed_rhs else cols)  # a packed tail is zero-padded
                    register_tile(e, region, item, (rows, cols, k), a, b, c, vector_bytes)

                if full:
                    for_range(e, region, p0, e.smin(p1, e.i64(full)), lambda p: one(p, width))
                if tail:
                    if_then(e, region, e.icmp("eq", p1, e.i64(panels)), lambda: one(e.i64(full), tail))
                if finish is not None:
                    finish(e, region, pointers, (i0, g0), (rows, columns))

            if not packed_rhs:
                for_range(e, region, p0, p1, pack)
            if whole:
                stop = e.smin(last, e.i64(whole))
                for_range(e, region, first, stop, lambda i0: tile(i0, tile_rows), tile_rows)
            if m % tile_rows:
                if_then(e, region, e.icmp("eq", last, e.i64(m)), lambda: tile(e.i64(whole), m % tile_rows))

        for_range(e, region, begin, end, unit)

    extent = layout.count * blocks * groups
    return Kernel(kernel_function(name, len(buffers), build), buffers, extent, layout.work)


ROW_STEP_VECTORS = 8
"""The most vectors of a row of B a tile of few rows reads per step down B."""


def _tile_width(rows: int, tuning: Tuning, item: Codec, in_place: bool) -> int:
    """Columns of a tile of `rows` rows: two vectors, or, for the few rows left below
    `gemm_tile_rows` (a decode step's M = 1), up to `ROW_STEP_VECTORS` in the same
    accumulators, when B is read in place (packed panels are two vectors wide). A
    2-vector column of B steps down its rows a page apart when N is 1024 floats: at M = 1,
    [1, 256] x [256, 1024] took 28.8 us with 2 vectors, 16.8 with 8 (NumPy's sgemv 24.5;
    a Zen 4, 2 threads)."""
    vectors_wide = min(ROW_STEP_VECTORS, 2 * (tuning.gemm_tile_rows // rows)) if in_place else 2
    return vectors_wide * tuning.vector_bytes // item.dtype.nbytes


def _gemm_kernels(
    name: str,
    layout: GemmLayout,
    dtype: str,
    buffers: list[SSAValue | str | Scratch],
    threads: int,
    tuning: Tuning,
) -> list[Kernel]:
    """The tiled kernel for small real GEMMs with an untransposed rhs (`_tiles`),
    the packed-panel kernel for larger ones with a short K (`_panels`), the
    BLAS call for everything else."""
    if _tiles(layout, dtype, tuning):
        return _tiled_gemm_kernels(name, layout, dtype, buffers, tuning)
    if _panels(layout, dtype, tuning):
        return [_panel_gemm_kernel(name, layout, dtype, buffers, threads, tuning)]
    return _blas_kernel(name, layout, dtype, buffers, _gemm_blocks(layout, tuning))


def _tiles(layout: GemmLayout, dtype: str, tuning: Tuning) -> bool:
    """Whether the tile kernel runs this GEMM with B read in place: M·N·K up to
    `tuning.gemm_tiled_max_mnk`, the size OpenBLAS would run on the calling
    thread anyway, where the tiles run ~2x faster than the call and their batch
    splits across the entry's threads (benchmarks/contractions.py sets the knob
    to 0 to time the BLAS call instead)."""
    small = layout.m * layout.n * layout.k <= tuning.gemm_tiled_max_mnk
    return dtype in ("f32", "f64") and small and not layout.transposes[1]


def _panels(layout: GemmLayout, dtype: str, tuning: Tuning) -> bool:
    """Whether `_panel_gemm_kernel` runs this GEMM: M·N·K up to
    `tuning.gemm_panel_max_mnk` (benchmarks set it to 0 to time the BLAS call
    instead) and a panel of op(B), K x `tuning.tile_bytes()`, of at most
    `tuning.gemm_panel_max_bytes`, so it stays in L2 while the row tiles stream
    past. GEMMs with a longer K stay with OpenBLAS, which blocks K; the panel
    kernel was only measured against it up to there."""
    small = layout.m * layout.n * layout.k <= tuning.gemm_panel_max_mnk
    return dtype in ("f32", "f64") and small and layout.k * tuning.tile_bytes() <= tuning.gemm_panel_max_bytes


def _packed_rhs(op: ct.MatmulOp | rg.ContractionRegionOp, ctx: KernelContext) -> tuple[Packing, Scratch] | None:
    """The panels and buffer of `op`'s rhs if a loop packed it before its steps
    (`dialects.scan.PackedWeight`): the tile kernel then reads them, whatever
    the GEMM's size and the rhs's transpose."""
    transposed = op.transposes[1]
    buffer = ctx.packed.get((op.rhs, transposed))
    if buffer is None:
        return None
    item = codec(element_type(op.rhs.type))
    return weight_packing(shape_of(op.rhs.type), transposed, item, ctx.tuning), buffer


# ---------------------------------------------------------------------------
# emitted loops: integers
# ---------------------------------------------------------------------------


def _integer_kernel(op: ct.MatmulOp, layout: GemmLayout, ctx: KernelContext) -> Kernel:
    """C[i, :] = 0; for k: C[i, :] += A[i, k] * B[k, :] - one row i per outer step."""
    item = codec(element_type(op.result.type))
    m, n, k = layout.m, layout.n, layout.k
    transpose_lhs, transpose_rhs = layout.transposes
    a_row, a_col = (1, m) if transpose_lhs else (k, 1)  # element strides of A[i, kk] along i and kk
    b_row, b_col = (1, k) if transpose_rhs else (n, 1)  # ... of B[kk, j] along kk and j

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        lhs, rhs, out = pointers

        def row(r: SSAValue) -> None:
            i = e.urem(r, e.i64(m))
            a_base, b_base, c_base = _batch_offsets(e, layout, e.udiv(r, e.i64(m)))
            a_base = e.add(a_base, e.mul(i, e.i64(a_row)))
            c_row = e.add(c_base, e.mul(i, e.i64(n)))
            zero = e.const(item.compute, 0)
            for_range(e, region, e.i64(0), e.i64(n), lambda j: item.store(e, zero, out, e.add(c_row, j)))

            def over_k(kk: SSAValue) -> None:
                a = real(item.load(e, lhs, e.add(a_base, e.mul(kk, e.i64(a_col)))))
                b_start = e.add(b_base, e.mul(kk, e.i64(b_row)))

                def over_j(j: SSAValue) -> None:
                    at = e.add(c_row, j)
                    b = item.load(e, rhs, e.add(b_start, j if b_col == 1 else e.mul(j, e.i64(b_col))))
                    item.store(e, e.add(real(item.load(e, out, at)), e.mul(a, real(b))), out, at)

                for_range(e, region, e.i64(0), e.i64(n), over_j)

            for_range(e, region, e.i64(0), e.i64(k), over_k)

        for_range(e, region, begin, end, row)

    function = kernel_function(ctx.name, 3, build)
    return Kernel(function, [op.lhs, op.rhs, op.result], layout.count * m, layout.work)


def matmul_kernels(op: ct.MatmulOp, ctx: KernelContext) -> list[Kernel]:
    if numel(shape_of(op.result.type)) == 0:
        return []
    layout = gemm_layout(op)
    dtype = dtypes.from_ir(element_type(op.result.type)).name
    if dtype in ("i32", "i64"):
        return [_integer_kernel(op, layout, ctx)]
    _check_blas_sizes(op, layout)
    if dtype in ct.WIDENED_TYPES:
        return _widened_kernels(op, layout, ctx)
    if op.panels:
        return _packed_panel_kernels(ctx, op, layout, [op.lhs, op.rhs, op.result])
    packed = _packed_rhs(op, ctx)
    if packed is not None:
        packing, panels = packed
        return _tiled_gemm_kernels(ctx.name, layout, dtype, [op.lhs, panels, op.result], ctx.tuning, packing)
    return _gemm_kernels(ctx.name, layout, dtype, [op.lhs, op.rhs, op.result], ctx.threads, ctx.tuning)


def packed_panel_width(op: ct.Product, tuning: Tuning) -> int:
    """The panel width W to store `op`'s rhs in (`rhs_panels`) if it is a constant
    (`pack-matmul-weights`), 0 to leave it: for a 2-D f32/f64 rhs whose products the
    emitted kernels run (the in-place tiles or the packed panels; longer K goes to
    BLAS). K and N are the weight's, so every input shape of a model (M) gets the
    same panels, stored once. Packed once at compile time, the panels cost nothing
    per call. Against packing them at every call (the panel kernel) or reading B
    in place (the tiles), on a Zen 3 (AVX2, 2 threads), [8 x 256] x [256 x 1024]
    runs 2.3x faster, [1 x 256] x [256 x 1024] 1.5x (transposed: 5.9x),
    [128 x 256] x [256 x 768] 1.3x, [128 x 768] x [768 x 3072] 1.2x and
    [1024 x 256] x [256 x 1024] 1.07x (benchmarks/README.md)."""
    if op.panels or len(shape_of(op.rhs.type)) != 2 or numel(shape_of(op.result.type)) == 0:
        return 0
    dtype = dtypes.from_ir(element_type(op.rhs.type)).name
    layout = gemm_layout(op)
    if dtype not in ct.PANEL_TYPES or not (_tiles(layout, dtype, tuning) or _panels(layout, dtype, tuning)):
        return 0
    if layout.count * layout.m * layout.n * layout.k > tuning.gemm_packed_weights_max_mnk:
        return 0
    return tuning.tile_bytes() // dtypes.from_name(dtype).nbytes


def _packed_panel_kernels(
    ctx: KernelContext,
    op: ct.Product,
    layout: GemmLayout,
    buffers: list[SSAValue | str | Scratch],
    finish: Epilogue | None = None,
) -> list[Kernel]:
    """The kernels of a product whose rhs is stored in panels: the tile kernel reading
    them (GEMMs it runs in place otherwise), else the packed-panel kernel with nothing
    to pack. The panels must be as wide as this target's tiles (the pass that packed
    them was given the same target)."""
    dtype = dtypes.from_ir(element_type(op.rhs.type)).name
    width = ctx.tuning.tile_bytes() // dtypes.from_name(dtype).nbytes
    if op.panels != width:
        raise ValueError(
            f"'{op.name}' reads an rhs in panels {op.panels} wide, but this target's tiles are {width} wide "
            "(pack-matmul-weights and lower-to-llvm must be given the same target)"
        )
    if _tiles(layout, dtype, ctx.tuning):
        packing = Packing(1, layout.n, layout.k, 0, 0, width, transposed=False, padded=True)
        return _tiled_gemm_kernels(ctx.name, layout, dtype, buffers, ctx.tuning, packing, finish)
    return [_panel_gemm_kernel(ctx.name, layout, dtype, buffers, ctx.threads, ctx.tuning, finish, packed_rhs=True)]


# ---------------------------------------------------------------------------
# epilogues: rlx.contraction_region
# ---------------------------------------------------------------------------


def _epilogue_block(
    e: Emitter,
    region: Region,
    op: rg.ContractionRegionOp,
    pointers: list[SSAValue],
    first: tuple[SSAValue, SSAValue],
    extents: tuple[Extent, Extent],
) -> None:
    """out[i, j] = body(out[i, j], epilogue inputs at (i, j)) over the block of
    `extents` rows and columns from `first`, in place. A register tile's static
    rows are unrolled here, so the only loop is along a row and LLVM vectorizes it
    with contiguous vectors: as a loop over the rows it got vectorized across them,
    gathering and scattering columns, and a GEMM of K = 256 with a bias took
    20-25% longer than without."""
    product_type = element_type(op.lhs.type)
    n = shape_of(op.outputs[0].type)[1]
    reads = [read_strides(shape_of(v.type), index_maps.accesses(amap), 2) for v, amap in zip(op.mapped_inputs, op.maps)]
    out = pointers[-1]
    args = op.body.block.args
    (i0, j0), (rows, columns) = first, extents

    def row(r: SSAValue) -> None:
        i = e.add(i0, r)
        at_row = e.add(e.mul(i, e.i64(n)), j0)
        extra_rows = [advance(e, advance(e, e.i64(base), i, strides[0]), j0, strides[1]) for strides, base in reads]

        def column(j: SSAValue) -> None:
            at = e.add(at_row, j)

            def load(k: int) -> Value:
                if k == 0:
                    return codec(product_type).load(e, out, at)
                strides, _ = reads[k - 1]
                return codec(args[k].type).load(e, pointers[1 + k], advance(e, extra_rows[k - 1], j, strides[1]))

            codec(element_type(op.outputs[0].type)).store(e, body_value(e, op.body.block, load), out, at)

        for_range(e, region, e.i64(0), e.i64(columns) if isinstance(columns, int) else columns, column)

    if isinstance(rows, int):
        for r in range(rows):
            row(e.i64(r))
    else:
        for_range(e, region, e.i64(0), rows, row)


def contraction_region_kernels(op: rg.ContractionRegionOp, ctx: KernelContext) -> list[Kernel]:
    """A 2-D f32/f64 product (what fuse-epilogues makes): register tiles, each
    finished by the epilogue right after it (GEMMs the tile kernel runs, and any
    GEMM whose rhs a loop packed), or blocks of BLAS rows each finished by the
    epilogue while in cache."""
    if numel(shape_of(op.outputs[0].type)) == 0:
        return []
    layout = gemm_layout(op)
    dtype = dtypes.from_ir(element_type(op.outputs[0].type)).name
    _check_blas_sizes(op, layout)
    buffers: list[SSAValue | str | Scratch] = [*op.inputs, *op.outputs]

    def finish(
        e: Emitter,
        region: Region,
        pointers: list[SSAValue],
        first: tuple[SSAValue, SSAValue],
        extents: tuple[Extent, Extent],
    ) -> None:
        _epilogue_block(e, region, op, pointers, first, extents)

    if op.panels:
        return _packed_panel_kernels(ctx, op, layout, buffers, finish)
    packed = _packed_rhs(op, ctx)
    if packed is not None:
        packing, panels = packed
        return _tiled_gemm_kernels(ctx.name, layout, dtype, [op.lhs, panels, *buffers[2:]], ctx.tuning, packing, finish)
    if _tiles(layout, dtype, ctx.tuning):
        return _tiled_gemm_kernels(ctx.name, layout, dtype, buffers, ctx.tuning, finish=finish)
    if _panels(layout, dtype, ctx.tuning):
        return [_panel_gemm_kernel(ctx.name, layout, dtype, buffers, ctx.threads, ctx.tuning, finish)]
    return _blas_kernel(ctx.name, layout, dtype, buffers, _epilogue_blocks(layout, dtype, ctx.tuning), finish)


def _epilogue_blocks(layout: GemmLayout, dtype: str, tuning: Tuning) -> _Blocks:
    """The BLAS blocks of a product with an epilogue: those of a plain product where
    each block of C fits `Tuning.gemm_epilogue_block_bytes` (finished while in
    cache), else row blocks of at most that. Column blocks repack only op(A):
    GPT-2's [128, 1024] x [1024, 256] + bias cut into row blocks repacked all of
    B per block, and ran 10-25% slower than the plain product cut by columns."""
    item_bytes = dtypes.from_name(dtype).nbytes
    blocks = _gemm_blocks(layout, tuning)
    block_bytes = blocks.size * (layout.n if blocks.by_rows else layout.m) * item_bytes
    if block_bytes <= tuning.gemm_epilogue_block_bytes:
        return blocks
    return _gemm_blocks(layout, tuning, most_rows=tuning.gemm_epilogue_block_bytes // max(1, layout.n * item_bytes))


KERNELS: dict[type[Operation], EmitKernels] = {
    ct.MatmulOp: matmul_kernels,
    rg.ContractionRegionOp: contraction_region_kernels,
}
"""Emitters of the contraction ops."""
