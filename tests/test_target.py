"""The target model (`rlx_mlir/target.py`) and the kernel choices derived from
it (`rlx_mlir/tuning.py`): naming a target, overriding a knob, the cache
keeping builds apart, and code for a level the host lacks refused at the call."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir import target as target_module
from rlx_mlir.target import LEVEL_FEATURES, TargetError, cache_sizes, target
from rlx_mlir.tuning import NEVER, Tuning, TuningError, parse_overrides

CHAIN = """func.func @f(%a: tensor<3000xf32>, %b: tensor<3000xf32>) -> tensor<3000xf32> {
  %m = rlx.mul %a, %b : (tensor<3000xf32>, tensor<3000xf32>) -> tensor<3000xf32>
  %t = rlx.tanh %m : (tensor<3000xf32>) -> tensor<3000xf32>
  %s = rlx.sigmoid %a : (tensor<3000xf32>) -> tensor<3000xf32>
  %r = rlx.sub %t, %s : (tensor<3000xf32>, tensor<3000xf32>) -> tensor<3000xf32>
  func.return %r : tensor<3000xf32>
}"""

ROW_SUM = """func.func @f(%x: tensor<64x1000xf32>) -> tensor<64xf32> {
  %s = rlx.reduce_sum %x {axes = array<i64: 1>} : (tensor<64x1000xf32>) -> tensor<64xf32>
  func.return %s : tensor<64xf32>
}"""


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal(3000).astype(np.float32), rng.standard_normal(3000).astype(np.float32)


@pytest.mark.parametrize(("name", "vector_bytes", "registers"), [("x86-64-v3", 32, 16), ("x86-64-v4", 64, 32)])
def test_levels_have_their_vectors(name: str, vector_bytes: int, registers: int) -> None:
    t = target(name)
    assert (t.level, t.vector_bytes, t.vector_registers) == (name, vector_bytes, registers)
    assert t.cpu == name


def test_a_cpu_name_is_asked_of_llvm() -> None:
    assert target("znver3").level == "x86-64-v3"
    assert target("skylake-avx512").level == "x86-64-v4"


@pytest.mark.parametrize("name", ["pentium9", "x86-64-v5"])
def test_an_unknown_target_is_a_compile_error(name: str) -> None:
    with pytest.raises(rlx.CompileError, match=f"unknown target '{name}'"):
        rlx.compile(CHAIN, target=name)


def test_a_target_that_is_not_a_name_is_a_compile_error() -> None:
    with pytest.raises(TargetError, match="a target is a name"):
        target(3)  # type: ignore[arg-type]


def test_the_environment_names_the_default_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLX_MLIR_TARGET", "x86-64-v3")
    exe = rlx.compile(CHAIN)
    assert exe.target.name == "x86-64-v3" and exe.tuning.vector_bytes == 32
    assert rlx.compile(CHAIN, target="native").target.name == "native"


def test_avx2_code_equals_the_hosts_bit_for_bit() -> None:
    """The elementwise formulas are the same scalar code at every vector width (no
    reassociation), so an AVX2 build gives the host build's bits."""
    a, b = inputs()
    (native,) = rlx.compile(CHAIN)(a, b)
    (avx2,) = rlx.compile(CHAIN, target="x86-64-v3")(a, b)
    assert native.tobytes() == avx2.tobytes()


def test_builds_for_two_targets_are_kept_apart() -> None:
    """The disk cache and the engine cache key on the target: asking for the other
    level after one was compiled gives that level's code, not the cached one."""
    v4 = rlx.compile(CHAIN, target="x86-64-v4")
    v3 = rlx.compile(CHAIN, target="x86-64-v3")
    assert "%zmm" not in v3.assembly() and "%ymm" in v3.assembly()
    assert "%zmm" in v4.assembly() and v4.target.name == "x86-64-v4"


def test_an_override_changes_the_build_and_its_cache_key() -> None:
    """region_block is how many lane steps a reduction runs between flushes: an
    override reaches the kernel (a different LLVM IR, not the cached default)."""
    x = np.random.default_rng(1).standard_normal((64, 1000)).astype(np.float32)
    default = rlx.compile(ROW_SUM)
    small = rlx.compile(ROW_SUM, tuning={"region_block": 2})
    assert small.tuning.region_block == 2 and default.tuning.region_block != 2
    assert small.llvm_ir != default.llvm_ir
    error = np.abs(small(x)[0] - x.sum(axis=1, dtype=np.float64))
    bound = 4 * np.finfo(np.float32).eps * np.abs(x).sum(axis=1, dtype=np.float64)  # f32 rounding, 1000 terms
    assert (error <= bound).all(), (error / bound).max()


@pytest.mark.parametrize(
    ("tuning", "message"),
    [
        ({"tile_rows": 4}, "unknown tuning knob 'tile_rows'"),
        ({"gemm_tile_rows": 0}, "'gemm_tile_rows' takes an integer >= 1, got 0"),
        ({"gemm_tiled_max_mnk": -1}, "'gemm_tiled_max_mnk' takes an integer >= 0, got -1"),
        ({"region_block": 2.5}, "'region_block' takes an integer >= 1, got 2.5"),
        ({"reduce_block": True}, "'reduce_block' takes an integer >= 1, got True"),
        ({"stage_bytes": 100}, "'stage_bytes' takes a multiple of 64, got 100"),
        ({"vector_bytes": 48}, "'vector_bytes' takes 16, 32 or 64, got 48"),
        ([("region_block", 2)], "tuning= takes a mapping of knob names to integers, got list"),
    ],
)
def test_a_bad_override_is_a_compile_error(tuning: object, message: str) -> None:
    with pytest.raises(rlx.CompileError, match=message):
        rlx.compile(ROW_SUM, tuning=tuning)  # type: ignore[arg-type]


def test_override_text_of_the_pass_option() -> None:
    assert parse_overrides(" region_block=8, gdn_chunked_min_seq=0 ,") == {"region_block": 8, "gdn_chunked_min_seq": 0}
    with pytest.raises(TuningError, match="bad tuning override 'region_block=x'"):
        parse_overrides("region_block=x")


def test_avx512_cpus_get_512_bit_code_though_llvm_prefers_256() -> None:
    """LLVM's tuning of Intel's AVX-512 CPUs splits 512-bit vectors into ymm
    pairs; the kernels are written for zmm, so every v4 target asks for them
    (compiled only: the host need not have AVX-512 to read the assembly)."""
    for name in ("skylake-avx512", "sapphirerapids", "x86-64-v4"):
        assembly = rlx.compile(CHAIN, target=name, threads=1).assembly()
        assert "zmm" in assembly, name
    assert "zmm" not in rlx.compile(CHAIN, target="x86-64-v3", threads=1).assembly()


def test_register_tiles_follow_the_registers() -> None:
    """About half the vector registers hold accumulators: 16 of AVX-512's 32 (8-row
    tiles of two vectors), 12 of AVX2's 16 (6 rows)."""
    v3, v4 = Tuning.for_target(target("x86-64-v3")), Tuning.for_target(target("x86-64-v4"))
    assert (v4.accumulators, v4.gemm_tile_rows, v4.tile_bytes()) == (16, 8, 128)
    assert (v3.accumulators, v3.gemm_tile_rows, v3.tile_bytes()) == (12, 6, 64)
    assert v3.gdn_chunked_min_seq == v4.gdn_chunked_min_seq == NEVER


def test_cache_sizes_come_from_sysfs_or_the_defaults(tmp_path: Path) -> None:
    def cache(index: int, level: int, kind: str, size: str) -> None:
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, text in (("level", str(level)), ("type", kind), ("size", size)):
            (folder / name).write_text(text + "\n")

    assert cache_sizes(tmp_path) == (32 << 10, 1 << 20, 32 << 20)
    cache(0, 1, "Data", "48K")
    cache(1, 1, "Instruction", "64K")
    cache(2, 2, "Unified", "2048K")
    assert cache_sizes(tmp_path) == (48 << 10, 2 << 20, 2 << 20)  # no L3: the L2 is the last level
    cache(3, 3, "Unified", "96M")
    assert cache_sizes(tmp_path) == (48 << 10, 2 << 20, 96 << 20)


def test_streaming_stores_start_at_the_cores_share_of_the_last_level_cache() -> None:
    """A 2-vCPU guest's sysfs reports the whole socket's L3 (480 MiB on a Xeon 6):
    its cores count on at most LLC_BYTES_PER_CORE_LIMIT each; a cache smaller than
    that share is taken whole."""
    host = target("x86-64-v4")
    for llc, cores, share in (
        (480 << 20, 2, 16 << 20),
        (32 << 20, 2, 16 << 20),
        (8 << 20, 2, 8 << 20),
        (32 << 20, 8, 32 << 20),
    ):
        t = dataclasses.replace(host, llc_bytes=llc, cores=cores)
        assert t.llc_share == share == Tuning.for_target(t).nontemporal_min_bytes


def test_code_the_host_cannot_run_is_refused_at_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """An AVX-512 build on an AVX2 host (simulated) compiles and shows its assembly,
    and its call raises instead of dying of an illegal instruction."""
    monkeypatch.setattr(target_module, "host_features", lambda: LEVEL_FEATURES["x86-64-v3"])
    exe = rlx.compile(CHAIN, target="x86-64-v4")
    assert "%zmm" in exe.assembly()
    with pytest.raises(
        TargetError,
        match=r"f was compiled for x86-64-v4, which this host cannot run \(it lacks avx512bw, avx512cd, avx512dq, avx512f",
    ):
        exe(*inputs())


def test_a_pickled_executable_keeps_its_target_and_tuning() -> None:
    exe = rlx.compile(ROW_SUM, target="x86-64-v3", tuning={"region_block": 4})
    again = pickle.loads(pickle.dumps(exe))
    assert again.target.name == "x86-64-v3" and again.tuning == exe.tuning


@pytest.mark.parametrize(
    ("cpu", "covered"), [("x86-64-v3", True), ("znver3", True), ("x86-64-v4", False), ("skylake-avx512", False)]
)
def test_the_avx2_rerun_is_left_out_only_where_native_code_is_avx2_code(cpu: str, covered: bool) -> None:
    """tests/isa_subset.py, which the README's test command runs, reruns the target-dependent
    modules at x86-64-v3 unless the host's own kernels already are those: an AVX2 CPU's."""
    from isa_subset import covered_by_the_first_run

    assert covered_by_the_first_run(target(cpu)) is covered
