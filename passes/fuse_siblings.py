"""fuse-siblings: elementwise siblings that read one input become one multi-result region.

Horizontal fusion, the complement of fuse-elementwise's producer -> consumer
(vertical) fusion: two elementwise computations (each an
`rlx.elementwise_region` or a lone elementwise op) over the same iteration
shape that read the same value through the same index map are merged into
one `rlx.elementwise_region` yielding both sets of results, so `x + b` and
`x < c` over one `x` read it once, in one loop nest.

The merge keeps the graph acyclic: two siblings are merged only when neither
depends on the other through any path (the later one would otherwise both
feed and consume the merged op). The check walks the ops after the earlier
one, in block order, tracking what it reaches, up to `WINDOW` ops (so the pass
stays linear in block size); the reached ops between the two move below the
merged op (they cannot feed the later sibling, which they do not reach), so
the block stays in a valid order without a global re-sort.

Only computations in the same block are merged (a scan body is one block
among others); reductions, contractions and normalizations keep their own
fusion passes, which run first in the default pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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
    slots: dict[tuple[SSAValue, AffineMap], int] = {}
    for read in (*zip(first.inputs, first.maps), *zip(second.inputs, second.maps)):
        slots.setdefault(read, len(slots))
    block = rg.make_region_block([value.type for value, _ in slots])
    yielded: list[SSAValue] = []
    for region in (first, second):
        scalars: dict[SSAValue, SSAValue] = {}  # clone() adds each cloned result to it
        for arg, read in zip(region.body.block.args, zip(region.inputs, region.maps)):
            scalars[arg] = block.args[slots[read]]
            scalars[arg].name_hint = arg.name_hint
        for op in region.body.block.ops:
            if isinstance(op, rg.YieldOp):
                yielded.extend(scalars[v] for v in op.values)
            else:
                block.add_op(op.clone(value_mapper=scalars))
    block.add_op(rg.YieldOp(*yielded))
    result_types = [r.type for r in (*first.outputs, *second.outputs)]
    merged = rg.ElementwiseRegionOp([v for v, _ in slots], [m for _, m in slots], result_types, Region([block]))
    for old, new in zip((*first.outputs, *second.outputs), merged.outputs):
        new.name_hint = old.name_hint
    return merged


MAX_RESULTS = 16
"""Results of one merged region at most: each is an output stream of the
kernel, and a value read by hundreds of siblings would otherwise become one
kernel with hundreds of stores per point."""


WINDOW = 64
"""How many ops after a computation the search for its sibling walks: keeps the
pass linear in block size (a value read by every region of a long chain has
siblings all along it), and siblings further apart would keep the first one's
results alive longer for little gain."""


def _is_sibling(other: Operation, reads: set[SSAValue], space: tuple[int, ...]) -> bool:
    """`other` reads one of the values in `reads` over the iteration shape `space`."""
    return is_sibling_candidate(other) and not reads.isdisjoint(other.operands) and _space(other) == space


def later_independent_siblings(op: Operation) -> Iterator[tuple[Operation, list[Operation]]]:
    """Each sibling within `WINDOW` ops after `op` that does not depend on it,
    nearest first, with the ops between them that do (they must follow the
    merged op). One walk in block order tracks what `op` reaches; siblings are
    recognized on the walk, never looked up among an operand's uses (a value
    every region of a long chain reads has a use per region: looking there made
    the pass quadratic). (Tensor-level ops with regions, scans and fused
    regions, are isolated from above: their operands are all they read.)"""
    reads = set(op.operands)
    if not any(v.has_more_than_one_use() for v in reads):  # the common case (a chain): no walk
        return
    space = _space(op)
    reached_values: set[SSAValue] = set(op.results)
    reached: list[Operation] = []
    current = op.next_op
    for _ in range(WINDOW):
        if current is None:
            return
        if any(v in reached_values for v in current.operands):
            reached.append(current)
            reached_values.update(current.results)
        elif _is_sibling(current, reads, space):
            yield current, list(reached)
        current = current.next_op


class FuseSiblings(RewritePattern):
    """Merge an elementwise computation with the nearest later sibling it may join."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_sibling_candidate(op):
            return
        for other, reached in later_independent_siblings(op):
            if self._fused(op, other, reached, rewriter):
                return

    @staticmethod
    def _fused(first: Operation, second: Operation, reached: Sequence[Operation], rewriter: PatternRewriter) -> bool:
        with rg.ElementwiseRegionOp.covering(first) as a, rg.ElementwiseRegionOp.covering(second) as b:
            merged = None
            if a is not None and b is not None and len(a.outputs) + len(b.outputs) <= MAX_RESULTS:
                merged = merge(a, b) if _reads(a) & _reads(b) else None
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
