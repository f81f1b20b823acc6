"""Casts to and from the storage types (float8, int4), rlx_mlir vs ml_dtypes' astype, one process.

    python benchmarks/storage_casts.py [--log2n 24] [--repeat 15]

Each row is one `rlx.cast` over 2^log2n elements into a caller-given array,
checked bit for bit against ml_dtypes first (for float8 stores: with
`saturate = false`, which is what astype does; ONNX's default saturating
cast is timed too). Prints median times and ratios peer / rlx (> 1 means rlx
is faster).
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

CASES = [  # (source, target, saturate)
    ("f32", "f8E4M3FN", False),
    ("f32", "f8E4M3FN", True),
    ("f8E4M3FN", "f32", True),
    ("f32", "f8E5M2", False),
    ("f8E5M2", "f32", True),
    ("f16", "f8E5M2FNUZ", False),
    ("i32", "i4", True),
    ("i4", "f32", True),
]


def cast_ir(n: int, source: str, target: str, saturate: bool) -> str:
    flag = "" if saturate else " {saturate = false}"
    t_in, t_out = f"tensor<{n}x{source}>", f"tensor<{n}x{target}>"
    return (
        f"func.func @cast(%x: {t_in}) -> {t_out} {{\n  %y = rlx.cast %x{flag} : ({t_in}) -> {t_out}\n"
        f"  func.return %y : {t_out}\n}}"
    )


def numpy_type(name: str) -> np.dtype:
    return rlx.dtypes.from_name(name).numpy


def sample(n: int, name: str) -> np.ndarray:
    """Values spread over the float8 range (some out of it) or small integers."""
    rng = np.random.default_rng(0)
    if name in ("i32", "i4"):
        return rng.integers(-100, 100, n).astype(np.int32).astype(numpy_type(name))
    with np.errstate(over="ignore"):
        return (rng.standard_normal(n) * 100).astype(np.float32).astype(numpy_type(name))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=15)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    n = 1 << options.log2n
    for source, target, saturate in CASES:
        x = sample(n, source)
        exe = rlx.compile(cast_ir(n, source, target, saturate))
        out = np.empty(n, numpy_type(target))
        exe(x, out=(out,))
        peer = "astype"
        if saturate and target.startswith("f8"):
            peer = "clip+astype"
            largest = float(ml_dtypes.finfo(numpy_type(target)).max)
            want = np.clip(x, -largest, largest).astype(numpy_type(target))
            run_peer = lambda: np.clip(x, -largest, largest).astype(numpy_type(target))  # noqa: E731
        else:
            with np.errstate(all="ignore"):
                want = x.astype(numpy_type(target))
            run_peer = lambda: x.astype(numpy_type(target))  # noqa: E731
        values_agree = np.array_equal(out.astype(np.float64), want.astype(np.float64), equal_nan=True)
        assert values_agree and (
            out.itemsize > 1
            or np.array_equal(
                out.view(np.uint8)[~np.isnan(want.astype(np.float64))],
                want.view(np.uint8)[~np.isnan(want.astype(np.float64))],
            )
        ), f"{source} -> {target} differs from ml_dtypes"
        rlx_ms = median_ms(lambda: exe(x, out=(out,)), options.repeat)
        with np.errstate(all="ignore"):
            peer_ms = median_ms(run_peer, options.repeat)
        mode = "" if not target.startswith("f8") else (" saturate" if saturate else " no-sat")
        print(
            f"{source:>9} -> {target:<10}{mode:<10} rlx {rlx_ms:8.2f} ms   ml_dtypes {peer:<11} {peer_ms:8.2f} ms"
            f"   peer/rlx = {peer_ms / rlx_ms:6.1f}x"
        )


if __name__ == "__main__":
    main()
