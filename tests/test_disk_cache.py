"""The persistent compile cache (rlx_mlir/disk_cache.py) and pickled executables.

Cache behaviour is checked by what each compile reports (`Executable.cached`),
by which compiler stages a process ran, and by what lands on disk. How much
faster a second process is gets measured, not asserted (a time ratio would fail
on a loaded machine): `python benchmarks/compile_cache.py`.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ir_snippets import GRAPH
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir import compiler, disk_cache

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "bias_gelu.mlir"

CHILD = """
import json, sys
import llvmlite.binding as llvm
import numpy as np
import rlx_mlir as rlx
from rlx_mlir import compiler

# Count the stages a cache hit must skip: parsing, passes and lowering
# (`_derive`), LLVM's optimization pipeline, and parsing LLVM IR text.
stages = {"derive": 0, "optimize": 0, "parse llvm ir": 0}

def counted(name, function, counts=lambda *args, **kwargs: True):
    def wrapper(*args, **kwargs):
        stages[name] += bool(counts(*args, **kwargs))
        return function(*args, **kwargs)
    return wrapper

compiler._derive = counted("derive", compiler._derive)
llvm.create_pass_builder = counted("optimize", llvm.create_pass_builder)
llvm.parse_assembly = counted("parse llvm ir", llvm.parse_assembly, lambda text, **_: text.strip())
text = open(sys.argv[1]).read()
exe = rlx.compile(text)
inputs = [np.linspace(-2, 2, int(np.prod(s.shape)), dtype=s.dtype.numpy).reshape(s.shape) for s in exe.inputs]
(out,) = exe(*inputs)
print(json.dumps({"cached": exe.cached, "stages": stages, "out": out.tolist()}))
"""


def compile_in_a_new_process(cache: Path, example: Path = EXAMPLE, **env: str) -> dict:
    environment = {**os.environ, "RLX_MLIR_CACHE_DIR": str(cache), **env}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(example)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, Path]:
    """The example compiled by a process in a new cache, then by a second one
    (the two tests below read different things off the same pair of runs)."""
    cache = tmp_path_factory.mktemp("two-processes")
    return compile_in_a_new_process(cache), compile_in_a_new_process(cache), cache


def test_a_second_process_loads_everything_from_the_cache(two_processes: tuple[dict, dict, Path]) -> None:
    first, second, cache = two_processes
    assert first["cached"] == {"module": False, "machine code": False}
    assert second["cached"] == {"module": True, "machine code": True}
    assert second["out"] == first["out"]
    assert sorted(p.name for p in cache.iterdir()) == ["module", "object", "pool"]


def test_a_second_process_skips_every_compiler_stage(two_processes: tuple[dict, dict, Path]) -> None:
    """What makes a second process fast: it neither parses, runs passes nor lowers
    the graph, runs no LLVM optimization and parses no LLVM IR text."""
    first, second, _ = two_processes
    assert first["stages"]["derive"] == 1 and first["stages"]["optimize"] >= 1, first["stages"]
    assert second["stages"] == {"derive": 0, "optimize": 0, "parse llvm ir": 0}, second["stages"]


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    result = compile_in_a_new_process(tmp_path, RLX_MLIR_CACHE="0")
    assert result["cached"] == {"module": False, "machine code": False}
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_clear_removes_every_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    rlx.compile(GRAPH)
    assert any((tmp_path / "cache").rglob("*"))
    disk_cache.clear()
    assert not (tmp_path / "cache").exists()
    assert rlx.compile(GRAPH).cached["module"] is False  # (its engine may still be alive in this process)
    assert any((tmp_path / "cache").rglob("*"))


def test_a_tuning_constant_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark that turns the emitted GEMM kernels off must not get their code back from the cache."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    text = (
        "func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {\n"
        "  %c = rlx.matmul %a, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>\n"
        "  func.return %c : tensor<8x8xf32>\n}"
    )
    tiled = rlx.compile(text)
    assert rlx.compile(text).cached["module"]
    called = rlx.compile(text, tuning={"gemm_tiled_max_mnk": 0, "gemm_panel_max_mnk": 0})
    assert not called.cached["module"]
    assert "cblas_sgemm" in called.llvm_ir and "cblas_sgemm" not in tiled.llvm_ir


def _graph_module() -> ModuleOp:
    """A module-level build for a Source (what a pickled executable must be able to call again)."""
    return rlx.parse(GRAPH)


def test_a_source_is_built_only_on_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key stands for the module: a hit neither builds nor prints it; another key is a miss;
    the executable pickles as its Source."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    builds: list[str] = []

    def build() -> ModuleOp:
        builds.append("built")
        return rlx.parse(GRAPH)

    first = rlx.compile(compiler.Source("graph v1", build))
    again = rlx.compile(compiler.Source("graph v1", build))
    assert builds == ["built"] and not first.cached["module"] and again.cached["module"]
    assert not rlx.compile(compiler.Source("graph v2", build)).cached["module"] and len(builds) == 2
    a, b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), np.ones(3, np.float32)
    pickled = pickle.loads(pickle.dumps(rlx.compile(compiler.Source("graph v3", _graph_module))))
    np.testing.assert_allclose(pickled(a, b)[0], np.tanh(a + b), rtol=1e-6)
    with pytest.raises(rlx.CompileError, match="must return a builtin.module"):
        rlx.compile(compiler.Source("graph v4", lambda: GRAPH))
    with pytest.raises(rlx.CompileError, match="takes a string and a callable"):
        compiler.Source(b"bytes", build)  # type: ignore[arg-type]


def test_an_unreadable_entry_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    rlx.compile(GRAPH)
    for entry in tmp_path.rglob("*"):
        if entry.is_file():
            entry.write_bytes(b"not a pickle")
    exe = rlx.compile(GRAPH)
    assert exe.cached["module"] is False
    a, b = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    np.testing.assert_allclose(exe(a, b)[0], np.tanh(a + b), rtol=1e-6)


def test_an_executable_pickles_and_recompiles() -> None:
    exe = rlx.compile(GRAPH, threads=1)
    again = pickle.loads(pickle.dumps(exe))
    a, b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), np.ones(3, np.float32)
    np.testing.assert_array_equal(again(a, b)[0], exe(a, b)[0])


def _run_pickled(args: tuple[bytes, np.ndarray, np.ndarray]) -> np.ndarray:
    blob, a, b = args
    return pickle.loads(blob)(a, b)[0]


def test_a_pickled_executable_runs_in_a_process_pool() -> None:
    """What dask, Ray or multiprocessing do with it: each worker unpickles and recompiles (through the cache)."""
    exe = rlx.compile(GRAPH)
    blob = pickle.dumps(exe)
    rng = np.random.default_rng(0)
    chunks = [
        (blob, rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32))
        for _ in range(4)
    ]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.map(_run_pickled, chunks)
    for (_, a, b), got in zip(chunks, results):
        np.testing.assert_allclose(got, np.tanh(a + b), rtol=1e-6)


# ---------------------------------------------------------------------------
# a cache that verifies before it trusts
# ---------------------------------------------------------------------------


def _entries(cache: Path) -> list[Path]:
    return sorted(p for kind in disk_cache.KINDS if (cache / kind).is_dir() for p in (cache / kind).iterdir())


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at % len(data)] ^= 0x10
    path.write_bytes(bytes(data))


def _corrupt(kind: str, entries: list[Path]) -> None:
    """Damage every entry of the cache one way (`swap` needs two of a kind: it
    leaves the pool's one IR entry alone)."""
    for path in entries:
        if kind == "payload":
            _flip(path, -100)
        elif kind == "header":
            _flip(path, len(disk_cache.MAGIC) + 20)
        elif kind == "truncate":
            path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
        elif kind == "plant":
            path.write_bytes(pickle.dumps({"planted": True}))
        elif kind == "symlink":
            path.unlink()
            path.symlink_to("/dev/zero")
        elif kind == "fifo":
            path.unlink()
            os.mkfifo(path)
        elif kind == "foreign":
            os.chown(path, 65534, 65534)
    if kind == "swap":  # every entry gets another key's entry of its kind, intact
        by_kind: dict[str, list[Path]] = {}
        for path in entries:
            by_kind.setdefault(path.parent.name, []).append(path)
        for paths in by_kind.values():
            contents = [p.read_bytes() for p in paths]
            for path, data in zip(paths, contents[1:] + contents[:1]):
                path.write_bytes(data)


CORRUPTIONS = ["payload", "header", "truncate", "swap", "plant", "symlink", "fifo", "foreign"]


@pytest.fixture(scope="module")
def intact_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """A cache two processes filled (the example, then a second graph: two entries of
    the module and object kinds), and the example's result; each corruption test
    damages a copy of it, so the two processes run once for all of them."""
    root = tmp_path_factory.mktemp("intact")
    cache, other = root / "cache", root / "graph.mlir"
    other.write_text(GRAPH)
    want = compile_in_a_new_process(cache)["out"]
    compile_in_a_new_process(cache, other)
    return cache, want


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_a_damaged_or_planted_entry_is_compiled_again(
    kind: str, tmp_path: Path, intact_cache: tuple[Path, list]
) -> None:
    """Every entry of every level (module, object, pool) damaged one way: a fresh
    process gives the right result from a recompile (with a warning), never a wrong
    result, a crash, a hang or a traceback; its new entries are then used again."""
    if kind == "foreign" and os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    cache, want = tmp_path / "cache", intact_cache[1]
    shutil.copytree(intact_cache[0], cache)  # modes kept: folders 0700, as the cache made them
    entries = _entries(cache)
    assert {p.parent.name for p in entries} == {"module", "object", "pool"}
    assert len(entries) == len(_entries(intact_cache[0]))
    _corrupt(kind, entries)
    again = compile_in_a_new_process(cache)
    assert again["cached"] == {"module": False, "machine code": False}
    assert again["out"] == want
    assert compile_in_a_new_process(cache)["cached"] == {"module": True, "machine code": True}


def test_a_folder_others_can_write_is_not_read(tmp_path: Path) -> None:
    compile_in_a_new_process(tmp_path)
    tmp_path.chmod(0o777)
    assert compile_in_a_new_process(tmp_path)["cached"] == {"module": False, "machine code": False}


def test_clear_removes_only_what_the_cache_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RLX_MLIR_CACHE_DIR pointed at a folder of other work: clear() leaves it alone."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "module").mkdir(mode=0o700)
    (tmp_path / "module" / ("0" * 64)).write_bytes(b"not written by the cache")
    rlx.compile(GRAPH)
    disk_cache.clear()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "module",
        f"module/{'0' * 64}",
        "notes.txt",
    ]


SECOND = 1_000_000_000


def _entry_names(folder: Path) -> set[str]:
    return {path.name for path in folder.iterdir()} if folder.exists() else set()


def test_the_least_recently_used_entries_go_past_the_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six entries of 1,628 bytes fit a 10 KiB bound; the seventh passes it, and the
    oldest are deleted until the cache is at most 3/4 of the bound (three of them).
    Entry 0 was read last (its access time), so it stays though written first."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RLX_MLIR_CACHE_MAX_SIZE", "10K")
    names = [disk_cache.key("test", str(k)) for k in range(7)]
    for k, name in enumerate(names[:6]):
        disk_cache.store("object", name, bytes(1500))
        os.utime(tmp_path / "object" / name, ns=(k * SECOND, k * SECOND))
    os.utime(tmp_path / "object" / names[0], ns=(100 * SECOND, 0))
    assert _entry_names(tmp_path / "object") == set(names[:6])
    disk_cache.store("object", names[6], bytes(1500))
    assert _entry_names(tmp_path / "object") == {names[0], names[4], names[5], names[6]}
    assert sum(path.stat().st_size for path in (tmp_path / "object").iterdir()) <= 10 * 1024 * 3 // 4


def test_prune_deletes_only_what_the_cache_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, files the cache did not write (another name, no entry header) and
    a temporary file being written stay; a writer's stale temporary file goes."""
    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    disk_cache.store("module", disk_cache.key("test", "entry"), bytes(100))
    folder = tmp_path / "module"
    foreign = {"notes.txt": b"mine", "0" * 64: b"not written by the cache", ".tmp-fresh": b"being written"}
    for name, data in {**foreign, ".tmp-stale": b"left by a killed writer"}.items():
        (folder / name).write_bytes(data)
        if name != ".tmp-fresh":
            os.utime(folder / name, ns=(0, 0))
    disk_cache.prune(limit=0)
    assert _entry_names(folder) == set(foreign)


def test_the_bound_reads_sizes_and_refuses_anything_else(monkeypatch: pytest.MonkeyPatch) -> None:
    for text, size in {"1024": 1024, "512M": 512 << 20, "4g": 4 << 30, "2GiB": 2 << 30, " 64 KB ": 64 << 10}.items():
        monkeypatch.setenv("RLX_MLIR_CACHE_MAX_SIZE", text)
        assert disk_cache.max_bytes() == size
    monkeypatch.setenv("RLX_MLIR_CACHE_MAX_SIZE", "lots")
    with pytest.warns(RuntimeWarning, match="RLX_MLIR_CACHE_MAX_SIZE='lots' is not a size"):
        assert disk_cache.max_bytes() == disk_cache.DEFAULT_MAX_BYTES


def test_a_bound_below_one_entry_keeps_only_the_last_write(
    tmp_path: Path, two_processes: tuple[dict, dict, Path]
) -> None:
    """Each write prunes every entry but itself; the last is the module entry (written
    after the machine code, once the weights it names are): a new process finds it,
    misses the machine code, computes what an unbounded cache's did, and leaves one
    entry in the folder."""
    for first in (True, False):
        result = compile_in_a_new_process(tmp_path, RLX_MLIR_CACHE_MAX_SIZE="1")
        assert result["cached"] == {"module": not first, "machine code": False}
        assert result["out"] == two_processes[0]["out"]
        assert len([path for path in tmp_path.rglob("*") if path.is_file()]) == 1


def test_a_module_entry_keeps_every_constant_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Module entries are JSON plus the constants' raw bytes (no pickle): constants of
    the narrow, integer, boolean and complex types come back bit for bit."""
    import ml_dtypes

    monkeypatch.setenv("RLX_MLIR_CACHE_DIR", str(tmp_path))
    b = rlx.Builder("constants")
    x = b.input((4,))
    values = [
        np.array([1.5, -2.25, 3.0, 0.5], ml_dtypes.bfloat16),
        np.array([0.1, 0.2, 0.3, 65504.0], np.float16),
        np.array([-8, 7, 1, -1], ml_dtypes.int4),
        np.array([True, False, True, False]),
        np.array([1 + 2j, -3j, 0.5, 2], np.complex128),
    ]
    total = x
    for value in values:
        total = b.add(total, b.cast(b.constant(value), "f32"))
    b.output(total)
    text = str(b.module())
    first = rlx.compile(text)
    again = rlx.compile(text)
    assert (first.cached["module"], again.cached["module"]) == (False, True)
    data = np.arange(4, dtype=np.float32)
    assert again(data)[0].tobytes() == first(data)[0].tobytes()
    entry = next((tmp_path / "module").iterdir()).read_bytes()
    assert b'{"name": "constants", "inputs": [[[4], "f32"]]' in entry  # JSON, not a pickle
