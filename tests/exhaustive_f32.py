"""Every f32 input of tanh, sigmoid and erf through the JIT kernels of lowering/scalar/math_approx.py,
against the references of tests/test_math_approx.py, with the bounds of tests/accuracy.py.

    python tests/exhaustive_f32.py [tanh] [sigmoid] [erf] [--log2-chunk 24]

Not part of the pytest suite (minutes per function on one core); the dense sweeps of
test_math_approx.py and the edges of test_numeric_edges.py are its fast stand-ins. tanh and erf are
odd by construction (their sign is copied from x), so only the 2^31 bit patterns with the sign bit
clear are checked (NaNs included); sigmoid gets all 2^32. Prints, per function, the largest error, where it
is, and how many inputs have each error; exits 1 if any exceeds its bound.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

# Run as a script, Python puts this file's folder (tests/) first on sys.path.
from accuracy import accuracy
from reference import ulp_error
from test_math_approx import REF, _compiled

PATTERNS = {"tanh": 1 << 31, "sigmoid": 1 << 32, "erf": 1 << 31}
"""How many bit patterns, from 0 up, each function is checked on."""


def check(name: str, log2_chunk: int) -> bool:
    """Sweep `name` over its bit patterns in chunks; print the summary; whether the bound holds."""
    kernel = _compiled(np.float32)[name]
    bound = accuracy(name, np.float32).max_ulp
    counts: dict[int, int] = {}
    worst, worst_x = -1.0, np.float32(0)
    start = time.perf_counter()
    for lo in range(0, PATTERNS[name], 1 << log2_chunk):
        x = np.arange(lo, lo + (1 << log2_chunk), dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            err = ulp_error(kernel(x), REF[name](x.astype(np.float64)), np.float32)
        for value, n in zip(*np.unique(err, return_counts=True)):
            counts[float(value)] = counts.get(float(value), 0) + int(n)
        i = int(np.argmax(err))
        if err[i] > worst:
            worst, worst_x = float(err[i]), x[i]
    print(
        f"{name}: max {worst} ULP at x = {worst_x!r} (bound {bound}); "
        f"inputs per error {dict(sorted(counts.items()))}; {time.perf_counter() - start:.0f} s"
    )
    return worst <= bound


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--log2-chunk", type=int, default=24)
    options = parser.parse_args()
    results = [check(name, options.log2_chunk) for name in options.names]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
