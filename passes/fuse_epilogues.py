"""fuse-epilogues: elementwise consumers of a matmul or a conv become its epilogue.

An `rlx.elementwise_region` (what fuse-elementwise made of a bias add, an
activation, a residual add, ...) or a lone elementwise op that reads a
matmul's or conv's result at the same index it writes, as that result's only
user, is merged with it into one `rlx.contraction_region` or
`rlx.conv_region`: the kernel applies the region's body to each block of the
product right after computing it, while the block is in cache.

Fused are f32/f64 products whose epilogue result keeps the product's element
type and that are one GEMM: 2-D ones, and those whose lhs batch folds into its
rows ([B, S, K] x [K, N], a transformer's dense layers), made 2-D around the
fusion by reshapes (views) where every other input of the epilogue folds too
(it reads only the last axis, a bias, or the whole result as it is, a residual).
Other batched, narrow and integer matmuls keep their epilogue as one
elementwise pass of its own. Convs fuse at
every type when the epilogue keeps the element type and its other inputs read
the spatial axes all broadcast or all as the result (`epilogue_reads_planes`);
a conv's own bias becomes the first step of the body, so a ResNet block's
conv, bias, residual add and ReLU are one kernel (except at f16/bf16, whose
conv adds its bias to the f32 sums before rounding them once).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_mlir import dtypes, index_maps
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
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
    """An f32/f64 product whose epilogue keeps its element type, so each block is
    finished in the result's memory."""
    element = element_type(matmul.result.type)
    return dtypes.from_ir(element).name in ("f32", "f64") and element_type(region.outputs[0].type) == element


def _folded_accesses(amap: AffineMap, rank: int) -> tuple[index_maps.Access, ...] | None:
    """The accesses of an epilogue input over [rows, N] if over the rank-`rank` result
    it reads at most the last axis (a bias: the rows fold into one axis it ignores)."""
    accesses = index_maps.accesses(amap)
    if any(a.dim is not None and a.dim != rank - 1 for a in accesses):
        return None
    return tuple(a if a.dim is None else a._replace(dim=1) for a in accesses)


def _fused_rows(matmul: ct.MatmulOp, region: rg.ElementwiseRegionOp, k: int) -> list[Operation] | None:
    """[..., S, K] x [K, N] and its epilogue as one [rows, N] contraction region between
    reshapes, or None where the lhs does not fold (a batched rhs, a transposed lhs) or
    an epilogue input reads the rows otherwise than the result does."""
    shape, lhs = shape_of(matmul.result.type), shape_of(matmul.lhs.type)
    if len(shape_of(matmul.rhs.type)) != 2 or matmul.transposes[0] or len(lhs) != len(shape):
        return None
    rows, n = numel(shape[:-1]), shape[-1]
    ops: list[Operation] = []

    def as_rows(value: SSAValue, columns: int) -> SSAValue:
        reshape = rlx.ReshapeOp(value, TensorType(element_type(value.type), [rows, columns]))
        ops.append(reshape)
        return reshape.result

    inputs, maps = [], []
    for i, value in enumerate(region.inputs):
        if i == k:
            continue
        accesses = _folded_accesses(region.maps[i], len(shape))
        if accesses is not None:
            inputs.append(value)
            maps.append(index_maps.to_affine(2, accesses))
        elif index_maps.accesses(region.maps[i]) == index_maps.identity(len(shape)) and shape_of(value.type) == shape:
            inputs.append(as_rows(value, n))
            maps.append(AffineMap.identity(2))
        else:
            return None
    product = (as_rows(matmul.lhs, lhs[-1]), matmul.rhs, matmul.transposes)
    result = TensorType(element_type(region.outputs[0].type), [rows, n])
    fused = rg.ContractionRegionOp(product, inputs, maps, result, _body_with_product_first(region, k))
    return [*ops, fused, rlx.ReshapeOp(fused.outputs[0], region.outputs[0].type)]


def _fuse_sole_consumer(
    producer: ct.MatmulOp | cv.ConvOp,
    fused_with: Callable[[rg.ElementwiseRegionOp], Operation | list[Operation] | None],
    rewriter: PatternRewriter,
) -> None:
    """Replace `producer` and its only user, an elementwise region or op, by what
    `fused_with(the user as a region)` makes of them (None: leave both)."""
    uses = list(producer.result.uses)
    if len(uses) != 1:
        return
    consumer = uses[0].operation
    with rg.ElementwiseRegionOp.covering(consumer) as region:
        fused = None if region is None else fused_with(region)
    if fused is not None:
        rewriter.replace(consumer, fused)
        rewriter.erase(producer)


class FuseMatmulEpilogue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, matmul: ct.MatmulOp, rewriter: PatternRewriter) -> None:
        _fuse_sole_consumer(matmul, lambda region: self._fused(matmul, region), rewriter)

    @staticmethod
    def _fused(matmul: ct.MatmulOp, region: rg.ElementwiseRegionOp) -> Operation | list[Operation] | None:
        inputs = list(region.inputs)
        k = _reads_at_index(region, matmul.result, shape_of(matmul.result.type))
        if k is None or not _blockable(matmul, region):
            return None
        if len(shape_of(matmul.result.type)) != 2:
            return _fused_rows(matmul, region, k)
        others = [i for i in range(len(inputs)) if i != k]
        return rg.ContractionRegionOp(
            (matmul.lhs, matmul.rhs, matmul.transposes),
            [inputs[i] for i in others],
            [region.maps[i] for i in others],
            region.outputs[0].type,
            _body_with_product_first(region, k),
        )


def _reads_at_index(region: rg.ElementwiseRegionOp, value: SSAValue, shape: tuple[int, ...]) -> int | None:
    """The position of `value` among the region's inputs if the region has one
    output of `shape` and reads `value` once, at the point it writes."""
    inputs = list(region.inputs)
    if inputs.count(value) != 1 or len(region.outputs) != 1 or region.iteration_shape != shape:
        return None
    k = inputs.index(value)
    return k if index_maps.accesses(region.maps[k]) == index_maps.identity(region.maps[k].num_dims) else None


def _body_after_bias(region: rg.ElementwiseRegionOp, k: int, bias_type: Attribute) -> Region:
    """The region's body, with the product first, after `acc + bias` (the bias an
    extra argument right after the product): the conv's bias folded into its epilogue."""
    old = _body_with_product_first(region, k).block
    block = Block(arg_types=[old.args[0].type, element_type(bias_type), *(a.type for a in old.args[1:])])
    added = ew.AddOp(block.args[0], block.args[1], old.args[0].type)
    block.add_op(added)
    old.args[0].replace_all_uses_with(added.result)
    for new, arg in zip(block.args[2:], old.args[1:]):
        arg.replace_all_uses_with(new)
        new.name_hint = arg.name_hint
    for op in list(old.ops):
        op.detach()
        block.add_op(op)
    return Region([block])


class FuseConvEpilogue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: cv.ConvOp, rewriter: PatternRewriter) -> None:
        _fuse_sole_consumer(conv, lambda region: self._fused(conv, region), rewriter)

    @staticmethod
    def _fused(conv: cv.ConvOp, region: rg.ElementwiseRegionOp) -> rg.ConvRegionOp | None:
        shape = shape_of(conv.result.type)
        k = _reads_at_index(region, conv.result, shape)
        element = element_type(conv.result.type)
        if k is None or element_type(region.outputs[0].type) != element:
            return None
        if conv.bias is not None and dtypes.from_ir(element).name in cv.WIDENED_TYPES:
            return None  # its f32 sums take the bias before their one rounding; a body would add it after
        others = [i for i in range(len(region.inputs)) if i != k]
        inputs, maps = [region.inputs[i] for i in others], [region.maps[i] for i in others]
        if not all(rg.epilogue_reads_planes(m, shape_of(v.type), shape) for v, m in zip(inputs, maps)):
            return None
        if conv.bias is None:
            return rg.ConvRegionOp(conv, inputs, maps, region.outputs[0].type, _body_with_product_first(region, k))
        channel = AffineMap(len(shape), 0, (AffineExpr.dimension(1),))
        body = _body_after_bias(region, k, conv.bias.type)
        return rg.ConvRegionOp(conv, [conv.bias, *inputs], [channel, *maps], region.outputs[0].type, body)


@dataclass(frozen=True)
class FuseEpiloguesPass(ModulePass):
    name = "fuse-epilogues"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([FuseMatmulEpilogue(), FuseConvEpilogue()])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
