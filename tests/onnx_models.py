"""The real models of the ONNX import work: small PyTorch modules exported with
`torch.onnx.export`. tests/test_onnx.py checks rlx against onnxruntime on them and
benchmarks/onnx_models.py times both, so they are defined once, here."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch


class TextClassifier(torch.nn.Module):
    """Token ids -> embedding -> 2-layer bidirectional LSTM -> linear on the last
    step -> log-softmax over the classes."""

    def __init__(self, vocab: int = 1000, embed: int = 64, hidden: int = 128, classes: int = 8) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, embed)
        self.lstm = torch.nn.LSTM(embed, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = torch.nn.Linear(2 * hidden, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        states, _ = self.lstm(self.embed(tokens))
        return torch.log_softmax(self.out(states[:, -1]), dim=-1)


class GRUEncoder(torch.nn.Module):
    """A 1-layer GRU over [B, S, F]: every step's state and the final one."""

    def __init__(self, features: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.gru(x)


class EncoderLayer(torch.nn.Module):
    """A post-norm transformer encoder layer written out (so the export is MatMul,
    Softmax, LayerNormalization, Gelu's Erf, Reshape and Transpose rather than
    PyTorch's fused fast path): multi-head self-attention, then a GELU MLP."""

    def __init__(self, width: int = 64, heads: int = 4, hidden: int = 256) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.norm1, self.norm2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.up, self.down = torch.nn.Linear(width, hidden), torch.nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        head = width // self.heads
        q, k, v = self.qkv(x).reshape(batch, seq, 3, self.heads, head).permute(2, 0, 3, 1, 4)
        attention = torch.softmax(q @ k.transpose(-1, -2) / head**0.5, dim=-1)
        mixed = (attention @ v).transpose(1, 2).reshape(batch, seq, width)
        x = self.norm1(x + self.proj(mixed))
        return self.norm2(x + self.down(torch.nn.functional.gelu(self.up(x))))


@dataclass(frozen=True)
class Model:
    """A model and how to make its input for a batch size."""

    name: str
    build: Callable[[], torch.nn.Module]
    example: Callable[[np.random.Generator, int], np.ndarray]


MODELS = [
    Model("text_classifier", TextClassifier, lambda rng, batch: rng.integers(0, 1000, (batch, 32), dtype=np.int64)),
    Model("gru_encoder", GRUEncoder, lambda rng, batch: rng.standard_normal((batch, 32, 64), dtype=np.float32)),
    Model("encoder_layer", EncoderLayer, lambda rng, batch: rng.standard_normal((batch, 32, 64), dtype=np.float32)),
]


def export(model: torch.nn.Module, example: np.ndarray, dynamo: bool = False) -> bytes:
    """The model as ONNX bytes with input `x` whose batch dimension is dynamic.
    dynamo=True uses torch's newer exporter, which needs the onnxscript package."""
    buffer = io.BytesIO()
    torch.onnx.export(
        model,
        (torch.from_numpy(example),),
        buffer,
        input_names=["x"],
        dynamic_axes={"x": {0: "batch"}},
        opset_version=18 if dynamo else 17,
        dynamo=dynamo,
    )
    return buffer.getvalue()
