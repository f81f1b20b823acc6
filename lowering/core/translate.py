"""The lowered `llvm` dialect module as llvmlite IR: xDSL's translation plus what it drops.

`xdsl.backend.llvm.convert_module` translates every op the kernels emit but
carries no LLVM metadata, and two facts of the lowering are metadata:

- `llvm.store`'s `nontemporal` property, which the elementwise and transpose
  kernels set on the stores of outputs larger than the last-level cache,
  becomes `!nontemporal`: the translation emits exactly one `store` per
  `llvm.store`, block by block in order, so the n-th store op of a block is
  the n-th store instruction of its translation;
- a function marked `keep_loops_rolled` gets `!llvm.loop` with
  `llvm.loop.unroll.disable` on each loop's back edge (as MLIR's
  `loop_annotation` does): a branch to a block at or before its own, since
  `loops.for_range` and `while_loop` lay out a loop's header first.
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, UnitAttr

ROLLED = "rlx.keep_loops_rolled"
"""The `llvm.func` attribute of a kernel whose loops LLVM must not unroll."""


def keep_loops_rolled(function: llvm.FuncOp) -> None:
    """Mark `function` so that LLVM's unroller leaves its loops alone."""
    function.attributes[ROLLED] = UnitAttr()


def to_llvmlite(module: ModuleOp) -> ir.Module:
    """`module` (`llvm` dialect) as an llvmlite module, with its stores' and loops' metadata."""
    llvm_module = convert_module(module, fallback_target_triple=None)
    for function in module.ops:
        if isinstance(function, llvm.FuncOp) and function.body.blocks:
            translated = llvm_module.get_global(function.sym_name.data)
            _mark_nontemporal(function, translated, llvm_module)
            if ROLLED in function.attributes:
                _mark_back_edges(translated)
    return llvm_module


class _LoopID(ir.values.MDValue):
    """A loop's `!llvm.loop` node, one per loop: LLVM takes a node whose first
    operand is itself for a loop ID. Compared by identity: llvmlite hashes and
    compares nodes by their operands, which here include the node."""

    def __init__(self, module: ir.Module, properties: ir.values.MDValue) -> None:
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = (self, properties)

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


def _mark_back_edges(function: ir.Function) -> None:
    properties = function.module.add_metadata(["llvm.loop.unroll.disable"])  # one node: llvmlite dedups
    order = {block: k for k, block in enumerate(function.blocks)}
    for k, block in enumerate(function.blocks):
        branch = block.terminator
        if isinstance(branch, (ir.Branch, ir.ConditionalBranch)):
            if any(order.get(target, k + 1) <= k for target in branch.operands):
                branch.set_metadata("llvm.loop", _LoopID(function.module, properties))


def _mark_nontemporal(function: llvm.FuncOp, translated: ir.Function, llvm_module: ir.Module) -> None:
    node = None
    for block, translated_block in zip(function.body.blocks, translated.blocks, strict=True):
        stores = [op for op in block.ops if isinstance(op, llvm.StoreOp)]
        if not any(op.nontemporal for op in stores):
            continue
        instructions = [i for i in translated_block.instructions if isinstance(i, ir.StoreInstr)]
        if len(instructions) != len(stores):
            raise ValueError(f"@{function.sym_name.data}: stores do not match their translation")
        node = node or llvm_module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        for op, instruction in zip(stores, instructions):
            if op.nontemporal:
                instruction.set_metadata("nontemporal", node)
