"""NumPy broadcasting, stated once.

The verifiers (is this broadcast legal, what shape results), the
canonicalize-broadcast pass (is this `rlx.expand` redundant) and fusion (the
index map of each region input) all ask the same questions; they ask them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap

Shape = tuple[int, ...]


def broadcast_shapes(*shapes: Sequence[int]) -> Shape | None:
    """The NumPy broadcast of `shapes`, or None if they are incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(rank):
        sizes = {s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether `shape` can be broadcast to exactly `target` (np.broadcast_to)."""
    if len(shape) > len(target):
        return False
    offset = len(target) - len(shape)
    return all(s in (1, target[offset + i]) for i, s in enumerate(shape))


def broadcast_map(shape: Sequence[int], target: Sequence[int]) -> AffineMap:
    """Index map from the iteration space `target` into an operand of `shape`.

    Leading axes the operand lacks are dropped; its size-1 axes that are
    stretched read index 0.
    """
    offset = len(target) - len(shape)
    exprs: list[AffineExpr] = []
    for i, size in enumerate(shape):
        if size == 1 and target[offset + i] != 1:
            exprs.append(AffineConstantExpr(0))
        else:
            exprs.append(AffineExpr.dimension(offset + i))
    return AffineMap(len(target), 0, tuple(exprs))


class BroadcastKind(Enum):
    """How an operand is read by an elementwise loop (the lowering's fast paths)."""

    SAME = "same"          # contiguous, one element per iteration
    SCALAR = "scalar"      # one element for every iteration
    TRAILING = "trailing"  # a contiguous block repeated along the outer axes (a bias)
    GENERAL = "general"    # strided


def classify(shape: Sequence[int], target: Sequence[int]) -> BroadcastKind:
    shape = tuple(shape)
    target = tuple(target)
    if shape == target or (_numel(shape) == _numel(target) and broadcasts_to(shape, target)):
        return BroadcastKind.SAME
    if _numel(shape) == 1:
        return BroadcastKind.SCALAR
    stripped = shape
    while stripped and stripped[0] == 1:
        stripped = stripped[1:]
    if stripped and stripped == target[len(target) - len(stripped):]:
        return BroadcastKind.TRAILING
    return BroadcastKind.GENERAL


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


numel = _numel
