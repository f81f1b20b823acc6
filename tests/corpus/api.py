"""API, Builder and run-time misuse: one row per way to call rlx_mlir wrongly.

Each row is `name: (call, expected error type, message fragment)`; the call
takes no arguments and must raise exactly that type (tests/test_corpus.py).
`RESULTS` holds the hostile inputs that are valid, each with the value its
call must return (a 10^9-element splat in the generic form, a scan with no xs).
`GENERATED_IR` holds IR texts too large or too binary for the .mlir files
(deep nesting, NUL bytes), run like them; `CLI_WORDING` gives rlx-opt's
fragment for the few whose API message is worded by the API alone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

import rlx_mlir as rlx
from rlx_mlir.builder import UnknownOpError

GRAPH = """func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
"""
TWO_RESULTS = """func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %n = rlx.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %e = rlx.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %n, %e : tensor<4xf32>, tensor<4xf32>
}
"""
INT_GRAPH = """func.func @f(%a: tensor<4xi32>) -> tensor<4xi32> {
  %n = rlx.neg %a : (tensor<4xi32>) -> tensor<4xi32>
  func.return %n : tensor<4xi32>
}
"""


def indexed(op: str, attrs: str, data: str, indices: str, result: str) -> str:
    return (
        f"func.func @f(%d: {data}, %i: {indices}) -> {result} {{\n"
        f"  %r = {op} %d, %i {attrs} : ({data}, {indices}) -> {result}\n  func.return %r : {result}\n}}\n"
    )


HUGE_SPLAT = """func.func @f() -> tensor<100000000000000xf32> {
  %c = rlx.constant dense<1.0> : tensor<100000000000000xf32>
  func.return %c : tensor<100000000000000xf32>
}
"""
GATHER = indexed("rlx.gather", "{axis = 0 : i64}", "tensor<4x3xf32>", "tensor<2xi64>", "tensor<2x3xf32>")
GATHER_ELEMENTS = indexed(
    "rlx.gather_elements", "{axis = 1 : i64}", "tensor<4x3xf32>", "tensor<4x3xi32>", "tensor<4x3xf32>"
)
GATHER_ND = indexed("rlx.gather_nd", "", "tensor<4x3xf32>", "tensor<2x2xi64>", "tensor<2xf32>")


@cache
def exe(text: str) -> rlx.runtime.Executable:
    """One executable per text, shared by every row that calls it."""
    return rlx.compile(text)


A = np.ones((4, 3), np.float32)
B = np.ones(3, np.float32)
V = np.ones(4, np.float32)
D = np.ones((4, 3), np.float32)


def readonly(shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, np.float32)
    out.flags.writeable = False
    return out


def overlapping_outs() -> tuple[np.ndarray, np.ndarray]:
    """Two out= arrays that share memory."""
    buffer = np.empty(6, np.float32)
    return buffer[:4], buffer[2:]


def builder_call(build: Callable[[rlx.Builder], object]) -> Callable[[], object]:
    return lambda: build(rlx.Builder())


def builder_graph(build: Callable[[rlx.Builder], object]) -> Callable[[], object]:
    """Build with `build`, then compile: errors the Builder defers to the verifier."""

    def run() -> object:
        b = rlx.Builder()
        b.output(build(b))
        return rlx.compile(b.module())

    return run


CASES: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    # ---- compile(): what it is given and its options
    "compile(None)": (lambda: rlx.compile(None), rlx.CompileError, "takes IR text or a builtin.module, got NoneType"),
    "compile(bytes)": (lambda: rlx.compile(GRAPH.encode()), rlx.CompileError, "got bytes"),
    "compile(a list of texts)": (lambda: rlx.compile([GRAPH]), rlx.CompileError, "got list"),
    "compile(an int)": (lambda: rlx.compile(7), rlx.CompileError, "got int"),
    "threads=2.5": (lambda: rlx.compile(GRAPH, threads=2.5), rlx.CompileError, "threads= takes a count >= 0"),
    "threads=None": (lambda: rlx.compile(GRAPH, threads=None), rlx.CompileError, "threads= takes a count >= 0"),
    "entry=b'f'": (lambda: rlx.compile(GRAPH, entry=b"f"), rlx.CompileError, "entry= takes a string, got bytes"),
    "entry names no function": (
        lambda: rlx.compile(GRAPH, entry="g"),
        rlx.CompileError,
        "expected exactly one function",
    ),
    "entry=''": (lambda: rlx.compile(GRAPH, entry=""), rlx.CompileError, "expected exactly one function"),
    # ---- pipeline strings and pass options
    "pipeline: unknown pass": (
        lambda: rlx.compile(GRAPH, pipeline="no-such-pass"),
        rlx.CompileError,
        "bad pipeline 'no-such-pass'",
    ),
    "pipeline: two commas": (lambda: rlx.compile(GRAPH, pipeline="cse,,dce"), rlx.CompileError, "bad pipeline"),
    "pipeline: unclosed options": (
        lambda: rlx.compile(GRAPH, pipeline="fuse-elementwise{"),
        rlx.CompileError,
        "bad pipeline 'fuse-elementwise{'",
    ),
    "pipeline: unknown option": (
        lambda: rlx.compile(GRAPH, pipeline="fuse-elementwise{bogus=1}"),
        rlx.CompileError,
        "bogus",
    ),
    "pipeline: option of the wrong type": (
        lambda: rlx.compile(GRAPH, pipeline="plan-memory{alignment=abc}"),
        rlx.CompileError,
        "bad pipeline",
    ),
    "pipeline: lists default": (
        lambda: rlx.compile(GRAPH, pipeline="default"),
        rlx.CompileError,
        "pipeline lists 'default'",
    ),
    "pipeline: lists lower-to-llvm": (
        lambda: rlx.compile(GRAPH, pipeline="cse,lower-to-llvm"),
        rlx.CompileError,
        "pipeline lists 'lower-to-llvm'",
    ),
    "pipeline: autodiff of an argument that does not exist": (
        lambda: rlx.compile(GRAPH, pipeline="autodiff{wrt=9}"),
        rlx.CompileError,
        "9",
    ),
    "pipeline: autodiff by an unknown name": (
        lambda: rlx.compile(GRAPH, pipeline="autodiff{wrt=nope}"),
        rlx.CompileError,
        "nope",
    ),
    "pipeline: autodiff with unknown checkpoints": (
        lambda: rlx.compile(GRAPH, pipeline="autodiff{checkpoints=bogus}"),
        rlx.CompileError,
        "bogus",
    ),
    # ---- parse() and vjp()
    "parse(None)": (lambda: rlx.parse(None), rlx.CompileError, "parse() takes IR text, got NoneType"),
    "parse(bytes)": (lambda: rlx.parse(GRAPH.encode()), rlx.CompileError, "got bytes"),
    "vjp wrt an unknown name": (
        lambda: rlx.vjp(GRAPH, wrt=["nope"]),
        rlx.ArgumentError,
        "@f has no argument named 'nope'",
    ),
    "vjp wrt an index out of range": (
        lambda: rlx.vjp(GRAPH, wrt=[7]),
        rlx.ArgumentError,
        "wrt position 7 is out of range",
    ),
    "vjp with unknown checkpoints": (
        lambda: rlx.vjp(GRAPH, checkpoints="sometimes"),
        rlx.ArgumentError,
        "checkpoints='sometimes' is not one of",
    ),
    "vjp of bad text": (lambda: rlx.vjp("func.func @f("), rlx.ParseError, "<input>:1:"),
    # ---- calling an executable with the wrong arrays
    "bool array for f32": (
        lambda: exe(GRAPH)(A.astype(bool), B),
        rlx.ArgumentError,
        "must have dtype float32, got bool",
    ),
    "int64 array for i32": (
        lambda: exe(INT_GRAPH)(np.ones(4, np.int64)),
        rlx.ArgumentError,
        "must have dtype int32, got int64",
    ),
    "complex array for f32": (
        lambda: exe(GRAPH)(A.astype(np.complex64), B),
        rlx.ArgumentError,
        "must have dtype float32, got complex64",
    ),
    "a 3-d array for a 2-d input": (
        lambda: exe(GRAPH)(A[None], B),
        rlx.ArgumentError,
        "must have shape [4, 3], got [1, 4, 3]",
    ),
    "a 1-d array for a 2-d input": (
        lambda: exe(GRAPH)(A.ravel(), B),
        rlx.ArgumentError,
        "must have shape [4, 3], got [12]",
    ),
    "an empty array": (
        lambda: exe(GRAPH)(np.empty((0, 3), np.float32), B),
        rlx.ArgumentError,
        "must have shape [4, 3], got [0, 3]",
    ),
    "a string for an array": (lambda: exe(GRAPH)("A", B), rlx.ArgumentError, "must be a NumPy array"),
    "None for an array": (lambda: exe(GRAPH)(None, B), rlx.ArgumentError, "must be a NumPy array"),
    "a dict for an array": (lambda: exe(GRAPH)({"a": A}, B), rlx.ArgumentError, "must be a NumPy array"),
    "inputs by keyword": (lambda: exe(GRAPH)(A, b=B), rlx.ArgumentError, "takes its inputs by position"),
    "read-only out among two": (
        lambda: exe(TWO_RESULTS)(V, out=(np.empty(4, np.float32), readonly((4,)))),
        rlx.ArgumentError,
        "writeable C-contiguous",
    ),
    "two out arrays sharing memory": (
        lambda: exe(TWO_RESULTS)(V, out=overlapping_outs()),
        rlx.ArgumentError,
        "overlaps another argument",
    ),
    "the same out array twice": (
        lambda: exe(TWO_RESULTS)(V, out=(o := np.empty(4, np.float32), o)),
        rlx.ArgumentError,
        "overlaps another argument",
    ),
    "out overlapping an input through a view": (
        lambda: exe(TWO_RESULTS)((buf := np.zeros(8, np.float32))[:4], out=(buf[2:6], np.empty(4, np.float32))),
        rlx.ArgumentError,
        "overlaps another argument",
    ),
    "out of the wrong dtype among two": (
        lambda: exe(TWO_RESULTS)(V, out=(np.empty(4, np.float32), np.empty(4, np.float64))),
        rlx.ArgumentError,
        "out[1] must have dtype float32",
    ),
    "int for a 0-d f32 of a shaped input": (lambda: exe(GRAPH)(A, 1), rlx.ArgumentError, "got int"),
    # ---- run time: an index out of range never reads out of bounds
    "gather index past the end": (
        lambda: exe(GATHER)(D, np.array([0, 4], np.int64)),
        IndexError,
        "rlx.gather: index 4 is out of range for axis 0 with size 4",
    ),
    "gather index below -n": (
        lambda: exe(GATHER)(D, np.array([-5, 0], np.int64)),
        IndexError,
        "rlx.gather: index -5 is out of range",
    ),
    "gather index at i64 max": (
        lambda: exe(GATHER)(D, np.array([2**63 - 1, 0], np.int64)),
        IndexError,
        "is out of range for axis 0",
    ),
    "gather_elements index past the end": (
        lambda: exe(GATHER_ELEMENTS)(D, np.full((4, 3), 3, np.int32)),
        IndexError,
        "rlx.gather_elements: index 3 is out of range for axis 1 with size 3",
    ),
    "gather_nd index past the end": (
        lambda: exe(GATHER_ND)(D, np.array([[0, 0], [0, 3]], np.int64)),
        IndexError,
        "rlx.gather_nd: index 3 is out of range",
    ),
    "a splat result of 10^14 elements": (exe(HUGE_SPLAT), rlx.AllocationError, "its results cannot be allocated"),
    # ---- Builder misuse
    "Builder unknown dtype": (builder_call(lambda b: b.input((2,), "f128")), rlx.ArgumentError, "f128"),
    "Builder string shape": (
        builder_call(lambda b: b.input("4x3")),
        rlx.ArgumentError,
        "a shape is a tuple of dimensions, got str",
    ),
    "Builder None dimension": (builder_call(lambda b: b.input((None, 3))), rlx.ArgumentError, "None"),
    "Builder dimension beyond i64": (
        builder_graph(lambda b: b.neg(b.input((2**64,)))),
        rlx.VerificationError,
        "tensor<18446744073709551616xf32> is too large",
    ),
    "Builder unknown op by name": (
        builder_call(lambda b: b.unary("frobnicate", b.input((2,)))),
        UnknownOpError,
        "frobnicate",
    ),
    "Builder binary op as unary": (builder_call(lambda b: b.unary("add", b.input((2,)))), UnknownOpError, "add"),
    "Builder incompatible broadcast": (
        builder_call(lambda b: b.add(b.input((4, 3)), b.input((4,)))),
        rlx.VerificationError,
        "incompatible broadcast shapes",
    ),
    "Builder mixed element types": (
        builder_graph(lambda b: b.mul(b.input((3,)), b.input((3,), "f64"))),
        rlx.VerificationError,
        "element types differ",
    ),
    "Builder transpose perm too short": (
        builder_graph(lambda b: b.transpose(b.input((4, 3)), [0])),
        rlx.VerificationError,
        "perm has 1 entries, expected 2",
    ),
    "Builder transpose repeated axis": (
        builder_graph(lambda b: b.transpose(b.input((4, 3)), [1, 1])),
        rlx.VerificationError,
        "perm [1, 1] is not a permutation of 0..1",
    ),
    "Builder reshape to another count": (
        builder_graph(lambda b: b.reshape(b.input((4, 3)), (5,))),
        rlx.VerificationError,
        "cannot reshape 12 elements into 5",
    ),
    "Builder expand to an incompatible shape": (
        builder_graph(lambda b: b.expand(b.input((4, 3)), (4, 4))),
        rlx.VerificationError,
        "cannot broadcast shape [4, 3] to [4, 4]",
    ),
    "Builder narrow past the end": (
        builder_graph(lambda b: b.narrow(b.input((4, 3)), 0, 3, 5)),
        rlx.VerificationError,
        "start 3 and length 5 do not fit axis 0 of size 4",
    ),
    "Builder narrow on a missing axis": (
        builder_graph(lambda b: b.narrow(b.input((4, 3)), 5, 0, 1)),
        rlx.VerificationError,
        "'rlx.narrow' axis 5 is out of range for rank 2",
    ),
    "Builder reverse a missing axis": (
        builder_graph(lambda b: b.reverse(b.input((4, 3)), [2])),
        rlx.VerificationError,
        "'rlx.reverse' axis 2 is out of range for rank 2",
    ),
    "Builder concat on a missing axis": (
        builder_call(lambda b: b.concat([b.input((4, 3)), b.input((4, 3))], 3)),
        rlx.ArgumentError,
        "axis 3",
    ),
    "Builder gather with float indices": (
        builder_graph(lambda b: b.gather(b.input((4, 3)), b.input((2,)))),
        rlx.VerificationError,
        "indices must have element type i32 or i64, got f32",
    ),
    "Builder matmul of mismatched K": (
        builder_call(lambda b: b.matmul(b.input((4, 3)), b.input((4, 3)))),
        rlx.ArgumentError,
        "matmul",
    ),
    "Builder reduce over a missing axis": (
        builder_graph(lambda b: b.reduce_sum(b.input((4, 3)), [2])),
        rlx.VerificationError,
        "axes entry 2 is out of range for rank 2",
    ),
    "Builder softmax over a missing axis": (
        builder_graph(lambda b: b.softmax(b.input((4, 3)), 2)),
        rlx.VerificationError,
        "'rlx.softmax' axis 2 is out of range for rank 2",
    ),
    "Builder transpose perm None": (
        builder_call(lambda b: b.transpose(b.input((2, 3)), None)),
        rlx.ArgumentError,
        "Builder.transpose perm must be a list of integers, got None",
    ),
    "Builder reduce axes as a string": (
        builder_call(lambda b: b.reduce_sum(b.input((2, 3)), "0")),
        rlx.ArgumentError,
        "reduction axes must be a list of integers, got '0'",
    ),
    "Builder gather axis as a string": (
        builder_call(lambda b: b.gather(b.input((2, 3)), b.input((2,), "i64"), "0")),
        rlx.ArgumentError,
        "axis must be an integer, got '0'",
    ),
    "Builder narrow with a float start": (
        builder_call(lambda b: b.narrow(b.input((4,)), 0, 1.5, 2)),
        rlx.ArgumentError,
        "Builder.narrow start must be an integer, got 1.5",
    ),
    "Builder softmax axis None": (
        builder_call(lambda b: b.softmax(b.input((4,)), None)),
        rlx.ArgumentError,
        "Builder.softmax axis must be an integer, got None",
    ),
    "Builder reverse axes of floats": (
        builder_call(lambda b: b.reverse(b.input((4,)), [0.0])),
        rlx.ArgumentError,
        "Builder.reverse axes entry must be an integer, got 0.0",
    ),
    "Builder reshape to a negative dimension": (
        builder_call(lambda b: b.reshape(b.input((4,)), (-4,))),
        rlx.ArgumentError,
        "each dimension must be an integer >= 0, got -4",
    ),
    "Builder pad cutting more than the shape": (
        builder_call(lambda b: b.pad(b.input((4,)), [-5], [0])),
        rlx.ArgumentError,
        "cut more than the shape [4] holds",
    ),
    "Builder dtype as a NumPy type": (
        builder_call(lambda b: b.input((2,), np.float32)),
        rlx.ArgumentError,
        "an element type is a name such as 'f32'",
    ),
    "Builder where with a float condition": (
        builder_graph(lambda b: b.where(b.input((3,)), b.input((3,)), b.input((3,)))),
        rlx.VerificationError,
        "condition must have element type i1",
    ),
    "Builder cast to an unknown type": (builder_call(lambda b: b.cast(b.input((3,)), "f7")), rlx.ArgumentError, "f7"),
    "Builder constant of the wrong kind": (builder_call(lambda b: b.constant("one")), rlx.ArgumentError, "one"),
    "Builder constant inf for i32": (
        builder_call(lambda b: b.constant(float("inf"), "i32")),
        rlx.ArgumentError,
        "does not fit i32",
    ),
    "Builder constant 1e39 for f32": (
        builder_call(lambda b: b.constant(1e39, "f32")),
        rlx.ArgumentError,
        "does not fit f32",
    ),
    "Builder constant -1 for ui8": (
        builder_call(lambda b: b.constant(-1, "ui8")),
        rlx.ArgumentError,
        "does not fit ui8",
    ),
    "Builder complex constant for f32": (builder_call(lambda b: b.constant(1 + 2j, "f32")), rlx.ArgumentError, "f32"),
    "Builder ragged constant": (builder_call(lambda b: b.constant([[1.0, 2.0], [3.0]])), rlx.ArgumentError, "constant"),
    "Builder output of a number": (builder_call(lambda b: b.output(3)), rlx.ArgumentError, "output"),
    "Builder value of another builder": (
        lambda: (lambda x: (b := rlx.Builder(), b.output(b.neg(x)), rlx.compile(b.module())))(
            rlx.Builder().input((3,))
        ),
        rlx.VerificationError,
        "using value defined out of its IsolatedFromAbove parent",
    ),
    "Builder function name with a space": (
        lambda: rlx.compile(rlx.Builder("a b").module()),
        rlx.CompileError,
        "cannot be a JIT symbol",
    ),
    "Builder transpose perm out of range": (
        builder_call(lambda b: b.transpose(b.input((2, 3)), [5, 0])),
        rlx.ArgumentError,
        "perm [5, 0] names an axis its rank-2 input does not",
    ),
    "Builder complex array into f32": (
        builder_call(lambda b: b.constant(np.array([1 + 2j, 3 - 1j], np.complex64), "f32")),
        rlx.ArgumentError,
        "its imaginary part is not 0",
    ),
    "Builder scan body returning a number": (
        builder_call(lambda b: b.scan(b.input((3,)), lambda bb, carry, x: 1.0, xs=[b.input((4, 3))])),
        rlx.ArgumentError,
        "a Builder body must return values it built, got float",
    ),
    "Builder scan without xs": (
        builder_call(lambda b: b.scan(b.input((3,)), lambda bb, carry: bb.neg(carry))),
        rlx.ArgumentError,
        "Builder.scan needs at least one per-step input (xs)",
    ),
    "compile(text with a lone surrogate)": (
        lambda: rlx.compile(GRAPH.replace("%t =", "// \ud800\n  %t =")),
        rlx.ParseError,
        "<input>:3: the text contains a lone surrogate (U+D800)",
    ),
    "parse(text with a lone surrogate)": (
        lambda: rlx.parse(GRAPH.replace("rlx.tanh", "rlx.tanh\udfff")),
        rlx.ParseError,
        "lone surrogate (U+DFFF)",
    ),
    # ---- targets, tuning and measuring
    "target: an unknown CPU": (
        lambda: rlx.compile(GRAPH, target="pentium9"),
        rlx.TargetError,
        "unknown target 'pentium9'",
    ),
    "target: not a name": (lambda: rlx.compile(GRAPH, target=7), rlx.TargetError, "a target is a name"),
    "tuning: an unknown knob": (
        lambda: rlx.compile(GRAPH, tuning={"tile_rows": 4}),
        rlx.TuningError,
        "unknown tuning knob 'tile_rows'",
    ),
    "tuning: a negative value": (
        lambda: rlx.compile(GRAPH, tuning={"region_block": -1}),
        rlx.TuningError,
        "'region_block' takes an integer >= 1",
    ),
    "tuning: not a mapping": (
        lambda: rlx.compile(GRAPH, tuning="region_block=2"),
        rlx.CompileError,
        "tuning= takes a mapping",
    ),
    "tune: a string": (lambda: rlx.compile(GRAPH, tune="yes"), rlx.CompileError, "tune= takes True, False or seconds"),
}


GENERIC_SPLAT = """func.func @f() -> tensor<f32> {
  %c = "rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
  %s = rlx.reduce_sum %c {axes = array<i64: 0>} : (tensor<1000000000xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
"""
SCAN_WITHOUT_XS = """func.func @f(%h0: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %h = rlx.scan %h0, %w {length = 5 : i64, num_broadcast = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%c: tensor<3xf32>, %b: tensor<3xf32>):
    %n = rlx.add %c, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    rlx.yield %n : tensor<3xf32>
  }
  func.return %h : tensor<3xf32>
}
"""


def arena_and_sum(text: str) -> tuple[bool, float]:
    """Whether the arena stays under 16 KiB, and the one result."""
    executable = rlx.compile(text)
    return executable.memory_plan.arena_size <= 16 << 10, float(executable()[0])


def complex_constant() -> tuple[str, list[complex]]:
    b = rlx.Builder()
    b.output(b.constant(np.array([1 + 2j, 3 - 1j], np.complex64)))
    (value,) = rlx.compile(b.module())()
    return str(value.dtype), value.tolist()


RESULTS: dict[str, tuple[Callable[[], object], object]] = {
    "a generic splat of 10^9 f32 summed": (lambda: arena_and_sum(GENERIC_SPLAT), (True, 1e9)),
    "a hex splat of 10^9 f32 summed": (
        lambda: arena_and_sum(GENERIC_SPLAT.replace("dense<1.0>", 'dense<"0x0000803F">')),
        (True, 1e9),
    ),
    "a scan with no xs runs its length": (
        exe(SCAN_WITHOUT_XS)(np.zeros(3, np.float32), np.array([1, 2, 3], np.float32))[0].tolist,
        [5.0, 10.0, 15.0],
    ),
    "Builder constant of a complex64 array keeps its dtype": (complex_constant, ("complex64", [1 + 2j, 3 - 1j])),
}
"""Hostile inputs that are valid: `name: (call, the value it must return)`."""


def _nested(depth: int, open_: str, close: str, inner: str) -> str:
    return open_ * depth + inner + close * depth


def _one_op(element: str) -> str:
    t = f"tensor<2x{element}>"
    return f"func.func @f(%a: {t}) -> {t} {{\n  %n = rlx.neg %a : ({t}) -> {t}\n  func.return %n : {t}\n}}"


CLI_WORDING = {
    "a NUL byte in an op name": "Unexpected character",  # compile() checks for NUL bytes before xDSL's lexer
    "a NUL byte in a type": "Unexpected character",
}

GENERATED_IR: dict[str, tuple[str, type[Exception], str]] = {
    "a NUL byte in an op name": (GRAPH.replace("rlx.tanh", "rlx.\x00tanh"), rlx.ParseError, "NUL byte"),
    "a NUL byte in a type": (GRAPH.replace("tensor<3xf32>", "tensor<3x\x00f32>", 1), rlx.ParseError, "NUL byte"),
    "10,000 nested regions": (_nested(10_000, "builtin.module {", "}", ""), rlx.ParseError, "nests too deeply"),
    "3,000 nested complex types": (_one_op(_nested(3000, "complex<", ">", "f32")), rlx.ParseError, "nests too deeply"),
    "3,000 nested array attributes": (
        GRAPH.replace("rlx.tanh %s", "rlx.tanh %s {x = " + _nested(3000, "[", "]", "1") + "}"),
        rlx.ParseError,
        "nests too deeply",
    ),
    "3,000 nested parentheses in an affine map": (
        GRAPH.replace("rlx.tanh %s", "rlx.tanh %s {m = affine_map<(d0) -> (" + _nested(3000, "(", ")", "d0") + ")>}"),
        rlx.ParseError,
        "nests too deeply",
    ),
    "rank 3,000": (
        _one_op("1x" * 3_000 + "f32").replace("tensor<2x1x", "tensor<1x"),
        rlx.VerificationError,
        "rlx tensors have at most 64 dimensions",
    ),
    "a 5,000-digit integer constant": (
        "func.func @f() -> tensor<i64> {\n  %c = rlx.constant dense<"
        + "9" * 5000
        + "> : tensor<i64>\n  func.return %c : tensor<i64>\n}",
        rlx.ParseError,
        "digits",
    ),
    "a 5,000-digit float constant": (
        "func.func @f() -> tensor<f64> {\n  %c = rlx.constant dense<"
        + "9" * 5000
        + ".0> : tensor<f64>\n  func.return %c : tensor<f64>\n}",
        rlx.ParseError,
        "a literal beyond f64's range is out of range for f64",
    ),
}
