"""The pipelines the numeric suites compare `rlx_mlir.compile`'s default against, named once.

`rlx_mlir.compile(module)` runs every tensor pass; a fusion suite checks that
its pass changes nothing numerically by compiling the same module again with
less of the pipeline (`rlx_mlir.compile(module, pipeline=...)`).
"""

from xdsl.dialects.builtin import ModuleOp

from rlx_mlir.context import make_context
from rlx_mlir.passes.default_pipeline import TENSOR_PASSES

NO_GRAPH_PASSES = ""
"""No tensor passes at all: every op is its own kernel (the fuzzer's baseline)."""

ELEMENTWISE_FUSION_ONLY = "canonicalize,canonicalize-broadcast,fuse-elementwise,canonicalize-broadcast"
"""The default tensor passes less the reduction, epilogue and sibling fusions: elementwise chains are
fused, but nothing is fused into a reduction, a normalization or a contraction (the baseline of the
reduction, normalize and contraction fusion suites)."""


def tensor_passes(module: ModuleOp) -> ModuleOp:
    """The module after the default pipeline's tensor passes (rewritten in place)."""
    ctx = make_context()
    for p in TENSOR_PASSES:
        p.apply(ctx, module)
    return module


def count(module: ModuleOp, kind: type) -> int:
    """How many ops of `kind` the module holds, nested ones included."""
    return sum(isinstance(op, kind) for op in module.walk())
