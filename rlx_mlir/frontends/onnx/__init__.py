"""ONNX import: an ONNX model as one rlx function.

    module = rlx_mlir.frontends.onnx.load("model.onnx", input_shapes={"x": (1, 128)})
    exe = rlx_mlir.compile(module)

The function's arguments and results follow the graph's inputs (those not
given by an initializer) and outputs, in order. Every value's shape must be
static: `input_shapes` fixes dynamic input dimensions (as onnx-mlir's
`--shapeInformation`). Values that do not depend on an input - initializers,
`Constant` nodes and the shape arithmetic exporters write (Shape -> Gather ->
Unsqueeze -> Concat -> Reshape) - are folded with NumPy at import, so shape
operands are known; a shape that truly depends on input data is an error
naming the node.

Each supported op type is one small function in `IMPORTERS` (opsets 13 and
up). Where ONNX's meaning differs from an rlx op's, the importer composes it
from rlx ops (Mod with fmod=0, Gemm's alpha and beta, HardSigmoid's alpha and
beta, Elu's alpha, ...). A model with nodes it cannot import fails with one
`CompileError` listing every node that failed on its own (op type, name,
reason), not only the first, then one line summing up the nodes that failed
only because an input had (their count, the first few, their op types).
"""

from rlx_mlir.frontends.onnx.context import ELEMENT_TYPES, Unsupported
from rlx_mlir.frontends.onnx.fold import FOLDS
from rlx_mlir.frontends.onnx.load import IMPORTERS, MAX_ELEMENTS, load

__all__ = ["ELEMENT_TYPES", "FOLDS", "IMPORTERS", "MAX_ELEMENTS", "Unsupported", "load"]
