"""What every kernel looks like to the entry function, and the pieces kernels share.

A kernel is `void k(ptr buffer..., i64 begin, i64 end)`: the entry passes one
pointer per buffer (inputs, outputs, and for index-checking kernels the status
block) and the range of the kernel's outermost loop, which is how large
kernels are split across threads. Pointer parameters are `noalias`; when the
entry passes one location for several buffers (an in-place write), the kernel
accesses them all through the first of those parameters
(`share_aliased_pointers`).

Index errors: a gather/scatter kernel that meets an index outside [-n, n)
writes (code, index, axis, size) to the status block - code is the op's
position among the function's index-checking ops - and skips the access; the
runtime raises IndexError after the call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, UnitAttr, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from rlx_mlir.lowering.core.element_types import Codec, Value
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.loops import Body, LoopNest, emit_nest, if_then
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

PTR = llvm.LLVMPointerType()
STATUS = "status"
"""Stands for the status block in `Kernel.buffers`."""

STATUS_FIELDS = 4  # code, index, axis, size (i64 each)


@dataclass(frozen=True)
class External:
    """A function the JIT resolves outside the module (the thread pool, the
    BLAS of `rlx_mlir.blas`); the lowered module declares each one it calls once."""

    name: str
    inputs: tuple[Attribute, ...]
    output: Attribute | None = None

    def declare(self) -> llvm.FuncOp:
        kind = llvm.LLVMFunctionType(list(self.inputs), self.output)
        return llvm.FuncOp(self.name, kind, linkage=llvm.LinkageAttr("external"))


def external_declarations(externals: set[External]) -> list[llvm.FuncOp]:
    return [x.declare() for x in sorted(externals, key=lambda x: x.name)]


@dataclass
class Kernel:
    function: llvm.FuncOp
    buffers: Sequence[SSAValue | str | Scratch]
    """One pointer argument each: a value's memory, STATUS, or a scratch buffer of the op."""
    extent: int
    work: int
    parallel: bool = True
    """Whether the entry may split [0, extent) over threads (not when the kernel threads itself)."""
    externals: tuple[External, ...] = ()
    """The outside functions the kernel calls."""


@dataclass(frozen=True)
class KernelContext:
    """What an emitter needs besides the op: a unique name, the kernel
    choices for the target (`rlx_mlir.tuning`), its error code, the thread
    count the entry is lowered with (`compile(..., threads=)`) and the weights
    a loop packed before its steps."""

    name: str
    tuning: Tuning
    code: int = 0
    threads: int = 1
    packed: Mapping[tuple[SSAValue, bool], Scratch] = field(default_factory=dict)
    """(value, read transposed) -> the buffer holding its `gemm.Packing` panels
    (`dialects.scan.PackedWeight`): a GEMM with that rhs reads the panels."""


Build = Callable[[Emitter, Region, list[SSAValue], SSAValue, SSAValue], None]


def kernel_function(name: str, n_pointers: int, build: Build) -> llvm.FuncOp:
    """A kernel whose body `build(e, region, pointers, begin, end)` emits."""
    entry = Block(arg_types=[PTR] * n_pointers + [i64, i64])
    region = Region([entry])
    e = Emitter(entry)
    build(e, region, list(entry.args[:n_pointers]), entry.args[-2], entry.args[-1])
    e.op(llvm.ReturnOp())
    attrs = [DictionaryAttr({"llvm.noalias": UnitAttr()})] * n_pointers + [DictionaryAttr({})] * 2
    return llvm.FuncOp(
        name,
        llvm.LLVMFunctionType([PTR] * n_pointers + [i64, i64]),
        body=region,
        other_props={"arg_attrs": ArrayAttr(attrs)},
    )


def emit_thunk(kernel: llvm.FuncOp, name: str, n_pointers: int) -> llvm.FuncOp:
    """`void name(ptr args, i64 begin, i64 end)`: the uniform entry every launcher calls.

    It unpacks the pointer array and calls the kernel, which stays a function
    of its own (internal and `noinline`: `translate.py`) whose `noalias` parameters let its loops
    vectorize.
    """
    entry = Block(arg_types=[PTR, i64, i64])
    e = Emitter(entry)
    args, begin, end = entry.args
    pointers = [e.load(e.field_ptr(args, k, PTR), PTR) for k in range(n_pointers)]
    e.op(llvm.CallOp(kernel.sym_name.data, *pointers, begin, end))
    e.op(llvm.ReturnOp())
    return llvm.FuncOp(name, llvm.LLVMFunctionType([PTR, i64, i64]), body=Region([entry]))


def share_aliased_pointers(function: llvm.FuncOp, sharing: tuple[int, ...]) -> None:
    """Make a kernel launched with some of its buffers at one address access
    them all through one parameter: `sharing[k]` is the first position whose
    pointer equals position k's. LLVM then sees an in-place write as a load
    and a store at one index of one pointer, a dependence it can vectorize,
    and every parameter keeps `noalias` (the parameters left unused access
    nothing). With two parameters it would have to drop `noalias` and guard
    the vector loop with overlap checks, which in-place buffers always fail:
    such kernels ran their scalar loop, several times slower."""
    arguments = function.body.blocks[0].args
    for k, first in enumerate(sharing):
        if first != k:
            arguments[k].replace_all_uses_with(arguments[first])


def checked_index(
    e: Emitter, region: Region, raw: SSAValue, size: int, status: SSAValue, code: int, axis: int
) -> tuple[SSAValue, SSAValue]:
    """(index in [0, size), valid): negative indices count from the end; an
    invalid one is reported in the status block and replaced by 0."""
    given = e.sext(raw, i64) if raw.type != i64 else raw
    n = e.i64(size)
    index = e.select(e.icmp("slt", given, e.i64(0)), e.add(given, n), given)
    valid = e.icmp("ult", index, n)

    def report() -> None:
        for slot, value in enumerate((e.i64(code), given, e.i64(axis), n)):
            e.store(value, e.field_ptr(status, slot, i64), alignment=8)

    if_then(e, region, e.xor(valid, e.const_like(valid, 1)), report)
    return e.select(valid, index, e.i64(0)), valid


def emit_nest_kernel(name: str, nest: LoopNest, n_pointers: int, body_at: Body) -> llvm.FuncOp:
    """A kernel looping over `nest` (outermost axis over [begin, end)) that calls
    `body_at(e, pointers, element offsets)` once per point."""

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        emit_nest(e, region, nest, pointers, begin, end, body_at)

    return kernel_function(name, n_pointers, build)


EmitKernels = Callable[[Any, KernelContext], list[Kernel]]
"""An op's kernels, `(op, ctx) -> [Kernel]`. A family's `KERNELS` table maps an op
class to one; the op is typed Any because each entry takes only its own class."""


@dataclass(frozen=True)
class StackArray:
    """`count` elements of `item` in a 64-byte aligned stack slot of a kernel:
    lane accumulators, which LLVM promotes to registers (SROA) where the indices
    are constants, or an L1-resident array indexed at run time."""

    ptr: SSAValue
    item: Codec

    @classmethod
    def allocate(cls, e: Emitter, item: Codec, count: int) -> StackArray:
        size = e.i64(max(1, count) * item.components)
        return cls(e.op(llvm.AllocaOp(size, item.storage, alignment=64)), item)

    def get(self, e: Emitter, index: SSAValue | int) -> Value:
        return self.item.load(e, self.ptr, e.i64(index) if isinstance(index, int) else index)

    def set(self, e: Emitter, index: SSAValue | int, value: Value) -> None:
        self.item.store(e, value, self.ptr, e.i64(index) if isinstance(index, int) else index)
