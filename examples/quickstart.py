"""End to end on one example: the IR after each pass, then the JIT result vs NumPy.

The passes are the default pipeline's own (`passes/default_pipeline.py`), run
one at a time on the same module. A pass that leaves the IR as it was says so;
the `llvm` dialect after `lower-to-llvm` is summarized as its functions (the
kernel, its thread-pool thunk and launcher, the entry):
`rlx-opt examples/bias_gelu.mlir -p default` prints it all.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.context import make_context
from rlx_mlir.passes.default_pipeline import BACKEND_PASSES, TENSOR_PASSES

TEXT = (Path(__file__).parent / "bias_gelu.mlir").read_text()


def summarize_llvm(module: ModuleOp) -> str:
    """The functions of the lowered module by name and size."""
    funcs = [op for op in module.walk() if isinstance(op, llvm.FuncOp)]
    lines = [f"{len(str(module).splitlines())} lines of the llvm dialect, {len(funcs)} functions:"]
    lines += [f"  @{f.sym_name.data}: {len(list(f.walk()))} ops" for f in funcs]
    return "\n".join(lines)


def show_passes() -> None:
    module = rlx.parse(TEXT)
    ctx = make_context()
    before = str(module)
    print(f"// ----- input\n{before}\n")
    passes = (*TENSOR_PASSES, *BACKEND_PASSES)
    for k, stage in enumerate(passes, 1):
        stage.apply(ctx, module)
        after = str(module)
        header = f"// ----- {k}/{len(passes)} after {stage.name}"
        if stage is BACKEND_PASSES[-1]:
            print(f"{header}\n{summarize_llvm(module)}\n")
        elif after == before:
            print(f"{header}: unchanged\n")
        else:
            print(f"{header}\n{after}\n")
        before = after


def main() -> None:
    show_passes()
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
