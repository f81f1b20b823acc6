"""Property tests: random elementwise graphs with random broadcasts.

fused == unfused == NumPy, and every memory plan keeps live tensors apart,
never beats the liveness lower bound and stays within 1.15x of it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlx_mlir as rlx
from rlx_mlir.context import make_context
from rlx_mlir.dialects.rlx import ConstantOp
from rlx_mlir.passes.canonicalize_broadcast import CanonicalizeBroadcastPass
from rlx_mlir.passes.fuse_elementwise import FuseElementwisePass
from rlx_mlir.passes.plan_memory import collect_buffers, lower_bound, place

# ops whose float32 results NumPy reproduces exactly (the numerics of the
# transcendentals are tested against float64 elsewhere)
EXACT_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
EXACT_UNARY = {"neg": np.negative, "abs": np.abs, "relu": lambda x: np.maximum(x, np.float32(0)), "floor": np.floor}


@st.composite
def broadcast_shapes(draw: st.DrawFn) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """An output shape and 2-3 input shapes that broadcast to it."""
    out = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    inputs = []
    for _ in range(draw(st.integers(2, 3))):
        drop = draw(st.integers(0, len(out)))
        shape = tuple(1 if draw(st.booleans()) else s for s in out[drop:])
        inputs.append(shape)
    inputs[0] = out  # at least one operand spans the whole output
    return out, inputs


@st.composite
def graphs(draw: st.DrawFn) -> tuple[rlx.Builder, list[tuple[int, ...]], list[tuple], list[int]]:
    _out, shapes = draw(broadcast_shapes())
    builder = rlx.Builder("g")
    values = [builder.input(s) for s in shapes]
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(EXACT_BINARY)))
            a, b = draw(st.sampled_from(values)), draw(st.sampled_from(values))
            values.append(builder.binary(name, a, b))
            steps.append((name, values.index(a), values.index(b)))
        else:
            name = draw(st.sampled_from(sorted(EXACT_UNARY)))
            a = draw(st.sampled_from(values))
            values.append(builder.unary(name, a))
            steps.append((name, values.index(a)))
    results = draw(st.lists(st.sampled_from(values[len(shapes) :]), min_size=1, max_size=2, unique_by=id))
    builder.output(*results)
    return builder, shapes, steps, [values.index(r) for r in results]


def numpy_eval(inputs: list[np.ndarray], steps: list[tuple], results: list[int]) -> list[np.ndarray]:
    values = list(inputs)
    for name, *args in steps:
        fn = EXACT_BINARY.get(name) or EXACT_UNARY[name]
        values.append(fn(*(values[i] for i in args)))
    return [values[i] for i in results]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(0, 2**31 - 1))
def test_fused_equals_unfused_equals_numpy(graph, seed) -> None:
    builder, shapes, steps, results = graph
    module = builder.module()
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    fused = rlx.compile(module)(*inputs)
    unfused = rlx.compile(module, pipeline="")(*inputs)
    expected = numpy_eval(inputs, steps, results)
    for f, u, e in zip(fused, unfused, expected):
        np.testing.assert_array_equal(f, u)
        np.testing.assert_array_equal(f, np.broadcast_to(e, f.shape))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_capped_fusion_equals_unfused(graph, max_ops, seed) -> None:
    """A chain cut into regions of at most max_ops ops computes the same bits."""
    builder, shapes, _, _ = graph
    module = builder.module()
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    capped = rlx.compile(module, pipeline=f"canonicalize-broadcast,fuse-elementwise{{max-ops={max_ops}}}")(*inputs)
    unfused = rlx.compile(module, pipeline="")(*inputs)
    for c, u in zip(capped, unfused):
        np.testing.assert_array_equal(c, u)


@st.composite
def planning_graphs(draw: st.DrawFn) -> rlx.Builder:
    """Chains and diamonds over tensors of varied sizes (so best fit matters)."""
    builder = rlx.Builder("p")
    sizes = draw(st.lists(st.sampled_from([16, 64, 100, 256, 1000, 4096]), min_size=1, max_size=3))
    pools = {n: [builder.input((n,))] for n in sizes}
    for _ in range(draw(st.integers(2, 14))):
        n = draw(st.sampled_from(sizes))
        pool = pools[n]
        if len(pool) > 1 and draw(st.booleans()):
            a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
            pool.append(builder.binary(draw(st.sampled_from(["add", "mul"])), a, b))
        else:
            pool.append(builder.unary(draw(st.sampled_from(["exp", "tanh", "neg"])), draw(st.sampled_from(pool))))
    builder.output(*(pool[-1] for pool in pools.values()))
    return builder


@settings(max_examples=60, deadline=None)
@given(planning_graphs(), st.booleans())
def test_memory_plan_invariants(builder, fuse) -> None:
    module = builder.module()
    ctx = make_context()
    CanonicalizeBroadcastPass().apply(ctx, module)
    if fuse:
        FuseElementwisePass().apply(ctx, module)
    function = next(iter(module.ops))
    block = function.body.block
    buffers = collect_buffers(block)
    constants = {op.result for op in block.ops if isinstance(op, ConstantOp)}
    assert not any(b.value in constants for b in buffers)  # constants are outside the arena
    arena = place(buffers)
    bound = lower_bound(buffers)
    for i, a in enumerate(buffers):
        assert a.offset % 64 == 0
        for b in buffers[i + 1 :]:
            if a.overlaps_in_time(b):
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
    assert arena >= bound
    # Placing in schedule order is not optimal: sizes 256 (steps 1-5), 64 (3-11), 448
    # (7-9) fit in the bound's 512 bytes only if the 64 goes above where the 448
    # will be. The plan wastes at most 15%, or one buffer on a small graph (which
    # the old bound hid: constants, then in the arena, padded it).
    largest = max((b.size for b in buffers), default=0)
    assert arena <= max(1.15 * bound, bound + largest) + 1e-9
