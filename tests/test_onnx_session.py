"""rlx_mlir.onnx.InferenceSession against onnxruntime.InferenceSession: the same
descriptions of inputs and outputs, the same results, a compile per new set of
input shapes (kept in memory and on disk, keyed by the model's bytes), and
bad feeds rejected by both, by rlx with an ArgumentError naming the input."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from onnx_models import export
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

import rlx_mlir.onnx as rlx_onnx
from rlx_mlir.errors import ArgumentError, RlxError
from rlx_mlir.runtime import Executable


def helper_model(weights: np.ndarray | None = None) -> onnx.ModelProto:
    """Three inputs (a named dynamic dim, a fixed one, an unnamed dynamic one) and
    three outputs of three dtypes: y = Relu(x @ W + bias), k = ArgMax(x @ W + bias),
    total = ReduceSum(offset) (a scalar)."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 7 - 0.5 if weights is None else weights
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4]),
        helper.make_tensor_value_info("bias", TensorProto.FLOAT, [3]),
        helper.make_tensor_value_info("offset", TensorProto.DOUBLE, [None]),
    ]
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3]),
        helper.make_tensor_value_info("k", TensorProto.INT64, ["batch"]),
        helper.make_tensor_value_info("total", TensorProto.DOUBLE, []),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "bias"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
        helper.make_node("ArgMax", ["h"], ["k"], axis=1, keepdims=0),
        helper.make_node("ReduceSum", ["offset"], ["total"], keepdims=0),
    ]
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feed(batch: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal((batch, 4), dtype=np.float32),
        "bias": rng.standard_normal(3, dtype=np.float32),
        "offset": rng.standard_normal(5),
    }


@pytest.fixture(scope="module")
def blob() -> bytes:
    return helper_model().SerializeToString()


@pytest.fixture(scope="module")
def session(blob: bytes) -> rlx_onnx.InferenceSession:
    return rlx_onnx.InferenceSession(blob)


@pytest.fixture(scope="module")
def reference(blob: bytes) -> onnxruntime.InferenceSession:
    return onnxruntime.InferenceSession(blob)


class TinyMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.one, self.two = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.two(torch.nn.functional.gelu(self.one(x))), dim=-1)


@pytest.fixture(scope="module")
def torch_blob() -> bytes:
    """The MLP exported by torch.onnx (TorchScript) with input `x` of dynamic batch."""
    torch.manual_seed(5)
    return export(TinyMLP().eval(), np.zeros((2, 6), np.float32))


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every compile the sessions make, recorded."""
    made: list[object] = []
    real = rlx_onnx.compile

    def counted(*args: object, **kwargs: object) -> Executable:
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(rlx_onnx, "compile", counted)
    yield made


def described(args: list) -> list[tuple[str, list, str]]:
    return [(a.name, list(a.shape), a.type) for a in args]


def test_inputs_and_outputs_are_described_as_onnxruntime_does(
    session: rlx_onnx.InferenceSession, reference: onnxruntime.InferenceSession, torch_blob: bytes
) -> None:
    assert described(session.get_inputs()) == described(reference.get_inputs())
    assert described(session.get_outputs()) == described(reference.get_outputs())
    assert described(session.get_inputs()) == [
        ("x", ["batch", 4], "tensor(float)"),
        ("bias", [3], "tensor(float)"),
        ("offset", [None], "tensor(double)"),
    ]
    exported = rlx_onnx.InferenceSession(torch_blob)
    torch_reference = onnxruntime.InferenceSession(torch_blob)
    assert described(exported.get_inputs()) == described(torch_reference.get_inputs())
    assert described(exported.get_outputs()) == described(torch_reference.get_outputs())
    assert session.get_providers() == ["CPUExecutionProvider"] == rlx_onnx.get_available_providers()


@pytest.mark.parametrize("names", [None, [], ["y", "k", "total"], ["total", "y"], ["k"], ["y", "y"]])
def test_run_returns_the_outputs_named_in_their_order(
    session: rlx_onnx.InferenceSession, reference: onnxruntime.InferenceSession, names: list[str] | None
) -> None:
    arrays = feed(3)
    got, want = session.run(names, arrays), reference.run(names, arrays)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_lists_take_the_models_dtype_as_in_onnxruntime(
    session: rlx_onnx.InferenceSession, reference: onnxruntime.InferenceSession
) -> None:
    arrays = {**feed(3), "bias": [0.5, -1, 2]}
    for got, want in zip(session.run(None, arrays), reference.run(None, arrays), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_dynamic_batch_compiles_once_per_shape(torch_blob: bytes, compiles: list[object]) -> None:
    """A torch export at batch 2, 5, then 2 again: two compiles, the first reused,
    every result as onnxruntime's."""
    session = rlx_onnx.InferenceSession(torch_blob)
    reference = onnxruntime.InferenceSession(torch_blob)
    assert compiles == []  # a dynamic batch: nothing to compile before a feed gives it
    rng = np.random.default_rng(6)
    first = None
    for batch in (2, 5, 2):
        x = rng.standard_normal((batch, 6), dtype=np.float32)
        (got,) = session.run(None, {"x": x})
        (want,) = reference.run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if first is None:
            first = session.executable({"x": x})
    assert len(compiles) == 2
    assert session.executable({"x": np.zeros((2, 6), np.float32)}) is first


def test_a_model_of_fixed_shapes_compiles_at_construction(compiles: list[object]) -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    model = helper.make_model(helper.make_graph([helper.make_node("Tanh", ["x"], ["y"])], "t", [x], [y]))
    session = rlx_onnx.InferenceSession(model.SerializeToString())
    assert len(compiles) == 1
    data = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(session.run(["y"], {"x": data})[0], np.tanh(data), rtol=1e-6)
    assert len(compiles) == 1


def test_the_disk_cache_is_keyed_by_the_models_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blob: bytes
) -> None:
    """A new session on the same bytes loads the compiled model from disk without
    importing it; other weights, same graph, are a miss."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    imports: list[object] = []
    real = rlx_onnx.load

    def counted(*args: object, **kwargs: object) -> onnx.ModelProto:
        imports.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(rlx_onnx, "load", counted)
    arrays = feed(2)
    cold = rlx_onnx.InferenceSession(blob)
    cold.run(None, arrays)
    assert len(imports) == 1 and not cold.executable(arrays).cached["module"]
    warm = rlx_onnx.InferenceSession(blob)
    assert warm.executable(arrays).cached["module"] and len(imports) == 1
    other = helper_model(np.ones((4, 3), np.float32)).SerializeToString()
    (got,) = rlx_onnx.InferenceSession(other).run(["y"], arrays)
    assert len(imports) == 2
    np.testing.assert_allclose(got, onnxruntime.InferenceSession(other).run(["y"], arrays)[0], rtol=1e-6)


def test_an_executable_pickles_as_its_source(session: rlx_onnx.InferenceSession) -> None:
    """What dask or multiprocessing do with it: the model's bytes and shapes travel, not IR text."""
    arrays = feed(2)
    unpickled = pickle.loads(pickle.dumps(session.executable(arrays)))
    np.testing.assert_array_equal(unpickled(*arrays.values())[0], session.run(["y"], arrays)[0])


def test_external_data_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Weights in a file next to the model: rewriting that file (the model file
    unchanged) is a new compile, not the old weights from the cache. A session
    made from a relative path still finds them after a change of folder."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    path, data, arrays = tmp_path / "m.onnx", tmp_path / "w.bin", feed(2)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    onnx.save(helper_model(), str(path), save_as_external_data=True, location="w.bin", size_threshold=0)
    model_bytes = path.read_bytes()
    results = []
    for weights in (np.ones((4, 3), np.float32), np.full((4, 3), -2, np.float32)):
        data.write_bytes(weights.tobytes())  # 'w' is the file's only tensor, at offset 0
        monkeypatch.chdir(tmp_path)
        session = rlx_onnx.InferenceSession("m.onnx")
        monkeypatch.chdir(elsewhere)
        (got,) = session.run(["y"], arrays)  # the batch is dynamic: compiled (and the data read) now
        (want,) = onnxruntime.InferenceSession(str(path)).run(["y"], arrays)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        results.append(got)
    assert path.read_bytes() == model_bytes and not np.array_equal(*results)


def test_threads_come_from_threads_or_onnxruntimes_session_options(blob: bytes) -> None:
    """`threads=` wins, then `intra_op_num_threads` of rlx's or onnxruntime's
    SessionOptions; providers are accepted and ignored."""
    arrays = feed(1)
    options = rlx_onnx.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = 99  # set, and ignored
    assert rlx_onnx.InferenceSession(blob, options).executable(arrays).threads == 1
    theirs = onnxruntime.SessionOptions()
    theirs.intra_op_num_threads = 1
    session = rlx_onnx.InferenceSession(blob, theirs, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert session.executable(arrays).threads == 1
    with pytest.raises(ArgumentError, match="threads= takes a count >= 0"):
        rlx_onnx.InferenceSession(blob, threads=-1)


def _replace(**changes: object) -> Callable[[], dict[str, object]]:
    return lambda: {**feed(2), **changes}


ONNXRUNTIME_ERRORS = (InvalidArgument, ValueError, TypeError, RuntimeError, AttributeError)
"""What onnxruntime raises for a bad feed: its own InvalidArgument, or Python's errors."""

BAD_FEEDS = [
    ("unknown name", lambda: {**feed(2), "q": np.zeros(3, np.float32)}, None, "unknown input 'q'"),
    ("missing input", lambda: {"x": feed(2)["x"]}, None, "missing input(s) 'bias', 'offset'"),
    ("wrong dtype", _replace(x=np.zeros((2, 4))), None, "input 'x' has dtype float64, the model takes float32"),
    ("wrong rank", _replace(x=np.zeros((2, 4, 1), np.float32)), None, "input 'x' has rank 3"),
    ("fixed dim", _replace(bias=np.zeros(4, np.float32)), None, "input 'bias' has shape [4]: dimension 0 must be 3"),
    ("not an array", _replace(offset=object()), None, "input 'offset' must be a NumPy array"),
    ("not a dict", lambda: list(feed(2).values()), None, "input_feed is a dict"),
    ("unknown output", lambda: feed(2), ["y", "nope"], "unknown output 'nope'"),
    ("a name for a list", lambda: feed(2), "y", "output_names is a list"),
]


@pytest.mark.parametrize(("make", "names", "message"), [b[1:] for b in BAD_FEEDS], ids=[b[0] for b in BAD_FEEDS])
def test_a_bad_feed_is_an_argument_error_naming_it(
    session: rlx_onnx.InferenceSession,
    reference: onnxruntime.InferenceSession,
    make: Callable[[], object],
    names: object,
    message: str,
) -> None:
    """onnxruntime refuses each of them too."""
    with pytest.raises(ArgumentError) as raised:
        session.run(names, make())
    assert message in str(raised.value)
    with pytest.raises(ONNXRUNTIME_ERRORS):
        reference.run(names, make())


def test_an_unreadable_model_is_an_rlx_error(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="cannot read the ONNX model"):
        rlx_onnx.InferenceSession(tmp_path / "missing.onnx")
    with pytest.raises(ArgumentError, match="cannot read the ONNX model"):
        rlx_onnx.InferenceSession(b"\x08\x07garbage")
    with pytest.raises(ArgumentError, match="a path or bytes"):
        rlx_onnx.InferenceSession(42)
    s = helper.make_tensor_value_info("s", TensorProto.STRING, [1])
    t = helper.make_tensor_value_info("t", TensorProto.STRING, [1])
    strings = helper.make_model(helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "g", [s], [t]))
    with pytest.raises(RlxError, match="input 's' has element type STRING"):
        rlx_onnx.InferenceSession(strings.SerializeToString())
