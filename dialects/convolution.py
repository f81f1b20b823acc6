"""Convolutions and pooling of the `rlx` dialect: `rlx.conv`, `rlx.max_pool`.

torch.nn.functional.conv1d/conv2d/conv3d semantics (a cross-correlation, no
kernel flip) over any number of spatial axes. With input x [N, C, I...],
weight w [M, C/groups, K...] and the optional bias b [M], output channel m of
group g = m // (M/groups) is

    y[n, m, o...] = b[m] + Σ_{c < C/groups, k...} x[n, g·C/groups + c, o·s + k·d − p_before] · w[m, c, k...]

where reads outside [0, I) are zeros (explicit zero padding, `pad_before` and
`pad_after` per spatial axis, which may differ: ONNX's SAME_UPPER/SAME_LOWER
and a causal conv1d's left-only padding). Each output extent is
⌊(I + p_before + p_after − d·(K − 1) − 1) / s⌋ + 1 (`conv_shape`).

```mlir
%y = rlx.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
    pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>, groups = 1 : i64}
    : (tensor<8x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<8x64x56x56xf32>
%p = rlx.max_pool %y {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
    pad_before = array<i64: 1, 1>, pad_after = array<i64: 1, 1>} : (tensor<8x64x56x56xf32>) -> tensor<8x64x28x28xf32>
```

`rlx.max_pool` slides its window the same way (`window_outputs`), with -inf
padding (the integer minimum for integers).

Element types: f32 and f64, and f16/bf16 computed in f32 (a scratch buffer
of the result's size in f32) and rounded once into the result.

Two lowerings, chosen here because they declare different scratch buffers
(`ConvOp.gemm_form`): a direct kernel (f16/bf16 with an f32 scratch), and
for f32/f64 convolutions with enough channels per group, GEMMs per (image,
group, block of output rows): register tiles over the block's zero-padded
input on the kernel's stack, or (for pointwise convs, whose input already is
the matrix, and planes too small for whole tiles) im2col blocks and BLAS.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import I64, DenseArrayBase, IntegerAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import (
    NeedsScratch,
    TensorOp,
    array_values,
    check_result_shape,
    check_same_element_type,
    element_type,
    i64_array,
    i64_attr,
    shape_of,
)

CONV_TYPES = ("f16", "bf16", "f32", "f64")
POOL_TYPES = (*CONV_TYPES, "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
GEMM_TYPES = ("f32", "f64")
GEMM_MIN_CHANNELS = 8
"""Output channels per group, and input channels · taps per group, from which a
conv runs as GEMMs: below, the GEMM is too thin to beat the direct kernel
(depthwise convs always run direct)."""
BLAS_INT_MAX = (1 << 31) - 1
"""CBLAS takes 32-bit sizes: a conv whose GEMM dimension exceeds them runs direct."""
IM2COL_STACK_MAX_BYTES = 2 << 20
"""The largest im2col block a kernel builds on its stack (threads have 8 MiB
stacks); a conv whose one output row needs more runs the direct kernel."""
WIDENED_TYPES = ("f16", "bf16")
WINOGRAD_POINTS = 16
"""The 4x4 points of a Winograd F(2x2, 3x3) tile (`ConvolutionOp.winograd`)."""
WINOGRAD_G = ((1.0, 0.0, 0.0), (0.5, 0.5, 0.5), (0.5, -0.5, 0.5), (0.0, 0.0, 1.0))
"""G of F(2, 3) (Lavin and Gray, 2016): a 3-tap kernel g as 4 points G·g."""
"""Accumulated in an f32 scratch buffer and rounded once into the result."""


@dataclass(frozen=True)
class ConvGeometry:
    """The attributes of a convolution, one entry per spatial axis (and `groups`)."""

    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_before: tuple[int, ...]
    pad_after: tuple[int, ...]
    groups: int = 1

    @classmethod
    def default(cls, spatial: int) -> ConvGeometry:
        """Unit strides and dilations, no padding, one group."""
        return cls((1,) * spatial, (1,) * spatial, (0,) * spatial, (0,) * spatial)


def _check_geometry(geometry: ConvGeometry, spatial: int) -> None:
    """One entry per spatial axis, positive strides and dilations, no negative pad."""
    g = geometry
    for name in ("strides", "dilations", "pad_before", "pad_after"):
        if len(getattr(g, name)) != spatial:
            count = len(getattr(g, name))
            raise ValueError(f"{name} has {count} entries, expected {spatial} (one per spatial axis)")
    if g.groups < 1:
        raise ValueError(f"groups must be at least 1, got {g.groups}")
    if any(s < 1 for s in g.strides):
        raise ValueError(f"strides must be at least 1, got {list(g.strides)}")
    if any(d < 1 for d in g.dilations):
        raise ValueError(f"dilations must be at least 1, got {list(g.dilations)}")
    if any(p < 0 for p in (*g.pad_before, *g.pad_after)):
        raise ValueError(f"pads must be >= 0, got pad_before {list(g.pad_before)} and pad_after {list(g.pad_after)}")


def window_outputs(spatial_in: Sequence[int], kernel: Sequence[int], geometry: ConvGeometry) -> tuple[int, ...]:
    """The output extents of a window of `kernel` sliding over the padded input
    (conv and pooling alike); ValueError says why there are none."""
    g = geometry
    _check_geometry(g, len(spatial_in))
    out = []
    for axis, (i, k, s, d, pb, pa) in enumerate(
        zip(spatial_in, kernel, g.strides, g.dilations, g.pad_before, g.pad_after)
    ):
        if k < 1:
            raise ValueError(f"spatial axis {axis}: the kernel extent must be at least 1, got {k}")
        span = d * (k - 1) + 1
        if i + pb + pa < span:
            raise ValueError(
                f"spatial axis {axis}: the dilated kernel spans {span}, more than the padded input's {i + pb + pa}"
            )
        out.append((i + pb + pa - span) // s + 1)
    return tuple(out)


def _check_input(input: Sequence[int]) -> None:
    if len(input) < 3:
        raise ValueError(f"input must be [N, C, spatial...] with at least one spatial axis, got {list(input)}")


def conv_shape(input: Sequence[int], weight: Sequence[int], geometry: ConvGeometry) -> tuple[int, ...]:
    """The result shape of the convolution; ValueError says why there is none."""
    _check_input(input)
    if len(weight) != len(input):
        raise ValueError(f"weight rank {len(weight)} must equal the input rank {len(input)} ([M, C/groups, kernel...])")
    _check_geometry(geometry, len(input) - 2)
    n, c = input[:2]
    m, per_group = weight[:2]
    g = geometry
    if c % g.groups:
        raise ValueError(f"groups {g.groups} does not divide the {c} input channels")
    if m % g.groups:
        raise ValueError(f"groups {g.groups} does not divide the {m} output channels")
    if per_group * g.groups != c:
        raise ValueError(f"weight has {per_group} input channels per group, expected {c // g.groups} (C/groups)")
    return (n, m, *window_outputs(input[2:], weight[2:], g))


def pool_shape(input: Sequence[int], kernel: Sequence[int], geometry: ConvGeometry) -> tuple[int, ...]:
    """The result shape of a pooling window `kernel` over input [N, C, spatial...]."""
    _check_input(input)
    if len(kernel) != len(input) - 2:
        raise ValueError(f"kernel_shape has {len(kernel)} entries, expected {len(input) - 2} (one per spatial axis)")
    if geometry.groups != 1:
        raise ValueError("a pooling window has no groups")
    return (*input[:2], *window_outputs(input[2:], kernel, geometry))


class SlidingWindowOp(IRDLOperation, ABC):
    """The window geometry `rlx.conv`, `rlx.conv_region` and `rlx.max_pool` share,
    declared once: one entry per spatial axis of `strides`, `dilations`,
    `pad_before` and `pad_after`."""

    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pad_before = prop_def(DenseArrayBase)
    pad_after = prop_def(DenseArrayBase)

    @property
    @abstractmethod
    def input(self) -> SSAValue:
        """The windowed input [N, C, spatial...]."""

    def window(self, groups: int = 1) -> ConvGeometry:
        """The attributes as Python values (verified: one entry per spatial axis)."""
        spatial = len(shape_of(self.input.type)) - 2
        return ConvGeometry(
            array_values(self, "strides", self.strides, spatial),
            array_values(self, "dilations", self.dilations, spatial),
            array_values(self, "pad_before", self.pad_before, spatial),
            array_values(self, "pad_after", self.pad_after, spatial),
            groups,
        )


def window_properties(geometry: ConvGeometry) -> dict[str, Attribute]:
    """The properties of `SlidingWindowOp` for `geometry`."""
    return {
        "strides": i64_array(geometry.strides),
        "dilations": i64_array(geometry.dilations),
        "pad_before": i64_array(geometry.pad_before),
        "pad_after": i64_array(geometry.pad_after),
    }


class ConvolutionOp(SlidingWindowOp, NeedsScratch, ABC):
    """What `rlx.conv` and `rlx.conv_region` (a conv with its epilogue) share: the
    weight, the `groups` and `weight_lanes` properties, and the facts the kernels
    choose their form by.

    `weight_lanes = L` says the weight is stored packed, [M/L, C/groups, K..., L]:
    packed[b, c, k..., l] = w[b·L + l, c, k...], so that L consecutive output
    channels of one (input channel, tap) are one vector (`pack-conv-weights` packs
    constant weights where the lane form of the tiled kernel runs; the lowering
    reads this property, never guesses the layout).

    `winograd` (with `weight_lanes = L`) says the weight is stored in the Winograd
    domain of F(2x2, 3x3), [16, M/L, C, L]: stored[4a + b, j, c, l] = (G·w[j·L + l, c]·Gᵀ)[a, b]
    (`WINOGRAD_G`), for a 2-d 3x3 conv with unit strides and dilations and one
    group; the kernel multiplies 4x4 input tiles in that domain, 16 products per
    2x2 outputs where the direct sum takes 36."""

    groups = prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    weight_lanes = opt_prop_def(IntegerAttr[I64])
    winograd = opt_prop_def(UnitAttr)

    @property
    @abstractmethod
    def weight(self) -> SSAValue: ...

    @property
    @abstractmethod
    def result(self) -> SSAValue: ...

    @property
    def geometry(self) -> ConvGeometry:
        return self.window(self.groups.value.data)

    @property
    def lanes(self) -> int:
        """L of a packed weight (`weight_lanes`), 0 for a weight as torch stores it."""
        return 0 if self.weight_lanes is None else self.weight_lanes.value.data

    @property
    def weight_shape(self) -> tuple[int, ...]:
        """The weight's shape as torch has it, [M, C/groups, K...], packed or not."""
        stored = shape_of(self.weight.type)
        if self.winograd is not None and len(stored) == 4:
            return (stored[1] * stored[-1], stored[2], 3, 3)
        if not self.lanes:
            return stored
        return (stored[0] * stored[-1], *stored[1:-1])

    @property
    def pointwise(self) -> bool:
        """A 1x1 kernel, unit strides, no padding: the input planes are the GEMM's rhs as they are."""
        g = self.geometry
        kernel = self.weight_shape[2:]
        return all(k == 1 for k in kernel) and all(s == 1 for s in g.strides) and not any(g.pad_before + g.pad_after)

    def im2col_row_bytes(self) -> int:
        """The bytes of the im2col matrix of one output row: [C/groups · taps, row columns]."""
        item = dtypes.from_ir(element_type(self.result.type)).nbytes
        weight, result = self.weight_shape, shape_of(self.result.type)
        return item * weight[1] * numel(weight[2:]) * numel(result[3:])

    def gemm_form(self) -> bool:
        """Whether the conv lowers to im2col and GEMMs (else to the direct kernel)."""
        if dtypes.from_ir(element_type(self.result.type)).name not in GEMM_TYPES:
            return False
        weight = self.weight_shape
        out_per_group, depth = weight[0] // self.geometry.groups, weight[1] * numel(weight[2:])
        if out_per_group < GEMM_MIN_CHANNELS or depth < GEMM_MIN_CHANNELS:
            return False
        if not self.pointwise and self.im2col_row_bytes() > IM2COL_STACK_MAX_BYTES:
            return False
        return max(depth, numel(shape_of(self.result.type)[2:])) <= BLAS_INT_MAX

    def scratch_bytes(self) -> tuple[int, ...]:
        """f16/bf16: the result accumulated in f32; other types need none (the GEMM
        form builds its im2col blocks on the stack)."""
        if dtypes.from_ir(element_type(self.result.type)).name in WIDENED_TYPES:
            return (4 * numel(shape_of(self.result.type)),)
        return ()

    def verify_convolution(self) -> None:
        """The element types and shapes of input, weight and result."""
        dtype = dtypes.from_ir(element_type(self.input.type))
        if dtype.name not in CONV_TYPES:
            raise VerifyException(f"'{self.name}' element type {dtype.name} is not one of {', '.join(CONV_TYPES)}")
        check_same_element_type(self, "weight", self.weight, self.input)
        check_same_element_type(self, "result", self.result, self.input)
        if len(shape_of(self.input.type)) < 3:
            shape = list(shape_of(self.input.type))
            raise VerifyException(f"'{self.name}' input must be [N, C, spatial...] with a spatial axis, got {shape}")
        self.verify_packing()
        try:
            expected = conv_shape(shape_of(self.input.type), self.weight_shape, self.geometry)
        except ValueError as error:
            raise VerifyException(f"'{self.name}' {error}") from None
        check_result_shape(self, expected)

    def verify_packing(self) -> None:
        """A packed weight: rank one more than the input's, L last, L dividing each group's channels."""
        if self.weight_lanes is None:
            if self.winograd is not None:
                raise VerifyException(f"'{self.name}' winograd needs weight_lanes")
            return
        lanes, stored = self.lanes, list(shape_of(self.weight.type))
        if lanes < 1:
            raise VerifyException(f"'{self.name}' weight_lanes must be positive, got {lanes}")
        if self.winograd is not None:
            self.verify_winograd(lanes, stored)
            return
        if len(stored) != len(shape_of(self.input.type)) + 1 or stored[-1] != lanes:
            raise VerifyException(
                f"'{self.name}' weight_lanes {lanes} needs the weight packed as [M/{lanes}, C/groups, kernel..., "
                f"{lanes}], got {stored}"
            )
        if (stored[0] * lanes // self.geometry.groups) % lanes:
            raise VerifyException(
                f"'{self.name}' weight_lanes {lanes} must divide the {stored[0] * lanes // self.geometry.groups} "
                "output channels of a group"
            )

    def verify_winograd(self, lanes: int, stored: list[int]) -> None:
        """F(2x2, 3x3): a 2-d conv, unit strides and dilations, one group, [16, M/L, C, L]."""
        g = self.geometry
        if len(shape_of(self.input.type)) != 4 or g.groups != 1:
            raise VerifyException(f"'{self.name}' winograd needs a 2-d conv with one group")
        if any(s != 1 for s in g.strides + g.dilations):
            raise VerifyException(f"'{self.name}' winograd needs unit strides and dilations")
        if len(stored) != 4 or stored[0] != WINOGRAD_POINTS or stored[-1] != lanes:
            raise VerifyException(
                f"'{self.name}' winograd needs the weight as [{WINOGRAD_POINTS}, M/{lanes}, C, {lanes}], got {stored}"
            )


@irdl_op_definition
class ConvOp(TensorOp, ConvolutionOp):
    """`rlx.conv {strides, dilations, pad_before, pad_after, groups}` (x, w, bias?):
    torch's conv1d/conv2d/conv3d (cross-correlation) with explicit zero padding."""

    name = "rlx.conv"
    ALLOWED: ClassVar[tuple[str, ...]] = CONV_TYPES
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None,
        geometry: ConvGeometry,
        result_type: Attribute,
    ) -> None:
        props = {**window_properties(geometry), "groups": i64_attr(geometry.groups)}
        super().__init__(operands=[input, weight, bias], result_types=[result_type], properties=props)

    def verify_rules(self) -> None:
        if self.bias is not None:
            check_same_element_type(self, "bias", self.bias, self.input)
            weight, bias = self.weight_shape, shape_of(self.bias.type)
            if len(weight) >= 1 and bias != (weight[0],):
                raise VerifyException(
                    f"'{self.name}' bias shape {list(bias)} must be [{weight[0]}] (one per output channel)"
                )
        self.verify_convolution()


@irdl_op_definition
class MaxPoolOp(TensorOp, SlidingWindowOp):
    """`rlx.max_pool {kernel_shape, strides, dilations, pad_before, pad_after}` (x):
    torch's max_pool1d/2d/3d, the maximum of each window over x [N, C, spatial...];
    padding is -inf, or the integer type's minimum (never chosen over a real input),
    NaN propagates (as np.maximum)."""

    name = "rlx.max_pool"
    ALLOWED: ClassVar[tuple[str, ...]] = POOL_TYPES
    input = operand_def(TensorType)
    result = result_def(TensorType)
    kernel_shape = prop_def(DenseArrayBase)

    def __init__(self, input: SSAValue, kernel: Sequence[int], geometry: ConvGeometry, result_type: Attribute) -> None:
        props = {"kernel_shape": i64_array(kernel), **window_properties(geometry)}
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    @property
    def kernel(self) -> tuple[int, ...]:
        return array_values(self, "kernel_shape", self.kernel_shape, len(shape_of(self.input.type)) - 2)

    @property
    def geometry(self) -> ConvGeometry:
        return self.window()

    def verify_rules(self) -> None:
        dtype = dtypes.from_ir(element_type(self.input.type))
        if dtype.name not in self.ALLOWED:
            raise VerifyException(f"'{self.name}' element type {dtype.name} is not one of {', '.join(self.ALLOWED)}")
        check_same_element_type(self, "result", self.result, self.input)
        shape = shape_of(self.input.type)
        if len(shape) < 3:
            raise VerifyException(
                f"'{self.name}' input must be [N, C, spatial...] with a spatial axis, got {list(shape)}"
            )
        try:
            expected = pool_shape(shape, self.kernel, self.geometry)
        except ValueError as error:
            raise VerifyException(f"'{self.name}' {error}") from None
        check_result_shape(self, expected)


CONVOLUTION_OPS = (ConvOp, MaxPoolOp)
