"""The lowered `llvm` dialect module as llvmlite IR: xDSL's translation plus what it drops.

`xdsl.backend.llvm.convert_module` translates every op the kernels emit but
ignores `llvm.store`'s `nontemporal` property, which the elementwise and
transpose kernels set on the stores of outputs larger than the last-level
cache. `to_llvmlite` translates, then puts LLVM's `!nontemporal` metadata on
those stores: the translation emits exactly one `store` per `llvm.store`, block
by block in order, so the n-th store op of a block is the n-th store
instruction of its translation.
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp


def to_llvmlite(module: ModuleOp) -> ir.Module:
    """`module` (`llvm` dialect) as an llvmlite module, non-temporal stores marked."""
    llvm_module = convert_module(module, fallback_target_triple=None)
    for function in module.ops:
        if isinstance(function, llvm.FuncOp) and function.body.blocks:
            _mark_nontemporal(function, llvm_module.get_global(function.sym_name.data), llvm_module)
    return llvm_module


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
