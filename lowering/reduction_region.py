"""Kernels for `rlx.reduction_region`: the parallel dimensions as a loop nest
around a blocked, multi-accumulator reduction of the body's values.

At each point of the parallel dimensions the body (the fused prologue) is
evaluated over the reduced dimensions and combined by the region's
reduction (`ReduceOp.COMBINE`, in the compute type: f32 for f16/bf16):

* the innermost reduced dimension is walked in groups of `lanes` elements
  (one 64-byte register of accumulators), each element going to its own
  lane accumulator: independent chains that LLVM's SLP vectorizer packs into
  vector adds, with no reassociation flags (results are deterministic and
  independent of the thread count);
* every `BLOCK` groups the lanes are combined pairwise and added into the
  total, float sums with Kahan compensation, so the error stays near that of
  a `lanes * BLOCK`-element block, however long the reduction (NumPy's
  pairwise summation has the same shape: blocks, then a tree);
* the remaining elements are added one by one.

The outermost parallel dimension is the one a large kernel is split across
threads over. `reduce_mean` divides the total by the number of reduced
elements (0/0 = NaN over nothing); the result is rounded to its type once.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.ir import Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.element_types import Codec, ComplexValue, Value, codec
from rlx_mlir.lowering.elementwise import emit_body
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.loops import LoopNest, coalesce, emit_nest, for_range, read_strides
from rlx_mlir.lowering.scalar_ops import unrounded_binary_value

REGISTER_BYTES = 64
BLOCK = 16
"""Lane steps per block: blocks of 256 f32 elements between flushes into the total."""


def identity(item: Codec, combine: type[ew.BinaryOp]) -> float | int:
    """The value that leaves `combine` unchanged, for the compute type of `item`."""
    if combine is ew.AddOp:
        return 0
    if combine is ew.MulOp:
        return 1
    high = combine is ew.MinOp
    if item.dtype.kind is Kind.FLOAT:
        return float("inf") if high else float("-inf")
    bits = item.dtype.bits
    if item.dtype.kind is Kind.UINT:
        return (1 << bits) - 1 if high else 0
    return (1 << (bits - 1)) - 1 if high else -(1 << (bits - 1))


class Accumulators:
    """`count` accumulators of one element type, kept in stack slots that LLVM
    promotes to registers (SROA), so loops can carry them without block arguments."""

    def __init__(self, e: Emitter, item: Codec, count: int) -> None:
        self.item, self.parts = item, item.components
        self.slots = e.op(llvm.AllocaOp(e.i64(count * self.parts), item.compute, alignment=REGISTER_BYTES))

    def _slot(self, e: Emitter, k: int) -> SSAValue:
        return e.op(llvm.GEPOp(self.slots, [k], self.item.compute, inbounds=True))

    def get(self, e: Emitter, i: int) -> Value:
        loaded = [e.op(llvm.LoadOp(self._slot(e, i * self.parts + p), self.item.compute)) for p in range(self.parts)]
        return ComplexValue(*loaded) if self.parts == 2 else loaded[0]

    def set(self, e: Emitter, i: int, value: Value) -> None:
        parts = (value.re, value.im) if isinstance(value, ComplexValue) else (value,)
        for p, part in enumerate(parts):
            e.op(llvm.StoreOp(part, self._slot(e, i * self.parts + p)))

    def fill(self, e: Emitter, indices: range, value: float | int) -> None:
        constant = e.const(self.item.compute, value)
        zero = e.const(self.item.compute, 0)
        for i in indices:
            self.set(e, i, ComplexValue(constant, zero) if self.parts == 2 else constant)


class _Reduction:
    """The accumulation state of one output point: lanes, total, Kahan compensation."""

    def __init__(self, e: Emitter, op: rg.ReductionRegionOp) -> None:
        self.element = element_type(op.outputs[0].type)
        self.item = codec(self.element)
        self.combine = op.combine.COMBINE
        self.mean = op.combine is rd.ReduceMeanOp
        compute_bytes = 4 if self.item.narrow else self.item.dtype.nbytes // self.item.components
        self.lanes = max(4, REGISTER_BYTES // (compute_bytes * self.item.components))
        self.kahan = self.combine is ew.AddOp and self.item.dtype.kind is Kind.FLOAT
        self.state = Accumulators(e, self.item, self.lanes + 2)  # lanes, total, compensation
        self.total, self.compensation = self.lanes, self.lanes + 1

    def start(self, e: Emitter) -> None:
        self.state.fill(e, range(self.lanes + 1), identity(self.item, self.combine))
        self.state.fill(e, range(self.compensation, self.compensation + 1), 0)

    def apply(self, e: Emitter, a: Value, b: Value) -> Value:
        return unrounded_binary_value(e, self.combine, a, b, self.element)

    def add_to_lane(self, e: Emitter, lane: int, value: Value) -> None:
        self.state.set(e, lane, self.apply(e, self.state.get(e, lane), value))

    def add_to_total(self, e: Emitter, value: Value) -> None:
        """total += value; float sums carry the rounding error of each addition (Kahan)."""
        total = self.state.get(e, self.total)
        if not self.kahan:
            self.state.set(e, self.total, self.apply(e, total, value))
            return
        c = self.state.get(e, self.compensation)
        y = e.fsub(value, c)  # type: ignore[arg-type]
        t = e.fadd(total, y)  # type: ignore[arg-type]
        self.state.set(e, self.compensation, e.fsub(e.fsub(t, total), y))  # type: ignore[arg-type]
        self.state.set(e, self.total, t)

    def flush(self, e: Emitter) -> None:
        """Combine the lanes pairwise into the total and reset them."""
        values = [self.state.get(e, lane) for lane in range(self.lanes)]
        while len(values) > 1:
            values = [self.apply(e, a, b) for a, b in zip(values[::2], values[1::2])]
        self.add_to_total(e, values[0])
        self.state.fill(e, range(self.lanes), identity(self.item, self.combine))

    def result(self, e: Emitter, count: int) -> Value:
        total = self.state.get(e, self.total)
        if self.kahan:  # the compensation holds what the additions lost
            total = e.fsub(total, self.state.get(e, self.compensation))  # type: ignore[arg-type]
        if not self.mean:
            return total
        n = e.const(self.item.compute, count)
        if isinstance(total, ComplexValue):
            return ComplexValue(e.fdiv(total.re, n), e.fdiv(total.im, n))
        return e.fdiv(total, n)


def _nests(op: rg.ReductionRegionOp) -> tuple[LoopNest, LoopNest]:
    """The coalesced nests of the parallel dimensions (inputs, then the output)
    and of the reduced dimensions (inputs only)."""
    space, reduced = op.iteration_shape, set(op.reduced_dims)
    rank = len(space)
    parallel = [d for d in range(rank) if d not in reduced]
    reads = [read_strides(shape_of(v.type), index_maps.accesses(m), rank) for v, m in zip(op.inputs, op.maps)]
    out = [0] * rank
    for d, stride in zip(parallel, row_major_strides(tuple(space[d] for d in parallel))):
        out[d] = stride
    strides = [s for s, _ in reads] + [tuple(out)]
    bases = tuple(b for _, b in reads) + (0,)
    outer = coalesce(tuple(space[d] for d in parallel), [tuple(s[d] for d in parallel) for s in strides], bases)
    order = sorted(reduced)
    inner = coalesce(tuple(space[d] for d in order), [tuple(s[d] for d in order) for s in strides[:-1]])
    return outer, inner


def reduction_region_kernels(op: rg.ReductionRegionOp, ctx: KernelContext) -> list[Kernel]:
    outer, inner = _nests(op)
    n_in = len(op.inputs)
    count = numel([op.iteration_shape[d] for d in op.reduced_dims])

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        state = _Reduction(e, op)
        args = op.body.block.args

        def value_at(offsets: list[SSAValue]) -> Value:
            def load(k: int) -> Value:
                return codec(args[k].type).load(e, pointers[k], offsets[k])

            (yielded,) = emit_body(e, op, load)
            if yielded is None:
                yielded = load(list(args).index(op.body.block.last_op.operands[0]))
            return yielded

        def at_point(e: Emitter, ptrs: list[SSAValue], offsets: list[SSAValue]) -> None:
            state.start(e)
            _reduce_nest(e, region, state, inner, offsets[:n_in], value_at)
            state.flush(e)
            codec(state.element).store(e, state.result(e, count), ptrs[n_in], offsets[n_in])

        emit_nest(e, region, outer, pointers, begin, end, at_point)

    function = kernel_function(ctx.name, n_in + 1, build)
    buffers: list[SSAValue | str] = [*op.inputs, *op.outputs]
    return [Kernel(function, buffers, outer.outer_extent, max(1, numel(op.iteration_shape)))]


def _advance(e: Emitter, offsets: list[SSAValue], index: SSAValue, strides: list[int]) -> list[SSAValue]:
    return [off if s == 0 else e.add(off, index if s == 1 else e.mul(index, e.i64(s))) for off, s in zip(offsets, strides)]


def _reduce_nest(
    e: Emitter,
    region: Region,
    state: _Reduction,
    nest: LoopNest,
    offsets: list[SSAValue],
    value_at: Callable[[list[SSAValue]], Value],
    depth: int = 0,
) -> None:
    """Outer reduced dimensions as plain loops; the innermost one in lane groups."""
    strides = [s[depth] for s in nest.strides]
    if depth + 1 < len(nest.sizes):

        def step(i: SSAValue) -> None:
            _reduce_nest(e, region, state, nest, _advance(e, offsets, i, strides), value_at, depth + 1)

        for_range(e, region, e.i64(0), e.i64(nest.sizes[depth]), step)
        return
    n, lanes = nest.sizes[depth], state.lanes
    groups = n // lanes
    blocks = groups // BLOCK

    def group(g: SSAValue) -> None:
        first = e.mul(g, e.i64(lanes))
        for lane in range(lanes):
            index = e.add(first, e.i64(lane))
            state.add_to_lane(e, lane, value_at(_advance(e, offsets, index, strides)))

    def block(b: SSAValue) -> None:
        start = e.mul(b, e.i64(BLOCK))
        for_range(e, region, start, e.add(start, e.i64(BLOCK)), group)
        state.flush(e)

    for_range(e, region, e.i64(0), e.i64(blocks), block)
    for_range(e, region, e.i64(blocks * BLOCK), e.i64(groups), group)
    state.flush(e)

    def single(i: SSAValue) -> None:
        state.add_to_total(e, value_at(_advance(e, offsets, i, strides)))

    for_range(e, region, e.i64(groups * lanes), e.i64(n), single)


KERNELS: dict[type[rg.ReductionRegionOp], Callable[[rg.ReductionRegionOp, KernelContext], list[Kernel]]] = {
    rg.ReductionRegionOp: reduction_region_kernels,
}
