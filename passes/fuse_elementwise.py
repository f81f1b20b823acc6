"""fuse-elementwise: producer -> consumer chains become one `rlx.elementwise_region`.

Two elementwise ops are grouped when one feeds the other and both iterate over
the same shape, so the producer's element is computed right where the consumer
needs it and never round-trips through memory. A group is kept *convex*: no
op outside it may sit on a path between two of its members, otherwise the
region would both feed and consume that op. A value also used outside its
group becomes an extra region result (materialized once, computed once): no
work is duplicated.

A single op becomes a region only when an input comes from an index-map op
(expand, transpose, slice, ...) that canonicalize-broadcast can then fold into
the region's map; other single ops are left alone and `lower-to-llvm` wraps
them with the same `outline_elementwise` when it lowers them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from rlx_mlir import index_maps
from rlx_mlir.dialects import rlx
from rlx_mlir.verification import function_block


def is_fusible(op: Operation) -> bool:
    return rlx.is_elementwise(op) and rlx.check_same_level(op)


def outline_elementwise(ops: Sequence[Operation]) -> tuple[rlx.ElementwiseRegionOp, list[SSAValue]]:
    """Build (not insert) the region computing `ops`, which share one result shape.

    Returns the region and the values of `ops` it yields, in order: those used
    by anything outside `ops` (or the last result, if nothing is).
    """
    members = set(ops)
    space = rlx.shape_of(ops[-1].results[0].type)
    inputs: list[SSAValue] = []
    for op in ops:
        for operand in op.operands:
            if operand.owner not in members and operand not in inputs:
                inputs.append(operand)
    outputs = [r for op in ops for r in op.results if any(u.operation not in members for u in r.uses)]
    if not outputs:
        outputs = [ops[-1].results[0]]

    block = rlx.make_region_block([v.type for v in inputs])
    scalar: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for op in ops:
        clone = op.create(
            operands=[scalar[v] for v in op.operands],
            result_types=[rlx.element_type(r.type) for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        block.add_op(clone)
        for old, new in zip(op.results, clone.results):
            scalar[old] = new
            new.name_hint = old.name_hint
    block.add_op(rlx.YieldOp(*(scalar[v] for v in outputs)))

    maps = [index_maps.to_affine(len(space), index_maps.broadcast(rlx.shape_of(v.type), space)) for v in inputs]
    region_op = rlx.ElementwiseRegionOp(inputs, maps, [v.type for v in outputs], Region([block]))
    for old, new in zip(outputs, region_op.outputs):
        new.name_hint = old.name_hint
    return region_op, outputs


def replace_with_region(ops: Sequence[Operation], anchor: Operation) -> rlx.ElementwiseRegionOp:
    """Outline `ops` into a region inserted before `anchor`; rewire their outside uses."""
    region_op, outputs = outline_elementwise(ops)
    Rewriter.insert_op(region_op, InsertPoint.before(anchor))
    for old, new in zip(outputs, region_op.outputs):
        old.replace_all_uses_with(new)
    for op in reversed(ops):
        op.detach()
        op.erase(safe_erase=False)
    return region_op


class _Groups:
    """Union-find over ops, remembering each group's members in program order."""

    def __init__(self, ops: Iterable[Operation]) -> None:
        self.parent: dict[Operation, Operation] = {op: op for op in ops}
        self.members: dict[Operation, list[Operation]] = {op: [op] for op in self.parent}

    def find(self, op: Operation) -> Operation:
        while self.parent[op] is not op:
            self.parent[op] = self.parent[self.parent[op]]
            op = self.parent[op]
        return op

    def union(self, a: Operation, b: Operation, order: dict[Operation, int]) -> None:
        ra, rb = self.find(a), self.find(b)
        self.parent[rb] = ra
        self.members[ra] = sorted(self.members[ra] + self.members.pop(rb), key=order.__getitem__)


def _is_convex(members: set[Operation]) -> bool:
    """No path leaves `members` and comes back in."""
    frontier = [u.operation for op in members for r in op.results for u in r.uses if u.operation not in members]
    seen: set[Operation] = set()
    while frontier:
        op = frontier.pop()
        if op in seen:
            continue
        seen.add(op)
        for r in op.results:
            for use in r.uses:
                if use.operation in members:
                    return False
                frontier.append(use.operation)
    return True


def fuse_block(block: Block) -> None:
    ops = list(block.ops)
    order = {op: i for i, op in enumerate(ops)}
    fusible = [op for op in ops if is_fusible(op)]
    groups = _Groups(fusible)
    for consumer in fusible:
        space = rlx.shape_of(consumer.results[0].type)
        for operand in consumer.operands:
            producer = operand.owner
            if producer not in groups.parent or rlx.shape_of(operand.type) != space:
                continue
            a, b = groups.find(producer), groups.find(consumer)
            if a is b:
                continue
            if _is_convex(set(groups.members[a]) | set(groups.members[b])):
                groups.union(a, b, order)

    for members in list(groups.members.values()):
        if len(members) < 2 and not any(rlx.has_input_map(v.owner) for v in members[0].operands):
            continue
        replace_with_region(members, anchor=members[-1])
    topological_sort(block)


def topological_sort(block: Block) -> None:
    """Reorder `block` so every value is defined before use, keeping the original
    order wherever it is already valid (regions are placed at their last member)."""
    ops = list(block.ops)
    position = {op: i for i, op in enumerate(ops)}
    last = block.last_op
    terminator = last if last is not None and last.has_trait(IsTerminator) else None
    pending = {op: sum(1 for v in set(op.operands) if v.owner in position) for op in ops}
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op in ops:
        for v in set(op.operands):
            if v.owner in position:
                users[v.owner].append(op)  # type: ignore[index]
    ready = [(position[op], id(op), op) for op in ops if pending[op] == 0 and op is not terminator]
    heapq.heapify(ready)
    ordered: list[Operation] = []
    while ready:
        _, _, op = heapq.heappop(ready)
        ordered.append(op)
        for user in users[op]:
            pending[user] -= 1
            if pending[user] == 0 and user is not terminator:
                heapq.heappush(ready, (position[user], id(user), user))
    if terminator is not None:
        ordered.append(terminator)
    for op in ordered:
        op.detach()
    for op in ordered:
        block.add_op(op)


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    name = "fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                fuse_block(function_block(f))
