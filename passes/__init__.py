"""The rlx passes, one module each.

Tensor-level passes (`canonicalize_broadcast`, `fuse_elementwise`,
`plan_memory`) sit below the kernel emitters of `rlx_mlir.lowering`; the
conversion `lower_to_llvm`, the `default` pipeline and the name `registry`
sit above them (the layer contract in pyproject.toml keeps it so).
"""
