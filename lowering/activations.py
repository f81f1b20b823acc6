"""The unary activations on one float element, as `llvm` dialect ops.

`FLOAT` maps each unary op class to its formula; `scalar_ops.emit_scalar_op`
looks it up for a standalone op and for the same op inside a fused region
alike. Transcendentals come from `math_approx` (vectorizable, no libm calls;
accuracy in its docstring), and each formula is written to avoid overflow and
cancellation (softplus, log_sigmoid, gelu_approx). Integer and complex forms
of `neg abs sign exp log sqrt` are in `scalar_ops` and `complex_ops`; the
derivatives are in `activation_grads`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.ir import SSAValue

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.lowering import math_approx as m
from rlx_mlir.lowering.emitter import Emitter

Unary = Callable[[Emitter, SSAValue], SSAValue]

SQRT1_2 = 1.0 / math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _c(e: Emitter, like: SSAValue, value: float) -> SSAValue:
    return e.const_like(like, value)


def softplus(e: Emitter, x: SSAValue) -> SSAValue:
    """max(x, 0) + log1p(exp(-|x|)): never overflows."""
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fadd(e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _log_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    tail = m.log1p(e, m.exp(e, e.fneg(e.fabs(x))))
    return e.fsub(e.select(e.fcmp("olt", x, _c(e, x, 0.0)), x, _c(e, x, 0.0)), tail)


def _gelu(e: Emitter, x: SSAValue) -> SSAValue:
    """Exact GELU: x * (1 + erf(x / sqrt 2)) / 2."""
    half_x = e.fmul(x, _c(e, x, 0.5))
    return e.fma(half_x, m.erf(e, e.fmul(x, _c(e, x, SQRT1_2))), half_x)


def _gelu_approx(e: Emitter, x: SSAValue) -> SSAValue:
    """The tanh form x/2 * (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3), evaluated
    as x * sigmoid(2z): the same function without the cancellation of 1 + tanh(z)
    for negative x."""
    two_z = e.fmul(_c(e, x, 2 * SQRT_2_OVER_PI), e.fma(e.fmul(_c(e, x, 0.044715), e.fmul(x, x)), x, x))
    return e.fmul(x, m.sigmoid(e, two_z))


def sign(e: Emitter, x: SSAValue) -> SSAValue:
    """1, -1, +0 for ±0 and NaN for NaN (as np.sign)."""
    one, zero = _c(e, x, 1.0), _c(e, x, 0.0)
    neg = e.select(e.fcmp("olt", x, zero), e.fneg(one), e.fadd(x, zero))
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), one, neg)


def _hard_swish(e: Emitter, x: SSAValue) -> SSAValue:
    return e.fdiv(e.fmul(x, e.clamp(e.fadd(x, _c(e, x, 3.0)), 0.0, 6.0)), _c(e, x, 6.0))


def _hard_sigmoid(e: Emitter, x: SSAValue) -> SSAValue:
    return e.clamp(e.fadd(e.fdiv(x, _c(e, x, 6.0)), _c(e, x, 0.5)), 0.0, 1.0)


def _elu(e: Emitter, x: SSAValue) -> SSAValue:
    return e.select(e.fcmp("ogt", x, _c(e, x, 0.0)), x, m.expm1(e, x))


def _relu(e: Emitter, x: SSAValue) -> SSAValue:
    """x < 0 ? 0 : x, so NaN passes through as in np.maximum(x, 0)."""
    return e.select(e.fcmp("olt", x, _c(e, x, 0.0)), _c(e, x, 0.0), x)


FLOAT: dict[type[ew.UnaryOp], Unary] = {
    ew.ReluOp: _relu,
    ew.GeluOp: _gelu,
    ew.GeluApproxOp: _gelu_approx,
    ew.SiluOp: lambda e, x: e.fmul(x, m.sigmoid(e, x)),
    ew.SigmoidOp: m.sigmoid,
    ew.TanhOp: m.tanh,
    ew.ExpOp: m.exp,
    ew.LogOp: m.log,
    ew.SqrtOp: lambda e, x: e.sqrt(x),
    ew.RsqrtOp: lambda e, x: e.fdiv(_c(e, x, 1.0), e.sqrt(x)),
    ew.NegOp: lambda e, x: e.fneg(x),
    ew.AbsOp: lambda e, x: e.fabs(x),
    ew.RoundOp: lambda e, x: e.roundeven(x),
    ew.SinOp: m.sin,
    ew.CosOp: m.cos,
    ew.TanOp: m.tan,
    ew.AtanOp: m.atan,
    ew.RecipOp: lambda e, x: e.fdiv(_c(e, x, 1.0), x),
    ew.FloorOp: lambda e, x: e.floor(x),
    ew.CeilOp: lambda e, x: e.ceil(x),
    ew.SignOp: sign,
    ew.SoftplusOp: softplus,
    ew.EluOp: _elu,
    ew.ErfOp: m.erf,
    ew.HardSwishOp: _hard_swish,
    ew.HardSigmoidOp: _hard_sigmoid,
    ew.MishOp: lambda e, x: e.fmul(x, m.tanh(e, softplus(e, x))),
    ew.SoftsignOp: lambda e, x: e.fdiv(x, e.fadd(_c(e, x, 1.0), e.fabs(x))),
    ew.LogSigmoidOp: _log_sigmoid,
}
