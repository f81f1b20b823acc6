"""Kernels for `rlx.elementwise_region`: a loop nest around the scalar body.

Every operand is described by its element strides over the iteration space
(0 on a broadcast axis). Adjacent axes that every operand walks contiguously
are merged first, so a same-shape chain becomes one flat loop and a bias add
a 2-deep nest whose inner loop is contiguous for all operands: the shapes the
vectorizer turns into packed AVX-512 code. The outermost loop runs over
`[begin, end)`, which is how the runtime splits a kernel across threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.ir import Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import rlx
from rlx_mlir.lowering.element_types import Value, codec
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.kernel import Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.loops import for_range
from rlx_mlir.lowering.scalar_ops import emit_scalar_op

TILE = 32  # 32 x 32 f32 = 4 KiB per operand: tiles of a transpose stay in L1


@dataclass(frozen=True)
class LoopNest:
    """Coalesced iteration space: extents (outermost first), per-operand strides
    (elements per step of each axis, may be negative or 0) and base offsets."""

    sizes: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]  # inputs then outputs
    bases: tuple[int, ...] = ()

    @property
    def outer_extent(self) -> int:
        return self.sizes[0]

    @property
    def inner_work(self) -> int:
        return numel(self.sizes[1:])

    @property
    def transposed(self) -> bool:
        """Some operand walks the innermost axis with a stride while another axis
        is contiguous for it: a transpose, which is tiled."""
        if len(self.sizes) < 2 or self.sizes[-1] < TILE:
            return False
        return any(abs(s[-1]) > 1 and 1 in map(abs, s[:-1]) for s in self.strides)


def read_strides(shape: Sequence[int], reads: Sequence[index_maps.Access], rank: int) -> tuple[tuple[int, ...], int]:
    """Element strides over `rank` iteration dims, and the base offset, of an
    operand of `shape` read through `reads`."""
    own = row_major_strides(tuple(shape))
    per_dim, base = [0] * rank, 0
    for axis, access in enumerate(reads):
        base += access.offset * own[axis]
        if access.dim is not None:
            per_dim[access.dim] += access.scale * own[axis]
    return tuple(per_dim), base


def _input_strides(region_op: rlx.ElementwiseRegionOp) -> list[tuple[tuple[int, ...], int]]:
    rank = len(region_op.iteration_shape)
    return [
        read_strides(rlx.shape_of(v.type), index_maps.accesses(amap), rank)
        for v, amap in zip(region_op.inputs, region_op.maps)
    ]


def coalesce(space: tuple[int, ...], strides: list[tuple[int, ...]], bases: tuple[int, ...] = ()) -> LoopNest:
    """Drop unit axes and merge axis pairs every operand walks as one contiguous run."""
    axes = [d for d, size in enumerate(space) if size != 1]
    sizes = [space[d] for d in axes]
    per_operand = [[s[d] for d in axes] for s in strides]
    merged_sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for position, size in enumerate(sizes):
        if merged_sizes and all(
            ops[-1] == own[position] * size for ops, own in zip(merged, per_operand)
        ):
            merged_sizes[-1] *= size
            for ops, own in zip(merged, per_operand):
                ops[-1] = own[position]
            continue
        merged_sizes.append(size)
        for ops, own in zip(merged, per_operand):
            ops.append(own[position])
    bases = bases or (0,) * len(strides)
    if not merged_sizes:
        return LoopNest((1,), tuple((0,) for _ in strides), bases)
    return LoopNest(tuple(merged_sizes), tuple(tuple(s) for s in merged), bases)


def loop_nest(region_op: rlx.ElementwiseRegionOp) -> LoopNest:
    space = region_op.iteration_shape
    inputs = _input_strides(region_op)
    outputs = [row_major_strides(space)] * len(region_op.outputs)
    bases = tuple(base for _, base in inputs) + (0,) * len(outputs)
    return coalesce(space, [s for s, _ in inputs] + outputs, bases)


def region_kernels(region_op: rlx.ElementwiseRegionOp, ctx: KernelContext) -> list[Kernel]:
    """One kernel: the loop nest of the region's iteration space around its body."""
    nest = loop_nest(region_op)

    def body(e: Emitter, pointers: list[SSAValue], offsets: list[SSAValue]) -> None:
        _emit_body(e, region_op, pointers, offsets)

    function = emit_nest_kernel(ctx.name, nest, len(nest.strides), body)
    buffers: list[SSAValue | str] = [*region_op.inputs, *region_op.outputs]
    return [Kernel(function, buffers, nest.outer_extent, nest.outer_extent * nest.inner_work)]


Body = Callable[[Emitter, list[SSAValue], list[SSAValue]], None]


def emit_nest_kernel(name: str, nest: LoopNest, n_pointers: int, body_at: Body) -> llvm.FuncOp:
    """A kernel looping over `nest` (outermost axis over [begin, end)) that calls
    `body_at(e, pointers, element offsets)` once per point."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        emit_nest(e, region, nest, pointers, begin, end, body_at)

    return kernel_function(name, n_pointers, build)


def emit_nest(
    e: Emitter, region: Region, nest: LoopNest, pointers: list[SSAValue], begin: SSAValue, end: SSAValue, body_at: Body
) -> None:
    rank = len(nest.sizes)
    tiled = nest.transposed

    def level(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        def body(i: SSAValue) -> None:
            here = [_advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]
            if depth + 1 < rank:
                level(depth + 1, here, e.i64(0), e.i64(nest.sizes[depth + 1]))
            else:
                body_at(e, pointers, here)

        if tiled and depth == rank - 2:
            tile_pair(depth, offsets, lo, hi)
        else:
            for_range(e, region, lo, hi, body)

    def tile_pair(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        """The two innermost loops in TILE x TILE blocks, so a transposed read
        and a contiguous write both stay in cache."""
        inner = e.i64(nest.sizes[depth + 1])

        def rows(i0: SSAValue) -> None:
            i1 = e.smin(e.add(i0, e.i64(TILE)), hi)

            def cols(j0: SSAValue) -> None:
                j1 = e.smin(e.add(j0, e.i64(TILE)), inner)

                def row(i: SSAValue) -> None:
                    here = [_advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]

                    def col(j: SSAValue) -> None:
                        cell = [_advance(e, off, j, strides[depth + 1]) for off, strides in zip(here, nest.strides)]
                        body_at(e, pointers, cell)

                    for_range(e, region, j0, j1, col)

                for_range(e, region, i0, i1, row)

            for_range(e, region, e.i64(0), inner, cols, step=TILE)

        for_range(e, region, lo, hi, rows, step=TILE)

    level(0, [e.i64(base) for base in nest.bases], begin, end)


def _advance(e: Emitter, offset: SSAValue, index: SSAValue, stride: int) -> SSAValue:
    if stride == 0:
        return offset
    step = index if stride == 1 else e.mul(index, e.i64(stride))
    return e.add(offset, step)


def _emit_body(
    e: Emitter, region_op: rlx.ElementwiseRegionOp, pointers: list[SSAValue], offsets: list[SSAValue]
) -> None:
    block = region_op.body.block
    n_in = len(region_op.inputs)
    used = {v for op in block.ops if not isinstance(op, rlx.YieldOp) for v in op.operands}
    values: dict[SSAValue, Value] = {
        arg: codec(arg.type).load(e, pointers[k], offsets[k]) for k, arg in enumerate(block.args) if arg in used
    }
    for op in block.ops:
        if isinstance(op, rlx.YieldOp):
            for j, value in enumerate(op.values):
                out, at = pointers[n_in + j], offsets[n_in + j]
                if value in block.args and value not in values:  # a pure copy moves the stored bits
                    k = block.args.index(value)
                    codec(value.type).copy(e, pointers[k], offsets[k], out, at)
                else:
                    codec(value.type).store(e, values[value], out, at)
            continue
        values[op.results[0]] = emit_scalar_op(e, op, [values[v] for v in op.operands])
