"""Recurrent ops of the `rlx` dialect: LSTM, GRU, RNN and the state-space scans
(Mamba2, selective scan, gated delta net).

```mlir
%y, %hn, %cn = rlx.lstm %x, %w_ih, %w_hh, %bias, %h0, %c0 {hidden_size = 64 : i64, num_layers = 2 : i64,
    bidirectional = true} : (tensor<8x16x32xf32>, ..., tensor<4x8x64xf32>, tensor<4x8x64xf32>)
    -> (tensor<8x16x128xf32>, tensor<4x8x64xf32>, tensor<4x8x64xf32>)
%o = rlx.gated_delta_net %q, %k, %v, %g, %beta {state_size = 64 : i64} : (...) -> tensor<1x128x4x64xf32>
```

**State.** Each op ends with one variadic group of state operands and one of
state results (LSTM: `h, c`; the others one tensor). A group is present or
absent as a whole and the two are independent: absent state starts at zero,
and an absent state result is not computed, so the first call of a stream can
return the state without taking one. One call over S steps equals two calls
over S1 + S2 steps with the state of the first passed to the second.

**Packing** (LSTM, GRU, RNN; PyTorch's layout, `batch_first`). `w_ih` is the
concatenation, per layer and then per direction, of PyTorch's
`weight_ih_l{k}{,_reverse}` ([G·H, I] for layer 0, [G·H, D·H] above it);
`w_hh` and the biases likewise (G = 4 gates i, f, g, o for LSTM; 3 gates
r, z, n for GRU; 1 for RNN). LSTM and RNN take one merged bias `b_ih + b_hh`;
GRU keeps both, as its `n` gate needs them apart:
`n = tanh(x·W_inᵀ + b_in + r ⊙ (h·W_hnᵀ + b_hn))`. Weight operands may have
any shape: their element counts are what is checked (`rnn_expected_lens`).
States are [L·D, B, H], layer-major then direction.

**Scans.** Per (batch, head) with state S:
- `mamba2`: dA = exp(dt·a[h]); S = dA·S + (dt·x) ⊗ b; y = S·c.
- `selective_scan`: h = exp(Δ·A)·h + Δ·B·x; y = Σₙ C·h (per channel d).
- `gated_delta_net`: S *= exp(g); u = β·(v − Sᵀk); S += k ⊗ u;
  out = Sᵀq / √N. With `gate_per_channel`, g is [B,S,H,N] and row i of S
  (the key dimension) decays by exp(g_i).

Element types: every op takes f32 and f64; the scans also take f16 and bf16,
computed in f32 and rounded once on output and on the state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, var_operand_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import (
    NeedsScratch,
    TensorOp,
    bool_attr,
    check_same_element_type,
    element_type,
    holds_constant,
    i64_attr,
    shape_of,
)

FLOAT_TYPES = ("f32", "f64")
SCAN_TYPES = ("f16", "bf16", "f32", "f64")
NONLINEARITIES = ("tanh", "relu")


@dataclass(frozen=True)
class RnnLens:
    """The element count of each operand and result of an RNN-family op."""

    x: int
    w_ih: int
    w_hh: int
    bias: int
    state: int
    out: int


def rnn_expected_lens(
    gates: int, batch: int, seq: int, input_size: int, hidden: int, num_layers: int, bidirectional: bool
) -> RnnLens:
    """Element counts for `gates` gate blocks per layer and direction (LSTM 4, GRU 3, RNN 1)."""
    dirs = 2 if bidirectional else 1
    w_ih = sum(dirs * gates * hidden * (input_size if layer == 0 else dirs * hidden) for layer in range(num_layers))
    return RnnLens(
        x=batch * seq * input_size,
        w_ih=w_ih,
        w_hh=num_layers * dirs * gates * hidden * hidden,
        bias=num_layers * dirs * gates * hidden,
        state=num_layers * dirs * batch * hidden,
        out=batch * seq * dirs * hidden,
    )


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


class StatefulOp(TensorOp, NeedsScratch, ABC):
    """The skeleton of every recurrent op: the named operands each op class
    declares, then the variadic state group (declared here, so that it comes
    last); the output, then the variadic state-result group. `STATES` names
    the tensors a state group holds when present."""

    ALLOWED: ClassVar[tuple[str, ...]] = FLOAT_TYPES
    STATES: ClassVar[tuple[str, ...]]
    FINAL_STATES: ClassVar[tuple[str, ...]]
    OUTPUT: ClassVar[str] = "y"

    initial_state = var_operand_def(TensorType)
    output = result_def(TensorType)
    final_state = var_result_def(TensorType)

    @classmethod
    def input_names(cls) -> tuple[str, ...]:
        """The named operands, in order (the op definition's, minus the state group)."""
        return tuple(name for name, _ in cls.get_irdl_definition().operands[:-1])

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return tuple(self.operands[: len(self.input_names())])

    def input(self, name: str) -> SSAValue:
        return getattr(self, name)

    @property
    def carries_in(self) -> bool:
        return len(self.initial_state) > 0

    @property
    def carries_out(self) -> bool:
        return len(self.final_state) > 0

    @property
    def element(self) -> dtypes.DType:
        return dtypes.from_ir(element_type(self.output.type))

    # verification ----------------------------------------------------------
    def verify_rules(self) -> None:
        self._check_groups()
        dtype = dtypes.from_ir(element_type(self.operands[0].type))
        if dtype.name not in self.ALLOWED:
            raise VerifyException(f"'{self.name}' element type {dtype.name} is not one of {', '.join(self.ALLOWED)}")
        for k, operand in enumerate(self.operands[1:], 1):
            check_same_element_type(self, self._operand_name(k), operand, self.operands[0])
        for k, result in enumerate(self.results):
            check_same_element_type(self, "result #" + str(k), result, self.operands[0])
        self.verify_shapes()
        self.check_shape(self.output, f"result '{self.OUTPUT}'", self.output_shape())
        state = self.state_shape()
        for value, name in zip(self.initial_state, self.STATES):
            self.check_shape(value, f"state operand '{name}'", state)
        for value, name in zip(self.final_state, self.FINAL_STATES):
            self.check_shape(value, f"state result '{name}'", state)

    def _check_groups(self) -> None:
        groups = (
            (self.initial_state, "state operands", self.STATES),
            (self.final_state, "state results", self.FINAL_STATES),
        )
        for group, what, names in groups:
            if len(group) not in (0, len(names)):
                listed = f"{len(names)} {what} ({', '.join(names)})"
                raise VerifyException(f"'{self.name}' takes all {listed} or none, got {len(group)}")

    def _operand_name(self, k: int) -> str:
        names = self.input_names()
        if k < len(names):
            return f"operand '{names[k]}'"
        return f"state operand '{self.STATES[k - len(names)]}'"

    def check_shape(self, value: SSAValue, what: str, expected: Sequence[int]) -> None:
        got = shape_of(value.type)
        if got != tuple(expected):
            expected_text = _shape_text(expected)
            raise VerifyException(f"'{self.name}' {what} has shape {_shape_text(got)}, expected {expected_text}")

    def check_rank(self, name: str, rank: int) -> tuple[int, ...]:
        shape = shape_of(self.input(name).type)
        if len(shape) != rank:
            raise VerifyException(f"'{self.name}' operand '{name}' must have rank {rank}, got {_shape_text(shape)}")
        return shape

    def positive(self, name: str) -> int:
        value = getattr(self, name).value.data
        if value < 1:
            raise VerifyException(f"'{self.name}' {name} must be at least 1, got {value}")
        return value

    @abstractmethod
    def verify_shapes(self) -> None:
        """The op's own rules on its properties and operand shapes."""

    @abstractmethod
    def output_shape(self) -> tuple[int, ...]:
        """The shape of the output, from the operands and properties (as are the
        two below, so that `Builder` can type the results before the op exists)."""

    @abstractmethod
    def state_shape(self) -> tuple[int, ...]:
        """The shape of each state tensor."""


# ---------------------------------------------------------------------------
# LSTM, GRU, RNN
# ---------------------------------------------------------------------------


class RnnFamilyOp(StatefulOp, ABC):
    """`{hidden_size, num_layers, bidirectional}` over x [B, S, I] (batch first):
    y [B, S, D·H] is the last layer's output, states are [L·D, B, H]."""

    STATES: ClassVar[tuple[str, ...]] = ("h0",)
    FINAL_STATES: ClassVar[tuple[str, ...]] = ("hn",)
    GATES: ClassVar[int]
    PACKED_SCRATCH: ClassVar[int] = 2
    """The position of the packed weights among `scratch_bytes`."""

    hidden_size = prop_def(IntegerAttr[I64])
    num_layers = prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    bidirectional = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        state: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        **extra: Attribute,
    ) -> None:
        props = {
            "hidden_size": i64_attr(hidden_size),
            "num_layers": i64_attr(num_layers),
            "bidirectional": bool_attr(bidirectional),
            **extra,
        }
        super().__init__(
            operands=[*inputs, list(state)], result_types=[result_types[0], list(result_types[1:])], properties=props
        )

    @property
    def directions(self) -> int:
        return 2 if self.bidirectional.value.data else 1

    @property
    def dims(self) -> tuple[int, int, int]:
        """(batch, seq, input_size)."""
        batch, seq, input_size = shape_of(self.input("x").type)
        return batch, seq, input_size

    def lens(self) -> RnnLens:
        batch, seq, input_size = self.dims
        hidden, layers = self.hidden_size.value.data, self.num_layers.value.data
        return rnn_expected_lens(self.GATES, batch, seq, input_size, hidden, layers, self.directions == 2)

    def weight_lens(self) -> dict[str, int]:
        lens = self.lens()
        return {"w_ih": lens.w_ih, "w_hh": lens.w_hh, **{name: lens.bias for name in self.input_names()[3:]}}

    @property
    def packs_once(self) -> bool:
        """Whether the kernels pack W_ih and W_hh on the first call only, into a kept
        scratch: both are constants of the function (a scan body's plan is
        reused at every step, so an op there packs on every call)."""
        weights = (self.input("w_ih"), self.input("w_hh"))
        return all(holds_constant(w) for w in weights) and isinstance(self.parent_op(), func.FuncOp)

    def packed_elements(self, layer: int) -> int:
        """The elements of `layer`'s W_hh and W_ih packed into column panels: D·G·H·(H + I_l)."""
        input_size = self.dims[2]
        hidden, dirs = self.hidden_size.value.data, self.directions
        return dirs * self.GATES * hidden * (hidden + (input_size if layer == 0 else dirs * hidden))

    def scratch_bytes(self) -> tuple[int, ...]:
        """The buffers of `lowering/kernels/rnn.py`, in this order: one layer's input
        projections [B·S, D·G·H]; the per-step products h·W_hhᵀ [D, B, G·H]; the
        packed weights: the widest layer's (`packed_elements`), or, when the
        op `packs_once`, every layer's one after the other and a flag element,
        set once they are packed; two ping-pong outputs [B, S, D·H] of the
        layers below the last (each empty when fewer layers need it); then per
        state tensor (h, LSTM's c) the running state [D, B, H], empty when the
        state results are present (the state then runs in place in them)."""
        batch, seq, _ = self.dims
        hidden, layers, dirs = self.hidden_size.value.data, self.num_layers.value.data, self.directions
        gates = self.GATES * hidden
        item = self.element.nbytes
        layer_out = batch * seq * dirs * hidden
        running = 0 if self.carries_out else dirs * batch * hidden
        per_layer = [self.packed_elements(layer) for layer in range(layers)]
        packed = sum(per_layer) + 1 if self.packs_once else max(per_layer)
        return (
            item * batch * seq * dirs * gates,
            item * dirs * batch * gates,
            item * packed,
            item * layer_out * (layers > 1),
            item * layer_out * (layers > 2),
            *(item * running for _ in self.STATES),
        )

    def kept_scratch(self) -> frozenset[int]:
        return frozenset({self.PACKED_SCRATCH}) if self.packs_once else frozenset()

    def verify_shapes(self) -> None:
        self.positive("hidden_size")
        self.positive("num_layers")
        _batch, _seq, _ = self.check_rank("x", 3)
        for name, expected in self.weight_lens().items():
            actual = numel(shape_of(self.input(name).type))
            if actual != expected:
                raise VerifyException(f"'{self.name}' operand '{name}' has {actual} elements, expected {expected}")

    def output_shape(self) -> tuple[int, ...]:
        batch, seq, _ = self.dims
        return (batch, seq, self.directions * self.hidden_size.value.data)

    def state_shape(self) -> tuple[int, ...]:
        batch = self.dims[0]
        return (self.num_layers.value.data * self.directions, batch, self.hidden_size.value.data)


@irdl_op_definition
class LstmOp(RnnFamilyOp):
    """`rlx.lstm`: gates i, f, g, o; c' = f⊙c + i⊙g, h' = o⊙tanh(c'); one merged bias."""

    name = "rlx.lstm"
    GATES: ClassVar[int] = 4
    STATES: ClassVar[tuple[str, ...]] = ("h0", "c0")
    FINAL_STATES: ClassVar[tuple[str, ...]] = ("hn", "cn")
    x = operand_def(TensorType)
    w_ih = operand_def(TensorType)
    w_hh = operand_def(TensorType)
    bias = operand_def(TensorType)


@irdl_op_definition
class GruOp(RnnFamilyOp):
    """`rlx.gru`: gates r, z, n; h' = (1 − z)⊙n + z⊙h, with separate b_ih and b_hh."""

    name = "rlx.gru"
    GATES: ClassVar[int] = 3
    x = operand_def(TensorType)
    w_ih = operand_def(TensorType)
    w_hh = operand_def(TensorType)
    b_ih = operand_def(TensorType)
    b_hh = operand_def(TensorType)


@irdl_op_definition
class RnnOp(RnnFamilyOp):
    """`rlx.rnn {nonlinearity}`: h' = act(x·W_ihᵀ + h·W_hhᵀ + bias), act tanh or relu."""

    name = "rlx.rnn"
    GATES: ClassVar[int] = 1
    x = operand_def(TensorType)
    w_ih = operand_def(TensorType)
    w_hh = operand_def(TensorType)
    bias = operand_def(TensorType)
    nonlinearity = prop_def(StringAttr, default_value=StringAttr("tanh"))

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        state: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        nonlinearity: str = "tanh",
    ) -> None:
        super().__init__(
            inputs, state, result_types, hidden_size, num_layers, bidirectional, nonlinearity=StringAttr(nonlinearity)
        )

    def verify_shapes(self) -> None:
        if self.nonlinearity.data not in NONLINEARITIES:
            raise VerifyException(
                f"'{self.name}' nonlinearity must be one of {', '.join(NONLINEARITIES)}, got '{self.nonlinearity.data}'"
            )
        super().verify_shapes()


# ---------------------------------------------------------------------------
# state-space scans
# ---------------------------------------------------------------------------


class ScanFamilyOp(StatefulOp, ABC):
    """A per-(batch, head) scan whose one state tensor is carried across calls."""

    ALLOWED: ClassVar[tuple[str, ...]] = SCAN_TYPES
    STATES: ClassVar[tuple[str, ...]] = ("state",)
    FINAL_STATES: ClassVar[tuple[str, ...]] = ("state",)

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        state: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        **props: Attribute,
    ) -> None:
        super().__init__(
            operands=[*inputs, list(state)], result_types=[result_types[0], list(result_types[1:])], properties=props
        )

    def attr_matches(self, name: str, dim: int, what: str) -> int:
        value = self.positive(name)
        if value != dim:
            raise VerifyException(f"'{self.name}' {name} {value} disagrees with {what} {dim}")
        return value


@irdl_op_definition
class Mamba2Op(ScanFamilyOp):
    """`rlx.mamba2 {head_dim, state_size}` (x [B,S,H,P], dt [B,S,H], a [H], b, c [B,S,H,N]):
    the SSD scalar-decay scan; state [B,H,P,N]."""

    name = "rlx.mamba2"
    x = operand_def(TensorType)
    dt = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    state_size = prop_def(IntegerAttr[I64])

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        state: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        head_dim: int,
        state_size: int,
    ) -> None:
        super().__init__(inputs, state, result_types, head_dim=i64_attr(head_dim), state_size=i64_attr(state_size))

    def verify_shapes(self) -> None:
        batch, seq, heads, p = self.check_rank("x", 4)
        self.attr_matches("head_dim", p, "the last dimension of x")
        n = self.attr_matches("state_size", self.check_rank("b", 4)[3], "the last dimension of b")
        self.check_shape(self.input("dt"), "operand 'dt'", (batch, seq, heads))
        self.check_shape(self.input("a"), "operand 'a'", (heads,))
        for name in ("b", "c"):
            self.check_shape(self.input(name), f"operand '{name}'", (batch, seq, heads, n))

    def output_shape(self) -> tuple[int, ...]:
        return shape_of(self.x.type)

    def state_shape(self) -> tuple[int, ...]:
        batch, _, heads, p = shape_of(self.input("x").type)
        return (batch, heads, p, self.state_size.value.data)


@irdl_op_definition
class SelectiveScanOp(ScanFamilyOp):
    """`rlx.selective_scan {state_size}` (x, delta [B,S,D], a [D,N], b, c [B,S,N]):
    Mamba's diagonal scan per channel; state [B,D,N]."""

    name = "rlx.selective_scan"
    x = operand_def(TensorType)
    delta = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    state_size = prop_def(IntegerAttr[I64])

    def __init__(
        self, inputs: Sequence[SSAValue], state: Sequence[SSAValue], result_types: Sequence[Attribute], state_size: int
    ) -> None:
        super().__init__(inputs, state, result_types, state_size=i64_attr(state_size))

    def verify_shapes(self) -> None:
        batch, seq, d = self.check_rank("x", 3)
        a = self.check_rank("a", 2)
        n = self.attr_matches("state_size", a[1], "the last dimension of a")
        self.check_shape(self.input("delta"), "operand 'delta'", (batch, seq, d))
        self.check_shape(self.input("a"), "operand 'a'", (d, n))
        for name in ("b", "c"):
            self.check_shape(self.input(name), f"operand '{name}'", (batch, seq, n))

    def output_shape(self) -> tuple[int, ...]:
        return shape_of(self.x.type)

    def state_shape(self) -> tuple[int, ...]:
        batch, _, d = shape_of(self.input("x").type)
        return (batch, d, self.state_size.value.data)


@irdl_op_definition
class GatedDeltaNetOp(ScanFamilyOp):
    """`rlx.gated_delta_net {state_size, gate_per_channel}` (q, k, v [B,S,H,N],
    g [B,S,H] or [B,S,H,N], beta [B,S,H]): the gated delta rule; state [B,H,N,N]."""

    name = "rlx.gated_delta_net"
    OUTPUT: ClassVar[str] = "out"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    g = operand_def(TensorType)
    beta = operand_def(TensorType)
    state_size = prop_def(IntegerAttr[I64])
    gate_per_channel = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        state: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        state_size: int,
        gate_per_channel: bool = False,
    ) -> None:
        super().__init__(
            inputs,
            state,
            result_types,
            state_size=i64_attr(state_size),
            gate_per_channel=bool_attr(gate_per_channel),
        )

    @property
    def per_channel(self) -> bool:
        return bool(self.gate_per_channel.value.data)

    def verify_shapes(self) -> None:
        batch, seq, heads, n = self.check_rank("q", 4)
        self.attr_matches("state_size", n, "the last dimension of q")
        for name in ("k", "v"):
            self.check_shape(self.input(name), f"operand '{name}'", (batch, seq, heads, n))
        gate = (batch, seq, heads, n) if self.per_channel else (batch, seq, heads)
        self.check_shape(self.input("g"), "operand 'g'", gate)
        self.check_shape(self.input("beta"), "operand 'beta'", (batch, seq, heads))

    def output_shape(self) -> tuple[int, ...]:
        return shape_of(self.q.type)

    def state_shape(self) -> tuple[int, ...]:
        batch, _, heads, n = shape_of(self.input("q").type)
        return (batch, heads, n, n)


RNN_OPS = (LstmOp, GruOp, RnnOp)
SCAN_OPS = (Mamba2Op, SelectiveScanOp, GatedDeltaNetOp)
RECURRENT_OPS = (*RNN_OPS, *SCAN_OPS)
