"""pack-conv-weights: constant conv weights stored as the lane form of the conv reads them.

The tiled conv kernel (`lowering/kernels/conv.py`) puts output positions in a
vector's lanes: its register tiles compute whole vectors of positions, the
padding columns of its input block and the rest of the last vector included.
On small planes that is much of the work (ResNet's 14x14 planes compute 16
places a row for 14 outputs, its 7x7 ones 64 for 49). Its lane form puts output
channels in the lanes instead and computes only real outputs, but it reads L
consecutive output channels of one (input channel, tap) as one vector, which
the weight as torch stores it, [M, C/groups, K...], holds L · C/groups · taps
elements apart. So where the lane form is the faster one (`packed_lanes`, the
target's model) and the weight is a constant, this pass stores it packed once,
at compile time, as onnxruntime reorders the weights of its NCHWc convs:

```mlir
%w = rlx.constant dense_resource<w> : tensor<32x16x3x3xf32>
%y = rlx.conv %x, %w {...} : (tensor<1x16x14x14xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x14x14xf32>
// becomes, for 16 lanes (AVX-512, f32):
%p = rlx.constant dense_resource<w_lanes16> : tensor<2x16x3x3x16xf32>
%y = rlx.conv %x, %p {..., weight_lanes = 16 : i64} : (tensor<1x16x14x14xf32>, tensor<2x16x3x3x16xf32>) -> ...
```

packed[b, c, k..., l] = w[b·L + l, c, k...]. A 3x3 stride-1 conv that runs the
Winograd form instead (`winograd_form`) gets its weight transformed into the 16
points of F(2x2, 3x3), [16, M/L, C, L] (`winograd_weight`), and the `winograd`
property. A weight computed at run time (a training step's) stays as it is and
runs the tiled form's positions. The pass
is target-specific, like lower-to-llvm, and runs after the tensor passes (and
autodiff, which has no adjoint for a packed weight), before plan-memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import element_type, i64_attr
from rlx_mlir.dialects.resources import ResourceElementsAttr
from rlx_mlir.lowering.kernels.conv import packed_lanes, winograd_form, winograd_weight
from rlx_mlir.passes.lower_to_llvm import WeightLayoutPass, erase_replaced
from rlx_mlir.tuning import Tuning


def packed(weight: np.ndarray, lanes: int) -> np.ndarray:
    """[M, C/groups, K...] as [M/L, C/groups, K..., L]: L output channels last."""
    blocks = weight.reshape(weight.shape[0] // lanes, lanes, *weight.shape[1:])
    return np.ascontiguousarray(np.moveaxis(blocks, 1, -1))


def _handle(constant: rlx.ConstantOp) -> str:
    value = constant.value
    name = value.resource_handle.data if isinstance(value, ResourceElementsAttr) else "conv_weight"
    return name


def pack_conv_weights(module: ModuleOp, tuning: Tuning) -> None:
    """Every conv with a constant weight whose Winograd or lane form `tuning` prefers reads it
    transformed or packed; a constant several convs read is stored once per layout. An op's
    own `rlx.tuning` (a measured choice of the positions form, say) decides for it."""
    done: dict[tuple[rlx.ConstantOp, int, bool], rlx.ConstantOp] = {}
    for op in [op for op in module.walk() if isinstance(op, cv.ConvolutionOp)]:
        constant = rlx.stored_weight(op.weight)
        if op.lanes or constant is None:
            continue
        own = tuning.for_op(op)
        lanes = winograd_form(op, own)
        winograd = bool(lanes)
        lanes = lanes or packed_lanes(op, own)
        if not lanes:
            continue
        if (constant, lanes, winograd) not in done:
            weight = constant.values()
            array = winograd_weight(weight, lanes) if winograd else packed(weight, lanes)
            suffix = f"winograd{lanes}" if winograd else f"lanes{lanes}"
            t = TensorType(element_type(constant.result.type), array.shape)
            new = rlx.ConstantOp(ResourceElementsAttr.from_array(f"{_handle(constant)}_{suffix}", t, array))
            Rewriter.insert_op(new, InsertPoint.after(constant))
            done[constant, lanes, winograd] = new
        op.operands[1] = done[constant, lanes, winograd].result
        op.properties["weight_lanes"] = i64_attr(lanes)
        if winograd:
            op.properties["winograd"] = UnitAttr()
    erase_replaced({constant for constant, _, _ in done})


@dataclass(frozen=True)
class PackConvWeightsPass(WeightLayoutPass):
    name = "pack-conv-weights"

    def rewrite(self, module: ModuleOp, tuning: Tuning) -> None:
        pack_conv_weights(module, tuning)
