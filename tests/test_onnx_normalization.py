"""ONNX BatchNormalization, InstanceNormalization and GroupNormalization
(rlx_mlir/frontends/onnx/normalization.py): torch's exports of its norm layers
against torch, the nodes against onnxruntime or ONNX's reference evaluator, and
the located errors of what the importer does not take. ONNX's node tests
(test_onnx_node_tests.py) cover their examples and epsilons, training mode too."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import rlx_mlir as rlx
from rlx_mlir.errors import CompileError
from rlx_mlir.frontends.onnx import load

RNG = np.random.default_rng(31)


def node_model(
    op: str, x: np.ndarray, operands: dict[str, np.ndarray], known: bool, **attributes: object
) -> onnx.ModelProto:
    """One `op` node over x and `operands`, given as initializers (`known`) or as graph inputs."""
    node = helper.make_node(op, ["x", *operands], ["y"], **attributes)

    def value(name: str, a: np.ndarray) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)

    inputs = [value("x", x)] + ([] if known else [value(n, a) for n, a in operands.items()])
    initializers = [numpy_helper.from_array(a, n) for n, a in operands.items()] if known else []
    graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def feeds(model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    names = {i.name for i in model.graph.input}
    return {n: a for n, a in arrays.items() if n in names}


def batch_statistics(channels: int, dtype: type) -> dict[str, np.ndarray]:
    return {
        "scale": RNG.standard_normal(channels).astype(dtype),
        "B": RNG.standard_normal(channels).astype(dtype),
        "mean": RNG.standard_normal(channels).astype(dtype),
        "var": RNG.uniform(0.5, 2.0, channels).astype(dtype),
    }


@pytest.mark.parametrize("known", [True, False], ids=["initializers", "inputs"])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_normalization_matches_onnxruntime(shape: tuple[int, ...], dtype: type, known: bool) -> None:
    """Known statistics become one multiply-add per element; given ones are composed as written."""
    x = RNG.standard_normal(shape).astype(dtype)
    stats = batch_statistics(shape[1], dtype)
    model = node_model("BatchNormalization", x, stats, known, epsilon=1e-3)
    module = load(model)
    assert ("rlx.rsqrt" in str(module)) != known
    arrays = feeds(model, {"x": x, **stats})
    (want,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, arrays)
    (got,) = rlx.compile(module)(*arrays.values())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_batch_normalization_in_training_mode_matches_onnx_reference() -> None:
    """The batch's statistics, and the running averages as two more outputs."""
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    stats = batch_statistics(4, np.float32)
    node = helper.make_node(
        "BatchNormalization", ["x", *stats], ["y", "running_mean", "running_var"], training_mode=1, momentum=0.8
    )
    value = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)
    outputs = [helper.make_empty_tensor_value_info(n) for n in ("y", "running_mean", "running_var")]
    initializers = [numpy_helper.from_array(a, n) for n, a in stats.items()]
    model = helper.make_model(
        helper.make_graph([node], "g", [value], outputs, initializers), opset_imports=[helper.make_opsetid("", 15)]
    )
    want = ReferenceEvaluator(model).run(None, {"x": x})
    got = rlx.compile(load(model))(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 2)], ids=str)
def test_instance_normalization_is_one_standardize_region_and_matches_onnxruntime(shape: tuple[int, ...]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32) * 3 + 1
    operands = {
        "scale": RNG.standard_normal(shape[1]).astype(np.float32),
        "B": RNG.standard_normal(shape[1]).astype(np.float32),
    }
    model = node_model("InstanceNormalization", x, operands, True, epsilon=1e-4)
    exe = rlx.compile(load(model))
    assert exe.planned_ir.count("rlx.standardize_region") == 1
    (want,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(exe(x)[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("known", [True, False], ids=["initializers", "inputs"])
def test_group_normalization_matches_onnx_reference(known: bool) -> None:
    x = RNG.standard_normal((2, 6, 3, 4)).astype(np.float32)
    operands = {"scale": RNG.standard_normal(6).astype(np.float32), "bias": RNG.standard_normal(6).astype(np.float32)}
    model = node_model("GroupNormalization", x, operands, known, num_groups=3)
    arrays = feeds(model, {"x": x, **operands})
    (want,) = ReferenceEvaluator(model).run(None, arrays)
    (got,) = rlx.compile(load(model))(*arrays.values())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class NormLayers(torch.nn.Module):
    """The norm layers torch exports as these ops: BatchNorm1d after a linear layer (no
    conv to fold it into), InstanceNorm2d with affine weights, GroupNorm."""

    def __init__(self) -> None:
        super().__init__()
        self.linear, self.batch = torch.nn.Linear(12, 8), torch.nn.BatchNorm1d(8)
        self.instance = torch.nn.InstanceNorm2d(8, affine=True)
        self.group = torch.nn.GroupNorm(4, 8)
        for norm in (self.batch, self.instance, self.group):
            torch.nn.init.normal_(norm.weight)
            torch.nn.init.normal_(norm.bias)
        self.batch.running_mean.normal_()
        self.batch.running_var.uniform_(0.5, 2.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.batch(self.linear(x).transpose(1, 2)))  # [N, 8, 6]
        image = h.reshape(-1, 8, 2, 3)
        return self.group(self.instance(image) + image)


def test_torch_exports_of_its_norm_layers_match_torch() -> None:
    """TorchScript's export (dynamo writes the same ops for these layers: BatchNormalization, InstanceNormalization)."""
    torch.manual_seed(0)
    module = NormLayers().eval()
    x = RNG.standard_normal((3, 6, 12)).astype(np.float32)
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (torch.from_numpy(x),), buffer, input_names=["x"], dynamo=False)
        want = module(torch.from_numpy(x)).numpy()
    (got,) = rlx.compile(load(buffer.getvalue()))(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("op", "x", "operands", "attributes", "message"),
    [
        (
            "BatchNormalization",
            (4,),
            {n: (4,) for n in ("s", "b", "m", "v")},
            {},
            r"has shape \[4\]; BatchNormalization takes \[N, C, ...\]",
        ),
        (
            "BatchNormalization",
            (2, 4),
            {"s": (3,), "b": (4,), "m": (4,), "v": (4,)},
            {},
            r"scale has shape \[3\], not \[4\]",
        ),
        ("InstanceNormalization", (2, 4), {"s": (4,), "b": (4,)}, {}, r"InstanceNormalization takes \[N, C, D1, ...\]"),
        (
            "GroupNormalization",
            (2, 6, 3),
            {"s": (6,), "b": (6,)},
            {"num_groups": 4},
            "num_groups 4 does not divide the 6 channels",
        ),
    ],
)
def test_what_the_importer_does_not_take_is_a_located_error(
    op: str, x: tuple[int, ...], operands: dict, attributes: dict, message: str
) -> None:
    arrays = {n: np.ones(s, np.float32) for n, s in operands.items()}
    with pytest.raises(CompileError, match=message) as error:
        load(node_model(op, np.zeros(x, np.float32), arrays, True, **attributes))
    assert op in str(error.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rms_normalization_is_one_standardize_region_and_matches_float64(dtype: type) -> None:
    """Over the last axis (opset 23), f16 computed in f32 (stash_type) and rounded once."""
    x = (RNG.standard_normal((3, 5, 16)) * 4).astype(dtype)
    operands = {"scale": RNG.standard_normal(16).astype(dtype)}
    model = node_model("RMSNormalization", x, operands, True, epsilon=1e-3)
    model.opset_import[0].version = 23
    exe = rlx.compile(load(model))
    assert exe.planned_ir.count("rlx.standardize_region") == 1
    wide = x.astype(np.float64)
    want = wide / np.sqrt((wide * wide).mean(-1, keepdims=True) + 1e-3) * operands["scale"].astype(np.float64)
    tolerance = 1e-5 if dtype is np.float32 else 4e-3
    np.testing.assert_allclose(exe(x)[0].astype(np.float64), want, rtol=tolerance, atol=tolerance)
