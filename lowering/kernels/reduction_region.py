"""Kernels for `rlx.reduction_region`: the parallel dimensions as a loop nest
around a blocked, multi-accumulator reduction of the body's values.

The body (the fused prologue) is evaluated at each point of the iteration
space and combined by the region's reduction (`ReduceOp.COMBINE`) in the
compute type (f32 for f16/bf16); the result is rounded to its type once, and
`reduce_mean` divides by the number of reduced elements (0/0 = NaN over
nothing). No reassociation flags are used: results are deterministic and do
not depend on the thread count. Two loop orders, chosen by the strides:

* **rows** (the inputs walk the innermost reduced axis contiguously, e.g. a
  sum over the last axis): at each output point the innermost reduced axis
  is walked in groups of `lanes` elements (one vector register of the target,
  `Tuning.vector_bytes`), element
  `i` going to lane accumulator `i mod lanes`: independent chains that LLVM's
  SLP vectorizer packs into vector adds.
* **columns** (the inputs walk the innermost *parallel* axis contiguously,
  e.g. a sum over the first axis): the output points are taken
  `Tuning.region_columns` at a time (their lanes stay in L2; each row step
  reads 8 KiB of f32 contiguously on AVX-512), each with the same lanes as in row order in stack arrays laid out
  point-fastest, and the reduced axes are walked outside loops over those
  points, which the loop vectorizer turns into contiguous vector loads and
  adds. The arithmetic is the row order's, so the result does not depend on
  the order chosen, nor on whether a prologue was fused
  (tests/test_reduction_fusion.py).

The reduced axes are never merged, so the order of combination is a function
of their extents alone (not of the inputs' strides).

Either way, every `Tuning.region_block` lane steps (1024 f32 elements on
AVX-512) the accumulators are flushed (lanes combined
pairwise) into a total, float sums with Kahan compensation, so the error
stays near that of one block however long the reduction (NumPy's pairwise
summation has the same shape: blocks, then a tree). The outermost parallel
loop (or the column chunks) is what a large kernel is split across threads
over.

A reduction to one value has no parallel loop: from
`dialects.reduction.SPLIT_MIN_ELEMENTS` elements on it is two kernels
(`_split_kernels`). `partials` reduces parts of a fixed size (the outermost
reduced axis cut every `rows` indices, `full_reduction_split`), each by the
row order above, into (total, compensation) pairs in the op's scratch; the
entry splits the parts across threads. `combine`, one work item, folds the
pairs in order (Kahan for float sums), divides a mean and rounds once. The
parts depend on the shape alone, so the result is the same bit for bit for
every thread count (tests/test_reductions.py).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.core.element_types import Codec, ComplexValue, Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import LoopNest, advance, coalesce, emit_nest, for_range, if_else, read_strides
from rlx_mlir.lowering.scalar.scalar_ops import body_value, pairwise, unrounded_binary_value
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

Slot = int | SSAValue


def identity(item: Codec, combine: type[ew.BinaryOp], empty: bool = False) -> float | int:
    """The value that leaves `combine` unchanged, for the compute type of `item`.
    Float sums start from -0.0 (so a sum of -0.0s stays -0.0, as NumPy's), but
    a sum over nothing is +0.0."""
    if combine is ew.AddOp:
        return -0.0 if item.dtype.kind in (Kind.FLOAT, Kind.COMPLEX) and not empty else 0
    if combine is ew.MulOp:
        return 1
    high = combine is ew.MinOp
    if item.dtype.kind is Kind.FLOAT:
        return float("inf") if high else float("-inf")
    bits = item.dtype.bits
    if item.dtype.kind is Kind.UINT:
        return (1 << bits) - 1 if high else 0
    return (1 << (bits - 1)) - 1 if high else -(1 << (bits - 1))


class Combiner:
    """The arithmetic of one region's reduction on values: combine, the Kahan
    step of a total, and the final value."""

    def __init__(self, op: rg.ReductionRegionOp) -> None:
        self.element = element_type(op.outputs[0].type)
        self.item = codec(self.element)
        self.accumulator = codec(f32) if self.item.narrow else self.item  # f16/bf16 accumulate in f32
        self.combine = op.combine.COMBINE
        self.mean = op.combine is rd.ReduceMeanOp
        self.kahan = self.combine is ew.AddOp and self.item.dtype.kind is Kind.FLOAT
        self.count = numel([op.iteration_shape[d] for d in op.reduced_dims])

    @property
    def identity(self) -> float | int:
        return identity(self.item, self.combine, empty=self.count == 0)

    def apply(self, e: Emitter, a: Value, b: Value) -> Value:
        return unrounded_binary_value(e, self.combine, a, b, self.element)

    def tree(self, e: Emitter, values: list[Value]) -> Value:
        return pairwise(e, values, self.apply)

    def add_to_total(self, e: Emitter, store: StackArray, total: Slot, compensation: Slot, value: Value) -> None:
        """total += value; float sums keep what each addition loses in `compensation` (Kahan)."""
        old = store.get(e, total)
        if not self.kahan:
            store.set(e, total, self.apply(e, old, value))
            return
        y = e.fsub(real(value), real(store.get(e, compensation)))
        t = e.fadd(real(old), y)
        lost = e.fsub(e.fsub(t, real(old)), y)
        finite = e.fcmp("one", e.fabs(t), e.const_like(t, float("inf")))  # an inf total has nothing to compensate
        store.set(e, compensation, e.select(finite, lost, e.const_like(t, 0.0)))
        store.set(e, total, t)

    def result(self, e: Emitter, store: StackArray, total: Slot, compensation: Slot) -> Value:
        value = store.get(e, total)
        if self.kahan:  # the compensation holds what the additions lost
            value = e.fsub(real(value), real(store.get(e, compensation)))
        if not self.mean:
            return value
        n = e.const(self.item.compute, self.count)
        if isinstance(value, ComplexValue):
            return ComplexValue(e.fdiv(value.re, n), e.fdiv(value.im, n))
        return e.fdiv(value, n)


def register_lanes(accumulator: Codec, tuning: Tuning) -> int:
    """How many accumulators fill one vector register (at least 4): the lanes,
    and so the order of combination, of both loop orders."""
    return max(4, tuning.vector_bytes // accumulator.dtype.nbytes)


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
    bases = (*tuple(b for _, b in reads), 0)
    outer = coalesce(tuple(space[d] for d in parallel), [tuple(s[d] for d in parallel) for s in strides], bases)
    kept: list[int | None] = [d for d in sorted(reduced) if space[d] != 1] or [
        None
    ]  # never merged: see the module docstring
    inner = LoopNest(
        tuple(space[d] if d is not None else 1 for d in kept),
        tuple(tuple(s[d] if d is not None else 0 for d in kept) for s in strides[:-1]),
    )
    return outer, inner


def _is_column(outer: LoopNest, inner: LoopNest) -> bool:
    """Inputs walk the innermost parallel axis contiguously (or not at all) but the
    innermost reduced axis with a stride."""
    if outer.sizes[-1] < 8 or numel(inner.sizes) <= 1:
        return False
    along = [s[-1] for s in outer.strides[:-1]]
    across = [s[-1] for s in inner.strides]
    return all(a in (0, 1) for a in along) and any(abs(c) > 1 for c in across)


def reduction_region_kernels(op: rg.ReductionRegionOp, ctx: KernelContext) -> list[Kernel]:
    outer, inner = _nests(op)
    split = op.split
    if split is not None:
        return _split_kernels(op, ctx.name, outer, inner, split, ctx.tuning)
    if _is_column(outer, inner):
        return [_column_kernel(op, ctx.name, outer, inner, ctx.tuning)]
    return [_row_kernel(op, ctx.name, outer, inner, ctx.tuning)]


def _value_at(e: Emitter, op: rg.ReductionRegionOp, pointers: list[SSAValue], offsets: list[SSAValue]) -> Value:
    """The body's yielded value at the point where input k is at `offsets[k]`."""
    args = op.body.block.args

    def load(k: int) -> Value:
        return codec(args[k].type).load(e, pointers[k], offsets[k])

    return body_value(e, op.body.block, load)


def _advance(e: Emitter, offsets: list[SSAValue], index: SSAValue, strides: list[int]) -> list[SSAValue]:
    return [advance(e, off, index, s) for off, s in zip(offsets, strides)]


def _walk(
    e: Emitter, region: Region, nest: LoopNest, offsets: list[SSAValue], innermost: Callable[[list[SSAValue]], None]
) -> None:
    """Loops over all but the innermost axis of `nest`, calling `innermost` with the offsets."""

    def level(depth: int, here: list[SSAValue]) -> None:
        if depth == len(nest.sizes) - 1:
            innermost(here)
            return
        strides = [s[depth] for s in nest.strides]

        def step(i: SSAValue) -> None:
            level(depth + 1, _advance(e, here, i, strides))

        for_range(e, region, e.i64(0), e.i64(nest.sizes[depth]), step)

    level(0, offsets)


def _blocked(
    e: Emitter,
    region: Region,
    n: int,
    step: int,
    size: int,
    body: Callable[[SSAValue], None],
    flush: Callable[[], None],
) -> None:
    """`body(i)` for i in range(0, n - n % step, step), calling `flush` every `size`
    calls and after the last; returns with the `n % step` leftovers undone."""
    groups = n // step
    blocks = groups // size

    def block(b: SSAValue) -> None:
        first = e.mul(b, e.i64(size))
        for_range(e, region, first, e.add(first, e.i64(size)), lambda g: body(e.mul(g, e.i64(step))))
        flush()

    for_range(e, region, e.i64(0), e.i64(blocks), block)
    for_range(e, region, e.i64(blocks * size), e.i64(groups), lambda g: body(e.mul(g, e.i64(step))))
    flush()


def _reduce_point(
    e: Emitter,
    region: Region,
    op: rg.ReductionRegionOp,
    math: Combiner,
    tuning: Tuning,
    store: StackArray,
    pointers: list[SSAValue],
    inner: LoopNest,
    offsets: list[SSAValue],
) -> None:
    """The values of `inner` from `offsets` combined by the row order in
    `store`: `lanes` lane slots (`register_lanes`), then the total and its
    compensation."""
    lanes = register_lanes(math.accumulator, tuning)
    total, compensation = lanes, lanes + 1
    n, strides = inner.sizes[-1], [s[-1] for s in inner.strides]

    def flush() -> None:
        math.add_to_total(e, store, total, compensation, math.tree(e, [store.get(e, k) for k in range(lanes)]))
        for k in range(lanes):
            store.set(e, k, math.accumulator.constant(e, math.identity))

    def row(offsets: list[SSAValue]) -> None:
        def group(first: SSAValue) -> None:
            for lane in range(lanes):
                at = _advance(e, offsets, e.add(first, e.i64(lane)), strides)
                store.set(e, lane, math.apply(e, store.get(e, lane), _value_at(e, op, pointers, at)))

        _blocked(e, region, n, lanes, tuning.region_block, group, flush)

        def single(i: SSAValue) -> None:
            value = _value_at(e, op, pointers, _advance(e, offsets, i, strides))
            math.add_to_total(e, store, total, compensation, value)

        for_range(e, region, e.i64(n - n % lanes), e.i64(n), single)

    for k in range(lanes + 1):
        store.set(e, k, math.accumulator.constant(e, math.identity))
    store.set(e, compensation, math.accumulator.constant(e, 0))
    _walk(e, region, inner, offsets, row)


def _row_kernel(op: rg.ReductionRegionOp, name: str, outer: LoopNest, inner: LoopNest, tuning: Tuning) -> Kernel:
    """At each output point: lane accumulators along the innermost reduced axis."""
    n_in = len(op.inputs)
    math = Combiner(op)
    total = register_lanes(math.accumulator, tuning)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        store = StackArray.allocate(e, math.accumulator, total + 2)

        def at_point(e: Emitter, ptrs: list[SSAValue], offsets: list[SSAValue]) -> None:
            _reduce_point(e, region, op, math, tuning, store, pointers, inner, offsets[:n_in])
            codec(math.element).store(e, math.result(e, store, total, total + 1), ptrs[n_in], offsets[n_in])

        emit_nest(e, region, outer, pointers, begin, end, at_point)

    function = kernel_function(name, n_in + 1, build)
    buffers: list[SSAValue | str] = [*op.inputs, *op.outputs]
    return Kernel(function, buffers, outer.outer_extent, max(1, numel(outer.sizes) * math.count))


def _split_kernels(
    op: rg.ReductionRegionOp, name: str, outer: LoopNest, inner: LoopNest, split: rd.Split, tuning: Tuning
) -> list[Kernel]:
    """A full reduction in two kernels: `partials` reduces part p (indices
    [p * rows, (p + 1) * rows) of the outermost reduced axis, the others whole)
    by the row order into the pair (total, compensation) p of the scratch, and
    is what the entry splits across threads; `combine`, one work item, combines
    the pairs in order (Kahan: the running compensation takes each part's) and
    stores the result, rounded once. The parts are a function of the shape
    (`dialects.reduction.full_reduction_split`), so the result is one for
    every thread count."""
    n_in = len(op.inputs)
    math = Combiner(op)
    pair = math.accumulator
    assert pair.dtype.nbytes * 2 * split.parts <= op.scratch_bytes()[0]
    lanes = register_lanes(pair, tuning)
    extent = inner.sizes[0]
    assert extent == op.iteration_shape[split.axis]  # the split axis leads the reduced nest
    bases, along = outer.bases[:n_in], [s[0] for s in inner.strides]

    def part(rows: int) -> LoopNest:
        return LoopNest((rows, *inner.sizes[1:]), inner.strides)

    full, tail = part(split.rows), part(extent - (split.parts - 1) * split.rows)

    def partials(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        partial = pointers[n_in]
        store = StackArray.allocate(e, pair, lanes + 2)

        def at_part(p: SSAValue) -> None:
            first = e.mul(p, e.i64(split.rows))
            offsets = [advance(e, e.i64(b), first, s) for b, s in zip(bases, along)]

            def reduce(nest: LoopNest) -> None:
                _reduce_point(e, region, op, math, tuning, store, pointers, nest, offsets)
                pair.store(e, store.get(e, lanes), partial, e.mul(p, e.i64(2)))
                pair.store(e, store.get(e, lanes + 1), partial, e.add(e.mul(p, e.i64(2)), e.i64(1)))

            if tail == full:
                reduce(full)
            else:
                last = e.icmp("eq", p, e.i64(split.parts - 1))
                if_else(e, region, last, lambda: reduce(tail), lambda: reduce(full))

        for_range(e, region, begin, end, at_part)

    def combine(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        partial, out = pointers
        store = StackArray.allocate(e, pair, 2)
        store.set(e, 0, pair.constant(e, math.identity))
        store.set(e, 1, pair.constant(e, 0))

        def one(p: SSAValue) -> None:
            at = e.mul(p, e.i64(2))
            if math.kahan:  # sum - comp + (t_p - c_p) = sum - (comp + c_p) + t_p
                lost = pair.load(e, partial, e.add(at, e.i64(1)))
                store.set(e, 1, e.fadd(real(store.get(e, 1)), real(lost)))
            math.add_to_total(e, store, 0, 1, pair.load(e, partial, at))

        for_range(e, region, e.i64(0), e.i64(split.parts), one)
        codec(math.element).store(e, math.result(e, store, 0, 1), out, e.i64(outer.bases[n_in]))

    scratch = Scratch(op, 0)
    return [
        Kernel(kernel_function(f"{name}_partials", n_in + 1, partials), [*op.inputs, scratch], split.parts, math.count),
        Kernel(kernel_function(f"{name}_combine", 2, combine), [scratch, *op.outputs], 1, split.parts, parallel=False),
    ]


def _column_kernel(op: rg.ReductionRegionOp, name: str, outer: LoopNest, inner: LoopNest, tuning: Tuning) -> Kernel:
    """Chunks of `columns` (`Tuning.region_columns`) adjacent output points, each with
    the lanes, total and compensation of the row order in L1 arrays laid out
    point-fastest, so the same arithmetic runs as loops over the chunk's points
    that vectorize."""
    n_in = len(op.inputs)
    math = Combiner(op)
    lanes = register_lanes(math.accumulator, tuning)
    columns = tuning.region_columns
    width = outer.sizes[-1]
    along = [s[-1] for s in outer.strides]
    counter = (*(0 for _ in outer.sizes[:-1]), 1)  # an extra "operand" whose offset is the chunk index
    grouped = LoopNest(
        (*outer.sizes[:-1], -(-width // columns)),
        (*((*s[:-1], s[-1] * columns) for s in outer.strides), counter),
        (*outer.bases, 0),
    )
    n, strides = inner.sizes[-1], [s[-1] for s in inner.strides]

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        store = StackArray.allocate(
            e, math.accumulator, (lanes + 2) * columns
        )  # slot of (lane k, point p): k * columns + p
        total, compensation = lanes, lanes + 1

        def slot(k: int, p: SSAValue) -> SSAValue:
            return e.add(p, e.i64(k * columns))

        def at_chunk(e: Emitter, ptrs: list[SSAValue], offsets: list[SSAValue]) -> None:
            count = e.smin(e.i64(columns), e.sub(e.i64(width), e.mul(offsets[-1], e.i64(columns))))

            def points(body: Callable[[SSAValue], None]) -> None:
                for_range(e, region, e.i64(0), count, body)

            def reset(p: SSAValue, upto: int) -> None:
                for k in range(upto):
                    store.set(e, slot(k, p), math.accumulator.constant(e, math.identity))

            def start(p: SSAValue) -> None:
                reset(p, lanes + 1)
                store.set(e, slot(compensation, p), math.accumulator.constant(e, 0))

            def flush_point(p: SSAValue) -> None:
                folded = math.tree(e, [store.get(e, slot(k, p)) for k in range(lanes)])
                math.add_to_total(e, store, slot(total, p), slot(compensation, p), folded)
                reset(p, lanes)

            def group(here: list[SSAValue], first: SSAValue) -> None:
                for k in range(lanes):
                    at = _advance(e, here, e.add(first, e.i64(k)), strides)

                    def one(p: SSAValue, k: int = k, at: list[SSAValue] = at) -> None:
                        value = _value_at(e, op, pointers, _advance(e, at, p, along[:n_in]))
                        store.set(e, slot(k, p), math.apply(e, store.get(e, slot(k, p)), value))

                    points(one)

            def column(here: list[SSAValue]) -> None:
                _blocked(
                    e,
                    region,
                    n,
                    lanes,
                    tuning.region_block,
                    lambda first: group(here, first),
                    lambda: points(flush_point),
                )

                def single(i: SSAValue) -> None:
                    at = _advance(e, here, i, strides)

                    def one(p: SSAValue) -> None:
                        value = _value_at(e, op, pointers, _advance(e, at, p, along[:n_in]))
                        math.add_to_total(e, store, slot(total, p), slot(compensation, p), value)

                    points(one)

                for_range(e, region, e.i64(n - n % lanes), e.i64(n), single)

            points(start)
            _walk(e, region, inner, offsets[:n_in], column)

            def finish(p: SSAValue) -> None:
                value = math.result(e, store, slot(total, p), slot(compensation, p))
                codec(math.element).store(e, value, ptrs[n_in], _advance(e, [offsets[n_in]], p, [along[n_in]])[0])

            points(finish)

        emit_nest(e, region, grouped, pointers, begin, end, at_chunk)

    function = kernel_function(name, n_in + 1, build)
    buffers: list[SSAValue | str] = [*op.inputs, *op.outputs]
    return Kernel(function, buffers, grouped.outer_extent, max(1, numel(outer.sizes) * math.count))


KERNELS: dict[type[Operation], EmitKernels] = {
    rg.ReductionRegionOp: reduction_region_kernels,
}
