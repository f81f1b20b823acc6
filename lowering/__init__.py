"""rlx IR to the `llvm` dialect, in four layers (imports only point down):
`program.py` (the entry function over the kernels), `kernels/` (one module per
op family), `scalar/` (what one element computes) and `core/` (the emitter,
codecs, loops and kernel calling convention they all use)."""
