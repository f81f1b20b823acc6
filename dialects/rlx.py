"""The `rlx` dialect: the op set of the RLX runtime on builtin tensors.

Every op works on statically shaped `tensor<...>` values at the graph level.
Elementwise ops also accept plain scalars (`f32`, `i1`, ...) so that the body
of an `rlx.elementwise_region` is written with the very same ops: an op's
semantics then live in one emitter whether it runs alone or fused.

```mlir
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
```

Families (each an abstract base; concrete ops are generated from name tables):
unary (activations), binary (NumPy broadcasting), compare (-> i1), `where`,
`fma`, `cast`, `expand`, `reshape`, `constant`, and the fused
`elementwise_region` with its `yield` terminator.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes, index_maps
from rlx_mlir.broadcast import broadcasts_to, numel
from rlx_mlir.dialects.common import (
    ANY,
    BINARY_KINDS,
    FLOATS,
    FUNCTIONAL_FORMAT,
    ORDERED,
    check_broadcast_result,
    check_kind,
    check_same_level,
    check_value_type,
    element_type,
    shape_of,
)
from rlx_mlir.dialects.movement import INDEX_MAP_OPS, MOVEMENT_OPS
from rlx_mlir.dtypes import Kind

_FUNCTIONAL_FORMAT = FUNCTIONAL_FORMAT


# ---------------------------------------------------------------------------
# elementwise families
# ---------------------------------------------------------------------------


class ElementwiseOp(IRDLOperation, ABC):
    """Computes each output element from the broadcast-aligned input elements."""

    traits = traits_def(Pure())
    assembly_format = _FUNCTIONAL_FORMAT

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
    ALLOWED: ClassVar[frozenset[Kind]] = FLOATS
    input = operand_def()
    result = result_def()

    def __init__(self, input: SSAValue, result_type: Attribute | None = None) -> None:
        super().__init__(operands=[input], result_types=[result_type or input.type])

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        check_kind(self, operands[0], self.ALLOWED, "operand")
        if result != operands[0]:
            raise VerifyException(f"'{self.name}' result element type {result.name} must equal the operand's {operands[0].name}")


class BinaryOp(ElementwiseOp, ABC):
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
            raise VerifyException(f"'{self.name}' result element type {result.name} must equal the operands' {operands[0].name}")


class CompareOp(BinaryOp, ABC):
    ALLOWED: ClassVar[frozenset[Kind]] = ANY

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if operands[0] != operands[1]:
            raise VerifyException(
                f"'{self.name}' operand element types differ ({operands[0].name} vs {operands[1].name}); insert rlx.cast"
            )
        check_kind(self, operands[0], self.ALLOWED, "operands")
        if result.kind is not Kind.BOOL:
            raise VerifyException(f"'{self.name}' result must have element type i1, got {result.name}")


# Unary ops (the activation set of the reference runtime) and the element
# kinds each accepts: floats, plus complex and signed integers where they mean something.
UNARY_NAMES = (
    "relu gelu gelu_approx silu sigmoid tanh exp log sqrt rsqrt neg abs round sin cos tan "
    "atan recip floor ceil sign softplus elu erf hard_swish hard_sigmoid mish softsign log_sigmoid"
).split()
UNARY_KINDS: dict[str, frozenset[Kind]] = {name: FLOATS for name in UNARY_NAMES} | {
    "neg": FLOATS | {Kind.INT, Kind.COMPLEX},
    "abs": FLOATS | {Kind.INT},
    "sign": FLOATS | {Kind.INT},
    "exp": FLOATS | {Kind.COMPLEX},
    "log": FLOATS | {Kind.COMPLEX},
    "sqrt": FLOATS | {Kind.COMPLEX},
}

COMPARE_KINDS: dict[str, frozenset[Kind]] = {
    "eq": ANY, "ne": ANY, "lt": ORDERED, "le": ORDERED, "gt": ORDERED, "ge": ORDERED,
}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


def _generate(base: type[IRDLOperation], name: str, **class_vars: object) -> type[IRDLOperation]:
    doc = f"`rlx.{name}`: see {base.__name__} and the lowering table for its semantics."
    namespace = {"name": f"rlx.{name}", "__doc__": doc, **class_vars}
    namespace["__annotations__"] = {key: ClassVar[object] for key in class_vars}
    cls = type(_camel(name), (base,), namespace)
    return irdl_op_definition(cls)


UNARY_OPS: dict[str, type[UnaryOp]] = {n: _generate(UnaryOp, n, ALLOWED=k) for n, k in UNARY_KINDS.items()}  # type: ignore[misc]
BINARY_OPS: dict[str, type[BinaryOp]] = {
    n: _generate(BinaryOp, n, ALLOWED=k) for n, k in BINARY_KINDS.items()  # type: ignore[misc]
}
COMPARE_OPS: dict[str, type[CompareOp]] = {n: _generate(CompareOp, n, ALLOWED=k) for n, k in COMPARE_KINDS.items()}  # type: ignore[misc]


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
    i1 -> number is 0/1.
    """

    name = "rlx.cast"
    input = operand_def()
    result = result_def()

    def __init__(self, input: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type])

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

    def verify_dtypes(self, operands: list[dtypes.DType], result: dtypes.DType) -> None:
        if self.kind.data not in UNARY_NAMES:
            raise VerifyException(f"'{self.name}' kind \"{self.kind.data}\" is not a unary rlx op")
        super().verify_dtypes(operands, result)


ELEMENTWISE_OPS: tuple[type[ElementwiseOp], ...] = (
    *UNARY_OPS.values(), *BINARY_OPS.values(), *COMPARE_OPS.values(), WhereOp, FmaOp, CastOp,
    ReluBackwardOp, ActivationBackwardOp,
)


# ---------------------------------------------------------------------------
# shape ops
# ---------------------------------------------------------------------------


@irdl_op_definition
class ExpandOp(IRDLOperation):
    """`rlx.expand`: np.broadcast_to; the result type gives the shape."""

    name = "rlx.expand"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = _FUNCTIONAL_FORMAT

    def __init__(self, input: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type])

    def input_map(self) -> tuple[index_maps.Access, ...]:
        return index_maps.broadcast(shape_of(self.input.type), shape_of(self.result.type))

    def verify_(self) -> None:
        src = check_value_type(self, self.input.type, "operand")
        dst = check_value_type(self, self.result.type, "result")
        if src != dst:
            raise VerifyException(f"'{self.name}' result element type {dst.name} must equal the operand's {src.name}")
        src_shape, dst_shape = shape_of(self.input.type), shape_of(self.result.type)
        if not broadcasts_to(src_shape, dst_shape):
            raise VerifyException(f"'{self.name}' cannot broadcast shape {list(src_shape)} to {list(dst_shape)}")


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """`rlx.reshape`: same elements in row-major order, new static shape (a view)."""

    name = "rlx.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = _FUNCTIONAL_FORMAT

    def __init__(self, input: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        src = check_value_type(self, self.input.type, "operand")
        dst = check_value_type(self, self.result.type, "result")
        if src != dst:
            raise VerifyException(f"'{self.name}' result element type {dst.name} must equal the operand's {src.name}")
        a, b = numel(shape_of(self.input.type)), numel(shape_of(self.result.type))
        if a != b:
            raise VerifyException(f"'{self.name}' cannot reshape {a} elements into {b}")


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """`rlx.constant dense<[1.0, 2.0]> : tensor<2xf32>`: data placed once in the arena."""

    name = "rlx.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr) -> None:
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        check_value_type(self, self.result.type, "result")
        if self.value.type != self.result.type:
            raise VerifyException(f"'{self.name}' value type {self.value.type} must equal the result type {self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attrs = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error("rlx.constant expects a dense elements attribute, e.g. dense<1.0> : tensor<4xf32>")
        op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.value)


# ---------------------------------------------------------------------------
# the fused region
# ---------------------------------------------------------------------------


@irdl_op_definition
class ElementwiseRegionOp(IRDLOperation):
    """A fused elementwise loop nest, like `linalg.generic` with parallel iterators.

    The iteration space is the (common) shape of the results. Input `k` is read
    at `indexing_maps[k]` applied to the iteration index: a map result is an
    iteration dimension or the constant 0 (a broadcast axis). The body gets one
    scalar block argument per input and yields one scalar per result; it is
    written with scalar rlx ops.

    ```mlir
    %r = rlx.elementwise_region ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>)
           {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>]}
           -> tensor<4x3xf32> {
    ^bb0(%x: f32, %y: f32):
      %s = rlx.add %x, %y : (f32, f32) -> f32
      rlx.yield %s : f32
    }
    ```
    """

    name = "rlx.elementwise_region"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    body = region_def("single_block")
    traits = traits_def(Pure())

    def __init__(
        self, inputs: Sequence[SSAValue], maps: Sequence[AffineMap], result_types: Sequence[Attribute], body: Region
    ) -> None:
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps])},
            regions=[body],
        )

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return shape_of(self.outputs[0].type)

    @property
    def maps(self) -> list[AffineMap]:
        return [m.data for m in self.indexing_maps.data]

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException(f"'{self.name}' must have at least one result")
        space = self.iteration_shape
        for i, out in enumerate(self.outputs):
            check_value_type(self, out.type, f"result #{i}")
            if shape_of(out.type) != space:
                raise VerifyException(f"'{self.name}' results must share one shape (result #{i} is {list(shape_of(out.type))})")
        if len(self.maps) != len(self.inputs):
            raise VerifyException(f"'{self.name}' has {len(self.inputs)} inputs but {len(self.maps)} indexing maps")
        for i, (value, amap) in enumerate(zip(self.inputs, self.maps)):
            check_value_type(self, value.type, f"input #{i}")
            self._verify_map(i, amap, shape_of(value.type), space)
        block = self.body.block
        expected_args = [element_type(v.type) for v in self.inputs]
        if [a.type for a in block.args] != expected_args:
            raise VerifyException(f"'{self.name}' block arguments must be the input element types {_types(expected_args)}")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException(f"'{self.name}' body must end with rlx.yield")
        expected_yield = [element_type(r.type) for r in self.outputs]
        if [v.type for v in terminator.values] != expected_yield:
            raise VerifyException(f"'{self.name}' must yield the result element types {_types(expected_yield)}")
        for op in block.ops:
            if not isinstance(op, (*ELEMENTWISE_OPS, YieldOp)):
                raise VerifyException(f"'{self.name}' body may only hold scalar elementwise rlx ops, found '{op.name}'")
        own = set(block.args) | {r for op in block.ops for r in op.results}
        for op in block.ops:
            if any(v not in own for v in op.operands):
                raise VerifyException(f"'{self.name}' body op '{op.name}' uses a value defined outside the region")

    def _verify_map(self, i: int, amap: AffineMap, shape: tuple[int, ...], space: tuple[int, ...]) -> None:
        if amap.num_dims != len(space) or len(amap.results) != len(shape):
            raise VerifyException(
                f"'{self.name}' indexing map #{i} {amap} must map {len(space)} dims to {len(shape)} results"
            )
        try:
            reads = index_maps.accesses(amap)
        except ValueError as error:
            raise VerifyException(f"'{self.name}' indexing map #{i}: {error}") from None
        if 0 in space:
            return
        for axis, access in enumerate(reads):
            low, high = access.bounds(space)
            if low < 0 or high >= shape[axis]:
                raise VerifyException(
                    f"'{self.name}' indexing map #{i} reads axis {axis} (size {shape[axis]}) "
                    f"at indices {low}..{high}"
                )

    @classmethod
    def parse(cls, parser: Parser) -> ElementwiseRegionOp:
        parser.parse_keyword("ins")
        parser.parse_punctuation("(")
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        if len(types) != len(operands):
            parser.raise_error(f"expected {len(operands)} input types, got {len(types)}")
        inputs = [parser.resolve_operand(o, t) for o, t in zip(operands, types)]
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("(") is not None:
            result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
        else:
            result_types = [parser.parse_type()]
        body = parser.parse_region()
        maps_attr = attrs.pop("indexing_maps", None)
        if not isinstance(maps_attr, ArrayAttr):
            parser.raise_error("rlx.elementwise_region needs {indexing_maps = [...]}")
        op = cls.__new__(cls)
        IRDLOperation.__init__(
            op,
            operands=[inputs],
            result_types=[result_types],
            properties={"indexing_maps": maps_attr},
            regions=[body],
            attributes=attrs,
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ins(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes({"indexing_maps": self.indexing_maps, **self.attributes})
        printer.print_string(" -> ")
        if len(self.outputs) == 1:
            printer.print_attribute(self.outputs[0].type)
        else:
            printer.print_string("(")
            printer.print_list([r.type for r in self.outputs], printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates an `rlx.elementwise_region` body with one scalar per region result."""

    name = "rlx.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(ElementwiseRegionOp), Pure())
    assembly_format = "$values attr-dict (`:` type($values)^)?"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[list(values)])


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def make_region_block(input_types: Sequence[Attribute]) -> Block:
    return Block(arg_types=[element_type(t) for t in input_types])


def is_elementwise(op: Operation) -> bool:
    return isinstance(op, ELEMENTWISE_OPS)


def has_input_map(op: Operation) -> bool:
    """Each result element is one input element at an affine index: a copy
    kernel on its own, or just an index map when folded into a region."""
    return isinstance(op, (ExpandOp, *INDEX_MAP_OPS))


RLX = Dialect(
    "rlx",
    [
        *ELEMENTWISE_OPS,
        *MOVEMENT_OPS,
        ExpandOp,
        ReshapeOp,
        ConstantOp,
        ElementwiseRegionOp,
        YieldOp,
    ],
    [],
)

