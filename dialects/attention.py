"""Fused attention of the `rlx` dialect: `rlx.attention`.

torch.nn.functional.scaled_dot_product_attention as one op, so the [Sq, Sk]
score matrix never has to exist in memory: with query q [B, Hq, Sq, D],
key k [B, Hkv, Sk, D], value v [B, Hkv, Sk, Dv] and the optional additive
mask (broadcast to [B, Hq, Sq, Sk]),

    out[b, h] = softmax(q[b, h] @ k[b, g]^T · scale + mask[b, h] (+ causal)) @ v[b, g],    g = h // (Hq / Hkv)

Query heads share key/value heads in groups of Hq / Hkv (grouped-query
attention; Hkv = 1 is multi-query attention, Hkv = Hq plain multi-head).
`causal` masks key j for query i when j > i (top-left aligned: torch's
`is_causal`, also when Sq != Sk), on top of the mask if there is one.

```mlir
%o = rlx.attention %q, %k, %v {scale = 0.125 : f64, causal = true}
    : (tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>) -> tensor<1x8x128x64xf32>
%p = rlx.attention %q, %k, %v, %mask {scale = 0.125 : f64}
    : (tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<128x128xf32>) -> tensor<1x8x128x64xf32>
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, Float64Type, FloatAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.broadcast import broadcasts_to
from rlx_mlir.dialects.common import (
    TensorOp,
    bool_attr,
    check_result_shape,
    check_same_element_type,
    element_type,
    shape_of,
)

ATTENTION_TYPES = ("f16", "bf16", "f32", "f64")


def attention_shape(
    query: Sequence[int], key: Sequence[int], value: Sequence[int], mask: Sequence[int] | None = None
) -> tuple[int, ...]:
    """The result shape [B, Hq, Sq, Dv]; ValueError says which rule the operand shapes break."""
    for what, shape in (("query", query), ("key", key), ("value", value)):
        if len(shape) != 4:
            raise ValueError(f"{what} must have rank 4 ([B, H, S, D]), got {list(shape)}")
    b, hq, sq, d = query
    if key[0] != b or value[0] != b:
        raise ValueError(f"query, key and value batch sizes must be equal, got {b}, {key[0]} and {value[0]}")
    if key[1] != value[1]:
        raise ValueError(f"key and value head counts must be equal, got {key[1]} and {value[1]}")
    if key[2] != value[2]:
        raise ValueError(f"key and value sequence lengths must be equal, got {key[2]} and {value[2]}")
    if key[3] != d:
        raise ValueError(f"key head size {key[3]} must equal the query's {d}")
    if key[1] < 1 or hq % key[1]:
        raise ValueError(f"key/value head count {key[1]} must divide the query head count {hq}")
    scores = (b, hq, sq, key[2])
    if mask is not None and (len(mask) > 4 or not broadcasts_to(tuple(mask), scores)):
        raise ValueError(f"mask shape {list(mask)} does not broadcast to the scores' {list(scores)}")
    return (b, hq, sq, value[3])


def default_scale(head_size: int) -> float:
    """1 / sqrt(D), torch's default (1 for D = 0, where every score is 0 anyway)."""
    return 1.0 / math.sqrt(head_size) if head_size else 1.0


@irdl_op_definition
class AttentionOp(TensorOp):
    """`rlx.attention {scale, causal}` (q, k, v, mask?): softmax(q @ k^T · scale + mask) @ v
    per head, with grouped-query head sharing and an optional causal mask.

    Matches torch.nn.functional.scaled_dot_product_attention(q, k, v, mask,
    is_causal=causal, scale=scale, enable_gqa=True). A query row whose keys
    are all masked (every score -inf) gives zeros, as torch's does (checked
    in float64), not NaN. f16 and bf16 are computed in f32 and rounded once."""

    name = "rlx.attention"
    ALLOWED: ClassVar[tuple[str, ...]] = ATTENTION_TYPES
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = prop_def(BoolAttr, default_value=bool_attr(False))

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None,
        scale: float,
        causal: bool,
        result_type: Attribute,
    ) -> None:
        props = {"scale": FloatAttr(scale, Float64Type()), "causal": bool_attr(causal)}
        super().__init__(operands=[query, key, value, mask], result_types=[result_type], properties=props)

    @property
    def is_causal(self) -> bool:
        return bool(self.causal.value.data)

    @property
    def scale_value(self) -> float:
        return float(self.scale.value.data)

    def verify_rules(self) -> None:
        dtype = dtypes.from_ir(element_type(self.query.type))
        if dtype.name not in self.ALLOWED:
            raise VerifyException(f"'{self.name}' element type {dtype.name} is not one of {', '.join(self.ALLOWED)}")
        for what, operand in (("key", self.key), ("value", self.value), ("mask", self.mask), ("result", self.result)):
            if operand is not None:
                check_same_element_type(self, what, operand, self.query)
        if not math.isfinite(self.scale_value):
            raise VerifyException(f"'{self.name}' scale must be finite, got {self.scale_value}")
        mask = shape_of(self.mask.type) if self.mask is not None else None
        try:
            expected = attention_shape(
                shape_of(self.query.type), shape_of(self.key.type), shape_of(self.value.type), mask
            )
        except ValueError as error:
            raise VerifyException(f"'{self.name}' {error}") from None
        check_result_shape(self, expected)


ATTENTION_OPS = (AttentionOp,)
