"""The Python API: parse/compile/call, its checks and its error messages."""

from __future__ import annotations

import numpy as np
import pytest

import rlx_mlir as rlx

ADD = """
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
"""


@pytest.fixture(scope="module")
def add() -> rlx.runtime.Executable:
    return rlx.compile(ADD)


def arrays() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)


def test_call_returns_tuple_of_numpy_arrays(add) -> None:
    a, b = arrays()
    (y,) = add(a, b)
    np.testing.assert_array_equal(y, a + b)


def test_out_arrays_are_written_in_place(add) -> None:
    a, b = arrays()
    out = np.empty((4, 3), np.float32)
    (y,) = add(a, b, out=(out,))
    assert y is out
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros((4, 3), np.float32),), "takes 2 arrays, got 1"),
        ((np.zeros((4, 3), np.float64), np.zeros(3, np.float32)), "argument #0 must have dtype float32, got float64"),
        (
            (np.zeros((3, 4), np.float32), np.zeros(3, np.float32)),
            r"argument #0 must have shape \[4, 3\], got \[3, 4\]",
        ),
        ((np.zeros((4, 3), np.float32), [1.0, 2.0, 3.0]), "argument #1 must be a NumPy array"),
    ],
)
def test_wrong_arguments_raise_argument_error(add, args, message) -> None:
    with pytest.raises(rlx.ArgumentError, match=message):
        add(*args)


def test_wrong_out_arrays_raise(add) -> None:
    a, b = arrays()
    with pytest.raises(rlx.ArgumentError, match="out\\[0\\] must have shape"):
        add(a, b, out=(np.empty((4, 4), np.float32),))
    with pytest.raises(rlx.ArgumentError, match="1 results, got 2"):
        add(a, b, out=(np.empty((4, 3), np.float32),) * 2)
    with pytest.raises(rlx.ArgumentError, match="C-contiguous"):
        add(a, b, out=(np.empty((3, 4), np.float32).T,))
    with pytest.raises(rlx.ArgumentError, match="overlaps"):
        add(a, b, out=(a,))


def test_non_contiguous_input_is_accepted(add) -> None:
    a, b = arrays()
    strided = np.asfortranarray(a)
    (y,) = add(strided, b)
    np.testing.assert_array_equal(y, a + b)


def test_memory_plan_and_llvm_ir_are_exposed() -> None:
    exe = rlx.compile(
        """
        func.func @f(%a: tensor<1000xf32>) -> tensor<1000xf32> {
          %c = rlx.constant dense<2.0> : tensor<1000xf32>
          %e = rlx.exp %a : (tensor<1000xf32>) -> tensor<1000xf32>
          %r = rlx.reshape %e : (tensor<1000xf32>) -> tensor<10x100xf32>
          %r2 = rlx.reshape %r : (tensor<10x100xf32>) -> tensor<1000xf32>
          %m = rlx.mul %r2, %c : (tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
          func.return %m : tensor<1000xf32>
        }""",
        pipeline="",
    )
    plan = exe.memory_plan
    assert plan.arena_size >= plan.lower_bound > 0
    assert "c" not in plan.offsets and plan.constant_bytes == 4000  # constants are outside the arena
    assert plan.offsets["r"] == plan.offsets["e"] == plan.offsets["r2"]  # views alias their source
    assert 'define void @"f"(ptr' in exe.llvm_ir
    a = np.linspace(-3, 3, 1000, dtype=np.float32)
    np.testing.assert_allclose(exe(a)[0], 2 * np.exp(a.astype(np.float64)), rtol=3e-7)


def test_parse_error_has_line_and_column() -> None:
    with pytest.raises(rlx.ParseError, match=r"<input>:3:"):
        rlx.parse(ADD.replace("rlx.add %a, %b", "rlx.add %a %b"))


def test_verifier_error_names_op_and_rule() -> None:
    with pytest.raises(rlx.VerificationError, match="'rlx.add' operands have incompatible broadcast shapes"):
        rlx.parse(ADD.replace("tensor<3xf32>", "tensor<5xf32>"))


def test_unknown_pass_and_missing_entry_are_compile_errors() -> None:
    with pytest.raises(rlx.CompileError, match="no-such-pass"):
        rlx.compile(ADD, pipeline="no-such-pass")
    with pytest.raises(rlx.CompileError, match="exactly one function"):
        rlx.compile(ADD + ADD.replace("@f", "@g"))
    exe = rlx.compile(ADD + ADD.replace("@f", "@g"), entry="g")
    assert exe.name == "g"


def test_compiling_twice_hits_the_cache() -> None:
    first, second = rlx.compile(ADD), rlx.compile(ADD)
    assert first._compiled is second._compiled


def test_builder_makes_the_same_graph_as_text() -> None:
    b = rlx.Builder("f")
    a, bias = b.input((4, 3)), b.input((3,))
    b.output(b.add(a, bias))
    built = b.module()
    assert str(built) == str(rlx.parse(ADD)).replace("%a", "%0").replace("%b", "%1").replace("%s", "%2")
    x, y = arrays()
    np.testing.assert_array_equal(rlx.compile(built)(x, y)[0], x + y)


def test_builder_rejects_bad_broadcast() -> None:
    b = rlx.Builder()
    with pytest.raises(rlx.VerificationError, match="incompatible broadcast"):
        b.add(b.input((4, 3)), b.input((5,)))
    with pytest.raises(AttributeError, match="no op 'deconvolve'"):
        getattr(b, "deconvolve")  # noqa: B009 - the attribute is looked up to fail


def test_large_kernel_runs_on_both_threads_and_matches() -> None:
    n = 1 << 20
    exe = rlx.compile(
        f"""func.func @f(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{
          %t = rlx.tanh %a : (tensor<{n}xf32>) -> tensor<{n}xf32>
          func.return %t : tensor<{n}xf32>
        }}"""
    )
    a = np.linspace(-5, 5, n, dtype=np.float32)
    np.testing.assert_allclose(exe(a)[0], np.tanh(a.astype(np.float64)), rtol=1e-6, atol=1e-7)
    import os

    if len(os.sched_getaffinity(0)) > 1:
        assert "rlx_pool_parallel_for" in exe.llvm_ir


def test_builder_data_movement_matches_numpy() -> None:
    b = rlx.Builder("moves")
    x = b.input((4, 6))
    ids = b.input((5,), "i64")
    t = b.transpose(x, [1, 0])
    p = b.pad(x, [1, 0], [0, 2], mode="reflect")
    g = b.gather(x, ids, axis=0)
    c = b.concat([x, b.narrow(x, 1, 1, 3)], axis=1)
    r = b.reverse(b.slice(x, [3, 0], [-1, 2], [4, 3]), [1])
    grads = b.activation_backward(x, b.relu_backward(x, x), "tanh")
    b.output(t, p, g, c, r, grads)
    exe = rlx.compile(b.module())
    xv = np.arange(24, dtype=np.float32).reshape(4, 6) - 7
    iv = np.array([3, -1, 0, 2, 2], np.int64)
    got = exe(xv, iv)
    np.testing.assert_array_equal(got[0], xv.T)
    np.testing.assert_array_equal(got[1], np.pad(xv, ((1, 0), (0, 2)), mode="reflect"))
    np.testing.assert_array_equal(got[2], xv[iv])
    np.testing.assert_array_equal(got[3], np.concatenate([xv, xv[:, 1:4]], axis=1))
    np.testing.assert_array_equal(got[4], xv[::-1, ::2][:, ::-1])
    dx = np.where(xv > 0, xv, 0) * (1 - np.tanh(xv.astype(np.float64)) ** 2)
    np.testing.assert_allclose(got[5], dx, rtol=1e-5, atol=1e-6)


def test_builder_bad_movement_is_a_verification_error() -> None:
    b = rlx.Builder()
    x = b.input((4, 6))
    b.output(b.transpose(x, [0, 0]))
    with pytest.raises(rlx.VerificationError, match="not a permutation"):
        b.module()
