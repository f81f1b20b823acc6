"""Elementwise ops of the `rlx` dialect.

Every op works on statically shaped `tensor<...>` values at the graph level and
also on plain scalars (`f32`, `i1`, ...), so that the body of a fused region
(`region.py`) is written with the very same ops: an op's semantics
then live in one emitter (`lowering/scalar/scalar_ops.py`) whether it runs alone or
fused.

```mlir
%s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
%t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
```

Families, each an abstract base with one small class per op (as xDSL's
`arith`): unary (activations), binary (NumPy broadcasting), compare (-> i1),
`where`, `fma`, `cast` and the activation gradients. Which element kinds an
op accepts is its `ALLOWED` class variable. The fused regions these ops form
are in `region.py`.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, DenseIntOrFPElementsAttr, StringAttr, TensorType, f64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.dialects.common import (
    ANY,
    FIELD,
    FLOATS,
    FUNCTIONAL_FORMAT,
    INTS,
    INTS_AND_BOOL,
    ORDERED,
    REALS,
    check_broadcast_result,
    check_kind,
    check_same_level,
    check_value_type,
    element_type,
    shape_of,
)
from rlx_mlir.dialects.resources import ResourceElementsAttr, constant_values
from rlx_mlir.dtypes import Kind

# ---------------------------------------------------------------------------
# elementwise families
# ---------------------------------------------------------------------------


class ElementwiseOp(IRDLOperation, ABC):
    """Computes each output element from the broadcast-aligned input elements."""

    traits = traits_def(Pure())
    assembly_format = FUNCTIONAL_FORMAT

    def verify_(self) -> None:
        is_tensor = check_same_level(self)
        operand_dtypes = [check_value_type(self, v.type, f"operand #{i}") for i, v in enumerate(self.operands)]
        result_dtype = check_value_type(self, self.results[0].type, "result")
        if is_tensor:
            check_broadcast_result(self, self.operands, self.results[0])
        self.verify_dtypes(operand_dtypes, result_dtype)

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        """Family-specific element type rules."""


class UnaryOp(ElementwiseOp, ABC):
    """One operand, result of the same type; floats unless an op allows more."""

    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS
    input = operand_def()
    result = result_def()

    def __init__(self, input: SSAValue, result_type: Attribute | None = None) -> None:
        super().__init__(operands=[input], result_types=[result_type or input.type])

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        check_kind(self, operands[0], self.ALLOWED, "operand")
        if result != operands[0]:
            raise VerifyException(
                f"'{self.name}' result element type {result.name} must equal the operand's {operands[0].name}"
            )


class BinaryOp(ElementwiseOp, ABC):
    """Two operands of one element type, broadcast as NumPy does."""

    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if operands[0] != operands[1]:
            raise VerifyException(
                f"'{self.name}' operand element types differ ({operands[0].name} vs {operands[1].name}); insert rlx.cast"
            )
        check_kind(self, operands[0], self.ALLOWED, "operands")
        if result != operands[0]:
            raise VerifyException(
                f"'{self.name}' result element type {result.name} must equal the operands' {operands[0].name}"
            )


class CompareOp(BinaryOp, ABC):
    """A binary predicate: the result is i1."""

    ALLOWED: ClassVar[frozenset[Kind]] = ANY

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if operands[0] != operands[1]:
            raise VerifyException(
                f"'{self.name}' operand element types differ ({operands[0].name} vs {operands[1].name}); insert rlx.cast"
            )
        check_kind(self, operands[0], self.ALLOWED, "operands")
        if result.kind is not Kind.BOOL:
            raise VerifyException(f"'{self.name}' result must have element type i1, got {result.name}")


# ---------------------------------------------------------------------------
# unary ops
# ---------------------------------------------------------------------------


@irdl_op_definition
class ReluOp(UnaryOp):
    """`rlx.relu`: max(x, 0); NaN passes through (np.maximum(x, 0)); also on signed integers (ONNX Relu)."""

    name = "rlx.relu"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.INT}


@irdl_op_definition
class GeluOp(UnaryOp):
    """`rlx.gelu`: exact GELU x/2 (1 + erf(x/sqrt 2))."""

    name = "rlx.gelu"


@irdl_op_definition
class GeluApproxOp(UnaryOp):
    """`rlx.gelu_approx`: tanh-form GELU x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    name = "rlx.gelu_approx"


@irdl_op_definition
class SiluOp(UnaryOp):
    """`rlx.silu`: x * sigmoid(x)."""

    name = "rlx.silu"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """`rlx.sigmoid`: 1 / (1 + e^-x)."""

    name = "rlx.sigmoid"


@irdl_op_definition
class TanhOp(UnaryOp):
    """`rlx.tanh`: hyperbolic tangent."""

    name = "rlx.tanh"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`rlx.exp`: e^x (complex: principal value)."""

    name = "rlx.exp"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.COMPLEX}


@irdl_op_definition
class LogOp(UnaryOp):
    """`rlx.log`: natural logarithm (complex: principal branch)."""

    name = "rlx.log"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.COMPLEX}


@irdl_op_definition
class SqrtOp(UnaryOp):
    """`rlx.sqrt`: square root (complex: principal branch)."""

    name = "rlx.sqrt"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.COMPLEX}


@irdl_op_definition
class RsqrtOp(UnaryOp):
    """`rlx.rsqrt`: 1 / sqrt(x)."""

    name = "rlx.rsqrt"


@irdl_op_definition
class NegOp(UnaryOp):
    """`rlx.neg`: -x (integers wrap)."""

    name = "rlx.neg"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.INT, Kind.COMPLEX}


@irdl_op_definition
class AbsOp(UnaryOp):
    """`rlx.abs`: |x| (integers wrap: abs(INT_MIN) = INT_MIN)."""

    name = "rlx.abs"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.INT}


@irdl_op_definition
class RoundOp(UnaryOp):
    """`rlx.round`: round half to even (np.round)."""

    name = "rlx.round"


@irdl_op_definition
class SinOp(UnaryOp):
    """`rlx.sin`: sine."""

    name = "rlx.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """`rlx.cos`: cosine."""

    name = "rlx.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    """`rlx.tan`: tangent."""

    name = "rlx.tan"


@irdl_op_definition
class AtanOp(UnaryOp):
    """`rlx.atan`: arctangent."""

    name = "rlx.atan"


@irdl_op_definition
class RecipOp(UnaryOp):
    """`rlx.recip`: 1 / x."""

    name = "rlx.recip"


@irdl_op_definition
class FloorOp(UnaryOp):
    """`rlx.floor`: largest integer <= x."""

    name = "rlx.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """`rlx.ceil`: smallest integer >= x."""

    name = "rlx.ceil"


@irdl_op_definition
class SignOp(UnaryOp):
    """`rlx.sign`: -1, 0 or 1 (np.sign: +0 for ±0, NaN for NaN)."""

    name = "rlx.sign"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS | {Kind.INT}


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """`rlx.softplus`: log(1 + e^x), evaluated without overflow."""

    name = "rlx.softplus"


@irdl_op_definition
class EluOp(UnaryOp):
    """`rlx.elu`: x for x > 0, else e^x - 1 (alpha = 1)."""

    name = "rlx.elu"


@irdl_op_definition
class ErfOp(UnaryOp):
    """`rlx.erf`: the error function."""

    name = "rlx.erf"


@irdl_op_definition
class HardSwishOp(UnaryOp):
    """`rlx.hard_swish`: x * clamp(x + 3, 0, 6) / 6."""

    name = "rlx.hard_swish"


@irdl_op_definition
class HardSigmoidOp(UnaryOp):
    """`rlx.hard_sigmoid`: clamp(x / 6 + 1/2, 0, 1)."""

    name = "rlx.hard_sigmoid"


@irdl_op_definition
class MishOp(UnaryOp):
    """`rlx.mish`: x * tanh(softplus(x))."""

    name = "rlx.mish"


@irdl_op_definition
class SoftsignOp(UnaryOp):
    """`rlx.softsign`: x / (1 + |x|)."""

    name = "rlx.softsign"


@irdl_op_definition
class LogSigmoidOp(UnaryOp):
    """`rlx.log_sigmoid`: log(sigmoid(x)), evaluated without overflow."""

    name = "rlx.log_sigmoid"


# ---------------------------------------------------------------------------
# binary ops
# ---------------------------------------------------------------------------


@irdl_op_definition
class AddOp(BinaryOp):
    """`rlx.add`: a + b (integers wrap)."""

    name = "rlx.add"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class SubOp(BinaryOp):
    """`rlx.sub`: a - b (integers wrap)."""

    name = "rlx.sub"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class MulOp(BinaryOp):
    """`rlx.mul`: a * b (integers wrap)."""

    name = "rlx.mul"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class DivOp(BinaryOp):
    """`rlx.div`: a / b; integers truncate toward zero, x / 0 = 0, INT_MIN / -1 = INT_MIN; complex by Smith's algorithm."""

    name = "rlx.div"
    ALLOWED: ClassVar[frozenset[Kind]] = FIELD


@irdl_op_definition
class ModOp(BinaryOp):
    """`rlx.mod`: remainder with the sign of a (np.fmod); integer x mod 0 = 0."""

    name = "rlx.mod"
    ALLOWED: ClassVar[frozenset[Kind]] = REALS


@irdl_op_definition
class MaxOp(BinaryOp):
    """`rlx.max`: the larger of a and b; NaN propagates (np.maximum)."""

    name = "rlx.max"
    ALLOWED: ClassVar[frozenset[Kind]] = REALS


@irdl_op_definition
class MinOp(BinaryOp):
    """`rlx.min`: the smaller of a and b; NaN propagates (np.minimum)."""

    name = "rlx.min"
    ALLOWED: ClassVar[frozenset[Kind]] = REALS


class _PowCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (SmallPowerToProducts(),)


@irdl_op_definition
class PowOp(BinaryOp):
    """`rlx.pow`: a ** b (np.power); on integers exact and wrapping, a negative
    exponent giving the power truncated toward zero (see `lowering/scalar/scalar_ops.py`).
    A constant float exponent of 2 or 3 canonicalizes to products."""

    name = "rlx.pow"
    ALLOWED: ClassVar[frozenset[Kind]] = REALS
    traits = traits_def(Pure(), _PowCanonicalization())


@irdl_op_definition
class Atan2Op(BinaryOp):
    """`rlx.atan2`: the angle of the point (b, a) (np.arctan2(a, b))."""

    name = "rlx.atan2"
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS


@irdl_op_definition
class BitAndOp(BinaryOp):
    """`rlx.bit_and`: bitwise and."""

    name = "rlx.bit_and"
    ALLOWED: ClassVar[frozenset[Kind]] = INTS_AND_BOOL


@irdl_op_definition
class BitOrOp(BinaryOp):
    """`rlx.bit_or`: bitwise or."""

    name = "rlx.bit_or"
    ALLOWED: ClassVar[frozenset[Kind]] = INTS_AND_BOOL


@irdl_op_definition
class BitXorOp(BinaryOp):
    """`rlx.bit_xor`: bitwise exclusive or."""

    name = "rlx.bit_xor"
    ALLOWED: ClassVar[frozenset[Kind]] = INTS_AND_BOOL


@irdl_op_definition
class ShlOp(BinaryOp):
    """`rlx.shl`: a << b; a shift by a negative amount or >= the bit width gives 0."""

    name = "rlx.shl"
    ALLOWED: ClassVar[frozenset[Kind]] = INTS


@irdl_op_definition
class ShrOp(BinaryOp):
    """`rlx.shr`: a >> b, arithmetic for signed types; out-of-range shifts give 0 or the sign fill."""

    name = "rlx.shr"
    ALLOWED: ClassVar[frozenset[Kind]] = INTS


# ---------------------------------------------------------------------------
# compare ops
# ---------------------------------------------------------------------------


@irdl_op_definition
class EqOp(CompareOp):
    """`rlx.eq`: a == b (floats: ordered, so NaN == NaN is false)."""

    name = "rlx.eq"


@irdl_op_definition
class NeOp(CompareOp):
    """`rlx.ne`: a != b (floats: unordered, so NaN != NaN is true)."""

    name = "rlx.ne"


@irdl_op_definition
class LtOp(CompareOp):
    """`rlx.lt`: a < b."""

    name = "rlx.lt"
    ALLOWED: ClassVar[frozenset[Kind]] = ORDERED


@irdl_op_definition
class LeOp(CompareOp):
    """`rlx.le`: a <= b."""

    name = "rlx.le"
    ALLOWED: ClassVar[frozenset[Kind]] = ORDERED


@irdl_op_definition
class GtOp(CompareOp):
    """`rlx.gt`: a > b."""

    name = "rlx.gt"
    ALLOWED: ClassVar[frozenset[Kind]] = ORDERED


@irdl_op_definition
class GeOp(CompareOp):
    """`rlx.ge`: a >= b."""

    name = "rlx.ge"
    ALLOWED: ClassVar[frozenset[Kind]] = ORDERED


UNARY_OPS: dict[str, type[UnaryOp]] = {
    op.name.removeprefix("rlx."): op
    for op in (
        ReluOp,
        GeluOp,
        GeluApproxOp,
        SiluOp,
        SigmoidOp,
        TanhOp,
        ExpOp,
        LogOp,
        SqrtOp,
        RsqrtOp,
        NegOp,
        AbsOp,
        RoundOp,
        SinOp,
        CosOp,
        TanOp,
        AtanOp,
        RecipOp,
        FloorOp,
        CeilOp,
        SignOp,
        SoftplusOp,
        EluOp,
        ErfOp,
        HardSwishOp,
        HardSigmoidOp,
        MishOp,
        SoftsignOp,
        LogSigmoidOp,
    )
}
"""Every unary op by its short name (the Builder's methods, `activation_backward`'s `kind`)."""

BINARY_OPS: dict[str, type[BinaryOp]] = {
    op.name.removeprefix("rlx."): op
    for op in (
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        ModOp,
        MaxOp,
        MinOp,
        PowOp,
        Atan2Op,
        BitAndOp,
        BitOrOp,
        BitXorOp,
        ShlOp,
        ShrOp,
    )
}

COMPARE_OPS: dict[str, type[CompareOp]] = {
    op.name.removeprefix("rlx."): op for op in (EqOp, NeOp, LtOp, LeOp, GtOp, GeOp)
}


# ---------------------------------------------------------------------------
# select, fma, cast, gradients
# ---------------------------------------------------------------------------


@irdl_op_definition
class WhereOp(ElementwiseOp):
    """`rlx.where %cond, %t, %f`: elementwise select with NumPy broadcasting of all three."""

    name = "rlx.where"
    condition = operand_def()
    true_value = operand_def()
    false_value = operand_def()
    result = result_def()

    def __init__(self, condition: SSAValue, t: SSAValue, f: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[condition, t, f], result_types=[result_type])

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if operands[0].kind is not Kind.BOOL:
            raise VerifyException(f"'{self.name}' condition must have element type i1, got {operands[0].name}")
        if not operands[1] == operands[2] == result:
            raise VerifyException(
                f"'{self.name}' branches and result must share an element type "
                f"(got {operands[1].name}, {operands[2].name} -> {result.name})"
            )


@irdl_op_definition
class FmaOp(ElementwiseOp):
    """`rlx.fma %a, %b, %c` = a*b + c with a single rounding."""

    name = "rlx.fma"
    a = operand_def()
    b = operand_def()
    c = operand_def()
    result = result_def()

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[a, b, c], result_types=[result_type])

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if not operands[0] == operands[1] == operands[2] == result:
            raise VerifyException(f"'{self.name}' operands and result must share one element type")
        check_kind(self, result, FLOATS, "operands")


@irdl_op_definition
class CastOp(ElementwiseOp):
    """`rlx.cast %x : (tensor<4xf32>) -> tensor<4xi32>`; the result type gives the target.

    float -> int saturates (NaN -> 0), int -> int wraps, -> i1 is `!= 0`,
    i1 -> number is 0/1. `saturate` (default true, as ONNX's Cast) matters
    only for a float8 result: out-of-range values and +-inf become the largest
    finite value of their sign; with `{saturate = false}` they become NaN, or
    +-inf for f8E5M2 (as ml_dtypes' astype). A cast to the operand's own type
    is the identity (canonicalization removes it), saturating or not.
    """

    name = "rlx.cast"
    input = operand_def()
    result = result_def()
    saturate = prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, input: SSAValue, result_type: Attribute, saturate: bool = True) -> None:
        super().__init__(
            operands=[input], result_types=[result_type], properties={"saturate": BoolAttr.from_bool(saturate)}
        )

    def verify_(self) -> None:
        is_tensor = check_same_level(self)
        check_value_type(self, self.input.type, "operand")
        check_value_type(self, self.result.type, "result")
        if is_tensor and shape_of(self.input.type) != shape_of(self.result.type):
            raise VerifyException(
                f"'{self.name}' result shape {list(shape_of(self.result.type))} must equal "
                f"the operand shape {list(shape_of(self.input.type))}"
            )


class GradientOp(ElementwiseOp, ABC):
    """dx = dy * f'(x) for an activation f: elementwise in (x, dy), so it fuses."""

    x = operand_def()
    dy = operand_def()
    result = result_def()
    irdl_options = (ParsePropInAttrDict(),)

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if not operands[0] == operands[1] == result:
            raise VerifyException(f"'{self.name}' x, dy and the result must share one element type")
        check_kind(self, result, FLOATS, "operands")


@irdl_op_definition
class ReluBackwardOp(GradientOp):
    """`rlx.relu_backward %x, %dy` = dy where x > 0, else 0."""

    name = "rlx.relu_backward"

    def __init__(self, x: SSAValue, dy: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[x, dy], result_types=[result_type])


@irdl_op_definition
class ActivationBackwardOp(GradientOp):
    """`rlx.activation_backward %x, %dy {kind = "gelu"}` = dy * kind'(x), for every unary kind."""

    name = "rlx.activation_backward"
    kind = prop_def(StringAttr)

    def __init__(self, x: SSAValue, dy: SSAValue, kind: str, result_type: Attribute) -> None:
        super().__init__(operands=[x, dy], result_types=[result_type], properties={"kind": StringAttr(kind)})

    @property
    def activation(self) -> type[UnaryOp]:
        """The unary op whose derivative this is."""
        return UNARY_OPS[self.kind.data]

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if self.kind.data not in UNARY_OPS:
            raise VerifyException(f"'{self.name}' kind \"{self.kind.data}\" is not a unary rlx op")
        super().verify_dtypes(operands, result)


ELEMENTWISE_OPS: tuple[type[ElementwiseOp], ...] = (
    *UNARY_OPS.values(),
    *BINARY_OPS.values(),
    *COMPARE_OPS.values(),
    WhereOp,
    FmaOp,
    CastOp,
    ReluBackwardOp,
    ActivationBackwardOp,
)


def is_elementwise(op: Operation) -> bool:
    return isinstance(op, ELEMENTWISE_OPS)


def _scalar_constant(value: SSAValue) -> float | None:
    """The one value of a rank-0 or splat constant, seen through an expand; else
    None. By op name: rlx.constant and rlx.expand are defined over this module."""
    owner = value.owner
    if isinstance(owner, Operation) and owner.name == "rlx.expand":
        owner = owner.operands[0].owner
    constant = owner.properties.get("value") if isinstance(owner, Operation) and owner.name == "rlx.constant" else None
    if not isinstance(constant, (DenseIntOrFPElementsAttr, ResourceElementsAttr)) or shape_of(constant.type) != ():
        return None
    scalar = constant_values(constant).reshape(-1)[0].item()
    return float(scalar) if isinstance(scalar, (int, float)) else None


class SmallPowerToProducts(RewritePattern):
    """`x ** 2` is `x * x`, the same correctly rounded value. `x ** 3` below f64
    is `x * x * x` in f64 (the square exact, the cube rounded once in f64, then
    once to x's type, as the pow kernel rounds its f64 result), so a GELU's
    cube is two multiplies instead of an f64 exp and log; f64's cube stays a
    pow, which rounds once."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter) -> None:
        exponent = _scalar_constant(op.rhs)
        dtype = dtypes.lookup(element_type(op.result.type))
        if exponent not in (2.0, 3.0) or dtype is None or dtype.kind is not Kind.FLOAT:
            return
        if op.lhs.type != op.result.type:  # the exponent's shape broadcasts x: not a product of x alone
            return
        if exponent == 2.0:
            rewriter.replace(op, MulOp(op.lhs, op.lhs, op.result.type))
        elif dtype.name != "f64":
            wide = TensorType(f64, shape_of(op.result.type))
            x = CastOp(op.lhs, wide)
            square = MulOp(x.result, x.result, wide)
            cube = MulOp(square.result, x.result, wide)
            rewriter.replace(op, [x, square, cube, CastOp(cube.result, op.result.type)])
