"""An ONNX model's weights as views on its file's bytes, never copied.

protobuf copies every `raw_data` field when it parses a model, and once more
when Python reads it: a 435 MB BERT-base file held 1.3 GB before any compile.
`split` walks the protobuf wire format of the file's bytes (a read-only map
of the file, or the caller's bytes) far enough to find each initializer's
`raw_data` (ModelProto.graph = 7, GraphProto.initializer = 5,
TensorProto.raw_data = 9), and returns the model without those fields, which
protobuf parses in milliseconds, and each initializer's data span, which
`load` views as a read-only NumPy array of the tensor's type. An initializer
whose data is not raw (float_data, int64_data ...), of a packed type (int4),
or in an external file is read by the loader as before.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from rlx_mlir import disk_cache

MODEL_GRAPH, GRAPH_INITIALIZER, TENSOR_RAW_DATA = 7, 5, 9
_LENGTH_DELIMITED = 2

GRAPH_INPUT, GRAPH_OUTPUT = 11, 12
TENSOR_NAME, TENSOR_EXTERNAL_DATA, TENSOR_DATA_LOCATION = 8, 13, 14


class WireError(ValueError):
    """The bytes are not a protobuf message the walk can follow."""


@dataclass(frozen=True)
class Split:
    """A model's bytes without its initializers' raw data, and where that data was."""

    stripped: bytes
    spans: list[tuple[int, int] | None]
    """(offset, length) in the original bytes of each initializer's raw data, in
    the graph's order; None for one without raw data."""


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("a varint runs past the end of the message")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


Field = tuple[int, int, int, int, int]
"""A protobuf field as `_fields` yields it: (number, wire type, start, payload start, stop)."""


def _fields(data: memoryview, start: int, end: int) -> list[Field]:
    """(field number, wire type, field start, payload start, field end) of each field in data[start:end]."""
    fields, at = [], start
    while at < end:
        tag, payload = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, stop = _varint(data, payload)
        elif wire == 1:
            stop = payload + 8
        elif wire == _LENGTH_DELIMITED:
            length, payload = _varint(data, payload)
            stop = payload + length
        elif wire == 5:
            stop = payload + 4
        else:
            raise WireError(f"wire type {wire} (groups are not in ONNX)")
        if stop > end:
            raise WireError("a field runs past the end of its message")
        fields.append((number, wire, at, payload, stop))
        at = stop
    return fields


def _message(number: int, body: bytes) -> bytes:
    return _encode_varint(number << 3 | _LENGTH_DELIMITED) + _encode_varint(len(body)) + body


def _with_graph(data: memoryview, graph_field: Callable[[Field], bytes]) -> bytes:
    """`data` (a serialized ModelProto) with each field of its graph replaced by
    what `graph_field` makes of it (b"": dropped); the model's other fields as they are."""
    model = bytearray()
    for number, wire, start, payload, stop in _fields(data, 0, len(data)):
        if number != MODEL_GRAPH or wire != _LENGTH_DELIMITED:
            model += data[start:stop]
            continue
        graph = b"".join(graph_field(field) for field in _fields(data, payload, stop))
        model += _message(MODEL_GRAPH, graph)
    return bytes(model)


def split(data: memoryview) -> Split:
    """`data` (a serialized ModelProto) without the initializers' raw data, and the spans of that data."""
    spans: list[tuple[int, int] | None] = []

    def without_raw_data(field: Field) -> bytes:
        number, wire, start, payload, stop = field
        if number != GRAPH_INITIALIZER or wire != _LENGTH_DELIMITED:
            return bytes(data[start:stop])
        tensor, span = bytearray(), None
        for t_number, t_wire, t_start, t_payload, t_stop in _fields(data, payload, stop):
            if t_number == TENSOR_RAW_DATA and t_wire == _LENGTH_DELIMITED:
                span = (t_payload, t_stop - t_payload)
            else:
                tensor += data[t_start:t_stop]
        spans.append(span)
        return _message(GRAPH_INITIALIZER, bytes(tensor))

    return Split(_with_graph(data, without_raw_data), spans)


def outline(data: memoryview) -> bytes:
    """`data` (a serialized ModelProto) with only what a session reads before it
    compiles: the model's own fields, and of its graph the inputs, the outputs
    and each initializer's name and data location (no nodes, no data). Walking
    a 435 MB BERT-base this way reads a few hundred kB of it (a mapped file's
    pages of weights are never touched); parsing the whole model took 0.5 s."""
    kept = (TENSOR_NAME, TENSOR_EXTERNAL_DATA, TENSOR_DATA_LOCATION)

    def declarations(field: Field) -> bytes:
        number, wire, start, payload, stop = field
        if number in (GRAPH_INPUT, GRAPH_OUTPUT):
            return bytes(data[start:stop])
        if number == GRAPH_INITIALIZER and wire == _LENGTH_DELIMITED:
            tensor = b"".join(bytes(data[t[2] : t[4]]) for t in _fields(data, payload, stop) if t[0] in kept)
            return _message(GRAPH_INITIALIZER, tensor)
        return b""

    return _with_graph(data, declarations)


def mapped(stream: BinaryIO) -> memoryview:
    """An open file's bytes, mapped read-only (an empty file is empty bytes: mmap refuses it)."""
    if os.fstat(stream.fileno()).st_size == 0:
        return memoryview(b"")
    return memoryview(mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ))


def file_sha256(stream: BinaryIO) -> str:
    """SHA-256 of an open file's bytes, remembered in the cache folder by the file's
    identity (`disk_cache.remember`): an unchanged model file is hashed once, and
    opening a session or importing the model again reads none of it."""
    info = os.fstat(stream.fileno())
    known = disk_cache.recall("sha256", info)
    if known is not None:
        return known.decode()
    started = time.time_ns()
    digest = hash_file(stream)
    disk_cache.remember("sha256", info, digest.encode(), started)
    return digest


def hash_file(stream: BinaryIO) -> str:
    """SHA-256 of an open file's bytes, read in chunks."""
    stream.seek(0)
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(1 << 24), b""):
        digest.update(chunk)
    return digest.hexdigest()


def span_digest(file_sha256: str, start: int, length: int) -> str:
    """The digest of the bytes at [start, start + length) of the file of that SHA-256:
    they are determined by it, so they need not be hashed (`resources.declare_digest`)."""
    return hashlib.blake2b(f"onnx span {file_sha256}:{start}:{length}".encode(), digest_size=16).hexdigest()
