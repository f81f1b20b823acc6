"""fuse-elementwise: producer -> consumer chains become one `rlx.elementwise_region`.

Two elementwise ops are grouped when one feeds the other and both iterate over
the same shape, so the producer's element is computed right where the consumer
needs it and never round-trips through memory. A group is kept *convex*: no
op outside it may sit on a path between two of its members, otherwise the
region would both feed and consume that op (other groups count as the one
region each becomes). A value also used outside its
group becomes an extra region result (materialized once, computed once): no
work is duplicated.

A single op becomes a region only when an input comes from an index-map op
(expand, transpose, slice, ...) that canonicalize-broadcast can then fold into
the region's map; other single ops are left alone and `lower-to-llvm` wraps
them with the same `ElementwiseRegionOp.replace` when it lowers them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import check_same_level, shape_of
from rlx_mlir.dialects.scan import graph_blocks
from rlx_mlir.verification import function_block


def is_fusible(op: Operation) -> bool:
    return ew.is_elementwise(op) and check_same_level(op)


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


def _is_convex(members: set[Operation], groups: _Groups) -> bool:
    """No path leaves `members` and comes back in, where a path that reaches a
    member of another group goes on from all of that group's members (it
    becomes one region too): two groups that each look convex on their own
    could otherwise feed each other, a cycle no schedule can order."""
    frontier = [u.operation for op in members for r in op.results for u in r.uses if u.operation not in members]
    seen: set[Operation] = set()
    while frontier:
        reached = frontier.pop()
        group = groups.members[groups.find(reached)] if reached in groups.parent else [reached]
        for op in group:
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
        space = shape_of(consumer.results[0].type)
        for operand in consumer.operands:
            producer = operand.owner
            if producer not in groups.parent or shape_of(operand.type) != space:
                continue
            a, b = groups.find(producer), groups.find(consumer)
            if a is b:
                continue
            if _is_convex(set(groups.members[a]) | set(groups.members[b]), groups):
                groups.union(a, b, order)

    for members in list(groups.members.values()):
        if len(members) < 2 and not any(rlx.has_input_map(v.owner) for v in members[0].operands):
            continue
        rg.ElementwiseRegionOp.replace(members, anchor=members[-1])
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
                for block in graph_blocks(function_block(f)):
                    fuse_block(block)
