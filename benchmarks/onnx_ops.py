"""ONNX ops the importer composes from rlx ops (no rlx op of their own): rlx_mlir
vs onnxruntime on one-node models, same inputs, one process, 2 threads for both,
calls alternating.

    python benchmarks/onnx_ops.py [--repeat 80]

Prints median times and onnxruntime / rlx (> 1 means rlx is faster) for:
- Resize of [8, 64, 64, 64] f32: nearest and linear x2, cubic x2, linear /2
  with and without antialias (rlx: a gather per tap and axis, and a weighted
  sum; rlx_mlir/frontends/onnx/resize.py);
- ConvTranspose with its weights as initializers, as in a model: a U-Net's
  2x2 stride 2, a 3x3 stride 2 with output_padding, a 4x4 stride 2 (rlx: one
  conv over the output phases, then a spread; rlx_mlir/frontends/onnx/conv.py).

Each model is checked against onnxruntime (within 1e-4) before it is timed.
onnxruntime's threads do not spin between calls, so that they do not take
the cores rlx is timed on.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from onnx import helper, numpy_helper
from timing import interleaved_medians

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load

THREADS = 2
IMAGE = (8, 64, 64, 64)


@dataclass(frozen=True)
class Case:
    """A one-node model: its node, its input x's shape and its initializers."""

    title: str
    node: onnx.NodeProto
    x: tuple[int, ...]
    initializers: Callable[[np.random.Generator], dict[str, np.ndarray]]

    def model(self, rng: np.random.Generator) -> onnx.ModelProto:
        known = [numpy_helper.from_array(a, n) for n, a in self.initializers(rng).items()]
        graph = helper.make_graph(
            [self.node],
            "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, self.x)],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
            known,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def _resize(title: str, factor: float, **attributes: object) -> Case:
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attributes)
    scales = np.array([1, 1, factor, factor], np.float32)
    return Case(f"Resize {title} {IMAGE}", node, IMAGE, lambda rng: {"scales": scales})


def _conv_transpose(title: str, x: tuple[int, ...], out: int, kernel: int, **attributes: object) -> Case:
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attributes)

    def weights(rng: np.random.Generator) -> dict[str, np.ndarray]:
        w = rng.standard_normal((x[1], out, kernel, kernel)).astype(np.float32) / kernel
        return {"w": w, "b": rng.standard_normal(out).astype(np.float32)}

    return Case(f"ConvTranspose {title} {x} -> {out}", node, x, weights)


CASES = (
    _resize("nearest x2", 2.0, mode="nearest"),
    _resize("linear x2", 2.0, mode="linear"),
    _resize("cubic x2", 2.0, mode="cubic"),
    _resize("linear /2", 0.5, mode="linear"),
    _resize("linear /2 antialias", 0.5, mode="linear", antialias=1),
    _conv_transpose("2x2/2", (1, 64, 64, 64), 32, 2, strides=[2, 2]),
    _conv_transpose("3x3/2 op1", (1, 64, 64, 64), 32, 3, strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
    _conv_transpose("4x4/2", (1, 256, 16, 16), 128, 4, strides=[2, 2], pads=[1, 1, 1, 1]),
)


def session(model: onnx.ModelProto) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def row(case: Case, repeat: int) -> None:
    rng = np.random.default_rng(0)
    model = case.model(rng)
    x = rng.standard_normal(case.x, np.float32)
    exe, ort = rlx.compile(load(model), threads=THREADS), session(model)
    (out,) = exe(x)
    np.testing.assert_allclose(out, ort.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)
    ms = interleaved_medians({"rlx": lambda: exe(x, out=(out,)), "ort": lambda: ort.run(None, {"x": x})}, repeat)
    print(f"{case.title:<48}rlx {ms['rlx']:8.3f} ms   ort {ms['ort']:8.3f} ms   ort/rlx {ms['ort'] / ms['rlx']:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=80)
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    print(f"threads = {THREADS}; onnxruntime {onnxruntime.__version__}; median of {options.repeat}")
    for case in CASES:
        row(case, options.repeat)
    print(f"load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
