"""Constants outside the arena (issue 21, "Weights stay binary"): executables
compiled from the same weights share one buffer of them, no kernel writes a
constant, a session's model digest is remembered only while its file is
unchanged, and a damaged weights entry is still a miss.
"""

from __future__ import annotations

import gc
import mmap
import os
import threading
import time
import warnings
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
import rlx_mlir.onnx as rlx_onnx
from rlx_mlir import compiler, disk_cache, runtime
from rlx_mlir.frontends.onnx import weights
from rlx_mlir.passes import pack_matmul_weights

WIDTH = 600
"""A [600, 600] f32 weight: 1.44 MB, over `disk_cache.MAP_OVER` (a mapped, stamped entry)."""


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(cache))
    monkeypatch.setattr(disk_cache, "RACY_NS", 20_000_000)  # 20 ms: the tests sleep past it
    return cache


def _weight(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((WIDTH, WIDTH), dtype=np.float32)


def _model(weight: np.ndarray) -> bytes:
    """y = x @ W with a dynamic batch: W an initializer (raw data in the file)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", WIDTH])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", WIDTH])
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    graph = helper.make_graph([node], "mm", [x], [y], [numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph).SerializeToString()


def _feed(batch: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(batch).standard_normal((batch, WIDTH), dtype=np.float32)}


def _owner(array: np.ndarray) -> object:
    """What holds an array's memory: the end of its chain of bases (a map's memoryview: its map)."""
    owner: object = array
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    return owner.obj if isinstance(owner, memoryview) else owner


def _weight_buffers(exe: runtime.Executable) -> list[np.ndarray]:
    """The weight's buffer: as it is, or in the panels of `pack-matmul-weights` (padded)."""
    return [c for c in exe.constants if c.nbytes >= WIDTH * WIDTH * 4]


def _times(weight: np.ndarray) -> ModuleOp:
    """x [2, WIDTH] @ a constant `weight`."""
    b = rlx.Builder("f")
    b.output(b.matmul(b.input((2, WIDTH)), b.constant(weight)))
    return b.module()


def test_two_shapes_of_a_model_share_their_weights(tmp_path: Path) -> None:
    """A second input shape compiles a second executable that reads the first one's
    weight buffer (one copy in the process), read-only and aligned for its loads."""
    path = tmp_path / "mm.onnx"
    weight = _weight(0)
    path.write_bytes(_model(weight))
    session = rlx_onnx.InferenceSession(str(path))
    first, second = session.executable(_feed(2)), session.executable(_feed(5))
    assert first is not second
    (a,), (b,) = _weight_buffers(first), _weight_buffers(second)
    assert a.ctypes.data == b.ctypes.data
    assert not a.flags.writeable and a.ctypes.data % 4 == 0
    for batch in (2, 5):
        (got,) = session.run(None, _feed(batch))
        np.testing.assert_allclose(got, _feed(batch)["x"] @ weight, rtol=1e-4, atol=1e-4)


def test_a_second_shape_reads_the_panels_of_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The weight's GEMM panels (`pack-matmul-weights`) depend on K and N only: a second
    input shape reads those a live executable of the first reads, and packs nothing."""
    packed = []
    pack = pack_matmul_weights.panels
    monkeypatch.setattr(pack_matmul_weights, "panels", lambda *args: packed.append(args) or pack(*args))
    path = tmp_path / "mm.onnx"
    path.write_bytes(_model(_weight(3)))
    session = rlx_onnx.InferenceSession(str(path))
    first, second = session.executable(_feed(2)), session.executable(_feed(5))
    assert "rhs_panels" in first.planned_ir and "rhs_panels" in second.planned_ir
    assert len(packed) == 1
    (a,), (b,) = _weight_buffers(first), _weight_buffers(second)
    assert a.ctypes.data == b.ctypes.data


def test_a_new_process_reads_the_weights_entry_in_place(tmp_path: Path) -> None:
    """Compiled again with no live executable (as a new process would), the weights
    are the disk-cache entry's map: 64-byte aligned, not a copy, the same values."""
    weight = _weight(1)
    text = _times(weight)
    data = _feed(2)["x"]
    first = rlx.compile(text)
    (want,) = first(data)
    (stored,) = [buffer.tobytes() for buffer in _weight_buffers(first)]
    del first
    gc.collect()
    again = rlx.compile(text)
    assert again.cached["module"]
    (buffer,) = _weight_buffers(again)
    assert buffer.ctypes.data % 64 == 0 and isinstance(_owner(buffer), mmap.mmap)
    assert buffer.tobytes() == stored
    np.testing.assert_array_equal(again(data)[0], want)


GRAPH = """
func.func @f(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %k = rlx.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<16xf32>
  %e = rlx.exp %k : (tensor<16xf32>) -> tensor<16xf32>
  %s = rlx.add %e, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  func.return %k, %s, %e : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
"""


@pytest.mark.parametrize("pipeline", ["", None])
def test_a_constant_is_never_written(pipeline: str | None) -> None:
    """The exp's input dies at the exp, the case where the planner writes a result
    over its input: never over a constant. Returned, it is copied; called again,
    the results are the same, and the constant's bytes are unchanged."""
    exe = rlx.compile(GRAPH, pipeline=pipeline)
    k = np.arange(16, dtype=np.float32)
    x = np.ones(16, np.float32)
    for _ in range(3):
        got_k, got_s, got_e = exe(x)
        np.testing.assert_array_equal(got_k, k)
        np.testing.assert_allclose(got_e, np.exp(k), rtol=1e-6)
        np.testing.assert_allclose(got_s, np.exp(k) + 1, rtol=1e-6)
        got_k[:] = -1  # the caller's copy: the constant stays
    (constant,) = exe.constants
    assert not constant.flags.writeable
    assert constant.view(np.float32).tolist() == k.tolist()


def test_the_model_digest_is_remembered_until_the_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening an unchanged file again hashes nothing (the stamp of its identity);
    rewritten in place with other weights of the same size, it is hashed again
    and its own results come out, never the first file's compile."""
    hashed: list[str] = []
    real = weights.hash_file

    def counting(stream: BinaryIO) -> str:
        hashed.append(stream.name)
        return real(stream)

    monkeypatch.setattr(weights, "hash_file", counting)
    path = tmp_path / "mm.onnx"
    path.write_bytes(_model(_weight(2)))
    time.sleep(0.05)  # older than RACY_NS: not racily clean
    first = rlx_onnx.InferenceSession(str(path))
    again = rlx_onnx.InferenceSession(str(path))
    assert hashed == [str(path)]  # the second session read the stamp
    assert again._digest == first._digest
    blob = _model(_weight(3))
    assert len(blob) == path.stat().st_size
    path.write_bytes(blob)
    time.sleep(0.05)
    changed = rlx_onnx.InferenceSession(str(path))
    assert hashed == [str(path)] * 2
    assert changed._digest != first._digest
    (got,) = changed.run(None, _feed(2))
    np.testing.assert_allclose(got, _feed(2)["x"] @ _weight(3), rtol=1e-4, atol=1e-4)


def test_a_fresh_file_is_hashed_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed within RACY_NS of its hash may share its timestamps with a
    later write: its stamp is not trusted (git's racily clean entries)."""
    monkeypatch.setattr(disk_cache, "RACY_NS", 3_600_000_000_000)  # an hour: every file is fresh
    path = tmp_path / "mm.onnx"
    path.write_bytes(_model(_weight(4)))
    with open(path, "rb") as stream:
        info = os.fstat(stream.fileno())
    rlx_onnx.InferenceSession(str(path))
    assert disk_cache.recall("sha256", info) is None


def test_a_changed_file_is_not_imported_under_the_old_digest(tmp_path: Path) -> None:
    """A session compiles a new shape by importing its file again: if the file
    changed since the session hashed it, that is an error, not a cache entry of
    the new bytes under the old key."""
    path = tmp_path / "mm.onnx"
    path.write_bytes(_model(_weight(5)))
    session = rlx_onnx.InferenceSession(str(path))
    path.write_bytes(_model(_weight(6)))
    with pytest.raises(rlx.CompileError, match="changed since the session opened it"):
        session.run(None, _feed(3))


def test_a_damaged_weights_entry_is_still_a_miss(private_cache: Path) -> None:
    """A weights entry verified once (stamped), then damaged with one flipped byte:
    the next compile rejects it (another file identity, no stamp), warns, compiles
    again, and gives the right result."""
    weight = _weight(7)
    text = _times(weight)
    data = _feed(2)["x"]
    (want,) = rlx.compile(text)(data)
    gc.collect()
    time.sleep(0.05)
    assert rlx.compile(text).cached["module"]  # verified, and stamped
    gc.collect()
    assert rlx.compile(text).cached["module"]  # trusted by its stamp
    gc.collect()
    (entry,) = (private_cache / "weights").iterdir()
    raw = bytearray(entry.read_bytes())
    raw[-100] ^= 0x10
    entry.write_bytes(bytes(raw))
    time.sleep(0.05)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exe = rlx.compile(text)
    assert not exe.cached["module"]
    assert any("does not match its header" in str(w.message) for w in caught)
    np.testing.assert_array_equal(exe(data)[0], want)


def _weight_digest(path: Path) -> str:
    from rlx_mlir.dialects.resources import ResourceElementsAttr
    from rlx_mlir.frontends.onnx import load

    module = load(str(path), {"x": (2, WIDTH)})
    (value,) = [op.value for op in module.walk() if isinstance(getattr(op, "value", None), ResourceElementsAttr)]
    return value.blob.data.digest()


def test_an_imported_weight_is_known_by_its_span_of_the_hashed_file(tmp_path: Path) -> None:
    """A weight viewed in a model file's map gets its digest from the file's SHA-256
    and its span (no hash of its bytes: a second import reads none of its pages);
    the same file gives the same digest, other weights another one."""
    import hashlib

    path = tmp_path / "mm.onnx"
    path.write_bytes(_model(_weight(8)))
    digest = _weight_digest(path)
    assert digest != hashlib.blake2b(_weight(8).tobytes(), digest_size=16).hexdigest()
    assert _weight_digest(path) == digest
    path.write_bytes(_model(_weight(9)))
    assert _weight_digest(path) != digest


def test_a_profiling_build_reads_the_same_weights() -> None:
    """`exe.profile` compiles a second build of the same plan: it reads the
    first build's weight buffer, not a copy."""
    b = rlx.Builder("f")
    x = b.input((2, WIDTH))
    b.output(b.matmul(x, b.constant(_weight(10))))
    exe = rlx.compile(b.module())
    data = _feed(2)["x"]
    exe.profile(data, repeat=1)
    assert exe._profiling is not None
    ((ours,), (theirs,)) = _weight_buffers(exe), _weight_buffers(exe._profiling)
    assert ours.ctypes.data == theirs.ctypes.data


def test_an_entry_is_synced_before_a_stamp_vouches_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Storing a large entry syncs nothing (a crash's cut entry fails its digest);
    the first load that verifies it syncs that very file, then stamps it; a path that
    names another file by then is not stamped (the stamp would vouch for bytes unsynced)."""
    synced: list[tuple[int, int]] = []
    real = os.fsync

    def recording(fd: int) -> None:
        info = os.fstat(fd)
        synced.append((info.st_dev, info.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    data = np.arange(2 << 20, dtype=np.uint8).tobytes()  # over MAP_OVER: a mapped, stamped entry
    disk_cache.store("weights", "a" * 64, [data])
    assert synced == []
    path = disk_cache.directory() / "weights" / ("a" * 64)
    info = path.stat()
    time.sleep(0.05)  # older than RACY_NS
    assert disk_cache.load_view("weights", "a" * 64) is not None
    assert synced == [(info.st_dev, info.st_ino)]
    stamp = f"verified weights/{'a' * 64}"
    assert disk_cache.recall(stamp, path.stat()) is not None
    disk_cache.store("weights", "b" * 64, [data])
    other = disk_cache.directory() / "weights" / ("b" * 64)
    assert not disk_cache._durable(other, info)  # another file's status: nothing to vouch for
    assert disk_cache.recall(f"verified weights/{'b' * 64}", other.stat()) is None


def test_a_weights_entry_is_stamped_by_its_writer_after_its_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile's weights entry (a mapped store over MAP_OVER) is synced, renamed,
    then stamped with the identity the rename left: its first load, at once, hashes
    nothing. A write in place changes that identity: hashed again, and refused."""
    events: list[str] = []
    real_fsync, real_digest = os.fsync, disk_cache._digest
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("sync"), real_fsync(fd))[1])
    monkeypatch.setattr(disk_cache, "_digest", lambda *a: (events.append("hash"), real_digest(*a))[1])
    real_store = disk_cache.store
    monkeypatch.setattr(disk_cache, "store", lambda kind, *a, **k: (events.append(kind), real_store(kind, *a, **k))[1])
    data = np.arange(2 << 20, dtype=np.uint8).tobytes()
    assert disk_cache.store("weights", "a" * 64, [data], mapped=True) is not None
    assert events == ["weights", "hash", "sync", "stamps", "hash"]  # the stamp entry is hashed: it is small
    path = disk_cache.directory() / "weights" / ("a" * 64)
    events.clear()
    assert disk_cache.load_view("weights", "a" * 64) == memoryview(data)
    assert "sync" not in events and events.count("hash") == 1  # the stamp's own entry, not the weights
    with open(path, "r+b") as handle:  # a flipped byte, in place
        handle.seek(-1, os.SEEK_END)
        handle.write(b"\x00")  # was 0xff
    events.clear()
    with pytest.warns(RuntimeWarning, match="does not match its header"):
        assert disk_cache.load_view("weights", "a" * 64) is None
    assert events.count("hash") == 1  # the weights' (no stamp of this identity to load)


def test_the_weights_are_written_beside_llvm_and_its_errors_reach_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """The weights entry is written on a thread of its own while LLVM compiles; what
    goes wrong there is raised by `compile`, on the caller's thread, and no module
    entry names weights that were never written."""
    writers: list[str] = []

    def failing(self: compiler.Weights) -> dict[str, memoryview]:
        writers.append(threading.current_thread().name)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compiler.Weights, "store", failing)
    text = _times(_weight(7))
    with pytest.raises(OSError, match="No space left"):
        rlx.compile(text)
    assert writers == ["rlx-weights"]
    assert not list((disk_cache.directory() / "module").glob("*"))
