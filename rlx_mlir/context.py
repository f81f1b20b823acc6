"""The MLIR context every entry point (API, rlx-opt, rlx-run, tests) shares."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects


def make_context() -> Context:
    """A context with xDSL's dialects loadable on demand and `rlx` registered."""
    from rlx_mlir.dialects.rlx import RLX

    ctx = Context(allow_unregistered=False)
    for name, factory in get_all_dialects().items():
        if name != "rlx":
            ctx.register_dialect(name, factory)
    ctx.register_dialect("rlx", lambda: RLX)
    return ctx
