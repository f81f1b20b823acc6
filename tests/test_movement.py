"""Data movement and indexing ops against NumPy, on every element type they accept.

Each (op, element type) test compiles ONE module holding all of that op's shape
cases side by side (compiling is the slow part) and compares every result with
a NumPy reference: byte-exact for pure data movement (quiet-NaN payloads and
signed zeros included), NaN-aware and signed-zero-aware for scatter reductions.
(Signaling NaNs are not used: bf16 moves quiet them - reported separately.)

Also: out-of-range indices raise IndexError naming the op, axis and index and
leave the executable usable; scatter order with duplicate indices; reshape and
narrow/slice views in the memory plan; movement ops folded into elementwise
regions (default pipeline == pipeline "" == NumPy); large multi-threaded cases.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from movement_reference import (
    COMPLEX,
    FLOATS,
    REDUCTION_TYPES,
    TYPES,
    Case,
    all_perms,
    arr,
    bits_equal,
    compile_text,
    fill_value,
    index_array,
    module_text,
    random_indices,
    ref_concat,
    ref_gather_backward,
    ref_gather_elements,
    ref_gather_nd,
    ref_scatter_add,
    ref_scatter_elements,
    ref_scatter_nd,
    ref_slice,
    run_cases,
    sample,
    textbook_mul,
    ttype,
    values_equal,
)

import rlx_mlir as rlx

ALL_TYPES = list(TYPES)
# the types whose codecs differ (f16 via fpext, bf16 as i16 bits, i1 as a byte, complex as
# two components) plus f32: these get every shape case; the others (plain loads and stores
# of 1..16 bytes) get a representative subset, to keep the suite fast
CORE_TYPES = ("f16", "bf16", "f32", "i1", "complex<f64>")


def trim(cases: list[Case], t: str, keep: tuple[int, ...]) -> list[Case]:
    """All cases for the core types, the `keep` ones for the rest."""
    return cases if t in CORE_TYPES else [c for k, c in enumerate(cases) if k in keep]


def check(cases: list[Case]) -> None:
    failures = run_cases(cases)
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------------------
# layout ops
# ---------------------------------------------------------------------------
def transpose_cases(t: str) -> list[Case]:
    cases = []
    shapes = [
        ((), ()),
        ((5,), (0,)),
        ((3, 4), (1, 0)),
        ((0, 3), (1, 0)),
        ((1, 7), (1, 0)),
        ((2, 3, 4), None),
        ((2, 1, 3, 2), None),
    ]
    some = [(3, 2, 1, 0), (0, 2, 1, 3), (1, 3, 0, 2), (2, 0, 3, 1)]
    for k, (shape, perm) in enumerate(shapes):
        x = sample(shape, t, seed=k)
        perms = [perm] if perm is not None else all_perms(len(shape))
        if len(shape) == 4 and t not in CORE_TYPES:
            perms = some
        for p in perms:
            cases.append(Case(f"{shape} perm {p}", "transpose", [x], f"perm = {arr(p)}", np.transpose(x, p).copy()))
    return cases


def slice_cases(t: str) -> list[Case]:
    specs = [  # shape, starts, steps, lengths
        ((5, 6), (1, 0), (2, 1), (2, 6)),
        ((5, 6), (4, 5), (-1, -2), (5, 3)),  # negative steps
        ((5, 6), (-1, -3), (-2, 1), (3, 3)),  # negative starts
        ((5, 6), (0, 2), (1, 1), (0, 4)),  # zero length
        ((0, 3), (0, 1), (1, 1), (0, 2)),  # zero-size input
        ((3, 4, 5), (2, -1, 0), (-1, -1, 2), (3, 4, 3)),
        ((7,), (6,), (-3,), (3,)),
        ((4,), (2,), (5,), (1,)),  # step past the end, one element
        ((), (), (), ()),  # rank 0
    ]
    cases = []
    for k, (shape, starts, steps, lengths) in enumerate(specs):
        x = sample(shape, t, seed=k)
        cases.append(
            Case(
                f"{shape} {starts} {steps}",
                "slice",
                [x],
                f"starts = {arr(starts)}, steps = {arr(steps)}",
                ref_slice(x, starts, steps, lengths),
            )
        )
    return cases


def narrow_cases(t: str) -> list[Case]:
    specs = [
        ((4, 6), 0, 1, 2),
        ((4, 6), 1, 3, 3),
        ((4, 6), -1, 0, 6),
        ((2, 3, 4), 1, 0, 0),
        ((2, 3, 4), 2, 1, 2),
        ((0, 5), 1, 2, 3),
        ((5,), 0, 4, 1),
    ]
    cases = []
    for k, (shape, axis, start, length) in enumerate(specs):
        x = sample(shape, t, seed=k)
        want = np.take(x, np.arange(start, start + length), axis=axis)
        cases.append(
            Case(
                f"{shape} axis {axis}",
                "narrow",
                [x],
                f"axis = {axis} : i64, start = {start} : i64, length = {length} : i64",
                want,
            )
        )
    return cases


def reverse_cases(t: str) -> list[Case]:
    specs = [
        ((4, 6), (0,)),
        ((4, 6), (1,)),
        ((4, 6), (0, 1)),
        ((4, 6), (-1,)),
        ((2, 3, 4), (0, 2)),
        ((2, 3, 4), (1,)),
        ((), ()),
        ((0, 3), (0, 1)),
        ((5,), ()),
        ((9,), (0,)),
    ]
    cases = []
    for k, (shape, axes) in enumerate(specs):
        x = sample(shape, t, seed=k)
        cases.append(Case(f"{shape} axes {axes}", "reverse", [x], f"axes = {arr(axes)}", np.flip(x, axes).copy()))
    return cases


NP_MODE = {"constant": "constant", "replicate": "edge", "circular": "wrap", "reflect": "reflect"}
PAD_SPECS = [  # shape, before, after, mode, value
    ((3, 4), (1, 0), (1, 2), "constant", 7.5),
    ((3, 4), (2, 1), (0, 3), "constant", -2.5),
    ((3, 4), (1, 1), (1, 1), "constant", -0.0),
    ((3, 4), (1, 0), (1, 2), "replicate", 0.0),
    ((3, 4), (2, 3), (3, 2), "circular", 0.0),
    ((3, 4), (2, 3), (1, 2), "reflect", 0.0),
    ((0, 3), (1, 0), (2, 1), "constant", 3.0),  # pad of a zero-size axis (constant only)
    ((0, 3), (0, 1), (0, 2), "replicate", 0.0),  # zero-size axis left unpadded
    ((), (), (), "constant", 1.0),  # rank 0
    ((3,), (7,), (9,), "reflect", 0.0),  # widths far beyond n - 1
    ((2, 3), (3, 5), (4, 2), "reflect", 0.0),  # n = 2: period 2
    ((3,), (8,), (5,), "circular", 0.0),  # several periods
    ((1, 3), (4, 0), (3, 6), "replicate", 0.0),
    ((1, 3), (2, 0), (3, 1), "circular", 0.0),  # circular of a size-1 axis
    ((2, 3, 2), (1, 0, 2), (0, 2, 1), "reflect", 0.0),
    ((4, 5), (0, 0), (0, 0), "reflect", 0.0),  # no padding
]


PAD_SUBSET = (0, 1, 4, 5, 6, 8, 9, 12)


def pad_cases(t: str) -> list[Case]:
    cases = []
    for k, (shape, before, after, mode, value) in enumerate(PAD_SPECS):
        if t not in CORE_TYPES and k not in PAD_SUBSET:
            continue
        x = sample(shape, t, seed=k)
        widths = np.array(list(zip(before, after)), dtype=np.int64).reshape(len(shape), 2)
        if not shape:
            want = x.copy()
        elif mode == "constant":
            want = np.pad(x, widths, mode="constant", constant_values=fill_value(value, t))
        else:
            want = np.pad(x, widths, mode=NP_MODE[mode])
        attrs = f'before = {arr(before)}, after = {arr(after)}, mode = "{mode}", value = {value!r} : f64'
        cases.append(Case(f"{shape} {mode} {before} {after}", "pad", [x], attrs, want))
    return cases


def concat_cases(t: str) -> list[Case]:
    specs = [  # input shapes, axis, result rank
        ([(2, 3), (1, 3), (4, 3)], 0, 2),
        ([(2, 1), (2, 0), (2, 3), (2, 2)], 1, 2),  # a zero-size input
        ([(2, 3), (2, 2)], -1, 2),
        ([(2, 2, 4), (1, 4)], 1, 3),  # [1, D] token broadcast over the batch
        ([(2, 3, 4), (4,), (2, 1, 4)], 1, 3),  # rank-1 input: extent 1, broadcast
        ([(3, 2), ()], 0, 2),  # rank-0 input broadcast to a [1, 2] row
        ([(2, 3, 4), (3, 4), (2, 3, 4)], 0, 3),  # rank-2 input with extent 1... on axis 0
        ([(5,)], 0, 1),  # a single input
        ([(2, 2), (2, 2), (2, 2), (2, 2), (2, 2)], 1, 2),
    ]
    cases = []
    for k, (shapes, axis, rank) in enumerate(specs):
        xs = [sample(s, t, seed=10 * k + j) for j, s in enumerate(shapes)]
        cases.append(Case(f"{shapes} axis {axis}", "concat", xs, f"axis = {axis} : i64", ref_concat(xs, axis, rank)))
    return trim(cases, t, (0, 1, 3, 4, 5))


LAYOUT = {
    "transpose": transpose_cases,
    "slice": slice_cases,
    "narrow": narrow_cases,
    "reverse": reverse_cases,
    "pad": pad_cases,
    "concat": concat_cases,
}


@pytest.mark.parametrize("t", ALL_TYPES)
@pytest.mark.parametrize("op", list(LAYOUT))
def test_layout_op(op: str, t: str) -> None:
    check(LAYOUT[op](t))


def test_concat_lower_rank_input_has_extent_one_on_a_missing_axis() -> None:
    """[3, 4] and [4] -> [4, 4] on axis 0: the rank-1 input is one row, not four."""
    a, b = sample((3, 4), "f32"), sample((4,), "f32", seed=1)
    check([Case("row", "concat", [a, b], "axis = 0 : i64", np.concatenate([a, b[None]], 0))])


def test_pad_fill_value_is_converted_like_cast() -> None:
    """The f64 `value` saturates (NaN -> 0) into integers, is != 0 for i1, rounds once
    (to nearest even) into f16/bf16 and has a zero imaginary part for complex."""
    values = {
        "0x7FF0000000000000": np.inf,
        "0xFFF0000000000000": -np.inf,
        "0x7FF8000000000000": np.nan,
        "1.0e10": 1e10,
        "-1.0e10": -1e10,
        "-2.75": -2.75,
        "1.0e-40": 1e-40,
        "1.00048828125": 1.00048828125,
        "0.0": 0.0,
    }
    cases = []
    for t in ("i8", "ui8", "ui32", "i64", "f16", "bf16", "f32", "f64", "i1", "complex<f32>"):
        x = sample((2,), t, specials=False)
        for text, value in values.items():
            want = np.concatenate([fill_value(value, t).reshape(1), x])
            cases.append(
                Case(f"{t} {text}", "pad", [x], f"before = {arr([1])}, after = {arr([0])}, value = {text} : f64", want)
            )
    check(cases)


def test_pad_modes_match_periodic_definitions_for_any_width() -> None:
    """np.pad's reflect/wrap for widths > n - 1 are the periodic extensions (period
    2(n-1) and n); the rlx results equal both np.pad and these definitions."""
    x = np.arange(1, 5, dtype=np.float64)
    n = x.size
    for mode, np_mode in (("reflect", "reflect"), ("circular", "wrap"), ("replicate", "edge")):
        before, after = 11, 13
        j = np.arange(-before, n + after)
        if mode == "reflect":
            r = j % (2 * (n - 1))
            src = np.where(r < n, r, 2 * (n - 1) - r)
        elif mode == "circular":
            src = j % n
        else:
            src = np.clip(j, 0, n - 1)
        want = x[src]
        assert np.array_equal(np.pad(x, (before, after), mode=np_mode), want)
        check([Case(mode, "pad", [x], f'before = {arr([before])}, after = {arr([after])}, mode = "{mode}"', want)])


# ---------------------------------------------------------------------------
# gathers
# ---------------------------------------------------------------------------
def idx_kind(k: int) -> str:
    return "i32" if k % 2 else "i64"


def gather_cases(t: str) -> list[Case]:
    cases = []
    x = sample((4, 6), t)
    fixed = {  # negative and duplicate indices, i32 and i64
        "dup/neg i64": (index_array([3, -1, 0, 0, -4, 2, 3], "i64"), 0),
        "dup/neg i32": (index_array([3, -1, 0, 0, -4, 2, 3], "i32"), 0),
        "axis 1 2-D idx": (index_array([[5, -6, 0], [-1, 2, 2]], "i32"), 1),
        "axis -1": (index_array([1, -2, 1], "i64"), -1),
        "rank-0 idx": (index_array(-2, "i64"), 0),
        "rank-0 idx axis 1": (index_array(4, "i32"), 1),
        "zero indices": (index_array([], "i64"), 0),
    }
    for label, (idx, axis) in fixed.items():
        cases.append(Case(label, "gather", [x, idx], f"axis = {axis} : i64", np.take(x, idx, axis=axis)))
    empty = sample((0, 3), t)
    none = index_array([], "i32")
    cases.append(Case("0x3 data, 0 indices", "gather", [empty, none], "axis = 0 : i64", np.take(empty, none, axis=0)))
    for k, (shape, ishape, axis) in enumerate(
        [((3, 4, 5), (2, 2), 1), ((3, 4, 5), (6,), 2), ((7,), (3, 2), 0), ((2, 0, 3), (4,), 0), ((3, 4, 5), (5,), 0)]
    ):
        d = sample(shape, t, seed=k + 1)
        idx = random_indices(ishape, shape[axis], idx_kind(k), seed=k)
        cases.append(
            Case(
                f"{shape} axis {axis} {ishape}", "gather", [d, idx], f"axis = {axis} : i64", np.take(d, idx, axis=axis)
            )
        )
    return trim(cases, t, (0, 1, 2, 4, 6, 7, 8, 11))


def gather_elements_cases(t: str) -> list[Case]:
    specs = [  # data shape, indices shape, axis
        ((4, 5), (3, 5), 0),
        ((4, 5), (4, 7), 1),
        ((4, 5), (2, 3), 1),
        ((4, 5), (2, 3), 0),
        ((2, 3, 4), (2, 3, 6), -1),
        ((2, 3, 4), (1, 5, 2), 1),
        ((4, 5), (0, 5), 0),
        ((6,), (9,), 0),
    ]
    cases = []
    for k, (shape, ishape, axis) in enumerate(specs):
        d = sample(shape, t, seed=k)
        idx = random_indices(ishape, shape[axis], idx_kind(k), seed=k)
        cases.append(
            Case(
                f"{shape} {ishape} axis {axis}",
                "gather_elements",
                [d, idx],
                f"axis = {axis} : i64",
                ref_gather_elements(d, idx, axis),
            )
        )
    return trim(cases, t, (0, 1, 2, 4, 6))


def gather_nd_cases(t: str) -> list[Case]:
    specs = [  # data shape, indices shape, batch_dims
        ((3, 4, 5), (2, 1), 0),
        ((3, 4, 5), (2, 2), 0),
        ((3, 4, 5), (2, 3), 0),
        ((3, 4, 5), (3, 2, 2), 0),
        ((3, 4, 5), (3, 2, 1), 1),
        ((3, 4, 5), (3, 2), 1),
        ((3, 4, 5), (3, 4, 1), 2),
        ((3, 4, 5), (0, 2), 0),
        ((5,), (1,), 0),
        ((5,), (4, 1), 0),
    ]
    cases = []
    for k, (shape, ishape, b) in enumerate(specs):
        d = sample(shape, t, seed=k)
        coords = ishape[-1]
        rng = np.random.default_rng(k)
        raw = np.stack([rng.integers(-shape[b + c], shape[b + c], ishape[:-1]) for c in range(coords)], axis=-1)
        idx = index_array(raw, idx_kind(k), ishape)
        cases.append(
            Case(f"{shape} {ishape} b={b}", "gather_nd", [d, idx], f"batch_dims = {b} : i64", ref_gather_nd(d, idx, b))
        )
    return trim(cases, t, (1, 3, 4, 5, 7))


def gather_backward_cases(t: str) -> list[Case]:
    specs = [  # result shape, indices (values), axis
        ((4, 3), [0, 2, 2, -1, 0, 2], 0),
        ((2, 5, 3), [[1, 1], [-5, 4]], 1),
        ((3, 4), [3, -1, 3], -1),
        ((4, 3), [], 0),
        ((6,), [5, -1, 0, 5], 0),
        ((3, 2), 1, 0),
    ]
    cases = []
    for k, (out_shape, values, axis) in enumerate(specs):
        idx = index_array(values, idx_kind(k))
        a = axis % len(out_shape)
        dy = sample(out_shape[:a] + idx.shape + out_shape[a + 1 :], t, seed=k, specials=False)
        cases.append(
            Case(
                f"{out_shape} axis {axis}",
                "gather_backward",
                [dy, idx],
                f"axis = {axis} : i64",
                ref_gather_backward(dy, idx, out_shape, axis),
                exact=False,
            )
        )
    return cases


GATHERS = {"gather": gather_cases, "gather_elements": gather_elements_cases, "gather_nd": gather_nd_cases}


@pytest.mark.parametrize("t", ALL_TYPES)
@pytest.mark.parametrize("op", list(GATHERS))
def test_gather_op(op: str, t: str) -> None:
    check(GATHERS[op](t))


# Accumulating ops add like rlx.add, which has no i1 form (the verifier says so; tested below).
ACCUMULATE_TYPES = [t for t in ALL_TYPES if t != "i1"]


@pytest.mark.parametrize("t", ACCUMULATE_TYPES)
def test_gather_backward(t: str) -> None:
    check(gather_backward_cases(t))


# ---------------------------------------------------------------------------
# scatters
# ---------------------------------------------------------------------------
def scatter_data(shape: tuple[int, ...], t: str, reduction: str, seed: int) -> np.ndarray:
    if reduction == "mul":
        # keep magnitudes near 1 (no overflow on every step); complex: finite
        return sample(shape, t, seed, specials=t in FLOATS, small=True)
    x = sample(shape, t, seed, specials=t not in COMPLEX or reduction == "none")
    if reduction in ("max", "min") and t in FLOATS:
        # np.maximum/minimum return an operand-order-dependent zero on +0/-0 ties: no zeros
        x[x == 0] = 1.5
    return x


def scatter_add_cases(t: str) -> list[Case]:
    specs = [
        ((4, 3), [0, 2, 2, -1, 0, 2]),
        ((5,), [4, -5, 4, 4]),
        ((3, 2, 2), [1, 1]),
        ((3, 4), []),
        ((2, 3), [0, 1, 0, 1, 0, 1, -2]),
    ]
    cases = []
    for k, (out_shape, values) in enumerate(specs):
        idx = index_array(values, idx_kind(k))
        upd = sample((len(values), *out_shape[1:]), t, seed=k, specials=False)
        cases.append(
            Case(
                f"{out_shape} {values}",
                "scatter_add",
                [upd, idx],
                "",
                ref_scatter_add(upd, idx, out_shape[0]),
                exact=False,
            )
        )
    return cases


def scatter_nd_cases(t: str, reduction: str) -> list[Case]:
    specs = [  # data shape, index tuples
        ((4, 3), [[0], [2], [-1], [2], [0]]),
        ((3, 4, 2), [[0, 1], [2, -1], [0, 1], [-3, 3]]),
        ((3, 4, 2), [[[0, 1, 1], [2, 3, 0]], [[0, 1, 1], [-1, -4, -2]]]),
        ((5,), [[4], [-5], [4], [0], [4]]),
        ((2, 3), np.zeros((0, 2), dtype=int)),
    ]
    if reduction in ("mul", "max", "min"):
        specs = specs[1:4]
    cases = []
    for k, (shape, tuples) in enumerate(specs):
        idx = index_array(tuples, idx_kind(k))
        data = scatter_data(shape, t, reduction, seed=k)
        upd = scatter_data(idx.shape[:-1] + shape[idx.shape[-1] :], t, reduction, seed=k + 50)
        cases.append(
            Case(
                f"{shape} {idx.tolist()}",
                "scatter_nd",
                [data, idx, upd],
                f'reduction = "{reduction}"',
                ref_scatter_nd(data, idx, upd, reduction),
                exact=reduction == "none",
            )
        )
    return trim(cases, t, (0, 1, 2, 4)) if reduction in ("none", "add") else cases


def scatter_elements_cases(t: str, reduction: str) -> list[Case]:
    specs = [  # data shape, indices shape, axis
        ((4, 5), (6, 5), 0),
        ((4, 5), (3, 7), 1),
        ((4, 5), (2, 3), -1),
        ((2, 3, 4), (2, 5, 3), 1),
        ((6,), (10,), 0),
        ((4, 5), (0, 5), 0),
    ]
    if reduction in ("mul", "max", "min"):
        specs = specs[1:4]
    cases = []
    for k, (shape, ishape, axis) in enumerate(specs):
        idx = random_indices(ishape, shape[axis], idx_kind(k), seed=k)
        data = scatter_data(shape, t, reduction, seed=k)
        upd = scatter_data(ishape, t, reduction, seed=k + 50)
        cases.append(
            Case(
                f"{shape} {ishape} axis {axis}",
                "scatter_elements",
                [data, idx, upd],
                f'axis = {axis} : i64, reduction = "{reduction}"',
                ref_scatter_elements(data, idx, upd, axis, reduction),
                exact=reduction == "none",
            )
        )
    return trim(cases, t, (0, 1, 3, 5)) if reduction in ("none", "add") else cases


REDUCING = [(r, t) for r, types in REDUCTION_TYPES.items() for t in types]


@pytest.mark.parametrize("t", ACCUMULATE_TYPES)
def test_scatter_add(t: str) -> None:
    check(scatter_add_cases(t))


@pytest.mark.parametrize(("reduction", "t"), REDUCING)
def test_scatter_nd(reduction: str, t: str) -> None:
    check(scatter_nd_cases(t, reduction))


@pytest.mark.parametrize(("reduction", "t"), REDUCING)
def test_scatter_elements(reduction: str, t: str) -> None:
    check(scatter_elements_cases(t, reduction))


@pytest.mark.parametrize("t", ("f32", "bf16", "i8"))
def test_scatter_max_min_propagate_nan(t: str) -> None:
    """Like np.maximum/np.minimum: a NaN on either side wins; ints: plain max/min."""
    data = (
        np.array([1.0, np.nan, -3.0, 4.0, 5.0]).astype(TYPES[t])
        if t != "i8"
        else np.array([1, -128, 3, 127, 5], np.int8)
    )
    idx = index_array([[0], [1], [2], [2], [4], [0]], "i64")
    upd = (
        np.array([np.nan, 2.0, 7.0, np.nan, -1.0, 2.0]).astype(TYPES[t])
        if t != "i8"
        else np.array([-100, 100, 0, 4, 6, 2], np.int8)
    )
    for r in ("max", "min"):
        check(
            [
                Case(
                    r,
                    "scatter_nd",
                    [data, idx, upd],
                    f'reduction = "{r}"',
                    ref_scatter_nd(data, idx, upd, r),
                    exact=False,
                )
            ]
        )
    if t == "f32":
        got = compile_text(scatter_text("max"))(data, idx, upd)[0]
        assert np.isnan(got[[0, 1, 2]]).all() and got[3] == 4.0 and got[4] == 5.0


def scatter_text(reduction: str) -> str:
    return f"""func.func @f(%d: tensor<5xf32>, %i: tensor<6x1xi64>, %u: tensor<6xf32>) -> tensor<5xf32> {{
  %r = rlx.scatter_nd %d, %i, %u {{reduction = "{reduction}"}} : (tensor<5xf32>, tensor<6x1xi64>, tensor<6xf32>) -> tensor<5xf32>
  func.return %r : tensor<5xf32>
}}"""


def test_scatter_duplicates_last_write_wins_and_add_accumulates() -> None:
    data = np.zeros((4, 2), np.float32)
    idx = index_array([[1], [3], [1], [-3], [1]], "i32")
    upd = np.arange(10, dtype=np.float32).reshape(5, 2) + 1
    none = compile_text(module_nd("none"))
    add = compile_text(module_nd("add"))
    for _ in range(3):  # deterministic across calls
        (got,) = none(data, idx, upd)
        assert np.array_equal(got, [[0, 0], [9, 10], [0, 0], [3, 4]])
        (acc,) = add(data, idx, upd)
        want = data.copy()
        np.add.at(want, idx[:, 0], upd)
        assert np.array_equal(acc, want)
    # scatter_elements along axis 1, and scatter_add (np.add.at)
    d = np.zeros((2, 4), np.int64)
    i = index_array([[2, 2, 0, 2], [-1, 3, 3, 0]], "i64")
    u = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int64)
    check(
        [
            Case(
                "elements none",
                "scatter_elements",
                [d, i, u],
                'axis = 1 : i64, reduction = "none"',
                np.array([[3, 0, 4, 0], [8, 0, 0, 7]], np.int64),
            ),
            Case(
                "elements add",
                "scatter_elements",
                [d, i, u],
                'axis = 1 : i64, reduction = "add"',
                np.array([[3, 0, 7, 0], [8, 0, 0, 18]], np.int64),
            ),
        ]
    )
    rows = index_array([2, 0, 2, 2], "i64")
    vals = np.arange(12, dtype=np.float64).reshape(4, 3)
    want = np.zeros((3, 3))
    np.add.at(want, rows, vals)
    check([Case("scatter_add", "scatter_add", [vals, rows], "", want)])


def module_nd(reduction: str) -> str:
    t_d, t_i, t_u = "tensor<4x2xf32>", "tensor<5x1xi32>", "tensor<5x2xf32>"
    return f"""func.func @f(%d: {t_d}, %i: {t_i}, %u: {t_u}) -> {t_d} {{
  %r = rlx.scatter_nd %d, %i, %u {{reduction = "{reduction}"}} : ({t_d}, {t_i}, {t_u}) -> {t_d}
  func.return %r : {t_d}
}}"""


# ---------------------------------------------------------------------------
# out-of-range indices
# ---------------------------------------------------------------------------
def index_error_cases() -> list:
    """(id, case builder taking the index value to plant, op name, axis, axis size)."""
    x46 = sample((4, 6), "f32")
    x345 = sample((3, 4, 5), "f32", seed=1)

    def gather(v: int, kind: str) -> Case:
        idx = index_array([0, v, -1], kind)
        return Case("gather", "gather", [x46, idx], "axis = 1 : i64", np.take(x46, [0, 0, -1], axis=1))

    def gather_elements(v: int, kind: str) -> Case:
        idx = np.zeros((2, 6), dtype=np.int64)
        idx[1, 3] = v
        ok = idx.copy()
        ok[1, 3] = 0
        return Case(
            "gather_elements",
            "gather_elements",
            [x46, index_array(idx, kind)],
            "axis = 0 : i64",
            ref_gather_elements(x46, ok, 0),
        )

    def gather_nd(v: int, kind: str) -> Case:
        idx = np.array([[0, 1], [2, v], [1, 0]])
        ok = idx.copy()
        ok[1, 1] = 0
        return Case(
            "gather_nd", "gather_nd", [x345, index_array(idx, kind)], "batch_dims = 0 : i64", ref_gather_nd(x345, ok, 0)
        )

    def gather_nd_batched(v: int, kind: str) -> Case:
        idx = np.array([[[1], [2]], [[0], [v]], [[3], [0]]])
        ok = idx.copy()
        ok[1, 1, 0] = 0
        return Case(
            "gather_nd", "gather_nd", [x345, index_array(idx, kind)], "batch_dims = 1 : i64", ref_gather_nd(x345, ok, 1)
        )

    def gather_backward(v: int, kind: str) -> Case:
        dy = sample((4, 3), "f32", specials=False)
        return Case(
            "gather_backward",
            "gather_backward",
            [dy, index_array([1, 1, v], kind)],
            "axis = 1 : i64",
            ref_gather_backward(dy, np.array([1, 1, 0]), (4, 5), 1),
            exact=False,
        )

    def scatter_add(v: int, kind: str) -> Case:
        upd = sample((3, 2), "f32", specials=False)
        return Case(
            "scatter_add",
            "scatter_add",
            [upd, index_array([v, 1, 1], kind)],
            "",
            ref_scatter_add(upd, np.array([0, 1, 1]), 5),
            exact=False,
        )

    def scatter_nd(v: int, kind: str) -> Case:
        data = sample((3, 4), "f32", specials=False)
        upd = sample((2,), "f32", seed=3, specials=False)
        return Case(
            "scatter_nd",
            "scatter_nd",
            [data, index_array([[1, 2], [v, 0]], kind), upd],
            'reduction = "add"',
            ref_scatter_nd(data, np.array([[1, 2], [0, 0]]), upd, "add"),
            exact=False,
        )

    def scatter_elements(v: int, kind: str) -> Case:
        data = sample((3, 4), "f32", specials=False)
        idx = np.array([[0, 1, v], [3, 3, 2]])
        ok = idx.copy()
        ok[0, 2] = 0
        upd = sample((2, 3), "f32", seed=4, specials=False)
        return Case(
            "scatter_elements",
            "scatter_elements",
            [data, index_array(idx, kind), upd],
            'axis = 1 : i64, reduction = "none"',
            ref_scatter_elements(data, ok, upd, 1, "none"),
        )

    return [
        ("gather", gather, 1, 6),
        ("gather_elements", gather_elements, 0, 4),
        ("gather_nd", gather_nd, 1, 4),
        ("gather_nd_batch_dims", gather_nd_batched, 1, 4),
        ("gather_backward", gather_backward, 1, 5),
        ("scatter_add", scatter_add, 0, 5),
        ("scatter_nd", scatter_nd, 0, 3),
        ("scatter_elements", scatter_elements, 1, 4),
    ]


@pytest.mark.parametrize("kind", ("i32", "i64"))
@pytest.mark.parametrize(
    ("build", "axis", "size"), [c[1:] for c in index_error_cases()], ids=[c[0] for c in index_error_cases()]
)
def test_out_of_range_index_raises_and_executable_stays_usable(build, axis: int, size: int, kind: str) -> None:
    valid = build(0, kind)
    exe = compile_text(module_text_one(valid))
    extremes = (-(2**31), 2**31 - 1) if kind == "i32" else (-(2**63), 2**63 - 1, 2**40)
    for bad in (size, -size - 1, size + 1000, *extremes):
        case = build(bad, kind)
        with pytest.raises(
            IndexError, match=rf"^rlx\.{case.op}: index {bad} is out of range for axis {axis} with size {size}$"
        ):
            exe(*case.operands)
        # -n and n - 1 are in range
        for edge in (-size, size - 1):
            exe(*build(edge, kind).operands)
        (got,) = exe(*valid.operands)
        assert values_equal(got, valid.want) if not valid.exact else bits_equal(got, valid.want), case.op


def module_text_one(case: Case) -> str:
    return module_text([case])


def test_any_index_into_a_zero_size_axis_is_out_of_range() -> None:
    d = np.zeros((0, 3), np.float32)
    idx = index_array(np.zeros((2, 3)), "i64")
    for case in (
        Case("gather", "gather", [d, index_array([0], "i32")], "axis = 0 : i64", np.zeros((1, 3), np.float32)),
        Case("gather_elements", "gather_elements", [d, idx], "axis = 0 : i64", np.zeros((2, 3), np.float32)),
        Case(
            "scatter_elements",
            "scatter_elements",
            [d, idx, np.ones((2, 3), np.float32)],
            'axis = 0 : i64, reduction = "none"',
            d,
        ),
    ):
        exe = compile_text(module_text_one(case))
        with pytest.raises(IndexError, match=rf"^rlx\.{case.op}: index 0 is out of range for axis 0 with size 0$"):
            exe(*case.operands)


def test_index_error_on_large_threaded_gather() -> None:
    table = sample((1000, 64), "f32", specials=False)
    idx = random_indices((100_000,), 1000, "i64")
    exe = compile_text(module_text_one(Case("big", "gather", [table, idx], "axis = 0 : i64", np.take(table, idx, 0))))
    bad = idx.copy()
    bad[77_777] = -1001
    with pytest.raises(IndexError, match=r"^rlx\.gather: index -1001 is out of range for axis 0 with size 1000$"):
        exe(table, bad)
    (got,) = exe(table, idx)
    assert bits_equal(got, np.take(table, idx, 0))


# ---------------------------------------------------------------------------
# views in the memory plan
# ---------------------------------------------------------------------------
VIEWS = """func.func @f(%x: tensor<4x6xf32>, %y: tensor<3x4x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>, tensor<24xf32>, tensor<1x2x6xf32>, tensor<2x3xf32>) {
  %a = rlx.add %x, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 2 : i64, length = 2 : i64} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %s = rlx.slice %a {starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %r = rlx.reshape %a : (tensor<4x6xf32>) -> tensor<24xf32>
  %b = rlx.mul %y, %y : (tensor<3x4x6xf32>, tensor<3x4x6xf32>) -> tensor<3x4x6xf32>
  %v = rlx.slice %b {starts = array<i64: 2, 1, 0>, steps = array<i64: 1, 1, 1>} : (tensor<3x4x6xf32>) -> tensor<1x2x6xf32>
  %c = rlx.narrow %a {axis = 1 : i64, start = 1 : i64, length = 3 : i64} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %w = rlx.narrow %c {axis = 0 : i64, start = 1 : i64, length = 2 : i64} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %en = rlx.exp %n : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %es = rlx.neg %s : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %er = rlx.abs %r : (tensor<24xf32>) -> tensor<24xf32>
  %ev = rlx.sqrt %v : (tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %ew = rlx.neg %w : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %en, %es, %er, %ev, %ew : tensor<2x6xf32>, tensor<2x6xf32>, tensor<24xf32>, tensor<1x2x6xf32>, tensor<2x3xf32>
}"""


def test_reshape_narrow_and_unit_step_slice_are_views() -> None:
    exe = compile_text(VIEWS, "")
    offsets = exe.memory_plan.offsets
    a, b = offsets["a"], offsets["b"]
    assert offsets["r"] == a
    assert offsets["n"] == a + 2 * 6 * 4
    assert offsets["s"] == a + 1 * 6 * 4
    assert offsets["v"] == b + (2 * 24 + 1 * 6) * 4
    assert offsets["c"] not in (a, a + 4)  # inner-axis narrow: a copy
    x, y = sample((4, 6), "f32", specials=False), np.abs(sample((3, 4, 6), "f32", seed=1, specials=False))
    got = exe(x, y)
    a_ = x + x
    with np.errstate(all="ignore"):
        want = (np.exp(a_[2:4]), -a_[1:3], np.abs(a_.reshape(24)), np.sqrt((y * y)[2:3, 1:3]), -a_[1:3, 1:4])
    (exp_got, *rest), (exp_want, *rest_want) = got, want
    np.testing.assert_allclose(exp_got, exp_want, rtol=1e-6)
    for g, w in zip(rest, rest_want):
        assert bits_equal(g, w.astype(np.float32))
    # the same graph, fused, gives the same results
    for g, f in zip(got, compile_text(VIEWS)(x, y)):
        assert bits_equal(g, f)


def test_returned_view_and_its_source_are_both_correct() -> None:
    text = """func.func @f(%x: tensor<4x6xi32>) -> (tensor<4x6xi32>, tensor<2x6xi32>, tensor<6x4xi32>) {
  %a = rlx.mul %x, %x : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 1 : i64, length = 2 : i64} : (tensor<4x6xi32>) -> tensor<2x6xi32>
  %r = rlx.reshape %a : (tensor<4x6xi32>) -> tensor<6x4xi32>
  func.return %a, %n, %r : tensor<4x6xi32>, tensor<2x6xi32>, tensor<6x4xi32>
}"""
    x = sample((4, 6), "i32")
    sq = x * x
    for pipeline in (None, ""):
        a, n, r = compile_text(text, pipeline)(x)
        assert bits_equal(a, sq) and bits_equal(n, sq[1:3]) and bits_equal(r, sq.reshape(6, 4))


# ---------------------------------------------------------------------------
# composition with elementwise ops: folded by the default pipeline
# ---------------------------------------------------------------------------
def composition_cases(t: str) -> list[tuple[str, str, list[np.ndarray], np.ndarray, str]]:
    """(id, body, inputs, want, folded op)."""
    T = lambda *s: ttype(s, t)  # noqa: E731
    x34, x43 = sample((3, 4), t, seed=1), sample((4, 3), t, seed=2)
    x234, x423 = sample((2, 3, 4), t, seed=3), sample((4, 2, 3), t, seed=4)
    x56, x3 = sample((5, 6), t, seed=5), sample((3,), t, seed=6)
    mul = textbook_mul  # rlx's complex product: one rounding per real operation
    with np.errstate(all="ignore"):
        return [
            (
                "transpose+add",
                f"%m = rlx.transpose %a0 {{perm = array<i64: 1, 0>}} : ({T(3, 4)}) -> {T(4, 3)}\n"
                f"  %r = rlx.add %m, %a1 : ({T(4, 3)}, {T(4, 3)}) -> {T(4, 3)}",
                [x34, x43],
                (x34.T + x43),
                "rlx.transpose",
            ),
            (
                "transpose3+mul",
                f"%m = rlx.transpose %a0 {{perm = array<i64: 2, 0, 1>}} : ({T(2, 3, 4)}) -> {T(4, 2, 3)}\n"
                f"  %r = rlx.mul %m, %a1 : ({T(4, 2, 3)}, {T(4, 2, 3)}) -> {T(4, 2, 3)}",
                [x234, x423],
                mul(np.transpose(x234, (2, 0, 1)), x423),
                "rlx.transpose",
            ),
            (
                "slice-neg-step+sub",
                f"%m = rlx.slice %a0 {{starts = array<i64: 4, -1>, steps = array<i64: -2, -2>}} : ({T(5, 6)}) -> {T(3, 3)}\n"
                f"  %r = rlx.sub %m, %a1 : ({T(3, 3)}, {T(3)}) -> {T(3, 3)}",
                [x56, x3],
                x56[4::-2, 5::-2] - x3,
                "rlx.slice",
            ),
            (
                "reverse+add",
                f"%m = rlx.reverse %a0 {{axes = array<i64: 0, 1>}} : ({T(5, 6)}) -> {T(5, 6)}\n"
                f"  %r = rlx.add %m, %a0 : ({T(5, 6)}, {T(5, 6)}) -> {T(5, 6)}",
                [x56],
                np.flip(x56) + x56,
                "rlx.reverse",
            ),
            (
                "expand+mul",
                f"%m = rlx.expand %a0 : ({T(3)}) -> {T(4, 3)}\n"
                f"  %r = rlx.mul %m, %a1 : ({T(4, 3)}, {T(4, 3)}) -> {T(4, 3)}",
                [x3, x43],
                mul(np.broadcast_to(x3, (4, 3)), x43),
                "rlx.expand",
            ),
            (
                "narrow+add",
                f"%m = rlx.narrow %a0 {{axis = 1 : i64, start = 2 : i64, length = 3 : i64}} : ({T(5, 6)}) -> {T(5, 3)}\n"
                f"  %r = rlx.add %m, %a1 : ({T(5, 3)}, {T(3)}) -> {T(5, 3)}",
                [x56, x3],
                x56[:, 2:5] + x3,
                "rlx.narrow",
            ),
            (
                "chain",
                f"%p = rlx.transpose %a0 {{perm = array<i64: 1, 0>}} : ({T(5, 6)}) -> {T(6, 5)}\n"
                f"  %q = rlx.reverse %p {{axes = array<i64: 1>}} : ({T(6, 5)}) -> {T(6, 5)}\n"
                f"  %m = rlx.slice %q {{starts = array<i64: 1, 4>, steps = array<i64: 2, -1>}} : ({T(6, 5)}) -> {T(3, 4)}\n"
                f"  %r = rlx.mul %m, %m : ({T(3, 4)}, {T(3, 4)}) -> {T(3, 4)}",
                [x56],
                mul(np.flip(x56.T, 1)[1::2, 4:0:-1], np.flip(x56.T, 1)[1::2, 4:0:-1]),
                "rlx.transpose",
            ),
        ]


COMPOSITION_TYPES = ("f32", "f16", "bf16", "i32", "ui8", "complex<f64>")


@pytest.mark.parametrize("t", COMPOSITION_TYPES)
def test_movement_folded_into_elementwise(t: str) -> None:
    for label, body, inputs, want, folded in composition_cases(t):
        args = ", ".join(f"%a{k}: {ttype(a.shape, t)}" for k, a in enumerate(inputs))
        out = ttype(want.shape, t)
        text = f"func.func @f({args}) -> {out} {{\n  {body}\n  func.return %r : {out}\n}}"
        fused, unfused = compile_text(text), compile_text(text, "")
        assert folded not in fused.planned_ir, label
        if folded == "rlx.expand":  # becomes the binary op's own broadcast
            assert "rlx.mul %a0, %a1" in fused.planned_ir, label
        else:
            assert "rlx.elementwise_region" in fused.planned_ir, label
        assert folded in unfused.planned_ir, label
        (got_f,), (got_u,) = fused(*inputs), unfused(*inputs)
        assert bits_equal(got_f, got_u), label
        want = np.asarray(want).astype(TYPES[t])
        assert values_equal(got_f, want), f"{label}\n got  {got_f}\n want {want}"


# ---------------------------------------------------------------------------
# large (multi-threaded) cases
# ---------------------------------------------------------------------------
def test_large_gather() -> None:
    table = sample((50_000, 64), "f32", seed=7)
    idx = random_indices((200_000,), 50_000, "i32", seed=7)
    check([Case("200k rows", "gather", [table, idx], "axis = 0 : i64", np.take(table, idx, axis=0))])


def test_large_transpose() -> None:
    x = sample((1024, 1024), "f32", seed=8)
    y = sample((512, 768), "f64", seed=9)
    h = sample((777, 1029), "f16", seed=10)
    b = sample((1000, 999), "i8", seed=11)
    c = sample((300, 513), "complex<f64>", seed=12)
    z = sample((64, 96, 80), "bf16", seed=13)
    check(
        [
            Case("1024x1024", "transpose", [x], "perm = array<i64: 1, 0>", x.T.copy()),
            Case("512x768 f64", "transpose", [y], "perm = array<i64: 1, 0>", y.T.copy()),
            Case("777x1029 f16", "transpose", [h], "perm = array<i64: 1, 0>", h.T.copy()),
            Case("1000x999 i8", "transpose", [b], "perm = array<i64: 1, 0>", b.T.copy()),
            Case("300x513 c128", "transpose", [c], "perm = array<i64: 1, 0>", c.T.copy()),
            Case("64x96x80 bf16", "transpose", [z], "perm = array<i64: 2, 0, 1>", np.transpose(z, (2, 0, 1)).copy()),
            Case("64x96x80 bf16 rev", "reverse", [z], "axes = array<i64: 0, 2>", np.flip(z, (0, 2)).copy()),
            Case(
                "1024x1024 slice",
                "slice",
                [x],
                "starts = array<i64: 1023, 1>, steps = array<i64: -3, 2>",
                x[1023::-3, 1::2].copy(),
            ),
        ]
    )


BLOCKED_TRANSPOSES = [  # (shape, type, perm): 16x16, 8x8 and 16x16-byte register blocks with ragged edges
    ((100, 83), "f32", (1, 0)),
    ((40, 37), "f64", (1, 0)),
    ((70, 90), "i8", (1, 0)),
    ((3, 40, 50), "bf16", (0, 2, 1)),
    ((33, 5, 47), "i32", (2, 1, 0)),
]


@pytest.mark.parametrize("streaming", [False, True], ids=["cached", "streaming"])
def test_blocked_transpose_at_every_output_alignment(streaming: bool) -> None:
    """Transposed copies move square register blocks aligned to the input's and output's cache lines,
    with element-wise edges; streaming outputs (non-temporal stores, forced here by a 1 KiB
    "last-level cache") take the blocks only where the output is element-aligned. Every byte offset
    of the output within a cache line, element-aligned or not, gives NumPy's bytes."""
    cases = [
        Case(
            f"{shape} {t} perm {perm}",
            "transpose",
            [sample(shape, t, seed=k)],
            f"perm = {arr(perm)}",
            np.transpose(sample(shape, t, seed=k), perm).copy(),
        )
        for k, (shape, t, perm) in enumerate(BLOCKED_TRANSPOSES)
    ]
    exe = rlx.compile(module_text(cases), tuning={"nontemporal_min_bytes": 1024 if streaming else 1 << 40})
    for offset in range(0, 64, 3):
        outs = []
        for case in cases:
            want = case.want
            buffer = np.zeros(want.nbytes + 64, np.uint8)
            outs.append(buffer[offset : offset + want.nbytes].view(want.dtype).reshape(want.shape))
        exe(*[c.operands[0] for c in cases], out=outs)
        for case, got in zip(cases, outs):
            assert bits_equal(np.ascontiguousarray(got), case.want), f"{case.label}, output at byte offset {offset}"


def test_large_gather_elements_nd_and_pad() -> None:
    d = sample((512, 300), "f32", seed=10)
    i = random_indices((512, 400), 300, "i64", seed=10)
    data = sample((64, 128, 32), "f64", seed=11)
    rng = np.random.default_rng(11)
    nd = np.stack([rng.integers(-64, 64, 50_000), rng.integers(-128, 128, 50_000)], -1)
    p = sample((700, 700), "i16", seed=12)
    check(
        [
            Case("gather_elements", "gather_elements", [d, i], "axis = 1 : i64", ref_gather_elements(d, i, 1)),
            Case(
                "gather_nd",
                "gather_nd",
                [data, index_array(nd, "i32")],
                "batch_dims = 0 : i64",
                data[nd[:, 0], nd[:, 1]],
            ),
            Case(
                "pad",
                "pad",
                [p],
                'before = array<i64: 300, 5>, after = array<i64: 2, 900>, mode = "reflect"',
                np.pad(p, [(300, 2), (5, 900)], mode="reflect"),
            ),
        ]
    )


FEEDING = """func.func @f(%x: tensor<5x6xf32>, %i: tensor<4xi32>, %j: tensor<3x2xi64>, %u: tensor<3xf32>) -> (tensor<3x4xf32>, tensor<30xf32>, tensor<3xf32>, tensor<3x6xf32>, tensor<3x2xf32>, tensor<6xf32>) {
  %a = rlx.add %x, %x : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
  %n = rlx.narrow %a {axis = 0 : i64, start = 2 : i64, length = 3 : i64} : (tensor<5x6xf32>) -> tensor<3x6xf32>
  %g = rlx.gather %n, %i {axis = 1 : i64} : (tensor<3x6xf32>, tensor<4xi32>) -> tensor<3x4xf32>
  %r = rlx.reshape %a : (tensor<5x6xf32>) -> tensor<30xf32>
  %k = rlx.reshape %j : (tensor<3x2xi64>) -> tensor<6xi64>
  %k1 = rlx.narrow %k {axis = 0 : i64, start = 3 : i64, length = 3 : i64} : (tensor<6xi64>) -> tensor<3xi64>
  %k2 = rlx.reshape %k1 : (tensor<3xi64>) -> tensor<3x1xi64>
  %s = rlx.scatter_nd %r, %k2, %u {reduction = "add"} : (tensor<30xf32>, tensor<3x1xi64>, tensor<3xf32>) -> tensor<30xf32>
  %t = rlx.transpose %a {perm = array<i64: 1, 0>} : (tensor<5x6xf32>) -> tensor<6x5xf32>
  %v = rlx.reverse %t {axes = array<i64: 0>} : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %ge = rlx.gather_nd %v, %j {batch_dims = 0 : i64} : (tensor<6x5xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  %w = rlx.slice %a {starts = array<i64: 4, 5>, steps = array<i64: -1, -2>} : (tensor<5x6xf32>) -> tensor<3x3xf32>
  %e = rlx.gather_backward %w, %k1 {axis = 1 : i64} : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<3x6xf32>
  %b = rlx.gather_elements %v, %j {axis = 0 : i64} : (tensor<6x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %o = rlx.scatter_add %ge, %k1 : (tensor<3xf32>, tensor<3xi64>) -> tensor<6xf32>
  func.return %g, %s, %ge, %e, %b, %o : tensor<3x4xf32>, tensor<30xf32>, tensor<3xf32>, tensor<3x6xf32>, tensor<3x2xf32>, tensor<6xf32>
}"""


def test_views_and_movement_results_feeding_indexed_ops() -> None:
    """Gathers/scatters reading a narrow/reshape view (at a non-zero arena offset) or a
    materialized transpose/reverse/slice of an intermediate: default pipeline == "" == NumPy."""
    x = sample((5, 6), "f32", specials=False)
    i = index_array([5, -6, 0, -1], "i32")
    j = index_array([[0, 4], [-6, -5], [5, -1]], "i64")
    u = sample((3,), "f32", seed=1, specials=False)
    a = x + x
    k1 = j.reshape(6)[3:]
    v = np.flip(a.T, 0)
    w = a[4:1:-1, 5::-2]
    want = [
        np.take(a[2:5], i, axis=1),
        ref_scatter_nd(a.reshape(30), k1.reshape(3, 1), u, "add"),
        ref_gather_nd(v, j, 0),
        ref_gather_backward(w, k1, (3, 6), 1),
        ref_gather_elements(v, j, 0),
        ref_scatter_add(ref_gather_nd(v, j, 0), k1, 6),
    ]
    results = [compile_text(FEEDING, pipeline)(x, i, j, u) for pipeline in (None, "")]
    offsets = compile_text(FEEDING, "").memory_plan.offsets
    assert offsets["n"] == offsets["a"] + 2 * 6 * 4 and offsets["r"] == offsets["a"]
    for k, w_ in enumerate(want):
        assert bits_equal(results[0][k], results[1][k]), k
        assert bits_equal(results[0][k], w_), f"result {k}\n got  {results[0][k]}\n want {w_}"


def test_bf16_data_movement_keeps_nan_payloads() -> None:
    """Copies move stored bits: a signaling NaN stays signaling, payloads stay."""
    bits = np.array([0x7F81, 0xFF95, 0x3F80, 0x8000], np.uint16)
    x = bits.view(ml_dtypes.bfloat16)
    text = """func.func @f(%x: tensor<4xbf16>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xbf16>) {
      %r = rlx.reverse %x {axes = array<i64: 0>} : (tensor<4xbf16>) -> tensor<4xbf16>
      %g = rlx.gather %x, %i {axis = 0 : i64} : (tensor<4xbf16>, tensor<4xi64>) -> tensor<4xbf16>
      func.return %r, %g : tensor<4xbf16>, tensor<4xbf16>
    }"""
    reversed_, gathered = rlx.compile(text)(x, np.array([1, 0, 3, 2], np.int64))
    np.testing.assert_array_equal(reversed_.view(np.uint16), bits[::-1])
    np.testing.assert_array_equal(gathered.view(np.uint16), bits[[1, 0, 3, 2]])
