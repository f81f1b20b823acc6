"""fuse-selective-scan: Mamba's scan, unrolled by the exporters, becomes one `rlx.selective_scan`.

transformers' CPU path for Mamba (`mamba_selective_scan` in
models/mamba/modeling_mamba.py) is a Python loop over the sequence, so both
of torch's exporters write it out step by step. Once imported and
canonicalized (canonicalize, canonicalize-broadcast) every layer holds, with
x and Δ [B, D, L] (channels before time), A [D, N] and B, C [B, L, N]:

    dA  = exp(A' · Δ')                    A' = A as [1, D, 1, N], Δ' = Δ as [B, D, L, 1]
    dBu = Δ' · B' · x'                    B' = B as [B, 1, L, N], x' = x as [B, D, L, 1];
                                          the factors in any order and grouping
    h₋₁ = zeros [B, D, N]                 (or any [B, D, N] value: a carried state)
    for i in 0 .. L-1:
      hᵢ = gather(dA, i, axis 2) · hᵢ₋₁ + gather(dBu, i, axis 2)
      yᵢ = matmul(hᵢ, reshape(gather(C, i, axis 1), [B, N, 1]))      [B, D, 1]
    y  = concat(y₀ … y_{L-1}, axis 2)     [B, D, L] (each yᵢ through reshapes and
                                          gathers of its unit axis; or concat of
                                          [B, 1, D] pieces on axis 1: [B, L, D])

which is `rlx.selective_scan` (x, Δ [B, L, D], A, B, C [B, L, N]) with its
output [B, L, D] transposed back to the concat's layout. A zero constant h₋₁
is the op's absent state; another h₋₁ is its state operand. When the last
state hₗ₋₁ has users besides its readout (a model returning its final
state), they read the op's state result.

Anchored at the concat, it matches only the exact recurrence: every step i
of 0 .. L-1 present once and in order, each reading slice i of the same dA,
dBu and C; every state read only by the next step and its readout (the last
one excepted, as said), every product, sum and slice read only by the chain;
the shapes above, one element type of `rlx.selective_scan`'s. Anything else
(a step reading another tensor or another index, a state read elsewhere, a
step missing) is left as it is. The D skip (`+ x·D`) and the gate
(`· silu(z)`) after the scan stay elementwise ops: the op has neither.

Exactness: the same function, up to rounding and one NaN case. The kernel
forms exp(Δ·A) and Δ·x·B itself, with its own exp and product order
(within an ULP or two per factor), sums the readout over N in its own order,
and keeps f16/bf16 state in f32 (rounded once, not per step). A zero h₋₁ is
not multiplied: where the graph's dA₀ · 0 is NaN (dA₀ infinite, i.e. Δ·A
overflowing exp), the op's first state is dBu₀.

Run after canonicalize-broadcast (which drops the exporters' identity casts
between the steps) and before fuse-elementwise, which would otherwise take
each step's product and sum into a region.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcasts_to
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.passes.fuse_attention import Emitter, constant_array, erase_unused

# ---------------------------------------------------------------------------
# reading the graph
# ---------------------------------------------------------------------------


def _users(value: SSAValue) -> list[Operation]:
    """Every use's op, once per use (an op reading the value twice is listed twice)."""
    return [use.operation for use in value.uses]


def _only_for(value: SSAValue, *users: Operation) -> bool:
    return sorted(map(id, _users(value))) == sorted(map(id, users))


def constant_index(value: SSAValue) -> int | None:
    """The value of a rank-0 integer constant."""
    owner = value.owner
    if not isinstance(owner, rlx.ConstantOp) or shape_of(owner.result.type) != ():
        return None
    if dtypes.from_ir(element_type(owner.result.type)).kind not in (dtypes.Kind.INT, dtypes.Kind.UINT):
        return None
    return int(owner.values().reshape(()))


def _slice(value: SSAValue, axis: int) -> tuple[SSAValue, int] | None:
    """(t, i) where `value` = gather(t, i, axis) for a constant scalar i, read only
    once (a negative i counts from the end, as in NumPy)."""
    gather = value.owner
    if not isinstance(gather, mv.GatherOp) or gather.normalized_axis() != axis or len(_users(value)) != 1:
        return None
    index = constant_index(gather.indices)
    extent = shape_of(gather.data.type)[axis]
    if index is None or not -extent <= index < extent:
        return None
    return gather.data, index % extent


def _source(value: SSAValue) -> SSAValue:
    """`value` read through the reshapes that made it."""
    while isinstance(value.owner, rlx.ReshapeOp):
        value = value.owner.input
    return value


def _padded(shape: Sequence[int], rank: int) -> tuple[int, ...]:
    """`shape` with leading unit axes up to `rank`, as broadcasting aligns it."""
    return (*(1,) * (rank - len(shape)), *shape)


def _operand_pairs(op: Operation) -> tuple[tuple[SSAValue, SSAValue], ...]:
    """A commutative binary op's operands, in both orders."""
    lhs, rhs = op.operands
    return ((lhs, rhs), (rhs, lhs))


def _through_reshapes(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """`value` read through the reshapes that made it and feed only it, collected in `ops`."""
    while isinstance(value.owner, rlx.ReshapeOp) and len(_users(value)) == 1:
        ops.append(value.owner)
        value = value.owner.input
    return value


# ---------------------------------------------------------------------------
# the match
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """Step i: hᵢ = gather(decay, i) · prior + gather(drive, i), read out by `readout`."""

    state: SSAValue
    prior: SSAValue
    update: ew.MulOp
    readout: ct.MatmulOp
    decay: SSAValue
    drive: SSAValue
    ops: tuple[Operation, ...]


@dataclass(frozen=True)
class Match:
    """A whole recurrence and the operands of `rlx.selective_scan` it reads."""

    shape: tuple[int, int, int, int]
    """(B, D, L, N)."""
    x: SSAValue
    delta: SSAValue
    a: SSAValue
    b: SSAValue
    c: SSAValue
    initial: SSAValue | None
    """The carried state, None for zeros."""
    final: SSAValue
    """The last state; its users but the last readout read the op's state result."""
    last_readout: ct.MatmulOp
    channels_last: bool
    """Whether the concat stacks [B, L, D] (else [B, D, L])."""
    ops: tuple[Operation, ...]


def _readout(piece: SSAValue, ops: list[Operation]) -> ct.MatmulOp | None:
    """The matmul whose result is the concat operand `piece`, read through reshapes
    and gathers of a unit axis, each read only once."""
    value = piece
    while len(_users(value)) == 1:
        owner = value.owner
        if isinstance(owner, ct.MatmulOp):
            return None if any(owner.transposes) else owner
        if isinstance(owner, rlx.ReshapeOp):
            value = owner.input
        elif isinstance(owner, mv.GatherOp) and shape_of(owner.data.type)[owner.normalized_axis()] == 1:
            if _slice(value, owner.normalized_axis()) is None:  # an index that is not a constant 0 or -1
                return None
            value = owner.data
        else:
            return None
        ops.append(owner)
    return None


def _step(readout: ct.MatmulOp, i: int, previous: SSAValue | None) -> Step | None:
    """Step i of the recurrence read out by `readout` (the module doc); `previous` is
    hᵢ₋₁, None at the first step, where the prior is the initial state."""
    state = readout.lhs
    add = state.owner
    if not isinstance(add, ew.AddOp) or add.lhs.type != state.type or add.rhs.type != state.type:
        return None
    for product, drive in _operand_pairs(add):
        update = product.owner
        drive_slice = _slice(drive, 2)
        if not isinstance(update, ew.MulOp) or drive_slice is None or not _only_for(product, add):
            continue
        for decay, prior in _operand_pairs(update):
            decay_slice = _slice(decay, 2)
            if decay_slice is None or previous not in (None, prior):
                continue
            if decay_slice[1] != i or drive_slice[1] != i:
                return None
            ops = (readout, add, update, drive.owner, decay.owner)
            return Step(state, prior, update, readout, decay_slice[0], drive_slice[0], ops)  # type: ignore[arg-type]
    return None


def _stacking(concat: mv.ConcatOp, batch: int, channels: int) -> bool | None:
    """Whether `concat` stacks its [B, D] pieces as [B, L, D] (True) or [B, D, L]
    (False), each piece the result's shape with a unit axis; None if neither."""
    steps = len(concat.inputs)
    layouts = {2: ((batch, channels, steps), False), 1: ((batch, steps, channels), True)}
    axis = concat.normalized_axis()
    if axis not in layouts or shape_of(concat.result.type) != layouts[axis][0]:
        return None
    piece = list(layouts[axis][0])
    piece[axis] = 1
    if any(shape_of(x.type) != tuple(piece) for x in concat.inputs):
        return None
    return layouts[axis][1]


def _steps(concat: mv.ConcatOp, ops: list[Operation]) -> list[Step] | None:
    """Every step whose readout `concat` stacks, chained through the states, each
    state read by nothing else than its readout and the next step (the last one
    excepted), every step reading slice i of one decay, one drive and one C."""
    readouts = [_readout(piece, ops) for piece in concat.inputs]
    steps: list[Step] = []
    for i, readout in enumerate(readouts):
        found = None if readout is None else _step(readout, i, steps[-1].state if steps else None)
        if found is None:
            return None
        if steps and (found.decay, found.drive, found.state.type) != (
            steps[0].decay,
            steps[0].drive,
            steps[0].state.type,
        ):
            return None
        steps.append(found)
    for step, after in pairwise(steps):
        if not _only_for(step.state, step.readout, after.update):
            return None
    return steps


def _readout_operand(step: Step, i: int, ops: list[Operation]) -> SSAValue | None:
    """C [B, L, N] when step i reads it out with reshape(gather(C, i, axis 1), [B, N, 1])."""
    sliced = _through_reshapes(step.readout.rhs, ops)
    found = _slice(sliced, 1)
    if found is None or found[1] != i:
        return None
    ops.append(sliced.owner)  # type: ignore[arg-type]
    return found[0]


def _decay_factors(decay: SSAValue, shape: tuple[int, ...]) -> tuple[SSAValue, SSAValue] | None:
    """(A', Δ') where `decay` = exp(A' · Δ'), A' [1, D, 1, N] and Δ' [B, D, L, 1]."""
    batch, channels, steps, n = shape
    exp = decay.owner
    product = exp.input.owner if isinstance(exp, ew.ExpOp) else None
    if not isinstance(product, ew.MulOp) or product.result.type != decay.type:
        return None
    for a, delta in _operand_pairs(product):
        if _padded(shape_of(a.type), 4) == (1, channels, 1, n) and shape_of(delta.type) == (batch, channels, steps, 1):
            return a, delta
    return None


def _factors(value: SSAValue, shape: tuple[int, ...], products: list[Operation]) -> list[SSAValue]:
    """The leaves of the tree of products of `shape` that make `value` (its products
    collected in `products`): the factors a product of broadcast operands is made
    of, in any grouping."""
    owner = value.owner
    if isinstance(owner, ew.MulOp) and shape_of(value.type) == shape:
        products.append(owner)
        return [*_factors(owner.lhs, shape, products), *_factors(owner.rhs, shape, products)]
    return [value]


def _drive_factors(
    drive: SSAValue, delta: SSAValue, shape: tuple[int, ...], products: list[Operation]
) -> tuple[SSAValue, SSAValue] | None:
    """(B', x') where `drive` = Δ' · B' · x' (any order and grouping), B' [B, 1, L, N]
    and x' [B, D, L, 1]; Δ' is `delta` or a reshape of its source to its shape."""
    batch, channels, steps, n = shape
    factors = _factors(drive, shape, products)
    is_delta = [f.type == delta.type and _source(f) is _source(delta) for f in factors]
    if len(factors) != 3 or not any(is_delta):
        return None
    del factors[is_delta.index(True)]
    for b, x in (factors, factors[::-1]):
        if _padded(shape_of(b.type), 4) == (batch, 1, steps, n) and shape_of(x.type) == (batch, channels, steps, 1):
            return b, x
    return None


def _decay_products(decay: SSAValue) -> list[Operation]:
    """exp(A' · Δ') and its product: computed by the scan itself."""
    exp = decay.owner
    assert isinstance(exp, ew.ExpOp)
    return [exp, exp.input.owner]  # type: ignore[list-item]


def is_zero(value: SSAValue) -> bool:
    """Whether `value` is a constant zero, perhaps a broadcast one (an `rlx.expand` of it)."""
    if isinstance(value.owner, rlx.ExpandOp):
        value = value.owner.input
    values = constant_array(value)
    return values is not None and not np.any(values)


def _initial(prior: SSAValue, state: Attribute) -> tuple[bool, SSAValue | None]:
    """(whether it is one, the state operand) for the first step's prior: none for a
    zero constant (of any shape broadcasting to the state's), else a state."""
    if is_zero(prior) and broadcasts_to(shape_of(prior.type), shape_of(state)):
        return True, None
    return prior.type == state, prior


def match(concat: mv.ConcatOp) -> Match | None:
    """The selective scan whose readouts `concat` stacks, as in the module doc."""
    ops: list[Operation] = [concat]
    steps = _steps(concat, ops)
    if not steps or len(shape_of(steps[0].state.type)) != 3:
        return None
    batch, channels, n = shape_of(steps[0].state.type)
    channels_last = _stacking(concat, batch, channels)
    shape = (batch, channels, len(steps), n)
    if channels_last is None or shape_of(steps[0].decay.type) != shape or steps[0].drive.type != steps[0].decay.type:
        return None
    if dtypes.from_ir(element_type(steps[0].state.type)).name not in rc.SCAN_TYPES:
        return None
    readouts = set()
    for i, step in enumerate(steps):
        if shape_of(step.readout.rhs.type) != (batch, n, 1):
            return None
        readouts.add(_readout_operand(step, i, ops))
        ops += step.ops
    c = readouts.pop()
    if readouts or c is None or shape_of(c.type) != (batch, len(steps), n):
        return None
    decay = _decay_factors(steps[0].decay, shape)
    drive = None if decay is None else _drive_factors(steps[0].drive, decay[1], shape, ops)
    if decay is None or drive is None:
        return None
    a, delta = decay
    b, x = drive
    ops += _decay_products(steps[0].decay)
    last = steps[-1]
    valid, initial = _initial(steps[0].prior, steps[0].state.type)
    if not valid:
        return None
    if initial is None and isinstance(steps[0].prior.owner, rlx.ExpandOp):
        ops.append(steps[0].prior.owner)
    return Match(shape, x, delta, a, b, c, initial, last.state, last.readout, channels_last, tuple(ops))


# ---------------------------------------------------------------------------
# what the match becomes
# ---------------------------------------------------------------------------


def rewrite(found: Match) -> tuple[list[Operation], SSAValue, SSAValue | None]:
    """The new ops, the value replacing the concat and the final state (None when
    nothing but the last readout reads the last state)."""
    batch, channels, steps, n = found.shape
    emitter = Emitter()
    by_time = [
        emitter.transpose(emitter.reshape(v, (batch, channels, steps)), (0, 2, 1)) for v in (found.x, found.delta)
    ]
    inputs = [*by_time, emitter.reshape(found.a, (channels, n)), emitter.reshape(found.b, (batch, steps, n)), found.c]
    element = element_type(found.final.type)
    results = [TensorType(element, [batch, steps, channels])]
    if _final_state_users(found):
        results.append(found.final.type)  # type: ignore[arg-type]
    scan = rc.SelectiveScanOp(inputs, [] if found.initial is None else [found.initial], results, n)
    emitter.ops.append(scan)
    out = scan.results[0] if found.channels_last else emitter.transpose(scan.results[0], (0, 2, 1))
    return emitter.ops, out, scan.results[1] if len(scan.results) > 1 else None


def _final_state_users(found: Match) -> list[Operation]:
    return [user for user in _users(found.final) if user is not found.last_readout]


def _insertion_point(concat: mv.ConcatOp, found: Match) -> Operation | None:
    """Where the new ops go: before the concat or before the first other reader of the
    final state; None when one of the operands is defined later, or elsewhere."""
    block = concat.parent_block()
    first: Operation = concat
    for user in _final_state_users(found):
        if user.parent_block() is not block:
            return None
        if user.is_before_in_block(first):
            first = user
    for value in (found.x, found.delta, found.a, found.b, found.c, found.initial):
        if value is not None and not _defined_before(value, first, block):
            return None
    return first


def _defined_before(value: SSAValue, op: Operation, block: Block | None) -> bool:
    if isinstance(value, BlockArgument):
        return value.block is block
    owner = value.owner
    return isinstance(owner, Operation) and owner.parent_block() is block and owner.is_before_in_block(op)


class FuseSelectiveScan(RewritePattern):
    """The stacked readouts of an unrolled selective scan become `rlx.selective_scan`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mv.ConcatOp, rewriter: PatternRewriter) -> None:
        found = match(op)
        point = None if found is None else _insertion_point(op, found)
        if found is None or point is None:
            return
        new_ops, out, final = rewrite(found)
        rewriter.insert(new_ops, InsertPoint.before(point))
        if final is not None:
            rewriter.replace_uses_with_if(found.final, final, lambda use: use.operation is not found.last_readout)
        rewriter.replace_all_uses_with(op.result, out)
        erase_unused([*found.ops, *_sources(found)], rewriter)


def _sources(found: Match) -> list[Operation]:
    """The reshapes the new op's operands were read through (`found.ops` holds the
    steps and the products forming dA and dBu): erased too when nothing else reads them."""
    ops: list[Operation] = []
    for value in (found.x, found.delta, found.a, found.b):
        while isinstance(value.owner, rlx.ReshapeOp):
            ops.append(value.owner)
            value = value.owner.input
    return ops


@dataclass(frozen=True)
class FuseSelectiveScanPass(ModulePass):
    name = "fuse-selective-scan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseSelectiveScan(), apply_recursively=False).rewrite_module(op)
