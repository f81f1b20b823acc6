"""Counted loops as `llvm` dialect blocks (header with the induction variable as a
block argument, body, exit), the shape LLVM's loop vectorizer recognizes:
i64 induction variable, unit step, `slt` exit test."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Block, Region, SSAValue

from rlx_mlir.lowering.emitter import Emitter


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
