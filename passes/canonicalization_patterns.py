"""Canonicalization patterns of the rlx layout ops, run by xDSL's `canonicalize`.

Each op points at its patterns through a `HasCanonicalizationPatternsTrait`
(as xDSL's own dialects do), so `rlx-opt -p canonicalize` and the default
pipeline both apply them:
- transpose(transpose(x)) is one transpose, or x when the perms cancel;
- reverse(reverse(x)) reverses the symmetric difference of the axes, or is x;
- a transpose by the identity, a full unit-step slice or narrow, a zero pad
  and a reverse of no axes (or only of size-1 axes) are x.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects.common import shape_of


class FoldTransposeChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mv.TransposeOp):
            return
        outer_perm, inner_perm = op.permutation, inner.permutation
        combined = [inner_perm[axis] for axis in outer_perm]
        if combined == sorted(combined):
            rewriter.replace(op, [], [inner.input])
        else:
            rewriter.replace(op, mv.TransposeOp(inner.input, combined, op.result.type))


class RemoveIdentityTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.TransposeOp, rewriter: PatternRewriter) -> None:
        if list(op.permutation) == list(range(len(op.permutation))):
            rewriter.replace(op, [], [op.input])


class FoldReverseChain(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.ReverseOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, mv.ReverseOp):
            return
        axes = sorted(set(op.normalized_axes()) ^ set(inner.normalized_axes()))
        if axes:
            rewriter.replace(op, mv.ReverseOp(inner.input, axes, op.result.type))
        else:
            rewriter.replace(op, [], [inner.input])


class RemoveIdentityReverse(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.ReverseOp, rewriter: PatternRewriter) -> None:
        shape = shape_of(op.input.type)
        if all(shape[a] <= 1 for a in op.normalized_axes()):
            rewriter.replace(op, [], [op.input])


class RemoveIdentitySlice(RewritePattern):
    """A slice or narrow that reads every element in order is its input."""

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:  # noqa: ANN001 (two op types)
        if not isinstance(op, (mv.SliceOp, mv.NarrowOp)) or op.input.type != op.result.type:
            return
        shape = shape_of(op.input.type)
        if all(a.offset == 0 and (a.scale == 1 or n <= 1) for a, n in zip(op.input_map(), shape)):
            rewriter.replace(op, [], [op.input])


class RemoveZeroPad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.PadOp, rewriter: PatternRewriter) -> None:
        before, after = op.widths()
        if not any(before) and not any(after):
            rewriter.replace(op, [], [op.input])
