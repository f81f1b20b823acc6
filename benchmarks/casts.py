"""A cast-heavy chain: f16 in -> f32 math -> bf16 out, rlx_mlir vs NumPy (+ ml_dtypes), one process.

    python benchmarks/casts.py [--log2n 24] [--repeat 15]

    y = bf16(gelu_approx(f32(x) * f32(scale) + f32(bias)))   x: f16, scale/bias: f16 vectors

Prints median times and ratios peer / rlx (> 1 means rlx is faster).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from timing import median_ms

import rlx_mlir as rlx


def chain_ir(rows: int, cols: int) -> str:
    h, f = f"tensor<{rows}x{cols}xf16>", f"tensor<{rows}x{cols}xf32>"
    v, vf = f"tensor<{cols}xf16>", f"tensor<{cols}xf32>"
    return f"""
func.func @cast_chain(%x: {h}, %scale: {v}, %bias: {v}) -> tensor<{rows}x{cols}xbf16> {{
  %xf = rlx.cast %x : ({h}) -> {f}
  %sf = rlx.cast %scale : ({v}) -> {vf}
  %bf = rlx.cast %bias : ({v}) -> {vf}
  %m = rlx.mul %xf, %sf : ({f}, {vf}) -> {f}
  %a = rlx.add %m, %bf : ({f}, {vf}) -> {f}
  %g = rlx.gelu_approx %a : ({f}) -> {f}
  %y = rlx.cast %g : ({f}) -> tensor<{rows}x{cols}xbf16>
  func.return %y : tensor<{rows}x{cols}xbf16>
}}"""


def numpy_chain(x: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    a = x.astype(np.float32) * scale.astype(np.float32) + bias.astype(np.float32)
    g = 0.5 * a * (1 + np.tanh(np.float32(0.7978845608) * (a + np.float32(0.044715) * a * a * a)))
    return g.astype(ml_dtypes.bfloat16)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=15)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    cols = 1024
    rows = (1 << options.log2n) // cols
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    scale = rng.uniform(0.5, 2, cols).astype(np.float16)
    bias = rng.standard_normal(cols).astype(np.float16)
    exe = rlx.compile(chain_ir(rows, cols))
    out = np.empty((rows, cols), ml_dtypes.bfloat16)
    exe(x, scale, bias, out=(out,))
    reference = numpy_chain(x, scale, bias).astype(np.float32)
    error = np.abs(out.astype(np.float32) - reference).max()
    rlx_ms = median_ms(lambda: exe(x, scale, bias, out=(out,)), options.repeat)
    numpy_ms = median_ms(lambda: numpy_chain(x, scale, bias), options.repeat)
    print(f"f16[{rows}x{cols}] -> f32 gelu_approx(x*scale + bias) -> bf16   (max |rlx - numpy| = {error:.3g})")
    print(f"  {'rlx_mlir':<12}{rlx_ms:8.2f} ms")
    print(f"  {'numpy':<12}{numpy_ms:8.2f} ms   peer/rlx = {numpy_ms / rlx_ms:5.2f}x")


if __name__ == "__main__":
    main()
