"""Importers of the ONNX ops rlx has no op for, each composed from existing rlx
ops (opsets 13 and up):

- CumSum: an rlx.scan along the axis whose trajectory is the running sum, one
  add per element in any type rlx.add takes. A log-step (Hillis-Steele) prefix
  sum of ⌈log2 n⌉ shifted adds, tried first, was 4-8× slower (it writes a
  tensor per step): 43.8 against 8.3 ms for [8, 4, 256, 256] along the last
  axis (onnxruntime: 11-15 ms), 0.13 against 0.020 ms for [1024, 64] along
  the first (onnxruntime: 0.026 ms); a matmul with a triangular constant costs n multiply-adds per
  element and an n×n constant;
- Trilu: an rlx.where over a constant [rows, cols] mask;
- OneHot: an rlx.compare of the indices against a constant iota, then rlx.where
  between the off and on values;
- Tile: rlx.expand of the input with a size-1 axis before each repeated one,
  then rlx.reshape merging each pair;
- DepthToSpace, SpaceToDepth: a reshape splitting the blocks out, a
  transpose, a reshape merging them back;
- Einsum (`einsum.py` reads the equation): each operand's diagonals as strided
  slices, labels summed as soon as no later term needs them, then the operands
  contracted left to right as batched rlx.matmul (transpose flags where the
  layout allows, else a transpose) or, with nothing to contract, a broadcast
  multiply.

Their shape-like operands (CumSum's axis, Trilu's k, OneHot's depth, Tile's
repeats) must be known at import; a run-time one is `Unsupported`, naming it.
A CumSum, Trilu, OneHot or Tile node whose data inputs are all known is
computed with NumPy, as ONNX's reference does (exporters write them into shape
and mask arithmetic)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.contraction import MATMUL_TYPES
from rlx_mlir.frontends.onnx.context import (
    Import,
    Importer,
    Unsupported,
    Value,
    checked_axis,
    element_name,
    known,
    node_attribute,
    present,
)
from rlx_mlir.frontends.onnx.einsum import Equation, parse_equation


def _integer(value: Value | None, what: str) -> int:
    """A scalar (or one-element) operand known at import, as an int."""
    array = known(value, what)
    if array.size != 1:
        raise Unsupported(f"its {what} has {array.size} elements, not one")
    return int(array.reshape(-1)[0])


def _numpy_type(value: SSAValue) -> np.dtype:
    return dtypes.from_ir(element_type(value.type)).numpy


def _reshaped(b: Builder, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """x in `shape` (no op when it has it already)."""
    return x if tuple(shape_of(x.type)) == tuple(shape) else b.reshape(x, shape)


# CumSum ----------------------------------------------------------------------


def _cumsum(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """y[i] = Σ x[j] over j ≤ i (j < i with `exclusive`; j ≥ i, j > i with `reverse`)."""
    x = present(inputs[0])
    shape = ctx.shape(x)
    axis = checked_axis(_integer(inputs[1], "axis"), len(shape))
    exclusive, reverse = bool(node_attribute(node, "exclusive", 0)), bool(node_attribute(node, "reverse", 0))
    if isinstance(x, np.ndarray):
        return [_numpy_cumsum(x, axis, exclusive, reverse)]
    return [prefix_sum(ctx.builder, x, axis, exclusive, reverse)]


def _numpy_cumsum(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    flipped = np.flip(x, axis) if reverse else x
    total = np.cumsum(flipped, axis=axis, dtype=x.dtype)
    if exclusive:
        total = np.concatenate([np.zeros_like(np.take(total, [0], axis)), np.delete(total, -1, axis)], axis)
    return np.flip(total, axis) if reverse else total


def prefix_sum(b: Builder, x: SSAValue, axis: int, exclusive: bool = False, reverse: bool = False) -> SSAValue:
    """An rlx.scan over `axis` (moved first) whose carry is the running sum and whose
    trajectory is the result: one add per element. `exclusive` shifts x by one place
    first; `reverse` runs the scan on x reversed along the axis."""
    shape = shape_of(x.type)
    if 0 in shape:  # nothing to sum (and rlx.scan needs a step): an empty constant
        return b.constant(np.zeros(shape, _numpy_type(x)), element_name(x))
    if exclusive:
        x = _shifted(b, x, axis, 1, reverse)
    perm = [axis, *(k for k in range(len(shape)) if k != axis)]
    steps = b.transpose(x, perm) if axis else x
    steps = b.reverse(steps, [0]) if reverse else steps
    start = b.constant(np.zeros(shape_of(steps.type)[1:], _numpy_type(x)), element_name(x))
    sums = b.scan(start, lambda body, total, step: body.add(total, step), xs=[steps], save_trajectory=True)
    sums = b.reverse(sums, [0]) if reverse else sums
    return b.transpose(sums, [int(k) for k in np.argsort(perm)]) if axis else sums


def _shifted(b: Builder, x: SSAValue, axis: int, by: int, toward_start: bool) -> SSAValue:
    """x moved `by` places along `axis` (toward higher indices, or lower with
    `toward_start`), zeros filling the places it leaves."""
    shape = shape_of(x.type)
    n = shape[axis]
    if by >= n:
        return b.constant(np.zeros(shape, _numpy_type(x)), element_name(x))
    kept = b.narrow(x, axis, by if toward_start else 0, n - by)
    pad, none = [0] * len(shape), [0] * len(shape)
    pad[axis] = by
    return b.pad(kept, none, pad) if toward_start else b.pad(kept, pad, none)


# Trilu -----------------------------------------------------------------------


def _trilu(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """The upper (j − i ≥ k) or lower (j − i ≤ k) triangle of the last two axes, zero elsewhere."""
    x = present(inputs[0])
    shape = ctx.shape(x)
    if len(shape) < 2:
        raise Unsupported(f"its input has rank {len(shape)}; Trilu needs rank 2 or more")
    k = _integer(inputs[1], "k") if len(inputs) > 1 and inputs[1] is not None else 0
    rows, cols = shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = offset >= k if node_attribute(node, "upper", 1) else offset <= k
    if isinstance(x, np.ndarray):
        return [np.where(keep, x, np.zeros((), x.dtype))]
    if keep.all():
        return [x]
    b = ctx.builder
    return [b.where(b.constant(keep, "i1"), x, b.constant(0, element_name(x)))]


# OneHot ----------------------------------------------------------------------


def _one_hot(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """values[1] where the index (negative ones wrapped by depth) equals its position
    along the new `axis`, values[0] elsewhere; an index out of [-depth, depth) matches none."""
    indices, values = present(inputs[0]), present(inputs[2])
    depth = _integer(inputs[1], "depth")
    if depth < 0:
        raise Unsupported(f"depth {depth} is negative")
    if int(np.prod(ctx.shape(values))) != 2:
        raise Unsupported(f"values has shape {list(ctx.shape(values))}; OneHot takes [off_value, on_value]")
    rank = len(ctx.shape(indices))
    axis = checked_axis(int(node_attribute(node, "axis", -1)), rank + 1)
    iota = np.arange(depth).reshape([depth] + [1] * (rank - axis))
    spread = [*ctx.shape(indices)[:axis], 1, *ctx.shape(indices)[axis:]]
    out = [*spread[:axis], depth, *spread[axis + 1 :]]
    if isinstance(indices, np.ndarray) and isinstance(values, np.ndarray):
        whole = indices.astype(np.int64)  # as below: a float index is truncated
        wrapped = np.where(whole < 0, whole + depth, whole).reshape(spread)
        off, on = values.reshape(-1)
        return [np.where(iota == wrapped, on, off).astype(values.dtype)]
    if 0 in out:  # an empty result has no data: known at import
        return [np.zeros(out, values.dtype if isinstance(values, np.ndarray) else _numpy_type(values))]
    b = ctx.builder
    index = ctx.tensor(indices)
    if element_name(index) != "i64":  # ONNX's indices may be any numeric type; a float one is truncated
        index = b.cast(index, "i64")
    zero, count = b.constant(0, "i64"), b.constant(depth, "i64")
    index = b.where(b.compare("lt", index, zero), b.add(index, count), index)
    hit = b.compare("eq", b.reshape(index, spread), b.constant(iota, "i64"))
    pair = ctx.tensor(values)
    pair = b.reshape(pair, [2]) if shape_of(pair.type) != (2,) else pair
    off, on = b.narrow(pair, 0, 0, 1), b.narrow(pair, 0, 1, 1)
    return [b.where(hit, on, off)]


# Tile ------------------------------------------------------------------------


def _tile(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """np.tile with one repeat count per axis: x viewed as [1, n] at each repeated
    axis, expanded to [r, n], and each pair merged into r·n."""
    x = present(inputs[0])
    shape = ctx.shape(x)
    repeats = [int(r) for r in known(inputs[1], "repeats operand").reshape(-1)]
    if len(repeats) != len(shape) or any(r < 0 for r in repeats):
        raise Unsupported(f"repeats {repeats} are not {len(shape)} counts >= 0 (one per axis of the input)")
    if isinstance(x, np.ndarray):
        return [np.tile(x, repeats)]
    tiled = [n * r for n, r in zip(shape, repeats)]
    if 0 in tiled:  # an empty result has no data: known at import
        return [np.zeros(tiled, _numpy_type(x))]
    if all(r == 1 for r in repeats):
        return [x]
    spread = [d for n, r in zip(shape, repeats) for d in ((n,) if r == 1 else (1, n))]
    expanded = [d for n, r in zip(shape, repeats) for d in ((n,) if r == 1 else (r, n))]
    b = ctx.builder
    return [b.reshape(b.expand(b.reshape(x, spread), expanded), tiled)]


# DepthToSpace, SpaceToDepth -----------------------------------------------------


def _depth_to_space(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """[N, C, H, W] -> [N, C / b², H·b, W·b]: channel blocks spread over b x b
    pixels, the block index outermost (DCR, the default) or innermost (CRD)."""
    x = present(inputs[0])
    n, c, h, w = _image_shape(ctx, x, "DepthToSpace")
    b = _block_size(node)
    if c % (b * b):
        raise Unsupported(f"{c} channels are not a multiple of blocksize² = {b * b}")
    if node_attribute(node, "mode", b"DCR").decode() == "CRD":
        return [spread_blocks(ctx, x, [b, b])]
    split, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
    return [_rearranged(ctx, x, split, perm, [n, c // (b * b), h * b, w * b])]


def _space_to_depth(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """[N, C, H, W] -> [N, C·b², H / b, W / b]: each b x b block of pixels becomes
    channels, the block position outermost (DCR, the default) or innermost (CRD, opset 28)."""
    x = present(inputs[0])
    n, c, h, w = _image_shape(ctx, x, "SpaceToDepth")
    b = _block_size(node)
    if h % b or w % b:
        raise Unsupported(f"height {h} and width {w} are not multiples of blocksize {b}")
    crd = node_attribute(node, "mode", b"DCR").decode() == "CRD"
    split, perm = [n, c, h // b, b, w // b, b], [0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4]
    return [_rearranged(ctx, x, split, perm, [n, c * b * b, h // b, w // b])]


def spread_blocks(ctx: Import, x: Value, blocks: Sequence[int]) -> Value:
    """[N, C·Πb, i...] -> [N, C, i·b...], any spatial rank: channel c·Πb + (r1, r2, ...)
    goes to position (i1·b1 + r1, i2·b2 + r2, ...) (DepthToSpace's CRD order; how
    ConvTranspose's output phases, computed as channels, become its output)."""
    n, channels, *spatial = ctx.shape(x)
    rank, cells = len(spatial), int(np.prod(blocks))
    split = [n, channels // cells, *blocks, *spatial]
    perm = [0, 1, *(axis for j in range(rank) for axis in (2 + rank + j, 2 + j))]
    return _rearranged(ctx, x, split, perm, [n, channels // cells, *(i * b for i, b in zip(spatial, blocks))])


def _image_shape(ctx: Import, x: Value, op: str) -> tuple[int, int, int, int]:
    shape = ctx.shape(x)
    if len(shape) != 4:
        raise Unsupported(f"its input has shape {list(shape)}; {op} takes [N, C, H, W]")
    n, c, h, w = shape
    return n, c, h, w


def _block_size(node: onnx.NodeProto) -> int:
    size = int(node_attribute(node, "blocksize", 0))
    if size < 1:
        raise Unsupported(f"blocksize {size} is not positive")
    return size


def _rearranged(ctx: Import, x: Value, split: list[int], perm: list[int], shape: list[int]) -> Value:
    """x viewed as `split`, its axes permuted by `perm`, viewed as `shape`."""
    if isinstance(x, np.ndarray):
        return x.reshape(split).transpose(perm).reshape(shape)
    b = ctx.builder
    return b.reshape(b.transpose(b.reshape(x, split), perm), shape)


# Einsum ----------------------------------------------------------------------


class _Term:
    """An operand during an Einsum: its value and one distinct label per axis."""

    def __init__(self, value: SSAValue, labels: Sequence[str]) -> None:
        self.value, self.labels = value, list(labels)

    def size(self, label: str) -> int:
        return shape_of(self.value.type)[self.labels.index(label)]

    def sizes(self, labels: Sequence[str]) -> list[int]:
        return [self.size(label) for label in labels]


def _einsum(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    values = [ctx.tensor(v) for v in inputs]
    text = node_attribute(node, "equation", b"").decode()
    equation = parse_equation(text, [shape_of(v.type) for v in values])
    element = element_name(values[0])
    if any(element_name(v) != element for v in values):
        raise Unsupported("its inputs have different element types")
    return [contract(ctx.builder, equation, values)]


def contract(b: Builder, equation: Equation, values: Sequence[SSAValue]) -> SSAValue:
    """The Einsum of `values` as `equation` labels them: diagonals taken, the operands
    contracted left to right, the rest summed and put in the output's order."""
    terms = [_diagonals(b, _Term(v, labels)) for v, labels in zip(values, equation.inputs)]
    output = equation.output
    while len(terms) > 1:
        first, second, rest = terms[0], terms[1], terms[2:]
        keep = set(output).union(*(t.labels for t in rest))
        first = _summed(b, first, [lb for lb in first.labels if lb not in keep and lb not in second.labels])
        second = _summed(b, second, [lb for lb in second.labels if lb not in keep and lb not in first.labels])
        terms = [_pair(b, first, second, keep), *rest]
    result = _summed(b, terms[0], [lb for lb in terms[0].labels if lb not in output])
    return _in_order(b, result, output).value


def _diagonals(b: Builder, term: _Term) -> _Term:
    """A label repeated in one term ('ii') takes the diagonal of its axes: the two
    axes moved last and merged, then every (n+1)-th element."""
    while True:
        repeated = next((lb for lb in term.labels if term.labels.count(lb) > 1), None)
        if repeated is None:
            return term
        first, second = [k for k, lb in enumerate(term.labels) if lb == repeated][:2]
        shape = shape_of(term.value.type)
        n = shape[first]
        if shape[second] != n:
            raise Unsupported(f"label '{repeated}' repeats over axes of sizes {n} and {shape[second]}")
        rest = [k for k in range(len(shape)) if k not in (first, second)]
        moved = _in_order(b, term, [term.labels[k] for k in rest] + [repeated] * 2, [*rest, first, second])
        outer = [shape[k] for k in rest]
        flat = _reshaped(b, moved.value, [*outer, n * n])
        diagonal = b.slice(flat, [0] * (len(outer) + 1), [1] * len(outer) + [n + 1], [*outer, n])
        term = _Term(diagonal, [term.labels[k] for k in rest] + [repeated])


def _summed(b: Builder, term: _Term, labels: Sequence[str], keepdims: bool = False) -> _Term:
    if not labels:
        return term
    axes = [term.labels.index(lb) for lb in labels]
    value = b.reduce_sum(term.value, axes, keepdims)
    return _Term(value, term.labels if keepdims else [lb for lb in term.labels if lb not in labels])


def _in_order(b: Builder, term: _Term, labels: Sequence[str], perm: Sequence[int] | None = None) -> _Term:
    """The term with its axes in the order of `labels` (`perm` when labels repeat)."""
    perm = [term.labels.index(lb) for lb in labels] if perm is None else list(perm)
    if perm == list(range(len(perm))):
        return _Term(term.value, labels)
    return _Term(b.transpose(term.value, perm), labels)


def _pair(b: Builder, lhs: _Term, rhs: _Term, keep: set[str]) -> _Term:
    """lhs · rhs summed over the shared labels no later term or the output needs:
    [batch, lhs-only, rhs-only]. A shared label of size 1 on one side (an ellipsis
    axis broadcast) is summed on the other side first."""
    shared = [lb for lb in lhs.labels if lb in rhs.labels]
    inner = [lb for lb in shared if lb not in keep]
    for label in inner:
        if lhs.size(label) != rhs.size(label):
            if lhs.size(label) == 1:
                rhs = _summed(b, rhs, [label], keepdims=True)
            else:
                lhs = _summed(b, lhs, [label], keepdims=True)
    batch = [lb for lb in shared if lb in keep]
    rows = [lb for lb in lhs.labels if lb not in rhs.labels]
    cols = [lb for lb in rhs.labels if lb not in lhs.labels]
    if inner and element_name(lhs.value) in MATMUL_TYPES:
        return _matmul(b, lhs, rhs, batch, rows, inner, cols)
    everything = [*batch, *rows, *cols, *inner]  # broadcast multiply, then sum the inner labels
    spread = [_spread(b, t, everything) for t in (lhs, rhs)]
    product = _Term(b.mul(*spread), everything)
    return _summed(b, product, inner)


def _spread(b: Builder, term: _Term, order: Sequence[str]) -> SSAValue:
    """The term's axes in `order`, a size-1 axis for each label it lacks."""
    ordered = _in_order(b, term, [lb for lb in order if lb in term.labels])
    return _reshaped(b, ordered.value, [term.size(lb) if lb in term.labels else 1 for lb in order])


def _matmul(
    b: Builder, lhs: _Term, rhs: _Term, batch: list[str], rows: list[str], inner: list[str], cols: list[str]
) -> _Term:
    """One batched rlx.matmul: lhs as [*batch, M, K] and rhs as [*batch, K, N] (sizes
    of 1 in the batch axes broadcast), each stored transposed where that saves a copy."""
    a, transpose_a = _matrix(b, lhs, batch, rows, inner)
    c, transpose_c = _matrix(b, rhs, batch, inner, cols)
    product = b.matmul(a, c, transpose_a, transpose_c)
    out_batch = list(shape_of(product.type)[: len(batch)])
    shape = [*out_batch, *lhs.sizes(rows), *rhs.sizes(cols)]
    return _Term(_reshaped(b, product, shape), [*batch, *rows, *cols])


def _matrix(b: Builder, term: _Term, batch: list[str], first: list[str], second: list[str]) -> tuple[SSAValue, bool]:
    """The term as [*batch, Π first, Π second], or as [*batch, Π second, Π first] and
    True (matmul's transpose flag) when its axes already lie in that order."""
    swapped = term.labels == [*batch, *second, *first] and term.labels != [*batch, *first, *second]
    order = [*batch, *second, *first] if swapped else [*batch, *first, *second]
    ordered = _in_order(b, term, order)
    groups = (second, first) if swapped else (first, second)
    shape = [*term.sizes(batch), *(int(np.prod(term.sizes(group))) for group in groups)]
    return _reshaped(b, ordered.value, shape), swapped


IMPORTERS: dict[str, Importer] = {
    "CumSum": _cumsum,
    "Trilu": _trilu,
    "OneHot": _one_hot,
    "Tile": _tile,
    "DepthToSpace": _depth_to_space,
    "SpaceToDepth": _space_to_depth,
    "Einsum": _einsum,
}
"""The importers of the ONNX ops composed from several rlx ops."""
