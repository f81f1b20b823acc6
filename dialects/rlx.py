"""The `rlx` dialect: the op set of the RLX runtime on builtin tensors.

```mlir
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
```

One module per op family: `elementwise` (unary, binary, compare, where,
fma, cast, gradients), `region` (the fused elementwise and reduction
regions), `movement` (layout and
indexing), `contraction` (matmul), `reduction` (reduce_*, argmax/argmin,
softmax/log_softmax). This module holds the shape ops every family meets (`expand`,
`reshape`, `constant`) and assembles the `Dialect`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import index_maps
from rlx_mlir.broadcast import broadcasts_to, numel
from rlx_mlir.dialects.common import FUNCTIONAL_FORMAT, check_value_type, shape_of
from rlx_mlir.dialects.contraction import CONTRACTION_OPS
from rlx_mlir.dialects.elementwise import ELEMENTWISE_OPS
from rlx_mlir.dialects.movement import INDEX_MAP_OPS, MOVEMENT_OPS
from rlx_mlir.dialects.recurrent import RECURRENT_OPS
from rlx_mlir.dialects.reduction import REDUCTION_OPS
from rlx_mlir.dialects.region import REGION_OPS, YieldOp
from rlx_mlir.dialects.scan import SCAN_OPS


@irdl_op_definition
class ExpandOp(IRDLOperation):
    """`rlx.expand`: np.broadcast_to; the result type gives the shape."""

    name = "rlx.expand"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = FUNCTIONAL_FORMAT

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
    assembly_format = FUNCTIONAL_FORMAT

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


def has_input_map(op: Operation) -> bool:
    """Each result element is one input element at an affine index: a copy
    kernel on its own, or just an index map when folded into a region."""
    return isinstance(op, (ExpandOp, *INDEX_MAP_OPS))


RLX = Dialect(
    "rlx",
    [
        *ELEMENTWISE_OPS,
        *MOVEMENT_OPS,
        *CONTRACTION_OPS,
        *REDUCTION_OPS,
        *RECURRENT_OPS,
        *SCAN_OPS,
        ExpandOp,
        ReshapeOp,
        ConstantOp,
        *REGION_OPS,
        YieldOp,
    ],
    [],
)
