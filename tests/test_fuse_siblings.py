"""fuse-siblings (passes/fuse_siblings.py): merged siblings compute exactly what
the separate kernels computed, bit for bit, and the merge does happen.

Each graph is compiled twice in one process: with the default tensor pipeline
(which runs fuse-siblings) and with the same pipeline minus that pass.
"""

from __future__ import annotations

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir.passes.default_pipeline import TENSOR_PASSES, spec
from rlx_mlir.passes.fuse_siblings import MAX_RESULTS, WINDOW, FuseSiblingsPass

WITHOUT_SIBLINGS = spec(tuple(p for p in TENSOR_PASSES if not isinstance(p, FuseSiblingsPass)))

GRAPHS = {
    # x + b and x < c over one x: the issue's example.
    "add_and_compare": (
        """
func.func @f(%x: tensor<8x33xf32>, %b: tensor<33xf32>, %c: tensor<8x33xf32>) -> (tensor<8x33xf32>, tensor<8x33xi1>) {
  %s = rlx.add %x, %b : (tensor<8x33xf32>, tensor<33xf32>) -> tensor<8x33xf32>
  %l = rlx.lt %x, %c : (tensor<8x33xf32>, tensor<8x33xf32>) -> tensor<8x33xi1>
  func.return %s, %l : tensor<8x33xf32>, tensor<8x33xi1>
}""",
        1,
    ),
    # A fused chain (a region) and two lone ops, mixed result types.
    "chain_and_two_ops": (
        """
func.func @f(%x: tensor<1000xf32>, %y: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xi32>, tensor<1000xf32>) {
  %a = rlx.mul %x, %y : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %t = rlx.tanh %a : (tensor<1000xf32>) -> tensor<1000xf32>
  %i = rlx.cast %x : (tensor<1000xf32>) -> tensor<1000xi32>
  %e = rlx.exp %x : (tensor<1000xf32>) -> tensor<1000xf32>
  func.return %t, %i, %e : tensor<1000xf32>, tensor<1000xi32>, tensor<1000xf32>
}""",
        1,
    ),
    # A user of the first sibling sits between the two (it moves below the merge).
    "user_between": (
        """
func.func @f(%x: tensor<16x8xf64>, %b: tensor<16x8xf64>) -> (tensor<8x16xf64>, tensor<16x8xf64>) {
  %s = rlx.sub %x, %b : (tensor<16x8xf64>, tensor<16x8xf64>) -> tensor<16x8xf64>
  %r = rlx.transpose %s {perm = array<i64: 1, 0>} : (tensor<16x8xf64>) -> tensor<8x16xf64>
  %q = rlx.sigmoid %x : (tensor<16x8xf64>) -> tensor<16x8xf64>
  func.return %r, %q : tensor<8x16xf64>, tensor<16x8xf64>
}""",
        1,
    ),
    # Dependent through a reduction: not merged, and still correct.
    "dependent": (
        """
func.func @f(%x: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %x, %b : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.reduce_sum %s {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
  %e = rlx.expand %r : (tensor<3xf32>) -> tensor<4x3xf32>
  %m = rlx.mul %x, %e : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %m : tensor<4x3xf32>
}""",
        0,
    ),
    # Integer and half-precision siblings.
    "int_and_half": (
        """
func.func @f(%k: tensor<300xi32>, %m: tensor<300xi32>, %h: tensor<300xf16>)
    -> (tensor<300xi32>, tensor<300xi32>, tensor<300xf16>, tensor<300xf16>) {
  %a = rlx.bit_xor %k, %m : (tensor<300xi32>, tensor<300xi32>) -> tensor<300xi32>
  %b = rlx.max %k, %m : (tensor<300xi32>, tensor<300xi32>) -> tensor<300xi32>
  %c = rlx.gelu %h : (tensor<300xf16>) -> tensor<300xf16>
  %d = rlx.neg %h : (tensor<300xf16>) -> tensor<300xf16>
  func.return %a, %b, %c, %d : tensor<300xi32>, tensor<300xi32>, tensor<300xf16>, tensor<300xf16>
}""",
        2,
    ),
}


def _inputs(exe: rlx.runtime.Executable) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    arrays = []
    for spec_ in exe.inputs:
        values = rng.standard_normal(spec_.shape) * 10
        arrays.append(values.astype(spec_.dtype.numpy))
    return arrays


def _multi_result_regions(ir: str) -> int:
    """How many `rlx.elementwise_region`s in `ir` have more than one result."""
    return sum(1 for line in ir.splitlines() if "= rlx.elementwise_region" in line and "," in line.split("=")[0])


@pytest.mark.parametrize("name", GRAPHS)
def test_merged_siblings_match_separate_kernels_bit_for_bit(name: str) -> None:
    text, merged = GRAPHS[name]
    fused = rlx.compile(text)
    separate = rlx.compile(text, pipeline=WITHOUT_SIBLINGS)
    assert _multi_result_regions(fused.planned_ir) == merged, fused.planned_ir
    assert _multi_result_regions(separate.planned_ir) == 0, separate.planned_ir
    inputs = _inputs(fused)
    for got, want in zip(fused(*inputs), separate(*inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def _siblings_apart(between: int) -> str:
    """neg(x) and exp(x) with `between` ops on another value between them."""
    t = "tensor<16xf32>"
    lines = [
        f"func.func @f(%x: {t}, %y: {t}) -> ({t}, {t}, {t}) {{",
        f"  %n = rlx.neg %x : ({t}) -> {t}",
        f"  %y0 = rlx.abs %y : ({t}) -> {t}",
    ]
    lines += [f"  %y{k} = rlx.abs %y{k - 1} : ({t}) -> {t}" for k in range(1, between)]
    lines += [f"  %e = rlx.exp %x : ({t}) -> {t}", f"  func.return %n, %e, %y{between - 1} : {t}, {t}, {t}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("between, merged", [(10, 1), (WINDOW + 1, 0)])
def test_siblings_merge_within_the_window(between: int, merged: int) -> None:
    """The search for a sibling stops WINDOW ops on (the pass stays linear in block size)."""
    exe = rlx.compile(_siblings_apart(between), pipeline="fuse-siblings")
    assert _multi_result_regions(exe.planned_ir) == merged
    x, y = np.linspace(-2, 2, 16, dtype=np.float32), np.ones(16, np.float32)
    n, _e, _ = exe(x, y)
    np.testing.assert_array_equal(n, -x)


def test_a_merged_region_has_at_most_max_results() -> None:
    """Twenty siblings of one x: one region of MAX_RESULTS results and one of the rest."""
    t, count = "tensor<8xf32>", MAX_RESULTS + 4
    ops = ["neg", "abs", "exp", "tanh", "sin", "cos", "sigmoid", "relu"]
    lines = [f"func.func @f(%x: {t}) -> ({', '.join([t] * count)}) {{"]
    lines += [f"  %r{k} = rlx.{ops[k % len(ops)]} %x : ({t}) -> {t}" for k in range(count)]
    lines += [f"  func.return {', '.join(f'%r{k}' for k in range(count))} : {', '.join([t] * count)}", "}"]
    text = "\n".join(lines)
    exe = rlx.compile(text, pipeline="fuse-siblings")
    heads = [line.split("=")[0] for line in exe.planned_ir.splitlines() if "= rlx.elementwise_region" in line]
    assert sorted(head.count("%") for head in heads) == [count - MAX_RESULTS, MAX_RESULTS]
    x = np.linspace(-3, 3, 8, dtype=np.float32)
    for got, want in zip(exe(x), rlx.compile(text, pipeline="")(x), strict=True):
        np.testing.assert_array_equal(got, want)
