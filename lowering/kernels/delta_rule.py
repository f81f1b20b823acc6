"""Kernels of `rlx.gated_delta_net`: the gated delta rule, per (batch, head).

Per step, with state S [N, N] (row i the key dimension, column j the value
dimension): S *= exp(g) (row i by exp(g_i) with `gate_per_channel`);
u = β·(v − Sᵀk); S += k ⊗ u; out = Sᵀq / √N. f16 and bf16 are computed in
f32: the state stays in f32 for the whole call and is rounded once into the
state result, the output once per element.

All forms run one (batch, head) per outer step (extent B·H, split across the
entry's threads), its state in cache on the kernel's stack for the whole
sequence, and round it into the state result once at the end.

- **Sequential** (`_sequential_kernel`: decode steps, per-channel gates,
  f16/bf16): per step, two fused passes over S in explicit vectors along j:
  (1) decay row i and sk[j] += S[i, j]·k[i]; then u = β(v − sk); (2)
  S[i, :] += k[i]·u and o[j] += S[i, j]·q[i]. Pass 2 of a step and pass 1 of
  the next run in the same sweep, and since column j of S only meets column j
  of v, u and out, the state is processed in column strips that each run the
  whole sequence in L1. A step costs 3 vector FMAs and a multiply per state
  cell (update, out, decay, next Sᵀk), and one load and store.
- **Paired** (`_paired_kernel`: prefill with one gate per head in f32/f64,
  `uses_paired_form`): the same strips, two steps per sweep, the strip held
  divided by its running decay, so a pair costs 6 FMAs per cell and no
  multiply, and one load and store (equations in `_paired_kernel`; pairs whose
  decays leave `HELD_RANGE`, e.g. g = -inf or g = -30, are swept with the
  decays multiplied in, so nothing is ever divided by an underflowed decay).
  Measured (B1 S2048 H8 N128 f32, both forms in one process, load average
  0.7): 7.4 vs 9.7 ms on one thread, 3.97 vs 5.05 ms (median) on two; also
  faster at N = 32, 64 and 256 (1.26-1.6x on one thread). Per-head figures
  below are one thread's CPU time under load 2-4 from other jobs, compared
  within one process. Why this and not less: a one-step sweep runs ~4.4
  cycles per row of two
  16-lane pieces, bound at once by the FMA ports (8 vector ops) and by the
  accumulator latency (4 cycles per row); dropping the decay multiply alone
  (holding the strip divided by its decay) hit the latency bound (1.02 vs
  1.07 ms per head), and more accumulator chains, either as wider strips (32
  KiB: 1.18-1.35) or two chains per piece (1.17-1.20), ran slower still: the
  sweep then stalls on the strip's round trip through memory from one step to
  the next, which costs nothing when the stores go to a buffer never read
  back (0.80). Two steps per sweep halve that round trip and give 8
  accumulator chains. 32 KiB strips (1.28 ms per head) and 8 KiB strips
  (1.47) measured slower than 16 KiB (0.92) in the paired form too.
  Computing a pair's dot products (k_t·k_{t+1}, k_t·q_t) in the pair, on the
  path from one sweep to the next, cost 25%: they are computed once per head
  before its strips.
- **Chunked** (`_chunked_kernel`, sequences of at least `Tuning.gdn_chunked_min_seq`
  steps; off by default, see `uses_chunked_form`): the WY / UT-transform form of
  fla-org/flash-linear-attention's `chunk_gated_delta_rule`, CHUNK steps at a
  time, most of the work single-threaded GEMMs on stack buffers. Within a
  chunk, γ_r is the cumulative gate up to row r, and every decay is one exp
  of a segment sum clamped to ≤ 0, exp(min(γ_r − γ_s, 0)), never a product
  exp(γ_r)·exp(−γ_s) (which is 0·inf for long chunks or strong gates). The
  chunk equations (S₀ its initial state, D_rs = exp(γ_r − γ_s), per key
  channel i with `gate_per_channel`):

      A[r, s] = β_r Σ_i k_ri k_si D_rs,i   (s < r)     P[r, s] = Σ_i q_ri k_si D_rs,i   (s ≤ r)
      (I + A) [Ũ | −W] = [β V | −β e^γ K]                  (forward substitution)
      U = Ũ − W S₀          O = (Q ⊙ e^γ) S₀ + P U        S' = e^γ_last S₀ + (K ⊙ e^(γ_last − γ))ᵀ U

  A short last chunk is padded with zero rows (β = 0, g = 0), which change
  nothing, so every GEMM has the same sizes. The two forms agree within 1e-4
  relative in f32 (tests/test_delta_rule.py). The chunked form assumes decay
  gates (g ≤ 0), as the clamps do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from xdsl.ir import Attribute, Operation, Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.lowering.core import vectors
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import gemm_call, gemm_external, single_threaded_blas
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_else
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

CHUNK: Final = 64
"""Steps per chunk of the chunked form (fla's default)."""

STACK_LIMIT: Final = 1 << 20
"""Both forms keep their buffers on the kernel's stack, up to this many bytes. Past
it, the chunked form (N above ~300 in f32) gives way to the sequential form, whose
strip of N rows × one vector passes it only beyond N = 16384 in f32 (32768 with AVX2's
32-byte vectors; an error then)."""


@dataclass(frozen=True)
class _Shape:
    """The op's sizes and element codecs."""

    batch: int
    seq: int
    heads: int
    n: int
    per_channel: bool
    item: Codec
    """The stored element type."""
    work: Codec
    """The compute type (f32 for f16/bf16), in which the working state and buffers are held."""
    tuning: Tuning
    """The compile's kernel choices (the `gdn_*` knobs and the vector width)."""

    @classmethod
    def of(cls, op: rc.GatedDeltaNetOp, tuning: Tuning) -> _Shape:
        batch, seq, heads, n = op.output_shape()
        item = codec(op.element.ir_type)
        return cls(batch, seq, heads, n, op.per_channel, item, codec(item.compute), tuning)

    @property
    def gates(self) -> int:
        """Gate values per step and head: N per channel, else 1."""
        return self.n if self.per_channel else 1

    @property
    def cells(self) -> int:
        return self.n * self.n

    @property
    def widest(self) -> int:
        """Lanes of the widest vector (`Tuning.vector_bytes`) in the compute type; narrower tails halve it."""
        return self.tuning.vector_bytes // self.work.dtype.nbytes

    def row(self, e: Emitter, bh: SSAValue, t: SSAValue, width: int) -> SSAValue:
        """Element offset of step t of (batch, head) bh in a [B, S, H, width] tensor."""
        b, h = e.udiv(bh, e.i64(self.heads)), e.urem(bh, e.i64(self.heads))
        return e.mul(e.add(e.mul(e.add(e.mul(b, e.i64(self.seq)), t), e.i64(self.heads)), h), e.i64(width))


@dataclass
class _Pointers:
    """The kernel's buffer pointers by role (`initial`/`final` None when absent)."""

    q: SSAValue
    k: SSAValue
    v: SSAValue
    g: SSAValue
    beta: SSAValue
    initial: SSAValue | None
    out: SSAValue
    final: SSAValue | None


def _buffers(op: rc.GatedDeltaNetOp) -> list[SSAValue | str | Scratch]:
    """q, k, v, g, beta, [initial state], out, [final state]."""
    return [*op.inputs, *op.initial_state, op.output, *op.final_state]


def _pointers(op: rc.GatedDeltaNetOp, pointers: list[SSAValue]) -> _Pointers:
    q, k, v, g, beta, *rest = pointers
    initial = rest.pop(0) if op.carries_in else None
    out = rest.pop(0)
    final = rest.pop(0) if op.carries_out else None
    return _Pointers(q, k, v, g, beta, initial, out, final)


def _loop(e: Emitter, region: Region, count: int | SSAValue, body: Callable[[SSAValue], None]) -> None:
    """for x in range(count): body(x)."""
    for_range(e, region, e.i64(0), e.i64(count) if isinstance(count, int) else count, body)


def _exp_le0(e: Emitter, x: SSAValue) -> SSAValue:
    """exp(min(x, 0)): a decay, clamped so that a segment sum rounded above 0 cannot grow."""
    zero = e.const_like(x, 0.0)
    return m.exp(e, e.select(e.fcmp("ogt", x, zero), zero, x))


def _load_state(e: Emitter, region: Region, s: _Shape, p: _Pointers, base: SSAValue, into: SSAValue) -> None:
    """The state of the head at `base` into `into` (N·N compute elements): the initial state, or zeros."""

    def cell(x: SSAValue) -> None:
        value = (
            real(s.item.load(e, p.initial, e.add(base, x))) if p.initial is not None else e.const(s.work.compute, 0.0)
        )
        s.work.store(e, value, into, x)

    _loop(e, region, s.cells, cell)


def _store_state(e: Emitter, region: Region, s: _Shape, p: _Pointers, base: SSAValue, source: SSAValue) -> None:
    """Round `source` (N·N compute elements) into the state result of the head at `base`, if there is one."""
    final = p.final
    if final is not None:
        _loop(e, region, s.cells, lambda x: s.item.store(e, real(s.work.load(e, source, x)), final, e.add(base, x)))


def _pass_state(e: Emitter, region: Region, s: _Shape, p: _Pointers, base: SSAValue) -> None:
    """No step: the state result is the initial state (or zeros)."""
    final, initial = p.final, p.initial
    if final is None:
        return

    def cell(x: SSAValue) -> None:
        value = real(s.item.load(e, initial, e.add(base, x))) if initial is not None else e.const(s.work.compute, 0.0)
        s.item.store(e, value, final, e.add(base, x))

    _loop(e, region, s.cells, cell)


# ---------------------------------------------------------------------------
# sequential form
# ---------------------------------------------------------------------------


Strip = Callable[[SSAValue, list[tuple[int, int]]], None]
"""A sweep over the column strip from j0 of one head: strip(j0, pieces) (vector offsets and widths)."""


def _for_strips(e: Emitter, region: Region, s: _Shape, cols: int, strip: Strip) -> None:
    """`strip` over the state's columns in strips of `cols` (the last one narrower)."""
    widest = s.widest
    full, tail = s.n // cols, s.n % cols
    if full:
        wide = vectors.pieces(cols, widest)
        for_range(e, region, e.i64(0), e.i64(full * cols), lambda j0: strip(j0, wide), cols)
    if tail:
        strip(e.i64(full * cols), vectors.pieces(tail, widest))


def _head_kernel(op: rc.GatedDeltaNetOp, s: _Shape, name: str, build: Callable[..., None]) -> Kernel:
    """A kernel of one (batch, head) per outer step over the op's buffers, split
    across threads (the thread pool's) from `gdn_parallel_cells` state cells
    (B·H·S·N²): even a decode step of B1 H8 N128 gains from two threads."""
    buffers = _buffers(op)
    work = s.batch * s.heads * max(1, s.seq) * s.cells
    function = kernel_function(name, len(buffers), build)
    return Kernel(function, buffers, s.batch * s.heads, work, parallel=work >= s.tuning.gdn_parallel_cells)


def _strip_columns(s: _Shape) -> int:
    """Columns of a strip of the state: as many as `gdn_strip_bytes` holds (N rows, in L1
    for the whole sequence), at least one vector."""
    widest = s.widest
    return min(s.n, max(widest, s.tuning.gdn_strip_bytes // (s.n * s.work.dtype.nbytes) // widest * widest))


def _sequential_kernel(op: rc.GatedDeltaNetOp, s: _Shape, name: str) -> Kernel:
    """One (batch, head) per outer step, in column strips. Column j of S only ever
    meets column j of v, u and the output (sk[j] = Σ_i S[i, j] k_i), so a strip of
    columns runs the whole sequence on its own, in a contiguous stack buffer
    (`_strip_columns`) that stays in L1. The first pass (step 0's decay and Sᵀk)
    reads the strip of the initial state into the buffer; then one sweep per
    step does, row by row, pass 2 of step t (S += k_i·u, o += S·q_i) and pass 1
    of step t+1 (decay, Sᵀk' += S·k'_i), the strip's accumulators in registers.
    The last step's sweep has no next step and stores the strip straight into
    the state result (f16/bf16: into the buffer, then rounded once).

    Sequences shorter than `gdn_short_seq` (decode steps) gain nothing from L1 and
    use strips as wide as the registers allow (`gdn_strip_vectors` vectors, three
    accumulators each), so the state moves in and out along whole rows."""
    n, wc = s.n, s.work
    scalar = wc.compute
    widest = s.widest
    cols = _strip_columns(s)
    if s.seq < s.tuning.gdn_short_seq:
        cols = min(
            n, s.tuning.gdn_strip_vectors * widest, max(widest, STACK_LIMIT // (n * wc.dtype.nbytes) // widest * widest)
        )
    # A single step (decode) reads the initial state twice where it is, for Sᵀk and for the
    # update, instead of copying it decayed into the strip buffer and reading that back:
    # B1 H8 N128 12 us, 16 us through the buffer (f16/bf16 still decode into the buffer).
    # Also tried: head h+1's Sᵀk in the sweep that updates head h (11.9 -> 11.3 us, not
    # worth its code).
    in_place = s.seq == 1 and op.carries_in and not s.item.narrow
    if n * cols * wc.dtype.nbytes > STACK_LIMIT:
        raise ValueError(
            f"'{op.name}' state_size {n} needs a {n * cols * wc.dtype.nbytes}-byte strip of its state, "
            f"more than the {STACK_LIMIT} bytes its kernel keeps on the stack"
        )

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        p = _pointers(op, pointers)
        strip_buf = StackArray.allocate(e, wc, n * cols)
        decay = StackArray.allocate(e, wc, s.gates)
        columns = StackArray.allocate(e, wc, cols)  # one row of the strip: v, then o, of a step
        zero = e.const(scalar, 0.0)
        scale = e.const(scalar, 1.0 / math.sqrt(n))

        def gate_of(i: SSAValue) -> SSAValue:
            """The decay of key row i: its own per channel, else the head's."""
            return real(decay.get(e, i if s.per_channel else 0))

        def load_decay(bh: SSAValue, t: SSAValue) -> None:
            """exp(g) of step t into `decay`."""
            gates = s.row(e, bh, t, s.gates)
            _loop(e, region, s.gates, lambda i: decay.set(e, i, m.exp(e, real(s.item.load(e, p.g, e.add(gates, i))))))

        def strip(bh: SSAValue, j0: SSAValue, pieces: list[tuple[int, int]]) -> None:
            width = sum(w for _, w in pieces)
            base = e.add(e.mul(bh, e.i64(s.cells)), j0)  # S[0, j0] of this head

            def convert_rows(decode: bool) -> None:
                """f16/bf16: the strip between a state tensor and the buffer, element by element,
                decoded (initial state) or rounded once (state result)."""
                tensor = p.initial if decode else p.final
                assert tensor is not None

                def row(i: SSAValue) -> None:
                    stored, held = e.add(base, e.mul(i, e.i64(n))), e.mul(i, e.i64(cols))

                    def cell(c: SSAValue) -> None:
                        if decode:
                            strip_buf.set(e, e.add(held, c), real(s.item.load(e, tensor, e.add(stored, c))))
                        else:
                            s.item.store(e, real(strip_buf.get(e, e.add(held, c))), tensor, e.add(stored, c))

                    _loop(e, region, width, cell)

                _loop(e, region, n, row)

            def first_pass() -> list[SSAValue]:
                """The strip of the initial state (or zeros) decayed by step 0, and its Sᵀk_0.
                In place (`in_place`), the strip stays where it is and only Sᵀk_0 is computed,
                with the decay folded into k: Σ_i S[i, :]·(exp(g_i)·k_i)."""
                zeros = [vectors.splat(e, zero, w) for _, w in pieces]
                if p.initial is None:
                    _loop(e, region, n * cols, lambda x: strip_buf.set(e, x, zero))
                    return zeros
                load_decay(bh, e.i64(0))
                k0 = s.row(e, bh, e.i64(0), n)
                source, stride, start = p.initial, n, base
                if s.item.narrow:  # decoded into the buffer first
                    convert_rows(decode=True)
                    source, stride, start = strip_buf.ptr, cols, e.i64(0)

                def row(i: SSAValue, sks: list[SSAValue]) -> list[SSAValue]:
                    a, ki = gate_of(i), real(s.item.load(e, p.k, e.add(k0, i)))
                    at_row, from_row = e.mul(i, e.i64(cols)), e.add(start, e.mul(i, e.i64(stride)))
                    out = []
                    for (off, w), sk in zip(pieces, sks):
                        cell = vectors.load(e, scalar, source, e.add(from_row, e.i64(off)), w)
                        if in_place:
                            out.append(e.fma(cell, vectors.splat(e, e.fmul(a, ki), w), sk))
                            continue
                        cell = e.fmul(cell, vectors.splat(e, a, w))
                        vectors.store(e, cell, strip_buf.ptr, e.add(at_row, e.i64(off)))
                        out.append(e.fma(cell, vectors.splat(e, ki, w), sk))
                    return out

                return vectors.carry(e, region, n, zeros, row)

            def step(t: SSAValue, sks: list[SSAValue], last: bool = False) -> list[SSAValue]:
                """Pass 2 of step t and (but for the last step) pass 1 of step t+1 over the
                strip; Sᵀk of step t+1. The last step stores the strip to the state result
                when that holds the compute type, and nowhere when there is none."""
                row_t, row_next = s.row(e, bh, t, n), s.row(e, bh, e.add(t, e.i64(1)), n)
                beta = real(s.item.load(e, p.beta, s.row(e, bh, t, 1)))
                if not last:
                    load_decay(bh, e.add(t, e.i64(1)))
                _loop(
                    e, region, width, lambda c: columns.set(e, c, real(s.item.load(e, p.v, e.add(e.add(row_t, j0), c))))
                )
                us = [
                    e.fmul(vectors.splat(e, beta, w), e.fsub(vectors.load(e, scalar, columns.ptr, e.i64(off), w), sk))
                    for (off, w), sk in zip(pieces, sks)
                ]
                target, stride, start = strip_buf.ptr, cols, e.i64(0)
                if last and p.final is not None and not s.item.narrow:
                    target, stride, start = p.final, n, base
                source, from_stride = (p.initial, n) if in_place and p.initial is not None else (strip_buf.ptr, cols)

                def row(i: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
                    ki = real(s.item.load(e, p.k, e.add(row_t, i)))
                    qi = real(s.item.load(e, p.q, e.add(row_t, i)))
                    if not last:
                        a, kn = gate_of(i), real(s.item.load(e, p.k, e.add(row_next, i)))
                    at_row, to_row = e.mul(i, e.i64(from_stride)), e.add(start, e.mul(i, e.i64(stride)))
                    if in_place:
                        at_row, decay_i = e.add(base, at_row), gate_of(i)
                    out, project = [], []
                    for k, ((off, w), u) in enumerate(zip(pieces, us)):
                        cell = vectors.load(e, scalar, source, e.add(at_row, e.i64(off)), w)
                        if in_place:  # step 0's decay, which the first pass folded into k
                            cell = e.fmul(cell, vectors.splat(e, decay_i, w))
                        cell = e.fma(vectors.splat(e, ki, w), u, cell)
                        out.append(e.fma(cell, vectors.splat(e, qi, w), accs[k]))
                        if not last:
                            cell = e.fmul(cell, vectors.splat(e, a, w))
                            project.append(e.fma(cell, vectors.splat(e, kn, w), accs[len(pieces) + k]))
                        if not last or p.final is not None:
                            vectors.store(e, cell, target, e.add(to_row, e.i64(off)))
                    return out + project

                zeros = [vectors.splat(e, zero, w) for _, w in pieces]
                accs = vectors.carry(e, region, n, zeros * (1 if last else 2), row)
                for (off, w), o in zip(pieces, accs[: len(pieces)]):
                    vectors.store(e, e.fmul(o, vectors.splat(e, scale, w)), columns.ptr, e.i64(off))
                _loop(
                    e,
                    region,
                    width,
                    lambda c: s.item.store(e, real(columns.get(e, c)), p.out, e.add(e.add(row_t, j0), c)),
                )
                return accs[len(pieces) :]

            sks = vectors.carry(e, region, s.seq - 1, first_pass(), step)
            step(e.i64(s.seq - 1), sks, last=True)
            if p.final is not None and s.item.narrow:
                convert_rows(decode=False)

        def head(bh: SSAValue) -> None:
            if s.seq == 0:  # no step to read: the state passes through
                _pass_state(e, region, s, p, e.mul(bh, e.i64(s.cells)))
                return
            _for_strips(e, region, s, cols, lambda j0, pieces: strip(bh, j0, pieces))

        for_range(e, region, begin, end, head)

    return _head_kernel(op, s, name, build)


# ---------------------------------------------------------------------------
# sequential form in pairs of steps
# ---------------------------------------------------------------------------


HELD_RANGE: Final = 2.0**20
"""The paired form holds its strip divided by D, the product of the head's decays since it
last multiplied them in, while 1/HELD_RANGE <= D <= HELD_RANGE (see `_paired_kernel`)."""


def uses_paired_form(op: rc.GatedDeltaNetOp, tuning: Tuning) -> bool:
    """Prefill with one gate per head in f32/f64: the paired form; decode steps (`gdn_short_seq`),
    per-channel gates and f16/bf16 keep the one-step sweep."""
    s = _Shape.of(op, tuning)
    return (
        s.seq >= tuning.gdn_short_seq
        and not s.per_channel
        and not s.item.narrow
        and _paired_stack_bytes(s) <= STACK_LIMIT
    )


def _paired_stack_bytes(s: _Shape) -> int:
    """The paired form's strip and its two dot products per pair of steps."""
    return (s.n * _strip_columns(s) + 2 * ((s.seq + 1) // 2)) * s.work.dtype.nbytes


def _horizontal_sum(e: Emitter, scalar: Attribute, v: SSAValue, width: int, slot: StackArray) -> SSAValue:
    """The sum of the lanes of `v` (a tree of shuffles and adds; lane 0 read back through `slot`)."""
    lanes, half = width, width // 2
    while half:
        v = e.fadd(v, vectors.shuffle(e, v, v, [half + j if j < half else j for j in range(lanes)]))
        half //= 2
    vectors.store(e, v, slot.ptr, e.i64(0))
    return real(slot.get(e, 0))


def _paired_kernel(op: rc.GatedDeltaNetOp, s: _Shape, name: str) -> Kernel:
    """The sequential form two steps per sweep, in the same column strips as `_sequential_kernel`.

    The strip T holds the state divided by a scalar D (S = D·T), so a step's decay only changes
    D and the update is T += (k / D)·u: per state cell and pair of steps the sweep does 6 FMAs
    (Sᵀq of both steps, both updates, Sᵀk of the next two steps) and one load and one store.
    With S₋ the state before step t and decays a_t, a_{t+1} (D₀ = D·a_t, D₁ = D₀·a_{t+1}):

        u₁ = β_t (v_t − (a_t S₋)ᵀk_t)                         (the previous sweep's projection)
        u₂ = β_{t+1} (v_{t+1} − (a_{t+1} a_t S₋)ᵀk_{t+1} − u₁ · a_{t+1} (k_t·k_{t+1}))
        o_t = D₀ Tᵀq_t + u₁ (k_t·q_t)       T += k_t (u₁ / D₀) + k_{t+1} (u₂ / D₁)       o_{t+1} = D₁ Tᵀq_{t+1}

    and the next pair's projections D₁a_{t+2} Tᵀk_{t+2}, D₁a_{t+2}a_{t+3} Tᵀk_{t+3}. D is never
    divided into anything unless D₀ and D₁ lie in the held range; a pair where either leaves it
    (a strong or zero decay, or D run down over many steps, or NaN) is swept *directly*: T *= D₀
    before the first update and T *= a_{t+1} between the two, as the one-step sweep does, and D
    restarts at 1. So a decay is only ever multiplied in, never divided out of a value it has
    underflowed. The last pair is swept directly too, so the strip is the state it stores. An odd
    last step is paired with a padding step (β = 0, g = 0: u = 0, no output)."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        for_range(e, region, begin, end, _PairedBody(op, s, e, region, pointers).head)

    return _head_kernel(op, s, name, build)


class _PairedBody:
    """One emission of the paired form (`_paired_kernel`): the buffers and constants
    every strip of every head shares."""

    def __init__(self, op: rc.GatedDeltaNetOp, s: _Shape, e: Emitter, region: Region, pointers: list[SSAValue]) -> None:
        self.s, self.e, self.region = s, e, region
        self.n, wc = s.n, s.work
        self.scalar = wc.compute
        self.widest = s.widest
        self.cols = _strip_columns(s)
        self.pairs = (s.seq + 1) // 2
        scalar, n, cols = self.scalar, self.n, self.cols
        self.p = _pointers(op, pointers)
        self.strip_buf = StackArray.allocate(e, wc, n * cols)
        self.dots = StackArray.allocate(e, wc, 2 * self.pairs)  # per pair: k_t·k_{t+1}, k_t·q_t
        self.held = StackArray.allocate(e, wc, 1)  # D
        self.outs = StackArray.allocate(e, wc, 4 * cols)  # a sweep's o of both steps and next projections
        self.slot = StackArray.allocate(e, wc, self.widest)  # a horizontal sum's lane 0
        self.zero, self.one = e.const(scalar, 0.0), e.const(scalar, 1.0)
        self.scale = e.const(scalar, 1.0 / math.sqrt(n))
        self.low, self.high = e.const(scalar, 1.0 / HELD_RANGE), e.const(scalar, HELD_RANGE)
        self.last_step = e.i64(s.seq - 1)

    def step_of(self, bh: SSAValue, t: SSAValue, decay: bool = True) -> tuple[SSAValue, SSAValue, SSAValue | None]:
        """(row of step t in q/k/v, β_t, exp(g_t) if `decay`); a padding step t >= S reads
        the last row with β = 0 and exp(g) = 1."""
        e, s, p = self.e, self.s, self.p
        inside = e.icmp("sle", t, self.last_step)
        at = e.smin(t, self.last_step)
        beta = e.select(inside, real(s.item.load(e, p.beta, s.row(e, bh, at, 1))), self.zero)
        a = e.select(inside, m.exp(e, real(s.item.load(e, p.g, s.row(e, bh, at, 1)))), self.one) if decay else None
        return s.row(e, bh, at, self.n), beta, a

    def dot(self, a_row: SSAValue, a: SSAValue, b_row: SSAValue, b: SSAValue) -> SSAValue:
        """Σ_i a[a_row + i]·b[b_row + i] over the N key channels: products summed per width
        of vector, then one horizontal sum per width."""
        e, scalar = self.e, self.scalar
        sums: dict[int, SSAValue] = {}
        for off, w in vectors.pieces(self.n, self.widest):
            x = vectors.load(e, scalar, a, e.add(a_row, e.i64(off)), w)
            y = vectors.load(e, scalar, b, e.add(b_row, e.i64(off)), w)
            sums[w] = e.fma(x, y, sums[w]) if w in sums else e.fmul(x, y)
        total = self.zero
        for w, v in sums.items():
            total = e.fadd(total, _horizontal_sum(e, scalar, v, w, self.slot))
        return total

    def pair_dots(self, bh: SSAValue, index: SSAValue) -> None:
        """k_t·k_{t+1} and k_t·q_t of pair `index` into `dots` (a padding step reads the last row)."""
        e, s, p, n = self.e, self.s, self.p, self.n
        t = e.mul(index, e.i64(2))
        row0, row1 = s.row(e, bh, t, n), s.row(e, bh, e.smin(e.add(t, e.i64(1)), self.last_step), n)
        self.dots.set(e, e.mul(index, e.i64(2)), self.dot(row0, p.k, row1, p.k))
        self.dots.set(e, e.add(e.mul(index, e.i64(2)), e.i64(1)), self.dot(row0, p.k, row0, p.q))

    def head(self, bh: SSAValue) -> None:
        e, region = self.e, self.region
        _loop(e, region, self.pairs, lambda index: self.pair_dots(bh, index))  # shared by the head's strips
        _for_strips(e, region, self.s, self.cols, lambda j0, pieces: _PairedStrip(self, bh, j0, pieces).emit())


class _PairedStrip:
    """The sweeps over one column strip of one head, pair of steps by pair of steps."""

    def __init__(self, body: _PairedBody, bh: SSAValue, j0: SSAValue, pieces: list[tuple[int, int]]) -> None:
        self.b, self.e, self.region, self.s, self.p = body, body.e, body.region, body.s, body.p
        self.bh, self.j0, self.pieces = bh, j0, pieces
        self.base = self.e.add(self.e.mul(bh, self.e.i64(self.s.cells)), j0)  # S[0, j0] of this head

    def splat(self, x: SSAValue, w: int) -> SSAValue:
        return vectors.splat(self.e, x, w)

    def emit(self) -> None:
        projections = vectors.carry(self.e, self.region, self.b.pairs - 1, self.first_pass(), self.pair)
        self.pair(self.e.i64(self.b.pairs - 1), projections, last=True)

    def project(
        self, keys: tuple[SSAValue, SSAValue], factors: tuple[SSAValue, SSAValue], copy: bool
    ) -> list[SSAValue]:
        """The initial state's strip into the buffer (if `copy`) and its projections
        Σ_i S[i, :]·k_i of steps 0 and 1, scaled by their decays."""
        e, s, p, b, pieces = self.e, self.s, self.p, self.b, self.pieces
        source, stride = (p.initial, b.n) if p.initial is not None else (b.strip_buf.ptr, b.cols)
        start = self.base if p.initial is not None else e.i64(0)

        def row(i: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            k1, k2 = (real(s.item.load(e, p.k, e.add(r, i))) for r in keys)
            from_row, at_row = e.add(start, e.mul(i, e.i64(stride))), e.mul(i, e.i64(b.cols))
            out1, out2 = [], []
            for k, (off, w) in enumerate(pieces):
                cell = vectors.load(e, b.scalar, source, e.add(from_row, e.i64(off)), w)
                if copy:
                    vectors.store(e, cell, b.strip_buf.ptr, e.add(at_row, e.i64(off)))
                out1.append(e.fma(cell, self.splat(k1, w), accs[k]))
                out2.append(e.fma(cell, self.splat(k2, w), accs[len(pieces) + k]))
            return out1 + out2

        zeros = [self.splat(b.zero, w) for _, w in pieces]
        accs = vectors.carry(e, self.region, b.n, zeros * 2, row)
        return [
            e.fmul(a, self.splat(f, w))
            for f, part in zip(factors, (accs[: len(pieces)], accs[len(pieces) :]))
            for a, (_, w) in zip(part, pieces)
        ]

    def first_pass(self) -> list[SSAValue]:
        """The initial state (or zeros) into the buffer, D = 1, and the projections of steps 0, 1."""
        e, b = self.e, self.b
        b.held.set(e, 0, b.one)
        (row0, _, a0), (row1, _, a1) = b.step_of(self.bh, e.i64(0)), b.step_of(self.bh, e.i64(1))
        assert a0 is not None and a1 is not None  # decay=True
        if self.p.initial is None:
            _loop(e, self.region, b.n * b.cols, lambda x: b.strip_buf.set(e, x, b.zero))
            return [self.splat(b.zero, w) for _ in range(2) for _, w in self.pieces] + [a0, a1]
        return [*self.project((row0, row1), (a0, e.fmul(a0, a1)), copy=True), a0, a1]

    def store_output(self, row: SSAValue, outs: list[SSAValue], factor: SSAValue) -> None:
        """factor·outs·scale into the output row at `row`."""
        e = self.e
        for (off, w), o in zip(self.pieces, outs):
            at = e.add(e.add(row, self.j0), e.i64(off))
            vectors.store(e, e.fmul(o, self.splat(e.fmul(factor, self.b.scale), w)), self.p.out, at)

    def v_of(self, row: SSAValue, off: int, w: int) -> SSAValue:
        e = self.e
        return vectors.load(e, self.b.scalar, self.p.v, e.add(e.add(row, self.j0), e.i64(off)), w)

    def pair(self, index: SSAValue, projections: list[SSAValue], last: bool = False) -> list[SSAValue]:
        """Steps t = 2·index and t+1 (module docstring and `_paired_kernel`); the next pair's
        projections."""
        e, b, pieces, splat = self.e, self.b, self.pieces, self.splat
        t = e.mul(index, e.i64(2))
        t1 = e.add(t, e.i64(1))
        (row0, beta0, _), (row1, beta1, _) = b.step_of(self.bh, t, decay=False), b.step_of(self.bh, t1, decay=False)
        a0, a1 = projections[-2:]
        d0 = e.fmul(real(b.held.get(e, 0)), a0)
        d1 = e.fmul(d0, a1)
        inside = e.and_(
            e.and_(e.fcmp("oge", d0, b.low), e.fcmp("ole", d0, b.high)),
            e.and_(e.fcmp("oge", d1, b.low), e.fcmp("ole", d1, b.high)),
        )
        p1, p2 = projections[: len(pieces)], projections[len(pieces) : 2 * len(pieces)]
        u1 = [e.fmul(splat(beta0, w), e.fsub(self.v_of(row0, off, w), sk)) for (off, w), sk in zip(pieces, p1)]
        kk = e.fmul(a1, real(b.dots.get(e, e.mul(index, e.i64(2)))))
        kq = real(b.dots.get(e, e.add(e.mul(index, e.i64(2)), e.i64(1))))
        u2 = [
            e.fmul(splat(beta1, w), e.fsub(e.fsub(self.v_of(row1, off, w), sk), e.fmul(u, splat(kk, w))))
            for (off, w), sk, u in zip(pieces, p2, u1)
        ]
        rows: tuple[SSAValue, ...] = (row0, row1)
        if not last:
            (row2, _, a2), (row3, _, a3) = (
                b.step_of(self.bh, e.add(t, e.i64(2))),
                b.step_of(self.bh, e.add(t, e.i64(3))),
            )
            rows = (row0, row1, row2, row3)
        sweep = _PairSweep(self, rows, d0, d1, a1, u1, u2, last)
        if last:
            sweep.emit(direct=True)
        else:
            if_else(e, self.region, inside, lambda: sweep.emit(direct=False), lambda: sweep.emit(direct=True))
        factor0 = e.select(inside, d0, b.one) if not last else b.one
        factor1 = e.select(inside, d1, b.one) if not last else b.one
        acc_at = [
            [vectors.load(e, b.scalar, b.outs.ptr, e.i64(x * b.cols + off), w) for off, w in pieces]
            for x in range(2 if last else 4)
        ]
        o1 = [
            e.fadd(e.fmul(o, splat(factor0, w)), e.fmul(u, splat(kq, w))) for o, u, (_, w) in zip(acc_at[0], u1, pieces)
        ]
        self.store_output(row0, o1, b.one)
        if not (last and self.s.seq % 2):  # an odd sequence's last pair ends on a padding step
            self.store_output(row1, acc_at[1], factor1)
        if last:
            return []
        d = real(b.held.get(e, 0))
        assert a2 is not None and a3 is not None  # decay=True
        f2 = e.fmul(d, a2)
        f3 = e.fmul(f2, a3)
        return (
            [e.fmul(x, splat(f2, w)) for x, (_, w) in zip(acc_at[2], pieces)]
            + [e.fmul(x, splat(f3, w)) for x, (_, w) in zip(acc_at[3], pieces)]
            + [a2, a3]
        )


class _PairSweep:
    """One sweep of a strip for a pair of steps: rows (direct: T *= D₀) o1 += T·q_t;
    T += k_t·u₁'; (direct: T *= a_{t+1}) T += k_{t+1}·u₂'; o2 += T·q_{t+1}; projections
    with k_{t+2}, k_{t+3}; store."""

    def __init__(
        self,
        strip: _PairedStrip,
        rows: tuple[SSAValue, ...],
        d0: SSAValue,
        d1: SSAValue,
        a1: SSAValue,
        u1: list[SSAValue],
        u2: list[SSAValue],
        last: bool,
    ) -> None:
        self.st, self.b, self.e = strip, strip.b, strip.e
        self.rows, self.d0, self.d1, self.a1, self.u1, self.u2, self.last = rows, d0, d1, a1, u1, u2, last

    def emit(self, direct: bool) -> None:
        e, b, st, pieces = self.e, self.b, self.st, self.st.pieces
        w1 = (
            self.u1
            if direct
            else [e.fmul(u, st.splat(e.fdiv(b.one, self.d0), w)) for u, (_, w) in zip(self.u1, pieces)]
        )
        w2 = (
            self.u2
            if direct
            else [e.fmul(u, st.splat(e.fdiv(b.one, self.d1), w)) for u, (_, w) in zip(self.u2, pieces)]
        )
        target, stride, start = b.strip_buf.ptr, b.cols, e.i64(0)
        if self.last and st.p.final is not None and not st.s.item.narrow:
            target, stride, start = st.p.final, b.n, st.base
        kinds = 2 if self.last else 4
        count = len(pieces)
        zeros = [st.splat(b.zero, w) for _, w in pieces]
        accs = vectors.carry(
            e, st.region, b.n, zeros * kinds, lambda i, accs: self.row(i, accs, direct, w1, w2, (target, stride, start))
        )
        for x, acc in enumerate(accs):
            vectors.store(e, acc, b.outs.ptr, e.i64((x // count) * b.cols + pieces[x % count][0]))
        b.held.set(e, 0, self.d1 if not direct else b.one)

    def row(
        self,
        i: SSAValue,
        accs: list[SSAValue],
        direct: bool,
        w1: list[SSAValue],
        w2: list[SSAValue],
        to: tuple[SSAValue, int, SSAValue],
    ) -> list[SSAValue]:
        e, b, st, last = self.e, self.b, self.st, self.last
        s, p, pieces, splat = st.s, st.p, st.pieces, st.splat
        target, stride, start = to
        count = len(pieces)
        row0, row1 = self.rows[0], self.rows[1]
        k0, q0 = real(s.item.load(e, p.k, e.add(row0, i))), real(s.item.load(e, p.q, e.add(row0, i)))
        k1, q1 = real(s.item.load(e, p.k, e.add(row1, i))), real(s.item.load(e, p.q, e.add(row1, i)))
        if not last:
            k2, k3 = (
                real(s.item.load(e, p.k, e.add(self.rows[2], i))),
                real(s.item.load(e, p.k, e.add(self.rows[3], i))),
            )
        at_row, to_row = e.mul(i, e.i64(b.cols)), e.add(start, e.mul(i, e.i64(stride)))
        out = list(accs)
        for k, ((off, w), x1, x2) in enumerate(zip(pieces, w1, w2)):
            cell = vectors.load(e, b.scalar, b.strip_buf.ptr, e.add(at_row, e.i64(off)), w)
            if direct:
                cell = e.fmul(cell, splat(self.d0, w))
            out[k] = e.fma(cell, splat(q0, w), accs[k])
            cell = e.fma(splat(k0, w), x1, cell)
            if direct:
                cell = e.fmul(cell, splat(self.a1, w))
            cell = e.fma(splat(k1, w), x2, cell)
            out[count + k] = e.fma(cell, splat(q1, w), accs[count + k])
            if not last:
                out[2 * count + k] = e.fma(cell, splat(k2, w), accs[2 * count + k])
                out[3 * count + k] = e.fma(cell, splat(k3, w), accs[3 * count + k])
            if not last or p.final is not None:
                vectors.store(e, cell, target, e.add(to_row, e.i64(off)))
        return out


# ---------------------------------------------------------------------------
# chunked form
# ---------------------------------------------------------------------------


def _chunk_stack_bytes(s: _Shape) -> int:
    """Bytes of the chunked form's stack buffers (see `_chunked_kernel`)."""
    c, n = CHUNK, s.n
    elements = s.cells + 7 * c * n + 2 * c * c + s.gates * (c + 1) + c + (c * n if s.per_channel else 0)
    return elements * s.work.dtype.nbytes


def _chunked_kernel(op: rc.GatedDeltaNetOp, s: _Shape, name: str) -> Kernel:
    """One (batch, head) per outer step; per chunk of CHUNK steps the equations of
    the module docstring in four GEMMs, on stack buffers whose stacked rows let
    one GEMM serve two products: QK = [Q; K] [2C, N] (one GEMM gives [P; A]
    [2C, C]), U [C, N], WQ = [−W; Q ⊙ e^γ] [2C, N] (one GEMM by S₀ gives
    Y = [−W S₀; (Q ⊙ e^γ) S₀]), then O = Y[C:] + P U and S' = e^γ_last S₀ +
    (K ⊙ e^(γ_last − γ))ᵀ U; the cumulative gates Γ [G, C] (transposed), β [C]
    and, with `gate_per_channel`, Kᵀ [N, C] for the pairwise sums."""
    blas.load()
    c, n, wc = CHUNK, s.n, s.work
    dtype = wc.dtype.name
    chunks = -(-s.seq // c)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        p = _pointers(op, pointers)
        qk, wq, y = (StackArray.allocate(e, wc, 2 * c * n) for _ in range(3))
        us = StackArray.allocate(e, wc, c * n)
        pa = StackArray.allocate(e, wc, 2 * c * c)
        gamma = StackArray.allocate(e, wc, s.gates * c)
        betas, decay_last = StackArray.allocate(e, wc, c), StackArray.allocate(e, wc, s.gates)
        kt = StackArray.allocate(e, wc, n * c) if s.per_channel else None
        st = StackArray.allocate(e, wc, s.cells)  # the state of the current head
        zero = e.const(wc.compute, 0.0)
        scale = e.const(wc.compute, 1.0 / math.sqrt(n))
        pairwise = gemm_call(e, dtype, (2 * c, c, n), (False, True), (n, n, c))
        read_state = gemm_call(e, dtype, (2 * c, n, n), (False, False), (n, n, n))
        read_chunk = gemm_call(e, dtype, (c, n, c), (False, False), (c, n, n), beta=1.0)
        update_state = gemm_call(e, dtype, (n, n, c), (True, False), (n, n, n), beta=1.0)

        def offset(array: StackArray, index: int) -> SSAValue:
            return e.element_ptr(array.ptr, e.i64(index), wc.storage)

        k_rows, q_rows, a_rows, o_rows = offset(qk, c * n), offset(wq, c * n), offset(pa, c * c), offset(y, c * n)

        def at(array: SSAValue, row: SSAValue | int, col: SSAValue | int, width: int) -> SSAValue:
            row_v = e.i64(row) if isinstance(row, int) else row
            col_v = e.i64(col) if isinstance(col, int) else col
            return e.element_ptr(array, e.add(e.mul(row_v, e.i64(width)), col_v), wc.storage)

        def get(array: SSAValue, row: SSAValue | int, col: SSAValue | int, width: int) -> SSAValue:
            return e.load(at(array, row, col, width), wc.storage)

        def put(array: SSAValue, row: SSAValue | int, col: SSAValue | int, width: int, value: SSAValue) -> None:
            e.store(value, at(array, row, col, width))

        def head(bh: SSAValue) -> None:
            base = e.mul(bh, e.i64(s.cells))
            state = st.ptr
            if s.seq == 0:  # no step to read: the state passes through
                _pass_state(e, region, s, p, base)
                return
            _load_state(e, region, s, p, base, state)

            def chunk(index: SSAValue) -> None:
                t0 = e.mul(index, e.i64(c))
                valid = e.smin(e.sub(e.i64(s.seq), t0), e.i64(c))
                load_chunk(bh, t0, valid)
                pair_sums()
                solve()
                finish(bh, t0, valid, state)

            _loop(e, region, chunks, chunk)
            _store_state(e, region, s, p, base, state)

        def load_chunk(bh: SSAValue, t0: SSAValue, valid: SSAValue) -> None:
            """Q·scale, K, U = βV, −W = −β e^γ K, β, Γ; rows past the sequence are zero (β = 0, g = 0)."""

            def row(r: SSAValue) -> None:
                inside = e.icmp("slt", r, valid)
                t = e.smin(e.add(t0, r), e.i64(s.seq - 1))  # a padded row reads the last step, then drops it
                qkv, gates = s.row(e, bh, t, n), s.row(e, bh, t, s.gates)
                beta = e.select(inside, real(s.item.load(e, p.beta, s.row(e, bh, t, 1))), zero)
                betas.set(e, r, beta)

                def gate(i: SSAValue) -> None:
                    g = e.select(inside, real(s.item.load(e, p.g, e.add(gates, i))), zero)
                    previous = get(gamma.ptr, i, e.smax(e.sub(r, e.i64(1)), e.i64(0)), c)  # in bounds at r = 0
                    before = e.select(e.icmp("sgt", r, e.i64(0)), previous, zero)
                    put(gamma.ptr, i, r, c, e.fadd(before, g))

                _loop(e, region, s.gates, gate)

                def column(i: SSAValue) -> None:
                    src = e.add(qkv, i)
                    q = e.select(inside, e.fmul(real(s.item.load(e, p.q, src)), scale), zero)
                    k = e.select(inside, real(s.item.load(e, p.k, src)), zero)
                    put(qk.ptr, r, i, n, q)
                    put(k_rows, r, i, n, k)
                    if kt is not None:
                        put(kt.ptr, i, r, c, k)
                    decay = _exp_le0(e, get(gamma.ptr, i if s.per_channel else 0, r, c))
                    put(us.ptr, r, i, n, e.fmul(beta, real(s.item.load(e, p.v, src))))
                    put(wq.ptr, r, i, n, e.fneg(e.fmul(e.fmul(beta, decay), k)))

                _loop(e, region, n, column)

            _loop(e, region, c, row)

        def pair_sums() -> None:
            """[P; A] of the module docstring (A strictly lower with β_r in, P lower)."""
            if s.per_channel:
                return pair_sums_per_channel()
            pairwise(qk.ptr, k_rows, pa.ptr)

            def row(r: SSAValue) -> None:
                gr, beta = get(gamma.ptr, 0, r, c), real(betas.get(e, r))

                def cell(col: SSAValue) -> None:
                    decay = _exp_le0(e, e.fsub(gr, get(gamma.ptr, 0, col, c)))
                    below, on_or_below = e.icmp("slt", col, r), e.icmp("sle", col, r)
                    a = e.fmul(e.fmul(get(a_rows, r, col, c), decay), beta)
                    put(a_rows, r, col, c, e.select(below, a, zero))
                    put(pa.ptr, r, col, c, e.select(on_or_below, e.fmul(get(pa.ptr, r, col, c), decay), zero))

                _loop(e, region, c, cell)

            _loop(e, region, c, row)

        def pair_sums_per_channel() -> None:
            """Σ_i over key channels of k_si·exp(γ_r,i − γ_s,i), vectorized along s."""
            assert kt is not None

            def row(r: SSAValue) -> None:
                beta = real(betas.get(e, r))

                def clear(col: SSAValue) -> None:
                    put(pa.ptr, r, col, c, zero)
                    put(a_rows, r, col, c, zero)

                _loop(e, region, c, clear)
                upto = e.add(r, e.i64(1))

                def channel(i: SSAValue) -> None:
                    qi, bki = get(qk.ptr, r, i, n), e.fmul(beta, get(k_rows, r, i, n))
                    gri = get(gamma.ptr, i, r, c)

                    def cell(col: SSAValue) -> None:
                        kk = e.fmul(get(kt.ptr, i, col, c), _exp_le0(e, e.fsub(gri, get(gamma.ptr, i, col, c))))
                        put(pa.ptr, r, col, c, e.fma(qi, kk, get(pa.ptr, r, col, c)))
                        put(a_rows, r, col, c, e.fma(bki, kk, get(a_rows, r, col, c)))

                    for_range(e, region, e.i64(0), upto, cell)

                _loop(e, region, n, channel)  # A's diagonal is left as summed: the solve never reads it

            _loop(e, region, c, row)

        def solve() -> None:
            """[U | −W]_r -= Σ_{s<r} A[r, s] [U | −W]_s, row by row (forward substitution with I + A)."""

            def row(r: SSAValue) -> None:
                def earlier(col: SSAValue) -> None:
                    a = e.fneg(get(a_rows, r, col, c))

                    def cell(j: SSAValue) -> None:
                        put(us.ptr, r, j, n, e.fma(a, get(us.ptr, col, j, n), get(us.ptr, r, j, n)))
                        put(wq.ptr, r, j, n, e.fma(a, get(wq.ptr, col, j, n), get(wq.ptr, r, j, n)))

                    _loop(e, region, n, cell)

                _loop(e, region, r, earlier)

            for_range(e, region, e.i64(1), e.i64(c), row)

        def finish(bh: SSAValue, t0: SSAValue, valid: SSAValue, state: SSAValue) -> None:
            """Y = WQ S₀; U += Y[:C]; O = Y[C:] + P U (stored); S' = e^γ_last S₀ + (K ⊙ e^(γ_last − γ))ᵀ U."""

            def gate_rows(r: SSAValue) -> None:
                def column(i: SSAValue) -> None:
                    g = i if s.per_channel else 0
                    gr = get(gamma.ptr, g, r, c)
                    put(q_rows, r, i, n, e.fmul(get(qk.ptr, r, i, n), _exp_le0(e, gr)))
                    last = get(gamma.ptr, g, c - 1, c)
                    put(k_rows, r, i, n, e.fmul(get(k_rows, r, i, n), _exp_le0(e, e.fsub(last, gr))))

                _loop(e, region, n, column)

            _loop(e, region, c, gate_rows)
            read_state(wq.ptr, state, y.ptr)
            _loop(e, region, c * n, lambda x: us.set(e, x, e.fadd(real(us.get(e, x)), real(y.get(e, x)))))
            read_chunk(pa.ptr, us.ptr, o_rows)

            def store(r: SSAValue) -> None:
                row = s.row(e, bh, e.add(t0, r), n)
                _loop(e, region, n, lambda j: s.item.store(e, get(o_rows, r, j, n), p.out, e.add(row, j)))

            _loop(e, region, valid, store)
            _loop(e, region, s.gates, lambda i: decay_last.set(e, i, _exp_le0(e, get(gamma.ptr, i, c - 1, c))))

            def decay_row(i: SSAValue) -> None:
                a = real(decay_last.get(e, i if s.per_channel else 0))
                _loop(e, region, n, lambda j: put(state, i, j, n, e.fmul(get(state, i, j, n), a)))

            _loop(e, region, n, decay_row)
            update_state(k_rows, us.ptr, state)

        for_range(e, region, begin, end, head)

    buffers = _buffers(op)
    work = s.batch * s.heads * s.seq * s.cells
    function = kernel_function(name, len(buffers), build)
    return Kernel(function, buffers, s.batch * s.heads, work, externals=(gemm_external(dtype),))


def uses_chunked_form(op: rc.GatedDeltaNetOp, tuning: Tuning) -> bool:
    """Sequences of at least `gdn_chunked_min_seq` steps, when the chunk buffers fit the stack.
    Never by default: it does ~1.4x the sequential form's arithmetic, in single-threaded
    GEMMs slower than the sequential sweep's vector FMAs on an L1-resident strip."""
    s = _Shape.of(op, tuning)
    return s.seq >= tuning.gdn_chunked_min_seq and _chunk_stack_bytes(s) <= STACK_LIMIT


def gated_delta_net_kernels(op: rc.GatedDeltaNetOp, ctx: KernelContext) -> list[Kernel]:
    """The sequential kernel, or (long sequences, `uses_chunked_form`) the chunked one after
    setting OpenBLAS to one thread; nothing when there is nothing to write."""
    s = _Shape.of(op, ctx.tuning)
    if s.batch * s.heads == 0 or s.n == 0:
        return []
    if s.seq == 0 and not op.carries_out:
        return []
    if uses_chunked_form(op, ctx.tuning):
        return [single_threaded_blas(f"{ctx.name}_blas1"), _chunked_kernel(op, s, ctx.name)]
    if uses_paired_form(op, ctx.tuning):
        return [_paired_kernel(op, s, ctx.name)]
    return [_sequential_kernel(op, s, ctx.name)]


KERNELS: dict[type[Operation], EmitKernels] = {
    rc.GatedDeltaNetOp: gated_delta_net_kernels,
}
"""Emitters of the delta-rule ops."""
