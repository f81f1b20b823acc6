"""Exported ONNX models: rlx_mlir vs onnxruntime, same inputs, one process,
2 threads each (`compile(threads=2)`, `SessionOptions.intra_op_num_threads = 2`).

    python benchmarks/onnx_models.py [--repeat 30] [--batch 1 32] [--threads 2]

The models are the ones tests/test_onnx.py checks against onnxruntime
(tests/onnx_models.py): a text classifier (embedding, 2-layer bidirectional
LSTM H128 over 32 tokens, linear, log-softmax), a GRU encoder (F64 H128, 32
steps) and a transformer encoder layer (width 64, 4 heads, MLP 256, 32 tokens),
each exported once by torch.onnx (TorchScript exporter) with a dynamic batch and
imported by rlx at each batch size. Prints median latencies and the ratio
onnxruntime / rlx (> 1 means rlx is faster), after checking the outputs agree,
and the load average (the figures mean little on an oversubscribed machine:
threaded GEMMs wait for their threads to be scheduled).

torch only exports, on one thread: its OpenMP workers would otherwise keep
spinning on the cores the two peers are timed on.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import torch
from timing import median_ms

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from onnx_models import MODELS, Model, export


def session(blob: bytes, threads: int) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(blob, options, providers=["CPUExecutionProvider"])


def bench(spec: Model, blob: bytes, batch: int, threads: int, repeat: int) -> tuple[float, float]:
    """(rlx ms, onnxruntime ms) at `batch`, after checking both give the same outputs.
    rlx is timed before the onnxruntime session exists: onnxruntime's worker threads
    spin for a while after a session is created or run (`allow_spinning`), and on
    2 cores that takes one away from whatever runs next in the process."""
    x = spec.example(np.random.default_rng(batch), batch)
    exe = rlx.compile(load(blob, input_shapes={"x": x.shape}), threads=threads)
    outputs = exe(x)
    rlx_ms = median_ms(lambda: exe(x, out=outputs), repeat)
    ort = session(blob, threads)
    for got, want in zip(outputs, ort.run(None, {"x": x})):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    ort_ms = median_ms(lambda: ort.run(None, {"x": x}), repeat)
    return rlx_ms, ort_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 32])
    parser.add_argument("--threads", type=int, default=2, help="for rlx and onnxruntime alike")
    add_target_argument(parser)
    args = parser.parse_args()
    print(use_target(args.target))
    torch.manual_seed(0)
    torch.set_num_threads(1)
    blobs = [export(spec.build().eval(), spec.example(np.random.default_rng(0), 2)) for spec in MODELS]
    load_average = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(
        f"threads = {args.threads}; onnxruntime {onnxruntime.__version__}; median of {args.repeat}; "
        f"load average {load_average} on {os.cpu_count()} CPUs"
    )
    print(f"{'model':<18}{'batch':>6}{'rlx ms':>10}{'ort ms':>10}{'ort/rlx':>9}")
    for spec, blob in zip(MODELS, blobs):
        for batch in args.batch:
            rlx_ms, ort_ms = bench(spec, blob, batch, args.threads, args.repeat)
            print(f"{spec.name:<18}{batch:>6}{rlx_ms:>10.3f}{ort_ms:>10.3f}{ort_ms / rlx_ms:>9.2f}")


if __name__ == "__main__":
    main()
