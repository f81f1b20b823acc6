"""Explicit vector IR for kernels that keep accumulators in registers: typed
vector loads and stores, splats, column pieces and loop-carried values.

LLVM's loop vectorizer widens only the innermost loop; a kernel that reduces
over an outer loop while vectorizing along an inner dimension (a row sweep of
`lowering/delta_rule.py`) writes the vectors itself with these helpers.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, VectorType, i32, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from rlx_mlir.lowering.emitter import Emitter


def pieces(cols: int, widest: int) -> list[tuple[int, int]]:
    """(offset, width) pieces covering `cols` columns: full vectors, then halves, ..., scalars."""
    out, offset, width = [], 0, widest
    while offset < cols:
        while width > cols - offset:
            width //= 2
        out.append((offset, width))
        offset += width
    return out


def vector_type(scalar: Attribute, width: int) -> Attribute:
    """`width` lanes of `scalar` (the scalar itself for one lane)."""
    return scalar if width == 1 else VectorType(scalar, [width])


def element_at(e: Emitter, scalar: Attribute, base: SSAValue, index: SSAValue, width: int) -> SSAValue:
    """&base[index] (elements of `scalar`) as a pointer to `width` lanes: typed by a second GEP,
    which llvmlite needs to store a vector through a pointer to a stack array of scalars."""
    at = e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], scalar, ssa_indices=[index], inbounds=True))
    return at if width == 1 else e.op(llvm.GEPOp(at, [0], vector_type(scalar, width), inbounds=True))


def load(e: Emitter, scalar: Attribute, base: SSAValue, index: SSAValue, width: int) -> SSAValue:
    """`width` lanes from base[index], aligned to one element."""
    at = element_at(e, scalar, base, index, width)
    return e.op(llvm.LoadOp(at, vector_type(scalar, width), alignment=scalar.bitwidth // 8))


def store(e: Emitter, value: SSAValue, base: SSAValue, index: SSAValue) -> None:
    """A vector (or scalar) to base[index], aligned to one element."""
    vector = isinstance(value.type, VectorType)
    scalar = value.type.element_type if vector else value.type
    at = element_at(e, scalar, base, index, value.type.get_shape()[0] if vector else 1)
    e.op(llvm.StoreOp(value, at, alignment=scalar.bitwidth // 8))


def splat(e: Emitter, scalar: SSAValue, width: int) -> SSAValue:
    """`scalar` in every one of `width` lanes."""
    if width == 1:
        return scalar
    vector = VectorType(scalar.type, [width])
    one = e.op(llvm.InsertElementOp(e.op(llvm.UndefOp(vector)), scalar, e.const(i32, 0)))
    return e.op(llvm.ShuffleVectorOp(one, one, DenseArrayBase.from_list(i32, [0] * width), vector))


Step = Callable[[SSAValue, list[SSAValue]], list[SSAValue]]


def carry(e: Emitter, region: Region, count: int, init: list[SSAValue], step: Step) -> list[SSAValue]:
    """values = init; for i in range(count): values = step(i, values); the final values.
    The values are block arguments, so accumulators stay in registers."""
    header, loop, exit_ = Block(arg_types=[i64, *(v.type for v in init)]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, e.i64(0), *init))
    e.move_to(header)
    index, *values = header.args
    e.op(llvm.CondBrOp(e.icmp("slt", index, e.i64(count)), loop, [], exit_, []))
    e.move_to(loop)
    e.op(llvm.BrOp(header, e.add(index, e.i64(1)), *step(index, list(values))))
    region.add_block(exit_)
    e.move_to(exit_)
    return list(values)
