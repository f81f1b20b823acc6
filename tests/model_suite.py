"""The model suite of issue 21: standard architectures built by `transformers`
from small configs with random weights (nothing is downloaded), exported to
ONNX by both of torch's exporters. tests/test_models.py checks rlx against
onnxruntime and torch on tiny configs; benchmarks/models.py times rlx and
onnxruntime on larger ones. Both take the models from here.

Each entry builds a torch module with one input (token ids, audio features
or images: its `Input`) and one output (the last hidden state), so every
model exports, runs and compares the same way.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import transformers

VOCAB = 256
"""Token ids are drawn below this; every config's vocabulary is this size."""

Axes = dict[str, dict[int, str]]
"""Per input name, its dynamic axes and their names (inputs sharing a name share the size)."""


@dataclass(frozen=True)
class Size:
    """The dimensions a suite config scales with: tiny for tests, larger for benchmarks."""

    width: int
    layers: int
    heads: int
    image: int
    """Height and width of the vision models' images."""

    @property
    def mlp(self) -> int:
        return 4 * self.width


TINY = Size(width=32, layers=2, heads=4, image=32)
SMALL = Size(width=256, layers=4, heads=8, image=224)


class LastHiddenState(torch.nn.Module):
    """A transformers model called on its one input (by keyword), returning its last hidden state."""

    def __init__(self, model: torch.nn.Module, keyword: str) -> None:
        super().__init__()
        self.model, self.keyword = model, keyword

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(**{self.keyword: x}).last_hidden_state


class LSTMEncoder(torch.nn.Module):
    """Embedding, then a 2-layer bidirectional LSTM: every step's states."""

    def __init__(self, size: Size) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, size.width)
        self.lstm = torch.nn.LSTM(size.width, size.width, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lstm(self.embed(input_ids))[0]


def _bert(s: Size) -> torch.nn.Module:
    config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=s.width,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        intermediate_size=s.mlp,
        max_position_embeddings=512,
    )
    return transformers.BertModel(config, add_pooling_layer=False)


def _distilbert(s: Size) -> torch.nn.Module:
    config = transformers.DistilBertConfig(
        vocab_size=VOCAB, dim=s.width, n_layers=s.layers, n_heads=s.heads, hidden_dim=s.mlp, max_position_embeddings=512
    )
    return transformers.DistilBertModel(config)


def _encoder_decoder(s: Size) -> dict[str, int]:
    """The sizes BART's and Whisper's configs share; only the encoder is used, so one decoder layer."""
    return {
        "vocab_size": VOCAB,
        "d_model": s.width,
        "encoder_layers": s.layers,
        "decoder_layers": 1,
        "encoder_attention_heads": s.heads,
        "decoder_attention_heads": s.heads,
        "encoder_ffn_dim": s.mlp,
        "decoder_ffn_dim": s.mlp,
    }


def _bart_encoder(s: Size) -> torch.nn.Module:
    config = transformers.BartConfig(
        **_encoder_decoder(s),
        max_position_embeddings=512,
    )
    return transformers.BartModel(config).get_encoder()


def _t5_encoder(s: Size) -> torch.nn.Module:
    config = transformers.T5Config(
        vocab_size=VOCAB, d_model=s.width, d_kv=s.width // s.heads, d_ff=s.mlp, num_layers=s.layers, num_heads=s.heads
    )
    return transformers.T5EncoderModel(config)


def _gpt2(s: Size) -> torch.nn.Module:
    config = transformers.GPT2Config(
        vocab_size=VOCAB,
        n_embd=s.width,
        n_layer=s.layers,
        n_head=s.heads,
        n_positions=512,
        bos_token_id=0,
        eos_token_id=0,
    )
    return transformers.GPT2Model(config)


def _decoder(config_class: type, model_class: type) -> Callable[[Size], torch.nn.Module]:
    """Llama-style decoders with grouped-query attention (half as many key/value heads).
    Eager attention: the TorchScript exporter cannot convert SDPA with GQA."""

    def build(s: Size) -> torch.nn.Module:
        config = config_class(
            vocab_size=VOCAB,
            hidden_size=s.width,
            num_hidden_layers=s.layers,
            num_attention_heads=s.heads,
            num_key_value_heads=s.heads // 2,
            intermediate_size=s.mlp,
            max_position_embeddings=512,
            attn_implementation="eager",
        )
        return model_class(config)

    return build


def _mamba(s: Size) -> torch.nn.Module:
    config = transformers.MambaConfig(
        vocab_size=VOCAB, hidden_size=s.width, state_size=16, num_hidden_layers=s.layers, expand=2, conv_kernel=4
    )
    return transformers.MambaModel(config)


def _mamba2(s: Size) -> torch.nn.Module:
    config = transformers.Mamba2Config(
        vocab_size=VOCAB,
        hidden_size=s.width,
        state_size=16,
        num_hidden_layers=s.layers,
        expand=2,
        conv_kernel=4,
        num_heads=2 * s.width // 16,
        head_dim=16,
        n_groups=1,
        chunk_size=16,
    )
    return transformers.Mamba2Model(config)


MEL_BINS = 16
"""The Whisper encoder's feature channels (80 in the released models)."""


def _whisper_encoder(s: Size) -> torch.nn.Module:
    config = transformers.WhisperConfig(
        **_encoder_decoder(s),
        num_mel_bins=MEL_BINS,
        max_source_positions=_whisper_frames(s) // 2,
        max_target_positions=16,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        decoder_start_token_id=0,
    )
    return transformers.WhisperModel(config).get_encoder()


def _whisper_frames(s: Size) -> int:
    """The encoder takes exactly this many feature frames (its positions, two per stride-2 step)."""
    return 4 * s.width


def _vit(s: Size) -> torch.nn.Module:
    config = transformers.ViTConfig(
        hidden_size=s.width,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        intermediate_size=s.mlp,
        image_size=s.image,
        patch_size=s.image // 4 if s.image <= 64 else 16,
    )
    return transformers.ViTModel(config, add_pooling_layer=False)


def _dinov2(s: Size) -> torch.nn.Module:
    """A ViT trained at half the suite's image size: on the full image its position
    table is resized (ONNX Resize, bicubic) to the larger grid of patches, as
    DINOv2 does for any image size other than its training one."""
    config = transformers.Dinov2Config(
        hidden_size=s.width,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        mlp_ratio=4,
        image_size=s.image // 2,
        patch_size=s.image // 8 if s.image <= 64 else 14,
    )
    return transformers.Dinov2Model(config)


def _resnet18(s: Size) -> torch.nn.Module:
    """ResNet-18's layout (basic blocks, two per stage) with `width` channels in the first stage."""
    widths = [s.width // 2, s.width, 2 * s.width, 4 * s.width] if s.width < 64 else [64, 128, 256, 512]
    config = transformers.ResNetConfig(
        embedding_size=widths[0], hidden_sizes=widths, depths=[2, 2, 2, 2], layer_type="basic"
    )
    return transformers.ResNetModel(config)


def token_ids(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, (batch, seq), dtype=np.int64)


@dataclass(frozen=True)
class Input:
    """A suite model's one input: its name, its dynamic axes, and an example
    for a batch size, a sequence length (which some inputs fix) and a seed."""

    name: str
    axes: dict[int, str]
    example: Callable[[Size, int, int, int], np.ndarray]


TOKENS = Input("input_ids", {0: "batch", 1: "seq"}, lambda size, batch, seq, seed: token_ids(batch, seq, seed))


def _normal(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


FEATURES = Input(
    "input_features",
    {0: "batch"},
    lambda size, batch, seq, seed: _normal((batch, MEL_BINS, _whisper_frames(size)), seed),
)
"""Audio features [batch, mel bins, frames]: the frame count is fixed by the encoder."""

IMAGES = Input(
    "pixel_values", {0: "batch"}, lambda size, batch, seq, seed: _normal((batch, 3, size.image, size.image), seed)
)


@dataclass(frozen=True)
class SuiteModel:
    """A suite entry: its name, how to build it at a size, and its input."""

    name: str
    build: Callable[[Size], torch.nn.Module]
    input: Input = TOKENS
    fixed_length: bool = False
    """Its exports fix the sequence length they saw (the model's code branches on
    it: TorchScript bakes it into a Gather, dynamo into the input's shape), so it
    runs at that length only, in onnxruntime too."""

    def module(self, size: Size, seed: int = 0) -> torch.nn.Module:
        """The model with seeded random weights, in eval mode, wrapped to one input and one output."""
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # transformers' notices about the small configs
            model = self.build(size)
        wrapped = model if isinstance(model, LSTMEncoder) else LastHiddenState(model, self.input.name)
        return wrapped.eval()

    def example(self, size: Size, batch: int, seq: int, seed: int = 0) -> np.ndarray:
        return self.input.example(size, batch, seq, seed)

    @property
    def axes(self) -> Axes:
        return {self.input.name: self.input.axes}


SUITE = [
    SuiteModel("bert", _bert),
    SuiteModel("distilbert", _distilbert),
    SuiteModel("bart_encoder", _bart_encoder),
    SuiteModel("t5_encoder", _t5_encoder),
    SuiteModel("gpt2", _gpt2),
    SuiteModel("llama", _decoder(transformers.LlamaConfig, transformers.LlamaModel)),
    SuiteModel("qwen2", _decoder(transformers.Qwen2Config, transformers.Qwen2Model)),
    SuiteModel("lstm_encoder", LSTMEncoder),
    SuiteModel("mamba", _mamba, fixed_length=True),
    SuiteModel("mamba2", _mamba2, fixed_length=True),
    SuiteModel("whisper_encoder", _whisper_encoder, FEATURES),
    SuiteModel("vit", _vit, IMAGES),
    SuiteModel("dinov2", _dinov2, IMAGES),
    SuiteModel("resnet18", _resnet18, IMAGES),
]

EXPORTERS = ("torchscript", "dynamo")


def suite_model(name: str) -> SuiteModel:
    """The suite's entry called `name`."""
    return next(spec for spec in SUITE if spec.name == name)


ONNXRUNTIME_REJECTS = {
    ("mamba2", "torchscript"): "a Transpose with perm [0, -2, -1, 1]: ONNX allows negative axes, onnxruntime not"
}
"""Exports onnxruntime refuses to load: rlx is compared with torch alone on them."""


def export(
    module: torch.nn.Module, inputs: dict[str, np.ndarray], axes: Axes, outputs: list[str], exporter: str
) -> bytes:
    """The module as ONNX bytes with the named inputs, their dynamic `axes` and
    the named outputs. Exporter warnings and progress lines are silenced."""
    buffer = io.BytesIO()
    dynamo = exporter == "dynamo"
    if dynamo:
        dims = {name: torch.export.Dim(name) for per_input in axes.values() for name in per_input.values()}
        shapes = tuple({axis: dims[name] for axis, name in axes.get(key, {}).items()} for key in inputs)
        options: dict = {"dynamic_shapes": shapes, "verbose": False}  # by position: forward's names may differ
    else:
        options = {"dynamic_axes": axes}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            tuple(torch.from_numpy(x) for x in inputs.values()),
            buffer,
            input_names=list(inputs),
            output_names=outputs,
            opset_version=18,
            dynamo=dynamo,
            **options,
        )
    return buffer.getvalue()


class DecodeStep(torch.nn.Module):
    """One generation step of a decoder with a KV cache as inputs: the new token
    [batch, 1] and every layer's past keys and values stacked [layers, batch,
    kv heads, past, head width] in; its hidden state and the grown cache out."""

    def __init__(self, model: torch.nn.Module, layers: int) -> None:
        super().__init__()
        self.model, self.layers = model, layers

    def forward(
        self, input_ids: torch.Tensor, past_keys: torch.Tensor, past_values: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        cache = transformers.DynamicCache()
        for layer in range(self.layers):
            cache.update(past_keys[layer], past_values[layer], layer)
        out = self.model(input_ids=input_ids, cache=cache, use_cache=True)
        grown = out.cache.layers
        keys = torch.stack([grown[layer].keys for layer in range(self.layers)])
        values = torch.stack([grown[layer].values for layer in range(self.layers)])
        return out.last_hidden_state, keys, values


DECODERS = ("gpt2", "llama", "qwen2")
"""The suite's decoders, which also run as one decode step with a KV cache."""

DECODE_AXES: Axes = {
    "input_ids": {0: "batch"},
    "past_keys": {1: "batch", 3: "past"},
    "past_values": {1: "batch", 3: "past"},
}
DECODE_OUTPUTS = ["hidden", "keys", "values"]


class Mamba2DecodeStep(torch.nn.Module):
    """Mamba2's generation step: the new token [batch, 1] and every layer's conv
    states [layers, batch, conv channels, kernel] and recurrent states [layers,
    batch, heads, head width, state] in; its hidden state and both states after
    the step out. transformers updates them inside its cache (copies in place),
    which dynamo's exporter writes as outputs and TorchScript's cannot export
    (`aten::copy`)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model, self.layers = model, model.config.num_hidden_layers

    def forward(
        self, input_ids: torch.Tensor, conv_states: torch.Tensor, recurrent_states: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        cache = transformers.DynamicCache(config=self.model.config)
        for layer in range(self.layers):
            cache.update_conv_state(conv_states[layer], layer, conv_kernel_size=conv_states.shape[-1])
            cache.update_recurrent_state(recurrent_states[layer], layer)
        out = self.model(input_ids=input_ids, cache=cache, use_cache=True)
        conv = torch.stack([cache.get_conv_state(layer, state_idx=0) for layer in range(self.layers)])
        recurrent = torch.stack([cache.get_recurrent_state(layer, state_idx=0) for layer in range(self.layers)])
        return out.last_hidden_state, conv, recurrent


MAMBA2_DECODE_AXES: Axes = {"input_ids": {0: "batch"}, "conv_states": {1: "batch"}, "recurrent_states": {1: "batch"}}
MAMBA2_DECODE_OUTPUTS = ["hidden", "next_conv_states", "next_recurrent_states"]


def mamba2_decode_step(size: Size, seed: int = 0) -> Mamba2DecodeStep:
    return Mamba2DecodeStep(suite_model("mamba2").module(size, seed).model).eval()


def mamba2_decode_inputs(step: Mamba2DecodeStep, batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A new token per sequence and random states of the shapes `step`'s mixers keep."""
    mixer, rng = step.model.layers[0].mixer, np.random.default_rng(seed)
    states = (step.layers, batch)
    recurrent = (mixer.num_heads, mixer.head_dim, mixer.ssm_state_size)
    return {
        "input_ids": rng.integers(0, VOCAB, (batch, 1), dtype=np.int64),
        "conv_states": rng.standard_normal((*states, mixer.conv_dim, mixer.conv_kernel_size), dtype=np.float32),
        "recurrent_states": rng.standard_normal((*states, *recurrent), dtype=np.float32),
    }


def decode_step(name: str, size: Size, seed: int = 0) -> DecodeStep:
    return DecodeStep(suite_model(name).module(size, seed).model, size.layers).eval()


def decode_inputs(name: str, size: Size, batch: int, past: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A new token per sequence and a random cache of `past` steps (GPT-2 has as
    many key/value heads as query heads; the others half as many)."""
    rng = np.random.default_rng(seed)
    heads = size.heads if name == "gpt2" else size.heads // 2
    cache = (size.layers, batch, heads, past, size.width // size.heads)
    return {
        "input_ids": rng.integers(0, VOCAB, (batch, 1), dtype=np.int64),
        "past_keys": rng.standard_normal(cache, dtype=np.float32),
        "past_values": rng.standard_normal(cache, dtype=np.float32),
    }
