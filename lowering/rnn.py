"""Kernels for `rlx.lstm`, `rlx.gru` and `rlx.rnn` (f32, f64).

Layers run in order; layer l reads x (l = 0) or layer l-1's output
[B, S, D·H], a ping-pong scratch of the plan (`RnnFamilyOp.scratch_bytes`).
Per layer, two kernels:

- **Input projections**: one GEMM over all B·S rows for both directions at
  once, X_l [B·S, I_l] · W_ih[l]ᵀ -> [B·S, D·G·H] (the directions' W_ih
  blocks are adjacent in the packing; the BLAS flag reads them transposed,
  no copy), threaded by OpenBLAS.
- **Recurrence**: per unit (a direction, or a part of its batch rows) its own
  time loop; per step one GEMM h · W_hhᵀ ([rows, H] · [H, G·H]) into a
  scratch, then one fused gate pass per row that adds the projection and the
  biases (cheaper than pre-filling the projection with them: no extra pass
  over B·S·G·H), applies the cell with the polynomial sigmoid/tanh of
  `math_approx` (no libm: the j loop vectorizes) and writes the new state and
  the direction's output slice (features d·H .. d·H + H; the reverse
  direction walks t from S-1 down).

The running state lives in the state results when they are present (so they
hold the final state at the end, with no copy), else in scratch; it starts as
the initial state or zeros. Units run on the entry's threads with
single-threaded BLAS when there is more than one (a GEMM of M = B is too
small for OpenBLAS to share well: `benchmarks/recurrent.py`); a lone unit
lets OpenBLAS thread its per-step GEMMs.

Cells (gate blocks in PyTorch order, pre = x·W_ihᵀ + h·W_hhᵀ + biases):
LSTM i, f, g, o: c' = f⊙c + i⊙g, h' = o⊙tanh(c'); GRU r, z, n:
n = tanh(x·W_inᵀ + b_in + r⊙(h·W_hnᵀ + b_hn)), h' = (1 − z)⊙n + z⊙h;
RNN h' = act(pre), act tanh or relu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects.common import element_type
from rlx_mlir.lowering import math_approx as m
from rlx_mlir.lowering.activations import FLOAT
from rlx_mlir.lowering.element_types import Codec, codec
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.gemm import (
    MACS_PER_ELEMENT,
    SET_THREADS,
    byte_pointer,
    gemm_call,
    gemm_external,
    single_threaded_blas,
)
from rlx_mlir.lowering.kernel import Kernel, KernelContext, kernel_function
from rlx_mlir.lowering.loops import for_range
from rlx_mlir.memory_plan import Scratch

PROJECTIONS, PRODUCTS, LAYER_OUTPUTS, RUNNING = 0, 1, 2, 4
"""Indices of the scratch buffers of `RnnFamilyOp.scratch_bytes` (two layer
outputs from LAYER_OUTPUTS, one running state per state tensor from RUNNING)."""

Buffer = SSAValue | str | Scratch


@dataclass(frozen=True)
class RnnLayout:
    """The sizes of one RNN-family op and its packed offsets, in elements."""

    batch: int
    seq: int
    input_size: int
    hidden: int
    layers: int
    dirs: int
    gates: int

    @classmethod
    def of(cls, op: rc.RnnFamilyOp) -> RnnLayout:
        batch, seq, input_size = op.dims
        return cls(batch, seq, input_size, op.hidden_size.value.data, op.num_layers.value.data, op.directions,
                   op.GATES)

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
    j: SSAValue
    projections: tuple[SSAValue, SSAValue]
    products: tuple[SSAValue, SSAValue]
    biases: list[tuple[SSAValue, SSAValue]]
    states: list[tuple[SSAValue, SSAValue]]

    def _load(self, at: tuple[SSAValue, SSAValue], gate: int) -> SSAValue:
        base, offset = at
        return self.item.load(self.e, base, self.e.add(offset, self.e.i64(gate * self.hidden)))  # type: ignore

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
    act = NONLINEARITY[op.nonlinearity.data]  # type: ignore[attr-defined]
    return [act(e, _sum(e, row.x(0), row.h(0), row.bias(0, 0)))]


CELLS: dict[type[rc.RnnFamilyOp], Cell] = {rc.LstmOp: _lstm, rc.GruOp: _gru, rc.RnnOp: _rnn}


def batch_parts(layout: RnnLayout, threads: int) -> int:
    """Recurrence units per direction: the batch rows are split so that every
    thread runs one unit (rows are independent; each unit streams W_hh itself)."""
    if layout.dirs >= threads:
        return 1
    return max(1, min(layout.batch, threads // layout.dirs))


def _check_sizes(op: Operation, layout: RnnLayout) -> None:
    rows = layout.batch * layout.seq
    widest = max(rows, layout.dirs * layout.gate_width, layout.input_size, layout.dirs * layout.hidden)
    if widest > blas.INT_MAX:
        raise ValueError(
            f"'{op.name}' has a GEMM dimension above {blas.INT_MAX}, more than a 32-bit BLAS call takes "
            f"(B·S = {rows}, D·G·H = {layout.dirs * layout.gate_width}, I = {layout.input_size})"
        )


def _projection_kernel(op: rc.RnnFamilyOp, layout: RnnLayout, layer: int, source: Buffer, name: str,
                       threads: int) -> Kernel:
    """projections [B·S, D·G·H] = source [B·S, I_l] · W_ih[layer]ᵀ."""
    dtype = op.element.name
    rows, cols, width = layout.batch * layout.seq, layout.dirs * layout.gate_width, layout.width(layer)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        x, w_ih, out = pointers
        call = gemm_call(e, dtype, (rows, cols, width), (False, True), (max(1, width), max(1, width), cols), threads)
        call(x, byte_pointer(e, w_ih, e.i64(layout.w_ih_offset(layer)), op.element.nbytes), out)

    buffers: list[Buffer] = [source, op.input("w_ih"), Scratch(op, PROJECTIONS)]
    work = rows * cols * width // MACS_PER_ELEMENT
    externals = (gemm_external(dtype), SET_THREADS)
    return Kernel(kernel_function(name, 3, build), buffers, 1, work, parallel=False, externals=externals)


def _recurrence_kernel(op: rc.RnnFamilyOp, layout: RnnLayout, layer: int, out: Buffer, name: str,
                       threads: int) -> Kernel:
    """The time loop of every unit (direction d, batch part p) of `layer`."""
    dtype = op.element.name
    item = codec(element_type(op.output.type))
    nbytes = op.element.nbytes
    cell = CELLS[type(op)]
    batch, seq, hidden, dirs = layout.batch, layout.seq, layout.hidden, layout.dirs
    width = layout.gate_width
    parts = batch_parts(layout, threads)
    units = dirs * parts
    shared = units > 1 and threads > 1  # units on the entry's threads, each GEMM single-threaded
    n_states = len(op.STATES)
    biases = op.inputs[3:]
    running: list[Buffer] = (
        list(op.final_state) if op.carries_out else [Scratch(op, RUNNING + k) for k in range(n_states)]
    )
    initial: list[Buffer] = list(op.initial_state)
    buffers: list[Buffer] = [
        Scratch(op, PROJECTIONS), op.input("w_hh"), *biases, Scratch(op, PRODUCTS), out, *running, *initial
    ]

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        projections, w_hh, *rest = pointers
        bias_ptrs, (products, y), rest = rest[: len(biases)], rest[len(biases) : len(biases) + 2], rest[len(biases) + 2 :]
        state_ptrs, initial_ptrs = rest[:n_states], rest[n_states:]
        most_rows = -(-batch // parts)
        gemm = gemm_call(e, dtype, (most_rows, width, hidden), (False, True), (hidden, hidden, width),
                         None if shared else threads)

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
                    value = item.load(e, initial_ptrs[k], e.add(i, initial_base)) if initial_ptrs else (
                        item.constant(e, 0.0))
                    item.store(e, value, state, i)

                for_range(e, region, lo, hi, start)
            h_rows = byte_pointer(e, state_ptrs[0], lo, nbytes)
            w = byte_pointer(e, w_hh, e.mul(state_index, const(width * hidden)), nbytes)
            product_rows = byte_pointer(e, products, e.mul(e.add(e.mul(d, const(batch)), first), const(width)), nbytes)
            rows = e.itrunc(e.sub(last, first), i32)
            bias_at = e.mul(state_index, const(width))
            forward = e.icmp("eq", d, const(0))

            def step(s: SSAValue) -> None:
                t = e.select(forward, s, e.sub(const(seq - 1), s))
                gemm(h_rows, w, product_rows, rows)

                def row(b: SSAValue) -> None:
                    bs = e.add(e.mul(b, const(seq)), t)  # the (b, t) row of x and y
                    x_at = e.add(e.mul(bs, const(dirs * width)), e.mul(d, const(width)))
                    h_at = e.mul(e.add(e.mul(d, const(batch)), b), const(width))
                    s_at = e.add(state_base, e.mul(b, const(hidden)))
                    y_at = e.add(e.mul(bs, const(dirs * hidden)), e.mul(d, const(hidden)))

                    def column(j: SSAValue) -> None:
                        at = lambda ptr, base: (ptr, e.add(base, j))  # noqa: E731
                        loads = Row(e, item, hidden, j, at(projections, x_at), at(products, h_at),
                                    [at(ptr, bias_at) for ptr in bias_ptrs], [at(ptr, s_at) for ptr in state_ptrs])
                        new = cell(e, loads, op)
                        for ptr, value in zip(state_ptrs, new):
                            item.store(e, value, ptr, e.add(s_at, j))
                        item.store(e, new[0], y, e.add(y_at, j))

                    for_range(e, region, const(0), const(hidden), column)

                for_range(e, region, first, last, row)

            for_range(e, region, const(0), const(seq), step)

        for_range(e, region, begin, end, unit)

    work = seq * batch * width * hidden // MACS_PER_ELEMENT
    externals = (gemm_external(dtype),) if shared else (gemm_external(dtype), SET_THREADS)
    return Kernel(kernel_function(name, len(buffers), build), buffers, units, work, parallel=shared,
                  externals=externals)


def rnn_kernels(op: rc.RnnFamilyOp, ctx: KernelContext) -> list[Kernel]:
    layout = RnnLayout.of(op)
    if layout.batch == 0:
        return []
    _check_sizes(op, layout)
    blas.load()
    shared = layout.dirs * batch_parts(layout, ctx.threads) > 1 and ctx.threads > 1
    kernels: list[Kernel] = []
    source: Buffer = op.input("x")
    for layer in range(layout.layers):
        last = layer == layout.layers - 1
        out: Buffer = op.output if last else Scratch(op, LAYER_OUTPUTS + (layout.layers - 2 - layer) % 2)
        name = f"{ctx.name}_l{layer}"
        if layout.seq:
            kernels.append(_projection_kernel(op, layout, layer, source, f"{name}_projections", ctx.threads))
        if shared:
            kernels.append(single_threaded_blas(f"{name}_blas1"))
        kernels.append(_recurrence_kernel(op, layout, layer, out, f"{name}_steps", ctx.threads))
        source = out
    return kernels


KERNELS: dict[type[Operation], Callable[[Operation, KernelContext], list[Kernel]]] = {
    rc.LstmOp: rnn_kernels,
    rc.GruOp: rnn_kernels,
    rc.RnnOp: rnn_kernels,
}  # type: ignore[dict-item]
"""Emitters of the RNN-family ops."""
