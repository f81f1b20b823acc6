"""Import of the recurrent ops (LSTM, GRU, RNN) and of Scan, whose body graph is
imported node by node."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.ir import SSAValue

from rlx_mlir.builder import Builder
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.frontends.onnx.context import (
    NUMPY_NAMES,
    Import,
    Importer,
    Unsupported,
    Value,
    element_name,
    known,
    node_attribute,
)
from rlx_mlir.frontends.onnx.nodes import import_nodes


@dataclass(frozen=True)
class RecurrentKind:
    """How an ONNX recurrent op maps onto rlx's: its gate blocks in rlx's order
    (ONNX LSTM is i, o, f, c; rlx i, f, g, o. ONNX GRU z, r, h; rlx r, z, n),
    its default activations and whether rlx merges the two biases."""

    method: str
    gates: tuple[int, ...]
    activations: tuple[str, ...]
    states: int
    merged_bias: bool


RECURRENT = {
    "LSTM": RecurrentKind("lstm", (0, 2, 3, 1), ("Sigmoid", "Tanh", "Tanh"), 2, True),
    "GRU": RecurrentKind("gru", (1, 0, 2), ("Sigmoid", "Tanh"), 1, False),
    "RNN": RecurrentKind("rnn", (0,), ("Tanh",), 1, True),
}


def _gate_order(w: np.ndarray, kind: RecurrentKind) -> np.ndarray:
    """[D, G·H, ...] with its gate blocks in rlx's order."""
    blocks = np.split(w, len(kind.gates), axis=1)
    return np.concatenate([blocks[g] for g in kind.gates], axis=1)


def _recurrent(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ONNX LSTM/GRU/RNN as rlx.lstm/gru/rnn: weights repacked (constants, at
    import) into PyTorch's layout and gate order, X and Y transposed from
    ONNX's sequence-first layout, a reverse direction run on reversed time."""
    kind = RECURRENT[node.op_type]
    b = ctx.builder
    padded = [*inputs, *[None] * (8 - len(inputs))]
    x, w, r, bias, lengths, _h0 = padded[:6]
    hidden = int(node_attribute(node, "hidden_size"))
    direction = node_attribute(node, "direction", b"forward").decode()
    layout = int(node_attribute(node, "layout", 0))
    activations = tuple(a.decode() for a in node_attribute(node, "activations", []) or [])
    relu = activations == ("Relu",) and node.op_type == "RNN"
    if activations and activations not in (kind.activations, kind.activations * 2) and not relu:
        raise Unsupported(f"activations {list(activations)} (rlx computes {list(kind.activations)})")
    if node_attribute(node, "clip") is not None or node_attribute(node, "input_forget", 0):
        raise Unsupported("clip and input_forget are not supported")
    if node.op_type == "GRU" and not node_attribute(node, "linear_before_reset", 0):
        return _recurrence_by_scan(ctx, node, inputs, SCAN_CELLS["GRU"])
    if node.op_type == "LSTM" and padded[7] is not None:
        return _recurrence_by_scan(ctx, node, inputs, SCAN_CELLS["LSTM"])
    w, r = _gate_order(known(w, "W"), kind), _gate_order(known(r, "R"), kind)
    directions = w.shape[0]
    b_all = known(bias, "B") if bias is not None else np.zeros((directions, 2 * w.shape[1]), w.dtype)
    b_ih, b_hh = (_gate_order(part, kind) for part in np.split(b_all, 2, axis=1))
    x = ctx.tensor(x)
    if layout == 0:
        x = b.transpose(x, [1, 0, 2])
    batch, seq = shape_of(x.type)[:2]
    if lengths is not None and not np.all(known(lengths, "sequence_lens") == seq):
        raise Unsupported("sequence_lens of unequal lengths (rlx runs every sequence to the same length)")
    reverse = direction == "reverse"
    if reverse:
        x = b.reverse(x, [1])
    weights = [b.constant(w.reshape(-1), _name(w)), b.constant(r.reshape(-1), _name(r))]
    if kind.merged_bias:
        weights.append(b.constant((b_ih + b_hh).reshape(-1), _name(w)))
    else:
        weights += [b.constant(b_ih.reshape(-1), _name(w)), b.constant(b_hh.reshape(-1), _name(w))]
    states = [padded[5], padded[6]][: kind.states]
    state = None
    if any(v is not None for v in states):
        state = [_state(ctx, v, (directions, batch, hidden), _name(w), layout) for v in states]
    extra = {"nonlinearity": "relu" if relu else "tanh"} if node.op_type == "RNN" else {}
    want_state = any(name for name in node.output[1:])
    results = getattr(b, kind.method)(
        x, *weights, hidden, 1, direction == "bidirectional", state=state, return_state=want_state, **extra
    )
    y, *final = results if want_state else (results,)
    if reverse:
        y = b.reverse(y, [1])
    y = b.reshape(y, [batch, seq, directions, hidden])
    y = b.transpose(y, [1, 2, 0, 3]) if layout == 0 else y
    final = [b.transpose(h, [1, 0, 2]) if layout == 1 else h for h in final]
    return [y, *final]


@dataclass(frozen=True)
class ScanCell:
    """A recurrent cell rlx's own ops do not compute, composed as an rlx.scan body: its
    gate count G (W is [D, G·H, I]), the [B, H] states it carries (packed along axis 1),
    the bias added to every step's input projection, the constants the body takes as
    broadcast inputs, and the body."""

    gates: int
    states: int
    projection_bias: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    constants: Callable[[np.ndarray, np.ndarray, np.ndarray, int], list[np.ndarray]]
    step: Callable[[int], Callable[..., SSAValue]]


def _recurrence_by_scan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None], cell: ScanCell) -> list[Value]:
    """ONNX LSTM/GRU as one rlx.scan per direction: every step's input projection (with
    its biases) is one matmul before the loop, the body does the hidden-state matmuls
    and the gates. Outputs Y [S, D, B, H] and each final state [D, B, H] (layout 1:
    batch first)."""
    b = ctx.builder
    x, w, r, bias, lengths, *initial = [*inputs, *[None] * (8 - len(inputs))][:8]
    hidden = int(node_attribute(node, "hidden_size"))
    direction = node_attribute(node, "direction", b"forward").decode()
    layout = int(node_attribute(node, "layout", 0))
    w, r = known(w, "W"), known(r, "R")
    directions, element = w.shape[0], _name(w)
    bias = known(bias, "B") if bias is not None else np.zeros((directions, 2 * cell.gates * hidden), w.dtype)
    peepholes = (
        known(initial[2], "P")
        if len(initial) > 2 and initial[2] is not None
        else np.zeros((directions, 3 * hidden), w.dtype)
    )
    x = ctx.tensor(x)
    if layout == 1:
        x = b.transpose(x, [1, 0, 2])  # [S, B, I]
    seq, batch = shape_of(x.type)[:2]
    if lengths is not None and not np.all(known(lengths, "sequence_lens") == seq):
        raise Unsupported("sequence_lens of unequal lengths (rlx runs every sequence to the same length)")
    states = [None if v is None else ctx.tensor(v) for v in initial[: cell.states]]
    states = [b.transpose(v, [1, 0, 2]) if v is not None and layout == 1 else v for v in states]  # [D, B, H]
    ys: list[SSAValue] = []
    finals: list[list[SSAValue]] = [[] for _ in range(cell.states)]
    for d in range(directions):
        reverse = direction == "reverse" or d == 1
        steps = b.reverse(x, [0]) if reverse else x
        w_bias, r_bias = np.split(bias[d], 2)
        projected = b.add(
            b.matmul(steps, b.constant(w[d], element), False, True),
            b.constant(cell.projection_bias(w_bias, r_bias, hidden), element),
        )
        parts = [
            b.reshape(b.narrow(v, 0, d, 1), [batch, hidden])
            if v is not None
            else b.constant(np.zeros((batch, hidden)), element)
            for v in states
        ]
        init = parts[0] if len(parts) == 1 else b.concat(parts, 1)  # [B, k·H]
        constants = [b.constant(c, element) for c in cell.constants(r[d], r_bias, peepholes[d], hidden)]
        trajectory = b.scan(init, cell.step(hidden), [projected], constants, save_trajectory=True)  # [S, B, kH]
        last = b.narrow(trajectory, 0, seq - 1, 1)
        for k in range(cell.states):
            finals[k].append(b.narrow(last, 2, k * hidden, hidden))
        y = b.narrow(trajectory, 2, 0, hidden)
        ys.append(b.reshape(b.reverse(y, [0]) if reverse else y, [seq, 1, batch, hidden]))
    outputs = [ys[0] if directions == 1 else b.concat(ys, 1)]  # [S, D, B, H]
    outputs += [f[0] if directions == 1 else b.concat(f, 0) for f in finals]  # [D, B, H] each
    if layout == 1:
        outputs = [b.transpose(outputs[0], [2, 0, 1, 3]), *(b.transpose(v, [1, 0, 2]) for v in outputs[1:])]
    return [*outputs]


def _gru_step(hidden: int) -> Callable[..., SSAValue]:
    """GRU with linear_before_reset = 0, ONNX's default (rlx.gru, as PyTorch, resets after
    the hidden state's linear map): h~ = tanh(x Wh + (r * h) Rh + Rbh + Wbh), ONNX's gate
    order z, r, h. Body arguments (h, Rzr, Rh, Rbh, projected x_t) -> h'."""

    def step(b: Builder, h: SSAValue, r_zr: SSAValue, r_h: SSAValue, rb_h: SSAValue, p: SSAValue) -> SSAValue:
        zr = b.sigmoid(b.add(b.narrow(p, 1, 0, 2 * hidden), b.matmul(h, r_zr, False, True)))
        z, reset = b.narrow(zr, 1, 0, hidden), b.narrow(zr, 1, hidden, hidden)
        candidate = b.tanh(
            b.add(b.narrow(p, 1, 2 * hidden, hidden), b.add(b.matmul(b.mul(reset, h), r_h, False, True), rb_h))
        )
        return b.add(candidate, b.mul(z, b.sub(h, candidate)))  # (1 - z) * candidate + z * h

    return step


def _peephole_lstm_step(hidden: int) -> Callable[..., SSAValue]:
    """LSTM with peepholes P = (Pi, Po, Pf), which rlx.lstm does not take: the input and
    forget gates see c_{t-1}, the output gate c_t; ONNX's gate order i, o, f, c. Body
    arguments ([h, c], R, P, projected x_t) -> [h', c']."""

    def step(b: Builder, hc: SSAValue, r: SSAValue, p: SSAValue, x_t: SSAValue) -> SSAValue:
        h, c = b.narrow(hc, 1, 0, hidden), b.narrow(hc, 1, hidden, hidden)
        g = b.add(x_t, b.matmul(h, r, False, True))  # [B, 4H]

        def gate(k: int) -> SSAValue:
            return b.narrow(g, 1, k * hidden, hidden)

        def peephole(k: int) -> SSAValue:
            return b.narrow(p, 0, k * hidden, hidden)

        i = b.sigmoid(b.add(gate(0), b.mul(peephole(0), c)))
        f = b.sigmoid(b.add(gate(2), b.mul(peephole(2), c)))
        c_next = b.add(b.mul(f, c), b.mul(i, b.tanh(gate(3))))
        o = b.sigmoid(b.add(gate(1), b.mul(peephole(1), c_next)))
        return b.concat([b.mul(o, b.tanh(c_next)), c_next], 1)

    return step


SCAN_CELLS = {
    "GRU": ScanCell(
        3,
        1,
        lambda wb, rb, h: wb + np.concatenate([rb[: 2 * h], np.zeros(h, wb.dtype)]),
        lambda r, rb, p, h: [r[: 2 * h], r[2 * h :], rb[2 * h :]],
        _gru_step,
    ),
    "LSTM": ScanCell(4, 2, lambda wb, rb, h: wb + rb, lambda r, rb, p, h: [r, p], _peephole_lstm_step),
}
"""The ONNX recurrences imported as scans: GRU with linear_before_reset = 0, LSTM with peepholes."""


def _name(array: np.ndarray) -> str:
    return NUMPY_NAMES[array.dtype]


def _state(ctx: Import, value: Value | None, shape: tuple[int, ...], element: str, layout: int) -> SSAValue:
    """An initial state in rlx's [D, B, H] (zeros for the one of h, c that is absent)."""
    if value is None:
        return ctx.builder.constant(np.zeros(shape), element)
    state = ctx.tensor(value)
    return ctx.builder.transpose(state, [1, 0, 2]) if layout == 1 else state


def _scan(ctx: Import, node: onnx.NodeProto, inputs: list[Value | None]) -> list[Value]:
    """ONNX Scan as rlx.scan. rlx's carry is one tensor, so the N state variables and
    the K per-step scan outputs (all of one element type) travel packed - flattened
    and concatenated - in a 1-D carry: the body unpacks the states, runs the body
    graph and packs the new states with this step's outputs. With scan outputs the
    scan saves its trajectory, whose row t holds step t's outputs. Scan input and
    output axes become transposes, reverse directions rlx.reverse on the time axis;
    outer values the body reads become the scan's broadcast inputs."""
    if ctx.opset < 9:
        raise Unsupported("Scan before opset 9 (a batch axis and sequence_lens) is not supported")
    b = ctx.builder
    body: onnx.GraphProto = node_attribute(node, "body")
    num_scans = int(node_attribute(node, "num_scan_inputs"))
    states = [ctx.tensor(v) for v in inputs[: len(inputs) - num_scans]]
    num_outputs = len(body.output) - len(states)
    xs = [
        _to_time_major(b, ctx.tensor(x), axis, reverse)
        for x, axis, reverse in zip(inputs[len(states) :], *_scan_layout(node, "input", num_scans))
    ]
    outer = _outer_values(ctx, body)
    run_time = {name: v for name, v in outer.items() if isinstance(v, SSAValue)}  # the scan's broadcast inputs
    step_types = [(shape_of(x.type)[1:], element_name(x)) for x in xs]
    probe = Builder("scan_body")
    probe_states = [probe.input(shape_of(s.type), element_name(s)) for s in states]
    probe_outputs = _scan_body(
        Import(probe, ctx.importers, opset=ctx.opset),
        body,
        probe_states,
        [probe.input(*t) for t in step_types],
        outer,
        probe_inputs=True,
    )
    pieces = [shape_of(v.type) for v in probe_outputs]
    elements = {element_name(v) for v in (*states, *probe_outputs)}
    if len(elements) != 1:
        raise Unsupported(f"state variables and scan outputs of several element types ({', '.join(sorted(elements))})")
    (element,) = elements
    sizes = [int(np.prod(p)) for p in pieces]
    init = _pack(b, [*states, *(b.constant(np.zeros(p), element) for p in pieces[len(states) :])])

    def step(inner: Builder, carry: SSAValue, *arguments: SSAValue) -> SSAValue:
        unpacked = _unpack(inner, carry, pieces[: len(states)], sizes)
        bound = {**outer, **dict(zip(run_time, arguments))}  # broadcast arguments come first
        values = _scan_body(
            Import(inner, ctx.importers, opset=ctx.opset), body, unpacked, list(arguments[len(run_time) :]), bound
        )
        return _pack(inner, values)

    result = b.scan(init, step, xs, list(run_time.values()), save_trajectory=num_outputs > 0)
    final = b.reshape(b.narrow(result, 0, shape_of(result.type)[0] - 1, 1), [sum(sizes)]) if num_outputs else result
    outputs: list[Value] = [*_unpack(b, final, pieces[: len(states)], sizes)]
    for k, (axis, reverse) in enumerate(zip(*_scan_layout(node, "output", num_outputs))):
        piece = len(states) + k
        column = b.narrow(result, 1, sum(sizes[:piece]), sizes[piece])
        stacked = b.reshape(column, [shape_of(result.type)[0], *pieces[piece]])
        outputs.append(_from_time_major(b, stacked, axis, reverse))
    return outputs


def _scan_layout(node: onnx.NodeProto, which: str, count: int) -> tuple[list[int], list[int]]:
    """Scan's `scan_{which}_axes` and `scan_{which}_directions` (0 and forward by default)."""
    axes = list(node_attribute(node, f"scan_{which}_axes", None) or [0] * count)
    directions = list(node_attribute(node, f"scan_{which}_directions", None) or [0] * count)
    return axes, directions


def _to_time_major(b: Builder, x: SSAValue, axis: int, reverse: int) -> SSAValue:
    """A scan input with its scanned axis first, in the order the steps read it."""
    rank = len(shape_of(x.type))
    axis %= rank
    if axis:
        x = b.transpose(x, [axis, *(a for a in range(rank) if a != axis)])
    return b.reverse(x, [0]) if reverse else x


def _from_time_major(b: Builder, y: SSAValue, axis: int, reverse: int) -> SSAValue:
    """Stacked scan outputs [steps, ...] moved to `axis`, reversed for a reverse direction."""
    if reverse:
        y = b.reverse(y, [0])
    rank = len(shape_of(y.type))
    axis %= rank
    if not axis:
        return y
    perm = list(range(1, rank))
    perm.insert(axis, 0)
    return b.transpose(y, perm)


def _outer_values(ctx: Import, body: onnx.GraphProto) -> dict[str, Value]:
    """The values of the enclosing graph the body reads by name (ONNX scoping)."""
    defined = {v.name for v in body.input} | {t.name for t in body.initializer}
    defined |= {name for n in body.node for name in n.output}
    used = {name for n in body.node for name in n.input if name and name not in defined}
    used |= {v.name for v in body.output if v.name not in defined}
    missing = sorted(name for name in used if name not in ctx.values)
    if missing:
        raise Unsupported(f"its body reads {', '.join(missing)}, which the enclosing graph does not define")
    return {name: ctx.values[name] for name in sorted(used)}


def _scan_body(
    ctx: Import,
    body: onnx.GraphProto,
    states: list[SSAValue],
    steps: list[SSAValue],
    outer: dict[str, Value],
    probe_inputs: bool = False,
) -> list[SSAValue]:
    """The body graph's outputs, imported with its inputs bound to (states, x_t) and
    the outer names to `outer` (outer run-time values become inputs of a probe)."""
    for name, value in outer.items():
        if isinstance(value, SSAValue) and probe_inputs:
            value = ctx.builder.input(shape_of(value.type), element_name(value))
        ctx.values[name] = value
    for tensor in body.initializer:
        ctx.values[tensor.name] = numpy_helper.to_array(tensor)
    for value, bound in zip(body.input, [*states, *steps]):
        ctx.values[value.name] = bound
    problems = import_nodes(ctx, body)
    if problems:
        raise Unsupported("its body: " + "; ".join(line.strip() for line in problems.lines()))
    return [ctx.tensor(ctx.values[v.name]) for v in body.output]


def _pack(b: Builder, values: list[SSAValue]) -> SSAValue:
    """The values flattened and concatenated into one 1-D tensor."""
    flat = [b.reshape(v, [int(np.prod(shape_of(v.type)))]) for v in values]
    return flat[0] if len(flat) == 1 else b.concat(flat, 0)


def _unpack(b: Builder, packed: SSAValue, shapes: list[tuple[int, ...]], sizes: list[int]) -> list[SSAValue]:
    """The first len(shapes) pieces of a packed 1-D tensor, in their shapes."""
    starts = np.cumsum([0, *sizes])
    return [b.reshape(b.narrow(packed, 0, int(starts[k]), sizes[k]), list(shape)) for k, shape in enumerate(shapes)]


IMPORTERS: dict[str, Importer] = {
    **{op: _recurrent for op in RECURRENT},
    "Scan": _scan,
}
"""The importers of the recurrent ops and of Scan."""
