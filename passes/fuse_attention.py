"""fuse-attention: the attention pattern of exported transformers becomes one `rlx.attention`.

What torch's two exporters write for attention, once imported and
canonicalized (every model of tests/model_suite.py: BERT, DistilBERT, BART,
T5, GPT-2, Llama, Qwen2, ViT, Whisper):

    s = matmul(q · a, kᵀ · b)          scalars a, b on q and kᵀ (torch splits
                                       the scale as √scale onto both), or none
    s = s · c  |  s / c                scalar constants, zero or more
    s = s + mask                       optional: a padding mask, a causal mask
                                       built from constants, T5's position bias
    p = softmax(s)                     over the last axis
    p = where(p != p, 0, p)            optional: the dynamo export's guard for
                                       rows whose every key is masked
    out = matmul(p, v)

kᵀ is a matmul flag (`transpose_rhs`), an `rlx.transpose` swapping the last
two axes (possibly merged with the head transpose: perm [0, 2, 3, 1]), or
the dynamo export's reshape to [B·H, S, D], transpose, reshape back. The
pass rewrites the chain into `rlx.attention q, k, v[, mask] {scale = a·b·c}`:
- grouped-query attention written as Llama/Qwen2's `repeat_kv` (reshape to
  [B, Hkv, 1, S, D], expand to [B, Hkv, n, S, D], reshape to [B, Hkv·n, S, D])
  on both k and v is folded into Hkv < Hq: the repeated copies are not made;
- a constant mask that is top-left causal (0 where key j <= query i, -inf or
  the type's lowest value elsewhere, the same for every batch and head)
  becomes `causal = true` and no mask; an all-zero constant mask is dropped;
- rank-3 scores ([B·H, S, S], attention written without a head axis) are
  read as [1, B·H, S, S] through reshapes; higher ranks are left alone.

It matches only when the scores, probabilities and guard have no user but
the chain (otherwise the [S, S] matrix is needed anyway), the softmax is over
the last axis, every scale is a finite scalar constant (a rank-0 or one-valued
constant, their product finite) and the batch axes of q, k and v agree (matmul's broadcasting of
batch axes is not attention's). Everything else is left as it is.

Exactness: the rewrite computes the same function. Two things differ in
rounding or in NaNs only:
- the scalars are multiplied together in f64 and applied once to q·kᵀ by the
  kernel, instead of rounding q·a and kᵀ·b first (a few ulps of the scores);
- a row whose every key is masked with -inf gives zeros (the kernel's and
  torch's convention, what the dynamo export's guard computes) where the
  unguarded graph gives NaN, and the guard's zeroing of rows that are NaN
  because q or k hold a NaN is not reproduced (the kernel propagates NaN).

Run after canonicalize and canonicalize-broadcast (which turn transposes
into matmul flags and drop explicit broadcasts) and before fuse-elementwise,
which would otherwise take the scale, mask and guard into regions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcasts_to
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import element_type, shape_of

# ---------------------------------------------------------------------------
# reading the graph
# ---------------------------------------------------------------------------


def _users(value: SSAValue) -> set[Operation]:
    return {use.operation for use in value.uses}


def _only_for(value: SSAValue, user: Operation) -> bool:
    """`value` feeds `user` and nothing else."""
    return _users(value) == {user}


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of an `rlx.constant` (a splat broadcast to its type), else None."""
    owner = value.owner
    if not isinstance(owner, rlx.ConstantOp):
        return None
    dtype = dtypes.from_ir(element_type(owner.result.type))
    if dtype.kind is not dtypes.Kind.FLOAT:
        return None
    return np.broadcast_to(owner.values(), shape_of(owner.result.type))


def _scalar(value: SSAValue) -> float | None:
    """The one value of a constant whose elements are all equal (a rank-0 or splat scale)."""
    array = constant_array(value)
    if array is None or array.size == 0:
        return None
    first = array.flat[0]
    return float(first) if bool(np.all(array == first)) else None


def _scaled(value: SSAValue) -> tuple[SSAValue, float] | None:
    """(x, c) where `value` = x·c, c·x or x / c with c a scalar constant and x
    of `value`'s type (the constant does not broadcast x)."""
    op = value.owner
    if isinstance(op, ew.MulOp):
        for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            factor = _scalar(c)
            if factor is not None and x.type == value.type:
                return x, factor
    if isinstance(op, ew.DivOp) and op.lhs.type == value.type:
        divisor = _scalar(op.rhs)
        if divisor is not None and divisor != 0.0:
            return op.lhs, 1.0 / divisor
    return None


def _swap_last_two(rank: int) -> tuple[int, ...]:
    return (*range(rank - 2), rank - 1, rank - 2)


def _compose(outer: Sequence[int], inner: Sequence[int]) -> tuple[int, ...]:
    """The perm of transpose(transpose(x, inner), outer)."""
    return tuple(inner[p] for p in outer)


# ---------------------------------------------------------------------------
# new ops, made only once a match is certain
# ---------------------------------------------------------------------------


@dataclass
class Emitter:
    """The ops a rewrite adds before the anchor, in order. Shape ops fold into
    their sources where they can: a reshape of a reshape reads the first
    one's input, a transpose of a transpose is one transpose, identities vanish."""

    ops: list[Operation] = field(default_factory=list)

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        while isinstance(value.owner, rlx.ReshapeOp):
            value = value.owner.input
        if shape_of(value.type) == tuple(shape):
            return value
        return self.add(rlx.ReshapeOp(value, TensorType(element_type(value.type), list(shape))))

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        inner = value.owner
        if isinstance(inner, mv.TransposeOp):
            value, perm = inner.input, _compose(perm, inner.permutation)
        if tuple(perm) == tuple(range(len(perm))):
            return value
        shape = shape_of(value.type)
        result = TensorType(element_type(value.type), [shape[p] for p in perm])
        return self.add(mv.TransposeOp(value, perm, result))

    def swapped(self, value: SSAValue) -> SSAValue:
        """`value` with its last two axes swapped, reading through the transposes
        that made it: a transpose (composed), or reshapes that keep the last two
        axes around one (the dynamo export's [B·H, D, S] round trip)."""
        shape = shape_of(value.type)
        owner = value.owner
        if isinstance(owner, rlx.ReshapeOp) and shape_of(owner.input.type)[-2:] == shape[-2:]:
            inner = self.swapped(owner.input)
            return self.reshape(inner, (*shape[:-2], shape[-1], shape[-2]))
        return self.transpose(value, _swap_last_two(len(shape)))


# ---------------------------------------------------------------------------
# the match
# ---------------------------------------------------------------------------


@dataclass
class Chain:
    """The ops of a match, consumers before producers: erased once they are unused."""

    ops: list[Operation] = field(default_factory=list)

    def take(self, op: Operation | Block) -> None:
        if isinstance(op, Operation) and op not in self.ops:
            self.ops.append(op)

    def peel_scales(self, value: SSAValue, exclusive: bool) -> tuple[SSAValue, float]:
        """`value` without the scalar factors applied to it, and their product
        (in f64). `exclusive`: each factor's product must feed only the chain."""
        scale = 1.0
        while (found := _scaled(value)) is not None:
            if exclusive and len(_users(value)) != 1:
                break
            self.take(value.owner)
            value, factor = found
            scale *= factor
        return value, scale


@dataclass(frozen=True)
class Operand:
    """A matmul operand as attention reads it: the stored value and whether the
    matmul reads it with its last two axes swapped (to be undone)."""

    stored: SSAValue
    swapped: bool

    @property
    def shape(self) -> tuple[int, ...]:
        shape = shape_of(self.stored.type)
        return (*shape[:-2], shape[-1], shape[-2]) if self.swapped else shape

    def emit(self, emitter: Emitter) -> SSAValue:
        return emitter.swapped(self.stored) if self.swapped else self.stored


@dataclass(frozen=True)
class Match:
    q: Operand
    k: Operand
    v: Operand
    mask: SSAValue | None
    scale: float
    ops: tuple[Operation, ...]


def _probabilities(product: ct.MatmulOp) -> tuple[rd.SoftmaxOp, list[Operation]] | None:
    """The softmax whose result, perhaps through the NaN guard, is the lhs of `product`."""
    p = product.lhs
    guard = p.owner
    ops: list[Operation] = []
    if isinstance(guard, ew.WhereOp) and _only_for(p, product):
        is_nan = guard.condition.owner
        probs = guard.false_value
        if not (
            isinstance(is_nan, ew.NeOp)
            and is_nan.lhs is probs
            and is_nan.rhs is probs
            and _scalar(guard.true_value) == 0.0
            and _only_for(guard.condition, guard)
            and _users(probs) == {guard, is_nan}
            and probs.type == p.type
        ):
            return None
        ops = [guard, is_nan]
        p = probs
    elif not _only_for(p, product):
        return None
    softmax = p.owner
    if not isinstance(softmax, rd.SoftmaxOp) or softmax.reduced_axes() != (len(shape_of(p.type)) - 1,):
        return None
    return softmax, [*ops, softmax]


def _masked(scores: SSAValue, chain: Chain) -> tuple[SSAValue, SSAValue | None]:
    """(unmasked scores, mask) where `scores` = unmasked + mask: the operand
    that is the rest of the chain has the scores' full shape."""
    add = scores.owner
    if not isinstance(add, ew.AddOp) or len(_users(scores)) != 1:
        return scores, None
    for rest, mask in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        if rest.type == scores.type and isinstance(_scores_matmul(rest), ct.MatmulOp):
            chain.take(add)
            return rest, mask
    return scores, None


def _scores_matmul(value: SSAValue) -> ct.MatmulOp | None:
    """The matmul under a run of scalar factors, each used once."""
    while (found := _scaled(value)) is not None and len(_users(value)) == 1:
        value = found[0]
    owner = value.owner
    return owner if isinstance(owner, ct.MatmulOp) and len(_users(value)) == 1 else None


def match(product: ct.MatmulOp) -> Match | None:
    """The attention whose output is `product` = matmul(softmax(...), v), as in the module doc."""
    rank = len(shape_of(product.result.type))
    if rank not in (3, 4) or product.transposes[0]:
        return None
    if dtypes.from_ir(element_type(product.result.type)).name not in at.ATTENTION_TYPES:
        return None
    found = _probabilities(product)
    if found is None:
        return None
    softmax, ops = found
    chain = Chain([product, *ops])
    scores, mask = _masked(softmax.input, chain)
    if len(_users(scores)) != 1:
        return None
    unscaled, scale = chain.peel_scales(scores, exclusive=True)
    logits = unscaled.owner
    if not isinstance(logits, ct.MatmulOp) or len(_users(unscaled)) != 1 or logits.transposes[0]:
        return None
    chain.take(logits)
    q, q_scale = chain.peel_scales(logits.lhs, exclusive=False)
    k, k_scale = chain.peel_scales(logits.rhs, exclusive=False)
    v = Operand(product.rhs, product.transposes[1])
    keys = Operand(k, not logits.transposes[1])
    if mask is not None and (
        len(shape_of(mask.type)) > 4 or not broadcasts_to(shape_of(mask.type), shape_of(scores.type))
    ):
        return None
    queries = Operand(q, False)
    batch = queries.shape[:-2]
    if keys.shape[:-2] != batch or v.shape[:-2] != batch:
        return None
    total = scale * q_scale * k_scale
    if not math.isfinite(total):  # an infinite factor: the graph's NaNs and infinities, not attention
        return None
    return Match(queries, keys, v, mask, total, tuple(chain.ops))


# ---------------------------------------------------------------------------
# what the match becomes
# ---------------------------------------------------------------------------


def _repeated_heads(value: SSAValue) -> SSAValue | None:
    """x [B, Hkv, S, D] where `value` [B, Hkv·n, S, D] = reshape(expand(x as
    [B, Hkv, 1, S, D] to [B, Hkv, n, S, D])): repeat_kv's copies, head h of
    `value` being head h // n of x."""
    reshape = value.owner
    if not isinstance(reshape, rlx.ReshapeOp):
        return None
    expand = reshape.input.owner
    if not isinstance(expand, rlx.ExpandOp):
        return None
    b, h, s, d = shape_of(value.type)
    wide, narrow = shape_of(expand.result.type), shape_of(expand.input.type)
    if len(wide) != 5 or wide[0] != b or wide[3:] != (s, d) or wide[1] * wide[2] != h:
        return None
    if narrow != (b, wide[1], 1, s, d):
        return None
    return expand.input


def _kv_groups(k: SSAValue, v: SSAValue, emitter: Emitter) -> tuple[SSAValue, SSAValue]:
    """k and v with repeated heads read from their sources, when both are repeated alike."""
    k_source, v_source = _repeated_heads(k), _repeated_heads(v)
    if k_source is None or v_source is None or shape_of(k_source.type)[1] != shape_of(v_source.type)[1]:
        return k, v
    heads = shape_of(k_source.type)[1]
    narrow = [(*shape_of(x.type)[:1], heads, *shape_of(x.type)[3:]) for x in (k_source, v_source)]
    return emitter.reshape(k_source, narrow[0]), emitter.reshape(v_source, narrow[1])


def _is_causal(mask: np.ndarray, scores: Sequence[int], lowest: float) -> bool:
    """Whether the constant mask is top-left causal for every batch and head:
    0 where key j <= query i, -inf (or the type's `lowest` value) where j > i."""
    sq, sk = scores[-2:]
    full = np.broadcast_to(mask, (*np.broadcast_shapes(mask.shape, (1, 1))[:-2], sq, sk))
    future = np.triu(np.ones((sq, sk), dtype=bool), k=1)
    blocked = full[..., future]
    return bool(np.all(full[..., ~future] == 0) and np.all((blocked == -np.inf) | (blocked == lowest)))


def _mask_kind(mask: SSAValue | None, scores: Sequence[int]) -> tuple[SSAValue | None, bool]:
    """(the mask to pass, causal): a constant mask may be nothing or `causal`; an
    explicit broadcast is read from its source."""
    if mask is None:
        return None, False
    values = constant_array(mask)
    if values is not None:
        if not np.any(values):
            return None, False
        if _is_causal(values, scores, -dtypes.from_ir(element_type(mask.type)).largest):
            return None, True
    owner = mask.owner
    if isinstance(owner, rlx.ExpandOp) and len(shape_of(owner.input.type)) <= 4:
        return owner.input, False
    return mask, False


def rewrite(found: Match) -> tuple[list[Operation], SSAValue]:
    """The new ops (inserted before the matched product) and the value replacing its result."""
    emitter = Emitter()
    q, k, v = (operand.emit(emitter) for operand in (found.q, found.k, found.v))
    scores = (*found.q.shape[:-1], found.k.shape[-2])
    mask, causal = _mask_kind(found.mask, scores)
    rank = len(found.q.shape)
    if rank == 3:  # [B·H, S, D] as one batch of B·H heads
        q, k, v = (emitter.reshape(x, (1, *shape_of(x.type))) for x in (q, k, v))
    else:
        k, v = _kv_groups(k, v, emitter)
    shape = at.attention_shape(
        shape_of(q.type), shape_of(k.type), shape_of(v.type), None if mask is None else shape_of(mask.type)
    )
    out = emitter.add(at.AttentionOp(q, k, v, mask, found.scale, causal, TensorType(element_type(q.type), list(shape))))
    if rank == 3:
        out = emitter.reshape(out, shape[1:])
    return emitter.ops, out


def erase_unused(ops: Sequence[Operation], rewriter: PatternRewriter) -> None:
    """Erase the ops of `ops` (and the constants they read) that nothing uses any more,
    until none is left to erase."""
    pending = [op for op in ops if op.parent is not None]
    progress = True
    while progress:
        progress = False
        for op in list(pending):
            if any(result.uses for result in op.results):
                continue
            sources = [v.owner for v in op.operands if isinstance(v.owner, rlx.ConstantOp)]
            rewriter.erase(op)
            pending.remove(op)
            progress = True
            for constant in sources:
                if constant.parent is not None and not constant.result.uses:
                    rewriter.erase(constant)


class FuseAttention(RewritePattern):
    """matmul(softmax(scale · q @ kᵀ + mask), v) becomes `rlx.attention`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ct.MatmulOp, rewriter: PatternRewriter) -> None:
        found = match(op)
        if found is None:
            return
        new_ops, result = rewrite(found)
        look_through = _sources(found)
        rewriter.replace(op, new_ops, [result])
        erase_unused([*found.ops[1:], *look_through], rewriter)


def _sources(found: Match) -> list[Operation]:
    """The shape ops the new op reads through (transposes, reshapes, repeat_kv's
    expands), consumers first: erased too if nothing else reads them."""
    ops: list[Operation] = []

    def walk(value: SSAValue, depth: int) -> None:
        owner = value.owner
        if depth and isinstance(owner, (mv.TransposeOp, rlx.ReshapeOp, rlx.ExpandOp)):
            ops.append(owner)
            walk(owner.input, depth - 1)

    for operand in (found.q, found.k, found.v):
        walk(operand.stored, 4)
    if found.mask is not None:
        walk(found.mask, 1)
    return ops


@dataclass(frozen=True)
class FuseAttentionPass(ModulePass):
    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseAttention(), apply_recursively=False).rewrite_module(op)
