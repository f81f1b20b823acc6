"""Constants whose bytes stay binary, as MLIR's `dense_resource` keeps them.

A model's weights are most of its bytes. As text (`dense<[...]>`) a BERT-base
graph is 867 MB of decimal literals that take a minute to print and parse;
as a resource the IR names them and the bytes live beside it:

```mlir
%w = rlx.constant dense_resource<encoder_weight> : tensor<768x768xf32>
...
{-#
  dialect_resources: {
    builtin: {
      encoder_weight: "0x04000000..."
    }
  }
#-}
```

In memory an `rlx.constant` holds a `ResourceElementsAttr`: the handle, the
type and a `Blob`, a read-only NumPy array that is not copied (a view on the
model file's bytes, an np.memmap, or the caller's array), so cloning a module,
running passes or compiling the same weights at another input shape never
copies or hashes them again (`Blob.digest` is computed once). It prints as
MLIR's `dense_resource<handle> : type`; the bytes are printed, in the file
trailer above (MLIR's blob format: a 4-byte little-endian alignment, then the
data, as hex), only when asked (`dialects/elision.py:ir_text(..., blobs=True)`,
`rlx-opt`'s default output), and `dialects/parser.py` reads that trailer back
and binds every handle to its bytes, with a located error when a blob is
missing or does not fit its tensor.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ShapedType, StringAttr, TensorType
from xdsl.ir import Attribute, BuiltinAttribute, Data, TypedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from rlx_mlir import dtypes
from rlx_mlir.dialects.common import element_type, shape_of

BLOB_ALIGNMENT = 64
"""The alignment a printed blob declares (MLIR's blob header); the arena's."""


@dataclass(frozen=True, eq=False)
class Blob:
    """A constant's bytes: a flat, read-only NumPy array of its element type.
    Compared by identity: two blobs are the same constant only if they are one
    object (equal bytes are found by `digest`, which the compile cache keys on)."""

    array: np.ndarray
    _digest: list[str] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, array: np.ndarray) -> Blob:
        """A blob viewing `array` (copied unless it is `immutable` and C-contiguous);
        the view is read-only. An immutable array already behind a live blob gets
        that blob, digest and all: an ONNX session imports its model's weights
        again at each new input shape, as views of the same bytes, and hashes
        them once."""
        kept = immutable(array) and array.flags.c_contiguous
        flat = (array if kept else array.copy()).reshape(-1)
        where = (flat.ctypes.data, flat.nbytes, flat.dtype.str)
        known = _LIVE.get(where) if kept else None
        if known is not None:
            return known
        view = flat.view()
        view.flags.writeable = False
        digest = _DECLARED.get(where) if kept else None
        blob = cls(view, [] if digest is None else [digest])
        if kept:
            _LIVE[where] = blob
        return blob

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    @property
    def bytes(self) -> np.ndarray:
        """The data as uint8, not copied."""
        return self.array.view(np.uint8)

    def digest(self) -> str:
        """blake2b of the bytes (computed once: a model's weights are hashed once however often they are compiled)."""
        if not self._digest:
            self._digest.append(hashlib.blake2b(self.bytes.data, digest_size=16).hexdigest())
        return self._digest[0]

    def hex_chunks(self, chunk: int = 1 << 20) -> Iterator[str]:
        """MLIR's printed blob in pieces (a model's is hundreds of MB): "0x", the
        alignment as 4 little-endian bytes, then the data, as hex digits."""
        yield "0x" + BLOB_ALIGNMENT.to_bytes(4, "little").hex().upper()
        data = self.bytes
        for start in range(0, data.size, chunk):
            yield data[start : start + chunk].tobytes().hex().upper()


def immutable(array: np.ndarray) -> bool:
    """Whether no one can change `array`'s values: it and every array it views are
    read-only, down to a read-only buffer (bytes, a read-only map of a file) or
    a read-only array owning its memory (the ONNX loader's). A read-only view of
    a writeable array is not: its owner may write it after the constant is made."""
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return False
        if array.base is None:
            return True
        array = array.base
    try:
        return memoryview(array).readonly
    except TypeError:
        return False


_DECLARED: dict[tuple[int, int, str], str] = {}
"""Digests declared for immutable arrays' bytes (`declare_digest`), by (address, size, dtype)."""


def declare_digest(array: np.ndarray, digest: str) -> None:
    """Declare the digest of an immutable array's bytes, known from what holds
    them (an ONNX file's SHA-256 and their span in it: `frontends/onnx/load.py`),
    so a blob of them need not hash them: a model's second import reads none of
    its weights' pages. Forgotten when the array is freed, before its memory
    can hold other bytes. The digest must determine the bytes, as a hash of
    them would."""
    where = (array.ctypes.data, array.nbytes, array.dtype.str)
    _DECLARED[where] = digest
    weakref.finalize(array, _DECLARED.pop, where, None)


_LIVE: weakref.WeakValueDictionary[tuple[int, int, str], Blob] = weakref.WeakValueDictionary()
"""The blob of each read-only buffer (address, size, dtype) some constant still holds:
while it lives its memory cannot be another array's."""


@irdl_attr_definition
class BlobData(Data[Blob]):
    """The bytes of a `ResourceElementsAttr` (never printed on its own: the
    handle stands for it in the IR, the file trailer holds it)."""

    name = "rlx.blob"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Blob:
        parser.raise_error("a blob is written in the file's dialect_resources trailer, not inline")

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.nbytes} bytes>")


class HandleNamer:
    """A printer that names resources: one handle per distinct blob in one print
    (two modules' `w` may be different bytes), and the blobs it printed, for its trailer."""

    def resource_handle(self, attr: ResourceElementsAttr) -> str:
        raise NotImplementedError


@irdl_attr_definition
class ResourceElementsAttr(BuiltinAttribute, TypedAttribute):
    """`dense_resource<handle> : tensor<...>` with its bytes bound (`Blob`)."""

    name = "rlx.dense_resource"

    resource_handle: StringAttr
    type: ShapedType
    blob: BlobData

    @staticmethod
    def from_array(handle: str, type: TensorType, array: np.ndarray) -> ResourceElementsAttr:
        return ResourceElementsAttr(StringAttr(handle), type, BlobData(Blob.of(array)))

    def print_without_type(self, printer: Printer) -> None:
        handle = printer.resource_handle(self) if isinstance(printer, HandleNamer) else self.resource_handle.data
        printer.print_string(f"dense_resource<{handle}>")

    def print_builtin(self, printer: Printer) -> None:
        self.print_without_type(printer)
        printer.print_string(" : ")
        printer.print_attribute(self.get_type())

    def verify(self) -> None:
        super().verify()
        if not isinstance(self.type, TensorType):
            return
        expected = _numel(self.type) * _itemsize(self.type)
        if self.blob.data.nbytes != expected:
            handle, nbytes = self.resource_handle.data, self.blob.data.nbytes
            raise VerifyException(f"dense_resource<{handle}> holds {nbytes} bytes, {self.type} needs {expected}")


ConstantValue = DenseIntOrFPElementsAttr | ResourceElementsAttr
"""What an `rlx.constant` holds: a dense literal or a resource."""


def _numel(t: Attribute) -> int:
    return int(np.prod(shape_of(t), dtype=np.int64))


def _itemsize(t: Attribute) -> int:
    return dtypes.from_ir(element_type(t)).numpy.itemsize


def viewed_as(array: np.ndarray, t: Attribute) -> np.ndarray:
    """A blob's bytes as `t`'s elements (one blob may back constants of several
    types, as in MLIR); ValueError when the sizes differ."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    expected = _numel(t) * _itemsize(t)
    if raw.size != expected:
        raise ValueError(f"the blob holds {raw.size} bytes, {t} needs {expected}")
    return raw.view(dtypes.from_ir(element_type(t)).numpy)


def constant_values(value: ConstantValue) -> np.ndarray:
    """The values of a constant's attribute as a read-only array of its type's
    shape, without copying: the one way passes and the compiler read constants."""
    t = value.get_type()
    dtype = dtypes.from_ir(element_type(t)).numpy
    if isinstance(value, ResourceElementsAttr):
        array = value.blob.data.array
    else:
        array = np.frombuffer(value.data.data, dtype=dtype)
    return array.reshape(shape_of(t))


def blob_from_hex(text: str, t: Attribute) -> np.ndarray:
    """A printed blob (`Blob.hex`) as an array of `t`'s element type; ValueError
    naming what is wrong when the text is not one or does not fit `t`."""
    if not text.startswith("0x") or len(text) % 2:
        raise ValueError("a blob is '0x' followed by an even number of hex digits")
    try:
        raw = bytes.fromhex(text[2:])
    except ValueError:
        raise ValueError("a blob holds a character that is not a hex digit") from None
    if len(raw) < 4:
        raise ValueError("a blob starts with its 4-byte alignment")
    return viewed_as(np.frombuffer(raw, dtype=np.uint8, offset=4), t)
