"""Convolutions: rlx_mlir vs PyTorch (and onnxruntime), same inputs, one process,
2 threads for everyone, calls alternating.

    python benchmarks/conv.py [--repeat 20] [--versus conv_tiled_max_padded_percent=0]

Prints median times and the ratio peer / rlx (> 1 means rlx is faster) for:
- ResNet's conv2d 3x3, pad 1, [8, 64, 56, 56] with 64 filters, with and
  without its bias;
- a strided conv2d 3x3 / 2, [8, 64, 56, 56] -> [8, 128, 28, 28];
- ResNet's stem (7x7 / 2, pad 3, 3 -> 64 channels) and its 3x3 layers on
  28x28, 14x14 and 7x7 planes at batch 1;
- Mamba's depthwise causal conv1d, d = 1536, k = 4, S = 1024, pad 3 on the left
  (the direct kernel);
- Whisper's conv1d 3, pad 1, [1, 80, 3000] -> 384 channels.

rlx and onnxruntime run twice: given the weights as inputs (as torch is:
onnxruntime then runs im2col and its GEMMs) and as constants (as in a model,
"const": onnxruntime prepacks them for its blocked-layout conv kernels, rlx's
pack-conv-weights for its lane form where that is the faster, or transforms a
3x3 stride-1 weight for its Winograd form). Ratios are peer / rlx, the const
ones against each other. `--versus KNOB=VALUE,...` also times rlx const
compiled with those tuning overrides in the same rounds (the `base/rlx const`
column: > 1 means the overrides are slower), e.g.
`conv_winograd_min_channels=4611686018427387904` (never the Winograd form),
`conv_lane_readback_steps=4611686018427387904` (never the lane form) or
`conv_tiled_max_padded_percent=0` for im2col and BLAS GEMMs.

torch runs with OMP_WAIT_POLICY=PASSIVE (set before it is imported) so that its
threads do not spin into rlx's turns; onnxruntime's spinning is off for the same
reason.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime
import torch
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from timing import interleaved_medians

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.tuning import parse_overrides

THREADS = 2


@dataclass(frozen=True)
class Case:
    title: str
    input: tuple[int, ...]
    weight: tuple[int, ...]
    stride: int = 1
    pad_before: int = 0
    pad_after: int = 0
    groups: int = 1
    bias: bool = False

    @property
    def spatial(self) -> int:
        return len(self.input) - 2


CASES = (
    Case("conv2d 3x3 [8,64,56,56] x 64", (8, 64, 56, 56), (64, 64, 3, 3), pad_before=1, pad_after=1),
    Case("  + bias", (8, 64, 56, 56), (64, 64, 3, 3), pad_before=1, pad_after=1, bias=True),
    Case("conv2d 3x3/2 [8,64,56,56] x 128", (8, 64, 56, 56), (128, 64, 3, 3), stride=2, pad_before=1, pad_after=1),
    Case("conv2d 7x7/2 [1,3,224,224] x 64", (1, 3, 224, 224), (64, 3, 7, 7), stride=2, pad_before=3, pad_after=3),
    Case("conv2d 3x3 [1,128,28,28] x 128", (1, 128, 28, 28), (128, 128, 3, 3), pad_before=1, pad_after=1),
    Case("conv2d 3x3 [1,256,14,14] x 256", (1, 256, 14, 14), (256, 256, 3, 3), pad_before=1, pad_after=1),
    Case("conv2d 3x3 [1,512,7,7] x 512", (1, 512, 7, 7), (512, 512, 3, 3), pad_before=1, pad_after=1),
    Case("depthwise causal conv1d d=1536 k=4 S=1024", (1, 1536, 1024), (1536, 1, 4), pad_before=3, groups=1536),
    Case("conv1d 3 [1,80,3000] x 384", (1, 80, 3000), (384, 80, 3), pad_before=1, pad_after=1),
)


def rlx_conv(
    case: Case, tuning: dict[str, int] | None = None, constants: list[np.ndarray] | None = None
) -> rlx.Executable:
    """The conv with its weights (and bias) as inputs, or as `constants` (as in a model:
    pack-conv-weights may store them packed for the lane form)."""
    b = Builder("conv")
    x = b.input(case.input)
    if constants is not None:
        w, bias = b.constant(constants[0]), b.constant(constants[1]) if case.bias else None
    else:
        w, bias = b.input(case.weight), b.input((case.weight[0],)) if case.bias else None
    n = case.spatial
    b.output(b.conv(x, w, bias, [case.stride] * n, None, [case.pad_before] * n, [case.pad_after] * n, case.groups))
    return rlx.compile(b.module(), threads=THREADS, tuning=tuning)


def torch_conv(case: Case, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """torch pads both sides alike, so an asymmetric (causal) pad is an F.pad first."""
    fn = torch.nn.functional.conv1d if case.spatial == 1 else torch.nn.functional.conv2d
    if case.pad_before == case.pad_after:
        return fn(x, w, bias, case.stride, case.pad_before, 1, case.groups)
    padded = torch.nn.functional.pad(x, (case.pad_before, case.pad_after) * case.spatial)
    return fn(padded, w, bias, case.stride, 0, 1, case.groups)


def ort_conv(case: Case, arrays: list[np.ndarray], constant_weights: bool = False) -> onnxruntime.InferenceSession:
    """The conv as an ONNX model: x an input, the weights (and bias) inputs too, or
    initializers with `constant_weights`."""
    names = ["x", "w", "b"][: len(arrays)]
    inputs = names[:1] if constant_weights else names
    node = onnx.helper.make_node(
        "Conv",
        names,
        ["y"],
        strides=[case.stride] * case.spatial,
        pads=[case.pad_before] * case.spatial + [case.pad_after] * case.spatial,
        group=case.groups,
    )
    graph = onnx.helper.make_graph(
        [node],
        "conv",
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, a.shape) for n, a in zip(inputs, arrays)],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(a, n) for n, a in zip(names, arrays) if n not in inputs],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def row(case: Case, repeat: int, versus: dict[str, int] | None) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(case.input, np.float32), rng.standard_normal(case.weight, np.float32)]
    if case.bias:
        arrays.append(rng.standard_normal(case.weight[0], np.float32))
    exe, ort, ort_const = rlx_conv(case), ort_conv(case, arrays), ort_conv(case, arrays, constant_weights=True)
    exe_const = rlx_conv(case, constants=arrays[1:])
    tensors = [torch.from_numpy(a) for a in arrays]
    feeds = dict(zip(["x", "w", "b"], arrays))
    (out,) = exe(*arrays)
    (out_const,) = exe_const(arrays[0])
    want = torch_conv(case, *tensors, *([None] * (3 - len(tensors)))).numpy()
    for got in (out, out_const):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    fns = {
        "rlx": lambda: exe(*arrays, out=(out,)),
        "rlx const": lambda: exe_const(arrays[0], out=(out_const,)),
        "torch": lambda: torch_conv(case, *tensors, *([None] * (3 - len(tensors)))),
        "ort": lambda: ort.run(None, feeds),
        "ort const": lambda: ort_const.run(None, {"x": arrays[0]}),
    }
    if versus is not None:
        base = rlx_conv(case, versus, constants=arrays[1:])
        (base_out,) = base(arrays[0])
        np.testing.assert_allclose(base_out, want, rtol=1e-3, atol=1e-3)
        fns["base const"] = lambda: base(arrays[0], out=(base_out,))
    with torch.inference_mode():
        ms = interleaved_medians(fns, repeat)
    flop = 2 * out.size * int(np.prod(case.weight[1:])) / 1e9
    ratios = {
        "torch/rlx": ms["torch"] / ms["rlx"],
        "ort/rlx": ms["ort"] / ms["rlx"],
        "ort const/rlx const": ms["ort const"] / ms["rlx const"],
        **({"base/rlx const": ms["base const"] / ms["rlx const"]} if versus is not None else {}),
    }
    columns = "".join(f"   {name} {ratio:5.2f}x" for name, ratio in ratios.items())
    timing = f"{ms['rlx']:7.2f} ms, const {ms['rlx const']:7.2f} ms {flop / ms['rlx const'] * 1e3:6.1f} GFLOP/s"
    print(f"{case.title:<44}{timing}{columns}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--versus", type=parse_overrides, help="also time rlx with these tuning overrides (KNOB=V,...)")
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    torch.set_num_threads(THREADS)
    print(
        f"threads = {THREADS}; torch {torch.__version__}, onnxruntime {onnxruntime.__version__}; median of {options.repeat}"
    )
    for case in CASES:
        row(case, options.repeat, options.versus)
    print(f"load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
