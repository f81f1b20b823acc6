"""Lower one planned `func.func` to `llvm` dialect functions.

The result is, per kernel, a kernel function, a uniform thunk and (for large
kernels) a parallel launcher, plus the entry function

    void @<name>(ptr %arena, ptr %io, ptr %status)

where `io` points at the input pointers followed by the output pointers and
`status` at the index-error block (see `lowering.kernel`).
The entry walks the schedule: it computes each kernel's buffer pointers
(arena + planned offset, an input, or an output) and calls the kernel.
Reshape views cost nothing (they reuse their source's pointer); returned
values that no kernel wrote in place are copied with `llvm.memcpy`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import DenseArrayBase, i1, i8, i32, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from rlx_mlir.dialects import rlx
from rlx_mlir.dialects import movement as mv
from rlx_mlir.lowering.elementwise import region_kernels
from rlx_mlir.lowering.kernel import PTR, STATUS, Kernel, KernelContext, drop_noalias, emit_thunk, index_checks
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.loops import for_range
from rlx_mlir.passes.plan_memory import NOT_IN_ARENA, nbytes, output_bindings, view_offset, view_source

# Below this many elements a kernel runs on the calling thread: starting a
# thread costs ~20 us, about what 2^17 simple elements take on one core.
PARALLEL_MIN_ELEMENTS = 1 << 17


@dataclass
class LoweredProgram:
    functions: list[llvm.FuncOp] = field(default_factory=list)
    externals: set[str] = field(default_factory=set)


def _external(name: str, inputs: list[Attribute], output: Attribute) -> llvm.FuncOp:
    return llvm.FuncOp(name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("external"))


PTHREAD = {
    "pthread_create": lambda: _external("pthread_create", [PTR, PTR, PTR, PTR], i32),
    "pthread_join": lambda: _external("pthread_join", [i64, PTR], i32),
}


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


class _EntryBuilder:
    """Builds the entry function while the kernels are emitted alongside."""

    def __init__(self, function: func.FuncOp, threads: int) -> None:
        self.function = function
        self.threads = threads
        self.name = function.sym_name.data
        self.block = Block(arg_types=[PTR, PTR, PTR])
        self.region = Region([self.block])
        self.e = Emitter(self.block)
        self.arena, self.io, self.status = self.block.args
        self.n_inputs = len(function.function_type.inputs)
        self.bindings = output_bindings(function)
        self.pointers: dict[tuple[str, int, int], SSAValue] = {}
        self.program = LoweredProgram()

    def io_pointer(self, slot: int) -> SSAValue:
        e = self.e
        return e.op(llvm.LoadOp(e.op(llvm.GEPOp(self.io, [slot], PTR, inbounds=True)), PTR))

    def location(self, value: SSAValue) -> tuple[str, int, int]:
        """Where `value` lives: (io slot or arena, slot or offset, byte offset into it)."""
        root, delta = view_source(value)
        if isinstance(root, BlockArgument):
            return ("io", root.index, delta)
        if root in self.bindings:
            return ("io", self.n_inputs + self.bindings[root], delta)
        return ("arena", _planned_offset(root) + delta, 0)

    def pointer(self, value: SSAValue) -> SSAValue:
        """One pointer per location, so values sharing memory share the SSA pointer."""
        location = self.location(value)
        if location not in self.pointers:
            kind, where, delta = location
            if kind == "io":
                base = self.io_pointer(where)
                self.pointers[location] = self.e.op(llvm.GEPOp(base, [delta], i8, inbounds=True)) if delta else base
            else:
                self.pointers[location] = self.e.op(llvm.GEPOp(self.arena, [where], i8, inbounds=True))
        return self.pointers[location]

    def launch(self, kernel: Kernel) -> None:
        """Call `kernel` on its buffers: directly, or split across threads."""
        e = self.e
        pointers = [self.status if b == STATUS else self.pointer(b) for b in kernel.buffers]
        drop_noalias(kernel.function, {k for k, p in enumerate(pointers) if pointers.count(p) > 1})
        name = kernel.function.sym_name.data
        thunk = emit_thunk(kernel.function, f"{name}_thunk", len(pointers))
        self.program.functions += [*kernel.helpers, kernel.function, thunk]
        args = e.op(llvm.AllocaOp(e.i64(len(pointers)), PTR, alignment=8))
        for k, ptr in enumerate(pointers):
            e.op(llvm.StoreOp(ptr, e.op(llvm.GEPOp(args, [k], PTR, inbounds=True))))
        extent = e.i64(kernel.extent)
        big = kernel.work >= PARALLEL_MIN_ELEMENTS and kernel.extent >= self.threads
        if kernel.parallel and self.threads > 1 and big:
            launcher = emit_parallel_launcher(thunk, f"{name}_parallel", self.threads)
            self.program.functions += launcher
            self.program.externals |= set(PTHREAD)
            e.op(llvm.CallOp(launcher[-1].sym_name.data, args, extent))
        else:
            e.op(llvm.CallOp(thunk.sym_name.data, args, e.i64(0), extent))
        if STATUS in kernel.buffers:
            self.return_on_index_error()

    def return_on_index_error(self) -> None:
        """Stop at the first kernel that met a bad index: later kernels would read its garbage."""
        e = self.e
        failed, go_on = Block(), Block()
        code = e.op(llvm.LoadOp(self.status, i64, alignment=8))
        e.op(llvm.CondBrOp(e.icmp("ne", code, e.i64(0)), failed, [], go_on, []))
        self.region.add_block(failed)
        e.move_to(failed)
        e.op(llvm.ReturnOp())
        self.region.add_block(go_on)
        e.move_to(go_on)

    def copy_unbound_outputs(self, returned: list[SSAValue]) -> None:
        for j, value in enumerate(returned):
            if self.bindings.get(value) == j:
                continue
            e = self.e
            size = e.i64(nbytes(value))
            dst = self.io_pointer(self.n_inputs + j)
            e.intrinsic("llvm.memcpy.p0.p0.i64", [dst, self.pointer(value), size, e.const(i1, 0)], None)

    def finish(self) -> LoweredProgram:
        self.e.op(llvm.ReturnOp())
        entry = llvm.FuncOp(
            self.name,
            llvm.LLVMFunctionType([PTR, PTR, PTR]),
            body=self.region,
            linkage=llvm.LinkageAttr("external"),
        )
        self.program.functions.append(entry)
        return self.program


def _planned_offset(value: SSAValue) -> int:
    owner = value.owner
    assert isinstance(owner, Operation)
    attr = owner.attributes.get("rlx.offsets")
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{owner.name}' has no memory plan: run plan-memory before lower-to-llvm")
    offset = attr.get_values()[value.index]  # type: ignore[attr-defined]
    if offset == NOT_IN_ARENA:
        raise ValueError(f"'{owner.name}' result #{value.index} was not given arena memory")  # type: ignore[attr-defined]
    return offset


Emit = Callable[[Operation, KernelContext], list[Kernel]]


def kernel_emitters() -> dict[type[Operation], Emit]:
    """The kernel emitter of each op that runs code (one module per family)."""
    from rlx_mlir.lowering import indexing, movement

    return {
        rlx.ElementwiseRegionOp: region_kernels,
        mv.ConcatOp: movement.concat_kernels,
        mv.PadOp: movement.pad_kernels,
        **{op: indexing.KERNELS[op] for op in mv.INDEXED_OPS},
    }  # type: ignore[dict-item]


def lower_function(function: func.FuncOp, threads: int) -> LoweredProgram:
    """Lower a planned function (every compute op a region, concat, pad or
    gather/scatter; elementwise leftovers already wrapped in regions)."""
    builder = _EntryBuilder(function, threads)
    emitters = kernel_emitters()
    codes = {op: k + 1 for k, op in enumerate(index_checks(function))}
    returned: list[SSAValue] = []
    for index, op in enumerate(function.body.block.ops):
        emit = emitters.get(type(op))
        if emit is not None:
            for kernel in emit(op, KernelContext(f"{builder.name}_k{index}", codes.get(op, 0))):
                builder.launch(kernel)
        elif isinstance(op, func.ReturnOp):
            returned = list(op.arguments)
        elif not isinstance(op, rlx.ConstantOp) and view_offset(op) is None:
            raise ValueError(f"lower-to-llvm cannot lower '{op.name}' yet")
    builder.copy_unbound_outputs(returned)
    return builder.finish()


def external_declarations(names: set[str]) -> list[llvm.FuncOp]:
    return [PTHREAD[n]() for n in sorted(names)]
