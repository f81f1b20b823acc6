"""Kernels for the state-space scans `rlx.mamba2` and `rlx.selective_scan`.

Semantics, per (batch, head) / (batch, channel), with zero state when the
state operand is absent (the ops' docstrings in dialects/recurrent.py):
- mamba2: dA = exp(dt·a[h]); S = dA·S + (dt·x) ⊗ b; y[p] = Σₙ S[p, n]·c[n];
- selective_scan: h = exp(Δ·A[d, :]) ⊙ h + Δ·x·B; y = Σₙ C·h.

Every kernel runs in parallel over independent units (`Kernel.extent`) and
each unit is sequential over time with its state in a stack workspace
(`StackArray`, allocated once per kernel call, i.e. once per thread, and
reused by every unit that thread runs, so it stays in L1/L2). The state is
kept in the compute type (f32 for f16 and bf16) for the whole call and
rounded once, when stored as the state result; each output element is
rounded once.

Mamba2 has three forms, picked by the sequence length (`mamba2_kernels`; the
thresholds and block sizes named below are `rlx_mlir.tuning.Tuning` fields):
- **direct** (S <= mamba2_direct_max_seq: decode), units (batch, head): the
  state in the tensor's own [P, N] layout, so nothing is transposed; step 0 reads
  the state operand and, when the state result is in the compute type, the
  steps write it directly (one pass from state to state). Per p, the lane
  loop over n updates s = dA·s + (dt·x[p])·b[n] and sums y[p] += s·c[n],
  a reduction that `reassoc` on that one add lets LLVM vectorize.
- **blocked** (the default otherwise), units (batch, head, block of rows):
  the rows of the state are independent (row p only meets x[p] and y[p]),
  so a unit runs a block of rows that fits in L1 (mamba2_state_block_bytes)
  through every step. The block is stored transposed, [N, rows], and each
  pass over it runs mamba2_steps steps: for a group of states (unrolled), a
  loop over the rows loads each state once, runs it through the steps in
  registers while accumulating each step's y in a row array, and stores it
  once; no reduction, so the loop vectorizes without fast-math flags. (B1 S2048 H8 P64
  N128 f32, one thread: 5.55 ms one step per pass, 4.58 ms two, 5.15 ms four.)
  The block is held divided by its running decay (HELD_DECAY_RANGE): one FMA
  per state and step for the update (4.49 -> 4.07 ms).
- **chunked** (S >= mamba2_chunked_min_seq), units (batch, head): the SSD
  algorithm (mamba's `ssd_minimal`) per chunk of CHUNK steps (the last one
  shorter), with cum[i] the running sum of dt·a within the chunk:
      G = C · Bᵀ                                             (GEMM, q x q)
      M = G ∘ exp(cum[i] − cum[j]) · dt[j] for j <= i, else 0
      Y = exp(cum[i]) · (C · Sᵀ) + M · X                      (two GEMMs, q x P)
      S = exp(cum[q−1]) · S + Xᵀ · (exp(cum[q−1] − cum[j]) · dt[j] · B)   (GEMM, P x N)
  Every exponent is a segment sum clamped to <= 0 (a decay never exceeds 1,
  so a sum that rounds positive cannot overflow) and no decay is factored as
  exp(a)·exp(−b). The GEMMs are single-threaded CBLAS calls (rlx_mlir.blas)
  from the kernel's own threads, after a kernel that sets OpenBLAS to one
  thread. It agrees with the sequential forms within 1e-4 relative
  (tests/test_state_space.py).

The selective scan has a decay per (channel, state), so it has no GEMM form:
units are (batch, block of scan_channel_block channels), the block's states
are stored [N, channels] with A transposed beside them, and each step is one
fused pass, groups of scan_group states unrolled inside a loop over the
channels that LLVM vectorizes. A is kept as A·log2e, so each decay is
2^(Δ·A log2e), math_approx.exp2_product_in_range when every exponent of the
step is in its range (else exp2_product): 8 FMA-unit operations per decay
instead of e^(Δ·A)'s 10, in a loop bound by that unit (B1 S2048 D1024 N16 f32,
one thread: 4.2-4.7 -> 3.5 ms). The decays are within 1 ULP of 2^(Δ·A log2e)
for the rounded A log2e, as e^(Δ·A) was of the rounded Δ·A.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import gemm_call, gemm_external, single_threaded_blas
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_else
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.tuning import Tuning

CHUNK: Final = 64
"""Steps per chunk of Mamba2's chunked (SSD) form."""

HELD_DECAY_RANGE: Final = 2.0**40
"""The blocked Mamba2 form holds the state divided by the product of the decays since
it last multiplied them in, so a step costs one FMA per state (s += (dt·x / scale)·b)
instead of a multiply and an FMA, and y is scaled once per row; the decays are
multiplied back in (a block in the explicit form) whenever the product would leave
[1 / HELD_DECAY_RANGE, HELD_DECAY_RANGE] or is not finite, so held values stay within
2^40 of the state's (typical decays: every few hundred steps), and a zero, inf or NaN
decay goes through the recurrence as written."""

REDUCE: Final = llvm.FastMathAttr([llvm.FastMathFlag.REASSOC, llvm.FastMathFlag.ALLOW_CONTRACT])
CONTRACT: Final = llvm.FastMathAttr([llvm.FastMathFlag.ALLOW_CONTRACT])
"""Flags of the direct form's y[p] sum only: reassociating it is what lets it vectorize."""

WORKSPACE_MAX_BYTES: Final = 2 << 20
"""The largest stack workspace a kernel takes (threads have 8 MiB stacks)."""


# ---------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------


def _loop(e: Emitter, region: Region, n: int | SSAValue, body: Callable[[SSAValue], None]) -> None:
    """for i in range(n): body(i)."""
    for_range(e, region, e.i64(0), e.i64(n) if isinstance(n, int) else n, body)


def _groups(e: Emitter, region: Region, total: int, size: int, body: Callable[[SSAValue, int], None]) -> None:
    """body(first, count) over [0, total) in groups of `size`: the full groups in a
    loop, the remainder once (`count` is a Python int: the group is unrolled)."""
    full = total // size * size
    if full:
        for_range(e, region, e.i64(0), e.i64(full), lambda first: body(first, size), step=size)
    if total % size:
        body(e.i64(full), total % size)


def _at(e: Emitter, *terms: tuple[SSAValue | int, int] | SSAValue | int) -> SSAValue:
    """The element offset Σ index·stride (a bare value has stride 1)."""
    total: SSAValue | None = None
    for term in terms:
        index, stride = term if isinstance(term, tuple) else (term, 1)
        if isinstance(index, int):
            index = e.i64(index)
        part = index if stride == 1 else e.mul(index, e.i64(stride))
        total = part if total is None else e.add(total, part)
    return total if total is not None else e.i64(0)


def _arrays(e: Emitter, item: Codec, *counts: int) -> list[StackArray]:
    """A kernel's stack workspace: one array of `item` per count, allocated in
    the entry block (so once per kernel call, i.e. per thread)."""
    return [StackArray.allocate(e, item, count) for count in counts]


def _check_workspace(op: Operation, needed: int) -> None:
    if needed > WORKSPACE_MAX_BYTES:
        raise ValueError(
            f"'{op.name}' needs a {needed} byte workspace per thread, more than the {WORKSPACE_MAX_BYTES} "
            "bytes the kernels keep on the stack (reduce head_dim or state_size)"
        )


def _exp_clamped(e: Emitter, x: SSAValue) -> SSAValue:
    """exp(min(x, 0)): a decay over a segment, whose exponent is a sum of
    non-positive terms; rounding must not make it exceed 1."""
    zero = e.const_like(x, 0.0)
    return m.exp(e, e.select(e.fcmp("ogt", x, zero), zero, x))


@dataclass(frozen=True)
class Pointers:
    """The kernel's pointer arguments by role (the op's operands, then results)."""

    named: dict[str, SSAValue]

    def __getitem__(self, name: str) -> SSAValue:
        return self.named[name]

    def get(self, name: str) -> SSAValue | None:
        return self.named.get(name)


def _buffers(op: rc.ScanFamilyOp) -> tuple[list[str], list[SSAValue]]:
    """Names and values of the kernel's buffers: inputs, state, output, final state."""
    names = [*op.input_names()]
    values = list(op.inputs)
    if op.carries_in:
        names.append("state")
        values.append(op.initial_state[0])
    names.append("y")
    values.append(op.output)
    if op.carries_out:
        names.append("final")
        values.append(op.final_state[0])
    return names, values


def _kernel(
    op: rc.ScanFamilyOp,
    name: str,
    extent: int,
    work: int,
    build: Callable[[Emitter, Region, Pointers, SSAValue, SSAValue], None],
    externals: tuple = (),
) -> Kernel:
    names, values = _buffers(op)

    def body(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        build(e, region, Pointers(dict(zip(names, pointers))), begin, end)

    return Kernel(kernel_function(name, len(values), body), list(values), extent, work, True, externals)


# ---------------------------------------------------------------------------
# Mamba2
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mamba2Dims:
    batch: int
    seq: int
    heads: int
    p: int
    n: int

    @classmethod
    def of(cls, op: rc.Mamba2Op) -> Mamba2Dims:
        batch, seq, heads, p = shape_of(op.x.type)
        return cls(batch, seq, heads, p, op.state_size.value.data)

    @property
    def units(self) -> int:
        return self.batch * self.heads


class Mamba2Unit:
    """Offsets of one (batch, head) unit u = b·H + h into the operands: `row(t)`
    is the (b, t, h) row index of dt, x/y (times P) and b/c (times N); the state
    of the unit starts at u·P·N."""

    def __init__(self, e: Emitter, dims: Mamba2Dims, unit: SSAValue) -> None:
        self.e, self.dims = e, dims
        self.batch = e.udiv(unit, e.i64(dims.heads))
        self.head = e.urem(unit, e.i64(dims.heads))
        self.base = _at(e, (self.batch, dims.seq * dims.heads), self.head)
        self.state = _at(e, (unit, dims.p * dims.n))

    def row(self, t: SSAValue) -> SSAValue:
        return _at(self.e, self.base, (t, self.dims.heads))


def _row_block(dims: Mamba2Dims, item_bytes: int, tuning: Tuning) -> int:
    """Rows of P per unit of the blocked form: all of them if their state fits
    in `mamba2_state_block_bytes`, else as many whole vectors of lanes
    (`vector_bytes`) as fit. Rows are independent (row p of the state only meets
    x[p] and y[p]), so a unit runs a block of rows through every step with that
    block in L1."""
    lanes = tuning.vector_bytes // item_bytes
    fit = tuning.mamba2_state_block_bytes // (dims.n * item_bytes)
    return dims.p if fit >= dims.p else max(lanes, fit // lanes * lanes)


def _mamba2_blocked(op: rc.Mamba2Op, ctx: KernelContext) -> Kernel:
    """The blocked form (module docstring). Each pass over the state block runs
    `mamba2_steps` steps, so each state is loaded and stored once per that many
    steps (a state's y terms only feed y, never the state: the steps need no
    reduction between them); `mamba2_group` state-steps are updated per pass of
    the lane loop (unrolled: fewer loads and stores of the output lanes)."""
    kernel = _Mamba2Blocked(op, ctx.tuning)
    dims = kernel.dims
    work = dims.units * max(1, dims.seq) * dims.p * dims.n
    return _kernel(op, ctx.name, dims.units * kernel.blocks, work, kernel.build)


class _Mamba2Blocked:
    """What the blocked form knows before it emits: dimensions, codecs, the rows of
    a state block and the steps of a pass."""

    def __init__(self, op: rc.Mamba2Op, tuning: Tuning) -> None:
        self.tuning = tuning
        self.dims = Mamba2Dims.of(op)
        self.item = codec(element_type(op.x.type))
        self.wide = codec(self.item.compute)
        self.rows = _row_block(self.dims, self.wide.dtype.nbytes, tuning)
        self.blocks = -(-self.dims.p // self.rows)
        self.steps = tuning.mamba2_steps

    def build(self, e: Emitter, region: Region, ptr: Pointers, begin: SSAValue, end: SSAValue) -> None:
        for_range(e, region, begin, end, _BlockedBody(self, e, region, ptr).unit)


class _BlockedBody:
    """One emission of the blocked form: the state block, its held decay and the
    per-step lanes every unit reuses."""

    def __init__(self, k: _Mamba2Blocked, e: Emitter, region: Region, ptr: Pointers) -> None:
        self.k, self.e, self.region, self.ptr = k, e, region, ptr
        rows, wide = k.rows, k.wide
        self.state, self.held = _arrays(e, wide, k.dims.n * rows, 1)  # [N, rows], and the decay it is divided by
        self.one = real(wide.constant(e, 1.0))
        self.u, self.acc = _arrays(e, wide, k.steps * rows, k.steps * rows)  # per step: dt·x and y, [steps, rows]

    def unit(self, index: SSAValue) -> None:
        _BlockedUnit(self, index).emit()


class _BlockedUnit:
    """One work item: a block of rows of one (batch, head) unit through every step."""

    def __init__(self, body: _BlockedBody, index: SSAValue) -> None:
        self.b, self.k, self.e, self.region, self.ptr = body, body.k, body.e, body.region, body.ptr
        e, k = self.e, self.k
        p_, n_, rows = k.dims.p, k.dims.n, k.rows
        self.at = Mamba2Unit(e, k.dims, e.udiv(index, e.i64(k.blocks)))
        self.p0 = e.mul(e.urem(index, e.i64(k.blocks)), e.i64(rows))
        self.count: int | SSAValue = rows if p_ % rows == 0 else e.smin(e.i64(rows), e.sub(e.i64(p_), self.p0))
        self.a = real(k.item.load(e, self.ptr["a"], self.at.head))
        self.state_at = _at(e, self.at.state, (self.p0, n_))

    def each_state(self, body: Callable[[SSAValue, SSAValue], None]) -> None:
        e, region = self.e, self.region
        _loop(e, region, self.count, lambda p: _loop(e, region, self.k.dims.n, lambda n: body(p, n)))

    def emit(self) -> None:
        e, k, b = self.e, self.k, self.b
        n_, rows = k.dims.n, k.rows
        source = self.ptr.get("state")
        self.each_state(
            lambda p, n: b.state.set(
                e,
                _at(e, (n, rows), p),
                real(k.wide.constant(e, 0.0))
                if source is None
                else real(k.item.load(e, source, _at(e, self.state_at, (p, n_), n))),
            )
        )
        b.held.set(e, 0, b.one)
        _groups(e, self.region, k.dims.seq, k.steps, self.block)
        target = self.ptr.get("final")
        if target is not None:
            scale = real(b.held.get(e, 0))
            self.each_state(
                lambda p, n: k.item.store(
                    e,
                    e.fmul(real(b.state.get(e, _at(e, (n, rows), p))), scale),
                    target,
                    _at(e, self.state_at, (p, n_), n),
                )
            )

    def block(self, t0: SSAValue, size: int) -> None:
        """Steps t0 .. t0 + size in one pass over the state block: each state is
        loaded and stored once, and runs the `size` steps in registers. The
        block keeps the state divided by its running decay (`HELD_DECAY_RANGE`),
        or, when that would leave the range, multiplies the decay back in."""
        e, k, b = self.e, self.k, self.b
        rows_of = [self.at.row(e.add(t0, e.i64(t))) for t in range(size)]
        firsts = [_at(e, (row, k.dims.p), self.p0) for row in rows_of]
        dts = [real(k.item.load(e, self.ptr["dt"], row)) for row in rows_of]
        decays = [m.exp(e, e.fmul(dt, self.a)) for dt in dts]
        before = real(b.held.get(e, 0))
        scales: list[SSAValue] = []  # the running decay after each step of the block
        for decay in decays:
            scales.append(e.fmul(scales[-1] if scales else before, decay))
        bound = real(k.wide.constant(e, HELD_DECAY_RANGE))
        inside = e.and_(e.fcmp("oge", scales[-1], e.fdiv(b.one, bound)), e.fcmp("ole", scales[-1], bound))
        steps = _BlockSteps(self, size, rows_of, firsts, dts, decays, before, scales)
        if_else(e, self.region, inside, lambda: steps.run(True), lambda: steps.run(False))


class _BlockSteps:
    """The steps of one block (`_BlockedUnit.block`), emitted for either way of
    holding the state."""

    def __init__(
        self,
        unit: _BlockedUnit,
        size: int,
        rows_of: list[SSAValue],
        firsts: list[SSAValue],
        dts: list[SSAValue],
        decays: list[SSAValue],
        before: SSAValue,
        scales: list[SSAValue],
    ) -> None:
        self.unit, self.b, self.k, self.e, self.region, self.ptr = unit, unit.b, unit.k, unit.e, unit.region, unit.ptr
        self.size, self.rows_of, self.firsts = size, rows_of, firsts
        self.dts, self.decays, self.before, self.scales = dts, decays, before, scales

    def run(self, keep: bool) -> None:
        """keep: the state stays divided by the running decay, so a step is
        s += (dt·x / scale)·b and y = scale · Σ s·c; else s = decay·s + dt·x·b
        with the held decay folded into the first step."""
        e, region, unit = self.e, self.region, self.unit
        self.keep = keep
        self.coefs = [e.fdiv(dt, scale) for dt, scale in zip(self.dts, self.scales)] if keep else self.dts
        self.steps_decay = [e.fmul(self.decays[0], self.before), *self.decays[1:]]
        _loop(e, region, unit.count, self.stage)
        _groups(e, region, self.k.dims.n, max(1, self.k.tuning.mamba2_group // self.size), self.group)
        _loop(e, region, unit.count, self.store)
        self.b.held.set(e, 0, self.scales[-1] if keep else self.b.one)

    def stage(self, p: SSAValue) -> None:
        e, k, b, rows = self.e, self.k, self.b, self.k.rows
        for t in range(self.size):
            x = real(k.item.load(e, self.ptr["x"], _at(e, self.firsts[t], p)))
            b.u.set(e, _at(e, (t, rows), p), e.fmul(self.coefs[t], x))
            b.acc.set(e, _at(e, (t, rows), p), real(k.wide.constant(e, 0.0)))

    def group(self, n0: SSAValue, width: int) -> None:
        e, k, n_, rows = self.e, self.k, self.k.dims.n, self.k.rows
        bs = [
            [real(k.item.load(e, self.ptr["b"], _at(e, (row, n_), n0, i))) for i in range(width)]
            for row in self.rows_of
        ]
        cs = [
            [real(k.item.load(e, self.ptr["c"], _at(e, (row, n_), n0, i))) for i in range(width)]
            for row in self.rows_of
        ]
        at_n = _at(e, (n0, rows))
        _loop(e, self.region, self.unit.count, lambda p: self.lane(p, width, bs, cs, at_n))

    def lane(self, p: SSAValue, width: int, bs: list[list[SSAValue]], cs: list[list[SSAValue]], at_n: SSAValue) -> None:
        e, b, rows, size = self.e, self.b, self.k.rows, self.size
        totals = [real(b.acc.get(e, _at(e, (t, rows), p))) for t in range(size)]
        ups = [real(b.u.get(e, _at(e, (t, rows), p))) for t in range(size)]
        for i in range(width):
            at_s = _at(e, at_n, i * rows, p)
            s = real(b.state.get(e, at_s))
            for t in range(size):
                if self.keep:
                    s = e.fma(ups[t], bs[t][i], s)
                else:
                    s = e.fma(self.steps_decay[t], s, e.fmul(ups[t], bs[t][i]))
                totals[t] = e.fma(s, cs[t][i], totals[t])
            b.state.set(e, at_s, s)
        for t in range(size):
            b.acc.set(e, _at(e, (t, rows), p), totals[t])

    def store(self, p: SSAValue) -> None:
        e, k, rows = self.e, self.k, self.k.rows
        for t in range(self.size):
            y = real(self.b.acc.get(e, _at(e, (t, rows), p)))
            k.item.store(e, e.fmul(y, self.scales[t]) if self.keep else y, self.ptr["y"], _at(e, self.firsts[t], p))


def _sum_loop(
    e: Emitter, region: Region, n: int | SSAValue, init: SSAValue, body: Callable[[SSAValue, SSAValue], SSAValue]
) -> SSAValue:
    """acc = init; for i in range(n): acc = body(i, acc); the final acc (a loop-carried value)."""
    header, loop, exit_ = Block(arg_types=[i64, init.type]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, e.i64(0), init))
    e.move_to(header)
    index, acc = header.args
    e.op(llvm.CondBrOp(e.icmp("slt", index, e.i64(n) if isinstance(n, int) else n), loop, [], exit_, []))
    e.move_to(loop)
    e.op(llvm.BrOp(header, e.add(index, e.i64(1)), body(index, acc)))
    region.add_block(exit_)
    e.move_to(exit_)
    return acc


@dataclass(frozen=True)
class StateSlice:
    """Where a unit's state lives during the call: a stack array, or the unit's
    slice of the state result when that is stored in the compute type."""

    item: Codec
    ptr: SSAValue
    base: SSAValue

    def get(self, e: Emitter, index: SSAValue) -> SSAValue:
        return real(self.item.load(e, self.ptr, e.add(self.base, index)))

    def set(self, e: Emitter, index: SSAValue, value: SSAValue) -> None:
        self.item.store(e, value, self.ptr, e.add(self.base, index))


def _mamba2_direct(op: rc.Mamba2Op, ctx: KernelContext) -> Kernel:
    """Short sequences (decode): the state in the tensor's own [P, N] layout, so
    no transpose on the way in or out. Step 0 reads the state operand itself
    (or zeros) and, when the state result is in the compute type, every step
    writes that result directly: one step is one pass from state to state. The
    lane loop runs over n and sums y[p] as a reduction, which `reassoc` on that
    one add lets LLVM vectorize."""
    dims = Mamba2Dims.of(op)
    p_, n_ = dims.p, dims.n
    item = codec(element_type(op.x.type))
    wide = codec(item.compute)
    in_result = _direct_in_result(op)

    def build(e: Emitter, region: Region, ptr: Pointers, begin: SSAValue, end: SSAValue) -> None:
        stack = None if in_result else _arrays(e, wide, p_ * n_)[0]
        bs, cs = _arrays(e, wide, n_, n_)

        def unit(index: SSAValue) -> None:
            at = Mamba2Unit(e, dims, index)
            a = real(item.load(e, ptr["a"], at.head))
            state = StateSlice(item, ptr["final"], at.state) if stack is None else StateSlice(wide, stack.ptr, e.i64(0))
            source = ptr.get("state")

            def initial(k: SSAValue) -> SSAValue:
                return real(wide.constant(e, 0.0)) if source is None else real(item.load(e, source, e.add(at.state, k)))

            def step(t: SSAValue, old: Callable[[SSAValue], SSAValue]) -> None:
                row = at.row(t)
                dt = real(item.load(e, ptr["dt"], row))
                decay = m.exp(e, e.fmul(dt, a))

                def stage(n: SSAValue) -> None:
                    bs.set(e, n, real(item.load(e, ptr["b"], _at(e, (row, n_), n))))
                    cs.set(e, n, real(item.load(e, ptr["c"], _at(e, (row, n_), n))))

                _loop(e, region, n_, stage)

                def lane(p: SSAValue) -> None:
                    u = e.fmul(dt, real(item.load(e, ptr["x"], _at(e, (row, p_), p))))
                    first = _at(e, (p, n_))

                    def term(n: SSAValue, acc: SSAValue) -> SSAValue:
                        k = e.add(first, n)
                        s = e.fma(decay, old(k), e.fmul(u, real(bs.get(e, n))))
                        state.set(e, k, s)
                        return e.op(llvm.FAddOp(acc, e.op(llvm.FMulOp(s, real(cs.get(e, n)), CONTRACT)), REDUCE))

                    y = _sum_loop(e, region, n_, real(wide.constant(e, 0.0)), term)
                    item.store(e, y, ptr["y"], _at(e, (row, p_), p))

                _loop(e, region, p_, lane)

            if dims.seq:
                step(e.i64(0), initial)
                _loop_from(e, region, 1, dims.seq, lambda t: step(t, lambda k: real(state.get(e, k))))
            elif stack is None:
                _loop(e, region, p_ * n_, lambda k: state.set(e, k, initial(k)))
            target = ptr.get("final")
            if stack is not None and target is not None:
                read = (lambda k: real(state.get(e, k))) if dims.seq else initial
                _loop(e, region, p_ * n_, lambda k: item.store(e, read(k), target, e.add(at.state, k)))

        for_range(e, region, begin, end, unit)

    work = dims.units * max(1, dims.seq) * p_ * n_
    return _kernel(op, ctx.name, dims.units, work, build)


def _mamba2_load_state(
    e: Emitter,
    region: Region,
    item: Codec,
    source: SSAValue | None,
    base: SSAValue,
    state: StackArray,
    dims: Mamba2Dims,
) -> None:
    """The unit's state [P, N] from the state operand (or zeros) into the workspace."""
    if source is None:
        _loop(e, region, dims.p * dims.n, lambda k: state.set(e, k, real(state.item.constant(e, 0.0))))
    else:
        _loop(e, region, dims.p * dims.n, lambda k: state.set(e, k, real(item.load(e, source, e.add(base, k)))))


def _mamba2_store_state(
    e: Emitter,
    region: Region,
    item: Codec,
    target: SSAValue | None,
    base: SSAValue,
    state: StackArray,
    dims: Mamba2Dims,
) -> None:
    """The workspace state into the state result [P, N] (rounded once), if there is one."""
    if target is not None:
        _loop(e, region, dims.p * dims.n, lambda k: item.store(e, real(state.get(e, k)), target, e.add(base, k)))


@dataclass(frozen=True)
class ChunkArrays:
    """The chunked form's workspace (compute type, row-major)."""

    x: StackArray  # [Q, P]
    b: StackArray  # [Q, N], scaled in place into the state update's weights
    c: StackArray  # [Q, N]
    g: StackArray  # [Q, Q]: C·Bᵀ, then masked by the decays
    y: StackArray  # [Q, P]
    dt: StackArray  # [Q]
    cum: StackArray  # [Q]: running sum of dt·a within the chunk
    state: StackArray  # [P, N]


def _mamba2_chunked(op: rc.Mamba2Op, ctx: KernelContext) -> Kernel:
    dims = Mamba2Dims.of(op)
    p_, n_ = dims.p, dims.n
    item = codec(element_type(op.x.type))
    wide = codec(item.compute)
    q_ = min(CHUNK, dims.seq)
    blas.load()
    dtype = wide.dtype.name

    def build(e: Emitter, region: Region, ptr: Pointers, begin: SSAValue, end: SSAValue) -> None:
        arrays = ChunkArrays(*_arrays(e, wide, q_ * p_, q_ * n_, q_ * n_, q_ * q_, q_ * p_, q_, q_, p_ * n_))
        full = dims.seq // q_
        bodies = {q: _chunk_body(e, region, dims, item, dtype, arrays, q) for q in {q_, dims.seq % q_} if q}

        def unit(index: SSAValue) -> None:
            at = Mamba2Unit(e, dims, index)
            a = real(item.load(e, ptr["a"], at.head))
            _mamba2_load_state(e, region, item, ptr.get("state"), at.state, arrays.state, dims)
            if full:
                for_range(e, region, e.i64(0), e.i64(full * q_), lambda t0: bodies[q_](ptr, at, a, t0), step=q_)
            if dims.seq % q_:
                bodies[dims.seq % q_](ptr, at, a, e.i64(full * q_))
            _mamba2_store_state(e, region, item, ptr.get("final"), at.state, arrays.state, dims)

        for_range(e, region, begin, end, unit)

    work = dims.units * dims.seq * p_ * n_
    return _kernel(op, ctx.name, dims.units, work, build, (gemm_external(dtype),))


def _chunk_body(
    e: Emitter, region: Region, dims: Mamba2Dims, item: Codec, dtype: str, w: ChunkArrays, q: int
) -> Callable[[Pointers, Mamba2Unit, SSAValue, SSAValue], None]:
    """The emitter of one chunk of `q` steps (its GEMM constants emitted here, once)."""
    p_, n_ = dims.p, dims.n
    scores = gemm_call(e, dtype, (q, q, n_), (False, True), (n_, n_, q))  # G = C · Bᵀ
    from_state = gemm_call(e, dtype, (q, p_, n_), (False, True), (n_, n_, p_))  # Y = C · Sᵀ
    within = gemm_call(e, dtype, (q, p_, q), (False, False), (q, p_, p_), beta=1.0)  # Y += M · X
    update = gemm_call(e, dtype, (p_, n_, q), (True, False), (p_, n_, n_), beta=1.0)  # S += Xᵀ · B'

    def chunk(ptr: Pointers, at: Mamba2Unit, a: SSAValue, t0: SSAValue) -> None:
        _stage_chunk(e, region, dims, item, ptr, at, a, t0, w, q)
        scores(w.c.ptr, w.b.ptr, w.g.ptr)
        last = real(w.cum.get(e, q - 1))

        def mask_row(i: SSAValue) -> None:
            cum_i = real(w.cum.get(e, i))

            def cell(j: SSAValue) -> None:
                at_g = _at(e, (i, q), j)
                decayed = e.fmul(
                    e.fmul(real(w.g.get(e, at_g)), _exp_clamped(e, e.fsub(cum_i, real(w.cum.get(e, j))))),
                    real(w.dt.get(e, j)),
                )
                w.g.set(e, at_g, e.select(e.icmp("sle", j, i), decayed, real(w.g.item.constant(e, 0.0))))

            _loop(e, region, q, cell)

        _loop(e, region, q, mask_row)
        from_state(w.c.ptr, w.state.ptr, w.y.ptr)

        _scale_rows(e, region, w.y, q, p_, lambda i: _exp_clamped(e, real(w.cum.get(e, i))))
        within(w.g.ptr, w.x.ptr, w.y.ptr)

        def store_row(i: SSAValue) -> None:
            first, row = _at(e, (i, p_)), _at(e, (at.row(e.add(t0, i)), p_))
            _loop(e, region, p_, lambda p: item.store(e, real(w.y.get(e, e.add(first, p))), ptr["y"], e.add(row, p)))

        _loop(e, region, q, store_row)
        total = _exp_clamped(e, last)
        _loop(e, region, p_ * n_, lambda k: w.state.set(e, k, e.fmul(real(w.state.get(e, k)), total)))

        def weight(j: SSAValue) -> SSAValue:  # step j's share of the chunk's final state
            return e.fmul(_exp_clamped(e, e.fsub(last, real(w.cum.get(e, j)))), real(w.dt.get(e, j)))

        _scale_rows(e, region, w.b, q, n_, weight)
        update(w.x.ptr, w.b.ptr, w.state.ptr)

    return chunk


def _scale_rows(
    e: Emitter, region: Region, array: StackArray, rows: int, width: int, factor: Callable[[SSAValue], SSAValue]
) -> None:
    """array[i, :] *= factor(i) for each of `rows` rows of `width`."""

    def row(i: SSAValue) -> None:
        scale, first = factor(i), _at(e, (i, width))
        _loop(
            e,
            region,
            width,
            lambda k: array.set(e, e.add(first, k), e.fmul(real(array.get(e, e.add(first, k))), scale)),
        )

    _loop(e, region, rows, row)


def _stage_chunk(
    e: Emitter,
    region: Region,
    dims: Mamba2Dims,
    item: Codec,
    ptr: Pointers,
    at: Mamba2Unit,
    a: SSAValue,
    t0: SSAValue,
    w: ChunkArrays,
    q: int,
) -> None:
    """Rows t0 .. t0+q of the unit's x, b, c, dt into the workspace (decoded), and cum."""
    p_, n_ = dims.p, dims.n

    def row(i: SSAValue) -> None:
        r = at.row(e.add(t0, i))
        w.dt.set(e, i, real(item.load(e, ptr["dt"], r)))
        _loop(e, region, p_, lambda p: w.x.set(e, _at(e, (i, p_), p), real(item.load(e, ptr["x"], _at(e, (r, p_), p)))))

        def bc(n: SSAValue) -> None:
            w.b.set(e, _at(e, (i, n_), n), real(item.load(e, ptr["b"], _at(e, (r, n_), n))))
            w.c.set(e, _at(e, (i, n_), n), real(item.load(e, ptr["c"], _at(e, (r, n_), n))))

        _loop(e, region, n_, bc)

    _loop(e, region, q, row)
    w.cum.set(e, 0, e.fmul(real(w.dt.get(e, 0)), a))
    _loop_from(
        e,
        region,
        1,
        q,
        lambda i: w.cum.set(e, i, e.fma(real(w.dt.get(e, i)), a, real(w.cum.get(e, e.sub(i, e.i64(1)))))),
    )


def _loop_from(e: Emitter, region: Region, lo: int, hi: int, body: Callable[[SSAValue], None]) -> None:
    """for i in range(lo, hi): body(i), emitted only if it runs."""
    if lo < hi:
        for_range(e, region, e.i64(lo), e.i64(hi), body)


def _direct_in_result(op: rc.Mamba2Op) -> bool:
    """Whether the direct form keeps the state in the state result (stored in the compute type)."""
    return op.carries_out and not codec(element_type(op.x.type)).narrow


def _workspace_bytes(op: rc.Mamba2Op, tuning: Tuning) -> dict[str, int]:
    """The stack workspace of each Mamba2 form, in bytes."""
    dims = Mamba2Dims.of(op)
    p_, n_, q_ = dims.p, dims.n, min(CHUNK, dims.seq)
    item_bytes = codec(codec(element_type(op.x.type)).compute).dtype.nbytes
    rows = _row_block(dims, item_bytes, tuning)
    elements = {
        "direct": (0 if _direct_in_result(op) else p_ * n_) + 2 * n_,
        "blocked": rows * n_ + 2 * rows,
        "chunked": 3 * q_ * p_ + 2 * q_ * n_ + q_ * q_ + 2 * q_ + p_ * n_,
    }
    return {form: count * item_bytes for form, count in elements.items()}


def mamba2_kernels(op: rc.Mamba2Op, ctx: KernelContext) -> list[Kernel]:
    """The chunked form from `mamba2_chunked_min_seq` steps on, the direct one up to
    `mamba2_direct_max_seq` steps (decode: no transpose of the state), the blocked one
    in between (the module docstring), and the blocked one whenever another's workspace
    would not fit. The chunked form is off by default: the blocked one runs a step's
    5·P·N FLOPs as L1-resident vector FMAs, above the sgemm rate, where SSD does
    4·P·N + 2·CHUNK·(P + N) in small GEMMs at most at that rate."""
    tuning = ctx.tuning
    dims = Mamba2Dims.of(op)
    if dims.units == 0:
        return []
    sizes = _workspace_bytes(op, tuning)
    if dims.seq >= tuning.mamba2_chunked_min_seq and sizes["chunked"] <= WORKSPACE_MAX_BYTES:
        return [single_threaded_blas(f"{ctx.name}_blas1"), _mamba2_chunked(op, ctx)]
    if dims.seq <= tuning.mamba2_direct_max_seq and sizes["direct"] <= WORKSPACE_MAX_BYTES:
        return [_mamba2_direct(op, ctx)]
    _check_workspace(op, sizes["blocked"])
    return [_mamba2_blocked(op, ctx)]


# ---------------------------------------------------------------------------
# selective scan
# ---------------------------------------------------------------------------


Exp2Product = Callable[[Emitter, SSAValue, SSAValue], SSAValue]
"""math_approx.exp2_product or its in-range form, which the selective scan's step picks."""


def selective_scan_kernels(op: rc.SelectiveScanOp, ctx: KernelContext) -> list[Kernel]:
    """Units of (batch, `scan_channel_block` channels: the lanes of the vector loop);
    `scan_group` states unrolled per pass of that loop (module docstring)."""
    kernel = _SelectiveScan(op, ctx.tuning)
    if kernel.batch * kernel.blocks == 0:
        return []
    _check_workspace(op, (2 * kernel.n * kernel.lanes + 4 * kernel.lanes) * kernel.wide.dtype.nbytes)
    work = kernel.batch * max(1, kernel.seq) * kernel.channels * kernel.n * 4  # an exp is a few elementwise ops' worth
    return [_kernel(op, ctx.name, kernel.batch * kernel.blocks, work, kernel.build)]


class _SelectiveScan:
    """What the selective scan kernel knows before it emits: shapes, codecs, the
    channel block of a unit and the states unrolled per pass."""

    def __init__(self, op: rc.SelectiveScanOp, tuning: Tuning) -> None:
        self.batch, self.seq, self.channels = shape_of(op.x.type)
        self.n = op.state_size.value.data
        self.channel_block, self.group_size = tuning.scan_channel_block, tuning.scan_group
        self.blocks = -(-self.channels // self.channel_block)
        self.item = codec(element_type(op.x.type))
        self.wide = codec(self.item.compute)
        self.lanes = min(self.channel_block, self.channels)

    def build(self, e: Emitter, region: Region, ptr: Pointers, begin: SSAValue, end: SSAValue) -> None:
        for_range(e, region, begin, end, _ScanBody(self, e, region, ptr).unit)


class _ScanBody:
    """One emission of the selective scan: the state and per-lane arrays every unit reuses."""

    def __init__(self, k: _SelectiveScan, e: Emitter, region: Region, ptr: Pointers) -> None:
        self.k, self.e, self.region, self.ptr = k, e, region, ptr
        n_, lanes = k.n, k.lanes
        self.state, self.decay_rate = _arrays(e, k.wide, n_ * lanes, n_ * lanes)  # [N, lanes]: h and A transposed
        self.delta, self.u, self.acc, self.widest = _arrays(e, k.wide, lanes, lanes, lanes, lanes)

    def unit(self, index: SSAValue) -> None:
        _ScanUnit(self, index).emit()


class _ScanUnit:
    """One work item: a block of channels of one batch row through every step."""

    def __init__(self, body: _ScanBody, index: SSAValue) -> None:
        self.body, self.k, self.e, self.region, self.ptr = body, body.k, body.e, body.region, body.ptr
        e, k = self.e, self.k
        self.b = e.udiv(index, e.i64(k.blocks))
        self.d0 = e.mul(e.urem(index, e.i64(k.blocks)), e.i64(k.channel_block))
        self.count = e.smin(e.i64(k.channel_block), e.sub(e.i64(k.channels), self.d0))
        self.state_base = _at(e, (self.b, k.channels * k.n), (self.d0, k.n))

    def per_state(self, body: Callable[[SSAValue, SSAValue], None]) -> None:
        e, region = self.e, self.region
        _loop(e, region, self.k.n, lambda n: _loop(e, region, self.count, lambda j: body(n, j)))

    def rate(self, n: SSAValue, j: SSAValue) -> None:
        e, k, body = self.e, self.k, self.body
        a = real(k.item.load(e, self.ptr["a"], _at(e, (self.d0, k.n), (j, k.n), n)))
        value = e.fmul(a, e.const_like(a, m.constants_for(a).log2e))  # e^(Δ·A) = 2^(Δ·A log2e)
        body.decay_rate.set(e, _at(e, (n, k.lanes), j), value)
        body.widest.set(e, j, e.maximum(real(body.widest.get(e, j)), e.fabs(value)))  # NaN-propagating

    def emit(self) -> None:
        e, k, body, region = self.e, self.k, self.body, self.region
        n_, lanes = k.n, k.lanes
        _loop(e, region, self.count, lambda j: body.widest.set(e, j, real(k.wide.constant(e, 0.0))))
        self.per_state(self.rate)
        source = self.ptr.get("state")
        self.per_state(
            lambda n, j: body.state.set(
                e,
                _at(e, (n, lanes), j),
                real(k.wide.constant(e, 0.0))
                if source is None
                else real(k.item.load(e, source, _at(e, self.state_base, (j, n_), n))),
            )
        )
        _loop(e, region, k.seq, lambda t: _ScanStep(self, t).emit())
        target = self.ptr.get("final")
        if target is not None:
            self.per_state(
                lambda n, j: k.item.store(
                    e, real(body.state.get(e, _at(e, (n, lanes), j))), target, _at(e, self.state_base, (j, n_), n)
                )
            )


class _ScanStep:
    """One step t of a unit: stage Δ and Δ·x per lane, update the states (the exact
    2^x product, or the fast one when every exponent of the step is in range), store y."""

    def __init__(self, unit: _ScanUnit, t: SSAValue) -> None:
        self.unit, self.body, self.k, self.e, self.region, self.ptr = (
            unit,
            unit.body,
            unit.k,
            unit.e,
            unit.region,
            unit.ptr,
        )
        e = self.e
        self.row = _at(e, (unit.b, self.k.seq), t)
        self.first = _at(e, (self.row, self.k.channels), unit.d0)

    def emit(self) -> None:
        e, region, k, body, count = self.e, self.region, self.k, self.body, self.unit.count
        in_range = _sum_loop(e, region, count, e.const(i1, 1), self.stage)
        if_else(e, region, in_range, self.update(m.exp2_product_in_range), self.update(m.exp2_product))
        _loop(
            e, region, count, lambda j: k.item.store(e, real(body.acc.get(e, j)), self.ptr["y"], _at(e, self.first, j))
        )

    def stage(self, j: SSAValue, in_range: SSAValue) -> SSAValue:
        e, k, body = self.e, self.k, self.body
        dl = real(k.item.load(e, self.ptr["delta"], _at(e, self.first, j)))
        body.delta.set(e, j, dl)
        body.u.set(e, j, e.fmul(dl, real(k.item.load(e, self.ptr["x"], _at(e, self.first, j)))))
        body.acc.set(e, j, real(k.wide.constant(e, 0.0)))
        largest = e.fmul(e.fabs(dl), real(body.widest.get(e, j)))  # the largest |Δ·A·log2e| of the channel
        bound = e.const_like(largest, m.exp2_product_in_range_bound(largest))
        return e.and_(in_range, e.fcmp("ole", largest, bound))  # false for NaN and inf

    def update(self, exp2: Exp2Product) -> Callable[[], None]:
        return lambda: _groups(
            self.e, self.region, self.k.n, self.k.group_size, lambda n0, size: self.group(n0, size, exp2)
        )

    def group(self, n0: SSAValue, size: int, exp2: Exp2Product) -> None:
        e, k = self.e, self.k
        bs = [real(k.item.load(e, self.ptr["b"], _at(e, (self.row, k.n), n0, i))) for i in range(size)]
        cs = [real(k.item.load(e, self.ptr["c"], _at(e, (self.row, k.n), n0, i))) for i in range(size)]
        at_n = _at(e, (n0, k.lanes))
        _loop(e, self.region, self.unit.count, lambda j: self.lane(j, size, exp2, bs, cs, at_n))

    def lane(
        self, j: SSAValue, size: int, exp2: Exp2Product, bs: list[SSAValue], cs: list[SSAValue], at_n: SSAValue
    ) -> None:
        e, body, lanes = self.e, self.body, self.k.lanes
        dl, uj, total = real(body.delta.get(e, j)), real(body.u.get(e, j)), real(body.acc.get(e, j))
        for i in range(size):
            at_h = _at(e, at_n, i * lanes, j)
            decay = exp2(e, dl, real(body.decay_rate.get(e, at_h)))
            h = e.fma(decay, real(body.state.get(e, at_h)), e.fmul(uj, bs[i]))
            body.state.set(e, at_h, h)
            total = e.fma(h, cs[i], total)
        body.acc.set(e, j, total)


KERNELS: dict[type[Operation], EmitKernels] = {
    rc.Mamba2Op: mamba2_kernels,
    rc.SelectiveScanOp: selective_scan_kernels,
}
"""Emitters of the state-space scans."""
