"""Import of ONNX's QuantizeLinear and DequantizeLinear (opsets 13 to 25), as
the QDQ models of quantization tools write them around float ops.

- DequantizeLinear: y = (x − zero_point) · scale, in f32, rounded once to the
  scale's type (or `output_dtype`);
- QuantizeLinear: y = clip(round(x / scale) + zero_point) into the integer
  output type (round half to even), or x / scale cast to a float8 output
  (saturating unless `saturate` = 0). The output type is the zero point's,
  else `output_dtype`, else uint8.

Scale and zero point are one value (per tensor), one per index of `axis` (per
axis), or x's shape with `axis` divided into blocks of `block_size` (blocked).
A node whose inputs are all known (a weight stored as int8 with its scale) is
computed at import, so a QDQ model's weights are float constants and only its
activations are quantized and dequantized at run time: it computes what the
quantized model specifies, in float, not in integer kernels.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    NUMPY_NAMES,
    Import,
    Importer,
    Unsupported,
    Value,
    element_name,
    node_attribute,
    present,
)
from rlx_mlir.frontends.onnx.fold import fold_cast

INTEGER_RANGES = {
    "ui8": (0, 255),
    "i8": (-128, 127),
    "ui16": (0, 65535),
    "i16": (-32768, 32767),
    "ui4": (0, 15),
    "i4": (-8, 7),
}
"""The quantized integer types rlx computes on, and their ranges."""

FLOAT8 = ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ")


def _type_of(value: Value) -> str:
    return NUMPY_NAMES[value.dtype] if isinstance(value, np.ndarray) else element_name(value)


def _spread(value: np.ndarray, shape: tuple[int, ...], axis: int, block: int) -> np.ndarray:
    """A known scale or zero point in a shape that broadcasts against x's."""
    if value.size == 1:
        return value.reshape(())
    axis = _checked_axis(axis, shape)
    if not block:
        if value.ndim != 1 or value.size != shape[axis]:
            raise Unsupported(f"a per-axis scale or zero point of shape {list(value.shape)} for {shape[axis]} entries")
        return value.reshape([value.size if k == axis else 1 for k in range(len(shape))])
    if value.ndim != len(shape) or -(-shape[axis] // block) != value.shape[axis]:
        raise Unsupported(f"a blocked scale or zero point of shape {list(value.shape)} for x of shape {list(shape)}")
    return np.repeat(value, block, axis=axis).take(range(shape[axis]), axis=axis)


def _parameter(ctx: Import, value: Value, shape: tuple[int, ...], axis: int, block: int) -> SSAValue:
    """A scale or zero point as an rlx value that broadcasts against x."""
    if isinstance(value, np.ndarray):
        return ctx.tensor(_spread(value, shape, axis, block))
    given = ctx.shape(value)
    b = ctx.builder
    if int(np.prod(given)) == 1:
        return b.reshape(value, [])
    axis = _checked_axis(axis, shape)
    if block:
        if len(given) != len(shape) or -(-shape[axis] // block) != given[axis]:
            raise Unsupported(f"a blocked scale or zero point of shape {list(given)} for x of shape {list(shape)}")
        split = [*given[: axis + 1], 1, *given[axis + 1 :]]
        repeated = [*given[:axis], given[axis], block, *given[axis + 1 :]]
        whole = [*given[:axis], given[axis] * block, *given[axis + 1 :]]
        spread = b.reshape(b.expand(b.reshape(value, split), repeated), whole)
        return spread if whole[axis] == shape[axis] else b.narrow(spread, axis, 0, shape[axis])
    if len(given) != 1 or given[0] != shape[axis]:
        raise Unsupported(f"a per-axis scale or zero point of shape {list(given)} for {shape[axis]} entries")
    return b.reshape(value, [given[0] if k == axis else 1 for k in range(len(shape))])


def _layout(node: onnx.NodeProto, shape: tuple[int, ...]) -> tuple[int, int]:
    """(axis, block_size); the axis matters, and is checked, only for a scale of several values."""
    return int(node_attribute(node, "axis", 1)), int(node_attribute(node, "block_size", 0))


def _checked_axis(axis: int, shape: tuple[int, ...]) -> int:
    if not -len(shape) <= axis < len(shape):
        raise Unsupported(f"axis {axis} is out of range for rank {len(shape)}")
    return axis % len(shape)


def _dequantize(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, scale = present(inputs[0]), present(inputs[1])
    zero = inputs[2] if len(inputs) > 2 else None
    shape = ctx.shape(x)
    axis, block = _layout(node, shape)
    code = node_attribute(node, "output_dtype", 0)
    out = ELEMENT_TYPES[code] if code else _type_of(scale)
    if _type_of(x) in FLOAT8:
        zero = None  # a float8 zero point must be 0 (ONNX's rule)
    if isinstance(x, np.ndarray) and isinstance(scale, np.ndarray) and not isinstance(zero, SSAValue):
        offset = 0 if zero is None else _spread(zero, shape, axis, block).astype(np.float32)
        scaled = (x.astype(np.float32) - offset) * _spread(scale, shape, axis, block).astype(np.float32)
        return [scaled.astype(dtypes.from_name(out).numpy)]
    b = ctx.builder
    shifted = b.cast(ctx.tensor(x), "f32")
    if zero is not None:
        shifted = b.sub(shifted, b.cast(_parameter(ctx, zero, shape, axis, block), "f32"))
    y = b.mul(shifted, b.cast(_parameter(ctx, scale, shape, axis, block), "f32"))
    return [y if out == "f32" else b.cast(y, out)]


def _quantize(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x, scale = present(inputs[0]), present(inputs[1])
    zero = inputs[2] if len(inputs) > 2 else None
    shape = ctx.shape(x)
    axis, block = _layout(node, shape)
    code = node_attribute(node, "output_dtype", 0)
    out = _type_of(zero) if zero is not None else ELEMENT_TYPES[code] if code else "ui8"
    if out not in INTEGER_RANGES and out not in FLOAT8:
        raise Unsupported(f"output type {out} is not a quantized type rlx computes on")
    if node_attribute(node, "precision", 0) not in (0, onnx.TensorProto.FLOAT):
        raise Unsupported("a division precision other than float32 is not supported")
    saturate = bool(node_attribute(node, "saturate", 1))
    if isinstance(x, np.ndarray) and isinstance(scale, np.ndarray) and not isinstance(zero, SSAValue):
        return [_quantized_array(x, scale, zero, out, saturate, axis, block)]
    b = ctx.builder
    scaled = b.div(b.cast(ctx.tensor(x), "f32"), b.cast(_parameter(ctx, scale, shape, axis, block), "f32"))
    if out in FLOAT8:
        return [b.cast(scaled, out, saturate)]
    q = b.round(scaled)
    if zero is not None:
        q = b.add(q, b.cast(_parameter(ctx, zero, shape, axis, block), "f32"))
    low, high = INTEGER_RANGES[out]
    q = b.binary("min", b.binary("max", q, b.constant(low, "f32")), b.constant(high, "f32"))
    return [b.cast(q, out)]


def _quantized_array(
    x: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, out: str, saturate: bool, axis: int, block: int
) -> np.ndarray:
    """QuantizeLinear of known inputs, with NumPy, as above."""
    scaled = x.astype(np.float32) / _spread(scale, x.shape, axis, block).astype(np.float32)
    if out in FLOAT8:
        return fold_cast(scaled, out, saturate)
    q = np.rint(scaled) + (0 if zero is None else _spread(zero, x.shape, axis, block).astype(np.float32))
    low, high = INTEGER_RANGES[out]
    return np.clip(q, low, high).astype(dtypes.from_name(out).numpy)


IMPORTERS: dict[str, Importer] = {"QuantizeLinear": _quantize, "DequantizeLinear": _dequantize}
"""The quantization importers."""
