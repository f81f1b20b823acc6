"""fuse-siblings: elementwise siblings that read one input become one multi-result region.

Horizontal fusion, the complement of fuse-elementwise's producer -> consumer
(vertical) fusion: two elementwise computations (each an
`rlx.elementwise_region` or a lone elementwise op) over the same iteration
shape that read the same value through the same index map are merged into
one `rlx.elementwise_region` yielding both sets of results, so `x + b` and
`x < c` over one `x` read it once, in one loop nest.

The merge keeps the graph acyclic: two siblings are merged only when neither
depends on the other through any path (the later one would otherwise both
feed and consume the merged op). The check walks the ops between the two, in
block order, tracking what the earlier one reaches; those reached ops move
below the merged op (they cannot feed the later sibling, which they do not
reach), so the block stays in a valid order without a global re-sort.

Only computations in the same block are merged (a scan body is one block
among others); reductions, contractions and normalizations keep their own
fusion passes, which run first in the default pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint

from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.passes.fuse_elementwise import is_fusible


def is_sibling_candidate(op: Operation) -> bool:
    """A graph-level elementwise computation: a region, or a lone op fuse-elementwise left."""
    return isinstance(op, rg.ElementwiseRegionOp) or is_fusible(op)


def _space(op: Operation) -> tuple[int, ...]:
    return op.iteration_shape if isinstance(op, rg.ElementwiseRegionOp) else shape_of(op.results[0].type)


def _reads(region: rg.ElementwiseRegionOp) -> set[tuple[SSAValue, AffineMap]]:
    return set(zip(region.inputs, region.maps))


def merge(first: rg.ElementwiseRegionOp, second: rg.ElementwiseRegionOp) -> rg.ElementwiseRegionOp:
    """One region computing both bodies (not inserted): inputs read the same way
    are read once, and it yields `first`'s results, then `second`'s."""
    reads: list[tuple[SSAValue, AffineMap]] = []
    for read in (*zip(first.inputs, first.maps), *zip(second.inputs, second.maps)):
        if read not in reads:
            reads.append(read)
    block = rg.make_region_block([value.type for value, _ in reads])
    yielded: list[SSAValue] = []
    for region in (first, second):
        scalars: dict[SSAValue, SSAValue] = {}
        for arg, read in zip(region.body.block.args, zip(region.inputs, region.maps)):
            scalars[arg] = block.args[reads.index(read)]
            block.args[reads.index(read)].name_hint = arg.name_hint
        for op in region.body.block.ops:
            if isinstance(op, rg.YieldOp):
                yielded.extend(scalars[v] for v in op.values)
            else:
                block.add_op(op.clone(value_mapper=scalars))
    block.add_op(rg.YieldOp(*yielded))
    result_types = [r.type for r in (*first.outputs, *second.outputs)]
    merged = rg.ElementwiseRegionOp([v for v, _ in reads], [m for _, m in reads], result_types, Region([block]))
    for old, new in zip((*first.outputs, *second.outputs), merged.outputs):
        new.name_hint = old.name_hint
    return merged


def reached_between(first: Operation, second: Operation) -> list[Operation] | None:
    """The ops strictly between `first` and `second` (`first` earlier in their
    block) that use `first`'s results, directly or not; None when `second` is
    one of them. (Tensor-level ops with regions, scans and fused regions, are
    isolated from above: their operands are all they read.)"""
    reached_values: set[SSAValue] = set(first.results)
    reached: list[Operation] = []
    op = first.next_op
    while op is not None and op is not second:
        if any(v in reached_values for v in op.operands):
            reached.append(op)
            reached_values.update(op.results)
        op = op.next_op
    if any(v in reached_values for v in second.operands):
        return None
    return reached


def _later_siblings(op: Operation) -> list[Operation]:
    """The candidates after `op` in its block that read one of its inputs over
    its shape, nearest first."""
    block = op.parent
    if block is None:
        return []
    space = _space(op)
    found = {use.operation for value in op.operands for use in value.uses}
    index = block.get_operation_index(op)
    later = [(block.get_operation_index(other), other) for other in found
             if other is not op and other.parent is block and is_sibling_candidate(other) and _space(other) == space]
    return [other for position, other in sorted(later, key=lambda pair: pair[0]) if position > index]


class FuseSiblings(RewritePattern):
    """Merge an elementwise computation with the first later sibling it may join."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_sibling_candidate(op):
            return
        for other in _later_siblings(op):
            reached = reached_between(op, other)
            if reached is not None and self._fused(op, other, reached, rewriter):
                return

    @staticmethod
    def _fused(first: Operation, second: Operation, reached: Sequence[Operation], rewriter: PatternRewriter) -> bool:
        with rg.ElementwiseRegionOp.covering(first) as a, rg.ElementwiseRegionOp.covering(second) as b:
            merged = merge(a, b) if a is not None and b is not None and _reads(a) & _reads(b) else None
        if merged is None:
            return False
        rewriter.insert(merged, InsertPoint.before(second))
        for moved in reversed(reached):  # they follow the merged op, in their order
            moved.detach()
            rewriter.insert(moved, InsertPoint.after(merged))
        olds = (*first.results, *second.results)
        for old, new in zip(olds, merged.outputs):
            rewriter.replace_all_uses_with(old, new)
        rewriter.erase(second)
        rewriter.erase(first)
        return True


@dataclass(frozen=True)
class FuseSiblingsPass(ModulePass):
    name = "fuse-siblings"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseSiblings(), apply_recursively=True).rewrite_module(op)
