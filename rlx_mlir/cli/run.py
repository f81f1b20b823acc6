"""rlx-run: JIT-compile an rlx function and run it on .npy inputs.

    rlx-run graph.mlir --input a.npy --input b.npy --output out.npz

Inputs bind to the function's arguments in order (`--input name=file.npy` is
accepted too; the name is informational). Results go to an .npz (result0,
result1, ...) or, without --output, are printed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_mlir.cli.diagnostics import OneLineParser, fail
from rlx_mlir.cli.onnx_input import parse_shapes, read_model
from rlx_mlir.compiler import compile as compile_module
from rlx_mlir.errors import RlxError


def _load(spec: str) -> np.ndarray:
    path = spec.split("=", 1)[1] if "=" in spec and not Path(spec).exists() else spec
    try:
        return np.load(path, allow_pickle=False)
    except EOFError:
        raise RlxError(f"cannot read input '{path}': the file is empty or cut short") from None
    except (OSError, ValueError) as error:
        raise RlxError(f"cannot read input '{path}': {error}") from None


def main(args: Sequence[str] | None = None) -> None:
    parser = OneLineParser(prog="rlx-run", description="JIT-compile and run an rlx function")
    parser.add_argument("file", help="rlx IR (.mlir) or an ONNX model (.onnx)")
    parser.add_argument("--input", "-i", action="append", default=[], help="an .npy file per argument, in order")
    parser.add_argument("--output", "-o", help="write the results to this .npz")
    parser.add_argument("--entry", help="the function to run (if the file has several)")
    parser.add_argument("-p", "--pipeline", help="tensor-level passes before planning (default pipeline if omitted)")
    parser.add_argument("--print-ir", action="store_true", help="print the IR after the tensor-level passes")
    parser.add_argument(
        "--target",
        help="the machine to compile for: native, x86-64-v3, x86-64-v4 or an LLVM CPU name "
        "(default: $RLX_MLIR_TARGET, else native)",
    )
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=1x128",
        help="an ONNX input's static shape (for models exported with dynamic dimensions)",
    )
    parser.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=20,
        metavar="RUNS",
        help="print where the time goes: each op's median time over RUNS calls (default 20), bytes and FLOPs",
    )
    options = parser.parse_args(args)
    try:
        source: ModuleOp | str
        if options.file.endswith(".onnx"):
            source = read_model(options.file, parse_shapes(options.input_shape))
        else:
            source = Path(options.file).read_text()
        exe = compile_module(source, pipeline=options.pipeline, entry=options.entry, target=options.target)
        if options.print_ir:
            print(f"// target: {exe.target}")
            print(exe.planned_ir)
        inputs = [_load(spec) for spec in options.input]
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
