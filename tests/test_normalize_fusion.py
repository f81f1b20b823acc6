"""Elementwise chains fused before and after softmax / log_softmax
(`fuse-reductions` making an `rlx.normalize_region`, and its kernel in
lowering/kernels/normalize.py).

The prologue and epilogue bodies round each op's result to its type as the
unfused ops do when they store it, and the softmax kernel combines in the
same order either way: fused results equal unfused ones bit for bit, and both
match a float64 NumPy reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipelines import ELEMENTWISE_FUSION_ONLY

import rlx_mlir as rlx

UNFUSED = ELEMENTWISE_FUSION_ONLY
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def _graph(shape: tuple[int, ...], dtype: str, kind: str, axis: int, before: bool, after: bool):
    """x, r [shape], s scalar -> [tanh(x * s) ->] softmax [-> * r + s]."""
    b = rlx.Builder("f")
    x, s, r = b.input(shape, dtype), b.input((), dtype), b.input(shape, dtype)
    value = b.tanh(b.mul(x, s)) if before else x
    value = getattr(b, kind)(value, axis)
    if after:
        value = b.add(b.mul(value, r), s)
    b.output(value)
    return b.module()


def _reference(x: np.ndarray, s: np.ndarray, r: np.ndarray, kind: str, axis: int, before: bool, after: bool):
    x, s, r = (v.astype(np.float64) for v in (x, s, r))
    value = np.tanh(x * s) if before else x
    shifted = value - value.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    value = np.exp(shifted) / total if kind == "softmax" else shifted - np.log(total)
    return value * r + s if after else value


def _inputs(shape: tuple[int, ...], dtype: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = NUMPY[dtype]
    return rng.standard_normal(shape).astype(t), np.asarray(1.5, t), rng.standard_normal(shape).astype(t)


@st.composite
def cases(draw: st.DrawFn):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 40), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    kind = draw(st.sampled_from(["softmax", "log_softmax"]))
    before, after = draw(st.booleans()), draw(st.booleans())
    return shape, axis, kind, before, after, draw(st.sampled_from(sorted(NUMPY))), draw(st.integers(0, 2**32 - 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fused_equals_unfused_bit_for_bit(case) -> None:
    shape, axis, kind, before, after, dtype, seed = case
    module = _graph(shape, dtype, kind, axis, before, after)
    fused, unfused = rlx.compile(module), rlx.compile(module, pipeline=UNFUSED)
    assert "rlx.normalize_region" not in unfused.planned_ir
    x, s, r = _inputs(shape, dtype, seed)
    (got,), (want,) = fused(x, s, r), unfused(x, s, r)
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


@pytest.mark.parametrize("shape, axis", [((64, 300), 1), ((5, 64, 3), 1), ((7, 9), 0), ((2, 10), 1)], ids=str)
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
def test_chain_on_both_sides_is_one_kernel_and_matches_float64(
    shape: tuple[int, ...], axis: int, kind: str, dtype: str
) -> None:
    exe = rlx.compile(_graph(shape, dtype, kind, axis, True, True))
    assert exe.planned_ir.count("rlx.normalize_region") == 1
    assert "rlx.elementwise_region" not in exe.planned_ir
    assert exe.memory_plan.arena_size == 0  # neither chain reaches memory
    x, s, r = _inputs(shape, dtype, 0)
    (got,) = exe(x, s, r)
    tolerance = {"f32": 2e-6, "f64": 1e-13, "f16": 4e-3}[dtype]
    want = _reference(x, s, r, kind, axis, True, True)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tolerance * 8, atol=tolerance * 8)


def test_broadcast_input_keeps_its_own_kernel() -> None:
    """A bias read along one axis is not a point-wise read: the chain stays a region of its own."""
    b = rlx.Builder("f")
    x, bias = b.input((8, 16)), b.input((16,))
    b.output(b.softmax(b.add(x, bias), 1))
    exe = rlx.compile(b.module())
    assert "rlx.add" in exe.planned_ir
    assert "rlx.softmax" in exe.planned_ir
    assert "rlx.normalize_region" not in exe.planned_ir
    x_value = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    bias_value = np.arange(16, dtype=np.float32) / 16
    (got,) = exe(x_value, bias_value)
    z = (x_value + bias_value).astype(np.float64)
    want = np.exp(z - z.max(1, keepdims=True)) / np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5)
