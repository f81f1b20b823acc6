"""Kernels for `rlx.elementwise_region`: a loop nest around the scalar body.

Every operand is described by its element strides over the iteration space
(0 on a broadcast axis); `loops.coalesce` merges the axes every operand walks
contiguously, so a same-shape chain becomes one flat loop and a bias add a
2-deep nest whose inner loop is contiguous for all operands: the shapes the
vectorizer turns into packed AVX-512 code. The body is each op's scalar
formula (`scalar_ops.emit_scalar_op`).

A pure copy whose input is contiguous along the second-innermost axis while the
output is contiguous along the innermost one (a transpose) is moved in square
blocks of one 64-byte vector per row: `lanes` rows loaded, transposed in
registers by shuffles (`vectors.transpose_square`), stored as `lanes` rows, so
every cache line read or written is used whole. Blocks are swept
`Tuning.transpose_block_rows` rows at a time, so the input is read in runs of
several lines (which the prefetcher follows) while the output rows stay few.

A flat loop with one output is staged through `Tuning.stage_bytes` on the stack
when the output is larger than `Tuning.nontemporal_min_bytes` (the last-level
cache: caching it would only evict the inputs, and a non-temporal store of a
whole line skips the read-for-ownership, a third less traffic for a copy; it then leaves by non-temporal
stores of whole lines, which a loop LLVM vectorizes cannot emit) or when its
body calls sin/cos/tan (a chunk is computed with the fast argument reduction,
and again with the exact one only if an argument needs it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, i1, i8, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core import vectors
from rlx_mlir.lowering.core.element_types import Codec, Value, codec
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import PTR, Kernel, KernelContext, emit_nest_kernel, kernel_function
from rlx_mlir.lowering.core.loops import LoopNest, advance, coalesce, for_range, if_else, if_then, read_strides
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.lowering.scalar.scalar_ops import emit_body, emit_scalar_op, yielded
from rlx_mlir.tuning import Tuning


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
    """One kernel: the loop nest of the region's iteration space around its body (staged
    through the stack when a flat loop streams its one large output or defers exact trig
    reductions, register blocks for a transposed copy)."""
    nest = loop_nest(region_op)
    buffers: list[SSAValue | str] = [*region_op.inputs, *region_op.outputs]
    items = [codec(element_type(v.type)) for v in region_op.outputs]
    streaming = sum(item.dtype.nbytes for item in items) * numel(nest.sizes) > ctx.tuning.nontemporal_min_bytes
    lanes = transpose_lanes(region_op, nest)
    flat = len(nest.sizes) == 1 and len(items) == 1
    if lanes:
        function = _transposed_copy_kernel(ctx.name, nest, items[0], lanes, streaming, ctx.tuning)
    elif flat and (streaming or _has_trig_reductions(region_op)):
        function = _staged_kernel(ctx.name, nest, region_op, items[0], streaming, ctx.tuning.stage_bytes)
    else:

        def body(e: Emitter, pointers: list[SSAValue], offsets: list[SSAValue]) -> None:
            _emit_body(e, region_op, pointers, offsets)

        function = emit_nest_kernel(ctx.name, nest, len(nest.strides), body)
    return [Kernel(function, buffers, nest.outer_extent, nest.outer_extent * nest.inner_work)]


def _has_trig_reductions(region_op: rg.ElementwiseRegionOp) -> bool:
    """Whether the body reduces arguments of sin/cos/tan (directly, in a derivative, in complex exp)."""
    return any(_reduces_trig(op) for op in region_op.body.block.ops if not isinstance(op, rg.YieldOp))


_REDUCES_TRIG: dict[tuple[str, ...], bool] = {}


def _reduces_trig(op: Operation) -> bool:
    """Whether the formula of `op` reduces trig arguments: found by emitting it once per kind of op
    (name, properties, operand types) into a scratch block, so no list of ops has to agree with
    the formulas, and a large region costs one lookup per op."""
    key = (op.name, str(op.properties), *(str(v.type) for v in op.operands))
    if key not in _REDUCES_TRIG:
        scratch = Block(arg_types=[PTR, i64])
        e = Emitter(scratch)
        operands = [codec(v.type).load(e, *scratch.args) for v in op.operands]
        with m.exact_reduction_deferred() as flags:
            emit_scalar_op(e, op, operands)
        _REDUCES_TRIG[key] = bool(flags)
    return _REDUCES_TRIG[key]


def _staged_kernel(
    name: str, nest: LoopNest, region_op: rg.ElementwiseRegionOp, item: Codec, streaming: bool, stage_bytes: int
) -> llvm.FuncOp:
    """A flat loop that computes `stage_bytes` of its one output at a time into a buffer on the
    stack (the same scalar body as everywhere, which LLVM vectorizes), then moves the buffer to
    the output in 64-byte vectors.

    - Streaming (an output larger than the last-level cache): the chunks start on the output's
      cache lines and the moves are non-temporal stores of whole lines; the elements before
      the first line and after the last whole chunk are written directly.
    - sin/cos/tan: each chunk is first computed with Cody-Waite reductions only
      (`math_approx.exact_reduction_deferred`), OR-ing the flags of arguments too large for
      them, and recomputed with the exact reductions only if one is set.
    """
    n_in = len(region_op.inputs)
    size = item.dtype.nbytes
    chunk = stage_bytes // size

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        stage = e.op(llvm.AllocaOp(e.i64(stage_bytes), i8, alignment=vectors.LINE_BYTES))
        out = pointers[n_in]

        def at(i: SSAValue) -> list[SSAValue]:
            return [advance(e, e.i64(base), i, s[0]) for base, s in zip(nest.bases, nest.strides)]

        def direct(i: SSAValue) -> None:
            _emit_body(e, region_op, pointers, at(i))

        def into_stage(c: SSAValue, j: SSAValue) -> None:
            _emit_body(e, region_op, [*pointers[:n_in], stage], [*at(e.add(c, j))[:n_in], j])

        def fast(c: SSAValue, j: SSAValue, needs_exact: list[SSAValue]) -> list[SSAValue]:
            with m.exact_reduction_deferred() as flags:
                into_stage(c, j)
            for flag in flags:
                needs_exact = [e.or_(needs_exact[0], flag)]
            return needs_exact

        def staged(c: SSAValue) -> None:
            (needs_exact,) = vectors.carry(e, region, chunk, [e.const(i1, 0)], lambda j, acc: fast(c, j, acc))
            if_then(
                e, region, needs_exact, lambda: for_range(e, region, e.i64(0), e.i64(chunk), lambda j: into_stage(c, j))
            )
            first_byte = e.mul(e.add(e.i64(nest.bases[n_in]), c), e.i64(size))

            def line(k: SSAValue) -> None:
                offset = e.mul(k, e.i64(vectors.LINE_BYTES))
                bits = vectors.load(e, i8, stage, offset, vectors.LINE_BYTES)
                vectors.store(e, bits, out, e.add(first_byte, offset), nontemporal=streaming)

            for_range(e, region, e.i64(0), e.i64(stage_bytes // vectors.LINE_BYTES), line)

        first = begin
        if streaming:
            to_line = vectors.to_line(e, out, e.add(e.i64(nest.bases[n_in]), begin), size)
            first = e.select(vectors.element_aligned(e, out, size), e.add(begin, to_line), end)
        first, last = _aligned_span(e, first, end, chunk)
        for_range(e, region, begin, first, direct)
        for_range(e, region, first, last, staged, step=chunk)
        for_range(e, region, last, end, direct)

    return kernel_function(name, len(nest.strides), build)


def _emit_body(
    e: Emitter, region_op: rg.ElementwiseRegionOp, pointers: list[SSAValue], offsets: list[SSAValue]
) -> None:
    n_in = len(region_op.inputs)
    args = region_op.body.block.args

    def load(k: int) -> Value:
        return codec(args[k].type).load(e, pointers[k], offsets[k])

    block = region_op.body.block
    for j, (value, result) in enumerate(zip(yielded(block), emit_body(e, block, load))):
        out, at = pointers[n_in + j], offsets[n_in + j]
        if result is None:  # a pure copy moves the stored bits
            k = args.index(value)
            codec(value.type).copy(e, pointers[k], offsets[k], out, at)
        else:
            codec(value.type).store(e, result, out, at)


def transpose_lanes(region_op: rg.ElementwiseRegionOp, nest: LoopNest) -> int:
    """The block width (lanes of one vector) if the region is a transposed copy that
    `_transposed_copy_kernel` moves in register blocks, else 0."""
    block = region_op.body.block
    if len(region_op.inputs) != 1 or len(region_op.outputs) != 1 or len(nest.sizes) < 2:
        return 0
    if list(yielded(block)) != [block.args[0]]:  # not a pure copy
        return 0
    size = codec(block.args[0].type).dtype.nbytes
    lanes = min(16, vectors.LINE_BYTES // size) if size in (1, 2, 4, 8) else 0
    (s_in, s_out) = nest.strides
    transposed = s_in[-2] == 1 and s_out[-1] == 1 and abs(s_in[-1]) > 1
    return lanes if transposed and lanes and min(nest.sizes[-2:]) >= lanes else 0


@dataclass(frozen=True)
class _Transpose:
    """What the transposed-copy emitters share: the nest, the element, the block width."""

    nest: LoopNest
    item: Codec
    lanes: int
    tuning: Tuning
    src: SSAValue
    dst: SSAValue

    @property
    def size(self) -> int:
        return self.item.dtype.nbytes

    @property
    def lane(self) -> IntegerType:
        return IntegerType(8 * self.size)  # the stored bits, whatever the type

    @property
    def lines_per_row(self) -> bool:
        """Whether every output row starts at the same offset within a cache line, so that
        one column offset aligns the blocks' stores in all rows."""
        return self.nest.strides[1][-2] * self.size % vectors.LINE_BYTES == 0


def _transposed_copy_kernel(
    name: str, nest: LoopNest, item: Codec, lanes: int, nontemporal: bool, tuning: Tuning
) -> llvm.FuncOp:
    """A copy whose input runs along axis -2 and output along axis -1: the outer axes as
    loops, the last two in lanes x lanes register blocks, the ragged edges element by element.
    With `nontemporal` (and rows that keep the alignment) the blocks' stores are non-temporal
    when the output is element-aligned at run time."""
    rank = len(nest.sizes)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        t = _Transpose(nest, item, lanes, tuning, *pointers)
        streaming = nontemporal and t.lines_per_row

        def level(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
            if depth < rank - 2:

                def body(i: SSAValue) -> None:
                    here = [advance(e, off, i, s[depth]) for off, s in zip(offsets, nest.strides)]
                    level(depth + 1, here, e.i64(0), e.i64(nest.sizes[depth + 1]))

                for_range(e, region, lo, hi, body)
            elif streaming:
                if_else(
                    e,
                    region,
                    vectors.element_aligned(e, t.dst, t.size),
                    lambda: _transpose_rows(e, region, t, offsets, lo, hi, True),
                    lambda: _transpose_rows(e, region, t, offsets, lo, hi, False),
                )
            else:
                _transpose_rows(e, region, t, offsets, lo, hi, False)

        level(0, [e.i64(base) for base in nest.bases], begin, end)

    return kernel_function(name, 2, build)


def _aligned_span(e: Emitter, first: SSAValue, stop: SSAValue, lanes: int) -> tuple[SSAValue, SSAValue]:
    """[first, last): whole blocks of `lanes` from `first` (clamped to `stop`)."""
    first = e.smin(first, stop)
    return first, e.add(first, e.mul(e.sdiv(e.sub(stop, first), e.i64(lanes)), e.i64(lanes)))


def _transpose_rows(
    e: Emitter, region: Region, t: _Transpose, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue, nontemporal: bool
) -> None:
    """Output rows [lo, hi) of the last two axes. Blocks start on the input's cache lines (rows)
    and the output's (columns), so each vector load or store is one whole line; the rows and
    columns before and after the blocks are copied element by element."""
    (s_in, s_out), cols, lanes = t.nest.strides, t.nest.sizes[-1], t.lanes
    to_input_line = vectors.to_line(e, t.src, e.add(offsets[0], lo), t.size)
    row_first, row_last = _aligned_span(e, e.add(lo, to_input_line), hi, lanes)
    out_row = e.add(offsets[1], e.mul(lo, e.i64(s_out[-2])))
    column = vectors.to_line(e, t.dst, out_row, t.size) if t.lines_per_row else e.i64(0)
    col_first, col_last = _aligned_span(e, column, e.i64(cols), lanes)

    def element(i: SSAValue, j: SSAValue) -> None:
        at = [advance(e, advance(e, off, i, s[-2]), j, s[-1]) for off, s in zip(offsets, t.nest.strides)]
        t.item.copy(e, t.src, at[0], t.dst, at[1])

    def elements(rows: tuple[SSAValue, SSAValue], columns: tuple[SSAValue, SSAValue]) -> None:
        for_range(e, region, *rows, lambda i: for_range(e, region, *columns, lambda j: element(i, j)))

    def block(i0: SSAValue, j0: SSAValue) -> None:
        base_in = advance(e, e.add(offsets[0], i0), j0, s_in[-1])
        base_out = e.add(advance(e, offsets[1], i0, s_out[-2]), j0)
        loaded = [vectors.load(e, t.lane, t.src, e.add(base_in, e.i64(k * s_in[-1])), lanes) for k in range(lanes)]
        for k, row in enumerate(vectors.transpose_square(e, loaded)):
            vectors.store(e, row, t.dst, e.add(base_out, e.i64(k * s_out[-2])), nontemporal)

    block_rows, block_cols = t.tuning.transpose_block_rows, t.tuning.transpose_block_cols

    def sweep(i0: SSAValue) -> None:
        i1 = e.smin(e.add(i0, e.i64(block_rows)), row_last)

        def panel(j0: SSAValue) -> None:
            j1 = e.smin(e.add(j0, e.i64(block_cols)), col_last)
            for_range(
                e, region, j0, j1, lambda j: for_range(e, region, i0, i1, lambda i: block(i, j), step=lanes), step=lanes
            )

        for_range(e, region, col_first, col_last, panel, step=block_cols)
        elements((i0, i1), (e.i64(0), col_first))
        elements((i0, i1), (col_last, e.i64(cols)))

    elements((lo, row_first), (e.i64(0), e.i64(cols)))
    for_range(e, region, row_first, row_last, sweep, step=block_rows)
    elements((row_last, hi), (e.i64(0), e.i64(cols)))
