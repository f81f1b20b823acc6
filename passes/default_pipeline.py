"""default: the whole pipeline under one pass name (`rlx-opt -p default`).

`rlx_mlir.compile` runs the same stages, stopping before lower-to-llvm to read
the planned function, so both are built from the tuples below.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

from rlx_mlir.passes.canonicalize_broadcast import CanonicalizeBroadcastPass
from rlx_mlir.passes.fuse_attention import FuseAttentionPass
from rlx_mlir.passes.fuse_elementwise import FuseElementwisePass
from rlx_mlir.passes.fuse_epilogues import FuseEpiloguesPass
from rlx_mlir.passes.fuse_mamba2 import FuseMamba2Pass
from rlx_mlir.passes.fuse_reductions import FuseReductionsPass
from rlx_mlir.passes.fuse_selective_scan import FuseSelectiveScanPass
from rlx_mlir.passes.fuse_siblings import FuseSiblingsPass
from rlx_mlir.passes.fuse_standardization import FuseStandardizationPass
from rlx_mlir.passes.lower_to_llvm import LowerToLLVMPass
from rlx_mlir.passes.pack_conv_weights import PackConvWeightsPass
from rlx_mlir.passes.pack_matmul_weights import PackMatmulWeightsPass
from rlx_mlir.passes.plan_memory import PlanMemoryPass

TENSOR_PASSES: tuple[ModulePass, ...] = (
    CanonicalizePass(),
    CanonicalizeBroadcastPass(),
    FuseAttentionPass(),
    FuseSelectiveScanPass(),
    FuseMamba2Pass(),
    FuseStandardizationPass(),
    FuseElementwisePass(),
    FuseReductionsPass(),
    FuseEpiloguesPass(),
    FuseSiblingsPass(),
    CanonicalizeBroadcastPass(),
)
"""Graph-level rewrites: op canonicalizations (transpose/reverse chains, identity
slices and pads), expands folded into implicit broadcasts, attention written
out (matmul, scale, mask, softmax, matmul) made one `rlx.attention`, Mamba's
selective scan unrolled step by step made one `rlx.selective_scan` and Mamba2's
chunked scan one `rlx.mamba2`, layer and RMS norms
written out made one region each, chains fused, chains
feeding reductions fused in as their prologues and chains after matmuls as
their epilogues, elementwise siblings that read one input merged, then
index-map ops (expand,
transpose, slice, ...) folded into the fused regions."""

BACKEND_PASSES: tuple[ModulePass, ...] = (
    PackConvWeightsPass(),
    PackMatmulWeightsPass(),
    PlanMemoryPass(),
    LowerToLLVMPass(),
)
"""Constant conv and GEMM weights packed for the target's kernels, one arena with
an offset per value, then the `llvm` dialect."""


def spec(passes: tuple[ModulePass, ...]) -> str:
    """The `-p` pipeline text that runs `passes`."""
    return ",".join(str(p.pipeline_pass_spec()) for p in passes)


TENSOR_PIPELINE = spec(TENSOR_PASSES)


def tensor_pipeline_without(name: str) -> str:
    """The default tensor pipeline less the pass called `name`: the baseline an A/B of one
    rewrite compiles against (the rest of the pipeline would otherwise differ too)."""
    kept = tuple(p for p in TENSOR_PASSES if p.name != name)
    if len(kept) == len(TENSOR_PASSES):
        raise ValueError(f"no pass called {name!r} in the default pipeline")
    return spec(kept)


@dataclass(frozen=True)
class DefaultPipelinePass(ModulePass):
    name = "default"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in (*TENSOR_PASSES, *BACKEND_PASSES):
            p.apply(ctx, op)
