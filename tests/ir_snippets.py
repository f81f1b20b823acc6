"""Small IR texts shared by the error, limit and regression suites.

test_api_errors.py, test_cli_errors.py, test_limits.py and test_regressions.py
all start from the same valid function (`GRAPH`, tanh(a + b) with a broadcast)
and build one-op functions from an op's syntax, so a broken case reads as one
line of its table.
"""

from __future__ import annotations

import numpy as np

import rlx_mlir as rlx

I64_MAX, I64_MIN = 2**63 - 1, -(2**63)
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)

GRAPH = """func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
"""

# GRAPH's arguments, and what it computes from them (float64).
A = np.ones((4, 3), np.float32)
B = np.ones(3, np.float32)


def graph_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """tanh(a + b) in float64: what GRAPH computes."""
    return np.tanh(np.asarray(a, np.float64) + np.asarray(b, np.float64))


def one_op(
    op: str, attrs: str, result: str, arg: str = "tensor<3x4xf32>", operands: str = "%x", types: str | None = None
) -> str:
    """A function applying one op to its argument(s) and returning the result."""
    types = types or f"({arg})"
    return (
        f"func.func @f(%x: {arg}) -> {result} {{\n"
        f"  %r = {op} {operands} {attrs} : {types} -> {result}\n"
        f"  func.return %r : {result}\n}}\n"
    )


def binary_op(op: str, attrs: str, data: str, indices: str, result: str, updates: str | None = None) -> str:
    """A function applying a data/indices[/updates] op (gathers, scatters) to its arguments."""
    args = f"%d: {data}, %i: {indices}" + (f", %u: {updates}" if updates else "")
    operands = "%d, %i" + (", %u" if updates else "")
    types = f"({data}, {indices}" + (f", {updates})" if updates else ")")
    return (
        f"func.func @f({args}) -> {result} {{\n"
        f"  %r = {op} {operands} {attrs} : {types} -> {result}\n"
        f"  func.return %r : {result}\n}}\n"
    )


def neg_reverse(symbol: str, n: int) -> str:
    """@symbol(a) = reverse(-a) over n f32s: two kernels, threaded when n is large."""
    return (
        f"func.func @{symbol}(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n"
        f"  %n = rlx.neg %a : (tensor<{n}xf32>) -> tensor<{n}xf32>\n"
        f"  %m = rlx.reverse %n {{axes = array<i64: 0>}} : (tensor<{n}xf32>) -> tensor<{n}xf32>\n"
        f"  func.return %m : tensor<{n}xf32>\n}}"
    )


def run_with_ones(text: str, pipeline: str | None = None) -> tuple[np.ndarray, ...]:
    """Compile `text` and call it with all-ones arguments of its input types."""
    exe = rlx.compile(text, pipeline=pipeline)
    return exe(*[np.ones(s.shape, s.dtype.numpy) for s in exe.inputs])
