"""lower-to-llvm: rewrite a planned module into xDSL's `llvm` dialect.

Elementwise ops that fusion left on their own, and `rlx.expand`s that
canonicalization could not fold, first become single-op regions (so one
kernel emitter covers them all); then each function is lowered by
`lowering.program`. `lowering.core.translate.to_llvm_ir` (`rlx-opt -t llvm`)
prints the result as LLVM IR.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_mlir import index_maps
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.dialects.scan import graph_blocks
from rlx_mlir.lowering.core.kernel import External, external_declarations
from rlx_mlir.lowering.core.translate import DATA_LAYOUT, TARGET_TRIPLE
from rlx_mlir.lowering.program import lower_function
from rlx_mlir.memory_plan import OFFSETS, SCRATCH_OFFSETS, view_offset
from rlx_mlir.target import Target, TargetError, target
from rlx_mlir.thread_pool import thread_count
from rlx_mlir.tuning import Tuning, TuningError, parse_overrides
from rlx_mlir.verification import function_block


def regions_for_leftovers(function: func.FuncOp) -> None:
    """Wrap every standalone elementwise op, every index-map op (expand,
    transpose, slice, ...) that is not a view, and every reduce and softmax op
    in a region,
    keeping its plan: one kernel emitter per kind of region covers them all."""
    for op in [op for block in graph_blocks(function_block(function)) for op in block.ops]:
        region_op: rg.ScalarBodyRegionOp
        if ew.is_elementwise(op):
            region_op = rg.ElementwiseRegionOp.replace([op], anchor=op)
        elif rlx.has_input_map(op) and view_offset(op) is None:
            region_op = _copy_region(op)
        elif isinstance(op, (rd.ReduceOp, rd.NormalizeOp)):
            region_op = rg.ReductionRegionOp.of(op) if isinstance(op, rd.ReduceOp) else rg.NormalizeRegionOp.of(op)
            Rewriter.insert_op(region_op, InsertPoint.before(op))
            op.result.replace_all_uses_with(region_op.outputs[0])
        else:
            continue
        for plan in (OFFSETS, SCRATCH_OFFSETS):  # a reduce op's scratch is its region's
            if plan in op.attributes:
                region_op.attributes[plan] = op.attributes[plan]
        if op.parent is not None:
            op.detach()
            op.erase(safe_erase=False)


def _copy_region(op: rlx.InputMapOp) -> rg.ElementwiseRegionOp:
    """A copy through the op's index map (broadcast, transpose, strided read)."""
    block = rg.make_region_block([op.input.type])
    block.add_op(rg.YieldOp(block.args[0]))
    target = shape_of(op.result.type)
    amap = index_maps.to_affine(len(target), op.input_map())
    region_op = rg.ElementwiseRegionOp([op.input], [amap], [op.result.type], Region([block]))
    Rewriter.insert_op(region_op, InsertPoint.before(op))
    op.result.replace_all_uses_with(region_op.outputs[0])
    return region_op


@dataclass(frozen=True)
class LowerToLLVMPass(ModulePass):
    name = "lower-to-llvm"

    threads: int = 0
    """Threads a large kernel is split over; 0 means one per available CPU."""

    target: str = ""
    """The machine to compile for (`rlx_mlir.target`): native, x86-64-v3,
    x86-64-v4 or an LLVM CPU name; "" means $RLX_MLIR_TARGET, else native."""

    tuning: str = ""
    """Overrides of the target's kernel choices, `name=value,...` (`rlx_mlir.tuning`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = pass_target(self.name, self.target)
        lower_module(op, thread_count(self.threads), pass_tuning(self.name, machine, self.tuning))
        op.attributes[DATA_LAYOUT] = StringAttr(str(machine.machine().target_data))
        op.attributes[TARGET_TRIPLE] = StringAttr(machine.triple)


@dataclass(frozen=True)
class WeightLayoutPass(ModulePass, ABC):
    """A pass that stores constant weights as a target's kernels read them
    (pack-conv-weights, pack-matmul-weights): it takes the target and tuning
    options lower-to-llvm takes, and must be given the same ones."""

    target: str = ""
    """The machine to pack for, as lower-to-llvm takes it ("" means $RLX_MLIR_TARGET, else native)."""

    tuning: str = ""
    """Overrides of the target's kernel choices, `name=value,...`, as lower-to-llvm takes them."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.rewrite(op, pass_tuning(self.name, pass_target(self.name, self.target), self.tuning))

    @abstractmethod
    def rewrite(self, module: ModuleOp, tuning: Tuning) -> None: ...


def erase_replaced(weights: Iterable[rlx.ConstantOp]) -> None:
    """Erase the weights a layout pass replaced at every use (one it left a reader keeps)."""
    for weight in weights:
        if not weight.result.uses:
            Rewriter.erase_op(weight)


def pass_target(pass_name: str, target_name: str) -> Target:
    """The machine a target-specific pass works for (its `target` option, as
    lower-to-llvm takes it); a bad name is a ValueError."""
    try:
        return target(target_name or None)
    except TargetError as error:
        raise ValueError(f"{pass_name}: {error}") from None


def pass_tuning(pass_name: str, machine: Target, overrides: str) -> Tuning:
    """The kernel choices a target-specific pass works with on `machine` (its
    `tuning` option, as lower-to-llvm takes it); a bad override is a ValueError."""
    try:
        return Tuning.for_target(machine).replace(parse_overrides(overrides))
    except TuningError as error:
        raise ValueError(f"{pass_name}: {error}") from None


def lower_module(op: ModuleOp, threads: int, tuning: Tuning, profile: bool = False) -> dict[str, list[int]]:
    """Replace every planned function of `op` by its kernels and entry, lowered
    for `threads` threads with the kernel choices of `tuning`. A `profile` build
    time-stamps the end of each op: returned are, per function, the positions
    of the ops timed (`LoweredProgram.timed`)."""
    functions = [f for f in op.ops if isinstance(f, func.FuncOp)]
    lowered = []
    externals: set[External] = set()
    timed = {}
    for function in functions:
        regions_for_leftovers(function)
        program = lower_function(function, threads, tuning, profile)
        lowered += program.functions
        externals |= program.externals
        timed[function.sym_name.data] = program.timed
    for function in functions:
        function.detach()
        function.erase()
    for new in [*external_declarations(externals), *lowered]:
        op.body.block.add_op(new)
    return timed
