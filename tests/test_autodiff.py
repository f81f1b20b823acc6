"""The `autodiff` pass and `rlx_mlir.vjp`: every adjoint against central finite
differences in float64, random graphs of differentiable ops (hypothesis), and
the conventions and errors of the API.

Each check compiles the VJP function once and evaluates the scalar
<cotangents, outputs> with it (its first results are the original outputs), so
the finite differences and the gradients come from the same compiled code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_records import RECORDS, record, short_name, unary_ops
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir import Builder
from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.passes.autodiff import ADJOINTS
from rlx_mlir.verification import function_block

Domain = tuple[float, float]


def _function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def _is_float(t) -> bool:
    return str(element_type(t)) in ("f16", "bf16", "f32", "f64")


def check_vjp(
    module: ModuleOp,
    domains: Sequence[Domain] | Domain = (-2.0, 2.0),
    eps: float = 1e-6,
    tol: float = 1e-6,
    seed: int = 0,
    wrt: Sequence[int] = (),
) -> ModuleOp:
    """The VJP of `module` (with respect to `wrt`, default every float argument)
    against central differences of <dy, f(x)>, element by element; returns the VJP module."""
    rng = np.random.default_rng(seed)
    function = _function(module)
    arg_types = list(function.function_type.inputs)
    out_types = list(function.function_type.outputs)
    if isinstance(domains[0], (int, float)):
        domains = [domains] * len(arg_types)  # type: ignore[list-item]
    floats = list(wrt) or [k for k, t in enumerate(arg_types) if _is_float(t)]
    inputs = [rng.uniform(*domains[k], size=shape_of(t)) for k, t in enumerate(arg_types)]  # type: ignore[misc]
    cotangents = [rng.standard_normal(shape_of(t)) for t in out_types]
    grad = rlx.vjp(module, wrt=floats)
    exe = rlx.compile(grad)
    grads = exe(*inputs, *cotangents)[len(out_types) :]
    assert len(grads) == len(floats)

    def scalar(arrays: list[np.ndarray]) -> float:
        values = exe(*arrays, *cotangents)[: len(out_types)]
        return sum(float(np.sum(c * v)) for c, v, t in zip(cotangents, values, out_types) if _is_float(t))

    for position, g in zip(floats, grads):
        assert g.shape == inputs[position].shape
        fd = np.zeros(inputs[position].shape)
        for index in np.ndindex(fd.shape):
            shifted = [a.copy() for a in inputs]
            shifted[position][index] += eps
            plus = scalar(shifted)
            shifted[position][index] -= 2 * eps
            fd[index] = (plus - scalar(shifted)) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=tol, atol=tol, err_msg=f"gradient of argument {position}")
    return grad


def graph(*shapes: Sequence[int], dtype: str = "f64") -> Callable[[Callable[..., object]], ModuleOp]:
    """Decorator: build a one-function module from `body(b, *inputs)`, which returns the output(s)."""

    def make(body: Callable[..., object]) -> ModuleOp:
        b = Builder("f")
        inputs = [b.input(s, dtype) for s in shapes]
        out = body(b, *inputs)
        b.output(*(out if isinstance(out, tuple) else (out,)))
        return b.module()

    return make


def ints(b: Builder, values: Sequence) -> object:
    return b.constant(np.array(values), "i64")


# ---------------------------------------------------------------------------
# unary ops: activation_backward / relu_backward
# ---------------------------------------------------------------------------

DIFFERENTIABLE = [
    pytest.param(op, id=short_name(op))
    for op in unary_ops()
    if op not in RECORDS or not RECORDS[op].derivative.straight_through
]  # no record: the test names it


@pytest.mark.parametrize("op", DIFFERENTIABLE)
def test_unary(op: type[ew.UnaryOp]) -> None:
    """Every unary op's adjoint, on its record's finite-difference range (tests/op_records.py)."""
    kind = short_name(op)
    module = graph((2, 3))(lambda b, x: b.unary(kind, x))
    grad = check_vjp(module, record(op).derivative.fd_range)
    assert ("rlx.relu_backward" if op is ew.ReluOp else f'{{kind = "{kind}"}}') in str(grad)


@pytest.mark.parametrize("kind", ["relu", "gelu", "tanh"])
def test_gradient_ops_are_linear_in_dy(kind: str) -> None:
    """relu_backward / activation_backward with respect to dy (broadcast against x)."""
    module = graph((2, 3), (3,))(
        lambda b, x, dy: b.sin(b.relu_backward(x, dy) if kind == "relu" else b.activation_backward(x, dy, kind))
    )
    check_vjp(module, wrt=[1])


def test_second_derivatives_are_an_error() -> None:
    with pytest.raises(rlx.CompileError, match="'rlx.activation_backward' has no adjoint with respect to x"):
        rlx.vjp(graph((3,), (3,))(lambda b, x, dy: b.activation_backward(x, dy, "tanh")), wrt=[0])
    # relu_backward is piecewise constant in x: x gets no gradient from it
    exe = rlx.compile(rlx.vjp(graph((3,), (3,))(lambda b, x, dy: b.relu_backward(x, dy)), wrt=[0]))
    np.testing.assert_array_equal(exe(np.array([-1.0, 0.5, 2.0]), np.ones(3), np.ones(3))[1], np.zeros(3))


def test_round_passes_the_gradient_through() -> None:
    """round's derivative is the straight-through convention of activation_backward (dx = dy)."""
    exe = rlx.compile(rlx.vjp(graph((5,))(lambda b, x: b.round(x))))
    x, dy = np.linspace(-2, 2, 5), np.arange(5.0)
    np.testing.assert_array_equal(exe(x, dy)[1], dy)


# ---------------------------------------------------------------------------
# binary ops, where, fma, cast (broadcasting undone by reduce_sum)
# ---------------------------------------------------------------------------

POSITIVE = (0.5, 2.0)


@pytest.mark.parametrize(
    "name, domains",
    [
        ("add", None),
        ("sub", None),
        ("mul", None),
        ("div", [(-2.0, 2.0), POSITIVE]),
        ("max", None),
        ("min", None),
        ("pow", [POSITIVE, (-2.0, 2.0)]),
        ("atan2", None),
        ("mod", [(1.0, 4.0), (0.7, 0.9)]),
    ],
)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))])
def test_binary(name: str, domains: list[Domain] | None, shapes: tuple) -> None:
    module = graph(*shapes)(lambda b, x, y: b.binary(name, x, y))
    check_vjp(module, domains or (-2.0, 2.0))


def test_where() -> None:
    @graph((2, 3), (3,))
    def module(b, t, f):
        return b.where(b.constant(np.array([[True, False, True], [False, False, True]]), "i1"), t, f)

    check_vjp(module)


def test_where_with_a_computed_condition_needs_no_adjoint_for_it() -> None:
    """relu written as where(x > 0, x, 0): the comparison never receives a gradient."""
    check_vjp(graph((2, 3))(lambda b, x: b.where(b.gt(x, b.constant(0.0, "f64")), x, b.constant(0.0, "f64"))))


def test_fma() -> None:
    check_vjp(graph((2, 3), (3,), (2, 1))(lambda b, x, y, z: b.fma(x, y, z)))


def test_cast_between_floats() -> None:
    """f64 -> f32 -> f64 is linear: the differences are exact but for f32 rounding."""
    check_vjp(graph((2, 3))(lambda b, x: b.mul(b.cast(b.cast(x, "f32"), "f64"), x)), eps=1e-2, tol=1e-5)


# ---------------------------------------------------------------------------
# movement
# ---------------------------------------------------------------------------

MOVEMENT: dict[str, tuple[tuple, Callable[..., object]]] = {
    "transpose": (((2, 3, 4),), lambda b, x: b.transpose(x, [2, 0, 1])),
    "slice_steps": (((5, 4),), lambda b, x: b.slice(x, [1, 3], [2, -1], [2, 3])),
    "slice_negative_start": (((7,),), lambda b, x: b.slice(x, [-1], [-3], [3])),
    "narrow": (((3, 5),), lambda b, x: b.narrow(x, -1, 1, 3)),
    "reverse": (((2, 3),), lambda b, x: b.reverse(x, [0, 1])),
    "pad_constant": (((2, 3),), lambda b, x: b.pad(x, [1, 0], [2, 1], "constant", 1.5)),
    "pad_replicate": (((2, 3),), lambda b, x: b.pad(x, [2, 1], [1, 3], "replicate")),
    "pad_circular": (((2, 3),), lambda b, x: b.pad(x, [3, 1], [0, 4], "circular")),
    "pad_reflect": (((3, 4),), lambda b, x: b.pad(x, [2, 0], [1, 5], "reflect")),
    "concat": (((2, 3), (2, 2), (3,)), lambda b, x, y, z: b.concat([x, y, b.reshape(z, [1, 3])], 1)),
    "concat_broadcast": (((2, 3, 4), (1, 4)), lambda b, x, t: b.concat([t, x], 1)),
    "expand": (((3, 1),), lambda b, x: b.expand(x, [2, 3, 4])),
    "reshape": (((2, 6),), lambda b, x: b.reshape(x, [3, 2, 2])),
    "gather": (((3, 4),), lambda b, x: b.gather(x, ints(b, [[2, 0], [2, -1]]), 1)),
    "gather_elements": (((3, 4),), lambda b, x: b.gather_elements(x, ints(b, [[1, 1, 0], [2, 0, 2]]), 0)),
    "gather_nd": (((3, 4),), lambda b, x: b.gather_nd(x, ints(b, [[0, 1], [2, 3], [0, 1]]))),
    "gather_backward": (((2, 3),), lambda b, dy: b.gather_backward(dy, ints(b, [0, 3, 0]), 1, [2, 4])),
    "scatter_add": (((4, 2),), lambda b, u: b.scatter_add(u, ints(b, [1, 0, 1, 2]), 3)),
    "scatter_nd_add": (((3, 4), (2, 4)), lambda b, x, u: b.scatter_nd(x, ints(b, [[2], [2]]), u, "add")),
    "scatter_nd_none": (((3, 4), (2,)), lambda b, x, u: b.scatter_nd(x, ints(b, [[0, 1], [2, 3]]), u, "none")),
    "scatter_elements_add": (
        ((3, 3), (2, 3)),
        lambda b, x, u: b.scatter_elements(x, ints(b, [[0, 0, 2], [0, 1, 2]]), u, 0, "add"),
    ),
    "scatter_elements_none": (
        ((3, 3), (2, 2)),
        lambda b, x, u: b.scatter_elements(x, ints(b, [[1, 0], [2, 1]]), u, 1, "none"),
    ),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement(name: str) -> None:
    shapes, body = MOVEMENT[name]
    # a nonlinear consumer, so that each output element's cotangent differs in structure
    check_vjp(graph(*shapes)(lambda b, *xs: b.sin(body(b, *xs))))


# ---------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "lhs, rhs, ta, tb",
    [
        ((2, 3), (3, 4), False, False),
        ((3, 2), (3, 4), True, False),
        ((2, 3), (4, 3), False, True),
        ((3, 2), (4, 3), True, True),
        ((2, 2, 3), (3, 4), False, False),
        ((2, 2, 3), (4, 3), False, True),  # the batch folds into one GEMM's rows for dW (stored transposed)
        ((3, 2, 2, 3), (3, 4), False, False),
        ((2, 1, 3, 2), (3, 3, 4), True, False),
        ((3,), (2, 3, 4), False, False),
        ((2, 3), (3,), False, False),
        ((3,), (3,), False, False),
        ((4, 3), (2, 4, 2), True, False),
    ],
)
def test_matmul(lhs: tuple, rhs: tuple, ta: bool, tb: bool) -> None:
    check_vjp(graph(lhs, rhs)(lambda b, x, y: b.matmul(x, y, ta, tb)))


# ---------------------------------------------------------------------------
# reductions and softmax
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min"])
@pytest.mark.parametrize("axes, keepdims", [([1], False), ([0, 2], True), ([-1], True), (None, False)])
def test_reduce(name: str, axes: list[int] | None, keepdims: bool) -> None:
    module = graph((2, 3, 2))(lambda b, x: getattr(b, name)(x, axes, keepdims))
    check_vjp(module, (0.5, 1.5) if name == "reduce_prod" else (-2.0, 2.0))


def test_reduce_max_splits_ties_evenly() -> None:
    exe = rlx.compile(rlx.vjp(graph((4,))(lambda b, x: b.reduce_max(x, [0]))))
    np.testing.assert_array_equal(exe(np.array([1.0, 3.0, 3.0, 0.0]), np.array(2.0))[1], [0.0, 1.0, 1.0, 0.0])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [0, -1])
def test_softmax(name: str, axis: int) -> None:
    check_vjp(graph((3, 4))(lambda b, x: getattr(b, name)(x, axis)))


# ---------------------------------------------------------------------------
# graphs: several uses, several outputs, random graphs
# ---------------------------------------------------------------------------


def test_uses_accumulate_and_outputs_add_up() -> None:
    @graph((2, 3), (3, 2))
    def module(b, x, w):
        h = b.tanh(b.matmul(x, w))
        return b.mul(h, h), b.reduce_sum(b.add(b.sin(x), x), [1])

    grad = check_vjp(module)
    assert "rlx.add" in str(grad)


def test_mlp_cross_entropy() -> None:
    """A training step's loss: gelu MLP, log_softmax, one-hot negative log-likelihood."""

    @graph((4, 3), (3, 5), (5,), (2, 5))
    def module(b, x, w1, b1, w2):
        h = b.gelu(b.add(b.matmul(x, w1), b1))
        logp = b.log_softmax(b.matmul(h, w2, False, True), -1)
        onehot = b.constant(np.eye(2)[[0, 1, 1, 0]], "f64")
        return b.neg(b.reduce_mean(b.reduce_sum(b.mul(logp, onehot), [1]), [0]))

    check_vjp(module)


def test_every_op_with_a_derivative_has_an_adjoint() -> None:
    """The table names the ops this file checks: a new op class is a new row and a new case."""
    differentiable = {
        *ew.UNARY_OPS.values(),
        *(ew.BINARY_OPS[n] for n in ("add", "sub", "mul", "div", "mod", "max", "min", "pow", "atan2")),
    }
    assert differentiable <= set(ADJOINTS)
    assert not {ew.BitAndOp, ew.ShlOp, ew.LtOp, ew.EqOp} & set(ADJOINTS)


SAFE_UNARY = ["tanh", "sin", "sigmoid", "softplus", "silu", "atan", "gelu", "cos", "erf", "softsign"]
SHAPES = [(2, 3), (3,), (2, 1), ()]
MOVES: list[Callable[..., object]] = [
    lambda b, x: b.transpose(b.reverse(b.transpose(x, [1, 0]), [0]), [1, 0]),
    lambda b, x: b.slice(b.pad(x, [0, 1], [0, 2], "reflect"), [0, 0], [1, 2], [2, 3]),
    lambda b, x: b.narrow(b.concat([x, b.sin(x)], 1), 1, 2, 3),
    lambda b, x: b.gather(x, ints(b, [2, 0, 2]), 1),
]
"""Movement chains that map a [2, 3] value to a [2, 3] value (so the pool stays broadcast-compatible)."""


@st.composite
def random_graphs(draw: st.DrawFn) -> ModuleOp:
    """2-3 inputs of broadcast-compatible shapes, 3-8 differentiable ops (elementwise, fma,
    reductions, softmax, matmul, movement), 1-2 outputs."""
    b = Builder("f")
    pool = [b.input(draw(st.sampled_from(SHAPES)), "f64") for _ in range(draw(st.integers(2, 3)))]
    for _ in range(draw(st.integers(3, 8))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "fma", "reduce", "softmax", "matmul", "move"]))
        x = draw(st.sampled_from(pool))
        shape = shape_of(x.type)
        if kind == "unary":
            value = b.unary(draw(st.sampled_from(SAFE_UNARY)), x)
        elif kind == "binary":
            value = b.binary(draw(st.sampled_from(["add", "sub", "mul", "max", "min"])), x, draw(st.sampled_from(pool)))
        elif kind == "fma":
            value = b.fma(x, draw(st.sampled_from(pool)), draw(st.sampled_from(pool)))
        elif kind == "reduce" and shape:
            name = draw(st.sampled_from(["reduce_sum", "reduce_mean", "reduce_max"]))
            value = getattr(b, name)(x, [draw(st.integers(0, len(shape) - 1))], True)
        elif kind == "softmax" and shape:
            value = b.softmax(x, -1)
        elif kind == "matmul" and len(shape) == 2:
            value = b.matmul(b.matmul(x, x, False, True), x)  # [2, 2] @ [2, 3], or [2, 1] ones
        elif kind == "move" and shape == (2, 3):
            value = draw(st.sampled_from(MOVES))(b, x)
        elif kind == "move" and shape:
            value = b.reverse(x, [0])
        else:
            value = b.neg(x)
        pool.append(value)
    outputs = [pool[-1]] + ([pool[-2]] if draw(st.booleans()) else [])
    b.output(*outputs)
    return b.module()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_random_graphs(module: ModuleOp) -> None:
    check_vjp(module, tol=1e-5)


@pytest.mark.parametrize("dtype, tol", [("f32", 1e-5), ("f16", 2e-2), ("bf16", 1e-1)])
def test_narrow_float_gradients_match_float64(dtype: str, tol: float) -> None:
    """The VJP of a narrower float type is the same graph: it agrees with f64 to the type's precision."""

    def module(dtype: str) -> ModuleOp:
        @graph((4, 3), (3, 2), dtype=dtype)
        def body(b, x, w):
            h = b.tanh(b.matmul(x, w))
            return b.reduce_mean(b.mul(b.softmax(h, -1), b.max(h, b.sin(h))), [0], True)

        return body

    rng = np.random.default_rng(1)
    x, w, dy = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal((1, 2))
    wide = rlx.compile(rlx.vjp(module("f64")))(x, w, dy)
    exe = rlx.compile(rlx.vjp(module(dtype)))
    narrow = exe(*(a.astype(exe.inputs[0].dtype.numpy) for a in (x, w, dy)))
    for a, b in zip(wide, narrow):
        assert b.dtype == exe.inputs[0].dtype.numpy
        np.testing.assert_allclose(b.astype(np.float64), a, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# the conventions of vjp
# ---------------------------------------------------------------------------

TEXT = """
func.func @f(%x: tensor<2x3xf64>, %ids: tensor<2xi64>, %w: tensor<3xf64>) -> (tensor<2x3xf64>, tensor<2xi64>) {
  %y = rlx.mul %x, %w : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  func.return %y, %ids : tensor<2x3xf64>, tensor<2xi64>
}
"""


def test_signature_and_names() -> None:
    """Inputs: originals + one cotangent per output; outputs: originals + gradients in wrt order."""
    by_name, by_position = rlx.vjp(TEXT, wrt=["w", "x"]), rlx.vjp(rlx.parse(TEXT), wrt=[2, 0])
    assert str(by_name) == str(by_position)
    function = _function(by_name)
    assert [str(t) for t in function.function_type.inputs] == [
        "tensor<2x3xf64>",
        "tensor<2xi64>",
        "tensor<3xf64>",
        "tensor<2x3xf64>",
        "tensor<2xi64>",
    ]
    assert [str(t) for t in function.function_type.outputs] == [
        "tensor<2x3xf64>",
        "tensor<2xi64>",
        "tensor<3xf64>",
        "tensor<2x3xf64>",
    ]
    assert [a.name_hint for a in function_block(function).args][3:] == ["d_y", "d_ids"]
    x, w, dy = np.ones((2, 3)), np.arange(3.0), np.full((2, 3), 2.0)
    _y, ids, dw, dx = rlx.compile(by_name)(x, np.array([4, 5]), w, dy, np.zeros(2, np.int64))
    np.testing.assert_array_equal(ids, [4, 5])
    np.testing.assert_array_equal(dw, [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(dx, np.broadcast_to(2 * w, (2, 3)))


def test_names_are_the_printed_names() -> None:
    """xDSL keeps `%a_1` as the hint "a" and prints repeats as a, a_1, ...: names
    resolve the way rlx-opt prints the arguments."""
    text = """
func.func @f(%a_1: tensor<2xf64>, %a: tensor<2xf64>) -> tensor<2xf64> {
  %y = rlx.mul %a_1, %a : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  func.return %y : tensor<2xf64>
}"""
    assert "%a: tensor<2xf64>, %a_1: tensor<2xf64>" in str(rlx.parse(text))
    assert str(rlx.vjp(text, wrt=["a_1"])) == str(rlx.vjp(text, wrt=[1]))
    with pytest.raises(rlx.ArgumentError, match="named arguments: 'a', 'a_1'"):
        rlx.vjp(text, wrt=["a_2"])


def test_default_wrt_is_every_float_argument() -> None:
    assert str(rlx.vjp(TEXT)) == str(rlx.vjp(TEXT, wrt=[0, 2]))


def test_unreached_argument_gets_zeros_and_dead_gradients_are_removed() -> None:
    @graph((2, 3), (2, 3))
    def module(b, x, unused):
        return b.exp(x), b.tanh(unused)

    grad = rlx.vjp(module, wrt=[0])
    text = str(grad)
    assert '"tanh"' not in text  # the tanh gradient is not asked for: never built
    (_y, _other, dx) = rlx.compile(grad)(np.zeros((2, 3)), np.zeros((2, 3)), np.ones((2, 3)), np.ones((2, 3)))
    np.testing.assert_array_equal(dx, np.ones((2, 3)))
    free = graph((2,), (2,))(lambda b, x, z: b.exp(x))
    result = rlx.compile(rlx.vjp(free, wrt=[1]))(np.zeros(2), np.ones(2), np.ones(2))
    np.testing.assert_array_equal(result[1], [0.0, 0.0])


def test_the_pass_output_runs_through_the_default_pipeline() -> None:
    """The VJP is ordinary rlx IR: fusion turns the backward chain into regions."""
    module = graph((8, 16), (16,))(lambda b, x, s: b.gelu(b.mul(b.add(x, s), s)))
    exe = rlx.compile(check_vjp(module))
    assert "rlx.elementwise_region" in exe.planned_ir


@pytest.mark.parametrize(
    "wrt, message",
    [
        ([3], "wrt position 3 is out of range: @f has 3 arguments"),
        (["nope"], "@f has no argument named 'nope' (named arguments: 'x', 'ids', 'w')"),
        ([1], "cannot differentiate @f with respect to argument 1 of type tensor<2xi64> (not a float tensor)"),
        (["x", 0], "wrt lists argument 0 of @f twice"),
        ("x", "wrt must be a list of argument positions or names, got 'x'"),
        ([1.5], "wrt entries are argument positions (int) or names (str), got 1.5"),
    ],
)
def test_bad_wrt_is_an_argument_error(wrt: object, message: str) -> None:
    with pytest.raises(rlx.ArgumentError) as error:
        rlx.vjp(TEXT, wrt=wrt)  # type: ignore[arg-type]
    assert str(error.value) == message


@pytest.mark.parametrize(
    "text, message",
    [
        (
            """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %i = rlx.cast %x : (tensor<4xf32>) -> tensor<4xi32>
  %y = rlx.cast %i : (tensor<4xi32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}""",
            "autodiff: 'rlx.cast' from i32 has no adjoint (only float -> float casts do); a gradient of @f flows through it",
        ),
        (
            """
func.func @f(%x: tensor<1x5x3xf32>, %wi: tensor<4x3xf32>, %wh: tensor<4x4xf32>, %bias: tensor<4xf32>) -> tensor<1x5x4xf32> {
  %y = rlx.rnn %x, %wi, %wh, %bias {hidden_size = 4 : i64} : (tensor<1x5x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x5x4xf32>
  func.return %y : tensor<1x5x4xf32>
}""",
            "autodiff: 'rlx.rnn' has no adjoint; a gradient of @f flows through it",
        ),
        (
            """
func.func @f(%x: tensor<4xf32>, %ids: tensor<2x1xi64>) -> tensor<4xf32> {
  %u = rlx.slice %x {starts = array<i64: 0>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<2xf32>
  %y = rlx.scatter_nd %x, %ids, %u {reduction = "max"} : (tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}""",
            'autodiff: \'rlx.scatter_nd\' with reduction "max" has no adjoint (only "none" and "add" do); '
            "a gradient of @f flows through it",
        ),
    ],
)
def test_no_adjoint_is_a_compile_error(text: str, message: str) -> None:
    with pytest.raises(rlx.CompileError) as error:
        rlx.vjp(text, wrt=[0])
    assert str(error.value) == message


def test_an_op_without_adjoint_off_the_gradient_path_is_fine() -> None:
    """The rnn reads only `%h`, which does not depend on `%x`: no gradient flows through it."""
    text = """
func.func @f(%x: tensor<4xf32>, %h: tensor<1x5x3xf32>, %wi: tensor<4x3xf32>, %wh: tensor<4x4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<1x5x4xf32>) {
  %y = rlx.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %r = rlx.rnn %h, %wi, %wh, %b {hidden_size = 4 : i64} : (tensor<1x5x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x5x4xf32>
  func.return %y, %r : tensor<4xf32>, tensor<1x5x4xf32>
}"""
    assert 'kind = "exp"' in str(rlx.vjp(text, wrt=["x"]))


def test_bad_module_argument() -> None:
    with pytest.raises(rlx.CompileError, match="vjp\\(\\) takes IR text or a builtin.module, got int"):
        rlx.vjp(3)  # type: ignore[arg-type]


def test_autodiff_in_a_compile_pipeline() -> None:
    """`autodiff` is an ordinary pass: it can open the pipeline compile() runs."""
    from rlx_mlir.passes.default_pipeline import TENSOR_PIPELINE

    exe = rlx.compile(TEXT, pipeline="autodiff{wrt=w}," + TENSOR_PIPELINE)
    x, w, dy = np.ones((2, 3)), np.arange(3.0), np.full((2, 3), 2.0)
    _y, _ids, dw = exe(x, np.array([4, 5]), w, dy, np.zeros(2, np.int64))
    np.testing.assert_array_equal(dw, [4.0, 4.0, 4.0])
    with pytest.raises(rlx.CompileError, match="autodiff: wrt position 9 is out of range: @f has 3 arguments"):
        rlx.compile(TEXT, pipeline="autodiff{wrt=9}")
