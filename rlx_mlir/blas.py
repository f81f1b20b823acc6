"""The BLAS that JIT-compiled kernels call: OpenBLAS from the `scipy-openblas32` wheel.

Why this one: it is an ordinary PyPI dependency of rlx-mlir (a fresh
`pip install` brings it), it is the OpenBLAS build SciPy itself links
against, and it exports the documented CBLAS interface (`cblas.h`: row-major
storage, transpose flags, 32-bit `blasint` sizes) plus OpenBLAS's thread
control, every symbol prefixed `scipy_` so that it never clashes with another
BLAS in the process (NumPy's private OpenBLAS, torch's MKL). NumPy's bundled
library is never used: its symbols are private to the NumPy wheel.

Importing this module does nothing. `load()`, called by the lowering when it
first emits a BLAS call, finds the shared library with the package's
`get_lib_dir()` / `get_library()` and loads it into the process with
`llvmlite.binding.load_library_permanently`, so MCJIT resolves the kernels'
external declarations (`symbol("cblas_sgemm")`) to it.

Threads: OpenBLAS keeps one process-wide thread count, which the kernels set
to 1 (`symbol("openblas_set_num_threads")`) before their GEMMs: every GEMM
runs on one thread, and the entry splits GEMMs across its own threads
(`lowering/kernels/contraction.py`). The environment's `OPENBLAS_CORETYPE`,
if set, picks OpenBLAS's kernels and is left alone.
"""

from __future__ import annotations

import os
from functools import cache

PREFIX = "scipy_"
"""Every symbol of the library starts with this; JIT entry names must not."""

INT_MAX = 2**31 - 1
"""The largest size or leading dimension a CBLAS call takes (32-bit `blasint`)."""

ROW_MAJOR = 101  # CblasRowMajor
NO_TRANS = 111  # CblasNoTrans
TRANS = 112  # CblasTrans: plain transpose, also for complex (not CblasConjTrans)

GEMM = {"f32": "cblas_sgemm", "f64": "cblas_dgemm", "complex<f32>": "cblas_cgemm", "complex<f64>": "cblas_zgemm"}
"""The CBLAS GEMM of each element type BLAS computes in."""

SET_NUM_THREADS = "openblas_set_num_threads"


def symbol(name: str) -> str:
    """The exported name of a CBLAS or OpenBLAS function (`cblas_sgemm` -> `scipy_cblas_sgemm`)."""
    return PREFIX + name


@cache
def load() -> str:
    """Load the library for the JIT (once per process) and return its path."""
    import llvmlite.binding as llvm

    try:
        import scipy_openblas32
    except ImportError as error:
        raise ImportError(
            "rlx.matmul on floating-point types calls OpenBLAS from the 'scipy-openblas32' package, "
            "which is not installed (pip install scipy-openblas32)"
        ) from error
    path = os.path.join(scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(fullname=True))
    llvm.load_library_permanently(path)
    return path
