"""Recurrent ops: rlx_mlir vs torch.nn / PyTorch eager and a NumPy time loop,
same inputs, one process, 2 threads for everyone.

    python benchmarks/recurrent.py [--repeat 7]

Prints median times, GFLOP/s, the ratio peer / rlx (> 1 means rlx is faster)
and, for the scans, rlx's GFLOP/s as a fraction of the sgemm GFLOP/s measured
at the start of the same run (rlx's own f32 matmul, 2048^3).

Sections (one function each; `SECTIONS` runs them in order):
- `rnn_section`: LSTM B8 S128 I256 H256 (1 layer; 2 layers bidirectional),
  GRU and RNN at the same size, against torch.nn;
- `ssm_section`: Mamba2 prefill B1 S2048 H8 P64 N128 and selective scan
  B1 S2048 D1024 N16 against a NumPy loop vectorized over batch and heads and
  PyTorch eager chunked (mamba's `ssd_minimal`), plus a Mamba2 decode step;
- `gdn_section`: gated delta net prefill B1 S2048 H8 N128 against a NumPy loop
  and fla's naive chunked gated delta rule in PyTorch eager, plus a decode step.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from elementwise import median_ms  # the one timing loop of benchmarks/ (this script's folder is on sys.path)

import rlx_mlir as rlx
from rlx_mlir.builder import Builder

THREADS = 2


@dataclass(frozen=True)
class Bench:
    """What every section gets: the repeat count, the RNG, torch (or None) and
    the sgemm GFLOP/s of this run."""

    repeat: int
    rng: np.random.Generator
    torch: ModuleType | None
    sgemm_gflops: float

    def time(self, fn: Callable[[], object]) -> float:
        return median_ms(fn, self.repeat)


def torch_or_none() -> ModuleType | None:
    try:
        import torch
    except ImportError:
        print("(torch is not installed: its rows are skipped; pip install -e '.[bench]')")
        return None
    torch.set_num_threads(THREADS)
    return torch


def sgemm_gflops(repeat: int) -> float:
    n = 2048
    b = Builder("sgemm")
    b.output(b.matmul(b.input((n, n)), b.input((n, n))))
    exe = rlx.compile(b.module(), threads=THREADS)
    x = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    return 2 * n**3 / 1e6 / median_ms(lambda: exe(x, x), repeat)


def report(bench: Bench, title: str, gflop: float, rlx_ms: float, peers: dict[str, float]) -> None:
    """One block: rlx's time and GFLOP/s (and share of sgemm), then each peer with peer/rlx."""
    rate = gflop / rlx_ms
    print(f"\n{title}")
    print(f"  {'rlx_mlir':<28}{rlx_ms:9.3f} ms  {rate:7.1f} GFLOP/s  ({rate / bench.sgemm_gflops:5.1%} of sgemm)")
    for name, ms in peers.items():
        print(f"  {name:<28}{ms:9.3f} ms  {gflop / ms:7.1f} GFLOP/s  peer/rlx = {ms / rlx_ms:6.2f}x")


# ---------------------------------------------------------------------------
# LSTM, GRU, RNN
# ---------------------------------------------------------------------------

RNN_SIZE = (8, 128, 256, 256)  # B, S, I, H
RNN_CASES = (  # (title, kind, layers, bidirectional)
    ("LSTM", "lstm", 1, False),
    ("LSTM 2 layers bidirectional", "lstm", 2, True),
    ("GRU", "gru", 1, False),
    ("RNN (tanh)", "rnn", 1, False),
)


def rnn_gflop(kind: str, layers: int, dirs: int) -> float:
    """2·(I_l + H)·G·H FLOP per row and step, per layer and direction."""
    batch, seq, input_size, hidden = RNN_SIZE
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    widths = [input_size] + [dirs * hidden] * (layers - 1)
    return sum(2 * (w + hidden) * gates * hidden * batch * seq * dirs for w in widths) / 1e9


def _torch_rnn(torch: ModuleType, kind: str, layers: int, bidirectional: bool) -> object:
    _, _, input_size, hidden = RNN_SIZE
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
    return cls(input_size, hidden, layers, batch_first=True, bidirectional=bidirectional)


def _packed(module: object, kind: str, layers: int, dirs: int) -> list[np.ndarray]:
    """torch's parameters packed as rlx takes them (per layer, then per direction; LSTM/RNN: b_ih + b_hh)."""
    suffixes = ("", "_reverse")[:dirs]

    def cat(name: str) -> np.ndarray:
        parts = [getattr(module, f"{name}_l{k}{s}").detach().numpy().ravel() for k in range(layers) for s in suffixes]
        return np.concatenate(parts)

    w_ih, w_hh, b_ih, b_hh = (cat(n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    return [w_ih, w_hh, b_ih, b_hh] if kind == "gru" else [w_ih, w_hh, b_ih + b_hh]


def rnn_section(bench: Bench) -> None:
    """rlx vs torch.nn at B8 S128 I256 H256, f32, no initial state, y only."""
    if bench.torch is None:
        return
    torch = bench.torch
    batch, seq, input_size, hidden = RNN_SIZE
    x = bench.rng.standard_normal((batch, seq, input_size), dtype=np.float32)
    for title, kind, layers, bidirectional in RNN_CASES:
        dirs = 2 if bidirectional else 1
        module = _torch_rnn(torch, kind, layers, bidirectional)
        weights = _packed(module, kind, layers, dirs)
        b = Builder(kind)
        args = [b.input(x.shape), *(b.input(w.shape) for w in weights)]
        b.output(getattr(b, kind)(*args, hidden_size=hidden, num_layers=layers, bidirectional=bidirectional))
        exe = rlx.compile(b.module(), threads=THREADS)
        xt = torch.from_numpy(x)
        with torch.no_grad():
            got, want = exe(x, *weights)[0], module(xt)[0].numpy()
            assert np.allclose(got, want, rtol=1e-3, atol=1e-4), f"{title}: rlx and torch disagree"
            torch_ms = bench.time(lambda: module(xt))
        rlx_ms = bench.time(lambda: exe(x, *weights))
        size = f"B{batch} S{seq} I{input_size} H{hidden}"
        mflop = 1e3 * rnn_gflop(kind, layers, dirs)  # report() divides by milliseconds
        report(bench, f"{title} {size} f32", mflop, rlx_ms, {f"torch.nn.{kind.upper()}": torch_ms})


SECTIONS: list[Callable[[Bench], None]] = [rnn_section]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    torch = torch_or_none()
    bench = Bench(repeat, np.random.default_rng(0), torch, sgemm_gflops(repeat))
    print(f"threads = {THREADS}; sgemm f32 2048^3: {bench.sgemm_gflops:.1f} GFLOP/s")
    for section in SECTIONS:
        section(bench)


if __name__ == "__main__":
    main()
