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
from rlx_mlir.lowering.core.element_types import Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_then
from rlx_mlir.lowering.core.slabs import (
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
    n, inner = slab.length, slab.inner
    item = codec(element_type(op.outputs[0].type))
    ft = item.compute
    lanes_item = codec(ft)
    lay = layout(inner, lanes_item.dtype.nbytes, ctx.tuning)
    log = op.kind is rd.LogSoftmaxOp
    if n * slab.outer * inner == 0:
        return []
    scalar = [shape_of(v.type) == () for v in op.inputs]
    codecs = [codec(element_type(v.type)) for v in op.inputs]
    first_epilogue = op.prologue_count

    def normalizer(e: Emitter, s: SSAValue) -> SSAValue:
        return m.log(e, s) if log else e.fdiv(e.const_like(s, 1.0), s)

    def shifted(e: Emitter, x: SSAValue, top: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(what pass 2 stores, the term it sums)."""
        d = e.fsub(x, top)
        term = m.exp(e, d)
        return (d if log else term), term

    def finish(e: Emitter, stored: SSAValue, c: SSAValue) -> SSAValue:
        return e.fsub(stored, c) if log else e.fmul(stored, c)

    def build(e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        dst = ptrs[-1]

        def read(k: int, at: SSAValue) -> Value:
            return codecs[k].load(e, ptrs[k], e.i64(0) if scalar[k] else at)

        def value(at: SSAValue) -> SSAValue:
            """The prologue's value at element `at`."""
            return real(body_value(e, op.body.block, lambda k: read(k, at)))

        def store(result: SSAValue, at: SSAValue) -> None:
            """The epilogue of the normalized `result` (rounded to its type first,
            as the unfused softmax stores it), stored at element `at`."""
            def load(k: int) -> Value:
                return item.round(e, result) if k == 0 else read(first_epilogue + k - 1, at)

            item.store(e, body_value(e, op.epilogue.block, load), dst, at)

        if slab.short:
            def output(o: SSAValue, j: SSAValue) -> None:
                at = [add_index(e, add_index(e, mul_index(e, o, e.i64(n * inner)), j), e.i64(k * inner)) for k in range(n)]
                xs = [value(a) for a in at]
                top = pairwise(e, xs, _fmax)
                pairs = [shifted(e, x, top) for x in xs]
                c = normalizer(e, pairwise(e, [term for _, term in pairs], _fadd))
                for (stored, _), a in zip(pairs, at):
                    store(finish(e, stored, c), a)

            short_items(e, region, slab, begin, end, output)
            return

        top, total = StackArray.allocate(e, lanes_item, lay.width), StackArray.allocate(e, lanes_item, lay.width)
        full = n // lay.fold
        tail = (n - full * lay.fold) * inner

        def run(o: SSAValue, column: SSAValue, first: SSAValue) -> None:
            base = add_index(e, mul_index(e, o, e.i64(n * inner)), column)

            def at(q: SSAValue, lane: SSAValue) -> SSAValue:
                return add_index(e, add_index(e, base, mul_index(e, q, e.i64(lay.stride))), lane)

            def spread(values: StackArray) -> None:
                """Lane l takes its column's value (l mod inner), folded layouts."""
                def copy(lane: SSAValue) -> None:
                    values.set(e, lane, values.get(e, e.urem(lane, e.i64(inner))))

                if lay.fold > 1:
                    for_range(e, region, e.i64(inner), e.i64(lay.width), copy)

            # pass 1: the maximum of each column, in every lane of it
            def max_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                xs = [value(at(q, lane)) for q in qs]
                top.set(e, lane, pairwise(e, [real(top.get(e, lane)), *xs], _fmax))

            each(e, region, lay.width, lambda lane: top.set(e, lane, e.const(ft, float("-inf"))))
            walk(e, region, lay, e.i64(full), tail, max_step, ctx.tuning.reduce_block)
            fold_lanes(e, region, lay, lambda a, b: top.set(e, a, _fmax(e, top.get(e, a), top.get(e, b))))  # type: ignore[arg-type]
            spread(top)

            # pass 2: exp(x - M) (or x - M) into the output, and the sum of exp(x - M)
            overlapping = known_index(first) != 0  # the last column chunk shares lanes with the one before

            def sum_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                terms, stores = [], []
                for q in qs:
                    stored, term = shifted(e, value(at(q, lane)), top.get(e, lane))  # type: ignore[arg-type]
                    terms.append(term)
                    if item.narrow:
                        continue
                    if overlapping:
                        stores.append((stored, at(q, lane)))
                    else:
                        item.store(e, stored, dst, at(q, lane))
                total.set(e, lane, e.fadd(total.get(e, lane), pairwise(e, terms, _fadd)))  # type: ignore[arg-type]

                def write() -> None:
                    for value, where in stores:
                        item.store(e, value, dst, where)

                if stores:  # only its own columns: the others belong to another work item
                    if_then(e, region, e.icmp("sge", lane, first), write)

            each(e, region, lay.width, lambda lane: total.set(e, lane, e.const(ft, 0.0)))
            walk(e, region, lay, e.i64(full), tail, sum_step, ctx.tuning.softmax_block)
            fold_lanes(e, region, lay, lambda a, b: total.set(e, a, e.fadd(total.get(e, a), total.get(e, b))))  # type: ignore[arg-type]

            # pass 3: rescale in place (or, f16/bf16, recompute from the input)
            def rescale(where: SSAValue, c: SSAValue, lane_top: SSAValue) -> None:
                if item.narrow:
                    stored, _ = shifted(e, value(where), lane_top)
                else:
                    stored = item.load(e, dst, where)  # type: ignore[assignment]
                store(finish(e, stored, c), where)

            if inner == 1:  # one row: M and the normalizer are scalars, the pass one flat loop
                row_top, c = top.get(e, e.i64(0)), normalizer(e, total.get(e, e.i64(0)))  # type: ignore[arg-type]
                each(e, region, n, lambda k: rescale(add_index(e, base, k), c, row_top))  # type: ignore[arg-type]
                return
            each(e, region, lay.columns, lambda lane: total.set(e, lane, normalizer(e, total.get(e, lane))))  # type: ignore[arg-type]
            spread(total)

            def rescale_row(q: SSAValue) -> None:
                lanes = e.i64(lay.width)
                if tail:
                    lanes = e.select(e.icmp("eq", q, e.i64(full)), e.i64(tail), lanes)
                def one(lane: SSAValue) -> None:
                    rescale(at(q, lane), total.get(e, lane), top.get(e, lane))  # type: ignore[arg-type]

                for_range(e, region, first, lanes, one)

            each(e, region, full + 1 if tail else full, rescale_row)

        work_items(e, region, slab, lay, begin, end, run)

    buffers: list[SSAValue | str | Scratch] = [*op.inputs, op.outputs[0]]
    function = kernel_function(ctx.name, len(buffers), build)
    return [Kernel(function, buffers, slab.extent(lay), slab.outer * n * inner)]


KERNELS: dict[type[Operation], EmitKernels] = {
    rg.NormalizeRegionOp: normalize_kernels,
}
