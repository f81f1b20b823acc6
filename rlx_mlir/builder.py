"""Build an rlx graph from Python without writing IR text.

    b = Builder("f")
    x = b.input((4, 3), "f32")
    bias = b.input((3,), "f32")
    y = b.tanh(b.add(x, bias))          # result shapes follow NumPy broadcasting
    b.output(y)
    exe = rlx_mlir.compile(b.module())

Every unary, binary and compare op of the dialect is a method of the same name
(`b.gelu(x)`, `b.atan2(y, x)`, `b.lt(a, b)`), typed and documented in
`rlx_mlir/builder_ops.py`, which `python -m rlx_mlir.builder_gen` writes from
the op tables of the dialect (the only list of them). Data movement and indexing ops are methods too
(`b.transpose(x, [1, 0])`, `b.gather(table, ids, axis=0)`), and so are the
contractions, convolutions and reductions (`b.matmul(x, w)`, `b.conv(x, w, bias)`, `b.reduce_sum(x, [1])`,
`b.softmax(x)`), their result
shapes computed by the dialect's shape functions; the module is verified when
`module()` builds it, so a bad argument is a VerificationError there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes
from rlx_mlir.builder_ops import ElementwiseMethods
from rlx_mlir.compiler import verify
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import movement as mv
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects import scan as sc
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.resources import ResourceElementsAttr
from rlx_mlir.dtypes import Kind
from rlx_mlir.errors import ArgumentError, VerificationError


class UnknownOpError(ArgumentError, AttributeError):
    """`b.frobnicate(...)`: no such op (an AttributeError too, so hasattr() works)."""


def tensor_type(shape: Sequence[int], dtype: str | Attribute) -> TensorType:
    if not isinstance(shape, (tuple, list)):
        raise ArgumentError(f"a shape is a tuple of dimensions, got {type(shape).__name__}")
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise ArgumentError(f"shape {tuple(shape)}: each dimension must be an integer >= 0, got {d!r}")
    shape = [int(d) for d in shape]
    if not isinstance(dtype, (str, Attribute)):
        raise ArgumentError(f"an element type is a name such as 'f32', got {dtype!r}")
    return TensorType(element_dtype(dtype).ir_type if isinstance(dtype, str) else dtype, list(shape))


def integer(value: object, what: str) -> int:
    """`value` as an int attribute of an op (`what` names it), or an ArgumentError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentError(f"{what} must be an integer, got {value!r}")
    return int(value)


def integers(values: object, what: str) -> list[int]:
    """`values` as a list of int attribute entries, or an ArgumentError."""
    if not isinstance(values, (list, tuple, range, np.ndarray)):
        raise ArgumentError(f"{what} must be a list of integers, got {values!r}")
    return [integer(v, f"{what} entry") for v in values]


def element_dtype(name: str) -> dtypes.DType:
    """The element type called `name`, or an ArgumentError listing the supported ones."""
    try:
        return dtypes.from_name(name)
    except KeyError:
        raise ArgumentError(f"unknown element type '{name}' (supported: {dtypes.supported_names()})") from None


def _group(state: SSAValue | None) -> list[SSAValue]:
    return [] if state is None else [state]


OpClass = TypeVar("OpClass", bound=type[Operation])


def _family_op(table: Mapping[str, OpClass], family: str, name: str) -> OpClass:
    """The op class `name` of one elementwise family, or the Builder's unknown-op error."""
    if name not in table:
        raise UnknownOpError(f"Builder has no {family} op '{name}' (known: {', '.join(sorted(table))})")
    return table[name]


RESOURCE_OVER = 1024
"""`Builder.constant` keeps arrays of more elements than this as resources
(binary, not copied); smaller ones are dense literals that print in full."""


class Builder(ElementwiseMethods):
    """Appends rlx ops to one function; `module()` returns the verified module."""

    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.block = Block()
        self.results: list[SSAValue] = []

    def input(self, shape: Sequence[int], dtype: str = "f32") -> SSAValue:
        return self.block.insert_arg(tensor_type(shape, dtype), len(self.block.args))

    def output(self, *values: SSAValue) -> None:
        for value in values:
            if not isinstance(value, SSAValue):
                raise ArgumentError(f"Builder.output takes values made by this builder, got {type(value).__name__}")
        self.results.extend(values)

    def module(self) -> ModuleOp:
        block = self.block
        block.add_op(func.ReturnOp(*self.results))
        function = func.FuncOp(
            self.name,
            ([a.type for a in block.args], [v.type for v in self.results]),
            Region([block]),
        )
        module = ModuleOp([function])
        verify(module)
        self.block = Block()  # the builder can be reused for a fresh function
        self.results = []
        return module

    def _add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def _broadcast_type(self, *values: SSAValue, element: Attribute | None = None) -> TensorType:
        shape = broadcast_shapes(*(shape_of(v.type) for v in values))
        if shape is None:
            shapes = ", ".join(str(list(shape_of(v.type))) for v in values)
            raise VerificationError(f"operands have incompatible broadcast shapes ({shapes})")
        return TensorType(element or element_type(values[-1].type), list(shape))

    # op families: one method per op in builder_ops.py, or by name ---------
    def _append_unary(self, op: type[ew.UnaryOp], x: SSAValue) -> SSAValue:
        return self._add(op(x))

    def _append_binary(self, op: type[ew.BinaryOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(op(a, b, self._broadcast_type(a, b)))

    def _append_compare(self, op: type[ew.CompareOp], a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(op(a, b, self._broadcast_type(a, b, element=i1)))

    def unary(self, name: str, x: SSAValue) -> SSAValue:
        """The unary op called `name` (`b.unary("gelu", x)` is `b.gelu(x)`)."""
        return self._append_unary(_family_op(ew.UNARY_OPS, "unary", name), x)

    def binary(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._append_binary(_family_op(ew.BINARY_OPS, "binary", name), a, b)

    def compare(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._append_compare(_family_op(ew.COMPARE_OPS, "compare", name), a, b)

    if not TYPE_CHECKING:  # for mypy and IDEs, an unknown method stays an error

        def __getattr__(self, name: str) -> Callable[..., SSAValue]:
            """Only reached for a name that is no method: the error says so in the Builder's terms."""
            raise UnknownOpError(f"Builder has no op '{name}'")

    def where(self, condition: SSAValue, t: SSAValue, f: SSAValue) -> SSAValue:
        return self._add(
            ew.WhereOp(condition, t, f, self._broadcast_type(condition, t, f, element=element_type(t.type)))
        )

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self._add(ew.FmaOp(a, b, c, self._broadcast_type(a, b, c)))

    def cast(self, x: SSAValue, dtype: str, saturate: bool = True) -> SSAValue:
        """`saturate` matters for a float8 `dtype` only (see `rlx.cast`)."""
        return self._add(ew.CastOp(x, tensor_type(shape_of(x.type), dtype), saturate))

    def expand(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self._add(rlx.ExpandOp(x, tensor_type(shape, element_type(x.type))))

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self._add(rlx.ReshapeOp(x, tensor_type(shape, element_type(x.type))))

    # data movement and indexing (result shapes from dialects/movement.py) ----
    def _like(self, x: SSAValue, shape: Sequence[int]) -> TensorType:
        return TensorType(element_type(x.type), list(shape))

    def _axis(self, axis: int, rank: int) -> int:
        axis = integer(axis, "axis")
        return axis % rank if rank and -rank <= axis < rank else axis

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        perm = integers(perm, "Builder.transpose perm")
        rank = len(shape_of(x.type))
        if any(not -rank <= p < rank for p in perm):  # the verifier names every other bad perm
            raise ArgumentError(f"Builder.transpose: perm {perm} names an axis its rank-{rank} input does not have")
        return self._add(mv.TransposeOp(x, perm, self._like(x, mv.transposed_shape(shape_of(x.type), perm))))

    def slice(self, x: SSAValue, starts: Sequence[int], steps: Sequence[int], lengths: Sequence[int]) -> SSAValue:
        starts, steps = integers(starts, "Builder.slice starts"), integers(steps, "Builder.slice steps")
        return self._add(mv.SliceOp(x, starts, steps, tensor_type(lengths, element_type(x.type))))

    def narrow(self, x: SSAValue, axis: int, start: int, length: int) -> SSAValue:
        shape = shape_of(x.type)
        start, length = integer(start, "Builder.narrow start"), integer(length, "Builder.narrow length")
        result = mv.narrowed_shape(shape, self._axis(axis, len(shape)), length)
        return self._add(mv.NarrowOp(x, axis, start, length, self._like(x, result)))

    def reverse(self, x: SSAValue, axes: Sequence[int]) -> SSAValue:
        return self._add(mv.ReverseOp(x, integers(axes, "Builder.reverse axes"), x.type))

    def pad(
        self, x: SSAValue, before: Sequence[int], after: Sequence[int], mode: str = "constant", value: float = 0.0
    ) -> SSAValue:
        before, after = integers(before, "Builder.pad before"), integers(after, "Builder.pad after")
        result = mv.padded_shape(shape_of(x.type), before, after)
        if min(result, default=0) < 0:
            raise ArgumentError(
                f"Builder.pad before {before} and after {after} cut more than the shape {list(shape_of(x.type))} holds"
            )
        return self._add(mv.PadOp(x, before, after, mode, value, self._like(x, result)))

    def concat(self, inputs: Sequence[SSAValue], axis: int) -> SSAValue:
        if not inputs:
            raise ArgumentError("Builder.concat needs at least one input")
        shapes = [shape_of(v.type) for v in inputs]
        rank = max(len(s) for s in shapes)
        if not -rank <= axis < rank:  # the shape function indexes by it
            raise ArgumentError(f"Builder.concat axis {axis} is out of range for rank {rank}")
        result = mv.concatenated_shape(shapes, self._axis(axis, rank))
        return self._add(mv.ConcatOp(inputs, axis, self._like(inputs[0], result)))

    def gather(self, data: SSAValue, indices: SSAValue, axis: int = 0) -> SSAValue:
        shape = shape_of(data.type)
        result = mv.gathered_shape(shape, shape_of(indices.type), self._axis(axis, len(shape)))
        return self._add(mv.GatherOp(data, indices, axis, self._like(data, result)))

    def gather_elements(self, data: SSAValue, indices: SSAValue, axis: int = 0) -> SSAValue:
        return self._add(mv.GatherElementsOp(data, indices, axis, self._like(data, shape_of(indices.type))))

    def gather_nd(self, data: SSAValue, indices: SSAValue, batch_dims: int = 0) -> SSAValue:
        result = mv.gathered_nd_shape(shape_of(data.type), shape_of(indices.type), batch_dims)
        return self._add(mv.GatherNdOp(data, indices, batch_dims, self._like(data, result)))

    def gather_backward(self, dy: SSAValue, indices: SSAValue, axis: int, shape: Sequence[int]) -> SSAValue:
        return self._add(mv.GatherBackwardOp(dy, indices, axis, self._like(dy, shape)))

    def scatter_add(self, updates: SSAValue, indices: SSAValue, rows: int) -> SSAValue:
        shape = (rows, *shape_of(updates.type)[1:])
        return self._add(mv.ScatterAddOp(updates, indices, self._like(updates, shape)))

    def scatter_nd(self, data: SSAValue, indices: SSAValue, updates: SSAValue, reduction: str = "none") -> SSAValue:
        return self._add(mv.ScatterNdOp(data, indices, updates, reduction, data.type))

    def scatter_elements(
        self, data: SSAValue, indices: SSAValue, updates: SSAValue, axis: int = 0, reduction: str = "none"
    ) -> SSAValue:
        return self._add(mv.ScatterElementsOp(data, indices, updates, axis, reduction, data.type))

    def matmul(
        self, lhs: SSAValue, rhs: SSAValue, transpose_lhs: bool = False, transpose_rhs: bool = False
    ) -> SSAValue:
        try:
            shape = ct.matmul_shape(shape_of(lhs.type), shape_of(rhs.type), transpose_lhs, transpose_rhs)
        except ValueError as error:
            raise ArgumentError(f"Builder.matmul: {error}") from None
        return self._add(ct.MatmulOp(lhs, rhs, self._like(lhs, shape), transpose_lhs, transpose_rhs))

    def attention(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None = None,
        scale: float | None = None,
        causal: bool = False,
    ) -> SSAValue:
        """torch's scaled_dot_product_attention (with enable_gqa): q [B, Hq, Sq, D],
        k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv], an additive mask broadcasting to
        [B, Hq, Sq, Sk]; scale defaults to 1/sqrt(D)."""
        mask_shape = shape_of(mask.type) if mask is not None else None
        try:
            shape = at.attention_shape(shape_of(q.type), shape_of(k.type), shape_of(v.type), mask_shape)
        except ValueError as error:
            raise ArgumentError(f"Builder.attention: {error}") from None
        if scale is None:
            scale = at.default_scale(shape_of(q.type)[3])
        elif isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)):
            raise ArgumentError(f"Builder.attention scale must be a number, got {scale!r}")
        elif not np.isfinite(scale):
            raise ArgumentError(f"Builder.attention scale must be finite, got {scale!r}")
        if not isinstance(causal, (bool, np.bool_)):
            raise ArgumentError(f"Builder.attention causal must be a bool, got {causal!r}")
        return self._add(at.AttentionOp(q, k, v, mask, float(scale), bool(causal), self._like(q, shape)))

    def conv(
        self,
        x: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        pad_before: Sequence[int] | None = None,
        pad_after: Sequence[int] | None = None,
        groups: int = 1,
    ) -> SSAValue:
        """torch's conv1d/conv2d/...: x [N, C, spatial...], weight [M, C/groups, kernel...],
        bias [M]; per spatial axis, strides and dilations default to 1 and pads to 0."""
        spatial = max(len(shape_of(x.type)) - 2, 0)
        default = cv.ConvGeometry.default(spatial)
        geometry = cv.ConvGeometry(
            tuple(integers(strides, "Builder.conv strides")) if strides is not None else default.strides,
            tuple(integers(dilations, "Builder.conv dilations")) if dilations is not None else default.dilations,
            tuple(integers(pad_before, "Builder.conv pad_before")) if pad_before is not None else default.pad_before,
            tuple(integers(pad_after, "Builder.conv pad_after")) if pad_after is not None else default.pad_after,
            integer(groups, "Builder.conv groups"),
        )
        try:
            shape = cv.conv_shape(shape_of(x.type), shape_of(weight.type), geometry)
        except ValueError as error:
            raise ArgumentError(f"Builder.conv: {error}") from None
        return self._add(cv.ConvOp(x, weight, bias, geometry, self._like(x, shape)))

    def max_pool(
        self,
        x: SSAValue,
        kernel_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        pad_before: Sequence[int] | None = None,
        pad_after: Sequence[int] | None = None,
    ) -> SSAValue:
        """torch's max_pool1d/2d/...: the maximum of each window over x [N, C, spatial...];
        per spatial axis, strides and dilations default to 1 and pads (-inf) to 0."""
        kernel = integers(kernel_shape, "Builder.max_pool kernel_shape")
        default = cv.ConvGeometry.default(len(kernel))
        geometry = cv.ConvGeometry(
            tuple(integers(strides, "Builder.max_pool strides")) if strides is not None else default.strides,
            tuple(integers(dilations, "Builder.max_pool dilations")) if dilations is not None else default.dilations,
            tuple(integers(pad_before, "Builder.max_pool pad_before"))
            if pad_before is not None
            else default.pad_before,
            tuple(integers(pad_after, "Builder.max_pool pad_after")) if pad_after is not None else default.pad_after,
        )
        try:
            shape = cv.pool_shape(shape_of(x.type), kernel, geometry)
        except ValueError as error:
            raise ArgumentError(f"Builder.max_pool: {error}") from None
        return self._add(cv.MaxPoolOp(x, kernel, geometry, self._like(x, shape)))

    def _reduce(self, op: type[rd.ReduceOp], x: SSAValue, axes: Sequence[int] | None, keepdims: bool) -> SSAValue:
        shape = shape_of(x.type)
        axes = range(len(shape)) if axes is None else integers(axes, "reduction axes")
        kept = rd.reduced_shape(shape, sorted({self._axis(a, len(shape)) for a in axes}), keepdims)
        return self._add(op(x, list(axes), keepdims, self._like(x, kept)))

    def reduce_sum(self, x: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False) -> SSAValue:
        """Sum over `axes` (None: every axis)."""
        return self._reduce(rd.ReduceSumOp, x, axes, keepdims)

    def reduce_mean(self, x: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False) -> SSAValue:
        return self._reduce(rd.ReduceMeanOp, x, axes, keepdims)

    def reduce_prod(self, x: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False) -> SSAValue:
        return self._reduce(rd.ReduceProdOp, x, axes, keepdims)

    def reduce_max(self, x: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False) -> SSAValue:
        return self._reduce(rd.ReduceMaxOp, x, axes, keepdims)

    def reduce_min(self, x: SSAValue, axes: Sequence[int] | None = None, keepdims: bool = False) -> SSAValue:
        return self._reduce(rd.ReduceMinOp, x, axes, keepdims)

    def _arg_reduce(
        self, op: type[rd.ArgReduceOp], x: SSAValue, axis: int, keepdims: bool, select_last_index: bool
    ) -> SSAValue:
        shape = shape_of(x.type)
        kept = rd.reduced_shape(shape, [self._axis(axis, len(shape))], keepdims)
        return self._add(op(x, axis, keepdims, select_last_index, tensor_type(kept, "i64")))

    def argmax(self, x: SSAValue, axis: int = 0, keepdims: bool = False, select_last_index: bool = False) -> SSAValue:
        return self._arg_reduce(rd.ArgmaxOp, x, axis, keepdims, select_last_index)

    def argmin(self, x: SSAValue, axis: int = 0, keepdims: bool = False, select_last_index: bool = False) -> SSAValue:
        return self._arg_reduce(rd.ArgminOp, x, axis, keepdims, select_last_index)

    def softmax(self, x: SSAValue, axis: int = -1) -> SSAValue:
        return self._add(rd.SoftmaxOp(x, integer(axis, "Builder.softmax axis")))

    def log_softmax(self, x: SSAValue, axis: int = -1) -> SSAValue:
        return self._add(rd.LogSoftmaxOp(x, integer(axis, "Builder.log_softmax axis")))

    # recurrent ops: `state` is the optional initial state group (h0, c0 for
    # LSTM); with `return_state` the result is (output, *final state).
    def _stateful(
        self,
        make: Callable[[list[SSAValue], list[Attribute]], rc.StatefulOp],
        like: SSAValue,
        state: Sequence[SSAValue] | None,
        return_state: bool,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """`make(state, result_types)` builds the op; a probe made first gives its result shapes."""
        initial = list(state or ())
        probe = make(initial, [like.type])
        output: Attribute
        carried: Attribute
        try:
            output, carried = self._like(like, probe.output_shape()), self._like(like, probe.state_shape())
        except (ValueError, IndexError, TypeError):  # bad ranks: module() reports the op's own diagnostic
            output = carried = like.type
        probe.drop_all_references()
        op = make(initial, [output, *[carried] * (len(probe.STATES) if return_state else 0)])
        self.block.add_op(op)
        return tuple(op.results) if return_state else op.output

    def lstm(
        self,
        x: SSAValue,
        w_ih: SSAValue,
        w_hh: SSAValue,
        bias: SSAValue,
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        state: Sequence[SSAValue] | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """PyTorch's packed LSTM (`rlx.lstm`): y, or (y, hn, cn) with `return_state`."""
        return self._stateful(
            lambda s, types: rc.LstmOp([x, w_ih, w_hh, bias], s, types, hidden_size, num_layers, bidirectional),
            x,
            state,
            return_state,
        )

    def gru(
        self,
        x: SSAValue,
        w_ih: SSAValue,
        w_hh: SSAValue,
        b_ih: SSAValue,
        b_hh: SSAValue,
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        state: Sequence[SSAValue] | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        return self._stateful(
            lambda s, types: rc.GruOp([x, w_ih, w_hh, b_ih, b_hh], s, types, hidden_size, num_layers, bidirectional),
            x,
            state,
            return_state,
        )

    def rnn(
        self,
        x: SSAValue,
        w_ih: SSAValue,
        w_hh: SSAValue,
        bias: SSAValue,
        hidden_size: int,
        num_layers: int = 1,
        bidirectional: bool = False,
        nonlinearity: str = "tanh",
        state: Sequence[SSAValue] | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        return self._stateful(
            lambda s, types: rc.RnnOp(
                [x, w_ih, w_hh, bias], s, types, hidden_size, num_layers, bidirectional, nonlinearity
            ),
            x,
            state,
            return_state,
        )

    def mamba2(
        self,
        x: SSAValue,
        dt: SSAValue,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        state: SSAValue | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """head_dim and state_size are read off x and b."""
        head_dim, state_size = (shape_of(v.type)[-1] if shape_of(v.type) else 0 for v in (x, b))
        return self._stateful(
            lambda s, types: rc.Mamba2Op([x, dt, a, b, c], s, types, head_dim, state_size),
            x,
            _group(state),
            return_state,
        )

    def selective_scan(
        self,
        x: SSAValue,
        delta: SSAValue,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        state: SSAValue | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """state_size is read off a."""
        state_size = shape_of(a.type)[-1] if shape_of(a.type) else 0
        return self._stateful(
            lambda s, types: rc.SelectiveScanOp([x, delta, a, b, c], s, types, state_size),
            x,
            _group(state),
            return_state,
        )

    def gated_delta_net(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        g: SSAValue,
        beta: SSAValue,
        state: SSAValue | None = None,
        return_state: bool = False,
    ) -> SSAValue | tuple[SSAValue, ...]:
        """state_size is read off q; the gate is per channel when g has q's rank."""
        state_size = shape_of(q.type)[-1] if shape_of(q.type) else 0
        per_channel = len(shape_of(g.type)) == len(shape_of(q.type))
        return self._stateful(
            lambda s, types: rc.GatedDeltaNetOp([q, k, v, g, beta], s, types, state_size, per_channel),
            q,
            _group(state),
            return_state,
        )

    def scan(
        self,
        init: SSAValue,
        body: Callable[..., SSAValue],
        xs: Sequence[SSAValue] = (),
        broadcast: Sequence[SSAValue] = (),
        save_trajectory: bool = False,
        num_checkpoints: int = 0,
    ) -> SSAValue:
        """`rlx.scan` over the leading axis of `xs`: `body(b, carry, *broadcast, *x_t)`
        builds the step with this builder's methods and returns the next carry."""
        if not xs:
            raise ArgumentError("Builder.scan needs at least one per-step input (xs) to take its length from")
        length = shape_of(xs[0].type)[0] if shape_of(xs[0].type) else 0
        step_types = [self._like(x, shape_of(x.type)[1:]) for x in xs]
        region = self._body([init.type, *(v.type for v in broadcast), *step_types], lambda b, *a: [body(b, *a)])
        return self._add(sc.ScanOp(init, broadcast, xs, region, length, save_trajectory, num_checkpoints))

    def scan_backward(
        self,
        init: SSAValue,
        saved: SSAValue,
        d_result: SSAValue,
        vjp: Callable[..., Sequence[SSAValue]],
        xs: Sequence[SSAValue] = (),
        broadcast: Sequence[SSAValue] = (),
        forward: Callable[..., SSAValue] | None = None,
        num_checkpoints: int = 0,
        mode: str = "segments",
        cotangent_rows: int = 0,
    ) -> tuple[SSAValue, ...]:
        """`rlx.scan_backward`: `vjp(b, carry, *broadcast, *x_t, d_next)` returns
        (d_carry, *d_broadcast, *d_x_t); `forward` is the scan's body (needed
        with checkpoints). Returns (d_init, *d_broadcast, *d_xs)."""
        if not xs:
            raise ArgumentError("Builder.scan_backward needs at least one per-step input (xs) to take its length from")
        length = shape_of(xs[0].type)[0] if shape_of(xs[0].type) else 0
        step_types = [self._like(x, shape_of(x.type)[1:]) for x in xs]
        arguments = [init.type, *(v.type for v in broadcast), *step_types]
        vjp_body = self._body([*arguments, init.type], lambda b, *args: list(vjp(b, *args)))
        forward_body = None if forward is None else self._body(arguments, lambda b, *args: [forward(b, *args)])
        op = sc.ScanBackwardOp(
            init, saved, d_result, broadcast, xs, vjp_body, forward_body, length, num_checkpoints, mode, cotangent_rows
        )
        self.block.add_op(op)
        return tuple(op.results)

    def _body(self, types: Sequence[Attribute], build: Callable[..., list[SSAValue]]) -> Region:
        """A body region: `build(b, *arguments)` appends its ops with this builder
        and returns the values it yields."""
        block = Block(arg_types=list(types))
        outer = self.block
        self.block = block
        try:
            values = build(self, *block.args)
        finally:
            self.block = outer
        for value in values:
            if not isinstance(value, SSAValue):
                raise ArgumentError(f"a Builder body must return values it built, got {type(value).__name__}")
        block.add_op(rg.YieldOp(*values))
        return Region([block])

    def relu_backward(self, x: SSAValue, dy: SSAValue) -> SSAValue:
        return self._add(ew.ReluBackwardOp(x, dy, self._broadcast_type(x, dy)))

    def activation_backward(self, x: SSAValue, dy: SSAValue, kind: str) -> SSAValue:
        return self._add(ew.ActivationBackwardOp(x, dy, kind, self._broadcast_type(x, dy)))

    def constant(self, value: np.ndarray | complex, dtype: str | None = None, name: str | None = None) -> SSAValue:
        """A constant of `value`: of `dtype` if given, else of a NumPy array's or scalar's
        own dtype, else f32. A conversion that loses the imaginary part is an ArgumentError.
        One of more than `RESOURCE_OVER` elements is a resource named `name` (or
        `cst`; `dialects/resources.py`) holding the array itself when no one can
        change it and it has `dtype` (a model's weights are never copied), else a
        copy (an array the caller may change later is taken as it is now)."""
        own = dtypes.from_numpy(value.dtype) if isinstance(value, (np.ndarray, np.generic)) else None
        dtype = dtype or (own.name if own is not None else "f32")
        target = element_dtype(dtype)
        try:
            complex_value = np.iscomplexobj(value)
            if complex_value and target.kind is not Kind.COMPLEX and np.any(np.imag(value)):
                raise ArgumentError(
                    f"Builder.constant: a complex value does not fit {dtype} (its imaginary part is not 0)"
                )
            source = np.real(value) if complex_value and target.kind is not Kind.COMPLEX else value
            with np.errstate(invalid="raise", over="raise"):
                array = np.asarray(source, dtype=target.numpy)
        except (ValueError, TypeError, OverflowError, FloatingPointError) as error:  # also a ragged list
            raise ArgumentError(f"Builder.constant: {value!r} does not fit {dtype} ({error})") from None
        t = tensor_type(array.shape, dtype)
        if array.size > RESOURCE_OVER:  # Blob.of copies an array anyone may still change
            return self._add(rlx.ConstantOp(ResourceElementsAttr.from_array(name or "cst", t, array)))
        flat = array.reshape(-1).tolist()
        if target.kind is Kind.COMPLEX:
            flat = [(v.real, v.imag) for v in flat]
        # from_list's overloads want the element type statically; dtypes holds int, float and complex ones only
        dense_type = cast("TensorType[Any]", t)
        return self._add(rlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(dense_type, flat)))
