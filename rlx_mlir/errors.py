"""The exceptions the Python API raises for bad input (never a bare traceback
from deep inside xDSL or llvmlite)."""

from __future__ import annotations


class RlxError(Exception):
    """Base of every error rlx_mlir reports about its input."""


class ParseError(RlxError):
    """The IR text does not parse; the message carries line:column."""


class VerificationError(RlxError):
    """The IR parses but breaks a rule (shapes, dtypes, attributes)."""


class CompileError(RlxError):
    """The module cannot be compiled (unknown pass, unsupported op, ...)."""


class ArgumentError(RlxError, ValueError):
    """A compiled function was called with the wrong arrays."""


class AllocationError(RlxError, MemoryError):
    """An arena or a result is too large to allocate."""
