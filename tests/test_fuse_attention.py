"""fuse-attention (passes/fuse_attention.py) end to end: each pattern variant,
built with the Builder, becomes one `rlx.attention` in the default pipeline
and matches a float64 NumPy reference in every float type; suite models
exported by both of torch's exporters contain `rlx.attention` after the
pipeline and still match onnxruntime. ONNX's own `Attention` op
(frontends/onnx/attention.py) matches onnxruntime too (ONNX's node tests,
tests/test_onnx_node_tests.py, cover every attribute against its reference).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx
import pytest
from model_suite import TINY
from onnx import TensorProto, helper
from pipelines import NO_GRAPH_PASSES, count, tensor_passes
from test_models import assert_matches_onnxruntime, fused_tiny_model, run_onnxruntime
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.dialects.attention import AttentionOp
from rlx_mlir.dialects.reduction import SoftmaxOp
from rlx_mlir.frontends.onnx import load
from rlx_mlir.passes.default_pipeline import tensor_pipeline_without

NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
TOLERANCE = {"f32": 2e-5, "f64": 1e-12, "f16": 4e-3, "bf16": 3e-2}
"""Absolute error bound on outputs of a few units: some units of the type's last place."""

B, HQ, HKV, SQ, SK, D = 2, 4, 2, 5, 7, 8


def reference(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, scale: float, causal: bool = False
) -> np.ndarray:
    """softmax(q kᵀ · scale + mask) v in float64, kv head h // (Hq/Hkv) for query head h;
    a row with every key masked gives zeros."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    groups = q.shape[-3] // k.shape[-3]
    k, v = np.repeat(k, groups, axis=-3), np.repeat(v, groups, axis=-3)
    s = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        s = s + mask.astype(np.float64)
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isneginf(top), 0.0, top))
    total = e.sum(axis=-1, keepdims=True)
    return (e / np.where(total == 0, 1.0, total)) @ v


@dataclass(frozen=True)
class Case:
    """A graph written the way an exporter writes attention, its inputs and reference."""

    name: str
    build: Callable[[rlx.Builder, str], None]
    inputs: Callable[[np.random.Generator, type], list[np.ndarray]]
    want: Callable[[list[np.ndarray]], np.ndarray]


def _normal(rng: np.random.Generator, t: type, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(t)


def _split_scale(b: rlx.Builder, dtype: str) -> None:
    """TorchScript's SDPA: √scale on q and on kᵀ, kᵀ a transpose of [B, S, H, D]."""
    q, k, v = b.input((B, HQ, SQ, D), dtype), b.input((B, SK, HQ, D), dtype), b.input((B, HQ, SK, D), dtype)
    root = b.constant(np.array(D**-0.25), dtype)
    scores = b.matmul(b.mul(q, root), b.mul(b.transpose(k, [0, 2, 3, 1]), root))
    b.output(b.matmul(b.softmax(scores), v))


def _flag_mask_guard(b: rlx.Builder, dtype: str) -> None:
    """kᵀ as a flag, a division by a constant, a run-time mask, the dynamo NaN guard."""
    q, k, v = b.input((B, HQ, SQ, D), dtype), b.input((B, HQ, SK, D), dtype), b.input((B, HQ, SK, D), dtype)
    mask = b.input((B, 1, SQ, SK), dtype)
    scores = b.add(b.div(b.matmul(q, k, transpose_rhs=True), b.constant(np.array(3.0), dtype)), mask)
    p = b.softmax(scores)
    b.output(b.matmul(b.where(b.ne(p, p), b.constant(np.array(0.0), dtype), p), v))


def _grouped_causal(b: rlx.Builder, dtype: str) -> None:
    """Llama's eager attention: repeat_kv on k and v, the scale on the scores, a -inf causal constant."""
    q, k, v = b.input((B, HQ, SK, D), dtype), b.input((B, HKV, SK, D), dtype), b.input((B, HKV, SK, D), dtype)

    def repeat(x):
        return b.reshape(b.expand(b.reshape(x, (B, HKV, 1, SK, D)), (B, HKV, HQ // HKV, SK, D)), (B, HQ, SK, D))

    causal = np.where(np.triu(np.ones((SK, SK), bool), 1), -np.inf, 0.0)
    scores = b.mul(b.matmul(q, repeat(k), transpose_rhs=True), b.constant(np.array(D**-0.5), dtype))
    b.output(b.matmul(b.softmax(b.add(scores, b.constant(causal, dtype))), repeat(v)))


def _rank_three(b: rlx.Builder, dtype: str) -> None:
    """[B·H, S, D] scores, kᵀ given transposed, a [Sq, Sk] mask."""
    q, kt, v = b.input((B * HQ, SQ, D), dtype), b.input((B * HQ, D, SK), dtype), b.input((B * HQ, SK, D), dtype)
    mask = b.input((SQ, SK), dtype)
    scores = b.add(b.mul(b.constant(np.array(0.5), dtype), b.matmul(q, kt)), mask)
    b.output(b.matmul(b.softmax(scores, axis=2), v))


CASES = [
    Case(
        "split_scale",
        _split_scale,
        lambda rng, t: [_normal(rng, t, B, HQ, SQ, D), _normal(rng, t, B, SK, HQ, D), _normal(rng, t, B, HQ, SK, D)],
        lambda a: reference(a[0], a[1].transpose(0, 2, 1, 3), a[2], None, D**-0.5),
    ),
    Case(
        "flag_mask_guard",
        _flag_mask_guard,
        lambda rng, t: [
            *(_normal(rng, t, B, HQ, s, D) for s in (SQ, SK, SK)),
            np.where(rng.random((B, 1, SQ, SK)) < 0.3, -np.inf, rng.standard_normal((B, 1, SQ, SK))).astype(t),
        ],
        lambda a: reference(a[0], a[1], a[2], a[3], 1 / 3),
    ),
    Case(
        "grouped_causal",
        _grouped_causal,
        lambda rng, t: [_normal(rng, t, B, HQ, SK, D), _normal(rng, t, B, HKV, SK, D), _normal(rng, t, B, HKV, SK, D)],
        lambda a: reference(a[0], a[1], a[2], None, D**-0.5, causal=True),
    ),
    Case(
        "rank_three",
        _rank_three,
        lambda rng, t: [
            _normal(rng, t, B * HQ, SQ, D),
            _normal(rng, t, B * HQ, D, SK),
            _normal(rng, t, B * HQ, SK, D),
            _normal(rng, t, SQ, SK),
        ],
        lambda a: reference(a[0], np.swapaxes(a[1], -1, -2), a[2], a[3], 0.5),
    ),
]


def _module(case: Case, dtype: str) -> ModuleOp:
    b = rlx.Builder(case.name)
    case.build(b, dtype)
    return b.module()


@pytest.mark.parametrize("dtype", sorted(NUMPY))
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_a_pattern_becomes_one_attention_and_matches_float64(case: Case, dtype: str) -> None:
    fused = tensor_passes(_module(case, dtype))
    assert (count(fused, AttentionOp), count(fused, SoftmaxOp)) == (1, 0)
    arrays = case.inputs(np.random.default_rng(0), NUMPY[dtype])
    (got,) = rlx.compile(fused, pipeline=NO_GRAPH_PASSES)(*arrays)
    want = case.want(arrays)
    assert got.dtype == NUMPY[dtype]
    np.testing.assert_allclose(
        got.astype(np.float64), want, rtol=0, atol=TOLERANCE[dtype] * max(1.0, np.abs(want).max())
    )


def test_the_pipeline_without_fuse_attention_keeps_the_pattern_written_out() -> None:
    """The baseline of benchmarks/attention.py and of models.py --without: every other pass runs."""
    pipeline = tensor_pipeline_without("fuse-attention")
    assert "fuse-attention" not in pipeline and "fuse-elementwise" in pipeline
    module = _module(CASES[0], "f32")
    exe = rlx.compile(module, pipeline=pipeline)
    assert "rlx.softmax" in exe.planned_ir and "rlx.attention" not in exe.planned_ir
    with pytest.raises(ValueError, match="no pass called 'fuse-attentions'"):
        tensor_pipeline_without("fuse-attentions")


def test_a_fully_masked_row_gives_zeros_as_the_guard_does() -> None:
    """Every key of one query row masked with -inf: the dynamo guard's zeros, from the kernel."""
    case = CASES[1]
    arrays = case.inputs(np.random.default_rng(1), np.float32)
    arrays[3][0, 0, 2, :] = -np.inf
    (got,) = rlx.compile(_module(case, "f32"))(*arrays)
    assert np.all(got[0, :, 2] == 0)
    np.testing.assert_allclose(got, case.want(arrays), rtol=0, atol=2e-5 * max(1.0, np.abs(got).max()))


@pytest.mark.slow  # exports take seconds each
@pytest.mark.parametrize(("name", "exporter"), [("bert", "dynamo"), ("llama", "torchscript")])
def test_suite_models_run_fused_attention_and_match_onnxruntime(name: str, exporter: str) -> None:
    """BERT from dynamo (SDPA: the split scale, keys through a reshape round trip, a zero
    mask, the NaN guard) and Llama from TorchScript (the transpose flag, grouped-query
    repeat_kv, a constant causal mask): every layer's attention is one rlx.attention,
    and the model still matches onnxruntime. (tests/test_models.py runs every model,
    both exporters, through the same pipeline.)"""
    module, blob, feeds = fused_tiny_model(name, exporter, seq=5)
    assert (count(module, AttentionOp), count(module, SoftmaxOp)) == (TINY.layers, 0)
    assert_matches_onnxruntime(module, blob, feeds)


Spec = tuple[str, int, list[int] | None]
"""An ONNX graph input or output: name, element type, shape."""


def attention_model(attributes: dict[str, object], inputs: list[Spec], outputs: list[Spec]) -> onnx.ModelProto:
    """One opset-23 Attention node reading the graph's inputs (an empty name skips an optional one)."""
    node = helper.make_node("Attention", [n for n, *_ in inputs], [n for n, *_ in outputs], name="att")
    node.attribute.extend(helper.make_attribute(key, value) for key, value in attributes.items())
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


F32, BOOL = int(TensorProto.FLOAT), int(TensorProto.BOOL)
ONNX_CASES: dict[str, tuple[dict[str, object], list[Spec], list[Spec]]] = {
    "4d_gqa_causal_bool_mask": (
        {"is_causal": 1},
        [("Q", F32, [2, 4, 5, 8]), ("K", F32, [2, 2, 5, 8]), ("V", F32, [2, 2, 5, 8]), ("attn_mask", BOOL, [5, 5])],
        [("Y", F32, [2, 4, 5, 8])],
    ),
    "3d_past_present_scaled_mask": (
        {"q_num_heads": 4, "kv_num_heads": 2, "scale": 0.3},
        [
            ("Q", F32, [2, 3, 32]),
            ("K", F32, [2, 3, 16]),
            ("V", F32, [2, 3, 12]),
            ("attn_mask", F32, [2, 1, 3, 7]),
            ("past_key", F32, [2, 2, 4, 8]),
            ("past_value", F32, [2, 2, 4, 6]),
        ],
        [("Y", F32, [2, 3, 24]), ("present_key", F32, [2, 2, 7, 8]), ("present_value", F32, [2, 2, 7, 6])],
    ),
    "4d_softcap_composed": (
        {"softcap": 2.0, "is_causal": 1},
        [("Q", F32, [1, 2, 4, 8]), ("K", F32, [1, 2, 4, 8]), ("V", F32, [1, 2, 4, 8])],
        [("Y", F32, [1, 2, 4, 8])],
    ),
}


def _feed(spec: Spec, rng: np.random.Generator) -> np.ndarray:
    _, element, shape = spec
    return rng.random(shape) < 0.8 if element == BOOL else rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("case", sorted(ONNX_CASES))
def test_onnx_attention_matches_onnxruntime(case: str) -> None:
    attributes, inputs, outputs = ONNX_CASES[case]
    model = attention_model(attributes, inputs, outputs)
    rng = np.random.default_rng(0)
    feeds = {spec[0]: _feed(spec, rng) for spec in inputs}
    module = load(model)
    assert count(module, AttentionOp) == (0 if "softcap" in attributes else 1)
    got = rlx.compile(module)(*feeds.values())
    want = run_onnxruntime(model.SerializeToString(), feeds)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_onnx_attention_error_names_the_node() -> None:
    """3-D inputs need the head counts: the import error names the node and the attribute."""
    model = attention_model(
        {}, [("Q", F32, [1, 3, 8]), ("K", F32, [1, 3, 8]), ("V", F32, [1, 3, 8])], [("Y", F32, None)]
    )
    with pytest.raises(rlx.CompileError, match="Attention 'att': 3-D inputs need the q_num_heads and kv_num_heads"):
        load(model)
