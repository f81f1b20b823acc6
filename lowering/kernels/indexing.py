"""Kernels of the gather and scatter families, with checked indices.

Every index goes through `kernel.checked_index`: [-n, -1] wraps, anything
else is reported in the status block and its access skipped (a row copy of
length 0, or no load at all), so a bad index never reads or writes out of
bounds and the runtime raises IndexError.

Gathers loop over rows (the contiguous trailing block is one vectorized copy)
and may be split across threads; scatters run in index order on one thread,
so duplicate indices are deterministic (with reduction "none" the last
update wins).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import i1, i8
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.elementwise import AddOp, BinaryOp
from rlx_mlir.lowering.core.element_types import Codec, Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import (
    STATUS,
    EmitKernels,
    Kernel,
    KernelContext,
    checked_index,
    kernel_function,
)
from rlx_mlir.lowering.core.loops import LoopNest, coalesce, emit_nest, for_range
from rlx_mlir.lowering.scalar.scalar_ops import binary_value


def _copy_run(
    e: Emitter,
    region: Region,
    item: Codec,
    src: tuple[SSAValue, SSAValue],
    dst: tuple[SSAValue, SSAValue],
    length: SSAValue,
) -> None:
    """dst[0..length) = src[0..length) (element offsets): a loop LLVM turns into wide copies."""
    (src_ptr, src_off), (dst_ptr, dst_off) = src, dst

    def body(t: SSAValue) -> None:
        item.copy(e, src_ptr, e.add(src_off, t), dst_ptr, e.add(dst_off, t))

    for_range(e, region, e.i64(0), length, body)


def _accumulate_run(
    e: Emitter,
    region: Region,
    item: Codec,
    combine: type[BinaryOp] | None,
    src: tuple[SSAValue, SSAValue],
    dst: tuple[SSAValue, SSAValue],
    length: SSAValue,
) -> None:
    """dst[t] = combine(dst[t], src[t]) for t < length (src[t] alone when combine is None)."""
    (src_ptr, src_off), (dst_ptr, dst_off) = src, dst

    def body(t: SSAValue) -> None:
        at = e.add(dst_off, t)
        update = item.load(e, src_ptr, e.add(src_off, t))
        item.store(e, _reduce(e, combine, item.load(e, dst_ptr, at), update, item), dst_ptr, at)

    for_range(e, region, e.i64(0), length, body)


def _reduce(e: Emitter, combine: type[BinaryOp] | None, old: Value, update: Value, item: Codec) -> Value:
    return update if combine is None else binary_value(e, combine, old, update, item.dtype.ir_type)


def _index_loader(value: SSAValue) -> Callable[[Emitter, SSAValue, SSAValue], SSAValue]:
    indices = codec(element_type(value.type))
    return lambda e, ptr, at: real(indices.load(e, ptr, at))


def _quotient(e: Emitter, q: SSAValue, m: int) -> tuple[SSAValue, SSAValue]:
    """(q // m, q % m) for a non-negative q."""
    div = e.udiv(q, e.i64(m)) if m > 1 else q
    return (div, e.sub(q, e.mul(div, e.i64(m)))) if m > 1 else (q, e.i64(0))


# ---------------------------------------------------------------------------
# gathers
# ---------------------------------------------------------------------------


def gather_kernels(op: mv.GatherOp, ctx: KernelContext) -> list[Kernel]:
    """np.take: row q = (o, j) of the result copies data row (o, indices[j])."""
    data = shape_of(op.data.type)
    axis = op.normalized_axis()
    outer, n, inner = numel(data[:axis]), data[axis], numel(data[axis + 1 :])
    m = numel(shape_of(op.indices.type))
    item, load_index = codec(element_type(op.result.type)), _index_loader(op.indices)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        table, indices, out, status = pointers

        def row(q: SSAValue) -> None:
            o, j = _quotient(e, q, m)
            k, ok = checked_index(e, region, load_index(e, indices, j), n, status, ctx.code, axis)
            src = e.mul(e.add(e.mul(o, e.i64(n)), k), e.i64(inner))
            length = e.select(ok, e.i64(inner), e.i64(0))
            _copy_run(e, region, item, (table, src), (out, e.mul(q, e.i64(inner))), length)

        for_range(e, region, begin, end, row)

    function = kernel_function(ctx.name, 4, build)
    return [Kernel(function, [op.data, op.indices, op.result, STATUS], outer * m, outer * m * inner)]


def _along_axis(op: mv.GatherElementsOp | mv.ScatterElementsOp) -> tuple[LoopNest, int]:
    """The nest over the indices' shape for (indices, values, data without `axis`),
    and data's stride along `axis` (added per element from the index)."""
    data, shape = shape_of(op.data.type), shape_of(op.indices.type)
    axis = op.normalized_axis()
    data_strides = row_major_strides(data)
    own = row_major_strides(shape)
    others = tuple(0 if d == axis else s for d, s in enumerate(data_strides))
    return coalesce(shape, [own, own, others]), data_strides[axis]


def gather_elements_kernels(op: mv.GatherElementsOp, ctx: KernelContext) -> list[Kernel]:
    """np.take_along_axis: each result element reads data at its own position,
    with the index along `axis` taken from `indices`."""
    data, shape = shape_of(op.data.type), shape_of(op.indices.type)
    axis = op.normalized_axis()
    nest, axis_stride = _along_axis(op)
    item, load_index = codec(element_type(op.result.type)), _index_loader(op.indices)
    readable = data[axis] > 0

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        table, indices, out, status = pointers

        def element(e: Emitter, ptrs: list[SSAValue], offsets: list[SSAValue]) -> None:
            k, _ = checked_index(e, region, load_index(e, indices, offsets[0]), data[axis], status, ctx.code, axis)
            if readable:
                item.copy(e, table, e.add(offsets[2], e.mul(k, e.i64(axis_stride))), out, offsets[1])

        emit_nest(e, region, nest, [indices, out, table], begin, end, element)

    function = kernel_function(ctx.name, 4, build)
    return [Kernel(function, [op.data, op.indices, op.result, STATUS], nest.outer_extent, numel(shape))]


def _coordinates_offset(
    e: Emitter,
    region: Region,
    indices: SSAValue,
    at: SSAValue,
    load_index: Callable,
    data: tuple[int, ...],
    first_axis: int,
    count: int,
    status: SSAValue,
    code: int,
) -> tuple[SSAValue, SSAValue]:
    """Element offset of the `count` coordinates at indices[at:] into data axes
    first_axis..., and whether all were valid."""
    strides = row_major_strides(data)
    offset, all_ok = e.i64(0), None
    for c in range(count):
        axis = first_axis + c
        k, ok = checked_index(e, region, load_index(e, indices, e.add(at, e.i64(c))), data[axis], status, code, axis)
        offset = e.add(offset, e.mul(k, e.i64(strides[axis])))
        all_ok = ok if all_ok is None else e.and_(all_ok, ok)
    assert all_ok is not None, "no coordinates"
    return offset, all_ok


def gather_nd_kernels(op: mv.GatherNdOp, ctx: KernelContext) -> list[Kernel]:
    """ONNX GatherND: each index tuple (within its batch) selects a contiguous slice."""
    data, shape = shape_of(op.data.type), shape_of(op.indices.type)
    b, k = op.batch_dims.value.data, shape[-1]
    batches, groups = numel(shape[:b]), numel(shape[b:-1])
    block, slice_size = numel(data[b:]), numel(data[b + k :])
    item, load_index = codec(element_type(op.result.type)), _index_loader(op.indices)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        table, indices, out, status = pointers

        def row(q: SSAValue) -> None:
            batch, _ = _quotient(e, q, groups)
            at = e.mul(q, e.i64(k))
            offset, ok = _coordinates_offset(e, region, indices, at, load_index, data, b, k, status, ctx.code)
            src = e.add(e.mul(batch, e.i64(block)), offset)
            length = e.select(ok, e.i64(slice_size), e.i64(0))
            _copy_run(e, region, item, (table, src), (out, e.mul(q, e.i64(slice_size))), length)

        for_range(e, region, begin, end, row)

    function = kernel_function(ctx.name, 4, build)
    rows = batches * groups
    return [Kernel(function, [op.data, op.indices, op.result, STATUS], rows, rows * slice_size)]


# ---------------------------------------------------------------------------
# scatters (serial, in index order)
# ---------------------------------------------------------------------------


def _zero(e: Emitter, ptr: SSAValue, nbytes: int) -> None:
    e.intrinsic("llvm.memset.p0.i64", [ptr, e.const(i8, 0), e.i64(nbytes), e.const(i1, 0)], None)


def _copy_bytes(e: Emitter, dst: SSAValue, src: SSAValue, nbytes: int) -> None:
    e.intrinsic("llvm.memcpy.p0.p0.i64", [dst, src, e.i64(nbytes), e.const(i1, 0)], None)


def _accumulate_rows(
    op: mv.GatherBackwardOp | mv.ScatterAddOp, ctx: KernelContext, dy: SSAValue, out_shape: tuple[int, ...], axis: int
) -> list[Kernel]:
    """zeros(out_shape), then out[o, indices[j], :] += dy[o, j, :]: gather's adjoint."""
    outer, n, inner = numel(out_shape[:axis]), out_shape[axis], numel(out_shape[axis + 1 :])
    m = numel(shape_of(op.indices.type))
    item, load_index = codec(element_type(op.results[0].type)), _index_loader(op.indices)
    total_bytes = numel(out_shape) * item.dtype.nbytes

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        grads, indices, out, status = pointers
        _zero(e, out, total_bytes)

        def row(q: SSAValue) -> None:
            o, j = _quotient(e, q, m)
            k, ok = checked_index(e, region, load_index(e, indices, j), n, status, ctx.code, axis)
            dst = e.mul(e.add(e.mul(o, e.i64(n)), k), e.i64(inner))
            length = e.select(ok, e.i64(inner), e.i64(0))
            _accumulate_run(e, region, item, AddOp, (grads, e.mul(q, e.i64(inner))), (out, dst), length)

        for_range(e, region, begin, end, row)

    function = kernel_function(ctx.name, 4, build)
    return [Kernel(function, [dy, op.indices, op.results[0], STATUS], outer * m, outer * m * inner, parallel=False)]


def gather_backward_kernels(op: mv.GatherBackwardOp, ctx: KernelContext) -> list[Kernel]:
    return _accumulate_rows(op, ctx, op.dy, shape_of(op.result.type), op.normalized_axis())


def scatter_add_kernels(op: mv.ScatterAddOp, ctx: KernelContext) -> list[Kernel]:
    """Row scatter-add into zeros: gather_backward along axis 0."""
    return _accumulate_rows(op, ctx, op.updates, shape_of(op.result.type), 0)


def scatter_nd_kernels(op: mv.ScatterNdOp, ctx: KernelContext) -> list[Kernel]:
    """ONNX ScatterND: copy data, then reduce each update slice into its place."""
    data, shape = shape_of(op.data.type), shape_of(op.indices.type)
    k = shape[-1]
    groups, slice_size = numel(shape[:-1]), numel(data[k:])
    item, load_index = codec(element_type(op.result.type)), _index_loader(op.indices)
    combine = op.combine

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        source, indices, updates, out, status = pointers
        _copy_bytes(e, out, source, numel(data) * item.dtype.nbytes)

        def group(g: SSAValue) -> None:
            offset, ok = _coordinates_offset(
                e, region, indices, e.mul(g, e.i64(k)), load_index, data, 0, k, status, ctx.code
            )
            length = e.select(ok, e.i64(slice_size), e.i64(0))
            _accumulate_run(e, region, item, combine, (updates, e.mul(g, e.i64(slice_size))), (out, offset), length)

        for_range(e, region, begin, end, group)

    function = kernel_function(ctx.name, 5, build)
    buffers: list[SSAValue | str] = [op.data, op.indices, op.updates, op.result, STATUS]
    return [Kernel(function, buffers, groups, groups * slice_size, parallel=False)]


def scatter_elements_kernels(op: mv.ScatterElementsOp, ctx: KernelContext) -> list[Kernel]:
    """ONNX ScatterElements: copy data, then reduce each update into data at its
    own position with the `axis` coordinate taken from indices."""
    data, shape = shape_of(op.data.type), shape_of(op.indices.type)
    axis = op.normalized_axis()
    nest, axis_stride = _along_axis(op)
    item, load_index = codec(element_type(op.result.type)), _index_loader(op.indices)
    combine = op.combine
    writable = data[axis] > 0

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        source, indices, updates, out, status = pointers
        _copy_bytes(e, out, source, numel(data) * item.dtype.nbytes)

        def element(e: Emitter, ptrs: list[SSAValue], offsets: list[SSAValue]) -> None:
            k, _ = checked_index(e, region, load_index(e, indices, offsets[0]), data[axis], status, ctx.code, axis)
            if writable:
                at = e.add(offsets[2], e.mul(k, e.i64(axis_stride)))
                update = item.load(e, updates, offsets[1])
                item.store(e, _reduce(e, combine, item.load(e, out, at), update, item), out, at)

        emit_nest(e, region, nest, [indices, updates, out], begin, end, element)

    function = kernel_function(ctx.name, 5, build)
    buffers: list[SSAValue | str] = [op.data, op.indices, op.updates, op.result, STATUS]
    return [Kernel(function, buffers, nest.outer_extent, numel(shape), parallel=False)]


KERNELS: dict[type[Operation], EmitKernels] = {
    mv.GatherOp: gather_kernels,
    mv.GatherElementsOp: gather_elements_kernels,
    mv.GatherNdOp: gather_nd_kernels,
    mv.GatherBackwardOp: gather_backward_kernels,
    mv.ScatterAddOp: scatter_add_kernels,
    mv.ScatterNdOp: scatter_nd_kernels,
    mv.ScatterElementsOp: scatter_elements_kernels,
}
