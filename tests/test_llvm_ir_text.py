"""lowering/core/translate.py: the constants it writes are the values the llvm dialect holds.

Every kernel of the suite goes through the printer, but a constant is
rarely the whole of what a test checks. Here a function stores one constant
of each kind the lowering makes (half, float and double scalars, a NaN with a
float payload, -0, i1, i64, a splat and a dense vector) to an output buffer;
the JIT-compiled function's bytes are compared with NumPy's encoding of the
same values.
"""

from __future__ import annotations

import ctypes

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Region

from rlx_mlir.jit import compile_text
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.translate import to_llvm_ir
from rlx_mlir.target import target

F32_NAN_WITH_PAYLOAD = np.array([0x7FC00123], np.uint32).view(np.float32)[0]

CONSTANTS: list[tuple[Attribute, Attribute, np.ndarray]] = [
    (Float16Type(), FloatAttr(1.1, Float16Type()), np.array([1.1], np.float16)),
    (Float32Type(), FloatAttr(0.1, Float32Type()), np.array([0.1], np.float32)),
    (Float32Type(), FloatAttr(float(F32_NAN_WITH_PAYLOAD), Float32Type()), np.array([F32_NAN_WITH_PAYLOAD])),
    (Float64Type(), FloatAttr(-0.0, Float64Type()), np.array([-0.0])),
    (Float64Type(), FloatAttr(float("inf"), Float64Type()), np.array([np.inf])),
    (IntegerType(1), IntegerAttr(1, IntegerType(1)), np.array([1], np.uint8)),
    (i64, IntegerAttr(-5, i64), np.array([-5], np.int64)),
    (
        VectorType(Float32Type(), [4]),
        FloatAttr(2.5, Float32Type()),
        np.full(4, 2.5, np.float32),
    ),
    (
        VectorType(Float64Type(), [2]),
        DenseIntOrFPElementsAttr.from_list(VectorType(Float64Type(), [2]), [1.0 / 3, -7.0]),
        np.array([1.0 / 3, -7.0]),
    ),
]


def _storing_function() -> llvm.FuncOp:
    """`void store_constants(ptr out)`: each constant at the next 16-byte slot of out."""
    entry = Block(arg_types=[llvm.LLVMPointerType()])
    e = Emitter(entry)
    (out,) = entry.args
    for slot, (t, value, _) in enumerate(CONSTANTS):
        at = e.op(llvm.GEPOp(out, [16 * slot], IntegerType(8), inbounds=True))
        constant = e.op(llvm.ConstantOp(value, t))
        if t == IntegerType(1):
            constant = e.op(llvm.ZExtOp(constant, IntegerType(8)))
        e.store(constant, at)
    e.op(llvm.ReturnOp())
    return llvm.FuncOp(
        "store_constants",
        llvm.LLVMFunctionType([llvm.LLVMPointerType()], None),
        linkage=llvm.LinkageAttr("external"),
        body=Region([entry]),
    )


def test_each_constant_is_stored_as_numpy_encodes_it() -> None:
    module = ModuleOp([_storing_function()])
    module.verify()
    machine = target()
    compiled = compile_text(to_llvm_ir(module, machine.triple), machine)
    out = np.zeros(16 * len(CONSTANTS), np.uint8)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(compiled.address("store_constants"))(out.ctypes.data)
    for slot, (t, _, want) in enumerate(CONSTANTS):
        got = out[16 * slot : 16 * slot + want.nbytes]
        assert got.tobytes() == want.tobytes(), f"slot {slot} ({t}): {got} != {want.view(np.uint8)}"
