"""Robustness: bad input never produces a Python traceback.

The promise (DESIGN.md "Errors", README): parse errors carry line:column,
verifier errors name the op and the rule, the Python API raises only the
documented exceptions (ParseError, VerificationError, CompileError,
ArgumentError, and IndexError for bad gather/scatter indices at run time),
and the CLIs print ONE line `rlx-opt: error: ...` / `rlx-run: error: ...` and
exit 1.

The tests pin that behaviour, including regression tests for each violation
this suite once found (tracebacks from xDSL/llvmlite internals, a 32-bit GEP
offset, missing dominance and region-isolation checks, misleading messages).
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlx_mlir as rlx
from rlx_mlir.cli import opt as opt_cli
from rlx_mlir.cli import run as run_cli

DOCUMENTED = (rlx.ParseError, rlx.VerificationError, rlx.CompileError, rlx.ArgumentError, rlx.AllocationError, IndexError)
LINE_COL = re.compile(r"<input>:\d+:\d+")

GRAPH = """func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
"""


def one_op(op: str, attrs: str, result: str, arg: str = "tensor<3x4xf32>", operands: str = "%x", types: str | None = None) -> str:
    """A function applying one op to its argument(s) and returning the result."""
    types = types or f"({arg})"
    return (
        f"func.func @f(%x: {arg}) -> {result} {{\n"
        f"  %r = {op} {operands} {attrs} : {types} -> {result}\n"
        f"  func.return %r : {result}\n}}\n"
    )


def binary_op(op: str, attrs: str, data: str, indices: str, result: str, updates: str | None = None) -> str:
    args = f"%d: {data}, %i: {indices}" + (f", %u: {updates}" if updates else "")
    operands = "%d, %i" + (", %u" if updates else "")
    types = f"({data}, {indices}" + (f", {updates})" if updates else ")")
    return (
        f"func.func @f({args}) -> {result} {{\n"
        f"  %r = {op} {operands} {attrs} : {types} -> {result}\n"
        f"  func.return %r : {result}\n}}\n"
    )


def run_with_ones(text: str, pipeline: str | None = None) -> tuple[np.ndarray, ...]:
    exe = rlx.compile(text, pipeline=pipeline)
    return exe(*[np.ones(s.shape, s.dtype.numpy) for s in exe.inputs])


def assert_documented(fn, *args, **kwargs) -> BaseException | None:
    """fn(...) either works or raises one of the documented exception types."""
    try:
        fn(*args, **kwargs)
    except DOCUMENTED as error:
        return error
    return None


# ---------------------------------------------------------------------------
# parse errors: rlx.ParseError with line:column
# ---------------------------------------------------------------------------

PARSE_ERRORS = {
    "empty file": ("", "Could not parse entire input"),
    "whitespace only": ("  \n\n", "Could not parse entire input"),
    "truncated in signature": (GRAPH[:60], "type expected"),
    "truncated before }": (GRAPH[:-3], ""),
    "unknown rlx op": (GRAPH.replace("rlx.tanh", "rlx.foo"), "rlx.foo is not registered"),
    "unknown dialect": (GRAPH.replace("rlx.tanh", "foo.tanh"), "foo.tanh is not registered"),
    "unknown op generic form": (GRAPH.replace("%t = rlx.tanh %s :", '%t = "rlx.foo"(%s) :'), "rlx.foo is not registered"),
    "two operand types for unary": (
        GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "(tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>"),
        "Expected 1 operand type, but got 2",
    ),
    "non-functional type": (GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "tensor<4x3xf32>"), "Expected '('"),
    "no result type": (GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "(tensor<4x3xf32>) -> ()"), "Expected 1 result type"),
    "negative dim": (GRAPH.replace("4x3", "-4x3"), "shape"),
    "undefined value": (GRAPH.replace("rlx.tanh %s", "rlx.tanh %zz"), "%zz"),
    "redefined value": (GRAPH.replace("%t = rlx.tanh", "%s = rlx.tanh").replace("return %t", "return %s"), "already defined"),
    "non-ascii character": (GRAPH.replace("@f", "@f\u00ff"), ""),
    "type mismatch between uses": (
        "func.func @f() -> tensor<3xf32> {\n  %c = rlx.constant dense<1> : tensor<3xi32>\n  func.return %c : tensor<3xf32>\n}",
        "previously used or defined with type",
    ),
    "constant without dense attr": (
        "func.func @f() -> tensor<2xf32> {\n  %c = rlx.constant dense_resource<blob> : tensor<2xf32>\n  func.return %c : tensor<2xf32>\n}",
        "expects a dense elements attribute",
    ),
    "region without indexing_maps": (
        ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {\n"
        "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"),
        "needs {indexing_maps",
    ),
    "bad affine map syntax": (
        ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0 +)>]} -> tensor<4xf32> {\n"
        "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"),
        "",
    ),
    "affine map with undefined dim": (
        ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d1)>]} -> tensor<4xf32> {\n"
        "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"),
        "",
    ),
}


@pytest.mark.parametrize("name", PARSE_ERRORS)
def test_parse_error_has_line_and_column(name: str) -> None:
    text, message = PARSE_ERRORS[name]
    with pytest.raises(rlx.ParseError) as info:
        rlx.parse(text)
    assert LINE_COL.search(str(info.value)), str(info.value)
    assert message in str(info.value)
    # compile() reports the same error the same way
    with pytest.raises(rlx.ParseError):
        rlx.compile(text)


I64_MAX, I64_MIN = 2**63 - 1, -(2**63)


def region(maps: str, body: str, ins: str = "%a, %b : tensor<4x3xf32>, tensor<3xf32>", result: str = "tensor<4x3xf32>") -> str:
    return (
        f"func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> {result} {{\n"
        f"  %r = rlx.elementwise_region ins({ins}) {{indexing_maps = {maps}}} -> {result} {{\n"
        f"  {body}\n  }}\n  func.return %r : {result}\n}}\n"
    )


MAPS = "[affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>]"
BODY = "^bb0(%x: f32, %y: f32):\n    %s = rlx.add %x, %y : (f32, f32) -> f32\n    rlx.yield %s : f32"

def test_generic_form_wrong_attribute_kind_is_a_verification_error() -> None:
    text = '''func.func @f(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %r = "rlx.transpose"(%x) <{perm = [1, 0]}> : (tensor<3x4xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}'''
    with pytest.raises((rlx.VerificationError, rlx.ParseError)):
        rlx.parse(text)


# ---------------------------------------------------------------------------
# compile errors
# ---------------------------------------------------------------------------


def test_declarations_are_not_candidates_for_compile() -> None:
    """A module with one definition and a declaration compiles the definition."""
    exe = rlx.compile(GRAPH + "func.func private @ext(tensor<3xf32>) -> tensor<3xf32>\n")
    assert exe.name == "f"


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        (GRAPH + GRAPH.replace("@f", "@g"), {}, "expected exactly one function"),
        ("builtin.module {}", {}, "expected exactly one function"),
        (GRAPH, {"entry": "nope"}, "expected exactly one function"),
        (GRAPH, {"pipeline": "no-such-pass"}, "no-such-pass"),
        (GRAPH, {"pipeline": "plan-memory{alignment=-3}"}, "alignment"),
        (GRAPH, {"pipeline": "fuse-elementwise{foo=1}"}, "foo"),
        (GRAPH, {"pipeline": "lower-to-llvm{threads=x}"}, "Incompatible types"),
        (GRAPH, {"pipeline": "canonicalize{max-iterations=-1}"}, "max_iterations"),
    ],
)
def test_compile_error(text: str, kwargs: dict, message: str) -> None:
    with pytest.raises(rlx.CompileError) as info:
        rlx.compile(text, **kwargs)
    assert message in str(info.value)


# ---------------------------------------------------------------------------
# edge cases that must simply work
# ---------------------------------------------------------------------------

EDGE_OK = {
    "zero-size dim": (GRAPH.replace("4x3", "0x3"), [(0, 3)]),
    "rank 0": ("func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  %t = rlx.tanh %a : (tensor<f32>) -> tensor<f32>\n  func.return %t : tensor<f32>\n}", [()]),
    "scalar function": ("func.func @f(%a: f32) -> f32 {\n  %s = rlx.add %a, %a : (f32, f32) -> f32\n  func.return %s : f32\n}", [()]),
    "identity": ("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  func.return %a : tensor<3xf32>\n}", [(3,)]),
    "argument returned twice": (
        "func.func @f(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {\n  func.return %a, %a : tensor<3xf32>, tensor<3xf32>\n}",
        [(3,), (3,)],
    ),
    "nothing in, nothing out": ("func.func @f() {\n  func.return\n}", []),
    "constant returned twice": (
        ("func.func @f() -> (tensor<3xf32>, tensor<3xf32>) {\n  %c = rlx.constant dense<1.0> : tensor<3xf32>\n"
        "  func.return %c, %c : tensor<3xf32>, tensor<3xf32>\n}"),
        [(3,), (3,)],
    ),
    "empty constant": ("func.func @f() -> tensor<0xf32> {\n  %c = rlx.constant dense<> : tensor<0xf32>\n  func.return %c : tensor<0xf32>\n}", [(0,)]),
    "narrow to length 0": (one_op("rlx.narrow", "{axis = 0 : i64, start = 3 : i64, length = 0 : i64}", "tensor<0x4xf32>"), [(0, 4)]),
    "slice of length 0 with wild start": (one_op("rlx.slice", "{starts = array<i64: 5, 0>, steps = array<i64: 1, 1>}", "tensor<0x4xf32>"), [(0, 4)]),
    "transpose rank 0": (one_op("rlx.transpose", "{perm = array<i64>}", "tensor<f32>", "tensor<f32>"), [()]),
    "pad rank 0": (one_op("rlx.pad", "{before = array<i64>, after = array<i64>}", "tensor<f32>", "tensor<f32>"), [()]),
    "pad reflect wider than input": (one_op("rlx.pad", '{before = array<i64: 10>, after = array<i64: 7>, mode = "reflect"}', "tensor<19xf32>", "tensor<2xf32>"), [(19,)]),
    "pad inf into i64 saturates": (
        one_op("rlx.pad", "{before = array<i64: 1>, after = array<i64: 0>, value = 0x7FF0000000000000 : f64}", "tensor<4xi64>", "tensor<3xi64>"),
        [(4,)],
    ),
    "concat of rank-0 inputs": (one_op("rlx.concat", "{axis = 0 : i64}", "tensor<2xf32>", "tensor<f32>", "%x, %x", "(tensor<f32>, tensor<f32>)"), [(2,)]),
    "gather with empty indices": (binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<0x3xf32>", "tensor<0xi64>", "tensor<0x3xf32>"), [(0, 3)]),
}


@pytest.mark.parametrize("name", EDGE_OK)
def test_edge_case_compiles_and_runs(name: str) -> None:
    text, shapes = EDGE_OK[name]
    exe = rlx.compile(text)
    inputs = [np.zeros(s.shape, s.dtype.numpy) for s in exe.inputs]
    results = exe(*inputs)
    assert [r.shape for r in results] == shapes


def test_thousand_op_chain_compiles_in_reasonable_time() -> None:
    lines = ["func.func @f(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {", "  %v0 = rlx.neg %a : (tensor<8x16xf32>) -> tensor<8x16xf32>"]
    lines += [f"  %v{i} = rlx.neg %v{i - 1} : (tensor<8x16xf32>) -> tensor<8x16xf32>" for i in range(1, 1000)]
    lines += ["  func.return %v999 : tensor<8x16xf32>", "}"]
    start = time.perf_counter()
    exe = rlx.compile("\n".join(lines))
    assert time.perf_counter() - start < 30
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    np.testing.assert_array_equal(exe(x)[0], x)  # an even number of negations


def test_zero_size_gather_axis_raises_index_error() -> None:
    exe = rlx.compile(binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<0x3xf32>", "tensor<2xi64>", "tensor<2x3xf32>"))
    with pytest.raises(IndexError, match=r"rlx.gather: index 0 is out of range for axis 0 with size 0"):
        exe(np.zeros((0, 3), np.float32), np.zeros(2, np.int64))


# ---------------------------------------------------------------------------
# runtime: out-of-range gather/scatter indices raise IndexError, in both
# directions, with i32 and i64, up to INT_MIN/INT_MAX
# ---------------------------------------------------------------------------

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def _indexed_cases(it: str):
    dt = np.int32 if it == "i32" else np.int64
    f32 = np.float32
    return {
        "gather": (
            binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<4x3xf32>", f"tensor<2x{it}>", "tensor<2x3xf32>"),
            lambda k: (np.ones((4, 3), f32), np.array([0, k], dt)),
        ),
        "gather_last_axis": (
            binary_op("rlx.gather", "{axis = -1 : i64}", "tensor<3x4xf32>", f"tensor<2x{it}>", "tensor<3x2xf32>"),
            lambda k: (np.ones((3, 4), f32), np.array([0, k], dt)),
        ),
        "gather_elements": (
            binary_op("rlx.gather_elements", "{axis = 0 : i64}", "tensor<4x3xf32>", f"tensor<1x3x{it}>", "tensor<1x3xf32>"),
            lambda k: (np.ones((4, 3), f32), np.array([[0, k, 1]], dt)),
        ),
        "gather_nd": (
            binary_op("rlx.gather_nd", "{}", "tensor<4x4xf32>", f"tensor<2x2x{it}>", "tensor<2xf32>"),
            lambda k: (np.ones((4, 4), f32), np.array([[0, 0], [1, k]], dt)),
        ),
        "gather_backward": (
            binary_op("rlx.gather_backward", "{axis = 0 : i64}", "tensor<2x3xf32>", f"tensor<2x{it}>", "tensor<4x3xf32>"),
            lambda k: (np.ones((2, 3), f32), np.array([0, k], dt)),
        ),
        "scatter_add": (
            binary_op("rlx.scatter_add", "", "tensor<2x3xf32>", f"tensor<2x{it}>", "tensor<4x3xf32>"),
            lambda k: (np.ones((2, 3), f32), np.array([0, k], dt)),
        ),
        "scatter_nd": (
            binary_op("rlx.scatter_nd", '{reduction = "add"}', "tensor<4x3xf32>", f"tensor<2x1x{it}>", "tensor<4x3xf32>", "tensor<2x3xf32>"),
            lambda k: (np.ones((4, 3), f32), np.array([[0], [k]], dt), np.ones((2, 3), f32)),
        ),
        "scatter_elements": (
            binary_op("rlx.scatter_elements", "{axis = 0 : i64}", "tensor<4x3xf32>", f"tensor<1x3x{it}>", "tensor<4x3xf32>", "tensor<1x3xf32>"),
            lambda k: (np.ones((4, 3), f32), np.array([[0, k, 0]], dt), np.ones((1, 3), f32)),
        ),
    }


BAD_INDICES = {
    "i32": [4, -5, I32_MIN, I32_MAX],
    "i64": [4, -5, I64_MIN, I64_MAX, 2**31, -(2**31) - 1, 2**32, -(2**32)],
}


@pytest.mark.parametrize("it", ["i32", "i64"])
@pytest.mark.parametrize("op", list(_indexed_cases("i32")))
def test_out_of_range_index_raises_index_error(op: str, it: str) -> None:
    text, make = _indexed_cases(it)[op]
    exe = rlx.compile(text)
    for bad in BAD_INDICES[it]:
        with pytest.raises(IndexError) as info:
            exe(*make(bad))
        message = str(info.value)
        assert message.startswith(f"rlx.{op.removesuffix('_last_axis')}: index {bad} is out of range"), message
    # the executable is still usable, and [-n, -1] counts from the end
    exe(*make(-4))
    exe(*make(3))


def test_threaded_gather_reports_out_of_range_index() -> None:
    text = binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<1000x64xf32>", "tensor<4096xi64>", "tensor<4096x64xf32>")
    exe = rlx.compile(text)
    idx = np.zeros(4096, np.int64)
    idx[-1] = 1000
    with pytest.raises(IndexError, match="index 1000 is out of range for axis 0 with size 1000"):
        exe(np.ones((1000, 64), np.float32), idx)
    idx[:] = 5
    assert exe(np.ones((1000, 64), np.float32), idx)[0].sum() == 4096 * 64


# ---------------------------------------------------------------------------
# API misuse: calling an executable with the wrong arrays -> ArgumentError
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exe():
    return rlx.compile(GRAPH)


A = np.ones((4, 3), np.float32)
B = np.ones(3, np.float32)


def _readonly(shape):
    array = np.empty(shape, np.float32)
    array.setflags(write=False)
    return array


def _readonly_copy(array):
    copy = array.copy()
    copy.setflags(write=False)
    return copy


BAD_CALLS = {
    "lists": (lambda e: e(A.tolist(), B.tolist()), "must be a NumPy array float32[4, 3], got list"),
    "python scalars": (lambda e: e(1.0, 2.0), "got float"),
    "numpy scalar": (lambda e: e(np.float32(1), B), "got float32"),
    "0-d array": (lambda e: e(np.array(1, np.float32), B), "must have shape [4, 3], got []"),
    "wrong dtype": (lambda e: e(A.astype(np.float64), B), "must have dtype float32, got float64"),
    "object dtype": (lambda e: e(A.astype(object), B), "got object"),
    "structured dtype": (lambda e: e(np.zeros((4, 3), [("x", "<f4")]), B), "must have dtype float32"),
    "wrong shape": (lambda e: e(A.T.copy(), B), "must have shape [4, 3], got [3, 4]"),
    "too few arrays": (lambda e: e(A), "takes 2 arrays, got 1"),
    "too many arrays": (lambda e: e(A, B, B), "takes 2 arrays, got 3"),
    "memoryview": (lambda e: e(memoryview(A), B), "got memoryview"),
    "non-contiguous out": (lambda e: e(A, B, out=(np.ones((4, 6), np.float32)[:, ::2],)), "writeable C-contiguous"),
    "Fortran-order out": (lambda e: e(A, B, out=(np.empty((4, 3), np.float32, order="F"),)), "writeable C-contiguous"),
    "read-only out": (lambda e: e(A, B, out=(_readonly((4, 3)),)), "writeable C-contiguous"),
    "broadcast view out": (lambda e: e(A, B, out=(np.broadcast_to(np.empty(3, np.float32), (4, 3)),)), "writeable C-contiguous"),
    "out aliases an input": (lambda e: e(a := A.copy(), B, out=(a,)), "overlaps another argument"),
    "two out arrays": (lambda e: e(A, B, out=(np.empty((4, 3), np.float32),) * 2), "has 1 results, got 2 out= arrays"),
    "zero out arrays": (lambda e: e(A, B, out=()), "has 1 results, got 0 out= arrays"),
    "out is None inside": (lambda e: e(A, B, out=(None,)), "out[0] must be a NumPy array"),
    "out wrong dtype": (lambda e: e(A, B, out=(np.empty((4, 3), np.float64),)), "out[0] must have dtype float32"),
    "out wrong shape": (lambda e: e(A, B, out=(np.empty((3, 4), np.float32),)), "out[0] must have shape [4, 3]"),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_call_raises_argument_error(exe, name: str) -> None:
    call, message = BAD_CALLS[name]
    with pytest.raises(rlx.ArgumentError) as info:
        call(exe)
    assert isinstance(info.value, ValueError)
    assert message in str(info.value), str(info.value)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: (np.ones((4, 6), np.float32)[:, ::2], B), id="strided input"),
        pytest.param(lambda: (np.broadcast_to(B, (4, 3)), B), id="broadcast input"),
        pytest.param(lambda: (_readonly_copy(A), B), id="read-only input"),
        pytest.param(lambda: (np.matrix(A), B), id="np.matrix"),
        pytest.param(lambda: (np.ma.masked_array(A), B), id="masked array"),
        pytest.param(lambda: (A, A[0]), id="same buffer twice"),
    ],
)
def test_unusual_but_valid_inputs_work(exe, make) -> None:
    a, b = make()
    (y,) = exe(a, b)
    np.testing.assert_allclose(y, np.tanh(np.asarray(a, np.float64) + np.asarray(b)), rtol=1e-6)


# ---------------------------------------------------------------------------
# fuzzing: mutated valid IR either works or raises a documented exception
# ---------------------------------------------------------------------------

FUZZ_SEEDS = [
    GRAPH,
    """func.func @f(%x: tensor<3x4xf32>, %i: tensor<2xi64>) -> tensor<4x2xf32> {
  %t = rlx.transpose %x {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %g = rlx.gather %t, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  func.return %g : tensor<4x2xf32>
}""",
    """func.func @f(%x: tensor<3x4xf32>) -> tensor<5x6xf32> {
  %p = rlx.pad %x {before = array<i64: 1, 0>, after = array<i64: 1, 2>, mode = "reflect", value = 0.0 : f64} : (tensor<3x4xf32>) -> tensor<5x6xf32>
  %n = rlx.neg %p : (tensor<5x6xf32>) -> tensor<5x6xf32>
  func.return %n : tensor<5x6xf32>
}""",
    """func.func @f(%d: tensor<4x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %c = rlx.constant dense<2.0> : tensor<4x3xf32>
  %m = rlx.mul %d, %c : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = rlx.scatter_nd %m, %i, %u {reduction = "add"} : (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %s = rlx.slice %r {starts = array<i64: 3, 0>, steps = array<i64: -1, 1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %k = rlx.concat %s, %c {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %n = rlx.narrow %k {axis = 0 : i64, start = 2 : i64, length = 4 : i64} : (tensor<8x3xf32>) -> tensor<4x3xf32>
  func.return %n : tensor<4x3xf32>
}""",
    """func.func @f(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> tensor<2x3xf64> {
  %w = rlx.lt %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi1>
  %s = rlx.where %w, %a, %b : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %e = rlx.expand %b : (tensor<3xi32>) -> tensor<2x3xi32>
  %q = rlx.shl %s, %e : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %c = rlx.cast %q : (tensor<2x3xi32>) -> tensor<2x3xf64>
  %r = rlx.reshape %c : (tensor<2x3xf64>) -> tensor<3x2xf64>
  %z = rlx.reverse %r {axes = array<i64: 0>} : (tensor<3x2xf64>) -> tensor<3x2xf64>
  %y = rlx.reshape %z : (tensor<3x2xf64>) -> tensor<2x3xf64>
  func.return %y : tensor<2x3xf64>
}""",
]
_NUMBER = re.compile(r"(?<![\w.%@])-?\d+(?![\w.])")
_ELEMENT = re.compile(r"x(f32|f64|i32|i64|i1)>")
_STRING = re.compile(r'"(reflect|add)"')


@st.composite
def numeric_mutations(draw) -> str:
    """Valid IR with some shapes, attribute values, element types or mode strings changed."""
    text = draw(st.sampled_from(FUZZ_SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "number", "element", "string"]))
        pattern = {"number": _NUMBER, "element": _ELEMENT, "string": _STRING}[kind]
        matches = list(pattern.finditer(text))
        if not matches:
            continue
        m = draw(st.sampled_from(matches))
        if kind == "number":
            new = str(draw(st.sampled_from([0, 1, 2, 3, 5, -1, -2, 7, 100, 2**31, I64_MAX, I64_MIN])))
        elif kind == "element":
            new = "x" + draw(st.sampled_from(["f32", "f64", "f16", "bf16", "i1", "i8", "i32", "i64", "ui8", "complex<f32>"])) + ">"
        else:
            new = '"' + draw(st.sampled_from(["none", "mul", "max", "circular", "replicate", "bogus", ""])) + '"'
        text = text[: m.start()] + new + text[m.end() :]
    return text


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(numeric_mutations())
def test_fuzz_numeric_mutations_only_raise_documented_errors(text: str) -> None:
    def go():
        exe = rlx.compile(text)
        exe(*[np.zeros(s.shape, s.dtype.numpy) for s in exe.inputs])

    assert_documented(go)


_TOKEN = re.compile(r'%\w+|@\w+|\^\w+|"[^"]*"|-?\d+\.\d+(?:e[+-]?\d+)?|-?\d+|\w+(?:\.\w+)*|->|[^\s\w]')


@st.composite
def token_mutations(draw) -> str:
    """Valid IR with tokens deleted, duplicated, swapped or the text truncated."""
    text = draw(st.sampled_from(FUZZ_SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        if not tokens:
            break
        start, end = draw(st.sampled_from(tokens))
        action = draw(st.sampled_from(["delete", "duplicate", "swap", "truncate", "replace"]))
        if action == "delete":
            text = text[:start] + text[end:]
        elif action == "duplicate":
            text = text[:start] + text[start:end] + " " + text[start:end] + text[end:]
        elif action == "swap":
            s2, e2 = draw(st.sampled_from(tokens))
            if end <= s2:
                text = text[:start] + text[s2:e2] + text[end:s2] + text[start:end] + text[e2:]
        elif action == "truncate":
            text = text[:start]
        else:
            new = draw(st.sampled_from(["0", "-1", "?", "f32", "i64", "tensor<f32>", "(", ")", "{", "}", "<", ">", ",", ":", "->", "%a", "rlx.neg", "func.return"]))
            text = text[:start] + new + text[end:]
    return text


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(token_mutations())
def test_fuzz_token_mutations_parse_only_raises_documented_errors(text: str) -> None:
    assert_documented(rlx.parse, text)


# ---------------------------------------------------------------------------
# CLI: one line `tool: error: ...` on stderr, exit code 1, no traceback.
# Most checks call the tools' main() in-process (what the console scripts run:
# an exception escaping main() is exactly a traceback); two run them for real.
# ---------------------------------------------------------------------------


def cli(tool: str, *args: str) -> tuple[int, str, str]:
    """(exit code, stderr, escaped exception) of `rlx-opt`/`rlx-run` args."""
    main = {"rlx-opt": opt_cli.main, "rlx-run": run_cli.main}[tool]
    out, err = io.StringIO(), io.StringIO()
    code, escaped = 0, ""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException as error:  # noqa: BLE001 - what would be a traceback
            code, escaped = 1, f"{type(error).__name__}: {error}"
    return code, err.getvalue(), escaped


def assert_cli_error(tool: str, *args: str, message: str = "") -> None:
    code, stderr, escaped = cli(tool, *args)
    assert not escaped, f"traceback: {escaped}"
    assert code == 1, (code, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{tool}: error: "), lines[0]
    assert message in lines[0], lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    (d / "g.mlir").write_text(GRAPH)
    np.save(d / "a.npy", np.ones((4, 3), np.float32))
    np.save(d / "b.npy", np.ones(3, np.float32))
    np.save(d / "a64.npy", np.ones((4, 3), np.float64))
    np.save(d / "b4.npy", np.ones(4, np.float32))
    np.save(d / "big_endian.npy", np.ones((4, 3), ">f4"))
    np.savez(d / "a.npz", a=np.ones((4, 3), np.float32))
    (d / "truncated.npy").write_bytes((d / "a.npy").read_bytes()[:70])
    (d / "garbage.npy").write_bytes(b"hello world")
    np.save(d / "objects.npy", np.array([1, None], dtype=object), allow_pickle=True)
    (d / "bad.mlir").write_text(GRAPH.replace("%a, %b :", "%a %b :"))
    (d / "nonutf8.mlir").write_bytes(b"\xff\xfe\x00garbage")
    (d / "attr_kind.mlir").write_text(one_op("rlx.transpose", "{perm = [1, 0]}", "tensor<4x3xf32>"))
    (d / "declaration.mlir").write_text("func.func private @ext(tensor<3xf32>) -> tensor<3xf32>\n")
    (d / "self_use.mlir").write_text(
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %s = rlx.add %a, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n  func.return %s : tensor<3xf32>\n}\n"
    )
    (d / "gather.mlir").write_text(binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<4xf32>", "tensor<1xi64>", "tensor<1xf32>"))
    np.save(d / "d.npy", np.ones(4, np.float32))
    np.save(d / "i.npy", np.array([9], np.int64))
    return d


OPT_ERRORS = [
    (["{d}"], "Is a directory"),
    (["{d}/missing.mlir"], "No such file"),
    (["{d}/bad.mlir"], "bad.mlir:2:"),
    (["{d}/g.mlir", "-p", "no-such-pass"], "no-such-pass"),
    (["{d}/g.mlir", "-p", "plan-memory{alignment=-3}"], "alignment"),
    (["{d}/g.mlir", "-p", "default", "-t", "llvm", "-o", "{d}/no/such/dir/out.ll"], "No such file"),
    (["{d}/attr_kind.mlir"], "should be of base attribute array"),
    (["{d}/nonutf8.mlir"], "utf-8"),
]


@pytest.mark.parametrize(("args", "message"), OPT_ERRORS, ids=[" ".join(a) for a, _ in OPT_ERRORS])
def test_rlx_opt_error_is_one_line(files: Path, args: list[str], message: str) -> None:
    assert_cli_error("rlx-opt", *[a.replace("{d}", str(files)) for a in args], message=message)


RUN_ERRORS = [
    (["-i", "{d}/a64.npy", "-i", "{d}/b.npy"], "must have dtype float32, got float64"),
    (["-i", "{d}/a.npy", "-i", "{d}/b4.npy"], "must have shape [3], got [4]"),
    (["-i", "{d}/truncated.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/garbage.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/objects.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/a.npz", "-i", "{d}/b.npy"], "argument #0"),
    (["--input", "a=missing.npy", "-i", "{d}/b.npy"], "cannot read input 'missing.npy'"),
    (["-i", "{d}/a.npy"], "takes 2 arrays, got 1"),
    ([], "takes 2 arrays, got 0"),
    (["-i", "{d}/a.npy", "-i", "{d}/b.npy", "-i", "{d}/b.npy"], "takes 2 arrays, got 3"),
    (["-i", "{d}/a.npy", "-i", "{d}/b.npy", "-o", "{d}/no/such/dir/out.npz"], "No such file"),
    (["-p", "no-such-pass", "-i", "{d}/a.npy", "-i", "{d}/b.npy"], "no-such-pass"),
    (["--entry", "nope", "-i", "{d}/a.npy", "-i", "{d}/b.npy"], "expected exactly one function"),
]


@pytest.mark.parametrize(("args", "message"), RUN_ERRORS, ids=[" ".join(a) or "no inputs" for a, _ in RUN_ERRORS])
def test_rlx_run_error_is_one_line(files: Path, args: list[str], message: str) -> None:
    assert_cli_error("rlx-run", str(files / "g.mlir"), *[a.replace("{d}", str(files)) for a in args], message=message)


@pytest.mark.parametrize(
    ("file", "message"),
    [("{d}", "Is a directory"), ("{d}/missing.mlir", "No such file"), ("{d}/bad.mlir", ":2:")],
)
def test_rlx_run_bad_file_is_one_line(files: Path, file: str, message: str) -> None:
    assert_cli_error("rlx-run", file.replace("{d}", str(files)), message=message)


def test_rlx_run_index_error_is_one_line(files: Path) -> None:
    assert_cli_error(
        "rlx-run", str(files / "gather.mlir"), "-i", str(files / "d.npy"), "-i", str(files / "i.npy"),
        message="rlx.gather: index 9 is out of range for axis 0 with size 4",
    )


def test_cli_processes_report_one_line(files: Path) -> None:
    """The real console entry points, end to end (one process per tool)."""
    for tool, args in [
        ("opt", [str(files / "bad.mlir")]),
        ("run", [str(files / "g.mlir"), "-i", str(files / "a64.npy"), "-i", str(files / "b.npy")]),
    ]:
        result = subprocess.run([sys.executable, "-m", f"rlx_mlir.cli.{tool}", *args], capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"rlx-{tool}: error: "), result.stderr


# ===========================================================================
# Regression tests for violations this suite found (each once a minimal
# reproducer of a traceback, a crash or a misleading message; all fixed).
# ===========================================================================

# --- severity 1: crash / memory corruption --------------------------------


def test_arena_offset_beyond_2gib_is_not_truncated_to_i32() -> None:
    # %big takes arena bytes [0, 2.5e9); %s lands at offset 2_500_000_000, which
    # lower-to-llvm emits as `getelementptr inbounds i8, ptr %arena, i32 -1794967296`.
    # Running it (with an rlx.expand making %big) segfaults. Compiling only
    # reserves (never touches) the 2.5 GB arena.
    n = 2_500_000_000
    text = f"""func.func @f(%a: tensor<{n}xi8>, %x: tensor<4xi8>) -> (tensor<{n}xi8>, tensor<4xi8>) {{
  %big = rlx.neg %a : (tensor<{n}xi8>) -> tensor<{n}xi8>
  %s = rlx.neg %x : (tensor<4xi8>) -> tensor<4xi8>
  %s2 = rlx.neg %s : (tensor<4xi8>) -> tensor<4xi8>
  %b2 = rlx.neg %big : (tensor<{n}xi8>) -> tensor<{n}xi8>
  func.return %b2, %s2 : tensor<{n}xi8>, tensor<4xi8>
}}"""
    try:
        exe = rlx.compile(text, pipeline="")
    except rlx.CompileError:
        return  # refusing such an arena is fine too
    assert not re.search(r"getelementptr[^\n]*, i32 -\d+", exe.llvm_ir)


# --- severity 2: tracebacks (undocumented exception types escape) -------------

TRACEBACK_TEXTS = {
    # KeyError in passes/fuse_elementwise.py (the default pipeline); with
    # pipeline="" the forward reference is even compiled and reads garbage.
    "use before definition": (
        ("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %s = rlx.add %a, %t : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
        "  %t = rlx.tanh %s : (tensor<3xf32>) -> tensor<3xf32>\n  func.return %t : tensor<3xf32>\n}"),
        None,
    ),
    "op using its own result": (
        ("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %s = rlx.add %a, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n  func.return %s : tensor<3xf32>\n}"),
        None,
    ),
    # ValueError "'block' property of Region class is only available for single-block regions" (plan_memory.read_plan)
    "function declaration only": ("func.func private @ext(tensor<3xf32>) -> tensor<3xf32>\n", None),
    # same ValueError from plan_memory.collect_buffers
    "multi-block function": (
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  cf.br ^bb1\n^bb1:\n  func.return %a : tensor<3xf32>\n}",
        "",
    ),
    # ValueError "lower-to-llvm cannot lower 'arith.addf' yet": should be CompileError
    "non-rlx op in function (arith)": (GRAPH.replace("%t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>", "%t = arith.addf %s, %s : tensor<4x3xf32>"), None),
    "non-rlx op in function (tensor.empty)": (GRAPH.replace("%t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>", "%t = tensor.empty() : tensor<4x3xf32>"), None),
    # KeyError in fuse_elementwise / lowering: region bodies are not checked to be isolated
    "region body uses an outer scalar": (
        ("func.func @f(%a: tensor<4xf32>, %c: f32) -> tensor<4xf32> {\n"
        "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {\n"
        "  ^bb0(%x: f32):\n    %s = rlx.add %x, %c : (f32, f32) -> f32\n    rlx.yield %s : f32\n  }\n  func.return %r : tensor<4xf32>\n}"),
        None,
    ),
    "region body holds a tensor op on an outer value": (
        ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {\n"
        "  ^bb0(%x: f32):\n    %t = rlx.neg %a : (tensor<4xf32>) -> tensor<4xf32>\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"),
        "",
    ),
    # NotImplementedError from xDSL's affine parser
    "semi-affine indexing map": (region("[affine_map<(d0, d1) -> (d0 * d1, d1)>, affine_map<(d0, d1) -> (d1)>]", BODY), None),
    # raw xdsl VerifyException (out of range for i64) from plan_memory
    "dimension beyond int64": (
        ("func.func @f(%a: tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32> {\n"
        "  %n = rlx.neg %a : (tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32>\n"
        "  %m = rlx.reverse %n {axes = array<i64: 0>} : (tensor<99999999999999999999xf32>) -> tensor<99999999999999999999xf32>\n"
        "  func.return %m : tensor<99999999999999999999xf32>\n}"),
        None,
    ),
    # MemoryError inside xDSL's dense-attribute parser (expands the splat)
    "huge splat constant": (
        ("func.func @f() -> tensor<99999999999999xf32> {\n  %c = rlx.constant dense<1.0> : tensor<99999999999999xf32>\n"
        "  %n = rlx.neg %c : (tensor<99999999999999xf32>) -> tensor<99999999999999xf32>\n  func.return %n : tensor<99999999999999xf32>\n}"),
        None,
    ),
    # numpy MemoryError allocating a 364 TiB arena in Executable.__init__
    "huge intermediate": (
        ("func.func @f(%a: tensor<99999999999999xf32>) -> tensor<99999999999999xf32> {\n"
        "  %n = rlx.neg %a : (tensor<99999999999999xf32>) -> tensor<99999999999999xf32>\n"
        "  %m = rlx.reverse %n {axes = array<i64: 0>} : (tensor<99999999999999xf32>) -> tensor<99999999999999xf32>\n"
        "  func.return %m : tensor<99999999999999xf32>\n}"),
        None,
    ),
}


@pytest.mark.parametrize("name", TRACEBACK_TEXTS)
def test_bad_ir_raises_documented_error(name: str) -> None:
    text, pipeline = TRACEBACK_TEXTS[name]
    with pytest.raises((rlx.ParseError, rlx.VerificationError, rlx.CompileError, rlx.AllocationError)):
        rlx.compile(text, pipeline=pipeline)


WRONG_ATTRIBUTE_KIND = {
    "perm as ArrayAttr": one_op("rlx.transpose", "{perm = [1, 0]}", "tensor<4x3xf32>"),
    "perm as string": one_op("rlx.transpose", '{perm = "x"}', "tensor<4x3xf32>"),
    "axis as string": one_op("rlx.narrow", '{axis = "x", start = 0 : i64, length = 2 : i64}', "tensor<2x4xf32>"),
    "axis as float": one_op("rlx.narrow", "{axis = 0.0 : f64, start = 0 : i64, length = 2 : i64}", "tensor<2x4xf32>"),
    "axis as i32": one_op("rlx.narrow", "{axis = 0 : i32, start = 0 : i64, length = 2 : i64}", "tensor<2x4xf32>"),
    "pad mode as int": one_op("rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, mode = 3}", "tensor<4x4xf32>"),
    "pad value as int": one_op("rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, value = 3 : i64}", "tensor<4x4xf32>"),
    "pad value as f32": one_op("rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, value = 3.0 : f32}", "tensor<4x4xf32>"),
    "kind as int": one_op("rlx.activation_backward", "{kind = 3}", "tensor<3xf32>", "tensor<3xf32>", "%x, %x", "(tensor<3xf32>, tensor<3xf32>)"),
    "reduction as int": binary_op("rlx.scatter_nd", "{reduction = 1 : i64}", "tensor<4x3xf32>", "tensor<2x1xi64>", "tensor<4x3xf32>", "tensor<2x3xf32>"),
    "batch_dims as string": binary_op("rlx.gather_nd", '{batch_dims = "a"}', "tensor<4x3xf32>", "tensor<5x2xi64>", "tensor<5xf32>"),
    "axis missing value": binary_op("rlx.gather", "{axis = i64}", "tensor<4x3xf32>", "tensor<2xi64>", "tensor<2x3xf32>"),
    "scalar operand to transpose": one_op("rlx.transpose", "{perm = array<i64>}", "f32", "f32"),
    "scalar operand to expand": one_op("rlx.expand", "", "tensor<4x2xf32>", "f32"),
    "scalar indices to gather": binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<4x3xf32>", "i64", "tensor<3xf32>"),
}


@pytest.mark.parametrize("name", WRONG_ATTRIBUTE_KIND)
def test_wrong_attribute_kind_is_a_documented_error(name: str) -> None:
    with pytest.raises((rlx.ParseError, rlx.VerificationError)):
        rlx.parse(WRONG_ATTRIBUTE_KIND[name])


@pytest.mark.parametrize("pipeline", ["fuse-elementwise{", ",,", "cse{", '"', "a b", "{}"])
def test_malformed_pipeline_is_a_compile_error(pipeline: str) -> None:
    with pytest.raises(rlx.CompileError):
        rlx.compile(GRAPH, pipeline=pipeline)


FUNCTION_NAMES = {
    # llvmlite DuplicatedNameError
    "empty name": ('""', 3),
    # RuntimeError "llvm intrinsics cannot be defined!" from the LLVM verifier
    "llvm. prefix": ("llvm.trap", 3),
    # RuntimeError "LLVM IR parsing error"
    "NUL in name": ('"a\\00b"', 3),
    # UnicodeEncodeError
    "non-ASCII name": ('"\u00e4"', 3),
    # DuplicatedNameError: clashes with the pthread_create the threaded launcher declares
    "pthread_create with a threaded kernel": ("pthread_create", 300_000),
}


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_function_name_is_compiled_or_rejected(name: str) -> None:
    symbol, n = FUNCTION_NAMES[name]
    text = (
        f"func.func @{symbol}(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n"
        f"  %n = rlx.neg %a : (tensor<{n}xf32>) -> tensor<{n}xf32>\n"
        f"  %m = rlx.reverse %n {{axes = array<i64: 0>}} : (tensor<{n}xf32>) -> tensor<{n}xf32>\n"
        f"  func.return %m : tensor<{n}xf32>\n}}"
    )
    assert_documented(run_with_ones, text)


@pytest.mark.parametrize("value", [None, 123, b"func.func @f() {\n  func.return\n}", ["x"]], ids=["None", "int", "bytes", "list"])
def test_compile_of_wrong_type_is_a_clear_error(value) -> None:
    with pytest.raises((TypeError, rlx.RlxError)):
        rlx.compile(value)


def test_compile_of_a_func_op_is_a_clear_error() -> None:
    function = rlx.parse(GRAPH).body.block.first_op
    try:
        rlx.compile(function)
    except (TypeError, rlx.RlxError):
        pass


@pytest.mark.parametrize("out", [5, (x for x in [np.empty((4, 3), np.float32)])], ids=["int", "generator"])
def test_out_that_is_not_a_sequence_is_an_argument_error(exe, out) -> None:
    with pytest.raises(rlx.ArgumentError):
        exe(A, B, out=out)


def test_builder_unknown_dtype() -> None:
    with pytest.raises((rlx.VerificationError, rlx.CompileError, ValueError)) as info:
        rlx.Builder("f").input((3,), "f128")
    assert not isinstance(info.value, KeyError)


def test_builder_output_of_a_non_value() -> None:
    b = rlx.Builder("f")
    b.input((3,))
    with pytest.raises((TypeError, rlx.RlxError)):
        b.output(3)
        b.module()


# CLI tracebacks (rlx-run only catches RlxError/OSError/IndexError; rlx-opt misses
# ArgSpecParseError and pass-internal errors)
CLI_TRACEBACKS = [
    ("rlx-run", ["{d}/nonutf8.mlir"], "UnicodeDecodeError"),
    ("rlx-run", ["{d}/attr_kind.mlir"], "xdsl VerifyException"),
    ("rlx-run", ["{d}/declaration.mlir"], "ValueError from plan_memory"),
    ("rlx-run", ["{d}/self_use.mlir", "-i", "{d}/b.npy"], "KeyError from fuse_elementwise"),
    ("rlx-run", ["{d}/g.mlir", "-p", "fuse-elementwise{", "-i", "{d}/a.npy", "-i", "{d}/b.npy"], "ArgSpecParseError"),
    ("rlx-opt", ["{d}/g.mlir", "-p", "fuse-elementwise{"], "ArgSpecParseError"),
    ("rlx-opt", ["{d}/g.mlir", "-p", ",,"], "ArgSpecParseError"),
    ("rlx-opt", ["{d}/self_use.mlir", "-p", "default"], "KeyError from fuse_elementwise"),
]


@pytest.mark.parametrize(("tool", "args", "what"), CLI_TRACEBACKS, ids=[f"{t} {' '.join(a)}" for t, a, _ in CLI_TRACEBACKS])
def test_cli_does_not_print_a_traceback(files: Path, tool: str, args: list[str], what: str) -> None:
    assert_cli_error(tool, *[a.replace("{d}", str(files)) for a in args])


# --- severity 3: misleading messages -----------------------------------------


def test_big_endian_input_is_converted_and_big_endian_out_is_refused(exe) -> None:
    (got,) = exe(A.astype(">f4"), B)
    np.testing.assert_array_equal(got, exe(A, B)[0])
    with pytest.raises(rlx.ArgumentError, match="native-endian float32"):
        exe(A, B, out=(np.empty(exe.outputs[0].shape, ">f4"),))


def test_default_pipeline_in_compile_message() -> None:
    with contextlib.suppress(rlx.CompileError):
        run_with_ones(GRAPH, pipeline="default")
        return
    with pytest.raises(rlx.CompileError) as info:
        rlx.compile(GRAPH, pipeline="default")
    assert "found []" not in str(info.value)


@pytest.mark.parametrize("kind", ["tensor<*xf32>", "memref<3xf32>", "vector<3xf32>"])
def test_non_tensor_operand_message(kind: str) -> None:
    with pytest.raises(rlx.VerificationError) as info:
        rlx.parse(GRAPH.replace("tensor<3xf32>", kind).replace("tensor<4x3xf32>, tensor<3xf32>)", f"tensor<4x3xf32>, {kind})"))
    assert "mixes tensor and scalar" not in str(info.value)


def test_nul_byte_message_is_formatted() -> None:
    with pytest.raises(rlx.ParseError) as info:
        rlx.parse(GRAPH.replace("%t", "%\x00t", 1))
    assert "{first_char}" not in str(info.value)


def test_rlx_opt_declaration_message(files: Path) -> None:
    code, stderr, escaped = cli("rlx-opt", str(files / "declaration.mlir"), "-p", "default")
    assert not escaped and code in (0, 1)
    assert "property of Region class" not in stderr


def test_rlx_opt_unknown_target_is_one_line(files: Path) -> None:
    assert_cli_error("rlx-opt", str(files / "g.mlir"), "-t", "nosuch", message="nosuch")


def test_use_before_definition_is_rejected() -> None:
    text = (
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %s = rlx.add %a, %t : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
        "  %t = rlx.tanh %s : (tensor<3xf32>) -> tensor<3xf32>\n  func.return %t : tensor<3xf32>\n}"
    )
    with pytest.raises(rlx.VerificationError):
        rlx.parse(text)


def test_unallocatable_result_is_a_documented_error() -> None:
    n = 99_999_999_999_999
    text = (
        f"func.func @f(%a: tensor<1xf32>) -> tensor<{n}xf32> {{\n"
        f"  %e = rlx.expand %a : (tensor<1xf32>) -> tensor<{n}xf32>\n  func.return %e : tensor<{n}xf32>\n}}"
    )
    assert_documented(run_with_ones, text)
