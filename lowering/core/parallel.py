"""Running one kernel on several threads, from JIT code.

A kernel's parallel launcher hands its thunk and outer range [0, n) to the
process's thread pool (`rlx_mlir.thread_pool`), which cuts the range into
grains that the calling thread and workers started once claim, and returns
when all are done. Kernels smaller than `Tuning.parallel_min_elements` stay
on the calling thread (a + b broke even at ~2^15 f32 elements on 2 Zen 5
cores, tanh(a + b) at ~2^13). The pool is resolved
by name, like the BLAS: a module that launches in parallel declares it.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Region

from rlx_mlir import thread_pool
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import PTR, External

POOL = External(thread_pool.SYMBOL, (PTR, PTR, i64, i64))
"""The pool's entry point: (thunk, args, n, threads)."""


def emit_parallel_launcher(thunk: llvm.FuncOp, name: str, threads: int) -> llvm.FuncOp:
    """`void name(ptr args, i64 n)`: run `thunk` over [0, n) on up to `threads` threads of the pool."""
    entry = Block(arg_types=[PTR, i64])
    e = Emitter(entry)
    args, n = entry.args
    function = e.op(llvm.AddressOfOp(thunk.sym_name.data, PTR))
    e.op(llvm.CallOp(thread_pool.SYMBOL, function, args, n, e.i64(threads)))
    e.op(llvm.ReturnOp())
    return llvm.FuncOp(name, llvm.LLVMFunctionType([PTR, i64]), body=Region([entry]))
