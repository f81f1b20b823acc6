"""ONNX Conv, MaxPool, GlobalAveragePool and AveragePool import
(rlx_mlir/frontends/onnx/conv.py) against onnxruntime: models built with
onnx.helper over the attributes (auto_pad modes, strides, dilations, group,
bias), and small torch modules exported with torch.onnx. ONNX's own node
tests of these ops run in tests/test_onnx.py."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import rlx_mlir as rlx
from rlx_mlir.frontends.onnx import load

# (name, input shape, weight shape, bias, attributes)
CONVS = (
    ("plain_1d", (2, 3, 11), (4, 3, 3), True, {}),
    ("pads_stride_dilation_1d", (2, 3, 11), (4, 3, 3), False, {"pads": [2, 1], "strides": [2], "dilations": [2]}),
    ("same_upper_1d", (1, 4, 10), (4, 1, 4), True, {"auto_pad": "SAME_UPPER", "group": 4}),
    ("same_lower_2d", (1, 2, 7, 6), (3, 2, 2, 3), True, {"auto_pad": "SAME_LOWER", "strides": [2, 1]}),
    ("valid_2d", (2, 2, 6, 6), (4, 2, 3, 3), False, {"auto_pad": "VALID", "strides": [1, 2]}),
    ("groups_2d", (1, 4, 6, 5), (6, 2, 3, 3), True, {"group": 2, "pads": [1, 0, 1, 2], "kernel_shape": [3, 3]}),
    ("depthwise_2d", (2, 3, 5, 5), (3, 1, 3, 3), False, {"group": 3, "pads": [1, 1, 1, 1]}),
)


def _conv_model() -> tuple[bytes, dict[str, np.ndarray]]:
    """One graph with every case of CONVS (weights and biases as initializers), a
    GlobalAveragePool and two AveragePools: one compile for all of them."""
    rng = np.random.default_rng(0)
    nodes, inputs, outputs, initializers, feeds = [], [], [], [], {}
    for name, x_shape, w_shape, bias, attrs in CONVS:
        x = rng.standard_normal(x_shape).astype(np.float32)
        feeds[f"{name}_x"] = x
        inputs.append(helper.make_tensor_value_info(f"{name}_x", TensorProto.FLOAT, x_shape))
        initializers.append(numpy_helper.from_array(rng.standard_normal(w_shape).astype(np.float32), f"{name}_w"))
        operands = [f"{name}_x", f"{name}_w"]
        if bias:
            initializers.append(
                numpy_helper.from_array(rng.standard_normal(w_shape[0]).astype(np.float32), f"{name}_b")
            )
            operands.append(f"{name}_b")
        nodes.append(helper.make_node("Conv", operands, [name], name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    pools = (
        ("gap", "GlobalAveragePool", {}),
        ("max_same", "MaxPool", {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]}),
        (
            "max_ceil_dilated",
            "MaxPool",
            {"kernel_shape": [2, 2], "ceil_mode": 1, "dilations": [2, 1], "strides": [2, 2]},
        ),
        ("avg_pads", "AveragePool", {"kernel_shape": [3, 2], "pads": [1, 1, 1, 0], "strides": [2, 1]}),
        (
            "avg_ceil_include",
            "AveragePool",
            {"kernel_shape": [2, 2], "ceil_mode": 1, "pads": [1, 0, 0, 1], "strides": [2, 2], "count_include_pad": 1},
        ),
    )
    x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
    feeds["pool_x"] = x
    inputs.append(helper.make_tensor_value_info("pool_x", TensorProto.FLOAT, x.shape))
    for name, op_type, attrs in pools:
        nodes.append(helper.make_node(op_type, ["pool_x"], [name], name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "convs", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return model.SerializeToString(), feeds


def test_conv_and_pool_nodes_match_onnxruntime() -> None:
    blob, feeds = _conv_model()
    session = onnxruntime.InferenceSession(blob)
    want = session.run(None, feeds)
    names = [o.name for o in session.get_outputs()]
    got = rlx.compile(load(blob))(*(feeds[i.name] for i in session.get_inputs()))
    for name, g, w in zip(names, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=name)


class Vision(torch.nn.Module):
    """A strided Conv2d stem, a 3x3 max pool (ResNet's), a grouped 3x3 Conv2d with ReLU,
    average pooling and a global average pool: the conv and pool shapes of ResNet and ViT, small."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 4, stride=2, padding=1)
        self.grouped = torch.nn.Conv2d(8, 8, 3, padding=1, groups=2, bias=False)
        self.pool = torch.nn.AvgPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.max_pool2d(self.stem(x), 3, stride=2, padding=1)
        h = self.pool(torch.relu(self.grouped(h)))
        return torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)


class CausalConv1d(torch.nn.Module):
    """Mamba's depthwise causal Conv1d: padding k - 1 on both sides, the last k - 1
    outputs cut (what transformers' Mamba exports), then SiLU; and Whisper's
    strided Conv1d with GELU."""

    def __init__(self, channels: int = 6, kernel: int = 4) -> None:
        super().__init__()
        self.depthwise = torch.nn.Conv1d(channels, channels, kernel, groups=channels, padding=kernel - 1)
        self.strided = torch.nn.Conv1d(channels, 4, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.silu(self.depthwise(x)[..., : x.shape[-1]])
        return torch.nn.functional.gelu(self.strided(h))


@pytest.mark.parametrize(("module", "shape"), [(Vision, (2, 3, 16, 16)), (CausalConv1d, (2, 6, 9))])
def test_an_exported_conv_module_matches_onnxruntime(module: type[torch.nn.Module], shape: tuple[int, ...]) -> None:
    torch.manual_seed(5)
    x = torch.randn(*shape)
    buffer = io.BytesIO()
    torch.onnx.export(module().eval(), (x,), buffer, input_names=["x"], opset_version=17, dynamo=False)
    blob = buffer.getvalue()
    (want,) = onnxruntime.InferenceSession(blob).run(None, {"x": x.numpy()})
    (got,) = rlx.compile(load(blob))(x.numpy())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class Decoder(torch.nn.Module):
    """Transposed convs as decoders use them: a U-Net's 2x2 stride-2 upsampling, a
    grouped 3x3 one with padding and output_padding, a dilated 1-d one of stride 3."""

    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.ConvTranspose2d(6, 4, 2, stride=2)
        self.grouped = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.wide = torch.nn.ConvTranspose1d(6, 3, 3, stride=3, dilation=2, padding=2, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.grouped(torch.relu(self.up(x)))  # [N, 6, 4H, 4W]
        return self.wide(h.flatten(2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_an_exported_conv_transpose_module_matches_torch(dtype: torch.dtype) -> None:
    torch.manual_seed(6)
    module = Decoder().to(dtype).eval()
    x = torch.randn(2, 6, 3, 5, dtype=dtype)
    buffer = io.BytesIO()
    torch.onnx.export(module, (x,), buffer, input_names=["x"], opset_version=17, dynamo=False)
    assert sum(n.op_type == "ConvTranspose" for n in onnx.load_from_string(buffer.getvalue()).graph.node) == 3
    (got,) = rlx.compile(load(buffer.getvalue()))(x.numpy())
    with torch.no_grad():
        want = module(x).numpy()
    tolerance = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)


def test_a_conv_transpose_of_weights_given_at_run_time_matches_torch() -> None:
    """The weight's transpose and flip become rlx ops when it is a graph input."""
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 1], pads=[1, 0, 0, 1], group=3)
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, (1, 6, 4, 3)), helper.make_tensor_value_info("w", f, (6, 2, 3, 2))]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", f, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x, w = (
        np.random.default_rng(k).standard_normal(s).astype(np.float32)
        for k, s in enumerate([(1, 6, 4, 3), (6, 2, 3, 2)])
    )
    module = load(model)
    assert "rlx.reverse" in str(module)
    (got,) = rlx.compile(module)(x, w)
    full = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=(2, 1), groups=3)
    np.testing.assert_allclose(got, full[:, :, 1:, :-1].numpy(), rtol=1e-5, atol=1e-5)


def _single_conv(attrs: dict, x_type: int = TensorProto.FLOAT) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", x_type, (1, 2, 5))
    w = numpy_helper.from_array(np.ones((2, 2, 3), helper.tensor_dtype_to_np_dtype(x_type)), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="the_conv", **attrs)
    graph = helper.make_graph([node], "g", [x], [helper.make_tensor_value_info("y", x_type, None)], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(
    ("attrs", "x_type", "message"),
    [
        (
            {"auto_pad": "SAME"},
            TensorProto.FLOAT,
            'auto_pad "SAME" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID',
        ),
        ({"pads": [1]}, TensorProto.FLOAT, r"pads \[1\] need 2 entries \(begins, then ends\)"),
        ({"kernel_shape": [2]}, TensorProto.FLOAT, r"kernel_shape \[2\] differs from the weight's kernel \[3\]"),
        ({}, TensorProto.INT32, "element type i32 is not one of f16, bf16, f32, f64"),
    ],
)
def test_an_unsupported_conv_is_a_compile_error_naming_the_node(attrs: dict, x_type: int, message: str) -> None:
    with pytest.raises(rlx.CompileError, match=f"Conv 'the_conv': {message}"):
        load(_single_conv(attrs, x_type))


@pytest.mark.parametrize(
    ("x_shape", "kernel", "attrs", "bias_known"),
    [
        ((2, 4, 5, 3), (2, 2), {"strides": [2, 2]}, True),
        ((1, 4, 5, 3), (2, 1), {"strides": [3, 2], "output_padding": [1, 1], "group": 2}, False),
        ((1, 6, 4), (3,), {"strides": [3], "pads": [1, 2], "group": 3}, True),
        ((1, 2, 2, 3, 2), (2, 2, 1), {"strides": [2, 2, 2]}, True),
        ((1, 4, 5, 4), (3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, True),
        ((2, 4, 3, 4), (4, 4), {"strides": [2, 2], "pads": [1, 2, 1, 0], "group": 2}, False),
        ((1, 2, 7), (3,), {"strides": [3], "dilations": [2], "pads": [2, 0]}, True),
        ((1, 2, 6), (5,), {"strides": [2], "dilations": [3], "output_padding": [1]}, True),
    ],
    ids=["unet", "kernel-inside-stride", "1d-pads", "3d", "3x3-overlapping", "4x4-groups", "dilated", "dilated-2"],
)
def test_a_conv_transpose_of_known_weights_is_one_conv_over_its_phases(
    x_shape: tuple[int, ...], kernel: tuple[int, ...], attrs: dict, bias_known: bool
) -> None:
    """Each output phase (position mod stride) is a conv of x with that phase's taps;
    one conv computes them all as channels, then they are spread into the output."""
    groups = attrs.get("group", 1)
    rng = np.random.default_rng(9)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((x_shape[1], 2, *kernel)).astype(np.float32)  # 2 output channels per group
    bias = rng.standard_normal(w.shape[1] * groups).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, x_shape)]
    known = [numpy_helper.from_array(w, "w")]
    if bias_known:
        known.append(numpy_helper.from_array(bias, "b"))
    else:
        inputs.append(helper.make_tensor_value_info("b", f, bias.shape))
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", f, None)], known)
    module = load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert str(module).count("rlx.conv ") == 1 and "rlx.pad" not in str(module)
    (got,) = rlx.compile(module)(*([x] if bias_known else [x, bias]))
    transpose = getattr(torch.nn.functional, f"conv_transpose{len(kernel)}d")
    rank = len(kernel)
    pads = attrs.get("pads", [0] * 2 * rank)
    full = transpose(
        torch.from_numpy(x),
        torch.from_numpy(w),
        torch.from_numpy(bias),
        stride=attrs["strides"],
        output_padding=attrs.get("output_padding", 0),
        groups=groups,
        dilation=attrs.get("dilations", 1),
    )
    index = (slice(None), slice(None), *(slice(p, n - q) for p, q, n in zip(pads[:rank], pads[rank:], full.shape[2:])))
    np.testing.assert_allclose(got, full[index].numpy(), rtol=1e-5, atol=1e-5)


def test_a_conv_transpose_weight_of_the_wrong_shape_is_a_compile_error_naming_the_node() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 4, 5))
    w = numpy_helper.from_array(np.ones((2, 2, 3), np.float32), "w")
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="the_deconv")
    graph = helper.make_graph([node], "g", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    message = r"ConvTranspose 'the_deconv': weight shape \[2, 2, 3\] does not fit input \[1, 4, 5\] in 1 group\(s\)"
    with pytest.raises(rlx.CompileError, match=message):
        load(model)
