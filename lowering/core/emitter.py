"""A small instruction emitter over xDSL's `llvm` dialect.

Kernels and the math library are written against this class so they read like
arithmetic (``e.fma(x, c, e.const_like(x, 1.0))``) while still producing real
`llvm` dialect ops that `rlx-opt` can print and FileCheck can test.

Floating-point ops carry no fast-math flags: each op rounds exactly as
written, so LLVM cannot contract a multiply of one rlx op with an add of the
next. That is what makes a fused region bit-identical to the unfused ops (and
keeps the ``(t + M) - M`` rounding trick of the exp approximation intact).
FMAs are emitted explicitly (`fma`, `poly`) where an algorithm wants one.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.hints import isa

STRICT = llvm.FastMathAttr(None)

_FLOAT_INT_TWIN: dict[type[Attribute], IntegerType] = {
    Float16Type: IntegerType(16),
    Float32Type: i32,
    Float64Type: i64,
}

_ICMP = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7, "ugt": 8, "uge": 9}


def int_twin(float_type: Attribute) -> IntegerType:
    """The integer type with the same width as `float_type` (for bit tricks)."""
    return _FLOAT_INT_TWIN[type(float_type)]


_FLOAT_SUFFIX: dict[type[Attribute], str] = {Float16Type: "f16", Float32Type: "f32", Float64Type: "f64"}


def intrinsic_suffix(t: Attribute) -> str:
    """LLVM's overload suffix for a type: f32, f64, i32, ..., v8f32 for a vector."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{intrinsic_suffix(t.element_type)}"
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    return _FLOAT_SUFFIX[type(t)]


def _constant_key(t: Attribute, value: float | int | bool) -> int | bytes:
    """`value` as `t` holds it: the signed representative of an integer (i1
    true is -1), the exact bits of a float (so -0.0 and NaNs stay apart)."""
    if isinstance(t, IntegerType):
        width = t.width.data
        v = int(value) & ((1 << width) - 1)
        if width > 1 and v >= 1 << (width - 1):
            v -= 1 << width  # IntegerAttr wants the signed representative
        if width == 1:
            v = -v if v else 0
        return v
    return struct.pack("<d", float(value))


@functools.lru_cache(maxsize=1 << 14)
def _constant_attr(t: Attribute, key: int | bytes) -> Attribute:
    """The (immutable, shareable) value attribute of a constant, verified once."""
    if isinstance(t, IntegerType) and isinstance(key, int):
        return IntegerAttr(key, t)
    if isa(t, AnyFloat) and isinstance(key, bytes):
        return FloatAttr(struct.unpack("<d", key)[0], t)
    raise TypeError(f"no constant of type {t} from {key!r}")


_Shape = tuple[type[Operation], tuple[object, ...], tuple[Attribute, ...]]
_shapes: dict[_Shape, tuple[dict[str, Attribute], list[Attribute]]] = {}
"""Properties and result types of the ops built so far, by (class, arguments
that are not operands, operand types): what the class's `__init__` derives
from those alone."""


class Emitter:
    """Appends `llvm` dialect ops at an insertion point and returns their results."""

    def __init__(self, block: Block) -> None:
        self.builder = Builder(InsertPoint.at_end(block))

    def move_to(self, block: Block) -> None:
        self.builder = Builder(InsertPoint.at_end(block))

    def op(self, operation: Operation) -> SSAValue:
        self.builder.insert(operation)
        return operation.results[0] if operation.results else None  # type: ignore[return-value]

    def made(
        self,
        cls: type[Operation],
        static: tuple[object, ...],
        operands: Sequence[SSAValue],
        build: Callable[[], Operation],
    ) -> SSAValue:
        """The op `build()` makes, inserted. The first of its shape (class,
        `static` arguments, operand types) is built by `build`, through the
        class's `__init__`; the rest copy its properties and result types
        through `create`, skipping IRDL's argument checks and the attributes'
        re-verification, which took a third of the lowering of the test
        suite's kind of modules (benchmarks/README.md)."""
        shape = (cls, static, tuple(operand.type for operand in operands))
        known = _shapes.get(shape)
        if known is None:
            operation = build()
            _shapes[shape] = (dict(operation.properties), [result.type for result in operation.results])
            return self.op(operation)
        properties, result_types = known
        return self.op(cls.create(operands=operands, result_types=result_types, properties=properties))

    # constants --------------------------------------------------------------
    def const(self, t: Attribute, value: float | int | bool) -> SSAValue:
        """A constant op; about a third of what kernels emit, so it is built
        without re-verifying an attribute `_constant_attr` made and checked once."""
        attr = _constant_attr(t, _constant_key(t, value))
        return self.op(llvm.ConstantOp.create(result_types=[t], properties={"value": attr}))

    def const_like(self, like: SSAValue, value: float | int) -> SSAValue:
        return self.const(like.type, value)

    def i64(self, value: int) -> SSAValue:
        return self.const(i64, value)

    # memory -------------------------------------------------------------------
    def element_ptr(self, base: SSAValue, index: SSAValue, element: Attribute) -> SSAValue:
        """&base[index] over elements of type `element` (an inbounds GEP)."""
        return self.made(
            llvm.GEPOp,
            ("at", element),
            (base, index),
            lambda: llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[index], inbounds=True),
        )

    def field_ptr(self, base: SSAValue, k: int, element: Attribute) -> SSAValue:
        """&base[k] for a constant `k` (an inbounds GEP)."""
        return self.made(
            llvm.GEPOp, ("field", k, element), (base,), lambda: llvm.GEPOp(base, [k], element, inbounds=True)
        )

    def load(self, ptr: SSAValue, t: Attribute, alignment: int | None = None) -> SSAValue:
        return self.made(llvm.LoadOp, (t, alignment), (ptr,), lambda: llvm.LoadOp(ptr, t, alignment=alignment))

    def store(self, value: SSAValue, ptr: SSAValue, alignment: int | None = None, nontemporal: bool = False) -> None:
        self.made(
            llvm.StoreOp,
            (alignment, nontemporal),
            (value, ptr),
            lambda: llvm.StoreOp(value, ptr, alignment=alignment, nontemporal=nontemporal),
        )

    # floating point -----------------------------------------------------------
    def fadd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.FAddOp, (), (a, b), lambda: llvm.FAddOp(a, b, STRICT))

    def fsub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.FSubOp, (), (a, b), lambda: llvm.FSubOp(a, b, STRICT))

    def fmul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.FMulOp, (), (a, b), lambda: llvm.FMulOp(a, b, STRICT))

    def fdiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.FDivOp, (), (a, b), lambda: llvm.FDivOp(a, b, STRICT))

    def frem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.FRemOp, (), (a, b), lambda: llvm.FRemOp(a, b, STRICT))

    def fneg(self, a: SSAValue) -> SSAValue:
        return self.made(llvm.FNegOp, (), (a,), lambda: llvm.FNegOp(a))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        """a*b + c with one rounding (llvm.fma)."""
        return self.made(llvm.FMAOp, (), (a, b, c), lambda: llvm.FMAOp(a, b, c))

    def fcmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """`pred` is an LLVM fcmp predicate: oeq olt ole ogt oge one ord uno ueq une ..."""
        return self.made(llvm.FCmpOp, (pred,), (a, b), lambda: llvm.FCmpOp(a, b, pred))

    def poly(self, x: SSAValue, coeffs: Sequence[float]) -> SSAValue:
        """Horner evaluation of sum(coeffs[i] * x**i) with FMAs."""
        acc = self.const_like(x, coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.const_like(x, c))
        return acc

    def estrin(self, x: SSAValue, coeffs: Sequence[float]) -> SSAValue:
        """sum(coeffs[i] * x**i) by Estrin's scheme: adjacent terms paired by one FMA
        with x, the pairs with x^2, those with x^4, ...: a dependency chain of ~2 log2(n)
        operations where Horner's (`poly`) is n, for long polynomials whose latency,
        not their operation count, limits a vectorized loop."""
        terms = [self.const_like(x, c) for c in coeffs]
        power = x
        while len(terms) > 1:
            pairs = [self.fma(terms[i + 1], power, terms[i]) for i in range(0, len(terms) - 1, 2)]
            terms = pairs + terms[len(terms) - len(terms) % 2 :]
            if len(terms) > 1:
                power = self.fmul(power, power)
        return terms[0]

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute | None) -> SSAValue:
        """Call an LLVM intrinsic; `name` without the type suffix is completed from args[0]."""
        return self.op(llvm.CallIntrinsicOp(name, list(args), [result] if result else []))

    def unary_intrinsic(self, base: str, a: SSAValue) -> SSAValue:
        return self.intrinsic(f"llvm.{base}.{intrinsic_suffix(a.type)}", [a], a.type)

    def binary_intrinsic(self, base: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.intrinsic(f"llvm.{base}.{intrinsic_suffix(a.type)}", [a, b], a.type)

    def fabs(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("fabs", a)

    def sqrt(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("sqrt", a)

    def floor(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("floor", a)

    def ceil(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("ceil", a)

    def trunc(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("trunc", a)

    def roundeven(self, a: SSAValue) -> SSAValue:
        return self.unary_intrinsic("roundeven", a)

    def copysign(self, mag: SSAValue, sign: SSAValue) -> SSAValue:
        return self.binary_intrinsic("copysign", mag, sign)

    def maximum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """NaN-propagating max (llvm.maximum), like np.maximum."""
        return self.binary_intrinsic("maximum", a, b)

    def minimum(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_intrinsic("minimum", a, b)

    def clamp(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        """Clamp with fcmp+select: becomes vmaxps/vminps and lets NaN through."""
        lo_v, hi_v = self.const_like(x, lo), self.const_like(x, hi)
        x = self.select(self.fcmp("olt", x, lo_v), lo_v, x)
        return self.select(self.fcmp("ogt", x, hi_v), hi_v, x)

    # integers and bits --------------------------------------------------------
    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.AddOp, (), (a, b), lambda: llvm.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.SubOp, (), (a, b), lambda: llvm.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.MulOp, (), (a, b), lambda: llvm.MulOp(a, b))

    def sdiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.SDivOp, (), (a, b), lambda: llvm.SDivOp(a, b))

    def srem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.SRemOp, (), (a, b), lambda: llvm.SRemOp(a, b))

    def udiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.UDivOp, (), (a, b), lambda: llvm.UDivOp(a, b))

    def urem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.URemOp, (), (a, b), lambda: llvm.URemOp(a, b))

    def and_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.AndOp, (), (a, b), lambda: llvm.AndOp(a, b))

    def or_(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.OrOp, (), (a, b), lambda: llvm.OrOp(a, b))

    def xor(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.XOrOp, (), (a, b), lambda: llvm.XOrOp(a, b))

    def shl(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.ShlOp, (), (a, b), lambda: llvm.ShlOp(a, b))

    def lshr(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.LShrOp, (), (a, b), lambda: llvm.LShrOp(a, b))

    def ashr(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.AShrOp, (), (a, b), lambda: llvm.AShrOp(a, b))

    def smin(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.select(self.icmp("slt", a, b), a, b)

    def smax(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.select(self.icmp("sgt", a, b), a, b)

    def icmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.ICmpOp, (pred,), (a, b), lambda: llvm.ICmpOp(a, b, IntegerAttr(_ICMP[pred], 64)))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.made(llvm.SelectOp, (), (cond, a, b), lambda: llvm.SelectOp(cond, a, b))

    # conversions ----------------------------------------------------------------
    def bitcast(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.BitcastOp, (t,), (a,), lambda: llvm.BitcastOp(a, t))

    def as_bits(self, a: SSAValue) -> SSAValue:
        return self.bitcast(a, int_twin(a.type))

    def from_bits(self, a: SSAValue, float_type: Attribute) -> SSAValue:
        return self.bitcast(a, float_type)

    def sitofp(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.SIToFPOp, (t,), (a,), lambda: llvm.SIToFPOp(a, t))

    def fptosi_sat(self, a: SSAValue, t: IntegerType) -> SSAValue:
        """Float to signed int, saturating, NaN -> 0 (llvm.fptosi.sat)."""
        name = f"llvm.fptosi.sat.{intrinsic_suffix(t)}.{intrinsic_suffix(a.type)}"
        return self.intrinsic(name, [a], t)

    def fpext(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.FPExtOp, (t,), (a,), lambda: llvm.FPExtOp(a, t))

    def fptrunc(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.FPTruncOp, (t,), (a,), lambda: llvm.FPTruncOp(a, t))

    def sext(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.SExtOp, (t,), (a,), lambda: llvm.SExtOp(a, t))

    def zext(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.ZExtOp, (t,), (a,), lambda: llvm.ZExtOp(a, t))

    def itrunc(self, a: SSAValue, t: Attribute) -> SSAValue:
        return self.made(llvm.TruncOp, (t,), (a,), lambda: llvm.TruncOp(a, t))


__all__ = ["Emitter", "int_twin", "intrinsic_suffix"]
