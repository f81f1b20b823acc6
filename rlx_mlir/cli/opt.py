"""rlx-opt: xDSL's opt driver with the rlx dialect and passes registered.

Same flags as xdsl-opt / mlir-opt (-p, --split-input-file,
--verify-diagnostics, -t llvm, -o). Bad input is one line on stderr and exit
code 1, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from rlx_mlir.cli.diagnostics import fail
from rlx_mlir.passes import get_all_passes


class RlxOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        from rlx_mlir.dialects.rlx import RLX

        if "rlx" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("rlx", lambda: RLX)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)


def main(args: Sequence[str] | None = None) -> None:
    try:
        RlxOptMain(description="rlx modular optimizer driver", args=args).run()
    except (ParseError, DiagnosticException, VerifyException, ValueError, OSError, NotImplementedError) as error:
        fail("rlx-opt", error)


if __name__ == "__main__":
    main(sys.argv[1:])
