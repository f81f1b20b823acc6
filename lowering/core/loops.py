"""Loops as `llvm` dialect blocks, and the loop nests kernels are built from.

A counted loop is a header with the induction variable as a block argument,
a body and an exit: the shape LLVM's loop vectorizer recognizes (i64
induction variable, unit step, `slt` exit test).

A `LoopNest` describes an iteration space by its extents and each operand's
element strides (0 on a broadcast axis, negative for a reversed read).
`coalesce` drops unit axes and merges adjacent axes every operand walks as
one contiguous run; `emit_nest` emits the nest, its outermost loop over
`[begin, end)` (how a kernel is split across threads) and its two innermost
loops tiled when some operand reads transposed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Region, SSAValue

from rlx_mlir import index_maps
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.lowering.core.emitter import Emitter

TILE: Final = 32  # 32 x 32 f32 = 4 KiB per operand: tiles of a transpose stay in any x86-64 L1


def for_range(
    e: Emitter, region: Region, lo: SSAValue, hi: SSAValue, body: Callable[[SSAValue], None], step: int = 1
) -> None:
    """Emit `for i in range(lo, hi, step): body(i)` at the emitter's position; continue after it.

    `body` may itself open nested loops: it is called with the emitter in the
    loop body and must leave it at the end of the block that should branch back.
    """
    header, loop, exit_ = Block(arg_types=[i64]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, lo))
    e.move_to(header)
    index = header.args[0]
    e.op(llvm.CondBrOp(e.icmp("slt", index, hi), loop, [], exit_, []))
    e.move_to(loop)
    body(index)
    e.op(llvm.BrOp(header, e.add(index, e.i64(step))))
    region.add_block(exit_)
    e.move_to(exit_)


def while_loop(e: Emitter, region: Region, condition: Callable[[], SSAValue], body: Callable[[], None]) -> None:
    """Emit `while condition(): body()` (state lives in memory) and continue after it."""
    header, loop, exit_ = Block(), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header))
    e.move_to(header)
    e.op(llvm.CondBrOp(condition(), loop, [], exit_, []))
    e.move_to(loop)
    body()
    e.op(llvm.BrOp(header))
    region.add_block(exit_)
    e.move_to(exit_)


def if_then(e: Emitter, region: Region, condition: SSAValue, then: Callable[[], None]) -> None:
    """Emit `if condition: then()` and continue after it (a rare path, e.g. an error report)."""
    taken, after = Block(), Block()
    e.op(llvm.CondBrOp(condition, taken, [], after, []))
    region.add_block(taken)
    e.move_to(taken)
    then()
    e.op(llvm.BrOp(after))
    region.add_block(after)
    e.move_to(after)


def if_else(
    e: Emitter, region: Region, condition: SSAValue, then: Callable[[], None], other: Callable[[], None]
) -> None:
    """if condition: then() else: other(); continue after both."""
    taken, not_taken, after = Block(), Block(), Block()
    e.op(llvm.CondBrOp(condition, taken, [], not_taken, []))
    for block, branch in ((taken, then), (not_taken, other)):
        region.add_block(block)
        e.move_to(block)
        branch()
        e.op(llvm.BrOp(after))
    region.add_block(after)
    e.move_to(after)


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


def read_strides(shape: Sequence[int], reads: Sequence[index_maps.Access], rank: int) -> tuple[tuple[int, ...], int]:
    """Element strides over `rank` iteration dims, and the base offset, of an
    operand of `shape` read through `reads`."""
    own = row_major_strides(tuple(shape))
    per_dim, base = [0] * rank, 0
    for axis, access in enumerate(reads):
        base += access.offset * own[axis]
        if access.dim is not None:
            per_dim[access.dim] += access.scale * own[axis]
    return tuple(per_dim), base


def coalesce(space: tuple[int, ...], strides: list[tuple[int, ...]], bases: tuple[int, ...] = ()) -> LoopNest:
    """Drop unit axes and merge axis pairs every operand walks as one contiguous run."""
    axes = [d for d, size in enumerate(space) if size != 1]
    sizes = [space[d] for d in axes]
    per_operand = [[s[d] for d in axes] for s in strides]
    merged_sizes: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for position, size in enumerate(sizes):
        if merged_sizes and all(ops[-1] == own[position] * size for ops, own in zip(merged, per_operand)):
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


Body = Callable[[Emitter, list[SSAValue], list[SSAValue]], None]


def emit_nest(
    e: Emitter, region: Region, nest: LoopNest, pointers: list[SSAValue], begin: SSAValue, end: SSAValue, body_at: Body
) -> None:
    rank = len(nest.sizes)
    tiled = nest.transposed

    def level(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        def body(i: SSAValue) -> None:
            here = [advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]
            if depth + 1 < rank:
                level(depth + 1, here, e.i64(0), e.i64(nest.sizes[depth + 1]))
            else:
                body_at(e, pointers, here)

        if tiled and depth == rank - 2:
            tile_pair(depth, offsets, lo, hi)
        else:
            for_range(e, region, lo, hi, body)

    def tile_pair(depth: int, offsets: list[SSAValue], lo: SSAValue, hi: SSAValue) -> None:
        """The two innermost loops in TILE x TILE blocks, so a transposed read
        and a contiguous write both stay in cache."""
        inner = e.i64(nest.sizes[depth + 1])

        def rows(i0: SSAValue) -> None:
            i1 = e.smin(e.add(i0, e.i64(TILE)), hi)

            def cols(j0: SSAValue) -> None:
                j1 = e.smin(e.add(j0, e.i64(TILE)), inner)

                def row(i: SSAValue) -> None:
                    here = [advance(e, off, i, strides[depth]) for off, strides in zip(offsets, nest.strides)]

                    def col(j: SSAValue) -> None:
                        cell = [advance(e, off, j, strides[depth + 1]) for off, strides in zip(here, nest.strides)]
                        body_at(e, pointers, cell)

                    for_range(e, region, j0, j1, col)

                for_range(e, region, i0, i1, row)

            for_range(e, region, e.i64(0), inner, cols, step=TILE)

        for_range(e, region, lo, hi, rows, step=TILE)

    level(0, [e.i64(base) for base in nest.bases], begin, end)


def advance(e: Emitter, offset: SSAValue, index: SSAValue, stride: int) -> SSAValue:
    """offset + index * stride, with no instruction for a zero or unit stride."""
    if stride == 0:
        return offset
    step = index if stride == 1 else e.mul(index, e.i64(stride))
    return e.add(offset, step)
