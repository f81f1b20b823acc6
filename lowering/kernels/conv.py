"""The kernels of `rlx.conv` (a direct kernel, register tiles over the padded
input, and im2col with BLAS GEMMs) and of `rlx.max_pool` (the direct kernel's
walk with a maximum instead of an FMA).

Which one runs: `ConvOp.gemm_form` (it decides the scratch the op declares)
picks the GEMM form for f32/f64 with at least 8 output channels and 8 input
channels · taps per group, the direct kernel otherwise (depthwise convs, thin
convs, f16/bf16). A GEMM-form conv then runs tiled (`_tiled_form`) unless it
is pointwise (its input already is the GEMM's rhs) or its plane is so small
that whole vectors would mostly compute dropped positions; those run im2col and
BLAS.

**Direct.** Units are the rows (n, m) of the result, one output plane each,
split over threads by the entry (`Kernel.extent` = N·M). A unit sets its
plane to the bias (or zero), then for each input channel c of its group and
each kernel tap k adds w[m, c, k] · x[n, c', o·s + k·d − p_before] to every
output o whose read falls inside the input: the valid range of each output
axis is computed per tap (`_valid_range`), so padding costs no branch and no
copy. The innermost loop is an axpy along the innermost output axis (one FMA
per element, contiguous for stride 1), which LLVM vectorizes; the plane stays
in L1/L2 while the taps sweep it. f32/f64 accumulate in the result itself;
f16/bf16 in an f32 scratch of the result's size (`ConvOp.scratch_bytes`),
each unit rounding its plane once into the result. (Depthwise causal conv1d
C=1536 k=4 S=1024, 2 threads: 0.5 ms, 4x faster than torch.)

**GEMM.** Units are (n, group, block of output rows along the first
spatial axis, chunk of output channels: `_gemm_split`), split over the entry's
threads after a kernel that sets BLAS to one thread. A unit fills its part of
the output with the bias, writes the block's im2col matrix
[C/groups · taps, block columns] into a stack buffer (zeros only where a read
falls outside the input; the block is sized to stay in L2 for the GEMM) and
multiplies W[group rows] by it with one CBLAS GEMM into the output (beta = 1
over the bias). A pointwise conv (1x1, unit strides, no padding) multiplies
its input planes in place. (conv2d 3x3 [8, 64, 56, 56], 2 threads on a
loaded host: 0.85-0.92x torch; its BLAS GEMMs take 90% of the time.)

**Tiled.** The units of the GEMM form; a unit copies its input block onto its
stack, zero-padded and split into phase planes by the strides (`_Tiled`; only
the planes some tap reads: ResNet's 1x1 / 2 downsampling convs copied four
for one and ran 11-22% slower, one thread, loaded 2-vCPU Xeon 6), so
that each tap of each output position reads a constant offset from it, and
computes [chunk x block positions] with register tiles (`_tile`: 6 channels x
4 vectors of 16 positions on AVX-512, 24 FMAs per 4 vector loads and 6 weight
splats, every tap unrolled) whose lhs is the weight as stored: no im2col
matrix, no packing, no BLAS call. The sums land in a stack block in the
input's coordinates, from which the real positions are copied out (through a
conv region's epilogue). On a loaded 2-vCPU Xeon (AVX-512), one thread:
ResNet's 3x3 layers at 165-190 GFLOP/s tiled against 70-115 through im2col
and OpenBLAS (the 7x7 layers gained most: their GEMMs, N = 49, are
OpenBLAS's slowest); 2 threads, same process: ResNet-18 from 0.54-0.65x
onnxruntime to 0.82-0.91x, its 3x3 conv on [8, 64, 56, 56] 1.44x faster.

**Lanes.** A conv whose weight `pack-conv-weights` packed ([M/L, C/groups,
K..., L]: `weight_lanes`) runs the tiled form's units and input blocks with
output channels in the lanes instead (`_lane_tiles`): register tiles of 6
consecutive real outputs x 4 vectors of 16 channels (AVX-512), each output's
input splat from its own place in the block, each (channel, tap) of the weight
one vector load; the sums land channel block by block, each L x L square of
them is transposed in registers, and each channel's row goes out whole. It computes no
padding columns and no vector's rest, which ResNet's smaller planes are full
of: its 3x3 layers on 28x28 to 7x7 planes ran 8-24% faster than in positions,
those on 56x56 4-8%, its stem 3-10% and its 1x1 / 2 downsampling at batch 8
2.3x (2-vCPU Zen 4, weights constant). It runs wherever it computes fewer
positions (`packed_lanes`).

**Winograd.** A 3x3 stride-1 conv whose weight `pack-conv-weights` transformed
into the 16 points of F(2x2, 3x3) (`winograd`: [16, M/L, C, L] of G·w·Gᵀ) runs
the tiled form's units and input blocks (blocks of whole pairs of output rows)
with 2x2 output tiles: a unit transforms each tile's 4x4 inputs into its 16
points (Bᵀ·d·B, adds only, L tiles of a row per vector: `_winograd_input`),
multiplies them by the weight's points point by point, a GEMM over the input
channels each (the lane form's register tiles, tiles in place of positions:
`_winograd_products`), takes each tile's 16 products to its 2x2 outputs (Aᵀ·m·A,
from the bias: `_winograd_output`) and copies those out as the lane form does.
16 multiplies per 2x2 outputs and channel pair instead of 36: ResNet's 3x3
layers on 56x56 to 14x14 planes ran 1.4-2.0x faster than in lanes (2-vCPU Zen
4). A small plane's units are mostly transforms and vectors of tiles past a
row's end (`Tuning.conv_winograd_min_tiles`). An infinite input makes NaN of
the outputs near it where the direct sums keep ±inf (the transforms subtract
it from itself), as in every Winograd convolution.

**Epilogue.** `rlx.conv_region` (what fuse-epilogues makes of a conv and its
bias add, activation and residual) runs any form, then applies its body to
the unit's part of the output (`_epilogue`) while it is still in cache.

**Max pool.** Units (n, c). Where every window reads some input, each output
is the maximum of its window's taps in one pass (`_one_pass_pool`: taps in the
padding re-read a valid one, the last axis's interior one vectorized loop).
Otherwise the plane starts at -inf (the integer minimum) and each tap of the
leading axes takes the maximum over its valid output rows (`_Walk`, as above),
the last axis's taps unrolled where all of them read inside the input (`_PoolRow`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import blas, dtypes, index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.core import vectors
from rlx_mlir.lowering.core.element_types import Codec, Value, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import (
    MACS_PER_ELEMENT,
    byte_pointer,
    gemm_call,
    gemm_external,
    single_threaded_blas,
)
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.core.loops import advance, for_range, if_else, read_strides
from rlx_mlir.lowering.scalar.scalar_ops import body_value
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning


def _valid_range(
    e: Emitter, tap_start: SSAValue, size_in: int, size_out: int, stride: int
) -> tuple[SSAValue, SSAValue]:
    """[lo, hi): the outputs o with 0 <= o·stride + tap_start < size_in (tap_start = k·d − p_before)."""
    zero, s = e.i64(0), e.i64(stride)
    before = e.sub(zero, tap_start)  # outputs below ceil(before / s) read left of the input
    lo = e.select(e.icmp("sgt", before, zero), e.sdiv(e.add(before, e.i64(stride - 1)), s), zero)
    last = e.sub(e.i64(size_in - 1), tap_start)  # the last readable o·s
    hi = e.select(e.icmp("slt", last, zero), zero, e.smin(e.add(e.sdiv(last, s), e.i64(1)), e.i64(size_out)))
    return lo, hi


@dataclass(frozen=True)
class _Window:
    """A window sliding over the padded input planes (a conv's kernel, a pooling window)."""

    spatial_in: tuple[int, ...]
    kernel: tuple[int, ...]
    spatial_out: tuple[int, ...]
    geometry: cv.ConvGeometry

    @property
    def rank(self) -> int:
        return len(self.kernel)


@dataclass(frozen=True)
class _Conv:
    """The static shape of one convolution, as the kernel walks it."""

    op: cv.ConvolutionOp
    bias: SSAValue | None
    channels: int
    out_channels: int
    per_group: int
    out_per_group: int
    spatial_in: tuple[int, ...]
    kernel: tuple[int, ...]
    spatial_out: tuple[int, ...]
    item: Codec
    acc: Codec
    """Where the sums build up: the result's codec, or f32 for f16/bf16."""

    @classmethod
    def of(cls, op: cv.ConvolutionOp) -> _Conv:
        x, w, y = shape_of(op.input.type), op.weight_shape, shape_of(op.result.type)
        groups = op.geometry.groups
        item = codec(element_type(op.result.type))
        widened = dtypes.from_ir(element_type(op.result.type)).name in cv.WIDENED_TYPES
        acc = codec(f32) if widened else item
        bias = op.bias if isinstance(op, cv.ConvOp) else None
        return cls(op, bias, x[1], y[1], x[1] // groups, y[1] // groups, x[2:], w[2:], y[2:], item, acc)

    @property
    def widened(self) -> bool:
        return self.acc is not self.item

    @property
    def rank(self) -> int:
        return len(self.kernel)

    @property
    def window(self) -> _Window:
        return _Window(self.spatial_in, self.kernel, self.spatial_out, self.op.geometry)


Element = Callable[[SSAValue, SSAValue], None]
"""element(x index, output position): what one valid (tap, output) pair does."""
Leaf = Callable[[list[SSAValue], SSAValue], None]
"""leaf(tap starts, tap offset): what one kernel tap does (starts k·d − p_before per axis)."""


class _Walk:
    """The loops both forms share: over the kernel taps, and over the outputs
    whose read of one tap falls inside the input."""

    def __init__(self, e: Emitter, region: Region, window: _Window) -> None:
        self.e, self.region, self.window = e, region, window
        self.geometry = window.geometry

    def loop(self, lo: SSAValue | int, hi: SSAValue | int, body: Callable[[SSAValue], None]) -> None:
        e = self.e
        bounds = [e.i64(v) if isinstance(v, int) else v for v in (lo, hi)]
        for_range(e, self.region, bounds[0], bounds[1], body)

    def taps(
        self, leaf: Leaf, at: SSAValue, axis: int = 0, starts: tuple[SSAValue, ...] = (), until: int | None = None
    ) -> None:
        """One loop per kernel axis (those before `until`, if given); leaf(starts, at + the
        tap's row-major offset)."""
        e, c, g = self.e, self.window, self.geometry
        if axis == (c.rank if until is None else until):
            leaf(list(starts), at)
            return
        k_stride = row_major_strides(c.kernel)[axis]

        def tap(k: SSAValue) -> None:
            start = e.sub(e.mul(k, e.i64(g.dilations[axis])), e.i64(g.pad_before[axis]))
            self.taps(leaf, e.add(at, e.mul(k, e.i64(k_stride))), axis + 1, (*starts, start), until)

        self.loop(0, c.kernel[axis], tap)

    def outputs(
        self,
        starts: list[SSAValue],
        x_at: SSAValue,
        element: Element,
        axis: int = 0,
        y_at: SSAValue | None = None,
        rows: bool = False,
    ) -> None:
        """element(x[o·s + start], o) over the valid outputs o of each axis (o a flat plane
        position); with `rows`, the last axis is left to `element`: it is called once per
        valid output row, with the x index and output position where that row starts."""
        e, c, g = self.e, self.window, self.geometry
        y_at = y_at if y_at is not None else e.i64(0)
        if rows and axis == c.rank - 1:
            element(x_at, y_at)
            return
        in_stride = row_major_strides(c.spatial_in)[axis]
        out_stride = row_major_strides(c.spatial_out)[axis]
        lo, hi = _valid_range(e, starts[axis], c.spatial_in[axis], c.spatial_out[axis], g.strides[axis])
        x_at = e.add(x_at, e.mul(starts[axis], e.i64(in_stride)))
        step_in = g.strides[axis] * in_stride

        def position(o: SSAValue) -> None:
            here_x = e.add(x_at, e.mul(o, e.i64(step_in)))
            here_y = e.add(y_at, o if out_stride == 1 else e.mul(o, e.i64(out_stride)))
            if axis + 1 < c.rank:
                self.outputs(starts, here_x, element, axis + 1, here_y, rows)
            else:
                element(here_x, here_y)

        self.loop(lo, hi, position)


def _direct_unit(walk: _Walk, conv: _Conv, pointers: list[SSAValue], row: SSAValue) -> None:
    """Unit (n, m) of the direct form: its plane = bias, then += every channel's taps."""
    e, c = walk.e, conv
    x, w = pointers[0], pointers[1]
    bias = pointers[2] if c.bias is not None else None
    out = pointers[len(_operands(c.op)) - 1]
    plane = pointers[-1]  # the result, or its f32 scratch
    batch = e.udiv(row, e.i64(c.out_channels))
    m = e.sub(row, e.mul(batch, e.i64(c.out_channels)))
    group = e.udiv(m, e.i64(c.out_per_group))
    base_out = e.mul(row, e.i64(numel(c.spatial_out)))
    start = real(c.acc.constant(e, 0.0)) if bias is None else real(c.item.load(e, bias, m))
    walk.loop(0, numel(c.spatial_out), lambda q: c.acc.store(e, start, plane, e.add(base_out, q)))

    def channel(k: SSAValue) -> None:
        ci = e.add(e.mul(group, e.i64(c.per_group)), k)
        base_in = e.mul(e.add(e.mul(batch, e.i64(c.channels)), ci), e.i64(numel(c.spatial_in)))

        def leaf(starts: list[SSAValue], w_at: SSAValue) -> None:
            weight = real(c.item.load(e, w, w_at))

            def axpy(x_at: SSAValue, o: SSAValue) -> None:
                at = e.add(base_out, o)
                value = real(c.item.load(e, x, x_at))
                c.acc.store(e, e.fma(weight, value, real(c.acc.load(e, plane, at))), plane, at)

            walk.outputs(starts, base_in, axpy)

        walk.taps(leaf, e.mul(e.add(e.mul(m, e.i64(c.per_group)), k), e.i64(numel(c.kernel))))

    walk.loop(0, c.per_group, channel)
    if c.widened:

        def round_once(q: SSAValue) -> None:
            at = e.add(base_out, q)
            c.item.store(e, c.acc.load(e, plane, at), out, at)

        walk.loop(0, numel(c.spatial_out), round_once)
    if isinstance(c.op, rg.ConvRegionOp):
        _epilogue(walk, c.op, pointers, (batch, m, e.i64(0)), (1, numel(c.spatial_out)))


class _EpilogueRow:
    """The epilogue along one output row of planes (n, channel) from flat plane position q on:
    `apply(j, sum)` sets out[n, channel, q + j] = body(sum, epilogue inputs there), the sum
    given or read from out. The inputs' reads advance along the plane by 0 or 1 per
    position (`rg.epilogue_reads_planes`)."""

    def __init__(
        self, walk: _Walk, op: rg.ConvRegionOp, pointers: list[SSAValue], at: tuple[SSAValue, SSAValue, SSAValue]
    ) -> None:
        e = self.e = walk.e
        self.op, self.pointers = op, pointers
        result = shape_of(op.result.type)
        self.out = pointers[len(_operands(op)) - 1]
        self.item = codec(element_type(op.result.type))
        maps = zip(op.mapped_inputs, op.maps)
        self.reads = [read_strides(shape_of(v.type), index_maps.accesses(m), len(result)) for v, m in maps]
        n, channel, q = at
        self.at_row = e.add(e.mul(e.add(e.mul(n, e.i64(result[1])), channel), e.i64(numel(result[2:]))), q)
        self.starts = [
            advance(e, advance(e, advance(e, e.i64(base), n, strides[0]), channel, strides[1]), q, strides[-1])
            for strides, base in self.reads
        ]

    def apply(self, j: SSAValue, total: Value | None = None) -> None:
        e, args = self.e, self.op.body.block.args
        at = e.add(self.at_row, j)

        def load(k: int) -> Value:
            if k == 0:
                return total if total is not None else self.item.load(e, self.out, at)
            strides, _ = self.reads[k - 1]
            return codec(args[k].type).load(e, self.pointers[1 + k], advance(e, self.starts[k - 1], j, strides[-1]))

        self.item.store(e, body_value(e, self.op.body.block, load), self.out, at)


def _epilogue(
    walk: _Walk,
    op: rg.ConvRegionOp,
    pointers: list[SSAValue],
    first: tuple[SSAValue, SSAValue, SSAValue],
    extents: tuple[int, int],
) -> None:
    """out[n, m + r, q + j] = body(out[n, m + r, q + j], epilogue inputs there) for
    r < rows and j < columns, with (n, m, q) = `first` and (rows, columns) = `extents`
    (q, j: flat positions in the output plane), in place."""
    e = walk.e
    n, m, q = first

    def row(r: SSAValue) -> None:
        epilogue = _EpilogueRow(walk, op, pointers, (n, e.add(m, r), q))
        walk.loop(0, extents[1], epilogue.apply)

    walk.loop(0, extents[0], row)


def _direct_kernels(op: cv.ConvolutionOp, conv: _Conv, ctx: KernelContext) -> list[Kernel]:
    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        walk = _Walk(e, region, conv.window)
        for_range(e, region, begin, end, lambda row: _direct_unit(walk, conv, pointers, row))

    buffers = _operands(op)
    if conv.widened:
        buffers.append(Scratch(op, 0))
    units = shape_of(op.result.type)[0] * conv.out_channels
    work = numel(shape_of(op.result.type)) * conv.per_group * numel(conv.kernel)
    return [Kernel(kernel_function(ctx.name, len(buffers), build), buffers, units, work)]


def _operands(op: cv.ConvolutionOp) -> list[SSAValue | str | Scratch]:
    """input, weight, then the bias or the epilogue's inputs, then the result."""
    if isinstance(op, cv.ConvOp):
        return [op.input, op.weight, *([op.bias] if op.bias is not None else []), op.result]
    return [*op.operands, op.result]


def _im2col(
    walk: _Walk, conv: _Conv, x: SSAValue, col: SSAValue, x_base: SSAValue, block: tuple[SSAValue, SSAValue]
) -> None:
    """The im2col rows (c, tap) of output rows [first, last) along the first spatial
    axis: col[(c·taps + t)·width + o] = x[c, o·s + k_t·d − p] (0 outside the input),
    with width = (last − first) · row columns; zeros are written only where a read
    falls outside, each element once."""
    e, c = walk.e, conv
    first, last = block
    width = e.mul(e.sub(last, first), e.i64(numel(c.spatial_out[1:])))
    zero = real(c.item.constant(e, 0.0))

    def zeros(at: SSAValue, count: SSAValue) -> None:
        walk.loop(0, count, lambda q: c.item.store(e, zero, col, e.add(at, q)))

    def fill(
        starts: list[SSAValue], x_at: SSAValue, y_at: SSAValue, axis: int, bounds: tuple[SSAValue, SSAValue]
    ) -> None:
        g = walk.geometry
        in_stride = row_major_strides(c.spatial_in)[axis]
        out_stride = numel(c.spatial_out[axis + 1 :])
        lo, hi = _valid_range(e, starts[axis], c.spatial_in[axis], c.spatial_out[axis], g.strides[axis])
        lo = e.smin(e.smax(lo, bounds[0]), bounds[1])
        hi = e.smax(e.smin(hi, bounds[1]), lo)
        size = e.i64(out_stride)
        zeros(y_at, e.mul(e.sub(lo, bounds[0]), size))
        zeros(e.add(y_at, e.mul(e.sub(hi, bounds[0]), size)), e.mul(e.sub(bounds[1], hi), size))
        x_at = e.add(x_at, e.mul(starts[axis], e.i64(in_stride)))
        step_in = g.strides[axis] * in_stride

        def position(o: SSAValue) -> None:
            here_x = e.add(x_at, e.mul(o, e.i64(step_in)))
            here_y = e.add(y_at, e.mul(e.sub(o, bounds[0]), size))
            if axis + 1 < c.rank:
                fill(starts, here_x, here_y, axis + 1, (e.i64(0), e.i64(c.spatial_out[axis + 1])))
            else:
                c.item.copy(e, x, here_x, col, here_y)

        walk.loop(lo, hi, position)

    def channel(k: SSAValue) -> None:
        base_in = e.add(x_base, e.mul(k, e.i64(numel(c.spatial_in))))

        def leaf(starts: list[SSAValue], row: SSAValue) -> None:
            fill(starts, base_in, e.mul(row, width), 0, (first, last))

        walk.taps(leaf, e.mul(k, e.i64(numel(c.kernel))))

    walk.loop(0, c.per_group, channel)


@dataclass(frozen=True)
class _GemmSplit:
    """How the GEMM form cuts one conv into units (n, group, column block, channel chunk):
    `blocks` blocks of `block_rows` output rows along the first spatial axis, and
    `chunks` chunks of `chunk` output channels (rows of W) of each group. The last
    block and the last chunk may be shorter."""

    block_rows: int
    blocks: int
    chunk: int
    chunks: int

    @property
    def parts(self) -> int:
        return self.blocks * self.chunks

    def row_counts(self, extent: int) -> list[int]:
        """The output rows of a block, sorted: [last, full] or [full] (of `extent`)."""
        return sorted({self.block_rows, extent - (self.blocks - 1) * self.block_rows})

    def chunk_sizes(self, rows: int) -> list[int]:
        """The channels of a chunk, sorted: [last, full] or [full] (of `rows`)."""
        return sorted({self.chunk, rows - (self.chunks - 1) * self.chunk})


def _gemm_split(op: cv.ConvolutionOp, conv: _Conv, ctx: KernelContext, row_bytes: int) -> _GemmSplit:
    """im2col and GEMMs: blocks of as many output rows as L2 allows (`_block_budget`:
    `row_bytes` of im2col matrix per output row), then `_balance`."""
    extent = conv.spatial_out[0]
    cap = max(1, min(extent, _block_budget(ctx) // max(1, row_bytes)))
    return _balance(op, conv, ctx, -(-extent // cap), 1)


def _tiled_split(op: cv.ConvolutionOp, conv: _Conv, t: _Tiled, ctx: KernelContext) -> _GemmSplit:
    """The tiled form: blocks of as many output rows as fit `_block_budget` with the
    sums of all the group's channels, but at least one register tile of positions
    (the whole plane if it has fewer), the group's channels then in chunks whose sums
    fit beside such a block in the larger budget of an im2col block (the one
    `_tiled_form` admits by; if not even a chunk fits, blocks of one row); then
    `_balance`. Fewer rows than a tile are vectors of mostly dropped positions:
    ResNet's last stage at batch 1 ran one output row of 7 per block, tiles of one
    vector of 16 positions, at 46 GFLOP/s against 90-105 on its larger planes (2-vCPU
    Zen 4)."""
    nbytes, extent, rows = conv.item.dtype.nbytes, conv.spatial_out[0], conv.out_per_group
    per_row = t.input_elements(2) - t.input_elements(1) + rows * t.row  # input and output elements per output row
    fixed = t.input_elements(1) + rows * t.tile
    cap = max(1, min(extent, (_block_budget(ctx, tiled=True) // nbytes - fixed) // per_row))
    least = min(extent, -(-t.tile // t.row))
    fitting = (_block_budget(ctx) // nbytes - t.input_elements(least)) // t.positions(least)
    if cap >= least or fitting < min(rows, CHUNK_ROWS_MIN):
        granule = t.tile if t.row == 1 and cap >= t.tile else 1  # 1-d: blocks of whole tiles
        return _balance(op, conv, ctx, -(-extent // (cap - cap % granule)), 1, granule=granule)
    return _balance(op, conv, ctx, -(-extent // least), -(-rows // min(rows, fitting)), least)


def _balance(
    op: cv.ConvolutionOp,
    conv: _Conv,
    ctx: KernelContext,
    blocks: int,
    chunks: int,
    least_rows: int = 1,
    granule: int = 1,
) -> _GemmSplit:
    """At most `blocks` blocks and `chunks` chunks as cut, then, while there are
    fewer units than `conv_min_units` as cut (4 per core: the pool hands each thread an
    equal share, so few unequal units leave one idle: ResNet's 7x7 layers at batch 1 had
    2 units of 6 and 1 rows, its 28x28 ones 7 units of 4 rows for 2 threads), the larger
    of a unit's GEMM sides is halved: its columns
    (more blocks, each re-reading its rows of W) or its rows (more channel chunks, each
    building the same im2col block). Units stay near square, where a GEMM's packing
    costs least per FLOP. Blocks keep `least_rows` while chunks can be halved, and are
    a multiple of `granule` rows (the tiled form's tile of positions: `_tiled_split`)."""
    extent, row = conv.spatial_out[0], numel(conv.spatial_out[1:])
    rows = conv.out_per_group
    images = shape_of(op.result.type)[0] * op.geometry.groups

    def split(blocks: int, chunks: int) -> _GemmSplit:
        """At most `blocks` blocks and `chunks` chunks, as cut: 28 rows in 8 blocks are 7 of 4."""
        per_block = -(-extent // blocks)
        block_rows = -(-per_block // granule) * granule
        per_chunk = -(-rows // chunks)
        chunk = min(rows, -(-per_chunk // CHUNK_ROWS_MIN) * CHUNK_ROWS_MIN)
        return _GemmSplit(block_rows, -(-extent // block_rows), chunk, -(-rows // chunk))

    while images * split(blocks, chunks).parts < ctx.tuning.conv_min_units:
        columns, chunk_rows = -(-extent // blocks) * row, -(-rows // chunks)
        thinner = -(-extent // (2 * blocks)) < least_rows  # halved blocks would hold too few rows
        if chunk_rows >= 2 * CHUNK_ROWS_MIN and (chunk_rows >= columns or thinner):
            chunks *= 2
        elif blocks < extent:
            blocks = min(extent, 2 * blocks)
        else:
            break
    return _evened(split(blocks, chunks), images, extent, rows, ctx.tuning.cores, split, least_rows)


def _evened(
    cut: _GemmSplit,
    images: int,
    extent: int,
    rows: int,
    cores: int,
    split: Callable[[int, int], _GemmSplit],
    least_rows: int,
) -> _GemmSplit:
    """`cut`, or a cut into up to twice as many (thinner) blocks whose units the cores'
    equal shares of the pool's range split more evenly (`_busiest`), the fewest blocks
    of the best. ResNet's 56x56 plane at batch 1 ran 10 blocks of 6 rows for 2 threads:
    one share held 30 rows, the other 26 (its last block 2), 7% idle; 14 blocks of 4
    hold 28 each."""
    best, best_share = cut, _busiest(cut, images, extent, rows, cores)
    for blocks in range(cut.blocks + 1, min(extent, 2 * cut.blocks) + 1):
        other = split(blocks, cut.chunks)
        if other.block_rows < least_rows:
            break
        share = _busiest(other, images, extent, rows, cores)
        if share < best_share:
            best, best_share = other, share
    return best


def _busiest(cut: _GemmSplit, images: int, extent: int, rows: int, cores: int) -> int:
    """The output rows x channels of the busiest of `cores` equal shares of the units, as
    the pool cuts the range (share g: units [U·g/cores, U·(g+1)/cores)) and `_units`
    orders them (image, block, chunk)."""
    counts = [min(cut.block_rows, extent - b * cut.block_rows) for b in range(cut.blocks)]
    sizes = [min(cut.chunk, rows - c * cut.chunk) for c in range(cut.chunks)]
    work = [count * size for count in counts for size in sizes] * images
    units = len(work)
    shares = [sum(work[units * g // cores : units * (g + 1) // cores]) for g in range(cores)]
    return max(shares)


CHUNK_ROWS_MIN = 16
"""A channel chunk's rows are a multiple of this: whole register tiles of the BLAS's kernels."""


@dataclass(frozen=True)
class _Unit:
    """Where one unit of a `_GemmSplit` works: image n, group g, its first output row
    `first` (along the first spatial axis) and its first output channel `channel`
    (within the result's channels); `first_row` is (n, channel) as a row of planes and
    `x_base` where its group's input channels of image n begin."""

    n: SSAValue
    channel: SSAValue
    first: SSAValue
    first_row: SSAValue
    x_base: SSAValue


def _units(
    e: Emitter, region: Region, conv: _Conv, split: _GemmSplit, u: SSAValue, compute: Callable[[_Unit, int, int], None]
) -> None:
    """compute(unit, its channels, its output rows) for unit u, the sizes static: full ones,
    or the last chunk's and block's (`_choose`)."""
    groups, rows, extent = conv.op.geometry.groups, conv.out_per_group, conv.spatial_out[0]
    part = e.urem(u, e.i64(split.parts))
    image_group = e.udiv(u, e.i64(split.parts))
    block = e.udiv(part, e.i64(split.chunks))
    first = e.mul(block, e.i64(split.block_rows))
    first_channel = e.mul(e.sub(part, e.mul(block, e.i64(split.chunks))), e.i64(split.chunk))
    n = e.udiv(image_group, e.i64(groups))
    g = e.sub(image_group, e.mul(n, e.i64(groups)))
    channel = e.add(e.mul(g, e.i64(rows)), first_channel)
    first_row = e.add(e.mul(n, e.i64(conv.out_channels)), channel)
    x_base = e.mul(
        e.add(e.mul(n, e.i64(conv.channels)), e.mul(g, e.i64(conv.per_group))), e.i64(numel(conv.spatial_in))
    )
    unit = _Unit(n, channel, first, first_row, x_base)
    counts, chunk_rows = split.row_counts(extent), split.chunk_sizes(rows)

    def by_count(m: int) -> None:
        last = e.icmp("eq", first, e.i64((split.blocks - 1) * split.block_rows))
        _choose(e, region, last, counts, lambda count: compute(unit, m, count))

    last_chunk = e.icmp("eq", first_channel, e.i64((split.chunks - 1) * split.chunk))
    _choose(e, region, last_chunk, chunk_rows, by_count)


def _gemm_kernels(op: cv.ConvolutionOp, conv: _Conv, ctx: KernelContext) -> list[Kernel]:
    """Units (n, group, column block, channel chunk: `_gemm_split`), all split over the
    entry's threads after a kernel that sets BLAS to one thread (a BLAS-threaded GEMM
    per block was 6x slower on a loaded 2-vCPU host). A unit fills its part of the
    output with the bias (if any), builds its block's im2col matrix in a stack buffer
    (a pointwise conv reads the input planes in place, ldb = plane) and multiplies its
    rows of W by it with one GEMM (beta = 1 over the bias)."""
    blas.load()
    dtype = conv.item.dtype.name
    gemm = gemm_external(dtype)
    groups, has_bias, pointwise = op.geometry.groups, conv.bias is not None, op.pointwise
    rows, plane, depth = conv.out_per_group, numel(conv.spatial_out), conv.per_group * numel(conv.kernel)
    split = _gemm_split(op, conv, ctx, op.im2col_row_bytes())
    row, extent = numel(conv.spatial_out[1:]), conv.spatial_out[0]
    units = shape_of(op.result.type)[0] * groups * split.parts
    nbytes = conv.item.dtype.nbytes
    beta = 1.0 if has_bias else 0.0
    counts, chunk_rows = split.row_counts(extent), split.chunk_sizes(rows)  # the GEMMs' static sizes

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        walk = _Walk(e, region, conv.window)
        x, w = pointers[0], pointers[1]
        bias = pointers[2] if has_bias else None
        out = pointers[-1]
        col_elements = depth * split.block_rows * row
        col = None if pointwise else e.op(llvm.AllocaOp(e.i64(col_elements), conv.item.storage, alignment=64))
        calls = {
            (m, n): gemm_call(
                e,
                dtype,
                (m, n * row, depth),
                (False, False),
                (depth, plane if pointwise else n * row, plane),
                beta=beta,
            )
            for m in chunk_rows
            for n in counts
        }

        def compute(at: _Unit, m: int, count: int) -> None:
            out_at = e.add(e.mul(at.first_row, e.i64(plane)), e.mul(at.first, e.i64(row)))
            if bias is not None:

                def fill_bias(r: SSAValue) -> None:
                    value = real(conv.item.load(e, bias, e.add(at.channel, r)))
                    start = e.add(out_at, e.mul(r, e.i64(plane)))
                    walk.loop(0, count * row, lambda q: conv.item.store(e, value, out, e.add(start, q)))

                walk.loop(0, m, fill_bias)
            if col is None:
                rhs = byte_pointer(e, x, e.add(at.x_base, e.mul(at.first, e.i64(row))), nbytes)
            else:
                _im2col(walk, conv, x, col, at.x_base, (at.first, e.add(at.first, e.i64(count))))
                rhs = col
            lhs = byte_pointer(e, w, e.mul(at.channel, e.i64(depth)), nbytes)
            calls[m, count](lhs, rhs, byte_pointer(e, out, out_at, nbytes))
            if isinstance(op, rg.ConvRegionOp):
                _epilogue(walk, op, pointers, (at.n, at.channel, e.mul(at.first, e.i64(row))), (m, count * row))

        for_range(e, region, begin, end, lambda u: _units(e, region, conv, split, u, compute))

    buffers = _operands(op)
    work = shape_of(op.result.type)[0] * conv.out_channels * plane * depth // MACS_PER_ELEMENT
    main = Kernel(
        kernel_function(ctx.name, len(buffers), build), buffers, units, work, parallel=True, externals=(gemm,)
    )
    return [single_threaded_blas(f"{ctx.name}_blas"), main]


def _block_budget(ctx: KernelContext, tiled: bool = False) -> int:
    """The bytes a unit's stack blocks (im2col, or the tiled form's input and output:
    `Tuning.conv_tiled_block_bytes`) may take."""
    wanted = ctx.tuning.conv_tiled_block_bytes if tiled else ctx.tuning.conv_im2col_block_bytes
    return min(wanted, cv.IM2COL_STACK_MAX_BYTES)


@dataclass(frozen=True)
class _Tiled:
    """The tiled form's shapes. A unit's input block holds its channels' input rows,
    zero-padded on every axis and split by stride into phase planes (padded index
    j = e·s + phase along each axis goes to plane `phase`, place e), so that one tap
    (k·d = shift·s + phase per axis) reads, for consecutive outputs o, consecutive
    places o + shift of one plane. An output position q is a flat index into the
    places of a plane; each tap reads the run [q + offset(tap)) of the block, so a
    register tile of `tile_rows` output channels x `tile_vectors` vectors of positions
    is a GEMM micro-kernel over (channel, tap) whose lhs is the weight as stored and
    whose rhs is the block in place: no im2col, no packing. Positions past an output
    extent (a plane's extra places, the last vector's rest) are computed and dropped."""

    conv: _Conv
    lanes: int
    tile_rows: int
    tile_vectors: int

    @classmethod
    def of(cls, conv: _Conv, tuning: Tuning) -> _Tiled:
        """Tiles of `tuning.conv_tile_accumulators` vector accumulators, as square as they
        divide: V vectors of positions and R channels need V + R loads per R·V FMAs."""
        accumulators = tuning.conv_tile_accumulators
        vectors = max(1, math.isqrt(accumulators))
        return cls(conv, tuning.vector_bytes // conv.item.dtype.nbytes, accumulators // vectors, vectors)

    @property
    def geometry(self) -> cv.ConvGeometry:
        return self.conv.op.geometry

    @property
    def axis_phases(self) -> tuple[tuple[int, ...], ...]:
        """The phases some tap reads along each axis, ascending: (k·d) mod s over the taps k
        (a 1x1 / 2 downsampling conv reads one of the four phase planes of its input)."""
        g, kernel = self.geometry, self.conv.kernel
        return tuple(
            tuple(sorted({k * d % s for k in range(taps)})) for taps, d, s in zip(kernel, g.dilations, g.strides)
        )

    @property
    def phases(self) -> int:
        """The phase planes a block holds per channel: those some tap reads."""
        return numel(tuple(len(p) for p in self.axis_phases))

    def places(self, rows: int) -> tuple[int, ...]:
        """A phase plane's extents for a block of `rows` output rows: the padded extent
        over the stride along each axis (the block's input rows along the first)."""
        g, c = self.geometry, self.conv
        rows_in = (rows - 1) * g.strides[0] + g.dilations[0] * (c.kernel[0] - 1) + 1
        padded = (rows_in, *(i + b + a for i, b, a in zip(c.spatial_in[1:], g.pad_before[1:], g.pad_after[1:])))
        return tuple(-(-p // s) for p, s in zip(padded, g.strides))

    @property
    def row(self) -> int:
        """Positions per output row (along the first spatial axis)."""
        return numel(self.places(1)[1:])

    @property
    def tile(self) -> int:
        """Positions per register tile."""
        return self.lanes * self.tile_vectors

    def plane(self, rows: int) -> int:
        """One channel's elements in the block: its phase planes."""
        return self.phases * numel(self.places(rows))

    def tap_offset(self, axis: int, rows: int, k: int) -> int:
        """Where tap k along `axis` reads, from a position: its phase plane (in the row-major
        order of the phases read, `axis_phases`), then its shift."""
        g, used = self.geometry, self.axis_phases
        shift, phase = divmod(k * g.dilations[axis], g.strides[axis])
        planes = used[axis].index(phase) * row_major_strides(tuple(len(p) for p in used))[axis]
        return planes * numel(self.places(rows)) + shift * self.strides(rows)[axis]

    def strides(self, rows: int) -> tuple[int, ...]:
        """A phase plane's element strides per spatial axis (those of the positions)."""
        return row_major_strides(self.places(rows))

    def reach(self, rows: int) -> int:
        """How far past a position its farthest read lies (a later phase plane may lie
        beyond a later tap's shift: the farthest tap along an axis need not be its last)."""
        kernel = self.conv.kernel
        return sum(max(self.tap_offset(a, rows, k) for k in range(kernel[a])) for a in range(len(kernel)))

    def positions(self, rows: int) -> int:
        """The positions a block of `rows` output rows computes: whole vectors (whole tiles,
        then one of fewer vectors)."""
        return -(-rows * self.row // self.lanes) * self.lanes

    def input_elements(self, rows: int) -> int:
        """The input block: every channel's phase planes, then a tile's and a reach's
        slack for the dropped positions' reads (zeros)."""
        return self.conv.per_group * self.plane(rows) + self.tile + self.reach(rows)

    def padded_percent(self) -> int:
        """Positions computed per 100 outputs (a whole plane as one block)."""
        c = self.conv
        return -(-100 * self.positions(c.spatial_out[0]) // numel(c.spatial_out))


TILED_MAX_TAPS = 64
"""The tiled form unrolls its taps: kernels with more (rare) run im2col and GEMMs."""


def _tiled_form(op: cv.ConvolutionOp, conv: _Conv, ctx: KernelContext) -> _Tiled | None:
    """The tiled form where it applies (a GEMM-form conv that is not pointwise, whose
    blocks fit the stack, computing few dropped positions:
    `Tuning.conv_tiled_max_padded_percent`), else None."""
    if op.pointwise or not op.gemm_form() or numel(conv.kernel) > TILED_MAX_TAPS:
        return None
    tiled = _Tiled.of(conv, ctx.tuning)
    if tiled.padded_percent() >= ctx.tuning.conv_tiled_max_padded_percent:
        return None
    one_row = tiled.input_elements(1) + conv.out_per_group * tiled.positions(1)
    return tiled if one_row * conv.item.dtype.nbytes <= _block_budget(ctx) else None


def _tiled_kernels(op: cv.ConvolutionOp, conv: _Conv, tiled: _Tiled, ctx: KernelContext) -> list[Kernel]:
    """Units (n, group, block of output rows, chunk of output channels: `_gemm_split`), split
    over threads. A unit copies its input block, zero-padded, onto its stack, runs the
    register tiles of `_tile` over it (tiles of positions outside, of channels inside, so a
    tile's inputs stay in L1 across the channels), each tile storing its sums (from the
    bias, if any) into an output block in the input block's coordinates; then copies the
    real positions into the result, applying a conv region's epilogue on the way."""
    t, item, groups = tiled, conv.item, op.geometry.groups
    split = _tiled_split(op, conv, t, ctx)
    depth = conv.per_group * numel(conv.kernel)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        walk = _Walk(e, region, conv.window)
        x, w = pointers[0], pointers[1]
        bias = pointers[2] if conv.bias is not None else None
        block = e.op(llvm.AllocaOp(e.i64(t.input_elements(split.block_rows)), item.storage, alignment=64))
        sums_size = split.chunk * t.positions(split.block_rows)
        sums = e.op(llvm.AllocaOp(e.i64(sums_size), item.storage, alignment=64))
        rows_size = t.lanes * _rows_pitch(t, split.block_rows)
        channel_rows = e.op(llvm.AllocaOp(e.i64(rows_size), item.storage, alignment=64)) if op.lanes else sums

        def compute(at: _Unit, m: int, count: int) -> None:
            _pad_block(walk, t, x, block, at.x_base, at.first, count)
            tiles = (block, w, sums, bias)
            if op.lanes:
                _lane_tiles(walk, t, tiles, at, (m, count, depth))
                _unpad_lanes(walk, t, pointers, (sums, channel_rows), (at, (m, count)))
                return

            def tile_column(q0: SSAValue, vectors: int) -> None:
                def full(m0: SSAValue) -> None:
                    _tile(walk, t, tiles, (at.channel, m0, q0), (t.tile_rows, vectors, depth, count))

                whole = m // t.tile_rows * t.tile_rows
                for_range(e, region, e.i64(0), e.i64(whole), full, t.tile_rows)
                if m % t.tile_rows:
                    _tile(walk, t, tiles, (at.channel, e.i64(whole), q0), (m % t.tile_rows, vectors, depth, count))

            positions = t.positions(count)
            whole = positions // t.tile * t.tile
            for_range(e, region, e.i64(0), e.i64(whole), lambda q0: tile_column(q0, t.tile_vectors), t.tile)
            if positions > whole:  # the last positions: a tile of fewer vectors
                tile_column(e.i64(whole), (positions - whole) // t.lanes)
            _unpad_block(walk, t, pointers, sums, (at, (m, count)))

        for_range(e, region, begin, end, lambda u: _units(e, region, conv, split, u, compute))

    buffers = _operands(op)
    units = shape_of(op.result.type)[0] * groups * split.parts
    work = shape_of(op.result.type)[0] * conv.out_channels * numel(conv.spatial_out) * depth // MACS_PER_ELEMENT
    return [Kernel(kernel_function(ctx.name, len(buffers), build), buffers, units, work, parallel=True)]


def _pad_block(
    walk: _Walk, t: _Tiled, x: SSAValue, block: SSAValue, x_base: SSAValue, first: SSAValue, rows: int
) -> None:
    """The block of output rows [first, first + rows): for each channel and phase read
    (p...), place (e...) = x[c, e·s + p − p_before] along each axis (zero outside the
    input; along the first axis, from input row first·s), then the zero slack."""
    e, c, g = walk.e, t.conv, t.geometry
    places, strides = t.places(rows), t.strides(rows)
    zero = real(c.item.constant(e, 0.0))

    def zeros(at: SSAValue, count: SSAValue) -> None:
        walk.loop(0, count, lambda q: c.item.store(e, zero, block, e.add(at, q)))

    def fill(axis: int, starts: list[SSAValue], x_at: SSAValue, b_at: SSAValue) -> None:
        """Places along `axis` (and the axes after it): zeros, the input's elements, zeros."""
        if axis == c.rank:
            c.item.copy(e, x, x_at, block, b_at)
            return
        in_stride = numel(c.spatial_in[axis + 1 :])
        lo, hi = _valid_range(e, starts[axis], c.spatial_in[axis], places[axis], g.strides[axis])
        size = e.i64(strides[axis])
        zeros(b_at, e.mul(lo, size))
        zeros(e.add(b_at, e.mul(hi, size)), e.mul(e.sub(e.i64(places[axis]), hi), size))
        x_at = e.add(x_at, e.mul(starts[axis], e.i64(in_stride)))

        def place(o: SSAValue) -> None:
            here_x = e.add(x_at, e.mul(o, e.i64(g.strides[axis] * in_stride)))
            fill(axis + 1, starts, here_x, e.add(b_at, e.mul(o, size)))

        walk.loop(lo, hi, place)

    def channel(k: SSAValue) -> None:
        x_at = e.add(x_base, e.mul(k, e.i64(numel(c.spatial_in))))
        for p, phase in enumerate(itertools.product(*t.axis_phases)):
            first_in = e.mul(first, e.i64(g.strides[0]))
            starts = [e.add(first_in, e.i64(phase[0] - g.pad_before[0]))]
            starts += [e.i64(ph - pb) for ph, pb in zip(phase[1:], g.pad_before[1:])]
            b_at = e.add(e.mul(k, e.i64(t.plane(rows))), e.i64(p * numel(places)))
            fill(0, starts, x_at, b_at)

    walk.loop(0, c.per_group, channel)
    zeros(e.i64(c.per_group * t.plane(rows)), e.i64(t.tile + t.reach(rows)))


def _tile(
    walk: _Walk,
    t: _Tiled,
    pointers: tuple[SSAValue, SSAValue, SSAValue, SSAValue | None],
    at: tuple[SSAValue, SSAValue, SSAValue],
    shape: tuple[int, int, int, int],
) -> None:
    """sums[m0 + r, q0 + j] = bias + Σ_(c, tap) w[channel + m0 + r, c, tap] · block[c, q0 + j + tap]
    for r < rows, j < vectors · lanes: rows x vectors accumulators in registers across the
    channels and taps, the weight splat from where it is stored, the block read in vectors;
    (channel, m0, q0) = `at`, (rows, vectors, depth, output rows of the block) = `shape`."""
    e, c = walk.e, t.conv
    block, w, sums, bias = pointers
    channel, m0, q0 = at
    rows, width, depth, count = shape
    lanes, storage = t.lanes, c.item.storage
    plane, stride = t.plane(count), t.positions(count)
    w_rows = e.mul(e.add(channel, m0), e.i64(depth))
    taps = numel(c.kernel)
    k_strides = row_major_strides(c.kernel)
    offsets = [[t.tap_offset(axis, count, k) for k in range(c.kernel[axis])] for axis in range(c.rank)]

    def start(r: int) -> SSAValue:
        if bias is None:
            return vectors.splat(e, e.const(c.item.compute, 0.0), lanes)
        return vectors.splat(e, real(c.item.load(e, bias, e.add(e.add(channel, m0), e.i64(r)))), lanes)

    def fmas(x_at: SSAValue, w_at: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        xs = [vectors.load(e, storage, block, e.add(x_at, e.i64(v * lanes)), lanes) for v in range(width)]
        new = []
        for r in range(rows):
            weight = vectors.splat(e, vectors.load(e, storage, w, e.add(w_at, e.i64(r * depth)), 1), lanes)
            new += [e.fma(weight, xv, accs[r * width + v]) for v, xv in enumerate(xs)]
        return new

    def tap_axis(axis: int, x_at: SSAValue, w_at: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        """The taps along `axis` (and the axes after it), unrolled: each tap's read is a constant offset."""
        if axis == c.rank:
            return fmas(x_at, w_at, accs)
        for k, offset in enumerate(offsets[axis]):
            accs = tap_axis(axis + 1, e.add(x_at, e.i64(offset)), e.add(w_at, e.i64(k * k_strides[axis])), accs)
        return accs

    def channel_step(k: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        x_at = e.add(e.mul(k, e.i64(plane)), q0)
        return tap_axis(0, x_at, e.add(w_rows, e.mul(k, e.i64(taps))), accs)

    init = [start(r) for r in range(rows) for _ in range(width)]
    accs = vectors.carry(e, walk.region, c.per_group, init, channel_step)
    for r in range(rows):
        row_at = e.add(e.mul(e.add(m0, e.i64(r)), e.i64(stride)), q0)
        for v in range(width):
            vectors.store(e, accs[r * width + v], sums, e.add(row_at, e.i64(v * lanes)))


def _lane_tile(
    walk: _Walk,
    t: _Tiled,
    pointers: tuple[SSAValue, SSAValue, SSAValue],
    at: tuple[tuple[SSAValue, SSAValue], SSAValue, list[SSAValue]],
    shape: tuple[int, int, int],
) -> None:
    """sums[b + v, f + p, l] += Σ_(c, tap) packed[B + v, c, tap, l] · block[c, q_p + tap] for
    v < vectors and positions p < len(bases): output channels in the lanes, one
    accumulator per (position, channel block), the weight read as vectors, the block's
    input splat; ((B, b): the first channel block in the weight and in the unit's sums,
    f, bases q_p) = `at`, (vectors, depth, output rows of the block) = `shape`."""
    e, c = walk.e, t.conv
    block, w, sums = pointers
    (first_block, local), f, bases = at
    width, depth, count = shape
    lanes, storage, taps = t.lanes, c.item.storage, numel(c.kernel)
    plane, stride = t.plane(count), _lane_stride(t, count)
    k_strides = row_major_strides(c.kernel)
    offsets = [[t.tap_offset(axis, count, k) for k in range(c.kernel[axis])] for axis in range(c.rank)]
    w_rows = e.mul(first_block, e.i64(depth * lanes))

    def sums_at(p: int, v: int) -> SSAValue:
        return e.mul(e.add(e.mul(e.add(local, e.i64(v)), e.i64(stride)), e.add(f, e.i64(p))), e.i64(lanes))

    def fmas(x_at: SSAValue, w_at: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        ws = [vectors.load(e, storage, w, e.add(w_at, e.i64(v * depth * lanes)), lanes) for v in range(width)]
        return _splat_fmas(
            e, ws, [vectors.load(e, storage, block, e.add(x_at, base), 1) for base in bases], accs, lanes
        )

    def tap_axis(axis: int, x_at: SSAValue, w_at: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        """The taps along `axis` (and the axes after it), unrolled, as `_tile` has them."""
        if axis == c.rank:
            return fmas(x_at, w_at, accs)
        for k, offset in enumerate(offsets[axis]):
            w_k = e.add(w_at, e.i64(k * k_strides[axis] * lanes))
            accs = tap_axis(axis + 1, e.add(x_at, e.i64(offset)), w_k, accs)
        return accs

    def channel_step(k: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
        return tap_axis(0, e.mul(k, e.i64(plane)), e.add(w_rows, e.mul(k, e.i64(taps * lanes))), accs)

    init = [vectors.load(e, storage, sums, sums_at(p, v), lanes) for p in range(len(bases)) for v in range(width)]
    accs = vectors.carry(e, walk.region, c.per_group, init, channel_step)
    for p in range(len(bases)):
        for v in range(width):
            vectors.store(e, accs[p * width + v], sums, sums_at(p, v))


def _lane_tiles(
    walk: _Walk,
    t: _Tiled,
    tiles: tuple[SSAValue, SSAValue, SSAValue, SSAValue | None],
    at: _Unit,
    shape: tuple[int, int, int],
) -> None:
    """The lane form of a unit's block: sums[b, f, l] (channel block b of its `channels`,
    flat real output position f of its `rows`) = the bias, then `_lane_tile`s of
    `tile_rows` positions x `tile_vectors` channel blocks over them. Only real outputs
    are computed: a tile's positions are consecutive outputs (across output rows), each
    reading the block at its own place (`_block_position`)."""
    e, c = walk.e, t.conv
    channels, rows, depth = shape
    block, w, sums, bias = tiles
    extents = (rows, *c.spatial_out[1:])
    strides, stride, lanes = t.strides(rows), _lane_stride(t, rows), t.lanes
    blocks, width = channels // lanes, t.tile_vectors
    first = e.udiv(at.channel, e.i64(lanes))

    def fill(b: SSAValue) -> None:
        if bias is None:
            value = vectors.splat(e, e.const(c.item.compute, 0.0), lanes)
        else:
            value = vectors.load(e, c.item.storage, bias, e.add(at.channel, e.mul(b, e.i64(lanes))), lanes)
        row_at = e.mul(b, e.i64(stride))
        walk.loop(0, stride, lambda f: vectors.store(e, value, sums, e.mul(e.add(row_at, f), e.i64(lanes))))

    walk.loop(0, blocks, fill)

    def channel_tiles(f: SSAValue, positions: int) -> None:
        bases = [_block_position(e, extents, strides, e.add(f, e.i64(p))) for p in range(positions)]

        def run(b: SSAValue, vectors: int) -> None:
            _lane_tile(walk, t, (block, w, sums), ((e.add(first, b), b), f, bases), (vectors, depth, rows))

        _in_steps(walk, blocks, width, run)

    _in_steps(walk, numel(extents), t.tile_rows, channel_tiles)


def _in_steps(walk: _Walk, count: int, step: int, body: Callable[[SSAValue, int], None]) -> None:
    """body(start, step) over the whole steps of [0, count), then body(start, the rest):
    a register tile's loop with its static tail (no loop where no whole step fits)."""
    e = walk.e
    whole = count // step * step
    if whole:
        for_range(e, walk.region, e.i64(0), e.i64(whole), lambda start: body(start, step), step)
    if count % step:
        body(e.i64(whole), count % step)


def _splat_fmas(
    e: Emitter, ws: list[SSAValue], scalars: list[SSAValue], accs: list[SSAValue], lanes: int
) -> list[SSAValue]:
    """One step of a register tile with vectors of output channels: accs[p·V + v] +=
    ws[v] · splat(scalars[p]) (the lane form's positions, the Winograd form's tiles)."""
    new = []
    for p, scalar in enumerate(scalars):
        xv = vectors.splat(e, scalar, lanes)
        new += [e.fma(wv, xv, accs[p * len(ws) + v]) for v, wv in enumerate(ws)]
    return new


def _lane_stride(t: _Tiled, rows: int) -> int:
    """Positions per channel block of the lane form's sums: a block's real outputs."""
    return rows * numel(t.conv.spatial_out[1:])


def _block_position(e: Emitter, extents: tuple[int, ...], strides: tuple[int, ...], f: SSAValue) -> SSAValue:
    """The place in the input block of flat output position f (row-major over `extents`)."""
    q, rest = e.i64(0), f
    for axis in range(len(extents) - 1, 0, -1):
        q = e.add(q, e.mul(e.urem(rest, e.i64(extents[axis])), e.i64(strides[axis])))
        rest = e.udiv(rest, e.i64(extents[axis]))
    return e.add(q, e.mul(rest, e.i64(strides[0])))


def _unpad_block(
    walk: _Walk,
    t: _Tiled,
    pointers: list[SSAValue],
    sums: SSAValue,
    at: tuple[_Unit, tuple[int, int]],
) -> None:
    """out[n, channel + r, first row + (o...)] = sums[r, (o...) in block coordinates] for
    the (channels, output rows) `extents` of a unit: its real positions, dropping the
    padding columns; a conv region applies its epilogue to each (`_EpilogueRow`) as it goes."""
    e, c, op = walk.e, t.conv, t.conv.op
    unit, (channels, rows) = at
    out = pointers[len(_operands(op)) - 1]
    extents_out = (rows, *c.spatial_out[1:])
    out_strides, block_strides = row_major_strides(extents_out), t.strides(rows)
    stride, q = t.positions(rows), e.mul(unit.first, e.i64(numel(c.spatial_out[1:])))

    def row(r: SSAValue) -> None:
        out_at = e.add(e.mul(e.add(unit.first_row, r), e.i64(numel(c.spatial_out))), q)
        epilogue = _EpilogueRow(walk, op, pointers, (unit.n, e.add(unit.channel, r), q)) if _is_region(op) else None

        def axis_copy(axis: int, j: SSAValue, b_at: SSAValue) -> None:
            if axis == c.rank:
                if epilogue is None:
                    c.item.copy(e, sums, b_at, out, e.add(out_at, j))
                else:
                    epilogue.apply(j, c.item.load(e, sums, b_at))
                return

            def position(o: SSAValue) -> None:
                axis_copy(axis + 1, advance(e, j, o, out_strides[axis]), advance(e, b_at, o, block_strides[axis]))

            walk.loop(0, extents_out[axis], position)

        axis_copy(0, e.i64(0), e.mul(r, e.i64(stride)))

    walk.loop(0, channels, row)


def _unpad_lanes(
    walk: _Walk,
    t: _Tiled,
    pointers: list[SSAValue],
    buffers: tuple[SSAValue, SSAValue],
    at: tuple[_Unit, tuple[int, int]],
) -> None:
    """The lane form's copy-out: out[n, channel + b·L + l, q + f] = sums[b, f, l] for the
    unit's channel blocks b and its flat real positions f (q: where its rows begin in
    the plane), applying a conv region's epilogue. Each L x L square of a block's sums
    (L positions) is transposed in registers (`vectors.transpose_square`) into `rows`, one row of
    `_rows_pitch` per channel; then each channel's row goes out whole. A strided read
    per output took 7-8% of ResNet's 3x3 layers at batch 8, and copying out square by
    square, 16 channels at a time, kept 16 output and residual streams open: the
    residual layers ran 10-25% slower than onnxruntime's (2-vCPU Zen 4)."""
    e, c, op = walk.e, t.conv, t.conv.op
    sums, rows_buffer = buffers
    unit, (channels, rows) = at
    lanes, stride, pitch = t.lanes, _lane_stride(t, rows), _rows_pitch(t, rows)
    out = pointers[len(_operands(op)) - 1]
    q = e.mul(unit.first, e.i64(numel(c.spatial_out[1:])))
    zero = vectors.splat(e, e.const(c.item.compute, 0.0), lanes)

    def square(b: SSAValue, f0: SSAValue, count: int) -> None:
        base = e.mul(e.add(e.mul(b, e.i64(stride)), f0), e.i64(lanes))
        loaded = [vectors.load(e, c.item.storage, sums, e.add(base, e.i64(i * lanes)), lanes) for i in range(count)]
        for lane, v in enumerate(vectors.transpose_square(e, loaded + [zero] * (lanes - count))):
            vectors.store(e, v, rows_buffer, e.add(e.i64(lane * pitch), f0))

    def channel(b: SSAValue, lane: SSAValue) -> None:
        r = e.add(e.mul(b, e.i64(lanes)), lane)
        from_rows = e.mul(lane, e.i64(pitch))
        if _is_region(op):
            epilogue = _EpilogueRow(walk, op, pointers, (unit.n, e.add(unit.channel, r), q))
            walk.loop(0, stride, lambda j: epilogue.apply(j, c.item.load(e, rows_buffer, e.add(from_rows, j))))
            return
        out_at = e.add(e.mul(e.add(unit.first_row, r), e.i64(numel(c.spatial_out))), q)
        walk.loop(0, stride, lambda j: c.item.copy(e, rows_buffer, e.add(from_rows, j), out, e.add(out_at, j)))

    def block(b: SSAValue) -> None:
        _in_steps(walk, stride, lanes, lambda f0, count: square(b, f0, count))
        walk.loop(0, lanes, lambda lane: channel(b, lane))

    walk.loop(0, channels // lanes, block)


def _rows_pitch(t: _Tiled, rows: int) -> int:
    """Elements per channel row of the lane form's transposed sums: its real positions,
    rounded up to whole vectors (the last square stores whole vectors)."""
    return -(-_lane_stride(t, rows) // t.lanes) * t.lanes


WINOGRAD_BT = ((1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1))
"""Bᵀ of F(2, 3): 4 inputs d as the 4 points Bᵀ·d (`cv.WINOGRAD_G` takes the kernel there)."""
WINOGRAD_AT = ((1, 1, 1, 0), (0, 1, -1, -1))
"""Aᵀ of F(2, 3): the 4 points' products m as the 2 outputs Aᵀ·m."""


def winograd_weight(weight: np.ndarray, lanes: int) -> np.ndarray:
    """[M, C, 3, 3] as the Winograd form reads it: [16, M/L, C, L] of G·w·Gᵀ, computed in f64."""
    g = np.array(cv.WINOGRAD_G)
    points = np.einsum("ai,mcij,bj->abmc", g, weight.astype(np.float64), g)
    m, c = weight.shape[:2]
    blocks = points.reshape(cv.WINOGRAD_POINTS, m // lanes, lanes, c)
    return np.ascontiguousarray(np.moveaxis(blocks, 2, -1)).astype(weight.dtype)


def _combined(e: Emitter, matrix: tuple[tuple[int, ...], ...], values: list[SSAValue]) -> list[SSAValue]:
    """matrix · values for a matrix of 0 and ±1: adds and subtracts, no multiply."""
    out = []
    for row in matrix:
        terms = sorted(((c, v) for c, v in zip(row, values) if c), key=lambda term: -term[0])  # a + first
        total = terms[0][1] if terms[0][0] == 1 else e.fneg(terms[0][1])
        for coefficient, v in terms[1:]:
            total = e.fadd(total, v) if coefficient == 1 else e.fsub(total, v)
        out.append(total)
    return out


@dataclass(frozen=True)
class _Winograd:
    """The Winograd form's shapes for a block of `rows` output rows: tiles of 2x2 outputs,
    `across` per row of tiles and `down` rows of them, in a block padded as the tiled
    form pads it (`_Tiled`, stride 1: output (r, o) reads place (r + ky, o + kx))."""

    t: _Tiled
    rows: int

    @property
    def across(self) -> int:
        return -(-self.t.conv.spatial_out[1] // 2)

    @property
    def down(self) -> int:
        return -(-self.rows // 2)

    @property
    def tiles(self) -> int:
        return self.across * self.down

    @property
    def pitch(self) -> int:
        """Elements per (point, channel) row of the transformed input: its tiles, and a
        vector's slack that the last vector of a row of tiles writes past them."""
        return self.tiles + self.t.lanes

    def stack_elements(self, channels: int) -> int:
        """A unit's stack: its input block, transformed input, products, outputs and transposed rows."""
        t, c, points = self.t, self.t.conv, cv.WINOGRAD_POINTS
        outputs = channels * _lane_stride(t, self.rows)
        rows = t.lanes * _rows_pitch(t, self.rows)
        return (
            t.input_elements(self.rows) + points * (c.per_group * self.pitch + channels * self.tiles) + outputs + rows
        )


def _winograd_input(walk: _Walk, w: _Winograd, block: SSAValue, points: SSAValue) -> None:
    """points[ξ, c, t] = (Bᵀ·d·B)[ξ] for tile t's 4x4 inputs d of channel c, vectorized over
    L tiles of a row: its inputs' columns 2j..2j+3 are the even and odd lanes of two pairs
    of vector loads, two places apart. The last vector of a row computes tiles past it
    (from the next row's places, or the block's zero slack) into the next row's slots,
    which that row then overwrites, or into the pitch's slack."""
    e, t = walk.e, w.t
    lanes, storage, places = t.lanes, t.conv.item.storage, t.places(w.rows)[1]
    even, odd = list(range(0, 2 * lanes, 2)), list(range(1, 2 * lanes, 2))
    channels = t.conv.per_group

    def vectors_of_tiles(c: SSAValue, i: SSAValue, j0: SSAValue) -> None:
        row0 = e.add(e.mul(c, e.i64(t.plane(w.rows))), e.add(e.mul(i, e.i64(2 * places)), e.mul(j0, e.i64(2))))
        columns = []
        for k in range(4):
            at = e.add(row0, e.i64(k * places))
            halves = [vectors.load(e, storage, block, e.add(at, e.i64(s)), lanes) for s in (0, lanes, 2, lanes + 2)]
            d = [vectors.shuffle(e, halves[p], halves[p + 1], mask) for p in (0, 2) for mask in (even, odd)]
            columns.append(_combined(e, WINOGRAD_BT, d))
        slot = e.add(e.mul(i, e.i64(w.across)), j0)
        for b in range(4):
            for a, value in enumerate(_combined(e, WINOGRAD_BT, [columns[k][b] for k in range(4)])):
                point = e.add(e.mul(e.i64(4 * a + b), e.i64(channels)), c)
                vectors.store(e, value, points, e.add(e.mul(point, e.i64(w.pitch)), slot))

    def channel(c: SSAValue) -> None:
        def tile_row(i: SSAValue) -> None:
            for_range(e, walk.region, e.i64(0), e.i64(w.across), lambda j0: vectors_of_tiles(c, i, j0), lanes)

        walk.loop(0, w.down, tile_row)

    walk.loop(0, channels, channel)


def _winograd_products(
    walk: _Walk, w: _Winograd, pointers: tuple[SSAValue, SSAValue, SSAValue], first_block: SSAValue, channels: int
) -> None:
    """products[ξ, b, t, l] = Σ_c weight[ξ, B + b, c, l] · points[ξ, c, t]: per point, a GEMM
    of register tiles as `_lane_tile`'s, `tile_rows` tiles x `tile_vectors` channel blocks,
    the weight read as vectors, the points splat."""
    e, t = walk.e, w.t
    weight, points, products = pointers
    lanes, storage, depth = t.lanes, t.conv.item.storage, t.conv.per_group
    blocks, all_blocks = channels // lanes, t.conv.out_per_group // lanes

    def run(xi: SSAValue, t0: SSAValue, b0: SSAValue, tiles: int, width: int) -> None:
        w_at = e.mul(e.add(e.mul(xi, e.i64(all_blocks)), e.add(first_block, b0)), e.i64(depth * lanes))
        x_at = e.add(e.mul(e.mul(xi, e.i64(depth)), e.i64(w.pitch)), t0)

        def step(c: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            w_c = e.add(w_at, e.mul(c, e.i64(lanes)))
            ws = [vectors.load(e, storage, weight, e.add(w_c, e.i64(v * depth * lanes)), lanes) for v in range(width)]
            x_c = e.add(x_at, e.mul(c, e.i64(w.pitch)))
            return _splat_fmas(
                e, ws, [vectors.load(e, storage, points, e.add(x_c, e.i64(p)), 1) for p in range(tiles)], accs, lanes
            )

        zero = vectors.splat(e, e.const(t.conv.item.compute, 0.0), lanes)
        accs = vectors.carry(e, walk.region, depth, [zero] * (tiles * width), step)
        row = e.mul(e.add(e.mul(xi, e.i64(blocks)), b0), e.i64(w.tiles))
        for p in range(tiles):
            for v in range(width):
                at = e.mul(e.add(e.add(row, e.i64(v * w.tiles)), e.add(t0, e.i64(p))), e.i64(lanes))
                vectors.store(e, accs[p * width + v], products, at)

    def block_group(xi: SSAValue, b0: SSAValue, width: int) -> None:
        _in_steps(walk, w.tiles, t.tile_rows, lambda t0, tiles: run(xi, t0, b0, tiles, width))

    def point(xi: SSAValue) -> None:
        _in_steps(walk, blocks, t.tile_vectors, lambda b0, width: block_group(xi, b0, width))

    walk.loop(0, cv.WINOGRAD_POINTS, point)


def _winograd_output(
    walk: _Walk, w: _Winograd, pointers: tuple[SSAValue, SSAValue, SSAValue | None], at: tuple[SSAValue, int]
) -> None:
    """sums[b, f, l] = bias + (Aᵀ·m·A)[a, o] for each tile's products m, at the flat real
    output f of its row 2i + a and column 2j + o (the lane form's sums: `_unpad_lanes`
    copies them out); a tile past the last row or column keeps only its real outputs."""
    e, t = walk.e, w.t
    products, sums, bias = pointers
    channel, channels = at
    lanes, storage, width = t.lanes, t.conv.item.storage, t.conv.spatial_out[1]
    blocks, stride = channels // lanes, _lane_stride(t, w.rows)

    def tile(b: SSAValue, start: SSAValue, i: SSAValue, j: SSAValue, extent: tuple[int, int]) -> None:
        slot = e.add(e.mul(i, e.i64(w.across)), j)
        m = [
            vectors.load(
                e,
                storage,
                products,
                e.mul(e.add(e.mul(e.add(e.mul(e.i64(xi), e.i64(blocks)), b), e.i64(w.tiles)), slot), e.i64(lanes)),
                lanes,
            )
            for xi in range(cv.WINOGRAD_POINTS)
        ]
        rows = [_combined(e, WINOGRAD_AT, [m[4 * a + o] for a in range(4)]) for o in range(4)]
        for a in range(extent[0]):
            for o, value in enumerate(_combined(e, WINOGRAD_AT, [rows[k][a] for k in range(4)])[: extent[1]]):
                f = e.add(e.mul(e.add(e.mul(i, e.i64(2)), e.i64(a)), e.i64(width)), e.add(e.mul(j, e.i64(2)), e.i64(o)))
                vectors.store(e, e.fadd(value, start), sums, e.mul(e.add(e.mul(b, e.i64(stride)), f), e.i64(lanes)))

    def tile_row(b: SSAValue, start: SSAValue, i: SSAValue, down: int) -> None:
        for_range(e, walk.region, e.i64(0), e.i64(width // 2), lambda j: tile(b, start, i, j, (down, 2)))
        if width % 2:
            tile(b, start, i, e.i64(width // 2), (down, 1))

    def channel_block(b: SSAValue) -> None:
        if bias is None:
            start = vectors.splat(e, e.const(t.conv.item.compute, 0.0), lanes)
        else:
            start = vectors.load(e, storage, bias, e.add(channel, e.mul(b, e.i64(lanes))), lanes)
        walk.loop(0, w.rows // 2, lambda i: tile_row(b, start, i, 2))
        if w.rows % 2:
            tile_row(b, start, e.i64(w.rows // 2), 1)

    walk.loop(0, blocks, channel_block)


def _winograd_split(op: cv.ConvolutionOp, conv: _Conv, t: _Tiled, ctx: KernelContext) -> _GemmSplit:
    """Blocks of an even number of output rows whose stack (`_Winograd.stack_elements`,
    with all the group's channels) fits `_block_budget`, then `_balance`."""
    extent, nbytes = conv.spatial_out[0], conv.item.dtype.nbytes
    rows = next(
        (
            r
            for r in range(extent + extent % 2, 2, -2)
            if _Winograd(t, r).stack_elements(conv.out_per_group) * nbytes <= _block_budget(ctx)
        ),
        2,
    )
    return _balance(op, conv, ctx, -(-extent // rows), 1, least_rows=min(2, extent), granule=2)


def _winograd_kernels(op: cv.ConvolutionOp, conv: _Conv, t: _Tiled, ctx: KernelContext) -> list[Kernel]:
    """Units as the tiled form's (`_winograd_split`). A unit copies its input block onto its
    stack as the tiled form does (`_pad_block`), transforms it into the 16 points of each
    of its tiles (`_winograd_input`), multiplies them by the transformed weight point by
    point (`_winograd_products`), transforms the products into outputs
    (`_winograd_output`) and copies those out as the lane form does (`_unpad_lanes`)."""
    split = _winograd_split(op, conv, t, ctx)
    item = conv.item

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        walk = _Walk(e, region, conv.window)
        x, weight = pointers[0], pointers[1]
        bias = pointers[2] if conv.bias is not None else None
        full = _Winograd(t, split.block_rows)

        def alloca(elements: int) -> SSAValue:
            return e.op(llvm.AllocaOp(e.i64(elements), item.storage, alignment=64))

        block = alloca(t.input_elements(split.block_rows))
        points = alloca(cv.WINOGRAD_POINTS * conv.per_group * full.pitch)
        products = alloca(cv.WINOGRAD_POINTS * split.chunk * full.tiles)
        sums = alloca(split.chunk * _lane_stride(t, split.block_rows))
        channel_rows = alloca(t.lanes * _rows_pitch(t, split.block_rows))

        def compute(at: _Unit, m: int, count: int) -> None:
            w = _Winograd(t, count)
            _pad_block(walk, t, x, block, at.x_base, at.first, count)
            _winograd_input(walk, w, block, points)
            first_block = e.udiv(at.channel, e.i64(t.lanes))
            _winograd_products(walk, w, (weight, points, products), first_block, m)
            _winograd_output(walk, w, (products, sums, bias), (at.channel, m))
            _unpad_lanes(walk, t, pointers, (sums, channel_rows), (at, (m, count)))

        for_range(e, region, begin, end, lambda u: _units(e, region, conv, split, u, compute))

    buffers = _operands(op)
    images = shape_of(op.result.type)[0]
    units = images * split.parts
    tiles = _Winograd(t, conv.spatial_out[0]).tiles
    work = images * conv.out_channels * tiles * cv.WINOGRAD_POINTS * conv.per_group // MACS_PER_ELEMENT
    return [Kernel(kernel_function(ctx.name, len(buffers), build), buffers, units, work, parallel=True)]


def winograd_form(op: cv.ConvolutionOp, tuning: Tuning) -> int:
    """The lanes L to store the weight of `op` in the Winograd domain with (`pack-conv-weights`),
    or 0: a 2-d 3x3 conv with unit strides and dilations, one group, the tiled form's
    lanes dividing its output channels, at least `Tuning.conv_winograd_min_channels`
    channels in and out, a stack of two output rows that fits, and planes of at least
    `Tuning.conv_winograd_min_tiles` tiles."""
    conv = _Conv.of(op)
    g = op.geometry
    plain = conv.kernel == (3, 3) and g.groups == 1 and all(s == 1 for s in g.strides + g.dilations)
    if not plain or not op.gemm_form() or min(conv.channels, conv.out_channels) < tuning.conv_winograd_min_channels:
        return 0
    t = _Tiled.of(conv, tuning)
    if conv.out_channels % t.lanes or CHUNK_ROWS_MIN % t.lanes:
        return 0
    if _Winograd(t, 2).stack_elements(conv.out_channels) * conv.item.dtype.nbytes > cv.IM2COL_STACK_MAX_BYTES:
        return 0
    return t.lanes if _Winograd(t, conv.spatial_out[0]).tiles >= tuning.conv_winograd_min_tiles else 0


def _is_region(op: cv.ConvolutionOp) -> TypeGuard[rg.ConvRegionOp]:
    return isinstance(op, rg.ConvRegionOp)


def _choose(e: Emitter, region: Region, is_last: SSAValue, sizes: list[int], body: Callable[[int], None]) -> None:
    """body(the last part's size) if `is_last`, else body(the full size); one call when they agree.
    `sizes` is sorted: [last, full] or [full]."""
    if len(sizes) > 1:
        if_else(e, region, is_last, lambda: body(sizes[0]), lambda: body(sizes[1]))
    else:
        body(sizes[0])


def conv_kernels(op: cv.ConvolutionOp, ctx: KernelContext) -> list[Kernel]:
    """The GEMM form where the op chooses it (`ConvOp.gemm_form`), else the direct kernel;
    a packed weight (`weight_lanes`) runs the tiled form's lanes, a Winograd one (`winograd`)
    the Winograd form."""
    conv = _Conv.of(op)
    winograd = op.winograd is not None
    tiled = _Tiled.of(conv, ctx.tuning) if winograd else _tiled_form(op, conv, ctx)
    if op.lanes and (tiled is None or op.lanes != tiled.lanes):
        vector = "no tiled form" if tiled is None else f"vectors of {tiled.lanes}"
        raise ValueError(f"'{op.name}' has a weight packed in lanes of {op.lanes}; this target's conv has {vector}")
    if tiled is not None and winograd:
        return _winograd_kernels(op, conv, tiled, ctx)
    if tiled is not None:
        return _tiled_kernels(op, conv, tiled, ctx)
    return _gemm_kernels(op, conv, ctx) if op.gemm_form() else _direct_kernels(op, conv, ctx)


def packed_lanes(op: cv.ConvolutionOp, tuning: Tuning) -> int:
    """The lanes L to pack the weight of `op` in for the lane form (`pack-conv-weights`), or
    0 where the tiled form's positions run as fast. The lane form computes only real
    outputs where the tiled form also computes its block's padding columns and the rest
    of its last vector (ResNet's 14x14 planes: 16 places a row for 14 outputs), but
    transposes its sums on the way out, modelled as `Tuning.conv_lane_readback_steps`
    vector steps per output (0: that transpose, a few shuffles per L outputs, did not
    show: the lane form was faster on every ResNet layer, its stem included, once it
    computed fewer positions; 2-vCPU Zen 4)."""
    conv = _Conv.of(op)
    ctx = KernelContext(op.name, tuning)
    tiled = _tiled_form(op, conv, ctx)
    if tiled is None or conv.out_per_group % tiled.lanes or CHUNK_ROWS_MIN % tiled.lanes:
        return 0
    rows = _tiled_split(op, conv, tiled, ctx).block_rows
    real, computed = rows * numel(conv.spatial_out[1:]), tiled.positions(rows)
    depth = conv.per_group * numel(conv.kernel)
    readback = tiled.lanes * tuning.conv_lane_readback_steps
    return tiled.lanes if real * (depth + readback) < computed * depth else 0


def _lowest(item: Codec) -> float | int:
    """What no input loses to: -inf, or the integer type's minimum."""
    if item.dtype.kind is Kind.FLOAT:
        return float("-inf")
    return -(1 << (item.dtype.bits - 1)) if item.signed else 0


def _largest(e: Emitter, item: Codec, values: list[SSAValue]) -> SSAValue:
    """The maximum of `values`, signed or unsigned for integers. For floats a NaN
    propagates (as np.maximum and torch's pools) and of equal values the first stays
    (±0, as torch's `val > max`): one compare-select per value (a vmaxps) and one
    unordered compare per pair, where llvm.maximum's ordering of signed zeros took
    six instructions per value on AVX-512."""
    if item.dtype.kind is not Kind.FLOAT:
        predicate = "sgt" if item.signed else "ugt"
        return functools.reduce(lambda a, b: e.select(e.icmp(predicate, b, a), b, a), values)
    largest = functools.reduce(lambda a, b: e.select(e.fcmp("ogt", b, a), b, a), values)
    pairs = [values[k : k + 2] for k in range(0, len(values), 2)]
    unordered = [e.fcmp("uno", pair[0], pair[-1]) for pair in pairs]
    if not unordered:
        return largest
    return e.select(functools.reduce(e.or_, unordered), e.const_like(largest, math.nan), largest)


def _static_range(tap_start: int, size_in: int, size_out: int, stride: int) -> tuple[int, int]:
    """[lo, hi) of a tap whose start k·d − p_before is known: `_valid_range`'s outputs
    enumerated from their definition (empty as lo = hi), not its formula restated."""
    valid = [o for o in range(size_out) if 0 <= o * stride + tap_start < size_in]
    return (valid[0], valid[-1] + 1) if valid else (0, 0)


@dataclass(frozen=True)
class _PoolRow:
    """The last axis of a pooling window, static: each tap's start k·d − p_before and
    valid outputs, and the interior [lo, hi) where every tap's read is valid."""

    starts: tuple[int, ...]
    ranges: tuple[tuple[int, int], ...]
    stride: int

    @classmethod
    def of(cls, window: _Window) -> _PoolRow:
        g, axis = window.geometry, window.rank - 1
        starts = tuple(k * g.dilations[axis] - g.pad_before[axis] for k in range(window.kernel[axis]))
        size_in, size_out, stride = window.spatial_in[axis], window.spatial_out[axis], g.strides[axis]
        return cls(starts, tuple(_static_range(t, size_in, size_out, stride) for t in starts), stride)

    @property
    def interior(self) -> tuple[int, int]:
        return max(lo for lo, _ in self.ranges), min(hi for _, hi in self.ranges)

    def edges(self, k: int) -> list[tuple[int, int]]:
        """Tap k's valid outputs outside the interior (all of them if it is empty)."""
        (lo, hi), (inner_lo, inner_hi) = self.ranges[k], self.interior
        if inner_lo >= inner_hi:
            return [(lo, hi)] if lo < hi else []
        return [(a, b) for a, b in ((lo, min(hi, inner_lo)), (max(lo, inner_hi), hi)) if a < b]


def _windows_nonempty(window: _Window) -> bool:
    """Whether every output reads some input along every axis (pads narrower than the
    dilated kernel, as ONNX and torch require) and some output along the last axis
    reads all its taps: then one pass over the outputs suffices (`_one_pass_pool`)."""
    g = window.geometry
    for axis in range(window.rank):
        d, p, size_in = g.dilations[axis], g.pad_before[axis], window.spatial_in[axis]
        if size_in < d:
            return False  # the taps of a window may straddle the whole input
        # the windows move right with o, and no window can jump over an input as long as d:
        # the first window's last tap and the last window's first tap decide
        last_window = (window.spatial_out[axis] - 1) * g.strides[axis] - p
        if (window.kernel[axis] - 1) * d - p < 0 or last_window > size_in - 1:
            return False
    lo, hi = _PoolRow.of(window).interior
    return lo < hi


def _one_pass_pool(
    walk: _Walk, item: Codec, pointers: list[SSAValue], bases: tuple[SSAValue, SSAValue], last: _PoolRow
) -> None:
    """y[o] = max over the window of x, each output once: along each leading axis the
    taps that fall into the padding read the nearest valid tap's row instead (a maximum
    is idempotent); along the last axis the interior is one loop over all the taps and
    the few edge outputs are unrolled with their valid taps."""
    e, w, g = walk.e, walk.window, walk.geometry
    x, out = pointers
    base_in, base_out = bases
    in_strides, out_strides = row_major_strides(w.spatial_in), row_major_strides(w.spatial_out)

    def output(y_at: SSAValue, rows: list[SSAValue], taps: list[int], o: SSAValue) -> None:
        x_at = e.mul(o, e.i64(last.stride))
        reads = [real(item.load(e, x, e.add(e.add(r, x_at), e.i64(last.starts[k])))) for r in rows for k in taps]
        item.store(e, _largest(e, item, reads), out, e.add(y_at, o))

    def leading(axis: int, rows: list[SSAValue], y_at: SSAValue) -> None:
        if axis == w.rank - 1:
            lo, hi = last.interior
            walk.loop(lo, hi, lambda o: output(y_at, rows, list(range(len(last.starts))), o))
            for o in [*range(lo), *range(hi, w.spatial_out[-1])]:
                output(y_at, rows, [k for k, (a, b) in enumerate(last.ranges) if a <= o < b], e.i64(o))
            return
        d, kernel, size_in = g.dilations[axis], w.kernel[axis], w.spatial_in[axis]

        def position(o: SSAValue) -> None:
            base = e.sub(e.mul(o, e.i64(g.strides[axis])), e.i64(g.pad_before[axis]))  # tap 0's input index
            before = e.sub(e.i64(0), base)
            k_lo = e.select(e.icmp("sgt", before, e.i64(0)), e.sdiv(e.add(before, e.i64(d - 1)), e.i64(d)), e.i64(0))
            k_hi = e.smin(e.sdiv(e.sub(e.i64(size_in - 1), base), e.i64(d)), e.i64(kernel - 1))
            taps = [e.smax(e.smin(e.i64(k), k_hi), k_lo) for k in range(kernel)]
            at = [e.mul(e.add(base, e.mul(k, e.i64(d))), e.i64(in_strides[axis])) for k in taps]
            leading(axis + 1, [e.add(r, a) for r in rows for a in at], advance(e, y_at, o, out_strides[axis]))

        walk.loop(0, w.spatial_out[axis], position)

    leading(0, [base_in], base_out)


def max_pool_kernels(op: cv.MaxPoolOp, ctx: KernelContext) -> list[Kernel]:
    """Units (n, c), split over threads, in one pass where every window reads some input
    (`_one_pass_pool`: each output once, from all its taps). Otherwise the plane starts
    at -inf, then each tap of the leading axes takes, over each of its valid output rows,
    y[o] = maximum(y[o], max over the last axis's taps k of x[o·s + k·d − p]) in the
    result itself; along the last axis the taps are unrolled where all of them read
    inside the input (`_PoolRow.interior`: a loop of stride-s loads LLVM vectorizes),
    and taken one by one at the edges; a maximum is idempotent, so nothing needs to be
    taken exactly once. A maximum is exact in any type, f16/bf16 included. (ResNet's
    3x3/2 pool of [1, 64, 112, 112], one thread on a loaded 2-vCPU Xeon 6: 0.58 ms
    with every tap a pass over the plane, 0.23 ms with the last axis unrolled, 0.17 ms
    in one pass; onnxruntime's NCHWc pool in the model: 0.14 ms.)"""
    x_shape, y_shape = shape_of(op.input.type), shape_of(op.result.type)
    window = _Window(x_shape[2:], op.kernel, y_shape[2:], op.geometry)
    item = codec(element_type(op.result.type))
    plane_in, plane_out = numel(window.spatial_in), numel(window.spatial_out)
    last = _PoolRow.of(window)
    one_pass = _windows_nonempty(window)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        x, out = pointers
        walk = _Walk(e, region, window)
        lowest = real(item.constant(e, _lowest(item)))

        def unit(row: SSAValue) -> None:
            base_in, base_out = e.mul(row, e.i64(plane_in)), e.mul(row, e.i64(plane_out))
            if one_pass:
                _one_pass_pool(walk, item, pointers, (base_in, base_out), last)
                return
            walk.loop(0, plane_out, lambda q: item.store(e, lowest, out, e.add(base_out, q)))

            def pool_row(x_row: SSAValue, y_row: SSAValue) -> None:
                def larger(o: SSAValue, taps: range) -> None:
                    at = e.add(e.add(base_out, y_row), o)
                    x_at = e.add(x_row, e.mul(o, e.i64(last.stride)))
                    reads = [real(item.load(e, x, e.add(x_at, e.i64(last.starts[k])))) for k in taps]
                    item.store(e, _largest(e, item, [real(item.load(e, out, at)), *reads]), out, at)

                lo, hi = last.interior
                if lo < hi:
                    walk.loop(lo, hi, lambda o: larger(o, range(len(last.starts))))

                def one_tap(k: int) -> Callable[[SSAValue], None]:
                    return lambda o: larger(o, range(k, k + 1))

                for k in range(len(last.starts)):
                    for a, b in last.edges(k):
                        walk.loop(a, b, one_tap(k))

            walk.taps(
                lambda starts, _: walk.outputs(starts, base_in, pool_row, rows=True), e.i64(0), until=window.rank - 1
            )

        for_range(e, region, begin, end, unit)

    units = x_shape[0] * x_shape[1]
    function = kernel_function(ctx.name, 2, build)
    return [Kernel(function, [op.input, op.result], units, numel(y_shape) * numel(window.kernel))]


KERNELS: dict[type[Operation], EmitKernels] = {
    cv.ConvOp: conv_kernels,
    rg.ConvRegionOp: conv_kernels,
    cv.MaxPoolOp: max_pool_kernels,
}
