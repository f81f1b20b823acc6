"""fuse-mamba2 (passes/fuse_mamba2.py) end to end: transformers' own chunked scan
(`mamba2_chunk_scan`, the CPU path of Mamba2 and of the hybrids built on it),
exported by torch, becomes one `rlx.mamba2` in the default pipeline and
matches torch and a float64 step-by-step reference; the suite's Mamba2,
exported by both of torch's exporters, has one `rlx.mamba2` per layer and
still matches. The IR the pass reads and the cases it must leave alone are
lit tests (tests/lit/fuse-mamba2/).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
import torch
from model_suite import TINY, export
from pipelines import NO_GRAPH_PASSES, count, tensor_passes
from test_models import assert_matches_onnxruntime, exported, fused_tiny_model
from test_state_space import mamba2_reference
from transformers.models.mamba2.modeling_mamba2 import mamba2_chunk_scan

import rlx_mlir as rlx
from rlx_mlir.dialects.contraction import MatmulOp
from rlx_mlir.dialects.recurrent import Mamba2Op
from rlx_mlir.dialects.scan import ScanOp
from rlx_mlir.frontends.onnx import load
from rlx_mlir.passes.default_pipeline import tensor_pipeline_without
from rlx_mlir.passes.fuse_mamba2 import FuseMamba2Pass

pytestmark = pytest.mark.slow  # exports take seconds each


@dataclass(frozen=True)
class Case:
    """A chunked scan's sizes: batch, steps, heads, head dim, state size, groups of
    B and C (repeated over the heads), chunk length; a carried initial state; the
    final state returned too."""

    name: str
    batch: int = 2
    seq: int = 10
    heads: int = 3
    p: int = 4
    n: int = 5
    groups: int = 1
    chunk: int = 4
    carried: bool = False
    final: bool = False


CASES = [
    Case("padded_to_three_chunks"),
    Case("whole_chunks", seq=12),
    Case("one_chunk", seq=3, chunk=8),
    Case("grouped_b_and_c", heads=4, groups=2),
    Case("carried_state", carried=True),
    Case("carried_and_final_state", carried=True, final=True),
]


class ChunkScan(torch.nn.Module):
    """`mamba2_chunk_scan` over x [b, S, h, p], dt [b, S, h], B, C [b, S, g, n] (and an
    initial state [b, h, p, n]), with Mamba2's a = -exp(A_log) < 0."""

    def __init__(self, case: Case) -> None:
        super().__init__()
        self.case = case
        self.a = torch.nn.Parameter(-torch.exp(torch.linspace(-1.0, 1.0, case.heads)))

    def forward(
        self, x: torch.Tensor, dt: torch.Tensor, b: torch.Tensor, c: torch.Tensor, state: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        case = self.case
        return mamba2_chunk_scan(
            x, dt, self.a, b, c, chunk_size=case.chunk, initial_states=state, return_final_states=case.final
        )


def inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Mamba2's ranges: dt > 0 (a softplus)."""
    shapes = {
        "x": (case.batch, case.seq, case.heads, case.p),
        "dt": (case.batch, case.seq, case.heads),
        "b": (case.batch, case.seq, case.groups, case.n),
        "c": (case.batch, case.seq, case.groups, case.n),
        **({"state": (case.batch, case.heads, case.p, case.n)} if case.carried else {}),
    }
    arrays = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    arrays["dt"] = np.log1p(np.exp(arrays["dt"]))
    return arrays


@cache
def exported_scan(case: Case, exporter: str) -> tuple[ChunkScan, bytes, dict[str, np.ndarray]]:
    module = ChunkScan(case)
    feeds = inputs(case, np.random.default_rng(0))
    return module, export(module, feeds, {}, ["y", "state"] if case.final else ["y"], exporter), feeds


def reference(module: ChunkScan, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The recurrence step by step in float64, B and C repeated over the heads: y (and
    the final state)."""
    heads = module.case.heads
    a = module.a.detach().numpy().astype(np.float64)
    x, dt, b, c = (feeds[k].astype(np.float64) for k in ("x", "dt", "b", "c"))
    b, c = (np.repeat(v, heads // module.case.groups, axis=2) for v in (b, c))
    y, state = mamba2_reference(x, dt, a, b, c, feeds.get("state"))
    return [y, state] if module.case.final else [y]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_chunked_scan_becomes_one_mamba2_and_matches_float64(case: Case) -> None:
    module, blob, feeds = exported_scan(case, "torchscript")
    fused = tensor_passes(load(blob))
    assert (count(fused, Mamba2Op), count(fused, ScanOp), count(fused, MatmulOp)) == (1, 0, 0)
    got = rlx.compile(fused, pipeline=NO_GRAPH_PASSES)(*feeds.values())
    with torch.no_grad():
        want = module(*(torch.from_numpy(v) for v in feeds.values()))
    for result, torch_result, float64 in zip(
        got, want if case.final else [want], reference(module, feeds), strict=True
    ):
        np.testing.assert_allclose(result, torch_result.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(result, float64, rtol=1e-4, atol=1e-5)


def test_the_dynamo_export_of_a_chunked_scan_becomes_one_mamba2() -> None:
    case = CASES[0]
    module, blob, feeds = exported_scan(case, "dynamo")
    fused = tensor_passes(load(blob))
    assert (count(fused, Mamba2Op), count(fused, ScanOp)) == (1, 0)
    (got,) = rlx.compile(fused, pipeline=NO_GRAPH_PASSES)(*feeds.values())
    np.testing.assert_allclose(got, reference(module, feeds)[0], rtol=1e-4, atol=1e-5)


def test_without_the_pass_the_chunked_scan_stays_and_matches_too() -> None:
    """The baseline the rewrite replaces: the same export through every other tensor pass."""
    module, blob, feeds = exported_scan(CASES[0], "torchscript")
    unfused = rlx.compile(load(blob), pipeline=tensor_pipeline_without(FuseMamba2Pass.name))
    (got,) = unfused(*feeds.values())
    np.testing.assert_allclose(got, reference(module, feeds)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("exporter", ["torchscript", "dynamo"])
def test_suite_mamba2_runs_one_mamba2_per_layer_and_matches(exporter: str) -> None:
    """Both exporters' Mamba2 (the same ops once canonicalized): every layer's chunked
    scan is one rlx.mamba2, and the model still matches torch (and onnxruntime, which
    refuses the TorchScript export: tests/model_suite.py's ONNXRUNTIME_REJECTS)."""
    module, blob, feeds = fused_tiny_model("mamba2", exporter, seq=8)
    assert (count(module, Mamba2Op), count(module, ScanOp)) == (TINY.layers, 0)
    model, _ = exported("mamba2", exporter)
    (got,) = rlx.compile(module, pipeline=NO_GRAPH_PASSES, threads=2)(*feeds.values())
    with torch.no_grad():
        want = model(torch.from_numpy(next(iter(feeds.values())))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    if exporter == "dynamo":
        assert_matches_onnxruntime(module, blob, feeds)
