"""GEMM calls from JIT kernels: the CBLAS externals of `rlx_mlir.blas`, its
thread control, and one call emitter, shared by every family whose kernels
run GEMMs (matmul, the recurrent ops).

Row-major CBLAS: C (m x n) = alpha · op(A) · op(B) + beta · C, op a plain
transpose where the flag says so (also for complex), leading dimensions the
stored row lengths. Sizes are 32-bit (`blas.INT_MAX`).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f32, f64, i8, i32
from xdsl.ir import Region, SSAValue

from rlx_mlir import blas
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
