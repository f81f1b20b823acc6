"""The lowered `llvm` dialect module as LLVM IR text, printed directly.

The text is what the JIT parses (`jit.compile_text`) and what `rlx-opt -t llvm`
prints. It was built with `xdsl.backend.llvm.convert_module`, which makes an
llvmlite object per instruction and then prints those: a second object graph
as large as the module, walked once to build and once to print. On a module of
convolutions (51,000 ops) that took 1.35 s of a 6.0 s compile, and 10% of a
two-op one; printing the dialect ops in one walk takes a fraction of that.

It prints the ops the lowering emits (intrinsics arrive as `llvm.call_intrinsic`
or `llvm.intr.fma`); another op or type is a NotImplementedError naming it. Each
op prints as xDSL's translation translates it (the same instructions, flags,
alignments and constants), plus two facts of the lowering that the translation
drops, both as LLVM metadata:

- `llvm.store`'s `nontemporal` property, which the elementwise and transpose
  kernels set on the stores of outputs larger than the last-level cache,
  becomes `!nontemporal`;
- a function marked `keep_loops_rolled` gets `!llvm.loop` with
  `llvm.loop.unroll.disable` on each loop's back edge (as MLIR's
  `loop_annotation` does): a branch to a block at or before its own, since
  `loops.for_range` and `while_loop` lay out a loop's header first.

Every defined function of `internal` linkage (all but the entries: kernels,
thunks, parallel wrappers) is also `noinline`. Inlined into its thunk, a kernel
went through O3's function passes twice, once alone and again inside the thunk
(BERT-base's module: 1.06 s of O3, 0.82 s without); inlined into the entry, a
graph of thousands of kernels would be one giant function, which LLVM's passes
digest in superlinear time. Either saves one call per launch (or per thread's
share of one), nothing the kernel's loops would notice.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneType,
    StringAttr,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.type import get_element_type_or_self

from rlx_mlir.lowering.core.emitter import intrinsic_suffix

ROLLED = "rlx.keep_loops_rolled"
"""The `llvm.func` attribute of a kernel whose loops LLVM must not unroll."""

NONTEMPORAL = "!0"
UNROLL_DISABLE = "!1"
"""The module's two fixed metadata nodes; loop IDs are numbered after them."""


def keep_loops_rolled(function: llvm.FuncOp) -> None:
    """Mark `function` so that LLVM's unroller leaves its loops alone."""
    function.attributes[ROLLED] = UnitAttr()


TARGET_TRIPLE = "llvm.target_triple"
DATA_LAYOUT = "llvm.data_layout"
"""The module attributes (MLIR's names) in which lower-to-llvm records the
machine it lowered for, printed as the text's `target` lines: `llc` then
compiles `rlx-opt -t llvm`'s output for that machine's triple and layout."""


def to_llvm_ir(module: ModuleOp, triple: str | None = None) -> str:
    """`module` (`llvm` dialect: functions only) as LLVM IR text for `triple`
    (None: the module's own, if lower-to-llvm recorded one)."""
    printer = _ModulePrinter()
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp):
            raise ValueError(f"LLVM IR is printed from lower-to-llvm's output (llvm.func ops), not from {op.name}")
        printer.function(op)
    return "\n".join([*_target_lines(module, triple), *printer.lines, *printer.declarations(), *printer.metadata(), ""])


def _target_lines(module: ModuleOp, triple: str | None) -> list[str]:
    layout = module.attributes.get(DATA_LAYOUT)
    recorded = module.attributes.get(TARGET_TRIPLE)
    chosen = triple or (recorded.data if isinstance(recorded, StringAttr) else None)
    lines = [f'target datalayout = "{layout.data}"'] if isinstance(layout, StringAttr) else []
    lines += [f'target triple = "{chosen}"'] if chosen else []
    return [*lines, ""] if lines else []


# ---------------------------------------------------------------------------
# types and constants
# ---------------------------------------------------------------------------

_SCALAR_TYPES: dict[type[Attribute], str] = {
    Float16Type: "half",
    Float32Type: "float",
    Float64Type: "double",
    llvm.LLVMVoidType: "void",
    NoneType: "void",
    llvm.LLVMPointerType: "ptr",
}
_PACK = {"half": "e", "float": "f", "double": "d"}


_TYPE_TEXTS: dict[Attribute, str] = {}
"""Each type's text, once: a kernel's thousands of operands share a few types."""


def type_text(t: Attribute) -> str:
    text = _TYPE_TEXTS.get(t)
    if text is None:
        text = _TYPE_TEXTS[t] = _type_text(t)
    return text


def _type_text(t: Attribute) -> str:
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    if isinstance(t, VectorType):
        (count,) = t.get_shape()
        return f"<{count} x {type_text(t.element_type)}>"
    text = _SCALAR_TYPES.get(type(t))
    if text is None:
        raise NotImplementedError(f"LLVM IR printing is not implemented for type {t}")
    return text


def _scalar_text(t: str, value: Any) -> str:
    """A constant of scalar type `t`: floats rounded to their width, then written as
    the hex of a double (LLVM's exact form for every float width); ints as they are."""
    pack = _PACK.get(t)
    if pack is None:
        return str(int(value))
    if pack != "d":  # NaNs too, as llvmlite wrote them: a payload a double has and a float lacks is dropped
        value = struct.unpack(pack, struct.pack(pack, value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"


def _constant_text(t: Attribute, value: Attribute) -> str:
    """The literal of `llvm.mlir.constant` `value` of type `t`, as used in an operand."""
    if isinstance(value, IntegerAttr | FloatAttr):
        scalar = value.value.data
        if isinstance(t, VectorType):  # a splat
            element = type_text(t.element_type)
            return _vector_text(element, [scalar] * t.get_shape()[0])
        return _scalar_text(type_text(t), scalar)
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = value.get_values()
        if isinstance(t, VectorType):
            return _vector_text(type_text(t.element_type), values)
        (scalar,) = values
        return _scalar_text(type_text(t), scalar)
    raise NotImplementedError(f"LLVM IR printing is not implemented for constant {value}")


def _vector_text(element: str, values: Iterable[Any]) -> str:
    return "<" + ", ".join(f"{element} {_scalar_text(element, v)}" for v in values) + ">"


# ---------------------------------------------------------------------------
# flags
# ---------------------------------------------------------------------------


def _words(flags: Any) -> list[str]:
    """The keywords of a flags attribute (a bit enum, or its integer form)."""
    if flags is None:
        return []
    if isinstance(flags, IntegerAttr):
        flags = llvm.OverflowAttr.from_int(flags.value.data)
    return [f.value for f in flags.data]


def _binop_flags(op: Operation) -> list[str]:
    if isinstance(op, llvm.ArithmeticBinOpOverflow):
        return _words(op.overflowFlags)
    if isinstance(op, llvm.AbstractFloatArithOp):
        return _words(op.fastmathFlags)
    if isinstance(op, llvm.ArithmeticBinOpExact):
        return ["exact"] if op.is_exact else []
    if isinstance(op, llvm.ArithmeticBinOpDisjoint):
        return ["disjoint"] if op.is_disjoint else []
    return []


def _cast_flags(op: Operation) -> list[str]:
    if isinstance(op, llvm.IntegerConversionOpOverflow):
        return _words(op.overflowFlags)
    if isinstance(op, llvm.IntegerConversionOpNNeg):
        return ["nneg"] if op.non_neg else []
    return []


def _keywords(opcode: str, flags: list[str]) -> str:
    return " ".join((opcode, *flags))


_BINARY: dict[type[Operation], str] = {
    llvm.AddOp: "add",
    llvm.FAddOp: "fadd",
    llvm.SubOp: "sub",
    llvm.FSubOp: "fsub",
    llvm.MulOp: "mul",
    llvm.FMulOp: "fmul",
    llvm.UDivOp: "udiv",
    llvm.SDivOp: "sdiv",
    llvm.FDivOp: "fdiv",
    llvm.URemOp: "urem",
    llvm.SRemOp: "srem",
    llvm.FRemOp: "frem",
    llvm.ShlOp: "shl",
    llvm.LShrOp: "lshr",
    llvm.AShrOp: "ashr",
    llvm.AndOp: "and",
    llvm.OrOp: "or",
    llvm.XOrOp: "xor",
}

_CASTS: dict[type[Operation], str] = {
    llvm.TruncOp: "trunc",
    llvm.ZExtOp: "zext",
    llvm.SExtOp: "sext",
    llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr",
    llvm.BitcastOp: "bitcast",
    llvm.FPExtOp: "fpext",
    llvm.FPTruncOp: "fptrunc",
    llvm.SIToFPOp: "sitofp",
}

_ARG_FLAGS = {
    "llvm.inreg": "inreg",
    "llvm.nest": "nest",
    "llvm.noalias": "noalias",
    "llvm.nocapture": "captures(none)",
    "llvm.nofree": "nofree",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
    "llvm.returned": "returned",
    "llvm.signext": "signext",
    "llvm.zeroext": "zeroext",
}
_ARG_INTS = {"llvm.align": "align", "llvm.dereferenceable": "dereferenceable"}


# ---------------------------------------------------------------------------
# the printer
# ---------------------------------------------------------------------------


class _ModulePrinter:
    """Prints functions one by one; collects the declarations and metadata they need."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.defined: set[str] = set()
        self.declared: dict[str, str] = {}
        """Declarations by name, of external functions and intrinsics."""
        self.loops = 0
        self.used_nontemporal = False

    # module-level -------------------------------------------------------

    def declare(self, name: str, result: str, arguments: Iterable[str]) -> None:
        if name not in self.declared:
            self.declared[name] = f'declare {result} @"{name}"({", ".join(arguments)})'

    def declarations(self) -> list[str]:
        return [text for name, text in self.declared.items() if name not in self.defined]

    def metadata(self) -> list[str]:
        lines = []
        if self.used_nontemporal:
            lines.append(f"{NONTEMPORAL} = !{{ i32 1 }}")
        if self.loops:
            lines.append(f'{UNROLL_DISABLE} = !{{ !"llvm.loop.unroll.disable" }}')
            lines += [f"!{k} = !{{ !{k}, {UNROLL_DISABLE} }}" for k in range(2, 2 + self.loops)]
        return lines

    def function(self, op: llvm.FuncOp) -> None:
        name = op.sym_name.data
        result = type_text(op.function_type.output)
        inputs = op.function_type.inputs.data
        if not op.body.blocks:
            self.declare(name, result, (type_text(t) for t in inputs))
            return
        self.defined.add(name)
        _FunctionPrinter(self, op).print(name, result)


class _FunctionPrinter:
    """One function's body: SSA values named %vN, blocks bN, phis for block arguments.
    Every value is named before any is printed: a phi reads values of blocks printed
    after it (a loop's next index)."""

    def __init__(self, module: _ModulePrinter, op: llvm.FuncOp) -> None:
        self.module, self.op = module, op
        self.order = {block: k for k, block in enumerate(op.body.blocks)}
        self.rolled = ROLLED in op.attributes
        self.out = module.lines
        self.names: dict[SSAValue, str] = {}
        for block in op.body.blocks:
            for arg in block.args:
                self.names[arg] = f"%v{len(self.names)}"
            for inner in block.ops:
                literal = _LITERALS.get(type(inner))
                for result in inner.results:
                    self.names[result] = literal(inner) if literal else f"%v{len(self.names)}"

    def label(self, block: Block) -> str:
        return f"b{self.order[block]}"

    def ref(self, value: SSAValue) -> str:
        return self.names[value]

    def typed(self, value: SSAValue) -> str:
        return f"{type_text(value.type)} {self.names[value]}"

    def print(self, name: str, result: str) -> None:
        op = self.op
        internal = op.linkage is not None and op.linkage.linkage.data == "internal"
        entry = op.body.blocks[0]
        attrs = op.arg_attrs.data if op.arg_attrs is not None else [None] * len(entry.args)
        arguments = ", ".join(
            " ".join([type_text(arg.type), *_argument_attributes(attr), self.ref(arg)])
            for arg, attr in zip(entry.args, attrs, strict=True)
        )
        linkage, suffix = ("internal ", " noinline") if internal else ("", "")
        self.out.append(f'define {linkage}{result} @"{name}"({arguments}){suffix} {{')
        incoming = self.incoming()
        for block in op.body.blocks:
            self.out.append(f"{self.label(block)}:")
            if block is not entry:
                for arg, pairs in zip(block.args, incoming[block], strict=True):
                    sources = ", ".join(f"[ {self.ref(v)}, %{label} ]" for v, label in pairs)
                    self.out.append(f"  {self.ref(arg)} = phi {type_text(arg.type)} {sources}")
            for inner in block.ops:
                if type(inner) in _LITERALS:
                    continue
                printer = _INSTRUCTIONS.get(type(inner))
                if printer is None:
                    raise NotImplementedError(f"LLVM IR printing is not implemented for op {inner.name}")
                self.out.append("  " + printer(self, inner))
        self.out += ["}", ""]

    def incoming(self) -> dict[Block, list[list[tuple[SSAValue, str]]]]:
        """Per block, per argument, the (value, predecessor label) pairs of its phi."""
        incoming: dict[Block, list[list[tuple[SSAValue, str]]]] = {
            block: [[] for _ in block.args] for block in self.op.body.blocks
        }
        for block in self.op.body.blocks:
            last = block.last_op
            edges: list[tuple[Block, Iterable[SSAValue]]] = []
            if isinstance(last, llvm.BrOp):
                edges = [(last.successor, last.arguments)]
            elif isinstance(last, llvm.CondBrOp):
                edges = [(last.then_block, last.then_arguments), (last.else_block, last.else_arguments)]
            for target, values in edges:
                for k, value in enumerate(values):
                    incoming[target][k].append((value, self.label(block)))
        return incoming

    def branch_metadata(self, op: Operation, targets: Iterable[Block]) -> str:
        """`, !llvm.loop !N` on a back edge of a rolled function, else ""."""
        parent = op.parent_block()
        assert parent is not None
        if not self.rolled or all(self.order[t] > self.order[parent] for t in targets):
            return ""
        self.module.loops += 1
        return f", !llvm.loop !{self.module.loops + 1}"


def _argument_attributes(attr: Any) -> list[str]:
    if attr is None:
        return []
    words = []
    for key, value in attr.data.items():
        if key in _ARG_FLAGS:
            words.append(_ARG_FLAGS[key])
        elif key in _ARG_INTS:
            words.append(f"{_ARG_INTS[key]}({value.value.data})")
    return words


Printer = Callable[[_FunctionPrinter, Any], str]


def _binary(f: _FunctionPrinter, op: Operation) -> str:
    lhs, rhs = op.operands
    opcode = _keywords(_BINARY[type(op)], _binop_flags(op))
    return f"{f.ref(op.results[0])} = {opcode} {f.typed(lhs)}, {f.ref(rhs)}"


def _cast(f: _FunctionPrinter, op: Operation) -> str:
    opcode = _keywords(_CASTS[type(op)], _cast_flags(op))
    result = op.results[0]
    return f"{f.ref(result)} = {opcode} {f.typed(op.operands[0])} to {type_text(result.type)}"


def _call_intrinsic_text(f: _FunctionPrinter, name: str, result: SSAValue | None, args: list[SSAValue]) -> str:
    returned = type_text(result.type) if result is not None else "void"
    f.module.declare(name, returned, (type_text(a.type) for a in args))
    call = f'call {returned} @"{name}"({", ".join(f.typed(a) for a in args)})'
    return f"{f.ref(result)} = {call}" if result is not None else call


def _fma(f: _FunctionPrinter, op: llvm.FMAOp) -> str:
    if any(op.fastmathFlags.data):
        raise NotImplementedError("llvm.intr.fma with fast-math flags")
    return _call_intrinsic_text(f, f"llvm.fma.{intrinsic_suffix(op.res.type)}", op.res, [op.a, op.b, op.c])


def _call_intrinsic(f: _FunctionPrinter, op: llvm.CallIntrinsicOp) -> str:
    if op.op_bundle_operands or any(op.fastmathFlags.data):
        raise NotImplementedError("llvm.call_intrinsic with operand bundles or fast-math flags")
    return _call_intrinsic_text(f, op.intrin.data, op.ress, list(op.args))


def _call(f: _FunctionPrinter, op: llvm.CallOp) -> str:
    if op.op_bundle_operands or op.callee is None:
        raise NotImplementedError("indirect llvm.call, or one with operand bundles")
    result = op.returned
    returned = type_text(result.type) if result is not None else "void"
    float_result = result is not None and isinstance(get_element_type_or_self(result.type), AnyFloat)
    flags = _words(op.fastmathFlags) if float_result else []
    tail = {"none": "", "tail": "tail ", "musttail": "musttail ", "notail": "notail "}[op.TailCallKind.data]
    cconv = op.CConv.cconv_name
    keywords = " ".join(["call", *flags, *([] if cconv == "ccc" else [cconv])])  # LLVM's order
    args = ", ".join(f.typed(a) for a in op.args)
    call = f'{tail}{keywords} {returned} @"{op.callee.string_value()}"({args})'
    return f"{f.ref(result)} = {call}" if result is not None else call


def _load(f: _FunctionPrinter, op: llvm.LoadOp) -> str:
    result = op.dereferenced_value
    align = f", align {op.alignment.value.data}" if op.alignment else ""
    return f"{f.ref(result)} = load {type_text(result.type)}, {f.typed(op.ptr)}{align}"


def _store(f: _FunctionPrinter, op: llvm.StoreOp) -> str:
    align = f", align {op.alignment.value.data}" if op.alignment else ""
    nontemporal = ""
    if op.nontemporal:
        f.module.used_nontemporal = True
        nontemporal = f", !nontemporal {NONTEMPORAL}"
    return f"store {f.typed(op.value)}, {f.typed(op.ptr)}{align}{nontemporal}"


def _gep(f: _FunctionPrinter, op: llvm.GEPOp) -> str:
    dynamic = iter(op.ssa_indices)
    indices = [
        f.typed(next(dynamic)) if k == llvm.GEP_USE_SSA_VAL else f"i32 {k}" for k in op.rawConstantIndices.iter_values()
    ]
    inbounds = " inbounds" if op.inbounds is not None else ""
    operands = ", ".join([type_text(op.elem_type), f.typed(op.ptr), *indices])
    return f"{f.ref(op.result)} = getelementptr{inbounds} {operands}"


def _alloca(f: _FunctionPrinter, op: llvm.AllocaOp) -> str:
    align = f", align {op.alignment.value.data}" if op.alignment else ""
    return f"{f.ref(op.res)} = alloca {type_text(op.elem_type)}, {f.typed(op.size)}{align}"


def _icmp(f: _FunctionPrinter, op: llvm.ICmpOp) -> str:
    predicate = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
    return f"{f.ref(op.res)} = icmp {predicate} {f.typed(op.lhs)}, {f.ref(op.rhs)}"


def _fcmp(f: _FunctionPrinter, op: llvm.FCmpOp) -> str:
    predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
    return f"{f.ref(op.res)} = fcmp {predicate} {f.typed(op.lhs)}, {f.ref(op.rhs)}"


def _select(f: _FunctionPrinter, op: llvm.SelectOp) -> str:
    return f"{f.ref(op.res)} = select {f.typed(op.cond)}, {f.typed(op.lhs)}, {f.typed(op.rhs)}"


def _fneg(f: _FunctionPrinter, op: llvm.FNegOp) -> str:
    return f"{f.ref(op.res)} = {_keywords('fneg', _words(op.fastmathFlags))} {f.typed(op.arg)}"


def _insert_element(f: _FunctionPrinter, op: llvm.InsertElementOp) -> str:
    return f"{f.ref(op.res)} = insertelement {f.typed(op.vector)}, {f.typed(op.value)}, {f.typed(op.index)}"


def _shuffle_vector(f: _FunctionPrinter, op: llvm.ShuffleVectorOp) -> str:
    mask = op.mask.get_values()
    lanes = ", ".join(f"i32 {k}" if k >= 0 else "i32 undef" for k in mask)
    return f"{f.ref(op.res)} = shufflevector {f.typed(op.v1)}, {f.typed(op.v2)}, <{len(mask)} x i32> <{lanes}>"


def _branch(f: _FunctionPrinter, op: llvm.BrOp) -> str:
    return f"br label %{f.label(op.successor)}{f.branch_metadata(op, [op.successor])}"


def _cond_branch(f: _FunctionPrinter, op: llvm.CondBrOp) -> str:
    targets = [op.then_block, op.else_block]
    labels = ", ".join(f"label %{f.label(t)}" for t in targets)
    return f"br {f.typed(op.cond)}, {labels}{f.branch_metadata(op, targets)}"


def _return(f: _FunctionPrinter, op: llvm.ReturnOp) -> str:
    return f"ret {f.typed(op.arg)}" if op.arg is not None else "ret void"


_LITERALS: dict[type[Operation], Callable[[Any], str]] = {
    llvm.ConstantOp: lambda op: _constant_text(op.result.type, op.value),
    llvm.UndefOp: lambda op: "undef",
    llvm.AddressOfOp: lambda op: f'@"{op.global_name.root_reference.data}"',
}
"""Ops that print as a literal in their users' operands, as llvmlite's constants did."""

_INSTRUCTIONS: dict[type[Operation], Printer] = {
    **dict.fromkeys(_BINARY, _binary),
    **dict.fromkeys(_CASTS, _cast),
    llvm.FMAOp: _fma,
    llvm.CallIntrinsicOp: _call_intrinsic,
    llvm.CallOp: _call,
    llvm.LoadOp: _load,
    llvm.StoreOp: _store,
    llvm.GEPOp: _gep,
    llvm.AllocaOp: _alloca,
    llvm.ICmpOp: _icmp,
    llvm.FCmpOp: _fcmp,
    llvm.SelectOp: _select,
    llvm.FNegOp: _fneg,
    llvm.InsertElementOp: _insert_element,
    llvm.ShuffleVectorOp: _shuffle_vector,
    llvm.BrOp: _branch,
    llvm.CondBrOp: _cond_branch,
    llvm.ReturnOp: _return,
}
