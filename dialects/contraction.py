"""Contractions of the `rlx` dialect: `rlx.matmul`.

NumPy `matmul` semantics: the last two axes are the matrices, the leading
(batch) axes broadcast; a 1-D lhs is a row vector and a 1-D rhs a column
vector, and the promoted axis is dropped from the result. `transpose_lhs` /
`transpose_rhs` say an operand of rank >= 2 is stored with its last two axes
swapped: `canonicalize-broadcast` folds an `rlx.transpose` into them, which
the kernel passes to BLAS as a transpose flag instead of copying.

```mlir
%y = rlx.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
%z = rlx.matmul %x, %v {transpose_rhs = true} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
```

`rhs_panels = W` says the rhs is stored as the column panels the GEMM
kernels read, [⌈N/W⌉, K, W]: panels[p, k, c] = B[k, p·W + c], zero past N
(`pack-matmul-weights` packs constant weights so, once, at compile time;
the kernels read this property, never guess the layout):

```mlir
%y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<8x64xf32>, tensor<2x64x16xf32>) -> tensor<8x32xf32>
```

Element types: f32, f64 (BLAS sgemm/dgemm), f16 and bf16 (computed in f32,
rounded once), complex<f32>/complex<f64> (cgemm/zgemm), i32 and i64 (wrapping).
An f16/bf16 matmul declares three f32 scratch buffers (the widened lhs and
rhs and the f32 product), which `plan-memory` places for the op's lifetime.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcast_shapes, numel
from rlx_mlir.dialects.common import (
    NeedsScratch,
    TensorOp,
    bool_attr,
    check_result_shape,
    check_same_element_type,
    element_type,
    shape_of,
)

MATMUL_TYPES = ("f16", "bf16", "f32", "f64", "complex<f32>", "complex<f64>", "i32", "i64")
WIDENED_TYPES = ("f16", "bf16")
"""Computed in f32 scratch buffers and rounded once into the result."""


def matrix_dims(shape: Sequence[int], transposed: bool) -> tuple[int, int]:
    """(rows, cols) of the matrix an operand holds, after its stored transpose."""
    rows, cols = shape[-2], shape[-1]
    return (cols, rows) if transposed else (rows, cols)


def matmul_shape(
    lhs: Sequence[int], rhs: Sequence[int], transpose_lhs: bool = False, transpose_rhs: bool = False
) -> tuple[int, ...]:
    """The result shape of np.matmul (after the stored transposes); ValueError says why there is none."""
    if not lhs or not rhs:
        raise ValueError("operands must have rank >= 1")
    if (transpose_lhs and len(lhs) < 2) or (transpose_rhs and len(rhs) < 2):
        raise ValueError("a transposed operand must have rank >= 2")
    m, k = matrix_dims(lhs, transpose_lhs) if len(lhs) > 1 else (1, lhs[0])
    k2, n = matrix_dims(rhs, transpose_rhs) if len(rhs) > 1 else (rhs[0], 1)
    if k != k2:
        raise ValueError(f"contracting dimensions differ: lhs K = {k}, rhs K = {k2}")
    batch = broadcast_shapes(tuple(lhs[:-2]), tuple(rhs[:-2]))
    if batch is None:
        raise ValueError(f"batch dimensions {list(lhs[:-2])} and {list(rhs[:-2])} do not broadcast")
    rows = (m,) if len(lhs) > 1 else ()
    cols = (n,) if len(rhs) > 1 else ()
    return (*batch, *rows, *cols)


PANEL_TYPES = ("f32", "f64")
"""What the register-tile kernels that read an rhs in panels compute in."""


def panels_shape(k: int, n: int, width: int) -> tuple[int, int, int]:
    """The stored shape of op(B) [K, N] in column panels `width` wide: [⌈N/width⌉, K, width]."""
    return (-(-n // width), k, width)


class Product(IRDLOperation, ABC):
    """What `rlx.matmul` and `rlx.contraction_region` (a matmul with its epilogue)
    share: the stored transposes of the operands and the rhs's panels (`rhs_panels`,
    see the module docstring), and the rhs's shape as np.matmul reads it."""

    transpose_lhs = prop_def(BoolAttr, default_value=bool_attr(False))
    transpose_rhs = prop_def(BoolAttr, default_value=bool_attr(False))
    rhs_panels = opt_prop_def(IntegerAttr[I64])

    @property
    @abstractmethod
    def lhs(self) -> SSAValue: ...

    @property
    @abstractmethod
    def rhs(self) -> SSAValue: ...

    @property
    @abstractmethod
    def result(self) -> SSAValue: ...

    @property
    def transposes(self) -> tuple[bool, bool]:
        return bool(self.transpose_lhs.value.data), bool(self.transpose_rhs.value.data)

    @property
    def panels(self) -> int:
        """W of an rhs stored in column panels (`rhs_panels`), 0 for an rhs as it is."""
        return 0 if self.rhs_panels is None else self.rhs_panels.value.data

    @property
    def rhs_shape(self) -> tuple[int, ...]:
        """The rhs's shape as np.matmul reads it: as stored, or the [K, N] its panels
        hold, N the result's last axis. ValueError says why the stored panels cannot be that."""
        rhs = shape_of(self.rhs.type)
        if not self.panels:
            return rhs
        result = shape_of(self.result.type)
        n = result[-1] if result else 0
        if len(rhs) != 3 or rhs != panels_shape(rhs[1], n, self.panels):
            count, _, width = panels_shape(0, n, self.panels)
            raise ValueError(
                f"rhs_panels = {width} needs the rhs as [{count}, K, {width}] for N = {n}, got {list(rhs)}"
            )
        return (rhs[1], n)

    def check_panels(self, dtype: str) -> None:
        """Panels of a positive width that hold B itself (not transposed), for a kernel of PANEL_TYPES."""
        if self.rhs_panels is None:
            return
        if self.panels < 1:
            raise VerifyException(f"'{self.name}' rhs_panels must be positive, got {self.panels}")
        if self.transposes[1]:
            raise VerifyException(
                f"'{self.name}' an rhs in panels (rhs_panels) holds B itself: transpose_rhs must be false"
            )
        if dtype not in PANEL_TYPES:
            raise VerifyException(
                f"'{self.name}' rhs_panels needs an element type of {', '.join(PANEL_TYPES)}, got {dtype}"
            )


@irdl_op_definition
class MatmulOp(TensorOp, NeedsScratch, Product):
    """`rlx.matmul {transpose_lhs, transpose_rhs}` (lhs, rhs): np.matmul, with the
    operands' stored transposes applied first."""

    name = "rlx.matmul"
    ALLOWED: ClassVar[tuple[str, ...]] = MATMUL_TYPES
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        result_type: Attribute,
        transpose_lhs: bool = False,
        transpose_rhs: bool = False,
    ) -> None:
        props = {"transpose_lhs": bool_attr(transpose_lhs), "transpose_rhs": bool_attr(transpose_rhs)}
        super().__init__(operands=[lhs, rhs], result_types=[result_type], properties=props)

    def scratch_bytes(self) -> tuple[int, ...]:
        """f16/bf16: the lhs, the rhs and the product as f32; other types need none."""
        if dtypes.from_ir(element_type(self.result.type)).name not in WIDENED_TYPES:
            return ()
        return tuple(4 * numel(shape_of(v.type)) for v in (self.lhs, self.rhs, self.result))

    def verify_rules(self) -> None:
        check_same_element_type(self, "rhs", self.rhs, self.lhs)
        check_same_element_type(self, "result", self.result, self.lhs)
        dtype = dtypes.from_ir(element_type(self.lhs.type))
        if dtype.name not in self.ALLOWED:
            raise VerifyException(f"'{self.name}' element type {dtype.name} is not one of {', '.join(self.ALLOWED)}")
        self.check_panels(dtype.name)
        try:
            expected = matmul_shape(shape_of(self.lhs.type), self.rhs_shape, *self.transposes)
        except ValueError as error:
            raise VerifyException(f"'{self.name}' {error}") from None
        check_result_shape(self, expected)


CONTRACTION_OPS = (MatmulOp,)
