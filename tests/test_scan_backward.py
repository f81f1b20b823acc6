"""`rlx.scan_backward`: an Elman RNN written as a scan, with its body's VJP
written from rlx ops, against torch.autograd (d_init, d_xs and d_W, a
broadcast input); every checkpoint mode bit-identical to the all-saved
sweep; the cotangent of a trajectory added step by step."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the reference for every gradient (a test dependency: the .[test] extra)

import rlx_mlir as rlx

B, H, LENGTH = 3, 5, 7


def step(b: rlx.Builder, h, w, x):
    """h' = tanh(h @ w + x)."""
    return b.tanh(b.add(b.matmul(h, w), x))


def step_vjp(b: rlx.Builder, h, w, x, d_next):
    """(dh, dw, dx) of `step` at (h, w, x) for the cotangent d_next of h'."""
    dz = b.activation_backward(b.add(b.matmul(h, w), x), d_next, "tanh")
    return b.matmul(dz, w, transpose_rhs=True), b.matmul(h, dz, transpose_lhs=True), dz


def program(dtype: str, checkpoints: int, trajectory_cotangent: bool, mode: str = "segments"):
    """The forward scan (saving what the backward reads) and the backward, in one function."""
    b = rlx.Builder("elman")
    h0, w, xs = b.input((B, H), dtype), b.input((H, H), dtype), b.input((LENGTH, B, H), dtype)
    rows = LENGTH if trajectory_cotangent else 0
    d_result = b.input((rows, B, H) if rows else (B, H), dtype)
    saved = b.scan(h0, step, [xs], [w], save_trajectory=True, num_checkpoints=checkpoints)
    forward = step if 0 < checkpoints < LENGTH else None
    grads = b.scan_backward(h0, saved, d_result, step_vjp, [xs], [w], forward, checkpoints, mode, cotangent_rows=rows)
    b.output(*grads)
    return rlx.compile(b.module())


def inputs(numpy_type: type, trajectory_cotangent: bool, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [(B, H), (H, H), (LENGTH, B, H), (LENGTH, B, H) if trajectory_cotangent else (B, H)]
    return [(rng.standard_normal(s) * 0.6).astype(numpy_type) for s in shapes]


def torch_gradients(h0, w, xs, d_result, trajectory_cotangent: bool) -> list[np.ndarray]:
    h0, w, xs = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (h0, w, xs))
    h, carries = h0, []
    for t in range(LENGTH):
        h = torch.tanh(h @ w + xs[t])
        carries.append(h)
    out = torch.stack(carries) if trajectory_cotangent else h
    (out * torch.tensor(d_result, dtype=torch.float64)).sum().backward()
    return [h0.grad.numpy(), w.grad.numpy(), xs.grad.numpy()]


@pytest.mark.parametrize("trajectory_cotangent", [False, True], ids=["final", "trajectory"])
@pytest.mark.parametrize("dtype, numpy_type, tolerance", [("f64", np.float64, 1e-12), ("f32", np.float32, 2e-5)])
def test_elman_gradients_match_torch_autograd(
    trajectory_cotangent: bool, dtype: str, numpy_type: type, tolerance: float
) -> None:
    exe = program(dtype, 0, trajectory_cotangent)
    values = inputs(numpy_type, trajectory_cotangent)
    got = exe(*values)
    want = torch_gradients(*values, trajectory_cotangent)
    for name, g, w in zip(("d_init", "d_w", "d_xs"), got, want):
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance, err_msg=name)


@pytest.mark.parametrize("mode", ["segments", "griewank"])
@pytest.mark.parametrize("checkpoints", [1, 2, 3, 6])
@pytest.mark.parametrize("trajectory_cotangent", [False, True], ids=["final", "trajectory"])
def test_checkpointed_sweep_is_bit_identical_to_the_all_saved_one(
    checkpoints: int, trajectory_cotangent: bool, mode: str
) -> None:
    values = inputs(np.float32, trajectory_cotangent, seed=3)  # the cotangent of every step's carry, or the last
    everything = program("f32", 0, trajectory_cotangent)(*values)
    checkpointed = program("f32", checkpoints, trajectory_cotangent, mode)(*values)
    for a, b in zip(everything, checkpointed):
        np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


def test_checkpoints_shrink_the_backward_scratch_and_griewank_more() -> None:
    """Long enough that one carry per level beats a segment's cache: the carries
    the backward keeps besides the saved ones (printed plans in the test log)."""
    length, k = 256, 16  # K = sqrt(length)

    def plan(checkpoints: int, mode: str) -> tuple[int, str]:
        b = rlx.Builder("elman")
        h0, w, d = b.input((B, H), "f64"), b.input((H, H), "f64"), b.input((B, H), "f64")
        xs = b.input((length, B, H), "f64")
        saved = b.scan(h0, step, [xs], [w], save_trajectory=True, num_checkpoints=checkpoints)
        forward = step if checkpoints else None
        b.output(*b.scan_backward(h0, saved, d, step_vjp, [xs], [w], forward, checkpoints, mode))
        exe = rlx.compile(b.module())
        return exe.memory_plan.arena_size, str(exe.memory_plan)

    everything, segments, griewank = plan(0, "segments"), plan(k, "segments"), plan(k, "griewank")
    for name, (_, text) in (("all saved", everything), ("segments", segments), ("griewank", griewank)):
        print(f"{name}:\n{text}")
    assert griewank[0] < segments[0] < everything[0]


# ---------------------------------------------------------------------------
# the autodiff pass on scans: scan_backward with the body's VJP built by the pass
# ---------------------------------------------------------------------------


def lstm_cell(hidden: int):
    """An LSTM cell as a scan body over the carry [h, c] ([B, 2H]): matmuls and activations."""

    def body(b: rlx.Builder, carry, w_ih, w_hh, bias, x):
        h, c = b.narrow(carry, 1, 0, hidden), b.narrow(carry, 1, hidden, hidden)
        z = b.add(b.add(b.matmul(x, w_ih), b.matmul(h, w_hh)), bias)
        i, f, g, o = (b.narrow(z, 1, k * hidden, hidden) for k in range(4))
        c_next = b.add(b.mul(b.sigmoid(f), c), b.mul(b.sigmoid(i), b.tanh(g)))
        return b.concat([b.mul(b.sigmoid(o), b.tanh(c_next)), c_next], 1)

    return body


def torch_lstm_cell(hidden: int):
    def body(carry, w_ih, w_hh, bias, x):
        h, c = carry[:, :hidden], carry[:, hidden:]
        i, f, g, o = (x @ w_ih + h @ w_hh + bias).split(hidden, dim=1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.cat([torch.sigmoid(o) * torch.tanh(c_next), c_next], 1)

    return body


CELLS = {
    # name: (rlx body, torch body, shapes of (init, broadcast..., xs))
    "elman": (step, lambda h, w, x: torch.tanh(h @ w + x), [(B, H), (H, H), (LENGTH, B, H)]),
    "lstm": (lstm_cell(4), torch_lstm_cell(4), [(B, 8), (3, 16), (4, 16), (16,), (LENGTH, B, 3)]),
}


def differentiated(cell: str, checkpoints: str) -> rlx.runtime.Executable:
    body, _, shapes = CELLS[cell]
    b = rlx.Builder(cell)
    init, *broadcast, xs = (b.input(s, "f64") for s in shapes)
    b.output(b.scan(init, body, [xs], broadcast))
    return rlx.compile(rlx.vjp(b.module(), checkpoints=checkpoints))


@pytest.mark.parametrize("cell", CELLS)
def test_autodiff_of_a_scan_matches_torch_autograd(cell: str) -> None:
    """d_init, d_W (broadcast inputs) and d_xs of the final carry, from `rlx.vjp`."""
    _, torch_body, shapes = CELLS[cell]
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(s) * 0.5 for s in shapes]
    d_final = rng.standard_normal(shapes[0])
    final, *grads = differentiated(cell, "all")(*values, d_final)
    tensors = [torch.tensor(v, requires_grad=True) for v in values]
    carry = tensors[0]
    for t in range(LENGTH):
        carry = torch_body(carry, *tensors[1:-1], tensors[-1][t])
    (carry * torch.tensor(d_final)).sum().backward()
    np.testing.assert_allclose(final, carry.detach().numpy(), rtol=1e-12, atol=1e-12)
    for k, (got, want) in enumerate(zip(grads, tensors)):
        np.testing.assert_allclose(got, want.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=f"gradient #{k}")


@pytest.mark.parametrize("checkpoints", ["segments", "griewank"])
def test_autodiff_checkpoint_modes_are_bit_identical(checkpoints: str) -> None:
    rng = np.random.default_rng(6)
    _, _, shapes = CELLS["lstm"]
    values = [rng.standard_normal(s) * 0.5 for s in [*shapes, shapes[0]]]
    everything = differentiated("lstm", "all")(*values)
    recomputed = differentiated("lstm", checkpoints)
    assert "num_checkpoints = 3" in str(recomputed.planned_ir)  # ceil(sqrt(7))
    for a, b in zip(everything, recomputed(*values)):
        np.testing.assert_array_equal(a, b)
