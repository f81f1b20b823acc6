"""Running one kernel on several threads, from JIT code.

The launcher splits the kernel's outer range [0, n) into one chunk per
thread, starts a pthread per chunk but the first (which the calling thread
runs), and joins them. pthreads come from libc, which every Python process
has loaded, so MCJIT resolves them without any extra library.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Block, Region, SSAValue

from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import PTR, External
from rlx_mlir.lowering.loops import for_range

# Below this many elements a kernel runs on the calling thread: starting a
# thread costs ~20 us, about what 2^17 simple elements take on one core.
PARALLEL_MIN_ELEMENTS = 1 << 17


PTHREAD = (
    External("pthread_create", (PTR, PTR, PTR, PTR), i32),
    External("pthread_join", (i64, PTR), i32),
)


def emit_parallel_launcher(thunk: llvm.FuncOp, name: str, threads: int) -> list[llvm.FuncOp]:
    """`void name(ptr args, i64 n)`: split [0, n) into `threads` chunks, run chunk 0
    here and the rest on pthreads, then join. If a thread cannot be created its
    chunk runs on the calling thread instead."""
    thunk_name = thunk.sym_name.data
    worker = _emit_worker(thunk_name, f"{name}_worker")

    entry = Block(arg_types=[PTR, i64])
    region = Region([entry])
    e = Emitter(entry)
    args, n = entry.args
    count = e.i64(threads)
    tasks = e.op(llvm.AllocaOp(e.i64(3 * threads), i64, alignment=8))
    tids = e.op(llvm.AllocaOp(e.i64(threads), i64, alignment=8))
    codes = e.op(llvm.AllocaOp(e.i64(threads), i32, alignment=4))
    null = e.op(llvm.ZeroOp(result_types=[PTR]))
    worker_ptr = e.op(llvm.AddressOfOp(worker.sym_name.data, PTR))

    def chunk_bound(t: SSAValue) -> SSAValue:
        return e.op(llvm.SDivOp(e.mul(n, t), count))

    def spawn(t: SSAValue) -> None:
        task = _slot(e, tasks, e.mul(t, e.i64(3)))
        e.op(llvm.StoreOp(e.op(llvm.PtrToIntOp(args, i64)), task))
        e.op(llvm.StoreOp(chunk_bound(t), _slot(e, task, e.i64(1))))
        e.op(llvm.StoreOp(chunk_bound(e.add(t, e.i64(1))), _slot(e, task, e.i64(2))))
        code = e.op(llvm.CallOp("pthread_create", _slot(e, tids, t), null, worker_ptr, task, return_type=i32))
        e.op(llvm.StoreOp(code, e.op(llvm.GEPOp(codes, [llvm.GEP_USE_SSA_VAL], i32, ssa_indices=[t]))))

    def join(t: SSAValue) -> None:
        code = e.op(llvm.LoadOp(e.op(llvm.GEPOp(codes, [llvm.GEP_USE_SSA_VAL], i32, ssa_indices=[t])), i32))
        started, not_started, after = Block(), Block(), Block()
        e.op(llvm.CondBrOp(e.icmp("eq", code, e.const(i32, 0)), started, [], not_started, []))
        region.add_block(started)
        e.move_to(started)
        e.op(llvm.CallOp("pthread_join", e.op(llvm.LoadOp(_slot(e, tids, t), i64)), null, return_type=i32))
        e.op(llvm.BrOp(after))
        region.add_block(not_started)
        e.move_to(not_started)
        task = _slot(e, tasks, e.mul(t, e.i64(3)))
        lo = e.op(llvm.LoadOp(_slot(e, task, e.i64(1)), i64))
        hi = e.op(llvm.LoadOp(_slot(e, task, e.i64(2)), i64))
        e.op(llvm.CallOp(thunk_name, args, lo, hi))
        e.op(llvm.BrOp(after))
        region.add_block(after)
        e.move_to(after)

    for_range(e, region, e.i64(1), count, spawn)
    e.op(llvm.CallOp(thunk_name, args, e.i64(0), chunk_bound(e.i64(1))))
    for_range(e, region, e.i64(1), count, join)
    e.op(llvm.ReturnOp())
    launcher = llvm.FuncOp(name, llvm.LLVMFunctionType([PTR, i64]), body=region)
    return [worker, launcher]


def _slot(e: Emitter, base: SSAValue, index: SSAValue) -> SSAValue:
    return e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], i64, ssa_indices=[index]))


def _emit_worker(thunk_name: str, name: str) -> llvm.FuncOp:
    """`ptr name(ptr task)`: the pthread start routine; task = {args, begin, end}."""
    entry = Block(arg_types=[PTR])
    e = Emitter(entry)
    task = entry.args[0]
    args = e.op(llvm.IntToPtrOp(e.op(llvm.LoadOp(task, i64))))
    lo = e.op(llvm.LoadOp(_slot(e, task, e.i64(1)), i64))
    hi = e.op(llvm.LoadOp(_slot(e, task, e.i64(2)), i64))
    e.op(llvm.CallOp(thunk_name, args, lo, hi))
    e.op(llvm.ReturnOp(e.op(llvm.ZeroOp(result_types=[PTR]))))
    return llvm.FuncOp(name, llvm.LLVMFunctionType([PTR], PTR), body=Region([entry]))
