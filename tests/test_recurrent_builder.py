"""The Builder methods of the recurrent ops: result types from the dialect's
shape rules, the two state groups, and bad arguments as VerificationError."""

from __future__ import annotations

import pytest

from rlx_mlir.builder import Builder
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.errors import VerificationError


def shapes(values: tuple) -> list[tuple[int, ...]]:
    return [shape_of(v.type) for v in values]


def test_lstm_two_layers_bidirectional_types_y_and_state() -> None:
    b = Builder()
    lens = rc.rnn_expected_lens(4, 2, 5, 3, 8, 2, True)
    x, wi, wh, bias = b.input((2, 5, 3)), b.input((lens.w_ih,)), b.input((lens.w_hh,)), b.input((lens.bias,))
    h0, c0 = b.input((4, 2, 8)), b.input((4, 2, 8))
    out = b.lstm(x, wi, wh, bias, 8, num_layers=2, bidirectional=True, state=[h0, c0], return_state=True)
    assert shapes(out) == [(2, 5, 16), (4, 2, 8), (4, 2, 8)]
    b.output(*out)
    assert "rlx.lstm" in str(b.module())


def test_state_out_without_state_in() -> None:
    b = Builder()
    lens = rc.rnn_expected_lens(3, 1, 4, 2, 3, 1, False)
    x = b.input((1, 4, 2))
    weights = [b.input((n,)) for n in (lens.w_ih, lens.w_hh, lens.bias, lens.bias)]
    y, hn = b.gru(x, *weights, 3, return_state=True)
    assert shapes((y, hn)) == [(1, 4, 3), (1, 1, 3)]
    r = b.rnn(x, b.input((6,)), b.input((9,)), b.input((3,)), 3, nonlinearity="relu", state=[hn])  # H 3, I 2
    assert shape_of(r.type) == (1, 4, 3)
    b.output(y, r)
    b.module()


def test_scans_read_their_sizes_off_the_operands() -> None:
    b = Builder()
    x, dt, a, bc = b.input((1, 6, 2, 3)), b.input((1, 6, 2)), b.input((2,)), b.input((1, 6, 2, 5))
    y, state = b.mamba2(x, dt, a, bc, bc, return_state=True)
    assert shapes((y, state)) == [(1, 6, 2, 3), (1, 2, 3, 5)]
    u, sa, sb = b.input((1, 6, 4)), b.input((4, 7)), b.input((1, 6, 7))
    z, zs = b.selective_scan(u, u, sa, sb, sb, return_state=True)
    assert shapes((z, zs)) == [(1, 6, 4), (1, 4, 7)]
    q, g = b.input((1, 6, 2, 3)), b.input((1, 6, 2))
    o, s = b.gated_delta_net(q, q, q, q, g, return_state=True)  # g with q's rank: per-channel gate
    assert shapes((o, s)) == [(1, 6, 2, 3), (1, 2, 3, 3)]
    assert "gate_per_channel = true" in str(o.owner)
    b.output(y, state, z, zs, o, s)
    b.module()


def test_mis_sized_weight_is_a_verification_error_naming_both_counts() -> None:
    b = Builder()
    x = b.input((2, 5, 3))
    b.output(b.lstm(x, b.input((47,)), b.input((64,)), b.input((16,)), 4))
    with pytest.raises(VerificationError, match="operand 'w_ih' has 47 elements, expected 48"):
        b.module()


def test_bad_rank_is_a_verification_error_not_a_traceback() -> None:
    b = Builder()
    x = b.input((5, 3))  # no batch axis
    b.output(b.rnn(x, b.input((12,)), b.input((16,)), b.input((4,)), 4))
    with pytest.raises(VerificationError, match="operand 'x' must have rank 3"):
        b.module()
