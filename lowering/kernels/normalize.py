"""Kernels of softmax/log_softmax (normalize regions, fused or not): three passes
over a slab of rows of lanes (`core/slabs.py`).

softmax/log_softmax, three passes over a row (a column chunk or folded rows
of lanes): pass 1 the maximum M; pass 2 exp(x - M) into the output (for
log_softmax x - M) and its sum s; pass 3 rescales the output in place
(* 1/s, or - log s), finding the row in cache. The input is read twice and
the row written back to memory once, with one exp per element (as PyTorch's
CPU kernel). That is the plain formula, so its special values are PyTorch's:
a row of all -inf gives NaN (exp(-inf - -inf)), a +inf or NaN anywhere makes
the row NaN. f16/bf16 compute in f32; storing the intermediate would round
it twice, so their pass 3 recomputes from the input instead.
"""

from __future__ import annotations

from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Codec, Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_then
from rlx_mlir.lowering.core.slabs import (
    Layout,
    Slab,
    add_index,
    each,
    fold_lanes,
    known_index,
    layout,
    mul_index,
    short_items,
    slab_around,
    walk,
    work_items,
)
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.lowering.scalar.scalar_ops import body_value, pairwise
from rlx_mlir.memory_plan import Scratch


def _fmax(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """max by compare-and-select (vmaxps). A NaN may be skipped here: exp(NaN - m)
    makes the row's sum, hence the whole row, NaN anyway."""
    return e.select(e.fcmp("ogt", b, a), b, a)


def _fadd(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.fadd(a, b)


def normalize_kernels(op: rg.NormalizeRegionOp, ctx: KernelContext) -> list[Kernel]:
    """Per row (a column chunk or folded rows of lanes): pass 1 the maximum M;
    pass 2 exp(x - M) into the output (log_softmax: x - M) and its sum s; pass 3
    rescales the output in place, * 1/s or - log(s), and applies the epilogue.
    x is the prologue's value, computed from the inputs where it is read: the
    inputs are read twice, the row is written back to memory once (pass 3 finds
    it in cache), and there is one exp per element. f16/bf16 would round the
    intermediate: their pass 3 recomputes from the inputs instead."""
    shape = shape_of(op.outputs[0].type)
    slab = slab_around(shape, op.axis.value.data % len(shape), ctx.tuning)
    item = codec(element_type(op.outputs[0].type))
    lay = layout(slab.inner, codec(item.compute).dtype.nbytes, ctx.tuning)
    if slab.length * slab.outer * slab.inner == 0:
        return []
    kernel = _Normalize(op, ctx, slab, lay, item)
    buffers: list[SSAValue | str | Scratch] = [*op.inputs, op.outputs[0]]
    function = kernel_function(ctx.name, len(buffers), kernel.build)
    return [Kernel(function, buffers, slab.extent(lay), slab.outer * slab.length * slab.inner)]


class _Normalize:
    """What a normalize kernel knows before it emits: its slab and layout, the
    element codecs, softmax or log_softmax. `build` emits the body."""

    def __init__(self, op: rg.NormalizeRegionOp, ctx: KernelContext, slab: Slab, lay: Layout, item: Codec) -> None:
        self.op, self.ctx, self.slab, self.lay, self.item = op, ctx, slab, lay, item
        self.n, self.inner = slab.length, slab.inner
        self.ft = item.compute
        self.lanes_item = codec(self.ft)
        self.log = op.kind is rd.LogSoftmaxOp
        self.scalar = [shape_of(v.type) == () for v in op.inputs]
        self.codecs = [codec(element_type(v.type)) for v in op.inputs]
        self.first_epilogue = op.prologue_count

    def normalizer(self, e: Emitter, s: SSAValue) -> SSAValue:
        return m.log(e, s) if self.log else e.fdiv(e.const_like(s, 1.0), s)

    def shifted(self, e: Emitter, x: SSAValue, top: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(what pass 2 stores, the term it sums)."""
        d = e.fsub(x, top)
        term = m.exp(e, d)
        return (d if self.log else term), term

    def finish(self, e: Emitter, stored: SSAValue, c: SSAValue) -> SSAValue:
        return e.fsub(stored, c) if self.log else e.fmul(stored, c)

    def build(self, e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        body = _NormalizeBody(self, e, region, ptrs)
        if self.slab.short:
            short_items(e, region, self.slab, begin, end, body.short_output)
            return
        body.allocate()
        work_items(e, region, self.slab, self.lay, begin, end, body.run)


class _NormalizeBody:
    """One emission of a normalize kernel's body: the emitter, region, pointers
    and stack arrays its passes share."""

    top: StackArray
    total: StackArray

    def __init__(self, k: _Normalize, e: Emitter, region: Region, ptrs: list[SSAValue]) -> None:
        self.k, self.e, self.region, self.ptrs = k, e, region, ptrs
        self.dst = ptrs[-1]

    def read(self, k: int, at: SSAValue) -> Value:
        return self.k.codecs[k].load(self.e, self.ptrs[k], self.e.i64(0) if self.k.scalar[k] else at)

    def value(self, at: SSAValue) -> SSAValue:
        """The prologue's value at element `at`."""
        return real(body_value(self.e, self.k.op.body.block, lambda k: self.read(k, at)))

    def store(self, result: SSAValue, at: SSAValue) -> None:
        """The epilogue of the normalized `result` (rounded to its type first,
        as the unfused softmax stores it), stored at element `at`."""
        e, k = self.e, self.k

        def load(j: int) -> Value:
            return k.item.round(e, result) if j == 0 else self.read(k.first_epilogue + j - 1, at)

        k.item.store(e, body_value(e, k.op.epilogue.block, load), self.dst, at)

    def short_output(self, o: SSAValue, j: SSAValue) -> None:
        """One output of a short reduction, its row unrolled: no lanes."""
        e, k = self.e, self.k
        n, inner = k.n, k.inner
        at = [add_index(e, add_index(e, mul_index(e, o, e.i64(n * inner)), j), e.i64(i * inner)) for i in range(n)]
        xs = [self.value(a) for a in at]
        top = pairwise(e, xs, _fmax)
        pairs = [k.shifted(e, x, top) for x in xs]
        c = k.normalizer(e, pairwise(e, [term for _, term in pairs], _fadd))
        for (stored, _), a in zip(pairs, at):
            self.store(k.finish(e, stored, c), a)

    def allocate(self) -> None:
        """The per-lane maxima and sums, and the rows of the slab: full rows of lanes
        and the lanes of a last partial one."""
        k = self.k
        self.top = StackArray.allocate(self.e, k.lanes_item, k.lay.width)
        self.total = StackArray.allocate(self.e, k.lanes_item, k.lay.width)
        self.full = k.n // k.lay.fold
        self.tail = (k.n - self.full * k.lay.fold) * k.inner

    def run(self, o: SSAValue, column: SSAValue, first: SSAValue) -> None:
        """The three passes over one work item (outer index o, column chunk)."""
        _NormalizeRow(self, o, column, first).emit()


class _NormalizeRow:
    """The three passes over one row: a column chunk, or folded rows of lanes."""

    def __init__(self, body: _NormalizeBody, o: SSAValue, column: SSAValue, first: SSAValue) -> None:
        self.b, self.k, self.e, self.region = body, body.k, body.e, body.region
        self.first = first
        self.base = add_index(self.e, mul_index(self.e, o, self.e.i64(self.k.n * self.k.inner)), column)

    def at(self, q: SSAValue, lane: SSAValue) -> SSAValue:
        e = self.e
        return add_index(e, add_index(e, self.base, mul_index(e, q, e.i64(self.k.lay.stride))), lane)

    def spread(self, values: StackArray) -> None:
        """Lane l takes its column's value (l mod inner), folded layouts."""
        e, inner = self.e, self.k.inner

        def copy(lane: SSAValue) -> None:
            values.set(e, lane, values.get(e, e.urem(lane, e.i64(inner))))

        if self.k.lay.fold > 1:
            for_range(e, self.region, e.i64(inner), e.i64(self.k.lay.width), copy)

    def emit(self) -> None:
        self.pass_1()
        self.pass_2()
        self.pass_3()

    def pass_1(self) -> None:
        """The maximum of each column, in every lane of it."""
        e, region, k, top = self.e, self.region, self.k, self.b.top
        each(e, region, k.lay.width, lambda lane: top.set(e, lane, e.const(k.ft, float("-inf"))))
        walk(e, region, k.lay, e.i64(self.b.full), self.b.tail, self.max_step, k.ctx.tuning.reduce_block)
        fold_lanes(e, region, k.lay, lambda a, b: top.set(e, a, _fmax(e, real(top.get(e, a)), real(top.get(e, b)))))
        self.spread(top)

    def max_step(self, lane: SSAValue, qs: list[SSAValue]) -> None:
        top = self.b.top
        xs = [self.b.value(self.at(q, lane)) for q in qs]
        top.set(self.e, lane, pairwise(self.e, [real(top.get(self.e, lane)), *xs], _fmax))

    def pass_2(self) -> None:
        """exp(x - M) (or x - M) into the output, and the sum of exp(x - M)."""
        e, region, k, total = self.e, self.region, self.k, self.b.total
        self.overlapping = known_index(self.first) != 0  # the last column chunk shares lanes with the one before
        each(e, region, k.lay.width, lambda lane: total.set(e, lane, e.const(k.ft, 0.0)))
        walk(e, region, k.lay, e.i64(self.b.full), self.b.tail, self.sum_step, k.ctx.tuning.softmax_block)
        fold_lanes(e, region, k.lay, lambda a, b: total.set(e, a, e.fadd(real(total.get(e, a)), real(total.get(e, b)))))

    def sum_step(self, lane: SSAValue, qs: list[SSAValue]) -> None:
        e, k, total = self.e, self.k, self.b.total
        terms, stores = [], []
        for q in qs:
            stored, term = k.shifted(e, self.b.value(self.at(q, lane)), real(self.b.top.get(e, lane)))
            terms.append(term)
            if k.item.narrow:
                continue
            if self.overlapping:
                stores.append((stored, self.at(q, lane)))
            else:
                k.item.store(e, stored, self.b.dst, self.at(q, lane))
        total.set(e, lane, e.fadd(real(total.get(e, lane)), pairwise(e, terms, _fadd)))

        def write() -> None:
            for value, where in stores:
                k.item.store(e, value, self.b.dst, where)

        if stores:  # only its own columns: the others belong to another work item
            if_then(e, self.region, e.icmp("sge", lane, self.first), write)

    def rescale(self, where: SSAValue, c: SSAValue, lane_top: SSAValue) -> None:
        """Pass 3 at one element (or, f16/bf16, recompute from the input)."""
        e, k = self.e, self.k
        if k.item.narrow:
            stored, _ = k.shifted(e, self.b.value(where), lane_top)
        else:
            stored = real(k.item.load(e, self.b.dst, where))
        self.b.store(k.finish(e, stored, c), where)

    def pass_3(self) -> None:
        """Rescale in place (or, f16/bf16, recompute from the input)."""
        e, region, k, top, total = self.e, self.region, self.k, self.b.top, self.b.total
        if k.inner == 1:  # one row: M and the normalizer are scalars, the pass one flat loop
            row_top, c = real(top.get(e, e.i64(0))), k.normalizer(e, real(total.get(e, e.i64(0))))
            each(e, region, k.n, lambda i: self.rescale(add_index(e, self.base, i), c, row_top))
            return
        each(e, region, k.lay.columns, lambda lane: total.set(e, lane, k.normalizer(e, real(total.get(e, lane)))))
        self.spread(total)
        each(e, region, self.b.full + 1 if self.b.tail else self.b.full, self.rescale_row)

    def rescale_row(self, q: SSAValue) -> None:
        e, top, total = self.e, self.b.top, self.b.total
        lanes = e.i64(self.k.lay.width)
        if self.b.tail:
            lanes = e.select(e.icmp("eq", q, e.i64(self.b.full)), e.i64(self.b.tail), lanes)

        def one(lane: SSAValue) -> None:
            self.rescale(self.at(q, lane), real(total.get(e, lane)), real(top.get(e, lane)))

        for_range(e, self.region, self.first, lanes, one)


KERNELS: dict[type[Operation], EmitKernels] = {
    rg.NormalizeRegionOp: normalize_kernels,
}
