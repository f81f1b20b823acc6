"""plan-memory: place every constant and intermediate tensor in one arena.

Function inputs and results are not in the arena: the runtime passes their
pointers in, so nothing is copied at the boundary. Everything else gets a
64-byte aligned offset:

1. the schedule is the op order; each value lives from its definition to its
   last use (uses of a `rlx.reshape` view count as uses of its source, which
   the view shares memory with);
2. an elementwise op may write its result over an input that dies at that op
   (same byte size, read at the same index: an identity index map) - the
   input's lifetime then ends just before the result's begins;
3. buffers are placed in order of birth, each into the tightest free gap
   (best fit) among the buffers alive at the same time.

The pass records `rlx.offsets` (one entry per result; -1 = bound by pointer)
on each op and `rlx.arena_size` / `rlx.arena_lower_bound` on the function,
where the lower bound is the peak of simultaneously live bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass

from rlx_mlir import dtypes, index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.movement import NarrowOp, SliceOp
from rlx_mlir.verification import function_block

ALIGNMENT = 64
NOT_IN_ARENA = -1


def nbytes(value: SSAValue) -> int:
    return numel(rlx.shape_of(value.type)) * dtypes.from_ir(rlx.element_type(value.type)).nbytes


def align(n: int, to: int = ALIGNMENT) -> int:
    return (n + to - 1) // to * to


def view_offset(op: Operation) -> int | None:
    """If `op`'s result is a contiguous run of its input's memory, the element
    offset of that run; otherwise None. Reshapes always are; a narrow or unit-step
    slice is when every axis before the first one it keeps more than one index
    of is cut to one index, and every axis after it is kept whole."""
    if isinstance(op, rlx.ReshapeOp):
        return 0
    if not isinstance(op, (NarrowOp, SliceOp)):
        return None
    shape, lengths = rlx.shape_of(op.input.type), rlx.shape_of(op.result.type)
    if numel(lengths) == 0:
        return 0
    reads = op.input_map()
    first = next((a for a, n in enumerate(lengths) if n > 1), len(lengths))
    if first < len(lengths) and reads[first].scale != 1:
        return None
    whole = (lengths[a] == shape[a] and (shape[a] <= 1 or reads[a][1:] == (1, 0)) for a in range(first + 1, len(shape)))
    if not all(whole):
        return None
    strides = row_major_strides(shape)
    return sum(access.offset * stride for access, stride in zip(reads, strides))


def view_source(value: SSAValue) -> tuple[SSAValue, int]:
    """The value whose memory `value` shares, and the byte offset into it."""
    delta = 0
    while isinstance(value, OpResult) and (offset := view_offset(value.owner)) is not None:
        delta += offset * _element_size(value)
        value = value.owner.operands[0]
    return value, delta


def output_bindings(function: func.FuncOp) -> dict[SSAValue, int]:
    """Values written straight into the caller's output buffers, by result index.

    A value qualifies when a kernel computes it (not a function argument, a
    constant or a view) and it is the first return operand naming it; any
    other returned value is copied into its output at the end.
    """
    terminator = function_block(function).last_op
    bindings: dict[SSAValue, int] = {}
    for index, value in enumerate(terminator.operands if terminator else ()):
        if isinstance(value, BlockArgument) or value in bindings:
            continue
        if isinstance(value.owner, rlx.ConstantOp) or view_offset(value.owner) is not None:
            continue
        bindings[value] = index
    return bindings


@dataclass
class Buffer:
    value: SSAValue
    size: int
    start: int
    end: int
    offset: int = NOT_IN_ARENA
    partner: Buffer | None = None

    def overlaps_in_time(self, other: Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class MemoryPlan:
    """What the planner decided, as the runtime and the API report it."""

    arena_size: int
    lower_bound: int
    offsets: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        ratio = self.arena_size / self.lower_bound if self.lower_bound else 1.0
        lines = [f"arena {self.arena_size} B, lower bound {self.lower_bound} B ({ratio:.2f}x)"]
        lines += [f"  {name}: offset {off}" for name, off in self.offsets.items()]
        return "\n".join(lines)


def _identity_reads(op: Operation, value: SSAValue) -> bool:
    """Whether every read of `value` by `op` is at the output element's own index."""
    result_shape = rlx.shape_of(op.results[0].type)
    if isinstance(op, rlx.ElementwiseRegionOp):
        reads = [(m, v) for m, v in zip(op.maps, op.inputs) if v is value]
        return all(is_identity(m) and rlx.shape_of(v.type) == result_shape for m, v in reads)
    if rlx.is_elementwise(op):
        return rlx.shape_of(value.type) == result_shape
    return False


def is_identity(amap: AffineMap) -> bool:
    return index_maps.accesses(amap) == index_maps.identity(amap.num_dims)


def collect_buffers(function: func.FuncOp) -> list[Buffer]:
    """The arena buffers of `function` with lifetimes in half-steps.

    Op `k` reads its inputs at time 2k and writes its results from 2k+1, so a
    buffer that dies at `k` and one born at `k` may share memory only when the
    first one's end is moved to 2k (the in-place case).
    """
    ops = list(function_block(function).ops)
    bound = output_bindings(function)
    buffers: dict[SSAValue, Buffer] = {}
    horizon = 2 * len(ops) + 2
    for k, op in enumerate(ops):
        for result in op.results:
            if result in bound or view_offset(op) is not None:
                continue
            start = 0 if isinstance(op, rlx.ConstantOp) else 2 * k + 1
            end = horizon if isinstance(op, rlx.ConstantOp) else start
            buffers[result] = Buffer(result, align(nbytes(result)), start, end)
    for k, op in enumerate(ops):
        for operand in op.operands:
            source = buffers.get(view_source(operand)[0])
            if source is not None:
                source.end = max(source.end, 2 * k + 1)
    _pair_in_place(ops, buffers)
    return list(buffers.values())


def _pair_in_place(ops: list[Operation], buffers: dict[SSAValue, Buffer]) -> None:
    for k, op in enumerate(ops):
        if not (rlx.is_elementwise(op) or isinstance(op, rlx.ElementwiseRegionOp)):
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
                    or source.start == 0  # constants stay
                    or source.size != out.size
                    or nbytes(operand) != nbytes(result)
                    or _element_size(operand) != _element_size(result)
                    or not _identity_reads(op, operand)
                ):
                    continue
                source.end = 2 * k
                out.partner = source
                claimed.add(id(source))
                break


def _element_size(value: SSAValue) -> int:
    return dtypes.from_ir(rlx.element_type(value.type)).nbytes


def place(buffers: list[Buffer]) -> int:
    """Assign offsets (best fit among time-overlapping buffers); return the arena size."""
    placed: list[Buffer] = []
    for buf in sorted(buffers, key=lambda b: (b.start, b.partner is None, -b.size)):
        live = sorted((p for p in placed if p.overlaps_in_time(buf)), key=lambda p: p.offset)
        if buf.partner is not None and _fits(buf.partner.offset, buf.size, live):
            buf.offset = buf.partner.offset
        else:
            buf.offset = _best_fit(buf.size, live)
        placed.append(buf)
    return max((b.offset + b.size for b in placed), default=0)


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
    events = sorted([(b.start, b.size) for b in buffers] + [(b.end + 1, -b.size) for b in buffers],
                    key=lambda e: (e[0], e[1]))
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    return peak


def plan_function(function: func.FuncOp) -> MemoryPlan:
    """Plan `function` and annotate its ops; returns the plan."""
    buffers = collect_buffers(function)
    size = place(buffers)
    bound = lower_bound(buffers)
    by_value = {b.value: b for b in buffers}
    offsets: dict[str, int] = {}
    for index, op in enumerate(function_block(function).ops):
        if not op.results:
            continue
        entries = []
        for r, result in enumerate(op.results):
            root, delta = view_source(result)
            buf = by_value.get(root)
            entries.append(buf.offset + delta if buf is not None else NOT_IN_ARENA)
            if buf is not None:
                offsets[result.name_hint or f"op{index}.{r}"] = buf.offset + delta
        op.attributes["rlx.offsets"] = DenseArrayBase.from_list(i64, entries)
    function.attributes["rlx.arena_size"] = IntegerAttr(size, i64)
    function.attributes["rlx.arena_lower_bound"] = IntegerAttr(bound, i64)
    return MemoryPlan(size, bound, offsets)


def read_plan(function: func.FuncOp) -> MemoryPlan:
    """The plan recorded on an already planned function."""
    offsets: dict[str, int] = {}
    for index, op in enumerate(function_block(function).ops):
        attr = op.attributes.get("rlx.offsets")
        if isinstance(attr, DenseArrayBase):
            for r, (result, off) in enumerate(zip(op.results, attr.get_values())):
                if off != NOT_IN_ARENA:
                    offsets[result.name_hint or f"op{index}.{r}"] = off
    size = function.attributes["rlx.arena_size"]
    bound = function.attributes["rlx.arena_lower_bound"]
    return MemoryPlan(size.value.data, bound.value.data, offsets)  # type: ignore[union-attr]


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                plan_function(f)
