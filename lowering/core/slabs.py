"""Walking a slab [outer, length, inner] along its single reduced axis, in rows
of lanes: what the argmax/argmin (`kernels/arg_reduce.py`) and softmax
(`kernels/normalize.py`) kernels share.

A kernel reads a contiguous source as [outer, length, inner] around its
single reduced axis and reduces along `length`. A slab
[length, inner] is walked in *rows of lanes* (`Layout`), W lanes = one
vector of accumulators (`Tuning.vector_bytes`: 16 f32, 8 f64, 64 i8 on AVX-512):

- inner >= W: columns in chunks of up to `Tuning.reduce_column_bytes` (256 f32
  lanes; 1 KiB chunks read runs of 16 cache lines instead of one per row: a
  sum over axis 0 of [4096, 4096] f32 took 5.2 ms with 64-byte chunks, 1.85 ms
  with 1 KiB ones), one row of lanes per reduced index (stride `inner`);
- inner < W: k = the largest power of two <= W / inner consecutive rows form
  one contiguous row of k*inner lanes (lane l holds column l mod inner), and
  a pairwise tree folds the k groups at the end. inner = 1 is a long row
  split over W lanes.

Rows of lanes go `Tuning.reduce_block` at a time (`walk`; softmax's exp pass,
whose exps are independent anyway, `softmax_block`): inside a loop over the lanes,
each lane combines its block of values (unrolled in the IR, in registers) and
touches its stack-slot accumulator once per block. A lane loop is
elementwise, so LLVM's loop vectorizer makes packed code of it without any
reassociation (the emitter sets no fast-math flags; every tree is
explicit), and a block reads 16 consecutive cache lines.

Work items are (outer index, column chunk): the kernel extent is their
count, so `lowering/core/parallel.py` splits large reductions across threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i64
from xdsl.ir import Region, SSAValue

from rlx_mlir.broadcast import numel
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.loops import for_range
from rlx_mlir.tuning import Tuning


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up."""
    return -(-a // b)


def known_index(v: SSAValue) -> int | None:
    """The value of an i64 constant, else None."""
    owner = v.owner
    if isinstance(owner, llvm.ConstantOp) and owner.result.type == i64:
        return owner.value.value.data
    return None


def mul_index(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """Index product, folded when a factor is a known 0 or 1 or both are known."""
    x, y = known_index(a), known_index(b)
    if x is not None and y is not None:
        return e.i64(x * y)
    if x == 0 or y == 1:
        return a
    if y == 0 or x == 1:
        return b
    return e.mul(a, b)


def add_index(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """Index sum, folded when a term is a known 0 or both are known."""
    x, y = known_index(a), known_index(b)
    if x is not None and y is not None:
        return e.i64(x + y)
    if x == 0:
        return b
    if y == 0:
        return a
    return e.add(a, b)


@dataclass(frozen=True)
class Layout:
    """How a slab [length, inner] is walked in rows of lanes (see the module docstring)."""

    inner: int
    width: int
    """StackArray of a full row of lanes."""
    fold: int
    """Source rows per row of lanes (1: column chunks)."""
    chunks: int
    """Column chunks per slab (1 when folded)."""
    vector: int
    """StackArray in one 64-byte vector."""

    @property
    def stride(self) -> int:
        """Elements from one row of lanes to the next."""
        return self.width if self.fold > 1 else self.inner

    @property
    def wide(self) -> bool:
        """Column chunks wider than one vector of lanes: walked row by row (`walk`)."""
        return self.fold == 1 and self.width > self.vector

    @property
    def columns(self) -> int:
        """Output columns of one work item."""
        return self.inner if self.fold > 1 else self.width

    def chunk(self, e: Emitter, c: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(first column, first lane to store) of column chunk c. A narrower last
        chunk is computed over the last `width` columns, overlapping the one
        before, and stores only its own columns: one body for every chunk."""
        if self.fold > 1 or self.inner % self.width == 0:
            return mul_index(e, c, e.i64(self.width)), e.i64(0)
        own = mul_index(e, c, e.i64(self.width))
        first = e.smin(own, e.i64(self.inner - self.width))
        return first, e.sub(own, first)


def layout(inner: int, item_bytes: int, tuning: Tuning) -> Layout:
    """How a slab of `inner` columns of `item_bytes` items is walked."""
    lanes = max(1, tuning.vector_bytes // item_bytes)
    if inner >= lanes:
        width = min(inner, max(lanes, tuning.reduce_column_bytes // item_bytes))
        return Layout(inner, width, 1, ceil_div(inner, width), lanes)
    fold = 1 << ((lanes // inner).bit_length() - 1)
    return Layout(inner, fold * inner, fold, 1, lanes)


@dataclass(frozen=True)
class Slab:
    """The shape a kernel reduces: [outer, length, inner], along length."""

    outer: int
    length: int
    inner: int
    tuning: Tuning

    @property
    def short(self) -> bool:
        """Short enough to unroll per output, without lanes."""
        return self.length <= self.tuning.reduce_short

    def extent(self, lay: Layout) -> int:
        """Work items: (outer, column block) when short, else (outer, column chunk)."""
        if self.short:
            return self.outer * ceil_div(self.inner, self.tuning.reduce_short_columns)
        return self.outer * lay.chunks


def each(e: Emitter, region: Region, n: int | SSAValue, body: Callable[[SSAValue], None]) -> None:
    """for lane in range(n): body(lane)."""
    for_range(e, region, e.i64(0), e.i64(n) if isinstance(n, int) else n, body)


def split_index(e: Emitter, index: SSAValue, sizes: Sequence[int]) -> list[SSAValue]:
    """Mixed-radix digits of `index` over `sizes` (last fastest)."""
    digits: list[SSAValue] = []
    for size in reversed(sizes[1:]):
        if size == 1:
            digits.append(e.i64(0))
            continue
        quotient = e.udiv(index, e.i64(size))
        digits.append(e.sub(index, mul_index(e, quotient, e.i64(size))))
        index = quotient
    digits.append(index)
    return digits[::-1]


def fold_lanes(e: Emitter, region: Region, lay: Layout, merge: Callable[[SSAValue, SSAValue], None]) -> None:
    """Pairwise tree over the `fold` groups of lanes: merge(l, l + h*inner) into lane l."""
    half = lay.fold // 2
    while half >= 1:
        offset = half * lay.inner

        def lane_pair(lane: SSAValue, offset: int = offset) -> None:
            merge(lane, add_index(e, lane, e.i64(offset)))

        each(e, region, offset, lane_pair)
        half //= 2


def walk(
    e: Emitter,
    region: Region,
    lay: Layout,
    rows: SSAValue,
    tail: SSAValue | int,
    lane_step: Callable[[SSAValue, list[SSAValue]], None],
    block: int,
    after_block: Callable[[SSAValue], None] | None = None,
    row_major: bool = False,
) -> SSAValue:
    """lane_step(lane, [q, ...]) for every lane of the rows of lanes q < rows, `block`
    rows per call (then after_block(b)); the rows after the last full block, and
    the `tail` lanes of row `rows` (folded layouts), one row per call. Returns
    the number of full blocks. `row_major` walks a block one row at a time (one
    call per row): a wide column chunk then reads each row's run in order."""
    blocks = e.udiv(rows, e.i64(block))

    def one_block(b: SSAValue) -> None:
        first = mul_index(e, b, e.i64(block))
        if row_major:
            for_range(
                e,
                region,
                first,
                add_index(e, first, e.i64(block)),
                lambda q: each(e, region, lay.width, lambda lane: lane_step(lane, [q])),
            )
        else:
            qs = [add_index(e, first, e.i64(k)) for k in range(block)]
            each(e, region, lay.width, lambda lane: lane_step(lane, qs))
        if after_block is not None:
            after_block(b)

    has_tail = not (isinstance(tail, int) and tail == 0)

    def leftover(q: SSAValue) -> None:
        lanes: int | SSAValue = lay.width
        if has_tail:  # row `rows` has only the tail's lanes
            lanes = e.select(e.icmp("eq", q, rows), e.i64(tail) if isinstance(tail, int) else tail, e.i64(lay.width))
        each(e, region, lanes, lambda lane: lane_step(lane, [q]))

    for_range(e, region, e.i64(0), blocks, one_block)
    last = add_index(e, rows, e.i64(1)) if has_tail else rows
    for_range(e, region, mul_index(e, blocks, e.i64(block)), last, leftover)
    return blocks


def work_items(
    e: Emitter,
    region: Region,
    slab: Slab,
    lay: Layout,
    begin: SSAValue,
    end: SSAValue,
    run: Callable[[SSAValue, SSAValue, SSAValue], None],
) -> None:
    """run(o, column, first lane to store) per work item (outer o, column chunk)."""

    def item(t: SSAValue) -> None:
        o, c = split_index(e, t, (slab.outer, lay.chunks))
        column, first = lay.chunk(e, c)
        run(o, column, first)

    for_range(e, region, begin, end, item)


def short_items(
    e: Emitter, region: Region, slab: Slab, begin: SSAValue, end: SSAValue, output: Callable[[SSAValue, SSAValue], None]
) -> None:
    """output(o, j) per output of a short reduction; with a single column block the
    loop over o is innermost for inner = 1, so the vectorizer takes it."""
    columns = slab.tuning.reduce_short_columns
    blocks = ceil_div(slab.inner, columns)

    def item(t: SSAValue) -> None:
        if blocks == 1:
            each(e, region, slab.inner, lambda j: output(t, j))
            return
        o, b = split_index(e, t, (slab.outer, blocks))
        first = mul_index(e, b, e.i64(columns))
        last = e.smin(add_index(e, first, e.i64(columns)), e.i64(slab.inner))
        for_range(e, region, first, last, lambda j: output(o, j))

    for_range(e, region, begin, end, item)


def slab_around(shape: Sequence[int], axis: int, tuning: Tuning) -> Slab:
    """[outer, length, inner] around a single reduced `axis` of `shape`."""
    return Slab(numel(shape[:axis]), shape[axis], numel(shape[axis + 1 :]), tuning)
