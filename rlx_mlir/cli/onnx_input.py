"""ONNX models as input of the command-line tools.

`rlx-opt model.onnx` finds `OnnxFrontend` by the file extension, through xDSL's
frontend registry (`-f onnx` forces it); `rlx-opt model.onnx -f
'onnx{input-shapes="x=1x128"}'` fixes dynamic dimensions (`rlx-run` takes
them from its .npy inputs, through `rlx_mlir/onnx.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.frontend import Frontend

from rlx_mlir.errors import ArgumentError, CompileError


def parse_shapes(specs: Iterable[str]) -> dict[str, tuple[int, ...]]:
    """`NAME=DxD...` specs (`x=1x128`; `s=` is a scalar) as load()'s `input_shapes`."""
    shapes = {}
    for spec in specs:
        name, _, dims = spec.rpartition("=")
        try:
            if not name:
                raise ValueError(spec)
            shapes[name] = tuple(int(d) for d in dims.split("x")) if dims else ()
        except ValueError:
            raise ArgumentError(f"input shape '{spec}': expected NAME=DxDx... (e.g. x=1x128)") from None
    return shapes


def read_model(model: str | Path | bytes, input_shapes: dict[str, tuple[int, ...]] | None = None) -> ModuleOp:
    """The imported model, its import errors on one line (`joined_import_error`)."""
    try:
        from rlx_mlir.frontends.onnx import load
    except ImportError as error:
        raise CompileError(
            f"reading ONNX models needs the onnx package (pip install 'rlx-mlir[onnx]'): {error}"
        ) from None
    try:
        return load(model, input_shapes=input_shapes)
    except CompileError as error:
        raise joined_import_error(error) from None


def joined_import_error(error: CompileError) -> CompileError:
    """The error on one line: the tools print one, so the list of unsupported
    nodes (one per line from `load`) is joined with '; ' rather than cut."""
    heading, *items = str(error).splitlines() or [""]
    return CompileError(" ".join([heading, "; ".join(item.strip() for item in items)]).strip())


@dataclass(frozen=True)
class OnnxFrontend(Frontend):
    """xDSL frontend for `.onnx` files: the model as one rlx function."""

    name: ClassVar[str] = "onnx"

    input_shapes: tuple[str, ...] = ()
    """`NAME=DxD...` per input with dynamic dimensions."""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "input") -> ModuleOp:
        return read_model(input.read(), parse_shapes(self.input_shapes))
