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
    if value is None:
        raise Unsupported("only Constant(value=tensor) is supported")
    return [numpy_helper.to_array(value)]  # type: ignore[arg-type]


def _shape(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    shape = np.array(ctx.shape(inputs[0]), dtype=np.int64)  # type: ignore[arg-type]
    start, end = _attribute(node, "start", 0), _attribute(node, "end", None)
    return [shape[start:end]]


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
    axis = int(_attribute(node, "axis", 1)) % (len(shape) + 1)  # type: ignore[arg-type]
    return [_reshape_to(ctx, inputs[0], (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))]  # type: ignore[arg-type]


def _axes(node: onnx.NodeProto, inputs: list[Value | None], position: int) -> list[int] | None:
    """`axes` from the input at `position` (opset 13+) or the attribute."""
    if len(inputs) > position and inputs[position] is not None:
        return [int(a) for a in known(inputs[position], "axes")]
    value = _attribute(node, "axes")
    return None if value is None else [int(a) for a in value]  # type: ignore[union-attr]


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


def _softmax(log: bool) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        axis = int(_attribute(node, "axis", -1))  # type: ignore[arg-type]
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
        return [ctx.builder.log_softmax(x, axis) if log else ctx.builder.softmax(x, axis)]

    return convert


def _reduce(method: str) -> Importer:
    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
        axes = _axes(node, inputs, 1)
        keepdims = bool(_attribute(node, "keepdims", 1))
        if not axes:
            if _attribute(node, "noop_with_empty_axes", 0):
                return [x]
            axes = list(range(len(shape_of(x.type))))
        return [getattr(ctx.builder, method)(x, axes, keepdims)]

    return convert


def _relu_like(alpha_default: float, formula: str) -> Importer:
    """LeakyRelu and Elu: x where x >= 0, else alpha·x (LeakyRelu) or alpha·(exp(x) − 1) (Elu)."""

    def convert(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
        b = ctx.builder
        x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
        element = element_name(x)
        alpha = b.constant(float(_attribute(node, "alpha", alpha_default)), element)  # type: ignore[arg-type]
        zero = b.constant(0.0, element)
        negative = b.mul(alpha, x) if formula == "leaky" else b.mul(alpha, b.sub(b.exp(x), b.constant(1.0, element)))
        return [b.where(b.compare("ge", x, zero), x, negative)]

    return convert


def _hard_sigmoid(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """max(0, min(1, alpha·x + beta))."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    element = element_name(x)
    alpha, beta = (float(_attribute(node, n, d)) for n, d in (("alpha", 0.2), ("beta", 0.5)))  # type: ignore[arg-type]
    y = b.add(b.mul(x, b.constant(alpha, element)), b.constant(beta, element))
    return [b.max(b.min(y, b.constant(1.0, element)), b.constant(0.0, element))]


def _clip(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    b = ctx.builder
    y = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    if len(inputs) > 1 and inputs[1] is not None:
        y = b.max(y, ctx.tensor(inputs[1]))
    if len(inputs) > 2 and inputs[2] is not None:
        y = b.min(y, ctx.tensor(inputs[2]))
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


def _expand(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, shape = ctx.tensor(inputs[0]), known(inputs[1], "target shape")  # type: ignore[arg-type]
    target = np.broadcast_shapes(shape_of(x.type), tuple(int(d) for d in shape))
    return [ctx.builder.expand(x, target)]


def _slice(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = inputs[0]
    shape = ctx.shape(x)  # type: ignore[arg-type]
    starts, ends = known(inputs[1], "starts"), known(inputs[2], "ends")
    axes = known(inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None else np.arange(len(starts))
    steps = known(inputs[4], "steps") if len(inputs) > 4 and inputs[4] is not None else np.ones(len(starts), np.int64)
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
    """(x − mean) / sqrt(var + epsilon) · scale + bias over the axes from `axis` on."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    rank = len(shape_of(x.type))
    axes = list(range(int(_attribute(node, "axis", -1)) % rank, rank))  # type: ignore[arg-type]
    element = element_name(x)
    centered = b.sub(x, b.reduce_mean(x, axes, True))
    variance = b.reduce_mean(b.mul(centered, centered), axes, True)
    epsilon = b.constant(float(_attribute(node, "epsilon", 1e-5)), element)  # type: ignore[arg-type]
    y = b.mul(centered, b.rsqrt(b.add(variance, epsilon)))
    y = b.mul(y, ctx.tensor(inputs[1]))  # type: ignore[arg-type]
    if len(inputs) > 2 and inputs[2] is not None:
        y = b.add(y, ctx.tensor(inputs[2]))
    return [y]


def _split(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Pieces along `axis`: the `split` input's sizes, or `num_outputs` (the last one smaller) equal parts."""
    x = ctx.tensor(inputs[0])  # type: ignore[arg-type]
    shape = shape_of(x.type)
    axis = int(_attribute(node, "axis", 0)) % len(shape)  # type: ignore[arg-type]
    if len(inputs) > 1 and inputs[1] is not None:
        sizes = [int(n) for n in known(inputs[1], "split sizes")]
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
    pads = [int(p) for p in known(inputs[1], "pads")]
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
        raise Unsupported("GRU with linear_before_reset = 0 (rlx's GRU resets after the linear map, as PyTorch)")
    if node.op_type == "LSTM" and padded[7] is not None:
        raise Unsupported("peephole weights (P) are not supported")
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


def _name(array: np.ndarray) -> str:
    return NUMPY_NAMES[array.dtype]


def _state(ctx: Import, value: Value | None, shape: tuple[int, ...], element: str, layout: int) -> SSAValue:
    """An initial state in rlx's [D, B, H] (zeros for the one of h, c that is absent)."""
    if value is None:
        return ctx.builder.constant(np.zeros(shape), element)
    state = ctx.tensor(value)
    return ctx.builder.transpose(state, [1, 0, 2]) if layout == 1 else state


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
        "Pow": "pow", "And": "bit_and", "Or": "bit_or", "Xor": "bit_xor",
    }.items()},
    **{op: _compare(name) for op, name in {
        "Equal": "eq", "Less": "lt", "Greater": "gt", "LessOrEqual": "le", "GreaterOrEqual": "ge",
    }.items()},
    "Identity": _identity,
    "Constant": _constant,
    "Shape": _shape,
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
    "Softmax": _softmax(False),
    "LogSoftmax": _softmax(True),
    "ReduceSum": _reduce("reduce_sum"),
    "ReduceMean": _reduce("reduce_mean"),
    "ReduceMax": _reduce("reduce_max"),
    "ReduceMin": _reduce("reduce_min"),
    "ReduceProd": _reduce("reduce_prod"),
    "LeakyRelu": _relu_like(0.01, "leaky"),
    "Elu": _relu_like(1.0, "elu"),
    "HardSigmoid": _hard_sigmoid,
    "Clip": _clip,
    "Mod": _mod,
    "Expand": _expand,
    "Slice": _slice,
    "LayerNormalization": _layer_norm,
    "Split": _split,
    "Pad": _pad,
    "ArgMax": _arg("argmax"),
    "ArgMin": _arg("argmin"),
    **{op: _recurrent for op in RECURRENT},
}
"""How each supported ONNX op type becomes rlx ops."""

FOLDABLE = {"Identity", "Constant", "Shape", "Transpose", "Reshape", "Flatten", "Unsqueeze", "Squeeze", "Concat",
            "Gather", "Slice"}
"""Op types whose importer computes known operands with NumPy (shape arithmetic)."""

_FOLD_ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": lambda a, b: a // b if a.dtype.kind == "i" else a / b,
    "Equal": np.equal, "Less": np.less, "Greater": np.greater, "Max": np.maximum, "Min": np.minimum,
}


def _fold(node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value] | None:
    """Known operands in, known results out (shape arithmetic on integers)."""
    if node.op_type in _FOLD_ELEMENTWISE and all(isinstance(v, np.ndarray) for v in inputs):
        return [np.asarray(_FOLD_ELEMENTWISE[node.op_type](*inputs))]
    if node.op_type == "Cast" and isinstance(inputs[0], np.ndarray):
        to = ELEMENT_TYPES.get(_attribute(node, "to"))  # type: ignore[arg-type]
        return [_fold_cast(inputs[0], to, bool(_attribute(node, "saturate", 1)))] if to else None
    return None


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
    ctx = Import(Builder(_symbol(graph.name)))
    for tensor in graph.initializer:
        ctx.values[tensor.name] = numpy_helper.to_array(tensor)
    for name, value in (constants or {}).items():
        ctx.values[name] = np.asarray(value)
    shapes = dict(input_shapes or {})
    for value in graph.input:
        if value.name not in ctx.values:
            ctx.values[value.name] = ctx.builder.input(*_input_type(value, shapes.pop(value.name, None)))
    if shapes:
        raise ArgumentError(f"input_shapes names no graph input: {', '.join(sorted(shapes))}")
    problems = []
    for index, node in enumerate(graph.node):
        inputs = [ctx.values.get(name) if name else None for name in node.input]
        try:
            outputs = _fold(node, inputs)
            if outputs is None:
                importer = IMPORTERS.get(node.op_type)
                if importer is None:
                    raise Unsupported("no importer for this op type")
                if any(v is None for v, name in zip(inputs, node.input) if name):
                    raise Unsupported("an input comes from a node that was not imported")
                outputs = importer(ctx, node, inputs)
        except (Unsupported, RlxError, ValueError, KeyError) as error:
            problems.append(f"  {node.op_type} '{node.name or f'#{index}'}': {error}")
            continue
        for name, value in zip(node.output, outputs):
            ctx.values[name] = np.asarray(value) if isinstance(value, np.generic) else value
    if not problems:  # every node imported, yet an optional output of one was not
        missing = [v.name for v in graph.output if v.name not in ctx.values]
        problems = [f"  output '{name}': not computed by the importer" for name in missing]
    if problems:
        listed = "\n".join(problems)
        raise CompileError(f"cannot import {len(problems)} node(s) or output(s) of the ONNX graph:\n{listed}")
    try:
        ctx.builder.output(*(ctx.tensor(ctx.values[v.name]) for v in graph.output))
    except Unsupported as error:
        raise CompileError(f"cannot import the ONNX graph's outputs: {error}") from None
    return ctx.builder.module()


def _read(model: str | Path | bytes | onnx.ModelProto) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    try:
        return onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(str(model))
    except (OSError, ValueError, DecodeError) as error:
        raise ArgumentError(f"cannot read the ONNX model: {error}") from None


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
                "(load(..., input_shapes=...), rlx-run --input-shape NAME=DxD...)"
            )
        dims.append(int(d.dim_value))
    return tuple(dims), element
