"""GEMMs from JIT kernels, shared by every family whose kernels run them
(matmul, the recurrent ops): the CBLAS externals of `rlx_mlir.blas`, its
thread control and one call emitter; and `register_tile`, the emitted
register-tiled small GEMM (explicit vector IR).

Row-major CBLAS: C (m x n) = alpha · op(A) · op(B) + beta · C, op a plain
transpose where the flag says so (also for complex), leading dimensions the
stored row lengths. Sizes are 32-bit (`blas.INT_MAX`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, VectorType, f32, f64, i8, i32, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.lowering.element_types import Codec
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import PTR, External, Kernel, kernel_function

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
    e.op(llvm.StoreOp(e.const(part, value), slot))
    e.op(llvm.StoreOp(e.const(part, 0.0), e.op(llvm.GEPOp(slot, [1], part, inbounds=True))))
    return slot


def byte_pointer(e: Emitter, base: SSAValue, offset: SSAValue, item_bytes: int) -> SSAValue:
    """base + offset elements of `item_bytes` each, with a 64-bit index."""
    at = e.mul(offset, e.i64(item_bytes))
    return e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], i8, ssa_indices=[at], inbounds=True))


def gemm_call(
    e: Emitter,
    dtype: str,
    sizes: tuple[int, int, int],
    transposes: tuple[bool, bool],
    leading: tuple[int, int, int],
    threads: int | None = None,
    beta: float = 0.0,
) -> Callable[..., None]:
    """call(a, b, c[, rows]): C = op(A) · op(B) + beta · C for (m, n, k) = `sizes`
    (rows: fewer than m, for a row block) with leading dimensions (lda, ldb, ldc).
    The constants are emitted once, here; with `threads`, the BLAS thread count
    is set first. The kernel must list `gemm_external(dtype)` (and SET_THREADS)
    among its externals and have called `blas.load()`."""
    gemm = gemm_external(dtype)
    alpha, beta_value = _scalar(e, dtype, 1.0), _scalar(e, dtype, beta)
    if threads is not None:
        e.op(llvm.CallOp(SET_THREADS.name, e.const(i32, threads)))
    order = e.const(i32, blas.ROW_MAJOR)
    flags = [e.const(i32, blas.TRANS if t else blas.NO_TRANS) for t in transposes]
    m, n, k = (e.const(i32, d) for d in sizes)
    lda, ldb, ldc = (e.const(i32, d) for d in leading)

    def call(a: SSAValue, b: SSAValue, c: SSAValue, rows: SSAValue | None = None) -> None:
        e.op(llvm.CallOp(gemm.name, order, *flags, rows or m, n, k, alpha, a, lda, b, ldb, beta_value, c, ldc))

    return call


def single_threaded_blas(name: str) -> Kernel:
    """Sets OpenBLAS to one thread: the kernels after it run their GEMMs from our threads."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        e.op(llvm.CallOp(SET_THREADS.name, e.const(i32, 1)))

    return Kernel(kernel_function(name, 0, build), [], 1, 1, parallel=False, externals=(SET_THREADS,))


# ---------------------------------------------------------------------------
# emitted register tiles (small GEMMs: matmul's tile kernel, the RNN steps)
# ---------------------------------------------------------------------------

TILE_ROWS = 8
TILE_BYTES = 128
"""A tile of C is TILE_ROWS rows x TILE_BYTES of columns (8 x 32 f32: sixteen
512-bit accumulators), held in registers over the whole K loop."""

VECTOR_BYTES = 64
"""The widest vector the tiles use (<16 x float>); narrower tails halve it."""


def _column_pieces(cols: int, widest: int) -> list[tuple[int, int]]:
    """(offset, width) pieces covering `cols` columns: full vectors, then halves, ..., scalars."""
    pieces, offset, width = [], 0, widest
    while offset < cols:
        while width > cols - offset:
            width //= 2
        pieces.append((offset, width))
        offset += width
    return pieces


def _vector_type(item: Codec, width: int) -> Attribute:
    return item.storage if width == 1 else VectorType(item.storage, [width])


def _load_vector(e: Emitter, item: Codec, base: SSAValue, index: SSAValue, width: int) -> SSAValue:
    at = e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], item.storage, ssa_indices=[index], inbounds=True))
    return e.op(llvm.LoadOp(at, _vector_type(item, width), alignment=item.dtype.nbytes))


def _store_vector(e: Emitter, item: Codec, value: SSAValue, base: SSAValue, index: SSAValue) -> None:
    at = e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], item.storage, ssa_indices=[index], inbounds=True))
    e.op(llvm.StoreOp(value, at, alignment=item.dtype.nbytes))


def _splat(e: Emitter, scalar: SSAValue, width: int) -> SSAValue:
    if width == 1:
        return scalar
    vector = VectorType(scalar.type, [width])
    one = e.op(llvm.InsertElementOp(e.op(llvm.UndefOp(vector)), scalar, e.const(i32, 0)))
    return e.op(llvm.ShuffleVectorOp(one, one, DenseArrayBase.from_list(i32, [0] * width), vector))


def _accumulate(
    e: Emitter,
    region: Region,
    count: int,
    init: list[SSAValue],
    step: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """values = init; for i in range(count): values = step(i, values); the final values."""
    header, loop, exit_ = Block(arg_types=[i64, *(v.type for v in init)]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, e.i64(0), *init))
    e.move_to(header)
    index, *values = header.args
    e.op(llvm.CondBrOp(e.icmp("slt", index, e.i64(count)), loop, [], exit_, []))
    e.move_to(loop)
    e.op(llvm.BrOp(header, e.add(index, e.i64(1)), *step(index, list(values))))
    region.add_block(exit_)
    e.move_to(exit_)
    return list(values)


@dataclass(frozen=True)
class Matrix:
    """Where `register_tile` finds element (i, j) of an operand: ptr[base + i·row + j·col]."""

    ptr: SSAValue
    base: SSAValue
    row: int
    col: int = 1


def register_tile(
    e: Emitter, region: Region, item: Codec, shape: tuple[int, int, int], a: Matrix, b: Matrix, c: Matrix
) -> None:
    """C = A · B for a (rows, cols, k) = `shape` tile in explicit vector IR (B and
    C with unit column stride): rows x cols accumulators (vectors of up to
    VECTOR_BYTES, then halves) held in registers over the whole k loop, acc +=
    splat(A[r, kk]) * B[kk, j0:j1] with vector FMAs, then one store each."""
    rows, cols, k = shape
    pieces = _column_pieces(cols, VECTOR_BYTES // item.dtype.nbytes)

    def step(kk: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        b_at = e.add(b.base, e.mul(kk, e.i64(b.row)))
        bs = [_load_vector(e, item, b.ptr, e.add(b_at, e.i64(off)), w) for off, w in pieces]
        a_at = e.add(a.base, e.mul(kk, e.i64(a.col)))
        new = []
        for r in range(rows):
            scalar = _load_vector(e, item, a.ptr, e.add(a_at, e.i64(r * a.row)), 1)
            splats = {w: _splat(e, scalar, w) for w in {w for _, w in pieces}}
            for p, ((_, w), bv) in enumerate(zip(pieces, bs)):
                new.append(e.fma(splats[w], bv, accs[r * len(pieces) + p]))
        return new

    zeros = [_splat(e, e.const(item.compute, 0.0), w) for _, w in pieces]
    accs = _accumulate(e, region, k, zeros * rows, step)
    for r in range(rows):
        for (off, _), acc in zip(pieces, accs[r * len(pieces) : (r + 1) * len(pieces)]):
            _store_vector(e, item, acc, c.ptr, e.add(c.base, e.i64(r * c.row + off)))
