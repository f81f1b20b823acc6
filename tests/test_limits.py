"""Memory and size limits: empty, huge and long programs either work or fail cleanly.

At the small end, zero-size dimensions, rank-0 tensors and functions with no
arguments or results compile and run. At the large end, sizes beyond what
64-bit offsets or memory can hold are refused with a documented exception
(VerificationError when the IR states them, ParseError for a constant that
cannot be held, AllocationError when the memory cannot be had), while big but
valid offsets (> 2 GiB) are addressed with 64-bit arithmetic. A long chain of
ops compiles and runs.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ir_snippets import GRAPH, binary_op, one_op, run_with_ones

import rlx_mlir as rlx

# ---------------------------------------------------------------------------
# the small end: edge cases that must simply work
# ---------------------------------------------------------------------------

EDGE_OK = {
    "zero-size dim": (GRAPH.replace("4x3", "0x3"), [(0, 3)]),
    "rank 0": (
        "func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  %t = rlx.tanh %a : (tensor<f32>) -> tensor<f32>\n  func.return %t : tensor<f32>\n}",
        [()],
    ),
    "scalar function": (
        "func.func @f(%a: f32) -> f32 {\n  %s = rlx.add %a, %a : (f32, f32) -> f32\n  func.return %s : f32\n}",
        [()],
    ),
    "identity": ("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  func.return %a : tensor<3xf32>\n}", [(3,)]),
    "argument returned twice": (
        "func.func @f(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {\n  func.return %a, %a : tensor<3xf32>, tensor<3xf32>\n}",
        [(3,), (3,)],
    ),
    "nothing in, nothing out": ("func.func @f() {\n  func.return\n}", []),
    "constant returned twice": (
        (
            "func.func @f() -> (tensor<3xf32>, tensor<3xf32>) {\n  %c = rlx.constant dense<1.0> : tensor<3xf32>\n"
            "  func.return %c, %c : tensor<3xf32>, tensor<3xf32>\n}"
        ),
        [(3,), (3,)],
    ),
    "empty constant": (
        "func.func @f() -> tensor<0xf32> {\n  %c = rlx.constant dense<> : tensor<0xf32>\n  func.return %c : tensor<0xf32>\n}",
        [(0,)],
    ),
    "narrow to length 0": (
        one_op("rlx.narrow", "{axis = 0 : i64, start = 3 : i64, length = 0 : i64}", "tensor<0x4xf32>"),
        [(0, 4)],
    ),
    "slice of length 0 with wild start": (
        one_op("rlx.slice", "{starts = array<i64: 5, 0>, steps = array<i64: 1, 1>}", "tensor<0x4xf32>"),
        [(0, 4)],
    ),
    "transpose rank 0": (one_op("rlx.transpose", "{perm = array<i64>}", "tensor<f32>", "tensor<f32>"), [()]),
    "pad rank 0": (one_op("rlx.pad", "{before = array<i64>, after = array<i64>}", "tensor<f32>", "tensor<f32>"), [()]),
    "pad reflect wider than input": (
        one_op(
            "rlx.pad",
            '{before = array<i64: 10>, after = array<i64: 7>, mode = "reflect"}',
            "tensor<19xf32>",
            "tensor<2xf32>",
        ),
        [(19,)],
    ),
    "pad inf into i64 saturates": (
        one_op(
            "rlx.pad",
            "{before = array<i64: 1>, after = array<i64: 0>, value = 0x7FF0000000000000 : f64}",
            "tensor<4xi64>",
            "tensor<3xi64>",
        ),
        [(4,)],
    ),
    "concat of rank-0 inputs": (
        one_op(
            "rlx.concat", "{axis = 0 : i64}", "tensor<2xf32>", "tensor<f32>", "%x, %x", "(tensor<f32>, tensor<f32>)"
        ),
        [(2,)],
    ),
    "gather with empty indices": (
        binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<0x3xf32>", "tensor<0xi64>", "tensor<0x3xf32>"),
        [(0, 3)],
    ),
}


@pytest.mark.parametrize("name", EDGE_OK)
def test_edge_case_compiles_and_runs(name: str) -> None:
    text, shapes = EDGE_OK[name]
    exe = rlx.compile(text)
    inputs = [np.zeros(s.shape, s.dtype.numpy) for s in exe.inputs]
    results = exe(*inputs)
    assert [r.shape for r in results] == shapes


# ---------------------------------------------------------------------------
# the large end
# ---------------------------------------------------------------------------


def test_a_thousand_op_chain_compiles_and_runs() -> None:
    """How long it takes is measured by benchmarks/compile_time.py, not asserted."""
    lines = [
        "func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {",
        "  %v0 = rlx.neg %a : (tensor<8x16xf32>) -> tensor<8x16xf32>",
    ]
    lines += [f"  %v{i} = rlx.neg %v{i - 1} : (tensor<8x16xf32>) -> tensor<8x16xf32>" for i in range(1, 1000)]
    lines += ["  func.return %v999 : tensor<8x16xf32>", "}"]
    exe = rlx.compile("\n".join(lines))
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    np.testing.assert_array_equal(exe(x)[0], x)  # an even number of negations


def test_arena_offset_beyond_2gib_is_a_64_bit_offset() -> None:
    """Regression: the offset 2_500_000_000 was emitted as `getelementptr ... i32 -1794967296`.

    %big takes arena bytes [0, 2.5e9), so %s lands at offset 2_500_000_000;
    running that program (with an rlx.expand making %big) segfaulted. Compiling
    only reserves (never touches) the 2.5 GB arena.
    """
    n = 2_500_000_000
    text = f"""func.func @f(%a: tensor<{n}xi8>, %x: tensor<4xi8>) -> (tensor<{n}xi8>, tensor<4xi8>) {{
  %big = rlx.neg %a : (tensor<{n}xi8>) -> tensor<{n}xi8>
  %s = rlx.neg %x : (tensor<4xi8>) -> tensor<4xi8>
  %s2 = rlx.neg %s : (tensor<4xi8>) -> tensor<4xi8>
  %b2 = rlx.neg %big : (tensor<{n}xi8>) -> tensor<{n}xi8>
  func.return %b2, %s2 : tensor<{n}xi8>, tensor<4xi8>
}}"""
    exe = rlx.compile(text, pipeline="")
    assert re.search(rf"getelementptr[^\n]*, i64 {n}\b", exe.llvm_ir), "the offset of %s is not an i64 2500000000"
    assert not re.search(r"getelementptr[^\n]*, i32 -\d+", exe.llvm_ir)


HUGE = 99_999_999_999_999  # elements: 400 TB of f32

TOO_LARGE = {
    # raw xdsl VerifyException (out of range for i64) from plan_memory, once
    "dimension beyond int64": (
        (
            "func.func @f(%a: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {\n"
            "  %n = rlx.neg %a : (tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32>\n"
            "  %m = rlx.reverse %n {axes = array<i64: 0>} : (tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32>\n"
            "  func.return %m : tensor<99999999999999999999xf32>\n}"
        ),
        rlx.VerificationError,
        "tensor<99999999999999999999xf32> is too large",  # the full message: lit elementwise/invalid.mlir @too_large
    ),
    # numpy MemoryError allocating a 364 TiB arena in Executable.__init__, once
    "huge intermediate": (
        (
            f"func.func @f(%a: tensor<{HUGE}xf32>) -> tensor<{HUGE}xf32> {{\n"
            f"  %n = rlx.neg %a : (tensor<{HUGE}xf32>) -> tensor<{HUGE}xf32>\n"
            f"  %m = rlx.reverse %n {{axes = array<i64: 0>}} : (tensor<{HUGE}xf32>) -> tensor<{HUGE}xf32>\n"
            f"  func.return %m : tensor<{HUGE}xf32>\n}}"
        ),
        rlx.AllocationError,
        "the arena of 400000000000000 bytes cannot be allocated",
    ),
}


@pytest.mark.parametrize("name", TOO_LARGE)
def test_too_large_to_compile_is_a_documented_error(name: str) -> None:
    text, error, message = TOO_LARGE[name]
    with pytest.raises(error) as info:
        rlx.compile(text)
    assert type(info.value) is error
    assert message in str(info.value), str(info.value)


def test_unallocatable_result_is_an_allocation_error_at_call_time() -> None:
    """An input-sized arena compiles; the 400 TB result is refused when the call allocates it."""
    text = (
        f"func.func @f(%a: tensor<1xf32>) -> tensor<{HUGE}xf32> {{\n"
        f"  %e = rlx.expand %a : (tensor<1xf32>) -> tensor<{HUGE}xf32>\n  func.return %e : tensor<{HUGE}xf32>\n}}"
    )
    with pytest.raises(rlx.AllocationError, match="^f: its results cannot be allocated$"):
        run_with_ones(text)


def test_huge_splat_constant_stays_one_value() -> None:
    """A 400 TB splat used to be expanded by xDSL's parser (MemoryError, or the
    process killed): it is parsed as one value, canonicalized into a scalar and
    an expand folded into its user, so its constant is 4 bytes (outside the
    arena, which holds nothing); only the 400 TB
    result is refused, when the call allocates it."""
    text = (
        f"func.func @f() -> tensor<{HUGE}xf32> {{\n  %c = rlx.constant dense<1.0> : tensor<{HUGE}xf32>\n"
        f"  %n = rlx.neg %c : (tensor<{HUGE}xf32>) -> tensor<{HUGE}xf32>\n  func.return %n : tensor<{HUGE}xf32>\n}}"
    )
    exe = rlx.compile(text)
    assert (exe.memory_plan.arena_size, exe.memory_plan.constant_bytes) == (0, 4)
    with pytest.raises(rlx.AllocationError, match="^f: its results cannot be allocated$"):
        exe()


def graph_of_width(n: int) -> str:
    """GRAPH with rows of `n` columns: a text no other width shares, so compiling it is not a cache hit."""
    return GRAPH.replace("tensor<3xf32>", f"tensor<{n}xf32>").replace("4x3xf32", f"4x{n}xf32")


def test_dropped_executables_release_their_engines() -> None:
    """The JIT cache kept every engine of every executable ever compiled (~0.28 MiB
    each, past 1 GB in long-running processes): it now holds them weakly, plus
    the few most recent."""
    import gc
    import weakref

    from rlx_mlir import jit

    kept = rlx.compile(GRAPH)
    dropped = []
    for n in range(2 * jit.RECENT):
        text = graph_of_width(n + 103)
        dropped.append(weakref.ref(rlx.compile(text)._compiled))
    gc.collect()
    assert sum(engine() is not None for engine in dropped) <= jit.RECENT  # only the most recent stay
    assert kept._compiled in jit._cache.values()  # a live executable's engine stays shared
    assert rlx.compile(GRAPH)._compiled is kept._compiled


def test_a_failed_llvm_step_frees_its_module_before_its_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """When O3 raised, the parsed module and its LLVM context were left to the
    collector. An error kept in a reference cycle (a traceback whose frame
    holds the error) hands both to the cyclic GC, which may finalize the
    context first: disposing the module then crashed the process. The module
    is now closed before the error leaves."""
    import gc

    from rlx_mlir import jit

    def failing(speed_level: int) -> None:
        raise RuntimeError("O3 failed")

    def fail_in_a_cycle(text: str) -> str:
        try:
            rlx.compile(text)
        except RuntimeError as error:
            caught = error  # this frame -> the error -> its traceback -> this frame
        return str(caught)

    monkeypatch.setattr(jit.llvm, "create_pipeline_tuning_options", failing)
    monkeypatch.setenv("RLX_MLIR_CACHE", "0")
    for n in range(1201, 1221):  # sizes no other test compiles
        assert fail_in_a_cycle(graph_of_width(n)) == "O3 failed"
    gc.collect()


def test_a_compiled_module_in_a_reference_cycle_is_collected_cleanly() -> None:
    """A compiled module closed its engine in `__del__`; in a cycle, the
    collector could dispose its LLVM context first, and the engine's module
    with it, and the process crashed when the engine was closed after."""
    import gc
    import weakref

    from rlx_mlir import jit

    gc.collect()
    gc.disable()  # keep the cycles for one collection of them all
    cycled = []
    try:
        for n in range(1301, 1321):
            compiled = rlx.compile(graph_of_width(n))._compiled
            compiled.cycle = compiled
            cycled.append(weakref.ref(compiled))
        del compiled
        jit._recent.clear()
    finally:
        gc.enable()
    gc.collect()
    assert all(ref() is None for ref in cycled)  # collected, engines and contexts disposed
