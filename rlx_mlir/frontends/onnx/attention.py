"""Import of ONNX's `Attention` (opsets 23 and 24) as one `rlx.attention`.

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
masked, and a causal query i attends keys j <= i + count − Sq). A fully masked
row gives zeros, as ONNX specifies and the kernel computes; the scale is
applied once to q·kᵀ, not as √scale to q and k (a few ulps of the scores).

Not imported, each with an error naming the node: `softcap` (non-zero), the
`qk_matmul_output` output (any `qk_matmul_output_mode`), a `softmax_precision`
other than the inputs' type (or f32 for f16/bf16 inputs, which the kernel
computes in), and opset 25's sliding window (`left_window_size`,
`right_window_size` other than -1).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def _check_supported(node: onnx.NodeProto, dtype: str) -> None:
    """The attributes and outputs rlx.attention has no counterpart for."""
    if float(node_attribute(node, "softcap", 0.0)) != 0.0:
        raise Unsupported("softcap is not supported (rlx.attention has no soft cap of the scores)")
    if len(node.output) > 3 and node.output[3]:
        raise Unsupported("the qk_matmul_output output is not supported (the fused kernel never forms the scores)")
    precision = node_attribute(node, "softmax_precision")
    if precision is not None:
        name = ELEMENT_TYPES.get(int(precision))
        if not (name == dtype or (name == "f32" and dtype in ("f16", "bf16"))):
            raise Unsupported(
                f"softmax_precision {name or precision} is not supported for {dtype} inputs "
                f"(the kernel's softmax runs in {'f32' if dtype in ('f16', 'bf16') else dtype})"
            )
    for window in ("left_window_size", "right_window_size"):
        if int(node_attribute(node, window, -1)) != -1:
            raise Unsupported(f"{window} (a sliding window) is not supported")


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


def _offset_causal(b: Builder, queries: int, keys: int, past: int, dtype: str) -> SSAValue:
    """The bias of a causal mask aligned at the bottom right: query i attends keys j <= i + past."""
    i, j = np.arange(queries)[:, None], np.arange(keys)[None, :]
    return b.constant(np.where(j <= i + past, 0.0, -np.inf), dtype)


def _valid_keys(b: Builder, counts: SSAValue, shape: Sequence[int], causal: bool, dtype: str) -> SSAValue:
    """nonpad_kv_seqlen's bias [B, 1, Sq or 1, Sk]: key j of batch entry n is
    masked from counts[n] on and, causally, for query i beyond i + counts[n] − Sq:
    j attends iff need[i, j] <= counts[n], need = j + 1 (and j − i + Sq)."""
    (batch,), (queries, keys) = shape_of(counts.type), shape
    rows = queries if causal else 1
    i, j = np.arange(rows)[:, None], np.arange(keys)[None, :]
    need = np.maximum(j + 1, j - i + queries) if causal else np.broadcast_to(j + 1, (rows, keys))
    valid = b.le(b.constant(need.astype(np.int64), "i64"), b.reshape(counts, [batch, 1, 1, 1]))
    return b.where(valid, b.constant(np.zeros(()), dtype), b.constant(np.array(-np.inf), dtype))


def _attention(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """Y, and present_key / present_value when the node asks for them."""
    b = ctx.builder
    split = len(ctx.shape(_input(inputs, 0))) == 3
    q, k, v = _qkv(ctx, node, inputs)
    dtype = element_name(q)
    if dtype not in at.ATTENTION_TYPES:
        raise Unsupported(f"element type {dtype} is not one of {', '.join(at.ATTENTION_TYPES)}")
    _check_supported(node, dtype)
    past_key, past_value = _input(inputs, 4), _input(inputs, 5)
    if (past_key is None) != (past_value is None):
        raise Unsupported("past_key and past_value must be given together")
    past = ctx.shape(past_key)[2] if past_key is not None else 0
    k, v = _with_past(ctx, k, past_key, "key"), _with_past(ctx, v, past_value, "value")
    queries, keys = shape_of(q.type)[2], shape_of(k.type)[2]
    raw_mask, counts = _input(inputs, 3), _input(inputs, 6)
    mask = None if raw_mask is None else _additive(ctx, raw_mask, dtype, keys)
    causal = bool(node_attribute(node, "is_causal", 0))
    if counts is not None:
        if past_key is not None:
            raise Unsupported("nonpad_kv_seqlen cannot be combined with past_key and past_value")
        mask = _add(b, mask, _valid_keys(b, ctx.tensor(counts), (queries, keys), causal, dtype))
        causal = False
    elif causal and past:
        mask = _add(b, mask, _offset_causal(b, queries, keys, past, dtype))
        causal = False
    scale = node_attribute(node, "scale")
    y = b.attention(q, k, v, mask, None if scale is None else float(scale), causal)
    if split:  # back to [B, Sq, Hq·Dv]
        batch, heads, _, width = shape_of(y.type)
        y = b.reshape(b.transpose(y, [0, 2, 1, 3]), [batch, queries, heads * width])
    outputs: list[Value] = [y, k, v]
    return outputs[: len(node.output)]


IMPORTERS: dict[str, Importer] = {"Attention": _attention}
