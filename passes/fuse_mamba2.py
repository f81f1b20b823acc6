"""fuse-mamba2: Mamba2's chunked scan, as transformers writes it, becomes one `rlx.mamba2`.

transformers' CPU path for Mamba2 (`mamba2_chunk_scan` in
models/mamba2/modeling_mamba2.py) computes the SSD scan in chunks of `l`
steps: the sequence padded to `c` whole chunks, then five einsums, three
cumsums and two masked segment sums. With x [b, S, h, p], dt [b, S, h], a [h]
and B, C [b, S, h, n] (the groups already repeated over the heads):

    X  = chunks(pad(x · dt[..., None]))          [b, c, l, h, p]
    A  = chunks(pad(a · dt))                     [b, c, l, h] -> [b, h, c, l]
    B, C = chunks(pad(B)), chunks(pad(C))        [b, c, l, h, n]
    Acum = cumsum(A, -1)
    Yd = einsum(bclsh,bcshp->bclhp, einsum(bclhn,bcshn->bclsh, C, B)
                · exp(segsum(A)), X)             within each chunk
    states = einsum(bclhn,bclhp->bchpn, B · exp(Acum[..., -1:] - Acum), X)
    new = einsum(bzch,bzhpn->bchpn, exp(segsum(pad(Acum[..., -1], (1, 0)))),
                 concat(h₀, states))             h₀ [b, 1, h, p, n]
    Yo = einsum(bclhn,bchpn->bclhp, C, new[:, :-1]) · exp(Acum)
    y  = Yd + Yo                                 [b, c, l, h, p]

segsum(v)[i, j] = Σ v[j+1 .. i] for j ≤ i, else -inf (a cumsum of v
repeated and masked by constant triangles). That is `rlx.mamba2 x, dt, a, B,
C` with state h₀: S = exp(dt·a)·S + (dt·x) ⊗ B, y = S·C, step by step.

Once imported and canonicalized (canonicalize, canonicalize-broadcast) both
of torch's exporters write this as the same ~45 ops: each einsum a matmul
between transposes, each cumsum an `rlx.scan` adding its steps. The pass
builds that canonical form for the anchor's sizes (`ssd_template`) and
matches it against the graph op for op (`Unifier`): every op of the same
kind, properties and types, every constant of the same value, the operands
in order (either order for add and mul). Anchored at the final add `y`, it
then checks what feeds the template's inputs: four zero pads of the sequence
axis to c·l steps, reshaped into chunks, of x·dt, a·dt (the same dt), B and
C. Anything else (another einsum order, an initial state of another shape, a
missing factor) is left as it is.

The op runs on the unpadded sequence; the result is padded back with zeros.
The graph's padded steps are zero too (their C rows are the pad's zeros),
and the model slices them off. A zero constant h₀ is the op's absent state,
another h₀ its state operand. The Yd + Yo value is replaced, and the final
state `new[:, -1]` (a gather, which transformers returns with a cache) reads
the op's state result: the state after the padded steps is the state after
the last real one, since their dt·x and a·dt are zero. The chunked ops die
with them unless something else reads them.

Exactness: the same function, up to rounding. The graph forms the decays
as exp of cumsum differences and sums chunk by chunk; the kernel multiplies
exp(dt·a) step by step, with its own order of sums. Run after
canonicalize-broadcast and before fuse-elementwise, which would otherwise
take the products and exps into regions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from rlx_mlir import dtypes
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects import scan as sc
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.region import YieldOp
from rlx_mlir.passes.fuse_attention import Emitter, erase_unused
from rlx_mlir.passes.fuse_selective_scan import constant_index, is_zero

# ---------------------------------------------------------------------------
# the template: the canonical form of transformers' chunked scan
# ---------------------------------------------------------------------------


@dataclass
class Template(Emitter):
    """Detached ops over the arguments of a block that is never inserted: the
    inputs, and the constants a match must find with the values in `expected`.
    Reshapes and transposes fold as the Emitter folds them, as canonicalize does."""

    element: Attribute = field(kw_only=True)
    inputs: Block = field(default_factory=Block)
    expected: dict[SSAValue, np.ndarray] = field(default_factory=dict)

    def input(self, shape: Sequence[int]) -> SSAValue:
        return self.inputs.insert_arg(TensorType(self.element, list(shape)), len(self.inputs.args))

    def constant(self, array: np.ndarray) -> SSAValue:
        """A template input the match must find as a constant of this value."""
        ir_type = self.element if array.dtype.kind == "f" else dtypes.from_numpy(array.dtype).ir_type  # type: ignore[union-attr]
        value = self.inputs.insert_arg(TensorType(ir_type, list(array.shape)), len(self.inputs.args))
        self.expected[value] = array
        return value

    def zeros(self, shape: Sequence[int]) -> SSAValue:
        return self.constant(np.zeros(shape))

    def tensor(self, shape: Sequence[int]) -> TensorType[Attribute]:
        return TensorType(self.element, list(shape))

    def matmul(self, lhs: SSAValue, rhs: SSAValue, transpose_rhs: bool = False) -> SSAValue:
        *batch, m, _ = shape_of(lhs.type)
        cols = shape_of(rhs.type)[-2 if transpose_rhs else -1]
        return self.add(ct.MatmulOp(lhs, rhs, self.tensor([*batch, m, cols]), transpose_rhs=transpose_rhs))

    def binary(self, kind: type[ew.BinaryOp], lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        shape = np.broadcast_shapes(shape_of(lhs.type), shape_of(rhs.type))
        return self.add(kind(lhs, rhs, self.tensor(shape)))

    def exp(self, value: SSAValue) -> SSAValue:
        return self.add(ew.ExpOp(value))

    def masked(self, mask: np.ndarray, fill: float, value: SSAValue) -> SSAValue:
        """where(mask, fill, value): torch's masked_fill by a constant [l, l] triangle."""
        shape = np.broadcast_shapes(mask.shape, shape_of(value.type))
        condition = self.constant(mask)
        return self.add(ew.WhereOp(condition, self.constant(np.array(fill)), value, self.tensor(shape)))

    def cumsum(self, value: SSAValue, axis: int) -> SSAValue:
        """The importer's CumSum: the axis moved first, an `rlx.scan` adding its steps, moved back."""
        rank = len(shape_of(value.type))
        perm = [axis, *(k for k in range(rank) if k != axis)]
        steps = self.transpose(value, perm)
        carry = self.tensor(shape_of(steps.type)[1:])
        body = Block(arg_types=[carry, carry])
        total = ew.AddOp(body.args[0], body.args[1], carry)
        body.add_ops([total, YieldOp(total.result)])
        length = shape_of(steps.type)[0]
        scan = self.add(sc.ScanOp(self.zeros(shape_of(carry)), [], [steps], Region(body), length, save_trajectory=True))
        return self.transpose(scan, [int(k) for k in np.argsort(perm)])

    def segsum(self, value: SSAValue) -> SSAValue:
        """exp(segsum(value)) over the last axis, as transformers' `segment_sum` writes it."""
        *outer, n = shape_of(value.type)
        repeated = self.masked(~np.tril(np.ones((n, n), bool), -1), 0.0, self.reshape(value, (*outer, n, 1)))
        summed = self.cumsum(repeated, len(outer))
        return self.exp(self.masked(~np.tril(np.ones((n, n), bool)), -np.inf, summed))

    def slice(self, value: SSAValue, starts: Sequence[int], shape: Sequence[int]) -> SSAValue:
        return self.add(mv.SliceOp(value, starts, [1] * len(starts), self.tensor(shape)))

    def gather(self, value: SSAValue, index: int, axis: int) -> SSAValue:
        shape = [size for k, size in enumerate(shape_of(value.type)) if k != axis]
        return self.add(mv.GatherOp(value, self.constant(np.array(index)), axis, self.tensor(shape)))

    def pad(self, value: SSAValue, before: Sequence[int]) -> SSAValue:
        shape = [size + more for size, more in zip(shape_of(value.type), before, strict=True)]
        return self.add(mv.PadOp(value, before, [0] * len(before), "constant", 0.0, self.tensor(shape)))

    def concat(self, values: Sequence[SSAValue], axis: int) -> SSAValue:
        shape = list(shape_of(values[0].type))
        shape[axis] = sum(shape_of(v.type)[axis] for v in values)
        return self.add(mv.ConcatOp(values, axis, self.tensor(shape)))


@dataclass(frozen=True)
class Pattern:
    """The template's inputs (the chunked x·dt, a·dt, B and C; the initial state), the
    states at the chunks' starts and after the last ([b, c + 1, h, p, n]) and the result."""

    template: Template
    x: SSAValue
    a: SSAValue
    b: SSAValue
    c: SSAValue
    initial: SSAValue
    new_states: SSAValue
    y: SSAValue


@lru_cache(maxsize=32)  # two per chunked shape: the loose and the strict template
def ssd_template(element: Attribute, sizes: tuple[int, int, int, int, int, int]) -> Pattern:
    """`mamba2_chunk_scan`'s ops from the chunked inputs to Yd + Yo, in the canonical
    form the importer and canonicalize make of both exporters' graphs; `sizes` are
    (b, c, l, h, p, n), l being `span` here. Each einsum is the importer's: [batch, rows, inner] x
    [batch, inner, cols] between transposes."""
    b, c, span, h, p, n = sizes
    t = Template(element=element)
    x, a_chunks = t.input((b, c, span, h, p)), t.input((b, c, span, h))
    bm, cm = t.input((b, c, span, h, n)), t.input((b, c, span, h, n))
    initial = t.input((b, 1, h, p, n))
    a = t.transpose(a_chunks, (0, 3, 1, 2))  # [b, h, c, l]
    a_cumsum = t.cumsum(a, 3)
    # Yd: bclhn,bcshn->bclsh (C, B), times the segsum permuted to [b, c, l, s, h]; bclsh,bcshp->bclhp
    scores = t.transpose(t.matmul(t.transpose(cm, (0, 1, 3, 2, 4)), t.transpose(bm, (0, 1, 3, 4, 2))), (0, 1, 3, 4, 2))
    masked = t.binary(ew.MulOp, scores, t.transpose(t.segsum(a), (0, 2, 3, 4, 1)))
    x_by_head = t.transpose(x, (0, 1, 3, 2, 4))
    y_diag = t.transpose(t.matmul(t.transpose(masked, (0, 1, 4, 2, 3)), x_by_head), (0, 1, 3, 2, 4))
    # states: B · exp(Acum[..., -1:] - Acum) permuted to [b, c, l, h, 1]; bclhn,bclhp->bchpn
    last = t.slice(a_cumsum, (0, 0, 0, span - 1), (b, h, c, 1))
    decay = t.reshape(t.transpose(t.exp(t.binary(ew.SubOp, last, a_cumsum)), (0, 2, 3, 1)), (b, c, span, h, 1))
    b_decay = t.binary(ew.MulOp, bm, decay)
    states = t.matmul(t.transpose(b_decay, (0, 1, 3, 4, 2)), t.transpose(x, (0, 1, 3, 2, 4)))
    states = t.concat([initial, t.transpose(states, (0, 1, 2, 4, 3))], 1)  # [b, c + 1, h, p, n]
    # the chunk recurrence: bzch,bzhpn->bchpn over the segsum of the chunks' last sums
    chunk_decay = t.segsum(t.pad(t.gather(a_cumsum, -1, 3), (0, 0, 1)))  # [b, h, c + 1, c + 1]
    flat = t.reshape(t.transpose(states, (0, 2, 1, 3, 4)), (b, h, c + 1, p * n))
    new_states = t.transpose(t.reshape(t.matmul(chunk_decay, flat), (b, h, c + 1, p, n)), (0, 2, 1, 3, 4))
    previous = t.slice(new_states, (0, 0, 0, 0, 0), (b, c, h, p, n))
    # Yo: bclhn,bchpn->bclhp (C, the previous states), times exp(Acum) as [b, c, l, h, 1]
    c_states = t.transpose(t.matmul(t.transpose(cm, (0, 1, 3, 2, 4)), previous, transpose_rhs=True), (0, 1, 3, 2, 4))
    decay_out = t.reshape(t.transpose(t.exp(a_cumsum), (0, 2, 3, 1)), (b, c, span, h, 1))
    y = t.binary(ew.AddOp, y_diag, t.binary(ew.MulOp, c_states, decay_out))
    return Pattern(t, x, a_chunks, bm, cm, initial, new_states, y)


# ---------------------------------------------------------------------------
# matching the template
# ---------------------------------------------------------------------------

COMMUTATIVE = (ew.AddOp, ew.MulOp)


def _properties(op: Operation) -> dict[str, Attribute | None]:
    """Every property the op's definition declares, a default where it is absent."""
    declared = op.get_irdl_definition().properties  # type: ignore[attr-defined]
    return {name: op.properties.get(name, spec.default_value) for name, spec in declared.items()}


@dataclass
class Unifier:
    """Binds template values to graph values, op for op. `strict`: types and constant
    values must agree too (without, a first pass finds the sizes the template needs)."""

    template: Template
    strict: bool = True
    bound: dict[SSAValue, SSAValue] = field(default_factory=dict)

    def unify(self, t: SSAValue, g: SSAValue) -> bool:
        if t in self.bound:
            return self.bound[t] is g
        if self.strict and t.type != g.type:
            return False
        if isinstance(t, BlockArgument):
            if t in self.template.expected and not self._constant(t, g):
                return False
            self.bound[t] = g
            return True
        t_op, g_op = t.owner, g.owner
        assert isinstance(t_op, Operation) and isinstance(t, OpResult)
        if not isinstance(g, OpResult) or type(t_op) is not type(g_op) or t.index != g.index:
            return False
        assert isinstance(g_op, Operation)
        if _properties(t_op) != _properties(g_op) or len(t_op.operands) != len(g_op.operands):
            return False
        if len(t_op.regions) != len(g_op.regions) or not all(map(self._same_body, t_op.regions, g_op.regions)):
            return False
        self.bound[t] = g
        orders = [list(g_op.operands)]
        if isinstance(t_op, COMMUTATIVE):
            orders.append(orders[0][::-1])
        for operands in orders:
            before = dict(self.bound)
            if all(map(self.unify, t_op.operands, operands)):
                return True
            self.bound = before
        return False

    def _same_body(self, template: Region, graph: Region) -> bool:
        """The same ops in the same order over the same block arguments (a scan's body),
        unified from the yield back as the graph is."""
        if len(template.blocks) != 1 or len(graph.blocks) != 1:
            return False
        t_block, g_block = template.block, graph.block
        if [a.type for a in t_block.args] != [a.type for a in g_block.args]:
            return False
        if len(t_block.ops) != len(g_block.ops) or not isinstance(g_block.last_op, YieldOp):
            return False
        t_yield, g_yield = t_block.last_op, g_block.last_op
        assert t_yield is not None
        if len(t_yield.operands) != len(g_yield.operands):
            return False
        body = Unifier(self.template, self.strict, dict(zip(t_block.args, g_block.args, strict=True)))
        return all(map(body.unify, t_yield.operands, g_yield.operands))

    def _constant(self, t: SSAValue, g: SSAValue) -> bool:
        if not isinstance(g.owner, rlx.ConstantOp):
            return False
        if not self.strict:
            return True
        want = self.template.expected[t]
        return bool(np.array_equal(np.broadcast_to(g.owner.values(), want.shape), want))


@dataclass(frozen=True)
class Match:
    """`rlx.mamba2`'s operands (x [b, S, h, p], dt [b, S, h], a [h], B, C [b, S, ...], which
    `rewrite` reshapes to [b, S, h, n]), the initial state (None: zeros), the chunked
    sizes and the graph ops matched."""

    inputs: tuple[SSAValue, SSAValue, SSAValue, SSAValue, SSAValue]
    initial: SSAValue | None
    sizes: tuple[int, int, int, int, int, int]
    ops: list[Operation]
    final_readers: list[mv.GatherOp]
    """The graph's `new[:, -1]`: the final state, which the op's state result replaces."""


def _unchunked(chunks: SSAValue, ops: list[Operation]) -> SSAValue | None:
    """v where `chunks` = reshape(pad(v)) into [b, c, l, ...]: v [b, S, ...] (its other
    axes possibly split or merged) padded with zeros after its S steps to c·l (no pad
    when S = c·l)."""
    reshape = chunks.owner
    if not isinstance(reshape, rlx.ReshapeOp):
        return None
    ops.append(reshape)
    value, extra = reshape.input, 0
    if isinstance(pad := value.owner, mv.PadOp):
        before, after = pad.widths()
        if any(before) or any(after[:1]) or any(after[2:]) or pad.mode.data != "constant" or pad.value.value.data:
            return None
        ops.append(pad)
        value, extra = pad.input, after[1]
    b, c, span, *rest = shape_of(chunks.type)
    shape = shape_of(value.type)
    if len(shape) < 2 or shape[0] != b or shape[1] + extra != c * span or np.prod(shape[2:]) != np.prod(rest):
        return None
    return value


def _product(value: SSAValue, ops: list[Operation]) -> tuple[SSAValue, SSAValue] | None:
    """The operands of the product `value`, in both orders."""
    mul = value.owner
    if not isinstance(mul, ew.MulOp):
        return None
    ops.append(mul)
    return mul.lhs, mul.rhs


def _x_and_dt(x_dt: SSAValue, ops: list[Operation]) -> tuple[SSAValue, SSAValue] | None:
    """(x, dt) where x_dt = x · reshape(dt, [b, S, h, 1]), x [b, S, h, p]."""
    factors = _product(x_dt, ops)
    for x, dt in (factors, factors[::-1]) if factors else ():
        if isinstance(dt.owner, rlx.ReshapeOp) and shape_of(x.type) == shape_of(x_dt.type):
            source = dt.owner.input
            if shape_of(dt.type) == (*shape_of(source.type), 1) == (*shape_of(x.type)[:3], 1):
                ops.append(dt.owner)
                return x, source
    return None


def _a_of(a_dt: SSAValue, dt: SSAValue, ops: list[Operation]) -> SSAValue | None:
    """a [h] (or a shape of leading ones) where a_dt = a · dt."""
    factors = _product(a_dt, ops)
    for a, other in (factors, factors[::-1]) if factors else ():
        heads = shape_of(dt.type)[-1]
        if other is dt and shape_of(a.type)[-1:] == (heads,) and np.prod(shape_of(a.type)) == heads:
            return a
    return None


def match(add: ew.AddOp) -> Match | None:
    """The chunked scan whose Yd + Yo is `add`, with the inputs the op needs."""
    shape = shape_of(add.result.type)
    element = element_type(add.result.type)
    if len(shape) != 5 or dtypes.from_ir(element).name not in rc.Mamba2Op.ALLOWED:
        return None
    b, c, span, h, p = shape
    loose = ssd_template(element, (b, c, span, h, p, 1))
    finding = Unifier(loose.template, strict=False)
    if not finding.unify(loose.y, add.result):
        return None
    n = shape_of(finding.bound[loose.c].type)[-1]
    pattern = ssd_template(element, (b, c, span, h, p, n))
    unifier = Unifier(pattern.template)
    if not unifier.unify(pattern.y, add.result):
        return None
    ops = list(dict.fromkeys(g.owner for g in unifier.bound.values() if isinstance(g.owner, Operation)))
    x_dt, a_dt, bm, cm = (_unchunked(unifier.bound[v], ops) for v in (pattern.x, pattern.a, pattern.b, pattern.c))
    if x_dt is None or a_dt is None or bm is None or cm is None:
        return None
    steps = shape_of(x_dt.type)[1]
    if any(shape_of(v.type)[1] != steps for v in (a_dt, bm, cm)):
        return None
    found = _x_and_dt(x_dt, ops)
    if found is None or shape_of(found[0].type) != (b, steps, h, p):
        return None
    a = _a_of(a_dt, found[1], ops)
    if a is None:
        return None
    initial = unifier.bound[pattern.initial]
    readers = _final_readers(unifier.bound[pattern.new_states], c)
    sizes = (b, c, span, h, p, n)
    return Match((found[0], found[1], a, bm, cm), None if is_zero(initial) else initial, sizes, ops, readers)


def _final_readers(new_states: SSAValue, chunks: int) -> list[mv.GatherOp]:
    """The gathers of the last of the c + 1 states (index -1 or c on axis 1): the state
    after the last step, padded steps included, which leave it as it was (their dt·x
    and a·dt are zero)."""
    readers = []
    for use in new_states.uses:
        reader = use.operation
        if isinstance(reader, mv.GatherOp) and reader.data is new_states and reader.normalized_axis() == 1:
            if constant_index(reader.indices) in (-1, chunks):
                readers.append(reader)
    return readers


def rewrite(found: Match) -> tuple[list[Operation], SSAValue, SSAValue | None]:
    """The new ops, the value replacing Yd + Yo (the op's output padded back to whole
    chunks with zeros, reshaped into them) and the final state (None: no reader)."""
    b, c, span, h, p, n = found.sizes
    x, dt, a, bm, cm = found.inputs
    emitter = Emitter()
    state = [] if found.initial is None else [emitter.reshape(found.initial, (b, h, p, n))]
    steps = shape_of(x.type)[1]
    inputs = [
        x,
        dt,
        emitter.reshape(a, (h,)),
        emitter.reshape(bm, (b, steps, h, n)),
        emitter.reshape(cm, (b, steps, h, n)),
    ]
    final = [TensorType(element_type(x.type), [b, h, p, n])] if found.final_readers else []
    scan = rc.Mamba2Op(inputs, state, [x.type, *final], p, n)
    y = emitter.add(scan)
    if steps < c * span:
        padded = TensorType(element_type(x.type), [b, c * span, h, p])
        y = emitter.add(mv.PadOp(y, [0] * 4, [0, c * span - steps, 0, 0], "constant", 0.0, padded))
    return emitter.ops, emitter.reshape(y, (b, c, span, h, p)), scan.results[1] if final else None


class FuseMamba2(RewritePattern):
    """Yd + Yo of a chunked scan becomes `rlx.mamba2`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ew.AddOp, rewriter: PatternRewriter) -> None:
        found = match(op)
        if found is None:
            return
        point = _insertion_point(op, found.final_readers)
        if point is None:
            return
        new_ops, out, final = rewrite(found)
        rewriter.insert(new_ops, InsertPoint.before(point))
        rewriter.replace_all_uses_with(op.result, out)
        for reader in found.final_readers if final is not None else ():
            rewriter.replace_all_uses_with(reader.result, final)
        erase_unused([op, *found.final_readers, *found.ops], rewriter)


def _insertion_point(add: ew.AddOp, readers: Sequence[Operation]) -> Operation | None:
    """The first of the add and the final state's readers (the new op must precede them
    all; its operands come before the chunked ops); None when a reader is in another block."""
    first: Operation = add
    for reader in readers:
        if reader.parent_block() is not add.parent_block():
            return None
        if reader.is_before_in_block(first):
            first = reader
    return first


@dataclass(frozen=True)
class FuseMamba2Pass(ModulePass):
    name = "fuse-mamba2"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseMamba2(), apply_recursively=False).rewrite_module(op)
