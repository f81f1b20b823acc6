"""A splat dense literal stays one value in every syntax (issue 22, section 3).

`"rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}>` (the
generic form) used to be expanded by xDSL's parser: 23 GB and 74 s to parse at
10^9 elements. `RlxParser` (rlx_mlir/dialects/parser.py) reads it as the
custom form is read: one value, the shape in the result type. Each huge case
runs in a child process whose address space is capped (`MEMORY_CAP`), so a
regression fails with a MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import pickle
import re
import resource
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from closeness import FLOAT_TYPES

import rlx_mlir as rlx
from rlx_mlir.passes.default_pipeline import TENSOR_PIPELINE

MEMORY_CAP = 3 << 30
"""Bytes of address space a huge case may reserve: the JIT and thread pool need ~1 GB, one
expanded 10^9-element splat needs 4 GB of packed data and far more as Python floats."""

BILLION, TRILLION = 10**9, 10**12


def constant(n: int, syntax: str, literal: str = "1.0") -> str:
    """The splat `literal` of `n` f32s as an rlx.constant written in `syntax`."""
    t = f"tensor<{n}xf32>"
    return {
        "custom": f"rlx.constant dense<{literal}> : {t}",
        "generic": f'"rlx.constant"() <{{value = dense<{literal}> : {t}}}> : () -> {t}',
        "generic attribute": f'"rlx.constant"() {{value = dense<{literal}> : {t}}} : () -> {t}',
    }[syntax]


def summed(n: int, syntax: str, literal: str = "1.0") -> str:
    """reduce_sum of the splat: every element read, one f32 out."""
    t = f"tensor<{n}xf32>"
    return (
        f"func.func @f() -> tensor<f32> {{\n  %c = {constant(n, syntax, literal)}\n"
        f"  %s = rlx.reduce_sum %c {{axes = array<i64: 0>}} : ({t}) -> tensor<f32>\n"
        f"  func.return %s : tensor<f32>\n}}\n"
    )


def narrowed(n: int, syntax: str) -> str:
    """Four elements of the splat, negated: a result small enough to check at 10^12."""
    t = f"tensor<{n}xf32>"
    return (
        f"func.func @f() -> tensor<4xf32> {{\n  %c = {constant(n, syntax)}\n"
        f"  %s = rlx.narrow %c {{axis = 0 : i64, start = {n - 6} : i64, length = 4 : i64}} : ({t}) -> tensor<4xf32>\n"
        f"  %r = rlx.neg %s : (tensor<4xf32>) -> tensor<4xf32>\n  func.return %r : tensor<4xf32>\n}}\n"
    )


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=_cap_memory,
    )


COMPILE_AND_RUN = """
import json, sys
import rlx_mlir as rlx
from rlx_mlir.passes.default_pipeline import TENSOR_PIPELINE
exe = rlx.compile(sys.argv[1])
print(json.dumps({"arena": exe.memory_plan.arena_size, "result": exe()[0].tolist()}))
"""


def compiled(text: str) -> dict[str, object]:
    done = run_capped(COMPILE_AND_RUN, text)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


ARENA_BOUND = 64 + 8 << 10
"""The arena a huge splat's sum may take, whatever its size: the result (64 bytes)
and the reduction's partial sums (at most 1024 of 8 bytes); the scalar is a
constant, outside the arena."""


@cache
def small_arena() -> int:
    """The arena of the sum of a splat of 10^9 elements written in the custom form."""
    done = run_capped(
        "import sys, rlx_mlir as rlx; print(rlx.compile(sys.argv[1]).memory_plan.arena_size)", summed(BILLION, "custom")
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) <= ARENA_BOUND
    return int(done.stdout)


@pytest.mark.parametrize("syntax", ["custom", "generic", "generic attribute"])
def test_a_billion_element_splat_sums_in_a_constant_arena(syntax: str) -> None:
    found = compiled(summed(BILLION, syntax))
    assert found == {"arena": small_arena(), "result": float(BILLION)}


@pytest.mark.parametrize("syntax", ["custom", "generic"])
def test_a_trillion_element_splat_compiles_in_the_same_arena(syntax: str) -> None:
    """Summing 10^12 elements takes minutes to run: the arena is checked on the sum,
    the values on four elements of the splat."""
    done = run_capped(
        "import sys, rlx_mlir as rlx; print(rlx.compile(sys.argv[1]).memory_plan.arena_size)", summed(TRILLION, syntax)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) == small_arena()
    assert compiled(narrowed(TRILLION, syntax)) == {"arena": 0, "result": [-1.0] * 4}  # the scalar is a constant


@pytest.mark.parametrize("syntax", ["custom", "generic"])
def test_a_hex_splat_stays_one_value(syntax: str) -> None:
    """`dense<"0x0000803F">` (1.0 as little-endian bytes): xDSL repeats the bytes for every element."""
    assert compiled(summed(BILLION, syntax, '"0x0000803F"')) == {"arena": small_arena(), "result": float(BILLION)}


NON_FINITE = {"-inf": -np.inf, "inf": np.inf, "nan": np.nan}


@pytest.mark.parametrize("syntax", ["custom", "generic"])
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("name", sorted(NON_FINITE))
def test_a_non_finite_splat_prints_as_its_bits_and_reads_back(name: str, dtype: str, syntax: str) -> None:
    """xDSL prints a non-finite splat as its bit pattern (`dense<0xff800000>` is -inf);
    it used to read back as the integer's value (4.29e9): a causal mask's -inf in an
    executable pickled as its IR text, or in IR piped from one rlx-opt to another."""
    b = rlx.Builder("non_finite")
    b.output(b.constant(np.float64(NON_FINITE[name]), dtype))
    found = re.search(r"dense<(0x[0-9a-f]+)>", str(b.module()))
    assert found is not None, str(b.module())
    t = f"tensor<3x{dtype}>"
    written = {
        "custom": f"rlx.constant dense<{found[1]}> : {t}",
        "generic": f'"rlx.constant"() <{{value = dense<{found[1]}> : {t}}}> : () -> {t}',
    }[syntax]
    source = f"func.func @f(%x: {t}) -> {t} {{\n  %c = {written}\n  %y = rlx.add %x, %c : ({t}, {t}) -> {t}\n  func.return %y : {t}\n}}"
    (got,) = rlx.compile(source)(np.zeros(3, FLOAT_TYPES[dtype]))
    np.testing.assert_array_equal(got.astype(np.float64), np.full(3, NON_FINITE[name]))


def test_a_pickled_executable_keeps_its_minus_infinity() -> None:
    b = rlx.Builder("masked")
    x = b.input((4,), "f32")
    b.output(b.max(x, b.constant(np.full(4, -np.inf, np.float32))))
    exe = rlx.compile(b.module())
    values = np.array([-1e30, 0, 1, -np.inf], np.float32)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(exe))(values)[0], exe(values)[0])


@pytest.mark.parametrize(
    ("literal", "column", "shown"),
    [
        ("0x1ff800000", 25, "0x1ff800000"),
        ("[0x0, 0x1ff800000]", 31, "0x1ff800000"),
        ("-0x3f800000", 25, "-0x3f800000"),
        ("[0x0, -0x3f800000]", 31, "-0x3f800000"),
    ],
)
def test_a_hex_float_that_is_no_bit_pattern_is_located(literal: str, column: int, shown: str) -> None:
    """Wider than the type or negative, in a splat or a list: the same error at the literal."""
    with pytest.raises(rlx.ParseError, match=rf"(?s)<input>:1:{column}\b.*{shown} does not fit in f32"):
        rlx.compile(f"%c = rlx.constant dense<{literal}> : tensor<2xf32>")


def test_rlx_opt_keeps_a_generic_splat_one_value(tmp_path: Path) -> None:
    """rlx-opt parses through the same parser: planned, the splat is one f32 in the arena."""
    source = tmp_path / "splat.mlir"
    source.write_text(summed(TRILLION, "generic"))
    done = run_capped(
        "import sys; from rlx_mlir.cli.opt import main; main(sys.argv[1:])",
        str(source),
        "-p",
        f"{TENSOR_PIPELINE},plan-memory",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"rlx.arena_size = {small_arena()} : i64" in done.stdout
    assert "dense<1.000000e+00> : tensor<f32>" in done.stdout
    done = run_capped("import sys; from rlx_mlir.cli.opt import main; main(sys.argv[1:])", str(source), "-p", "default")
    assert done.returncode == 0 and "llvm.func" in done.stdout, done.stderr[-2000:]


def test_the_generic_form_reads_as_the_custom_form() -> None:
    generic, custom = rlx.parse(summed(10, "generic")), rlx.parse(summed(10, "custom"))
    assert str(generic) == str(custom)
    value = next(op for op in generic.walk() if isinstance(op, rlx.dialects.rlx.ConstantOp)).value
    assert value.type.get_shape() == ()


def test_a_generic_splat_of_the_wrong_type_is_the_verifier_error() -> None:
    text = summed(3, "generic").replace("tensor<3xf32>}>", "tensor<2xf32>}>", 1)
    with pytest.raises(
        rlx.VerificationError, match="value type tensor<2xf32> must equal the result type tensor<3xf32>"
    ):
        rlx.compile(text)


def test_a_generic_splat_out_of_range_is_located() -> None:
    with pytest.raises(rlx.ParseError, match=r"(?s)<input>:2:41.*1e\+39 is out of range for f32"):
        rlx.compile(summed(BILLION, "generic", "1.0e39"))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            f"func.func @f() -> tensor<{BILLION}xf32> {{\n  %c = arith.constant dense<1.0> : "
            f"tensor<{BILLION}xf32>\n  func.return %c : tensor<{BILLION}xf32>\n}}",
            id="arith.constant",
        ),
        pytest.param(
            f"func.func @f() -> tensor<{BILLION}xcomplex<f32>> {{\n  %c = rlx.constant dense<(1.0, 2.0)> : "
            f"tensor<{BILLION}xcomplex<f32>>\n  func.return %c : tensor<{BILLION}xcomplex<f32>>\n}}",
            id="complex",
        ),
        pytest.param(
            summed(BILLION, "generic").replace(f"() -> tensor<{BILLION}xf32>", f"() -> tensor<{BILLION + 1}xf32>"),
            id="generic of another type",
        ),
    ],
)
def test_a_huge_splat_rlx_does_not_keep_is_refused_not_expanded(text: str) -> None:
    """A splat no rlx.constant keeps as one value would be expanded by xDSL: refused past 64 MiB."""
    done = run_capped(
        """
        import sys, rlx_mlir as rlx
        try:
            rlx.parse(sys.argv[1])
        except rlx.ParseError as error:
            print(str(error).splitlines()[-1].strip())
        """,
        text,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("a splat dense literal of 4000000000 bytes") or done.stdout.startswith(
        "a splat dense literal of 8000000000 bytes"
    ), done.stdout


def test_a_small_splat_elsewhere_is_still_xdsls() -> None:
    """Below the bound, a splat outside rlx.constant's value parses as before."""
    module = rlx.parse(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %n = rlx.neg %a {note = dense<2.0> : tensor<4xf32>} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %n : tensor<4xf32>\n}"
    )
    note = next(op for op in module.walk() if op.name == "rlx.neg").attributes["note"]
    assert list(note.get_values()) == [2.0] * 4
    assert np.prod(note.type.get_shape()) == 4
