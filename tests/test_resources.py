"""Weights stay binary (dialects/resources.py): a large constant is a
`dense_resource` whose bytes are the caller's array or the model file's,
printed only when asked, parsed back from MLIR's trailer, pickled as arrays,
and computed with exactly as before."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import rlx_mlir as rlx
from rlx_mlir.compiler import parse
from rlx_mlir.dialects import rlx as ops
from rlx_mlir.dialects.elision import ir_text, key_text
from rlx_mlir.dialects.resources import Blob, ResourceElementsAttr
from rlx_mlir.errors import ParseError
from rlx_mlir.frontends.onnx import load
from rlx_mlir.onnx import InferenceSession

WEIGHTS = np.random.default_rng(0).standard_normal((48, 64)).astype(np.float32)
BIG = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
"""Weights larger than a module entry's text (its LLVM IR, planned IR)."""


def _affine(weights: np.ndarray) -> rlx.Builder:
    """x @ weights + 1, built with the weights as a read-only array (as the ONNX loader gives them)."""
    kept = weights.copy()
    kept.flags.writeable = False
    b = rlx.Builder("f")
    x = b.input((2, weights.shape[0]))
    b.output(b.add(b.matmul(x, b.constant(kept, name="layer.0/weight")), b.constant(np.float32(1))))
    return b


def _model_bytes(weights: np.ndarray, batch: int | str = 2) -> bytes:
    """An ONNX MatMul whose weight is an initializer of raw data."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "encoder.weight"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [batch, weights.shape[0]])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [batch, weights.shape[1]])],
        [numpy_helper.from_array(weights, "encoder.weight")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _resources(module: object) -> list[ResourceElementsAttr]:
    return [
        op.value
        for op in module.walk()
        if isinstance(op, ops.ConstantOp) and isinstance(op.value, ResourceElementsAttr)
    ]  # type: ignore[attr-defined]


def test_a_large_constant_is_a_resource_viewing_a_read_only_array_uncopied() -> None:
    module = _affine(WEIGHTS).module()
    (resource,) = _resources(module)
    array = resource.blob.data.array
    assert not array.flags.writeable
    kept = WEIGHTS.copy()
    kept.flags.writeable = False
    b = rlx.Builder()
    b.output(b.constant(kept))
    assert np.shares_memory(_resources(b.module())[0].blob.data.array, kept)


def test_an_array_its_owner_may_change_is_taken_as_it_is_now() -> None:
    weights = WEIGHTS.copy()
    view = weights.view()
    view.flags.writeable = False  # read-only, but `weights` may still write its memory
    b = rlx.Builder()
    b.output(b.constant(weights), b.constant(view))
    module = b.module()
    weights[0, 0] = 99.0
    for resource in _resources(module):
        assert resource.blob.data.array[0] == WEIGHTS[0, 0]


def test_printed_ir_holds_no_weight_bytes_unless_asked() -> None:
    module = load(_model_bytes(WEIGHTS))
    text = str(module)
    assert "dense_resource<encoder.weight> : tensor<48x64xf32>" in text
    assert len(text) < 1000 and "0x" not in text
    full = ir_text(module)
    assert "dialect_resources" in full and len(full) > 2 * WEIGHTS.nbytes
    assert "blake2b_" in key_text(module) and len(key_text(module)) < 1000


def test_the_imported_weights_view_the_model_bytes() -> None:
    blob = _model_bytes(WEIGHTS)
    (resource,) = _resources(load(blob))
    assert np.array_equal(resource.blob.data.array.reshape(WEIGHTS.shape), WEIGHTS)
    assert np.shares_memory(resource.blob.data.array, np.frombuffer(blob, dtype=np.uint8))


def test_ir_with_its_blobs_parses_back_to_the_same_numbers() -> None:
    module = _affine(WEIGHTS).module()
    again = parse(ir_text(module))
    x = np.random.default_rng(1).standard_normal((2, 48)).astype(np.float32)
    expected = x @ WEIGHTS + 1
    for each in (module, again):
        np.testing.assert_allclose(rlx.compile(each)(x)[0], expected, rtol=1e-5, atol=1e-5)
    assert ir_text(again) == ir_text(module)


def test_a_missing_or_short_blob_is_a_located_parse_error() -> None:
    full = ir_text(_affine(WEIGHTS).module())
    body, _, _ = full.partition("{-#")
    with pytest.raises(ParseError, match=r"(?s)<input>:3:\d+.*dense_resource<_layer.0_weight> has no blob"):
        parse(body)
    handle_line = next(n for n, line in enumerate(full.splitlines(), 1) if line.strip().startswith("_layer.0_weight:"))
    short = full.replace('"\n', '00"\n', 1)
    with pytest.raises(
        ParseError, match=rf"(?s)<input>:{handle_line}:\d+.*holds 12289 bytes, tensor<48x64xf32> needs 12288"
    ):
        parse(short)


def test_an_executable_pickles_its_weights_as_binary_and_computes_the_same() -> None:
    exe = rlx.compile(_affine(WEIGHTS).module())
    pickled = pickle.dumps(exe)
    assert len(pickled) < 2 * WEIGHTS.nbytes  # bytes, not hex text
    x = np.ones((2, 48), dtype=np.float32)
    np.testing.assert_array_equal(pickle.loads(pickled)(x)[0], exe(x)[0])


def test_the_cache_key_follows_the_weight_bytes() -> None:
    changed = WEIGHTS.copy()
    changed[3, 4] += 1
    assert key_text(_affine(WEIGHTS).module()) == key_text(_affine(WEIGHTS.copy()).module())
    assert key_text(_affine(changed).module()) != key_text(_affine(WEIGHTS).module())


def test_input_shapes_of_one_model_share_its_weights_hashed_once_stored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    hashed = []
    digest = Blob.digest

    def hashing(self: Blob) -> str:
        if not self._digest:  # not declared nor hashed before: this call hashes its bytes
            hashed.append(self)
        return digest(self)

    monkeypatch.setattr(Blob, "digest", hashing)
    session = InferenceSession(_model_bytes(BIG, batch="batch"))
    for batch in (2, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 256)).astype(np.float32)
        np.testing.assert_allclose(session.run(None, {"x": x})[0], x @ BIG, rtol=1e-5, atol=1e-5)
    assert len({id(blob) for blob in hashed}) == 1  # one blob: the second import views the same bytes
    assert len(list((tmp_path / "module").iterdir())) == 2
    (entry,) = (tmp_path / "weights").iterdir()
    assert entry.stat().st_size > BIG.nbytes
    assert all(p.stat().st_size < BIG.nbytes // 4 for p in (tmp_path / "module").iterdir())
    x = np.ones((3, 256), dtype=np.float32)
    again = InferenceSession(_model_bytes(BIG, batch="batch"))
    exe = again.executable({"x": x})
    assert exe.cached["module"]  # from the module entry and the shared weights
    np.testing.assert_allclose(exe(x)[0], x @ BIG, rtol=1e-5, atol=1e-5)


def test_rlx_opt_prints_a_models_weights_only_when_asked(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(_model_bytes(BIG))

    def opt(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "rlx_mlir.cli.opt", str(model), *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    small = opt()
    assert "dense_resource<encoder.weight>" in small and len(small) < 2000
    full = opt("-t", "mlir{resources_up_to=-1}")
    assert len(full) > 2 * BIG.nbytes
    np.testing.assert_array_equal(_resources(parse(full))[0].blob.data.array, BIG.reshape(-1))
