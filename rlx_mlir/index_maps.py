"""Index maps of elementwise regions: each input axis is read at `offset + scale * d_k`.

That one form covers everything a region folds in: NumPy broadcasting
(`scale 0`, i.e. a constant), transposes (a permutation of dims), slices with
any step (`start + step * d`), narrows (`start + d`) and reversals
(`n - 1 - d`). The verifier, canonicalize-broadcast (composition) and the
kernel emitter (strides and base offsets) all use this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)


class Access(NamedTuple):
    """How one input axis is indexed: `offset + scale * d[dim]` (dim None: constant)."""

    dim: int | None
    scale: int
    offset: int

    def bounds(self, space: Sequence[int]) -> tuple[int, int]:
        """Smallest and largest index read over the iteration space (non-empty)."""
        if self.dim is None:
            return self.offset, self.offset
        last = self.offset + self.scale * (space[self.dim] - 1)
        return min(self.offset, last), max(self.offset, last)


def _linear(expr: AffineExpr) -> tuple[dict[int, int], int]:
    """An affine expression as ({dim: coefficient}, constant); raises ValueError otherwise."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, 0
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Add:
        (a, c), (b, d) = _linear(expr.lhs), _linear(expr.rhs)
        return {k: a.get(k, 0) + b.get(k, 0) for k in a | b}, c + d
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Mul:
        (a, c), (b, d) = _linear(expr.lhs), _linear(expr.rhs)
        if a and b:
            raise ValueError(f"{expr} is not affine")
        coeffs, factor = (a, d) if a else (b, c)
        return {k: v * factor for k, v in coeffs.items()}, c * d
    raise ValueError(f"{expr} is not of the form offset + scale * dim")


def accesses(amap: AffineMap) -> tuple[Access, ...]:
    """Per result of `amap`; raises ValueError for anything but offset + scale * one dim."""
    result = []
    for expr in amap.results:
        coeffs, constant = _linear(expr)
        coeffs = {k: v for k, v in coeffs.items() if v}
        if len(coeffs) > 1:
            raise ValueError(f"{expr} reads more than one iteration dim")
        dim, scale = next(iter(coeffs.items())) if coeffs else (None, 0)
        result.append(Access(dim, scale, constant))
    return tuple(result)


def to_affine(num_dims: int, axes: Sequence[Access]) -> AffineMap:
    exprs: list[AffineExpr] = []
    for access in axes:
        if access.dim is None:
            exprs.append(AffineConstantExpr(access.offset))
            continue
        expr: AffineExpr = AffineExpr.dimension(access.dim)
        if access.scale != 1:
            expr = expr * access.scale
        if access.offset:
            expr = expr + access.offset
        exprs.append(expr)
    return AffineMap(num_dims, 0, tuple(exprs))


def compose(outer: Sequence[Access], inner: Sequence[Access]) -> tuple[Access, ...]:
    """`inner` reads a producer's input from its output space; `outer` reads that
    output from a consumer's space. The result reads the producer's input directly."""
    composed = []
    for access in inner:
        if access.dim is None:
            composed.append(access)
            continue
        via = outer[access.dim]
        offset = access.offset + access.scale * via.offset
        composed.append(
            Access(via.dim, access.scale * via.scale, offset) if via.dim is not None else Access(None, 0, offset)
        )
    return tuple(composed)


def identity(rank: int) -> tuple[Access, ...]:
    return tuple(Access(d, 1, 0) for d in range(rank))


def broadcast(shape: Sequence[int], target: Sequence[int]) -> tuple[Access, ...]:
    """NumPy broadcasting of `shape` into `target`: missing leading axes dropped,
    stretched size-1 axes read index 0."""
    lead = len(target) - len(shape)
    return tuple(
        Access(None, 0, 0) if size == 1 and target[lead + i] != 1 else Access(lead + i, 1, 0)
        for i, size in enumerate(shape)
    )


def transpose(perm: Sequence[int]) -> tuple[Access, ...]:
    """Output axis k is input axis perm[k]: input axis perm[k] reads d_k."""
    inverse = {axis: k for k, axis in enumerate(perm)}
    return tuple(Access(inverse[a], 1, 0) for a in range(len(perm)))


def strided(starts: Sequence[int], steps: Sequence[int]) -> tuple[Access, ...]:
    """Slices, narrows and reversals: input axis a reads starts[a] + steps[a] * d_a."""
    return tuple(Access(a, step, start) for a, (start, step) in enumerate(zip(starts, steps)))
