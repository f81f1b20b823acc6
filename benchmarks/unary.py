"""Standalone unary ops: rlx_mlir ns/element on one thread, on an in-cache array, next to NumPy
where NumPy has the function. Measures the kernels themselves (sin/cos/tan compute each chunk
with the fast reduction and redo it with the exact Payne-Hanek one only when an argument needs
it; see lowering/scalar/math_approx.py).

    python benchmarks/unary.py [--log2n 17] [--repeat 300] [--ops sin,cos,tan,gelu] [--range 10]

Inputs are uniform in [-range, range]: the default keeps sin/cos/tan on their fast reduction;
`--range 1e12` puts a huge argument in every chunk, which the kernels then recompute exactly.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from machine import add_target_argument, use_target  # this script's folder is on sys.path

import rlx_mlir as rlx

NUMPY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "exp": np.exp}
DEFAULT_OPS = "sin,cos,tan,tanh,gelu,gelu_approx,silu,mish,hard_swish"


def best_ns(fn: Callable[[], object], repeat: int, n: int) -> float:
    """Best of `repeat` runs (the machines are shared: the minimum is the stable statistic)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e9 / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=17)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--range", type=float, default=10.0)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    n = 1 << options.log2n
    rng = np.random.default_rng(0)
    span = options.range
    print(
        f"n = 2^{options.log2n}, 1 thread, inputs uniform in [-{span:g}, {span:g}]; "
        f"ns/element (best of {options.repeat})"
    )
    for ty, dtype in (("f32", np.float32), ("f64", np.float64)):
        x = rng.uniform(-span, span, n).astype(dtype)
        out = np.empty_like(x)
        for op in options.ops.split(","):
            t = f"tensor<{n}x{ty}>"
            exe = rlx.compile(
                f"func.func @f(%a: {t}) -> {t} {{\n  %r = rlx.{op} %a : ({t}) -> {t}\n  func.return %r : {t}\n}}\n",
                threads=1,
            )
            line = f"  {ty} {op:<12} rlx {best_ns(lambda: exe(x, out=(out,)), options.repeat, n):6.2f}"
            if op in NUMPY:
                line += f"   numpy {best_ns(lambda: NUMPY[op](x, out=out), options.repeat, n):6.2f}"
            print(line)


if __name__ == "__main__":
    main()
