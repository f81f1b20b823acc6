"""fuse-mamba2 (passes/fuse_mamba2.py) end to end: transformers' own chunked scan
(`mamba2_chunk_scan`, the CPU path of Mamba2 and of the hybrids built on it),
exported by torch, becomes one `rlx.mamba2` in the default pipeline and
matches torch and a float64 step-by-step reference; the suite's Mamba2,
exported by both of torch's exporters, has one `rlx.mamba2` per layer and
still matches. The IR the pass reads and the cases it must leave alone are
lit tests (tests/lit/fuse-mamba2/).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest
import torch
import transformers
from model_suite import TINY, LastHiddenState, export, token_ids
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


HYBRID_SIZES = {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4}
"""The sizes every hybrid here shares: 4 attention heads, each with its own key and value
(torch's TorchScript exporter cannot export grouped sdpa)."""

MAMBA_MIXER = {"mamba_n_heads": 4, "mamba_d_head": 16, "mamba_n_groups": 1, "mamba_d_state": 8}
MAMBA_MIXER |= {"mamba_chunk_size": 8, "mamba_expand": 2}
"""A Mamba2 mixer of 4 heads of 16, state 8, chunks of 8, in the names Bamba, FalconH1
and GraniteMoeHybrid give its sizes."""


@dataclass(frozen=True)
class Hybrid:
    """A transformers hybrid: its config and model classes and its own sizes, two Mamba2
    mixers among them."""

    config: type
    model: type
    sizes: dict[str, object]

    def build(self) -> torch.nn.Module:
        return self.model(self.config(**HYBRID_SIZES, **self.sizes))


HYBRIDS = {
    "bamba": Hybrid(
        transformers.BambaConfig,
        transformers.BambaModel,
        {**MAMBA_MIXER, "num_hidden_layers": 3, "attn_layer_indices": [1]},
    ),
    "falcon_h1": Hybrid(  # attention and Mamba2 side by side in every layer
        transformers.FalconH1Config,
        transformers.FalconH1Model,
        {**MAMBA_MIXER, "num_hidden_layers": 2, "head_dim": 8, "mamba_d_ssm": 64},
    ),
    "granite_moe_hybrid": Hybrid(
        transformers.GraniteMoeHybridConfig,
        transformers.GraniteMoeHybridModel,
        {**MAMBA_MIXER, "num_hidden_layers": 3, "layer_types": ["mamba", "attention", "mamba"]}
        | {"num_local_experts": 0, "shared_intermediate_size": 64},
    ),
    "nemotron_h": Hybrid(
        transformers.NemotronHConfig,
        transformers.NemotronHModel,
        {"num_hidden_layers": 3, "hybrid_override_pattern": "M*M", "head_dim": 8, "mamba_num_heads": 4}
        | {"mamba_head_dim": 16, "n_groups": 1, "ssm_state_size": 8, "chunk_size": 8, "expand": 2},
    ),
    "zamba2": Hybrid(  # a Mamba2 layer, then one with the shared attention block before its Mamba2
        transformers.Zamba2Config,
        transformers.Zamba2Model,
        {"num_hidden_layers": 2, "layers_block_type": ["linear_attention", "hybrid"], "attention_head_dim": 8}
        | {"n_mamba_heads": 4, "mamba_headdim": 16, "mamba_ngroups": 1, "mamba_d_state": 8, "chunk_size": 8},
    ),
}
"""transformers' hybrids whose Mamba2 mixers call their own copy of `mamba2_chunk_scan`."""


@pytest.mark.parametrize("name", HYBRIDS)
def test_the_hybrids_run_their_mamba2_mixers_as_mamba2(name: str) -> None:
    """Attention and Mamba2 layers in one model (TorchScript exports: dynamo's take ~20 s
    each here, and the two exporters' chunked scans canonicalize alike, as the suite's
    Mamba2 shows): each mixer's 12 steps, padded to 2 chunks, are one rlx.mamba2, and
    the model matches torch."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' notices about the small configs
        model = LastHiddenState(HYBRIDS[name].build(), "input_ids").eval()
    feeds = {"input_ids": token_ids(2, 12)}
    blob = export(model, feeds, {}, ["hidden"], "torchscript")
    fused = tensor_passes(load(blob))
    assert (count(fused, Mamba2Op), count(fused, ScanOp)) == (2, 0)
    (got,) = rlx.compile(fused, pipeline=NO_GRAPH_PASSES, threads=2)(*feeds.values())
    with torch.no_grad():
        want = model(torch.from_numpy(feeds["input_ids"])).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
