"""rlx-opt: xDSL's opt driver with the rlx dialect and passes registered.

Same flags as xdsl-opt / mlir-opt (-p, --split-input-file,
--verify-diagnostics, -t llvm, -o). An `.onnx` file is imported
(`cli/onnx_input.py`) and printed or transformed like any rlx IR. Bad input is one line on stderr and exit
code 1, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from rlx_mlir.cli.diagnostics import fail
from rlx_mlir.cli.onnx_input import OnnxFrontend
from rlx_mlir.context import cycle_collection_paused
from rlx_mlir.errors import RlxError
from rlx_mlir.passes.registry import get_all_passes
from rlx_mlir.verification import verify_module


class RlxOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        from rlx_mlir.dialects.rlx import RLX

        if "rlx" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("rlx", lambda: RLX)

    def register_all_frontends(self) -> None:
        self.available_frontends["mlir"] = lambda: RlxTextFrontend  # before xDSL's own, which expands splats
        super().register_all_frontends()
        self.available_frontends[OnnxFrontend.name] = lambda: OnnxFrontend

    def register_all_targets(self) -> None:
        # before xDSL's own `llvm` target, which drops the `!nontemporal` metadata of streaming stores
        self.available_targets["llvm"] = _print_llvm_ir
        self.available_targets["mlir"] = lambda: RlxMLIRTarget  # resources' bytes in the trailer
        super().register_all_targets()

    @staticmethod
    def known_targets() -> set[str]:
        from xdsl.universe import Universe

        return set(Universe.get_multiverse().all_targets)

    def apply_passes(self, prog: ModuleOp) -> None:
        verify_module(prog)  # dominance, which xDSL leaves unchecked and the passes rely on
        super().apply_passes(prog)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)


@dataclass(frozen=True)
class RlxTextFrontend(MLIRFrontend):
    """IR text read by `RlxParser`, as `rlx.parse` reads it: a splat stays one value."""

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "input") -> ModuleOp:
        from rlx_mlir.dialects.parser import RlxParser

        return RlxParser(ctx, input.read(), input_name).parse_module(not self.no_implicit_module)


PRINTED_RESOURCES_UP_TO = 1 << 16
"""rlx-opt prints the blobs of resources up to this many bytes (64 KiB) unless asked for more."""


@dataclass(frozen=True)
class RlxMLIRTarget(MLIRTarget):
    """`-t mlir`, the default output: xDSL's, with the blobs of the module's
    resources in MLIR's `{-# dialect_resources #-}` trailer, so the output
    parses back as it does with mlir-opt, but for blobs of more than
    `resources_up_to` bytes (a model's weights: the IR of a BERT-base would
    be 870 MB of hex), which are printed only when asked:
    `-t 'mlir{resources_up_to=-1}'` prints every blob, `=0` none."""

    resources_up_to: int = PRINTED_RESOURCES_UP_TO

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from rlx_mlir.dialects.elision import NO_ELISION, ElidingPrinter

        printer = ElidingPrinter(
            output,
            NO_ELISION,
            False,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_blobs(None if self.resources_up_to < 0 else self.resources_up_to)
        print("\n", file=output)


def _print_llvm_ir(module: ModuleOp, output: IO[str]) -> None:
    """`-t llvm`: the LLVM IR that `rlx.compile` JIT-compiles (`lowering/core/translate.py`)."""
    from rlx_mlir.lowering.core.translate import to_llvm_ir

    output.write(to_llvm_ir(module))


def _check_target(args: Sequence[str]) -> None:
    """An unknown -t is one line too (argparse would print its usage and exit 2)."""
    for flag, value in itertools.pairwise(args):
        if flag in ("-t", "--target"):
            known = RlxOptMain.known_targets()
            if value.split("{")[0] not in known:
                raise ValueError(f"unknown target '{value}' (choose from {', '.join(sorted(known))})")


def _driver(args: Sequence[str] | None) -> RlxOptMain:
    """The driver with its arguments parsed; a bad flag is one line too (argparse
    would print its whole usage and exit 2)."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            return RlxOptMain(description="rlx modular optimizer driver", args=args)
    except SystemExit as exit_:
        if exit_.code == 0:
            raise
        complaint = [line for line in captured.getvalue().splitlines() if ": error: " in line]
        raise ValueError(complaint[-1].split(": error: ", 1)[1] if complaint else "bad command line") from None


def main(args: Sequence[str] | None = None) -> None:
    try:
        _check_target(list(sys.argv[1:] if args is None else args))
        with cycle_collection_paused():  # linear in the size of the input, as rlx.compile
            _driver(args).run()
    except RecursionError:
        fail("rlx-opt", ValueError("the input nests too deeply (modules, regions or dense literals)"))
    except NotImplementedError as error:  # xDSL raises it bare, e.g. for an f80 constant
        fail("rlx-opt", ValueError(f"unsupported syntax: {str(error) or 'a type or literal xDSL cannot represent'}"))
    except (
        ParseError,
        DiagnosticException,
        ValueError,
        OverflowError,
        OSError,
        MemoryError,
        ArgSpecParseError,
        RlxError,
    ) as error:
        fail("rlx-opt", error)


if __name__ == "__main__":
    main(sys.argv[1:])
