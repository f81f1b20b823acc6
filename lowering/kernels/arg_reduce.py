"""Kernels of argmax/argmin (reduce_* ops): one pass over a slab of rows of lanes
(`core/slabs.py`).

argmax/argmin: each lane keeps (best value, its index) and walks its rows
in order, so a candidate needs one unordered compare (`_arg_step`: a NaN
wins unless the best is NaN already, a tie wins only with
select_last_index). StackArray start empty (index -1) and merge by the general
rule (`_arg_wins`: a NaN beats any number, the earlier NaN a later one, ties
go to the earlier index, or the later with select_last_index).
"""

from __future__ import annotations

from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range
from rlx_mlir.lowering.core.slabs import (
    add_index,
    each,
    fold_lanes,
    layout,
    mul_index,
    short_items,
    slab_around,
    walk,
    work_items,
)


def _arg_wins(
    e: Emitter, op: rd.ArgReduceOp, item: Codec, value: SSAValue, index: SSAValue, best: SSAValue, at: SSAValue
) -> SSAValue:
    """Whether candidate (value, index) replaces (best, at); an index < 0 marks an
    empty lane, which never wins and is always replaced."""
    maximum = isinstance(op, rd.ArgmaxOp)
    earlier = e.icmp("slt", index, at)
    tie_wins = e.xor(earlier, e.const(i1, 1)) if op.selects_last else earlier
    if item.dtype.kind is Kind.FLOAT:
        v_nan, b_nan = e.fcmp("uno", value, value), e.fcmp("uno", best, best)
        numbers = e.or_(e.fcmp("ogt" if maximum else "olt", value, best), e.and_(e.fcmp("oeq", value, best), tie_wins))
        nan_wins = e.and_(v_nan, e.or_(e.xor(b_nan, e.const(i1, 1)), earlier))
        wins = e.select(e.or_(v_nan, b_nan), nan_wins, numbers)
    else:
        signed = item.dtype.kind is Kind.INT
        pred = ("sgt" if maximum else "slt") if signed else ("ugt" if maximum else "ult")
        wins = e.or_(e.icmp(pred, value, best), e.and_(e.icmp("eq", value, best), tie_wins))
    return e.and_(e.or_(wins, e.icmp("slt", at, e.i64(0))), e.icmp("sge", index, e.i64(0)))


def _arg_step(e: Emitter, op: rd.ArgReduceOp, item: Codec, value: SSAValue, best: SSAValue, at: SSAValue) -> SSAValue:
    """`_arg_wins` for a candidate whose index is later than `at` (a lane walking its
    rows in order): it wins by an unordered compare - a NaN wins unless the best is
    already NaN - and ties only with select_last_index."""
    maximum, last = isinstance(op, rd.ArgmaxOp), op.selects_last
    if item.dtype.kind is Kind.FLOAT:
        beats = e.fcmp(("uge" if last else "ugt") if maximum else ("ule" if last else "ult"), value, best)
        wins = e.and_(beats, e.fcmp("ord", best, best))
    else:
        signed = item.dtype.kind is Kind.INT
        pred = ("sg" if signed else "ug") if maximum else ("sl" if signed else "ul")
        wins = e.icmp(pred + ("e" if last else "t"), value, best)
    return e.or_(wins, e.icmp("slt", at, e.i64(0)))


def arg_reduce_kernels(op: rd.ArgReduceOp, ctx: KernelContext) -> list[Kernel]:
    slab = slab_around(shape_of(op.input.type), op.reduced_axes()[0], ctx.tuning)
    n, inner = slab.length, slab.inner
    item, index = codec(element_type(op.input.type)), codec(i64)
    value = codec(item.compute)
    lay = layout(inner, value.dtype.nbytes, ctx.tuning)
    if n * slab.outer * inner == 0:
        return []

    def build(e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        src, dst = ptrs

        def absorb(
            state: tuple[SSAValue, SSAValue], x: SSAValue, k: SSAValue, in_order: bool = True
        ) -> tuple[SSAValue, SSAValue]:
            take = _arg_step(e, op, item, x, *state) if in_order else _arg_wins(e, op, item, x, k, *state)
            return e.select(take, x, state[0]), e.select(take, k, state[1])

        if slab.short:

            def output(o: SSAValue, j: SSAValue) -> None:
                at = add_index(e, mul_index(e, o, e.i64(n * inner)), j)
                state = (real(item.load(e, src, at)), e.i64(0))
                for k in range(1, n):
                    state = absorb(state, real(item.load(e, src, add_index(e, at, e.i64(k * inner)))), e.i64(k))
                index.store(e, state[1], dst, add_index(e, mul_index(e, o, e.i64(inner)), j))

            short_items(e, region, slab, begin, end, output)
            return

        best, where = StackArray.allocate(e, value, lay.width), StackArray.allocate(e, index, lay.width)

        full = n // lay.fold
        tail = (n - full * lay.fold) * inner

        def run(o: SSAValue, column: SSAValue, first: SSAValue) -> None:
            base = add_index(e, mul_index(e, o, e.i64(n * inner)), column)
            out = add_index(e, mul_index(e, o, e.i64(inner)), column)

            def lane_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                state = (real(best.get(e, lane)), real(where.get(e, lane)))
                row_in_lane = e.udiv(lane, e.i64(inner)) if lay.fold > 1 else None
                for q in qs:
                    x = real(
                        item.load(e, src, add_index(e, add_index(e, base, mul_index(e, q, e.i64(lay.stride))), lane))
                    )
                    k = q if row_in_lane is None else add_index(e, mul_index(e, q, e.i64(lay.fold)), row_in_lane)
                    state = absorb(state, x, k)
                best.set(e, lane, state[0])
                where.set(e, lane, state[1])

            def merge(a: SSAValue, b: SSAValue) -> None:
                state = absorb(
                    (real(best.get(e, a)), real(where.get(e, a))), real(best.get(e, b)), real(where.get(e, b)), False
                )
                best.set(e, a, state[0])
                where.set(e, a, state[1])

            def empty(lane: SSAValue) -> None:
                best.set(e, lane, e.const(value.compute, 0))
                where.set(e, lane, e.i64(-1))

            each(e, region, lay.width, empty)
            walk(e, region, lay, e.i64(full), tail, lane_step, ctx.tuning.reduce_block)
            fold_lanes(e, region, lay, merge)

            def store(lane: SSAValue) -> None:
                index.store(e, where.get(e, lane), dst, add_index(e, out, lane))

            for_range(e, region, first, e.i64(lay.columns), store)

        work_items(e, region, slab, lay, begin, end, run)

    function = kernel_function(ctx.name, 2, build)
    return [Kernel(function, [op.input, op.result], slab.extent(lay), slab.outer * n * inner)]


KERNELS: dict[type[Operation], EmitKernels] = {cls: arg_reduce_kernels for cls in rd.ARG_REDUCE_OPS}
