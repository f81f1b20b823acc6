"""Regression tests for violations the robustness suite found in the Python API.

Each case was once a minimal reproducer of a traceback (an undocumented
exception type escaping from xDSL, llvmlite or a pass) or of a misleading
message; the comment above it says what used to happen. Each now pins the one
documented exception type it raises and the gist of its message. (CLI
tracebacks are in test_cli_errors.py, size and memory limits in
test_limits.py; the verifier's full messages are in the lit invalid files.)
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from ir_snippets import GRAPH, A, B, binary_op, graph_reference, neg_reverse, one_op, run_with_ones

import rlx_mlir as rlx
from rlx_mlir.runtime import Executable


def _region(maps: str, body: str) -> str:
    """GRAPH's add as an elementwise region with the given indexing maps and body."""
    return (
        "func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {\n"
        f"  %r = rlx.elementwise_region ins(%a, %b : tensor<4x3xf32>, tensor<3xf32>) {{indexing_maps = {maps}}} -> tensor<4x3xf32> {{\n"
        f"  {body}\n  }}\n  func.return %r : tensor<4x3xf32>\n}}\n"
    )


REGION_BODY = "^bb0(%x: f32, %y: f32):\n    %s = rlx.add %x, %y : (f32, f32) -> f32\n    rlx.yield %s : f32"

# name: (IR text, pipeline, the documented exception, the gist of its message)
TRACEBACK_TEXTS = {
    # KeyError in passes/fuse_elementwise.py (the default pipeline); with
    # pipeline="" the forward reference was even compiled and read garbage.
    "use before definition": (
        (
            "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            "  %s = rlx.add %a, %t : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
            "  %t = rlx.tanh %s : (tensor<3xf32>) -> tensor<3xf32>\n  func.return %t : tensor<3xf32>\n}"
        ),
        None,
        rlx.VerificationError,
        "%t is used before it is defined",
    ),
    "op using its own result": (
        (
            "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
            "  %s = rlx.add %a, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n  func.return %s : tensor<3xf32>\n}"
        ),
        None,
        rlx.VerificationError,
        "%s is used before it is defined",
    ),
    # ValueError "'block' property of Region class is only available for single-block regions" (plan_memory.read_plan)
    "function declaration only": (
        "func.func private @ext(tensor<3xf32>) -> tensor<3xf32>\n",
        None,
        rlx.CompileError,
        "expected exactly one function to compile",
    ),
    # same ValueError from plan_memory.collect_buffers
    "multi-block function": (
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  cf.br ^bb1\n^bb1:\n  func.return %a : tensor<3xf32>\n}",
        "",
        rlx.CompileError,
        "'func.func' @f has 2 blocks; rlx functions are one block of ops",
    ),
    # ValueError "lower-to-llvm cannot lower 'arith.addf' yet"
    "non-rlx op in function (arith)": (
        GRAPH.replace(
            "%t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>", "%t = arith.addf %s, %s : tensor<4x3xf32>"
        ),
        None,
        rlx.CompileError,
        "'arith.addf' in @f is not an rlx op",
    ),
    "non-rlx op in function (tensor.empty)": (
        GRAPH.replace(
            "%t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>", "%t = tensor.empty() : tensor<4x3xf32>"
        ),
        None,
        rlx.CompileError,
        "'tensor.empty' in @f is not an rlx op",
    ),
    # KeyError in fuse_elementwise / lowering: region bodies were not checked to be isolated
    "region body uses an outer scalar": (
        (
            "func.func @f(%a: tensor<4xf32>, %c: f32) -> tensor<4xf32> {\n"
            "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {\n"
            "  ^bb0(%x: f32):\n    %s = rlx.add %x, %c : (f32, f32) -> f32\n    rlx.yield %s : f32\n  }\n  func.return %r : tensor<4xf32>\n}"
        ),
        None,
        rlx.VerificationError,
        "Operation using value defined out of its IsolatedFromAbove parent: AddOp",
    ),
    "region body holds a tensor op on an outer value": (
        (
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %r = rlx.elementwise_region ins(%a : tensor<4xf32>) {indexing_maps = [affine_map<(d0) -> (d0)>]} -> tensor<4xf32> {\n"
            "  ^bb0(%x: f32):\n    %t = rlx.neg %a : (tensor<4xf32>) -> tensor<4xf32>\n    rlx.yield %x : f32\n  }\n  func.return %r : tensor<4xf32>\n}"
        ),
        "",
        rlx.VerificationError,
        "Operation using value defined out of its IsolatedFromAbove parent: NegOp",
    ),
    # NotImplementedError from xDSL's affine parser
    "semi-affine indexing map": (
        _region("[affine_map<(d0, d1) -> (d0 * d1, d1)>, affine_map<(d0, d1) -> (d1)>]", REGION_BODY),
        None,
        rlx.ParseError,
        "semi-affine",
    ),
}


@pytest.mark.parametrize("name", TRACEBACK_TEXTS)
def test_bad_ir_raises_its_documented_error(name: str) -> None:
    text, pipeline, error, message = TRACEBACK_TEXTS[name]
    with pytest.raises(error) as info:
        rlx.compile(text, pipeline=pipeline)
    assert type(info.value) is error
    assert message in str(info.value), str(info.value)


# Raw xdsl VerifyExceptions once escaped for attributes and operands of the
# wrong kind. The gist is the kind expected.
WRONG_ATTRIBUTE_KIND = {
    "perm as ArrayAttr": (
        one_op("rlx.transpose", "{perm = [1, 0]}", "tensor<4x3xf32>"),
        "should be of base attribute array",
    ),
    "perm as ArrayAttr (generic form)": (
        (
            "func.func @f(%x: tensor<3x4xf32>) -> tensor<4x3xf32> {\n"
            '  %r = "rlx.transpose"(%x) <{perm = [1, 0]}> : (tensor<3x4xf32>) -> tensor<4x3xf32>\n'
            "  func.return %r : tensor<4x3xf32>\n}"
        ),
        "should be of base attribute array",
    ),
    "perm as string": (one_op("rlx.transpose", '{perm = "x"}', "tensor<4x3xf32>"), "should be of base attribute array"),
    "axis as string": (
        one_op("rlx.narrow", '{axis = "x", start = 0 : i64, length = 2 : i64}', "tensor<2x4xf32>"),
        "should be of base attribute integer",
    ),
    "axis as float": (
        one_op("rlx.narrow", "{axis = 0.0 : f64, start = 0 : i64, length = 2 : i64}", "tensor<2x4xf32>"),
        "should be of base attribute integer",
    ),
    "axis as i32": (
        one_op("rlx.narrow", "{axis = 0 : i32, start = 0 : i64, length = 2 : i64}", "tensor<2x4xf32>"),
        "Expected attribute i64 but got i32",
    ),
    "pad mode as int": (
        one_op("rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, mode = 3}", "tensor<4x4xf32>"),
        "should be of base attribute string",
    ),
    "pad value as int": (
        one_op("rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, value = 3 : i64}", "tensor<4x4xf32>"),
        "should be of base attribute float",
    ),
    "pad value as f32": (
        one_op(
            "rlx.pad", "{before = array<i64: 1, 0>, after = array<i64: 0, 0>, value = 3.0 : f32}", "tensor<4x4xf32>"
        ),
        "should be of base attribute f64",
    ),
    "kind as int": (
        one_op(
            "rlx.activation_backward",
            "{kind = 3}",
            "tensor<3xf32>",
            "tensor<3xf32>",
            "%x, %x",
            "(tensor<3xf32>, tensor<3xf32>)",
        ),
        "should be of base attribute string",
    ),
    "reduction as int": (
        binary_op(
            "rlx.scatter_nd",
            "{reduction = 1 : i64}",
            "tensor<4x3xf32>",
            "tensor<2x1xi64>",
            "tensor<4x3xf32>",
            "tensor<2x3xf32>",
        ),
        "should be of base attribute string",
    ),
    "batch_dims as string": (
        binary_op("rlx.gather_nd", '{batch_dims = "a"}', "tensor<4x3xf32>", "tensor<5x2xi64>", "tensor<5xf32>"),
        "should be of base attribute integer",
    ),
    "axis missing value": (
        binary_op("rlx.gather", "{axis = i64}", "tensor<4x3xf32>", "tensor<2xi64>", "tensor<2x3xf32>"),
        "should be of base attribute integer",
    ),
    "scalar operand to transpose": (
        one_op("rlx.transpose", "{perm = array<i64>}", "f32", "f32"),
        "should be of base attribute tensor",
    ),
    "scalar operand to expand": (
        one_op("rlx.expand", "", "tensor<4x2xf32>", "f32"),
        "should be of base attribute tensor",
    ),
    "scalar indices to gather": (
        binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<4x3xf32>", "i64", "tensor<3xf32>"),
        "should be of base attribute tensor",
    ),
}


@pytest.mark.parametrize("name", WRONG_ATTRIBUTE_KIND)
def test_wrong_attribute_kind_is_a_verification_error(name: str) -> None:
    text, message = WRONG_ATTRIBUTE_KIND[name]
    with pytest.raises(rlx.VerificationError, match=message):
        rlx.parse(text)


@pytest.mark.parametrize("pipeline", ["fuse-elementwise{", ",,", "cse{", '"', "a b", "{}"])
def test_malformed_pipeline_is_a_compile_error(pipeline: str) -> None:
    # xDSL's ArgSpecParseError escaped
    with pytest.raises(
        rlx.CompileError, match=re.escape(f"bad pipeline '{pipeline}': Error parsing pass pipeline specification")
    ):
        rlx.compile(GRAPH, pipeline=pipeline)


FUNCTION_NAMES = {
    # llvmlite DuplicatedNameError
    "empty name": ('""', "", 3),
    # RuntimeError "llvm intrinsics cannot be defined!" from the LLVM verifier
    "llvm. prefix": ("llvm.trap", "llvm.trap", 3),
    # RuntimeError "LLVM IR parsing error"
    "NUL in name": ('"a\\00b"', "a\x00b", 3),
    # UnicodeEncodeError
    "non-ASCII name": ('"\u00e4"', "\u00e4", 3),
    # DuplicatedNameError: clashed with the pthread_create the threaded launcher declares
    "pthread_create with a threaded kernel": ("pthread_create", "pthread_create", 300_000),
    # the thread pool's entry point, which a threaded kernel's launcher declares
    "the pool's entry with a threaded kernel": ("rlx_pool_parallel_for", "rlx_pool_parallel_for", 300_000),
}


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_function_name_that_is_no_jit_symbol_is_a_compile_error(name: str) -> None:
    symbol, parsed, n = FUNCTION_NAMES[name]
    with pytest.raises(rlx.CompileError) as info:
        run_with_ones(neg_reverse(symbol, n))
    assert (
        str(info.value)
        == f"function name '{parsed}' cannot be a JIT symbol (use letters, digits, _; not llvm.*/pthread_*/scipy_*/rlx_pool_*)"
    )


@pytest.mark.parametrize("symbol", ["f_1", "_", "F2", "pthread"])
def test_function_name_of_letters_digits_and_underscores_compiles(symbol: str) -> None:
    """The other side of the rule above: such names (even near the reserved ones) run."""
    (y,) = run_with_ones(neg_reverse(symbol, 3))
    np.testing.assert_array_equal(y, -np.ones(3, np.float32))


# --- misleading messages ---------------------------------------------------


def test_big_endian_input_is_converted_and_big_endian_out_is_refused(graph_exe: Executable) -> None:
    (got,) = graph_exe(A.astype(">f4"), B)
    np.testing.assert_array_equal(got, graph_exe(A, B)[0])
    with pytest.raises(rlx.ArgumentError, match="native-endian float32"):
        graph_exe(A, B, out=(np.empty(graph_exe.outputs[0].shape, ">f4"),))


def test_default_pipeline_is_refused_with_a_reason() -> None:
    """pipeline="default" once failed with "expected exactly one function (found [])"."""
    with pytest.raises(rlx.CompileError) as info:
        rlx.compile(GRAPH, pipeline="default")
    assert str(info.value) == "pipeline lists 'default': compile() plans memory and lowers by itself"
    (y,) = rlx.compile(GRAPH, pipeline=None)(A, B)  # None is how to ask for the default pipeline
    np.testing.assert_allclose(y, graph_reference(A, B), rtol=1e-6)


@pytest.mark.parametrize("kind", ["tensor<*xf32>", "memref<3xf32>", "vector<3xf32>"])
def test_non_tensor_operand_message_names_the_type(kind: str) -> None:
    """Once "mixes tensor and scalar operands", which these are not."""
    text = GRAPH.replace("tensor<3xf32>", kind).replace("tensor<4x3xf32>, tensor<3xf32>)", f"tensor<4x3xf32>, {kind})")
    with pytest.raises(rlx.VerificationError) as info:
        rlx.parse(text)
    assert f"has a value of type {kind}" in str(info.value)
    assert "mixes tensor and scalar" not in str(info.value)


def test_nul_byte_message_is_formatted() -> None:
    """Once the unformatted template "...{first_char}..."."""
    with pytest.raises(rlx.ParseError, match="^<input>:3: the text contains a NUL byte$"):
        rlx.parse(GRAPH.replace("%t", "%\x00t", 1))
