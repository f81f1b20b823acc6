"""The pipelines the numeric suites compare `rlx_mlir.compile`'s default against, named once.

`rlx_mlir.compile(module)` runs every tensor pass; a fusion suite checks that
its pass changes nothing numerically by compiling the same module again with
less of the pipeline (`rlx_mlir.compile(module, pipeline=...)`).
"""

NO_GRAPH_PASSES = ""
"""No tensor passes at all: every op is its own kernel (the fuzzer's baseline)."""

ELEMENTWISE_FUSION_ONLY = "canonicalize,canonicalize-broadcast,fuse-elementwise,canonicalize-broadcast"
"""The default tensor passes less the reduction, epilogue and sibling fusions: elementwise chains are
fused, but nothing is fused into a reduction, a normalization or a contraction (the baseline of the
reduction, normalize and contraction fusion suites)."""
