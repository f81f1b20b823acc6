"""GEMMs from JIT kernels, shared by every family whose kernels run them
(matmul, the recurrent ops, scan bodies): the CBLAS externals of
`rlx_mlir.blas`, its thread control and one call emitter; `register_tile`, the
emitted register-tiled small GEMM (explicit vector IR); and `Packing`, the
column panels a weight is packed into once so that the tiles stream it in order.

Row-major CBLAS: C (m x n) = alpha · op(A) · op(B) + beta · C, op a plain
transpose where the flag says so (also for complex), leading dimensions the
stored row lengths. Sizes are 32-bit (`blas.INT_MAX`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f32, f64, i8, i32
from xdsl.ir import Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.lowering.core import vectors
from rlx_mlir.lowering.core.element_types import Codec
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import PTR, External, Kernel, kernel_function
from rlx_mlir.lowering.core.loops import for_range
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

COMPONENT = {"f32": f32, "f64": f64, "complex<f32>": f32, "complex<f64>": f64}
"""The real type of each BLAS element type's parts."""

SET_THREADS = External(blas.symbol(blas.SET_NUM_THREADS), (i32,))

MACS_PER_ELEMENT = 16
"""A GEMM does about this many multiply-adds in the time an elementwise kernel
spends on one element, the unit of `Kernel.work` (so the entry only starts
threads for GEMMs that outlast a thread start)."""


def gemm_external(dtype: str) -> External:
    """`cblas_?gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`;
    complex alpha and beta are passed by pointer."""
    scalar = PTR if dtype.startswith("complex") else COMPONENT[dtype]
    inputs = (i32, i32, i32, i32, i32, i32, scalar, PTR, i32, PTR, i32, scalar, PTR, i32)
    return External(blas.symbol(blas.GEMM[dtype]), inputs)


def _scalar(e: Emitter, dtype: str, value: float) -> SSAValue:
    """A real `value` as the GEMM takes alpha and beta (complex ones by pointer)."""
    part = COMPONENT[dtype]
    if not dtype.startswith("complex"):
        return e.const(part, value)
    slot = e.op(llvm.AllocaOp(e.i64(2), part, alignment=8))
    e.store(e.const(part, value), slot)
    e.store(e.const(part, 0.0), e.field_ptr(slot, 1, part))
    return slot


def byte_pointer(e: Emitter, base: SSAValue, offset: SSAValue, item_bytes: int) -> SSAValue:
    """base + offset elements of `item_bytes` each, with a 64-bit index."""
    at = e.mul(offset, e.i64(item_bytes))
    return e.element_ptr(base, at, i8)


def gemm_call(
    e: Emitter,
    dtype: str,
    sizes: tuple[int, int, int],
    transposes: tuple[bool, bool],
    leading: tuple[int, int, int],
    beta: float = 0.0,
) -> Callable[..., None]:
    """call(a, b, c[, rows[, cols]]): C = op(A) · op(B) + beta · C for (m, n, k) =
    `sizes` (rows, cols: fewer than m or n, for a block) with leading dimensions
    (lda, ldb, ldc). The constants are emitted once, here. The kernel must list
    `gemm_external(dtype)` among its externals and have called `blas.load()`.
    OpenBLAS runs it on one thread (`single_threaded_blas` first)."""
    gemm = gemm_external(dtype)
    alpha, beta_value = _scalar(e, dtype, 1.0), _scalar(e, dtype, beta)
    order = e.const(i32, blas.ROW_MAJOR)
    flags = [e.const(i32, blas.TRANS if t else blas.NO_TRANS) for t in transposes]
    m, n, k = (e.const(i32, d) for d in sizes)
    lda, ldb, ldc = (e.const(i32, d) for d in leading)

    def call(a: SSAValue, b: SSAValue, c: SSAValue, rows: SSAValue | None = None, cols: SSAValue | None = None) -> None:
        e.op(llvm.CallOp(gemm.name, order, *flags, rows or m, cols or n, k, alpha, a, lda, b, ldb, beta_value, c, ldc))

    return call


def single_threaded_blas(name: str) -> Kernel:
    """Sets OpenBLAS to one thread: the kernels after it run their GEMMs from our threads."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        e.op(llvm.CallOp(SET_THREADS.name, e.const(i32, 1)))

    return Kernel(kernel_function(name, 0, build), [], 1, 1, parallel=False, externals=(SET_THREADS,))


# ---------------------------------------------------------------------------
# emitted register tiles (small GEMMs: matmul's tile kernel, the RNN steps)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Matrix:
    """Where `register_tile` finds element (i, j) of an operand: ptr[base + i·row + j·col]."""

    ptr: SSAValue
    base: SSAValue
    row: int
    col: int = 1


def even_tile_rows(rows: int, most: int) -> int:
    """Rows of the register tiles that cover `rows` rows in as few tiles of at most
    `most` rows as can, as evenly as they can: 8 rows on AVX2 (6 at most) are
    4 + 4, not 6 + a 2-row tile whose 4 chains of FMAs leave the FMA units half
    idle. An LSTM's steps at batch 8 (B8 S128 H256, 2 threads, a Zen 3): 35.0 -> 32.9-33.6 ms."""
    rows = max(1, rows)
    return -(-rows // -(-rows // most))


def register_tile(
    e: Emitter,
    region: Region,
    item: Codec,
    shape: tuple[int, int, int | SSAValue],
    a: Matrix,
    b: Matrix,
    c: Matrix,
    vector_bytes: int,
    accumulate: bool = False,
) -> None:
    """C = A · B (C += A · B if `accumulate`) for a (rows, cols, k) = `shape` tile
    in explicit vector IR (B and C with unit column stride; k may be known only
    at run time): rows x cols accumulators (vectors of up to `vector_bytes`, the
    target's widest, then halves) held in registers over the whole k loop,
    acc += splat(A[r, kk]) * B[kk, j0:j1] with vector FMAs, then one store
    each. The callers keep the accumulators within
    `Tuning.accumulators`, about half the vector registers (the rest hold the
    operands): `Tuning.gemm_tile_rows` rows x `Tuning.tile_bytes()` (two vectors)."""
    rows, cols, k = shape
    pieces = vectors.pieces(cols, vector_bytes // item.dtype.nbytes)

    def step(kk: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        b_at = e.add(b.base, e.mul(kk, e.i64(b.row)))
        bs = [vectors.load(e, item.storage, b.ptr, e.add(b_at, e.i64(off)), w) for off, w in pieces]
        a_at = e.add(a.base, e.mul(kk, e.i64(a.col)))
        new = []
        for r in range(rows):
            scalar = vectors.load(e, item.storage, a.ptr, e.add(a_at, e.i64(r * a.row)), 1)
            splats = {w: vectors.splat(e, scalar, w) for w in {w for _, w in pieces}}
            for p, ((_, w), bv) in enumerate(zip(pieces, bs)):
                new.append(e.fma(splats[w], bv, accs[r * len(pieces) + p]))
        return new

    if accumulate:
        init = [
            vectors.load(e, item.storage, c.ptr, e.add(c.base, e.i64(r * c.row + off)), w)
            for r in range(rows)
            for off, w in pieces
        ]
    else:
        init = [vectors.splat(e, e.const(item.compute, 0.0), w) for _, w in pieces] * rows
    accs = vectors.carry(e, region, k, init, step)
    for r in range(rows):
        for (off, _), acc in zip(pieces, accs[r * len(pieces) : (r + 1) * len(pieces)]):
            vectors.store(e, acc, c.ptr, e.add(c.base, e.i64(r * c.row + off)))


# ---------------------------------------------------------------------------
# packed weights: column panels read by the tiles in order
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Packing:
    """`count` matrices op(W) [k, n] of a weight, from element `source` on (stride
    n·k), packed into column panels at `target` on: panel c0 .. c0 + w of matrix m
    holds op(W)[kk, c] at target + m·n·k + c0·k + kk·w + c, so a register tile
    (`register_tile` with `Matrix(packed, target + c0·k, w)`) streams it in order.
    A `transposed` weight is stored [n, k] (op(W) = Wᵀ, as `rlx.rnn`'s W_ih and
    W_hh and a matmul's `transpose_rhs`), else [k, n]. Packing permutes the
    elements: the packed matrices take exactly the weight's bytes."""

    count: int
    n: int
    k: int
    source: int
    target: int
    panel: int
    """Columns per panel (the last one may be narrower)."""
    transposed: bool = True
    padded: bool = False
    """Whether the last panel is as wide as the others, zero past n (`rlx.matmul`'s
    `rhs_panels`), rather than only as wide as the columns left."""

    def panels(self) -> tuple[int, int, int]:
        """(panel width, full panels, tail width) of one matrix."""
        return self.panel, self.n // self.panel, self.n % self.panel

    def units(self) -> int:
        """One per (matrix, panel)."""
        return self.count * -(-self.n // self.panel)

    def panel_matrix(self, e: Emitter, packed: SSAValue, c0: SSAValue, width: int, matrix: int = 0) -> Matrix:
        """The panel of columns c0 .. c0 + width of matrix `matrix` as a tile operand."""
        base = e.add(e.i64(self.target + matrix * self.n * self.k), e.mul(c0, e.i64(self.k)))
        return Matrix(packed, base, self.panel if self.padded else width)


def weight_packing(shape: tuple[int, ...], transposed: bool, item: Codec, tuning: Tuning) -> Packing:
    """One 2-D weight W (`shape` as stored) packed for the tiles of
    `tuning.tile_bytes()` columns of op(W): what a loop packs before its steps
    and its body's GEMM reads (the packer and the reader must be built from
    the same `tuning`, so the panels are as wide as the tiles)."""
    rows, cols = shape
    n, k = (rows, cols) if transposed else (cols, rows)
    return Packing(1, n, k, 0, 0, tuning.tile_bytes() // item.dtype.nbytes, transposed)


PACK_BLOCK: Final = 16
"""Rows of a transposed weight's panel packed together: one 64-byte cache line
of each source row (f32), whatever the vector width."""


def emit_panel(
    e: Emitter, region: Region, item: Codec, source: Matrix, target: tuple[SSAValue, SSAValue], k: int, width: SSAValue
) -> None:
    """packed[base + kk·width + c] = op(W)[kk, c] for kk < k, c < width, with
    op(W)[kk, c] at `source` (its `row` stride along kk, `col` along c) and
    (packed, base) = `target`: one panel. A transposed weight (`row` stride 1)
    is copied in blocks of PACK_BLOCK rows: row by row, a panel 128 columns wide
    strides through more source lines than L1 holds (an LSTM packs its W_ih and
    W_hh this way on every call: 5% of the text classifier's call at batch 1)."""
    packed, base = target

    def element(kk: SSAValue, c: SSAValue) -> None:
        at = e.add(source.base, e.add(e.mul(kk, e.i64(source.row)), e.mul(c, e.i64(source.col))))
        item.copy(e, source.ptr, at, packed, e.add(base, e.add(e.mul(kk, width), c)))

    if source.row != 1:
        for_range(
            e, region, e.i64(0), e.i64(k), lambda kk: for_range(e, region, e.i64(0), width, lambda c: element(kk, c))
        )
        return

    def block(k0: SSAValue, depth: int) -> None:
        """Rows k0 .. k0 + depth, column by column: the lines read and written stay in L1."""
        for_range(
            e,
            region,
            e.i64(0),
            width,
            lambda c: for_range(e, region, k0, e.add(k0, e.i64(depth)), lambda kk: element(kk, c)),
        )

    whole = k // PACK_BLOCK * PACK_BLOCK
    if whole:
        for_range(e, region, e.i64(0), e.i64(whole), lambda k0: block(k0, PACK_BLOCK), PACK_BLOCK)
    if k % PACK_BLOCK:
        block(e.i64(whole), k % PACK_BLOCK)


def emit_packing(
    e: Emitter, region: Region, item: Codec, packing: Packing, pointers: tuple[SSAValue, SSAValue], u: SSAValue
) -> None:
    """Pack unit `u` of `packing` from the weight into the packed buffer."""
    weight, packed = pointers
    n, k = packing.n, packing.k
    panel, full, tail = packing.panels()
    count = full + (tail > 0)
    matrix, jt = e.udiv(u, e.i64(count)), e.urem(u, e.i64(count))
    c0 = e.mul(jt, e.i64(panel))
    w = e.smin(e.i64(panel), e.sub(e.i64(n), c0))
    at = e.mul(matrix, e.i64(n * k))
    along_k, along_c = (1, k) if packing.transposed else (n, 1)  # strides of op(W)[kk, c] in the weight
    source = e.add(e.add(at, e.i64(packing.source)), e.mul(c0, e.i64(along_c)))
    target = e.add(e.add(at, e.i64(packing.target)), e.mul(c0, e.i64(k)))
    emit_panel(e, region, item, Matrix(weight, source, along_k, along_c), (packed, target), k, w)


def packing_kernel(name: str, item: Codec, packing: Packing, weight: SSAValue, packed: Scratch) -> Kernel:
    """Packs `weight` into `packed`, one unit (matrix, panel) per step of the range."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        weight, packed = pointers
        for_range(e, region, begin, end, lambda u: emit_packing(e, region, item, packing, (weight, packed), u))

    work = packing.count * packing.n * packing.k
    return Kernel(kernel_function(name, 2, build), [weight, packed], packing.units(), work)
