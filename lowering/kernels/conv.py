"""The direct kernel of `rlx.conv`.

Units are the rows (n, m) of the result, one output plane each, split over
threads by the entry (`Kernel.extent` = N·M). A unit sets its plane to the
bias (or zero), then for each input channel c of its group and each kernel
tap k adds w[m, c, k] · x[n, c', o·s + k·d − p_before] to every output o
whose read falls inside the input: the valid range of each output axis is
computed per tap (`_valid_range`), so padding costs no branch and no copy.
The innermost loop is an axpy along the innermost output axis (one FMA per
element, contiguous for stride 1), which LLVM vectorizes; the plane is
small enough to stay in L1/L2 while the taps sweep it (56·56 f32 = 12 KiB).

Accumulation is in the result itself for f32/f64; f16/bf16 accumulate in
an f32 scratch of the result's size (`ConvOp.scratch_bytes`) and each unit
rounds its plane once into the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.core.loops import for_range
from rlx_mlir.memory_plan import Scratch


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
class _Conv:
    """The static shape of one convolution, as the kernel walks it."""

    op: cv.ConvOp
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
    def of(cls, op: cv.ConvOp) -> _Conv:
        x, w, y = (shape_of(v.type) for v in (op.input, op.weight, op.result))
        groups = op.geometry.groups
        item = codec(element_type(op.result.type))
        widened = dtypes.from_ir(element_type(op.result.type)).name in cv.WIDENED_TYPES
        acc = codec(f32) if widened else item
        return cls(op, x[1], y[1], x[1] // groups, y[1] // groups, x[2:], w[2:], y[2:], item, acc)

    @property
    def widened(self) -> bool:
        return self.acc is not self.item

    @property
    def rank(self) -> int:
        return len(self.kernel)


class _Unit:
    """The emitted body of one unit (n, m): bias, channel and tap loops, the axpys."""

    def __init__(self, e: Emitter, region: Region, conv: _Conv, pointers: list[SSAValue]) -> None:
        self.e, self.region, self.conv = e, region, conv
        has_bias = conv.op.bias is not None
        self.x, self.w = pointers[0], pointers[1]
        self.bias = pointers[2] if has_bias else None
        self.out = pointers[3 if has_bias else 2]
        self.plane = pointers[-1]  # the result, or its f32 scratch
        self.geometry = conv.op.geometry

    def loop(self, lo: SSAValue | int, hi: SSAValue | int, body: Callable[[SSAValue], None]) -> None:
        e = self.e
        bounds = [e.i64(v) if isinstance(v, int) else v for v in (lo, hi)]
        for_range(e, self.region, bounds[0], bounds[1], body)

    def emit(self, row: SSAValue) -> None:
        e, c = self.e, self.conv
        batch = e.udiv(row, e.i64(c.out_channels))
        m = e.sub(row, e.mul(batch, e.i64(c.out_channels)))
        group = e.udiv(m, e.i64(c.out_per_group))
        base_out = e.mul(row, e.i64(numel(c.spatial_out)))
        start = real(c.acc.constant(e, 0.0)) if self.bias is None else real(c.item.load(e, self.bias, m))
        self.loop(0, numel(c.spatial_out), lambda q: c.acc.store(e, start, self.plane, e.add(base_out, q)))

        def channel(k: SSAValue) -> None:
            ci = e.add(e.mul(group, e.i64(c.per_group)), k)
            base_in = e.mul(e.add(e.mul(batch, e.i64(c.channels)), ci), e.i64(numel(c.spatial_in)))
            base_w = e.mul(e.add(e.mul(m, e.i64(c.per_group)), k), e.i64(numel(c.kernel)))
            self.taps(0, [], base_w, base_in, base_out)

        self.loop(0, c.per_group, channel)
        if c.widened:

            def round_once(q: SSAValue) -> None:
                at = e.add(base_out, q)
                c.item.store(e, c.acc.load(e, self.plane, at), self.out, at)

            self.loop(0, numel(c.spatial_out), round_once)

    def taps(self, axis: int, starts: list[SSAValue], w_at: SSAValue, base_in: SSAValue, base_out: SSAValue) -> None:
        """One loop per kernel axis; at the innermost, the weight and the output loops."""
        e, c, g = self.e, self.conv, self.geometry
        if axis == c.rank:
            weight = real(c.item.load(e, self.w, w_at))
            self.outputs(0, starts, weight, base_in, base_out)
            return
        k_stride = row_major_strides(c.kernel)[axis]

        def tap(k: SSAValue) -> None:
            start = e.sub(e.mul(k, e.i64(g.dilations[axis])), e.i64(g.pad_before[axis]))
            self.taps(axis + 1, [*starts, start], e.add(w_at, e.mul(k, e.i64(k_stride))), base_in, base_out)

        self.loop(0, c.kernel[axis], tap)

    def outputs(self, axis: int, starts: list[SSAValue], weight: SSAValue, x_at: SSAValue, y_at: SSAValue) -> None:
        """y[o] += weight · x[o·s + start] over the valid outputs of each axis."""
        e, c, g = self.e, self.conv, self.geometry
        in_stride = row_major_strides(c.spatial_in)[axis]
        out_stride = row_major_strides(c.spatial_out)[axis]
        stride = g.strides[axis]
        lo, hi = _valid_range(e, starts[axis], c.spatial_in[axis], c.spatial_out[axis], stride)
        x_at = e.add(x_at, e.mul(starts[axis], e.i64(in_stride)))
        step_in = stride * in_stride

        if axis + 1 < c.rank:

            def row(o: SSAValue) -> None:
                here_x = e.add(x_at, e.mul(o, e.i64(step_in)))
                self.outputs(axis + 1, starts, weight, here_x, e.add(y_at, e.mul(o, e.i64(out_stride))))

            self.loop(lo, hi, row)
            return

        def axpy(o: SSAValue) -> None:
            at = e.add(y_at, o)
            value = real(c.item.load(e, self.x, e.add(x_at, e.mul(o, e.i64(step_in)))))
            c.acc.store(e, e.fma(weight, value, real(c.acc.load(e, self.plane, at))), self.plane, at)

        self.loop(lo, hi, axpy)


def conv_kernels(op: cv.ConvOp, ctx: KernelContext) -> list[Kernel]:
    """One kernel over the units (n, m); see the module docstring."""
    conv = _Conv.of(op)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        unit = _Unit(e, region, conv, pointers)
        for_range(e, region, begin, end, unit.emit)

    buffers: list[SSAValue | str | Scratch] = [
        op.input,
        op.weight,
        *([op.bias] if op.bias is not None else []),
        op.result,
    ]
    if conv.widened:
        buffers.append(Scratch(op, 0))
    units = shape_of(op.result.type)[0] * conv.out_channels
    work = numel(shape_of(op.result.type)) * conv.per_group * numel(conv.kernel)
    return [Kernel(kernel_function(ctx.name, len(buffers), build), buffers, units, work)]


KERNELS: dict[type[Operation], EmitKernels] = {cv.ConvOp: conv_kernels}
