"""Kernels for `rlx.lstm`, `rlx.gru` and `rlx.rnn` (f32, f64).

Layers run in order; layer l reads x (l = 0) or layer l-1's output
[B, S, D·H], a ping-pong scratch of the plan (`RnnFamilyOp.scratch_bytes`).
Per layer, two kernels:

- **prepare** (`_layer_kernel`): the input projections of all B·S rows for
  both directions at once, one GEMM X_l [B·S, I_l] · W_ih[l]ᵀ -> [B·S, D·G·H]
  (the directions' W_ih blocks are adjacent in the packing). W_ih is packed
  transposed into column panels (`Packing`) and `gemm.register_tile` runs
  register tiles in vector IR (`Tuning.gemm_tile_rows` rows x two vectors:
  8 x 128 bytes on AVX-512, 6 x 64 on AVX2), one unit per panel of up to
  `Tuning.rnn_ih_panel_tiles` tiles side by side, split across the entry's
  threads; the units also pack W_hh for the steps.
- **steps** (`_recurrence_kernel`): per unit (a direction, or a part of its
  batch rows: `batch_parts`) its own time loop; per step one GEMM h · W_hhᵀ
  ([rows, H] · [H, G·H], register tiles over the packed W_hh panels) into a
  scratch, then one fused gate pass per row that adds the projection and the
  biases (no extra pass over B·S·G·H to pre-fill them), applies the cell with
  the polynomial sigmoid/tanh of `math_approx` (no libm: the j loop
  vectorizes) and writes the new state and the direction's output slice
  (features d·H .. d·H + H; the reverse direction walks t from S-1 down).
  Batch rows are independent, so units never wait for each other.

Why no CBLAS call (`gemm.gemm_call`), measured on the LSTM benchmark
(B8 S128 I256 H256, one thread, `benchmarks/recurrent.py`): OpenBLAS runs
AVX2 kernels here (`OPENBLAS_CORETYPE=Haswell`); the projection sgemm (W_ih by
the transpose flag) took 4.2 ms against 2.2 ms for pack + tiles, and the 128
per-step sgemm calls at M = 8 (which repack W_hh every call) ~9 ms against
~2.4 ms for the tiles and gates.

The running state lives in the state results when they are present (so they
hold the final state at the end, with no copy), else in scratch; it starts as
the initial state or zeros.

Cells (gate blocks in PyTorch order, pre = x·W_ihᵀ + h·W_hhᵀ + biases):
LSTM i, f, g, o: c' = f⊙c + i⊙g, h' = o⊙tanh(c'); GRU r, z, n:
n = tanh(x·W_inᵀ + b_in + r⊙(h·W_hnᵀ + b_hn)), h' = (1 − z)⊙n + z⊙h;
RNN h' = act(pre), act tanh or relu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects.common import element_type
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import (
    MACS_PER_ELEMENT,
    Matrix,
    Packing,
    emit_packing,
    even_tile_rows,
    register_tile,
)
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_then
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.lowering.scalar.activations import FLOAT
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

PROJECTIONS, PRODUCTS, PACKED, LAYER_OUTPUTS, RUNNING = 0, 1, rc.RnnFamilyOp.PACKED_SCRATCH, 3, 5
"""Indices of the scratch buffers of `RnnFamilyOp.scratch_bytes` (two layer
outputs from LAYER_OUTPUTS, one running state per state tensor from RUNNING)."""

Buffer = SSAValue | str | Scratch


@dataclass(frozen=True)
class RnnLayout:
    """The sizes of one RNN-family op and its packed offsets, in elements, and the
    kernel choices its kernels are built with (the packing kernel and the tiles
    that read its panels must agree on them)."""

    batch: int
    seq: int
    input_size: int
    hidden: int
    layers: int
    dirs: int
    gates: int
    tuning: Tuning

    @classmethod
    def of(cls, op: rc.RnnFamilyOp, tuning: Tuning) -> RnnLayout:
        batch, seq, input_size = op.dims
        return cls(
            batch, seq, input_size, op.hidden_size.value.data, op.num_layers.value.data, op.directions, op.GATES, tuning
        )

    @property
    def gate_width(self) -> int:
        """G·H: one direction's gate pre-activations per row."""
        return self.gates * self.hidden

    def width(self, layer: int) -> int:
        """The input features of `layer`: I, then D·H."""
        return self.input_size if layer == 0 else self.dirs * self.hidden

    def w_ih_offset(self, layer: int) -> int:
        """Where layer's W_ih blocks start (`rnn_expected_lens`: G·H x I, then G·H x D·H per direction)."""
        return sum(self.dirs * self.gate_width * self.width(k) for k in range(layer))


@dataclass(frozen=True)
class Row:
    """Loads of column j of one (batch row, step) for a cell."""

    e: Emitter
    item: Codec
    hidden: int
    projections: tuple[SSAValue, SSAValue]
    products: tuple[SSAValue, SSAValue]
    biases: list[tuple[SSAValue, SSAValue]]
    states: list[tuple[SSAValue, SSAValue]]

    def _load(self, at: tuple[SSAValue, SSAValue], gate: int) -> SSAValue:
        base, offset = at
        return real(self.item.load(self.e, base, self.e.add(offset, self.e.i64(gate * self.hidden))))

    def x(self, gate: int) -> SSAValue:
        """x·W_ihᵀ of `gate`."""
        return self._load(self.projections, gate)

    def h(self, gate: int) -> SSAValue:
        """h·W_hhᵀ of `gate`."""
        return self._load(self.products, gate)

    def bias(self, k: int, gate: int) -> SSAValue:
        return self._load(self.biases[k], gate)

    def state(self, k: int) -> SSAValue:
        return self._load(self.states[k], 0)


Cell = Callable[[Emitter, Row, rc.RnnFamilyOp], list[SSAValue]]


def _sum(e: Emitter, *terms: SSAValue) -> SSAValue:
    total = terms[0]
    for term in terms[1:]:
        total = e.fadd(total, term)
    return total


def _lstm(e: Emitter, row: Row, op: rc.RnnFamilyOp) -> list[SSAValue]:
    i, f, g, o = (_sum(e, row.x(k), row.h(k), row.bias(0, k)) for k in range(4))
    c = e.fma(m.sigmoid(e, f), row.state(1), e.fmul(m.sigmoid(e, i), m.tanh(e, g)))
    return [e.fmul(m.sigmoid(e, o), m.tanh(e, c)), c]


def _gru(e: Emitter, row: Row, op: rc.RnnFamilyOp) -> list[SSAValue]:
    r, z = (m.sigmoid(e, _sum(e, row.x(k), row.bias(0, k), row.h(k), row.bias(1, k))) for k in range(2))
    n = m.tanh(e, e.fma(r, e.fadd(row.h(2), row.bias(1, 2)), e.fadd(row.x(2), row.bias(0, 2))))
    return [e.fma(z, e.fsub(row.state(0), n), n)]


NONLINEARITY = {"tanh": FLOAT[ew.TanhOp], "relu": FLOAT[ew.ReluOp]}


def _rnn(e: Emitter, row: Row, op: rc.RnnFamilyOp) -> list[SSAValue]:
    assert isinstance(op, rc.RnnOp), op.name
    act = NONLINEARITY[op.nonlinearity.data]
    return [act(e, _sum(e, row.x(0), row.h(0), row.bias(0, 0)))]


CELLS: dict[type[rc.RnnFamilyOp], Cell] = {rc.LstmOp: _lstm, rc.GruOp: _gru, rc.RnnOp: _rnn}


def batch_parts(layout: RnnLayout, threads: int) -> int:
    """Recurrence units per direction: the batch rows are split so that every
    thread runs one unit (rows are independent; each unit streams W_hh itself)."""
    if layout.dirs >= threads:
        return 1
    return max(1, min(layout.batch, threads // layout.dirs))


def _row_counts(layout: RnnLayout, parts: int) -> list[int]:
    """The batch rows of each part (part p: rows B·p/P .. B·(p+1)/P)."""
    return [layout.batch * (p + 1) // parts - layout.batch * p // parts for p in range(parts)]


def _step_tile_rows(layout: RnnLayout, parts: int) -> int:
    """Rows of the step GEMM's register tiles: a part's rows in even tiles."""
    return even_tile_rows(max(_row_counts(layout, parts)), layout.tuning.gemm_tile_rows)


def _packed_base(op: rc.RnnFamilyOp, layer: int) -> int:
    """Where `layer`'s packed weights start in the packed scratch: at 0, or after
    the layers below when the op packs every layer once (`packs_once`)."""
    return sum(op.packed_elements(k) for k in range(layer)) if op.packs_once else 0


def _packed_flag(op: rc.RnnFamilyOp) -> int:
    """The element of the packed scratch that is non-zero once every layer is packed
    (`packs_once`): after the last layer's weights."""
    return _packed_base(op, op.num_layers.value.data)


def _hh_packing(op: rc.RnnFamilyOp, layout: RnnLayout, layer: int, item: Codec, parts: int) -> Packing:
    """W_hh[layer, d] for each direction d, at d·G·H·H from the layer's base, in
    panels as wide as the step tiles' rows allow: rows x vectors within
    `Tuning.accumulators`, at least a tile wide (on AVX-512, the 4-row tiles of
    two B8 halves ran 13% faster on 256-byte panels than on 128-byte ones)."""
    tuning = layout.tuning
    rows = _step_tile_rows(layout, parts)
    vector_bytes = tuning.vector_bytes
    vectors = max(tuning.tile_bytes() // vector_bytes, min(8, tuning.accumulators // rows))
    width = layout.gate_width
    source = layer * layout.dirs * width * layout.hidden
    return Packing(
        layout.dirs, width, layout.hidden, source, _packed_base(op, layer), vectors * vector_bytes // item.dtype.nbytes
    )


def _ih_packing(op: rc.RnnFamilyOp, layout: RnnLayout, layer: int, item: Codec, threads: int) -> Packing:
    """W_ih[layer] of both directions as one [D·G·H, I_l] matrix, after the W_hh panels,
    in panels of up to `Tuning.rnn_ih_panel_tiles` tiles while every thread still
    gets a panel: the projection reads each row tile of its input once per panel,
    so wider panels read the input fewer times (while the panel stays in L2)."""
    width = layout.dirs * layout.gate_width
    tile = layout.tuning.tile_bytes() // item.dtype.nbytes
    tiles = max(1, min(layout.tuning.rnn_ih_panel_tiles, width // (tile * threads)))
    return Packing(
        1,
        width,
        layout.width(layer),
        layout.w_ih_offset(layer),
        _packed_base(op, layer) + width * layout.hidden,
        tiles * tile,
    )


def _layer_kernel(
    op: rc.RnnFamilyOp, layout: RnnLayout, layer: int, source: Buffer, hh: Packing, name: str, threads: int
) -> Kernel:
    """What the time loops of `layer` need, one unit per W_ih panel: the unit packs
    it and runs its projection tiles, projections [B·S, D·G·H] = source [B·S, I_l]
    · W_ih[layer]ᵀ (the panel stays in L2 while every row tile streams past, read
    once for all the panel's register tiles),
    then packs W_hh panels u, u + units, ... (so threads get equal shares).
    When the op `packs_once`, the packing is skipped once the flag is set."""
    item = codec(element_type(op.output.type))
    ih = _ih_packing(op, layout, layer, item, threads)
    n, k, rows = ih.n, ih.k, layout.batch * layout.seq
    panel, full, tail = ih.panels()
    ih_units = ih.units()
    tile_rows, vector_bytes = layout.tuning.gemm_tile_rows, layout.tuning.vector_bytes
    tile_cols = layout.tuning.tile_bytes() // item.dtype.nbytes

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        x, w_ih, w_hh, packed, out = pointers

        def unless_packed(pack: Callable[[], None]) -> None:
            if not op.packs_once:
                pack()
                return
            flag = real(item.load(e, packed, e.i64(_packed_flag(op))))
            if_then(e, region, e.fcmp("oeq", flag, real(item.constant(e, 0.0))), pack)

        def project(jt: SSAValue) -> None:
            unless_packed(lambda: emit_packing(e, region, item, ih, (w_ih, packed), jt))
            c0 = e.mul(jt, e.i64(panel))

            def columns(w: int) -> None:
                def tile(r0: SSAValue, count: int) -> None:
                    a = Matrix(x, e.mul(r0, e.i64(k)), k)
                    for sub in range(0, w, tile_cols):
                        cols = min(tile_cols, w - sub)
                        b = Matrix(packed, e.add(e.i64(ih.target + sub), e.mul(c0, e.i64(k))), w)
                        c = Matrix(out, e.add(e.mul(r0, e.i64(n)), e.add(c0, e.i64(sub))), n)
                        register_tile(e, region, item, (count, cols, k), a, b, c, vector_bytes)

                whole = rows // tile_rows * tile_rows
                if whole:
                    for_range(e, region, e.i64(0), e.i64(whole), lambda r0: tile(r0, tile_rows), tile_rows)
                if rows % tile_rows:
                    tile(e.i64(whole), rows % tile_rows)

            if full:
                if_then(e, region, e.icmp("slt", jt, e.i64(full)), lambda: columns(panel))
            if tail:
                if_then(e, region, e.icmp("eq", jt, e.i64(full)), lambda: columns(tail))

        def pack_hh(v: SSAValue) -> None:
            emit_packing(e, region, item, hh, (w_hh, packed), v)

        def one(u: SSAValue) -> None:
            project(u)
            unless_packed(lambda: for_range(e, region, u, e.i64(hh.units()), pack_hh, ih_units))

        for_range(e, region, begin, end, one)

    buffers: list[Buffer] = [source, op.input("w_ih"), op.input("w_hh"), Scratch(op, PACKED), Scratch(op, PROJECTIONS)]
    work = rows * n * k // MACS_PER_ELEMENT
    return Kernel(kernel_function(name, len(buffers), build), buffers, ih_units, work)


def _emit_products(
    e: Emitter,
    region: Region,
    item: Codec,
    layout: RnnLayout,
    parts: int,
    hh: Packing,
    pointers: tuple[SSAValue, SSAValue, SSAValue],
    bases: tuple[SSAValue, SSAValue, SSAValue],
    rows: SSAValue,
) -> None:
    """products[r, :] = h[r, :] · W_hhᵀ for the `rows` rows at `bases` (elements of
    h, the packed panels, products): per column panel (which stays in cache), its
    register tiles of `Tuning.gemm_tile_rows` rows, then the remainder a part
    can have; k = H."""
    h, packed, products = pointers
    h_base, w_base, p_base = bases
    hidden, width = layout.hidden, layout.gate_width
    panel, full, tail = hh.panels()
    tile_rows, vector_bytes = _step_tile_rows(layout, parts), layout.tuning.vector_bytes

    counts = _row_counts(layout, parts)
    whole = e.udiv(rows, e.i64(tile_rows))
    done = e.mul(whole, e.i64(tile_rows))
    left = e.sub(rows, done)

    def columns(c0: SSAValue, w: int) -> None:
        def tile(r0: SSAValue, count: int) -> None:
            a = Matrix(h, e.add(h_base, e.mul(r0, e.i64(hidden))), hidden)
            b = Matrix(packed, e.add(w_base, e.mul(c0, e.i64(hidden))), w)
            c = Matrix(products, e.add(e.add(p_base, e.mul(r0, e.i64(width))), c0), width)
            register_tile(e, region, item, (count, w, hidden), a, b, c, vector_bytes)

        if max(counts) >= tile_rows:
            for_range(e, region, e.i64(0), whole, lambda t: tile(e.mul(t, e.i64(tile_rows)), tile_rows))
        for rest in sorted({n % tile_rows for n in counts} - {0}):

            def remainder(rest: int = rest) -> None:
                tile(done, rest)

            if_then(e, region, e.icmp("eq", left, e.i64(rest)), remainder)

    if full:
        for_range(e, region, e.i64(0), e.i64(full * panel), lambda c0: columns(c0, panel), panel)
    if tail:
        columns(e.i64(full * panel), tail)


def _recurrence_kernel(
    op: rc.RnnFamilyOp, layout: RnnLayout, out: Buffer, hh: Packing, parts: int, name: str, layer: int
) -> Kernel:
    """The time loop of every unit (direction d, batch part p) of `layer`."""
    item = codec(element_type(op.output.type))
    cell = CELLS[type(op)]
    batch, seq, hidden, dirs = layout.batch, layout.seq, layout.hidden, layout.dirs
    width = layout.gate_width
    n_states = len(op.STATES)
    biases = op.inputs[3:]
    running: list[Buffer] = (
        list(op.final_state) if op.carries_out else [Scratch(op, RUNNING + k) for k in range(n_states)]
    )
    buffers: list[Buffer] = [
        Scratch(op, PROJECTIONS),
        Scratch(op, PACKED),
        Scratch(op, PRODUCTS),
        out,
        *biases,
        *running,
        *op.initial_state,
    ]

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        projections, packed, products, y, *rest = pointers
        bias_ptrs, rest = rest[: len(biases)], rest[len(biases) :]
        state_ptrs, initial_ptrs = rest[:n_states], rest[n_states:]

        def const(value: int) -> SSAValue:
            return e.i64(value)

        def unit(u: SSAValue) -> None:
            d, p = e.udiv(u, const(parts)), e.urem(u, const(parts))
            first = e.udiv(e.mul(p, const(batch)), const(parts))
            last = e.udiv(e.mul(e.add(p, const(1)), const(batch)), const(parts))
            state_index = e.add(const(layer * dirs), d)  # l·D + d in [L·D, B, H]
            state_base = e.mul(state_index if op.carries_out else d, const(batch * hidden))
            lo, hi = e.add(state_base, e.mul(first, const(hidden))), e.add(state_base, e.mul(last, const(hidden)))
            initial_base = e.sub(e.add(e.mul(state_index, const(batch * hidden)), e.mul(first, const(hidden))), lo)
            for k, state in enumerate(state_ptrs):

                def start(i: SSAValue, state: SSAValue = state, k: int = k) -> None:
                    if initial_ptrs:
                        item.store(e, item.load(e, initial_ptrs[k], e.add(i, initial_base)), state, i)
                    else:
                        item.store(e, item.constant(e, 0.0), state, i)

                for_range(e, region, lo, hi, start)
            product_base = e.mul(e.add(e.mul(d, const(batch)), first), const(width))
            bases = (lo, e.add(const(hh.target), e.mul(d, const(width * hidden))), product_base)
            bias_at = e.mul(state_index, const(width))
            forward = e.icmp("eq", d, const(0))

            def step(s: SSAValue) -> None:
                t = e.select(forward, s, e.sub(const(seq - 1), s))
                _emit_products(
                    e, region, item, layout, parts, hh, (state_ptrs[0], packed, products), bases, e.sub(last, first)
                )

                def row(b: SSAValue) -> None:
                    bs = e.add(e.mul(b, const(seq)), t)  # the (b, t) row of x and y
                    x_at = e.add(e.mul(bs, const(dirs * width)), e.mul(d, const(width)))
                    h_at = e.mul(e.add(e.mul(d, const(batch)), b), const(width))
                    s_at = e.add(state_base, e.mul(b, const(hidden)))
                    y_at = e.add(e.mul(bs, const(dirs * hidden)), e.mul(d, const(hidden)))

                    def column(j: SSAValue) -> None:
                        def at(ptr: SSAValue, base: SSAValue) -> tuple[SSAValue, SSAValue]:
                            return ptr, e.add(base, j)

                        loads = Row(
                            e,
                            item,
                            hidden,
                            at(projections, x_at),
                            at(products, h_at),
                            [at(ptr, bias_at) for ptr in bias_ptrs],
                            [at(ptr, s_at) for ptr in state_ptrs],
                        )
                        new = cell(e, loads, op)
                        for ptr, value in zip(state_ptrs, new):
                            item.store(e, value, ptr, e.add(s_at, j))
                        item.store(e, new[0], y, e.add(y_at, j))

                    for_range(e, region, const(0), const(hidden), column)

                for_range(e, region, first, last, row)

            for_range(e, region, const(0), const(seq), step)

        for_range(e, region, begin, end, unit)

    work = seq * batch * width * hidden // MACS_PER_ELEMENT
    return Kernel(kernel_function(name, len(buffers), build), buffers, dirs * parts, work)


def rnn_kernels(op: rc.RnnFamilyOp, ctx: KernelContext) -> list[Kernel]:
    """Per layer: pack the weights and project every row, then run the time loops
    (S = 0: no steps, the state results are the initial state)."""
    layout = RnnLayout.of(op, ctx.tuning)
    if layout.batch == 0:
        return []
    item = codec(element_type(op.output.type))
    parts = batch_parts(layout, ctx.threads)
    kernels: list[Kernel] = []
    source: Buffer = op.input("x")
    for layer in range(layout.layers):
        hh = _hh_packing(op, layout, layer, item, parts)
        last = layer == layout.layers - 1
        out: Buffer = op.output if last else Scratch(op, LAYER_OUTPUTS + (layout.layers - 2 - layer) % 2)
        name = f"{ctx.name}_l{layer}"
        if layout.seq:
            kernels.append(_layer_kernel(op, layout, layer, source, hh, f"{name}_prepare", ctx.threads))
        kernels.append(_recurrence_kernel(op, layout, out, hh, parts, f"{name}_steps", layer))
        source = out
    if op.packs_once and layout.seq:
        kernels.append(_mark_packed_kernel(op, item, f"{ctx.name}_packed"))
    return kernels


def _mark_packed_kernel(op: rc.RnnFamilyOp, item: Codec, name: str) -> Kernel:
    """Set the flag that every layer's weights are packed (`packs_once`), after the
    last layer's steps: later calls skip the packing."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        item.store(e, item.constant(e, 1.0), pointers[0], e.i64(_packed_flag(op)))

    buffers: list[Buffer] = [Scratch(op, PACKED)]
    return Kernel(kernel_function(name, len(buffers), build), buffers, 1, 1, parallel=False)


KERNELS: dict[type[Operation], EmitKernels] = {
    rc.LstmOp: rnn_kernels,
    rc.GruOp: rnn_kernels,
    rc.RnnOp: rnn_kernels,
}
"""Emitters of the RNN-family ops."""
