"""Kernels for `rlx.elementwise_region`: a loop nest around the scalar body.

Every operand is described by its element strides over the iteration space
(0 on a broadcast axis); `loops.coalesce` merges the axes every operand walks
contiguously, so a same-shape chain becomes one flat loop and a bias add a
2-deep nest whose inner loop is contiguous for all operands: the shapes the
vectorizer turns into packed AVX-512 code. The body is each op's scalar
formula (`scalar_ops.emit_scalar_op`).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import row_major_strides
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.lowering.element_types import Value, codec
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import Kernel, KernelContext, emit_nest_kernel
from rlx_mlir.lowering.loops import LoopNest, coalesce, read_strides
from rlx_mlir.lowering.scalar_ops import emit_body


def _input_strides(region_op: rg.ElementwiseRegionOp) -> list[tuple[tuple[int, ...], int]]:
    rank = len(region_op.iteration_shape)
    return [
        read_strides(shape_of(v.type), index_maps.accesses(amap), rank)
        for v, amap in zip(region_op.inputs, region_op.maps)
    ]


def loop_nest(region_op: rg.ElementwiseRegionOp) -> LoopNest:
    space = region_op.iteration_shape
    inputs = _input_strides(region_op)
    outputs = [row_major_strides(space)] * len(region_op.outputs)
    bases = tuple(base for _, base in inputs) + (0,) * len(outputs)
    return coalesce(space, [s for s, _ in inputs] + outputs, bases)


def region_kernels(region_op: rg.ElementwiseRegionOp, ctx: KernelContext) -> list[Kernel]:
    """One kernel: the loop nest of the region's iteration space around its body."""
    nest = loop_nest(region_op)

    def body(e: Emitter, pointers: list[SSAValue], offsets: list[SSAValue]) -> None:
        _emit_body(e, region_op, pointers, offsets)

    function = emit_nest_kernel(ctx.name, nest, len(nest.strides), body)
    buffers: list[SSAValue | str] = [*region_op.inputs, *region_op.outputs]
    return [Kernel(function, buffers, nest.outer_extent, nest.outer_extent * nest.inner_work)]


def _emit_body(
    e: Emitter, region_op: rg.ElementwiseRegionOp, pointers: list[SSAValue], offsets: list[SSAValue]
) -> None:
    n_in = len(region_op.inputs)
    args = region_op.body.block.args

    def load(k: int) -> Value:
        return codec(args[k].type).load(e, pointers[k], offsets[k])

    block = region_op.body.block
    for j, (value, yielded) in enumerate(zip(block.last_op.operands, emit_body(e, block, load))):
        out, at = pointers[n_in + j], offsets[n_in + j]
        if yielded is None:  # a pure copy moves the stored bits
            k = args.index(value)
            codec(value.type).copy(e, pointers[k], offsets[k], out, at)
        else:
            codec(value.type).store(e, yielded, out, at)
