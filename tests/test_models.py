"""The model suite (tests/model_suite.py) end to end: each model, exported by
each of torch's exporters with dynamic batch and sequence axes, is imported at
a shape other than the one it was exported at, compiled and run, and matches
onnxruntime and torch within 1e-4. The decoders also run one decode step
with their KV cache as inputs, and Mamba2 one with its conv and recurrent
states as inputs.
"""

from __future__ import annotations

import fcntl
import os
from functools import cache
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
import torch
from model_suite import (
    DECODE_AXES,
    DECODE_OUTPUTS,
    DECODERS,
    EXPORTERS,
    MAMBA2_DECODE_AXES,
    MAMBA2_DECODE_OUTPUTS,
    ONNXRUNTIME_REJECTS,
    SUITE,
    TINY,
    SuiteModel,
    decode_inputs,
    decode_step,
    export,
    mamba2_decode_inputs,
    mamba2_decode_step,
    suite_model,
)
from pipelines import NO_GRAPH_PASSES, tensor_passes
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load

pytestmark = pytest.mark.slow  # exports take seconds each


@cache
def exported(name: str, exporter: str) -> tuple[torch.nn.Module, bytes]:
    """The tiny model and its export. The session's workers share each export through
    a file (conftest.py's RLX_TEST_EXPORT_DIR): the first to need it exports it (seconds,
    for the same seeded module) while the others wait for it, then read it."""
    spec = suite_model(name)
    module = spec.module(TINY)
    path = Path(os.environ["RLX_TEST_EXPORT_DIR"]) / f"{name}-{exporter}.onnx"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            example = spec.example(TINY, batch=2, seq=8)
            blob = export(module, {spec.input.name: example}, spec.axes, ["hidden"], exporter)
            path.with_suffix(".part").write_bytes(blob)
            path.with_suffix(".part").replace(path)
        return module, path.read_bytes()


def run_rlx(blob: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """rlx's outputs on `feeds`, compiled for their shapes."""
    exe = rlx.compile(load(blob, input_shapes={name: x.shape for name, x in feeds.items()}), threads=2)
    return list(exe(*feeds.values()))


def run_onnxruntime(blob: bytes, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return onnxruntime.InferenceSession(blob, providers=["CPUExecutionProvider"]).run(None, feeds)


def fused_tiny_model(name: str, exporter: str, seq: int) -> tuple[ModuleOp, bytes, dict[str, np.ndarray]]:
    """A tiny suite model's export, imported for batch 3 and `seq` steps and through the
    default tensor passes (a fusion test counts what its pass made of it); its bytes
    and feeds for `assert_matches_onnxruntime`."""
    spec = suite_model(name)
    _, blob = exported(name, exporter)
    feeds = {spec.input.name: spec.example(TINY, batch=3, seq=seq, seed=1)}
    return tensor_passes(load(blob, input_shapes={k: x.shape for k, x in feeds.items()})), blob, feeds


def assert_matches_onnxruntime(module: ModuleOp, blob: bytes, feeds: dict[str, np.ndarray]) -> None:
    """The already fused module, compiled without further tensor passes, against onnxruntime."""
    (got,) = rlx.compile(module, pipeline=NO_GRAPH_PASSES, threads=2)(*feeds.values())
    (want,) = run_onnxruntime(blob, feeds)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("spec", SUITE, ids=lambda spec: spec.name)
def test_a_model_matches_onnxruntime_and_torch(spec: SuiteModel, exporter: str) -> None:
    module, blob = exported(spec.name, exporter)
    seq = 8 if spec.fixed_length else 5
    feeds = {spec.input.name: spec.example(TINY, batch=3, seq=seq, seed=1)}
    (got,) = run_rlx(blob, feeds)
    with torch.no_grad():
        reference = module(torch.from_numpy(feeds[spec.input.name])).numpy()
    assert got.shape == reference.shape
    np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4)
    if (spec.name, exporter) not in ONNXRUNTIME_REJECTS:
        (want,) = run_onnxruntime(blob, feeds)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_onnxruntime_still_rejects_what_it_is_listed_to() -> None:
    """A listed export that onnxruntime comes to load is compared with it again (remove it from the list)."""
    for name, exporter in ONNXRUNTIME_REJECTS:
        with pytest.raises(onnxruntime.capi.onnxruntime_pybind11_state.Fail):
            onnxruntime.InferenceSession(exported(name, exporter)[1], providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("name", DECODERS)
def test_a_decode_step_with_a_kv_cache_matches_onnxruntime_and_torch(name: str, exporter: str) -> None:
    step = decode_step(name, TINY)
    blob = export(step, decode_inputs(name, TINY, batch=2, past=6), DECODE_AXES, DECODE_OUTPUTS, exporter)
    _check_step(step, blob, decode_inputs(name, TINY, batch=3, past=4, seed=1))


def test_a_mamba2_decode_step_with_its_states_matches_onnxruntime_and_torch() -> None:
    """One token through Mamba2 with its conv and recurrent states as inputs, exported
    by dynamo (TorchScript's exporter cannot export the cache's in-place copies). It
    is not fused into `rlx.mamba2` (docs/onnx.md): it runs as the exporter's ops."""
    step = mamba2_decode_step(TINY)
    blob = export(step, mamba2_decode_inputs(step, batch=2), MAMBA2_DECODE_AXES, MAMBA2_DECODE_OUTPUTS, "dynamo")
    _check_step(step, blob, mamba2_decode_inputs(step, batch=3, seed=1))


def _check_step(step: torch.nn.Module, blob: bytes, feeds: dict[str, np.ndarray]) -> None:
    """rlx's outputs of the exported `blob` on `feeds` against onnxruntime's and `step`'s."""
    got, want = run_rlx(blob, feeds), run_onnxruntime(blob, feeds)
    with torch.no_grad():
        reference = [t.numpy() for t in step(*(torch.from_numpy(x) for x in feeds.values()))]
    for rlx_out, ort_out, torch_out in zip(got, want, reference, strict=True):
        np.testing.assert_allclose(rlx_out, ort_out, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(rlx_out, torch_out, rtol=1e-4, atol=1e-4)
