"""Kernels for `rlx.concat` and `rlx.pad`.

Transposes, slices, narrows, reversals and expands need no kernel of their
own: they are index maps (`index_maps`), either folded into a consumer region
or lowered as a copy region (tiled when transposed). Concat is one strided
copy per input into its slab of the result; pad computes, per output axis,
which input index it reads (clamped, wrapped or reflected) and selects the
constant where a constant pad lies outside.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f64
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Value, codec, convert, select_value
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, emit_nest_kernel, kernel_function
from rlx_mlir.lowering.core.loops import coalesce, for_range, read_strides


def concat_kernels(op: mv.ConcatOp, ctx: KernelContext) -> list[Kernel]:
    out_shape = shape_of(op.result.type)
    axis = op.normalized_axis()
    out_strides = row_major_strides(out_shape)
    item = codec(element_type(op.result.type))
    kernels, position = [], 0
    for k, value in enumerate(op.inputs):
        piece = list(out_shape)
        piece[axis] = op.extent(value)
        reads = index_maps.broadcast(shape_of(value.type), piece)
        in_strides, in_base = read_strides(shape_of(value.type), reads, len(piece))
        nest = coalesce(tuple(piece), [in_strides, out_strides], (in_base, position * out_strides[axis]))

        def copy(e: Emitter, pointers: list[SSAValue], offsets: list[SSAValue]) -> None:
            item.copy(e, pointers[0], offsets[0], pointers[1], offsets[1])

        function = emit_nest_kernel(f"{ctx.name}_{k}", nest, 2, copy)
        kernels.append(Kernel(function, [value, op.result], nest.outer_extent, numel(piece)))
        position += piece[axis]
    return kernels


def _source_index(e: Emitter, i: SSAValue, before: int, size: int, mode: str) -> tuple[SSAValue, SSAValue | None]:
    """The input index output index `i` reads on one axis, and (constant mode) whether it exists."""
    j = e.sub(i, e.i64(before))
    n = e.i64(size)
    if mode == "constant":
        inside = e.icmp("ult", j, n)
        return e.select(inside, j, e.i64(0)), inside
    if mode == "replicate":
        return e.smin(e.smax(j, e.i64(0)), e.i64(size - 1)), None
    period = size if mode == "circular" else 2 * (size - 1)
    p = e.i64(period)
    r = e.srem(j, p)
    r = e.select(e.icmp("slt", r, e.i64(0)), e.add(r, p), r)
    if mode == "reflect":
        r = e.select(e.icmp("slt", r, n), r, e.sub(p, r))
    return r, None


def pad_kernels(op: mv.PadOp, ctx: KernelContext) -> list[Kernel]:
    in_shape, out_shape = shape_of(op.input.type), shape_of(op.result.type)
    before, after = op.widths()
    mode = op.mode.data
    in_strides, out_strides = row_major_strides(in_shape), row_major_strides(out_shape)
    item = codec(element_type(op.result.type))
    empty_input = numel(in_shape) == 0
    rank = len(out_shape)

    def fill_value(e: Emitter) -> Value:
        return convert(e, e.const(f64, op.value.value.data), f64, element_type(op.result.type))

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        source, target = pointers

        def store(in_off: SSAValue, out_off: SSAValue, inside: SSAValue | None) -> None:
            if empty_input:
                value = fill_value(e)
            else:
                value = item.load(e, source, in_off)
                if inside is not None:
                    value = select_value(e, inside, value, fill_value(e))
            item.store(e, value, target, out_off)

        def level(
            depth: int, in_off: SSAValue, out_off: SSAValue, inside: SSAValue | None, lo: SSAValue, hi: SSAValue
        ) -> None:
            def body(i: SSAValue, interior: bool) -> None:
                padded = not interior and (before[depth] or after[depth])
                src, ok = (
                    _source_index(e, i, before[depth], in_shape[depth], mode)
                    if padded
                    else (e.sub(i, e.i64(before[depth])), None)
                )
                here_in = e.add(in_off, e.mul(src, e.i64(in_strides[depth])))
                here_out = e.add(out_off, e.mul(i, e.i64(out_strides[depth])))
                now = ok if inside is None else (inside if ok is None else e.and_(inside, ok))
                if depth + 1 < rank:
                    level(depth + 1, here_in, here_out, now, e.i64(0), e.i64(out_shape[depth + 1]))
                else:
                    store(here_in, here_out, now)

            # the interior of an axis is a plain shifted copy; only the borders need the mode's index rule
            pieces = (
                (0, before[depth], False),
                (before[depth], before[depth] + in_shape[depth], True),
                (before[depth] + in_shape[depth], out_shape[depth], False),
            )
            for start, stop, interior in pieces:
                if start < stop:
                    first = e.smax(lo, e.i64(start))
                    last = e.smin(hi, e.i64(stop))

                    def piece(i: SSAValue, interior: bool = interior) -> None:
                        body(i, interior)

                    for_range(e, region, first, last, piece)

        if rank == 0:
            store(e.i64(0), e.i64(0), None)
        else:
            level(0, e.i64(0), e.i64(0), None, begin, end)

    function = kernel_function(ctx.name, 2, build)
    extent = out_shape[0] if rank else 1
    return [Kernel(function, [op.input, op.result], extent, numel(out_shape))]


KERNELS: dict[type[Operation], EmitKernels] = {
    mv.ConcatOp: concat_kernels,
    mv.PadOp: pad_kernels,
}
