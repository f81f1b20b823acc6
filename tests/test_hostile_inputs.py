"""The defects a hostile-input campaign found (issue 11), one case each: what
used to happen is in the comment, the documented error it raises now is in
the case. CLI cases run the installed tools."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from ir_snippets import GRAPH

import rlx_mlir as rlx
from rlx_mlir.builder import UnknownOpError


def constant_ir(literal: str, element: str) -> str:
    t = f"tensor<2x{element}>"
    return f"func.func @f() -> {t} {{\n  %c = rlx.constant dense<{literal}> : {t}\n  func.return %c : {t}\n}}"


def ranked(rank: int) -> str:
    t = "tensor<" + "1x" * rank + "f32>"
    return f"func.func @f(%a: {t}) -> {t} {{\n  %t = rlx.tanh %a : ({t}) -> {t}\n  func.return %t : {t}\n}}"


# name: (IR text, documented error, the gist of its message)
BAD_TEXT = {
    # RecursionError from xDSL's recursive-descent parser
    "3,000 nested modules": ("builtin.module {" * 3000 + "}" * 3000, rlx.ParseError, "nests too deeply"),
    "3,000 nested dense literal": (
        constant_ir("[" * 3000 + "1.0" + "]" * 3000, "f32"),
        rlx.ParseError,
        "nests too deeply",
    ),
    # ValueError / OverflowError from xDSL packing a constant its type cannot hold
    "300 in i8": (constant_ir("300", "i8"), rlx.ParseError, "300 is out of range for i8 (-128..127)"),
    "70000 in f16": (constant_ir("70000.0", "f16"), rlx.ParseError, "70000.0 is out of range for f16"),
    "70000 in an f16 list": (constant_ir("[70000.0, 1.0]", "f16"), rlx.ParseError, "does not fit its element type"),
    "2 in i1": (constant_ir("2", "i1"), rlx.ParseError, "2 is out of range for i1 (0..1)"),
    "hex literal too wide for i32": (constant_ir("0x1FFFFFFFFFF", "i32"), rlx.ParseError, "is out of range for i32"),
    "300 in an i8 list": (constant_ir("[300, 1]", "i8"), rlx.ParseError, "does not fit its element type"),
    "1.5 in i32": (constant_ir("1.5", "i32"), rlx.ParseError, "1.5 is not an integer, as i32 needs"),
    # ValueError about integer string conversion
    "a dimension of 5,000 digits": (
        GRAPH.replace("tensor<4x3xf32>", "tensor<" + "9" * 5000 + "x3xf32>"),
        rlx.ParseError,
        "an integer literal has more than",
    ),
    # compiled, then NumPy's maximum-dimension error at the call
    "rank 1,000": (ranked(1000), rlx.VerificationError, "has rank 1000; rlx tensors have at most 64 dimensions"),
}


@pytest.mark.parametrize("name", BAD_TEXT)
def test_bad_text_raises_its_documented_error(name: str) -> None:
    text, error, message = BAD_TEXT[name]
    with pytest.raises(error) as info:
        rlx.compile(text)
    assert type(info.value) is error
    assert message in str(info.value), str(info.value)


def test_rank_64_is_fine() -> None:
    (out,) = rlx.compile(ranked(64))(np.full((1,) * 64, 0.5, np.float32))
    assert out.shape == (1,) * 64


# name: (call, documented error, the gist of its message)
BAD_CALLS: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    # TypeError: '>' not supported between 'str' and 'int'
    "threads='2'": (lambda: rlx.compile(GRAPH, threads="2"), rlx.CompileError, "threads= takes a count >= 0"),
    "threads=-1": (lambda: rlx.compile(GRAPH, threads=-1), rlx.CompileError, "threads= takes a count >= 0"),
    "threads=True": (lambda: rlx.compile(GRAPH, threads=True), rlx.CompileError, "threads= takes a count >= 0"),
    # TypeError: object of type 'int' has no len()
    "pipeline=3": (lambda: rlx.compile(GRAPH, pipeline=3), rlx.CompileError, "pipeline= takes a string, got int"),
    # TypeError: expected string or bytes-like object
    "pipeline=[...]": (
        lambda: rlx.compile(GRAPH, pipeline=["canonicalize"]),
        rlx.CompileError,
        "pipeline= takes a string, got list",
    ),
    "entry=0": (lambda: rlx.compile(GRAPH, entry=0), rlx.CompileError, "entry= takes a string, got int"),
    # TypeError: Executable.__call__() got an unexpected keyword argument 'a'
    "exe(a=...)": (
        lambda: rlx.compile(GRAPH)(a=np.ones((4, 3), np.float32)),
        rlx.ArgumentError,
        "takes its inputs by position, in order; got a=",
    ),
    # AttributeError
    "Builder op that does not exist": (
        lambda: rlx.Builder().frobnicate,
        UnknownOpError,
        "Builder has no op 'frobnicate'",
    ),
    # VerifyException from xDSL's TensorType
    "Builder float dimension": (lambda: rlx.Builder().input((2.5,)), rlx.ArgumentError, "got 2.5"),
    "Builder negative dimension": (lambda: rlx.Builder().input((-1,)), rlx.ArgumentError, "got -1"),
    # ValueError: max() arg is an empty sequence
    "Builder empty concat": (lambda: rlx.Builder().concat([], 0), rlx.ArgumentError, "at least one input"),
    # ValueError: cannot convert float NaN to integer
    "Builder NaN constant for i32": (
        lambda: rlx.Builder().constant(float("nan"), "i32"),
        rlx.ArgumentError,
        "does not fit i32",
    ),
    "Builder 300 for i8": (lambda: rlx.Builder().constant(300, "i8"), rlx.ArgumentError, "does not fit i8"),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_call_raises_its_documented_error(name: str) -> None:
    call, error, message = BAD_CALLS[name]
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value), str(info.value)


def test_unknown_builder_op_is_still_an_attribute_error() -> None:
    assert not hasattr(rlx.Builder(), "frobnicate")  # hasattr() and getattr(..., default) keep working


def test_builder_complex_constant() -> None:
    """TypeError: 'complex' object is not iterable."""
    b = rlx.Builder()
    x = b.input((2,), "complex<f32>")
    b.output(b.mul(x, b.constant([1 + 2j, -1j], "complex<f32>")))
    (got,) = rlx.compile(b.module())(np.array([1j, 2], np.complex64))
    np.testing.assert_array_equal(got, np.array([1j, 2], np.complex64) * np.array([1 + 2j, -1j], np.complex64))


def test_threads_beyond_the_cpus_are_capped() -> None:
    """threads=1000000 segfaulted (a million pthreads per kernel)."""
    exe = rlx.compile(GRAPH, threads=1_000_000)
    a, b = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    np.testing.assert_allclose(exe(a, b)[0], np.tanh(a + b), rtol=1e-6)


SCALAR_IR = "func.func @f(%a: tensor<{t}>) -> tensor<{t}> {{\n  %n = rlx.neg %a : (tensor<{t}>) -> tensor<{t}>\n  func.return %n : tensor<{t}>\n}}"


@pytest.mark.parametrize(
    "element, value, want",
    [
        ("f32", np.float32(2), np.float32(-2)),  # a NumPy scalar was refused
        ("f32", 2.5, np.float32(-2.5)),
        ("f64", 3, np.float64(-3)),
        ("i32", 7, np.int32(-7)),
        ("complex<f64>", 1 + 2j, np.complex128(-1 - 2j)),
    ],
    ids=str,
)
def test_a_0d_input_takes_numpy_scalars_and_python_numbers(element: str, value: object, want: np.generic) -> None:
    (got,) = rlx.compile(SCALAR_IR.format(t=element))(value)
    assert got.shape == () and got.dtype == want.dtype and got == want


@pytest.mark.parametrize(
    "element, value, message",
    [
        ("i32", 2**40, "is out of range for i32"),
        ("i32", 2.5, "must be a i32 number, got float"),
        ("f32", np.float64(2), "must have dtype float32, got float64"),  # NumPy scalars follow the array rule
        ("f32", "2", "must be a NumPy array"),
    ],
    ids=str,
)
def test_a_0d_input_refuses_what_does_not_fit(element: str, value: object, message: str) -> None:
    with pytest.raises(rlx.ArgumentError, match=message):
        rlx.compile(SCALAR_IR.format(t=element))(value)


def test_a_number_for_a_shaped_input_is_refused() -> None:
    with pytest.raises(rlx.ArgumentError, match=r"must be a NumPy array float32\[4, 3\], got float"):
        rlx.compile(GRAPH)(1.0, np.ones(3, np.float32))


def tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def test_rlx_run_on_an_empty_npy_file(tmp_path: Path) -> None:
    """EOFError from np.load."""
    ir, empty = tmp_path / "g.mlir", tmp_path / "empty.npy"
    ir.write_text(GRAPH)
    empty.write_bytes(b"")
    done = subprocess.run(
        [tool("rlx-run"), str(ir), "--input", str(empty), "--input", str(empty)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "the file is empty or cut short" in done.stderr


def test_rlx_opt_on_deep_nesting(tmp_path: Path) -> None:
    """RecursionError from xDSL's parser."""
    deep = tmp_path / "deep.mlir"
    deep.write_text("builtin.module {" * 3000 + "}" * 3000)
    done = subprocess.run([tool("rlx-opt"), str(deep)], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "nests too deeply" in done.stderr
