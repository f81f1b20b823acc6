"""The fused regions of the `rlx` dialect, modelled on `linalg.generic`.

A region op reads its inputs through one affine index map each (`offset +
scale * d` per axis: broadcasts, transposes, slices and reversals folded in)
over an iteration space, and computes each point with a body of scalar
elementwise rlx ops (`dialects/elementwise.py`), isolated from above and ended by
`rlx.yield`:

- `rlx.elementwise_region`: every iteration dimension is parallel; the body
  yields one scalar per result, stored at the point.
- `rlx.reduction_region`: `iterator_types` marks each dimension parallel or
  reduction; the body yields the value to reduce (its prologue) and the
  results are the parallel dimensions, combined as the named reduction
  (`reduce_sum`, ...) does.
- `rlx.contraction_region`: a matmul whose body is the epilogue applied to
  each element of the product.
- `rlx.normalize_region`: softmax / log_softmax along one axis, between a
  prologue body and an epilogue body.
- `rlx.standardize_region`: layer norm / RMS norm along the last axis, between
  a prologue body and an epilogue body.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes, index_maps
from rlx_mlir.broadcast import row_major_strides
from rlx_mlir.dialects.common import (
    NeedsScratch,
    array_values,
    bool_attr,
    check_same_level,
    check_value_type,
    element_type,
    i64_array,
    i64_attr,
    normalize_axis,
    shape_of,
)
from rlx_mlir.dialects.contraction import Product, matmul_shape
from rlx_mlir.dialects.convolution import ConvolutionOp, ConvOp, window_properties
from rlx_mlir.dialects.elementwise import ELEMENTWISE_OPS, is_elementwise
from rlx_mlir.dialects.reduction import (
    NORMALIZE_OPS,
    REDUCE_OPS,
    NormalizeOp,
    ReduceOp,
    Split,
    full_reduction_split,
    partials_bytes,
)
from rlx_mlir.dtypes import Kind


class BodyOp(IRDLOperation, ABC):
    """An op whose single-block body ends with `rlx.yield`: the fused regions
    (scalar bodies) and `rlx.scan` (a tensor-level body)."""

    name = "rlx.*_region or rlx.scan"  # how `rlx.yield`'s parent rule names its parents


class ScalarBodyRegionOp(BodyOp, ABC):
    """What both region ops share: inputs read through index maps over an
    iteration space, and a scalar body yielding one value per result."""

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove())

    @property
    @abstractmethod
    def iteration_shape(self) -> tuple[int, ...]:
        """The extents of the iteration dimensions d0, d1, ..."""

    @property
    def maps(self) -> list[AffineMap]:
        return [m.data for m in self.indexing_maps.data]

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException(f"'{self.name}' must have at least one result")
        self.verify_results()
        space = self.iteration_shape
        mapped = self.mapped_inputs
        if len(self.maps) != len(mapped):
            raise VerifyException(f"'{self.name}' has {len(mapped)} inputs but {len(self.maps)} indexing maps")
        for i, (value, amap) in enumerate(zip(mapped, self.maps)):
            check_value_type(self, value.type, f"input #{i}")
            self._verify_map(i, amap, shape_of(value.type), space)
        block = self.body.block
        expected_args = self.argument_types()
        if [a.type for a in block.args] != expected_args:
            raise VerifyException(
                f"'{self.name}' block arguments must be the input element types {_types(expected_args)}"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException(f"'{self.name}' body must end with rlx.yield")
        expected_yield = [element_type(r.type) for r in self.outputs]
        if [v.type for v in terminator.values] != expected_yield:
            raise VerifyException(f"'{self.name}' must yield the result element types {_types(expected_yield)}")
        for op in block.ops:
            if not isinstance(op, (*ELEMENTWISE_OPS, YieldOp)):
                raise VerifyException(f"'{self.name}' body may only hold scalar elementwise rlx ops, found '{op.name}'")

    def verify_results(self) -> None:
        """The results' types against the iteration space."""

    @property
    def mapped_inputs(self) -> Sequence[SSAValue]:
        """The inputs read through `indexing_maps`, in order."""
        return self.inputs

    def reads_through(self, amap: AffineMap, value: SSAValue) -> bool:
        """Whether this op can read `value` through `amap` (canonicalize-broadcast
        asks before it folds an index-map op into an input)."""
        return True

    def argument_types(self) -> list[Attribute]:
        """The body's block argument types."""
        return [element_type(v.type) for v in self.inputs]

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
                    f"'{self.name}' indexing map #{i} reads axis {axis} (size {shape[axis]}) at indices {low}..{high}"
                )

    @classmethod
    def parse(cls, parser: Parser) -> ScalarBodyRegionOp:
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
        regions = cls.parse_regions(parser)
        properties = {name: attrs.pop(name) for name in cls.PROPERTIES if name in attrs}
        if not isinstance(properties.get("indexing_maps"), ArrayAttr):
            parser.raise_error(f"{cls.name} needs {{indexing_maps = [...]}}")
        op = cls.__new__(cls)
        IRDLOperation.__init__(
            op,
            operands=[inputs],
            result_types=[result_types],
            properties=properties,
            regions=regions,
            attributes=attrs,
        )
        return op

    @classmethod
    def parse_regions(cls, parser: Parser) -> list[Region]:
        return [parser.parse_region()]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ins(")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.inputs], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(
            {**{n: self.properties[n] for n in self.PROPERTIES if n in self.properties}, **self.attributes}
        )
        printer.print_string(" -> ")
        if len(self.outputs) == 1:
            printer.print_attribute(self.outputs[0].type)
        else:
            printer.print_string("(")
            printer.print_list([r.type for r in self.outputs], printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)
        self.print_more_regions(printer)

    def print_more_regions(self, printer: Printer) -> None: ...

    PROPERTIES: ClassVar[tuple[str, ...]] = ("indexing_maps",)
    """The properties the custom syntax writes in the attribute dictionary."""


@irdl_op_definition
class ElementwiseRegionOp(ScalarBodyRegionOp):
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

    def __init__(
        self, inputs: Sequence[SSAValue], maps: Sequence[AffineMap], result_types: Sequence[Attribute], body: Region
    ) -> None:
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps])},
            regions=[body],
        )

    @classmethod
    def outline(cls, ops: Sequence[Operation]) -> tuple[ElementwiseRegionOp, list[SSAValue]]:
        """Build (not insert) the region computing `ops`, which share one result shape.

        Returns the region and the values of `ops` it yields, in order: those
        used by anything outside `ops` (or the last result, if nothing is).
        """
        members = set(ops)
        space = shape_of(ops[-1].results[0].type)
        inputs: list[SSAValue] = []
        for op in ops:
            for operand in op.operands:
                if operand.owner not in members and operand not in inputs:
                    inputs.append(operand)
        outputs: list[SSAValue] = [
            r for op in ops for r in op.results if any(u.operation not in members for u in r.uses)
        ]
        if not outputs:
            outputs = [ops[-1].results[0]]

        block = make_region_block([v.type for v in inputs])
        scalar: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
        for op in ops:
            clone = op.create(
                operands=[scalar[v] for v in op.operands],
                result_types=[element_type(r.type) for r in op.results],
                properties=dict(op.properties),
                attributes=dict(op.attributes),
            )
            block.add_op(clone)
            for old, new in zip(op.results, clone.results):
                scalar[old] = new
                new.name_hint = old.name_hint
        block.add_op(YieldOp(*(scalar[v] for v in outputs)))

        maps = [index_maps.to_affine(len(space), index_maps.broadcast(shape_of(v.type), space)) for v in inputs]
        region_op = cls(inputs, maps, [v.type for v in outputs], Region([block]))
        for value, output in zip(outputs, region_op.outputs):
            output.name_hint = value.name_hint
        return region_op, outputs

    @classmethod
    @contextmanager
    def covering(cls, op: Operation) -> Iterator[ElementwiseRegionOp | None]:
        """`op` as a region for the `with` block: itself if it is one, an outlined
        stand-in for a lone tensor-level elementwise op, else None. The stand-in is
        never inserted and holds uses of the op's inputs, so it is erased on exit:
        build the fused op inside the block and rewrite the IR after it."""
        if isinstance(op, cls):
            yield op
        elif is_elementwise(op) and check_same_level(op):
            stand_in = cls.outline([op])[0]
            try:
                yield stand_in
            finally:
                stand_in.erase(safe_erase=False)
        else:
            yield None

    @classmethod
    def replace(cls, ops: Sequence[Operation], anchor: Operation) -> ElementwiseRegionOp:
        """Outline `ops` into a region inserted before `anchor`; rewire their outside uses."""
        region_op, outputs = cls.outline(ops)
        Rewriter.insert_op(region_op, InsertPoint.before(anchor))
        for old, new in zip(outputs, region_op.outputs):
            old.replace_all_uses_with(new)
        for op in reversed(ops):
            op.detach()
            op.erase(safe_erase=False)
        return region_op

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return shape_of(self.outputs[0].type)

    def verify_results(self) -> None:
        space = self.iteration_shape
        for i, out in enumerate(self.outputs):
            check_value_type(self, out.type, f"result #{i}")
            if shape_of(out.type) != space:
                raise VerifyException(
                    f"'{self.name}' results must share one shape (result #{i} is {list(shape_of(out.type))})"
                )


ITERATOR_TYPES = ("parallel", "reduction")


@irdl_op_definition
class ReductionRegionOp(ScalarBodyRegionOp, NeedsScratch):
    """A fused reduction, like `linalg.generic` with parallel and reduction iterators.

    `iteration_shape` gives the extents of d0, d1, ... and `iterator_types`
    whether each is parallel or reduced (explicit, because folded slices make
    extents impossible to infer from the inputs). The body computes the value
    to reduce at each point (an elementwise prologue, never materialized); the
    single result holds, at each point of the parallel dimensions in order,
    the values combined as `reduction` (a reduce op's name: `reduce_sum`,
    `reduce_mean`, `reduce_prod`, `reduce_max`, `reduce_min`) does; its shape
    is the parallel extents, or the iteration shape with the reduced extents
    replaced by 1 (the same elements in the same order, as `keepdims`). A
    large reduction to one value has the scratch of the reduce op's partials
    (`dialects.reduction.full_reduction_split`).

    ```mlir
    %s = rlx.reduction_region ins(%x : tensor<64x128xf32>)
           {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iteration_shape = array<i64: 64, 128>,
            iterator_types = ["parallel", "reduction"], reduction = "reduce_sum"} -> tensor<64xf32> {
    ^bb0(%a: f32):
      %m = rlx.mul %a, %a : (f32, f32) -> f32
      rlx.yield %m : f32
    }
    ```
    """

    name = "rlx.reduction_region"
    iteration_shape_attr = prop_def(DenseArrayBase, prop_name="iteration_shape")
    iterator_types = prop_def(ArrayAttr[StringAttr])
    reduction = prop_def(StringAttr)
    PROPERTIES: ClassVar[tuple[str, ...]] = ("indexing_maps", "iteration_shape", "iterator_types", "reduction")

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        iteration_shape: Sequence[int],
        reduced: Sequence[int],
        reduction: type[ReduceOp],
        result_type: Attribute,
        body: Region,
    ) -> None:
        kinds = [StringAttr("reduction" if d in reduced else "parallel") for d in range(len(iteration_shape))]
        properties = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            "iteration_shape": i64_array(iteration_shape),
            "iterator_types": ArrayAttr(kinds),
            "reduction": StringAttr(reduction.name.removeprefix("rlx.")),
        }
        super().__init__(operands=[list(inputs)], result_types=[[result_type]], properties=properties, regions=[body])

    @classmethod
    def of(cls, reduce: ReduceOp, prologue: ElementwiseRegionOp | None = None) -> ReductionRegionOp:
        """The region computing `reduce`: of `prologue`'s single result, which
        feeds it, or (without one) of the reduce op's input as it is."""
        space = shape_of(reduce.input.type)
        if prologue is None:
            block = make_region_block([reduce.input.type])
            block.add_op(YieldOp(block.args[0]))
            inputs, maps, body = [reduce.input], [AffineMap.identity(len(space))], Region([block])
        else:
            inputs, maps, body = list(prologue.inputs), prologue.maps, prologue.body.clone()
        return cls(inputs, maps, space, reduce.reduced_axes(), type(reduce), reduce.result.type, body)

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return array_values(self, "iteration_shape", self.iteration_shape_attr)

    @property
    def reduced_dims(self) -> tuple[int, ...]:
        return tuple(d for d, kind in enumerate(self.iterator_types.data) if kind.data == "reduction")

    @property
    def split(self) -> Split | None:
        """How the reduction is cut into parts, if it is a large one to one value."""
        return full_reduction_split(self.iteration_shape, self.reduced_dims)

    def scratch_bytes(self) -> tuple[int, ...]:
        return partials_bytes(self.split, element_type(self.outputs[0].type))

    @property
    def combine(self) -> type[ReduceOp]:
        """The reduce op whose combination (and identity, and final scaling) this region applies."""
        return REDUCTIONS_BY_NAME[self.reduction.data]

    def verify_results(self) -> None:
        space = self.iteration_shape
        kinds = [k.data for k in self.iterator_types.data]
        if len(kinds) != len(space) or any(k not in ITERATOR_TYPES for k in kinds):
            raise VerifyException(
                f"'{self.name}' iterator_types must give 'parallel' or 'reduction' for each of the {len(space)} dims"
            )
        if any(n < 0 for n in space):
            raise VerifyException(f"'{self.name}' iteration_shape {list(space)} has a negative extent")
        if self.reduction.data not in REDUCTIONS_BY_NAME:
            raise VerifyException(
                f"'{self.name}' reduction \"{self.reduction.data}\" is not one of {', '.join(REDUCTIONS_BY_NAME)}"
            )
        if len(self.outputs) != 1:
            raise VerifyException(f"'{self.name}' has one result")
        check_value_type(self, self.outputs[0].type, "result")
        parallel = [n for n, k in zip(space, kinds) if k == "parallel"]
        kept = [n if k == "parallel" else 1 for n, k in zip(space, kinds)]
        if list(shape_of(self.outputs[0].type)) not in (parallel, kept):
            raise VerifyException(
                f"'{self.name}' result shape {list(shape_of(self.outputs[0].type))} must be the parallel extents "
                f"{parallel} (or {kept}, keeping the reduced dims)"
            )


@irdl_op_definition
class ContractionRegionOp(ScalarBodyRegionOp, Product):
    """A matmul and its elementwise epilogue, computed block by block.

    The first two inputs are the matmul's lhs and rhs (with `transpose_lhs`,
    `transpose_rhs` as on `rlx.matmul`); the others are the epilogue's, read
    through `indexing_maps` over the matmul's result. The body gets the
    product's element first, then one element per epilogue input, and yields
    the result element, so bias, activation and residual are applied to each
    block of the product while it is in cache, never as passes of their own.

    ```mlir
    %y = rlx.contraction_region ins(%x, %w, %b : tensor<64x32xf32>, tensor<32x16xf32>, tensor<16xf32>)
           {indexing_maps = [affine_map<(d0, d1) -> (d1)>], transpose_lhs = false, transpose_rhs = false}
           -> tensor<64x16xf32> {
    ^bb0(%acc: f32, %bias: f32):
      %s = rlx.add %acc, %bias : (f32, f32) -> f32
      %g = rlx.gelu %s : (f32) -> f32
      rlx.yield %g : f32
    }
    ```
    """

    name = "rlx.contraction_region"
    PROPERTIES: ClassVar[tuple[str, ...]] = ("indexing_maps", "transpose_lhs", "transpose_rhs", "rhs_panels")

    def __init__(
        self,
        product: tuple[SSAValue, SSAValue, tuple[bool, bool]],
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        result_type: Attribute,
        body: Region,
    ) -> None:
        """`product` is (lhs, rhs, (transpose_lhs, transpose_rhs)), as `rlx.matmul` has them."""
        lhs, rhs, (transpose_lhs, transpose_rhs) = product
        properties = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            "transpose_lhs": bool_attr(transpose_lhs),
            "transpose_rhs": bool_attr(transpose_rhs),
        }
        operands = [[lhs, rhs, *inputs]]
        super().__init__(operands=operands, result_types=[[result_type]], properties=properties, regions=[body])

    @property
    def lhs(self) -> SSAValue:
        return self.inputs[0]

    @property
    def rhs(self) -> SSAValue:
        return self.inputs[1]

    @property
    def result(self) -> SSAValue:
        return self.outputs[0]

    @property
    def mapped_inputs(self) -> Sequence[SSAValue]:
        return self.inputs[2:]

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return shape_of(self.outputs[0].type)

    def argument_types(self) -> list[Attribute]:
        return [element_type(self.lhs.type), *(element_type(v.type) for v in self.mapped_inputs)]

    def verify_results(self) -> None:
        if len(self.outputs) != 1 or len(self.inputs) < 2:
            raise VerifyException(f"'{self.name}' takes lhs, rhs and epilogue inputs and has one result")
        check_value_type(self, self.outputs[0].type, "result")
        if element_type(self.lhs.type) != element_type(self.rhs.type):
            raise VerifyException(f"'{self.name}' lhs and rhs must share an element type")
        self.check_panels(dtypes.from_ir(element_type(self.lhs.type)).name)
        try:
            product = matmul_shape(shape_of(self.lhs.type), self.rhs_shape, *self.transposes)
        except ValueError as error:
            raise VerifyException(f"'{self.name}' {error}") from None
        if shape_of(self.outputs[0].type) != product:
            raise VerifyException(
                f"'{self.name}' result shape {list(shape_of(self.outputs[0].type))} "
                f"must be the product's {list(product)}"
            )


@irdl_op_definition
class ConvRegionOp(ScalarBodyRegionOp, ConvolutionOp):
    """A convolution and its elementwise epilogue, computed unit by unit.

    The first two inputs are the conv's input and weight (geometry as on
    `rlx.conv`, which has no bias here: `fuse-epilogues` moves it into the
    body); the others are the epilogue's, read through `indexing_maps` over the
    conv's result. The body gets the conv's element first, then one element per
    epilogue input, and yields the result element: each unit of the kernel
    (an output plane of the direct form, a GEMM block of the im2col form)
    finishes its part of the output while it is in cache. An epilogue input
    reads the spatial axes either all broadcast (a per-channel bias) or all as
    the result does (a residual), so that its reads advance with the output's.

    ```mlir
    %y = rlx.conv_region ins(%x, %w, %b : tensor<1x8x6x6xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>)
           {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>], strides = array<i64: 1, 1>,
            dilations = array<i64: 1, 1>, pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>,
            groups = 1 : i64} -> tensor<1x16x6x6xf32> {
    ^bb0(%acc: f32, %bias: f32):
      %s = rlx.add %acc, %bias : (f32, f32) -> f32
      %r = rlx.relu %s : (f32) -> f32
      rlx.yield %r : f32
    }
    ```
    """

    name = "rlx.conv_region"
    PROPERTIES: ClassVar[tuple[str, ...]] = (
        "indexing_maps",
        "strides",
        "dilations",
        "pad_before",
        "pad_after",
        "groups",
        "weight_lanes",
        "winograd",
    )

    def __init__(
        self, conv: ConvOp, inputs: Sequence[SSAValue], maps: Sequence[AffineMap], result_type: Attribute, body: Region
    ) -> None:
        properties = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            **window_properties(conv.geometry),
            "groups": conv.groups,
            **({} if conv.weight_lanes is None else {"weight_lanes": conv.weight_lanes}),
            **({} if conv.winograd is None else {"winograd": conv.winograd}),
        }
        operands = [[conv.input, conv.weight, *inputs]]
        super().__init__(operands=operands, result_types=[[result_type]], properties=properties, regions=[body])

    @property
    def input(self) -> SSAValue:
        return self.inputs[0]

    @property
    def weight(self) -> SSAValue:
        return self.inputs[1]

    @property
    def result(self) -> SSAValue:
        return self.outputs[0]

    @property
    def mapped_inputs(self) -> Sequence[SSAValue]:
        return self.inputs[2:]

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return shape_of(self.outputs[0].type)

    def argument_types(self) -> list[Attribute]:
        return [element_type(self.input.type), *(element_type(v.type) for v in self.mapped_inputs)]

    def reads_through(self, amap: AffineMap, value: SSAValue) -> bool:
        """Only maps its kernels walk with the output (see the class doc): a transpose
        across the spatial axes stays a copy of its own."""
        return epilogue_reads_planes(amap, shape_of(value.type), self.iteration_shape)

    def verify_results(self) -> None:
        if len(self.outputs) != 1 or len(self.inputs) < 2:
            raise VerifyException(f"'{self.name}' takes input, weight and epilogue inputs and has one result")
        check_value_type(self, self.outputs[0].type, "result")
        self.verify_convolution()
        result = shape_of(self.result.type)
        for i, (value, amap) in enumerate(zip(self.mapped_inputs, self.maps)):
            if not epilogue_reads_planes(amap, shape_of(value.type), result):
                raise VerifyException(
                    f"'{self.name}' indexing map #{i} {amap} must read the spatial axes all broadcast "
                    "or all as the result does"
                )


def epilogue_reads_planes(amap: AffineMap, shape: Sequence[int], result: Sequence[int]) -> bool:
    """Whether an input of `shape` read through `amap` over a conv's `result` advances
    over the spatial axes not at all or exactly as the result does (one element per
    output position), so that a kernel walking a plane's positions walks it alike."""
    if amap.num_dims != len(result) or len(amap.results) != len(shape):
        return True  # the map's own rule reports it
    try:
        reads = index_maps.accesses(amap)
    except ValueError:
        return True
    strides = [0] * len(result)
    own = row_major_strides(tuple(shape))
    for axis, access in enumerate(reads):
        if access.dim is not None:
            strides[access.dim] += access.scale * own[axis]
    spatial = tuple(strides[2:])
    return not any(spatial) or spatial == row_major_strides(tuple(result[2:]))


class RowRegionOp(ScalarBodyRegionOp, ABC):
    """What the two regions that normalize along one axis share: a prologue
    `body` computing the value to normalize at each point from the first
    inputs, and an `epilogue` that gets the normalized value first, then one
    element per remaining input, and yields the result element. Each kernel
    walks a row of the axis several times while it is in cache, so the chains
    before and after never reach memory."""

    axis = prop_def(IntegerAttr[I64])
    body = region_def("single_block")  # redeclared so that it precedes `epilogue` (IRDL orders subclass fields first)
    epilogue = region_def("single_block")

    @abstractmethod
    def rebuilt(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        result_type: Attribute,
        body: Region,
        epilogue: Region,
    ) -> RowRegionOp:
        """This op's kind and properties over other inputs and bodies."""

    def with_epilogue(self, consumer: ElementwiseRegionOp, position: int) -> RowRegionOp:
        """This region followed by `consumer`, whose input #`position` is this
        region's result (read at the point itself): the consumer's body becomes
        the epilogue, after the current one."""
        others = [v for k, v in enumerate(consumer.inputs) if k != position]
        other_maps = [m for k, m in enumerate(consumer.maps) if k != position]
        block = make_region_block([v.type for v in (self.outputs[0], *self.epilogue_inputs, *others)])
        own = self.epilogue.block
        values: dict[SSAValue, SSAValue] = dict(zip(own.args, block.args[: len(own.args)]))
        normalized = _inline_body(own, values, block)
        theirs = consumer.body.block
        rest = iter(block.args[len(own.args) :])
        values = {arg: normalized if k == position else next(rest) for k, arg in enumerate(theirs.args)}
        block.add_op(YieldOp(_inline_body(theirs, values, block)))
        return self.rebuilt(
            [*self.inputs, *others],
            [*self.maps, *other_maps],
            consumer.outputs[0].type,
            self.body.clone(),
            Region([block]),
        )

    def with_prologue(self, producer: ElementwiseRegionOp) -> RowRegionOp:
        """This region (with the identity prologue) computing on `producer`'s single
        result: the producer's inputs and body become the prologue."""
        epilogue_maps = self.maps[self.prologue_count :]
        return self.rebuilt(
            [*producer.inputs, *self.epilogue_inputs],
            [*producer.maps, *epilogue_maps],
            self.outputs[0].type,
            producer.body.clone(),
            self.epilogue.clone(),
        )

    def reads_through(self, amap: AffineMap, value: SSAValue) -> bool:
        """Only at the point itself or from a rank-0 scalar (see the class doc)."""
        return _pointwise(amap, value, self.iteration_shape)

    @property
    def prologue_count(self) -> int:
        """How many inputs the prologue reads (the epilogue reads the rest)."""
        return len(self.inputs) - (len(self.epilogue.block.args) - 1)

    @property
    def prologue_inputs(self) -> Sequence[SSAValue]:
        return self.inputs[: self.prologue_count]

    @property
    def epilogue_inputs(self) -> Sequence[SSAValue]:
        return self.inputs[self.prologue_count :]

    @property
    def iteration_shape(self) -> tuple[int, ...]:
        return shape_of(self.outputs[0].type)

    def argument_types(self) -> list[Attribute]:
        return [element_type(v.type) for v in self.prologue_inputs]

    def verify_results(self) -> None:
        if len(self.outputs) != 1:
            raise VerifyException(f"'{self.name}' has one result")
        dtype = check_value_type(self, self.outputs[0].type, "result")
        if dtype.kind is not Kind.FLOAT:
            raise VerifyException(f"'{self.name}' result must be a float tensor, got {dtype.name}")
        self.verify_kind()
        space = self.iteration_shape
        normalize_axis(self, self.axis.value.data, len(space))
        if not 1 <= len(self.epilogue.block.args) <= len(self.inputs) + 1:
            raise VerifyException(
                f"'{self.name}' epilogue takes the normalized value and some of the {len(self.inputs)} inputs"
            )
        for i, (value, amap) in enumerate(zip(self.inputs, self.maps)):
            if not self.reads_through(amap, value):
                raise VerifyException(f"'{self.name}' input #{i} must be read {self.READS.format(space=list(space))}")
        self._verify_epilogue()

    def verify_kind(self) -> None:
        """The rules of this kind of normalization."""

    READS: ClassVar[str] = "at the point itself (identity map over {space}) or be a rank-0 scalar"
    """How `reads_through` lets an input be read, for its diagnostic."""

    def _verify_epilogue(self) -> None:
        block = self.epilogue.block
        result = element_type(self.outputs[0].type)
        expected = [result, *(element_type(v.type) for v in self.epilogue_inputs)]
        if [a.type for a in block.args] != expected:
            raise VerifyException(
                f"'{self.name}' epilogue arguments must be the result element type, then the epilogue "
                f"inputs' element types {_types(expected)}"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or [v.type for v in terminator.values] != [result]:
            raise VerifyException(f"'{self.name}' epilogue must end with rlx.yield of one {result}")
        for op in block.ops:
            if not isinstance(op, (*ELEMENTWISE_OPS, YieldOp)):
                raise VerifyException(
                    f"'{self.name}' epilogue may only hold scalar elementwise rlx ops, found '{op.name}'"
                )

    @classmethod
    def parse_regions(cls, parser: Parser) -> list[Region]:
        body = parser.parse_region()
        parser.parse_keyword("epilogue")
        return [body, parser.parse_region()]

    def print_more_regions(self, printer: Printer) -> None:
        printer.print_string(" epilogue ")
        printer.print_region(self.epilogue, print_entry_block_args=True)


@irdl_op_definition
class NormalizeRegionOp(RowRegionOp):
    """softmax / log_softmax with an elementwise prologue and epilogue, in one kernel.

    `body` (the prologue) computes the value to normalize at each point from
    the first inputs; the values are normalized along `axis` as
    `normalization` (`softmax` or `log_softmax`) does; `epilogue` gets the
    normalized value first, then one element per remaining input, and yields
    the result element. Every input is read at the point itself (an identity
    map over the result's shape) or is a rank-0 scalar: the kernel walks
    softmax's row layout, where those are the reads that cost nothing, and the
    chain before and after the softmax never reaches memory.

    ```mlir
    %p = rlx.normalize_region ins(%x, %s, %r : tensor<64x128xf32>, tensor<f32>, tensor<64x128xf32>)
           {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>,
                             affine_map<(d0, d1) -> (d0, d1)>], axis = 1 : i64, normalization = "softmax"}
           -> tensor<64x128xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = rlx.mul %a, %b : (f32, f32) -> f32
      rlx.yield %m : f32
    } epilogue {
    ^bb0(%p: f32, %q: f32):
      %t = rlx.mul %p, %q : (f32, f32) -> f32
      rlx.yield %t : f32
    }
    ```
    """

    name = "rlx.normalize_region"
    normalization = prop_def(StringAttr)
    PROPERTIES: ClassVar[tuple[str, ...]] = ("indexing_maps", "axis", "normalization")

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        axis: int,
        normalization: type[NormalizeOp],
        result_type: Attribute,
        body: Region,
        epilogue: Region,
    ) -> None:
        properties = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            "axis": i64_attr(axis),
            "normalization": StringAttr(normalization.name.removeprefix("rlx.")),
        }
        super().__init__(
            operands=[list(inputs)], result_types=[[result_type]], properties=properties, regions=[body, epilogue]
        )

    @classmethod
    def of(cls, op: NormalizeOp, prologue: ElementwiseRegionOp | None = None) -> NormalizeRegionOp:
        """The region computing `op` on `prologue`'s single result (or on the op's
        input as it is), with an identity epilogue."""
        rank = len(shape_of(op.input.type))
        if prologue is None:
            inputs, maps, body = [op.input], [AffineMap.identity(rank)], _identity_body(op.input.type)
        else:
            inputs, maps, body = list(prologue.inputs), prologue.maps, prologue.body.clone()
        axis = op.reduced_axes()[0]
        return cls(inputs, maps, axis, type(op), op.result.type, body, _identity_body(op.result.type))

    def rebuilt(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        result_type: Attribute,
        body: Region,
        epilogue: Region,
    ) -> NormalizeRegionOp:
        return NormalizeRegionOp(inputs, maps, self.axis.value.data, self.kind, result_type, body, epilogue)

    @property
    def kind(self) -> type[NormalizeOp]:
        return NORMALIZATIONS_BY_NAME[self.normalization.data]

    def verify_kind(self) -> None:
        if self.normalization.data not in NORMALIZATIONS_BY_NAME:
            raise VerifyException(
                f"'{self.name}' normalization \"{self.normalization.data}\" is not one of "
                f"{', '.join(NORMALIZATIONS_BY_NAME)}"
            )


@irdl_op_definition
class StandardizeRegionOp(RowRegionOp):
    """Layer norm and RMS norm along the last axis, between a prologue and an
    epilogue, in one kernel.

    At each point the prologue `body` computes x from the first inputs; along
    the last axis (n elements) μ = mean(x) if `centered` (layer norm), else 0
    (RMS norm), σ² = mean((x − μ)²), and the normalized value
    (x − μ)·rsqrt(σ² + `epsilon`) goes to the `epilogue` with one element of
    each remaining input. Inputs are read at the point itself, are rank-0
    scalars, or are vectors along the last axis (a scale and a bias: the map
    `(d0, ..., dk) -> (dk)`). The kernel reads a row three times (twice for
    RMS norm) while it is in cache and writes it once: the statistics, the
    scale and bias never reach memory.

    ```mlir
    %y = rlx.standardize_region ins(%x, %g, %b : tensor<64x768xf32>, tensor<768xf32>, tensor<768xf32>)
           {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                             affine_map<(d0, d1) -> (d1)>], axis = 1 : i64, epsilon = 1.0e-05 : f64,
            centered = true} -> tensor<64x768xf32> {
    ^bb0(%a: f32):
      rlx.yield %a : f32
    } epilogue {
    ^bb0(%v: f32, %gamma: f32, %beta: f32):
      %s = rlx.mul %v, %gamma : (f32, f32) -> f32
      %t = rlx.add %s, %beta : (f32, f32) -> f32
      rlx.yield %t : f32
    }
    ```
    """

    name = "rlx.standardize_region"
    epsilon = prop_def(FloatAttr[Float64Type])
    centered = prop_def(BoolAttr)
    PROPERTIES: ClassVar[tuple[str, ...]] = ("indexing_maps", "axis", "epsilon", "centered")
    READS: ClassVar[str] = (
        "at the point itself (identity map over {space}), be a rank-0 scalar or be a vector along the last "
        "axis (map (d0, ..., dk) -> (dk))"
    )

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        epsilon: float,
        centered: bool,
        result_type: Attribute,
        body: Region,
        epilogue: Region,
    ) -> None:
        rank = len(shape_of(result_type))
        properties = {
            "indexing_maps": ArrayAttr([AffineMapAttr(m) for m in maps]),
            "axis": i64_attr(rank - 1),
            "epsilon": FloatAttr(epsilon, f64),
            "centered": bool_attr(centered),
        }
        super().__init__(
            operands=[list(inputs)], result_types=[[result_type]], properties=properties, regions=[body, epilogue]
        )

    @classmethod
    def of(cls, x: SSAValue, epsilon: float, centered: bool) -> StandardizeRegionOp:
        """The region normalizing `x` as it is (identity prologue and epilogue)."""
        rank = len(shape_of(x.type))
        return cls(
            [x], [AffineMap.identity(rank)], epsilon, centered, x.type, _identity_body(x.type), _identity_body(x.type)
        )

    def rebuilt(
        self,
        inputs: Sequence[SSAValue],
        maps: Sequence[AffineMap],
        result_type: Attribute,
        body: Region,
        epilogue: Region,
    ) -> StandardizeRegionOp:
        return StandardizeRegionOp(inputs, maps, self.eps, self.is_centered, result_type, body, epilogue)

    @property
    def eps(self) -> float:
        return self.epsilon.value.data

    @property
    def is_centered(self) -> bool:
        return bool(self.centered.value.data)

    def reads_through(self, amap: AffineMap, value: SSAValue) -> bool:
        space = self.iteration_shape
        return _pointwise(amap, value, space) or _along_last_axis(amap, value, space)

    def verify_kind(self) -> None:
        rank = len(self.iteration_shape)
        if rank == 0:
            raise VerifyException(f"'{self.name}' result must have an axis to normalize, got rank 0")
        if self.axis.value.data not in (rank - 1, -1):
            raise VerifyException(
                f"'{self.name}' normalizes the last axis ({rank - 1}), got axis {self.axis.value.data}"
            )
        if not self.eps >= 0:
            raise VerifyException(f"'{self.name}' epsilon must be >= 0, got {self.eps}")


def _pointwise(amap: AffineMap, value: SSAValue, space: Sequence[int]) -> bool:
    """`value` read at the point itself (same shape, identity map), or a rank-0 scalar."""
    if shape_of(value.type) == ():
        return True
    return shape_of(value.type) == tuple(space) and amap == AffineMap.identity(len(space))


def _along_last_axis(amap: AffineMap, value: SSAValue, space: Sequence[int]) -> bool:
    """`value` a vector of the last axis' extent, read at the point's last index."""
    rank = len(space)
    last = AffineMap(rank, 0, (AffineExpr.dimension(rank - 1),)) if rank else None
    return rank > 0 and shape_of(value.type) == (space[-1],) and amap == last


def _identity_body(tensor_type: Attribute) -> Region:
    block = make_region_block([tensor_type])
    block.add_op(YieldOp(block.args[0]))
    return Region([block])


def _inline_body(body: Block, values: dict[SSAValue, SSAValue], into: Block) -> SSAValue:
    """Clone `body`'s ops (its arguments given by `values`) into `into`; the value it yields."""
    for op in body.ops:
        if isinstance(op, YieldOp):
            return values[op.values[0]]
        clone = op.clone(value_mapper=dict(values))
        into.add_op(clone)
        for old, new in zip(op.results, clone.results):
            values[old] = new
    raise VerifyException("region body has no rlx.yield")


REDUCTIONS_BY_NAME: dict[str, type[ReduceOp]] = {op.name.removeprefix("rlx."): op for op in REDUCE_OPS}
NORMALIZATIONS_BY_NAME: dict[str, type[NormalizeOp]] = {op.name.removeprefix("rlx."): op for op in NORMALIZE_OPS}
REGION_OPS = (
    ElementwiseRegionOp,
    ReductionRegionOp,
    ContractionRegionOp,
    ConvRegionOp,
    NormalizeRegionOp,
    StandardizeRegionOp,
)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates a body: one scalar per result of a fused region, the next carry of a scan."""

    name = "rlx.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(BodyOp), Pure())
    assembly_format = "$values attr-dict (`:` type($values)^)?"

    def __init__(self, *values: SSAValue) -> None:
        super().__init__(operands=[list(values)])


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def make_region_block(input_types: Sequence[Attribute]) -> Block:
    return Block(arg_types=[element_type(t) for t in input_types])
