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
indexing), `contraction` (matmul), `convolution` (conv), `attention` (fused attention), `reduction` (reduce_*, argmax/argmin,
softmax/log_softmax). This module holds the shape ops every family meets (`expand`,
`reshape`, `constant`) and assembles the `Dialect`.
"""

from __future__ import annotations

from typing import TypeAlias, TypeGuard

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.irdl import IRDLOperation, base, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.printer import Printer
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import index_maps
from rlx_mlir.broadcast import broadcasts_to, numel
from rlx_mlir.dialects.attention import ATTENTION_OPS
from rlx_mlir.dialects.common import FUNCTIONAL_FORMAT, ArenaConstant, check_value_type, element_type, shape_of
from rlx_mlir.dialects.contraction import CONTRACTION_OPS
from rlx_mlir.dialects.convolution import CONVOLUTION_OPS
from rlx_mlir.dialects.elementwise import ELEMENTWISE_OPS
from rlx_mlir.dialects.elision import print_constant
from rlx_mlir.dialects.movement import INDEX_MAP_OPS, MOVEMENT_OPS, IndexMapOp
from rlx_mlir.dialects.recurrent import RECURRENT_OPS
from rlx_mlir.dialects.reduction import REDUCTION_OPS
from rlx_mlir.dialects.region import REGION_OPS, YieldOp
from rlx_mlir.dialects.resources import ConstantValue, ResourceElementsAttr, constant_values
from rlx_mlir.dialects.scan import SCAN_OPS
from rlx_mlir.dialects.splat import parse_splat


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


class _SplatCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (SplatToExpand(),)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """`rlx.constant dense<[1.0, 2.0]> : tensor<2xf32>`: read-only data, outside the arena.

    A large one (a model's weights) is a resource, `rlx.constant
    dense_resource<w> : tensor<768x768xf32>`, whose bytes stay binary and are
    not copied (`dialects/resources.py`). Whatever reads the values reads them
    through `values()`, which knows both forms.

    A splat (`dense<1.0> : tensor<1000000000xf32>`) keeps its one value: the
    property holds a rank-0 attribute and the result type gives the shape, so
    no splat is ever expanded in memory, and `canonicalize` turns it into a
    rank-0 constant and an `rlx.expand`, which fusion folds into its users'
    index maps."""

    name = "rlx.constant"
    value = prop_def(base(DenseIntOrFPElementsAttr) | base(ResourceElementsAttr))
    result = result_def(TensorType)
    traits = traits_def(Pure(), ArenaConstant(), _SplatCanonicalization())

    def __init__(self, value: ConstantValue | DenseResourceAttr, result_type: Attribute | None = None) -> None:
        # an unbound DenseResourceAttr only while parsing: `RlxParser` binds it to its blob
        super().__init__(properties={"value": value}, result_types=[result_type or value.type])

    def values(self) -> np.ndarray:
        """The value as a read-only array of the value's shape (rank 0 for a splat), not copied."""
        return constant_values(self.value)

    @property
    def is_splat(self) -> bool:
        """One value for a result of another element count."""
        return shape_of(self.value.type) == () and self.value.type != self.result.type

    def verify_(self) -> None:
        check_value_type(self, self.result.type, "result")
        if self.is_splat:
            if element_type(self.value.type) != element_type(self.result.type):
                raise VerifyException(
                    f"'{self.name}' splat value type {self.value.type} must have the result's element type"
                )
        elif self.value.type != self.result.type:
            expected = self.result.type
            raise VerifyException(f"'{self.name}' value type {self.value.type} must equal the result type {expected}")

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attrs = parser.parse_optional_attr_dict()
        splat = parse_splat(parser)
        if splat is not None:
            op = cls(splat.value, splat.type)
        else:
            start = parser.pos
            try:
                value = parser.parse_attribute()
            except (OverflowError, ValueError) as error:  # xDSL packing a value its type cannot hold
                parser.raise_error(f"a value of the dense literal does not fit its element type ({error})", start)
            if not isinstance(value, (DenseIntOrFPElementsAttr, DenseResourceAttr)):
                parser.raise_error(
                    "rlx.constant expects a dense elements attribute or a resource, "
                    "e.g. dense<1.0> : tensor<4xf32> or dense_resource<w> : tensor<4xf32>"
                )
            op = cls(value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        print_constant(printer, self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


def stored_weight(value: SSAValue) -> ConstantOp | None:
    """The constant holding every element of `value` (a model's weight), or None: a value
    computed at run time, or a splat (one element for all). The weight-layout passes
    store such a constant as their kernels read it, and autotune measures its ops so."""
    owner = value.owner
    return owner if isinstance(owner, ConstantOp) and not owner.is_splat else None


class SplatToExpand(RewritePattern):
    """A splat constant becomes its one value and an `rlx.expand` of it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConstantOp, rewriter: PatternRewriter) -> None:
        if not op.is_splat:
            return
        scalar = ConstantOp(op.value)
        rewriter.replace(op, [scalar, ExpandOp(scalar.result, op.result.type)])


InputMapOp: TypeAlias = ExpandOp | IndexMapOp
"""The ops with an `input_map`: each has one `input` and one `result`."""


def has_input_map(op: Operation | Block) -> TypeGuard[InputMapOp]:
    """Each result element is one input element at an affine index: a copy
    kernel on its own, or just an index map when folded into a region."""
    return isinstance(op, (ExpandOp, *INDEX_MAP_OPS))


RLX = Dialect(
    "rlx",
    [
        *ELEMENTWISE_OPS,
        *MOVEMENT_OPS,
        *CONTRACTION_OPS,
        *CONVOLUTION_OPS,
        *ATTENTION_OPS,
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
