"""vjp(): the `autodiff` pass behind the Python API.

    grad = rlx.vjp(text, wrt=["x", "w"])   # or wrt=[0, 1]; a ModuleOp works too
    y, dx, dw = rlx.compile(grad)(x, w, dy)

The conventions (argument order, names, zeros for unreached inputs) are the
pass's: see `rlx_mlir/passes/autodiff.py`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from rlx_mlir.compiler import parse, verify
from rlx_mlir.context import make_context
from rlx_mlir.errors import ArgumentError, CompileError, VerificationError
from rlx_mlir.passes.autodiff import AutodiffPass, ScanCheckpointing, resolve_wrt


def _check_wrt(wrt: Sequence[int | str]) -> tuple[int | str, ...]:
    if isinstance(wrt, (str, int)) or not isinstance(wrt, Sequence):
        raise ArgumentError(f"wrt must be a list of argument positions or names, got {wrt!r}")
    for entry in wrt:
        if isinstance(entry, bool) or not isinstance(entry, (int, str)):
            raise ArgumentError(f"wrt entries are argument positions (int) or names (str), got {entry!r}")
    return tuple(wrt)


def vjp(module_or_text: ModuleOp | str, wrt: Sequence[int | str] = (), checkpoints: str = "all") -> ModuleOp:
    """The module with every function replaced by its vector-Jacobian product.

    The module is canonicalized first (so a scan's stepwise work, such as the
    input projection of a recurrent cell, is outside the loop and its adjoint
    one batched op, not one per step). Inputs become the original inputs plus
    one cotangent per output; outputs
    the original outputs plus one gradient per `wrt` argument (positions or
    block-argument names; empty: every float argument). `checkpoints` says how
    each differentiated `rlx.scan` keeps its carries for `rlx.scan_backward`:
    "all", or ceil(sqrt(length)) checkpoints recomputed by "segments" or
    "griewank" (the same gradients, bit for bit, in less memory). A bad `wrt`
    or `checkpoints` is an ArgumentError, a gradient through an op without an
    adjoint a CompileError.
    """
    entries = _check_wrt(wrt)
    modes = ScanCheckpointing.spellings()
    if checkpoints not in modes:
        raise ArgumentError(f"vjp() checkpoints={checkpoints!r} is not one of {', '.join(modes)}")
    if isinstance(module_or_text, str):
        module = parse(module_or_text)
    elif isinstance(module_or_text, ModuleOp):
        module = module_or_text.clone()
        verify(module)
    else:
        raise CompileError(f"vjp() takes IR text or a builtin.module, got {type(module_or_text).__name__}")
    for function in module.ops:
        if isinstance(function, func.FuncOp) and function.body.blocks:
            try:
                resolve_wrt(function, entries)
            except (ValueError, VerifyException) as error:
                raise ArgumentError(str(error)) from None
    try:
        ctx = make_context()
        CanonicalizePass().apply(ctx, module)  # first: a scan's stepwise work leaves the loop, and with it its adjoint
        AutodiffPass(wrt=entries, checkpoints=checkpoints).apply(ctx, module)
    except PassFailedException as error:
        raise CompileError(str(error)) from None
    try:
        verify(module)
    except VerificationError as error:  # a bug in an adjoint, reported as such
        raise CompileError(f"autodiff produced invalid IR: {error}") from None
    return module
