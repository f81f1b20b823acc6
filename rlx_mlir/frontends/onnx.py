"""ONNX import: an ONNX model as one rlx function.

    module = rlx_mlir.frontends.onnx.load("model.onnx", input_shapes={"x": (1, 128)})
    exe = rlx_mlir.compile(module)

The function's arguments and results follow the graph's inputs (those not
given by an initializer) and outputs, in order. Every value's shape must be
static: `input_shapes` fixes dynamic input dimensions (as onnx-mlir's
`--shapeInformation`). Values that do not depend on an input - initializers,
`Constant` nodes and the shape arithmetic exporters write (Shape -> Gather ->
Unsqueeze -> Concat -> Reshape) - are folded with NumPy at import, so shape
operands are known; a shape that truly depends on input data is an error
naming the node.

Each supported op type is one small function in `IMPORTERS` (opsets 13 and
up). Where ONNX's meaning differs from an rlx op's, the importer composes it
from rlx ops (Mod with fmod=0, Gemm's alpha and beta, HardSigmoid's alpha and
beta, Elu's alpha, ...). A model with nodes it cannot import fails with one
`CompileError` listing every such node (op type, name,
reason), not only the first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, reduce
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.errors import ArgumentError, CompileError, RlxError

ELEMENT_TYPES = {
    onnx.TensorProto.FLOAT: "f32",
    onnx.TensorProto.DOUBLE: "f64",
    onnx.TensorProto.FLOAT16: "f16",
    onnx.TensorProto.BFLOAT16: "bf16",
    onnx.TensorProto.FLOAT8E4M3FN: "f8E4M3FN",
    onnx.TensorProto.FLOAT8E4M3FNUZ: "f8E4M3FNUZ",
    onnx.TensorProto.FLOAT8E5M2: "f8E5M2",
    onnx.TensorProto.FLOAT8E5M2FNUZ: "f8E5M2FNUZ",
    onnx.TensorProto.BOOL: "i1",
    onnx.TensorProto.INT4: "i4",
    onnx.TensorProto.INT8: "i8",
    onnx.TensorProto.INT16: "i16",
    onnx.TensorProto.INT32: "i32",
    onnx.TensorProto.INT64: "i64",
    onnx.TensorProto.UINT4: "ui4",
    onnx.TensorProto.UINT8: "ui8",
    onnx.TensorProto.UINT16: "ui16",
    onnx.TensorProto.UINT32: "ui32",
    onnx.TensorProto.UINT64: "ui64",
    onnx.TensorProto.COMPLEX64: "complex<f32>",
    onnx.TensorProto.COMPLEX128: "complex<f64>",
}
"""ONNX element types rlx computes on (not: strings, FLOAT8E8M0, FLOAT4E2M1, INT2/UINT2)."""

NUMPY_NAMES = {d.numpy: d.name for d in dtypes.DTYPES}
"""The rlx name of each NumPy dtype a known array may have (ml_dtypes' included)."""

Value = SSAValue | np.ndarray
"""A graph value: computed at run time, or known at import (folded with NumPy)."""


class Unsupported(Exception):
    """A node the importer cannot map (the reason is the message)."""


@dataclass
class Import:
    """The state of one import: the Builder and what each ONNX name holds."""

    builder: Builder
    values: dict[str, Value] = field(default_factory=dict)
    opset: int = 13
    """The model's version of the standard domain (ops whose meaning changed by version check it)."""

    def tensor(self, value: Value) -> SSAValue:
        """`value` as an rlx value (a known array becomes an `rlx.constant`)."""
        if isinstance(value, SSAValue):
            return value
        name = NUMPY_NAMES.get(value.dtype)
        if name is None:
            raise Unsupported(f"a constant of element type {value.dtype} is not supported")
        return self.builder.constant(value, name)

    def shape(self, value: Value) -> tuple[int, ...]:
        return tuple(value.shape) if isinstance(value, np.ndarray) else shape_of(value.type)


def element_name(value: SSAValue) -> str:
    """The rlx name of a value's element type (for constants of the same type)."""
    return dtypes.from_ir(element_type(value.type)).name


def known(value: Value | None, what: str) -> np.ndarray:
    """A shape-like operand must be known at import."""
    if value is None or not isinstance(value, np.ndarray):
        raise Unsupported(f"its {what} depends on the inputs at run time; rlx needs it at import")
    return value


def _attribute(node: onnx.NodeProto, name: str, default: object = None) -> object:
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


# ---------------------------------------------------------------------------
# importers, one per op type: (import, node, inputs) -> outputs
# ---------------------------------------------------------------------------

Importer = Callable[[Import, onnx.NodeProto, list[Value | None]], list[Value]]


def _unary(name: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        return [ctx.builder.unary(name, ctx.tensor(inputs[0]))]  # type: ignore[arg-type]

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
        a, b = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
        return [ctx.builder.compare(name, a, b)]

    return convert


def _identity(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    return [inputs[0]]  # type: ignore[list-item]


def _constant(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    value = _attribute(node, "value")
    if value is not None:
        return [numpy_helper.to_array(value)]  # type: ignore[arg-type]
    for name, dtype in CONSTANT_LISTS.items():
        listed = _attribute(node, name)
        if listed is not None:
            return [np.asarray(listed, dtype)]
    raise Unsupported("only Constant(value, value_int(s), value_float(s)) is supported")


CONSTANT_LISTS = {"value_int": np.int64, "value_ints": np.int64, "value_float": np.float32, "value_floats": np.float32}
"""Constant's scalar and list attributes and the element type ONNX gives them."""


def _constant_of_shape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """A tensor of the (known) shape filled with `value`'s one element (a float 0 by default):
    known at import, as exporters use it for zero initial states."""
    shape = [int(d) for d in known(inputs[0], "shape")]
    value = _attribute(node, "value")
    fill = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)  # type: ignore[arg-type]
    return [np.full(shape, fill[0], dtype=fill.dtype)]


def _shape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = np.array(ctx.shape(inputs[0]), dtype=np.int64)  # type: ignore[arg-type]
    start, end = _attribute(node, "start", 0), _attribute(node, "end", None)
    return [shape[start:end]]


def _size(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Size reads only its input's (static) shape, so it is known at import."""
    return [np.array(int(np.prod(ctx.shape(inputs[0]))), np.int64)]  # type: ignore[arg-type]


def _range(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Range's length depends on its operands' values, so they must be known at import;
    ONNX's reference: `arange(start, limit, delta)` in the operands' element type."""
    start, limit, delta = (known(v, name) for v, name in zip(inputs, ("start", "limit", "delta")))
    scalar = int if start.dtype.kind in "iu" else float  # bf16 and float8 arrays have kind 'V'
    return [np.arange(scalar(start), scalar(limit), scalar(delta)).astype(start.dtype)]


def _cast(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    to = _attribute(node, "to")
    target = ELEMENT_TYPES.get(to)  # type: ignore[arg-type]
    if target is None:
        raise Unsupported(f"Cast to {onnx.TensorProto.DataType.Name(to)} is not supported")  # type: ignore[arg-type]
    return [_cast_to(ctx, node, ctx.tensor(inputs[0]), target)]  # type: ignore[arg-type]


def _cast_like(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    like = inputs[1]
    target = NUMPY_NAMES.get(like.dtype) if isinstance(like, np.ndarray) else element_name(like)  # type: ignore[union-attr]
    if target is None:
        raise Unsupported(f"CastLike to {like.dtype} is not supported")  # type: ignore[union-attr]
    return [_cast_to(ctx, node, ctx.tensor(inputs[0]), target)]  # type: ignore[arg-type]


def _cast_to(ctx: Import, node: onnx.NodeProto, x: SSAValue, target: str) -> SSAValue:
    """ONNX's Cast: `saturate` (default 1) is rlx.cast's flag. ONNX leaves a float
    out of an integer type's range undefined; its reference (ml_dtypes) converts
    to a wide integer and wraps, which its int4 tests rely on (-9 -> 7): so a
    float goes to i4/ui4 through i32 (truncating, then wrapping), while rlx's own
    float -> int4 cast saturates."""
    saturate = bool(_attribute(node, "saturate", 1))
    source = dtypes.from_ir(element_type(x.type))
    if source.kind is dtypes.Kind.FLOAT and target in ("i4", "ui4"):
        x = ctx.builder.cast(x, "i32")
    return ctx.builder.cast(x, target, saturate=saturate)


def _where(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    c, a, b = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    return [ctx.builder.where(c, a, b)]


def _matmul(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    a, b = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    return [ctx.builder.matmul(a, b)]


def _gemm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """alpha · op(A) · op(B) + beta · C."""
    b = ctx.builder
    a, w = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])  # type: ignore[arg-type]
    y = b.matmul(a, w, bool(_attribute(node, "transA", 0)), bool(_attribute(node, "transB", 0)))
    element = element_name(y)
    alpha, beta = float(_attribute(node, "alpha", 1.0)), float(_attribute(node, "beta", 1.0))  # type: ignore[arg-type]
    if alpha != 1.0:
        y = b.mul(y, b.constant(alpha, element))
    if len(inputs) > 2 and inputs[2] is not None and beta != 0.0:
        c = ctx.tensor(inputs[2])
        y = b.add(y, c if beta == 1.0 else b.mul(c, b.constant(beta, element)))
    return [y]


def _transpose(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = inputs[0]
    rank = len(ctx.shape(x))  # type: ignore[arg-type]
    perm = list(_attribute(node, "perm", list(reversed(range(rank)))))  # type: ignore[arg-type]
    if sorted(perm) != list(range(rank)):
        raise Unsupported(f"perm {perm} is not a permutation of the {rank} axes")
    if isinstance(x, np.ndarray):
        return [np.transpose(x, perm)]
    return [ctx.builder.transpose(x, perm)]  # type: ignore[arg-type]


def _reshape_to(ctx: Import, x: Value, shape: Sequence[int]) -> Value:
    if isinstance(x, np.ndarray):
        return x.reshape(shape)
    return ctx.builder.reshape(x, list(shape))


def _reshape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, target = inputs[0], known(inputs[1], "target shape")
    current = ctx.shape(x)  # type: ignore[arg-type]
    allow_zero = bool(_attribute(node, "allowzero", 0))
    shape = [int(current[k]) if d == 0 and not allow_zero else int(d) for k, d in enumerate(target)]
    if -1 in shape:
        rest = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = int(np.prod(current)) // rest if rest else 0
    return [_reshape_to(ctx, x, shape)]  # type: ignore[arg-type]


def _flatten(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = ctx.shape(inputs[0])  # type: ignore[arg-type]
    axis = int(_attribute(node, "axis", 1))  # type: ignore[arg-type]
    axis = axis + len(shape) if axis < 0 else axis  # in [-rank, rank]
    return [_reshape_to(ctx, inputs[0], (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))]  # type: ignore[arg-type]


def _axes(node: onnx.NodeProto, inputs: list[Value | None], position: int) -> list[int] | None:
    """`axes` from the input at `position` (opset 13+) or the attribute."""
    if len(inputs) > position and inputs[position] is not None:
        return [int(a) for a in known(inputs[position], "axes")]
    value = _attribute(node, "axes")
    return None if value is None else [int(a) for a in value]  # type: ignore[union-attr]


def _operand(node: onnx.NodeProto, inputs: list[Value | None], position: int, attribute: str) -> np.ndarray | None:
    """A shape-like operand: the input at `position` (opset 13+; Pad 11+, Clip 11+,
    Slice 10+) or, in older opsets, the attribute of that name; None if neither is given."""
    if len(inputs) > position and inputs[position] is not None:
        return known(inputs[position], attribute)
    value = _attribute(node, attribute)
    return None if value is None else np.asarray(value)


def _unsqueeze(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = list(ctx.shape(inputs[0]))  # type: ignore[arg-type]
    axes = sorted(a % (len(shape) + len(_axes(node, inputs, 1) or [])) for a in _axes(node, inputs, 1) or [])
    for a in axes:
        shape.insert(a, 1)
    return [_reshape_to(ctx, inputs[0], shape)]  # type: ignore[arg-type]


def _squeeze(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = ctx.shape(inputs[0])  # type: ignore[arg-type]
    axes = _axes(node, inputs, 1)
    drop = {a % len(shape) for a in axes} if axes is not None else {a for a, n in enumerate(shape) if n == 1}
    return [_reshape_to(ctx, inputs[0], [n for a, n in enumerate(shape) if a not in drop])]  # type: ignore[arg-type]


def _concat(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    axis = int(_attribute(node, "axis"))  # type: ignore[arg-type]
    if all(isinstance(v, np.ndarray) for v in inputs):
        return [np.concatenate(inputs, axis)]  # type: ignore[arg-type]
    return [ctx.builder.concat([ctx.tensor(v) for v in inputs], axis)]  # type: ignore[arg-type]


def _gather(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = inputs
    axis = int(_attribute(node, "axis", 0))  # type: ignore[arg-type]
    if isinstance(data, np.ndarray) and isinstance(indices, np.ndarray):
        return [np.take(data, indices, axis)]
    return [ctx.builder.gather(ctx.tensor(data), ctx.tensor(indices), axis)]  # type: ignore[arg-type]


def _gather_elements(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    return [ctx.builder.gather_elements(data, indices, int(_attribute(node, "axis", 0)))]  # type: ignore[arg-type]


def _gather_nd(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    return [ctx.builder.gather_nd(data, indices, int(_attribute(node, "batch_dims", 0)))]  # type: ignore[arg-type]


def _reduction(node: onnx.NodeProto) -> str:
    """ScatterElements/ScatterND's `reduction` (none, add, mul, max, min): rlx's scatter ops take the same names."""
    return _attribute(node, "reduction", b"none").decode()  # type: ignore[union-attr]


def _scatter_elements(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ScatterElements, and the deprecated Scatter (the same op without `reduction`):
    rlx.scatter_elements has ONNX's meaning (negative indices wrap, updates applied in order)."""
    data, indices, updates = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    axis = int(_attribute(node, "axis", 0))  # type: ignore[arg-type]
    return [ctx.builder.scatter_elements(data, indices, updates, axis, _reduction(node))]


def _scatter_nd(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    data, indices, updates = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    return [ctx.builder.scatter_nd(data, indices, updates, _reduction(node))]


def _softmax(log: bool) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        axis = int(_attribute(node, "axis", -1))  # type: ignore[arg-type]
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
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
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
        axes = _axes(node, inputs, 1)
        keepdims = bool(_attribute(node, "keepdims", 1))
        if not axes:
            if _attribute(node, "noop_with_empty_axes", 0):
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
    finite = b.where(b.compare("eq", b.abs(peak), b.constant(np.inf, element_name(x))),
                     b.constant(0.0, element_name(x)), peak)
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
        x, narrow = _widened(b, ctx.tensor(inputs[0]))  # type: ignore[arg-type]
        element = element_name(x)
        alpha = b.constant(float(_attribute(node, "alpha", alpha_default)), element)  # type: ignore[arg-type]
        zero = b.constant(0.0, element)
        negative = b.mul(alpha, x) if formula == "leaky" else b.mul(alpha, b.sub(b.exp(x), b.constant(1.0, element)))
        return [narrow(b.where(b.compare("ge", x, zero), x, negative))]

    return convert


def _gelu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Gelu (opset 20): approximate "none" is rlx.gelu (erf), "tanh" rlx.gelu_approx."""
    approximate = _attribute(node, "approximate", b"none").decode()  # type: ignore[union-attr]
    name = {"none": "gelu", "tanh": "gelu_approx"}.get(approximate)
    if name is None:
        raise Unsupported(f"approximate '{approximate}' is not one of none, tanh")
    return [ctx.builder.unary(name, ctx.tensor(inputs[0]))]  # type: ignore[arg-type]


def _constant_like(ctx: Import, x: SSAValue, node: onnx.NodeProto, name: str, default: float) -> SSAValue:
    """A float attribute as a scalar constant of x's element type."""
    return ctx.builder.constant(float(_attribute(node, name, default)), element_name(x))  # type: ignore[arg-type]


def _selu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """gamma · (x where x > 0, else alpha · (exp(x) − 1))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))  # type: ignore[arg-type]
    alpha = _constant_like(ctx, x, node, "alpha", 1.67326319217681884765625)
    gamma = _constant_like(ctx, x, node, "gamma", 1.05070102214813232421875)
    negative = b.mul(alpha, b.sub(b.exp(x), b.constant(1.0, element_name(x))))
    return [narrow(b.mul(gamma, b.where(b.compare("gt", x, b.constant(0.0, element_name(x))), x, negative)))]


def _celu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """max(0, x) + min(0, alpha · (exp(x / alpha) − 1))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))  # type: ignore[arg-type]
    alpha, zero = _constant_like(ctx, x, node, "alpha", 1.0), b.constant(0.0, element_name(x))
    negative = b.mul(alpha, b.sub(b.exp(b.div(x, alpha)), b.constant(1.0, element_name(x))))
    return [narrow(b.add(b.max(x, zero), b.min(negative, zero)))]


def _thresholded_relu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x where x > alpha, else 0."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    above = b.compare("gt", x, _constant_like(ctx, x, node, "alpha", 1.0))
    return [b.where(above, x, b.constant(0.0, element_name(x)))]


def _prelu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """slope · x where x < 0, else x (slope broadcast to x)."""
    b = ctx.builder
    x, slope = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    negative = b.compare("lt", x, b.constant(0, element_name(x)))
    return [b.where(negative, b.mul(slope, x), x)]


def _not(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Logical not of a bool tensor: x == false."""
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    return [ctx.builder.compare("eq", x, ctx.builder.constant(False, "i1"))]


def _bitwise_not(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """~x as x xor all ones (-1 in a signed type, the maximum in an unsigned one)."""
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    dtype = dtypes.from_ir(element_type(x.type))
    ones = -1 if dtype.kind is Kind.INT else True if dtype.kind is Kind.BOOL else np.iinfo(dtype.numpy).max
    return [ctx.builder.bit_xor(x, ctx.builder.constant(ones, dtype.name))]


def _bit_shift(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """BitShift (unsigned integers): direction LEFT is rlx.shl, RIGHT rlx.shr."""
    x, amount = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    direction = _attribute(node, "direction", b"").decode()  # type: ignore[union-attr]
    if direction not in ("LEFT", "RIGHT"):
        raise Unsupported(f"direction '{direction}' is not LEFT or RIGHT")
    return [ctx.builder.binary("shl" if direction == "LEFT" else "shr", x, amount)]


def _is_nan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    return [ctx.builder.compare("ne", x, x)]


def _is_inf(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x == +inf (detect_positive) or x == -inf (detect_negative)."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    tests = [b.compare("eq", x, b.constant(sign * np.inf, element_name(x)))
             for sign, name in ((1, "detect_positive"), (-1, "detect_negative")) if _attribute(node, name, 1)]
    if not tests:  # neither sign detected: all false
        return [np.zeros(shape_of(x.type), np.bool_)]
    return [tests[0] if len(tests) == 1 else b.bit_or(*tests)]


def _mean(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """The elementwise mean of any number of inputs (broadcast): their sum / count."""
    (total,) = _binary("add")(ctx, node, inputs)
    return [ctx.builder.div(total, ctx.builder.constant(float(len(inputs)), element_name(total)))]  # type: ignore[arg-type]


def _hard_sigmoid(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """max(0, min(1, alpha·x + beta))."""
    b = ctx.builder
    x, narrow = _widened(b, ctx.tensor(inputs[0]))  # type: ignore[arg-type]
    element = element_name(x)
    alpha, beta = (float(_attribute(node, n, d)) for n, d in (("alpha", 0.2), ("beta", 0.5)))  # type: ignore[arg-type]
    y = b.add(b.mul(x, b.constant(alpha, element)), b.constant(beta, element))
    return [narrow(b.max(b.min(y, b.constant(1.0, element)), b.constant(0.0, element)))]


def _clip(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    b = ctx.builder
    y = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    for position, name, bound in ((1, "min", b.max), (2, "max", b.min)):
        if len(inputs) > position and inputs[position] is not None:
            y = bound(y, ctx.tensor(inputs[position]))
        elif _attribute(node, name) is not None:  # opsets < 11
            y = bound(y, b.constant(float(_attribute(node, name)), element_name(y)))  # type: ignore[arg-type]
    return [y]


def _mod(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """fmod=1: C's fmod (rlx.mod). fmod=0: the result takes the divisor's sign (Python's %)."""
    b = ctx.builder
    x, y = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    r = b.mod(x, y)
    if _attribute(node, "fmod", 0):
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
    x, y = (ctx.tensor(v) for v in inputs)  # type: ignore[arg-type]
    base, exponent = dtypes.from_ir(element_type(x.type)), dtypes.from_ir(element_type(y.type))
    if base.kind is not Kind.FLOAT and exponent.kind is Kind.FLOAT:
        return [b.cast(b.binary("pow", b.cast(x, "f64"), b.cast(y, "f64")), base.name)]
    return [b.binary("pow", x, y if exponent == base else b.cast(y, base.name))]


def _expand(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, shape = ctx.tensor(inputs[0]), known(inputs[1], "target shape")  # type: ignore[arg-type]
    target = np.broadcast_shapes(shape_of(x.type), tuple(int(d) for d in shape))
    return [ctx.builder.expand(x, target)]


def _slice(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = inputs[0]
    shape = ctx.shape(x)  # type: ignore[arg-type]
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
    return [ctx.builder.slice(x, first, step, [len(r) for r in ranges])]  # type: ignore[arg-type]


def _layer_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """(x − mean) / sqrt(var + epsilon) · scale + bias over the axes from `axis` on;
    the optional outputs Mean and InvStdDev keep the normalized axes as 1s."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    rank = len(shape_of(x.type))
    axes = list(range(int(_attribute(node, "axis", -1)) % rank, rank))  # type: ignore[arg-type]
    element = element_name(x)
    mean = b.reduce_mean(x, axes, True)
    centered = b.sub(x, mean)
    variance = b.reduce_mean(b.mul(centered, centered), axes, True)
    epsilon = b.constant(float(_attribute(node, "epsilon", 1e-5)), element)  # type: ignore[arg-type]
    inv_std_dev = b.rsqrt(b.add(variance, epsilon))
    y = b.mul(b.mul(centered, inv_std_dev), ctx.tensor(inputs[1]))  # type: ignore[arg-type]
    if len(inputs) > 2 and inputs[2] is not None:
        y = b.add(y, ctx.tensor(inputs[2]))
    return [y, mean, inv_std_dev]


def _split(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Pieces along `axis`: the `split` input's sizes, or `num_outputs` (the last one smaller) equal parts."""
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    shape = shape_of(x.type)
    axis = int(_attribute(node, "axis", 0))  # type: ignore[arg-type]
    if not -len(shape) <= axis < len(shape):
        raise Unsupported(f"axis {axis} is out of range for rank {len(shape)}")
    axis %= len(shape)
    split = _operand(node, inputs, 1, "split")
    if split is not None:
        sizes = [int(n) for n in split]
    else:
        parts = int(_attribute(node, "num_outputs", len(node.output)))  # type: ignore[arg-type]
        size = -(-shape[axis] // parts)
        sizes = [min(size, shape[axis] - k * size) for k in range(parts)]
    starts = np.cumsum([0, *sizes[:-1]])
    return [ctx.builder.narrow(x, axis, int(start), n) for start, n in zip(starts, sizes)]


def _pad(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """`pads` [begins..., ends...] on `axes` (default all); modes constant, edge, reflect, wrap."""
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    rank = len(shape_of(x.type))
    pads = [int(p) for p in known(_operand(node, inputs, 1, "pads"), "pads")]
    axes = _axes(node, inputs, 3) or list(range(rank))
    before, after = [0] * rank, [0] * rank
    for k, axis in enumerate(axes):
        before[axis % rank], after[axis % rank] = pads[k], pads[k + len(axes)]
    if any(p < 0 for p in before + after):
        raise Unsupported("negative pads (cropping) are not supported")
    mode = {"constant": "constant", "edge": "replicate", "reflect": "reflect", "wrap": "circular"}.get(
        _attribute(node, "mode", b"constant").decode()  # type: ignore[union-attr]
    )
    if mode is None:
        raise Unsupported(f"pad mode {_attribute(node, 'mode')!r} is not supported")
    value = 0.0
    if len(inputs) > 2 and inputs[2] is not None:
        value = float(known(inputs[2], "constant_value").reshape(-1)[0])
    elif _attribute(node, "value") is not None:  # opsets < 11
        value = float(_attribute(node, "value"))  # type: ignore[arg-type]
    return [ctx.builder.pad(x, before, after, mode, value)]


def _arg(method: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
        axis = int(_attribute(node, "axis", 0))  # type: ignore[arg-type]
        keepdims, last = bool(_attribute(node, "keepdims", 1)), bool(_attribute(node, "select_last_index", 0))
        return [getattr(ctx.builder, method)(x, axis, keepdims, last)]

    return convert


@dataclass(frozen=True)
class RecurrentKind:
    """How an ONNX recurrent op maps onto rlx's: its gate blocks in rlx's order
    (ONNX LSTM is i, o, f, c; rlx i, f, g, o. ONNX GRU z, r, h; rlx r, z, n),
    its default activations and whether rlx merges the two biases."""

    method: str
    gates: tuple[int, ...]
    activations: tuple[str, ...]
    states: int
    merged_bias: bool


RECURRENT = {
    "LSTM": RecurrentKind("lstm", (0, 2, 3, 1), ("Sigmoid", "Tanh", "Tanh"), 2, True),
    "GRU": RecurrentKind("gru", (1, 0, 2), ("Sigmoid", "Tanh"), 1, False),
    "RNN": RecurrentKind("rnn", (0,), ("Tanh",), 1, True),
}


def _gate_order(w: np.ndarray, kind: RecurrentKind) -> np.ndarray:
    """[D, G·H, ...] with its gate blocks in rlx's order."""
    blocks = np.split(w, len(kind.gates), axis=1)
    return np.concatenate([blocks[g] for g in kind.gates], axis=1)


def _recurrent(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ONNX LSTM/GRU/RNN as rlx.lstm/gru/rnn: weights repacked (constants, at
    import) into PyTorch's layout and gate order, X and Y transposed from
    ONNX's sequence-first layout, a reverse direction run on reversed time."""
    kind = RECURRENT[node.op_type]
    b = ctx.builder
    padded = [*inputs, *[None] * (8 - len(inputs))]
    x, w, r, bias, lengths, h0 = padded[:6]
    hidden = int(_attribute(node, "hidden_size"))  # type: ignore[arg-type]
    direction = _attribute(node, "direction", b"forward").decode()  # type: ignore[union-attr]
    layout = int(_attribute(node, "layout", 0))  # type: ignore[arg-type]
    activations = tuple(a.decode() for a in _attribute(node, "activations", []) or [])  # type: ignore[union-attr]
    relu = activations == ("Relu",) and node.op_type == "RNN"
    if activations and activations not in (kind.activations, kind.activations * 2) and not relu:
        raise Unsupported(f"activations {list(activations)} (rlx computes {list(kind.activations)})")
    if _attribute(node, "clip") is not None or _attribute(node, "input_forget", 0):
        raise Unsupported("clip and input_forget are not supported")
    if node.op_type == "GRU" and not _attribute(node, "linear_before_reset", 0):
        return _recurrence_by_scan(ctx, node, inputs, SCAN_CELLS["GRU"])
    if node.op_type == "LSTM" and padded[7] is not None:
        return _recurrence_by_scan(ctx, node, inputs, SCAN_CELLS["LSTM"])
    w, r = _gate_order(known(w, "W"), kind), _gate_order(known(r, "R"), kind)
    directions = w.shape[0]
    b_all = known(bias, "B") if bias is not None else np.zeros((directions, 2 * w.shape[1]), w.dtype)
    b_ih, b_hh = (_gate_order(part, kind) for part in np.split(b_all, 2, axis=1))
    x = ctx.tensor(x)  # type: ignore[arg-type]
    if layout == 0:
        x = b.transpose(x, [1, 0, 2])
    batch, seq = shape_of(x.type)[:2]
    if lengths is not None and not np.all(known(lengths, "sequence_lens") == seq):
        raise Unsupported("sequence_lens of unequal lengths (rlx runs every sequence to the same length)")
    reverse = direction == "reverse"
    if reverse:
        x = b.reverse(x, [1])
    weights = [b.constant(w.reshape(-1), _name(w)), b.constant(r.reshape(-1), _name(r))]
    if kind.merged_bias:
        weights.append(b.constant((b_ih + b_hh).reshape(-1), _name(w)))
    else:
        weights += [b.constant(b_ih.reshape(-1), _name(w)), b.constant(b_hh.reshape(-1), _name(w))]
    states = [padded[5], padded[6]][: kind.states]
    state = None
    if any(v is not None for v in states):
        state = [_state(ctx, v, (directions, batch, hidden), _name(w), layout) for v in states]
    extra = {"nonlinearity": "relu" if relu else "tanh"} if node.op_type == "RNN" else {}
    want_state = any(name for name in node.output[1:])
    results = getattr(b, kind.method)(
        x, *weights, hidden, 1, direction == "bidirectional", state=state, return_state=want_state, **extra
    )
    y, *final = results if want_state else (results,)
    if reverse:
        y = b.reverse(y, [1])
    y = b.reshape(y, [batch, seq, directions, hidden])
    y = b.transpose(y, [1, 2, 0, 3]) if layout == 0 else y
    final = [b.transpose(h, [1, 0, 2]) if layout == 1 else h for h in final]
    return [y, *final]


@dataclass(frozen=True)
class ScanCell:
    """A recurrent cell rlx's own ops do not compute, composed as an rlx.scan body: its
    gate count G (W is [D, G·H, I]), the [B, H] states it carries (packed along axis 1),
    the bias added to every step's input projection, the constants the body takes as
    broadcast inputs, and the body."""

    gates: int
    states: int
    projection_bias: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    constants: Callable[[np.ndarray, np.ndarray, np.ndarray, int], list[np.ndarray]]
    step: Callable[[int], Callable[..., SSAValue]]


def _recurrence_by_scan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None], cell: ScanCell) -> list[Value]:
    """ONNX LSTM/GRU as one rlx.scan per direction: every step's input projection (with
    its biases) is one matmul before the loop, the body does the hidden-state matmuls
    and the gates. Outputs Y [S, D, B, H] and each final state [D, B, H] (layout 1:
    batch first)."""
    b = ctx.builder
    x, w, r, bias, lengths, *initial = [*inputs, *[None] * (8 - len(inputs))][:8]
    hidden = int(_attribute(node, "hidden_size"))  # type: ignore[arg-type]
    direction = _attribute(node, "direction", b"forward").decode()  # type: ignore[union-attr]
    layout = int(_attribute(node, "layout", 0))  # type: ignore[arg-type]
    w, r = known(w, "W"), known(r, "R")
    directions, element = w.shape[0], _name(w)
    bias = known(bias, "B") if bias is not None else np.zeros((directions, 2 * cell.gates * hidden), w.dtype)
    peepholes = known(initial[2], "P") if len(initial) > 2 and initial[2] is not None else np.zeros(
        (directions, 3 * hidden), w.dtype)
    x = ctx.tensor(x)  # type: ignore[arg-type]
    if layout == 1:
        x = b.transpose(x, [1, 0, 2])  # [S, B, I]
    seq, batch = shape_of(x.type)[:2]
    if lengths is not None and not np.all(known(lengths, "sequence_lens") == seq):
        raise Unsupported("sequence_lens of unequal lengths (rlx runs every sequence to the same length)")
    states = [None if v is None else ctx.tensor(v) for v in initial[: cell.states]]
    states = [b.transpose(v, [1, 0, 2]) if v is not None and layout == 1 else v for v in states]  # [D, B, H]
    ys, finals = [], [[] for _ in range(cell.states)]
    for d in range(directions):
        reverse = direction == "reverse" or d == 1
        steps = b.reverse(x, [0]) if reverse else x
        w_bias, r_bias = np.split(bias[d], 2)
        projected = b.add(b.matmul(steps, b.constant(w[d], element), False, True),
                          b.constant(cell.projection_bias(w_bias, r_bias, hidden), element))
        parts = [b.reshape(b.narrow(v, 0, d, 1), [batch, hidden]) if v is not None
                 else b.constant(np.zeros((batch, hidden)), element) for v in states]
        init = parts[0] if len(parts) == 1 else b.concat(parts, 1)  # [B, k·H]
        constants = [b.constant(c, element) for c in cell.constants(r[d], r_bias, peepholes[d], hidden)]
        trajectory = b.scan(init, cell.step(hidden), [projected], constants, save_trajectory=True)  # [S, B, kH]
        last = b.narrow(trajectory, 0, seq - 1, 1)
        for k in range(cell.states):
            finals[k].append(b.narrow(last, 2, k * hidden, hidden))
        y = b.narrow(trajectory, 2, 0, hidden)
        ys.append(b.reshape(b.reverse(y, [0]) if reverse else y, [seq, 1, batch, hidden]))
    outputs = [ys[0] if directions == 1 else b.concat(ys, 1)]  # [S, D, B, H]
    outputs += [f[0] if directions == 1 else b.concat(f, 0) for f in finals]  # [D, B, H] each
    if layout == 1:
        outputs = [b.transpose(outputs[0], [2, 0, 1, 3]), *(b.transpose(v, [1, 0, 2]) for v in outputs[1:])]
    return outputs


def _gru_step(hidden: int) -> Callable[..., SSAValue]:
    """GRU with linear_before_reset = 0, ONNX's default (rlx.gru, as PyTorch, resets after
    the hidden state's linear map): h~ = tanh(x Wh + (r * h) Rh + Rbh + Wbh), ONNX's gate
    order z, r, h. Body arguments (h, Rzr, Rh, Rbh, projected x_t) -> h'."""

    def step(b: Builder, h: SSAValue, r_zr: SSAValue, r_h: SSAValue, rb_h: SSAValue, p: SSAValue) -> SSAValue:
        zr = b.sigmoid(b.add(b.narrow(p, 1, 0, 2 * hidden), b.matmul(h, r_zr, False, True)))
        z, reset = b.narrow(zr, 1, 0, hidden), b.narrow(zr, 1, hidden, hidden)
        candidate = b.tanh(b.add(b.narrow(p, 1, 2 * hidden, hidden),
                                 b.add(b.matmul(b.mul(reset, h), r_h, False, True), rb_h)))
        return b.add(candidate, b.mul(z, b.sub(h, candidate)))  # (1 - z) * candidate + z * h

    return step


def _peephole_lstm_step(hidden: int) -> Callable[..., SSAValue]:
    """LSTM with peepholes P = (Pi, Po, Pf), which rlx.lstm does not take: the input and
    forget gates see c_{t-1}, the output gate c_t; ONNX's gate order i, o, f, c. Body
    arguments ([h, c], R, P, projected x_t) -> [h', c']."""

    def step(b: Builder, hc: SSAValue, r: SSAValue, p: SSAValue, x_t: SSAValue) -> SSAValue:
        h, c = b.narrow(hc, 1, 0, hidden), b.narrow(hc, 1, hidden, hidden)
        g = b.add(x_t, b.matmul(h, r, False, True))  # [B, 4H]

        def gate(k: int) -> SSAValue:
            return b.narrow(g, 1, k * hidden, hidden)

        def peephole(k: int) -> SSAValue:
            return b.narrow(p, 0, k * hidden, hidden)

        i = b.sigmoid(b.add(gate(0), b.mul(peephole(0), c)))
        f = b.sigmoid(b.add(gate(2), b.mul(peephole(2), c)))
        c_next = b.add(b.mul(f, c), b.mul(i, b.tanh(gate(3))))
        o = b.sigmoid(b.add(gate(1), b.mul(peephole(1), c_next)))
        return b.concat([b.mul(o, b.tanh(c_next)), c_next], 1)

    return step


SCAN_CELLS = {
    "GRU": ScanCell(3, 1, lambda wb, rb, h: wb + np.concatenate([rb[: 2 * h], np.zeros(h, wb.dtype)]),
                    lambda r, rb, p, h: [r[: 2 * h], r[2 * h :], rb[2 * h :]], _gru_step),
    "LSTM": ScanCell(4, 2, lambda wb, rb, h: wb + rb, lambda r, rb, p, h: [r, p], _peephole_lstm_step),
}
"""The ONNX recurrences imported as scans: GRU with linear_before_reset = 0, LSTM with peepholes."""


def _name(array: np.ndarray) -> str:
    return NUMPY_NAMES[array.dtype]


def _state(ctx: Import, value: Value | None, shape: tuple[int, ...], element: str, layout: int) -> SSAValue:
    """An initial state in rlx's [D, B, H] (zeros for the one of h, c that is absent)."""
    if value is None:
        return ctx.builder.constant(np.zeros(shape), element)
    state = ctx.tensor(value)
    return ctx.builder.transpose(state, [1, 0, 2]) if layout == 1 else state


def _scan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ONNX Scan as rlx.scan. rlx's carry is one tensor, so the N state variables and
    the K per-step scan outputs (all of one element type) travel packed - flattened
    and concatenated - in a 1-D carry: the body unpacks the states, runs the body
    graph and packs the new states with this step's outputs. With scan outputs the
    scan saves its trajectory, whose row t holds step t's outputs. Scan input and
    output axes become transposes, reverse directions rlx.reverse on the time axis;
    outer values the body reads become the scan's broadcast inputs."""
    if ctx.opset < 9:
        raise Unsupported("Scan before opset 9 (a batch axis and sequence_lens) is not supported")
    b = ctx.builder
    body: onnx.GraphProto = _attribute(node, "body")  # type: ignore[assignment]
    num_scans = int(_attribute(node, "num_scan_inputs"))  # type: ignore[arg-type]
    states = [ctx.tensor(v) for v in inputs[: len(inputs) - num_scans]]  # type: ignore[arg-type]
    num_outputs = len(body.output) - len(states)
    xs = [_to_time_major(b, ctx.tensor(x), axis, reverse)  # type: ignore[arg-type]
          for x, axis, reverse in zip(inputs[len(states):], *_scan_layout(node, "input", num_scans))]
    outer = _outer_values(ctx, body)
    run_time = {name: v for name, v in outer.items() if isinstance(v, SSAValue)}  # the scan's broadcast inputs
    step_types = [(shape_of(x.type)[1:], element_name(x)) for x in xs]
    probe = Builder("scan_body")
    probe_states = [probe.input(shape_of(s.type), element_name(s)) for s in states]
    probe_outputs = _scan_body(Import(probe, opset=ctx.opset), body, probe_states,
                               [probe.input(*t) for t in step_types], outer, probe_inputs=True)
    pieces = [shape_of(v.type) for v in probe_outputs]
    elements = {element_name(v) for v in (*states, *probe_outputs)}
    if len(elements) != 1:
        raise Unsupported(f"state variables and scan outputs of several element types ({', '.join(sorted(elements))})")
    (element,) = elements
    sizes = [int(np.prod(p)) for p in pieces]
    init = _pack(b, [*states, *(b.constant(np.zeros(p), element) for p in pieces[len(states):])])

    def step(inner: Builder, carry: SSAValue, *arguments: SSAValue) -> SSAValue:
        unpacked = _unpack(inner, carry, pieces[: len(states)], sizes)
        bound = {**outer, **dict(zip(run_time, arguments))}  # broadcast arguments come first
        values = _scan_body(Import(inner, opset=ctx.opset), body, unpacked, list(arguments[len(run_time):]), bound)
        return _pack(inner, values)

    result = b.scan(init, step, xs, list(run_time.values()), save_trajectory=num_outputs > 0)
    final = b.reshape(b.narrow(result, 0, shape_of(result.type)[0] - 1, 1), [sum(sizes)]) if num_outputs else result
    outputs = _unpack(b, final, pieces[: len(states)], sizes)
    for k, (axis, reverse) in enumerate(zip(*_scan_layout(node, "output", num_outputs))):
        piece = len(states) + k
        column = b.narrow(result, 1, sum(sizes[:piece]), sizes[piece])
        stacked = b.reshape(column, [shape_of(result.type)[0], *pieces[piece]])
        outputs.append(_from_time_major(b, stacked, axis, reverse))
    return outputs


def _scan_layout(node: onnx.NodeProto, which: str, count: int) -> tuple[list[int], list[int]]:
    """Scan's `scan_{which}_axes` and `scan_{which}_directions` (0 and forward by default)."""
    axes = list(_attribute(node, f"scan_{which}_axes", None) or [0] * count)  # type: ignore[call-overload]
    directions = list(_attribute(node, f"scan_{which}_directions", None) or [0] * count)  # type: ignore[call-overload]
    return axes, directions


def _to_time_major(b: Builder, x: SSAValue, axis: int, reverse: int) -> SSAValue:
    """A scan input with its scanned axis first, in the order the steps read it."""
    rank = len(shape_of(x.type))
    axis %= rank
    if axis:
        x = b.transpose(x, [axis, *(a for a in range(rank) if a != axis)])
    return b.reverse(x, [0]) if reverse else x


def _from_time_major(b: Builder, y: SSAValue, axis: int, reverse: int) -> SSAValue:
    """Stacked scan outputs [steps, ...] moved to `axis`, reversed for a reverse direction."""
    if reverse:
        y = b.reverse(y, [0])
    rank = len(shape_of(y.type))
    axis %= rank
    if not axis:
        return y
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    return b.transpose(y, perm)


def _outer_values(ctx: Import, body: onnx.GraphProto) -> dict[str, Value]:
    """The values of the enclosing graph the body reads by name (ONNX scoping)."""
    defined = {v.name for v in body.input} | {t.name for t in body.initializer}
    defined |= {name for n in body.node for name in n.output}
    used = {name for n in body.node for name in n.input if name and name not in defined}
    used |= {v.name for v in body.output if v.name not in defined}
    missing = sorted(name for name in used if name not in ctx.values)
    if missing:
        raise Unsupported(f"its body reads {', '.join(missing)}, which the enclosing graph does not define")
    return {name: ctx.values[name] for name in sorted(used)}


def _scan_body(ctx: Import, body: onnx.GraphProto, states: list[SSAValue], steps: list[SSAValue],
               outer: dict[str, Value], probe_inputs: bool = False) -> list[SSAValue]:
    """The body graph's outputs, imported with its inputs bound to (states, x_t) and
    the outer names to `outer` (outer run-time values become inputs of a probe)."""
    for name, value in outer.items():
        if isinstance(value, SSAValue) and probe_inputs:
            value = ctx.builder.input(shape_of(value.type), element_name(value))
        ctx.values[name] = value
    for tensor in body.initializer:
        ctx.values[tensor.name] = numpy_helper.to_array(tensor)
    for value, bound in zip(body.input, [*states, *steps]):
        ctx.values[value.name] = bound
    problems = _import_nodes(ctx, body)
    if problems:
        raise Unsupported("its body: " + "; ".join(p.strip() for p in problems))
    return [ctx.tensor(ctx.values[v.name]) for v in body.output]


def _pack(b: Builder, values: list[SSAValue]) -> SSAValue:
    """The values flattened and concatenated into one 1-D tensor."""
    flat = [b.reshape(v, [int(np.prod(shape_of(v.type)))]) for v in values]
    return flat[0] if len(flat) == 1 else b.concat(flat, 0)


def _unpack(b: Builder, packed: SSAValue, shapes: list[tuple[int, ...]], sizes: list[int]) -> list[SSAValue]:
    """The first len(shapes) pieces of a packed 1-D tensor, in their shapes."""
    starts = np.cumsum([0, *sizes])
    return [b.reshape(b.narrow(packed, 0, int(starts[k]), sizes[k]), list(shape)) for k, shape in enumerate(shapes)]


IMPORTERS: dict[str, Importer] = {
    **{op: _unary(name) for op, name in {
        "Abs": "abs", "Neg": "neg", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Tanh": "tanh",
        "Sigmoid": "sigmoid", "Relu": "relu", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Atan": "atan",
        "Erf": "erf", "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "Reciprocal": "recip",
        "Softplus": "softplus", "Softsign": "softsign", "Round": "round", "HardSwish": "hard_swish",
        "Mish": "mish",
    }.items()},
    **{op: _binary(name) for op, name in {
        "Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "max", "Min": "min", "Sum": "add",
        "And": "bit_and", "Or": "bit_or", "Xor": "bit_xor",
        "BitwiseAnd": "bit_and", "BitwiseOr": "bit_or", "BitwiseXor": "bit_xor",
    }.items()},
    **{op: _compare(name) for op, name in {
        "Equal": "eq", "Less": "lt", "Greater": "gt", "LessOrEqual": "le", "GreaterOrEqual": "ge",
    }.items()},
    "Identity": _identity,
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
    "LayerNormalization": _layer_norm,
    "Split": _split,
    "Pad": _pad,
    "ArgMax": _arg("argmax"),
    "ArgMin": _arg("argmin"),
    **{op: _recurrent for op in RECURRENT},
    "Scan": _scan,
}
"""How each supported ONNX op type becomes rlx ops."""

FoldRule = Callable[[onnx.NodeProto, list[np.ndarray]], np.ndarray | None]
"""(node, its given inputs: arrays, except at TYPE_ONLY_OPERANDS) -> its one known output, or None
to leave the node to its importer."""


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


def _fold_mod(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray:
    """Mod: the remainder takes the divisor's sign (fmod=0) or the dividend's (fmod=1, C's fmod)."""
    return (np.fmod if _attribute(node, "fmod", 0) else np.mod)(*inputs)


def _fold_cast_node(node: onnx.NodeProto, inputs: list[np.ndarray]) -> np.ndarray | None:
    to = ELEMENT_TYPES.get(_attribute(node, "to"))  # type: ignore[arg-type]
    return _fold_cast(inputs[0], to, bool(_attribute(node, "saturate", 1))) if to else None


def _fold_cast_like(node: onnx.NodeProto, inputs: list[Value]) -> np.ndarray | None:
    """CastLike reads only the element type of `like`, so a run-time `like` does not stop the fold."""
    like = inputs[1]
    to = NUMPY_NAMES.get(like.dtype) if isinstance(like, np.ndarray) else element_name(like)
    return _fold_cast(inputs[0], to, bool(_attribute(node, "saturate", 1))) if to else None  # type: ignore[arg-type]


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
        axes = _axes(node, inputs, 1)  # type: ignore[arg-type]
        if not axes:
            if _attribute(node, "noop_with_empty_axes", 0):
                return x
            axes = list(range(x.ndim))
        if x.size == 0:
            return None
        return function(x, axis=tuple(a % x.ndim for a in axes), keepdims=bool(_attribute(node, "keepdims", 1)))

    return rule


FOLDS: dict[str, FoldRule] = {
    **{op: _elementwise(function) for op, function in {
        "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _truncating_divide,
        "Neg": np.negative, "Abs": np.abs, "Sqrt": np.sqrt, "Floor": np.floor, "Ceil": np.ceil,
        "Equal": np.equal, "Less": np.less, "Greater": np.greater,
        "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
        "Not": np.logical_not, "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor,
        "Where": np.where,
    }.items()},
    **{op: _variadic(function) for op, function in {"Sum": np.add, "Max": np.maximum, "Min": np.minimum}.items()},
    "Mod": _fold_mod,
    "Cast": _fold_cast_node,
    "CastLike": _fold_cast_like,
    "Expand": _fold_expand,
    **{op: _fold_reduce(function) for op, function in {
        "ReduceMax": np.max, "ReduceMin": np.min, "ReduceSum": np.sum, "ReduceProd": np.prod,
    }.items()},
}
"""How a node whose inputs are all known at import is computed with NumPy, with ONNX's
semantics (shape arithmetic: exporters' Shape -> Gather -> Concat chains and the expanded
functions' head-count and scale computations). Shape, Gather, Slice, Concat, Reshape,
Unsqueeze/Squeeze, Transpose, ConstantOfShape and Constant compute known values in their
importers, which also take run-time values."""

TYPE_ONLY_OPERANDS: dict[str, set[int]] = {"CastLike": {1}}
"""Operands whose element type, not data, a fold rule reads: they may be run-time values."""


def _fold(node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value] | None:
    """The node's output computed at import, when it has a fold rule and every given input is known."""
    rule = FOLDS.get(node.op_type)
    typed_only = TYPE_ONLY_OPERANDS.get(node.op_type, set())
    data = [v for k, v in enumerate(inputs) if k not in typed_only and v is not None]
    if rule is None or not all(isinstance(v, np.ndarray) for v in data):
        return None
    with np.errstate(all="ignore"):  # ONNX leaves overflow and division by zero undefined; NumPy's result stands
        result = rule(node, [v for v in inputs if v is not None])
    return None if result is None else [np.asarray(result)]


def _fold_cast(array: np.ndarray, to: str, saturate: bool) -> np.ndarray:
    """A known array cast as ONNX's reference does: astype, float8 saturating by a clip first."""
    target = dtypes.from_name(to)
    if saturate and to.startswith("f8"):
        largest = float(ml_dtypes.finfo(target.numpy).max)
        array = np.clip(array.astype(np.float64), -largest, largest)
    with np.errstate(all="ignore"):
        return array.astype(target.numpy)


# ---------------------------------------------------------------------------
# the importer
# ---------------------------------------------------------------------------


def load(
    model: str | Path | bytes | onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """The model's graph as a verified module with one function. `constants`
    fixes graph inputs to values at import, like initializers (a shape or
    axes operand that a model takes as an input)."""
    proto = _read(model)
    graph = proto.graph
    _check_graph(graph)
    ctx = Import(Builder(_symbol(graph.name)), opset=_opset(proto))
    folder = Path(model).resolve().parent if isinstance(model, (str, Path)) else None
    for tensor in graph.initializer:
        ctx.values[tensor.name] = _initializer(tensor, folder)
    for name, value in (constants or {}).items():
        ctx.values[name] = np.asarray(value)
    shapes = _checked_shapes(input_shapes, graph)
    for value in graph.input:
        if value.name not in ctx.values:
            ctx.values[value.name] = ctx.builder.input(*_input_type(value, shapes.get(value.name)))
    problems = _import_nodes(ctx, graph)
    if problems:
        listed = "\n".join(problems)
        raise CompileError(f"cannot import {len(problems)} node(s) or output(s) of the ONNX graph:\n{listed}")
    try:
        ctx.builder.output(*(ctx.tensor(ctx.values[v.name]) for v in graph.output))
    except Unsupported as error:
        raise CompileError(f"cannot import the ONNX graph's outputs: {error}") from None
    return ctx.builder.module()


def _import_nodes(ctx: Import, graph: onnx.GraphProto) -> list[str]:
    """Import the graph's nodes into `ctx` (its inputs already bound); one line per
    node that could not be imported, or per graph output that was not computed."""
    problems = []
    produced = {name for node in graph.node for name in node.output}
    for index, node in enumerate(graph.node):
        inputs = [ctx.values.get(name) if name else None for name in node.input]
        try:
            _check_node(node, inputs, produced, ctx.opset)
            outputs = _fold(node, inputs)
            if outputs is None:
                outputs = IMPORTERS[node.op_type](ctx, node, inputs)
        except (Unsupported, RlxError, ValueError, KeyError) as error:
            problems.append(f"  {node.op_type} '{node.name or f'#{index}'}': {error}")
            continue
        except (TypeError, AttributeError, IndexError) as error:  # a node the schema check let through
            problems.append(f"  {node.op_type} '{node.name or f'#{index}'}': malformed node ({error})")
            continue
        for name, value in zip(node.output, outputs):
            ctx.values[name] = np.asarray(value) if isinstance(value, np.generic) else value
    if not problems:  # every node imported, yet an optional output of one was not
        missing = [v.name for v in graph.output if v.name not in ctx.values]
        problems = [f"  output '{name}': not computed by the importer" for name in missing]
    return problems


ONNX_DOMAINS = ("", "ai.onnx")
"""The domains of ONNX's standard ops (nodes of other domains, e.g. com.microsoft, are custom ops)."""


@cache
def _checker_context(opset: int) -> onnx.checker.C.CheckerContext:
    context = onnx.checker.C.CheckerContext()
    context.ir_version = onnx.IR_VERSION
    context.opset_imports = {"": opset}
    return context


def _check_node(node: onnx.NodeProto, inputs: list[Value | None], produced: set[str], opset: int) -> None:
    """A node the importer can take: ONNX's domain, an importer, every input known."""
    if node.domain not in ONNX_DOMAINS:
        raise Unsupported(f"domain '{node.domain}' is not ONNX's standard one; rlx imports only standard ops")
    if node.op_type not in IMPORTERS:
        raise Unsupported("no importer for this op type")
    try:  # ONNX's own schema check: required attributes, input and output counts
        onnx.checker.check_node(_without_subgraphs(node), _checker_context(opset), onnx.checker.C.LexicalScopeContext())
    except onnx.checker.ValidationError as error:
        raise Unsupported(f"invalid node: {str(error).strip().splitlines()[0]}") from None
    for name, value in zip(node.input, inputs):
        if name and value is None:
            if name not in produced:
                raise Unsupported(f"input '{name}' is no graph input, initializer or node output "
                                  "(a missing initializer?)")
            raise Unsupported("an input comes from a node that was not imported")


def _without_subgraphs(node: onnx.NodeProto) -> onnx.NodeProto:
    """The node for the schema check: a body graph that reads outer names would fail
    the checker's (empty) scope, so each is replaced by an empty graph; the body's
    nodes are checked one by one when it is imported."""
    if not any(a.type == onnx.AttributeProto.GRAPH for a in node.attribute):
        return node
    stripped = onnx.NodeProto()
    stripped.CopyFrom(node)
    for attribute in stripped.attribute:
        if attribute.type == onnx.AttributeProto.GRAPH:
            attribute.g.CopyFrom(onnx.GraphProto(name=attribute.g.name))
    return stripped


def _read(model: str | Path | bytes | onnx.ModelProto) -> onnx.ModelProto:
    """The model, its external data not read (`_initializer` reads it, checked)."""
    if isinstance(model, onnx.ModelProto):
        return model
    if not isinstance(model, (str, Path, bytes)):
        raise ArgumentError(f"an ONNX model is a path, bytes or a ModelProto, got {type(model).__name__}")
    try:
        if isinstance(model, bytes):
            proto = onnx.load_from_string(model)
        else:
            proto = onnx.load(str(model), load_external_data=False)
    except (OSError, ValueError, DecodeError) as error:
        raise ArgumentError(f"cannot read the ONNX model: {error}") from None
    if not proto.HasField("graph"):
        raise ArgumentError("cannot read the ONNX model: it has no graph (empty or not an ONNX file)")
    return proto


MAX_ELEMENTS = 1 << 40
"""The most elements an initializer may declare: more cannot be held in memory."""


def _check_graph(graph: onnx.GraphProto) -> None:
    """The graph-level rules the importer relies on: outputs exist, names are unique."""
    if not graph.output:
        raise CompileError("the ONNX graph has no outputs")
    seen: set[str] = set()
    for what, names in (("graph input", [v.name for v in graph.input]),
                        ("node output", [n for node in graph.node for n in node.output if n])):
        for name in names:
            if name in seen:
                raise CompileError(f"the ONNX graph defines '{name}' twice (a {what})")
            seen.add(name)


def _initializer(tensor: onnx.TensorProto, folder: Path | None) -> np.ndarray:
    """An initializer as an array, its type, dims and data checked against each other
    (an error naming the tensor, never NumPy's); external data read only from a
    regular file inside the model's folder, no more than the tensor needs."""
    name = f"initializer '{tensor.name}'"
    if tensor.data_type not in ELEMENT_TYPES:
        label = onnx.TensorProto.DataType.Name(tensor.data_type) if tensor.data_type in onnx.TensorProto.DataType.values() \
            else str(tensor.data_type)
        raise CompileError(f"{name} has element type {label}, which rlx does not support")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise CompileError(f"{name} has a negative dimension: {dims}")
    count = int(np.prod(dims, dtype=object)) if dims else 1
    if count > MAX_ELEMENTS:
        raise CompileError(f"{name} declares {count} elements, more than {MAX_ELEMENTS}")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        tensor = _with_external_data(tensor, folder, count)
    try:
        array = numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as error:
        raise CompileError(f"{name}: its data does not hold {dims} elements ({error})") from None
    if array.size != count:
        raise CompileError(f"{name}: its data holds {array.size} elements, its dims {dims} say {count}")
    return array


def _with_external_data(tensor: onnx.TensorProto, folder: Path | None, count: int) -> onnx.TensorProto:
    name = f"initializer '{tensor.name}'"
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    if folder is None:
        raise CompileError(f"{name} keeps its data in '{location}': load the model from its file to read it")
    path = folder / location
    if not location or Path(location).is_absolute() or ".." in Path(location).parts or path.is_symlink():
        raise CompileError(f"{name}: external data '{location}' is not a file inside the model's folder")
    try:
        offset, length = int(info.get("offset", 0)), int(info["length"]) if "length" in info else None
        size = path.stat().st_size
    except (ValueError, OSError) as error:
        raise CompileError(f"{name}: cannot read external data '{location}' ({error})") from None
    if not path.is_file():
        raise CompileError(f"{name}: external data '{location}' is not a regular file")
    itemsize = dtypes.from_name(ELEMENT_TYPES[tensor.data_type]).nbytes
    needed = count * itemsize if length is None else length
    if offset < 0 or needed < 0 or offset + needed > size:
        raise CompileError(f"{name}: external data '{location}' has {size} bytes, the tensor needs {offset + needed}")
    with open(path, "rb") as stream:
        stream.seek(offset)
        data = stream.read(needed)
    loaded = onnx.TensorProto()
    loaded.CopyFrom(tensor)
    del loaded.external_data[:]
    loaded.data_location = onnx.TensorProto.DEFAULT
    loaded.raw_data = data
    return loaded


def _checked_shapes(given: Mapping[str, Sequence[int]] | None, graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    """`input_shapes` checked: names of graph inputs, lists of dims >= 0 of the declared rank."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ArgumentError(f"input_shapes is a mapping of input names to shapes, got {type(given).__name__}")
    declared = {v.name: v for v in graph.input}
    unknown = set(given) - set(declared)
    if unknown:
        raise ArgumentError(f"input_shapes names no graph input: {', '.join(sorted(map(str, unknown)))}")
    shapes = {}
    for name, shape in given.items():
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence) or \
                not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ArgumentError(f"input_shapes['{name}'] must be a list of dimensions >= 0, got {shape!r}")
        rank = len(declared[name].type.tensor_type.shape.dim)
        if declared[name].type.tensor_type.HasField("shape") and rank != len(shape):
            raise ArgumentError(f"input_shapes['{name}'] has rank {len(shape)}, the model declares rank {rank}")
        shapes[name] = tuple(int(d) for d in shape)
    return shapes


def _opset(proto: onnx.ModelProto) -> int:
    """The model's version of ONNX's standard domain (the newest if it names none)."""
    versions = [o.version for o in proto.opset_import if o.domain in ONNX_DOMAINS]
    return versions[0] if versions else onnx.defs.onnx_opset_version()


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "main"
    return cleaned if cleaned[0].isalpha() or cleaned[0] == "_" else f"g_{cleaned}"


def _input_type(value: onnx.ValueInfoProto, fixed: Sequence[int] | None) -> tuple[tuple[int, ...], str]:
    tensor = value.type.tensor_type
    element = ELEMENT_TYPES.get(tensor.elem_type)
    if element is None:
        name = onnx.TensorProto.DataType.Name(tensor.elem_type)
        raise CompileError(f"input '{value.name}' has element type {name}, which rlx does not support")
    if fixed is not None:
        return tuple(int(d) for d in fixed), element
    dims = []
    for d in tensor.shape.dim:
        if not d.HasField("dim_value"):
            raise CompileError(
                f"input '{value.name}' has a dynamic dimension '{d.dim_param}': give its shape "
                "(load(..., input_shapes=...), rlx-run --input-shape NAME=DxD..., "
                "rlx-opt -f 'onnx{input-shapes=\"NAME=DxD...\"}')"
            )
        dims.append(int(d.dim_value))
    return tuple(dims), element
