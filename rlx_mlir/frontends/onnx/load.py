"""Reading and checking an ONNX model, and `load`: the model as one rlx function."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp

from rlx_mlir import dtypes
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.resources import declare_digest
from rlx_mlir.errors import ArgumentError, CompileError
from rlx_mlir.frontends.onnx import (
    attention,
    composed,
    conv,
    normalization,
    ops,
    quantization,
    recurrent,
    resize,
    weights,
)
from rlx_mlir.frontends.onnx.context import (
    ELEMENT_TYPES,
    Import,
    Importer,
    Unsupported,
    value_name,
)
from rlx_mlir.frontends.onnx.nodes import ONNX_DOMAINS, import_nodes

IMPORTERS: dict[str, Importer] = {
    **ops.IMPORTERS,
    **recurrent.IMPORTERS,
    **composed.IMPORTERS,
    **conv.IMPORTERS,
    **attention.IMPORTERS,
    **resize.IMPORTERS,
    **normalization.IMPORTERS,
    **quantization.IMPORTERS,
}
"""How each supported ONNX op type becomes rlx ops."""


def load(
    model: str | Path | bytes | onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """The model's graph as a verified module with one function. `constants`
    fixes graph inputs to values at import, like initializers (a shape or
    axes operand that a model takes as an input)."""
    proto, raw = _read(model)
    graph = proto.graph
    _check_graph(graph)
    ctx = Import(Builder(_symbol(graph.name)), IMPORTERS, opset=_opset(proto))
    folder = Path(model).resolve().parent if isinstance(model, (str, Path)) else None
    for index, tensor in enumerate(graph.initializer):
        array = _initializer(tensor, folder, raw, index)
        array.flags.writeable = False  # the import's own: constants keep it, uncopied
        ctx.values[tensor.name] = array
        ctx.names[id(array)] = tensor.name
    for name, value in (constants or {}).items():
        ctx.values[name] = np.asarray(value)
    shapes = _checked_shapes(input_shapes, graph)
    for value in graph.input:
        if value.name not in ctx.values:
            argument = ctx.builder.input(*_input_type(value, shapes.get(value.name)))
            argument.name_hint = value_name(value.name)
            ctx.values[value.name] = argument
    problems = import_nodes(ctx, graph)
    if problems:
        listed = "\n".join(problems.lines())
        raise CompileError(f"cannot import {len(problems.causes)} node(s) or output(s) of the ONNX graph:\n{listed}")
    try:
        ctx.builder.output(*(ctx.tensor(ctx.values[v.name]) for v in graph.output))
    except Unsupported as error:
        raise CompileError(f"cannot import the ONNX graph's outputs: {error}") from None
    return ctx.builder.module()


@dataclass(frozen=True)
class RawData:
    """The model's bytes (a read-only map of its file, or the caller's bytes) and
    where each initializer's raw data lies in them (`weights.split`)."""

    buffer: memoryview
    spans: list[tuple[int, int] | None]
    sha256: str | None = None
    """The file's SHA-256 (a model read from a file): its weights' digests are
    declared from it and their spans, not hashed (`weights.span_digest`)."""


def _read(model: str | Path | bytes | onnx.ModelProto) -> tuple[onnx.ModelProto, RawData | None]:
    """The model, its external data not read (`_initializer` reads it, checked),
    its initializers' raw data left in the file's bytes (`weights.py`)."""
    if isinstance(model, onnx.ModelProto):
        return model, None
    if not isinstance(model, (str, Path, bytes)):
        raise ArgumentError(f"an ONNX model is a path, bytes or a ModelProto, got {type(model).__name__}")
    try:
        buffer, sha256 = (memoryview(model), None) if isinstance(model, bytes) else _mapped(Path(model))
        try:
            parts = weights.split(buffer)
        except weights.WireError:  # protobuf names what is wrong
            proto, raw = onnx.load_from_string(bytes(buffer)), None
        else:
            proto, raw = onnx.load_from_string(parts.stripped), RawData(buffer, parts.spans, sha256)
    except (OSError, ValueError, DecodeError) as error:
        raise ArgumentError(f"cannot read the ONNX model: {error}") from None
    if not proto.HasField("graph"):
        raise ArgumentError("cannot read the ONNX model: it has no graph (empty or not an ONNX file)")
    return proto, raw


def _mapped(path: Path) -> tuple[memoryview, str | None]:
    """The file's bytes, mapped read-only (an empty file is empty bytes: mmap
    refuses it), and their SHA-256 (`weights.file_sha256`: remembered while the
    file is unchanged)."""
    with open(path, "rb") as stream:
        buffer = weights.mapped(stream)
        return buffer, (weights.file_sha256(stream) if len(buffer) else None)


MAX_ELEMENTS = 1 << 40
"""The most elements an initializer may declare: more cannot be held in memory."""


def _check_graph(graph: onnx.GraphProto) -> None:
    """The graph-level rules the importer relies on: outputs exist, names are unique."""
    if not graph.output:
        raise CompileError("the ONNX graph has no outputs")
    seen: set[str] = set()
    for what, names in (
        ("graph input", [v.name for v in graph.input]),
        ("node output", [n for node in graph.node for n in node.output if n]),
    ):
        for name in names:
            if name in seen:
                raise CompileError(f"the ONNX graph defines '{name}' twice (a {what})")
            seen.add(name)


def _initializer(tensor: onnx.TensorProto, folder: Path | None, raw: RawData | None, index: int) -> np.ndarray:
    """An initializer as an array, its type, dims and data checked against each other
    (an error naming the tensor, never NumPy's); external data read only from a
    regular file inside the model's folder, no more than the tensor needs; raw
    data a view on the model's bytes when its type's layout is NumPy's."""
    name = f"initializer '{tensor.name}'"
    if tensor.data_type not in ELEMENT_TYPES:
        label = (
            onnx.TensorProto.DataType.Name(tensor.data_type)
            if tensor.data_type in onnx.TensorProto.DataType.values()
            else str(tensor.data_type)
        )
        raise CompileError(f"{name} has element type {label}, which rlx does not support")
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise CompileError(f"{name} has a negative dimension: {dims}")
    count = int(np.prod(dims, dtype=object)) if dims else 1
    if count > MAX_ELEMENTS:
        raise CompileError(f"{name} declares {count} elements, more than {MAX_ELEMENTS}")
    span = raw.spans[index] if raw is not None and index < len(raw.spans) else None
    if span is not None:
        assert raw is not None
        start, length = span
        dtype = NUMPY_NAMES_VIEWABLE.get(tensor.data_type)
        if dtype is not None:
            if length != count * dtype.itemsize:
                raise CompileError(
                    f"{name}: its data holds {length} bytes, its dims {dims} need {count * dtype.itemsize}"
                )
            array = np.frombuffer(raw.buffer, dtype=dtype, count=count, offset=start).reshape(dims)
            if raw.sha256 is not None:
                declare_digest(array, weights.span_digest(raw.sha256, start, length))
            return array
        tensor = _with_raw_data(tensor, bytes(raw.buffer[start : start + length]))
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        tensor = _with_external_data(tensor, folder, count)
    try:
        array = numpy_helper.to_array(tensor)
    except (ValueError, TypeError) as error:
        raise CompileError(f"{name}: its data does not hold {dims} elements ({error})") from None
    if array.size != count:
        raise CompileError(f"{name}: its data holds {array.size} elements, its dims {dims} say {count}")
    return array


def _with_raw_data(tensor: onnx.TensorProto, data: bytes) -> onnx.TensorProto:
    """The tensor with its raw data put back (a type whose bytes NumPy does not view: int4)."""
    loaded = onnx.TensorProto()
    loaded.CopyFrom(tensor)
    loaded.raw_data = data
    return loaded


NUMPY_NAMES_VIEWABLE: dict[int, np.dtype] = {
    code: dtypes.from_name(name).numpy
    for code, name in ELEMENT_TYPES.items()
    if name not in ("i4", "ui4") and np.little_endian
}
"""The ONNX element types whose raw data (little-endian) is the NumPy dtype's layout."""


def _with_external_data(tensor: onnx.TensorProto, folder: Path | None, count: int) -> onnx.TensorProto:
    name = f"initializer '{tensor.name}'"
    info = {entry.key: entry.value for entry in tensor.external_data}
    location = info.get("location", "")
    if folder is None:
        raise CompileError(f"{name} keeps its data in '{location}': load the model from its file to read it")
    path = folder / location
    if not location or Path(location).is_absolute() or ".." in Path(location).parts or path.is_symlink():
        raise CompileError(f"{name}: external data '{location}' is not a file inside the model's folder")
    try:
        offset, length = int(info.get("offset", 0)), int(info["length"]) if "length" in info else None
        size = path.stat().st_size
    except (ValueError, OSError) as error:
        raise CompileError(f"{name}: cannot read external data '{location}' ({error})") from None
    if not path.is_file():
        raise CompileError(f"{name}: external data '{location}' is not a regular file")
    itemsize = dtypes.from_name(ELEMENT_TYPES[tensor.data_type]).nbytes
    needed = count * itemsize if length is None else length
    if offset < 0 or needed < 0 or offset + needed > size:
        raise CompileError(f"{name}: external data '{location}' has {size} bytes, the tensor needs {offset + needed}")
    with open(path, "rb") as stream:
        stream.seek(offset)
        data = stream.read(needed)
    loaded = onnx.TensorProto()
    loaded.CopyFrom(tensor)
    del loaded.external_data[:]
    loaded.data_location = onnx.TensorProto.DEFAULT
    loaded.raw_data = data
    return loaded


def _checked_shapes(given: Mapping[str, Sequence[int]] | None, graph: onnx.GraphProto) -> dict[str, tuple[int, ...]]:
    """`input_shapes` checked: names of graph inputs, lists of dims >= 0 of the declared rank."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise ArgumentError(f"input_shapes is a mapping of input names to shapes, got {type(given).__name__}")
    declared = {v.name: v for v in graph.input}
    unknown = set(given) - set(declared)
    if unknown:
        raise ArgumentError(f"input_shapes names no graph input: {', '.join(sorted(map(str, unknown)))}")
    shapes = {}
    for name, shape in given.items():
        if (
            isinstance(shape, (str, bytes))
            or not isinstance(shape, Sequence)
            or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in shape)
        ):
            raise ArgumentError(f"input_shapes['{name}'] must be a list of dimensions >= 0, got {shape!r}")
        tensor = declared[name].type.tensor_type
        if tensor.HasField("shape"):
            _check_declared(name, tuple(int(d) for d in shape), tensor.shape.dim)
        shapes[name] = tuple(int(d) for d in shape)
    return shapes


def _check_declared(name: str, shape: tuple[int, ...], dims: Sequence[onnx.TensorShapeProto.Dimension]) -> None:
    """A given shape has the declared rank and, where the model fixes a dimension, its size."""
    if len(dims) != len(shape):
        raise ArgumentError(f"input_shapes['{name}'] has rank {len(shape)}, the model declares rank {len(dims)}")
    for axis, (size, dim) in enumerate(zip(shape, dims)):
        if dim.HasField("dim_value") and dim.dim_value != size:
            raise ArgumentError(
                f"input_shapes['{name}'] gives dimension {axis} size {size}, the model fixes it at {dim.dim_value}"
            )


def _opset(proto: onnx.ModelProto) -> int:
    """The model's version of ONNX's standard domain (the newest if it names none)."""
    versions = [o.version for o in proto.opset_import if o.domain in ONNX_DOMAINS]
    return versions[0] if versions else onnx.defs.onnx_opset_version()


def _symbol(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "main"
    return cleaned if cleaned[0].isalpha() or cleaned[0] == "_" else f"g_{cleaned}"


def _input_type(value: onnx.ValueInfoProto, fixed: Sequence[int] | None) -> tuple[tuple[int, ...], str]:
    tensor = value.type.tensor_type
    element = ELEMENT_TYPES.get(tensor.elem_type)
    if element is None:
        name = onnx.TensorProto.DataType.Name(tensor.elem_type)
        raise CompileError(f"input '{value.name}' has element type {name}, which rlx does not support")
    if fixed is not None:
        return tuple(int(d) for d in fixed), element
    dims = []
    for d in tensor.shape.dim:
        if not d.HasField("dim_value"):
            raise CompileError(
                f"input '{value.name}' has a dynamic dimension '{d.dim_param}': give its shape "
                "(load(..., input_shapes=...), rlx-opt -f 'onnx{input-shapes=\"NAME=DxD...\"}'), "
                "or run it with rlx_mlir.onnx.InferenceSession or rlx-run --input x.npy, which take it from the inputs"
            )
        dims.append(int(d.dim_value))
    return tuple(dims), element
