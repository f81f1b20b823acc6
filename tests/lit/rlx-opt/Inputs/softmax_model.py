"""Write a small ONNX model for the rlx-opt import test: y = Softmax(x · W + b)
with a dynamic batch dimension 'batch' (usage: python softmax_model.py OUT.onnx)."""

import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 3])
weights = [
    numpy_helper.from_array(np.ones((4, 3), np.float32), "w"),
    numpy_helper.from_array(np.zeros(3, np.float32), "b"),
]
nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"]), helper.make_node("Softmax", ["h"], ["y"], axis=-1)]
onnx.save(helper.make_model(helper.make_graph(nodes, "classifier", [x], [y], weights)), sys.argv[1])
