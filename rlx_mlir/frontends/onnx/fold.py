"""Constant folding at import: a node whose inputs are all known is computed with
NumPy, with ONNX's semantics, so shape operands are known."""

from __future__ import annotations

from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import onnx

from rlx_mlir import dtypes
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    NUMPY_NAMES,
    Value,
    axes_operand,
    element_name,
    node_attribute,
)

FoldRule = Callable[[onnx.NodeProto, list[Any]], np.ndarray | None]
"""(node, its given inputs: arrays, except at TYPE_ONLY_OPERANDS, hence Any) -> its one known
output, or None to leave the node to its importer."""


def _elementwise(function: Callable[..., np.ndarray]) -> FoldRule:
    """A rule that applies a NumPy function to the inputs (which broadcast as ONNX's do)."""
    return lambda node, inputs: function(*inputs)


def _variadic(function: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> FoldRule:
    """Sum, Max, Min take one or more inputs: a left fold of the binary function."""
    return lambda node, inputs: reduce(function, inputs)


def _truncating_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX's Div: true division on floats; on integers the quotient truncated toward
    zero (C's rule, as ONNX's reference casts the float quotient back), not NumPy's floor."""
    if a.dtype.kind not in "iu":
        return np.divide(a, b)
    quotient = np.floor_divide(a, b)
    inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(inexact, quotient + 1, quotient).astype(quotient.dtype)


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """ONNX's Pow keeps the base's type; an integer base is raised in float64 and
    truncated back (NumPy refuses negative integer exponents of integers)."""
    if base.dtype.kind in "iub":
        return np.power(base.astype(np.float64), exponent).astype(base.dtype)
    return np.power(base, exponent).astype(base.dtype)


def _fold_mod(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray:
    """Mod: the remainder takes the divisor's sign (fmod=0) or the dividend's (fmod=1, C's fmod)."""
    return (np.fmod if node_attribute(node, "fmod", 0) else np.mod)(*inputs)


def _fold_cast_node(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray | None:
    to = ELEMENT_TYPES.get(node_attribute(node, "to"))
    return fold_cast(inputs[0], to, bool(node_attribute(node, "saturate", 1))) if to else None


def _fold_cast_like(node: onnx.NodeProto, inputs: list[Value]) -> np.ndarray | None:
    """CastLike reads only the element type of `like`, so a run-time `like` does not stop the fold."""
    x, like = inputs
    to = NUMPY_NAMES.get(like.dtype) if isinstance(like, np.ndarray) else element_name(like)
    if not isinstance(x, np.ndarray):  # never: `fold` folds only known data operands
        return None
    return fold_cast(x, to, bool(node_attribute(node, "saturate", 1))) if to else None


def _fold_expand(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray:
    """Expand broadcasts both ways: the result has the broadcast of the input's and the target's shapes."""
    x, shape = inputs
    return np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(int(d) for d in shape))))


def _fold_reduce(function: Callable[..., np.ndarray]) -> FoldRule:
    """Reduce* over `axes` (input or attribute; none given: every axis, or no reduction
    with noop_with_empty_axes), keeping the reduced axes as 1s unless keepdims=0.
    An empty input is left to the importer (ONNX's identity elements, e.g. -inf for ReduceMax)."""

    def rule(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray | None:
        x = inputs[0]
        axes = axes_operand(node, inputs, 1)
        if not axes:
            if node_attribute(node, "noop_with_empty_axes", 0):
                return x
            axes = list(range(x.ndim))
        if x.size == 0:
            return None
        return function(x, axis=tuple(a % x.ndim for a in axes), keepdims=bool(node_attribute(node, "keepdims", 1)))

    return rule


ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": _truncating_divide,
    "Neg": np.negative,
    "Abs": np.abs,
    "Sqrt": np.sqrt,
    "Pow": _power,
    "Floor": np.floor,
    "Ceil": np.ceil,
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
    "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
    "Not": np.logical_not,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
    "Where": np.where,
}
"""The NumPy function of each elementwise op that folds."""

REDUCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "ReduceMax": np.max,
    "ReduceMin": np.min,
    "ReduceSum": np.sum,
    "ReduceProd": np.prod,
}
"""The NumPy function of each reduction that folds."""

FOLDS: dict[str, FoldRule] = {
    **{op: _elementwise(function) for op, function in ELEMENTWISE.items()},
    **{op: _variadic(function) for op, function in {"Sum": np.add, "Max": np.maximum, "Min": np.minimum}.items()},
    "Mod": _fold_mod,
    "Cast": _fold_cast_node,
    "CastLike": _fold_cast_like,
    "Expand": _fold_expand,
    **{op: _fold_reduce(function) for op, function in REDUCTIONS.items()},
}
"""How a node whose inputs are all known at import is computed with NumPy, with ONNX's
semantics (shape arithmetic: exporters' Shape -> Gather -> Concat chains and the expanded
functions' head-count and scale computations). Shape, Gather, Slice, Concat, Reshape,
Unsqueeze/Squeeze, Transpose, ConstantOfShape and Constant compute known values in their
importers, which also take run-time values."""

TYPE_ONLY_OPERANDS: dict[str, set[int]] = {"CastLike": {1}}
"""Operands whose element type, not data, a fold rule reads: they may be run-time values."""


def fold(node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value] | None:
    """The node's output computed at import, when it has a fold rule and every given input is known."""
    rule = FOLDS.get(node.op_type)
    typed_only = TYPE_ONLY_OPERANDS.get(node.op_type, set())
    data = [v for k, v in enumerate(inputs) if k not in typed_only and v is not None]
    if rule is None or not all(isinstance(v, np.ndarray) for v in data):
        return None
    with np.errstate(all="ignore"):  # ONNX leaves overflow and division by zero undefined; NumPy's result stands
        result = rule(node, [v for v in inputs if v is not None])
    return None if result is None else [np.asarray(result)]


def fold_cast(array: np.ndarray, to: str, saturate: bool) -> np.ndarray:
    """A known array cast as ONNX's reference does: astype, float8 saturating by a clip first."""
    target = dtypes.from_name(to)
    if saturate and to.startswith("f8"):
        largest = target.largest
        array = np.clip(array.astype(np.float64), -largest, largest)
    with np.errstate(all="ignore"):
        return array.astype(target.numpy)
