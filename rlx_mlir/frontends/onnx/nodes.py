"""Importing a graph's nodes one by one (the model's graph and Scan bodies):
ONNX's schema check, folding, else the node's importer; what fails is reported
root causes first, the nodes that failed only through an input in one line."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import onnx
from xdsl.ir import Block, Operation, SSAValue

from rlx_mlir.errors import RlxError
from rlx_mlir.frontends.onnx.context import (
    Import,
    Unsupported,
    Value,
    value_name,
)
from rlx_mlir.frontends.onnx.fold import fold


@dataclass
class Problems:
    """What a graph's import could not do: its root causes first, then the nodes
    that failed only because an input had (a model with 2 unsupported nodes near
    its inputs has hundreds of those; each would only repeat a cause)."""

    causes: list[str] = field(default_factory=list)
    """One located line per node that failed on its own ("  Op 'name': reason"),
    or per graph output not computed."""
    knock_on: list[tuple[str, str]] = field(default_factory=list)
    """The nodes not imported only because an input was not: (op type, "Op 'name'")."""

    def __bool__(self) -> bool:
        return bool(self.causes or self.knock_on)

    def lines(self) -> list[str]:
        """The causes, then one line summing up the knock-on failures: their count,
        the first few nodes and the most common op types."""
        if not self.knock_on:
            return list(self.causes)
        first = ", ".join(label for _, label in self.knock_on[:SHOWN])
        more = ", ..." if len(self.knock_on) > SHOWN else ""
        counts = Counter(op for op, _ in self.knock_on).most_common()
        types = ", ".join(f"{op} {n}" for op, n in counts[:SHOWN])
        others = f", {len(counts) - SHOWN} other op type(s)" if len(counts) > SHOWN else ""
        return [
            *self.causes,
            f"  and {len(self.knock_on)} node(s) not imported only because an input was not: "
            f"{first}{more} (by op type: {types}{others})",
        ]


SHOWN = 3
"""How many knock-on nodes, and op types, the summary line names."""


def import_nodes(ctx: Import, graph: onnx.GraphProto) -> Problems:
    """Import the graph's nodes into `ctx` (its inputs already bound). A node that
    reads a value of a failed node (an input, or a name its body reads) is a
    knock-on failure, once its own checks (domain, importer, schema) pass."""
    problems = Problems()
    producers = {name: index for index, node in enumerate(graph.node) for name in node.output if name}
    failed: set[str] = set()
    for index, node in enumerate(graph.node):
        label = f"{node.op_type} '{node.name or f'#{index}'}'"
        inputs = [ctx.values.get(name) if name else None for name in node.input]
        try:
            _check_node(node, ctx)
            if failed.intersection(_reads(node)):
                problems.knock_on.append((node.op_type, label))
                failed.update(node.output)
                continue
            _check_inputs(node, inputs, index, producers)
            outputs = fold(node, inputs)
            if outputs is None:
                before = ctx.builder.block.last_op
                outputs = ctx.importers[node.op_type](ctx, node, inputs)
                _name_results(ctx, _after(ctx.builder.block, before), outputs, value_name(node.name or node.output[0]))
        except (Unsupported, RlxError, ValueError, KeyError) as error:
            problems.causes.append(f"  {label}: {error}")
            failed.update(node.output)
            continue
        except (TypeError, AttributeError, IndexError) as error:  # a node the schema check let through
            problems.causes.append(f"  {label}: malformed node ({error})")
            failed.update(node.output)
            continue
        for name, value in zip(node.output, outputs):
            ctx.values[name] = np.asarray(value) if isinstance(value, np.generic) else value
    if not problems:  # every node imported, yet an optional output of one was not
        missing = [v.name for v in graph.output if v.name not in ctx.values]
        problems.causes = [f"  output '{name}': not computed by the importer" for name in missing]
    return problems


def _after(block: Block, mark: Operation | None) -> list[Operation]:
    """The ops of `block` after `mark` (all of them when `mark` is None)."""
    ops = []
    op = block.first_op if mark is None else mark.next_op
    while op is not None:
        ops.append(op)
        op = op.next_op
    return ops


def _name_results(ctx: Import, ops: list[Operation], outputs: Sequence[object], name: str) -> None:
    """Name the results of the ops a node imported as, for the printed IR and
    `exe.profile`'s rows: the node's first output `name`, its k-th `name.outK`,
    the other results (a composed node's steps) `name.opJ`. A name a node of
    the same name took already gets `.dupN`, so the memory plan's by-name
    offsets keep every value apart."""
    taken = ctx.value_names[name]
    ctx.value_names[name] += 1
    base = name if taken == 0 else f"{name}.dup{taken}"
    for k, value in enumerate(outputs):
        if isinstance(value, SSAValue) and value.name_hint is None and value.owner in ops:
            value.name_hint = base if k == 0 else f"{base}.out{k}"
    steps = (result for op in ops for result in op.results if result.name_hint is None)
    for j, result in enumerate(steps, start=1):
        result.name_hint = f"{base}.op{j}"


def _reads(node: onnx.NodeProto) -> set[str]:
    """The names a node reads: its inputs and what its body graphs read from outside."""
    names = {name for name in node.input if name}
    for attribute in node.attribute:
        for body in [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else attribute.graphs:
            names |= _outer_names(body)
    return names


def _outer_names(graph: onnx.GraphProto) -> set[str]:
    """The names a body graph reads but does not define (its enclosing graph's values)."""
    defined = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    defined |= {name for node in graph.node for name in node.output}
    used = {v.name for v in graph.output}.union(*(_reads(node) for node in graph.node))
    return used - defined


ONNX_DOMAINS = ("", "ai.onnx")
"""The domains of ONNX's standard ops (nodes of other domains, e.g. com.microsoft, are custom ops)."""


@cache
def _checker_context(opset: int) -> onnx.checker.C.CheckerContext:
    context = onnx.checker.C.CheckerContext()
    context.ir_version = onnx.IR_VERSION
    context.opset_imports = {"": opset}
    return context


def _check_node(node: onnx.NodeProto, ctx: Import) -> None:
    """A node the importer can take, whatever its inputs: ONNX's domain, an importer,
    ONNX's schema check (required attributes, input and output counts)."""
    if node.domain not in ONNX_DOMAINS:
        raise Unsupported(f"domain '{node.domain}' is not ONNX's standard one; rlx imports only standard ops")
    if node.op_type not in ctx.importers:
        raise Unsupported("no importer for this op type")
    try:
        onnx.checker.check_node(
            _without_subgraphs(node), _checker_context(ctx.opset), onnx.checker.C.LexicalScopeContext()
        )
    except onnx.checker.ValidationError as error:
        raise Unsupported(f"invalid node: {str(error).strip().splitlines()[0]}") from None


def _check_inputs(node: onnx.NodeProto, inputs: list[Value | None], index: int, producers: dict[str, int]) -> None:
    """Every input is known (the inputs of failed nodes are not checked here)."""
    for name, value in zip(node.input, inputs):
        if not name or value is not None:
            continue
        if name not in producers:
            raise Unsupported(f"input '{name}' is no graph input, initializer or node output (a missing initializer?)")
        if producers[name] > index:
            raise Unsupported(
                f"input '{name}' comes from a later node (the graph's nodes are not in topological order)"
            )
        raise Unsupported(f"input '{name}' is an output that the importer of its node does not compute")


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
