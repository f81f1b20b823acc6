"""Lower one planned `func.func` to `llvm` dialect functions.

The result is, per kernel, a kernel function (plus, for large kernels, a
uniform thunk and a parallel launcher), and the entry function

    void @<name>(ptr %arena, ptr %io, ptr %status, ptr %constants)

where `io` points at the input pointers followed by the output pointers,
`status` at the index-error block (see `lowering.core.kernel`) and
`constants` at the table of constant pointers (slot k: the address of the
constant with `rlx.constant_slot` k; `rlx_mlir/memory_plan.py`).
The entry walks the schedule: it computes each kernel's buffer pointers
(arena + planned offset, a constant's pointer, an input, or an output) and
calls the kernel on them, or hands them to its parallel launcher in an array.
Reshape views cost nothing (they reuse their source's pointer); returned
values that no kernel wrote in place are copied with `llvm.memcpy`.

Kernels are shared: an op with the same structure as one already lowered
(`structure`: its name, types, attributes but the plan's, and the ops of its
regions) whose operands and results share memory the same way is launched
on the first one's kernels (and thunks and launchers) with its own pointers. A
graph that repeats a layer, or a chain of pads and transposes, then costs
LLVM a few kernels, not one per op.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import IntegerAttr, i1, i8, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import NeedsScratch, element_type, shape_of
from rlx_mlir.dialects.scan import LoopOp, ScanBackwardOp, ScanOp
from rlx_mlir.lowering.core.element_types import codec
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import byte_pointer, packing_kernel, weight_packing
from rlx_mlir.lowering.core.kernel import (
    PTR,
    STATUS,
    STATUS_FIELDS,
    EmitKernels,
    External,
    Kernel,
    KernelContext,
    emit_thunk,
    share_aliased_pointers,
)
from rlx_mlir.lowering.core.loops import for_range, if_then, while_loop
from rlx_mlir.lowering.core.parallel import POOL, emit_parallel_launcher
from rlx_mlir.lowering.core.translate import keep_loops_rolled
from rlx_mlir.lowering.kernels import (
    arg_reduce,
    attention,
    contraction,
    conv,
    delta_rule,
    indexing,
    movement,
    normalize,
    reduction_region,
    rnn,
    standardize,
    state_space,
)
from rlx_mlir.lowering.kernels.elementwise import region_kernels
from rlx_mlir.lowering.scalar.scalar_ops import yielded
from rlx_mlir.memory_plan import (
    OFFSETS,
    SCRATCH_OFFSETS,
    Scratch,
    block_bindings,
    constant_slot,
    index_checks,
    kept_scratch,
    nbytes,
    output_bindings,
    planned_offset,
    scratch_offset,
    view_offset,
    view_source,
)
from rlx_mlir.tuning import Tuning
from rlx_mlir.verification import function_block


@dataclass
class LoweredProgram:
    functions: list[llvm.FuncOp] = field(default_factory=list)
    externals: set[External] = field(default_factory=set)
    timed: list[int] = field(default_factory=list)
    """In a profiling build, the positions (in the function's block) of the ops
    whose end the entry time-stamps, in order (`_EntryBuilder.mark`)."""


CYCLE_COUNTER = External("llvm.readcyclecounter", (), i64)
"""LLVM's cycle-counter intrinsic (rdtsc on x86-64): a time stamp costs ~20
cycles and no call out of the module, so a profiling build times kernels of a
few microseconds without perturbing them much."""


class _EntryBuilder:
    """Builds the entry function while the kernels are emitted alongside."""

    def __init__(self, function: func.FuncOp, threads: int, tuning: Tuning, profile: bool = False) -> None:
        self.function = function
        self.profile = profile
        self.threads = threads
        self.tuning = tuning
        self.name = function.sym_name.data
        self.block = Block(arg_types=[PTR, PTR, PTR, PTR])
        self.region = Region([self.block])
        self.e = Emitter(self.block)
        self.arena, self.io, self.status, self.constants = self.block.args
        self.constant_pointers: dict[int, SSAValue] = {}
        """Each constant's pointer, loaded from its slot once, at the entry's start."""
        self.n_inputs = len(function.function_type.inputs)
        self.bindings = output_bindings(function)
        self.pointers: dict[tuple[str, int, int], SSAValue] = {}
        self.bound: dict[SSAValue, SSAValue] = {}
        """Pointers computed at run time, in a scan body: its arguments and its next carry."""
        self.packed: dict[tuple[SSAValue, bool], Scratch] = {}
        """The loop bodies' weights packed before their loops (`KernelContext.packed`)."""
        self.program = LoweredProgram()
        self.emitted: dict[Hashable, list[tuple[Operation, list[Kernel]]]] = {}
        """The ops kernels were emitted for, with them, by `structure` and error code."""
        self.thunks: dict[llvm.FuncOp, llvm.FuncOp] = {}
        self.shared: dict[llvm.FuncOp, tuple[int, ...]] = {}
        """Which buffers of each function's launches share an address (`sharing`)."""
        self.launchers: dict[llvm.FuncOp, llvm.FuncOp] = {}
        self.loops = 0
        """How many of the entry's loops the launches being emitted are in."""
        self.unrolled: set[llvm.FuncOp] = set()
        """Kernels with a launch worth LLVM's unroller (`Tuning.unroll_min_work`); the
        loops of the others stay rolled."""

    def io_pointer(self, slot: int) -> SSAValue:
        e = self.e
        return e.load(e.field_ptr(self.io, slot, PTR), PTR)

    def constant_pointer(self, slot: int) -> SSAValue:
        """The pointer in slot `slot` of the constants' table, loaded at the entry's
        start (so it dominates every use, in a scan's loops too) the first time."""
        if slot not in self.constant_pointers:
            at = llvm.GEPOp(self.constants, [slot], PTR, inbounds=True)
            load = llvm.LoadOp(at.results[0], PTR)
            Rewriter.insert_op([at, load], InsertPoint.at_start(self.block))
            self.constant_pointers[slot] = load.results[0]
        return self.constant_pointers[slot]

    def location(self, value: SSAValue) -> tuple[str, int, int]:
        """Where `value` lives: (io slot, constant slot or arena; slot or offset; byte offset into it)."""
        root, delta = view_source(value)
        if isinstance(root, BlockArgument):
            return ("io", root.index, delta)
        if root in self.bindings:
            return ("io", self.n_inputs + self.bindings[root], delta)
        if isinstance(root.owner, rlx.ConstantOp):
            return ("constant", constant_slot(root.owner), delta)
        return ("arena", planned_offset(root) + delta, 0)

    def byte_offset(self, base: SSAValue, offset: int) -> SSAValue:
        """base + offset bytes, with a 64-bit index (a constant GEP index is only 32 bits)."""
        e = self.e
        return e.element_ptr(base, e.i64(offset), i8)

    def pointer(self, value: SSAValue) -> SSAValue:
        """One pointer per location, so values sharing memory share the SSA pointer."""
        root, delta = view_source(value)
        if root in self.bound:
            return self.byte_offset(self.bound[root], delta) if delta else self.bound[root]
        location = self.location(value)
        if location not in self.pointers:
            kind, where, delta = location
            if kind in ("io", "constant"):
                base = self.io_pointer(where) if kind == "io" else self.constant_pointer(where)
                self.pointers[location] = self.byte_offset(base, delta) if delta else base
            else:
                self.pointers[location] = self.byte_offset(self.arena, where)
        return self.pointers[location]

    def buffer_pointer(self, buffer: SSAValue | str | Scratch) -> SSAValue:
        if isinstance(buffer, str):  # STATUS, the only name a kernel buffer has
            return self.status
        if isinstance(buffer, Scratch):
            return self.byte_offset(self.arena, scratch_offset(buffer))
        return self.pointer(buffer)

    def kernels(self, op: Operation, emit: EmitKernels, ctx: KernelContext) -> list[Kernel]:
        """`op`'s kernels: those of an op of the same structure already lowered,
        rebound to `op`'s buffers when these alias each other the same way (and
        a loop packed the same operands for both), else newly emitted."""
        key = structure(op)
        if key is not None:
            packed = tuple((v, t) in ctx.packed for v in op.operands for t in (False, True))
            key = (key, ctx.code, packed)
            for first, kernels in self.emitted.get(key, []):
                rebound = [_rebind(kernel, first, op) for kernel in kernels]
                if all(k is not None and self.sharing(k) == self.shared[k.function] for k in rebound):
                    return [k for k in rebound if k is not None]
        kernels = emit(op, ctx)
        if key is not None:
            self.emitted.setdefault(key, []).append((op, kernels))
        return kernels

    def sharing(self, kernel: Kernel) -> tuple[int, ...]:
        """For each of `kernel`'s buffers, the first position at the same address."""
        pointers = [self.buffer_pointer(b) if not isinstance(b, Scratch) else b for b in kernel.buffers]
        return tuple(pointers.index(p) for p in pointers)

    def launch(self, kernel: Kernel) -> None:
        """Call `kernel` on its buffers: directly, or through its thunk split across threads."""
        e = self.e
        pointers = [self.buffer_pointer(b) for b in kernel.buffers]
        function = self.register(kernel)
        if self.loops or kernel.work >= self.tuning.unroll_min_work:
            self.unrolled.add(function)
        big = kernel.work >= self.tuning.parallel_min_elements and kernel.extent >= self.threads
        if kernel.parallel and self.threads > 1 and big:
            args = self.pointer_array(len(pointers))
            for k, ptr in enumerate(pointers):
                e.store(ptr, e.field_ptr(args, k, PTR))
            e.op(llvm.CallOp(self.launcher(self.thunk(kernel)), args, e.i64(kernel.extent)))
        else:
            extent = e.i64(kernel.extent)
            e.op(llvm.CallOp(function.sym_name.data, *pointers, e.i64(0), extent))
        if STATUS in kernel.buffers:
            self.return_on_index_error()

    @contextlib.contextmanager
    def looping(self) -> Iterator[None]:
        """While the entry's own loops (a scan's time loop) are emitted."""
        self.loops += 1
        try:
            yield
        finally:
            self.loops -= 1

    def pointer_array(self, n: int) -> SSAValue:
        """An array of `n` pointers for a launch's arguments: where the launch
        is, but in the entry block when the launch is in a loop of the entry
        (a scan's time loop), where an allocation would take more stack at
        every step (a scan of 3 million steps overflowed it)."""
        e = self.e
        if not self.loops:
            return e.op(llvm.AllocaOp(e.i64(n), PTR, alignment=8))
        size = llvm.ConstantOp(IntegerAttr(n, i64), i64)
        array = llvm.AllocaOp(size.result, PTR, alignment=8)
        Rewriter.insert_op([size, array], InsertPoint.at_start(self.block))
        return array.results[0]

    def register(self, kernel: Kernel) -> llvm.FuncOp:
        """`kernel`'s function, added to the program at its first launch, whose
        buffers sharing an address the function then accesses through one
        parameter; `kernels` shares it only with launches whose buffers share
        addresses the same way."""
        function = kernel.function
        if function not in self.shared:
            self.shared[function] = self.sharing(kernel)
            share_aliased_pointers(function, self.shared[function])
            self.program.functions.append(function)
            self.program.externals |= set(kernel.externals)
        return function

    def thunk(self, kernel: Kernel) -> llvm.FuncOp:
        """The thunk of `kernel`'s function, made at its first parallel launch:
        the pool calls every kernel through one signature. A serial launch
        calls the function itself, and costs LLVM no thunk to optimize."""
        function = kernel.function
        if function not in self.thunks:
            self.thunks[function] = emit_thunk(function, f"{function.sym_name.data}_thunk", len(kernel.buffers))
            self.program.functions.append(self.thunks[function])
        return self.thunks[function]

    def launcher(self, thunk: llvm.FuncOp) -> str:
        """The name of the parallel launcher of `thunk`, made at its first use."""
        if thunk not in self.launchers:
            name = thunk.sym_name.data.removesuffix("_thunk")
            launcher = emit_parallel_launcher(thunk, f"{name}_parallel", self.threads)
            self.program.functions.append(launcher)
            self.program.externals.add(POOL)
            self.launchers[thunk] = launcher
        return self.launchers[thunk].sym_name.data

    def mark(self, position: int | None) -> None:
        """In a profiling build, store the cycle counter in the status buffer's
        next profile slot (after its `STATUS_FIELDS` error fields): the entry's
        start (`position` None), then the end of the op at `position`."""
        if not self.profile:
            return
        e = self.e
        slot = STATUS_FIELDS + len(self.program.timed) + (position is not None)
        ticks = e.op(llvm.CallOp(CYCLE_COUNTER.name, return_type=i64))
        e.store(ticks, e.field_ptr(self.status, slot, i64), alignment=8)
        self.program.externals.add(CYCLE_COUNTER)
        if position is not None:
            self.program.timed.append(position)

    def return_on_index_error(self) -> None:
        """Stop at the first kernel that met a bad index: later kernels would read its garbage."""
        e = self.e
        failed, go_on = Block(), Block()
        code = e.load(self.status, i64, alignment=8)
        e.op(llvm.CondBrOp(e.icmp("ne", code, e.i64(0)), failed, [], go_on, []))
        self.region.add_block(failed)
        e.move_to(failed)
        e.op(llvm.ReturnOp())
        self.region.add_block(go_on)
        e.move_to(go_on)

    def copy_unbound_outputs(self, returned: list[SSAValue]) -> None:
        for j, value in enumerate(returned):
            if self.bindings.get(value) != j:
                size = self.e.i64(nbytes(value))
                self._copy(self.io_pointer(self.n_inputs + j), self.pointer(value), size)

    def lower_block(
        self, block: Block, codes: dict[Operation, int], prefix: str, timed: bool = False
    ) -> list[SSAValue]:
        """Launch the kernels of `block`'s ops in order (time-stamping the end of
        each op that ran code, if `timed`); the values its terminator returns."""
        for index, op in enumerate(block.ops):
            name = f"{prefix}_k{index}"
            emit = KERNELS.get(type(op))
            if emit is not None:
                ctx = KernelContext(name, self.tuning.for_op(op), codes.get(op, 0), self.threads, self.packed)
                for kernel in self.kernels(op, emit, ctx):
                    self.launch(kernel)
                if timed:
                    self.mark(index)
            elif isinstance(op, (ScanOp, ScanBackwardOp)):
                with self.looping():
                    if isinstance(op, ScanOp):
                        self.scan(op, codes, name)
                    else:
                        self.scan_backward(op, codes, name)
                if timed:
                    self.mark(index)
            elif isinstance(op, (func.ReturnOp, rg.YieldOp)):
                return list(op.operands)
            elif not isinstance(op, rlx.ConstantOp) and view_offset(op) is None:
                raise ValueError(f"lower-to-llvm cannot lower '{op.name}' yet")
        return []

    def scan(self, op: ScanOp, codes: dict[Operation, int], prefix: str) -> None:
        """The time loop of `op`, in the entry: step t runs the body's kernels with
        the carry read from where step t - 1 wrote it (`init` at t = 0) and the
        xs at row t, in place. Step t writes its carry to result row m - 1 when
        m = floor((t+1)·K/L) passes a row boundary (every step for a trajectory,
        the checkpoint steps, the last step alone for the final carry: K = 1),
        else to spare[t % 2]; so the carry is never copied, and the last step
        lands in the result."""
        e, length = self.e, op.steps
        carry = nbytes(op.init)
        rows = op.rows or 1
        self.pack_weights(op, prefix)
        init, result = self.pointer(op.init), self.pointer(op.result)
        spares = self._spares(op, result)
        broadcast = [self.pointer(v) for v in op.broadcast]
        xs = [self.pointer(v) for v in op.xs]
        block = op.body.block

        def written(t: SSAValue) -> SSAValue:
            """Where step t (>= 0) writes its carry."""
            m = e.udiv(e.mul(e.add(t, e.i64(1)), e.i64(rows)), e.i64(length))
            saved = e.icmp("ugt", m, e.udiv(e.mul(t, e.i64(rows)), e.i64(length)))
            row = self.byte_offset(result, 0) if rows == 1 else self._at(result, e.sub(m, e.i64(1)), carry)
            spare = e.select(e.icmp("eq", e.urem(t, e.i64(2)), e.i64(0)), spares[0], spares[1])
            return e.select(saved, row, spare)

        def step(t: SSAValue) -> None:
            previous = e.select(e.icmp("eq", t, e.i64(0)), e.i64(0), e.sub(t, e.i64(1)))
            carry_in = e.select(e.icmp("eq", t, e.i64(0)), init, written(previous))
            self.run_body(block, [carry_in, *broadcast, *self._rows(op, xs, t)], [written(t)], codes, prefix)

        for_range(e, self.region, e.i64(0), e.i64(length), step)

    def pack_weights(self, op: LoopOp, prefix: str) -> None:
        """Pack each weight the bodies' GEMMs read as their rhs (`PackedWeight`) into
        its scratch buffer, once, before the loop; the GEMMs then read the panels."""
        for weight, index in op.packed_scratch():
            value = op.broadcast[weight.broadcast]
            buffer = Scratch(op, index)
            item = codec(element_type(value.type))
            packing = weight_packing(shape_of(value.type), weight.transposed, item, self.tuning)
            self.launch(packing_kernel(f"{prefix}_pack{index}", item, packing, value, buffer))
            for block in op.bodies():
                self.packed[(block.args[1 + weight.broadcast], weight.transposed)] = buffer

    def run_body(
        self, block: Block, arguments: list[SSAValue], targets: list[SSAValue], codes: dict[Operation, int], prefix: str
    ) -> None:
        """Launch `block`'s kernels (inside a loop of the entry) with its arguments
        at `arguments` and each yielded value written at `targets`: directly by
        the kernel that computes it where it can be, else copied there."""
        self.bound.update(zip(block.args, arguments))
        results = list(yielded(block))
        bindings = block_bindings(block)
        for j, (value, target) in enumerate(zip(results, targets)):
            if bindings.get(value) == j:
                self.bound[value] = target
        outer = self.pointers
        self.pointers = dict(outer)  # pointers made in the loop stay in it
        self.lower_block(block, codes, prefix)
        for j, (value, target) in enumerate(zip(results, targets)):
            if bindings.get(value) != j:
                self._copy(target, self.pointer(value), nbytes(value))
        self.pointers = outer

    def _rows(self, op: LoopOp, xs: list[SSAValue], t: SSAValue) -> list[SSAValue]:
        """Row t of each of `op`'s xs, read in place."""
        return [self._at(x, t, nbytes(v) // op.steps) for x, v in zip(xs, op.xs)]

    def scan_backward(self, op: ScanBackwardOp, codes: dict[Operation, int], prefix: str) -> None:
        """The reverse sweep of `op`, segment by segment from the last: between two
        saved carries, the `forward` body recomputes the segment's carries into
        the cache (none when every carry is saved), then the `vjp` body runs
        its steps backwards. The carry's cotangent alternates between two
        scratch buffers (the last step writes d_init); the xs' gradients are
        written in place at row t; the broadcast inputs' are summed, step by
        step from the last, into their results."""
        e, length, rows = self.e, op.steps, op.rows
        carry, checkpoints = op.carry_bytes, op.checkpoints
        self.pack_weights(op, prefix)
        scratch = [self.byte_offset(self.arena, off) for off in _scratch_offsets(op)]
        cotangents = (scratch[0], self.byte_offset(scratch[0], carry))
        per_step = scratch[1 : 1 + len(op.broadcast)]
        cache = scratch[1 + len(op.broadcast)]
        init, saved, d_result = (self.pointer(v) for v in (op.init, op.saved, op.d_result))
        broadcast, xs = [self.pointer(v) for v in op.broadcast], [self.pointer(v) for v in op.xs]
        d_init, *gradients = (self.pointer(v) for v in op.results)
        sums, d_xs = gradients[: len(broadcast)], gradients[len(broadcast) :]
        for total, value in zip(sums, op.broadcast):
            e.intrinsic("llvm.memset.p0.i64", [total, e.const(i8, 0), e.i64(nbytes(value)), e.const(i1, 0)], None)

        def parity(t: SSAValue, odd: SSAValue, even: SSAValue) -> SSAValue:
            return e.select(e.icmp("eq", e.urem(t, e.i64(2)), e.i64(1)), odd, even)

        def cotangent(t: SSAValue) -> SSAValue:
            """Where the cotangent of the carry after step t is, once d_result's row is added."""
            last = e.icmp("eq", t, e.i64(length - 1))
            buffer = parity(t, cotangents[1], cotangents[0])
            return e.select(last, d_result, buffer) if rows == 0 else buffer

        def add_row(t: SSAValue) -> None:
            """d_result row m - 1 into the cotangent after step t, when t saved a row."""
            m = e.udiv(e.mul(e.add(t, e.i64(1)), e.i64(rows)), e.i64(length))
            row = self._at(d_result, e.sub(m, e.i64(1)), carry)
            if_then(e, self.region, e.icmp("eq", t, e.i64(length - 1)), lambda: self._copy(cotangent(t), row, carry))
            later = e.icmp("ult", t, e.i64(length - 1))
            saved_row = e.icmp("ugt", m, e.udiv(e.mul(t, e.i64(rows)), e.i64(length)))

            def add() -> None:
                self._accumulate(cotangent(t), row, op.init.type, f"{prefix}_row")

            if_then(e, self.region, e.and_(later, saved_row), add)

        def backward_step(t: SSAValue, carry_in: SSAValue) -> None:
            if rows:
                add_row(t)
            first = e.icmp("eq", t, e.i64(0))
            d_carry = e.select(first, d_init, parity(t, cotangents[0], cotangents[1]))
            arguments = [carry_in, *broadcast, *self._rows(op, xs, t), cotangent(t)]
            targets = [d_carry, *per_step, *self._rows(op, d_xs, t)]
            self.run_body(op.vjp.block, arguments, targets, codes, f"{prefix}_vjp")
            for k, (total, step_value) in enumerate(zip(sums, per_step)):
                self._accumulate(total, step_value, op.broadcast[k].type, f"{prefix}_sum{k}")

        def forward_step(t: SSAValue, carry_in: SSAValue, carry_out: SSAValue) -> None:
            arguments = [carry_in, *broadcast, *self._rows(op, xs, t)]
            assert op.forward is not None, "called only when the loop keeps its forward body"
            self.run_body(op.forward.block, arguments, [carry_out], codes, f"{prefix}_fwd")

        def segment(j: SSAValue) -> None:
            k = e.sub(e.i64(checkpoints - 1), j)
            last = e.sub(
                e.udiv(e.add(e.mul(e.add(k, e.i64(1)), e.i64(length)), e.i64(checkpoints - 1)), e.i64(checkpoints)),
                e.i64(1),
            )
            k_before = e.select(e.icmp("eq", k, e.i64(0)), e.i64(0), e.sub(k, e.i64(1)))
            first = e.select(
                e.icmp("eq", k, e.i64(0)),
                e.i64(0),
                e.udiv(e.add(e.mul(k, e.i64(length)), e.i64(checkpoints - 1)), e.i64(checkpoints)),
            )
            start = e.select(e.icmp("eq", k, e.i64(0)), init, self._at(saved, k_before, carry))

            def carry_before(t: SSAValue) -> SSAValue:
                """The carry step t reads: the segment's start, or the cache."""
                at_start = e.icmp("eq", t, first)
                back = e.select(at_start, e.i64(0), e.sub(e.sub(t, first), e.i64(1)))
                return e.select(at_start, start, self._at(cache, back, carry))

            if op.forward is not None and op.mode.data == "griewank":
                self._bisect(op, (first, last, start), cache, backward_step, forward_step, prefix)
                return

            if op.forward is not None:

                def recompute(t: SSAValue) -> None:
                    forward_step(t, carry_before(t), self._at(cache, e.sub(t, first), carry))

                for_range(e, self.region, first, last, recompute)

            def back(i: SSAValue) -> None:
                t = e.sub(last, i)
                backward_step(t, carry_before(t))

            for_range(e, self.region, e.i64(0), e.add(e.sub(last, first), e.i64(1)), back)

        for_range(e, self.region, e.i64(0), e.i64(checkpoints), segment)

    def _bisect(
        self,
        op: ScanBackwardOp,
        segment: tuple[SSAValue, SSAValue, SSAValue],
        memory: SSAValue,
        backward_step: Callable[[SSAValue, SSAValue], None],
        forward_step: Callable[[SSAValue, SSAValue, SSAValue], None],
        prefix: str,
    ) -> None:
        """Griewank's bisection of the segment (first, last, start carry), with an
        explicit stack: a frame (lo, hi, level, carry entering lo) of one step
        runs the vjp; a longer one recomputes the carry entering its middle into
        the level's slot, then pushes its first half and its second half, which
        therefore runs first. Steps are swept in the same order as every other
        mode; memory is one carry per level, two to step through, the frames."""
        e, carry = self.e, op.carry_bytes
        slots = memory
        through = (
            self._at(slots, e.i64(op.griewank_levels), carry),
            self._at(slots, e.i64(op.griewank_levels + 1), carry),
        )
        frames = self._at(slots, e.i64(op.griewank_levels + 2), carry)
        depth = e.field_ptr(frames, op.griewank_frames * 4, i64)  # the stack's size, after it

        def field(index: SSAValue, k: int) -> SSAValue:
            return e.element_ptr(frames, e.add(e.mul(index, e.i64(4)), e.i64(k)), i64)

        def push(lo: SSAValue, hi: SSAValue, level: SSAValue, start: SSAValue) -> None:
            top = e.load(depth, i64)
            for k, value in enumerate((lo, hi, level)):
                e.store(value, field(top, k))
            e.store(start, field(top, 3))
            e.store(e.add(top, e.i64(1)), depth)

        def pop() -> None:
            top = e.sub(e.load(depth, i64), e.i64(1))
            e.store(top, depth)
            lo, hi, level = (e.load(field(top, k), i64) for k in range(3))
            start = e.load(field(top, 3), PTR)
            if_then(e, self.region, e.icmp("eq", lo, hi), lambda: backward_step(lo, start))

            def split() -> None:
                middle = e.udiv(e.add(e.add(lo, hi), e.i64(1)), e.i64(2))
                slot = self._at(slots, level, carry)

                def advance(t: SSAValue) -> None:
                    odd = e.icmp("eq", e.urem(e.sub(t, lo), e.i64(2)), e.i64(1))
                    carry_in = e.select(e.icmp("eq", t, lo), start, e.select(odd, through[0], through[1]))
                    at_middle = e.icmp("eq", t, e.sub(middle, e.i64(1)))
                    forward_step(t, carry_in, e.select(at_middle, slot, e.select(odd, through[1], through[0])))

                for_range(e, self.region, lo, middle, advance)
                push(lo, e.sub(middle, e.i64(1)), e.add(level, e.i64(1)), start)
                push(middle, hi, e.add(level, e.i64(1)), slot)

            if_then(e, self.region, e.icmp("ne", lo, hi), split)

        e.store(e.i64(0), depth)
        first, last, start = segment
        push(first, last, e.i64(0), start)
        while_loop(e, self.region, lambda: e.icmp("ne", e.load(depth, i64), e.i64(0)), pop)

    def _accumulate(self, total: SSAValue, term: SSAValue, tensor: Attribute, name: str) -> None:
        """total += term, elementwise over a `tensor`-typed buffer: the region
        kernel of an `rlx.add`, launched on the two pointers."""
        operands = Block(arg_types=[tensor, tensor]).args
        region, _ = rg.ElementwiseRegionOp.outline([ew.AddOp(operands[0], operands[1], tensor)])
        self.bound.update({operands[0]: total, operands[1]: term, region.outputs[0]: total})
        for kernel in region_kernels(region, KernelContext(name, self.tuning, 0, self.threads)):
            self.launch(kernel)

    def _spares(self, op: ScanOp, result: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The two buffers steps that save no row alternate between: the scratch
        (two carries), or for a final carry only the scratch and the result itself
        (the one of the last step's parity, which the last step overwrites)."""
        carry = nbytes(op.init)
        base = self.byte_offset(self.arena, scratch_offset(Scratch(op, 0)))
        if op.rows is not None:
            return base, self.byte_offset(base, carry)
        return (result, base) if (op.steps - 1) % 2 == 0 else (base, result)

    def _at(self, base: SSAValue, index: SSAValue, stride: int) -> SSAValue:
        """base + index · stride bytes."""
        return byte_pointer(self.e, base, index, stride)

    def _copy(self, dst: SSAValue, src: SSAValue, size: int | SSAValue) -> None:
        e = self.e
        nbytes = e.i64(size) if isinstance(size, int) else size
        e.intrinsic("llvm.memcpy.p0.p0.i64", [dst, src, nbytes, e.const(i1, 0)], None)

    def finish(self) -> LoweredProgram:
        self.e.op(llvm.ReturnOp())
        for function in self.shared.keys() - self.unrolled:
            keep_loops_rolled(function)
        entry = llvm.FuncOp(
            self.name,
            llvm.LLVMFunctionType([PTR, PTR, PTR, PTR]),
            body=self.region,
            linkage=llvm.LinkageAttr("external"),
        )
        self.program.functions.append(entry)
        return self.program


KERNELS: dict[type[Operation], EmitKernels] = {
    rg.ElementwiseRegionOp: region_kernels,
    **movement.KERNELS,
    **indexing.KERNELS,
    **contraction.KERNELS,
    **conv.KERNELS,
    **attention.KERNELS,
    **arg_reduce.KERNELS,
    **normalize.KERNELS,
    **reduction_region.KERNELS,
    **delta_rule.KERNELS,
    **state_space.KERNELS,
    **rnn.KERNELS,
    **standardize.KERNELS,
}
"""The kernel emitter of each op that runs code (one module per family)."""


PLAN_ATTRIBUTES = (OFFSETS, SCRATCH_OFFSETS)
"""Where an op's values live: not part of what its kernels compute."""


def structure(op: Operation) -> Hashable | None:
    """What `op`'s kernels are a function of, as a key: its name, attributes
    (but the plan's) and properties, operand and result types, the ops of
    its regions with their values numbered by position, and which scratch
    it keeps from call to call. None when the op
    cannot be keyed (an attribute that does not hash, a region reading a value
    from outside it, successors)."""
    numbering: dict[SSAValue, int] = {}
    try:
        key = _structure(op, numbering, top=True)
        hash(key)
    except (TypeError, KeyError):
        return None
    return key


def _structure(op: Operation, numbering: dict[SSAValue, int], top: bool) -> tuple:
    if op.successors:
        raise KeyError(op.name)
    attributes = tuple(sorted((k, v) for k, v in op.attributes.items() if k not in PLAN_ATTRIBUTES))
    reads = tuple(v.type for v in op.operands) if top else tuple(numbering[v] for v in op.operands)
    regions = []
    for region in op.regions:
        for block in region.blocks:
            numbering.update((arg, len(numbering)) for arg in block.args)
            inner = tuple(_structure(o, numbering, top=False) for o in block.ops)
            regions.append((tuple(arg.type for arg in block.args), inner))
    numbering.update((r, len(numbering)) for r in op.results)
    properties = tuple(sorted(op.properties.items()))
    kept = tuple(sorted(kept_scratch(op)))  # kernels that fill a kept scratch once differ
    return (op.name, attributes, properties, reads, tuple(r.type for r in op.results), tuple(regions), kept)


def _rebind(kernel: Kernel, first: Operation, op: Operation) -> Kernel | None:
    """`kernel` (emitted for `first`) on `op`'s buffers, which sit at the same
    positions among its operands, results and scratch; None if a buffer is
    none of those (another op's scratch, say: then the kernel is not only a
    function of `first`), or if `first` reads it at positions where `op`
    reads different values."""
    buffers: list[SSAValue | str | Scratch] = []
    for buffer in kernel.buffers:
        if isinstance(buffer, Scratch):
            if buffer.op is not first:
                return None
            buffers.append(Scratch(op, buffer.index))
        elif buffer == STATUS:
            buffers.append(STATUS)
        elif buffer in first.results:
            buffers.append(op.results[first.results.index(buffer)])
        elif buffer in first.operands:
            # A value `first` reads at several positions (matmul(x, x)) names
            # one buffer only if `op` reads one value at all of them too.
            candidates = {op.operands[k] for k, v in enumerate(first.operands) if v == buffer}
            if len(candidates) != 1:
                return None
            buffers.append(candidates.pop())
        else:
            return None
    return Kernel(kernel.function, buffers, kernel.extent, kernel.work, kernel.parallel, kernel.externals)


def _scratch_offsets(op: Operation) -> list[int]:
    assert isinstance(op, NeedsScratch), op.name
    return [scratch_offset(Scratch(op, k)) for k in range(len(op.scratch_bytes()))]


def lower_function(function: func.FuncOp, threads: int, tuning: Tuning, profile: bool = False) -> LoweredProgram:
    """Lower a planned function (every compute op a region or an op with a
    kernel emitter; elementwise leftovers already wrapped in regions) with the
    kernel choices of `tuning`; a `profile` build time-stamps each op's end."""
    builder = _EntryBuilder(function, threads, tuning, profile)
    codes = {op: k + 1 for k, op in enumerate(index_checks(function))}
    builder.mark(None)
    returned = builder.lower_block(function_block(function), codes, builder.name, timed=profile)
    builder.copy_unbound_outputs(returned)
    return builder.finish()
