"""Printing IR without its weights.

A model's constants are most of its bytes: a BERT-base graph prints as
hundreds of MB of decimal literals. Two prints never need them: the key the
compile cache files a module under (a digest of each large constant's bytes
identifies it as well and costs a hash, not a print), and the planned IR an
executable keeps for people and tests to read. `ElidingPrinter` prints every
constant of more than `elide_over` elements as MLIR prints an elided one
(`dense_resource<__elided__>`, as `--mlir-elide-elementsattrs-if-larger`
does), or with `digest=True` as `dense_resource<blake2b_...>` naming its
bytes. Neither form parses back: these prints are read, never compiled.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation
from xdsl.printer import Printer

from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import shape_of

PLANNED_IR_ELIDE_OVER = 1024
"""Constants of more elements than this are elided from `Executable.planned_ir`."""


@dataclass(eq=False, repr=False, init=False)
class ElidingPrinter(Printer):
    """A printer that elides (or, with `digest`, names by digest) large dense constants."""

    elide_over: int
    digest: bool

    def __init__(self, stream: IO[str], elide_over: int, digest: bool) -> None:
        super().__init__(stream)
        self.elide_over, self.digest = elide_over, digest

    def elides(self, value: DenseIntOrFPElementsAttr) -> bool:
        return numel(shape_of(value.type)) > self.elide_over

    def print_elided(self, value: DenseIntOrFPElementsAttr) -> None:
        if self.digest:
            digest = hashlib.blake2b(value.data.data, digest_size=16).hexdigest()
            self.print_string(f"dense_resource<blake2b_{digest}>")
        else:
            self.print_string("dense_resource<__elided__>")


def print_constant(printer: Printer, value: DenseIntOrFPElementsAttr) -> None:
    """A constant's value as `printer` wants it: in full, or elided."""
    if isinstance(printer, ElidingPrinter) and printer.elides(value):
        printer.print_elided(value)
    else:
        value.print_without_type(printer)


def _printed(op: Operation, elide_over: int, digest: bool) -> str:
    stream = StringIO()
    ElidingPrinter(stream=stream, elide_over=elide_over, digest=digest).print_op(op)
    return stream.getvalue()


def elided_text(op: Operation, elide_over: int = PLANNED_IR_ELIDE_OVER) -> str:
    """`op` printed with its constants of more than `elide_over` elements elided."""
    return _printed(op, elide_over, digest=False)


def key_text(op: Operation) -> str:
    """`op` printed with each constant of more than 64 elements named by the
    digest of its bytes (its type is printed beside it): a cache key's text."""
    return _printed(op, 64, digest=True)
