"""What a memory plan means to the code that reads it: the contract between
`plan-memory` (which writes it) and the lowering, the runtime and the driver.

A planned function carries `rlx.offsets` on each op that computes (one byte
offset per result, NOT_IN_ARENA for values bound by pointer: function inputs
and the outputs a kernel writes in place), `rlx.scratch_offsets` on each op
that declares scratch buffers (`dialects.common.NeedsScratch`), and
`rlx.arena_size` / `rlx.arena_lower_bound` on the function. Views (reshapes,
contiguous narrows/slices) are offsets into their source's memory.
Index-checking ops report errors by their position in the schedule
(`index_checks`).

Constants are not in the arena. Each `rlx.constant` (those of scan bodies
too) carries `rlx.constant_slot`, its position in the table of constant
pointers the entry function receives (`void @f(ptr %arena, ptr %io, ptr
%status, ptr %constants)`): slot k holds the address of constant k's bytes.
So a constant stays wherever its bytes already are (a read-only map of the
model file or of a disk-cache entry, one buffer shared by every executable
compiled from the same weights: `rlx_mlir/runtime.py`), and the arena holds
only what a call computes. The bytes need only be aligned to their element
type (`constant_alignment`), as the kernels' loads are; they are never
written: no kernel writes its result over a constant (in place) and a
returned constant is copied out.

Everything here is derived from the IR, so the planner and its readers agree
by construction; `passes/plan_memory.py` keeps only the planning algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr
from xdsl.ir import Block, Operation, OpResult, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects.common import NeedsScratch, element_type, shape_of
from rlx_mlir.dialects.movement import INDEXED_OPS, NarrowOp, SliceOp
from rlx_mlir.dialects.rlx import ConstantOp, ReshapeOp
from rlx_mlir.verification import function_block

OFFSETS = "rlx.offsets"
CONSTANT_SLOT = "rlx.constant_slot"
SCRATCH_OFFSETS = "rlx.scratch_offsets"
ARENA_SIZE = "rlx.arena_size"
ARENA_LOWER_BOUND = "rlx.arena_lower_bound"

ALIGNMENT = 64
NOT_IN_ARENA = -1


def constant_alignment(dtype: np.dtype) -> int:
    """What the kernels assume of a constant's address: aligned to one element of
    its type (its scalar component for complex types), the alignment of every
    load they emit (`lowering/core/vectors.py`, `element_types.py`), as for the
    caller's input arrays; the arena's 64-byte alignment serves stores
    (non-temporal lines), which never go to a constant. The runtime copies a
    constant only when its bytes are less aligned than this."""
    return dtype.alignment


def nbytes(value: SSAValue) -> int:
    return numel(shape_of(value.type)) * dtypes.from_ir(element_type(value.type)).nbytes


def align(n: int, to: int = ALIGNMENT) -> int:
    return (n + to - 1) // to * to


def view_offset(op: Operation) -> int | None:
    """If `op`'s result is a contiguous run of its input's memory, the element
    offset of that run; otherwise None. Reshapes always are; a narrow or unit-step
    slice is when every axis before the first one it keeps more than one index
    of is cut to one index, and every axis after it is kept whole."""
    if isinstance(op, ReshapeOp):
        return 0
    if not isinstance(op, (NarrowOp, SliceOp)):
        return None
    shape, lengths = shape_of(op.input.type), shape_of(op.result.type)
    if numel(lengths) == 0:
        return 0
    reads = op.input_map()
    first = next((a for a, n in enumerate(lengths) if n > 1), len(lengths))
    if first < len(lengths) and reads[first].scale != 1:
        return None
    whole = (lengths[a] == shape[a] and (shape[a] <= 1 or reads[a][1:] == (1, 0)) for a in range(first + 1, len(shape)))
    if not all(whole):
        return None
    strides = row_major_strides(shape)
    return sum(access.offset * stride for access, stride in zip(reads, strides))


def view_source(value: SSAValue) -> tuple[SSAValue, int]:
    """The value whose memory `value` shares, and the byte offset into it."""
    delta = 0
    while isinstance(value, OpResult) and (offset := view_offset(value.owner)) is not None:
        delta += offset * element_size(value)
        value = value.owner.operands[0]
    return value, delta


def output_bindings(function: func.FuncOp) -> dict[SSAValue, int]:
    """Values written straight into the caller's output buffers, by result index."""
    return block_bindings(function_block(function))


def block_bindings(block: Block) -> dict[SSAValue, int]:
    """Values a block returns (`func.return`) or yields (a scan body's
    `rlx.yield`) that are written straight into the memory they are returned
    in, by operand index: the caller's output buffer, the scan's next carry.

    A value qualifies when a kernel computes it (not a block argument, a
    constant or a view) and it is the first terminator operand naming it; any
    other returned value is copied into place at the end.
    """
    terminator = block.last_op
    bindings: dict[SSAValue, int] = {}
    for index, value in enumerate(terminator.operands if terminator else ()):
        if not isinstance(value, OpResult) or value in bindings:  # a block argument
            continue
        if isinstance(value.owner, ConstantOp) or view_offset(value.owner) is not None:
            continue
        bindings[value] = index
    return bindings


def element_size(value: SSAValue) -> int:
    return dtypes.from_ir(element_type(value.type)).nbytes


@dataclass(frozen=True)
class MemoryPlan:
    """What the planner decided, as the runtime and the API report it."""

    arena_size: int
    lower_bound: int
    offsets: dict[str, int] = field(default_factory=dict)
    constant_bytes: int = 0
    """The constants' bytes, held outside the arena (see the module's docstring)."""

    def __str__(self) -> str:
        ratio = self.arena_size / self.lower_bound if self.lower_bound else 1.0
        lines = [f"arena {self.arena_size} B, lower bound {self.lower_bound} B ({ratio:.2f}x)"]
        if self.constant_bytes:
            lines.append(f"constants {self.constant_bytes} B, outside the arena")
        lines += [f"  {name}: offset {off}" for name, off in self.offsets.items()]
        return "\n".join(lines)


def read_plan(function: func.FuncOp) -> MemoryPlan:
    """The plan recorded on an already planned function."""
    offsets: dict[str, int] = {}
    for index, op in enumerate(function_block(function).ops):
        attr = op.attributes.get(OFFSETS)
        if isinstance(attr, DenseArrayBase):
            for r, (result, off) in enumerate(zip(op.results, attr.get_values())):
                if off != NOT_IN_ARENA:
                    offsets[result.name_hint or f"op{index}.{r}"] = off
        scratch = op.attributes.get(SCRATCH_OFFSETS)
        if isinstance(scratch, DenseArrayBase):
            for k, off in enumerate(scratch.get_values()):
                offsets[scratch_label(op, index, k)] = off
    size = function.attributes[ARENA_SIZE]
    bound = function.attributes[ARENA_LOWER_BOUND]
    assert isinstance(size, IntegerAttr) and isinstance(bound, IntegerAttr), "plan-memory records integers"
    constant_bytes = sum(nbytes(op.result) for op in planned_constants(function))
    return MemoryPlan(size.value.data, bound.value.data, offsets, constant_bytes)


def planned_constants(function: func.FuncOp) -> list[ConstantOp]:
    """The function's constants (its scan bodies' too), in the order of their
    slots: the order `plan-memory` numbers them in."""
    return [op for op in function_block(function).walk() if isinstance(op, ConstantOp)]


def constant_slot(op: ConstantOp) -> int:
    """The slot `plan-memory` gave a constant in the table of constant pointers."""
    attr = op.attributes.get(CONSTANT_SLOT)
    if not isinstance(attr, IntegerAttr):
        raise ValueError(f"'{op.name}' has no constant slot: run plan-memory before lower-to-llvm")
    return attr.value.data


def planned_offset(value: SSAValue) -> int:
    """The arena offset `plan-memory` gave `value` (which must be in the arena)."""
    assert isinstance(value, OpResult), "a block argument is not in the arena"
    owner = value.owner
    attr = owner.attributes.get(OFFSETS)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{owner.name}' has no memory plan: run plan-memory before lower-to-llvm")
    offset = attr.get_values()[value.index]
    if offset == NOT_IN_ARENA:
        raise ValueError(f"'{owner.name}' result #{value.index} was not given arena memory")
    return offset


def index_checks(function: func.FuncOp) -> list[Operation]:
    """The function's index-checking ops (scan bodies included), in schedule
    order: op k reports status code k + 1."""
    return [op for op in function_block(function).walk() if isinstance(op, INDEXED_OPS)]


@dataclass(frozen=True)
class Scratch:
    """Scratch buffer `index` of `op`: an arena buffer that lives while `op` runs."""

    op: Operation
    index: int


def scratch_buffers(op: Operation) -> list[tuple[Scratch, int]]:
    """The scratch buffers `op` declares, with their byte sizes."""
    sizes = op.scratch_bytes() if isinstance(op, NeedsScratch) else ()
    return [(Scratch(op, k), size) for k, size in enumerate(sizes)]


def kept_scratch(op: Operation) -> frozenset[int]:
    """The scratch buffers `op` keeps from one call to the next."""
    return op.kept_scratch() if isinstance(op, NeedsScratch) else frozenset()


def scratch_label(op: Operation, position: int, k: int) -> str:
    """How the printed plan names scratch buffer `k` of the op at `position` in the schedule."""
    return f"{op.name}#{position}.scratch{k}"


def scratch_offset(scratch: Scratch) -> int:
    """The arena offset `plan-memory` gave a scratch buffer."""
    attr = scratch.op.attributes.get(SCRATCH_OFFSETS)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{scratch.op.name}' has no scratch plan: run plan-memory before lower-to-llvm")
    return attr.get_values()[scratch.index]
