"""rlx_mlir: an MLIR-style compiler for ML tensor graphs, on xDSL and llvmlite.

import numpy as np, rlx_mlir as rlx
exe = rlx.compile(text)          # or rlx.compile(rlx.parse(text)), rlx.Builder
(y,) = exe(x)
grad = rlx.vjp(text, wrt=["x"])  # the VJP function: (x, dy) -> (y, dx)
"""

from rlx_mlir.autodiff import vjp
from rlx_mlir.builder import Builder
from rlx_mlir.compiler import compile, parse
from rlx_mlir.errors import (
    AllocationError,
    ArgumentError,
    CompileError,
    ParseError,
    RlxError,
    VerificationError,
)
from rlx_mlir.target import TargetError
from rlx_mlir.tuning import TuningError

__all__ = [
    "AllocationError",
    "ArgumentError",
    "Builder",
    "CompileError",
    "ParseError",
    "RlxError",
    "TargetError",
    "TuningError",
    "VerificationError",
    "compile",
    "parse",
    "vjp",
]
