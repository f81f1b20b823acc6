"""rlx.lstm, rlx.gru and rlx.rnn against torch.nn.LSTM/GRU/RNN (batch_first).

torch is the reference: its parameters are packed as the ops take them
(`weight_ih_l{k}{,_reverse}` concatenated per layer then per direction; LSTM
and RNN take b_ih + b_hh as one bias) and both run on the same inputs in
the same precision. Tolerance: 1e-5 relative on float64 (the kernels'
polynomial sigmoid/tanh are a few ULPs off, far below it) and 1e-4 on f32,
with an absolute floor of the same size for values near zero.

Cases cover 1-3 layers, one and two directions, initial state present or
absent, state results present or absent (hn without h0), B = 1, S = 1,
I != H, the relu RNN, sizes that leave partial register tiles (rows past a
multiple of the tile's rows, gate columns past a multiple of the panel
width), 1 and 2 threads (the batch split into units), carried state: one
call over S steps equals two calls over S1 + S2 with the state passed on,
and the AVX2 target's narrower tiles and panels (x86-64-v3).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest
import torch  # the reference (a test dependency: the .[test] extra), never skipped
from closeness import assert_close

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.runtime import Executable

TOLERANCE = {"f32": 1e-4, "f64": 1e-5}
TORCH_TYPES = {"f32": torch.float32, "f64": torch.float64}
STATES = {"lstm": 2, "gru": 1, "rnn": 1}


@dataclass(frozen=True)
class Case:
    kind: str
    batch: int
    seq: int
    input_size: int
    hidden: int
    layers: int = 1
    bidirectional: bool = False
    state_in: bool = False
    state_out: bool = True
    nonlinearity: str = "tanh"

    @property
    def dirs(self) -> int:
        return 2 if self.bidirectional else 1

    def state_shape(self) -> tuple[int, int, int]:
        return (self.layers * self.dirs, self.batch, self.hidden)


def seed(case: Case) -> int:
    """A per-case seed that is the same in every process (str hashes are not)."""
    return zlib.crc32(repr(case).encode())


def torch_module(case: Case, dtype: str) -> torch.nn.Module:
    torch.manual_seed(seed(case))
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[case.kind]
    extra = {"nonlinearity": case.nonlinearity} if case.kind == "rnn" else {}
    module = cls(case.input_size, case.hidden, case.layers, batch_first=True, bidirectional=case.bidirectional, **extra)
    return module.to(TORCH_TYPES[dtype])


def packed_weights(module: torch.nn.Module, case: Case) -> list[np.ndarray]:
    """w_ih, w_hh, then the bias operands, as the ops take them."""
    suffixes = ("", "_reverse")[: case.dirs]

    def cat(name: str) -> np.ndarray:
        return np.concatenate(
            [getattr(module, f"{name}_l{k}{s}").detach().numpy().ravel() for k in range(case.layers) for s in suffixes]
        )

    w_ih, w_hh, b_ih, b_hh = (cat(n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    return [w_ih, w_hh, b_ih, b_hh] if case.kind == "gru" else [w_ih, w_hh, b_ih + b_hh]


def compile_case(
    case: Case,
    dtype: str,
    weights: list[np.ndarray],
    threads: int = 2,
    constant: bool = False,
    target: str | None = None,
) -> Executable:
    """The op over inputs x, the weights (or, `constant`, the weights as constants), [state],
    for `target` (None: the default)."""
    b = Builder(case.kind)
    x = b.input((case.batch, case.seq, case.input_size), dtype)
    operands = [b.constant(w, dtype) if constant else b.input(w.shape, dtype) for w in weights]
    state = [b.input(case.state_shape(), dtype) for _ in range(STATES[case.kind])] if case.state_in else None
    extra = {"nonlinearity": case.nonlinearity} if case.kind == "rnn" else {}
    results = getattr(b, case.kind)(
        x,
        *operands,
        hidden_size=case.hidden,
        num_layers=case.layers,
        bidirectional=case.bidirectional,
        state=state,
        return_state=case.state_out,
        **extra,
    )
    b.output(*(results if case.state_out else (results,)))
    return rlx.compile(b.module(), threads=threads, target=target)


def reference(module: torch.nn.Module, case: Case, x: np.ndarray, state: list[np.ndarray]) -> list[np.ndarray]:
    """y, then every state tensor, from torch."""
    given = [torch.from_numpy(s) for s in state]
    initial = (tuple(given) if case.kind == "lstm" else given[0]) if given else None
    with torch.no_grad():
        y, final = module(torch.from_numpy(x), initial)
    finals = final if case.kind == "lstm" else (final,)
    return [y.numpy(), *(f.numpy() for f in finals)]


def inputs(case: Case, dtype: str) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed(case))
    np_type = np.float32 if dtype == "f32" else np.float64
    x = rng.standard_normal((case.batch, case.seq, case.input_size)).astype(np_type)
    state = [rng.standard_normal(case.state_shape()).astype(np_type) for _ in range(STATES[case.kind])]
    return x, state if case.state_in else []


def assert_rnn_close(got: np.ndarray, want: np.ndarray, dtype: str, what: str) -> None:
    tol = TOLERANCE[dtype]
    assert_close(got, want, rtol=tol, atol=tol, what=what)


CASES = [
    Case("lstm", 2, 5, 3, 4),  # hn, cn without h0, c0
    Case("lstm", 3, 4, 5, 6, layers=2, bidirectional=True, state_in=True),
    Case("lstm", 1, 1, 4, 3, layers=3, bidirectional=True, state_out=False),  # B = 1, S = 1
    Case("lstm", 9, 3, 5, 37, bidirectional=True, state_in=True),  # partial row tiles and gate panels
    Case("gru", 2, 5, 3, 4),
    Case("gru", 3, 4, 5, 6, layers=2, bidirectional=True, state_in=True),
    Case("gru", 1, 1, 4, 3, layers=3, state_in=True, state_out=False),
    Case("gru", 9, 3, 5, 37, state_in=True),
    Case("rnn", 2, 5, 3, 4),
    Case("rnn", 3, 4, 5, 6, layers=3, bidirectional=True, state_in=True),
    Case("rnn", 1, 1, 4, 3, layers=2, bidirectional=True, state_out=False),
    Case("rnn", 9, 3, 5, 37, state_in=True),
    Case("rnn", 3, 4, 5, 6, layers=2, bidirectional=True, state_in=True, nonlinearity="relu"),
    Case("rnn", 2, 6, 3, 5, nonlinearity="relu"),
]


def case_id(case: Case) -> str:
    parts = [case.kind, f"B{case.batch}S{case.seq}I{case.input_size}H{case.hidden}L{case.layers}"]
    parts += ["bi"] if case.bidirectional else []
    parts += ["h0"] if case.state_in else []
    parts += ["hn"] if case.state_out else []
    parts += [case.nonlinearity] if case.kind == "rnn" else []
    return "-".join(parts)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_torch(case: Case, dtype: str) -> None:
    module = torch_module(case, dtype)
    weights = packed_weights(module, case)
    x, state = inputs(case, dtype)
    got = compile_case(case, dtype, weights)(x, *weights, *state)
    want = reference(module, case, x, state)
    assert len(got) == (len(want) if case.state_out else 1)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_rnn_close(g, w, dtype, f"{case_id(case)} result {k}")


@pytest.mark.parametrize("threads", [1, 2])
def test_threads_agree(threads: int) -> None:
    """One unit per thread (directions, then batch parts) or all on one: the same numbers."""
    case = Case("lstm", 9, 6, 7, 20, layers=2, state_in=True)
    module = torch_module(case, "f64")
    weights = packed_weights(module, case)
    x, state = inputs(case, "f64")
    got = compile_case(case, "f64", weights, threads=threads)(x, *weights, *state)
    for k, (g, w) in enumerate(zip(got, reference(module, case, x, state))):
        assert_rnn_close(g, w, "f64", f"threads={threads} result {k}")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_carried_state(kind: str, dtype: str) -> None:
    """S steps in one call == S1 steps, then S2 steps from the first call's final state.
    S1 = S2: both halves run one executable (a compile of its own per half was a third
    of the test), the second from the state the first returned."""
    seq, first = 8, 4
    whole = Case(kind, 3, seq, 4, 5, layers=2, bidirectional=False, state_in=True)
    half = Case(kind, 3, first, 4, 5, layers=2, state_in=True)
    module = torch_module(whole, dtype)
    weights = packed_weights(module, whole)
    x, state = inputs(whole, dtype)
    y, *final = compile_case(whole, dtype, weights)(x, *weights, *state)
    halves = compile_case(half, dtype, weights)
    y1, *middle = halves(x[:, :first].copy(), *weights, *state)
    y2, *end = halves(x[:, first:].copy(), *weights, *middle)
    assert_rnn_close(np.concatenate([y1, y2], axis=1), y, dtype, "y")
    for k, (g, w) in enumerate(zip(end, final)):
        assert_rnn_close(g, w, dtype, f"state {k}")
    for k, (g, w) in enumerate(zip(final, reference(module, whole, x, state)[1:])):
        assert_rnn_close(g, w, dtype, f"state {k} vs torch")


def test_first_call_of_a_stream_starts_from_zero() -> None:
    """No initial state is the zero state: the same as passing zeros explicitly."""
    case = Case("lstm", 2, 4, 3, 5, state_in=False)
    with_zeros = Case("lstm", 2, 4, 3, 5, state_in=True)
    module = torch_module(case, "f64")
    weights = packed_weights(module, case)
    x, _ = inputs(case, "f64")
    zeros = [np.zeros(case.state_shape()) for _ in range(2)]
    got = compile_case(case, "f64", weights)(x, *weights)
    want = compile_case(with_zeros, "f64", weights)(x, *weights, *zeros)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_zero_steps_pass_the_state_through(kind: str) -> None:
    """S = 0: y is empty and the final state is the initial state."""
    case = Case(kind, 2, 0, 3, 4, layers=2, state_in=True)
    module = torch_module(case, "f64")
    weights = packed_weights(module, case)
    x, state = inputs(case, "f64")
    y, *final = compile_case(case, "f64", weights)(x, *weights, *state)
    assert y.shape == (2, 0, 4)
    for got, given in zip(final, state, strict=True):
        np.testing.assert_array_equal(got, given)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("case", [CASES[1], CASES[5], CASES[9], CASES[3]], ids=case_id)
def test_constant_weights_are_packed_on_the_first_call_only(case: Case, dtype: str) -> None:
    """Weights that are constants are packed into a scratch the plan keeps for the
    executable's life, on the first call; later calls, on other inputs, skip the
    packing and must still match torch."""
    module = torch_module(case, dtype)
    weights = packed_weights(module, case)
    exe = compile_case(case, dtype, weights, constant=True)
    assert "_packed" in exe.llvm_ir  # the kernel that marks the weights packed
    rng = np.random.default_rng(seed(case))
    for call in range(3):
        x, state = inputs(case, dtype)
        x = (x + rng.standard_normal(x.shape)).astype(x.dtype)
        got = exe(x, *state)
        for k, (g, w) in enumerate(zip(got, reference(module, case, x, state))):
            assert_rnn_close(g, w, dtype, f"{case_id(case)} call {call} result {k}")


def test_kept_packing_is_not_shared_by_other_buffers_or_kernels() -> None:
    """Two LSTMs of one shape, one on constant weights (packed once, in a kept
    scratch) and one on input weights (packed every call), with intermediates
    around them that the plan would love to place over any scratch: both stay
    right over several calls, so neither the buffers nor the kernels are shared."""
    case = Case("lstm", 3, 4, 5, 6, layers=2, bidirectional=True)
    module = torch_module(case, "f32")
    weights = packed_weights(module, case)
    b = Builder("two")
    x = b.input((case.batch, case.seq, case.input_size), "f32")
    given = [b.input(w.shape, "f32") for w in weights]
    options = {"hidden_size": case.hidden, "num_layers": case.layers, "bidirectional": True}
    first = b.lstm(b.mul(x, b.constant(np.float32(2.0))), *[b.constant(w) for w in weights], **options)
    second = b.lstm(b.exp(b.mul(x, b.constant(np.float32(0.1)))), *given, **options)
    b.output(b.add(b.tanh(first), b.sigmoid(second)))
    exe = rlx.compile(b.module(), threads=2)
    rng = np.random.default_rng(1)
    for _ in range(3):
        xv = rng.standard_normal((case.batch, case.seq, case.input_size)).astype(np.float32)
        (got,) = exe(xv, *weights)
        y1 = reference(module, case, 2 * xv, [])[0]
        y2 = reference(module, case, np.exp(0.1 * xv).astype(np.float32), [])[0]
        np.testing.assert_allclose(got, np.tanh(y1) + 1 / (1 + np.exp(-y2)), rtol=1e-4, atol=1e-4)


AVX2_CASES = [
    Case("lstm", 9, 3, 5, 37, bidirectional=True, state_in=True),  # 6-row tiles and a 3-row tail, two-vector panels
    Case("gru", 9, 3, 5, 37, state_in=True),  # batch parts of 4 and 5 rows: one tile each, two-vector panels
    Case("gru", 2, 4, 6, 37, layers=2),  # parts of one row: eight-vector W_hh panels
]


@pytest.mark.target_independent
@pytest.mark.parametrize("constant", [False, True], ids=["inputs", "constants"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("case", AVX2_CASES, ids=case_id)
def test_avx2_target_matches_torch(case: Case, dtype: str, constant: bool) -> None:
    """Compiled for x86-64-v3 (AVX2; it runs on an AVX-512 host too): the
    projection and step tiles have 6 rows of 256-bit vectors and W_hh panels
    fit 12 accumulators; the weights are packed as the tiles read them, on
    every call or (constants) once, and the results match torch."""
    module = torch_module(case, dtype)
    weights = packed_weights(module, case)
    exe = compile_case(case, dtype, weights, constant=constant, target="x86-64-v3")
    assert exe.tuning.accumulators == 12 and exe.tuning.gemm_tile_rows == 6
    widest, wider = {"f32": ("<8 x float>", "<16 x float>"), "f64": ("<4 x double>", "<8 x double>")}[dtype]
    assert widest in exe.llvm_ir and wider not in exe.llvm_ir
    for call in range(2 if constant else 1):
        x, state = inputs(case, dtype)
        x = (x + call).astype(x.dtype)
        got = exe(x, *state) if constant else exe(x, *weights, *state)
        want = reference(module, case, x, state)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert_rnn_close(g, w, dtype, f"{case_id(case)} call {call} result {k}")
