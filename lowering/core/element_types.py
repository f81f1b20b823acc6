"""How each element type sits in memory and in a kernel, and conversions between them.

One codec per type (looked up from the dtype table) says:
- `storage`: the LLVM type of one memory component (bf16 is kept as its i16
  bits, float8 as its i8 bits, i4/ui4 as one byte holding the value in its
  low four bits, i1 as a byte like NumPy's bool, complex as two floats);
- `compute`: the scalar type kernels compute in (f16, bf16 and float8 in f32,
  i4/ui4 in i8, unsigned integers in signless LLVM integers, complex per
  component);
- `decode` / `encode` between the two, and `round`, which rounds a computed
  value to the type's precision: every f16/bf16/float8/i4/ui4 op result is
  rounded once, exactly as it would be by a store, so fused and unfused graphs
  agree (float8 rounds to nearest even and overflows to NaN - or to inf for
  E5M2 - as ml_dtypes does; i4/ui4 wrap).

The four float8 formats are one encoder and one decoder of plain integer
arithmetic (vectorizable, no tables), parametrized by `Float8Format`.

`convert` implements `rlx.cast` for all pairs from these pieces (no kernel
per pair): float -> int saturates (NaN -> 0), int -> int wraps, -> i1 is
`!= 0`, i1 -> number is 0/1, complex -> real takes the real part, real ->
complex has a zero imaginary part, narrowing floats round to nearest even
once (f64 -> f16/bf16/float8 and i64/ui64 -> those go through a value rounded
to odd, which makes the second rounding exact). A cast to float8 with
`saturate` (ONNX's default) clamps to the largest finite value first, so
overflow and +-inf become +-max instead of NaN/inf.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal, NamedTuple

from xdsl.dialects.builtin import ComplexType, IntegerType, f16, f32, f64, i1, i8, i16, i32, i64
from xdsl.ir import Attribute, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.dtypes import DType, Kind
from rlx_mlir.lowering.core.emitter import Emitter


class ComplexValue(NamedTuple):
    """A complex element in a kernel: two float SSA values."""

    re: SSAValue
    im: SSAValue


Value = SSAValue | ComplexValue


def real(value: Value) -> SSAValue:
    """`value` as the one SSA value of a real element (narrows `Value` where the
    element type is known to be real)."""
    if isinstance(value, ComplexValue):
        raise TypeError("a complex element where a real one is expected")
    return value


def int_width(t: Attribute) -> int:
    """The bit width of an integer type."""
    if not isinstance(t, IntegerType):
        raise TypeError(f"{t} is not an integer type")
    return t.width.data


def complex_value(value: Value) -> ComplexValue:
    """`value` as a complex element (narrows `Value` where the type is complex)."""
    if not isinstance(value, ComplexValue):
        raise TypeError("a real element where a complex one is expected")
    return value


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


def _nibble_encode(e: Emitter, v: SSAValue) -> SSAValue:
    """i4/ui4 in i8 -> the stored byte: the low four bits (two's complement for
    i4), the high four zero, as ml_dtypes stores them. Wraps out-of-range values."""
    return e.and_(v, e.const(i8, 0x0F))


def _int4_decode(e: Emitter, byte: SSAValue) -> SSAValue:
    """The low four bits, sign-extended to i8 (any high bits are ignored)."""
    return e.ashr(e.shl(byte, e.const(i8, 4)), e.const(i8, 4))


def _uint4_decode(e: Emitter, byte: SSAValue) -> SSAValue:
    return _nibble_encode(e, byte)


@dataclass(frozen=True)
class Float8Format:
    """The bit layout of a float8 type: a sign bit, `exponent` and `mantissa`
    bits, and the exponent `bias`. `flavor` says where the specials are:
    - "ieee" (E5M2): as IEEE 754, the top exponent holds +-inf and the NaNs;
    - "fn" (E4M3FN): finite only, S.1111.111 is NaN, -0 exists;
    - "fnuz" (E4M3FNUZ, E5M2FNUZ): finite only, no -0, and 0x80 (the -0
      pattern) is the one NaN."""

    exponent: int
    mantissa: int
    bias: int
    flavor: Literal["ieee", "fn", "fnuz"]

    @property
    def max_field(self) -> int:
        """The 7-bit magnitude pattern of the largest finite value."""
        top = (1 << (self.exponent + self.mantissa)) - 1
        return {"ieee": top - (1 << self.mantissa), "fn": top - 1, "fnuz": top}[self.flavor]

    @property
    def largest(self) -> float:
        """The largest finite value (what `saturate` clamps to)."""
        field = self.max_field
        exponent, mantissa = field >> self.mantissa, field & ((1 << self.mantissa) - 1)
        return (1 + mantissa / (1 << self.mantissa)) * 2.0 ** (exponent - self.bias)

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def infinity_field(self) -> int:
        """Where +inf would be: just past the largest finite value for "ieee"."""
        return ((1 << self.exponent) - 1) << self.mantissa

    def nan_byte(self, e: Emitter, sign: SSAValue) -> SSAValue:
        """The NaN encode produces (an i32 byte): the sign kept except for FNUZ."""
        if self.flavor == "fnuz":
            return e.const(i32, 0x80)
        quiet = self.infinity_field | (1 << (self.mantissa - 1)) if self.flavor == "ieee" else 0x7F
        return e.or_(sign, e.const(i32, quiet))

    def encode(self, e: Emitter, v: SSAValue) -> SSAValue:
        """f32 -> float8 bits, round to nearest even; overflow is inf (ieee) or NaN."""
        bits = e.bitcast(v, i32)
        sign = e.and_(e.lshr(bits, e.const(i32, 24)), e.const(i32, 0x80))
        magnitude = e.and_(bits, e.const(i32, 0x7FFFFFFF))
        field = e.select(
            e.fcmp("olt", e.bitcast(magnitude, f32), e.const(f32, self.smallest_normal)),
            self._subnormal_field(e, magnitude),
            self._normal_field(e, magnitude),
        )
        overflow = e.icmp("sgt", field, e.const(i32, self.max_field))
        if self.flavor == "ieee":
            byte = e.or_(sign, e.select(overflow, e.const(i32, self.infinity_field), field))
        elif self.flavor == "fn":
            byte = e.or_(sign, e.select(overflow, e.const(i32, 0x7F), field))
        else:  # no -0: a zero field is +0 whatever the sign; overflow is the NaN
            signed = e.select(e.icmp("eq", field, e.const(i32, 0)), field, e.or_(sign, field))
            byte = e.select(overflow, e.const(i32, 0x80), signed)
        byte = e.select(e.fcmp("uno", v, v), self.nan_byte(e, sign), byte)
        return e.itrunc(byte, i8)

    def _normal_field(self, e: Emitter, magnitude: SSAValue) -> SSAValue:
        """|v| >= the smallest normal: round the f32 bits to `mantissa` bits
        (nearest even, by adding half an ulp minus one plus the kept lsb),
        then rebias the exponent. Too large a value gives a field past max."""
        drop = 23 - self.mantissa
        lsb = e.and_(e.lshr(magnitude, e.const(i32, drop)), e.const(i32, 1))
        rounded = e.lshr(e.add(magnitude, e.add(lsb, e.const(i32, (1 << (drop - 1)) - 1))), e.const(i32, drop))
        return e.sub(rounded, e.const(i32, (127 - self.bias) << self.mantissa))

    def _subnormal_field(self, e: Emitter, magnitude: SSAValue) -> SSAValue:
        """|v| < the smallest normal: adding K = 2^23 * (the subnormal step)
        makes the f32 adder round |v| to a whole number of steps (nearest
        even), which lands in the low bits of K's pattern. Rounding up to the
        smallest normal gives exactly its field, 1 << mantissa."""
        step = 2.0 ** (1 - self.bias - self.mantissa)
        k = e.const(f32, step * 2.0**23)
        total = e.fadd(e.bitcast(magnitude, f32), k)
        return e.sub(e.bitcast(total, i32), e.bitcast(k, i32))

    def decode(self, e: Emitter, byte: SSAValue) -> SSAValue:
        """float8 bits -> f32, exactly (the NaN of each flavor -> a quiet NaN)."""
        b = e.zext(byte, i32)
        sign = e.shl(e.and_(b, e.const(i32, 0x80)), e.const(i32, 24))
        field = e.and_(b, e.const(i32, 0x7F))
        normal = e.add(e.shl(field, e.const(i32, 23 - self.mantissa)), e.const(i32, (127 - self.bias) << 23))
        subnormal = e.bitcast(e.fmul(e.sitofp(field, f32), e.const(f32, 2.0 ** (1 - self.bias - self.mantissa))), i32)
        is_subnormal = e.icmp("ult", field, e.const(i32, 1 << self.mantissa))
        value = e.or_(sign, e.select(is_subnormal, subnormal, normal))
        if self.flavor == "ieee":
            special = e.icmp("uge", field, e.const(i32, self.infinity_field))
            infinite = e.icmp("eq", field, e.const(i32, self.infinity_field))
            value = e.select(
                special, e.or_(sign, e.select(infinite, e.const(i32, 0x7F800000), e.const(i32, 0x7FC00000))), value
            )
        else:  # "fn": S.1111.111; "fnuz": 0x80, which decodes with its sign bit set (as ml_dtypes)
            nan = e.icmp("eq", field if self.flavor == "fn" else b, e.const(i32, 0x7F if self.flavor == "fn" else 0x80))
            value = e.select(nan, e.or_(sign, e.const(i32, 0x7FC00000)), value)
        return e.bitcast(value, f32)


FLOAT8_FORMATS = {
    "f8E4M3FN": Float8Format(4, 3, 7, "fn"),
    "f8E4M3FNUZ": Float8Format(4, 3, 8, "fnuz"),
    "f8E5M2": Float8Format(5, 2, 15, "ieee"),
    "f8E5M2FNUZ": Float8Format(5, 2, 16, "fnuz"),
}
"""The float8 rows of the dtype table, by name (tested against ml_dtypes' finfo)."""


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
        """A float stored with less precision than it is computed in (f16, bf16, float8)."""
        return self.decode is not _identity and self.dtype.kind is Kind.FLOAT

    @property
    def wraps(self) -> bool:
        """An integer stored in fewer bits than it is computed in (i4, ui4)."""
        return self.decode is not _identity and self.dtype.kind in (Kind.INT, Kind.UINT)

    @property
    def signed(self) -> bool:
        return self.dtype.kind is Kind.INT

    def constant(self, e: Emitter, value: float | int) -> Value:
        """`value` in the compute type (complex: with a zero imaginary part)."""
        c = e.const(self.compute, value)
        return ComplexValue(c, e.const(self.compute, 0)) if self.components == 2 else c

    def round(self, e: Emitter, v: Value) -> Value:
        """A computed value as the type holds it: rounded (floats) or wrapped (i4/ui4)."""
        return self.decode(e, self.encode(e, real(v))) if self.narrow or self.wraps else v

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
        ptr = e.element_ptr(base, index, self.storage)
        return e.load(ptr, self.storage, alignment=self.dtype.nbytes // self.components)

    def _store(self, e: Emitter, value: SSAValue, base: SSAValue, index: SSAValue) -> None:
        ptr = e.element_ptr(base, index, self.storage)
        e.store(value, ptr, alignment=self.dtype.nbytes // self.components)


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
        case "i4":
            return Codec(dtype, i8, i8, _int4_decode, _nibble_encode)
        case "ui4":
            return Codec(dtype, i8, i8, _uint4_decode, _nibble_encode)
    if dtype.name in FLOAT8_FORMATS:
        fmt = FLOAT8_FORMATS[dtype.name]
        return Codec(dtype, i8, f32, fmt.decode, fmt.encode)
    if dtype.kind in (Kind.INT, Kind.UINT):
        signless = IntegerType(dtype.bits)
        return Codec(dtype, signless, signless)
    return Codec(dtype, ir_type, ir_type)


def select_value(e: Emitter, condition: SSAValue, a: Value, b: Value) -> Value:
    """condition ? a : b for an element of any type (complex: per component)."""
    if isinstance(a, ComplexValue):
        b = complex_value(b)
        return ComplexValue(e.select(condition, a.re, b.re), e.select(condition, a.im, b.im))
    return e.select(condition, a, real(b))


def component_dtype(dtype: DType) -> DType:
    """complex<f32> -> f32; real types are their own component."""
    if dtype.kind is Kind.COMPLEX:
        assert isinstance(dtype.ir_type, ComplexType), dtype.name
        return dtypes.from_ir(dtype.ir_type.element_type)
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


def _float_to_float(e: Emitter, v: SSAValue, target: Codec, saturate: bool = False) -> SSAValue:
    """Between compute floats (f32/f64), rounding once to the target's precision.
    `saturate` (float8 targets only, as ONNX's Cast) clamps to +-largest first:
    NaN passes, +-inf and values rounding past the largest become +-largest."""
    fmt = FLOAT8_FORMATS.get(target.dtype.name)
    if saturate and fmt is not None:
        v = _clamp_magnitude(e, v, fmt.largest)
    if v.type == target.compute:
        return real(target.round(e, v))
    if target.compute == f64:
        return e.fpext(v, f64)
    if target.narrow:
        return real(target.round(e, _round_to_odd_f32(e, v)))
    return e.fptrunc(v, f32)


def _clamp_magnitude(e: Emitter, v: SSAValue, largest: float) -> SSAValue:
    """v clamped to [-largest, largest]; NaN stays NaN (ordered compares are false)."""
    high, low = e.const_like(v, largest), e.const_like(v, -largest)
    return e.select(e.fcmp("ogt", v, high), high, e.select(e.fcmp("olt", v, low), low, v))


def _float_to_int(e: Emitter, v: SSAValue, target: Codec) -> SSAValue:
    """Saturating, NaN -> 0 (llvm.fpto[su]i.sat); i4/ui4 saturate to their
    own range after a signed saturation to the i8 they compute in."""
    kind = "fptosi" if target.signed or target.wraps else "fptoui"
    width = int_width(target.compute)
    name = f"llvm.{kind}.sat.i{width}.{'f32' if v.type == f32 else 'f64'}"
    value = e.intrinsic(name, [v], target.compute)
    if target.wraps:
        bits = target.dtype.bits
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if target.signed else (0, (1 << bits) - 1)
        value = e.smin(e.smax(value, e.const(target.compute, low)), e.const(target.compute, high))
    return value


def _int_to_float(e: Emitter, v: SSAValue, source: Codec, target: Codec, saturate: bool) -> SSAValue:
    """One rounding to the target. f16/bf16/float8 go through f64 rounded to
    odd (exact for every integer type but the 64-bit ones, whose rounding to
    f64 is made sticky), so the final narrowing rounds as if from the exact
    integer."""
    if not target.narrow:
        return _int_to_wide_float(e, v, source, target.compute, odd=False)
    return _float_to_float(e, _int_to_wide_float(e, v, source, f64, odd=True), target, saturate)


def _int_to_wide_float(e: Emitter, v: SSAValue, source: Codec, float_type: Attribute, odd: bool) -> SSAValue:
    """An integer as f32/f64, rounded to nearest even, or to odd when `odd`
    (f64 only). LLVM's unsigned conversion is missing from xDSL's llvm
    dialect, so unsigned values are made non-negative signed ones: narrower
    ones are zero-extended to i64; a ui64 at or above 2^63 is halved keeping
    its lowest bit as a sticky bit (which rounds the same, 10 bits below the
    rounding point) and the float doubled back (exact)."""
    large = None
    if not source.signed:
        if int_width(v.type) < 64:
            v = e.zext(v, i64)
        else:
            large = e.icmp("slt", v, e.i64(0))
            halved = e.or_(e.lshr(v, e.i64(1)), e.and_(v, e.i64(1)))
            v = e.select(large, halved, v)
    wide = e.sitofp(v, float_type)
    if odd and int_width(v.type) == 64:
        wide = _sticky_f64(e, v, wide)
    if large is not None:
        wide = e.select(large, e.fmul(wide, e.const(float_type, 2.0)), wide)
    return wide


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
    src_width = int_width(v.type)
    dst_width = int_width(target.compute)
    if dst_width < src_width:
        v = e.itrunc(v, target.compute)
    elif dst_width > src_width:
        v = (e.sext if source.signed else e.zext)(v, target.compute)
    return real(target.round(e, v)) if target.wraps else v


def _real_to_real(e: Emitter, v: SSAValue, source: Codec, target: Codec, saturate: bool) -> SSAValue:
    src_float = source.dtype.kind is Kind.FLOAT
    dst_float = target.dtype.kind is Kind.FLOAT
    if src_float and dst_float:
        return _float_to_float(e, v, target, saturate)
    if src_float:
        return _float_to_int(e, v, target)
    if dst_float:
        return _int_to_float(e, v, source, target, saturate)
    return _int_to_int(e, v, source, target)


def convert(e: Emitter, v: Value, source: Attribute, target: Attribute, saturate: bool = False) -> Value:
    """`rlx.cast` of one element from `source` to `target` (IR element types);
    `saturate` is the cast's flag (it changes only casts to float8)."""
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
        value = e.select(real(v), one, zero)
        return ComplexValue(value, zero) if dst.components == 2 else value
    if isinstance(v, ComplexValue):
        part = codec(component_dtype(src.dtype).ir_type)
        if dst.components == 2:
            dst_part = codec(component_dtype(dst.dtype).ir_type)
            return ComplexValue(_float_to_float(e, v.re, dst_part), _float_to_float(e, v.im, dst_part))
        return _real_to_real(e, v.re, part, dst, saturate)
    if dst.components == 2:
        dst_part = codec(component_dtype(dst.dtype).ir_type)
        re = _real_to_real(e, v, src, dst_part, saturate)
        return ComplexValue(re, e.const(dst_part.compute, 0.0))
    return _real_to_real(e, v, src, dst, saturate)
