"""parse() and compile(): text or module in, executable out.

compile() runs the tensor-level pipeline (by default canonicalize-broadcast,
fuse-elementwise, plan-memory), reads what the runtime needs off the planned
function (signature, constants, memory plan), then lowers to LLVM and JITs.
"""

from __future__ import annotations

import numpy as np
from xdsl.backend.llvm.convert import convert_module
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ParseError as XdslParseError
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.context import make_context
from rlx_mlir.dialects import rlx
from rlx_mlir.errors import CompileError, ParseError, VerificationError
from rlx_mlir.jit import compile_llvm
from rlx_mlir.passes import available_passes
from rlx_mlir.passes.default_pipeline import TENSOR_PIPELINE
from rlx_mlir.passes.lower_to_llvm import LowerToLLVMPass
from rlx_mlir.passes.plan_memory import PlanMemoryPass, read_plan
from rlx_mlir.lowering.kernel import index_checks
from rlx_mlir.runtime import ConstantData, Executable, IndexCheck, TensorSpec


def parse(text: str) -> ModuleOp:
    """Parse and verify rlx IR text; errors carry line:column and the rule broken."""
    try:
        module = Parser(make_context(), text, name="<input>").parse_module()
    except XdslParseError as error:
        raise ParseError(str(error)) from None
    verify(module)
    return module


def verify(module: ModuleOp) -> None:
    try:
        module.verify()
    except VerifyException as error:
        raise VerificationError(str(error)) from None


def _spec(t) -> TensorSpec:  # noqa: ANN001 - a builtin tensor type
    return TensorSpec(rlx.shape_of(t), dtypes.from_ir(rlx.element_type(t)))


def _constants(function: func.FuncOp) -> list[ConstantData]:
    found = []
    for op in function.body.block.ops:
        if isinstance(op, rlx.ConstantOp):
            spec = _spec(op.result.type)
            values = np.frombuffer(op.value.data.data, dtype=spec.dtype.numpy)
            data = np.ascontiguousarray(np.broadcast_to(values, (int(np.prod(spec.shape)),)))
            found.append(ConstantData(op.attributes["rlx.offsets"].get_values()[0], data))  # type: ignore[union-attr]
    return found


def _entry_function(module: ModuleOp, entry: str | None) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if entry is not None:
        functions = [f for f in functions if f.sym_name.data == entry]
    if len(functions) != 1:
        names = [f.sym_name.data for f in module.ops if isinstance(f, func.FuncOp)]
        raise CompileError(f"expected exactly one function to compile (found {names}); pass entry=")
    return functions[0]


def compile(  # noqa: A001
    module_or_text: ModuleOp | str,
    pipeline: str | None = None,
    entry: str | None = None,
    threads: int = 0,
) -> Executable:
    """Compile an rlx module (or its text) to a callable executable.

    `pipeline` lists the tensor-level passes to run before memory planning and
    lowering (default: `TENSOR_PIPELINE`; "" runs none). `threads` caps how many
    threads a large kernel is split over (0: every available CPU).
    """
    module = parse(module_or_text) if isinstance(module_or_text, str) else module_or_text.clone()
    if not isinstance(module_or_text, str):
        verify(module)
    ctx = make_context()
    spec = TENSOR_PIPELINE if pipeline is None else pipeline
    try:
        passes = PassPipeline.parse_spec(available_passes(), spec).passes if spec else ()
    except ValueError as error:
        raise CompileError(str(error)) from None
    for p in (*passes, PlanMemoryPass()):
        if isinstance(p, LowerToLLVMPass):
            continue
        p.apply(ctx, module)
    verify(module)
    function = _entry_function(module, entry)
    name = function.sym_name.data
    inputs = [_spec(t) for t in function.function_type.inputs]
    outputs = [_spec(t) for t in function.function_type.outputs]
    plan = read_plan(function)
    constants = _constants(function)
    planned_ir = str(function)
    checks = [IndexCheck(op.name) for op in index_checks(function)]
    for other in [f for f in module.ops if isinstance(f, func.FuncOp) and f is not function]:
        other.detach()
    LowerToLLVMPass(threads=threads).apply(ctx, module)
    llvm_module = convert_module(module, fallback_target_triple=None)
    llvm_ir = str(llvm_module)
    compiled = compile_llvm(llvm_module, {name})
    return Executable(name, compiled, inputs, outputs, plan, constants, llvm_ir, planned_ir, checks)
