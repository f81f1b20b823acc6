"""Import of ONNX's `Resize` (opsets 13 to 19: modes nearest, linear and
cubic; every coordinate transformation mode; `antialias`, `axes`,
`exclude_outside`, `extrapolation_value`, `keep_aspect_ratio_policy`).

Resize is separable: each resized axis maps output position y to a source
coordinate x(y), and the output is a weighted sum of a few input positions
around x(y) (its taps) along that axis alone. The sizes, and so every tap's
index and weight, are known at import, so each axis becomes a table
(`AxisTaps`, computed here with NumPy) and then rlx ops: one `rlx.gather`
along the axis per tap, each multiplied by its weights (a constant that
broadcasts along the other axes) and summed, which `fuse-elementwise` turns
into one region per axis. Nearest is one gather per axis. Axes that shrink
go first, so later axes read less.

Semantics are ONNX's reference (`onnx.reference.ops.op_resize`), which its
node tests check: the output length from `scales` is ⌊in · scale⌋;
`align_corners` divides by the resized length in · scale, not by the output
size; the taps at an integer coordinate are the ones left of it; edge taps
read the edge (clamped indices) unless `exclude_outside` drops them and
renormalizes. One exception: `pytorch_half_pixel` maps a resized length of 1
or less to coordinate 0, as ONNX's operator text says (the reference uses
-0.5; linear and nearest read the same pixel either way).

Linear and cubic compute in f32 (f16, bf16) or the input's float type;
nearest moves elements of any type. An integer input in linear or cubic mode
is `Unsupported`: ONNX leaves its rounding open (the reference truncates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.frontends.onnx.context import (
    Import,
    Importer,
    Unsupported,
    Value,
    element_name,
    known,
    node_attribute,
    present,
)

COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
SUPPORT = {"linear": 1.0, "cubic": 2.0}
"""The radius of each interpolating kernel, in input positions (at scale 1)."""

COMPUTE_TYPES = {"f16": "f32", "bf16": "f32", "f32": "f32", "f64": "f64"}
"""The type linear and cubic resizes compute in, per input type."""


@dataclass(frozen=True)
class Attributes:
    """A Resize node's attributes, checked."""

    mode: str
    coordinates: str
    nearest: str
    cubic_a: float
    antialias: bool
    exclude_outside: bool
    extrapolation: float
    aspect_policy: str

    @classmethod
    def of(cls, node: onnx.NodeProto) -> Attributes:
        def text(name: str, default: str, allowed: Sequence[str]) -> str:
            value = node_attribute(node, name, default.encode()).decode()
            if value not in allowed:
                raise Unsupported(f"{name} {value!r} is not one of {', '.join(allowed)}")
            return value

        mode = text("mode", "nearest", ("nearest", *SUPPORT))
        antialias = bool(node_attribute(node, "antialias", 0))
        if antialias and mode == "nearest":
            raise Unsupported("antialias applies to linear and cubic modes, not nearest")
        return cls(
            mode=mode,
            coordinates=text("coordinate_transformation_mode", "half_pixel", COORDINATE_MODES),
            nearest=text("nearest_mode", "round_prefer_floor", NEAREST_MODES),
            cubic_a=float(node_attribute(node, "cubic_coeff_a", -0.75)),
            antialias=antialias,
            exclude_outside=bool(node_attribute(node, "exclude_outside", 0)),
            extrapolation=float(node_attribute(node, "extrapolation_value", 0.0)),
            aspect_policy=text("keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller")),
        )


@dataclass(frozen=True)
class AxisResize:
    """One axis's resize: its input and output lengths, the scale the coordinates
    use, and its region of interest (fractions of the input; tf_crop_and_resize only)."""

    axis: int
    length_in: int
    length_out: int
    scale: float
    """`scales`' float32 value, or output / input from `sizes`."""
    roi: tuple[float, float] = (0.0, 1.0)

    @property
    def resized(self) -> float:
        """The resized length in · scale, a real number."""
        return self.scale * self.length_in


@dataclass(frozen=True)
class AxisTaps:
    """What one axis's output position y reads: the sum over taps k of
    weights[y, k] · input[indices[y, k]] (indices clamped into the input), or
    the extrapolation value where `outside[y]`."""

    indices: np.ndarray
    weights: np.ndarray
    outside: np.ndarray

    def is_identity(self, length_in: int) -> bool:
        """Output position y is input element y, for every y of an axis as long as the input's."""
        return (
            self.indices.shape == (length_in, 1)
            and np.array_equal(self.indices[:, 0], np.arange(length_in))
            and bool(np.all(self.weights == 1.0))
            and not self.outside.any()
        )


# What each output position reads ----------------------------------------------


def source_coordinates(a: Attributes, r: AxisResize) -> tuple[np.ndarray, np.ndarray]:
    """x(y) for every output position y, and where it falls outside the input
    (tf_crop_and_resize's extrapolated positions; never elsewhere)."""
    y = np.arange(r.length_out, dtype=np.float64)
    resized = r.resized
    centers = (y + 0.5) / r.scale - 0.5
    outside = np.zeros(r.length_out, bool)
    if a.coordinates == "half_pixel":
        x = centers
    elif a.coordinates == "half_pixel_symmetric":
        x = r.length_in / 2 * (1 - r.length_out / resized) + centers
    elif a.coordinates == "pytorch_half_pixel":
        x = centers if resized > 1 else np.zeros_like(y)
    elif a.coordinates == "align_corners":
        x = y * (r.length_in - 1) / (resized - 1) if resized != 1 else np.zeros_like(y)
    elif a.coordinates == "asymmetric":
        x = y / r.scale
    else:  # tf_crop_and_resize
        start, end = r.roi
        last = r.length_in - 1
        if resized != 1:
            x = start * last + y * (end - start) * last / (resized - 1)
        else:
            x = np.full_like(y, (start + end) / 2 * last)
        outside = (x < 0) | (x > last)
    return x, outside


def _cubic(distance: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter a (-0.75 as PyTorch, -0.5 as TensorFlow)."""
    d = np.abs(distance)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def axis_taps(a: Attributes, r: AxisResize) -> AxisTaps:
    """The taps of every output position along one axis."""
    x, outside = source_coordinates(a, r)
    left = np.floor(x)
    on_grid = x == left
    left = np.where(on_grid, left - 1, left)  # at an integer x, its left neighbour and itself
    frac = x - left  # in (0, 1]
    if a.mode == "nearest":
        offsets, weights = _nearest(a.nearest, frac)
    else:
        offsets, weights = _interpolating(a, r.scale, frac)
    indices = left.astype(np.int64)[:, None] + offsets
    if a.exclude_outside:
        weights = np.where((indices < 0) | (indices >= r.length_in), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    kept = np.any(weights != 0, axis=0)  # taps no position uses (nearest's, an edge's) read nothing
    if not kept.any():
        kept[0] = True
    clamped = np.clip(indices[:, kept], 0, r.length_in - 1)
    return AxisTaps(clamped, weights[:, kept], outside)


def _nearest(mode: str, frac: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One tap: the left neighbour (offset 0) or the right one (offset 1), as `mode` rounds."""
    if mode == "round_prefer_floor":
        right = frac > 0.5
    elif mode == "round_prefer_ceil":
        right = frac >= 0.5
    else:
        right = np.full(frac.shape, mode == "ceil")
    right |= frac == 1  # on the grid: the position itself
    return right.astype(np.int64)[:, None], np.ones((len(frac), 1))


def _interpolating(a: Attributes, scale: float, frac: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Linear or cubic taps: offsets first .. 1 - first around the left neighbour.
    With antialias a downscale stretches the kernel by 1 / scale (more taps) and
    the weights are normalized to sum to 1."""
    stretch = min(scale, 1.0) if a.antialias else 1.0
    first = int(np.floor(-SUPPORT[a.mode] / stretch)) + 1
    offsets = np.arange(first, 2 - first)
    distance = (offsets[None, :] - frac[:, None]) * stretch
    weights = np.maximum(1 - np.abs(distance), 0.0) if a.mode == "linear" else _cubic(distance, a.cubic_a)
    if a.antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.broadcast_to(offsets, weights.shape), weights


# The node's operands ------------------------------------------------------------


def _optional(value: Value | None, what: str) -> np.ndarray | None:
    """An optional shape-like operand: None when omitted or empty (exporters write
    an empty constant for an unused one); it must be known at import."""
    if value is None:
        return None
    array = known(value, what)
    return array.reshape(-1) if array.size else None


def _resized_axes(
    node: onnx.NodeProto, inputs: list[Value | None], shape: Sequence[int], a: Attributes
) -> list[AxisResize]:
    """Each resized axis's lengths, scale and region of interest, from `scales` or
    `sizes` (one entry per axis of `axes`, default every axis)."""
    rank = len(shape)
    axes = [int(v) for v in node_attribute(node, "axes", range(rank))]
    if any(not -rank <= v < rank for v in axes) or len({v % rank for v in axes}) != len(axes):
        raise Unsupported(f"axes {axes} are not distinct axes of a rank-{rank} input")
    axes = [v % rank for v in axes]
    roi, scales, sizes = (
        _optional(inputs[k] if len(inputs) > k else None, what) for k, what in ((1, "roi"), (2, "scales"), (3, "sizes"))
    )
    given = [(what, v) for what, v in (("scales", scales), ("sizes", sizes)) if v is not None]
    if len(given) != 1:
        raise Unsupported("exactly one of scales and sizes must be given")
    ((what, values),) = given
    if len(values) != len(axes):
        raise Unsupported(f"{what} has {len(values)} entries for {len(axes)} axes")
    lengths = [shape[v] for v in axes]
    if what == "sizes":
        targets = [int(t) for t in values]
        if any(t < 0 for t in targets):
            raise Unsupported(f"sizes {targets} are not all >= 0")
        factors = [t / n if n else 1.0 for t, n in zip(targets, lengths)]
        if a.aspect_policy != "stretch":
            one = (min if a.aspect_policy == "not_larger" else max)(factors)
            factors = [one] * len(axes)
            targets = [int(one * n + 0.5) for n in lengths]
    else:
        factors = [float(f) for f in values]
        if any(not f > 0 for f in factors):
            raise Unsupported(f"scales {factors} are not all > 0")
        targets = [int(np.floor(f * n)) for f, n in zip(factors, lengths)]
    regions = _regions(roi, len(axes), a)
    return [AxisResize(v, n, t, f, region) for v, n, t, f, region in zip(axes, lengths, targets, factors, regions)]


def _regions(roi: np.ndarray | None, count: int, a: Attributes) -> list[tuple[float, float]]:
    """Each resized axis's (start, end), from roi = [starts..., ends...] (tf_crop_and_resize reads it)."""
    if a.coordinates != "tf_crop_and_resize":
        return [(0.0, 1.0)] * count
    if roi is None or len(roi) != 2 * count:
        raise Unsupported(f"tf_crop_and_resize needs roi with {2 * count} entries (starts, then ends)")
    values = [float(v) for v in roi]
    return list(zip(values[:count], values[count:]))


# Import -----------------------------------------------------------------------------


def _resize(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    x = present(inputs[0])
    a = Attributes.of(node)
    plan = _resized_axes(node, inputs, ctx.shape(x), a)
    out_shape = list(ctx.shape(x))
    for r in plan:
        out_shape[r.axis] = r.length_out
    dtype = element_name(x)
    if a.mode != "nearest" and dtype not in COMPUTE_TYPES:
        raise Unsupported(f"{a.mode} mode on element type {dtype}: rlx resizes f16, bf16, f32 and f64 this way")
    if 0 in ctx.shape(x) or 0 in out_shape:  # no data: known at import
        if 0 not in out_shape:
            raise Unsupported(f"an empty input of shape {list(ctx.shape(x))} cannot become shape {out_shape}")
        return [np.zeros(out_shape, dtypes.from_name(dtype).numpy)]
    shrinking_first = sorted(plan, key=lambda r: r.length_out / r.length_in)
    tables = [(r, axis_taps(a, r)) for r in shrinking_first]
    tables = [(r, t) for r, t in tables if not t.is_identity(r.length_in)]
    if isinstance(x, np.ndarray):
        return [_resized_array(x, a, tables)]
    return [_resized_tensor(ctx, x, a, tables)]


def _resized_tensor(ctx: Import, x: SSAValue, a: Attributes, tables: list[tuple[AxisResize, AxisTaps]]) -> SSAValue:
    b = ctx.builder
    dtype = element_name(x)
    if a.mode != "nearest" and COMPUTE_TYPES[dtype] != dtype:
        x = b.cast(x, COMPUTE_TYPES[dtype])
    rank = len(shape_of(x.type))
    for r, taps in tables:
        x = _resized_axis(ctx, x, r.axis, rank, taps, a.extrapolation)
    return b.cast(x, dtype) if element_name(x) != dtype else x


def _resized_axis(ctx: Import, x: SSAValue, axis: int, rank: int, taps: AxisTaps, extrapolation: float) -> SSAValue:
    """Σ_k weights[:, k] · gather(x, indices[:, k]) along `axis`, then the extrapolation value where outside."""
    b = ctx.builder
    along = [len(taps.indices)] + [1] * (rank - axis - 1)  # a per-position constant broadcasts over the other axes
    dtype = element_name(x)
    total: SSAValue | None = None
    for k in range(taps.indices.shape[1]):
        picked = b.gather(x, b.constant(taps.indices[:, k].copy(), "i64"), axis)
        weights = taps.weights[:, k]
        if np.all(weights == 1.0):
            term = picked
        else:
            term = b.mul(picked, b.constant(weights.reshape(along), dtype))
        total = term if total is None else b.add(total, term)
    assert total is not None  # every table keeps at least one tap
    if taps.outside.any():
        total = b.where(b.constant(taps.outside.reshape(along), "i1"), b.constant(extrapolation, dtype), total)
    return total


def _resized_array(x: np.ndarray, a: Attributes, tables: list[tuple[AxisResize, AxisTaps]]) -> np.ndarray:
    """A Resize of a known input, from the same tables, in float64 (as ONNX's reference)."""
    y = x if a.mode == "nearest" else x.astype(np.float64)
    for r, taps in tables:
        along = [len(taps.indices)] + [1] * (x.ndim - r.axis - 1)
        picked = np.take(y, taps.indices, axis=r.axis)  # the taps as a new axis after `axis`
        if a.mode == "nearest" and np.all(taps.weights == 1.0):
            y = picked[(slice(None),) * (r.axis + 1) + (0,)]
        else:
            weights = taps.weights.reshape([*along[:1], taps.weights.shape[1], *along[1:]])
            y = (picked * weights).sum(axis=r.axis + 1)
        if taps.outside.any():
            y = np.where(taps.outside.reshape(along), a.extrapolation, y)
    return y.astype(x.dtype)


IMPORTERS: dict[str, Importer] = {"Resize": _resize}
"""The Resize importer."""
