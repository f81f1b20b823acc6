"""fuse-epilogues: elementwise consumers of a matmul become its epilogue.

An `rlx.elementwise_region` (what fuse-elementwise made of a bias add, an
activation, a residual add, ...) or a lone elementwise op that reads a
matmul's result at the same index it writes, as that result's only user, is
merged with the matmul into
one `rlx.contraction_region`: the kernel applies the region's body to each
block of the product right after computing it, while the block is in cache.
Fused are 2-D f32/f64 products (one BLAS GEMM computed by row blocks) whose
epilogue result keeps the product's element type; batched, narrow and integer
matmuls keep their epilogue as one elementwise pass of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from rlx_mlir import dtypes, index_maps
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of


def _body_with_product_first(region: rg.ElementwiseRegionOp, k: int) -> Region:
    """The region's body with block argument `k` (the product) moved to the front."""
    old = region.body.clone().block
    order = [k, *(i for i in range(len(old.args)) if i != k)]
    block = Block(arg_types=[old.args[i].type for i in order])
    for new, i in zip(block.args, order):
        old.args[i].replace_all_uses_with(new)
        new.name_hint = old.args[i].name_hint
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
    return Region([block])


def _blockable(matmul: ct.MatmulOp, region: rg.ElementwiseRegionOp) -> bool:
    """A 2-D f32/f64 product (a BLAS GEMM computed by row blocks) whose epilogue
    keeps its element type, so each block is finished in the result's memory."""
    element = element_type(matmul.result.type)
    return (
        len(shape_of(matmul.result.type)) == 2
        and dtypes.from_ir(element).name in ("f32", "f64")
        and element_type(region.outputs[0].type) == element
    )


class FuseMatmulEpilogue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, matmul: ct.MatmulOp, rewriter: PatternRewriter) -> None:
        uses = list(matmul.result.uses)
        if len(uses) != 1:
            return
        consumer = uses[0].operation
        with rg.ElementwiseRegionOp.covering(consumer) as region:
            fused = None if region is None else self._fused(matmul, region)
        if fused is not None:
            rewriter.replace(consumer, fused)
            rewriter.erase(matmul)

    @staticmethod
    def _fused(matmul: ct.MatmulOp, region: rg.ElementwiseRegionOp) -> rg.ContractionRegionOp | None:
        inputs = list(region.inputs)
        k = inputs.index(matmul.result) if inputs.count(matmul.result) == 1 else -1
        fusible = (
            k >= 0
            and len(region.outputs) == 1
            and _blockable(matmul, region)
            and shape_of(matmul.result.type) == region.iteration_shape
            and index_maps.accesses(region.maps[k]) == index_maps.identity(region.maps[k].num_dims)
        )
        if not fusible:
            return None
        others = [i for i in range(len(inputs)) if i != k]
        return rg.ContractionRegionOp(
            matmul,
            [inputs[i] for i in others],
            [region.maps[i] for i in others],
            region.outputs[0].type,
            _body_with_product_first(region, k),
        )


@dataclass(frozen=True)
class FuseEpiloguesPass(ModulePass):
    name = "fuse-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseMatmulEpilogue(), apply_recursively=False).rewrite_module(op)
