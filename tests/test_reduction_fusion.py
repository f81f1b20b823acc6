"""Elementwise prologues fused into reductions (`fuse-reductions` and the
reduction engine of lowering/kernels/reduction_region.py).

The body of a fused region rounds each op's result to its type, as the
unfused ops do when they store it, and the engine's order of combination
does not depend on whether a prologue is fused: fused results equal unfused
ones bit for bit. Both equal a float64 NumPy reference within the stated
tolerance, in row order (reduced axis contiguous) and column order.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipelines import ELEMENTWISE_FUSION_ONLY

import rlx_mlir as rlx

UNFUSED = ELEMENTWISE_FUSION_ONLY
REDUCE = {
    "reduce_sum": np.sum,
    "reduce_mean": np.mean,
    "reduce_prod": np.prod,
    "reduce_max": np.max,
    "reduce_min": np.min,
}
PROLOGUE = {
    "mul": lambda x, b: x * b,
    "add": lambda x, b: x + b,
    "max": np.maximum,
}
UNARY = {"neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, 0)}


def _graph(shape: tuple[int, ...], dtype: str, reduce: str, axes: list[int], keepdims: bool, chain: list[str]):
    """x [shape], b [shape[-1]] -> reduce(unary...(binary(x, b)))."""
    builder = rlx.Builder("f")
    x = builder.input(shape, dtype)
    b = builder.input(shape[-1:], dtype)
    value = builder.binary(chain[0], x, b)
    for name in chain[1:]:
        value = builder.unary(name, value)
    builder.output(getattr(builder, reduce)(value, axes, keepdims))
    return builder.module()


def _reference(x: np.ndarray, b: np.ndarray, reduce: str, axes: list[int], keepdims: bool, chain: list[str]):
    value = PROLOGUE[chain[0]](x.astype(np.float64), b.astype(np.float64))
    for name in chain[1:]:
        value = UNARY[name](value)
    return REDUCE[reduce](value, axis=tuple(axes), keepdims=keepdims)


def _reference_f32(x: np.ndarray, b: np.ndarray, axes: list[int], chain: list[str]) -> np.ndarray:
    """NumPy's own float32 product of the chain, for its error."""
    value = PROLOGUE[chain[0]](x, b)
    for name in chain[1:]:
        value = UNARY[name](value)
    return np.prod(value, axis=tuple(axes), keepdims=True, dtype=np.float32)


@st.composite
def cases(draw: st.DrawFn):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=rank, max_size=rank)))
    axes = draw(st.lists(st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda a: a % rank))
    reduce = draw(st.sampled_from(sorted(REDUCE)))
    chain = [draw(st.sampled_from(sorted(PROLOGUE))), *draw(st.lists(st.sampled_from(sorted(UNARY)), max_size=2))]
    dtype = draw(st.sampled_from(["f32", "f64", "f16"]))
    return shape, axes, reduce, chain, dtype, draw(st.booleans()), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fused_equals_unfused_bit_for_bit(case) -> None:
    shape, axes, reduce, chain, dtype, keepdims, seed = case
    module = _graph(shape, dtype, reduce, axes, keepdims, chain)
    fused, unfused = rlx.compile(module), rlx.compile(module, pipeline=UNFUSED)
    assert "rlx.reduction_region" in fused.planned_ir
    assert "rlx.reduction_region" not in unfused.planned_ir
    rng = np.random.default_rng(seed)
    numpy_type = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[dtype]
    x = (rng.standard_normal(shape) * 0.5 + 1).astype(numpy_type)
    b = (rng.standard_normal(shape[-1:]) * 0.5 + 1).astype(numpy_type)
    (got,), (want,) = fused(x, b), unfused(x, b)
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def test_prologue_is_fused_and_never_materialized() -> None:
    module = _graph((64, 128), "f32", "reduce_sum", [1], False, ["mul"])
    exe = rlx.compile(module)
    assert "rlx.reduction_region" in exe.planned_ir
    assert "rlx.reduce_sum" not in exe.planned_ir
    assert exe.memory_plan.arena_size == 0  # nothing intermediate: x*b lives in registers only


@pytest.mark.parametrize("axes", [[1], [0], [0, 2], [-1, 0], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("reduce", sorted(REDUCE))
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_fused_reduction_matches_float64(axes: list[int], reduce: str, dtype: str) -> None:
    """Rows (last axis reduced), columns (first axis reduced, contiguous points)
    and mixed axis sets, against float64 NumPy."""
    shape = (37, 300, 19)
    chain = ["mul", "abs"]
    module = _graph(shape, dtype, reduce, axes, True, chain)
    rng = np.random.default_rng(len(axes) * 31 + len(reduce))
    numpy_type = np.float32 if dtype == "f32" else np.float64
    spread = 2e-4 if reduce == "reduce_prod" else 0.2  # a product of 2e5 factors stays finite
    x = (1 + (rng.random(shape) - 0.5) * spread).astype(numpy_type)
    b = (1 + (rng.random(shape[-1:]) - 0.5) * spread).astype(numpy_type)
    (got,) = rlx.compile(module)(x, b)
    want = _reference(x, b, reduce, axes, True, chain)
    assert got.shape == want.shape
    if dtype == "f32" and reduce == "reduce_prod":
        # each factor x*b is rounded to f32 near 1, where the rounding errors do not
        # cancel: the bound is NumPy's own f32 product error (up to 0.14% here), twice
        ours = np.abs(got / want - 1)
        numpy_f32 = np.abs(_reference_f32(x, b, axes, chain) / want - 1)
        assert ours.max() <= 2 * max(numpy_f32.max(), 1e-6), (ours.max(), numpy_f32.max())
        return
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "f32" else 1e-12)


def test_column_sum_accumulates_beyond_one_chunk() -> None:
    """More columns than one accumulator chunk (1024), and a partial last chunk."""
    shape = (513, 2500)
    builder = rlx.Builder("f")
    x = builder.input(shape)
    builder.output(builder.reduce_sum(builder.unary("abs", x), [0]))
    x_value = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    (got,) = rlx.compile(builder.module())(x_value)
    np.testing.assert_allclose(got, np.abs(x_value.astype(np.float64)).sum(0), rtol=1e-5)


def test_long_f32_sum_is_as_accurate_as_numpy_pairwise() -> None:
    """2^24 f32 elements: the error vs float64 is at most 2x NumPy's pairwise summation's."""
    n = 1 << 24
    x = np.random.default_rng(7).random(n, dtype=np.float32)
    builder = rlx.Builder("f")
    v = builder.input((n,))
    builder.output(builder.reduce_sum(builder.binary("mul", v, v), [0]))
    (got,) = rlx.compile(builder.module())(x)
    exact = np.sum(x.astype(np.float64) ** 2)
    numpy_error = abs(float(np.sum(x * x)) - exact)
    assert abs(float(got) - exact) <= 2 * max(numpy_error, np.finfo(np.float32).eps * exact)


@pytest.mark.parametrize("reduce", ["reduce_sum", "reduce_mean", "reduce_max"])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_fused_full_reduction_does_not_depend_on_the_thread_count(reduce: str, dtype: str) -> None:
    """reduce(x * b) over every axis of 700x300 (2^17 elements and more: cut into
    parts across threads, lowering/kernels/reduction_region.py): the prologue is fused,
    the result is the float64 one within the f32 accumulator's error, and the
    bytes are the same with 1 and 2 threads."""
    shape = (700, 300)
    module = _graph(shape, dtype, reduce, [0, 1], False, ["mul"])
    rng = np.random.default_rng(3)
    numpy_type = np.float32 if dtype == "f32" else np.float16
    x = rng.standard_normal(shape).astype(numpy_type)
    b = x[0].copy()
    one, two = rlx.compile(module, threads=1), rlx.compile(module, threads=2)
    assert "rlx.reduce_" not in one.planned_ir and "rlx.scratch_offsets" in one.planned_ir
    (got,), (again,) = one(x, b), two(x, b)
    assert got.tobytes() == again.tobytes(), (got, again)
    # each product rounded to the type, as the unfused mul stores it; then float64
    products = (x.astype(np.float64) * b.astype(np.float64)).astype(numpy_type).astype(np.float64)
    want = REDUCE[reduce](products)
    scale = np.abs(products).sum() / (x.size if reduce == "reduce_mean" else 1)
    tol = 0 if reduce == "reduce_max" else 30 * 2.0**-24 * scale + float(np.spacing(numpy_type(want)))
    assert abs(float(got) - float(want)) <= tol, (got, want, tol)
