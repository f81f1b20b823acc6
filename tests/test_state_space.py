"""rlx.mamba2 and rlx.selective_scan against float64 NumPy references.

The references are the ops' semantics written as loops over time, vectorized
over everything else (dialects/recurrent.py):
- mamba2: dA = exp(dt·a[h]); S = dA·S + (dt·x) ⊗ b; y = S·c, per (batch, head);
- selective scan: h = exp(Δ·A[d]) ⊙ h + Δ·x·B; y = Σₙ C·h, per (batch, channel).
They run on the inputs as the kernel sees them (rounded to the element type),
so the only differences are the kernel's arithmetic (f32 for f16/bf16) and
the one final rounding of f16/bf16 outputs and states:
    |got − ref| <= 2·u_out·|ref| + TOL[dtype]·max|ref|.

Mamba2 has three forms (lowering/kernels/state_space.py): direct (decode), blocked
(the sequential scan in row blocks) and chunked (SSD), picked by thresholds
on S; every Mamba2 case runs all three (the `form_tuning` fixture overrides
the thresholds), and the chunked form is compared with the sequential one
directly (1e-4 relative), on a length that is not a multiple of the chunk.
Both ops also run for the AVX2 target (x86-64-v3: 32-byte vectors).
Inputs keep the decays in (0, 1) as in Mamba (dt = softplus(.) > 0, a < 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ml_dtypes
import numpy as np
import pytest
from closeness import assert_close, largest

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.tuning import NEVER

NUMPY = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
UNIT_ROUNDOFF = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}
TOL = {"f16": 1e-5, "bf16": 1e-5, "f32": 1e-5, "f64": 1e-12}
"""Error of the computation relative to the largest |ref| (f16/bf16 compute in f32)."""
DTYPES = tuple(NUMPY)
Overrides = Mapping[str, int]
"""Tuning knobs a compile sets explicitly (`rlx.compile(..., tuning=)`)."""


# ---------------------------------------------------------------------------
# references (float64)
# ---------------------------------------------------------------------------


def mamba2_reference(x, dt, a, b, c, state=None):
    """y [B,S,H,P] and the final state [B,H,P,N]."""
    batch, seq, heads, p = x.shape
    s = np.zeros((batch, heads, p, b.shape[-1])) if state is None else state.astype(np.float64)
    y = np.zeros((batch, seq, heads, p))
    for t in range(seq):
        decay = np.exp(dt[:, t] * a)[..., None, None]
        s = decay * s + (dt[:, t, :, None] * x[:, t])[..., None] * b[:, t, :, None, :]
        y[:, t] = np.einsum("bhpn,bhn->bhp", s, c[:, t])
    return y, s


def selective_scan_reference(x, delta, a, b, c, state=None):
    """y [B,S,D] and the final state [B,D,N]."""
    batch, seq, channels = x.shape
    h = np.zeros((batch, channels, a.shape[1])) if state is None else state.astype(np.float64)
    y = np.zeros((batch, seq, channels))
    for t in range(seq):
        h = np.exp(delta[:, t, :, None] * a) * h + (delta[:, t] * x[:, t])[..., None] * b[:, t, None, :]
        y[:, t] = np.einsum("bdn,bn->bd", h, c[:, t])
    return y, h


# ---------------------------------------------------------------------------
# inputs and executables
# ---------------------------------------------------------------------------


def softplus(v: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(v))


def mamba2_inputs(batch: int, seq: int, heads: int, p: int, n: int, seed: int = 0) -> list[np.ndarray]:
    """x, dt, a, b, c, state (float64)."""
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal((batch, seq, heads, p)),
        softplus(rng.standard_normal((batch, seq, heads)) - 1.0),
        -np.exp(0.5 * rng.standard_normal(heads)),
        rng.standard_normal((batch, seq, heads, n)) / np.sqrt(n),
        rng.standard_normal((batch, seq, heads, n)),
        rng.standard_normal((batch, heads, p, n)),
    ]


def scan_inputs(batch: int, seq: int, channels: int, n: int, seed: int = 0) -> list[np.ndarray]:
    """x, delta, a, b, c, state (float64)."""
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal((batch, seq, channels)),
        softplus(rng.standard_normal((batch, seq, channels)) - 1.0),
        -np.exp(0.5 * rng.standard_normal((channels, n))),
        rng.standard_normal((batch, seq, n)),
        rng.standard_normal((batch, seq, n)) / np.sqrt(n),
        rng.standard_normal((batch, channels, n)),
    ]


def compile_scan(
    kind: str,
    shapes: Sequence[tuple[int, ...]],
    dtype: str,
    with_state: bool,
    return_state: bool,
    threads: int = 2,
    tuning: Overrides | None = None,
    target: str | None = None,
):
    b = Builder(kind)
    values = [b.input(shape, dtype) for shape in shapes[:5]]
    state = b.input(shapes[5], dtype) if with_state else None
    method = b.mamba2 if kind == "mamba2" else b.selective_scan
    out = method(*values, state=state, return_state=return_state)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    return rlx.compile(b.module(), threads=threads, target=target, tuning=tuning)


REFERENCE = {"mamba2": mamba2_reference, "selective_scan": selective_scan_reference}


def run(
    kind: str,
    inputs: list[np.ndarray],
    dtype: str,
    with_state: bool = True,
    return_state: bool = True,
    threads: int = 2,
    tuning: Overrides | None = None,
    target: str | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(kernel results as float64, references on the rounded inputs); `tuning` and
    `target` as `rlx.compile` takes them."""
    rounded = [v.astype(NUMPY[dtype]) for v in inputs]
    args = rounded if with_state else rounded[:5]
    exe = compile_scan(kind, [v.shape for v in inputs], dtype, with_state, return_state, threads, tuning, target)
    got = [np.asarray(r, dtype=np.float64) for r in exe(*args)]
    wide = [v.astype(np.float64) for v in args]
    ref = list(REFERENCE[kind](*wide))
    return got, ref[: len(got)]


def assert_scan_close(got: np.ndarray, ref: np.ndarray, dtype: str) -> None:
    """The bound of the module docstring, in tests/closeness.py's model."""
    assert_close(got, ref, rtol=2 * UNIT_ROUNDOFF[dtype], atol=TOL[dtype] * largest(ref))


FORMS: dict[str, Overrides] = {
    form: {"mamba2_chunked_min_seq": chunked, "mamba2_direct_max_seq": direct}
    for form, chunked, direct in (("direct", NEVER, NEVER), ("blocked", NEVER, 0), ("chunked", 1, 0))
}
"""The tuning overrides that force each of Mamba2's forms at every length."""


@pytest.fixture(params=list(FORMS))
def form_tuning(request) -> Overrides:
    """Runs the test with each of Mamba2's forms: the overrides to compile with."""
    return FORMS[request.param]


# ---------------------------------------------------------------------------
# Mamba2
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_mamba2_every_dtype(dtype: str, form_tuning: Overrides) -> None:
    """State in and out; 70 steps = one full chunk and a tail of 6."""
    got, ref = run("mamba2", mamba2_inputs(2, 70, 3, 8, 16), dtype, tuning=form_tuning)
    for g, r in zip(got, ref):
        assert_scan_close(g, r, dtype)


@pytest.mark.parametrize(("with_state", "return_state"), [(False, False), (False, True), (True, False)])
def test_mamba2_state_groups(with_state: bool, return_state: bool, form_tuning: Overrides) -> None:
    """Absent state starts at zero; an absent state result is not computed."""
    got, ref = run(
        "mamba2", mamba2_inputs(2, 20, 2, 8, 16, seed=1), "f64", with_state, return_state, tuning=form_tuning
    )
    assert len(got) == 1 + return_state
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f64")


def assert_state_carries(
    kind: str, inputs: Sequence[np.ndarray], split: int, dtype: str, tuning: Overrides | None = None
) -> None:
    """One call over all steps equals a call over the first `split` steps, then
    one over the rest taking its final state (streaming decode). `inputs` are
    the op's five operands and a state; the third (`a`) has no time axis."""
    operands = [v.astype(NUMPY[dtype]) for v in inputs[:5]]

    def steps(lo: int, hi: int | None) -> list[np.ndarray]:
        return [v if k == 2 else v[:, lo:hi] for k, v in enumerate(operands)]

    def call(args: list[np.ndarray], state: np.ndarray | None = None) -> list[np.ndarray]:
        shapes = [v.shape for v in args] + ([state.shape] if state is not None else [])
        exe = compile_scan(kind, shapes, dtype, state is not None, True, tuning=tuning)
        return exe(*args, *([state] if state is not None else []))

    y, s = call(operands)
    y1, s1 = call(steps(0, split))
    y2, s2 = call(steps(split, None), s1)
    tol = {"f32": 1e-5, "f64": 1e-12}[dtype]
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), y, rtol=tol, atol=tol * np.abs(y).max())
    np.testing.assert_allclose(s2, s, rtol=tol, atol=tol * np.abs(s).max())


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_mamba2_carried_state(dtype: str, form_tuning: Overrides) -> None:
    """One call over S steps == a call over S1 steps then one over S2 taking its state."""
    assert_state_carries("mamba2", mamba2_inputs(1, 90, 2, 8, 16, seed=2), 65, dtype, form_tuning)


@pytest.mark.parametrize("shape", [(1, 1, 1, 1, 1), (1, 1, 4, 16, 32), (3, 5, 1, 3, 5), (1, 17, 2, 40, 24)])
def test_mamba2_edge_sizes(shape: tuple[int, ...], form_tuning: Overrides) -> None:
    """B = 1, S = 1 (one decode step with a state), odd P and N."""
    got, ref = run("mamba2", mamba2_inputs(*shape, seed=3), "f64", tuning=form_tuning)
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f64")


def test_mamba2_row_blocks() -> None:
    """A state larger than mamba2_state_block_bytes: the blocked form splits P into
    row blocks (here 40 rows = 16 + 16 + a partial block of 8 for f32)."""
    tuning = {**FORMS["blocked"], "mamba2_state_block_bytes": 16 * 24 * 4}
    got, ref = run("mamba2", mamba2_inputs(2, 9, 2, 40, 24, seed=4), "f32", tuning=tuning)
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f32")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_mamba2_held_decay_rescaled(dtype: str) -> None:
    """The blocked form holds the state divided by its running decay and multiplies
    the decay back in when it leaves [2^-40, 2^40]: head 0 decays by e^-40 a step
    (out of range at every block), head 1 by e^-1 (every ~28 steps), head 2 grows
    by e^0.75 a step (every ~37 steps), head 3 has a zero decay (a = -inf)."""
    x, dt, a, b, c, s0 = mamba2_inputs(1, 61, 4, 8, 16, seed=6)
    dt[:] = 1.0
    a[:] = [-40.0, -1.0, 0.75, -np.inf]
    got, ref = run("mamba2", [x, dt, a, b, c, s0], dtype, tuning=FORMS["blocked"])
    for g, r, head_axis in zip(got, ref, (2, 1)):  # y [B,S,H,P], state [B,H,P,N]
        for head in range(4):  # each against its own scale (head 2 grows to ~e^45)
            assert_scan_close(np.take(g, head, axis=head_axis), np.take(r, head, axis=head_axis), dtype)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_mamba2_chunked_matches_sequential(dtype: str) -> None:
    """The two forms within 1e-4 relative on 2 chunks + 22 steps, with 2 threads
    (large enough for the entry to split the units)."""
    inputs = [v.astype(NUMPY[dtype]) for v in mamba2_inputs(2, 150, 3, 16, 32, seed=5)]
    results = {}
    for name in ("blocked", "chunked"):
        exe = compile_scan("mamba2", [v.shape for v in inputs], dtype, True, True, tuning=FORMS[name])
        results[name] = exe(*inputs)
    for chunked, sequential in zip(results["chunked"], results["blocked"]):
        np.testing.assert_allclose(chunked, sequential, rtol=1e-4, atol=1e-4 * np.abs(sequential).max())


def test_mamba2_chunked_long_decay() -> None:
    """Decays that underflow within a chunk (segment sums down to about -1e4)
    stay finite: the clamped segment sums never form exp(a)·exp(-b)."""
    x, dt, a, b, c, s0 = mamba2_inputs(1, 80, 2, 4, 8, seed=6)
    got, ref = run("mamba2", [x, dt * 200.0, a, b, c, s0], "f32", tuning=FORMS["chunked"])
    for g, r in zip(got, ref):
        assert np.isfinite(g).all()
        assert_scan_close(g, r, "f32")


@pytest.mark.parametrize("form", list(FORMS))
def test_mamba2_large_state_falls_back(form: str) -> None:
    """A state too large for the chunked or direct form's stack workspace (4 MiB
    here: P = 64, N = 16384, f16 computed in f32) runs the blocked form, whose
    row blocks fit (one vector of rows: 16 with AVX-512, 1 MiB; 8 with AVX2)."""
    got, ref = run("mamba2", mamba2_inputs(1, 2, 1, 64, 1 << 14, seed=7), "f16", with_state=False, tuning=FORMS[form])
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f16")


def test_mamba2_workspace_too_large() -> None:
    """A state whose smallest row block does not fit is a ValueError naming the op."""
    b = Builder("big")
    shapes = [(1, 1, 1, 16), (1, 1, 1), (1,), (1, 1, 1, 1 << 16), (1, 1, 1, 1 << 16)]
    b.output(b.mamba2(*[b.input(s, "f64") for s in shapes]))
    with pytest.raises(rlx.CompileError, match="'rlx.mamba2' needs a .* byte workspace"):
        rlx.compile(b.module())


# ---------------------------------------------------------------------------
# selective scan
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_selective_scan_every_dtype(dtype: str) -> None:
    """70 channels = a full block of 64 and 6; N = 20 = a group of 16 and 4."""
    got, ref = run("selective_scan", scan_inputs(2, 12, 70, 20), dtype)
    for g, r in zip(got, ref):
        assert_scan_close(g, r, dtype)


@pytest.mark.parametrize(("with_state", "return_state"), [(False, False), (False, True), (True, False)])
def test_selective_scan_state_groups(with_state: bool, return_state: bool) -> None:
    got, ref = run("selective_scan", scan_inputs(2, 10, 9, 4, seed=1), "f64", with_state, return_state)
    assert len(got) == 1 + return_state
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f64")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_selective_scan_carried_state(dtype: str) -> None:
    """One call over S steps == a call over S1 steps then one over S2 taking its state."""
    assert_state_carries("selective_scan", scan_inputs(2, 30, 70, 16, seed=2), 11, dtype)


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (1, 1, 130, 16), (3, 4, 5, 3), (1, 40, 256, 16)])
def test_selective_scan_edge_sizes(shape: tuple[int, ...]) -> None:
    """B = 1, S = 1, one channel and state, several blocks split over 2 threads."""
    got, ref = run("selective_scan", scan_inputs(*shape, seed=3), "f32")
    for g, r in zip(got, ref):
        assert_scan_close(g, r, "f32")


def test_selective_scan_decays_out_of_range() -> None:
    """Steps whose |Δ·A·log2e| leaves the range of exp2_product_in_range (every
    other step here, and a channel with A = -inf) take math_approx.exp2_product:
    decays underflow to 0 and nothing becomes NaN."""
    x, delta, a, b, c, h0 = scan_inputs(1, 8, 70, 16, seed=5)
    delta[:, ::2] *= 200.0
    a[3, 5] = -np.inf
    got, ref = run("selective_scan", [x, delta, a, b, c, h0], "f32")
    for g, r in zip(got, ref):
        assert np.isfinite(g).all()
        assert_scan_close(g, r, "f32")


AVX2 = "x86-64-v3"
"""The AVX2 target: 32-byte vectors, so Mamba2's row blocks are whole 8-lane f32
vectors and the selective scan's units 32 channels (`scan_channel_block`)."""


@pytest.mark.target_independent
@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize(
    ("kind", "shape", "tuning"),
    [
        ("mamba2", (2, 70, 3, 8, 16), FORMS["direct"]),
        ("mamba2", (2, 70, 3, 42, 24), {**FORMS["blocked"], "mamba2_state_block_bytes": 12 * 24 * 4}),
        ("mamba2", (2, 70, 3, 8, 16), FORMS["chunked"]),
        ("selective_scan", (2, 12, 70, 20), None),
    ],
    ids=["mamba2_direct", "mamba2_row_blocks", "mamba2_chunked", "selective_scan"],
)
def test_avx2_target(kind: str, shape: tuple[int, ...], tuning: Overrides | None, dtype: str) -> None:
    """Both ops compiled for x86-64-v3 match the reference as the host target's build
    does: Mamba2 in each form (P = 42 in row blocks of one vector, 8 rows in f32 and 4
    in f64 where AVX-512 takes 16 and 8, the last one partial), the selective scan over
    70 channels (two units of 32, then 6)."""
    inputs = [v.astype(NUMPY[dtype]) for v in (mamba2_inputs if kind == "mamba2" else scan_inputs)(*shape, seed=9)]
    exe = compile_scan(kind, [v.shape for v in inputs], dtype, True, True, tuning=tuning, target=AVX2)
    assert exe.tuning.vector_bytes == 32
    ref = REFERENCE[kind](*(v.astype(np.float64) for v in inputs))
    for g, r in zip(exe(*inputs), ref):
        assert_scan_close(np.asarray(g, np.float64), r, dtype)
