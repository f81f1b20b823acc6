"""End to end on one example: the IR after each pass, then the JIT result vs NumPy."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

import rlx_mlir as rlx
from rlx_mlir.context import make_context
from rlx_mlir.passes.canonicalize_broadcast import CanonicalizeBroadcastPass
from rlx_mlir.passes.fuse_elementwise import FuseElementwisePass
from rlx_mlir.passes.plan_memory import PlanMemoryPass

TEXT = (Path(__file__).parent / "bias_gelu.mlir").read_text()


def main() -> None:
    module = rlx.parse(TEXT)
    ctx = make_context()
    for stage in (CanonicalizeBroadcastPass(), FuseElementwisePass(), PlanMemoryPass()):
        stage.apply(ctx, module)
        print(f"// ----- IR after {stage.name}\n{str(module)}\n")

    exe = rlx.compile(TEXT)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 1024)).astype(np.float32)
    bias = rng.standard_normal(1024).astype(np.float32)
    (y,) = exe(x, bias)

    h = x.astype(np.float64) + bias
    erf = np.vectorize(math.erf)
    reference = 0.5 * h * (1 + erf(h / math.sqrt(2))) + 0.5 * x
    print(f"target: {exe.target}")
    print(f"memory plan: {exe.memory_plan}")
    print(f"result {y.dtype}{list(y.shape)}: {y[0, :4]} ...")
    print(f"max abs error vs float64 NumPy: {np.abs(y - reference).max():.3g}")


if __name__ == "__main__":
    main()
