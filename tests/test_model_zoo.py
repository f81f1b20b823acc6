"""Architectures beyond the model suite, each exporting ops or patterns the suite's
models do not, built tiny by `transformers` with random weights and exported by
TorchScript's exporter (the faster one): rlx against torch within 1e-4.

Each once failed to import or to compile: SqueezeBERT (1-d convs whose residual
is read transposed across the conv's spatial axis), wav2vec2 (GroupNorm, written
as InstanceNormalization), LeViT (BatchNormalization after linear layers), RWKV
(a Pad with a negative pad: its time shift), DINOv2 at another image size is in
the suite (Resize)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import transformers
from model_suite import VOCAB, LastHiddenState, export, token_ids

import rlx_mlir.onnx as rlx_onnx

WIDTH, LAYERS, HEADS = 32, 1, 4  # one layer: each model is here for ops its first layer has


def _squeezebert() -> torch.nn.Module:
    config = transformers.SqueezeBertConfig(
        vocab_size=VOCAB,
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=4 * WIDTH,
        embedding_size=WIDTH,
    )
    return transformers.SqueezeBertModel(config)


def _wav2vec2() -> torch.nn.Module:
    config = transformers.Wav2Vec2Config(
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=4 * WIDTH,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
    )
    return transformers.Wav2Vec2Model(config)


def _levit() -> torch.nn.Module:
    config = transformers.LevitConfig(
        image_size=32, hidden_sizes=[16, 24, 32], num_attention_heads=[1, 2, 2], depths=[1, 1, 1], key_dim=[8, 8, 8]
    )
    return transformers.LevitModel(config)


def _rwkv() -> torch.nn.Module:
    config = transformers.RwkvConfig(
        vocab_size=VOCAB,
        hidden_size=WIDTH,
        num_hidden_layers=2,  # transformers' RWKV initialisation divides by layers - 1
        attention_hidden_size=WIDTH,
        intermediate_size=4 * WIDTH,
        context_length=64,
    )
    return transformers.RwkvModel(config)


def _tokens(batch: int) -> np.ndarray:
    return token_ids(batch, 12, seed=batch)


def _audio(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 400), dtype=np.float32)


def _images(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 3, 32, 32), dtype=np.float32)


ZOO: dict[str, tuple[Callable[[], torch.nn.Module], str, Callable[[int], np.ndarray]]] = {
    "squeezebert": (_squeezebert, "input_ids", _tokens),
    "wav2vec2": (_wav2vec2, "input_values", _audio),
    "levit": (_levit, "pixel_values", _images),
    "rwkv": (_rwkv, "input_ids", _tokens),
}
"""name: (the model, its input's name, an example input at a batch size)."""


@pytest.mark.parametrize("name", ZOO)
def test_a_zoo_model_matches_torch(name: str) -> None:
    build, key, example = ZOO[name]
    torch.manual_seed(0)
    module = LastHiddenState(build(), key).eval()
    blob = export(module, {key: example(2)}, {key: {0: "batch"}}, ["y"], "torchscript")
    x = example(3)
    (got,) = rlx_onnx.InferenceSession(blob, threads=2).run(None, {key: x})
    with torch.no_grad():
        want = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
