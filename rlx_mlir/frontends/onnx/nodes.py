"""Importing a graph's nodes one by one (the model's graph and Scan bodies):
ONNX's schema check, folding, else the node's importer."""

from __future__ import annotations

from functools import cache

import numpy as np
import onnx

from rlx_mlir.errors import RlxError
from rlx_mlir.frontends.onnx.context import (
    Import,
    Unsupported,
    Value,
)
from rlx_mlir.frontends.onnx.fold import fold


def import_nodes(ctx: Import, graph: onnx.GraphProto) -> list[str]:
    """Import the graph's nodes into `ctx` (its inputs already bound); one line per
    node that could not be imported, or per graph output that was not computed."""
    problems = []
    produced = {name for node in graph.node for name in node.output}
    for index, node in enumerate(graph.node):
        inputs = [ctx.values.get(name) if name else None for name in node.input]
        try:
            _check_node(node, inputs, produced, ctx)
            outputs = fold(node, inputs)
            if outputs is None:
                outputs = ctx.importers[node.op_type](ctx, node, inputs)
        except (Unsupported, RlxError, ValueError, KeyError) as error:
            problems.append(f"  {node.op_type} '{node.name or f'#{index}'}': {error}")
            continue
        except (TypeError, AttributeError, IndexError) as error:  # a node the schema check let through
            problems.append(f"  {node.op_type} '{node.name or f'#{index}'}': malformed node ({error})")
            continue
        for name, value in zip(node.output, outputs):
            ctx.values[name] = np.asarray(value) if isinstance(value, np.generic) else value
    if not problems:  # every node imported, yet an optional output of one was not
        missing = [v.name for v in graph.output if v.name not in ctx.values]
        problems = [f"  output '{name}': not computed by the importer" for name in missing]
    return problems


ONNX_DOMAINS = ("", "ai.onnx")
"""The domains of ONNX's standard ops (nodes of other domains, e.g. com.microsoft, are custom ops)."""


@cache
def _checker_context(opset: int) -> onnx.checker.C.CheckerContext:
    context = onnx.checker.C.CheckerContext()
    context.ir_version = onnx.IR_VERSION
    context.opset_imports = {"": opset}
    return context


def _check_node(node: onnx.NodeProto, inputs: list[Value | None], produced: set[str], ctx: Import) -> None:
    """A node the importer can take: ONNX's domain, an importer, every input known."""
    if node.domain not in ONNX_DOMAINS:
        raise Unsupported(f"domain '{node.domain}' is not ONNX's standard one; rlx imports only standard ops")
    if node.op_type not in ctx.importers:
        raise Unsupported("no importer for this op type")
    try:  # ONNX's own schema check: required attributes, input and output counts
        onnx.checker.check_node(
            _without_subgraphs(node), _checker_context(ctx.opset), onnx.checker.C.LexicalScopeContext()
        )
    except onnx.checker.ValidationError as error:
        raise Unsupported(f"invalid node: {str(error).strip().splitlines()[0]}") from None
    for name, value in zip(node.input, inputs):
        if name and value is None:
            if name not in produced:
                raise Unsupported(
                    f"input '{name}' is no graph input, initializer or node output (a missing initializer?)"
                )
            raise Unsupported("an input comes from a node that was not imported")


def _without_subgraphs(node: onnx.NodeProto) -> onnx.NodeProto:
    """The node for the schema check: a body graph that reads outer names would fail
    the checker's (empty) scope, so each is replaced by an empty graph; the body's
    nodes are checked one by one when it is imported."""
    if not any(a.type == onnx.AttributeProto.GRAPH for a in node.attribute):
        return node
    stripped = onnx.NodeProto()
    stripped.CopyFrom(node)
    for attribute in stripped.attribute:
        if attribute.type == onnx.AttributeProto.GRAPH:
            attribute.g.CopyFrom(onnx.GraphProto(name=attribute.g.name))
    return stripped
