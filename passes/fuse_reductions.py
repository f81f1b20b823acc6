"""fuse-reductions: an elementwise chain feeding a reduction becomes its prologue.

`reduce_sum(x * x)` is rewritten into one `rlx.reduction_region` over the
iteration space of `x * x`, whose body computes `x * x` at each point and
yields it to the reduction: `x` is read once and `x * x` never reaches
memory. The producer is an `rlx.elementwise_region` (what fuse-elementwise
left) or a single elementwise op; it is fused only when the reduction is its
only user, so nothing is computed twice.

softmax and log_softmax take an elementwise chain on either side: the chain
feeding one becomes the prologue of an `rlx.normalize_region`, and a chain
that is its only user becomes the epilogue (`softmax(x * scale) * mask` is one
kernel). Only chains whose inputs are read at the point itself or are
scalars fuse (`NormalizeRegionOp`); a broadcast input keeps its own kernel.

Run after fuse-elementwise (so the whole chain is one region) and before
canonicalize-broadcast (which then folds expands, transposes and slices into
the reduction region's index maps too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import shape_of


def _fusible_producer(value: SSAValue) -> Operation | None:
    """The single-result op computing `value` for this one use, or None."""
    producer = value.owner
    if not isinstance(producer, Operation) or sum(1 for _ in value.uses) != 1 or len(producer.results) != 1:
        return None
    return producer


def _pointwise(values: Sequence[SSAValue], maps: Sequence[AffineMap], space: tuple[int, ...]) -> bool:
    """Every value read at the point itself or a rank-0 scalar: what `rlx.normalize_region` reads."""
    identity = AffineMap.identity(len(space))
    return all(shape_of(v.type) == () or (shape_of(v.type) == space and m == identity) for v, m in zip(values, maps))


def _fuse_prologue(
    op: Operation,
    source: SSAValue,
    rewriter: PatternRewriter,
    build: Callable[[rg.ElementwiseRegionOp], Operation | None],
) -> None:
    """Replace `op` by `build(region of the producer of its input `source`)`
    unless that declines (None)."""
    producer = _fusible_producer(source)
    if producer is None:
        return
    with rg.ElementwiseRegionOp.covering(producer) as region:
        fused = None if region is None else build(region)
    if fused is not None:
        rewriter.replace(op, fused)
        rewriter.erase(producer)


class FuseReductionPrologue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rd.ReduceOp, rewriter: PatternRewriter) -> None:
        _fuse_prologue(op, op.input, rewriter, lambda region: rg.ReductionRegionOp.of(op, region))


class ReductionOfAnIndexMap(RewritePattern):
    """A reduce_* reading an index-map op (expand, transpose, slice, ...) becomes a
    reduction region of its input as it is, so canonicalize-broadcast folds that
    read into the region's map: `reduce_sum(expand(c))` never materializes the
    broadcast (a splat constant of 10^9 elements stays one value in the arena)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rd.ReduceOp, rewriter: PatternRewriter) -> None:
        producer = op.input.owner
        if isinstance(producer, Operation) and rlx.has_input_map(producer):
            rewriter.replace(op, rg.ReductionRegionOp.of(op))


class FuseNormalizePrologue(RewritePattern):
    """softmax(chain(x)): the chain becomes the prologue of a normalize region."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rd.NormalizeOp, rewriter: PatternRewriter) -> None:
        space = shape_of(op.input.type)
        _fuse_prologue(
            op,
            op.input,
            rewriter,
            lambda region: (
                rg.NormalizeRegionOp.of(op, region) if _pointwise(region.inputs, region.maps, space) else None
            ),
        )


class FuseRowRegionPrologue(RewritePattern):
    """standardize(chain(x)), the region made by fuse-standardization with its
    identity prologue: the chain (a residual add) becomes the prologue."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rg.StandardizeRegionOp, rewriter: PatternRewriter) -> None:
        if op.prologue_count != 1 or not _is_identity(op.body.block):
            return

        def build(region: rg.ElementwiseRegionOp) -> Operation | None:
            reads = all(op.reads_through(m, v) for m, v in zip(region.maps, region.inputs))
            return op.with_prologue(region) if len(region.outputs) == 1 and reads else None

        _fuse_prologue(op, op.inputs[0], rewriter, build)


def _is_identity(block: Block) -> bool:
    """A body that yields its one argument."""
    return len(block.args) == 1 and isinstance(block.first_op, rg.YieldOp) and block.first_op.values == (block.args[0],)


class FuseNormalizeEpilogue(RewritePattern):
    """chain(softmax(...)), chain(standardize(...)): the chain becomes the epilogue of the region."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (rd.NormalizeOp, rg.RowRegionOp)):
            return
        result = op.results[0]
        uses = list(result.uses)
        if len(uses) != 1:
            return
        consumer = uses[0].operation
        with rg.ElementwiseRegionOp.covering(consumer) as region:
            fused = None if region is None else self._fused(op, region, result)
        if fused is not None:
            rewriter.replace(consumer, fused)
            rewriter.erase(op)

    @staticmethod
    def _fused(
        op: rd.NormalizeOp | rg.RowRegionOp, region: rg.ElementwiseRegionOp, result: SSAValue
    ) -> rg.RowRegionOp | None:
        positions = [k for k, v in enumerate(region.inputs) if v is result]
        if len(region.outputs) != 1 or region.outputs[0].type != result.type or len(positions) != 1:
            return None
        if shape_of(result.type) == ():
            return None
        normalize = op if isinstance(op, rg.RowRegionOp) else rg.NormalizeRegionOp.of(op)
        if not all(normalize.reads_through(m, v) for m, v in zip(region.maps, region.inputs)):
            if normalize is not op:
                normalize.erase(safe_erase=False)
            return None
        fused = normalize.with_epilogue(region, positions[0])
        if normalize is not op:
            normalize.erase(safe_erase=False)
        return fused


@dataclass(frozen=True)
class FuseReductionsPass(ModulePass):
    name = "fuse-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseReductionPrologue(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(ReductionOfAnIndexMap(), apply_recursively=False).rewrite_module(op)
        normalize = GreedyRewritePatternApplier(
            [FuseNormalizePrologue(), FuseRowRegionPrologue(), FuseNormalizeEpilogue()]
        )
        PatternRewriteWalker(normalize, apply_recursively=True).rewrite_module(op)
