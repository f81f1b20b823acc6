"""How the command-line tools report an error: one line, exit code 1."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from xdsl.utils.exceptions import ParseError

from rlx_mlir.errors import ParseError as RlxParseError


def one_line(error: BaseException) -> str:
    """`file:line:col: message` for parse errors (xDSL's, or the API's that carry
    its text: location first, message last), the first line otherwise."""
    if isinstance(error, (ParseError, RlxParseError)):
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        return f"{lines[0]}: {lines[-1]}" if len(lines) > 1 else lines[0]
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def fail(tool: str, error: BaseException) -> NoReturn:
    print(f"{tool}: error: {one_line(error)}", file=sys.stderr)
    sys.exit(1)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line and exit code 1, like every other error."""

    def error(self, message: str) -> NoReturn:
        fail(self.prog, ValueError(message))
