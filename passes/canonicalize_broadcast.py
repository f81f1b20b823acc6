"""canonicalize-broadcast: make broadcasting implicit and free.

An `rlx.expand` whose only job is to line an operand up with an elementwise
op's output is dropped: the consumer broadcasts anyway, and reading the
smaller source through an index map beats materializing the expanded copy.
For a region (`rlx.elementwise_region`, `rlx.reduction_region`), an expand,
transpose, slice, narrow or reverse feeding it is folded into that input's
indexing map (the region's
kernel is tiled when the folded read is transposed). Shape ops that change nothing (expand/reshape/cast to the same
type) disappear, and chains of reshapes or expands collapse into one. An
`rlx.transpose` that only swaps the last two axes of a matmul operand becomes
the matmul's transpose flag: BLAS reads the untransposed operand, no copy is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_mlir import index_maps
from rlx_mlir.broadcast import broadcast_shapes
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import check_same_level, shape_of


class FoldExpandIntoElementwise(RewritePattern):
    """`add(expand(x), y)` -> `add(x, y)` when the op's result shape is unchanged."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ew.ElementwiseOp) or isinstance(op, ew.CastOp):
            return
        if not check_same_level(op):
            return
        result_shape = shape_of(op.results[0].type)
        for index, operand in enumerate(op.operands):
            expand = operand.owner
            if not isinstance(expand, rlx.ExpandOp):
                continue
            shapes = [shape_of(v.type) for v in op.operands]
            shapes[index] = shape_of(expand.input.type)
            if broadcast_shapes(*shapes) == result_shape:
                op.operands[index] = expand.input
                rewriter.notify_op_modified(op)
                return


class FoldIndexMapIntoRegion(RewritePattern):
    """An expand, transpose, slice, narrow or reverse feeding a region input
    becomes part of that input's index map: the region reads the source directly
    instead of a materialized copy."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rg.ScalarBodyRegionOp, rewriter: PatternRewriter) -> None:
        maps = op.maps
        first = len(op.inputs) - len(op.mapped_inputs)  # a contraction's lhs and rhs have no map
        for index, operand in enumerate(op.mapped_inputs):
            producer = operand.owner
            if not rlx.has_input_map(producer):
                continue
            composed = index_maps.compose(index_maps.accesses(maps[index]), producer.input_map())
            folded = index_maps.to_affine(maps[index].num_dims, composed)
            if not op.reads_through(folded, producer.input):
                continue
            maps[index] = folded
            op.operands[first + index] = producer.input
            op.indexing_maps = ArrayAttr([AffineMapAttr(m) for m in maps])
            rewriter.notify_op_modified(op)
            return


class FoldTransposeIntoMatmul(RewritePattern):
    """`matmul(transpose(x) {perm swaps the last two axes}, y)` -> `matmul(x, y)`
    with that operand's transpose flag flipped (either operand); the transpose
    stays while it has other users."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ct.MatmulOp, rewriter: PatternRewriter) -> None:
        operands, flags = [op.lhs, op.rhs], list(op.transposes)
        for index, operand in enumerate(operands):
            producer = operand.owner
            if isinstance(producer, mv.TransposeOp) and _swaps_last_two(producer.permutation):
                operands[index] = producer.input
                flags[index] = not flags[index]
        if operands != [op.lhs, op.rhs]:
            (lhs, rhs), (transpose_lhs, transpose_rhs) = operands, flags
            rewriter.replace(op, ct.MatmulOp(lhs, rhs, op.result.type, transpose_lhs, transpose_rhs))


def _swaps_last_two(perm: tuple[int, ...]) -> bool:
    rank = len(perm)
    return rank >= 2 and perm == (*range(rank - 2), rank - 1, rank - 2)


class RemoveNoOpShapeOp(RewritePattern):
    """expand/reshape/cast whose result type equals the operand type is the operand."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, (rlx.ExpandOp, rlx.ReshapeOp, ew.CastOp)) and op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class CollapseShapeChain(RewritePattern):
    """reshape(reshape(x)) -> reshape(x); expand(expand(x)) -> expand(x)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (rlx.ExpandOp, rlx.ReshapeOp)):
            return
        inner = op.input.owner
        if type(inner) is type(op):
            rewriter.replace(op, type(op)(inner.input, op.result.type))


@dataclass(frozen=True)
class CanonicalizeBroadcastPass(ModulePass):
    name = "canonicalize-broadcast"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    RemoveNoOpShapeOp(),
                    CollapseShapeChain(),
                    FoldExpandIntoElementwise(),
                    FoldIndexMapIntoRegion(),
                    FoldTransposeIntoMatmul(),
                ]
            ),
            apply_recursively=True,
        ).rewrite_module(op)
        erase_dead_shape_ops(op)


def erase_dead_shape_ops(module: ModuleOp) -> None:
    """Index-map ops and reshapes left without users after folding are removed."""
    changed = True
    while changed:
        changed = False
        for op in list(module.walk()):
            if (rlx.has_input_map(op) or isinstance(op, rlx.ReshapeOp)) and not op.result.uses:
                op.detach()
                op.erase()
                changed = True
