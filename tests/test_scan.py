"""`rlx.scan` forward: every result mode against a Python loop over the body
(in float64), with broadcast inputs, several xs, bodies that need their own
nested plan, constants and copies, and the nested plan in the printed plan."""

from __future__ import annotations

import re

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir.dialects.scan import checkpoint_steps

RNG = np.random.default_rng(7)


def elman(dtype: str):
    """tanh(h @ w + x @ u) * y + h * 0.5: two matmuls, a broadcast pair, two xs and a constant."""

    def body(b: rlx.Builder, h, w, u, x, y):
        mixed = b.add(b.matmul(h, w), b.matmul(x, u))
        return b.add(b.mul(b.tanh(mixed), y), b.mul(h, b.constant(0.5, dtype)))

    return body


def elman_reference(h0, w, u, xs, ys) -> list[np.ndarray]:
    h, carries = h0.astype(np.float64), []
    for x, y in zip(xs, ys):
        h = np.tanh(h @ w + x @ u) * y + h * 0.5
        carries.append(h)
    return carries


def compile_elman(length: int, dtype: str, trajectory: bool, checkpoints: int, threads: int = 1):
    b = rlx.Builder("elman")
    h0, w, u = b.input((3, 8), dtype), b.input((8, 8), dtype), b.input((5, 8), dtype)
    xs, ys = b.input((length, 3, 5), dtype), b.input((length, 3, 8), dtype)
    b.output(b.scan(h0, elman(dtype), [xs, ys], [w, u], trajectory, checkpoints))
    return rlx.compile(b.module(), threads=threads)


def elman_inputs(length: int, numpy_type: type) -> list[np.ndarray]:
    shapes = [(3, 8), (8, 8), (5, 8), (length, 3, 5), (length, 3, 8)]
    return [(RNG.standard_normal(s) * 0.5).astype(numpy_type) for s in shapes]


@pytest.mark.parametrize("length", [1, 2, 7])
@pytest.mark.parametrize("mode", ["final", "trajectory", "checkpoints"])
@pytest.mark.parametrize("dtype, numpy_type, tolerance", [("f32", np.float32, 1e-5), ("f64", np.float64, 1e-12)])
def test_every_mode_matches_a_python_loop(
    length: int, mode: str, dtype: str, numpy_type: type, tolerance: float
) -> None:
    checkpoints = {"final": 0, "trajectory": 0, "checkpoints": max(1, length // 2)}[mode]
    exe = compile_elman(length, dtype, mode != "final", checkpoints)
    h0, w, u, xs, ys = elman_inputs(length, numpy_type)
    (got,) = exe(h0, w, u, xs, ys)
    carries = elman_reference(h0, w, u, xs, ys)
    if mode == "final":
        want = carries[-1]
    elif mode == "trajectory":
        want = np.stack(carries)
    else:
        want = np.stack([carries[s] for s in checkpoint_steps(length, checkpoints)])
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_checkpoint_rows_are_the_carries_after_the_seed_steps() -> None:
    assert checkpoint_steps(10, 3) == [3, 6, 9]  # ceil((k+1)·10/3) - 1
    assert checkpoint_steps(7, 7) == list(range(7))
    assert checkpoint_steps(5, 1) == [4]


def test_results_do_not_depend_on_threads() -> None:
    one, two = compile_elman(6, "f32", True, 0, 1), compile_elman(6, "f32", True, 0, 2)
    inputs = elman_inputs(6, np.float32)
    np.testing.assert_array_equal(one(*inputs)[0], two(*inputs)[0])


def test_body_yielding_its_argument_copies_the_carry() -> None:
    """A body that yields a broadcast input unchanged: the carry is copied, not bound."""
    b = rlx.Builder("f")
    h0, w, xs = b.input((4,)), b.input((4,)), b.input((3, 4))
    b.output(b.scan(h0, lambda b, h, w, x: w, [xs], [w], save_trajectory=True))
    exe = rlx.compile(b.module())
    h, wv, xv = (np.arange(4, dtype=np.float32) + k for k in range(3))
    (got,) = exe(h, wv, np.stack([xv] * 3))
    np.testing.assert_array_equal(got, np.stack([wv] * 3))


def test_body_values_live_in_the_nested_plan() -> None:
    exe = compile_elman(4, "f32", False, 0)
    plan = str(exe.memory_plan)
    assert re.search(r"rlx.scan#\d+.scratch1", plan)  # the body's own plan, placed for the scan's lifetime
    assert "rlx.body_arena_sizes" in exe.planned_ir
    body_offsets = [line for line in exe.planned_ir.splitlines() if "rlx.offsets" in line and "rlx.scan" not in line]
    assert body_offsets, exe.planned_ir


def test_scan_in_a_scan() -> None:
    """An inner scan accumulates a row sum; the outer scan carries it on."""
    b = rlx.Builder("f")
    c0, xs = b.input((2,)), b.input((3, 4, 2))

    def outer(b: rlx.Builder, c, rows):
        return b.scan(c, lambda b, acc, r: b.add(acc, r), [rows])

    b.output(b.scan(c0, outer, [xs], save_trajectory=True))
    exe = rlx.compile(b.module())
    c, x = np.array([1.0, -1.0], np.float32), RNG.standard_normal((3, 4, 2)).astype(np.float32)
    (got,) = exe(c, x)
    want = c + np.cumsum(x.astype(np.float64).sum(axis=1), axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("transpose", [False, True], ids=["plain", "transposed"])
@pytest.mark.parametrize("dtype, numpy_type, tolerance", [("f32", np.float32, 1e-5), ("f64", np.float64, 1e-12)])
def test_packed_weights_match_a_python_loop(transpose: bool, dtype: str, numpy_type: type, tolerance: float) -> None:
    """Body GEMMs whose rhs is a broadcast weight read its panels, packed once
    before the loop: 11 carry rows (an 8-row tile and a 3-row tail) by 40
    columns (full panels and a narrower one, in f32 and f64), the weight read
    both ways (two packings), one GEMM with its bias + tanh epilogue fused in."""
    rows, width, length = 11, 40, 5

    def body(b: rlx.Builder, h, w, bias, x):
        first = b.tanh(b.add(b.matmul(h, w, transpose_rhs=transpose), bias))
        return b.add(b.mul(b.matmul(first, w, transpose_rhs=not transpose), b.constant(0.25, dtype)), x)

    b = rlx.Builder("packed")
    h0, w, bias = b.input((rows, width), dtype), b.input((width, width), dtype), b.input((width,), dtype)
    xs = b.input((length, rows, width), dtype)
    b.output(b.scan(h0, body, [xs], [w, bias], save_trajectory=True))
    exe = rlx.compile(b.module(), threads=2)
    assert "rlx.contraction_region" in exe.planned_ir and "_pack" in exe.llvm_ir
    assert "gemm" not in exe.llvm_ir  # no BLAS call: the tiles read the panels
    shapes = [(rows, width), (width, width), (width,), (length, rows, width)]
    h, wv, bv, xv = ((RNG.standard_normal(s) * 0.3).astype(numpy_type) for s in shapes)
    w64 = wv.astype(np.float64)
    first_w, second_w = (w64.T, w64) if transpose else (w64, w64.T)
    carry, want = h.astype(np.float64), []
    for x in xv:
        carry = np.tanh(carry @ first_w + bv) @ second_w * 0.25 + x
        want.append(carry)
    (got,) = exe(h, wv, bv, xv)
    np.testing.assert_allclose(got, np.stack(want), rtol=tolerance, atol=tolerance)


def test_a_large_body_gemm_uses_both_threads() -> None:
    """An 8-row carry against a 512 x 512 weight is one row tile but sixteen
    column panels: the body's GEMM is split across the threads by panel, and
    every thread computes whole dot products, so 1 and 2 threads agree exactly."""
    rows, width, length = 8, 512, 3
    b = rlx.Builder("wide")
    h0, w, xs = b.input((rows, width)), b.input((width, width)), b.input((length, rows, width))
    b.output(b.scan(h0, lambda b, h, w, x: b.tanh(b.add(b.matmul(h, w, transpose_rhs=True), x)), [xs], [w]))
    module = b.module()
    one, two = rlx.compile(module, threads=1), rlx.compile(module, threads=2)
    assert "_parallel" in two.llvm_ir and "_parallel" not in one.llvm_ir
    h, wv, xv = (
        (RNG.standard_normal(s) * 0.05).astype(np.float32)
        for s in ((rows, width), (width, width), (length, rows, width))
    )
    np.testing.assert_array_equal(one(h, wv, xv)[0], two(h, wv, xv)[0])
    carry = h.astype(np.float64)
    for x in xv:
        carry = np.tanh(carry @ wv.T.astype(np.float64) + x)
    np.testing.assert_allclose(two(h, wv, xv)[0], carry, rtol=1e-5, atol=1e-5)
