"""Contractions: rlx_mlir vs NumPy and (if installed) PyTorch, same inputs, one
process, 2 threads for everyone.

    python benchmarks/contractions.py [--repeat 15]

Prints median times and the ratio peer / rlx (> 1 means rlx is faster):
- matmul f32 [1024 x 1024] @ [1024 x 1024] vs numpy.matmul, plus rlx with
  its emitted kernels turned off (`BLAS_ONLY`), OpenBLAS calls on blocks of
  rows: the measurement behind the packed-panel kernel;
- batched small matmul 512 x [32 x 64] @ [64 x 32] vs numpy.matmul and
  torch.matmul, plus rlx with its emitted kernels turned off, which times one
  OpenBLAS call per matrix: the measurement behind the tile kernel;
- a decode step's product [1 x 256] @ [256 x 1024] (M = 1: one row of tiles
  wider than the full tiles' two vectors) vs numpy.matmul (sgemv) and torch;
- [1024 x K] @ [K x 256] for K = 256, 1024, 2048: rlx's packed-panel kernel
  (while its K x two-vector panel fits `Tuning.gemm_panel_max_bytes`, a
  quarter of L2) against rlx's OpenBLAS blocks, interleaved (the measurement
  behind that bound), and numpy;
- a model's constant weights: x @ w with w a constant, its panels stored once
  at compile time (`pack-matmul-weights`) against packing them at every call
  or reading w in place (`PER_CALL`), interleaved, at a decode step's,
  a small batch's and a prefill's M, w as stored or transposed (ONNX's Gemm
  with transB): the measurement behind that pass;
- ViT's MLP-up at batch 8, [1576 x 256] @ [256 x 1024] (64 column panels:
  the grouped panels' case), alone and as gelu(x @ w + b), vs numpy and torch;
- gelu(x @ w + b) at [4096 x 1024] @ [1024 x 1024] vs NumPy eager and torch
  (rlx: exact erf GELU, fused with the bias add into one pass over the
  product; NumPy has no erf, so its row is the cheaper tanh form; torch:
  F.gelu, exact).

Thread counts: rlx compiles with threads=2 (its own threads, each GEMM cut
into blocks that single-threaded OpenBLAS calls compute),
torch.set_num_threads(2), and NumPy's OpenBLAS uses every CPU (2 here; the
script says if the machine has more). OpenBLAS picks its kernels by CPU unless
OPENBLAS_CORETYPE is set (this environment may set it; the value is printed):
it applies to NumPy's OpenBLAS and rlx's alike.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

import numpy as np
from elementwise import torch_or_none  # this script's folder is on sys.path
from machine import add_target_argument, use_target
from timing import interleaved_medians, median_ms

import rlx_mlir as rlx
from rlx_mlir.builder import Builder

THREADS = 2

BLAS_ONLY = {"gemm_tiled_max_mnk": 0, "gemm_panel_max_mnk": 0}
"""Tuning under which matmuls call OpenBLAS: the emitted tile and packed-panel kernels are off."""

PER_CALL = {"gemm_packed_weights_max_mnk": 0}
"""Tuning under which a constant weight stays as it is: the panel kernel packs it at every
call, the tiles read it in place (`pack-matmul-weights` off)."""

WEIGHT_CASES = ((1, 256, 1024, False), (1, 256, 768, True), (8, 256, 1024, False), (128, 256, 768, False))
"""(M, K, N, transposed) of x [M, K] @ w [K, N] (w stored [N, K] when transposed)."""


def matmul_exe(
    lhs: tuple[int, ...], rhs: tuple[int, ...], tuning: Mapping[str, int] | None = None, tune: bool | None = None
) -> rlx.runtime.Executable:
    b = Builder("matmul")
    b.output(b.matmul(b.input(lhs), b.input(rhs)))
    return rlx.compile(b.module(), threads=THREADS, tuning=tuning, tune=tune)


def weight_exe(
    x: np.ndarray, w: np.ndarray, transposed: bool, tuning: Mapping[str, int] | None
) -> rlx.runtime.Executable:
    """x @ w (x @ wᵀ when `transposed`) with w a constant, as a model's weight is."""
    b = Builder("weights")
    b.output(b.matmul(b.input(x.shape), b.constant(w), transpose_rhs=transposed))
    return rlx.compile(b.module(), threads=THREADS, tuning=tuning, tune=False)


def mlp_exe(n: int, k: int, m: int) -> rlx.runtime.Executable:
    b = Builder("mlp")
    x, w, bias = b.input((n, k)), b.input((k, m)), b.input((m,))
    b.output(b.gelu(b.add(b.matmul(x, w), bias)))
    return rlx.compile(b.module(), threads=THREADS)


def gelu_tanh(h: np.ndarray) -> np.ndarray:
    return 0.5 * h * (1 + np.tanh(np.float32(np.sqrt(2 / np.pi)) * (h + np.float32(0.044715) * h**3)))


def report(title: str, gflop: float, rlx_ms: float, peers: dict[str, float]) -> None:
    print(f"\n{title}")
    print(f"  {'rlx_mlir':<22}{rlx_ms:9.3f} ms   {gflop / rlx_ms:6.1f} GFLOP/s")
    for name, ms in peers.items():
        print(f"  {name:<22}{ms:9.3f} ms   {gflop / ms:6.1f} GFLOP/s   peer/rlx = {ms / rlx_ms:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    repeat = options.repeat
    rng = np.random.default_rng(0)
    torch = torch_or_none(THREADS)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    coretype = os.environ.get("OPENBLAS_CORETYPE", "unset")
    print(f"threads = {THREADS} (CPUs: {cpus}); OPENBLAS_CORETYPE = {coretype}")
    if cpus != THREADS:
        print(f"  note: NumPy's OpenBLAS uses all {cpus} CPUs, not {THREADS}")

    # matmul f32 1024^3
    n = 1024
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    exe = matmul_exe((n, n), (n, n))
    blas_exe = matmul_exe((n, n), (n, n), BLAS_ONLY)
    peers = {
        "rlx, one BLAS call": median_ms(lambda: blas_exe(a, b), repeat),
        "numpy.matmul": median_ms(lambda: np.matmul(a, b), repeat),
    }
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        peers["torch.matmul"] = median_ms(lambda: torch.matmul(ta, tb), repeat)
    report(f"matmul f32 [{n}x{n}] @ [{n}x{n}]", 2 * n**3 / 1e6, median_ms(lambda: exe(a, b), repeat), peers)

    # batched small matmul
    batch, m, k, p = 512, 32, 64, 32
    x, y = rng.standard_normal((batch, m, k), dtype=np.float32), rng.standard_normal((batch, k, p), dtype=np.float32)
    exe = matmul_exe(x.shape, y.shape)
    blas_exe = matmul_exe(x.shape, y.shape, BLAS_ONLY)
    peers = {
        "rlx, BLAS per matrix": median_ms(lambda: blas_exe(x, y), repeat),
        "numpy.matmul": median_ms(lambda: np.matmul(x, y), repeat),
    }
    if torch is not None:
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        peers["torch.matmul"] = median_ms(lambda: torch.matmul(tx, ty), repeat)
    gflop = 2 * batch * m * k * p / 1e6
    report(f"batched matmul f32 {batch} x [{m}x{k}] @ [{k}x{p}]", gflop, median_ms(lambda: exe(x, y), repeat), peers)

    # a decode step's M = 1 product
    k, p = 256, 1024
    row, w = rng.standard_normal((1, k), dtype=np.float32), rng.standard_normal((k, p), dtype=np.float32)
    exe = matmul_exe(row.shape, w.shape)
    peers = {"numpy.matmul": median_ms(lambda: np.matmul(row, w), repeat * 20)}
    if torch is not None:
        trow, tw = torch.from_numpy(row), torch.from_numpy(w)
        peers["torch.matmul"] = median_ms(lambda: torch.matmul(trow, tw), repeat * 20)
    report(f"matmul f32 [1x{k}] @ [{k}x{p}]", 2 * k * p / 1e6, median_ms(lambda: exe(row, w), repeat * 20), peers)

    # the packed-panel kernel against OpenBLAS's blocks, over K
    for k in (256, 1024, 2048):
        x, w = rng.standard_normal((1024, k), dtype=np.float32), rng.standard_normal((k, 256), dtype=np.float32)
        exe = matmul_exe(x.shape, w.shape, tune=False)  # the model's choice, not a measured one
        blas_exe = matmul_exe(x.shape, w.shape, BLAS_ONLY, tune=False)
        times = interleaved_medians({"rlx": lambda: exe(x, w), "rlx, BLAS blocks": lambda: blas_exe(x, w)}, repeat * 4)
        times["numpy.matmul"] = median_ms(lambda: x @ w, repeat * 4)  # not interleaved: its BLAS threads spin on
        path = "OpenBLAS" if "scipy_" in exe.llvm_ir else "panels"
        title = f"matmul f32 [1024x{k}] @ [{k}x256], rlx: {path}"
        report(title, 2 * 1024 * k * 256 / 1e6, times.pop("rlx"), times)

    # a model's constant weights: panels stored at compile time against per call
    for m, k, p, transposed in WEIGHT_CASES:
        x = rng.standard_normal((m, k), dtype=np.float32)
        w = rng.standard_normal((p, k) if transposed else (k, p), dtype=np.float32)
        stored, per_call = weight_exe(x, w, transposed, None), weight_exe(x, w, transposed, PER_CALL)
        wx = w.T if transposed else w
        times = interleaved_medians({"rlx": lambda: stored(x), "rlx, per call": lambda: per_call(x)}, repeat * 20)
        times["numpy.matmul"] = median_ms(lambda: x @ wx, repeat * 20)
        rhs = f"[{p}x{k}]ᵀ" if transposed else f"[{k}x{p}]"
        title = f"matmul f32 [{m}x{k}] @ {rhs}, w a constant"
        report(title, 2 * m * k * p / 1e6, times.pop("rlx"), times)

    # ViT's MLP-up at batch 8 (the model suite's size), unit-scale data: many column panels
    n, k, m = 1576, 256, 1024
    x = rng.standard_normal((n, k), dtype=np.float32)
    w = rng.standard_normal((k, m), dtype=np.float32) / np.float32(np.sqrt(k))
    bias = rng.standard_normal(m, dtype=np.float32)
    exe, mlp = matmul_exe(x.shape, w.shape, tune=False), mlp_exe(n, k, m)
    peers = {"numpy.matmul": median_ms(lambda: x @ w, repeat * 4)}
    if torch is not None:
        import torch.nn.functional as F

        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        peers["torch.matmul"] = median_ms(lambda: torch.matmul(tx, tw), repeat * 4)
    gflop = 2 * n * k * m / 1e6
    report(f"matmul f32 [{n}x{k}] @ [{k}x{m}]", gflop, median_ms(lambda: exe(x, w), repeat * 4), peers)
    peers = {"numpy eager (tanh)": median_ms(lambda: gelu_tanh(x @ w + bias), repeat * 4)}
    if torch is not None:
        peers["torch F.gelu(addmm)"] = median_ms(lambda: F.gelu(torch.addmm(tb, tx, tw)), repeat * 4)
    report(f"gelu(x @ w + b) f32 [{n}x{k}] @ [{k}x{m}]", gflop, median_ms(lambda: mlp(x, w, bias), repeat * 4), peers)

    # gelu(x @ w + b)
    n, k, m = 4096, 1024, 1024
    x, w = rng.standard_normal((n, k), dtype=np.float32), rng.standard_normal((k, m), dtype=np.float32) / 32
    bias = rng.standard_normal(m, dtype=np.float32)
    exe = mlp_exe(n, k, m)
    peers = {"numpy eager (tanh)": median_ms(lambda: gelu_tanh(x @ w + bias), repeat)}
    if torch is not None:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(bias)
        peers["torch F.gelu"] = median_ms(lambda: F.gelu(tx @ tw + tb), repeat)
        peers["torch F.gelu(addmm)"] = median_ms(lambda: F.gelu(torch.addmm(tb, tx, tw)), repeat)
    gflop = 2 * n * k * m / 1e6
    report(f"gelu(x @ w + b) f32 [{n}x{k}] @ [{k}x{m}]", gflop, median_ms(lambda: exe(x, w, bias), repeat), peers)


if __name__ == "__main__":
    main()
