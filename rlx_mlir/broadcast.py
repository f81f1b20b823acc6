"""NumPy broadcasting, stated once.

The verifiers (is this broadcast legal, what shape results), the
canonicalize-broadcast pass (is this `rlx.expand` redundant) and fusion (the
index map of each region input) all ask the same questions; they ask them here.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


numel = _numel
