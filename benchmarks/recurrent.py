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
    rate = gflop / (rlx_ms / 1e3)
    print(f"\n{title}")
    print(f"  {'rlx_mlir':<28}{rlx_ms:9.3f} ms  {rate:7.1f} GFLOP/s  ({rate / bench.sgemm_gflops:5.1%} of sgemm)")
    for name, ms in peers.items():
        print(f"  {name:<28}{ms:9.3f} ms  {gflop / (ms / 1e3):7.1f} GFLOP/s  peer/rlx = {ms / rlx_ms:6.2f}x")


SECTIONS: list[Callable[[Bench], None]] = []


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
