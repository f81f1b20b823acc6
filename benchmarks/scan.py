"""rlx.scan: the time loop in the JIT entry vs peers, same inputs, one process,
2 threads for everyone.

    python benchmarks/scan.py [--repeat 9] [--threads 2]

Prints median times and the ratio peer / rlx (> 1 means rlx is faster):
- an Elman RNN written as `rlx.scan` (B8 S128 I256 H256: the body is two
  matmuls, a bias and tanh) against `rlx.rnn` (when this build has its
  kernels) and `torch.nn.RNN`, forward;
- its VJP function from `rlx.vjp` (the forward saving every carry, then
  `rlx.scan_backward` with the body differentiated by the autodiff pass;
  d_h0, d_W_ih, d_W_hh, d_b, d_xs), against torch.nn.RNN forward + backward
  under autograd (the gradient of the last step's output);
- the per-step overhead of a tiny body (a carry of 64 floats, one add and one
  mul per step, 4096 steps) against a Python loop calling a compiled step
  function once per step.

Every rlx row is timed before torch's, or TORCH_SPIN_S after them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from timing import median_ms

import rlx_mlir as rlx
from rlx_mlir.builder import Builder

THREADS = 2
"""For everyone; `--threads 1` compares single-core work, which a machine
shared with other jobs disturbs far less than two threads that wait for each other."""
B, S, I, H = 8, 128, 256, 256  # noqa: E741 - the LSTM's sizes as the papers name them
TORCH_SPIN_S = 0.5
"""Each rlx row is timed before torch's, or this long after: torch's OpenMP
threads keep spinning for a while after its calls and would slow whatever
runs next on the two cores."""


def elman_step(b: Builder, h, w_ih, w_hh, bias, x):
    """h_t = tanh(x_t @ W_ihᵀ + h_{t-1} @ W_hhᵀ + b)."""
    gates = b.add(b.matmul(x, w_ih, transpose_rhs=True), b.matmul(h, w_hh, transpose_rhs=True))
    return b.tanh(b.add(gates, bias))


def elman_module(trajectory: bool):
    """The Elman RNN over the time-major xs [S, B, I]: every carry, or the last."""
    b = Builder("elman")
    h0, w_ih, w_hh, bias = b.input((B, H)), b.input((H, I)), b.input((H, H)), b.input((H,))
    xs = b.input((S, B, I))
    b.output(b.scan(h0, elman_step, [xs], [w_ih, w_hh, bias], save_trajectory=trajectory))
    return b.module()


def elman_scan() -> rlx.runtime.Executable:
    return rlx.compile(elman_module(True), threads=THREADS)


def elman_train_step() -> rlx.runtime.Executable:
    """The VJP function `rlx.vjp` makes of the Elman scan: (h0, W_ih, W_hh, b, xs, d_h) ->
    (h, d_h0, d_W_ih, d_W_hh, d_b, d_xs)."""
    return rlx.compile(rlx.vjp(elman_module(False)), threads=THREADS)


def elman_rnn_op() -> rlx.runtime.Executable | None:
    b = Builder("elman_rnn")
    x, w_ih, w_hh, bias = b.input((B, S, I)), b.input((H * I,)), b.input((H * H,)), b.input((H,))
    b.output(b.rnn(x, w_ih, w_hh, bias, H))
    try:
        return rlx.compile(b.module(), threads=THREADS)
    except rlx.CompileError as error:  # a build without the recurrent kernels
        print(f"(rlx.rnn row skipped: {error})")
        return None


def tiny_scan(steps: int, width: int) -> tuple[rlx.runtime.Executable, rlx.runtime.Executable]:
    """The scan, and the same step as a function for the Python loop."""
    b = Builder("tiny_scan")
    c0, xs = b.input((width,)), b.input((steps, width))
    b.output(b.scan(c0, lambda b, c, x: b.mul(b.add(c, x), b.constant(0.5)), [xs]))
    scan = rlx.compile(b.module(), threads=THREADS)
    b = Builder("tiny_step")
    c, x = b.input((width,)), b.input((width,))
    b.output(b.mul(b.add(c, x), b.constant(0.5)))
    return scan, rlx.compile(b.module(), threads=THREADS)


def torch_rnn(w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray):  # -> torch.nn.RNN | None
    """torch.nn.RNN with these weights (b_hh zero), or None without torch."""
    try:
        import torch
    except ImportError:
        print("(torch is not installed: its rows are skipped; pip install -e '.[bench]')")
        return None
    torch.set_num_threads(THREADS)
    module = torch.nn.RNN(I, H, batch_first=True)
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.from_numpy(w_ih))
        module.weight_hh_l0.copy_(torch.from_numpy(w_hh))
        module.bias_ih_l0.copy_(torch.from_numpy(bias))
        module.bias_hh_l0.zero_()
    return module


def report(title: str, rlx_ms: float, peers: dict[str, float]) -> None:
    print(f"\n{title}")
    print(f"  {'rlx_mlir scan':<28}{rlx_ms:9.3f} ms")
    for name, ms in peers.items():
        print(f"  {name:<28}{ms:9.3f} ms   peer/rlx = {ms / rlx_ms:6.2f}x")


def main() -> None:
    global THREADS
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--threads", type=int, default=THREADS)
    add_target_argument(parser)
    args = parser.parse_args()
    print(use_target(args.target))
    repeat = args.repeat
    THREADS = args.threads
    rng = np.random.default_rng(0)
    print(f"threads = {THREADS}")

    x = rng.standard_normal((B, S, I), dtype=np.float32)
    w_ih = rng.standard_normal((H, I), dtype=np.float32) / 16
    w_hh = rng.standard_normal((H, H), dtype=np.float32) / 16
    bias = rng.standard_normal(H, dtype=np.float32) / 16
    h0 = np.zeros((B, H), np.float32)
    xs = np.ascontiguousarray(x.transpose(1, 0, 2))
    scan = elman_scan()
    (trajectory,) = scan(h0, w_ih, w_hh, bias, xs)
    rlx_ms = median_ms(lambda: scan(h0, w_ih, w_hh, bias, xs), repeat)
    peers: dict[str, float] = {}
    rnn = elman_rnn_op()
    if rnn is not None:
        (y,) = rnn(x, w_ih.reshape(-1), w_hh.reshape(-1), bias)
        np.testing.assert_allclose(trajectory.transpose(1, 0, 2), y, rtol=1e-4, atol=1e-5)
        peers["rlx.rnn"] = median_ms(lambda: rnn(x, w_ih.reshape(-1), w_hh.reshape(-1), bias), repeat)
    module = torch_rnn(w_ih, w_hh, bias)
    if module is not None:
        import torch

        tx = torch.from_numpy(x)
        with torch.no_grad():
            np.testing.assert_allclose(module(tx)[0].numpy(), trajectory.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)
            peers["torch.nn.RNN"] = median_ms(lambda: module(tx), repeat)
    report(f"Elman RNN as rlx.scan, forward (B{B} S{S} I{I} H{H}, trajectory)", rlx_ms, peers)

    train = elman_train_step()
    d_last = rng.standard_normal((B, H), dtype=np.float32)
    grads = train(h0, w_ih, w_hh, bias, xs, d_last)
    time.sleep(TORCH_SPIN_S)
    rlx_ms = median_ms(lambda: train(h0, w_ih, w_hh, bias, xs, d_last), repeat)
    peers = {}
    if module is not None:
        td = torch.from_numpy(d_last)
        th0 = torch.zeros((1, B, H), requires_grad=True)

        def torch_train() -> None:
            module.zero_grad()
            out, _ = module(tx, th0)
            (out[:, -1] * td).sum().backward()

        torch_train()
        np.testing.assert_allclose(module.weight_hh_l0.grad.numpy(), grads[3], rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(module.bias_ih_l0.grad.numpy(), grads[4], rtol=1e-3, atol=1e-4)
        peers["torch autograd"] = median_ms(torch_train, repeat)
    report("Elman RNN as rlx.scan, forward + backward (d_h0, d_W_ih, d_W_hh, d_b, d_xs)", rlx_ms, peers)

    steps, width = 4096, 64
    scan, step = tiny_scan(steps, width)
    c0 = rng.standard_normal(width, dtype=np.float32)
    xs = rng.standard_normal((steps, width), dtype=np.float32)

    def python_loop() -> np.ndarray:
        c = c0
        for t in range(steps):
            (c,) = step(c, xs[t])
        return c

    np.testing.assert_allclose(scan(c0, xs)[0], python_loop(), rtol=1e-5)
    time.sleep(TORCH_SPIN_S)
    rlx_ms = median_ms(lambda: scan(c0, xs), repeat)
    loop_ms = median_ms(python_loop, max(3, repeat // 3))
    report(
        f"tiny body ({width} floats, {steps} steps): {1e3 * rlx_ms / steps:.3f} us per step",
        rlx_ms,
        {"Python loop of compiled steps": loop_ms},
    )


if __name__ == "__main__":
    main()
