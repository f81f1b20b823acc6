"""plan-memory: place every intermediate tensor in one arena.

Function inputs and results are not in the arena: the runtime passes their
pointers in, so nothing is copied at the boundary. Constants are not in it
either: each gets a slot in the table of constant pointers (`rlx.constant_slot`,
numbered in walk order, scan bodies included), so a model's weights stay
where their bytes are and executables share them. Everything else (results
and scratch) gets a 64-byte aligned offset:

1. the schedule is the op order; each value lives from its definition to its
   last use (uses of a `rlx.reshape` view count as uses of its source, which
   the view shares memory with);
2. an elementwise op may write its result over an input that dies at that op
   (same byte size, read at the same index: an identity index map) - the
   input's lifetime then ends just before the result's begins; never over a
   constant, which is not a buffer of the arena and is read-only;
3. buffers are placed in order of birth, each into the tightest free gap
   (best fit) among the buffers alive at the same time.

The pass records `rlx.offsets` (one entry per result; -1 = bound by pointer
or a view of a constant) on each op that computes, `rlx.constant_slot` on
each constant and `rlx.arena_size` / `rlx.arena_lower_bound` on the function,
where the lower bound is the peak of simultaneously live bytes. What those
mean to their readers (views, output bindings, alignment, the constants'
table) is `rlx_mlir/memory_plan.py`; this module is only the planner.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from rlx_mlir import index_maps
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.dialects.elementwise import is_elementwise
from rlx_mlir.dialects.region import ElementwiseRegionOp
from rlx_mlir.dialects.rlx import ConstantOp
from rlx_mlir.dialects.scan import BODY_ARENA, LoopOp
from rlx_mlir.memory_plan import (
    ARENA_LOWER_BOUND,
    ARENA_SIZE,
    CONSTANT_SLOT,
    NOT_IN_ARENA,
    OFFSETS,
    SCRATCH_OFFSETS,
    MemoryPlan,
    Scratch,
    align,
    block_bindings,
    element_size,
    kept_scratch,
    nbytes,
    planned_constants,
    scratch_buffers,
    scratch_label,
    view_offset,
    view_source,
)
from rlx_mlir.verification import function_block


@dataclass
class Buffer:
    value: SSAValue | Scratch
    size: int
    start: int
    end: int
    offset: int = NOT_IN_ARENA
    partner: Buffer | None = None

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


def _identity_reads(op: Operation, value: SSAValue) -> bool:
    """Whether every read of `value` by `op` is at the output element's own index."""
    result_shape = shape_of(op.results[0].type)
    if isinstance(op, ElementwiseRegionOp):
        reads = [(m, v) for m, v in zip(op.maps, op.inputs) if v is value]
        return all(is_identity(m) and shape_of(v.type) == result_shape for m, v in reads)
    if is_elementwise(op):
        return shape_of(value.type) == result_shape
    return False


def is_identity(amap: AffineMap) -> bool:
    return index_maps.accesses(amap) == index_maps.identity(amap.num_dims)


def collect_buffers(block: Block) -> list[Buffer]:
    """The arena buffers of `block` with lifetimes in half-steps.

    Op `k` reads its inputs at time 2k and writes its results from 2k+1, so a
    buffer that dies at `k` and one born at `k` may share memory only when the
    first one's end is moved to 2k (the in-place case). An op's scratch
    buffers live over [2k, 2k+1], beside all its operands and results, but
    those it keeps from call to call (`NeedsScratch.kept_scratch`), which
    live for the whole call. Constants are not buffers (their table holds them).
    """
    ops = list(block.ops)
    bound = block_bindings(block)
    buffers: dict[SSAValue, Buffer] = {}
    horizon = 2 * len(ops) + 2
    for k, op in enumerate(ops):
        for result in op.results:
            if result in bound or view_offset(op) is not None or isinstance(op, ConstantOp):
                continue
            buffers[result] = Buffer(result, align(nbytes(result)), 2 * k + 1, 2 * k + 1)
    for k, op in enumerate(ops):
        for operand in op.operands:
            source = buffers.get(view_source(operand)[0])
            if source is not None:
                source.end = max(source.end, 2 * k + 1)
    _pair_in_place(ops, buffers)
    scratch = [
        Buffer(s, align(size), *((0, horizon) if s.index in kept_scratch(op) else (2 * k, 2 * k + 1)))
        for k, op in enumerate(ops)
        for s, size in scratch_buffers(op)
    ]
    return [*buffers.values(), *scratch]


def _pair_in_place(ops: list[Operation], buffers: dict[SSAValue, Buffer]) -> None:
    for k, op in enumerate(ops):
        if not (is_elementwise(op) or isinstance(op, ElementwiseRegionOp)):
            continue
        claimed: set[int] = set()
        for result in op.results:
            out = buffers.get(result)
            if out is None:
                continue
            for operand in op.operands:
                root, delta = view_source(operand)
                source = buffers.get(root)
                if (
                    source is None
                    or delta != 0
                    or id(source) in claimed
                    or source.end != 2 * k + 1
                    or source.size != out.size
                    or nbytes(operand) != nbytes(result)
                    or element_size(operand) != element_size(result)
                    or not _identity_reads(op, operand)
                ):
                    continue
                source.end = 2 * k
                out.partner = source
                claimed.add(id(source))
                break


def place(buffers: list[Buffer]) -> int:
    """Assign offsets (best fit among time-overlapping buffers); return the arena size.

    Buffers are placed in order of birth, so the placed ones a buffer overlaps
    in time are those still alive at its birth: a sweep keeps them, sorted by
    offset, and retires them by end time. Placing n buffers costs
    O(n log n + n * live) rather than comparing every pair."""
    live: list[tuple[int, int, Buffer]] = []  # (offset, placement order, buffer), by offset
    ending: list[tuple[int, int, Buffer]] = []  # (end, placement order, buffer), a heap
    size = 0
    for order, buf in enumerate(sorted(buffers, key=lambda b: (b.start, b.partner is None, -b.size))):
        while ending and ending[0][0] < buf.start:
            _, placed, gone = heapq.heappop(ending)
            del live[bisect.bisect_left(live, (gone.offset, placed), key=lambda item: item[:2])]
        neighbours = [p for _, _, p in live]
        if buf.partner is not None and _fits(buf.partner.offset, buf.size, neighbours):
            buf.offset = buf.partner.offset
        else:
            buf.offset = _best_fit(buf.size, neighbours)
        bisect.insort(live, (buf.offset, order, buf), key=lambda item: item[:2])
        heapq.heappush(ending, (buf.end, order, buf))
        size = max(size, buf.offset + buf.size)
    return size


def _fits(offset: int, size: int, live: list[Buffer]) -> bool:
    return all(offset + size <= p.offset or p.offset + p.size <= offset for p in live)


def _best_fit(size: int, live: list[Buffer]) -> int:
    best: tuple[int, int] | None = None  # (gap waste, offset)
    cursor = 0
    for p in live:
        gap = p.offset - cursor
        if gap >= size and (best is None or gap - size < best[0]):
            best = (gap - size, cursor)
        cursor = max(cursor, p.offset + p.size)
    return best[1] if best is not None else cursor


def lower_bound(buffers: list[Buffer]) -> int:
    """Peak of simultaneously live bytes: no placement can use less."""
    events = sorted(
        [(b.start, b.size) for b in buffers] + [(b.end + 1, -b.size) for b in buffers], key=lambda e: (e[0], e[1])
    )
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def plan_function(function: func.FuncOp) -> MemoryPlan:
    """Plan `function` (and, nested, its scan bodies) and annotate its ops; returns the plan."""
    block = function_block(function)
    for loop in _scans(block):
        _plan_body(loop)
    buffers = collect_buffers(block)
    size = place(buffers)
    bound = lower_bound(buffers)
    offsets = _annotate(block, buffers)
    constants = planned_constants(function)
    for slot, constant in enumerate(constants):
        constant.attributes.pop(OFFSETS, None)  # planned before constants left the arena
        constant.attributes[CONSTANT_SLOT] = IntegerAttr(slot, i64)
    function.attributes[ARENA_SIZE] = IntegerAttr(size, i64)
    function.attributes[ARENA_LOWER_BOUND] = IntegerAttr(bound, i64)
    return MemoryPlan(size, bound, offsets, sum(nbytes(c.result) for c in constants))


def _scans(block: Block) -> list[LoopOp]:
    return [op for op in block.ops if isinstance(op, LoopOp)]


def _plan_body(loop: LoopOp) -> None:
    """The nested plans: each body's buffers placed from 0 (its constants are
    in the function's table), their sizes recorded as BODY_ARENA so the loop declares
    that much scratch for its lifetime; `_annotate` moves the offsets to where
    that scratch lands."""
    sizes = []
    for block in loop.bodies():
        for inner in _scans(block):
            _plan_body(inner)
        buffers = collect_buffers(block)
        sizes.append(place(buffers))
        _annotate(block, buffers)
    loop.attributes[BODY_ARENA] = DenseArrayBase.from_list(i64, sizes)


def _annotate(block: Block, buffers: list[Buffer]) -> dict[str, int]:
    """Record the placed offsets on `block`'s ops (and shift each scan body's
    plan to the scan's body scratch); the offsets by printed name."""
    by_value = {b.value: b for b in buffers}
    offsets: dict[str, int] = {}
    for index, op in enumerate(block.ops):
        if op.results and not isinstance(op, ConstantOp):  # a constant has a slot instead
            entries = []
            for r, result in enumerate(op.results):
                root, delta = view_source(result)
                buf = by_value.get(root)
                entries.append(buf.offset + delta if buf is not None else NOT_IN_ARENA)
                if buf is not None:
                    offsets[result.name_hint or f"op{index}.{r}"] = buf.offset + delta
            op.attributes[OFFSETS] = DenseArrayBase.from_list(i64, entries)
        scratch = [by_value[s] for s, _ in scratch_buffers(op)]
        if scratch:
            op.attributes[SCRATCH_OFFSETS] = DenseArrayBase.from_list(i64, [b.offset for b in scratch])
            for k, buf in enumerate(scratch):
                offsets[scratch_label(op, index, k)] = buf.offset
        if isinstance(op, LoopOp):
            bodies = op.bodies()
            for body, buf in zip(bodies, scratch[len(scratch) - len(bodies) :]):
                _shift(body, buf.offset)
    return offsets


def _shift(block: Block, base: int) -> None:
    """Move a body's plan (nested bodies included) from offset 0 to `base`."""
    for op in block.walk():
        for name in (OFFSETS, SCRATCH_OFFSETS):
            attr = op.attributes.get(name)
            if isinstance(attr, DenseArrayBase):
                values = [v if v == NOT_IN_ARENA else v + base for v in attr.get_values()]
                op.attributes[name] = DenseArrayBase.from_list(i64, values)


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                plan_function(f)
