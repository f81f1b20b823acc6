"""Printing IR without its weights, or with them as binary blobs.

A model's constants are most of its bytes: a BERT-base graph prints as
hundreds of MB of decimal literals. Most prints never need them: the key the
compile cache files a module under (a digest of each large constant's bytes
identifies it as well and costs a hash, not a print), and the planned IR an
executable keeps for people and tests to read. `ElidingPrinter` prints every
dense constant of more than `elide_over` elements as MLIR prints an elided
one (`dense_resource<__elided__>`, as `--mlir-elide-elementsattrs-if-larger`
does), or with `digest=True` as `dense_resource<blake2b_...>` naming its
bytes. Neither form parses back: these prints are read, never compiled.

Resource constants (`dialects/resources.py`) print as their handle, one handle
per distinct blob (`ElidingPrinter.resource_handle`); `ir_text(op, blobs=True)`
appends their bytes in MLIR's `{-# dialect_resources #-}` trailer, which
`dialects/parser.py` reads back: the one print of weights, made only when
asked (rlx-opt's output, a file a user wants to round-trip).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from io import StringIO
from typing import IO

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation
from xdsl.printer import Printer

from rlx_mlir.broadcast import numel
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.dialects.resources import Blob, ConstantValue, HandleNamer, ResourceElementsAttr

PLANNED_IR_ELIDE_OVER = 1024
"""Constants of more elements than this are elided from `Executable.planned_ir`."""

NO_ELISION = 1 << 62
"""`elide_over` for a print that keeps every dense literal."""

_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


@dataclass(eq=False, repr=False, init=False)
class ElidingPrinter(Printer, HandleNamer):
    """A printer that elides (or, with `digest`, names by digest) large dense
    constants, and names each resource's blob by one handle."""

    elide_over: int
    digest: bool
    blobs: dict[str, Blob]
    """The blobs printed, by the handle they were printed as."""

    def __init__(
        self,
        stream: IO[str],
        elide_over: int,
        digest: bool,
        print_generic_format: bool = False,
        print_properties_as_attributes: bool = False,
        print_debuginfo: bool = False,
    ) -> None:
        super().__init__(
            stream,
            print_generic_format=print_generic_format,
            print_properties_as_attributes=print_properties_as_attributes,
            print_debuginfo=print_debuginfo,
        )
        self.elide_over, self.digest, self.blobs = elide_over, digest, {}
        self._handles: dict[tuple[int, int], str] = {}

    def elides(self, value: DenseIntOrFPElementsAttr) -> bool:
        return numel(shape_of(value.type)) > self.elide_over

    def print_elided(self, value: DenseIntOrFPElementsAttr) -> None:
        if self.digest:
            digest = hashlib.blake2b(value.data.data, digest_size=16).hexdigest()
            self.print_string(f"dense_resource<blake2b_{digest}>")
        else:
            self.print_string("dense_resource<__elided__>")

    def resource_handle(self, attr: ResourceElementsAttr) -> str:
        """The blob's digest for a key, else its handle: the attribute's own,
        made a bare identifier and, if another blob took it in this print, numbered."""
        blob = attr.blob.data
        if self.digest:
            return f"blake2b_{blob.digest()}"
        where = (blob.array.ctypes.data, blob.nbytes)  # one buffer viewed as two types is one blob
        handle = self._handles.get(where)
        if handle is None:
            wanted = attr.resource_handle.data
            base = wanted if _BARE_ID.fullmatch(wanted) else "_" + re.sub(r"[^A-Za-z0-9_$.]", "_", wanted)
            handle, n = base, 0
            while handle in self.blobs:
                n += 1
                handle = f"{base}_{n}"
            self._handles[where] = handle
            self.blobs[handle] = blob
        return handle

    def print_blobs(self, up_to: int | None = None) -> None:
        """The file trailer holding the printed blobs (those of at most `up_to`
        bytes, if given), as MLIR prints it."""
        blobs = {h: b for h, b in self.blobs.items() if up_to is None or b.nbytes <= up_to}
        if not blobs:
            return
        self.print_string("\n\n{-#\n  dialect_resources: {\n    builtin: {\n")
        for k, (handle, blob) in enumerate(blobs.items()):
            self.print_string(f'      {handle}: "')
            for chunk in blob.hex_chunks():
                self.print_string(chunk)
            self.print_string('",\n' if k + 1 < len(blobs) else '"\n')
        self.print_string("    }\n  }\n#-}\n")


def print_constant(printer: Printer, value: ConstantValue) -> None:
    """A constant's value as `printer` wants it: in full, elided, or a resource's handle."""
    if isinstance(printer, ElidingPrinter) and isinstance(value, DenseIntOrFPElementsAttr) and printer.elides(value):
        printer.print_elided(value)
    else:
        value.print_without_type(printer)


def _printed(op: Operation, elide_over: int, digest: bool, blobs: bool = False) -> str:
    stream = StringIO()
    printer = ElidingPrinter(stream=stream, elide_over=elide_over, digest=digest)
    printer.print_op(op)
    if blobs:
        printer.print_blobs()
    return stream.getvalue()


def elided_text(op: Operation, elide_over: int = PLANNED_IR_ELIDE_OVER) -> str:
    """`op` printed with its constants of more than `elide_over` elements elided, resources by handle."""
    return _printed(op, elide_over, digest=False)


def key_text(op: Operation) -> str:
    """`op` printed with each constant of more than 64 elements, and each
    resource, named by the digest of its bytes (its type is printed beside it):
    a cache key's text."""
    return _printed(op, 64, digest=True)


def ir_text(op: Operation, blobs: bool = True) -> str:
    """`op` printed in full: dense literals as they are and, with `blobs`, the
    resources' bytes in the file trailer, so the text parses back to the same module."""
    return _printed(op, NO_ELISION, digest=False, blobs=blobs)


def text_and_blobs(op: Operation) -> tuple[str, dict[str, np.ndarray]]:
    """`op` printed in full but for its resources' bytes, and those bytes by the
    handle printed: what `parse(text, blobs)` takes back (an executable's pickle)."""
    stream = StringIO()
    printer = ElidingPrinter(stream=stream, elide_over=NO_ELISION, digest=False)
    printer.print_op(op)
    return stream.getvalue(), {handle: blob.array for handle, blob in printer.blobs.items()}
