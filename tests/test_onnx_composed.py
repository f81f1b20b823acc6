"""ONNX Einsum, CumSum, Trilu, OneHot, Tile and DepthToSpace (rlx_mlir/frontends/onnx/composed.py,
einsum.py) against onnxruntime, or NumPy (ONNX's reference) where onnxruntime has
no kernel for the element type; their shape-like operands at run time are errors."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import helper, numpy_helper
from test_onnx import EXPORTERS

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load

RNG = np.random.default_rng(21)


def graph_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    initializers: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """A model of `nodes` over graph inputs shaped and typed as the given arrays."""
    values = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs.items()
    ]
    results = [helper.make_empty_tensor_value_info(n) for n in outputs]
    known = [numpy_helper.from_array(a, n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(nodes, "g", values, results, known)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def run_both(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> tuple[list, list]:
    """(rlx's outputs, onnxruntime's)."""
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, inputs)
    got = rlx.compile(load(model))(*inputs.values())
    return got, want


def assert_match(got: list, want: list, exact: bool) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def sample(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# CumSum ----------------------------------------------------------------------

FLAGS = [(0, 0), (1, 0), (0, 1), (1, 1)]
"""(exclusive, reverse): every combination, one node each."""


def cumsum_model(x: np.ndarray, axis: int) -> onnx.ModelProto:
    nodes = [
        helper.make_node("CumSum", ["x", "axis"], [f"y{k}"], exclusive=e, reverse=r) for k, (e, r) in enumerate(FLAGS)
    ]
    return graph_model(nodes, {"x": x}, [f"y{k}" for k in range(len(FLAGS))], {"axis": np.array(axis, np.int64)})


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
@pytest.mark.parametrize(("shape", "axis"), [((3, 5, 4), 1), ((3, 5, 4), -1), ((37, 2), 0), ((1, 3), 0), ((0, 3), 1)])
def test_cumsum_exclusive_and_reverse_match_onnxruntime(shape: tuple[int, ...], axis: int, dtype: type) -> None:
    """Axes of lengths 1, 4, 5 and 37, first, inner and last, and an empty input."""
    x = sample(shape, dtype)
    got, want = run_both(cumsum_model(x, axis), {"x": x})
    assert_match(got, want, exact=dtype is not np.float32)


def test_cumsum_of_unsigned_integers_wraps_as_numpy() -> None:
    """onnxruntime has no uint32 CumSum kernel: ONNX's reference (np.cumsum) is the peer."""
    x = np.array([[4_000_000_000, 5, 7], [1, 2, 3]], np.uint32)
    got = rlx.compile(load(cumsum_model(x, 1)))(x)
    total = np.cumsum(x, 1, dtype=np.uint32)
    shifted = np.concatenate([np.zeros((2, 1), np.uint32), total[:, :-1]], 1)
    backward = np.flip(np.cumsum(np.flip(x, 1), 1, dtype=np.uint32), 1)
    backward_shifted = np.concatenate([backward[:, 1:], np.zeros((2, 1), np.uint32)], 1)
    for g, w in zip(got, [total, shifted, backward, backward_shifted]):
        np.testing.assert_array_equal(g, w)


# Trilu -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(2, 3, 5), (5, 3)])
def test_trilu_upper_lower_and_k_match_onnxruntime(shape: tuple[int, ...], dtype: type) -> None:
    ks = {"k_neg": -1, "k_pos": 2, "k_far": -9}
    nodes = [
        helper.make_node("Trilu", ["x", *k], [f"y_{upper}_{''.join(k)}"], upper=upper)
        for upper in (0, 1)
        for k in ([], *([name] for name in ks))
    ]
    outputs = [n.output[0] for n in nodes]
    x = sample(shape, dtype) if dtype is not np.bool_ else RNG.random(shape) < 0.7
    model = graph_model(nodes, {"x": x}, outputs, {n: np.array(k, np.int64) for n, k in ks.items()})
    got, want = run_both(model, {"x": x})
    assert_match(got, want, exact=True)


# OneHot ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("indices", "values_dtype", "axis"),
    [
        (np.array([[1, -1, 4], [0, 7, -5]], np.int64), np.float32, -1),
        (np.array([[1, -1, 4], [0, 7, -5]], np.int64), np.int64, 0),
        (np.array([[1, -1, 4], [0, 7, -5]], np.int32), np.float32, 1),
        (np.array([1.7, -1.2, 3.0, 4.5], np.float32), np.float32, -2),
        (np.zeros((0, 3), np.int64), np.float32, 1),
    ],
    ids=["i64-last-axis", "i64-int-values-axis0", "i32-middle-axis", "float-indices", "empty"],
)
def test_one_hot_matches_onnxruntime(indices: np.ndarray, values_dtype: type, axis: int) -> None:
    """Negative indices wrap by depth, out-of-range ones (7, -5) are all off; float
    indices are truncated; `values` given at run time (y) and as an initializer (z)."""
    values = np.array([-2, 3], values_dtype)
    nodes = [
        helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=axis),
        helper.make_node("OneHot", ["indices", "depth", "known_values"], ["z"], axis=axis),
    ]
    depth = np.array(5, values_dtype)  # the types onnxruntime has kernels for: depth's is the values'
    known = {"depth": depth, "known_values": values[::-1].copy()}
    model = graph_model(nodes, {"indices": indices, "values": values}, ["y", "z"], known)
    got, want = run_both(model, {"indices": indices, "values": values})
    assert_match(got, want, exact=True)


# Tile ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_tile_matches_onnxruntime(dtype: type) -> None:
    repeats = {"r_some": [2, 1, 3], "r_none": [1, 1, 1], "r_all": [3, 2, 2], "r_zero": [1, 0, 2]}
    nodes = [helper.make_node("Tile", ["x", name], [f"y_{name}"]) for name in repeats]
    x = sample((2, 3, 4), dtype)
    known = {n: np.array(r, np.int64) for n, r in repeats.items()}
    model = graph_model(nodes, {"x": x}, [n.output[0] for n in nodes], known)
    got, want = run_both(model, {"x": x})
    assert_match(got, want, exact=True)


# Einsum ----------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # rhs stored transposed
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("ji,jk->ik", [(4, 3), (4, 5)]),  # lhs stored transposed
    ("ij,kj", [(3, 4), (5, 4)]),  # implicit output: ik
    ("ijk,jil->kl", [(3, 4, 2), (4, 3, 5)]),  # two contracted labels, one transposed
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("bcl,bcs,bcsd->bcld", [(2, 2, 3), (2, 2, 4), (2, 2, 4, 5)]),  # a label needed by a later term
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),  # nothing contracted: a broadcast product
    ("ij,ij->ij", [(1, 4), (3, 4)]),  # a size-1 label broadcast
    ("ij,jk->ik", [(3, 1), (1, 4)]),
    ("ij,ij->i", [(3, 1), (3, 4)]),  # a contracted label of size 1 against 4: summed on the rhs first
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),  # implicit: the trace
    ("iji->j", [(3, 2, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("b...d,bd->b...", [(2, 3, 4, 5), (2, 5)]),
    ("bld, bsd -> bls", [(2, 3, 4), (2, 5, 4)]),  # spaces
    ("bclhn,bcshn->bclsh", [(1, 2, 3, 2, 4), (1, 2, 3, 2, 4)]),  # Mamba2's chunked scan
    ("bcshn,bhcs,bcshp->bchpn", [(1, 2, 3, 2, 4), (1, 2, 2, 3), (1, 2, 3, 2, 5)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_matches_onnxruntime(equation: str, shapes: list[tuple[int, ...]], dtype: type) -> None:
    names = [f"x{k}" for k in range(len(shapes))]
    inputs = {n: sample(s, dtype) for n, s in zip(names, shapes)}
    model = graph_model([helper.make_node("Einsum", names, ["y"], equation=equation)], inputs, ["y"])
    got, want = run_both(model, inputs)
    assert_match(got, want, exact=dtype is not np.float32)


def test_einsum_ellipses_of_different_ranks_broadcast_as_numpy() -> None:
    """NumPy aligns '...' axes on the right and broadcasts them, here [2, 1] against
    [3] (onnxruntime's shape inference requires equal ellipsis ranks)."""
    a, b = sample((2, 1, 3, 4), np.float32), sample((3, 4, 5), np.float32)
    model = graph_model(
        [helper.make_node("Einsum", ["a", "b"], ["y"], equation="...ij,...jk->...ik")], {"a": a, "b": b}, ["y"]
    )
    (got,) = rlx.compile(load(model))(a, b)
    np.testing.assert_allclose(got, np.einsum("...ij,...jk->...ik", a, b), rtol=1e-5, atol=1e-5)


def test_einsum_of_an_int8_type_takes_the_broadcast_product() -> None:
    """rlx.matmul takes no i8: a contraction of i8 operands multiplies and sums, wrapping as NumPy."""
    a, b = sample((3, 4), np.int8), sample((4, 2), np.int8)
    model = graph_model([helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")], {"a": a, "b": b}, ["y"])
    (got,) = rlx.compile(load(model))(a, b)
    np.testing.assert_array_equal(got, np.einsum("ij,jk->ik", a, b))


# Known inputs, errors ------------------------------------------------------------


def test_ops_of_known_inputs_fold_at_import() -> None:
    """Every input an initializer: the outputs are constants, equal to onnxruntime's."""
    known = {
        "x": np.arange(12, dtype=np.int64).reshape(3, 4),
        "axis": np.array(1, np.int64),
        "repeats": np.array([2, 1], np.int64),
        "indices": np.array([0, -1.5, 9], np.float32),
        "depth": np.array(4, np.float32),
        "values": np.array([0, 5], np.float32),
    }
    nodes = [
        helper.make_node("CumSum", ["x", "axis"], ["c"], exclusive=1, reverse=1),
        helper.make_node("Trilu", ["x"], ["t"], upper=0),
        helper.make_node("Tile", ["x", "repeats"], ["r"]),
        helper.make_node("OneHot", ["indices", "depth", "values"], ["o"], axis=0),
        helper.make_node("Add", ["c", "t"], ["s"]),  # a run-time op, so the function has one
    ]
    model = graph_model(nodes, {}, ["s", "r", "o"], known)
    module = load(model)
    assert not {"rlx.scan", "rlx.where", "rlx.expand"} & set(str(module).split())
    want = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {})
    assert_match(rlx.compile(module)(), want, exact=True)


ERRORS = [
    ("Tile", ["x", "n"], {}, "Tile 'node': its repeats operand depends on the inputs at run time"),
    ("Trilu", ["x", "n"], {}, "Trilu 'node': its k depends on the inputs at run time"),
    ("CumSum", ["x", "n"], {}, "CumSum 'node': its axis depends on the inputs at run time"),
    ("OneHot", ["n", "n", "x"], {}, "OneHot 'node': its depth depends on the inputs at run time"),
    ("Einsum", ["x", "x"], {"equation": "ij,jk,kl->il"}, "equation 'ij,jk,kl->il' has 3 input term(s) for 2"),
    ("Einsum", ["x"], {"equation": "ij->k"}, "output label(s) k name no input axis"),
    ("Einsum", ["x"], {"equation": "ijk->i"}, "term 'ijk' does not label the 2 axes of its input"),
    ("Einsum", ["x"], {"equation": "...j->j"}, "the inputs' '...' axes are missing from the output"),
    ("Einsum", ["x"], {"equation": "i1->i"}, "holds characters other than letters and one '...'"),
    ("Einsum", ["x", "x"], {"equation": "ij,ij->ii"}, "the output repeats label(s) i"),
    ("Einsum", ["x", "x"], {"equation": "ij,jk->ik"}, "label 'j' has sizes [2, 3], which do not broadcast"),
    ("Einsum", ["v"], {"equation": "ii->i"}, "label 'i' repeats over axes of sizes 1 and 3"),
]


@pytest.mark.parametrize(("op", "names", "attributes", "message"), ERRORS, ids=[e[3][:40] for e in ERRORS])
def test_run_time_shape_operands_and_bad_equations_are_located_errors(
    op: str, names: list[str], attributes: dict, message: str
) -> None:
    inputs = {"x": np.zeros((2, 3), np.float32), "v": np.zeros((1, 3), np.float32), "n": np.zeros(2, np.int64)}
    node = helper.make_node(op, names, ["y"], name="node", **attributes)
    model = graph_model([node], {n: inputs[n] for n in dict.fromkeys(names)}, ["y"])
    with pytest.raises(rlx.CompileError, match="cannot import 1 node") as info:
        load(model)
    assert message in str(info.value)


class SegmentSums(torch.nn.Module):
    """What Mamba2's chunked scan and TorchScript exports of masks and repeats write:
    a cumsum, segment sums masked by a tril, an einsum outer product, one_hot, repeat, triu."""

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        total = torch.cumsum(x, dim=-1)
        n = x.shape[-1]
        below = torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)
        segments = (total[..., :, None] - total[..., None, :]).masked_fill(~below, -1e9)
        mixed = torch.einsum("bhl,bhs->bhls", x, x) + segments
        hot = torch.nn.functional.one_hot(ids, 6).to(x.dtype)
        return mixed, hot, x.repeat(1, 2, 1), torch.triu(x)


@pytest.mark.parametrize("dynamo", EXPORTERS)
def test_torch_exports_of_the_composed_ops_match_onnxruntime(dynamo: bool) -> None:
    if dynamo:
        pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript (test extra)")
    torch.manual_seed(21)
    x, ids = torch.randn(2, 3, 5), torch.tensor([[1, 5, 0], [2, 3, 4]])
    buffer = io.BytesIO()
    torch.onnx.export(SegmentSums(), (x, ids), buffer, input_names=["x", "ids"], opset_version=18, dynamo=dynamo)
    types = {node.op_type for node in onnx.load_from_string(buffer.getvalue()).graph.node}
    assert {"CumSum", "Trilu", "Einsum", "Tile"} <= types
    inputs = {"x": x.numpy(), "ids": ids.numpy()}
    want = onnxruntime.InferenceSession(buffer.getvalue()).run(None, inputs)
    got = rlx.compile(load(buffer.getvalue()))(*inputs.values())
    assert_match(got, want, exact=False)


class PixelShuffle(torch.nn.Module):
    """Sub-pixel upsampling, which torch exports as DepthToSpace in CRD order (ONNX's
    node tests cover DCR, SpaceToDepth, GlobalMaxPool and Dropout)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pixel_shuffle(x, 2)


def test_a_torch_export_of_pixel_shuffle_matches_torch() -> None:
    x = torch.from_numpy(RNG.standard_normal((2, 8, 3, 5)).astype(np.float32))
    buffer = io.BytesIO()
    torch.onnx.export(PixelShuffle(), (x,), buffer, input_names=["x"], opset_version=18, dynamo=False)
    nodes = onnx.load_from_string(buffer.getvalue()).graph.node
    assert [n.op_type for n in nodes] == ["DepthToSpace"]
    assert {a.name: helper.get_attribute_value(a) for a in nodes[0].attribute}["mode"] == b"CRD"
    got = rlx.compile(load(buffer.getvalue()))(x.numpy())
    assert_match(got, [PixelShuffle()(x).numpy()], exact=True)
