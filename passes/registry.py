"""The pass registry: every rlx pass by name, created lazily as xDSL does."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _canonicalize_broadcast() -> type[ModulePass]:
    from rlx_mlir.passes.canonicalize_broadcast import CanonicalizeBroadcastPass

    return CanonicalizeBroadcastPass


def _autodiff() -> type[ModulePass]:
    from rlx_mlir.passes.autodiff import AutodiffPass

    return AutodiffPass


def _fuse_attention() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_attention import FuseAttentionPass

    return FuseAttentionPass


def _fuse_selective_scan() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_selective_scan import FuseSelectiveScanPass

    return FuseSelectiveScanPass


def _fuse_mamba2() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_mamba2 import FuseMamba2Pass

    return FuseMamba2Pass


def _fuse_elementwise() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_elementwise import FuseElementwisePass

    return FuseElementwisePass


def _fuse_siblings() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_siblings import FuseSiblingsPass

    return FuseSiblingsPass


def _fuse_epilogues() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_epilogues import FuseEpiloguesPass

    return FuseEpiloguesPass


def _fuse_reductions() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_reductions import FuseReductionsPass

    return FuseReductionsPass


def _fuse_standardization() -> type[ModulePass]:
    from rlx_mlir.passes.fuse_standardization import FuseStandardizationPass

    return FuseStandardizationPass


def _plan_memory() -> type[ModulePass]:
    from rlx_mlir.passes.plan_memory import PlanMemoryPass

    return PlanMemoryPass


def _pack_conv_weights() -> type[ModulePass]:
    from rlx_mlir.passes.pack_conv_weights import PackConvWeightsPass

    return PackConvWeightsPass


def _pack_matmul_weights() -> type[ModulePass]:
    from rlx_mlir.passes.pack_matmul_weights import PackMatmulWeightsPass

    return PackMatmulWeightsPass


def _lower_to_llvm() -> type[ModulePass]:
    from rlx_mlir.passes.lower_to_llvm import LowerToLLVMPass

    return LowerToLLVMPass


def _default_pipeline() -> type[ModulePass]:
    from rlx_mlir.passes.default_pipeline import DefaultPipelinePass

    return DefaultPipelinePass


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The rlx passes (what rlx-opt registers on top of xDSL's)."""
    return {
        "autodiff": _autodiff,
        "canonicalize-broadcast": _canonicalize_broadcast,
        "fuse-attention": _fuse_attention,
        "fuse-selective-scan": _fuse_selective_scan,
        "fuse-mamba2": _fuse_mamba2,
        "fuse-standardization": _fuse_standardization,
        "fuse-elementwise": _fuse_elementwise,
        "fuse-reductions": _fuse_reductions,
        "fuse-epilogues": _fuse_epilogues,
        "fuse-siblings": _fuse_siblings,
        "pack-conv-weights": _pack_conv_weights,
        "pack-matmul-weights": _pack_matmul_weights,
        "plan-memory": _plan_memory,
        "lower-to-llvm": _lower_to_llvm,
        "default": _default_pipeline,
    }


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes (canonicalize, cse, dce, ...) and the rlx ones, for pipelines."""
    from xdsl.transforms import get_all_passes as xdsl_passes

    return {**xdsl_passes(), **get_all_passes()}
