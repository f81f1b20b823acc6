"""Structural checks xDSL's verifier leaves out, and which the rlx passes rely on.

xDSL does not check dominance, so `%s = rlx.add %a, %t` before `%t` is
defined would reach the passes; and the passes schedule one block per
function. Both are diagnosed here, once, for every entry point (the API and
rlx-opt).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException


def function_block(function: func.FuncOp) -> Block:
    """The single block of a function body (what every rlx pass schedules)."""
    blocks = list(function.body.blocks)
    if len(blocks) != 1:
        raise VerifyException(
            f"'func.func' @{function.sym_name.data} has {len(blocks)} blocks; rlx functions are one block of ops"
        )
    return blocks[0]


def verify_module(module: ModuleOp) -> None:
    """xDSL's verifier plus: every value is defined before it is used."""
    module.verify()
    _check_dominance(module.body.block, set())


def _check_dominance(block: Block, visible: set[SSAValue]) -> None:
    """Within a block, uses follow definitions. (Across the blocks of a CFG
    region only existence is checked: that is the llvm dialect's business.)"""
    defined = visible | set(block.args)
    for op in block.ops:
        for k, operand in enumerate(op.operands):
            if operand not in defined:
                raise VerifyException(f"'{op.name}' operand #{k} {_name(operand)} is used before it is defined")
        for region in op.regions:
            blocks = list(region.blocks)
            siblings = {v for b in blocks for v in (*b.args, *(r for o in b.ops for r in o.results))}
            for nested in blocks:
                own = {v for o in nested.ops for v in o.results}
                _check_dominance(nested, defined | (siblings - own) if len(blocks) > 1 else defined)
        defined |= set(op.results)


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "(unnamed value)"
