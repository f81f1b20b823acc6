"""The op importers, one small function per ONNX op type (opsets 13 and up):
(import, node, inputs) -> outputs. Where ONNX's meaning differs from an rlx
op's, the importer composes it from rlx ops (Mod with fmod=0, Gemm's alpha and
beta, HardSigmoid's alpha and beta, Elu's alpha, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    NUMPY_NAMES,
    Import,
    Importer,
    Unsupported,
    Value,
    axes_operand,
    checked_axis,
    element_name,
    known,
    node_attribute,
    present,
)


def _unary(name: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        return [ctx.builder.unary(name, ctx.tensor(inputs[0]))]

    return convert


def _binary(name: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        values = [ctx.tensor(v) for v in inputs if v is not None]
        result = values[0]
        for other in values[1:]:  # Max, Min, Sum take any number of inputs
            result = ctx.builder.binary(name, result, other)
        return [result]

    return convert


def _compare(name: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        a, b = (ctx.tensor(v) for v in inputs)
        return [ctx.builder.compare(name, a, b)]

    return convert


def _identity(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    return [present(inputs[0])]


def _dropout(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Inference's Dropout passes x through, its mask all true; training mode drops at
    random, which rlx does not (unless the ratio is 0)."""
    x = present(inputs[0])
    if len(inputs) > 2 and inputs[2] is not None and bool(known(inputs[2], "training_mode").reshape(-1)[0]):
        ratio = 0.5 if inputs[1] is None else float(known(inputs[1], "ratio").reshape(-1)[0])
        if ratio != 0:
            raise Unsupported(f"training_mode drops elements at random (ratio {ratio}); rlx runs inference only")
    return [x, np.ones(ctx.shape(x), bool)]


def _constant(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    value = node_attribute(node, "value")
    if value is not None:
        return [numpy_helper.to_array(value)]
    for name, dtype in CONSTANT_LISTS.items():
        listed = node_attribute(node, name)
        if listed is not None:
            return [np.asarray(listed, dtype)]
    raise Unsupported("only Constant(value, value_int(s), value_float(s)) is supported")


CONSTANT_LISTS = {"value_int": np.int64, "value_ints": np.int64, "value_float": np.float32, "value_floats": np.float32}
"""Constant's scalar and list attributes and the element type ONNX gives them."""


def _constant_of_shape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """A tensor of the (known) shape filled with `value`'s one element (a float 0 by default):
    known at import, as exporters use it for zero initial states."""
    shape = [int(d) for d in known(inputs[0], "shape")]
    value = node_attribute(node, "value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    return [np.full(shape, fill[0], dtype=fill.dtype)]


def _shape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = np.array(ctx.shape(inputs[0]), dtype=np.int64)
    start, end = node_attribute(node, "start", 0), node_attribute(node, "end", None)
    return [shape[start:end]]


def _size(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Size reads only its input's (static) shape, so it is known at import."""
    return [np.array(int(np.prod(ctx.shape(inputs[0]))), np.int64)]


def _range(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Range's length depends on its operands' values, so they must be known at import;
    ONNX's reference: `arange(start, limit, delta)` in the operands' element type."""
    start, limit, delta = (known(v, name) for v, name in zip(inputs, ("start", "limit", "delta")))
    scalar = int if start.dtype.kind in "iu" else float  # bf16 and float8 arrays have kind 'V'
    return [np.arange(scalar(start), scalar(limit), scalar(delta)).astype(start.dtype)]


def _cast(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    to = node_attribute(node, "to")
    target = ELEMENT_TYPES.get(to)
    if target is None:
        raise Unsupported(f"Cast to {onnx.TensorProto.DataType.Name(to)} is not supported")
    return [_cast_to(ctx, node, ctx.tensor(inputs[0]), target)]


def _cast_like(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    like = present(inputs[1])
    if isinstance(like, np.ndarray):
        target = NUMPY_NAMES.get(like.dtype)
        if target is None:
            raise Unsupported(f"CastLike to {like.dtype} is not supported")
    else:
        target = element_name(like)
    return [_cast_to(ctx, node, ctx.tensor(inputs[0]), target)]


def _cast_to(ctx: Import, node: onnx.NodeProto, x: SSAValue, target: str) -> SSAValue:
    """ONNX's Cast: `saturate` (default 1) is rlx.cast's flag. ONNX leaves a float
    out of an integer type's range undefined; its reference (ml_dtypes) converts
    to a wide integer and wraps, which its int4 tests rely on (-9 -> 7): so a
    float goes to i4/ui4 through i32 (truncating, then wrapping), while rlx's own
    float -> int4 cast saturates."""
    saturate = bool(node_attribute(node, "saturate", 1))
    source = dtypes.from_ir(element_type(x.type))
    if source.kind is dtypes.Kind.FLOAT and target in ("i4", "ui4"):
        x = ctx.builder.cast(x, "i32")
    return ctx.builder.cast(x, target, saturate=saturate)


def _where(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    c, a, b = (ctx.tensor(v) for v in inputs)
    return [ctx.builder.where(c, a, b)]


def _matmul(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    a, b = (ctx.tensor(v) for v in inputs)
    return [ctx.builder.matmul(a, b)]


def _gemm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """alpha · op(A) · op(B) + beta · C."""
    b = ctx.builder
    a, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    y = b.matmul(a, w, bool(node_attribute(node, "transA", 0)), bool(node_attribute(node, "transB", 0)))
    element = element_name(y)
    alpha, beta = float(node_attribute(node, "alpha", 1.0)), float(node_attribute(node, "beta", 1.0))
    if alpha != 1.0:
        y = b.mul(y, b.constant(alpha, element))
    if len(inputs) > 2 and inputs[2] is not None and beta != 0.0:
        c = ctx.tensor(inputs[2])
        y = b.add(y, c if beta == 1.0 else b.mul(c, b.constant(beta, element)))
    return [y]


def _transpose(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """A negative axis in `perm` counts from the end, as in NumPy and ONNX's reference:
    torch's TorchScript exporter writes Mamba2's permute(0, -2, -1, 1) so (onnxruntime
    rejects it)."""
    x = present(inputs[0])
    rank = len(ctx.shape(x))
    given = [int(p) for p in node_attribute(node, "perm", list(reversed(range(rank))))]
    perm = [p % rank if -rank <= p < 0 else p for p in given]
    if sorted(perm) != list(range(rank)):
        raise Unsupported(f"perm {given} is not a permutation of the {rank} axes")
    if isinstance(x, np.ndarray):
        return [np.transpose(x, perm)]
    return [ctx.builder.transpose(x, perm)]


def _reshape_to(ctx: Import, x: Value, shape: Sequence[int]) -> Value:
    if isinstance(x, np.ndarray):
        return x.reshape(shape)
    return ctx.builder.reshape(x, list(shape))


def _reshape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, target = present(inputs[0]), known(inputs[1], "target shape")
    current = ctx.shape(x)
    allow_zero = bool(node_attribute(node, "allowzero", 0))
    shape = [int(current[k]) if d == 0 and not allow_zero else int(d) for k, d in enumerate(target)]
    if -1 in shape:
        rest = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = int(np.prod(current)) // rest if rest else 0
    return [_reshape_to(ctx, x, shape)]


def _flatten(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = ctx.shape(inputs[0])
    axis = int(node_attribute(node, "axis", 1))
    axis = axis + len(shape) if axis < 0 else axis  # in [-rank, rank]
    return [_reshape_to(ctx, present(inputs[0]), (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))]


def _operand(node: onnx.NodeProto, inputs: list[Value | None], position: int, attribute: str) -> np.ndarray | None:
    """A shape-like operand: the input at `position` (opset 13+; Pad 11+, Clip 11+,
    Slice 10+) or, in older opsets, the attribute of that name; None if neither is given."""
    if len(inputs) > position and inputs[position] is not None:
        return known(inputs[position], attribute)
    value = node_attribute(node, attribute)
    return None if value is None else np.asarray(value)


def _unsqueeze(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = list(ctx.shape(inputs[0]))
    axes = sorted(
        a % (len(shape) + len(axes_operand(node, inputs, 1) or [])) for a in axes_operand(node, inputs, 1) or []
    )
    for a in axes:
        shape.insert(a, 1)
    return [_reshape_to(ctx, present(inputs[0]), shape)]


def _squeeze(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = ctx.shape(inputs[0])
    axes = axes_operand(node, inputs, 1)
    drop = {a % len(shape) for a in axes} if axes is not None else {a for a, n in enumerate(shape) if n == 1}
    return [_reshape_to(ctx, present(inputs[0]), [n for a, n in enumerate(shape) if a not in drop])]


def _concat(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    axis = int(node_attribute(node, "axis"))
    arrays = [v for v in inputs if isinstance(v, np.ndarray)]
    if len(arrays) == len(inputs):
        return [np.concatenate(arrays, axis)]
    return [ctx.builder.concat([ctx.tensor(v) for v in inputs], axis)]


def _gather(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = inputs
    axis = int(node_attribute(node, "axis", 0))
    if isinstance(data, np.ndarray) and isinstance(indices, np.ndarray):
        return [np.take(data, indices, axis)]
    return [ctx.builder.gather(ctx.tensor(data), ctx.tensor(indices), axis)]


def _gather_elements(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = (ctx.tensor(v) for v in inputs)
    return [ctx.builder.gather_elements(data, indices, int(node_attribute(node, "axis", 0)))]


def _gather_nd(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = (ctx.tensor(v) for v in inputs)
    return [ctx.builder.gather_nd(data, indices, int(node_attribute(node, "batch_dims", 0)))]


def _reduction(node: onnx.NodeProto) -> str:
    """ScatterElements/ScatterND's `reduction` (none, add, mul, max, min): rlx's scatter ops take the same names."""
    return node_attribute(node, "reduction", b"none").decode()


def _scatter_elements(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ScatterElements, and the deprecated Scatter (the same op without `reduction`):
    rlx.scatter_elements has ONNX's meaning (negative indices wrap, updates applied in order)."""
    data, indices, updates = (ctx.tensor(v) for v in inputs)
    axis = int(node_attribute(node, "axis", 0))
    return [ctx.builder.scatter_elements(data, indices, updates, axis, _reduction(node))]


def _scatter_nd(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices, updates = (ctx.tensor(v) for v in inputs)
    return [ctx.builder.scatter_nd(data, indices, updates, _reduction(node))]


def _softmax(log: bool) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        axis = int(node_attribute(node, "axis", -1))
        x = ctx.tensor(inputs[0])
        return [ctx.builder.log_softmax(x, axis) if log else ctx.builder.softmax(x, axis)]

    return convert


Reduction = Callable[[Builder, SSAValue, list[int], bool], SSAValue]


def _reduce(method: str) -> Importer:
    """A Reduce* op that is one rlx reduction (reduce_sum, reduce_mean, ...)."""
    return _reduce_with(lambda b, x, axes, keepdims: getattr(b, method)(x, axes, keepdims))


def _reduce_with(reduction: Reduction) -> Importer:
    """A Reduce* op: `axes` (input or, before opset 18/13, attribute; none = all, or
    the identity with noop_with_empty_axes) and `keepdims`, computed by `reduction`."""

    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        x = ctx.tensor(inputs[0])
        axes = axes_operand(node, inputs, 1)
        keepdims = bool(node_attribute(node, "keepdims", 1))
        if not axes:
            if node_attribute(node, "noop_with_empty_axes", 0):
                return [x]
            axes = list(range(len(shape_of(x.type))))
        return [reduction(ctx.builder, x, axes, keepdims)]

    return convert


def _log_sum_exp(b: Builder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
    """log(sum(exp(x))) as max + log(sum(exp(x - max))): no overflow for large x
    (an all -inf slice gives -inf - -inf = NaN in the shift, so the max is zeroed where infinite).
    Over an empty axis the sum is 0 and the result -inf, with no max to take."""
    shape = shape_of(x.type)
    if any(shape[a] == 0 for a in axes):
        return b.log(b.reduce_sum(b.exp(x), axes, keepdims))
    peak = b.reduce_max(x, axes, True)
    finite = b.where(
        b.compare("eq", b.abs(peak), b.constant(np.inf, element_name(x))), b.constant(0.0, element_name(x)), peak
    )
    total = b.add(b.log(b.reduce_sum(b.exp(b.sub(x, finite)), axes, True)), finite)
    return total if keepdims else b.reshape(total, _dropped(shape_of(total.type), axes))


def _dropped(shape: Sequence[int], axes: list[int]) -> list[int]:
    """`shape` without the (kept, size-1) reduced axes."""
    drop = {a % len(shape) for a in axes}
    return [n for a, n in enumerate(shape) if a not in drop]


def _extremum(method: str) -> Reduction:
    """ReduceMax/ReduceMin: rlx's reduce_max/min, plus what ONNX defines beyond it: on
    bool (computed on ui8) and over an empty axis (the identity: -inf/+inf, the
    integer type's min/max, False/True)."""
    largest = method == "reduce_max"

    def reduce(b: Builder, x: SSAValue, axes: list[int], keepdims: bool) -> SSAValue:
        dtype = dtypes.from_ir(element_type(x.type))
        shape = shape_of(x.type)
        if any(shape[a] == 0 for a in axes):
            kept = [1 if a in {k % len(shape) for k in axes} else n for a, n in enumerate(shape)]
            out = kept if keepdims else _dropped(kept, axes)
            return b.constant(np.full(out, _identity_of(dtype, largest), dtype.numpy), dtype.name)
        if dtype.kind is Kind.BOOL:
            return b.cast(getattr(b, method)(b.cast(x, "ui8"), axes, keepdims), dtype.name)
        return getattr(b, method)(x, axes, keepdims)

    return reduce


def _identity_of(dtype: dtypes.DType, largest: bool) -> object:
    """The identity of max (largest) or min over `dtype`: the other end of its range."""
    if dtype.kind is Kind.BOOL:
        return not largest
    if dtype.kind is Kind.FLOAT:
        return -np.inf if largest else np.inf
    info = np.iinfo(dtype.numpy)
    return info.min if largest else info.max


REDUCTIONS: dict[str, Reduction] = {
    "ReduceMax": _extremum("reduce_max"),
    "ReduceMin": _extremum("reduce_min"),
    "ReduceL1": lambda b, x, axes, keep: b.reduce_sum(b.abs(x), axes, keep),
    "ReduceL2": lambda b, x, axes, keep: b.sqrt(b.reduce_sum(b.mul(x, x), axes, keep)),
    "ReduceSumSquare": lambda b, x, axes, keep: b.reduce_sum(b.mul(x, x), axes, keep),
    "ReduceLogSum": lambda b, x, axes, keep: b.log(b.reduce_sum(x, axes, keep)),
    "ReduceLogSumExp": _log_sum_exp,
}
"""The Reduce* ops ONNX defines as a formula around a sum, composed from rlx ops."""


def _widened(b: Builder, x: SSAValue) -> tuple[SSAValue, Callable[[SSAValue], SSAValue]]:
    """x in f32 if it is f16 or bf16, and the cast back: a formula composed of several
    rlx ops then rounds once to the narrow type, as rlx's own ops do, not once per op."""
    name = element_name(x)
    if name not in ("f16", "bf16"):
        return x, lambda y: y
    return b.cast(x, "f32"), lambda y: b.cast(y, name)


def _relu_like(alpha_default: float, formula: str) -> Importer:
    """LeakyRelu and Elu: x where x >= 0, else alpha·x (LeakyRelu) or alpha·(exp(x) − 1) (Elu)."""

    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        b = ctx.builder
        x, narrow = _widened(b, ctx.tensor(inputs[0]))
        element = element_name(x)
        alpha = b.constant(float(node_attribute(node, "alpha", alpha_default)), element)
        zero = b.constant(0.0, element)
        negative = b.mul(alpha, x) if formula == "leaky" else b.mul(alpha, b.sub(b.exp(x), b.constant(1.0, element)))
        return [narrow(b.where(b.compare("ge", x, zero), x, negative))]

    return convert


def _gelu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Gelu (opset 20): approximate "none" is rlx.gelu (erf), "tanh" rlx.gelu_approx."""
    approximate = node_attribute(node, "approximate", b"none").decode()
    name = {"none": "gelu", "tanh": "gelu_approx"}.get(approximate)
    if name is None:
        raise Unsupported(f"approximate '{approximate}' is not one of none, tanh")
    return [ctx.builder.unary(name, ctx.tensor(inputs[0]))]


def _constant_like(ctx: Import, x: SSAValue, node: onnx.NodeProto, name: str, default: float) -> SSAValue:
    """A float attribute as a scalar constant of x's element type."""
    return ctx.builder.constant(float(node_attribute(node, name, default)), element_name(x))


def _selu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """gamma · (x where x > 0, else alpha · (exp(x) − 1))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))
    alpha = _constant_like(ctx, x, node, "alpha", 1.67326319217681884765625)
    gamma = _constant_like(ctx, x, node, "gamma", 1.05070102214813232421875)
    negative = b.mul(alpha, b.sub(b.exp(x), b.constant(1.0, element_name(x))))
    return [narrow(b.mul(gamma, b.where(b.compare("gt", x, b.constant(0.0, element_name(x))), x, negative)))]


def _celu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """max(0, x) + min(0, alpha · (exp(x / alpha) − 1))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))
    alpha, zero = _constant_like(ctx, x, node, "alpha", 1.0), b.constant(0.0, element_name(x))
    negative = b.mul(alpha, b.sub(b.exp(b.div(x, alpha)), b.constant(1.0, element_name(x))))
    return [narrow(b.add(b.max(x, zero), b.min(negative, zero)))]


def _thresholded_relu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x where x > alpha, else 0."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    above = b.compare("gt", x, _constant_like(ctx, x, node, "alpha", 1.0))
    return [b.where(above, x, b.constant(0.0, element_name(x)))]


def _swish(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x · sigmoid(alpha · x) (opset 24): rlx.silu at alpha = 1."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))
    alpha = float(node_attribute(node, "alpha", 1.0))
    if alpha == 1.0:
        return [narrow(b.silu(x))]
    return [narrow(b.mul(x, b.sigmoid(b.mul(x, b.constant(alpha, element_name(x))))))]


def _shrink(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x + bias below −lambd, x − bias above lambd, 0 between."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    element = element_name(x)
    lambd, bias = (float(node_attribute(node, n, d)) for n, d in (("lambd", 0.5), ("bias", 0.0)))
    zero = b.constant(0, element)
    above = b.where(b.compare("gt", x, b.constant(lambd, element)), b.sub(x, b.constant(bias, element)), zero)
    return [b.where(b.compare("lt", x, b.constant(-lambd, element)), b.add(x, b.constant(bias, element)), above)]


def _prelu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """slope · x where x < 0, else x (slope broadcast to x)."""
    b = ctx.builder
    x, slope = (ctx.tensor(v) for v in inputs)
    negative = b.compare("lt", x, b.constant(0, element_name(x)))
    return [b.where(negative, b.mul(slope, x), x)]


def _not(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Logical not of a bool tensor: x == false."""
    x = ctx.tensor(inputs[0])
    return [ctx.builder.compare("eq", x, ctx.builder.constant(False, "i1"))]


def _bitwise_not(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """~x as x xor all ones (-1 in a signed type, the maximum in an unsigned one)."""
    x = ctx.tensor(inputs[0])
    dtype = dtypes.from_ir(element_type(x.type))
    ones = -1 if dtype.kind is Kind.INT else True if dtype.kind is Kind.BOOL else np.iinfo(dtype.numpy).max
    return [ctx.builder.bit_xor(x, ctx.builder.constant(ones, dtype.name))]


def _bit_shift(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """BitShift (unsigned integers): direction LEFT is rlx.shl, RIGHT rlx.shr."""
    x, amount = (ctx.tensor(v) for v in inputs)
    direction = node_attribute(node, "direction", b"").decode()
    if direction not in ("LEFT", "RIGHT"):
        raise Unsupported(f"direction '{direction}' is not LEFT or RIGHT")
    return [ctx.builder.binary("shl" if direction == "LEFT" else "shr", x, amount)]


def _is_nan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = ctx.tensor(inputs[0])
    return [ctx.builder.compare("ne", x, x)]


def _is_inf(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x == +inf (detect_positive) or x == -inf (detect_negative)."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    tests = [
        b.compare("eq", x, b.constant(sign * np.inf, element_name(x)))
        for sign, name in ((1, "detect_positive"), (-1, "detect_negative"))
        if node_attribute(node, name, 1)
    ]
    if not tests:  # neither sign detected: all false
        return [np.zeros(shape_of(x.type), np.bool_)]
    return [tests[0] if len(tests) == 1 else b.bit_or(*tests)]


def _mean(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """The elementwise mean of any number of inputs (broadcast): their sum / count."""
    total = ctx.tensor(_binary("add")(ctx, node, inputs)[0])
    return [ctx.builder.div(total, ctx.builder.constant(float(len(inputs)), element_name(total)))]


def _hard_sigmoid(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """max(0, min(1, alpha·x + beta))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))
    element = element_name(x)
    alpha, beta = (float(node_attribute(node, n, d)) for n, d in (("alpha", 0.2), ("beta", 0.5)))
    y = b.add(b.mul(x, b.constant(alpha, element)), b.constant(beta, element))
    return [narrow(b.max(b.min(y, b.constant(1.0, element)), b.constant(0.0, element)))]


def _clip(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    b = ctx.builder
    y = ctx.tensor(inputs[0])
    for position, name, bound in ((1, "min", b.max), (2, "max", b.min)):
        if len(inputs) > position and inputs[position] is not None:
            y = bound(y, ctx.tensor(inputs[position]))
        elif node_attribute(node, name) is not None:  # opsets < 11
            y = bound(y, b.constant(float(node_attribute(node, name)), element_name(y)))
    return [y]


def _mod(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """fmod=1: C's fmod (rlx.mod). fmod=0: the result takes the divisor's sign (Python's %)."""
    b = ctx.builder
    x, y = (ctx.tensor(v) for v in inputs)
    r = b.mod(x, y)
    if node_attribute(node, "fmod", 0):
        return [r]
    zero = b.constant(0, element_name(r))
    differs = b.bit_xor(b.compare("lt", r, zero), b.compare("lt", y, zero))
    return [b.where(b.bit_and(b.compare("ne", r, zero), differs), b.add(r, y), r)]


def _pow(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """X ** Y in X's element type, where Y may have another (ONNX's T1), as ONNX's
    reference `np.power(x, y).astype(x.dtype)`: an integer base with a float exponent
    is computed in f64 and cast back; otherwise Y is cast to X's type, so integer
    powers stay exact (rlx.pow on integers squares and multiplies)."""
    b = ctx.builder
    x, y = (ctx.tensor(v) for v in inputs)
    base, exponent = dtypes.from_ir(element_type(x.type)), dtypes.from_ir(element_type(y.type))
    if base.kind is not Kind.FLOAT and exponent.kind is Kind.FLOAT:
        return [b.cast(b.binary("pow", b.cast(x, "f64"), b.cast(y, "f64")), base.name)]
    return [b.binary("pow", x, y if exponent == base else b.cast(y, base.name))]


def _expand(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, shape = ctx.tensor(inputs[0]), known(inputs[1], "target shape")
    target = np.broadcast_shapes(shape_of(x.type), tuple(int(d) for d in shape))
    return [ctx.builder.expand(x, target)]


def _slice(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = present(inputs[0])
    shape = ctx.shape(x)
    starts = known(_operand(node, inputs, 1, "starts"), "starts")
    ends = known(_operand(node, inputs, 2, "ends"), "ends")
    axes = _operand(node, inputs, 3, "axes")
    axes = np.arange(len(starts)) if axes is None else axes
    steps = _operand(node, inputs, 4, "steps")
    steps = np.ones(len(starts), np.int64) if steps is None else steps
    index = [slice(None)] * len(shape)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        index[int(axis) % len(shape)] = slice(int(start), int(end), int(step))
    if isinstance(x, np.ndarray):
        return [x[tuple(index)]]
    ranges = [range(n)[s] for n, s in zip(shape, index)]
    first = [r.start if len(r) else 0 for r in ranges]
    step = [r.step for r in ranges]
    return [ctx.builder.slice(x, first, step, [len(r) for r in ranges])]


def _split(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Pieces along `axis`: the `split` input's sizes, or `num_outputs` (the last one smaller) equal parts."""
    x = ctx.tensor(inputs[0])
    shape = shape_of(x.type)
    axis = checked_axis(int(node_attribute(node, "axis", 0)), len(shape))
    split = _operand(node, inputs, 1, "split")
    if split is not None:
        sizes = [int(n) for n in split]
    else:
        parts = int(node_attribute(node, "num_outputs", len(node.output)))
        size = -(-shape[axis] // parts)
        sizes = [min(size, shape[axis] - k * size) for k in range(parts)]
    starts = np.cumsum([0, *sizes[:-1]])
    return [ctx.builder.narrow(x, axis, int(start), n) for start, n in zip(starts, sizes)]


def _pad(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """`pads` [begins..., ends...] on `axes` (default all); modes constant, edge, reflect, wrap.
    Negative pads crop (as onnxruntime's do), before the others pad: edge, reflect and
    wrap read the cropped tensor."""
    x = ctx.tensor(inputs[0])
    rank = len(shape_of(x.type))
    pads = [int(p) for p in known(_operand(node, inputs, 1, "pads"), "pads")]
    axes = axes_operand(node, inputs, 3) or list(range(rank))
    before, after = [0] * rank, [0] * rank
    for k, axis in enumerate(axes):
        before[axis % rank], after[axis % rank] = pads[k], pads[k + len(axes)]
    x = cropped(ctx.builder, x, [max(-p, 0) for p in before], [max(-p, 0) for p in after])
    before, after = [max(p, 0) for p in before], [max(p, 0) for p in after]
    mode = {"constant": "constant", "edge": "replicate", "reflect": "reflect", "wrap": "circular"}.get(
        node_attribute(node, "mode", b"constant").decode()
    )
    if mode is None:
        raise Unsupported(f"pad mode {node_attribute(node, 'mode')!r} is not supported")
    value = 0.0
    if len(inputs) > 2 and inputs[2] is not None:
        value = float(known(inputs[2], "constant_value").reshape(-1)[0])
    elif node_attribute(node, "value") is not None:  # opsets < 11
        value = float(node_attribute(node, "value"))
    return [ctx.builder.pad(x, before, after, mode, value)]


def cropped(b: Builder, x: SSAValue, before: list[int], after: list[int]) -> SSAValue:
    """x without `before` and `after` elements at each axis's ends."""
    if not any(before + after):
        return x
    shape = shape_of(x.type)
    lengths = [n - lo - hi for n, lo, hi in zip(shape, before, after)]
    if any(n < 0 for n in lengths):
        raise Unsupported(f"negative pads {before} and {after} crop more than the input's shape {list(shape)}")
    return b.slice(x, before, [1] * len(shape), lengths)


def _hardmax(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """1 at the first maximum along `axis`, 0 elsewhere: its argmax compared with an iota."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    shape = shape_of(x.type)
    axis = checked_axis(int(node_attribute(node, "axis", -1)), len(shape))
    iota = np.arange(shape[axis]).reshape([shape[axis]] + [1] * (len(shape) - axis - 1))
    first = b.compare("eq", b.argmax(x, axis, keepdims=True), b.constant(iota, "i64"))
    return [b.cast(first, element_name(x))]


def _eye_like(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Ones on diagonal k of a 2-D shape like the input's (its type, or `dtype`): known at import."""
    shape = ctx.shape(present(inputs[0]))
    if len(shape) != 2:
        raise Unsupported(f"its input has shape {list(shape)}; EyeLike takes a 2-D one")
    code = node_attribute(node, "dtype")
    name = ELEMENT_TYPES.get(int(code)) if code is not None else element_name(present(inputs[0]))
    if name is None:
        raise Unsupported(f"dtype {code} is not an element type rlx computes on")
    return [np.eye(*shape, k=int(node_attribute(node, "k", 0)), dtype=dtypes.from_name(name).numpy)]


def _arg(method: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        x = ctx.tensor(inputs[0])
        axis = int(node_attribute(node, "axis", 0))
        keepdims, last = bool(node_attribute(node, "keepdims", 1)), bool(node_attribute(node, "select_last_index", 0))
        return [getattr(ctx.builder, method)(x, axis, keepdims, last)]

    return convert


IMPORTERS: dict[str, Importer] = {
    **{
        op: _unary(name)
        for op, name in {
            "Abs": "abs",
            "Neg": "neg",
            "Exp": "exp",
            "Log": "log",
            "Sqrt": "sqrt",
            "Tanh": "tanh",
            "Sigmoid": "sigmoid",
            "Relu": "relu",
            "Sin": "sin",
            "Cos": "cos",
            "Tan": "tan",
            "Atan": "atan",
            "Erf": "erf",
            "Floor": "floor",
            "Ceil": "ceil",
            "Sign": "sign",
            "Reciprocal": "recip",
            "Softplus": "softplus",
            "Softsign": "softsign",
            "Round": "round",
            "HardSwish": "hard_swish",
            "Mish": "mish",
        }.items()
    },
    **{
        op: _binary(name)
        for op, name in {
            "Add": "add",
            "Sub": "sub",
            "Mul": "mul",
            "Div": "div",
            "Max": "max",
            "Min": "min",
            "Sum": "add",
            "And": "bit_and",
            "Or": "bit_or",
            "Xor": "bit_xor",
            "BitwiseAnd": "bit_and",
            "BitwiseOr": "bit_or",
            "BitwiseXor": "bit_xor",
        }.items()
    },
    **{
        op: _compare(name)
        for op, name in {
            "Equal": "eq",
            "Less": "lt",
            "Greater": "gt",
            "LessOrEqual": "le",
            "GreaterOrEqual": "ge",
        }.items()
    },
    "Identity": _identity,
    "Dropout": _dropout,
    "Constant": _constant,
    "Shape": _shape,
    "Size": _size,
    "Range": _range,
    "ConstantOfShape": _constant_of_shape,
    "Cast": _cast,
    "CastLike": _cast_like,
    "Where": _where,
    "MatMul": _matmul,
    "Gemm": _gemm,
    "Transpose": _transpose,
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": _concat,
    "Gather": _gather,
    "GatherElements": _gather_elements,
    "GatherND": _gather_nd,
    "ScatterElements": _scatter_elements,
    "Scatter": _scatter_elements,
    "ScatterND": _scatter_nd,
    "Softmax": _softmax(False),
    "LogSoftmax": _softmax(True),
    "ReduceSum": _reduce("reduce_sum"),
    "ReduceMean": _reduce("reduce_mean"),
    "ReduceProd": _reduce("reduce_prod"),
    **{op: _reduce_with(reduction) for op, reduction in REDUCTIONS.items()},
    "LeakyRelu": _relu_like(0.01, "leaky"),
    "Elu": _relu_like(1.0, "elu"),
    "HardSigmoid": _hard_sigmoid,
    "Gelu": _gelu,
    "Selu": _selu,
    "Celu": _celu,
    "ThresholdedRelu": _thresholded_relu,
    "Swish": _swish,
    "Shrink": _shrink,
    "PRelu": _prelu,
    "Not": _not,
    "BitwiseNot": _bitwise_not,
    "BitShift": _bit_shift,
    "IsNaN": _is_nan,
    "IsInf": _is_inf,
    "Mean": _mean,
    "Clip": _clip,
    "Mod": _mod,
    "Pow": _pow,
    "Expand": _expand,
    "Slice": _slice,
    "Split": _split,
    "Pad": _pad,
    "ArgMax": _arg("argmax"),
    "Hardmax": _hardmax,
    "EyeLike": _eye_like,
    "ArgMin": _arg("argmin"),
}
"""How each supported ONNX op type but the recurrent ones and Scan becomes rlx ops."""
