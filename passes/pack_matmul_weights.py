"""pack-matmul-weights: constant GEMM weights stored as the column panels the kernel reads.

The packed-panel GEMM kernel (`lowering/kernels/contraction.py`) streams the
rows of A past column panels of B, K x W each (W the columns of a register
tile), that it packs into a stack buffer at every call. For a weight that is
a constant, that copy is the same at every call, and it is not cheap: B's
rows, W columns at a time, are a cache line a page apart. A decode step's
GEMMs of 8 rows spend more time packing than multiplying. So where that
kernel runs (`packed_panel_width`, the target's model) and the rhs is a
constant, this pass stores it in panels once, at compile time, as
onnxruntime prepacks the weights of its MatMul:

```mlir
%w = rlx.constant dense_resource<w> : tensor<64x40xf32>
%y = rlx.matmul %x, %w : (tensor<128x64xf32>, tensor<64x40xf32>) -> tensor<128x40xf32>
// becomes, for panels of 16 (AVX2, f32):
%p = rlx.constant dense_resource<w_panels16> : tensor<3x64x16xf32>
%y = rlx.matmul %x, %p {rhs_panels = 16 : i64} : (tensor<128x64xf32>, tensor<3x64x16xf32>) -> tensor<128x40xf32>
```

panels[p, k, c] = op(B)[k, p·W + c], zero past N: a transposed weight
(`transpose_rhs`) is stored untransposed in its panels. `rlx.contraction_region`
is packed alike. A weight computed at run time stays as it is and is
packed by each call. The packed constant's digest, which the compile cache
keys its bytes by, is derived from the weight's and the layout (packing is a
function of both), so a model's weights are not hashed again. The pass is
target-specific, like lower-to-llvm and pack-conv-weights, and runs after
the tensor passes (and autodiff: a matmul reading panels has no adjoint),
before plan-memory.
"""

from __future__ import annotations

import hashlib
import mmap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.rewriter import InsertPoint, Rewriter

from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import bool_attr, element_type, i64_attr
from rlx_mlir.dialects.resources import ResourceElementsAttr, declare_digest, immutable
from rlx_mlir.lowering.kernels.contraction import packed_panel_width
from rlx_mlir.passes.lower_to_llvm import WeightLayoutPass, erase_replaced
from rlx_mlir.tuning import Tuning


def panels(weight: np.ndarray, transposed: bool, width: int) -> np.ndarray:
    """op(B) [K, N] as [⌈N/width⌉, K, width] column panels, zero past N; read-only.
    One strided copy from the weight as stored (a transposed one is never transposed
    whole first: a [768, 3072] one took 35 ms that way, 6.5 ms this way)."""
    n, k = weight.shape if transposed else weight.shape[::-1]
    whole, rest = divmod(n, width)
    stored, frozen = _own_pages(ct.panels_shape(k, n, width), weight.dtype)
    if transposed:
        stored[:whole] = weight[: whole * width].reshape(whole, width, k).transpose(0, 2, 1)
        stored[whole:, :, :rest] = weight[whole * width :].T
    else:
        stored[:whole] = weight[:, : whole * width].reshape(k, whole, width).transpose(1, 0, 2)
        stored[whole:, :, :rest] = weight[:, whole * width :]
    return frozen


def _own_pages(shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """A zeroed array in pages of its own (an anonymous map) and a read-only view of
    it, which keeps the map. The compile writes the panels to the disk cache and
    reads them from there, so these die with it; from the heap, their pages stayed
    in its free lists (BERT-base's 226 MB of panels: 318 MB anonymous after its
    compile, 94 MB after malloc_trim); a map goes back to the system."""
    count = int(np.prod(shape))
    pages = mmap.mmap(-1, max(1, count * dtype.itemsize))
    stored = np.frombuffer(pages, dtype, count).reshape(shape)
    return stored, np.frombuffer(memoryview(pages).toreadonly(), dtype, count).reshape(shape)


def _digest(constant: rlx.ConstantOp) -> str:
    """The digest of a constant's bytes: its blob's (declared by the ONNX loader, else
    hashed once), or a hash of a dense literal's values."""
    value = constant.value
    if isinstance(value, ResourceElementsAttr):
        return value.blob.data.digest()
    return hashlib.blake2b(np.ascontiguousarray(constant.values()).tobytes(), digest_size=16).hexdigest()


Known = Callable[[str, np.dtype], np.ndarray | None]
"""Bytes some live executable already reads, by their blob's digest and element
type (the compiler's `_live_bytes`): a model compiled at a new input shape reads
the panels its first shape packed, and packs nothing again."""


def _panels_constant(constant: rlx.ConstantOp, transposed: bool, width: int, known: Known | None) -> rlx.ConstantOp:
    weight = constant.values()
    layout = f"panels {width} of {'Bᵀ' if transposed else 'B'}"
    digest = hashlib.blake2b(f"{layout}: {_digest(constant)}".encode(), digest_size=16).hexdigest()
    n, k = weight.shape if transposed else weight.shape[::-1]
    shape = ct.panels_shape(k, n, width)
    found = None if known is None else known(digest, weight.dtype)
    if found is not None and immutable(found) and found.nbytes == np.prod(shape) * weight.dtype.itemsize:
        stored = found.view(weight.dtype).reshape(shape)
    else:
        stored = panels(weight, transposed, width)
    declare_digest(stored, digest)
    value = constant.value
    handle = value.resource_handle.data if isinstance(value, ResourceElementsAttr) else "matmul_weight"
    t = TensorType(element_type(constant.result.type), stored.shape)
    new = rlx.ConstantOp(ResourceElementsAttr.from_array(f"{handle}_panels{width}", t, stored))
    if constant.result.name_hint:  # an ONNX initializer's name, say: the panels keep it
        new.result.name_hint = f"{constant.result.name_hint}_panels{width}"
    return new


def pack_matmul_weights(module: ModuleOp, tuning: Tuning, known: Known | None = None) -> None:
    """Every product with a constant rhs that the emitted GEMM kernels run reads it in
    panels; a constant several products read is stored once per layout. An op's own
    `rlx.tuning` (a measured choice of the BLAS, say) decides for it."""
    done: dict[tuple[rlx.ConstantOp, bool, int], rlx.ConstantOp] = {}
    for op in [op for op in module.walk() if isinstance(op, ct.Product)]:
        constant = rlx.stored_weight(op.rhs)
        if constant is None:
            continue
        width = packed_panel_width(op, tuning.for_op(op))
        if not width:
            continue
        transposed = op.transposes[1]
        if (constant, transposed, width) not in done:
            new = _panels_constant(constant, transposed, width, known)
            Rewriter.insert_op(new, InsertPoint.after(constant))
            done[constant, transposed, width] = new
        op.operands[1] = done[constant, transposed, width].result
        op.properties["transpose_rhs"] = bool_attr(False)
        op.properties["rhs_panels"] = i64_attr(width)
    erase_replaced({constant for constant, _, _ in done})


@dataclass(frozen=True)
class PackMatmulWeightsPass(WeightLayoutPass):
    name = "pack-matmul-weights"

    def rewrite(self, module: ModuleOp, tuning: Tuning) -> None:
        pack_matmul_weights(module, tuning)
