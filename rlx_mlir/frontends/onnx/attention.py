"""Import of ONNX's `Attention` (opsets 23 to 25) as one `rlx.attention`.

Covered: 4-D inputs [B, H, S, D] and 3-D ones [B, S, H·D] (split into heads
by `q_num_heads` / `kv_num_heads` and merged back in the output); `scale`
(default 1/√D); grouped-query and multi-query heads (kv head h // (Hq/Hkv)
for query head h, ONNX's interleaved repeat, which is rlx.attention's rule);
`attn_mask`, boolean (True attends: 0 / -inf through `rlx.where`) or an
additive float mask, its last axis padded with -inf up to the total key
count when shorter; `past_key` / `past_value` (concatenated before the new
keys and values, and the `present_key` / `present_value` outputs); `is_causal`,
top-left without a cache (the op's `causal`), bottom-right with one (query i
attends keys j <= i + past, an additive constant added to the mask);
`nonpad_kv_seqlen` (opset 24: keys from each batch entry's count on are
masked, and a causal query i attends keys j <= i + count − Sq); opset 25's
sliding window (`left_window_size`, `right_window_size`, from the same query
position), a constant bias, or compares against the counts. A fully masked
row gives zeros, as ONNX specifies and the kernel computes; the scale is
applied once to q·kᵀ, not as √scale to q and k (a few ulps of the scores).

What the kernel does not compute — a `softcap`, the `qk_matmul_output`
output (modes 0 to 3; mode 0 is the product, before any cap, as the spec
says), a `softmax_precision` other than the inputs' type (or f32 for f16/bf16
inputs, which the kernel computes in) — is imported as the reference's graph,
op by op (matmul, tanh, add, cast, softmax, the fully-masked-row guard on the
bias, matmul), which fuse-attention leaves alone. Nothing of the op is left
out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.ir import SSAValue

from rlx_mlir.builder import Builder
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    Import,
    Importer,
    Unsupported,
    Value,
    element_name,
    node_attribute,
)


def _input(inputs: list[Value | None], index: int) -> Value | None:
    return inputs[index] if len(inputs) > index else None


@dataclass(frozen=True)
class Extras:
    """What only the composed graph computes: a soft cap of the scores, the
    qk_matmul_output output (its mode: 0 the product, 1 after the cap, 2 with
    the mask, 3 the probabilities) and the softmax's element type."""

    softcap: float
    mode: int | None
    precision: str

    @staticmethod
    def of(node: onnx.NodeProto, dtype: str) -> Extras:
        mode = int(node_attribute(node, "qk_matmul_output_mode", 0))
        if not 0 <= mode <= 3:
            raise Unsupported(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
        precision = node_attribute(node, "softmax_precision")
        name = dtype if precision is None else ELEMENT_TYPES.get(int(precision))
        if name not in at.ATTENTION_TYPES:
            raise Unsupported(f"softmax_precision {name or precision} is not one of {', '.join(at.ATTENTION_TYPES)}")
        for window in ("left_window_size", "right_window_size"):
            if int(node_attribute(node, window, -1)) < -1:
                raise Unsupported(f"{window} must be -1 (unbounded) or >= 0")
        wanted = len(node.output) > 3 and bool(node.output[3])
        return Extras(float(node_attribute(node, "softcap", 0.0)), mode if wanted else None, name)

    def fused(self, dtype: str) -> bool:
        """Whether rlx.attention computes it: no cap, no scores output, the softmax
        in the inputs' type (or f32 for f16/bf16 inputs, which the kernel widens to)."""
        kernel = "f32" if dtype in ("f16", "bf16") else dtype
        return self.softcap <= 0.0 and self.mode is None and self.precision in (dtype, kernel)


def _repeated(b: Builder, x: SSAValue, times: int) -> SSAValue:
    """[B, H, S, D] with each head repeated `times` times in place (h0, h0, h1, h1, ...)."""
    if times == 1:
        return x
    batch, heads, seq, width = shape_of(x.type)
    wide = b.expand(b.reshape(x, [batch, heads, 1, seq, width]), [batch, heads, times, seq, width])
    return b.reshape(wide, [batch, heads * times, seq, width])


def _composed(
    b: Builder, qkv: tuple[SSAValue, SSAValue, SSAValue], bias: SSAValue | None, scale: float, extras: Extras
) -> tuple[SSAValue, SSAValue]:
    """(Y, qk_matmul_output) op by op as ONNX's reference computes them: √scale on q
    and k, the cap tanh(s / c) · c, the bias, the softmax in its precision, rows
    whose bias is -inf everywhere zeroed, the product with v."""
    q, k, v = qkv
    dtype = element_name(q)
    groups = shape_of(q.type)[1] // shape_of(k.type)[1]
    root = b.constant(np.array(np.sqrt(scale)), dtype)
    raw = b.matmul(b.mul(q, root), b.mul(_repeated(b, k, groups), root), transpose_rhs=True)
    capped = raw
    if extras.softcap > 0:
        cap = b.constant(np.array(extras.softcap), dtype)
        capped = b.mul(b.tanh(b.div(raw, cap)), cap)
    biased = capped if bias is None else b.add(capped, bias)
    wide = biased if extras.precision == dtype else b.cast(biased, extras.precision)
    p = b.softmax(wide)
    if bias is not None:
        blocked = b.eq(b.reduce_max(bias, [-1], keepdims=True), b.constant(np.array(-np.inf), dtype))
        p = b.where(blocked, b.constant(np.zeros(()), extras.precision), p)
    probs = p if extras.precision == dtype else b.cast(p, dtype)
    y = b.matmul(probs, _repeated(b, v, groups))
    return y, [raw, capped, biased, probs][extras.mode or 0]


def _heads(b: Builder, x: SSAValue, heads: int, what: str) -> SSAValue:
    """A 3-D [B, S, H·D] input as [B, H, S, D]."""
    batch, seq, hidden = shape_of(x.type)
    if heads < 1 or hidden % heads:
        raise Unsupported(f"{what}'s hidden size {hidden} is not a multiple of its {heads} heads")
    return b.transpose(b.reshape(x, [batch, seq, heads, hidden // heads]), [0, 2, 1, 3])


def _qkv(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Q, K and V as [B, H, S, D], whether given 3-D or 4-D."""
    q, k, v = (ctx.tensor(_input(inputs, i)) for i in range(3))
    ranks = {len(ctx.shape(x)) for x in (q, k, v)}
    if ranks == {4}:
        return q, k, v
    if ranks != {3}:
        raise Unsupported(f"Q, K and V must all be 3-D or all 4-D, got ranks {[len(ctx.shape(x)) for x in (q, k, v)]}")
    q_heads, kv_heads = node_attribute(node, "q_num_heads"), node_attribute(node, "kv_num_heads")
    if q_heads is None or kv_heads is None:
        raise Unsupported("3-D inputs need the q_num_heads and kv_num_heads attributes")
    b = ctx.builder
    return _heads(b, q, int(q_heads), "Q"), _heads(b, k, int(kv_heads), "K"), _heads(b, v, int(kv_heads), "V")


def _with_past(ctx: Import, new: SSAValue, past: Value | None, what: str) -> SSAValue:
    """The cache followed by the new keys (or values) along the sequence axis."""
    if past is None:
        return new
    cached = ctx.tensor(past)
    if len(ctx.shape(cached)) != 4:
        raise Unsupported(f"past_{what} must be 4-D [B, H, S, D], got shape {list(ctx.shape(cached))}")
    return ctx.builder.concat([cached, new], axis=2)


def _additive(ctx: Import, mask: Value, dtype: str, total: int) -> SSAValue:
    """attn_mask as a bias of the inputs' type: a boolean one as 0 / -inf; the
    last axis padded with -inf up to `total` keys."""
    b = ctx.builder
    m = ctx.tensor(mask)
    name = element_name(m)
    if name == "i1":
        m = b.where(m, b.constant(np.zeros((), np.float64), dtype), b.constant(np.array(-np.inf), dtype))
    elif name != dtype:
        raise Unsupported(f"attn_mask must be boolean or of the inputs' type {dtype}, got {name}")
    shape = ctx.shape(m)
    if not shape:
        raise Unsupported("attn_mask must have at least one axis (the keys)")
    if shape[-1] > total:
        raise Unsupported(f"attn_mask has {shape[-1]} keys, more than the {total} keys and cached keys")
    if shape[-1] < total:
        m = b.pad(m, [0] * len(shape), [0] * (len(shape) - 1) + [total - shape[-1]], value=-np.inf)
    return m


def _add(b: Builder, mask: SSAValue | None, bias: SSAValue) -> SSAValue:
    return bias if mask is None else b.add(mask, bias)


@dataclass(frozen=True)
class Positions:
    """Which keys a query may attend by position, from the query's position p
    among the keys: causal (j <= p) and the sliding window (p − left <= j <= p + right;
    -1 leaves a side unbounded)."""

    causal: bool
    left: int
    right: int

    @property
    def bounded(self) -> bool:
        return self.causal or self.left >= 0 or self.right >= 0


def _offset_bias(b: Builder, queries: int, keys: int, offset: int, pos: Positions, dtype: str) -> SSAValue:
    """The bias [Sq, Sk] of `pos` when query i is at position i + offset (the cached keys' count)."""
    i, j = np.arange(queries)[:, None], np.arange(keys)[None, :]
    p = i + offset
    allowed = np.ones((queries, keys), bool)
    if pos.causal:
        allowed &= j <= p
    if pos.left >= 0:
        allowed &= j >= p - pos.left
    if pos.right >= 0:
        allowed &= j <= p + pos.right
    return b.constant(np.where(allowed, 0.0, -np.inf), dtype)


def _valid_keys(b: Builder, counts: SSAValue, queries: int, keys: int, pos: Positions, dtype: str) -> SSAValue:
    """nonpad_kv_seqlen's bias [B, 1, Sq or 1, Sk]: batch entry n's keys from
    counts[n] on are padding, and its query i is at position p = i + counts[n] − Sq.
    With reach = j − i + Sq: j <= p iff reach <= counts[n], p − left <= j iff
    counts[n] <= reach + left, j <= p + right iff reach − right <= counts[n]."""
    (batch,) = shape_of(counts.type)
    count = b.reshape(counts, [batch, 1, 1, 1])
    rows = queries if pos.bounded else 1
    i, j = np.arange(rows)[:, None], np.arange(keys)[None, :]
    reach = j - i + queries
    need = np.broadcast_to(j + 1, (rows, keys))
    if pos.causal:
        need = np.maximum(need, reach)
    if pos.right >= 0:
        need = np.maximum(need, reach - pos.right)
    zero, blocked = b.constant(np.zeros(()), dtype), b.constant(np.array(-np.inf), dtype)
    bias = b.where(b.le(b.constant(need.astype(np.int64), "i64"), count), zero, blocked)
    if pos.left >= 0:
        bias = b.add(bias, b.where(b.le(count, b.constant((reach + pos.left).astype(np.int64), "i64")), zero, blocked))
    return bias


def _attention(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Y, and present_key / present_value when the node asks for them."""
    b = ctx.builder
    split = len(ctx.shape(_input(inputs, 0))) == 3
    q, k, v = _qkv(ctx, node, inputs)
    dtype = element_name(q)
    if dtype not in at.ATTENTION_TYPES:
        raise Unsupported(f"element type {dtype} is not one of {', '.join(at.ATTENTION_TYPES)}")
    extras = Extras.of(node, dtype)
    past_key, past_value = _input(inputs, 4), _input(inputs, 5)
    if (past_key is None) != (past_value is None):
        raise Unsupported("past_key and past_value must be given together")
    past = ctx.shape(past_key)[2] if past_key is not None else 0
    k, v = _with_past(ctx, k, past_key, "key"), _with_past(ctx, v, past_value, "value")
    queries, keys = shape_of(q.type)[2], shape_of(k.type)[2]
    raw_mask, counts = _input(inputs, 3), _input(inputs, 6)
    mask = None if raw_mask is None else _additive(ctx, raw_mask, dtype, keys)
    pos = Positions(
        bool(node_attribute(node, "is_causal", 0)),
        int(node_attribute(node, "left_window_size", -1)),
        int(node_attribute(node, "right_window_size", -1)),
    )
    causal = False
    if counts is not None:
        if past_key is not None:
            raise Unsupported("nonpad_kv_seqlen cannot be combined with past_key and past_value")
        mask = _add(b, mask, _valid_keys(b, ctx.tensor(counts), queries, keys, pos, dtype))
    elif pos == Positions(True, -1, -1) and not past and extras.fused(dtype):
        causal = True  # top-left: the op's own causal flag
    elif pos.bounded:
        mask = _add(b, mask, _offset_bias(b, queries, keys, past, pos, dtype))
    given = node_attribute(node, "scale")
    scale = at.default_scale(shape_of(q.type)[3]) if given is None else float(given)
    qk: list[Value] = []
    if extras.fused(dtype):
        y = b.attention(q, k, v, mask, scale, causal)
    else:
        y, scores = _composed(b, (q, k, v), mask, scale, extras)
        qk = [scores]
    if split:  # back to [B, Sq, Hq·Dv]
        batch, heads, _, width = shape_of(y.type)
        y = b.reshape(b.transpose(y, [0, 2, 1, 3]), [batch, queries, heads * width])
    outputs: list[Value] = [y, k, v, *qk]  # unnamed outputs ('') are not read
    return outputs[: len(node.output)]


IMPORTERS: dict[str, Importer] = {"Attention": _attention}
