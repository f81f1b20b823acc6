"""Derivatives of the unary activations, for `rlx.activation_backward` (dx = dy * f'(x)).

Each entry maps an activation name to f'(x) as straight-line IR, written with
the same vectorizable primitives as the activations themselves (math_approx).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import SSAValue

from rlx_mlir.lowering import math_approx as m
from rlx_mlir.lowering.emitter import Emitter

Derivative = Callable[[Emitter, SSAValue], SSAValue]


def _tanh_grad(e: Emitter, x: SSAValue) -> SSAValue:
    """1 - tanh(x)^2."""
    t = m.tanh(e, x)
    return e.fsub(e.const_like(x, 1.0), e.fmul(t, t))


DERIVATIVES: dict[str, Derivative] = {
    "exp": m.exp,
    "tanh": _tanh_grad,
}
