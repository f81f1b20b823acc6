"""fuse-reductions: an elementwise chain feeding a reduction becomes its prologue.

`reduce_sum(x * x)` is rewritten into one `rlx.reduction_region` over the
iteration space of `x * x`, whose body computes `x * x` at each point and
yields it to the reduction: `x` is read once and `x * x` never reaches
memory. The producer is an `rlx.elementwise_region` (what fuse-elementwise
left) or a single elementwise op; it is fused only when the reduction is its
only user, so nothing is computed twice.

Run after fuse-elementwise (so the whole chain is one region) and before
canonicalize-broadcast (which then folds expands, transposes and slices into
the reduction region's index maps too).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg


def fusible_producer(value: SSAValue) -> rg.ElementwiseRegionOp | None:
    """The single-result elementwise region computing `value` for this one use
    (`ElementwiseRegionOp.covering`), or None."""
    producer = value.owner
    if not isinstance(producer, Operation) or sum(1 for _ in value.uses) != 1 or len(producer.results) != 1:
        return None
    return rg.ElementwiseRegionOp.covering(producer)


class FuseReductionPrologue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rd.ReduceOp, rewriter: PatternRewriter) -> None:
        region = fusible_producer(op.input)
        if region is None:
            return
        producer = op.input.owner
        fused = rg.ReductionRegionOp.of(op, region)
        if region is not producer:  # the outlined stand-in for a lone op holds uses of its inputs
            region.erase(safe_erase=False)
        rewriter.replace(op, fused)
        assert isinstance(producer, Operation)
        rewriter.erase(producer)


@dataclass(frozen=True)
class FuseReductionsPass(ModulePass):
    name = "fuse-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseReductionPrologue(), apply_recursively=False).rewrite_module(op)
