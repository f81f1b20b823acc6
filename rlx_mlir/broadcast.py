"""NumPy broadcasting, stated once.

The verifiers (is this broadcast legal, what shape results), the
canonicalize-broadcast pass (is this `rlx.expand` redundant) ask the same
questions; they ask them here. (Index maps live in `index_maps`.)
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


numel = _numel


def row_major_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of `shape`."""
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))
