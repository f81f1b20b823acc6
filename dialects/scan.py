"""`rlx.scan`: a loop over a leading time axis whose body is a region of rlx ops.

```mlir
%h = rlx.scan %h0, %w, %xs {length = 16 : i64, num_broadcast = 1 : i64}
       : (tensor<8x32xf32>, tensor<32x32xf32>, tensor<16x8x32xf32>) -> tensor<8x32xf32> {
^bb0(%h: tensor<8x32xf32>, %w: tensor<32x32xf32>, %x: tensor<8x32xf32>):
  %p = rlx.matmul %h, %w : (tensor<8x32xf32>, tensor<32x32xf32>) -> tensor<8x32xf32>
  %s = rlx.add %p, %x : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %n = rlx.tanh %s : (tensor<8x32xf32>) -> tensor<8x32xf32>
  rlx.yield %n : tensor<8x32xf32>
}
```

Operands: the initial carry, then `num_broadcast` broadcast inputs (the same
tensor at every step), then the per-step inputs `xs`, each with a leading
axis of `length` (step t reads row t). The body is one block, isolated from
above, with arguments (carry, broadcast..., x_t...) and yields the next carry.
The count of broadcast inputs is a property, so the generic form says which is
which without looking at shapes.

The result is the final carry; with `save_trajectory`, every carry
[length, *carry]; with `num_checkpoints = K` (0 < K, a trajectory only), the
carries after steps ceil((k+1)·length/K) − 1 for k < K, [K, *carry]: the
last row is always the final carry, and K = length is the trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, region_def, result_def, traits_def, var_operand_def
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.traits import IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import NeedsScratch, check_value_type, element_type, i64_attr, shape_of
from rlx_mlir.dialects.contraction import bool_attr
from rlx_mlir.dialects.region import BodyOp, YieldOp

BODY_ARENA = "rlx.body_arena_size"
"""The byte size of the body's own plan, which `plan-memory` records on the scan
before placing it as the scan's scratch buffer (the nested plan)."""


def checkpoint_steps(length: int, checkpoints: int) -> list[int]:
    """The steps after which checkpoint row k is saved: ceil((k+1)·length/K) − 1."""
    return [-(-(k + 1) * length // checkpoints) - 1 for k in range(checkpoints)]


@irdl_op_definition
class ScanOp(BodyOp, NeedsScratch):
    """`rlx.scan {length, num_broadcast, save_trajectory, num_checkpoints}`
    (init, broadcast..., xs...): the body applied `length` times to the carry."""

    name = "rlx.scan"
    init = operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    length = prop_def(IntegerAttr[I64])
    num_broadcast = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    save_trajectory = prop_def(BoolAttr, default_value=bool_attr(False))
    num_checkpoints = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove())
    assembly_format = "operands attr-dict `:` functional-type(operands, results) $body"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        init: SSAValue,
        broadcast: Sequence[SSAValue],
        xs: Sequence[SSAValue],
        body: Region,
        length: int,
        save_trajectory: bool = False,
        num_checkpoints: int = 0,
    ) -> None:
        props = {
            "length": i64_attr(length),
            "num_broadcast": i64_attr(len(broadcast)),
            "save_trajectory": bool_attr(save_trajectory),
            "num_checkpoints": i64_attr(num_checkpoints),
        }
        rows = self.saved_rows(length, save_trajectory, num_checkpoints)
        carry = shape_of(init.type)
        result: Attribute = init.type if rows is None else TensorType(element_type(init.type), [rows, *carry])
        super().__init__(operands=[init, [*broadcast, *xs]], result_types=[result], properties=props, regions=[body])

    @staticmethod
    def saved_rows(length: int, trajectory: bool, checkpoints: int) -> int | None:
        """How many carries the result holds (None: only the final one, unstacked)."""
        if not trajectory:
            return None
        return checkpoints if checkpoints else length

    @property
    def steps(self) -> int:
        return self.length.value.data

    @property
    def broadcast(self) -> Sequence[SSAValue]:
        return self.inputs[: self.num_broadcast.value.data]

    @property
    def xs(self) -> Sequence[SSAValue]:
        return self.inputs[self.num_broadcast.value.data :]

    @property
    def trajectory(self) -> bool:
        return bool(self.save_trajectory.value.data)

    @property
    def checkpoints(self) -> int:
        return self.num_checkpoints.value.data

    @property
    def rows(self) -> int | None:
        return self.saved_rows(self.steps, self.trajectory, self.checkpoints)

    @property
    def saved_steps(self) -> list[int]:
        """The step after which each result row is written (empty: only the final carry)."""
        rows = self.rows
        if rows is None:
            return []
        return checkpoint_steps(self.steps, rows)

    @property
    def carry_bytes(self) -> int:
        return numel(shape_of(self.init.type)) * dtypes.from_ir(element_type(self.init.type)).nbytes

    def scratch_bytes(self) -> tuple[int, ...]:
        """The spare carries of the ping-pong, then the body's own plan
        (`BODY_ARENA`, set by plan-memory). Steps that save no row alternate
        between two spares: for a final carry only, one spare and the result
        itself; with checkpoints, two spares; a trajectory saves every step and
        needs none."""
        body = self.attributes.get(BODY_ARENA)
        arena = body.value.data if isinstance(body, IntegerAttr) else 0
        spares = 1 if self.rows is None else 0 if self.rows == self.steps else 2
        return (spares * self.carry_bytes, arena)

    # verification ----------------------------------------------------------
    def verify_(self) -> None:
        for k, value in enumerate(self.operands):
            check_value_type(self, value.type, f"operand #{k}")
        check_value_type(self, self.result.type, "result")
        length, broadcast, checkpoints = self.steps, self.num_broadcast.value.data, self.checkpoints
        if length < 1:
            raise VerifyException(f"'{self.name}' length must be at least 1, got {length}")
        if not 0 <= broadcast <= len(self.inputs):
            raise VerifyException(
                f"'{self.name}' num_broadcast {broadcast} must be between 0 and the {len(self.inputs)} inputs"
            )
        if checkpoints < 0 or checkpoints > length:
            raise VerifyException(f"'{self.name}' num_checkpoints {checkpoints} must be between 0 and length {length}")
        if checkpoints and not self.trajectory:
            raise VerifyException(f"'{self.name}' num_checkpoints needs save_trajectory = true")
        for k, x in enumerate(self.xs):
            shape = shape_of(x.type)
            if not shape or shape[0] != length:
                raise VerifyException(
                    f"'{self.name}' per-step input #{k} has shape {list(shape)}, whose leading axis must be "
                    f"the length {length}"
                )
        self._verify_body()
        rows = self.rows
        carry = shape_of(self.init.type)
        expected = carry if rows is None else (rows, *carry)
        if shape_of(self.result.type) != expected or element_type(self.result.type) != element_type(self.init.type):
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} must be {element_type(self.init.type)} "
                f"with shape {list(expected)}"
            )

    def _verify_body(self) -> None:
        block = self.body.block
        step_types = [TensorType(element_type(x.type), list(shape_of(x.type)[1:])) for x in self.xs]
        expected = [self.init.type, *(v.type for v in self.broadcast), *step_types]
        got = [a.type for a in block.args]
        if got != expected:
            listed = ", ".join(map(str, expected))
            raise VerifyException(
                f"'{self.name}' body arguments must be (carry, broadcast..., x_t...) = ({listed})"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or [v.type for v in terminator.values] != [self.init.type]:
            raise VerifyException(f"'{self.name}' body must yield the next carry, one {self.init.type}")


def graph_blocks(block: Block) -> list[Block]:
    """`block` and every scan body nested in it: the blocks of tensor ops the
    passes schedule, fuse and plan."""
    blocks = [block]
    for op in block.ops:
        if isinstance(op, ScanOp):
            blocks += graph_blocks(op.body.block)
    return blocks


SCAN_OPS = (ScanOp,)
