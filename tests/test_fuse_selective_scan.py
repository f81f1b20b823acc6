"""fuse-selective-scan (passes/fuse_selective_scan.py) end to end: Mamba's
scan unrolled step by step, built with the Builder as transformers writes it
(`mamba_selective_scan`'s CPU loop), becomes one `rlx.selective_scan` in the
default pipeline and matches a float64 NumPy loop; the suite's Mamba,
exported by both of torch's exporters, has one scan per layer after the
pipeline and still matches onnxruntime. The cases the pass must leave alone
are lit tests (tests/lit/fuse-selective-scan/leaves-alone.mlir).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from closeness import FLOAT_TYPES, UNIT_ROUNDOFF, assert_close, largest
from model_suite import TINY
from pipelines import NO_GRAPH_PASSES, count, tensor_passes
from test_models import assert_matches_onnxruntime, fused_tiny_model
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import rlx_mlir as rlx
from rlx_mlir.dialects.movement import ConcatOp, GatherOp
from rlx_mlir.dialects.recurrent import SelectiveScanOp

B, D, L, N = 2, 8, 6, 4
"""Batch, channels, steps, state size."""


@dataclass(frozen=True)
class Variant:
    """How the unrolled scan is written: a carried initial state (else zeros), the
    last state returned too, the readouts stacked by time ([B, L, D], else [B, D, L])."""

    name: str
    carried: bool = False
    final: bool = False
    channels_last: bool = False


VARIANTS = [
    Variant("transformers"),
    Variant("carried_and_final_state", carried=True, final=True),
    Variant("channels_last", channels_last=True),
]


def unrolled(variant: Variant, dtype: str) -> ModuleOp:
    """x, Δ [B, D, L], A [D, N], B, C [B, L, N] (and h₀ [B, D, N]) -> y (and the last state)."""
    b = rlx.Builder(variant.name)
    x, dt = b.input((B, D, L), dtype), b.input((B, D, L), dtype)
    a, bm, c = b.input((D, N), dtype), b.input((B, L, N), dtype), b.input((B, L, N), dtype)
    h: SSAValue = b.input((B, D, N), dtype) if variant.carried else b.constant(np.zeros((B, D, N)), dtype)
    dt4 = b.reshape(dt, (B, D, L, 1))
    decay = b.exp(b.mul(b.reshape(a, (1, D, 1, N)), dt4))
    drive = b.mul(b.mul(dt4, b.reshape(bm, (B, 1, L, N))), b.reshape(x, (B, D, L, 1)))
    readouts = []
    for i in range(L):
        step = b.constant(np.int64(i))
        h = b.add(b.mul(b.gather(decay, step, axis=2), h), b.gather(drive, step, axis=2))
        y = b.matmul(h, b.reshape(b.gather(c, step, axis=1), (B, N, 1)))
        readouts.append(b.reshape(y, (B, 1, D)) if variant.channels_last else y)
    b.output(b.concat(readouts, axis=1 if variant.channels_last else 2), *([h] if variant.final else []))
    return b.module()


def inputs(variant: Variant, dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    """Mamba's ranges: Δ > 0 (a softplus), A < 0 (-exp(A_log)), so every decay is in (0, 1)."""
    shapes = [(B, D, L), (B, D, L), (D, N), (B, L, N), (B, L, N), *([(B, D, N)] if variant.carried else [])]
    arrays = [rng.standard_normal(shape) for shape in shapes]
    arrays[1] = np.log1p(np.exp(arrays[1]))
    arrays[2] = -np.exp(arrays[2])
    return [array.astype(FLOAT_TYPES[dtype]) for array in arrays]


def reference(variant: Variant, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The loop of transformers' `mamba_selective_scan` in float64."""
    x, dt, a, bm, c, *carried = (array.astype(np.float64) for array in arrays)
    h = carried[0] if carried else np.zeros((B, D, N))
    ys = []
    for i in range(L):
        delta = dt[:, :, i, None]
        h = np.exp(delta * a) * h + delta * bm[:, None, i, :] * x[:, :, i, None]
        ys.append(h @ c[:, i, :, None])
    y = np.concatenate(ys, axis=2)
    y = np.swapaxes(y, 1, 2) if variant.channels_last else y
    return [y, h] if variant.final else [y]


@pytest.mark.parametrize("dtype", sorted(FLOAT_TYPES))
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda variant: variant.name)
def test_an_unrolled_scan_becomes_one_selective_scan_and_matches_float64(variant: Variant, dtype: str) -> None:
    fused = tensor_passes(unrolled(variant, dtype))
    assert (count(fused, SelectiveScanOp), count(fused, ConcatOp), count(fused, GatherOp)) == (1, 0, 0)
    arrays = inputs(variant, dtype, np.random.default_rng(0))
    got = rlx.compile(fused, pipeline=NO_GRAPH_PASSES)(*arrays)
    # a few unit roundoffs of the largest output: the kernel keeps the state in f32 (f64)
    # and rounds each output once, where the unrolled f16/bf16 graph rounds every step
    for result, want in zip(got, reference(variant, arrays), strict=True):
        assert result.dtype == FLOAT_TYPES[dtype]
        assert_close(result, want, rtol=0, atol=8 * UNIT_ROUNDOFF[dtype] * largest(want))


@pytest.mark.slow  # exports take seconds each
@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_suite_mamba_runs_one_selective_scan_per_layer_and_matches_onnxruntime(exporter: str) -> None:
    """Both exporters' Mamba (the same steps once canonicalized; dynamo writes A
    as a folded constant, TorchScript as -exp(A_log)): every layer's steps are one
    rlx.selective_scan, and the model still matches onnxruntime."""
    module, blob, feeds = fused_tiny_model("mamba", exporter, seq=8)
    assert (count(module, SelectiveScanOp), count(module, ConcatOp)) == (TINY.layers, 0)
    assert_matches_onnxruntime(module, blob, feeds)
