"""rlx-run: JIT-compile an rlx function or an ONNX model and run it on .npy inputs.

    rlx-run graph.mlir --input a.npy --input b.npy --output out.npz
    rlx-run model.onnx --input ids.npy --threads 2

Inputs bind to the function's arguments in order. `--input NAME=FILE.npy` is
accepted too: for rlx IR the name is informational; for an ONNX model it
binds the file to that input, and the unnamed files fill the other inputs in
order. An ONNX model runs through `rlx_mlir.onnx.InferenceSession`, so its
input shapes come from the .npy files (dynamic dimensions need no
`--input-shape`). Results go to an .npz (result0, result1, ...) or, without
--output, are printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rlx_mlir.cli.diagnostics import OneLineParser, fail
from rlx_mlir.cli.onnx_input import joined_import_error, parse_shapes
from rlx_mlir.compiler import compile as compile_module
from rlx_mlir.errors import ArgumentError, CompileError, RlxError
from rlx_mlir.runtime import Executable


def _split(spec: str) -> tuple[str | None, str]:
    """`NAME=FILE` as (NAME, FILE); a plain file (even one whose name holds '=') as (None, FILE)."""
    if "=" in spec and not Path(spec).exists():
        name, path = spec.split("=", 1)
        return name, path
    return None, spec


def _load(path: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except EOFError:
        raise RlxError(f"cannot read input '{path}': the file is empty or cut short") from None
    except (OSError, ValueError) as error:
        raise RlxError(f"cannot read input '{path}': {error}") from None


def _thread_count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"takes a count >= 0 (0: every CPU), got '{text}'")
    return count


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="rlx-run", description="JIT-compile and run an rlx function or an ONNX model")
    parser.add_argument("file", help="rlx IR (.mlir) or an ONNX model (.onnx)")
    parser.add_argument(
        "--input",
        "-i",
        action="append",
        default=[],
        metavar="[NAME=]FILE.npy",
        help="an .npy file per argument, in order (an ONNX model's input by NAME=)",
    )
    parser.add_argument("--output", "-o", help="write the results to this .npz")
    parser.add_argument("--entry", help="the function to run (if the .mlir file has several)")
    parser.add_argument("-p", "--pipeline", help="tensor-level passes before planning (default pipeline if omitted)")
    parser.add_argument("--print-ir", action="store_true", help="print the IR after the tensor-level passes")
    parser.add_argument(
        "--target",
        help="the machine to compile for: native, x86-64-v3, x86-64-v4 or an LLVM CPU name "
        "(default: $RLX_MLIR_TARGET, else native)",
    )
    parser.add_argument(
        "--threads",
        type=_thread_count,
        default=0,
        metavar="N",
        help="split large kernels over at most N threads (default 0: every CPU)",
    )
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=1x128",
        help="an ONNX input's shape: optional, its .npy file gives it (and is checked against it)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=20,
        metavar="RUNS",
        help="print where the time goes: each op's median time over RUNS calls (default 20), bytes and FLOPs",
    )
    return parser


def _rlx_ir(options: argparse.Namespace) -> tuple[Executable, list[np.ndarray]]:
    """The executable of an .mlir file, and its inputs in order."""
    text = Path(options.file).read_text()
    exe = compile_module(
        text, pipeline=options.pipeline, entry=options.entry, threads=options.threads, target=options.target
    )
    return exe, [_load(_split(spec)[1]) for spec in options.input]


def _onnx_model(options: argparse.Namespace) -> tuple[Executable, list[np.ndarray]]:
    """The executable of an ONNX model for the shapes of its .npy inputs, and those inputs in order."""
    if options.entry is not None:
        raise ArgumentError("--entry picks a function of an .mlir file; an ONNX model is one function")
    try:
        from rlx_mlir.onnx import InferenceSession
    except ImportError as error:
        raise CompileError(
            f"running ONNX models needs the onnx package (pip install 'rlx-mlir[onnx]'): {error}"
        ) from None
    shapes = parse_shapes(options.input_shape)  # the arguments first, then the model
    try:
        session = InferenceSession(
            options.file, threads=options.threads, target=options.target, pipeline=options.pipeline
        )
        names = [arg.name for arg in session.get_inputs()]
        feed = _feed(names, options.input)
        _check_shapes(feed, names, shapes)
        return session.executable(feed), [feed[name] for name in names]
    except CompileError as error:
        raise joined_import_error(error) from None


def _check_shapes(feed: dict[str, np.ndarray], names: list[str], shapes: dict[str, tuple[int, ...]]) -> None:
    """`--input-shape`s agree with the .npy files (which give the shapes)."""
    for name, shape in shapes.items():
        if name not in names:
            raise ArgumentError(f"--input-shape names no input of the model: '{name}' (its inputs: {', '.join(names)})")
        if name in feed and feed[name].shape != shape:
            given = list(feed[name].shape)
            raise ArgumentError(f"--input-shape gives '{name}' the shape {list(shape)}, its .npy file {given}")


def _feed(names: list[str], specs: Sequence[str]) -> dict[str, np.ndarray]:
    """The .npy files as an ONNX feed: NAME=FILE by name, the unnamed ones in the other inputs' order."""
    feed: dict[str, np.ndarray] = {}
    unnamed = []
    for spec in specs:
        name, path = _split(spec)
        if name is None:
            unnamed.append(_load(path))
        elif name in feed:
            raise ArgumentError(f"--input gives '{name}' twice")
        else:
            feed[name] = _load(path)
    free = [name for name in names if name not in feed]
    if len(unnamed) > len(free):
        raise ArgumentError(
            f"the model takes {len(names)} input(s) ({', '.join(names)}), got {len(specs)} --input files"
        )
    feed.update(zip(free, unnamed))
    return feed


def main(args: Sequence[str] | None = None) -> None:
    options = _parser().parse_args(args)
    try:
        exe, inputs = _onnx_model(options) if options.file.endswith(".onnx") else _rlx_ir(options)
        if options.print_ir:
            print(f"// target: {exe.target}")
            print(exe.planned_ir)
        results = exe(*inputs)
        if options.profile is not None:
            print(exe.profile(*inputs, repeat=options.profile))
        if options.output:
            if Path(options.output).is_dir():
                raise RlxError(f"--output {options.output} is a directory; give a file name")
            # Any: mypy checks a ** dict against every keyword of savez, allow_pickle: bool too
            named: dict[str, Any] = {f"result{k}": r for k, r in enumerate(results)}
            np.savez(options.output, **named)
        else:
            for k, result in enumerate(results):
                print(f"result{k}: {result.dtype}{list(result.shape)}\n{result}")
    except (RlxError, OSError, IndexError, ValueError, MemoryError) as error:
        fail("rlx-run", error)


if __name__ == "__main__":
    main(sys.argv[1:])
