"""Build an rlx graph from Python without writing IR text.

    b = Builder("f")
    x = b.input((4, 3), "f32")
    bias = b.input((3,), "f32")
    y = b.tanh(b.add(x, bias))          # result shapes follow NumPy broadcasting
    b.output(y)
    exe = rlx_mlir.compile(b.module())

Every unary, binary and compare op of the dialect is a method of the same name
(`b.gelu(x)`, `b.atan2(y, x)`, `b.lt(a, b)`); the op tables in the dialect are
the only list of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes
from rlx_mlir.compiler import verify
from rlx_mlir.dialects import rlx
from rlx_mlir.errors import VerificationError


def tensor_type(shape: Sequence[int], dtype: str | Attribute) -> TensorType:
    element = dtypes.from_name(dtype).ir_type if isinstance(dtype, str) else dtype
    return TensorType(element, list(shape))


class Builder:
    """Appends rlx ops to one function; `module()` returns the verified module."""

    def __init__(self, name: str = "main") -> None:
        self.name = name
        self.block = Block()
        self.results: list[SSAValue] = []

    def input(self, shape: Sequence[int], dtype: str = "f32") -> SSAValue:
        return self.block.insert_arg(tensor_type(shape, dtype), len(self.block.args))

    def output(self, *values: SSAValue) -> None:
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
        shape = broadcast_shapes(*(rlx.shape_of(v.type) for v in values))
        if shape is None:
            shapes = ", ".join(str(list(rlx.shape_of(v.type))) for v in values)
            raise VerificationError(f"operands have incompatible broadcast shapes ({shapes})")
        return TensorType(element or rlx.element_type(values[-1].type), list(shape))

    # op families -----------------------------------------------------------
    def unary(self, name: str, x: SSAValue) -> SSAValue:
        return self._add(rlx.UNARY_OPS[name](x))

    def binary(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(rlx.BINARY_OPS[name](a, b, self._broadcast_type(a, b)))

    def compare(self, name: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(rlx.COMPARE_OPS[name](a, b, self._broadcast_type(a, b, element=i1)))

    def __getattr__(self, name: str) -> Callable[..., SSAValue]:
        for table, family in ((rlx.UNARY_OPS, self.unary), (rlx.BINARY_OPS, self.binary), (rlx.COMPARE_OPS, self.compare)):
            if name in table:
                return lambda *operands: family(name, *operands)
        raise AttributeError(f"Builder has no op '{name}'")

    def where(self, condition: SSAValue, t: SSAValue, f: SSAValue) -> SSAValue:
        return self._add(rlx.WhereOp(condition, t, f, self._broadcast_type(condition, t, f, element=rlx.element_type(t.type))))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self._add(rlx.FmaOp(a, b, c, self._broadcast_type(a, b, c)))

    def cast(self, x: SSAValue, dtype: str) -> SSAValue:
        return self._add(rlx.CastOp(x, tensor_type(rlx.shape_of(x.type), dtype)))

    def expand(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self._add(rlx.ExpandOp(x, TensorType(rlx.element_type(x.type), list(shape))))

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self._add(rlx.ReshapeOp(x, TensorType(rlx.element_type(x.type), list(shape))))

    def constant(self, value: np.ndarray | float, dtype: str = "f32") -> SSAValue:
        array = np.asarray(value, dtype=dtypes.from_name(dtype).numpy)
        t = tensor_type(array.shape, dtype)
        flat = array.reshape(-1).tolist()
        return self._add(rlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, flat)))
