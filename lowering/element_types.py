"""How each element type sits in memory and in a kernel, and conversions between them.

One codec per type (looked up from the dtype table) says:
- `storage`: the LLVM type of one memory component (bf16 is kept as its i16
  bits, i1 as a byte like NumPy's bool, complex as two floats);
- `compute`: the scalar type kernels compute in (f16 and bf16 in f32,
  unsigned integers in signless LLVM integers, complex per component);
- `decode` / `encode` between the two, and `round`, which rounds a computed
  value to the type's precision: every f16/bf16 op result is rounded once,
  exactly as it would be by a store, so fused and unfused graphs agree.

`convert` implements `rlx.cast` for all pairs from these pieces (no kernel
per pair): float -> int saturates (NaN -> 0), int -> int wraps, -> i1 is
`!= 0`, i1 -> number is 0/1, complex -> real takes the real part, real ->
complex has a zero imaginary part, narrowing floats round to nearest even
once (f64 -> f16/bf16 goes through round-to-odd f32, which makes the second
rounding exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dtypes import DType, Kind
from rlx_mlir.lowering.emitter import Emitter


class ComplexValue(NamedTuple):
    """A complex element in a kernel: two float SSA values."""

    re: SSAValue
    im: SSAValue


Value = SSAValue | ComplexValue
Decode = Callable[[Emitter, SSAValue], SSAValue]


def _identity(e: Emitter, v: SSAValue) -> SSAValue:
    return v


def _f16_decode(e: Emitter, v: SSAValue) -> SSAValue:
    return e.fpext(v, f32)


def _f16_encode(e: Emitter, v: SSAValue) -> SSAValue:
    return e.fptrunc(v, f16)


def _bf16_decode(e: Emitter, bits: SSAValue) -> SSAValue:
    """bf16 is the top half of an f32: widening is exact."""
    return e.bitcast(e.shl(e.zext(bits, i32), e.const(i32, 16)), f32)


def _bf16_encode(e: Emitter, v: SSAValue) -> SSAValue:
    """f32 -> bf16 bits, round to nearest even. A NaN keeps its top 16 bits
    (so a bf16 NaN survives decode/encode bit for bit) unless that would leave
    no payload there, in which case it becomes the quiet NaN of its sign."""
    bits = e.bitcast(v, i32)
    top = e.lshr(bits, e.const(i32, 16))
    lsb = e.and_(top, e.const(i32, 1))
    rounded = e.lshr(e.add(bits, e.add(lsb, e.const(i32, 0x7FFF))), e.const(i32, 16))
    payload_lost = e.icmp("eq", e.and_(top, e.const(i32, 0x7F)), e.const(i32, 0))
    nan = e.select(payload_lost, e.or_(top, e.const(i32, 0x40)), top)
    return e.itrunc(e.select(e.fcmp("uno", v, v), nan, rounded), i16)


def _bool_decode(e: Emitter, byte: SSAValue) -> SSAValue:
    return e.icmp("ne", byte, e.const(i8, 0))


def _bool_encode(e: Emitter, v: SSAValue) -> SSAValue:
    return e.zext(v, i8)


@dataclass(frozen=True)
class Codec:
    dtype: DType
    storage: Attribute
    compute: Attribute
    decode: Decode = _identity
    encode: Decode = _identity

    @property
    def components(self) -> int:
        return 2 if self.dtype.kind is Kind.COMPLEX else 1

    @property
    def narrow(self) -> bool:
        """Stored with less precision than it is computed in (f16, bf16)."""
        return self.decode is not _identity and self.dtype.kind is Kind.FLOAT

    @property
    def signed(self) -> bool:
        return self.dtype.kind is Kind.INT

    def constant(self, e: Emitter, value: float | int) -> Value:
        """`value` in the compute type (complex: with a zero imaginary part)."""
        c = e.const(self.compute, value)
        return ComplexValue(c, e.const(self.compute, 0)) if self.components == 2 else c

    def round(self, e: Emitter, v: Value) -> Value:
        return self.decode(e, self.encode(e, v)) if self.narrow else v  # type: ignore[arg-type]

    def load(self, e: Emitter, base: SSAValue, index: SSAValue) -> Value:
        if self.components == 2:
            first = e.mul(index, e.i64(2))
            return ComplexValue(self._load(e, base, first), self._load(e, base, e.add(first, e.i64(1))))
        return self.decode(e, self._load(e, base, index))

    def store(self, e: Emitter, value: Value, base: SSAValue, index: SSAValue) -> None:
        if isinstance(value, ComplexValue):
            first = e.mul(index, e.i64(2))
            self._store(e, value.re, base, first)
            self._store(e, value.im, base, e.add(first, e.i64(1)))
            return
        self._store(e, self.encode(e, value), base, index)

    def copy(self, e: Emitter, src: SSAValue, src_index: SSAValue, dst: SSAValue, dst_index: SSAValue) -> None:
        """Move one element as stored bits: no decode, no rounding, payloads kept."""
        for part in range(self.components):
            at_src, at_dst = src_index, dst_index
            if self.components == 2:
                at_src = e.add(e.mul(src_index, e.i64(2)), e.i64(part))
                at_dst = e.add(e.mul(dst_index, e.i64(2)), e.i64(part))
            self._store(e, self._load(e, src, at_src), dst, at_dst)

    def _load(self, e: Emitter, base: SSAValue, index: SSAValue) -> SSAValue:
        ptr = e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], self.storage, ssa_indices=[index], inbounds=True))
        return e.op(llvm.LoadOp(ptr, self.storage, alignment=self.dtype.nbytes // self.components))

    def _store(self, e: Emitter, value: SSAValue, base: SSAValue, index: SSAValue) -> None:
        ptr = e.op(llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], self.storage, ssa_indices=[index], inbounds=True))
        e.op(llvm.StoreOp(value, ptr, alignment=self.dtype.nbytes // self.components))


@cache
def codec(ir_type: Attribute) -> Codec:
    """The codec of an IR element type (signed or unsigned integers map to signless LLVM ones)."""
    dtype = dtypes.from_ir(ir_type)
    match dtype.name:
        case "f16":
            return Codec(dtype, f16, f32, _f16_decode, _f16_encode)
        case "bf16":
            return Codec(dtype, i16, f32, _bf16_decode, _bf16_encode)
        case "i1":
            return Codec(dtype, i8, i1, _bool_decode, _bool_encode)
        case "complex<f32>":
            return Codec(dtype, f32, f32)
        case "complex<f64>":
            return Codec(dtype, f64, f64)
    if dtype.kind in (Kind.INT, Kind.UINT):
        signless = IntegerType(dtype.bits)
        return Codec(dtype, signless, signless)
    return Codec(dtype, ir_type, ir_type)


def select_value(e: Emitter, condition: SSAValue, a: Value, b: Value) -> Value:
    """condition ? a : b for an element of any type (complex: per component)."""
    if isinstance(a, ComplexValue):
        return ComplexValue(e.select(condition, a.re, b.re), e.select(condition, a.im, b.im))  # type: ignore[union-attr]
    return e.select(condition, a, b)  # type: ignore[arg-type]


def component_dtype(dtype: DType) -> DType:
    """complex<f32> -> f32; real types are their own component."""
    if dtype.kind is Kind.COMPLEX:
        return dtypes.from_ir(dtype.ir_type.element_type)  # type: ignore[attr-defined]
    return dtype


# ---------------------------------------------------------------------------
# conversions (rlx.cast)
# ---------------------------------------------------------------------------


def _is_nonzero(e: Emitter, v: SSAValue) -> SSAValue:
    if isinstance(v.type, IntegerType):
        return e.icmp("ne", v, e.const_like(v, 0))
    return e.fcmp("une", v, e.const_like(v, 0.0))  # NaN is "true", as in NumPy


def _round_to_odd_f32(e: Emitter, x: SSAValue) -> SSAValue:
    """f64 -> f32 rounded to odd: a later rounding to a narrower type is then exact."""
    t = e.fptrunc(x, f32)
    back = e.fpext(t, f64)
    inexact = e.fcmp("one", back, x)
    overshoot = e.and_(inexact, e.fcmp("ogt", e.fabs(back), e.fabs(x)))
    bits = e.bitcast(t, i32)
    bits = e.select(overshoot, e.sub(bits, e.const(i32, 1)), bits)
    bits = e.select(inexact, e.or_(bits, e.const(i32, 1)), bits)
    return e.bitcast(bits, f32)


def _float_to_float(e: Emitter, v: SSAValue, target: Codec) -> SSAValue:
    """Between compute floats (f32/f64), rounding once to the target's precision."""
    if v.type == target.compute:
        return target.round(e, v)  # type: ignore[return-value]
    if target.compute == f64:
        return e.fpext(v, f64)
    if target.narrow:
        return target.round(e, _round_to_odd_f32(e, v))  # type: ignore[return-value]
    return e.fptrunc(v, f32)


def _float_to_int(e: Emitter, v: SSAValue, target: Codec) -> SSAValue:
    """Saturating, NaN -> 0 (llvm.fpto[su]i.sat)."""
    kind = "fptosi" if target.signed else "fptoui"
    width = target.compute.width.data  # type: ignore[attr-defined]
    name = f"llvm.{kind}.sat.i{width}.{'f32' if v.type == f32 else 'f64'}"
    return e.intrinsic(name, [v], target.compute)


def _int_to_float(e: Emitter, v: SSAValue, source: Codec, target: Codec) -> SSAValue:
    """One rounding to the target. f16/bf16 go through f64 rounded to odd (exact
    for every integer type but i64, whose rounding to f64 is made sticky), so
    the final narrowing rounds as if from the exact integer."""
    if not source.signed:  # unsigned: widen first so the value is non-negative
        v = e.zext(v, i64) if v.type.width.data < 64 else v  # type: ignore[attr-defined]
    if not target.narrow:
        return e.sitofp(v, target.compute)
    wide = e.sitofp(v, f64)
    if v.type.width.data == 64:  # type: ignore[attr-defined]
        wide = _sticky_f64(e, v, wide)
    return _float_to_float(e, wide, target)


def _sticky_f64(e: Emitter, v: SSAValue, wide: SSAValue) -> SSAValue:
    """i64 -> f64 rounded to odd: if the nearest-even result is inexact, step it
    toward zero when it overshot and set its lowest bit."""
    back = e.intrinsic("llvm.fptosi.sat.i64.f64", [wide], i64)
    overshoot = e.icmp("sgt", e.select(e.icmp("slt", v, e.i64(0)), e.sub(v, back), e.sub(back, v)), e.i64(0))
    inexact = e.icmp("ne", back, v)
    saturated = e.icmp("eq", back, e.i64((1 << 63) - 1))  # 2^63 itself: exact enough, a power of two
    bits = e.bitcast(wide, i64)
    bits = e.select(e.and_(overshoot, e.xor(saturated, e.const(i1, 1))), e.sub(bits, e.i64(1)), bits)
    bits = e.select(e.and_(inexact, e.xor(saturated, e.const(i1, 1))), e.or_(bits, e.i64(1)), bits)
    return e.bitcast(bits, f64)


def _int_to_int(e: Emitter, v: SSAValue, source: Codec, target: Codec) -> SSAValue:
    src_width = v.type.width.data  # type: ignore[attr-defined]
    dst_width = target.compute.width.data  # type: ignore[attr-defined]
    if dst_width == src_width:
        return v
    if dst_width < src_width:
        return e.itrunc(v, target.compute)
    return (e.sext if source.signed else e.zext)(v, target.compute)


def _real_to_real(e: Emitter, v: SSAValue, source: Codec, target: Codec) -> SSAValue:
    src_float = source.dtype.kind is Kind.FLOAT
    dst_float = target.dtype.kind is Kind.FLOAT
    if src_float and dst_float:
        return _float_to_float(e, v, target)
    if src_float:
        return _float_to_int(e, v, target)
    if dst_float:
        return _int_to_float(e, v, source, target)
    return _int_to_int(e, v, source, target)


def convert(e: Emitter, v: Value, source: Attribute, target: Attribute) -> Value:
    """`rlx.cast` of one element from `source` to `target` (IR element types)."""
    src, dst = codec(source), codec(target)
    if source == target:
        return v
    if dst.dtype.kind is Kind.BOOL:
        if isinstance(v, ComplexValue):
            return e.or_(_is_nonzero(e, v.re), _is_nonzero(e, v.im))
        return _is_nonzero(e, v)
    if src.dtype.kind is Kind.BOOL:
        part = codec(component_dtype(dst.dtype).ir_type)
        one = e.const(part.compute, 1.0 if part.dtype.kind is Kind.FLOAT else 1)
        zero = e.const(part.compute, 0.0 if part.dtype.kind is Kind.FLOAT else 0)
        value = e.select(v, one, zero)  # type: ignore[arg-type]
        return ComplexValue(value, zero) if dst.components == 2 else value
    if isinstance(v, ComplexValue):
        part = codec(component_dtype(src.dtype).ir_type)
        if dst.components == 2:
            dst_part = codec(component_dtype(dst.dtype).ir_type)
            return ComplexValue(_float_to_float(e, v.re, dst_part), _float_to_float(e, v.im, dst_part))
        return _real_to_real(e, v.re, part, dst)
    if dst.components == 2:
        dst_part = codec(component_dtype(dst.dtype).ir_type)
        re = _real_to_real(e, v, src, dst_part)
        return ComplexValue(re, e.const(dst_part.compute, 0.0))
    return _real_to_real(e, v, src, dst)


