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
from xdsl.dialects.builtin import i1, i8, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.lowering import contraction, indexing, movement, reduction, reduction_region, rnn
from rlx_mlir.lowering.elementwise import region_kernels
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import (
    PTR,
    STATUS,
    External,
    Kernel,
    KernelContext,
    drop_noalias,
    emit_thunk,
)
from rlx_mlir.lowering.parallel import (
    PARALLEL_MIN_ELEMENTS,
    PTHREAD,
    emit_parallel_launcher,
)
from rlx_mlir.memory_plan import (
    Scratch,
    index_checks,
    nbytes,
    output_bindings,
    planned_offset,
    scratch_offset,
    view_offset,
    view_source,
)
from rlx_mlir.verification import function_block


@dataclass
class LoweredProgram:
    functions: list[llvm.FuncOp] = field(default_factory=list)
    externals: set[External] = field(default_factory=set)


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
        return ("arena", planned_offset(root) + delta, 0)

    def byte_offset(self, base: SSAValue, offset: int) -> SSAValue:
        """base + offset bytes, with a 64-bit index (a constant GEP index is only 32 bits)."""
        e = self.e
        return e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], i8, ssa_indices=[e.i64(offset)], inbounds=True))

    def pointer(self, value: SSAValue) -> SSAValue:
        """One pointer per location, so values sharing memory share the SSA pointer."""
        location = self.location(value)
        if location not in self.pointers:
            kind, where, delta = location
            if kind == "io":
                base = self.io_pointer(where)
                self.pointers[location] = self.byte_offset(base, delta) if delta else base
            else:
                self.pointers[location] = self.byte_offset(self.arena, where)
        return self.pointers[location]

    def buffer_pointer(self, buffer: SSAValue | str | Scratch) -> SSAValue:
        if buffer == STATUS:
            return self.status
        if isinstance(buffer, Scratch):
            return self.byte_offset(self.arena, scratch_offset(buffer))
        return self.pointer(buffer)  # type: ignore[arg-type]

    def launch(self, kernel: Kernel) -> None:
        """Call `kernel` on its buffers: directly, or split across threads."""
        e = self.e
        pointers = [self.buffer_pointer(b) for b in kernel.buffers]
        drop_noalias(kernel.function, {k for k, p in enumerate(pointers) if pointers.count(p) > 1})
        name = kernel.function.sym_name.data
        thunk = emit_thunk(kernel.function, f"{name}_thunk", len(pointers))
        self.program.functions += [kernel.function, thunk]
        args = e.op(llvm.AllocaOp(e.i64(len(pointers)), PTR, alignment=8))
        for k, ptr in enumerate(pointers):
            e.op(llvm.StoreOp(ptr, e.op(llvm.GEPOp(args, [k], PTR, inbounds=True))))
        self.program.externals |= set(kernel.externals)
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


Emit = Callable[[Operation, KernelContext], list[Kernel]]


KERNELS: dict[type[Operation], Emit] = {
    rg.ElementwiseRegionOp: region_kernels,
    **movement.KERNELS,
    **indexing.KERNELS,
    **contraction.KERNELS,
    **reduction.KERNELS,
    **reduction_region.KERNELS,
    **rnn.KERNELS,
}  # type: ignore[dict-item]
"""The kernel emitter of each op that runs code (one module per family)."""


def lower_function(function: func.FuncOp, threads: int) -> LoweredProgram:
    """Lower a planned function (every compute op a region or an op with a
    kernel emitter; elementwise leftovers already wrapped in regions)."""
    builder = _EntryBuilder(function, threads)
    codes = {op: k + 1 for k, op in enumerate(index_checks(function))}
    returned: list[SSAValue] = []
    for index, op in enumerate(function_block(function).ops):
        emit = KERNELS.get(type(op))
        if emit is not None:
            for kernel in emit(op, KernelContext(f"{builder.name}_k{index}", codes.get(op, 0), threads)):
                builder.launch(kernel)
        elif isinstance(op, func.ReturnOp):
            returned = list(op.arguments)
        elif not isinstance(op, rlx.ConstantOp) and view_offset(op) is None:
            raise ValueError(f"lower-to-llvm cannot lower '{op.name}' yet")
    builder.copy_unbound_outputs(returned)
    return builder.finish()
