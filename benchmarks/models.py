"""The model suite (tests/model_suite.py): rlx_mlir vs onnxruntime on models
that `transformers` builds from small configs with random weights.

    python benchmarks/models.py [--models bert,gpt2] [--exporters torchscript,dynamo]
                                [--batch 1 8] [--seq 128] [--repeat 20] [--threads 2]
                                [--without fuse-attention | --versus KNOB=VALUE,...] [--profile N]

Each model (width 256, 4 layers, 8 heads, MLP 1024: `model_suite.SMALL`) is
exported by each exporter with dynamic batch and sequence axes, imported by
rlx at each batch size and compared with onnxruntime (within 1e-4) before
timing (Mamba's exports fix the sequence length: they are exported at
`--seq`). The decoders also run one decode step (`--past` cached steps), and
Mamba2 one from its states (dynamo's export only). Both
run on `--threads` threads in one process, alternating call by call; the
figures are medians and the ratio is onnxruntime / rlx (> 1: rlx is faster).
onnxruntime's threads do not spin between calls
(`session.intra_op.allow_spinning = 0`): spinning workers of one runtime would
take the cores the other is timed on. Compile time is rlx's import and
compile of each shape, cold (the disk cache is off). `--without PASS` also
compiles each shape without that tensor pass of the default pipeline and
times it in the same rounds (the `w/o` columns, its compile time too): a
pass's before and after on one loaded machine. `--versus KNOB=VALUE,...` does
the same with those tuning overrides (`rlx_mlir.tuning`) in place of a pass.
`--profile N` prints, under each row, the N ops where rlx's call spends the
most time (`Executable.profile`: a profiling build of the same plan).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from machine import add_target_argument, use_target  # this script's folder is on sys.path
from model_suite import (
    DECODE_AXES,
    DECODE_OUTPUTS,
    DECODERS,
    EXPORTERS,
    MAMBA2_DECODE_AXES,
    MAMBA2_DECODE_OUTPUTS,
    ONNXRUNTIME_REJECTS,
    SMALL,
    SUITE,
    decode_inputs,
    decode_step,
    export,
    mamba2_decode_inputs,
    mamba2_decode_step,
)
from timing import interleaved_medians

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load
from rlx_mlir.passes import default_pipeline
from rlx_mlir.profiler import Profile
from rlx_mlir.tuning import parse_overrides


def session(blob: bytes, threads: int) -> onnxruntime.InferenceSession:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # no warning per call that a dynamic output's declared shape differs
    return onnxruntime.InferenceSession(blob, options, providers=["CPUExecutionProvider"])


def compare(
    blob: bytes,
    feeds: dict[str, np.ndarray],
    threads: int,
    repeat: int,
    baseline: dict[str, Any] | None = None,
    profile: int = 0,
) -> tuple[dict[str, float], dict[str, float], Profile | None]:
    """(ms of rlx, onnxruntime and, given a `baseline` (a pipeline or tuning overrides
    as `rlx.compile` takes them), rlx compiled with it; compile s of rlx and the
    baseline; with `profile`, rlx's profile cut to its `profile` slowest ops) after
    checking all agree."""
    shapes = {name: x.shape for name, x in feeds.items()}
    start = time.perf_counter()
    exe = rlx.compile(load(blob, input_shapes=shapes), threads=threads)
    compile_seconds = {"rlx": time.perf_counter() - start}
    ort = session(blob, threads)
    arrays = list(feeds.values())
    outputs = exe(*arrays)
    want = ort.run(None, feeds)
    for got, expected in zip(outputs, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    fns: dict[str, Callable[[], object]] = {
        "rlx": lambda: exe(*arrays, out=outputs),
        "ort": lambda: ort.run(None, feeds),
    }
    if baseline is not None:
        start = time.perf_counter()
        base = rlx.compile(load(blob, input_shapes=shapes), threads=threads, **baseline)
        compile_seconds["base"] = time.perf_counter() - start
        base_outputs = base(*arrays)
        for got, expected in zip(base_outputs, want, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        fns["base"] = lambda: base(*arrays, out=base_outputs)
    medians = interleaved_medians(fns, repeat)
    if not profile:
        return medians, compile_seconds, None
    report = exe.profile(*arrays, repeat=repeat)
    slowest = sorted(report.rows, key=lambda row: row.seconds, reverse=True)[:profile]
    return medians, compile_seconds, dataclasses.replace(report, rows=tuple(slowest))


def cases(args: argparse.Namespace) -> list[tuple[str, str, bytes, dict[str, np.ndarray]]]:
    """(model, exporter, ONNX bytes, inputs) for every row of the table."""
    rows = []
    for spec in SUITE:
        if spec.name not in args.models:
            continue
        module = spec.module(SMALL)
        for exporter in args.exporters:
            if (spec.name, exporter) in ONNXRUNTIME_REJECTS:
                print(f"{spec.name} {exporter}: no row, onnxruntime refuses the export")
                continue
            example = spec.example(SMALL, batch=2, seq=args.seq if spec.fixed_length else 16)
            blob = export(module, {spec.input.name: example}, spec.axes, ["hidden"], exporter)
            rows += [
                (spec.name, exporter, blob, {spec.input.name: spec.example(SMALL, b, args.seq)}) for b in args.batch
            ]
            if spec.name in DECODERS:
                step = decode_step(spec.name, SMALL)
                example = decode_inputs(spec.name, SMALL, batch=2, past=16)
                blob = export(step, example, DECODE_AXES, DECODE_OUTPUTS, exporter)
                feeds = [decode_inputs(spec.name, SMALL, batch=b, past=args.past) for b in args.batch]
                rows += [(f"{spec.name} decode", exporter, blob, f) for f in feeds]
            if spec.name == "mamba2" and exporter == "dynamo":  # TorchScript cannot export its step
                step = mamba2_decode_step(SMALL)
                blob = export(step, mamba2_decode_inputs(step, 2), MAMBA2_DECODE_AXES, MAMBA2_DECODE_OUTPUTS, exporter)
                rows += [("mamba2 decode", exporter, blob, mamba2_decode_inputs(step, b)) for b in args.batch]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=lambda s: s.split(","), default=[spec.name for spec in SUITE])
    parser.add_argument("--exporters", type=lambda s: s.split(","), default=list(EXPORTERS))
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--past", type=int, default=128, help="cached steps of the decode rows")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2, help="for rlx and onnxruntime alike")
    variant = parser.add_mutually_exclusive_group()
    variant.add_argument("--without", help="also time rlx without this pass of the default pipeline")
    variant.add_argument("--versus", type=parse_overrides, help="also time rlx with these tuning overrides")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print rlx's N slowest ops per row")
    add_target_argument(parser)
    args = parser.parse_args()
    os.environ["RLX_MLIR_CACHE"] = "0"
    print(use_target(args.target))
    torch.set_num_threads(1)  # torch only builds and exports
    print(f"threads = {args.threads}; onnxruntime {onnxruntime.__version__}; seq {args.seq}; median of {args.repeat}")
    baseline: dict[str, Any] | None = None
    if args.without:
        try:
            baseline = {"pipeline": default_pipeline.tensor_pipeline_without(args.without)}
        except ValueError as error:
            raise SystemExit(f"--without: {error}") from None
        label = f"without {args.without}"
    elif args.versus:
        baseline, label = {"tuning": args.versus}, f"with {args.versus}"
    extra = f"{'w/o ms':>10}{'ort/w/o':>9}" if baseline else ""
    base_compile = f"{'w/o compile s':>15}" if baseline else ""
    print(
        f"{'model':<16}{'exporter':>12}{'batch':>6}{'rlx ms':>10}{'ort ms':>10}{'ort/rlx':>9}{extra}"
        f"{'compile s':>11}{base_compile}"
    )
    ratios, base_ratios = [], []
    for name, exporter, blob, feeds in cases(args):
        ms, seconds, profile = compare(blob, feeds, args.threads, args.repeat, baseline, args.profile)
        ratios.append(ms["ort"] / ms["rlx"])
        batch = next(iter(feeds.values())).shape[0]
        row = f"{name:<16}{exporter:>12}{batch:>6}{ms['rlx']:>10.3f}{ms['ort']:>10.3f}{ratios[-1]:>9.2f}"
        if "base" in ms:
            base_ratios.append(ms["ort"] / ms["base"])
            row += f"{ms['base']:>10.3f}{base_ratios[-1]:>9.2f}"
        row += f"{seconds['rlx']:>11.2f}" + (f"{seconds['base']:>15.2f}" if "base" in seconds else "")
        print(row, flush=True)
        if profile is not None:
            print(textwrap.indent(str(profile), "    "), flush=True)
    summary = f"median ort/rlx {statistics.median(ratios):.2f}, min {min(ratios):.2f}"
    if base_ratios:
        summary += f"; {label}: median {statistics.median(base_ratios):.2f}, min {min(base_ratios):.2f}"
    print(f"{summary}; load average now {os.getloadavg()}")


if __name__ == "__main__":
    main()
