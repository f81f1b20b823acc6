"""Kernels of `rlx.standardize_region`: layer norm and RMS norm along the last axis.

A work item is a row of n elements, walked in rows of W lanes (the reduction
kernels' `layout` with inner = 1: one vector of lane accumulators, W = 16 f32
on AVX-512, `Tuning.vector_bytes`):

- pass 1 (layer norm only) sums x into the lanes, a pairwise tree folds them:
  μ = sum / n;
- pass 2 sums (x − μ)² the same way: σ² = sum / n, r = 1 / sqrt(σ² + ε), as
  `rlx.rsqrt` computes it;
- pass 3 stores epilogue((x − μ)·r, ...) at each element: a plain loop, which
  LLVM's vectorizer takes.

x is the prologue's value, computed where it is read: the row is read two or
three times, from cache after the first (a row of 1024 f32 is 4 KiB), and
written once, so a layer norm of [8192, 1024] moves 64 MiB where the composed
graph (two reductions, a centered copy, its square and the scaled result)
moved 192 MiB. The sums are plain lane sums, not the compensated sums of
`reduce_mean`: the two-pass variance keeps its error near n·ε·σ² either way.
f16/bf16 compute in f32 and round once, at the store.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap

from rlx_mlir.broadcast import numel
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Value, codec
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range
from rlx_mlir.lowering.core.slabs import each, fold_lanes, layout, walk
from rlx_mlir.lowering.scalar.activations import FLOAT
from rlx_mlir.lowering.scalar.scalar_ops import body_value, pairwise
from rlx_mlir.tuning import Tuning


class _Row:
    """The kernel body of one row: the reads, the lane sums and the stores."""

    def __init__(
        self, op: rg.StandardizeRegionOp, e: Emitter, region: Region, ptrs: list[SSAValue], tuning: Tuning
    ) -> None:
        self.op, self.e, self.region, self.ptrs, self.tuning = op, e, region, ptrs, tuning
        self.n = shape_of(op.outputs[0].type)[-1]
        self.item = codec(element_type(op.outputs[0].type))
        self.ft = self.item.compute
        self.lay = layout(1, codec(self.ft).dtype.nbytes, tuning)
        self.codecs = [codec(element_type(v.type)) for v in op.inputs]
        identity = AffineMap.identity(len(op.iteration_shape))
        self.kinds = [
            "scalar" if shape_of(v.type) == () else "point" if amap == identity else "row"
            for v, amap in zip(op.inputs, op.maps)
        ]
        """How each input is read (`StandardizeRegionOp.reads_through`): one element,
        the point's, or the row's j-th (a scale or bias vector)."""
        self.lanes = StackArray.allocate(e, codec(self.ft), self.lay.width)

    def read(self, k: int, base: SSAValue, j: SSAValue) -> Value:
        """Input k at element j of the row starting at element `base`."""
        e, kind = self.e, self.kinds[k]
        at = e.i64(0) if kind == "scalar" else j if kind == "row" else e.add(base, j)
        return self.codecs[k].load(e, self.ptrs[k], at)

    def x(self, base: SSAValue, j: SSAValue) -> SSAValue:
        """The prologue's value at element j."""
        return body_value(self.e, self.op.body.block, lambda k: self.read(k, base, j))  # type: ignore[return-value]

    def mean_of(self, term: Callable[[SSAValue], SSAValue]) -> SSAValue:
        """The row's mean of term(j): lane sums, `reduce_block` rows of lanes per
        visit of a lane's accumulator (as the reduction kernels walk), then the
        pairwise tree over the lanes."""
        e, lay, lanes = self.e, self.lay, self.lanes
        each(e, self.region, lay.width, lambda lane: lanes.set(e, lane, e.const(self.ft, 0.0)))
        full = self.n // lay.width

        def lane_step(lane: SSAValue, qs: list[SSAValue]) -> None:
            terms = [term(e.add(e.mul(q, e.i64(lay.stride)), lane)) for q in qs]
            lanes.set(e, lane, e.fadd(lanes.get(e, lane), pairwise(e, terms, lambda e, a, b: e.fadd(a, b))))  # type: ignore[arg-type]

        walk(e, self.region, lay, e.i64(full), self.n - full * lay.width, lane_step, self.tuning.reduce_block)
        fold_lanes(e, self.region, lay, lambda a, b: lanes.set(e, a, e.fadd(lanes.get(e, a), lanes.get(e, b))))  # type: ignore[arg-type]
        return e.fdiv(lanes.get(e, 0), e.const(self.ft, float(self.n)))  # type: ignore[arg-type]

    def run(self, row: SSAValue) -> None:
        e, op = self.e, self.op
        base = e.mul(row, e.i64(self.n))
        mu = self.mean_of(lambda j: self.x(base, j)) if op.is_centered else e.const(self.ft, 0.0)

        def centered(j: SSAValue) -> SSAValue:
            return e.fsub(self.x(base, j), mu) if op.is_centered else self.x(base, j)

        def square(j: SSAValue) -> SSAValue:
            d = centered(j)
            return e.fmul(d, d)

        variance = self.mean_of(square)
        r = FLOAT[ew.RsqrtOp](e, e.fadd(variance, e.const(self.ft, op.eps)))
        first = op.prologue_count

        def store(j: SSAValue) -> None:
            normalized = self.item.round(e, e.fmul(centered(j), r))

            def load(k: int) -> Value:
                return normalized if k == 0 else self.read(first + k - 1, base, j)

            self.item.store(e, body_value(e, op.epilogue.block, load), self.ptrs[-1], e.add(base, j))

        for_range(e, self.region, e.i64(0), e.i64(self.n), store)


def standardize_kernels(op: rg.StandardizeRegionOp, ctx: KernelContext) -> list[Kernel]:
    """One kernel; its work items are the rows, split across threads."""
    shape = shape_of(op.outputs[0].type)
    rows = numel(shape[:-1])
    if rows * shape[-1] == 0:
        return []

    def build(e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        row = _Row(op, e, region, ptrs, ctx.tuning)
        for_range(e, region, begin, end, row.run)

    buffers: list[SSAValue | str] = [*op.inputs, op.outputs[0]]
    function = kernel_function(ctx.name, len(buffers), build)
    return [Kernel(function, buffers, rows, rows * shape[-1])]


KERNELS: dict[type[Operation], Callable[[Operation, KernelContext], list[Kernel]]] = {
    rg.StandardizeRegionOp: standardize_kernels,  # type: ignore[dict-item]
}
