"""The MLIR context every entry point (API, rlx-opt, rlx-run, tests) shares."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

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


@contextlib.contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a module is parsed and compiled.

    Compiling builds hundreds of thousands of IR objects, and every full
    collection walks all that are alive: with the collector on, lowering a
    3,000-op movement chain took 1.7x and translating it to llvmlite 2.7x as
    long (CPU time), and compile time grew faster than the graph; `rlx-opt -p
    default` on a 20,000-op elementwise chain took 15.7 s instead of 10.2 s,
    2.3x its 10,000-op time instead of 1.8x. `rlx.compile` and rlx-opt both
    run under it; the IR they leave behind is collected once the collector
    runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
