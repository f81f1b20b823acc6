"""Kernels of argmax/argmin and softmax/log_softmax (reduce_* ops, fused or
not, run on the reduction engine of `reduction_region.py`).

Every kernel reads a contiguous source as [outer, length, inner] around its
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

Rows of lanes go `Tuning.reduce_block` at a time (`_walk`; softmax's exp pass,
whose exps are independent anyway, `softmax_block`): inside a loop over the lanes,
each lane combines its block of values (unrolled in the IR, in registers) and
touches its stack-slot accumulator once per block. A lane loop is
elementwise, so LLVM's loop vectorizer makes packed code of it without any
reassociation (the emitter sets no fast-math flags; every tree below is
explicit), and a block reads 16 consecutive cache lines.

argmax/argmin: each lane keeps (best value, its index) and walks its rows
in order, so a candidate needs one unordered compare (`_arg_step`: a NaN
wins unless the best is NaN already, a tie wins only with
select_last_index). StackArray start empty (index -1) and merge by the general
rule (`_arg_wins`: a NaN beats any number, the earlier NaN a later one, ties
go to the earlier index, or the later with select_last_index).

softmax/log_softmax, three passes over a row (a column chunk or folded rows
of lanes): pass 1 the maximum M; pass 2 exp(x - M) into the output (for
log_softmax x - M) and its sum s; pass 3 rescales the output in place
(* 1/s, or - log s), finding the row in cache. The input is read twice and
the row written back to memory once, with one exp per element (as PyTorch's
CPU kernel). That is the plain formula, so its special values are PyTorch's:
a row of all -inf gives NaN (exp(-inf - -inf)), a +inf or NaN anywhere makes
the row NaN. f16/bf16 compute in f32; storing the intermediate would round
it twice, so their pass 3 recomputes from the input instead.

Work items are (outer index, column chunk): the kernel extent is their
count, so `lowering/core/parallel.py` splits large reductions across threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i1, i64
from xdsl.ir import Operation, Region, SSAValue

from rlx_mlir.broadcast import numel
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dtypes import Kind
from rlx_mlir.lowering.core.element_types import Codec, Value, codec
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.kernel import Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_then
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.lowering.scalar.scalar_ops import body_value, pairwise
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _known(v: SSAValue) -> int | None:
    """The value of an i64 constant, else None."""
    owner = v.owner
    if isinstance(owner, llvm.ConstantOp) and owner.result.type == i64:
        return owner.value.value.data  # type: ignore[union-attr]
    return None


def _mul(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """Index product, folded when a factor is a known 0 or 1 or both are known."""
    x, y = _known(a), _known(b)
    if x is not None and y is not None:
        return e.i64(x * y)
    if x == 0 or y == 1:
        return a
    if y == 0 or x == 1:
        return b
    return e.mul(a, b)


def _add(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """Index sum, folded when a term is a known 0 or both are known."""
    x, y = _known(a), _known(b)
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
        """Column chunks wider than one vector of lanes: walked row by row (`_walk`)."""
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
            return _mul(e, c, e.i64(self.width)), e.i64(0)
        own = _mul(e, c, e.i64(self.width))
        first = e.smin(own, e.i64(self.inner - self.width))
        return first, e.sub(own, first)


def layout(inner: int, item_bytes: int, tuning: Tuning) -> Layout:
    lanes = max(1, tuning.vector_bytes // item_bytes)
    if inner >= lanes:
        width = min(inner, max(lanes, tuning.reduce_column_bytes // item_bytes))
        return Layout(inner, width, 1, _ceil_div(inner, width), lanes)
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
            return self.outer * _ceil_div(self.inner, self.tuning.reduce_short_columns)
        return self.outer * lay.chunks


# ---------------------------------------------------------------------------
# pieces every kernel here uses
# ---------------------------------------------------------------------------


def _each(e: Emitter, region: Region, n: int | SSAValue, body: Callable[[SSAValue], None]) -> None:
    """for lane in range(n): body(lane)."""
    for_range(e, region, e.i64(0), e.i64(n) if isinstance(n, int) else n, body)


def _split_index(e: Emitter, index: SSAValue, sizes: Sequence[int]) -> list[SSAValue]:
    """Mixed-radix digits of `index` over `sizes` (last fastest)."""
    digits: list[SSAValue] = []
    for size in reversed(sizes[1:]):
        if size == 1:
            digits.append(e.i64(0))
            continue
        quotient = e.udiv(index, e.i64(size))
        digits.append(e.sub(index, _mul(e, quotient, e.i64(size))))
        index = quotient
    digits.append(index)
    return digits[::-1]


def _fold(e: Emitter, region: Region, lay: Layout, merge: Callable[[SSAValue, SSAValue], None]) -> None:
    """Pairwise tree over the `fold` groups of lanes: merge(l, l + h*inner) into lane l."""
    half = lay.fold // 2
    while half >= 1:
        offset = half * lay.inner
        _each(e, region, offset, lambda lane, offset=offset: merge(lane, _add(e, lane, e.i64(offset))))
        half //= 2


def _walk(
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
        first = _mul(e, b, e.i64(block))
        if row_major:
            for_range(e, region, first, _add(e, first, e.i64(block)),
                      lambda q: _each(e, region, lay.width, lambda lane: lane_step(lane, [q])))
        else:
            qs = [_add(e, first, e.i64(k)) for k in range(block)]
            _each(e, region, lay.width, lambda lane: lane_step(lane, qs))
        if after_block is not None:
            after_block(b)

    has_tail = not (isinstance(tail, int) and tail == 0)

    def leftover(q: SSAValue) -> None:
        lanes: int | SSAValue = lay.width
        if has_tail:  # row `rows` has only the tail's lanes
            lanes = e.select(e.icmp("eq", q, rows), e.i64(tail) if isinstance(tail, int) else tail, e.i64(lay.width))
        _each(e, region, lanes, lambda lane: lane_step(lane, [q]))

    for_range(e, region, e.i64(0), blocks, one_block)
    last = _add(e, rows, e.i64(1)) if has_tail else rows
    for_range(e, region, _mul(e, blocks, e.i64(block)), last, leftover)
    return blocks


def _items(
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
        o, c = _split_index(e, t, (slab.outer, lay.chunks))
        column, first = lay.chunk(e, c)
        run(o, column, first)

    for_range(e, region, begin, end, item)


def _short_items(
    e: Emitter, region: Region, slab: Slab, begin: SSAValue, end: SSAValue, output: Callable[[SSAValue, SSAValue], None]
) -> None:
    """output(o, j) per output of a short reduction; with a single column block the
    loop over o is innermost for inner = 1, so the vectorizer takes it."""
    columns = slab.tuning.reduce_short_columns
    blocks = _ceil_div(slab.inner, columns)

    def item(t: SSAValue) -> None:
        if blocks == 1:
            _each(e, region, slab.inner, lambda j: output(t, j))
            return
        o, b = _split_index(e, t, (slab.outer, blocks))
        first = _mul(e, b, e.i64(columns))
        last = e.smin(_add(e, first, e.i64(columns)), e.i64(slab.inner))
        for_range(e, region, first, last, lambda j: output(o, j))

    for_range(e, region, begin, end, item)


def _slab(shape: Sequence[int], axis: int, tuning: Tuning) -> Slab:
    """[outer, length, inner] around the single reduced axis of argmax/softmax."""
    return Slab(numel(shape[:axis]), shape[axis], numel(shape[axis + 1 :]), tuning)


# ---------------------------------------------------------------------------
# argmax / argmin
# ---------------------------------------------------------------------------


def _arg_wins(
    e: Emitter, op: rd.ArgReduceOp, item: Codec, value: SSAValue, index: SSAValue, best: SSAValue, at: SSAValue
) -> SSAValue:
    """Whether candidate (value, index) replaces (best, at); an index < 0 marks an
    empty lane, which never wins and is always replaced."""
    maximum = isinstance(op, rd.ArgmaxOp)
    earlier = e.icmp("slt", index, at)
    tie_wins = e.xor(earlier, e.const(i1, 1)) if op.selects_last else earlier
    if item.dtype.kind is Kind.FLOAT:
        v_nan, b_nan = e.fcmp("uno", value, value), e.fcmp("uno", best, best)
        numbers = e.or_(e.fcmp("ogt" if maximum else "olt", value, best), e.and_(e.fcmp("oeq", value, best), tie_wins))
        nan_wins = e.and_(v_nan, e.or_(e.xor(b_nan, e.const(i1, 1)), earlier))
        wins = e.select(e.or_(v_nan, b_nan), nan_wins, numbers)
    else:
        signed = item.dtype.kind is Kind.INT
        pred = ("sgt" if maximum else "slt") if signed else ("ugt" if maximum else "ult")
        wins = e.or_(e.icmp(pred, value, best), e.and_(e.icmp("eq", value, best), tie_wins))
    return e.and_(e.or_(wins, e.icmp("slt", at, e.i64(0))), e.icmp("sge", index, e.i64(0)))


def _arg_step(e: Emitter, op: rd.ArgReduceOp, item: Codec, value: SSAValue, best: SSAValue, at: SSAValue) -> SSAValue:
    """`_arg_wins` for a candidate whose index is later than `at` (a lane walking its
    rows in order): it wins by an unordered compare - a NaN wins unless the best is
    already NaN - and ties only with select_last_index."""
    maximum, last = isinstance(op, rd.ArgmaxOp), op.selects_last
    if item.dtype.kind is Kind.FLOAT:
        beats = e.fcmp(("uge" if last else "ugt") if maximum else ("ule" if last else "ult"), value, best)
        wins = e.and_(beats, e.fcmp("ord", best, best))
    else:
        signed = item.dtype.kind is Kind.INT
        pred = ("sg" if signed else "ug") if maximum else ("sl" if signed else "ul")
        wins = e.icmp(pred + ("e" if last else "t"), value, best)
    return e.or_(wins, e.icmp("slt", at, e.i64(0)))


def arg_reduce_kernels(op: rd.ArgReduceOp, ctx: KernelContext) -> list[Kernel]:
    slab = _slab(shape_of(op.input.type), op.reduced_axes()[0], ctx.tuning)
    n, inner = slab.length, slab.inner
    item, index = codec(element_type(op.input.type)), codec(i64)
    value = codec(item.compute)
    lay = layout(inner, value.dtype.nbytes, ctx.tuning)
    if n * slab.outer * inner == 0:
        return []

    def build(e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        src, dst = ptrs

        def absorb(
            state: tuple[SSAValue, SSAValue], x: SSAValue, k: SSAValue, in_order: bool = True
        ) -> tuple[SSAValue, SSAValue]:
            take = _arg_step(e, op, item, x, *state) if in_order else _arg_wins(e, op, item, x, k, *state)
            return e.select(take, x, state[0]), e.select(take, k, state[1])

        if slab.short:
            def output(o: SSAValue, j: SSAValue) -> None:
                at = _add(e, _mul(e, o, e.i64(n * inner)), j)
                state = (item.load(e, src, at), e.i64(0))
                for k in range(1, n):
                    state = absorb(state, item.load(e, src, _add(e, at, e.i64(k * inner))), e.i64(k))  # type: ignore[arg-type]
                index.store(e, state[1], dst, _add(e, _mul(e, o, e.i64(inner)), j))

            _short_items(e, region, slab, begin, end, output)
            return

        best, where = StackArray.allocate(e, value, lay.width), StackArray.allocate(e, index, lay.width)

        full = n // lay.fold
        tail = (n - full * lay.fold) * inner

        def run(o: SSAValue, column: SSAValue, first: SSAValue) -> None:
            base = _add(e, _mul(e, o, e.i64(n * inner)), column)
            out = _add(e, _mul(e, o, e.i64(inner)), column)

            def lane_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                state = (best.get(e, lane), where.get(e, lane))
                row_in_lane = e.udiv(lane, e.i64(inner)) if lay.fold > 1 else None
                for q in qs:
                    x = item.load(e, src, _add(e, _add(e, base, _mul(e, q, e.i64(lay.stride))), lane))
                    k = q if row_in_lane is None else _add(e, _mul(e, q, e.i64(lay.fold)), row_in_lane)
                    state = absorb(state, x, k)  # type: ignore[arg-type]
                best.set(e, lane, state[0])
                where.set(e, lane, state[1])

            def merge(a: SSAValue, b: SSAValue) -> None:
                state = absorb((best.get(e, a), where.get(e, a)), best.get(e, b), where.get(e, b), False)  # type: ignore[arg-type]
                best.set(e, a, state[0])
                where.set(e, a, state[1])

            def empty(lane: SSAValue) -> None:
                best.set(e, lane, e.const(value.compute, 0))
                where.set(e, lane, e.i64(-1))

            _each(e, region, lay.width, empty)
            _walk(e, region, lay, e.i64(full), tail, lane_step, ctx.tuning.reduce_block)
            _fold(e, region, lay, merge)
            def store(lane: SSAValue) -> None:
                index.store(e, where.get(e, lane), dst, _add(e, out, lane))

            for_range(e, region, first, e.i64(lay.columns), store)

        _items(e, region, slab, lay, begin, end, run)

    function = kernel_function(ctx.name, 2, build)
    return [Kernel(function, [op.input, op.result], slab.extent(lay), slab.outer * n * inner)]


# ---------------------------------------------------------------------------
# softmax / log_softmax
# ---------------------------------------------------------------------------


def _fmax(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """max by compare-and-select (vmaxps). A NaN may be skipped here: exp(NaN - m)
    makes the row's sum, hence the whole row, NaN anyway."""
    return e.select(e.fcmp("ogt", b, a), b, a)


def _fadd(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.fadd(a, b)


def normalize_kernels(op: rg.NormalizeRegionOp, ctx: KernelContext) -> list[Kernel]:
    """Per row (a column chunk or folded rows of lanes): pass 1 the maximum M;
    pass 2 exp(x - M) into the output (log_softmax: x - M) and its sum s; pass 3
    rescales the output in place, * 1/s or - log(s), and applies the epilogue.
    x is the prologue's value, computed from the inputs where it is read: the
    inputs are read twice, the row is written back to memory once (pass 3 finds
    it in cache), and there is one exp per element. f16/bf16 would round the
    intermediate: their pass 3 recomputes from the inputs instead."""
    shape = shape_of(op.outputs[0].type)
    slab = _slab(shape, op.axis.value.data % len(shape), ctx.tuning)
    n, inner = slab.length, slab.inner
    item = codec(element_type(op.outputs[0].type))
    ft = item.compute
    lanes_item = codec(ft)
    lay = layout(inner, lanes_item.dtype.nbytes, ctx.tuning)
    log = op.kind is rd.LogSoftmaxOp
    if n * slab.outer * inner == 0:
        return []
    scalar = [shape_of(v.type) == () for v in op.inputs]
    codecs = [codec(element_type(v.type)) for v in op.inputs]
    first_epilogue = op.prologue_count

    def normalizer(e: Emitter, s: SSAValue) -> SSAValue:
        return m.log(e, s) if log else e.fdiv(e.const_like(s, 1.0), s)

    def shifted(e: Emitter, x: SSAValue, top: SSAValue) -> tuple[SSAValue, SSAValue]:
        """(what pass 2 stores, the term it sums)."""
        d = e.fsub(x, top)
        term = m.exp(e, d)
        return (d if log else term), term

    def finish(e: Emitter, stored: SSAValue, c: SSAValue) -> SSAValue:
        return e.fsub(stored, c) if log else e.fmul(stored, c)

    def build(e: Emitter, region: Region, ptrs: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        dst = ptrs[-1]

        def read(k: int, at: SSAValue) -> Value:
            return codecs[k].load(e, ptrs[k], e.i64(0) if scalar[k] else at)

        def value(at: SSAValue) -> SSAValue:
            """The prologue's value at element `at`."""
            return body_value(e, op.body.block, lambda k: read(k, at))  # type: ignore[return-value]

        def store(result: SSAValue, at: SSAValue) -> None:
            """The epilogue of the normalized `result` (rounded to its type first,
            as the unfused softmax stores it), stored at element `at`."""
            def load(k: int) -> Value:
                return item.round(e, result) if k == 0 else read(first_epilogue + k - 1, at)

            item.store(e, body_value(e, op.epilogue.block, load), dst, at)

        if slab.short:
            def output(o: SSAValue, j: SSAValue) -> None:
                at = [_add(e, _add(e, _mul(e, o, e.i64(n * inner)), j), e.i64(k * inner)) for k in range(n)]
                xs = [value(a) for a in at]
                top = pairwise(e, xs, _fmax)
                pairs = [shifted(e, x, top) for x in xs]  # type: ignore[arg-type]
                c = normalizer(e, pairwise(e, [term for _, term in pairs], _fadd))  # type: ignore[arg-type]
                for (stored, _), a in zip(pairs, at):
                    store(finish(e, stored, c), a)

            _short_items(e, region, slab, begin, end, output)
            return

        top, total = StackArray.allocate(e, lanes_item, lay.width), StackArray.allocate(e, lanes_item, lay.width)
        full = n // lay.fold
        tail = (n - full * lay.fold) * inner

        def run(o: SSAValue, column: SSAValue, first: SSAValue) -> None:
            base = _add(e, _mul(e, o, e.i64(n * inner)), column)

            def at(q: SSAValue, lane: SSAValue) -> SSAValue:
                return _add(e, _add(e, base, _mul(e, q, e.i64(lay.stride))), lane)

            def spread(values: StackArray) -> None:
                """Lane l takes its column's value (l mod inner), folded layouts."""
                def copy(lane: SSAValue) -> None:
                    values.set(e, lane, values.get(e, e.urem(lane, e.i64(inner))))

                if lay.fold > 1:
                    for_range(e, region, e.i64(inner), e.i64(lay.width), copy)

            # pass 1: the maximum of each column, in every lane of it
            def max_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                xs = [value(at(q, lane)) for q in qs]
                top.set(e, lane, pairwise(e, [top.get(e, lane), *xs], _fmax))

            _each(e, region, lay.width, lambda lane: top.set(e, lane, e.const(ft, float("-inf"))))
            _walk(e, region, lay, e.i64(full), tail, max_step, ctx.tuning.reduce_block)
            _fold(e, region, lay, lambda a, b: top.set(e, a, _fmax(e, top.get(e, a), top.get(e, b))))  # type: ignore[arg-type]
            spread(top)

            # pass 2: exp(x - M) (or x - M) into the output, and the sum of exp(x - M)
            overlapping = _known(first) != 0  # the last column chunk shares lanes with the one before

            def sum_step(lane: SSAValue, qs: list[SSAValue]) -> None:
                terms, stores = [], []
                for q in qs:
                    stored, term = shifted(e, value(at(q, lane)), top.get(e, lane))  # type: ignore[arg-type]
                    terms.append(term)
                    if item.narrow:
                        continue
                    if overlapping:
                        stores.append((stored, at(q, lane)))
                    else:
                        item.store(e, stored, dst, at(q, lane))
                total.set(e, lane, e.fadd(total.get(e, lane), pairwise(e, terms, _fadd)))  # type: ignore[arg-type]

                def write() -> None:
                    for value, where in stores:
                        item.store(e, value, dst, where)

                if stores:  # only its own columns: the others belong to another work item
                    if_then(e, region, e.icmp("sge", lane, first), write)

            _each(e, region, lay.width, lambda lane: total.set(e, lane, e.const(ft, 0.0)))
            _walk(e, region, lay, e.i64(full), tail, sum_step, ctx.tuning.softmax_block)
            _fold(e, region, lay, lambda a, b: total.set(e, a, e.fadd(total.get(e, a), total.get(e, b))))  # type: ignore[arg-type]

            # pass 3: rescale in place (or, f16/bf16, recompute from the input)
            def rescale(where: SSAValue, c: SSAValue, lane_top: SSAValue) -> None:
                if item.narrow:
                    stored, _ = shifted(e, value(where), lane_top)  # type: ignore[arg-type]
                else:
                    stored = item.load(e, dst, where)  # type: ignore[assignment]
                store(finish(e, stored, c), where)

            if inner == 1:  # one row: M and the normalizer are scalars, the pass one flat loop
                row_top, c = top.get(e, e.i64(0)), normalizer(e, total.get(e, e.i64(0)))  # type: ignore[arg-type]
                _each(e, region, n, lambda k: rescale(_add(e, base, k), c, row_top))  # type: ignore[arg-type]
                return
            _each(e, region, lay.columns, lambda lane: total.set(e, lane, normalizer(e, total.get(e, lane))))  # type: ignore[arg-type]
            spread(total)

            def rescale_row(q: SSAValue) -> None:
                lanes = e.i64(lay.width)
                if tail:
                    lanes = e.select(e.icmp("eq", q, e.i64(full)), e.i64(tail), lanes)
                def one(lane: SSAValue) -> None:
                    rescale(at(q, lane), total.get(e, lane), top.get(e, lane))  # type: ignore[arg-type]

                for_range(e, region, first, lanes, one)

            _each(e, region, full + 1 if tail else full, rescale_row)

        _items(e, region, slab, lay, begin, end, run)

    buffers: list[SSAValue | str | Scratch] = [*op.inputs, op.outputs[0]]
    function = kernel_function(ctx.name, len(buffers), build)
    return [Kernel(function, buffers, slab.extent(lay), slab.outer * n * inner)]


KERNELS: dict[type[Operation], Callable[[Operation, KernelContext], list[Kernel]]] = {
    **{cls: arg_reduce_kernels for cls in rd.ARG_REDUCE_OPS},
    rg.NormalizeRegionOp: normalize_kernels,
}  # type: ignore[dict-item]
