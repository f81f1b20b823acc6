"""Kernels for `rlx.elementwise_region`: a loop nest around the scalar body.

Every operand is described by its element strides over the iteration space
(0 on a broadcast axis). Adjacent axes that every operand walks contiguously
are merged first, so a same-shape chain becomes one flat loop and a bias add
a 2-deep nest whose inner loop is contiguous for all operands: the shapes the
vectorizer turns into packed AVX-512 code. The outermost loop runs over
`[begin, end)`, which is how the runtime splits a kernel across threads.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr, i64
from xdsl.ir import Block, Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects import rlx
from rlx_mlir.lowering.element_types import Value, codec
from rlx_mlir.lowering.emitter import Emitter
from rlx_mlir.lowering.loops import for_range
from rlx_mlir.lowering.scalar_ops import emit_scalar_op

PTR = llvm.LLVMPointerType()
TILE = 32  # 32 x 32 f32 = 4 KiB per operand: tiles of a transpose stay in L1


@dataclass(frozen=True)
class LoopNest:
    """Coalesced iteration space: extents (outermost first), per-operand strides
    (elements per step of each axis, may be negative or 0) and base offsets."""

    sizes: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]  # inputs then outputs
    bases: tuple[int, ...] = ()

    @property
    def outer_extent(self) -> int:
        return self.sizes[0]

    @property
    def inner_work(self) -> int:
        return numel(self.sizes[1:])

    @property
    def transposed(self) -> bool:
        """Some operand walks the innermost axis with a stride while another axis
        is contiguous for it: a transpose, which is tiled."""
        if len(self.sizes) < 2 or self.sizes[-1] < TILE:
            return False
        return any(abs(s[-1]) > 1 and 1 in map(abs, s[:-1]) for s in self.strides)


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _input_strides(region_op: rlx.ElementwiseRegionOp) -> list[tuple[tuple[int, ...], int]]:
    """Per input: element strides over the iteration dims and the base offset."""
    rank = len(region_op.iteration_shape)
    result = []
    for value, amap in zip(region_op.inputs, region_op.maps):
        own = row_major_strides(rlx.shape_of(value.type))
        per_dim, base = [0] * rank, 0
        for axis, access in enumerate(index_maps.accesses(amap)):
            base += access.offset * own[axis]
            if access.dim is not None:
                per_dim[access.dim] += access.scale * own[axis]
        result.append((tuple(per_dim), base))
    return result


def coalesce(space: tuple[int, ...], strides: list[tuple[int, ...]], bases: tuple[int, ...] = ()) -> LoopNest:
    """Drop unit axes and merge axis pairs every operand walks as one contiguous run."""
    axes = [d for d, size in enumerate(space) if size != 1]
    sizes = [space[d] for d in axes]
    per_operand = [[s[d] for d in axes] for s in strides]
    merged_sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for position, size in enumerate(sizes):
        if merged_sizes and all(
            ops[-1] == own[position] * size for ops, own in zip(merged, per_operand)
        ):
            merged_sizes[-1] *= size
            for ops, own in zip(merged, per_operand):
                ops[-1] = own[position]
            continue
        merged_sizes.append(size)
        for ops, own in zip(merged, per_operand):
            ops.append(own[position])
    bases = bases or (0,) * len(strides)
    if not merged_sizes:
        return LoopNest((1,), tuple((0,) for _ in strides), bases)
    return LoopNest(tuple(merged_sizes), tuple(tuple(s) for s in merged), bases)


def loop_nest(region_op: rlx.ElementwiseRegionOp) -> LoopNest:
    space = region_op.iteration_shape
    inputs = _input_strides(region_op)
    outputs = [row_major_strides(space)] * len(region_op.outputs)
    bases = tuple(base for _, base in inputs) + (0,) * len(outputs)
    return coalesce(space, [s for s, _ in inputs] + outputs, bases)


def pointer_arg_attrs(n_pointers: int, n_scalars: int, aliased: set[int]) -> ArrayAttr:
    """`noalias` on every pointer parameter not in `aliased`, nothing on the scalars."""
    pointers = [DictionaryAttr({} if k in aliased else {"llvm.noalias": UnitAttr()}) for k in range(n_pointers)]
    return ArrayAttr(pointers + [DictionaryAttr({})] * n_scalars)


def emit_region_kernel(region_op: rlx.ElementwiseRegionOp, name: str, aliased: set[int]) -> llvm.FuncOp:
    """`void name(ptr in..., ptr out..., i64 begin, i64 end)` computing the region.

    Pointer parameters are `noalias` except those in `aliased` (an output
    written in place over an input shares memory with it).
    """
    nest = loop_nest(region_op)
    n_in, n_out = len(region_op.inputs), len(region_op.outputs)
    entry = Block(arg_types=[PTR] * (n_in + n_out) + [i64, i64])
    region = Region([entry])
    e = Emitter(entry)
    pointers = list(entry.args[: n_in + n_out])
    begin, end = entry.args[-2], entry.args[-1]

    rank = len(nest.sizes)
    tiled = nest.transposed

    def level(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        def body(i: SSAValue) -> None:
            here = [_advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]
            if depth + 1 < rank:
                level(depth + 1, here, e.i64(0), e.i64(nest.sizes[depth + 1]))
            else:
                _emit_body(e, region_op, pointers, here)

        if tiled and depth == rank - 2:
            tile_pair(depth, offsets, lo, hi)
        else:
            for_range(e, region, lo, hi, body)

    def tile_pair(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        """The two innermost loops in TILE x TILE blocks, so a transposed read
        and a contiguous write both stay in cache."""
        inner = e.i64(nest.sizes[depth + 1])

        def rows(i0: SSAValue) -> None:
            i1 = _min(e, e.add(i0, e.i64(TILE)), hi)

            def cols(j0: SSAValue) -> None:
                j1 = _min(e, e.add(j0, e.i64(TILE)), inner)

                def row(i: SSAValue) -> None:
                    here = [_advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]

                    def col(j: SSAValue) -> None:
                        cell = [_advance(e, off, j, strides[depth + 1]) for off, strides in zip(here, nest.strides)]
                        _emit_body(e, region_op, pointers, cell)

                    for_range(e, region, j0, j1, col)

                for_range(e, region, i0, i1, row)

            for_range(e, region, e.i64(0), inner, cols, step=TILE)

        for_range(e, region, lo, hi, rows, step=TILE)

    level(0, [e.i64(base) for base in nest.bases], begin, end)
    e.op(llvm.ReturnOp())
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([PTR] * (n_in + n_out) + [i64, i64]),
        body=region,
        other_props={"arg_attrs": pointer_arg_attrs(n_in + n_out, 2, aliased)},
    )


def _min(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.select(e.icmp("slt", a, b), a, b)


def _advance(e: Emitter, offset: SSAValue, index: SSAValue, stride: int) -> SSAValue:
    if stride == 0:
        return offset
    step = index if stride == 1 else e.mul(index, e.i64(stride))
    return e.add(offset, step)


def _emit_body(
    e: Emitter, region_op: rlx.ElementwiseRegionOp, pointers: list[SSAValue], offsets: list[SSAValue]
) -> None:
    block = region_op.body.block
    n_in = len(region_op.inputs)
    values: dict[SSAValue, Value] = {
        arg: codec(arg.type).load(e, pointers[k], offsets[k]) for k, arg in enumerate(block.args)
    }
    for op in block.ops:
        if isinstance(op, rlx.YieldOp):
            for j, value in enumerate(op.values):
                codec(value.type).store(e, values[value], pointers[n_in + j], offsets[n_in + j])
            continue
        values[op.results[0]] = emit_scalar_op(e, op, [values[v] for v in op.operands])


def emit_thunk(kernel: llvm.FuncOp, name: str, n_pointers: int) -> llvm.FuncOp:
    """`void name(ptr args, i64 begin, i64 end)`: the uniform entry every launcher calls.

    It unpacks the pointer array and calls the kernel, which O3 inlines; its
    `noalias` parameters become alias scopes, so the loop still vectorizes.
    """
    entry = Block(arg_types=[PTR, i64, i64])
    e = Emitter(entry)
    args, begin, end = entry.args
    pointers = [
        e.op(llvm.LoadOp(e.op(llvm.GEPOp(args, [k], PTR, inbounds=True)), PTR)) for k in range(n_pointers)
    ]
    e.op(llvm.CallOp(kernel.sym_name.data, *pointers, begin, end))
    e.op(llvm.ReturnOp())
    return llvm.FuncOp(name, llvm.LLVMFunctionType([PTR, i64, i64]), body=Region([entry]))


