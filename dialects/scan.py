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

The step count is the `length` property, required on every scan and its only
source: xs, when there are any, must have it as their leading axis, and a scan
with no xs is a loop of `length` steps over the carry (and broadcast inputs).
A missing length, or one below 1, is a verifier error
(tests/lit/scan/invalid-no-xs.mlir, tests/test_scan_no_xs.py).

The result is the final carry; with `save_trajectory`, every carry
[length, *carry]; with `num_checkpoints = K` (0 < K, a trajectory only), the
carries after steps ceil((k+1)·length/K) − 1 for k < K, [K, *carry]: the
last row is always the final carry, and K = length is the trajectory.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import I64, BoolAttr, DenseArrayBase, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    VarOperand,
    irdl_op_definition,
    operand_def,
    opt_region_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import HasCanonicalizationPatternsTrait, IsolatedFromAbove, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes, numel
from rlx_mlir.dialects.common import NeedsScratch, bool_attr, check_value_type, element_type, i64_attr, shape_of
from rlx_mlir.dialects.contraction import MatmulOp, matmul_shape
from rlx_mlir.dialects.elementwise import is_elementwise
from rlx_mlir.dialects.region import BodyOp, ContractionRegionOp, YieldOp

BODY_ARENA = "rlx.body_arena_sizes"
"""The byte size of each body's own plan, which `plan-memory` records on a loop
op before placing them as its last scratch buffers (the nested plans)."""


def tensor_bytes(t: Attribute) -> int:
    return numel(shape_of(t)) * dtypes.from_ir(element_type(t)).nbytes


def checkpoint_steps(length: int, checkpoints: int) -> list[int]:
    """The steps after which checkpoint row k is saved: ceil((k+1)·length/K) − 1."""
    return [-(-(k + 1) * length // checkpoints) - 1 for k in range(checkpoints)]


@dataclass(frozen=True, order=True)
class PackedWeight:
    """A broadcast input that a body matmul (or contraction region) reads as its
    2-D f32/f64 rhs: loop-invariant, so the lowering packs op(W) into the
    column panels of `lowering.core.gemm.Packing` once, before the loop, into a
    scratch buffer with the loop's lifetime, and the body's GEMM runs register
    tiles over the panels instead of a BLAS call that repacks W every step.
    Packing only permutes W: the buffer has W's size."""

    broadcast: int
    """Its position among the loop's broadcast inputs."""
    transposed: bool
    """Whether the GEMM reads it transposed (op(W) = Wᵀ): a use with the other flag packs it again."""


PACKED_TYPES = ("f32", "f64")
"""The element types of the register tiles that read packed weights."""


class LoopOp(BodyOp, NeedsScratch, ABC):
    """What `rlx.scan` and `rlx.scan_backward` share: `length` steps over the
    `inputs` after the op's own operands (`init`, ...), of which the first
    `num_broadcast` are the same at every step and the rest (xs) have a
    leading `length` axis. Each op declares its operands itself, in order."""

    length = prop_def(IntegerAttr[I64])
    num_broadcast = prop_def(IntegerAttr[I64], default_value=i64_attr(0))

    if TYPE_CHECKING:  # what each op declares, in its own operand order
        init: SSAValue
        inputs: VarOperand

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
    def carry_bytes(self) -> int:
        return tensor_bytes(self.init.type)

    def step_types(self) -> list[Attribute]:
        """The types of one row of each xs, as the bodies see them."""
        return [TensorType(element_type(x.type), list(shape_of(x.type)[1:])) for x in self.xs]

    def bodies(self) -> list[Block]:
        """The tensor-level bodies, each planned as a nested plan of its own."""
        return [region.block for region in self.regions if region.blocks]

    def body_arenas(self) -> tuple[int, ...]:
        """The byte size of each body's own plan, the op's last scratch buffers
        (`BODY_ARENA`, recorded by plan-memory; 0 before it has run)."""
        sizes = self.attributes.get(BODY_ARENA)
        if isinstance(sizes, DenseArrayBase):
            return tuple(sizes.get_values())
        return (0,) * len(self.bodies())

    def packed_weights(self) -> list[PackedWeight]:
        """The broadcast inputs every body's matmuls read as a packed rhs (`PackedWeight`), in order."""
        found: set[PackedWeight] = set()
        count = self.num_broadcast.value.data
        for block in self.bodies():
            weights: dict[SSAValue, int] = {arg: k for k, arg in enumerate(block.args[1 : 1 + count])}
            for op in block.ops:
                if not isinstance(op, (MatmulOp, ContractionRegionOp)) or op.rhs not in weights:
                    continue
                rhs = op.rhs.type
                if len(shape_of(rhs)) == 2 and dtypes.from_ir(element_type(rhs)).name in PACKED_TYPES:
                    found.add(PackedWeight(weights[op.rhs], op.transposes[1]))
        return sorted(found)

    def packed_bytes(self) -> list[int]:
        """The scratch of each packed weight: the weight's own size."""
        return [tensor_bytes(self.broadcast[w.broadcast].type) for w in self.packed_weights()]

    def packed_scratch(self) -> list[tuple[PackedWeight, int]]:
        """Each packed weight with the index of its scratch buffer: they come just
        before the body arenas, the last scratch buffers."""
        weights = self.packed_weights()
        first = len(self.scratch_bytes()) - len(self.bodies()) - len(weights)
        return [(w, first + j) for j, w in enumerate(weights)]

    def verify_loop(self) -> None:
        for k, value in enumerate(self.operands):
            check_value_type(self, value.type, f"operand #{k}")
        for k, value in enumerate(self.results):
            check_value_type(self, value.type, f"result #{k}")
        length, broadcast = self.steps, self.num_broadcast.value.data
        if length < 1:
            raise VerifyException(f"'{self.name}' length must be at least 1, got {length}")
        if not 0 <= broadcast <= len(self.inputs):
            raise VerifyException(
                f"'{self.name}' num_broadcast {broadcast} must be between 0 and the {len(self.inputs)} inputs"
            )
        for k, x in enumerate(self.xs):
            shape = shape_of(x.type)
            if not shape or shape[0] != length:
                raise VerifyException(
                    f"'{self.name}' per-step input #{k} has shape {list(shape)}, whose leading axis must be "
                    f"the length {length}"
                )

    def check_body(self, block: Block, what: str, arguments: Sequence[Attribute], yields: Sequence[Attribute]) -> None:
        got = [a.type for a in block.args]
        if got != list(arguments):
            raise VerifyException(f"'{self.name}' {what} arguments must be ({', '.join(map(str, arguments))})")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or [v.type for v in terminator.values] != list(yields):
            raise VerifyException(f"'{self.name}' {what} must yield ({', '.join(map(str, yields))})")


class _ScanCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (HoistStepwiseOps(), DropUnusedInputs())


@irdl_op_definition
class ScanOp(LoopOp):
    """`rlx.scan {length, num_broadcast, save_trajectory, num_checkpoints}`
    (init, broadcast..., xs...): the body applied `length` times to the carry."""

    name = "rlx.scan"
    init = operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    save_trajectory = prop_def(BoolAttr, default_value=bool_attr(False))
    num_checkpoints = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    body = region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove(), _ScanCanonicalization())
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
    def trajectory(self) -> bool:
        return bool(self.save_trajectory.value.data)

    @property
    def checkpoints(self) -> int:
        return self.num_checkpoints.value.data

    @property
    def rows(self) -> int | None:
        return self.saved_rows(self.steps, self.trajectory, self.checkpoints)

    def scratch_bytes(self) -> tuple[int, ...]:
        """The spare carries of the ping-pong, the packed weights, then the body's
        own plan (`BODY_ARENA`, set by plan-memory). Steps that save no row alternate
        between two spares: for a final carry only, one spare and the result
        itself; with checkpoints, two spares; a trajectory saves every step and
        needs none."""
        spares = 1 if self.rows is None else 0 if self.rows == self.steps else 2
        return (spares * self.carry_bytes, *self.packed_bytes(), *self.body_arenas())

    def verify_(self) -> None:
        self.verify_loop()
        length, checkpoints = self.steps, self.checkpoints
        if checkpoints < 0 or checkpoints > length:
            raise VerifyException(f"'{self.name}' num_checkpoints {checkpoints} must be between 0 and length {length}")
        if checkpoints and not self.trajectory:
            raise VerifyException(f"'{self.name}' num_checkpoints needs save_trajectory = true")
        carry = self.init.type
        arguments = [carry, *(v.type for v in self.broadcast), *self.step_types()]
        self.check_body(self.body.block, "body", arguments, [carry])
        rows = self.rows
        expected = shape_of(carry) if rows is None else (rows, *shape_of(carry))
        if shape_of(self.result.type) != expected or element_type(self.result.type) != element_type(carry):
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} must be {element_type(carry)} "
                f"with shape {list(expected)}"
            )


class HoistStepwiseOps(RewritePattern):
    """A body op that reads no carry, only rows of xs (and broadcast inputs),
    computes one row of a tensor over all steps: it moves out of the loop as
    one op on the stacked xs (`x_t @ W` becomes `xs @ W`, one GEMM of length·B
    rows instead of `length` small ones), and its rows come in as a new xs.
    Elementwise ops and matmuls whose stacked form has exactly the stacked
    shape move; anything else stays."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        # a body argument -> the value it reads (rows of xs)
        outer: dict[SSAValue, SSAValue] = dict(zip(block.args[1:], op.inputs))
        stepwise = set(block.args[1 + len(op.broadcast) :])
        for inner in block.ops:
            if isinstance(inner, YieldOp) or not any(v in stepwise for v in inner.operands):
                continue
            if not all(v in outer for v in inner.operands):
                continue
            stacked = _stacked(inner, outer, op.steps)
            if stacked is None:
                continue
            rewriter.insert(stacked, InsertPoint.before(op))
            row = rewriter.insert_block_argument(block, len(block.args), inner.results[0].type)
            rewriter.replace_all_uses_with(inner.results[0], row)
            rewriter.erase(inner)
            region = rewriter.move_region_contents_to_new_regions(op.body)
            xs = [*op.xs, stacked.results[0]]
            rewriter.replace(op, ScanOp(op.init, op.broadcast, xs, region, op.steps, op.trajectory, op.checkpoints))
            return


class DropUnusedInputs(RewritePattern):
    """A broadcast input or xs the body never reads is no operand of the scan."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        block = op.body.block
        unused = [k for k, arg in enumerate(block.args[1:]) if not arg.uses]
        first_xs = len(op.broadcast)
        if first_xs < len(op.inputs) and all(k in unused for k in range(first_xs, len(op.inputs))):
            unused.remove(first_xs)  # the length is read off the xs: keep one
        if not unused:
            return
        for k in reversed(unused):
            rewriter.erase_block_argument(block.args[1 + k])
        broadcast = [v for k, v in enumerate(op.broadcast) if k not in unused]
        xs = [v for k, v in enumerate(op.inputs) if k >= first_xs and k not in unused]
        region = rewriter.move_region_contents_to_new_regions(op.body)
        rewriter.replace(op, ScanOp(op.init, broadcast, xs, region, op.steps, op.trajectory, op.checkpoints))


def _stacked(inner: Operation, outer: dict[SSAValue, SSAValue], length: int) -> Operation | None:
    """`inner` over every step: on the stacked xs and the broadcast inputs, or None
    if its op kind or shapes do not stack to [length, *its result]."""
    if not (is_elementwise(inner) or isinstance(inner, MatmulOp)) or len(inner.results) != 1:
        return None
    operands = [outer[v] for v in inner.operands]
    result = inner.results[0].type
    want = (length, *shape_of(result))
    got: tuple[int, ...] | None
    if isinstance(inner, MatmulOp):
        lhs, rhs = (shape_of(v.type) for v in operands)
        try:
            got = matmul_shape(lhs, rhs, *inner.transposes)
        except ValueError:
            return None
    else:
        got = broadcast_shapes(*(shape_of(v.type) for v in operands))
    if got != want:
        return None
    return inner.create(
        operands=operands,
        result_types=[TensorType(element_type(result), list(want))],
        properties=dict(inner.properties),
        attributes=dict(inner.attributes),
    )


def graph_blocks(block: Block) -> list[Block]:
    """`block` and every loop body nested in it: the blocks of tensor ops the
    passes schedule, fuse and plan."""
    blocks = [block]
    for op in block.ops:
        if isinstance(op, LoopOp):
            for body in op.bodies():
                blocks += graph_blocks(body)
    return blocks


CHECKPOINT_MODES = ("segments", "griewank")
GRIEWANK_FRAME_BYTES = 32
"""One frame of the bisection's explicit stack: lo, hi, level (i64) and the start carry's pointer."""


@irdl_op_definition
class ScanBackwardOp(LoopOp):
    """`rlx.scan_backward {length, num_broadcast, num_checkpoints, mode, cotangent_rows}`
    (init, saved, d_result, broadcast..., xs...): the reverse sweep of an
    `rlx.scan`, from the carries it saved and the cotangent of its result.

    - `saved` holds the forward's carries: every step's ([length, *carry],
      `num_checkpoints = 0`) or K checkpoints ([K, *carry], the carries after
      steps ceil((k+1)·length/K) − 1), from which `mode` recomputes the
      others with the `forward` body: `segments` recomputes the segment
      between two checkpoints into a cache before sweeping it back (as the
      seed's segment cache); `griewank` bisects the segment recursively,
      recomputing the carry at the middle, sweeping the second half and then
      the first, with O(log) carries of memory (the seed's
      `griewank_process_segment`). Every mode computes the same carries with
      the same kernels and sweeps the steps in the same order: the gradients
      are bit-identical.
    - `d_result` is the cotangent of the forward's result: of the final carry
      ([*carry], `cotangent_rows = 0`), or of R saved rows ([R, *carry]),
      row k added to the carry's cotangent after step ceil((k+1)·length/R) − 1.
    - `vjp` is the body's vector-Jacobian product: (carry, broadcast...,
      x_t..., d_next) -> (d_carry, d_broadcast..., d_x_t...).

    Results: d_init, then one gradient per input in operand order: the
    broadcast inputs' summed over steps (beyond the seed, which cannot train a
    weight shared across steps), the xs' stacked per step ([length, *x]).
    """

    name = "rlx.scan_backward"
    init = operand_def(TensorType)
    saved = operand_def(TensorType)
    d_result = operand_def(TensorType)
    inputs = var_operand_def(TensorType)
    d_init = result_def(TensorType)
    gradients = var_result_def(TensorType)
    num_checkpoints = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    mode = prop_def(StringAttr, default_value=StringAttr("segments"))
    cotangent_rows = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    vjp = region_def("single_block")
    forward = opt_region_def("single_block")
    traits = traits_def(Pure(), IsolatedFromAbove())
    assembly_format = "operands attr-dict `:` functional-type(operands, results) `vjp` $vjp (`forward` $forward^)?"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        init: SSAValue,
        saved: SSAValue,
        d_result: SSAValue,
        broadcast: Sequence[SSAValue],
        xs: Sequence[SSAValue],
        vjp: Region,
        forward: Region | None,
        length: int,
        num_checkpoints: int = 0,
        mode: str = "segments",
        cotangent_rows: int = 0,
    ) -> None:
        props = {
            "length": i64_attr(length),
            "num_broadcast": i64_attr(len(broadcast)),
            "num_checkpoints": i64_attr(num_checkpoints),
            "mode": StringAttr(mode),
            "cotangent_rows": i64_attr(cotangent_rows),
        }
        inputs = [*broadcast, *xs]
        super().__init__(
            operands=[init, saved, d_result, inputs],
            result_types=[init.type, [v.type for v in inputs]],
            properties=props,
            regions=[vjp, forward],
        )

    @property
    def checkpoints(self) -> int:
        """How many rows `saved` holds: K, or every step's carry."""
        return self.num_checkpoints.value.data or self.steps

    @property
    def recomputes(self) -> bool:
        return self.checkpoints < self.steps

    @property
    def rows(self) -> int:
        """The rows of `d_result` (0: the cotangent of the final carry alone)."""
        return self.cotangent_rows.value.data

    def scratch_bytes(self) -> tuple[int, ...]:
        """Two cotangent buffers the sweep alternates between, one per-step
        gradient per broadcast input (added to its sum), the segment cache of
        recomputed carries (the longest segment but its first carry), the packed
        weights of both bodies, then the plans of the vjp body and of the
        forward body."""
        carry = self.carry_bytes
        per_step = [tensor_bytes(v.type) for v in self.broadcast]
        return (2 * carry, *per_step, self.cache_bytes(), *self.packed_bytes(), *self.body_arenas())

    @property
    def longest_segment(self) -> int:
        """Steps in the longest run between two saved carries."""
        return -(-self.steps // self.checkpoints)

    @property
    def griewank_levels(self) -> int:
        """Recursion depth of the bisection of the longest segment (one carry each)."""
        return max(1, (self.longest_segment - 1).bit_length())

    def cache_bytes(self) -> int:
        """What recomputing needs: `segments`, every carry of the longest segment
        but the saved one; `griewank`, one carry per level of the bisection,
        two to step through, and its stack of (lo, hi, level, start) frames.
        Carries are 64-byte aligned in the plan, each a multiple of 8 bytes
        from the scratch's start, so the frames after them are aligned too."""
        if not self.recomputes:
            return 0
        if self.mode.data == "segments":
            return (self.longest_segment - 1) * self.carry_bytes
        stack = GRIEWANK_FRAME_BYTES * self.griewank_frames + 8  # the frames, then their count
        return (self.griewank_levels + 2) * self.carry_bytes + stack

    @property
    def griewank_frames(self) -> int:
        """The most frames the bisection's stack holds: two per level, plus the first."""
        return 2 * self.griewank_levels + 2

    def verify_(self) -> None:
        self.verify_loop()
        length, checkpoints, rows = self.steps, self.num_checkpoints.value.data, self.rows
        carry = self.init.type
        if not 0 <= checkpoints <= length:
            bounds = f"between 0 and length {length}"
            raise VerifyException(f"'{self.name}' num_checkpoints {checkpoints} must be {bounds}")
        if self.mode.data not in CHECKPOINT_MODES:
            modes = ", ".join(CHECKPOINT_MODES)
            raise VerifyException(f"'{self.name}' mode \"{self.mode.data}\" is not one of {modes}")
        saved = (self.checkpoints, *shape_of(carry))
        if shape_of(self.saved.type) != saved or element_type(self.saved.type) != element_type(carry):
            raise VerifyException(f"'{self.name}' saved carries {self.saved.type} must have shape {list(saved)}")
        if not 0 <= rows <= length:
            raise VerifyException(f"'{self.name}' cotangent_rows {rows} must be between 0 and length {length}")
        cotangent = (rows, *shape_of(carry)) if rows else shape_of(carry)
        if shape_of(self.d_result.type) != cotangent or element_type(self.d_result.type) != element_type(carry):
            raise VerifyException(f"'{self.name}' d_result {self.d_result.type} must have shape {list(cotangent)}")
        step_types = self.step_types()
        bcast = [v.type for v in self.broadcast]
        self.check_body(self.vjp.block, "vjp body", [carry, *bcast, *step_types, carry], [carry, *bcast, *step_types])
        if self.recomputes != (self.forward is not None):
            need = "needs a forward body to recompute carries" if self.recomputes else "takes no forward body"
            raise VerifyException(f"'{self.name}' with {self.checkpoints} saved carries of {length} {need}")
        if self.forward is not None:
            self.check_body(self.forward.block, "forward body", [carry, *bcast, *step_types], [carry])
        expected = [carry, *(v.type for v in self.inputs)]
        if [r.type for r in self.results] != expected:
            raise VerifyException(
                f"'{self.name}' results must be d_init and one gradient per input, typed like them "
                f"({', '.join(map(str, expected))})"
            )


SCAN_OPS = (ScanOp, ScanBackwardOp)
