"""The Python API raises only its documented exceptions, each with a useful message.

The promise (DESIGN.md "Errors", README): parse errors carry line:column,
compile() rejects what it cannot compile with CompileError, a call with the
wrong arrays raises ArgumentError, and a bad gather/scatter index raises
IndexError at run time, leaving the executable usable. The verifier's own
messages are pinned in the lit `invalid.mlir` files, not here.

Fuzzing closes the gap between the cases listed: mutated valid IR is either
rejected with a documented exception or compiled and run, in which case the
default pipeline must agree with the unfused one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ir_snippets import GRAPH, I32_MAX, I32_MIN, I64_MAX, I64_MIN, A, B, binary_op, graph_reference

import rlx_mlir as rlx
from rlx_mlir.runtime import Executable

LINE_COL = re.compile(r"<input>:\d+:\d+")

# ---------------------------------------------------------------------------
# parse errors: rlx.ParseError with line:column
# ---------------------------------------------------------------------------

PARSE_ERRORS = {
    "empty file": ("", "Could not parse entire input"),
    "whitespace only": ("  \n\n", "Could not parse entire input"),
    "truncated in signature": (GRAPH[:60], "type expected"),
    "truncated before }": (GRAPH[:-3], "in block definition"),
    "unknown rlx op": (GRAPH.replace("rlx.tanh", "rlx.foo"), "rlx.foo is not registered"),
    "unknown dialect": (GRAPH.replace("rlx.tanh", "foo.tanh"), "foo.tanh is not registered"),
    "unknown op generic form": (
        GRAPH.replace("%t = rlx.tanh %s :", '%t = "rlx.foo"(%s) :'),
        "rlx.foo is not registered",
    ),
    "two operand types for unary": (
        GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "(tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>"),
        "Expected 1 operand type, but got 2",
    ),
    "non-functional type": (GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "tensor<4x3xf32>"), "Expected '('"),
    "no result type": (
        GRAPH.replace("(tensor<4x3xf32>) -> tensor<4x3xf32>", "(tensor<4x3xf32>) -> ()"),
        "Expected 1 result type",
    ),
    "negative dim": (GRAPH.replace("4x3", "-4x3"), "Expected shape type"),
    "undefined value": (GRAPH.replace("rlx.tanh %s", "rlx.tanh %zz"), "values used but not defined: [%zz]"),
    "redefined value": (
        GRAPH.replace("%t = rlx.tanh", "%s = rlx.tanh").replace("return %t", "return %s"),
        "already defined",
    ),
    "non-ascii character": (GRAPH.replace("@f", "@f\u00ff"), "'(' expected"),
    "type mismatch between uses": (
        "func.func @f() -> tensor<3xf32> {\n  %c = rlx.constant dense<1> : tensor<3xi32>\n  func.return %c : tensor<3xf32>\n}",
        "previously used or defined with type",
    ),
    "constant without dense attr": (
        "func.func @f() -> tensor<2xf32> {\n  %c = rlx.constant array<i64: 1, 2>\n  func.return %c : tensor<2xf32>\n}",
        "expects a dense elements attribute or a resource",
    ),
    "resource without its blob": (
        "func.func @f() -> tensor<2xf32> {\n  %c = rlx.constant dense_resource<blob> : tensor<2xf32>\n  func.return %c : tensor<2xf32>\n}",
        "dense_resource<blob> has no blob",
    ),
    "region without indexing_maps": (
        (
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) -> tensor<4xf32> {\n"
            "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"
        ),
        "needs {indexing_maps",
    ),
    "bad affine map syntax": (
        (
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0 +)>]} -> tensor<4xf32> {\n"
            "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"
        ),
        "Expected primary expression",
    ),
    "affine map with undefined dim": (
        (
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d1)>]} -> tensor<4xf32> {\n"
            "  ^bb0(%x: f32):\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"
        ),
        "Identifier not in space d1",
    ),
}


@pytest.mark.parametrize("name", PARSE_ERRORS)
def test_parse_error_has_line_and_column(name: str) -> None:
    text, message = PARSE_ERRORS[name]
    with pytest.raises(rlx.ParseError) as info:
        rlx.parse(text)
    assert LINE_COL.search(str(info.value)), str(info.value)
    assert message in str(info.value), str(info.value)
    # compile() reports the same error the same way
    with pytest.raises(rlx.ParseError):
        rlx.compile(text)


# ---------------------------------------------------------------------------
# compile errors: what compile() is given, and its options
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


def _func_op() -> object:
    """GRAPH's func.func, parsed: IR, but not a module."""
    return rlx.parse(GRAPH).body.block.first_op


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        pytest.param(lambda: None, "NoneType", id="None"),
        pytest.param(lambda: 123, "int", id="int"),
        pytest.param(GRAPH.encode, "bytes", id="bytes"),
        pytest.param(lambda: ["x"], "list", id="list"),
        pytest.param(_func_op, "FuncOp", id="func op"),
    ],
)
def test_compile_of_neither_text_nor_module_is_a_compile_error(make: Callable[[], object], kind: str) -> None:
    with pytest.raises(rlx.CompileError, match=rf"compile\(\) takes IR text or a builtin.module, got {kind}$"):
        rlx.compile(make())


def test_builder_unknown_dtype_is_an_argument_error() -> None:
    with pytest.raises(rlx.ArgumentError, match=r"unknown element type 'f128' \(supported: f16, "):
        rlx.Builder("f").input((3,), "f128")


def test_builder_output_of_a_non_value_is_an_argument_error() -> None:
    b = rlx.Builder("f")
    b.input((3,))
    with pytest.raises(rlx.ArgumentError, match="Builder.output takes values made by this builder, got int"):
        b.output(3)


# ---------------------------------------------------------------------------
# run time: out-of-range gather/scatter indices raise IndexError, in both
# directions, with i32 and i64, up to INT_MIN/INT_MAX
# ---------------------------------------------------------------------------


def _indexed_cases(it: str) -> dict:
    """op -> (IR text, make(k) -> arguments with index k in one position)."""
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
            binary_op(
                "rlx.gather_elements", "{axis = 0 : i64}", "tensor<4x3xf32>", f"tensor<1x3x{it}>", "tensor<1x3xf32>"
            ),
            lambda k: (np.ones((4, 3), f32), np.array([[0, k, 1]], dt)),
        ),
        "gather_nd": (
            binary_op("rlx.gather_nd", "{}", "tensor<4x4xf32>", f"tensor<2x2x{it}>", "tensor<2xf32>"),
            lambda k: (np.ones((4, 4), f32), np.array([[0, 0], [1, k]], dt)),
        ),
        "gather_backward": (
            binary_op(
                "rlx.gather_backward", "{axis = 0 : i64}", "tensor<2x3xf32>", f"tensor<2x{it}>", "tensor<4x3xf32>"
            ),
            lambda k: (np.ones((2, 3), f32), np.array([0, k], dt)),
        ),
        "scatter_add": (
            binary_op("rlx.scatter_add", "", "tensor<2x3xf32>", f"tensor<2x{it}>", "tensor<4x3xf32>"),
            lambda k: (np.ones((2, 3), f32), np.array([0, k], dt)),
        ),
        "scatter_nd": (
            binary_op(
                "rlx.scatter_nd",
                '{reduction = "add"}',
                "tensor<4x3xf32>",
                f"tensor<2x1x{it}>",
                "tensor<4x3xf32>",
                "tensor<2x3xf32>",
            ),
            lambda k: (np.ones((4, 3), f32), np.array([[0], [k]], dt), np.ones((2, 3), f32)),
        ),
        "scatter_elements": (
            binary_op(
                "rlx.scatter_elements",
                "{axis = 0 : i64}",
                "tensor<4x3xf32>",
                f"tensor<1x3x{it}>",
                "tensor<4x3xf32>",
                "tensor<1x3xf32>",
            ),
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


def test_zero_size_gather_axis_raises_index_error() -> None:
    exe = rlx.compile(
        binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<0x3xf32>", "tensor<2xi64>", "tensor<2x3xf32>")
    )
    with pytest.raises(IndexError, match=r"rlx.gather: index 0 is out of range for axis 0 with size 0"):
        exe(np.zeros((0, 3), np.float32), np.zeros(2, np.int64))


# ---------------------------------------------------------------------------
# API misuse: calling an executable with the wrong arrays -> ArgumentError
# ---------------------------------------------------------------------------


def _readonly(shape: tuple[int, ...]) -> np.ndarray:
    array = np.empty(shape, np.float32)
    array.setflags(write=False)
    return array


def _readonly_copy(array: np.ndarray) -> np.ndarray:
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
    "broadcast view out": (
        lambda e: e(A, B, out=(np.broadcast_to(np.empty(3, np.float32), (4, 3)),)),
        "writeable C-contiguous",
    ),
    "out aliases an input": (lambda e: e(a := A.copy(), B, out=(a,)), "overlaps another argument"),
    "two out arrays": (lambda e: e(A, B, out=(np.empty((4, 3), np.float32),) * 2), "has 1 results, got 2 out= arrays"),
    "zero out arrays": (lambda e: e(A, B, out=()), "has 1 results, got 0 out= arrays"),
    "out is None inside": (lambda e: e(A, B, out=(None,)), "out[0] must be a NumPy array"),
    "out wrong dtype": (lambda e: e(A, B, out=(np.empty((4, 3), np.float64),)), "out[0] must have dtype float32"),
    "out wrong shape": (lambda e: e(A, B, out=(np.empty((3, 4), np.float32),)), "out[0] must have shape [4, 3]"),
    "out is an int": (lambda e: e(A, B, out=5), "out= must be a tuple of arrays, got int"),
    "out is a generator": (
        lambda e: e(A, B, out=(x for x in [np.empty((4, 3), np.float32)])),
        "out= must be a tuple of arrays, got generator",
    ),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_call_raises_argument_error(graph_exe: Executable, name: str) -> None:
    call, message = BAD_CALLS[name]
    with pytest.raises(rlx.ArgumentError) as info:
        call(graph_exe)
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
def test_unusual_but_valid_inputs_work(
    graph_exe: Executable, make: Callable[[], tuple[np.ndarray, np.ndarray]]
) -> None:
    a, b = make()
    (y,) = graph_exe(a, b)
    np.testing.assert_allclose(y, graph_reference(a, b), rtol=1e-6)


# ---------------------------------------------------------------------------
# fuzzing: mutated valid IR is rejected with a documented exception, or it
# compiles, runs, and the default pipeline agrees with the unfused one
# ---------------------------------------------------------------------------

# What compile() may raise for a mutant that parses, and what a call with
# arguments of the right types may raise (a mutated index can point outside the data).
COMPILE_REJECTS = (rlx.CompileError, rlx.AllocationError)
RUN_REJECTS = (IndexError,)

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


def fuzz_arguments(exe: Executable) -> list[np.ndarray]:
    """Deterministic, varied arguments of the executable's input types.

    Each argument cycles through small values from a different starting point,
    so no argument is constant: integers in [-2, 2] (mostly valid indices, which
    also count from the end), floats in multiples of 1/4 in [-2, 2] (exact in
    every float type), i1 alternating.
    """
    arguments = []
    for k, spec in enumerate(exe.inputs):
        dtype = np.dtype(spec.dtype.numpy)
        step = np.arange(int(np.prod(spec.shape, dtype=np.int64))).reshape(spec.shape) * 7 + 3 * k
        if dtype.kind == "b":
            arguments.append(step % 3 == 0)
        elif dtype.kind in "iu":
            arguments.append((step % 5 - 2).astype(dtype))
        else:
            arguments.append(((step % 17 - 8) / 4).astype(dtype))
    return arguments


def _compile_and_run(text: str, pipeline: str | None) -> tuple[np.ndarray, ...] | Exception:
    """The results of `text` compiled with `pipeline` and run on fuzz_arguments, or what it raised.

    Only the documented rejections are caught; anything else escapes and fails the test.
    """
    try:
        exe = rlx.compile(text, pipeline=pipeline)
    except COMPILE_REJECTS as error:
        return error
    try:
        results = exe(*fuzz_arguments(exe))
    except RUN_REJECTS as error:
        return error
    assert len(results) == len(exe.outputs)
    for result, spec in zip(results, exe.outputs, strict=True):
        assert result.shape == tuple(spec.shape) and result.dtype == np.dtype(spec.dtype.numpy), (result.shape, spec)
    return results


def check_compiled_or_rejected(text: str) -> str:
    """Run a mutant through both pipelines, or see it rejected with a documented exception; returns which.

    Both outcomes are legitimate for a mutant: a changed number or element type
    often still makes a valid program, and often does not. Invalid input must be
    rejected by parse() with ParseError or VerificationError. Valid input must
    behave the same with the default pipeline and with none (pipeline=""):
    either both raise the same documented type (CompileError or AllocationError
    from compile(), IndexError from a call: a mutated index may point outside
    the data) or both run, to the same results -- a differential check of
    fusion and canonicalization. Anything else fails the test.
    """
    try:
        rlx.parse(text)
    except (rlx.ParseError, rlx.VerificationError) as error:
        assert str(error), f"{type(error).__name__} without a message"
        return f"rejected by parse: {type(error).__name__}"
    fused, unfused = _compile_and_run(text, None), _compile_and_run(text, "")
    if isinstance(unfused, Exception) or isinstance(fused, Exception):
        assert type(fused) is type(unfused), f"default pipeline: {fused!r}; no passes: {unfused!r}"
        assert str(fused), f"{type(fused).__name__} without a message"
        return f"rejected by both pipelines: {type(fused).__name__}"
    for result, expected in zip(fused, unfused, strict=True):
        np.testing.assert_array_equal(result, expected, err_msg=text)
    return "ran"


@st.composite
def numeric_mutations(draw: st.DrawFn) -> str:
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
            new = (
                "x"
                + draw(st.sampled_from(["f32", "f64", "f16", "bf16", "i1", "i8", "i32", "i64", "ui8", "complex<f32>"]))
                + ">"
            )
        else:
            new = '"' + draw(st.sampled_from(["none", "mul", "max", "circular", "replicate", "bogus", ""])) + '"'
        text = text[: m.start()] + new + text[m.end() :]
    return text


@settings(max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(numeric_mutations())
def test_fuzz_numeric_mutations_run_or_raise_documented_errors(text: str) -> None:
    event(check_compiled_or_rejected(text))


_TOKEN = re.compile(r'%\w+|@\w+|\^\w+|"[^"]*"|-?\d+\.\d+(?:e[+-]?\d+)?|-?\d+|\w+(?:\.\w+)*|->|[^\s\w]')


@st.composite
def token_mutations(draw: st.DrawFn) -> str:
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
            new = draw(
                st.sampled_from(
                    [
                        "0",
                        "-1",
                        "?",
                        "f32",
                        "i64",
                        "tensor<f32>",
                        "(",
                        ")",
                        "{",
                        "}",
                        "<",
                        ">",
                        ",",
                        ":",
                        "->",
                        "%a",
                        "rlx.neg",
                        "func.return",
                    ]
                )
            )
            text = text[:start] + new + text[end:]
    return text


def check_parsed_or_rejected(text: str) -> str:
    """Parse `text`, or see it rejected; returns which.

    A token mutation mostly breaks the syntax (then parse() must raise
    ParseError, or VerificationError when it still parses) but sometimes leaves
    a valid module (a duplicated `-` or a swap of equal tokens); then the module
    must print as IR that parses back to the same module.
    """
    try:
        module = rlx.parse(text)
    except (rlx.ParseError, rlx.VerificationError) as error:
        assert str(error), f"{type(error).__name__} without a message"
        return f"rejected: {type(error).__name__}"
    printed = str(module)
    assert str(rlx.parse(printed)) == printed, text
    return "parsed"


@pytest.mark.parametrize("index", range(len(FUZZ_SEEDS)))
def test_fuzz_seeds_run_and_print_back(index: int) -> None:
    """The fuzz tests below start from valid programs: each seed runs and round-trips."""
    assert check_compiled_or_rejected(FUZZ_SEEDS[index]) == "ran"
    assert check_parsed_or_rejected(FUZZ_SEEDS[index]) == "parsed"


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(token_mutations())
def test_fuzz_token_mutations_parse_or_raise_documented_errors(text: str) -> None:
    event(check_parsed_or_rejected(text))
