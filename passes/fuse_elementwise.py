"""fuse-elementwise: producer -> consumer chains become one `rlx.elementwise_region`.

Two elementwise ops are grouped when one feeds the other and both iterate over
the same shape, so the producer's element is computed right where the consumer
needs it and never round-trips through memory. A group is kept *convex*: no
op outside it may sit on a path between two of its members, otherwise the
region would both feed and consume that op (other groups count as the one
region each becomes). A value also used outside its
group becomes an extra region result (materialized once, computed once): no
work is duplicated.

A group holds at most `max-ops` ops (`MAX_OPS` by default): a longer chain
becomes several regions, each materializing its last value for the next.
LLVM's vectorizer, instruction selection and register allocation grow
faster than linearly in the size of one loop body, while a region boundary
costs one store and one load per element; cutting a 3,000-op chain into
bounded kernels makes compiling it linear in its length. Results stay
bit-identical: a region rounds every op's result to its type, as memory does.

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
from xdsl.utils.exceptions import PassFailedException

from rlx_mlir.dialects import elementwise as ew
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import check_same_level, shape_of
from rlx_mlir.dialects.scan import graph_blocks
from rlx_mlir.verification import function_block

MAX_OPS = 32
"""Ops per fused region by default. Measured (CPU seconds; benchmarks/README.md, "Compile
time"): compiling a non-repeating 300-op chain costs the same with
caps of 16 to 128 (LLVM's cost per op is flat there, and grows past it); a
repeating chain compiles lcm(cap, period) ops (regions of one structure share
a kernel), so a smaller cap compiles less (a 1,000-op chain of period 12:
1.0 s at 32, 1.8 s at 64); running a 192-op transcendental chain over 2^20
f32 took 0.96x the time with regions of 32 as with 64. Each boundary costs a
store and a load per element, which a region of 32 ops amortizes."""


def is_fusible(op: Operation) -> bool:
    return ew.is_elementwise(op) and check_same_level(op)


class _Groups:
    """Union-find over ops, remembering each group's members, the last
    member's position, and the ops outside the group that use it."""

    def __init__(self, ops: Iterable[Operation], order: dict[Operation, int]) -> None:
        self.order = order
        self.parent: dict[Operation, Operation] = {op: op for op in ops}
        self.members: dict[Operation, list[Operation]] = {op: [op] for op in self.parent}
        self.last: dict[Operation, int] = {op: order[op] for op in self.parent}
        self.users: dict[Operation, set[Operation]] = {
            op: {use.operation for r in op.results for use in r.uses} for op in self.parent
        }

    def find(self, op: Operation) -> Operation:
        while self.parent[op] is not op:
            self.parent[op] = self.parent[self.parent[op]]
            op = self.parent[op]
        return op

    def group_of(self, op: Operation) -> Operation | None:
        return self.find(op) if op in self.parent else None

    def size(self, group: Operation) -> int:
        return len(self.members[group])

    def union(self, a: Operation, b: Operation) -> None:
        ra, rb = self.find(a), self.find(b)
        if len(self.members[ra]) < len(self.members[rb]):  # the smaller group joins the larger
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.members[ra].extend(self.members.pop(rb))
        self.last[ra] = max(self.last[ra], self.last.pop(rb))
        users = self.users[ra] | self.users.pop(rb)
        self.users[ra] = {u for u in users if self.group_of(u) is not ra}

    def reaches_through_others(self, a: Operation, b: Operation) -> bool:
        """Whether group `a` reaches group `b` through an op or group outside
        both: merging them would then both feed and consume that path (a cycle
        no schedule can order). Other groups count as the one region each
        becomes; ops after b's last member cannot lead back to it, so the walk
        stops there, which keeps fusing a chain linear in its length."""
        frontier = [u for u in self.users[a] if self.group_of(u) is not b]
        seen: set[Operation] = set()
        while frontier:
            op = frontier.pop()
            group = self.group_of(op)
            key = group if group is not None else op
            if key in seen or self.order.get(op, -1) > self.last[b]:
                continue
            seen.add(key)
            if group is b:
                return True
            users = self.users[group] if group is not None else {u.operation for r in op.results for u in r.uses}
            frontier.extend(users)
        return False


def fuse_block(block: Block, max_ops: int = MAX_OPS) -> None:
    """Group `block`'s fusible chains into regions of at most `max_ops` ops."""
    ops = list(block.ops)
    order = {op: i for i, op in enumerate(ops)}
    fusible = [op for op in ops if is_fusible(op)]
    groups = _Groups(fusible, order)
    for consumer in fusible:
        space = shape_of(consumer.results[0].type)
        for operand in consumer.operands:
            producer = operand.owner
            if producer not in groups.parent or shape_of(operand.type) != space:
                continue
            a, b = groups.find(producer), groups.find(consumer)
            if a is b or groups.size(a) + groups.size(b) > max_ops:
                continue
            if not groups.reaches_through_others(a, b):
                groups.union(a, b)

    for members in [sorted(m, key=order.__getitem__) for m in groups.members.values()]:
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

    max_ops: int = MAX_OPS
    """The most ops one region may hold (at least 1)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_ops < 1:
            raise PassFailedException(f"fuse-elementwise: max-ops must be at least 1, got {self.max_ops}")
        for f in op.walk():
            if isinstance(f, func.FuncOp) and f.body.blocks:
                for block in graph_blocks(function_block(f)):
                    fuse_block(block, self.max_ops)
