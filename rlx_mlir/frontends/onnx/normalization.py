"""Import of ONNX's normalizations: LayerNormalization, RMSNormalization,
InstanceNormalization, GroupNormalization and BatchNormalization.

RMS normalization scales x by 1/sqrt(mean(x²) + epsilon); layer and instance
normalization standardize x over some axes, (x − mean) ·
1/sqrt(var + epsilon), written as the reductions and elementwise ops
`fuse-standardization` makes one `rlx.standardize_region` (one kernel per row)
when the standardized axis is the last one. Instance normalization merges the
spatial axes into one last axis first, so it gets the same kernel; torch's
GroupNorm, which exporters write as a reshape to [N, groups, -1] around an
InstanceNormalization, gets it too.

Batch normalization at inference applies per-channel statistics given as
operands. With all four known at import (a model's initializers) it is one
multiply-add per element, y = x · a + c with a = scale / sqrt(var + epsilon)
and c = B − mean · a computed in float64 and rounded once to x's type: an
elementwise chain the fusion passes merge into their neighbours (a conv's
epilogue). In training mode the batch's own statistics standardize x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
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


@dataclass(frozen=True)
class Standardized:
    """x standardized over some axes, and the statistics it took (the axes kept as 1s)."""

    normalized: SSAValue
    mean: SSAValue
    variance: SSAValue
    inv_std_dev: SSAValue


def standardized(b: Builder, x: SSAValue, axes: list[int], epsilon: float) -> Standardized:
    """(x − mean) · 1/sqrt(var + epsilon) over `axes` (the population variance)."""
    mean = b.reduce_mean(x, axes, True)
    centered = b.sub(x, mean)
    variance = b.reduce_mean(b.mul(centered, centered), axes, True)
    inv_std_dev = b.rsqrt(b.add(variance, b.constant(epsilon, element_name(x))))
    return Standardized(b.mul(centered, inv_std_dev), mean, variance, inv_std_dev)


def _epsilon(node: onnx.NodeProto) -> float:
    return float(node_attribute(node, "epsilon", 1e-5))


def _axes_from(node: onnx.NodeProto, rank: int) -> list[int]:
    """The axes from `axis` (default the last) on: the ones layer and RMS normalization reduce."""
    return list(range(checked_axis(int(node_attribute(node, "axis", -1)), rank), rank))


def _layer_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """(x − mean) / sqrt(var + epsilon) · scale + bias over the axes from `axis` on;
    the optional outputs Mean and InvStdDev keep the normalized axes as 1s."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    s = standardized(b, x, _axes_from(node, len(shape_of(x.type))), _epsilon(node))
    y = b.mul(s.normalized, ctx.tensor(inputs[1]))
    if len(inputs) > 2 and inputs[2] is not None:
        y = b.add(y, ctx.tensor(inputs[2]))
    return [y, s.mean, s.inv_std_dev]


def _rms_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x / sqrt(mean(x²) + epsilon) · scale over the axes from `axis` on (opset 23),
    computed in `stash_type` (f32 by default) where x's type is narrower."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    dtype = element_name(x)
    axes = _axes_from(node, len(shape_of(x.type)))
    stash = ELEMENT_TYPES.get(int(node_attribute(node, "stash_type", onnx.TensorProto.FLOAT)), "f32")
    compute = stash if dtype in ("f16", "bf16") and stash in ("f32", "f64") else dtype
    wide = b.cast(x, compute) if compute != dtype else x
    mean_square = b.reduce_mean(b.mul(wide, wide), axes, True)
    normalized = b.mul(wide, b.rsqrt(b.add(mean_square, b.constant(_epsilon(node), compute))))
    normalized = b.cast(normalized, dtype) if compute != dtype else normalized
    return [b.mul(normalized, ctx.tensor(inputs[1]))]


def _lp_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """x / ||x||_p along `axis` (p = 1 or 2); a zero norm gives 0, as ONNX's reference."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    rank = len(shape_of(x.type))
    axis = checked_axis(int(node_attribute(node, "axis", -1)), rank)
    p = int(node_attribute(node, "p", 2))
    if p not in (1, 2):
        raise Unsupported(f"p {p} is not supported (1 or 2)")
    norm = b.reduce_sum(b.abs(x), [axis], True) if p == 1 else b.sqrt(b.reduce_sum(b.mul(x, x), [axis], True))
    zero = b.constant(0, element_name(x))
    is_zero = b.compare("eq", norm, zero)
    return [b.where(is_zero, zero, b.div(x, b.where(is_zero, b.constant(1, element_name(x)), norm)))]


def _mean_variance_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """(x − mean) / sqrt(var) over `axes` (default N and the spatial axes of [N, C, H, W]),
    with ONNX's function's epsilon of 1e-9 under the root."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    rank = len(shape_of(x.type))
    axes = [int(a) % rank for a in node_attribute(node, "axes", [0, 2, 3])]
    return [standardized(b, x, axes, 1e-9).normalized]


def _channel_input(x: SSAValue, node: onnx.NodeProto) -> tuple[int, ...]:
    """x's shape, which must be [N, C, ...] with the per-channel operands' C."""
    shape = shape_of(x.type)
    if len(shape) < 2:
        raise Unsupported(f"its input has shape {list(shape)}; {node.op_type} takes [N, C, ...]")
    return shape


def _check_per_channel(ctx: Import, value: Value, shape: tuple[int, ...], what: str) -> None:
    if ctx.shape(value) != (shape[1],):
        raise Unsupported(f"{what} has shape {list(ctx.shape(value))}, not [{shape[1]}] (one per channel)")


def _per_channel(ctx: Import, value: Value | None, shape: tuple[int, ...], what: str) -> SSAValue:
    """A [C] operand as [C, 1, ...]: one value per channel, broadcast over the spatial axes."""
    v = present(value)
    _check_per_channel(ctx, v, shape, what)
    along = [shape[1]] + [1] * (len(shape) - 2)
    if isinstance(v, np.ndarray):
        return ctx.tensor(v.reshape(along))
    return ctx.builder.reshape(v, along)


def _scaled_per_channel(
    ctx: Import, y: SSAValue, operands: list[Value | None], shape: tuple[int, ...], names: tuple[str, str]
) -> SSAValue:
    """y · scale + bias, both [C] operands broadcast over the spatial axes of `shape`."""
    scale, bias = (_per_channel(ctx, v, shape, what) for v, what in zip(operands, names))
    return ctx.builder.add(ctx.builder.mul(y, scale), bias)


def _instance_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Per sample and channel, (x − mean) / sqrt(var + epsilon) over the spatial axes, · scale + B."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    shape = _channel_input(x, node)
    if len(shape) < 3:
        raise Unsupported(f"its input has shape {list(shape)}; InstanceNormalization takes [N, C, D1, ...]")
    rows = [shape[0], shape[1], int(np.prod(shape[2:]))]
    flat = b.reshape(x, rows) if len(shape) != 3 else x
    normalized = standardized(b, flat, [2], _epsilon(node)).normalized
    y = _scaled_per_channel(ctx, normalized, inputs[1:3], (shape[0], shape[1], 1), ("scale", "B"))
    return [b.reshape(y, shape) if len(shape) != 3 else y]


def _group_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Per sample and group of C / num_groups channels, (x − mean) / sqrt(var + epsilon)
    over the group's channels and spatial axes, then · scale + bias per channel (opset
    21; ONNX's checker rejects opset 18's per-group scale and bias as deprecated)."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    shape = _channel_input(x, node)
    groups = int(node_attribute(node, "num_groups", 0))
    if groups <= 0 or shape[1] % groups:
        raise Unsupported(f"num_groups {groups} does not divide the {shape[1]} channels")
    grouped = b.reshape(x, [shape[0], groups, int(np.prod(shape[1:])) // groups])
    y = b.reshape(standardized(b, grouped, [2], _epsilon(node)).normalized, shape)
    return [_scaled_per_channel(ctx, y, inputs[1:3], shape, ("scale", "bias"))]


def _batch_norm(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """(x − mean) / sqrt(var + epsilon) · scale + B with the given per-channel statistics,
    or in training mode with the batch's, and their running averages as two more outputs."""
    if node_attribute(node, "training_mode", 0):
        return _batch_norm_training(ctx, node, inputs)
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    shape = _channel_input(x, node)
    scale, bias, mean, var = (present(v) for v in inputs[1:5])
    for v, what in ((scale, "scale"), (bias, "B"), (mean, "input_mean"), (var, "input_var")):
        _check_per_channel(ctx, v, shape, what)
    epsilon = _epsilon(node)
    statistics = [v.astype(np.float64) for v in (scale, bias, mean, var) if isinstance(v, np.ndarray)]
    if len(statistics) == 4:
        gamma, beta, mu, sigma2 = statistics
        factor = gamma / np.sqrt(sigma2 + epsilon)
        numpy = dtypes.from_name(element_name(x)).numpy
        a = _per_channel(ctx, factor.astype(numpy), shape, "scale")
        c = _per_channel(ctx, (beta - mu * factor).astype(numpy), shape, "B")
        return [b.add(b.mul(x, a), c)]
    m, v = _per_channel(ctx, mean, shape, "input_mean"), _per_channel(ctx, var, shape, "input_var")
    inv_std_dev = b.rsqrt(b.add(v, b.constant(epsilon, element_name(x))))
    return [_scaled_per_channel(ctx, b.mul(b.sub(x, m), inv_std_dev), [scale, bias], shape, ("scale", "B"))]


def _batch_norm_training(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Training mode: x standardized with the batch's mean and population variance per
    channel; running_mean and running_var are the given ones · momentum + the batch's · (1 − momentum)."""
    b = ctx.builder
    x = ctx.tensor(inputs[0])
    shape = _channel_input(x, node)
    s = standardized(b, x, [0, *range(2, len(shape))], _epsilon(node))
    y = _scaled_per_channel(ctx, s.normalized, inputs[1:3], shape, ("scale", "B"))
    momentum = float(node_attribute(node, "momentum", 0.9))
    dtype = element_name(x)
    keep, blend = b.constant(momentum, dtype), b.constant(1 - momentum, dtype)
    running = [
        b.add(b.mul(ctx.tensor(given), keep), b.mul(b.reshape(batch, [shape[1]]), blend))
        for given, batch in ((inputs[3], s.mean), (inputs[4], s.variance))
    ]
    return [y, *running]


IMPORTERS: dict[str, Importer] = {
    "LayerNormalization": _layer_norm,
    "RMSNormalization": _rms_norm,
    "LpNormalization": _lp_norm,
    "MeanVarianceNormalization": _mean_variance_norm,
    "InstanceNormalization": _instance_norm,
    "GroupNormalization": _group_norm,
    "BatchNormalization": _batch_norm,
}
"""The normalization importers."""
