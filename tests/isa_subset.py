"""The README test command's second pytest run: the target-dependent test modules
(``-m isa_subset``, see conftest.py) again at ``RLX_MLIR_TARGET=x86-64-v3``, so an
AVX-512 host also runs the AVX2 kernels.

On a host whose own kernels already are the x86-64-v3 ones (an AVX2-only host: the
same ISA level and the same `Tuning`, hence the same kernel IR; only LLVM's CPU model
for scheduling differs), the first run compiled and ran exactly this code, and the
run is not repeated: it took 3.3 of CI's 19.7 minutes on a Zen 3. Run from the
repository root: ``.venv/bin/python tests/isa_subset.py``.
"""

from __future__ import annotations

import os
import sys

from rlx_mlir.target import Target, target
from rlx_mlir.tuning import Tuning

SUBSET_TARGET = "x86-64-v3"
PYTEST = ("-m", "pytest", "-q", "-n", "auto", "--dist", "loadgroup", "-m", "isa_subset")


def covered_by_the_first_run(native: Target) -> bool:
    """Whether the kernels of `native` (the host's) are the subset target's."""
    subset = target(SUBSET_TARGET)
    return native.level == subset.level and Tuning.for_target(native) == Tuning.for_target(subset)


def main() -> int:
    if covered_by_the_first_run(target("native")):
        print(f"isa_subset: not run again; native code here is {SUBSET_TARGET} code ({target('native')})")
        return 0
    os.execve(sys.executable, [sys.executable, *PYTEST], dict(os.environ, RLX_MLIR_TARGET=SUBSET_TARGET))


if __name__ == "__main__":
    sys.exit(main())
