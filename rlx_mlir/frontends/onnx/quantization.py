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

from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    Import,
    Importer,
    Unsupported,
    Value,
    checked_axis,
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


@dataclass(frozen=True)
class Operands:
    """A Quantize/DequantizeLinear node's x, scale and zero point, and how the scale
    and zero point lay out against x (`axis` matters, and is checked, only for a
    scale of several values)."""

    x: Value
    scale: Value
    zero: Value | None
    axis: int
    block: int

    @classmethod
    def of(cls, node: onnx.NodeProto, inputs: list[Value | None]) -> Operands:
        zero = inputs[2] if len(inputs) > 2 else None
        axis, block = int(node_attribute(node, "axis", 1)), int(node_attribute(node, "block_size", 0))
        return cls(present(inputs[0]), present(inputs[1]), zero, axis, block)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.x.shape) if isinstance(self.x, np.ndarray) else shape_of(self.x.type)

    def known(self) -> bool:
        return all(isinstance(v, np.ndarray) for v in (self.x, self.scale, self.zero) if v is not None)

    def _axis(self) -> int:
        return checked_axis(self.axis, len(self.shape))

    def spread(self, value: np.ndarray) -> np.ndarray:
        """A known scale or zero point in a shape that broadcasts against x's, in f32."""
        shape = self.shape
        if value.size == 1:
            return value.reshape(()).astype(np.float32)
        axis = self._axis()
        if not self.block:
            self._check_per_axis(value.shape)
            return value.reshape([value.size if k == axis else 1 for k in range(len(shape))]).astype(np.float32)
        self._check_blocked(value.shape)
        return np.repeat(value, self.block, axis=axis).take(range(shape[axis]), axis=axis).astype(np.float32)

    def parameter(self, ctx: Import, value: Value) -> SSAValue:
        """A scale or zero point as an f32 rlx value that broadcasts against x."""
        if isinstance(value, np.ndarray):
            return ctx.tensor(self.spread(value))
        b, given, shape = ctx.builder, ctx.shape(value), self.shape
        if int(np.prod(given)) == 1:
            return b.cast(b.reshape(value, []), "f32")
        axis = self._axis()
        if not self.block:
            self._check_per_axis(given)
            return b.cast(b.reshape(value, [given[0] if k == axis else 1 for k in range(len(shape))]), "f32")
        self._check_blocked(given)
        split = [*given[: axis + 1], 1, *given[axis + 1 :]]
        repeated = [*given[:axis], given[axis], self.block, *given[axis + 1 :]]
        whole = [*given[:axis], given[axis] * self.block, *given[axis + 1 :]]
        spread = b.reshape(b.expand(b.reshape(value, split), repeated), whole)
        spread = spread if whole[axis] == shape[axis] else b.narrow(spread, axis, 0, shape[axis])
        return b.cast(spread, "f32")

    def _check_per_axis(self, given: tuple[int, ...]) -> None:
        if len(given) != 1 or given[0] != self.shape[self._axis()]:
            raise Unsupported(
                f"a per-axis scale or zero point of shape {list(given)} for {self.shape[self._axis()]} entries"
            )

    def _check_blocked(self, given: tuple[int, ...]) -> None:
        shape, axis = self.shape, self._axis()
        if len(given) != len(shape) or -(-shape[axis] // self.block) != given[axis]:
            raise Unsupported(f"a blocked scale or zero point of shape {list(given)} for x of shape {list(shape)}")


def _dequantize(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    q = Operands.of(node, inputs)
    code = node_attribute(node, "output_dtype", 0)
    out = ELEMENT_TYPES[code] if code else element_name(q.scale)
    zero = None if element_name(q.x) in FLOAT8 else q.zero  # a float8 zero point must be 0 (ONNX's rule)
    if q.known():
        x, scale = np.asarray(q.x, np.float32), q.spread(np.asarray(q.scale))
        offset = 0 if zero is None else q.spread(np.asarray(zero))
        return [((x - offset) * scale).astype(dtypes.from_name(out).numpy)]
    b = ctx.builder
    shifted = b.cast(ctx.tensor(q.x), "f32")
    if zero is not None:
        shifted = b.sub(shifted, q.parameter(ctx, zero))
    y = b.mul(shifted, q.parameter(ctx, q.scale))
    return [y if out == "f32" else b.cast(y, out)]


def _quantize(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    q = Operands.of(node, inputs)
    code = node_attribute(node, "output_dtype", 0)
    out = element_name(q.zero) if q.zero is not None else ELEMENT_TYPES[code] if code else "ui8"
    if out not in INTEGER_RANGES and out not in FLOAT8:
        raise Unsupported(f"output type {out} is not a quantized type rlx computes on")
    if node_attribute(node, "precision", 0) not in (0, onnx.TensorProto.FLOAT):
        raise Unsupported("a division precision other than float32 is not supported")
    saturate = bool(node_attribute(node, "saturate", 1))
    if q.known():
        return [_quantized_array(q, out, saturate)]
    b = ctx.builder
    scaled = b.div(b.cast(ctx.tensor(q.x), "f32"), q.parameter(ctx, q.scale))
    if out in FLOAT8:
        return [b.cast(scaled, out, saturate)]
    rounded = b.round(scaled)
    if q.zero is not None:
        rounded = b.add(rounded, q.parameter(ctx, q.zero))
    low, high = INTEGER_RANGES[out]
    clipped = b.binary("min", b.binary("max", rounded, b.constant(low, "f32")), b.constant(high, "f32"))
    return [b.cast(clipped, out)]


def _quantized_array(q: Operands, out: str, saturate: bool) -> np.ndarray:
    """QuantizeLinear of known inputs, with NumPy, as above."""
    scaled = np.asarray(q.x, np.float32) / q.spread(np.asarray(q.scale))
    if out in FLOAT8:
        return fold_cast(scaled, out, saturate)
    rounded = np.rint(scaled) + (0 if q.zero is None else q.spread(np.asarray(q.zero)))
    low, high = INTEGER_RANGES[out]
    return np.clip(rounded, low, high).astype(dtypes.from_name(out).numpy)


IMPORTERS: dict[str, Importer] = {"QuantizeLinear": _quantize, "DequantizeLinear": _dequantize}
"""The quantization importers."""
