"""Numeric tests of every unary rlx op on f32 and f64 against its record (tests/op_records.py).

Each op/dtype is compiled once (one `rlx.<op>` over a 1-D tensor) and run on
the forward sweep of tests/measure.py (~200k points over the record's domain
plus special values). NaN/inf positions must equal the reference's in every
case (`ulp_error` reports inf otherwise). The bound is the record's, in ULPs
of the output width (f32 vs the float64 reference rounded to f32, f64 vs the
float64 reference); an op with `same_dtype` must also equal that NumPy
formula in its own dtype bit for bit (the correctly rounded ops: with bound
0, signed zeros included); an op with a `cancellation` is bounded in ULPs of
its cancelling terms, and in plain ULPs only from `ulp_from` on.
`python tests/measure.py rlx.<op>` prints the measured maxima.
"""

from __future__ import annotations

import numpy as np
import pytest
from measure import forward, plain_ulp
from op_records import RECORDS, record, reference, short_name, unary_ops
from reference import run_op, specials

from rlx_mlir.dialects import elementwise as ew

F32, F64 = np.float32, np.float64
DTYPES = [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")]
OPS = [pytest.param(op, id=short_name(op)) for op in unary_ops()]


@pytest.mark.target_independent
def test_every_unary_op_has_a_record() -> None:
    """A unary op of the dialect without a record is named here (and errors in every test of it)."""
    missing = [op.name for op in unary_ops() if op not in RECORDS]
    assert not missing, f"no record in tests/op_records.py:RECORDS for {', '.join(missing)}"
    stale = [op.__name__ for op in RECORDS if op not in unary_ops()]
    assert not stale, f"records of classes that are not unary ops of the dialect: {stale}"


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.int32 if x.dtype == F32 else np.int64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_unary_accuracy(op: type[ew.UnaryOp], dtype: type) -> None:
    rec, name = record(op), short_name(op)
    result = forward(op, dtype)
    assert result.got.dtype == dtype and result.got.shape == result.x.shape
    bound = rec.ulp.at(dtype)
    assert plain_ulp(op, result).max() <= bound, result.worst(plain_ulp(op, result), f"{name} ULP > {bound}")
    if rec.cancellation is not None:
        assert result.scaled is not None
        limit = rec.cancellation.bound
        assert result.scaled.max() <= limit, result.worst(result.scaled, f"{name} error in ULPs of its scale > {limit}")
    if rec.same_dtype is not None:
        with np.errstate(all="ignore"):
            want = rec.same_dtype(result.x)
        same = (_bits(result.got) == _bits(want)) | (np.isnan(result.got) & np.isnan(want))
        assert same.all(), (
            f"{name}: not bit-identical to the same formula in NumPy at x={result.x[~same][:5]!r}: "
            f"{result.got[~same][:5]!r} vs {want[~same][:5]!r}"
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_unary_specials(op: type[ew.UnaryOp], dtype: type) -> None:
    """NaN/inf positions equal the reference's on the special values (also beyond the sweep ranges)."""
    rec, name = record(op), short_name(op)
    x = specials(dtype)
    got = run_op(name, x)
    with np.errstate(all="ignore"):
        ref = rec.same_dtype(x) if rec.same_dtype is not None else reference(op, x).astype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=f"{name} NaN positions, x={x}")
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(ref), err_msg=f"{name} +inf positions, x={x}")
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(ref), err_msg=f"{name} -inf positions, x={x}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_signed_zero_and_exact_points(dtype: type) -> None:
    """Values fixed by definition: f(0), f(±inf), odd functions keep -0."""
    inf = np.inf
    x = np.array([0.0, -0.0, inf, -inf], dtype=dtype)
    cases = {
        "exp": [1, 1, inf, 0],
        "log": [-inf, -inf, inf, np.nan],
        "tanh": [0, -0.0, 1, -1],
        "sigmoid": [0.5, 0.5, 1, 0],
        "erf": [0, -0.0, 1, -1],
        "atan": [0, -0.0, np.pi / 2, -np.pi / 2],
        "sqrt": [0, -0.0, inf, np.nan],
        "rsqrt": [inf, -inf, 0, np.nan],
        "recip": [inf, -inf, 0, -0.0],
        "relu": [0, -0.0, inf, 0],
        "softplus": [np.log(2), np.log(2), inf, 0],
        "log_sigmoid": [-np.log(2), -np.log(2), 0, -inf],
        "softsign": [0, -0.0, np.nan, np.nan],
        "elu": [0, -0.0, inf, -1],
        "hard_sigmoid": [0.5, 0.5, 1, 0],
        "sin": [0, -0.0, np.nan, np.nan],
        "tan": [0, -0.0, np.nan, np.nan],
        "cos": [1, 1, np.nan, np.nan],
        "neg": [-0.0, 0, -inf, inf],
        "abs": [0, 0, inf, inf],
        "floor": [0, -0.0, inf, -inf],
    }
    for name, want in cases.items():
        got = run_op(name, x)
        want = np.array(want, dtype=dtype)
        np.testing.assert_array_equal(got, want, err_msg=name)
        num = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]), err_msg=f"{name} sign of zero")


ONNX_OPS = [pytest.param(op, id=short_name(op)) for op, rec in RECORDS.items() if rec.onnx is not None]


@pytest.mark.target_independent
@pytest.mark.parametrize("op", ONNX_OPS)
def test_onnx_name_imports_to_the_op(op: type[ew.UnaryOp]) -> None:
    """The record's ONNX operator, with default attributes, imports as this op alone."""
    from onnx import TensorProto, helper

    from rlx_mlir.frontends.onnx import load

    onnx_name = record(op).onnx
    assert onnx_name is not None
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node(onnx_name, ["x"], ["y"])],
        "g",
        [value("x", TensorProto.FLOAT, [2, 3])],
        [value("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    kinds = {type(o) for o in load(model.SerializeToString()).walk() if isinstance(o, ew.ElementwiseOp)}
    assert kinds == {op}, f"ONNX {onnx_name} imports as {sorted(k.name for k in kinds)}, not {op.name}"
