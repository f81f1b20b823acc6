"""An onnxruntime-style session: switch from onnxruntime by changing one import.

    import rlx_mlir.onnx as ort      # was: import onnxruntime as ort
    session = ort.InferenceSession("model.onnx")
    (logits,) = session.run(None, {"input_ids": ids})

`InferenceSession` takes what `onnxruntime.InferenceSession` takes for the
common API: `run(output_names, input_feed)`, `get_inputs()`, `get_outputs()`
and `get_providers()`, with the same names, shapes (an int per fixed
dimension, the symbolic name or None per dynamic one) and type strings
(`'tensor(float)'`).

Each new set of input shapes is compiled at its first `run` (the model
imported by `rlx_mlir.frontends.onnx.load` with those shapes; a model whose
inputs are all fixed is compiled at construction, as onnxruntime prepares
it then). Executables are kept in memory, the `CACHED_SHAPES` most recently
used, and on disk by `rlx_mlir.compile`'s persistent cache under a key of the
model's bytes (and its external data's), the input shapes and the compile
options: a warm compile, in any process, neither imports the model nor
prints it as IR.

What is not onnxruntime's: `threads=` (the kernels' thread count; else
`sess_options.intra_op_num_threads` if it is set, else every CPU), `target=`
and `pipeline=` (as `rlx_mlir.compile`'s), and `executable(input_feed)`, the
compiled executable for a feed's shapes (for `profile`). What is ignored:
`providers` and `provider_options` (rlx compiles for the CPU it runs on),
every field of `sess_options` but `intra_op_num_threads`, and `run_options`.
Bad feeds are `ArgumentError`s naming the input: unknown or missing names,
a dtype other than the model's, a rank or a fixed dimension the model does
not declare.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from xdsl.dialects.builtin import ModuleOp

from rlx_mlir import disk_cache, dtypes
from rlx_mlir.compiler import Source, compile
from rlx_mlir.errors import ArgumentError, CompileError
from rlx_mlir.frontends.onnx import ELEMENT_TYPES, load, weights
from rlx_mlir.runtime import Executable

CACHED_SHAPES = 8
"""How many sets of input shapes a session keeps compiled in memory (each holds
its own arena, weights included); older ones are compiled again from the disk cache."""

PROVIDERS = ["CPUExecutionProvider"]
"""What `get_providers()` reports: rlx runs on the CPU."""

Dim = int | str | None
"""A dimension as onnxruntime reports it: fixed, symbolic (its name) or unknown."""


def get_available_providers() -> list[str]:
    """As onnxruntime's: the one provider rlx has."""
    return list(PROVIDERS)


class SessionOptions:
    """The part of onnxruntime's SessionOptions that rlx reads: `intra_op_num_threads`
    (0: every CPU). Any other attribute may be set and is ignored; onnxruntime's own
    SessionOptions may be passed as well."""

    def __init__(self) -> None:
        self.intra_op_num_threads = 0


@dataclass(frozen=True)
class NodeArg:
    """An input or output as onnxruntime describes it."""

    name: str
    type: str
    """onnxruntime's type string, `'tensor(float)'`."""
    shape: list[Dim]
    """An int per fixed dimension, the symbolic name or None per dynamic one
    ([] for a scalar, or when the model declares no shape)."""


class InferenceSession:
    """`onnxruntime.InferenceSession` on rlx: see the module's docstring."""

    def __init__(
        self,
        path_or_bytes: str | os.PathLike[str] | bytes,
        sess_options: object = None,
        providers: Sequence[object] | None = None,
        provider_options: Sequence[object] | None = None,
        *,
        threads: int | None = None,
        target: str | None = None,
        pipeline: str | None = None,
    ) -> None:
        del providers, provider_options  # rlx compiles for the CPU it runs on
        model = _Model.open(path_or_bytes)
        graph = model.graph
        self._initializers = {t.name for t in graph.initializer}
        self._inputs = [_Input.of(v) for v in graph.input if v.name not in self._initializers]
        self._input_args = [i.arg for i in self._inputs]
        self._input_names = [i.arg.name for i in self._inputs]
        self._output_args = [_node_arg(v) for v in graph.output]
        self._output_names = [arg.name for arg in self._output_args]
        self._digest = model.digest
        self._model = model
        self._threads = _threads(threads, sess_options)
        self._target, self._pipeline = target, pipeline
        self._compiled: OrderedDict[tuple[tuple[int, ...], ...], Executable] = OrderedDict()
        self._lock = threading.Lock()
        fixed = self._fixed_shapes()
        if fixed is not None:
            self._executable(fixed)

    def _fixed_shapes(self) -> tuple[tuple[int, ...], ...] | None:
        """The input shapes when the model fixes every dimension of every input, else None."""
        if any(i.rank is None or len(i.fixed) != i.rank for i in self._inputs):
            return None
        return tuple(tuple(size for _, size in i.fixed) for i in self._inputs)

    def get_inputs(self) -> list[NodeArg]:
        """The inputs a feed must give (the graph's inputs that no initializer gives), in order."""
        return list(self._input_args)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._output_args)

    def get_providers(self) -> list[str]:
        return list(PROVIDERS)

    def run(
        self, output_names: Sequence[str] | None, input_feed: Mapping[str, object], run_options: object = None
    ) -> list[np.ndarray]:
        """The outputs named (None or []: all of them, in the graph's order) for the feed."""
        del run_options  # onnxruntime's tags, log levels and terminate flag: nothing to set here
        picked = self._output_positions(output_names)
        arrays = self._checked_feed(input_feed)
        results = self._executable(tuple(a.shape for a in arrays))(*arrays)
        return [results[k] for k in picked]

    def executable(self, input_feed: Mapping[str, object]) -> Executable:
        """The compiled executable for the feed's shapes (compiled now if it is new):
        it takes the inputs by position, in `get_inputs()`'s order."""
        return self._executable(tuple(a.shape for a in self._checked_feed(input_feed)))

    def _executable(self, shapes: tuple[tuple[int, ...], ...]) -> Executable:
        with self._lock:  # one compile per new set of shapes, however many threads call run
            exe = self._compiled.get(shapes)
            if exe is None:
                exe = self._compile(shapes)
                self._compiled[shapes] = exe
                if len(self._compiled) > CACHED_SHAPES:
                    self._compiled.popitem(last=False)
            self._compiled.move_to_end(shapes)
            return exe

    def _compile(self, shapes: tuple[tuple[int, ...], ...]) -> Executable:
        named = dict(zip(self._input_names, shapes, strict=True))
        key = json.dumps(["onnx", self._digest, list(named.items()), onnx.__version__, np.__version__])
        build = functools.partial(_import, self._model, named)
        return compile(Source(key, build), self._pipeline, threads=self._threads, target=self._target)

    def _output_positions(self, names: Sequence[str] | None) -> list[int] | range:
        all_names = self._output_names
        if names is None or (isinstance(names, (list, tuple)) and not names):
            return range(len(all_names))
        if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
            raise ArgumentError(f"output_names is a list of output names or None, got {type(names).__name__}")
        for name in names:
            if name not in all_names:
                raise ArgumentError(f"unknown output {name!r}: the model's outputs are {_listed(all_names)}")
        return [all_names.index(name) for name in names]

    def _checked_feed(self, feed: Mapping[str, object]) -> list[np.ndarray]:
        """The feed's arrays in input order, each checked against the model's declaration."""
        if not isinstance(feed, Mapping):
            raise ArgumentError(f"input_feed is a dict of input names to arrays, got {type(feed).__name__}")
        if len(feed) != len(self._input_names) or not all(name in feed for name in self._input_names):
            raise self._naming_error(feed)
        return [i.check(feed[i.arg.name]) for i in self._inputs]

    def _naming_error(self, feed: Mapping[str, object]) -> ArgumentError:
        """What is wrong with a feed that does not name exactly the model's inputs."""
        names = self._input_names
        for name in feed:
            if name in self._initializers:
                return ArgumentError(f"{name!r} is an initializer of the model, which a feed cannot replace")
            if name not in names:
                return ArgumentError(f"unknown input {name!r}: the model's inputs are {_listed(names)}")
        missing = [name for name in names if name not in feed]
        return ArgumentError(f"missing input(s) {_listed(missing)} (the model's inputs are {_listed(names)})")


@dataclass(frozen=True)
class _Input:
    """What a feed must give for one input, worked out once: `run` checks every call."""

    arg: NodeArg
    dtype: np.dtype
    rank: int | None
    """None when the model declares no shape (any rank is taken)."""
    fixed: tuple[tuple[int, int], ...]
    """(axis, size) of each fixed dimension."""

    @classmethod
    def of(cls, value: onnx.ValueInfoProto) -> _Input:
        arg = _node_arg(value)
        rank = len(arg.shape) if value.type.tensor_type.HasField("shape") else None
        fixed = tuple((axis, d) for axis, d in enumerate(arg.shape) if isinstance(d, int))
        return cls(arg, _numpy_dtype(value), rank, fixed)

    def check(self, value: object) -> np.ndarray:
        """The value as an array of the model's dtype, rank and fixed dims."""
        if (
            type(value) is np.ndarray
            and value.dtype == self.dtype
            and value.ndim == self.rank
            and all(value.shape[axis] == size for axis, size in self.fixed)
        ):
            return value
        array = self._as_array(value)
        if self.rank is not None and array.ndim != self.rank:
            raise ArgumentError(
                f"input {self.arg.name!r} has rank {array.ndim} (shape {list(array.shape)}), "
                f"the model takes rank {self.rank}: {self.arg.shape}"
            )
        for axis, size in self.fixed:  # none when the model declares no shape
            if array.shape[axis] != size:
                raise ArgumentError(
                    f"input {self.arg.name!r} has shape {list(array.shape)}: "
                    f"dimension {axis} must be {size} (the model's {self.arg.shape})"
                )
        return array

    def _as_array(self, value: object) -> np.ndarray:
        """Lists and Python numbers converted to the model's dtype, as onnxruntime
        does; an array of another dtype is an error, as in onnxruntime (no silent cast)."""
        where, dtype = f"input {self.arg.name!r}", self.dtype
        if isinstance(value, (np.ndarray, np.generic)):
            array = np.asarray(value)
            if array.dtype != dtype:
                raise ArgumentError(f"{where} has dtype {array.dtype}, the model takes {dtype} ({self.arg.type})")
            return array
        if isinstance(value, (list, tuple, int, float, bool, complex)):
            try:
                return np.asarray(value, dtype=dtype)
            except (ValueError, TypeError, OverflowError) as error:
                raise ArgumentError(f"{where} cannot be converted to {dtype} ({self.arg.type}): {error}") from None
        raise ArgumentError(f"{where} must be a NumPy array, got {type(value).__name__}")


@dataclass(frozen=True)
class _Model:
    """An ONNX model as a session holds it: its outline (`weights.outline`), the
    digest of its bytes and its external data's, and where to import it from."""

    graph: onnx.GraphProto
    digest: str
    source: str | bytes
    """The model's absolute path (a later compile reads its external data from
    its folder, wherever the caller has moved), or the caller's bytes."""
    identity: str | None = None
    """The file's identity when it was hashed (`disk_cache.identity`)."""

    @classmethod
    def open(cls, model: object) -> _Model:
        if isinstance(model, bytes):
            graph = _outline(memoryview(model))
            return cls(graph, _digest(hashlib.sha256(model).hexdigest(), {}), model)
        if not isinstance(model, (str, os.PathLike)):
            raise ArgumentError(f"an ONNX model is a path or bytes, got {type(model).__name__}")
        path = Path(os.fspath(model))
        try:
            with open(path, "rb") as stream:
                info = os.fstat(stream.fileno())
                graph = _outline(weights.mapped(stream))
                sha = weights.file_sha256(stream)
        except OSError as error:
            raise ArgumentError(f"cannot read the ONNX model '{path}': {error.strerror or error}") from None
        path = path.resolve()
        external = {n: _file_sha256_of(p, n) for n, p in _external_files(graph, path.parent).items()}
        return cls(graph, _digest(sha, external), str(path), disk_cache.identity(info))


def _import(model: _Model, shapes: dict[str, tuple[int, ...]]) -> ModuleOp:
    """The model imported at `shapes` (a compile that missed the cache): from the
    caller's bytes, or from its file if that is still the one hashed."""
    source = model.source
    if isinstance(source, str) and model.identity is not None:
        try:
            now = disk_cache.identity(os.stat(source))
        except OSError as error:
            raise CompileError(f"cannot read the ONNX model '{source}': {error.strerror or error}") from None
        if now != model.identity:
            raise CompileError(f"the ONNX model '{source}' changed since the session opened it; open it again")
    return load(source, input_shapes=shapes)


def _outline(data: memoryview) -> onnx.GraphProto:
    """The graph's inputs, outputs and initializer names (`weights.outline`); a file
    the walk cannot follow is parsed whole, so protobuf names what is wrong."""
    try:
        proto = onnx.load_from_string(weights.outline(data))
    except weights.WireError:
        proto = _parse(bytes(data))
    except (ValueError, DecodeError) as error:
        raise ArgumentError(f"cannot read the ONNX model: {error}") from None
    if not proto.HasField("graph"):
        raise ArgumentError("cannot read the ONNX model: it has no graph (empty or not an ONNX file)")
    return proto.graph


def _parse(blob: bytes) -> onnx.ModelProto:
    try:
        proto = onnx.load_from_string(blob)
    except (ValueError, DecodeError) as error:
        raise ArgumentError(f"cannot read the ONNX model: {error}") from None
    if not proto.HasField("graph"):
        raise ArgumentError("cannot read the ONNX model: it has no graph (empty or not an ONNX file)")
    return proto


def _external_files(graph: onnx.GraphProto, folder: Path) -> dict[str, Path]:
    """The files holding the initializers' external data, by location. Only regular
    files inside the model's folder, as the loader reads them: any other location
    fails the import, so nothing is compiled that a key would have to name."""
    locations: set[str] = set()
    for tensor in graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            locations.update(e.value for e in tensor.external_data if e.key == "location")
    inside = (n for n in sorted(locations) if n and not Path(n).is_absolute() and ".." not in Path(n).parts)
    return {n: folder / n for n in inside if (folder / n).is_file() and not (folder / n).is_symlink()}


def _file_sha256_of(path: Path, location: str) -> str:
    try:
        with open(path, "rb") as stream:
            return weights.file_sha256(stream)
    except OSError as error:
        raise ArgumentError(f"cannot read the model's external data '{location}': {error}") from None


def _digest(model: str, external: Mapping[str, str]) -> str:
    """What the model computes, as bytes: the SHA-256 of the file, then each external
    data file's location and SHA-256."""
    digest = hashlib.sha256(model.encode())
    for location, sha in external.items():
        digest.update(b"\0" + location.encode() + b"\0" + sha.encode())
    return digest.hexdigest()


def _node_arg(value: onnx.ValueInfoProto) -> NodeArg:
    tensor = value.type.tensor_type
    known = tensor.elem_type in onnx.TensorProto.DataType.values()
    name = onnx.TensorProto.DataType.Name(tensor.elem_type) if known else "undefined"
    shape: list[Dim] = [
        int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim
    ]
    return NodeArg(value.name, f"tensor({name.lower()})", shape)


def _numpy_dtype(value: onnx.ValueInfoProto) -> np.dtype:
    elem = value.type.tensor_type.elem_type
    if elem not in ELEMENT_TYPES:
        label = onnx.TensorProto.DataType.Name(elem) if elem in onnx.TensorProto.DataType.values() else str(elem)
        raise CompileError(f"input '{value.name}' has element type {label}, which rlx does not support")
    return dtypes.from_name(ELEMENT_TYPES[elem]).numpy


def _threads(threads: int | None, options: object) -> int:
    """`threads=`, else the options' `intra_op_num_threads` when set (> 0), else 0: every CPU."""
    if threads is None:
        threads = getattr(options, "intra_op_num_threads", 0) or 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ArgumentError(f"threads= takes a count >= 0 (0: every CPU), got {threads!r}")
    return threads


def _listed(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)
