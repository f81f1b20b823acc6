"""Explicit vector IR for kernels that keep accumulators in registers: typed
vector loads and stores, splats, column pieces and loop-carried values; square
register transposes; cache-line arithmetic and non-temporal stores.

LLVM's loop vectorizer widens only the innermost loop; a kernel that reduces
over an outer loop while vectorizing along an inner dimension (a row sweep of
`lowering/kernels/delta_rule.py`) writes the vectors itself with these helpers. So do
the transposed copies and the streaming stores of `lowering/kernels/elementwise.py`:
a non-temporal store must be a whole aligned line, which a vectorized scalar
store never is (LLVM refuses to vectorize a loop whose scalar store carries
`!nontemporal`), so outputs larger than the last-level cache
(`Tuning.nontemporal_min_bytes`) leave through explicit 64-byte vectors.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, FixedBitwidthType, VectorType, i32, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from rlx_mlir.lowering.core.emitter import Emitter

LINE_BYTES = 64  # a cache line, and one AVX-512 register


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
    at = e.element_ptr(base, index, scalar)
    return at if width == 1 else e.field_ptr(at, 0, vector_type(scalar, width))


def _element_bytes(scalar: Attribute) -> int:
    """The bytes of one element: a vector access is aligned to one element."""
    if not isinstance(scalar, FixedBitwidthType):
        raise TypeError(f"{scalar} has no fixed width")
    return scalar.bitwidth // 8


def load(e: Emitter, scalar: Attribute, base: SSAValue, index: SSAValue, width: int) -> SSAValue:
    """`width` lanes from base[index], aligned to one element."""
    at = element_at(e, scalar, base, index, width)
    return e.load(at, vector_type(scalar, width), alignment=_element_bytes(scalar))


def store(e: Emitter, value: SSAValue, base: SSAValue, index: SSAValue, nontemporal: bool = False) -> None:
    """A vector (or scalar) to base[index], aligned to one element; a non-temporal store
    (`nontemporal`) must be a whole, 64-byte aligned line, which the caller guarantees."""
    t = value.type
    scalar = t.element_type if isinstance(t, VectorType) else t
    at = element_at(e, scalar, base, index, t.get_shape()[0] if isinstance(t, VectorType) else 1)
    alignment = LINE_BYTES if nontemporal else _element_bytes(scalar)
    e.store(value, at, alignment=alignment, nontemporal=nontemporal)


def to_line(e: Emitter, base: SSAValue, index: SSAValue, size: int) -> SSAValue:
    """Elements of `size` bytes from &base[index] to the next cache-line boundary (0 if on one);
    only a count of whole elements lands on the boundary, so callers that need it aligned
    check `base` too (`element_aligned`)."""
    address = e.add(e.op(llvm.PtrToIntOp(base, i64)), e.mul(index, e.i64(size)))
    return e.udiv(e.and_(e.sub(e.i64(0), address), e.i64(LINE_BYTES - 1)), e.i64(size))


def element_aligned(e: Emitter, base: SSAValue, size: int) -> SSAValue:
    """Whether `base` is a multiple of `size` bytes (NumPy's arrays are; odd views may not be)."""
    misaligned = e.and_(e.op(llvm.PtrToIntOp(base, i64)), e.i64(size - 1))
    return e.icmp("eq", misaligned, e.i64(0))


def splat(e: Emitter, scalar: SSAValue, width: int) -> SSAValue:
    """`scalar` in every one of `width` lanes."""
    if width == 1:
        return scalar
    vector = VectorType(scalar.type, [width])
    one = e.op(llvm.InsertElementOp(e.op(llvm.UndefOp(vector)), scalar, e.const(i32, 0)))
    return e.op(llvm.ShuffleVectorOp(one, one, DenseArrayBase.from_list(i32, [0] * width), vector))


Step = Callable[[SSAValue, list[SSAValue]], list[SSAValue]]


def carry(e: Emitter, region: Region, count: int | SSAValue, init: list[SSAValue], step: Step) -> list[SSAValue]:
    """values = init; for i in range(count): values = step(i, values); the final values.
    The values are block arguments, so accumulators stay in registers."""
    header, loop, exit_ = Block(arg_types=[i64, *(v.type for v in init)]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, e.i64(0), *init))
    e.move_to(header)
    index, *values = header.args
    bound = e.i64(count) if isinstance(count, int) else count
    e.op(llvm.CondBrOp(e.icmp("slt", index, bound), loop, [], exit_, []))
    e.move_to(loop)
    e.op(llvm.BrOp(header, e.add(index, e.i64(1)), *step(index, list(values))))
    region.add_block(exit_)
    e.move_to(exit_)
    return list(values)


def shuffle(e: Emitter, a: SSAValue, b: SSAValue, mask: list[int]) -> SSAValue:
    """Lanes of `a` (indices < width) and `b` (width + index) picked by `mask`."""
    return e.op(llvm.ShuffleVectorOp(a, b, DenseArrayBase.from_list(i32, mask), a.type))


def transpose_square(e: Emitter, rows: list[SSAValue]) -> list[SSAValue]:
    """The transpose of a width x width block held as `width` row vectors (width a power of 2).

    Stage k exchanges bit k of the row index with bit k of the column index, so after
    log2(width) stages element (r, c) sits at (c, r). Each new row is one two-source shuffle of
    a pair of rows, which AVX-512 does in one vpermt2 instruction: width * log2(width)
    shuffles per block, ~0.25 per element for 16 x 16.
    """
    width = len(rows)
    step = 1
    while step < width:
        low = [c if c & step == 0 else width + (c ^ step) for c in range(width)]
        high = [c | step if c & step == 0 else width + c for c in range(width)]
        out = list(rows)
        for r in range(width):
            if r & step == 0:
                out[r] = shuffle(e, rows[r], rows[r | step], low)
                out[r | step] = shuffle(e, rows[r], rows[r | step], high)
        rows, step = out, step * 2
    return rows
