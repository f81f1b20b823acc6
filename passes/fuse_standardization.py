"""fuse-standardization: layer norm and RMS norm, written out, become one region.

Frontends and models write layer norm as its formula, e.g. ONNX's
LayerNormalization and PyTorch's LayerNorm/RMSNorm once exported:

    μ = reduce_mean(x, [-1], keepdims)      (layer norm only)
    c = x − μ                                (RMS norm: c = x)
    σ² = reduce_mean(c·c, [-1], keepdims)    (or c ** 2)
    y = c · rsqrt(σ² + ε)                   (or c · recip(sqrt(σ² + ε)), c / sqrt(σ² + ε))

Left as they are, these are four kernels, and the centered copy and its
square each make a round trip to memory. This pass rewrites the chain into
one `rlx.standardize_region` over the last axis, with identity prologue and
epilogue bodies; fuse-reductions then fuses the chain before it (a residual
add) and after it (the scale and bias) into those bodies. It matches only
when the intermediates have no other user (so nothing is computed twice), ε
is a constant and the axis is the last one.

Run before fuse-elementwise, which would otherwise fuse the chain's pieces
with their neighbours first.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import shape_of


def _sole_user(value: SSAValue) -> Operation | None:
    """The one op using `value` (perhaps as several operands), else None."""
    users = {use.operation for use in value.uses}
    return next(iter(users)) if len(users) == 1 else None


def _owner(value: SSAValue, kind: type[Operation] | tuple[type[Operation], ...]) -> Operation | None:
    """The op of `kind` computing `value`, if nothing else uses `value`."""
    owner = value.owner
    return owner if isinstance(owner, kind) and _sole_user(value) is not None else None


def _constant(value: SSAValue) -> float | None:
    """The value of a constant with one distinct element (a scalar or a splat)."""
    owner = value.owner
    if not isinstance(owner, rlx.ConstantOp):
        return None
    values = owner.values().reshape(-1)
    if values.size == 0 or (values.size > 1 and not (values == values[0]).all()):
        return None
    return float(values[0])


class Chain:
    """The ops of a chain being matched, from the result back to x."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def take(self, op: Operation | None) -> Operation | None:
        if op is not None:
            self.ops.append(op)
        return op

    def last_axis_mean(self, value: SSAValue) -> SSAValue | None:
        """x where `value` = reduce_mean(x) over x's last axis only, keeping it."""
        mean = _owner(value, rd.ReduceMeanOp)
        if not isinstance(mean, rd.ReduceMeanOp) or not mean.keeps_dims:
            return None
        rank = len(shape_of(mean.input.type))
        if rank == 0 or tuple(a % rank for a in mean.reduced_axes()) != (rank - 1,):
            return None
        self.take(mean)
        return mean.input

    def square_of(self, value: SSAValue) -> SSAValue | None:
        """c where `value` = c·c or c ** 2."""
        op = _owner(value, (ew.MulOp, ew.PowOp))
        if (isinstance(op, ew.MulOp) and op.lhs is op.rhs) or (isinstance(op, ew.PowOp) and _constant(op.rhs) == 2.0):
            self.take(op)
            return op.operands[0]
        return None

    def root_of(self, value: SSAValue, inverse: bool) -> SSAValue | None:
        """t where `value` = rsqrt(t) or recip(sqrt(t)) (`inverse`), else sqrt(t)."""
        op = _owner(value, (ew.RsqrtOp, ew.RecipOp, ew.SqrtOp))
        if isinstance(op, ew.RecipOp) and inverse:
            root = _owner(op.input, ew.SqrtOp)
            if root is None:
                return None
            self.take(op)
            op = root
        elif not ((isinstance(op, ew.RsqrtOp) and inverse) or (isinstance(op, ew.SqrtOp) and not inverse)):
            return None
        return self.take(op).operands[0]  # type: ignore[union-attr]


@dataclass(frozen=True)
class Standardization:
    """A matched chain: the tensor it normalizes, ε, whether it is centered,
    and the ops it replaces (besides the final one)."""

    x: SSAValue
    epsilon: float
    centered: bool
    ops: tuple[Operation, ...]


def match(op: ew.MulOp | ew.DivOp) -> Standardization | None:
    """`op` = c·rsqrt(σ² + ε) (either order) or c / sqrt(σ² + ε), as in the module doc."""
    pairs = [(op.lhs, op.rhs)] if isinstance(op, ew.DivOp) else [(op.lhs, op.rhs), (op.rhs, op.lhs)]
    for c, scale in pairs:
        chain = Chain()
        shifted = chain.root_of(scale, inverse=isinstance(op, ew.MulOp))
        add = None if shifted is None else chain.take(_owner(shifted, ew.AddOp))
        if add is None:
            continue
        for variance, eps in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
            epsilon = _constant(eps)
            attempt = Chain()
            squared = attempt.last_axis_mean(variance)
            if epsilon is None or squared is None or attempt.square_of(squared) is not c:
                continue
            found = _standardization(c, op, epsilon, [*chain.ops, *attempt.ops])
            if found is not None and found.x.type == op.result.type:
                return found
    return None


def _standardization(c: SSAValue, op: Operation, epsilon: float, ops: list[Operation]) -> Standardization | None:
    """Centered (c = x − mean(x), x used by nothing else of the chain) or not;
    c itself used only by its square and `op`."""
    square = ops[-1]
    if {use.operation for use in c.uses} != {square, op}:
        return None
    sub = c.owner
    if isinstance(sub, ew.SubOp):
        chain = Chain()
        x = chain.last_axis_mean(sub.rhs)
        if x is not None and x is sub.lhs:
            return Standardization(x, epsilon, True, (*ops, sub, *chain.ops))
    return Standardization(c, epsilon, False, tuple(ops))


class FuseStandardization(RewritePattern):
    """The final product or quotient of a layer norm / RMS norm chain becomes a region."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (ew.MulOp, ew.DivOp)) or not shape_of(op.result.type):
            return
        found = match(op)
        if found is None:
            return
        constants = {v.owner for dead in found.ops for v in dead.operands if isinstance(v.owner, rlx.ConstantOp)}
        rewriter.replace(op, rg.StandardizeRegionOp.of(found.x, found.epsilon, found.centered))
        for dead in found.ops:  # result to source: each is unused once those after it are gone
            rewriter.erase(dead)
        for constant in constants:  # ε and an exponent 2, unless something else reads them
            if not constant.results[0].uses:
                rewriter.erase(constant)


@dataclass(frozen=True)
class FuseStandardizationPass(ModulePass):
    name = "fuse-standardization"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseStandardization(), apply_recursively=False).rewrite_module(op)
