"""Import of ONNX's convolution and pooling ops: `Conv` as `rlx.conv`,
`ConvTranspose` as one `rlx.conv` computing every output phase of known weights
(the zero-spread input's conv for weights given at run time),
`MaxPool` as `rlx.max_pool`, `GlobalAveragePool` and `GlobalMaxPool` as `rlx.reduce_mean`
and `rlx.reduce_max` over the spatial axes, and
`AveragePool` as a depthwise `rlx.conv` whose weights are 1 / window (with
`count_include_pad = 0`, the sum is divided by each window's count of real
inputs, a constant computed at import)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir.builder import Builder
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.frontends.onnx.composed import spread_blocks
from rlx_mlir.frontends.onnx.context import (
    Import,
    Importer,
    Unsupported,
    Value,
    element_name,
    node_attribute,
    present,
)
from rlx_mlir.frontends.onnx.ops import cropped


def _ints(node: onnx.NodeProto, name: str, default: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in node_attribute(node, name, default))


def _spatial_input(ctx: Import, value: Value | None, allowed: Sequence[str] = cv.CONV_TYPES) -> SSAValue:
    """The data input [N, C, spatial...], of an element type the kernel takes."""
    x = ctx.tensor(value)
    if len(ctx.shape(x)) < 3:
        raise Unsupported(f"input must be [N, C, spatial...] with a spatial axis, got shape {list(ctx.shape(x))}")
    if element_name(x) not in allowed:
        raise Unsupported(f"element type {element_name(x)} is not one of {', '.join(allowed)}")
    return x


def geometry(
    node: onnx.NodeProto, spatial_in: Sequence[int], kernel: Sequence[int], groups: int = 1
) -> cv.ConvGeometry:
    """The node's strides, dilations and pads (explicit, or from `auto_pad`), per spatial axis.

    SAME_UPPER / SAME_LOWER give ceil(I / s) outputs, the odd pad at the end
    (upper) or at the start (lower); VALID pads nothing."""
    rank = len(spatial_in)
    strides = _ints(node, "strides", (1,) * rank)
    dilations = _ints(node, "dilations", (1,) * rank)
    if len(strides) != rank or len(dilations) != rank:
        raise Unsupported(f"strides {list(strides)} and dilations {list(dilations)} need {rank} entries each")
    auto_pad = node_attribute(node, "auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad == "NOTSET":
        pads = _ints(node, "pads", (0,) * (2 * rank))
        if len(pads) != 2 * rank:
            raise Unsupported(f"pads {list(pads)} need {2 * rank} entries (begins, then ends)")
        return cv.ConvGeometry(strides, dilations, pads[:rank], pads[rank:], groups)
    if auto_pad == "VALID":
        return cv.ConvGeometry(strides, dilations, (0,) * rank, (0,) * rank, groups)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise Unsupported(f'auto_pad "{auto_pad}" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID')
    before, after = [], []
    for i, k, s, d in zip(spatial_in, kernel, strides, dilations):
        total = max(0, (-(-i // s) - 1) * s + d * (k - 1) + 1 - i)
        small, large = total // 2, total - total // 2
        before.append(small if auto_pad == "SAME_UPPER" else large)
        after.append(large if auto_pad == "SAME_UPPER" else small)
    return cv.ConvGeometry(strides, dilations, tuple(before), tuple(after), groups)


def _conv(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Conv: X [N, C, spatial...], W [M, C/group, kernel...], optional B [M]."""
    x = _spatial_input(ctx, inputs[0])
    w = ctx.tensor(inputs[1] if len(inputs) > 1 else None)
    bias = ctx.tensor(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else None
    shape, kernel = ctx.shape(x), ctx.shape(w)[2:]
    declared = node_attribute(node, "kernel_shape")
    if declared is not None and tuple(declared) != tuple(kernel):
        raise Unsupported(f"kernel_shape {list(declared)} differs from the weight's kernel {list(kernel)}")
    g = geometry(node, shape[2:], kernel, int(node_attribute(node, "group", 1)))
    return [ctx.builder.conv(x, w, bias, g.strides, g.dilations, g.pad_before, g.pad_after, g.groups)]


def _conv_transpose(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ConvTranspose: X [N, C, spatial...], W [C, M/group, kernel...], optional B [M].
    Known weights and pads >= 0: one conv computing every output phase (`_phased`).
    Otherwise the direct conv it equals (a fractionally strided conv): x with
    stride − 1 zeros between its elements along each spatial axis, padded by
    dilation·(kernel − 1) − pad at each end (+ output_padding at the end;
    negative amounts crop), convolved at stride 1 with each group's weights
    transposed to [M/group, C/group] and flipped along every spatial axis; the
    zeros cost stride^rank as many multiply-adds as the transposed conv needs."""
    x = _spatial_input(ctx, inputs[0])
    w = present(inputs[1] if len(inputs) > 1 else None)
    shape, (channels, _, *kernel) = ctx.shape(x), ctx.shape(w)
    rank, groups = len(shape) - 2, int(node_attribute(node, "group", 1))
    if len(kernel) != rank or channels != shape[1] or groups < 1 or channels % groups:
        raise Unsupported(
            f"weight shape {list(ctx.shape(w))} does not fit input {list(shape)} in {groups} group(s): "
            "ConvTranspose's weight is [C, M/group, kernel...]"
        )
    declared = node_attribute(node, "kernel_shape")
    if declared is not None and tuple(declared) != tuple(kernel):
        raise Unsupported(f"kernel_shape {list(declared)} differs from the weight's kernel {list(kernel)}")
    strides, dilations = _ints(node, "strides", (1,) * rank), _ints(node, "dilations", (1,) * rank)
    extra = _ints(node, "output_padding", (0,) * rank)
    if not len(strides) == len(dilations) == len(extra) == rank:
        raise Unsupported(f"strides, dilations and output_padding need {rank} entries each")
    pad_begin, pad_end = _transposed_pads(node, shape[2:], kernel, strides, dilations, extra)
    b = ctx.builder
    given_bias = inputs[2] if len(inputs) > 2 else None
    if isinstance(w, np.ndarray) and all(p >= 0 for p in (*pad_begin, *pad_end)):
        return [_phased(ctx, x, w, given_bias, strides, dilations, extra, groups, (pad_begin, pad_end))]
    before = [d * (k - 1) - p for d, k, p in zip(dilations, kernel, pad_begin)]
    after = [d * (k - 1) - p + e - (s - 1) for d, k, p, e, s in zip(dilations, kernel, pad_end, extra, strides)]
    spread = _spread(b, x, strides)
    spread = cropped(b, spread, [0, 0, *(max(-v, 0) for v in before)], [0, 0, *(max(-v, 0) for v in after)])
    flipped = _transposed_weight(ctx, w, groups)
    pads = [max(v, 0) for v in before], [max(v, 0) for v in after]
    bias = None if given_bias is None else ctx.tensor(given_bias)
    return [b.conv(spread, flipped, bias, (1,) * rank, dilations, *pads, groups)]


def _full_lengths(
    spatial_in: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    extra: Sequence[int],
) -> list[int]:
    """Per spatial axis, a transposed conv's output before its pads crop it:
    s·(I − 1) + d·(k − 1) + 1 + output_padding."""
    return [s * (i - 1) + d * (k - 1) + 1 + e for i, k, s, d, e in zip(spatial_in, kernel, strides, dilations, extra)]


def _phased(
    ctx: Import,
    x: SSAValue,
    w: np.ndarray,
    bias: Value | None,
    strides: Sequence[int],
    dilations: Sequence[int],
    extra: Sequence[int],
    groups: int,
    pads: tuple[Sequence[int], Sequence[int]],
) -> SSAValue:
    """A transposed conv with known weights as one conv at stride 1 over x itself.

    Along an axis, output position t = s·q + r (its phase r) gets x[q − m]·w[j] from
    every tap j with d·j = s·m + r: each phase is a correlation of x with the taps
    of that phase, reversed (P + 1 of them at most, P = ⌊d·(k − 1) / s⌋). All
    phases read the same x, so their kernels are stacked as output channels,
    C_out · Πs of them, channel c·Πs + phase (DepthToSpace's CRD order), and
    one conv computes them all; the channels are then spread into the output's
    s x s blocks (`spread_blocks`), and the pads (>= 0) cropped. It does
    Πs·(P + 1)^rank multiply-adds per output channel and input position where
    the transposed conv needs k^rank: the same when s divides k (no waste), 16
    against 9 for 3x3 stride 2; the zero-spread input costs Πs·k^rank."""
    b = ctx.builder
    shape = shape_of(x.type)
    channels, per_group, *kernel = w.shape
    rank, cells = len(kernel), int(np.prod(strides))
    reach = [d * (k - 1) // s for d, k, s in zip(dilations, kernel, strides)]
    full = _full_lengths(shape[2:], kernel, strides, dilations, extra)
    steps = [-(-f // s) for f, s in zip(full, strides)]
    routes = []  # per axis, [phase, position in the phase's kernel, tap]: where each tap goes
    for s, d, k, p in zip(strides, dilations, kernel, reach):
        route = np.zeros((s, p + 1, k))
        for j in range(k):
            route[d * j % s, p - d * j // s, j] = 1.0
        routes.append(route)
    taps = list(range(3, 3 + rank))
    phases, positions = list(range(3 + rank, 3 + 2 * rank)), list(range(3 + 2 * rank, 3 + 3 * rank))
    operands: list = [w.reshape(groups, channels // groups, per_group, *kernel).astype(np.float64), [0, 1, 2, *taps]]
    for route, phase, position, tap in zip(routes, phases, positions, taps):
        operands += [route, [phase, position, tap]]
    stacked = np.einsum(*operands, [0, 2, *phases, 1, *positions])
    weight = stacked.reshape(groups * per_group * cells, channels // groups, *(p + 1 for p in reach))
    repeated = np.repeat(bias, cells) if isinstance(bias, np.ndarray) else None
    z = b.conv(
        x,
        ctx.tensor(np.ascontiguousarray(weight.astype(w.dtype))),
        None if repeated is None else ctx.tensor(repeated),
        pad_before=reach,
        pad_after=[q - i for q, i in zip(steps, shape[2:])],
        groups=groups,
    )
    spread = spread_blocks(ctx, z, strides)
    assert isinstance(spread, SSAValue)  # z is a run-time value
    if bias is not None and repeated is None:
        spread = b.add(spread, b.reshape(ctx.tensor(bias), [groups * per_group, *[1] * rank]))
    past = [s * q - f + p for s, q, f, p in zip(strides, steps, full, pads[1])]
    return cropped(b, spread, [0, 0, *pads[0]], [0, 0, *past])


def _transposed_pads(
    node: onnx.NodeProto,
    spatial_in: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    extra: Sequence[int],
) -> tuple[list[int], list[int]]:
    """The pads ConvTranspose crops from its full output at each end: `pads`, or what
    `output_shape` (or SAME_*'s input · stride) leaves over, the odd one at the start
    unless SAME_UPPER (ONNX's rule)."""
    rank = len(spatial_in)
    auto_pad = node_attribute(node, "auto_pad", b"NOTSET").decode()
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise Unsupported(f'auto_pad "{auto_pad}" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID')
    target = node_attribute(node, "output_shape")
    if target is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = [i * s for i, s in zip(spatial_in, strides)]
    if target is None:
        pads = _ints(node, "pads", (0,) * (2 * rank)) if auto_pad == "NOTSET" else (0,) * (2 * rank)
        if len(pads) != 2 * rank:
            raise Unsupported(f"pads {list(pads)} need {2 * rank} entries (begins, then ends)")
        return list(pads[:rank]), list(pads[rank:])
    target = [int(t) for t in target][-rank:]
    full = _full_lengths(spatial_in, kernel, strides, dilations, extra)
    totals = [f - t for f, t in zip(full, target)]
    small, large = [t // 2 for t in totals], [t - t // 2 for t in totals]
    return (small, large) if auto_pad == "SAME_UPPER" else (large, small)


def _spread(b: Builder, x: SSAValue, strides: Sequence[int]) -> SSAValue:
    """x [N, C, i...] with s − 1 zeros after each element along each spatial axis: [N, C, i·s...]."""
    if all(s == 1 for s in strides):
        return x
    shape = shape_of(x.type)
    pairs = [d for i in shape[2:] for d in (i, 1)]
    zeros = [d for s in strides for d in (0, s - 1)]
    grown = b.pad(b.reshape(x, [*shape[:2], *pairs]), [0] * (2 + len(pairs)), [0, 0, *zeros])
    return b.reshape(grown, [*shape[:2], *(i * s for i, s in zip(shape[2:], strides))])


def _transposed_weight(ctx: Import, w: Value, groups: int) -> SSAValue:
    """ConvTranspose's [C, M/g, kernel...] as a conv's [M, C/g, kernel...]: each group's
    block transposed, every spatial axis reversed."""
    channels, per_group, *kernel = ctx.shape(w)
    split = [groups, channels // groups, per_group, *kernel]
    perm = [0, 2, 1, *range(3, 3 + len(kernel))]
    joined = [groups * per_group, channels // groups, *kernel]
    spatial = list(range(2, 2 + len(kernel)))
    if isinstance(w, np.ndarray):
        return ctx.tensor(
            np.ascontiguousarray(np.flip(w.reshape(split).transpose(perm).reshape(joined), tuple(spatial)))
        )
    b = ctx.builder
    return b.reverse(b.reshape(b.transpose(b.reshape(w, split), perm), joined), spatial)


def _global_average_pool(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """The mean over every spatial axis, kept as 1s: [N, C, 1, ...]."""
    x = _spatial_input(ctx, inputs[0])
    return [ctx.builder.reduce_mean(x, list(range(2, len(ctx.shape(x)))), keepdims=True)]


def _global_max_pool(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """The max over every spatial axis, kept as 1s: [N, C, 1, ...]."""
    x = _spatial_input(ctx, inputs[0], cv.POOL_TYPES)
    return [ctx.builder.reduce_max(x, list(range(2, len(ctx.shape(x)))), keepdims=True)]


def _window_counts(
    spatial_in: Sequence[int], kernel: Sequence[int], g: cv.ConvGeometry, padded: cv.ConvGeometry
) -> np.ndarray:
    """How many inputs each output window of `g` covers over the output's spatial axes:
    real inputs, and the explicit pads of `padded` (its pads, or none)."""
    counts = np.ones((), np.float64)
    for axis, (i, k, s, d) in enumerate(zip(spatial_in, kernel, g.strides, g.dilations)):
        outputs = (i + g.pad_before[axis] + g.pad_after[axis] - d * (k - 1) - 1) // s + 1
        positions = np.arange(outputs)[:, None] * s + np.arange(k)[None, :] * d - g.pad_before[axis]
        low, high = -padded.pad_before[axis], i + padded.pad_after[axis]
        counts = np.multiply.outer(counts, ((positions >= low) & (positions < high)).sum(axis=1).astype(np.float64))
    return counts


def _ceil_mode(spatial_in: Sequence[int], kernel: Sequence[int], g: cv.ConvGeometry) -> cv.ConvGeometry:
    """`g` with pad_after grown so the output rounds up, except for a last window
    that would start in the right padding (ONNX drops it)."""
    after = []
    for axis, (i, k, s, d) in enumerate(zip(spatial_in, kernel, g.strides, g.dilations)):
        pb, pa, span = g.pad_before[axis], g.pad_after[axis], d * (k - 1) + 1
        outputs = -(-(i + pb + pa - span) // s) + 1
        if (outputs - 1) * s >= i + pb:
            outputs -= 1
        after.append(pa + max(0, (outputs - 1) * s + span - (i + pb + pa)))
    return cv.ConvGeometry(g.strides, g.dilations, g.pad_before, tuple(after), g.groups)


def _average_pool(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """AveragePool as a depthwise conv: weights 1 / window where every window
    covers the same count, else weights 1 and a division by each window's count
    (real inputs, plus the explicit pads with count_include_pad; never the
    padding ceil_mode adds), a constant computed at import."""
    x = _spatial_input(ctx, inputs[0])
    shape = ctx.shape(x)
    kernel = _ints(node, "kernel_shape", ())
    if len(kernel) != len(shape) - 2:
        raise Unsupported(f"kernel_shape {list(kernel)} needs one entry per spatial axis of {list(shape)}")
    b, channels, element = ctx.builder, shape[1], element_name(x)
    explicit = geometry(node, shape[2:], kernel, groups=channels)
    g = _ceil_mode(shape[2:], kernel, explicit) if int(node_attribute(node, "ceil_mode", 0)) else explicit
    include_pad = bool(node_attribute(node, "count_include_pad", 0))
    counts = _window_counts(shape[2:], kernel, g, explicit if include_pad else cv.ConvGeometry.default(len(kernel)))
    uniform = bool(counts.size) and bool(np.all(counts == counts.flat[0]))
    weight = np.full((channels, 1, *kernel), 1.0 / counts.flat[0] if uniform else 1.0)
    total = b.conv(x, b.constant(weight, element), None, g.strides, g.dilations, g.pad_before, g.pad_after, channels)
    return [total if uniform else b.div(total, b.constant(counts, element))]


def _max_pool(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """MaxPool as rlx.max_pool: explicit pads or auto_pad, dilations, ceil_mode (the
    extra padding is -inf too, so it is never chosen); not the Indices output."""
    if len(node.output) > 1 and node.output[1]:
        raise Unsupported("the Indices output is not supported")
    x = _spatial_input(ctx, inputs[0], cv.POOL_TYPES)
    shape = ctx.shape(x)
    kernel = _ints(node, "kernel_shape", ())
    if len(kernel) != len(shape) - 2:
        raise Unsupported(f"kernel_shape {list(kernel)} needs one entry per spatial axis of {list(shape)}")
    g = geometry(node, shape[2:], kernel)
    if int(node_attribute(node, "ceil_mode", 0)):
        g = _ceil_mode(shape[2:], kernel, g)
    return [ctx.builder.max_pool(x, kernel, g.strides, g.dilations, g.pad_before, g.pad_after)]


IMPORTERS: dict[str, Importer] = {
    "Conv": _conv,
    "ConvTranspose": _conv_transpose,
    "GlobalAveragePool": _global_average_pool,
    "GlobalMaxPool": _global_max_pool,
    "AveragePool": _average_pool,
    "MaxPool": _max_pool,
}
