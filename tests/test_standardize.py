"""Layer norm and RMS norm written out as ops (`fuse-standardization` making an
`rlx.standardize_region`, fuse-reductions fusing its neighbours, and its kernel
in lowering/kernels/standardize.py), against a float64 NumPy reference for every float
type, and against the unfused graph.

The fused kernel sums plainly in lanes where `reduce_mean` sums with
compensation, so fused and unfused results agree to rounding, not bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pipelines import ELEMENTWISE_FUSION_ONLY

import rlx_mlir as rlx

UNFUSED = ELEMENTWISE_FUSION_ONLY
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16}
TOLERANCE = {"f32": 2e-5, "f64": 1e-12, "f16": 4e-3, "bf16": 3e-2}
"""Error bound relative to the result's scale: about 8 units of the type's
last place on values of a few units (the rounding of x and of the result)."""
EPS = 1e-5


def _graph(shape: tuple[int, ...], dtype: str, centered: bool, residual: bool, affine: bool, form: str = "rsqrt"):
    """x [, r] [, g, b] -> [x + r ->] layer or RMS norm over the last axis [-> * g + b]."""
    b = rlx.Builder("norm")
    x = b.input(shape, dtype)
    value = b.add(x, b.input(shape, dtype)) if residual else x
    c = b.sub(value, b.reduce_mean(value, [-1], keepdims=True)) if centered else value
    square = b.pow(c, b.constant(2.0, dtype)) if form == "pow" else b.mul(c, c)
    shifted = b.add(b.reduce_mean(square, [-1], keepdims=True), b.constant(EPS, dtype))
    if form == "div":
        value = b.div(c, b.sqrt(shifted))
    elif form == "recip":
        value = b.mul(b.recip(b.sqrt(shifted)), c)
    else:
        value = b.mul(c, b.rsqrt(shifted))
    if affine:
        value = b.add(b.mul(value, b.input(shape[-1:], dtype)), b.input(shape[-1:], dtype))
    b.output(value)
    return b.module()


def _reference(arrays: list[np.ndarray], centered: bool, residual: bool, affine: bool) -> np.ndarray:
    eps = float(arrays[0].dtype.type(EPS))  # the graph's constant, in its type
    values = [a.astype(np.float64) for a in arrays]
    x = values.pop(0)
    if residual:
        x = x + values.pop(0)
    c = x - x.mean(axis=-1, keepdims=True) if centered else x
    y = c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + eps)
    return y * values[0] + values[1] if affine else y


def _inputs(shape: tuple[int, ...], dtype: str, residual: bool, affine: bool, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    t = NUMPY[dtype]
    arrays = [(rng.standard_normal(shape) * 2 + 0.5).astype(t)]
    if residual:
        arrays.append(rng.standard_normal(shape).astype(t))
    if affine:
        arrays += [rng.standard_normal(shape[-1:]).astype(t), rng.standard_normal(shape[-1:]).astype(t)]
    return arrays


def _check(got: np.ndarray, want: np.ndarray, dtype: str, bounds: int = 1) -> None:
    """got within `bounds` times the dtype's tolerance of want."""
    scale = max(float(np.abs(want).max()), 1.0)
    assert got.dtype == NUMPY[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=bounds * TOLERANCE[dtype] * scale)


@pytest.mark.parametrize("dtype", sorted(NUMPY))
@pytest.mark.parametrize("centered", [True, False], ids=["layer", "rms"])
@pytest.mark.parametrize("shape", [(1,), (3, 7), (5, 16), (2, 3, 100), (4, 1024)])
def test_matches_float64(dtype: str, centered: bool, shape: tuple[int, ...]) -> None:
    exe = rlx.compile(_graph(shape, dtype, centered, residual=True, affine=True), tune=False)
    assert exe.planned_ir.count("rlx.standardize_region") == 1 and "rlx.reduce" not in exe.planned_ir
    arrays = _inputs(shape, dtype, residual=True, affine=True, seed=len(shape))
    _check(exe(*arrays)[0], _reference(arrays, centered, residual=True, affine=True), dtype)


@pytest.mark.parametrize("form", ["rsqrt", "recip", "div", "pow"])
def test_every_written_form_is_one_kernel(form: str) -> None:
    shape = (6, 40)
    exe = rlx.compile(_graph(shape, "f32", True, residual=False, affine=False, form=form), tune=False)
    assert [line.split("=")[1].split()[0] for line in exe.planned_ir.splitlines() if " = " in line[:12]] == [
        "rlx.standardize_region"
    ]
    arrays = _inputs(shape, "f32", residual=False, affine=False, seed=1)
    _check(exe(*arrays)[0], _reference(arrays, True, residual=False, affine=False), "f32")


@given(
    shape=st.lists(st.integers(1, 70), min_size=1, max_size=3).map(tuple),
    dtype=st.sampled_from(sorted(NUMPY)),
    centered=st.booleans(),
    residual=st.booleans(),
    affine=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(shape=(48, 3), dtype="bf16", centered=True, residual=False, affine=False, seed=0)
@example(shape=(50, 2), dtype="bf16", centered=True, residual=False, affine=False, seed=0)
def test_fused_agrees_with_unfused(shape, dtype, centered, residual, affine, seed) -> None:
    module = _graph(shape, dtype, centered, residual, affine)
    arrays = _inputs(shape, dtype, residual, affine, seed)
    fused = rlx.compile(module, tune=False)(*arrays)[0]
    unfused = rlx.compile(module, pipeline=UNFUSED, tune=False)(*arrays)[0]
    _check(fused, _reference(arrays, centered, residual, affine), dtype)
    # the unfused graph rounds its mean and variance to the type: centring a row
    # whose values nearly agree loses digits in proportion to its condition
    # (a bf16 row of 2 missed by 16%), so the two agree within that many bounds
    scale = max(float(np.abs(fused.astype(np.float64)).max()), 1.0)
    bound = 2 * TOLERANCE[dtype] * scale * _condition(arrays, residual)
    assert np.all(np.abs(fused.astype(np.float64) - unfused.astype(np.float64)) <= bound)


def _condition(arrays: list[np.ndarray], residual: bool) -> np.ndarray:
    """Per row, how much the row's magnitude exceeds its spread (at least 1)."""
    x = arrays[0].astype(np.float64) + (arrays[1].astype(np.float64) if residual else 0.0)
    spread = np.sqrt(x.var(axis=-1, keepdims=True) + EPS)
    return np.maximum(np.abs(x).max(axis=-1, keepdims=True) / spread, 1.0)


def test_results_do_not_depend_on_the_thread_count() -> None:
    shape = (257, 300)
    module = _graph(shape, "f32", True, residual=True, affine=True)
    arrays = _inputs(shape, "f32", residual=True, affine=True, seed=5)
    one, two = (rlx.compile(module, threads=t, tune=False)(*arrays)[0] for t in (1, 2))
    np.testing.assert_array_equal(one, two)


def test_a_constant_row_is_beta() -> None:
    """σ² = 0: the normalized value is 0·rsqrt(ε), so the result is the bias exactly."""
    shape = (2, 33)
    exe = rlx.compile(_graph(shape, "f32", True, residual=False, affine=True), tune=False)
    x = np.full(shape, 3.25, np.float32)
    g, b = np.full(33, 2.0, np.float32), np.arange(33, dtype=np.float32)
    np.testing.assert_array_equal(exe(x, g, b)[0], np.broadcast_to(b, shape))


def test_a_mean_used_elsewhere_stays_outside() -> None:
    """The mean is a second result: it and x − μ stay ops of their own, and the
    rest is an RMS norm of x − μ (the same value), so nothing is computed twice."""
    b = rlx.Builder("norm")
    x = b.input((4, 8))
    mean = b.reduce_mean(x, [-1], keepdims=True)
    c = b.sub(x, mean)
    variance = b.reduce_mean(b.mul(c, c), [-1], keepdims=True)
    b.output(b.mul(c, b.rsqrt(b.add(variance, b.constant(EPS)))), mean)
    exe = rlx.compile(b.module(), tune=False)
    assert exe.planned_ir.count("rlx.reduce_mean") == 1 and "centered = false" in exe.planned_ir
    x_value = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    y, m = exe(x_value)
    _check(y, _reference([x_value], True, False, False), "f32")
    np.testing.assert_allclose(m[:, 0], x_value.mean(axis=-1), rtol=1e-6)
