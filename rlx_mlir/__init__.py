"""rlx_mlir: an MLIR-style compiler for ML tensor graphs, on xDSL and llvmlite.

import numpy as np, rlx_mlir as rlx
exe = rlx.compile(text)          # or rlx.compile(rlx.parse(text)), rlx.Builder
(y,) = exe(x)
grad = rlx.vjp(text, wrt=["x"])  # the VJP function: (x, dy) -> (y, dx)

The names below are imported at first use (PEP 562 `__getattr__`): importing
a submodule imports this package first, and `rlx-opt`, which needs neither
the compiler nor the Builder, should not pay for loading them (the lowering,
the JIT and their dependencies: over a second per process, ~180 processes in
the lit suite).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rlx_mlir.errors import (
    AllocationError,
    ArgumentError,
    CompileError,
    ParseError,
    RlxError,
    VerificationError,
)

if TYPE_CHECKING:
    from rlx_mlir.autodiff import vjp
    from rlx_mlir.builder import Builder
    from rlx_mlir.compiler import compile, parse
    from rlx_mlir.target import TargetError
    from rlx_mlir.tuning import TuningError

_LAZY = {
    "Builder": "rlx_mlir.builder",
    "TargetError": "rlx_mlir.target",
    "TuningError": "rlx_mlir.tuning",
    "compile": "rlx_mlir.compiler",
    "parse": "rlx_mlir.compiler",
    "vjp": "rlx_mlir.autodiff",
}
"""Each public name not defined in `rlx_mlir.errors`, and the module defining it."""


def __getattr__(name: str) -> object:
    """A public name of `_LAZY`, or a submodule (`rlx.runtime.Executable`, `rlx.dialects`),
    which importing the compiler used to load with the package."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # later lookups find it without this hook
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


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
