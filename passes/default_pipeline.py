"""default: the whole pipeline under one pass name (`rlx-opt -p default`).

`rlx_mlir.compile` runs the same stages, stopping before lower-to-llvm to read
the planned function, so both are built from the lists below.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

TENSOR_PIPELINE = "canonicalize,canonicalize-broadcast,fuse-elementwise,canonicalize-broadcast"
"""Graph-level rewrites: op canonicalizations (transpose/reverse chains, identity
slices and pads), expands folded into implicit broadcasts, chains fused, then
index-map ops (expand, transpose, slice, ...) folded into the fused regions."""

BACKEND_PIPELINE = "plan-memory,lower-to-llvm"
"""One arena with an offset per value, then the `llvm` dialect."""


@dataclass(frozen=True)
class DefaultPipelinePass(ModulePass):
    name = "default"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from rlx_mlir.passes import available_passes

        PassPipeline.parse_spec(available_passes(), f"{TENSOR_PIPELINE},{BACKEND_PIPELINE}").apply(ctx, op)
