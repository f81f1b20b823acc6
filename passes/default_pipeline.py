"""rlx-default: the whole pipeline under one pass name, as `rlx_mlir.compile` runs it."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from rlx_mlir.passes.canonicalize_broadcast import CanonicalizeBroadcastPass
from rlx_mlir.passes.fuse_elementwise import FuseElementwisePass
from rlx_mlir.passes.lower_to_llvm import LowerToLLVMPass
from rlx_mlir.passes.plan_memory import PlanMemoryPass

TENSOR_STAGES: tuple[ModulePass, ...] = (
    CanonicalizeBroadcastPass(),  # expands folded into implicit broadcasts
    FuseElementwisePass(),        # chains -> rlx.elementwise_region
    PlanMemoryPass(),             # one arena, offsets on every value
)


@dataclass(frozen=True)
class DefaultPipelinePass(ModulePass):
    name = "rlx-default"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in (*TENSOR_STAGES, LowerToLLVMPass()):
            stage.apply(ctx, op)
