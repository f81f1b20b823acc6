"""The kernel of `rlx.attention`: FlashAttention-2's tiled loop with an online softmax.

Units are (batch, kv head, block of `block_q` rows of its group), split over
the entry's threads (causal blocks in an interleaved order that gives each
thread's share the same work: `_Unit.interleaved`). The Hq / Hkv query heads sharing a kv head are adjacent
in q and in the result, so the group's rows are one [Hq / Hkv · Sq, D]
matrix: a block may span heads, and every K and V tile is read once for all
of them (a decode step, Sq = 1, then multiplies 4 rows per GEMM instead of 1;
1.5-1.8x faster at [1, 32, 1, 128] on 8 kv heads of 1024-4096 keys than a
unit per query head; the same within noise for prefill). A row's head and
query index come from its place in the group (for the mask and the causal
limit). A unit never holds more than one [block_q, block_k] tile of scores:
for each block of `block_k` keys it

1. computes the tile S = scale · Q Kᵀ;
2. per row, adds the mask (broadcast by strides, 0 on broadcast axes) and
   finds the tile's row maximum in the same pass; the keys a causal row may
   not see (j > i) are left out of it and get probability 0;
3. with the running maximum m and sum l of the row (FlashAttention-2):
   m' = max(m, tile max), α = exp(m − m'), P = exp(S − m'), l = α·l + Σ P,
   and scales the row's output accumulator by α;
4. adds P V into the accumulator.

The two products run in one of two forms:
- **tiled** (`_tiled`), where a Kᵀ panel of the head size by one register
  tile of keys fits `Tuning.attention_tiled_panel_bytes` (L1): the unit
  packs the key block as scale · Kᵀ into a stack panel, zero-padded to whole
  tiles (`key_lanes`: f32/f64 head sizes of whole vectors go in blocks of one
  vector's lanes of keys, transposed in registers), then computes S in
  register tiles (`gemm.register_tile`, 8 rows x 2 vectors of keys on
  AVX-512) over it, and P V in register tiles that read
  V in place and accumulate into the accumulator. The keys per tile are the
  most (a power of two) whose panel fits. No BLAS call.
- **BLAS** otherwise (f32 head sizes past L1 / (4 · 32), 384 for 48 KiB): two single-threaded
  GEMMs per key block (after a kernel that sets BLAS to one thread), S with
  alpha = scale, P V with beta = 1; tiles of `attention_block_q` x
  `attention_block_k`.

Measured on a 2-vCPU Xeon 6 (AVX-512, 48 KiB L1), one thread, tiled vs BLAS
form: [8, 8, 512, 32] (Whisper's encoder) 27.5 vs 34.7 ms, [8, 8, 197, 32]
(ViT) 5.2 vs 6.8, [1, 8, 512, 64] 5.5 vs 6.9, [1, 8, 512, 80] 6.3 vs 7.7; at
D = 128 the panel bound halves the keys per tile to 64: 12.3 vs 12.8 ms (128
keys, a 64 KiB panel, took 17.4). torch's SDPA took 23.8, 4.5, 5.0 and 5.5 ms. (On a
Zen 4 an earlier tiled form, 64 x 128 blocks at D = 64, ran at 0.94x BLAS.)

After the last block each row is divided by its l once and rounded into the
result. A row whose every score so far is -inf uses 0 in place of m' (so
exp(-inf − m') is 0, never NaN); if it stays so, its l is 0 and its output
is 0, as torch's scaled_dot_product_attention gives. With `causal`, key
blocks wholly above the diagonal (first key > last query of the block) are
never visited (a block spanning two heads of a group sees the keys of the
group's last query).

Workspace, on the kernel's stack (allocated once per kernel call, i.e. once
per thread, as conv's im2col blocks and the state-space workspaces): the
score tile, the accumulator [block_q, Dv], the rows' m and l, the Kᵀ panel
(tiled form), and for f16/bf16 the Q and V tiles (and K, BLAS form) widened
to f32, where the products are computed and rounded once at the end. The
blocks shrink (to powers of two) until the workspace fits
`WORKSPACE_MAX_BYTES`.

The row passes are loops LLVM vectorizes: the maximum is `llvm.maximum`
(NaN-propagating), the sum carries `reassoc` on its one add (only its order
changes), exp is `math_approx.exp_nonpositive` (`exp` bit for bit down to
e^-87.3 in f32, 0 below, with one exponent factor in place of two: 2-3%
faster attention on a Zen 3 at D = 32 and 64). At D = 32 they take about 45% of the
tiled form's time (exp most of it); an explicit-vector row maximum with one
horizontal reduction per row changed nothing measurable.

Of the BLAS form's 32..256 rows by 64..256 keys, 64 x 128 was the fastest
(f32 [1, 8, 512, 64], one thread, a Zen 4: 68.7 GFLOP/s against 62.7 for
64 x 64).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Final

from xdsl.dialects import llvm
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_mlir import blas
from rlx_mlir.broadcast import numel, row_major_strides
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.lowering.core import vectors
from rlx_mlir.lowering.core.element_types import Codec, codec, real
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.gemm import (
    MACS_PER_ELEMENT,
    Matrix,
    byte_pointer,
    gemm_external,
    register_tile,
    single_threaded_blas,
)
from rlx_mlir.lowering.core.kernel import EmitKernels, Kernel, KernelContext, StackArray, kernel_function
from rlx_mlir.lowering.core.loops import for_range, if_then
from rlx_mlir.lowering.scalar import math_approx as m
from rlx_mlir.memory_plan import Scratch
from rlx_mlir.tuning import Tuning

WORKSPACE_MAX_BYTES: Final = 2 << 20
"""The largest stack workspace the kernel takes (threads have 8 MiB stacks)."""
REDUCE: Final = llvm.FastMathAttr([llvm.FastMathFlag.REASSOC])
"""Flags of the row sum's add only: reassociating it is what lets it vectorize."""


@dataclass(frozen=True)
class _Attention:
    """The static shape of one attention op, as the kernel walks it."""

    batch: int
    heads: int
    queries: int
    head_size: int
    kv_heads: int
    keys: int
    value_size: int
    mask_strides: tuple[int, int, int, int] | None
    """Element strides of the mask along [B, Hq, Sq, Sk] (0 on broadcast axes)."""
    causal: bool
    scale: float
    item: Codec
    acc: Codec
    """What the products and sums are computed in: f32 for f16/bf16, else the item's."""
    block_q: int
    block_k: int
    tile: tuple[int, int, int] | None
    """(rows, columns, vector bytes) of the register tiles that compute Q Kᵀ and P V
    in place of BLAS calls (`_tiled`), or None."""

    @classmethod
    def of(cls, op: at.AttentionOp, tuning: Tuning) -> _Attention:
        b, hq, sq, d = shape_of(op.query.type)
        _, hkv, sk, dv = shape_of(op.value.type)
        item = codec(element_type(op.result.type))
        acc = codec(f32) if item.narrow else item
        mask: tuple[int, int, int, int] | None = None
        if op.mask is not None:
            shape = shape_of(op.mask.type)
            padded = (1,) * (4 - len(shape)) + shape
            strides = (0,) * (4 - len(shape)) + row_major_strides(shape)
            sb, sh, si, sj = (0 if size == 1 else stride for size, stride in zip(padded, strides))
            mask = (sb, sh, si, sj)
        tile, tiled_keys = _tiled(tuning, d, acc)
        preferred = (tuning.attention_block_q, tiled_keys or tuning.attention_block_k)
        lengths, sizes = (hq // max(1, hkv) * sq, sk), (d, dv)
        block_q, block_k = _blocks(preferred, lengths, sizes, acc.dtype.nbytes, (item.narrow, tile))
        shape = (b, hq, sq, d, hkv, sk, dv)
        return cls(*shape, mask, op.is_causal, op.scale_value, item, acc, block_q, block_k, tile)

    @property
    def widened(self) -> bool:
        return self.acc is not self.item

    @property
    def key_lanes(self) -> int:
        """Keys per block the tiled form packs into its Kᵀ panel transposed in registers,
        or 0 where keys go one at a time (f16/bf16, widened as they load; head sizes
        that are not whole vectors). One at a time, LLVM vectorizes the loop over keys
        with a gather per head element: blocks made the kernel 1.09-1.16x faster at
        D = 32 and 64 (2 threads, Zen 4, interleaved), the Whisper encoder b8 1.09x."""
        if self.tile is None:
            return 0
        lanes = self.tile[2] // self.item.dtype.nbytes
        return 0 if self.widened or self.item.components != 1 or self.head_size % lanes else lanes

    @property
    def group(self) -> int:
        """Query heads per kv head."""
        return self.heads // self.kv_heads

    @property
    def group_rows(self) -> int:
        """The query rows of one kv head's group: its heads are adjacent in q, so their
        rows are one [group · Sq, D] matrix."""
        return self.group * self.queries

    @property
    def query_blocks(self) -> int:
        return -(-self.group_rows // self.block_q)

    @property
    def form(self) -> Form:
        return self.widened, self.tile

    @property
    def score_row(self) -> int:
        """The score tile's row stride: the block of keys, in whole register tiles."""
        return _score_row(self.block_k, self.form)

    def workspace(self) -> dict[str, int]:
        return _workspace(self.block_q, self.block_k, (self.head_size, self.value_size), self.form)


Form = tuple[bool, tuple[int, int, int] | None]
"""(widened, register tile or None): what decides the workspace's arrays."""


def _tiled(tuning: Tuning, head_size: int, acc: Codec) -> tuple[tuple[int, int, int] | None, int]:
    """(the register tile of Q Kᵀ and P V, the keys per tile) when a Kᵀ panel of at
    least one tile's keys fits in `attention_tiled_panel_bytes` (L1: every row strip
    of the unit reads it), else (None, 0). The keys per tile are then the most
    (a power of two) whose panel fits: [1, 8, 512, 128] took 17.4 ms with 128 keys
    (a 64 KiB panel), 12.3 with 64, against 12.8 through BLAS."""
    width = tuning.tile_bytes() // acc.dtype.nbytes
    keys = tuning.attention_tiled_panel_bytes // (max(1, head_size) * acc.dtype.nbytes)
    if keys < width or acc.components != 1:
        return None, 0
    return (tuning.gemm_tile_rows, width, tuning.vector_bytes), 1 << (keys.bit_length() - 1)


def _score_row(bk: int, form: Form) -> int:
    _, tile = form
    return bk if tile is None else -(-bk // tile[1]) * tile[1]


def _workspace(bq: int, bk: int, sizes: tuple[int, int], form: Form) -> dict[str, int]:
    """Element counts of the stack arrays: the score tile, the accumulator, the rows'
    m and l; for f16/bf16 the Q and V tiles widened to f32; and the K tile, widened
    to f32 for BLAS, or packed transposed (Kᵀ, scaled, in whole tiles) for the
    register tiles."""
    (d, dv), (widened, tile) = sizes, form
    row = _score_row(bk, form)
    arrays = {"scores": bq * row, "accumulator": bq * dv, "top": bq, "total": bq}
    if widened:
        arrays["q"] = bq * d
    if tile is not None:
        arrays["k"] = d * row
    elif widened:
        arrays["k"] = bk * d
    if widened:
        arrays["v"] = bk * dv
    return arrays


def _blocks(
    preferred: tuple[int, int], lengths: tuple[int, int], sizes: tuple[int, int], nbytes: int, form: Form
) -> tuple[int, int]:
    """(block_q, block_k): the tuning's blocks (no larger than the sequences), halved
    in turn, the larger first, until the workspace fits WORKSPACE_MAX_BYTES (a
    ValueError, which compile reports, if even 1 x 1 does not: head sizes of
    hundreds of thousands)."""
    (sq, sk), (d, dv) = lengths, sizes
    bq, bk = max(1, min(preferred[0], sq)), max(1, min(preferred[1], sk))

    def size(bq: int, bk: int) -> int:
        return nbytes * sum(_workspace(bq, bk, (d, dv), form).values())

    while size(bq, bk) > WORKSPACE_MAX_BYTES and (bq > 1 or bk > 1):
        if bq >= bk:
            bq = max(1, bq // 2)
        else:
            bk = max(1, bk // 2)
    needed = size(bq, bk)
    if needed > WORKSPACE_MAX_BYTES:
        raise ValueError(
            f"'rlx.attention' needs a {needed} byte workspace per thread even with one query and one key "
            f"per tile, more than the {WORKSPACE_MAX_BYTES} bytes the kernel keeps on the stack "
            f"(head sizes D = {d}, Dv = {dv})"
        )
    return bq, bk


def _fold(
    e: Emitter,
    region: Region,
    bounds: tuple[SSAValue, SSAValue],
    init: list[SSAValue],
    step: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """values = init; for i in range(lo, hi): values = step(i, values); the final values
    (carried as block arguments, the form LLVM vectorizes reductions from)."""
    lo, hi = bounds
    header, loop, exit_ = Block(arg_types=[lo.type, *(v.type for v in init)]), Block(), Block()
    region.add_block(header)
    region.add_block(loop)
    e.op(llvm.BrOp(header, lo, *init))
    e.move_to(header)
    index, *values = header.args
    e.op(llvm.CondBrOp(e.icmp("slt", index, hi), loop, [], exit_, []))
    e.move_to(loop)
    e.op(llvm.BrOp(header, e.add(index, e.i64(1)), *step(index, list(values))))
    region.add_block(exit_)
    e.move_to(exit_)
    return list(values)


class _Gemm:
    """C = alpha · A · op(B) + beta · C with sizes known only at run time (row-major
    CBLAS, 32-bit sizes; every size here is below a block or a head size)."""

    def __init__(self, e: Emitter, a: _Attention, transpose_b: bool, alpha: float, beta: float) -> None:
        self.e = e
        self.name = gemm_external(a.acc.dtype.name).name
        self.alpha, self.beta = e.const(a.acc.compute, alpha), e.const(a.acc.compute, beta)
        transpose = blas.TRANS if transpose_b else blas.NO_TRANS
        self.flags = tuple(e.const(i32, flag) for flag in (blas.ROW_MAJOR, blas.NO_TRANS, transpose))

    def __call__(
        self,
        sizes: tuple[SSAValue, SSAValue, SSAValue],
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        leading: tuple[int, ...],
    ) -> None:
        e = self.e
        m, n, k = (e.itrunc(size, i32) for size in sizes)
        lda, ldb, ldc = (e.const(i32, max(1, ld)) for ld in leading)
        e.op(llvm.CallOp(self.name, *self.flags, m, n, k, self.alpha, a, lda, b, ldb, self.beta, c, ldc))


class _Unit:
    """One emission of the kernel body: the pointers, the workspace and the two GEMMs."""

    def __init__(self, a: _Attention, e: Emitter, region: Region, pointers: list[SSAValue]) -> None:
        self.a, self.e, self.region = a, e, region
        self.q, self.k, self.v = pointers[:3]
        self.mask = pointers[3] if a.mask_strides is not None else None
        self.out = pointers[-1]
        arrays = {name: StackArray.allocate(e, a.acc, count) for name, count in a.workspace().items()}
        self.scores, self.accumulator = arrays["scores"], arrays["accumulator"]
        self.top, self.total = arrays["top"], arrays["total"]
        self.wide: dict[str, StackArray] = {name: arrays[name] for name in ("q", "k", "v") if name in arrays}
        if a.tile is None:
            self.scores_gemm = _Gemm(e, a, True, a.scale, 0.0)
            self.values_gemm = _Gemm(e, a, False, 1.0, 1.0)
        self.minus_inf = e.const(a.acc.compute, float("-inf"))
        self.zero = e.const(a.acc.compute, 0.0)

    def loop(self, lo: SSAValue | int, hi: SSAValue | int, body: Callable[[SSAValue], None]) -> None:
        e = self.e
        for_range(
            e, self.region, e.i64(lo) if isinstance(lo, int) else lo, e.i64(hi) if isinstance(hi, int) else hi, body
        )

    def operand(self, source: SSAValue, at: SSAValue, count: SSAValue, slot: str) -> SSAValue:
        """A pointer to `count` elements of `source` from element `at` as the GEMM reads
        them: in place, or (f16/bf16) widened into workspace array `slot` first."""
        a, e = self.a, self.e
        if not a.widened:
            return byte_pointer(e, source, at, a.item.dtype.nbytes)
        target = self.wide[slot]
        self.loop(0, count, lambda i: target.set(e, i, real(a.item.load(e, source, e.add(at, i)))))
        return target.ptr

    def run(self, u: SSAValue) -> None:
        """Unit u = (batch, kv head, block of its group's query rows)."""
        a, e = self.a, self.e
        kv = e.udiv(u, e.i64(a.query_blocks))  # batch · Hkv + kv head
        block = e.sub(u, e.mul(kv, e.i64(a.query_blocks)))
        first = e.mul(self.interleaved(block) if a.causal else block, e.i64(a.block_q))
        rows = e.smin(e.i64(a.block_q), e.sub(e.i64(a.group_rows), first))
        row_at = e.add(e.mul(kv, e.i64(a.group_rows)), first)
        q = self.operand(self.q, e.mul(row_at, e.i64(a.head_size)), e.mul(rows, e.i64(a.head_size)), "q")

        def start(r: SSAValue) -> None:
            self.top.set(e, r, self.minus_inf)
            self.total.set(e, r, self.zero)

        self.loop(0, rows, start)
        self.loop(0, e.mul(rows, e.i64(a.value_size)), lambda i: self.accumulator.set(e, i, self.zero))
        keys = self.causal_keys(first, rows) if a.causal else e.i64(a.keys)
        where = (first, kv, rows, q)
        self.loop(0, e.udiv(e.add(keys, e.i64(a.block_k - 1)), e.i64(a.block_k)), lambda t: self.tile(where, keys, t))
        self.finish(e.mul(row_at, e.i64(a.value_size)), rows)

    def interleaved(self, block: SSAValue) -> SSAValue:
        """Causal blocks in the order 0, n-1, 1, n-2, ...: a causal block's work grows with
        its index, so in index order the threads' contiguous shares of units were unequal
        (one kv head: a quarter and three quarters on 2 threads), and the caller, done
        first, waited on its worker long enough for the pool to back off to one thread."""
        e = self.e
        half = e.udiv(block, e.i64(2))
        odd = e.icmp("ne", e.urem(block, e.i64(2)), e.i64(0))
        return e.select(odd, e.sub(e.i64(self.a.query_blocks - 1), half), half)

    def causal_keys(self, first: SSAValue, rows: SSAValue) -> SSAValue:
        """The keys a causal block of group rows [first, first + rows) sees: up to its
        last query, or every query's if the block spans two heads of the group."""
        a, e = self.a, self.e
        last = e.add(first, e.sub(rows, e.i64(1)))
        queries = e.i64(a.queries)
        one_head = e.icmp("eq", e.udiv(first, queries), e.udiv(last, queries))
        last_query = e.select(one_head, e.urem(last, queries), e.i64(a.queries - 1))
        return e.smin(e.i64(a.keys), e.add(last_query, e.i64(1)))

    def tile(self, where: tuple[SSAValue, ...], keys: SSAValue, t: SSAValue) -> None:
        """One block of keys: scores, online softmax, P V into the accumulator."""
        a, e = self.a, self.e
        first, kv, rows, q = where
        j0 = e.mul(t, e.i64(a.block_k))
        cols = e.smin(e.i64(a.block_k), e.sub(keys, j0))
        key_at = e.add(e.mul(kv, e.i64(a.keys)), j0)
        v = self.operand(self.v, e.mul(key_at, e.i64(a.value_size)), e.mul(cols, e.i64(a.value_size)), "v")
        if a.tile is None:
            k = self.operand(self.k, e.mul(key_at, e.i64(a.head_size)), e.mul(cols, e.i64(a.head_size)), "k")
            self.scores_gemm(
                (rows, cols, e.i64(a.head_size)), q, k, self.scores.ptr, (a.head_size, a.head_size, a.score_row)
            )
        else:
            self.pack_keys(e.mul(key_at, e.i64(a.head_size)), cols)
            self.strips(rows, lambda r0, n: self.tile_scores(q, r0, n, cols))
        self.loop(0, rows, lambda r: self.softmax_row(self.position(kv, e.add(first, r)), r, j0, cols))
        if a.tile is None:
            self.values_gemm(
                (rows, e.i64(a.value_size), cols),
                self.scores.ptr,
                v,
                self.accumulator.ptr,
                (a.score_row, a.value_size, a.value_size),
            )
        else:
            self.strips(rows, lambda r0, n: self.tile_values(v, r0, n, cols))

    def strips(self, rows: SSAValue, body: Callable[[SSAValue, int], None]) -> None:
        """body(first row, n) over the unit's rows: strips of the tile's rows, then the
        rows left as at most one strip of each power of two below that (4, 2, 1), so
        they too keep several accumulators in flight. One row at a time, the 4 rows
        left of a 64-row block on AVX2 (6-row tiles) took 6% of ViT's attention at
        a quarter of the tiles' rate."""
        a, e = self.a, self.e
        assert a.tile is not None
        tall = a.tile[0]
        height = e.i64(tall)
        whole = e.udiv(rows, height)
        self.loop(0, whole, lambda s: body(e.mul(s, height), tall))
        done = e.mul(whole, height)
        left = e.sub(rows, done)
        for piece in (1 << b for b in reversed(range(max(1, tall - 1).bit_length()))):
            first = e.add(done, e.and_(left, e.i64(~(2 * piece - 1))))
            present = e.icmp("ne", e.and_(left, e.i64(piece)), e.i64(0))
            if_then(e, self.region, present, partial(body, first, piece))

    def pack_keys(self, at: SSAValue, cols: SSAValue) -> None:
        """The K tile's `cols` keys from element `at` into the panel as scale · Kᵀ
        [D, score_row], zero up to a whole register tile of keys. Keys go in blocks of
        one vector's lanes where the head size is whole vectors (`key_lanes`),
        the rest one at a time."""
        a, e = self.a, self.e
        panel = self.wide["k"]
        scale = e.const(a.acc.compute, a.scale)

        def key(j: SSAValue) -> None:
            row = e.add(at, e.mul(j, e.i64(a.head_size)))
            for kk in range(a.head_size):
                value = e.fmul(real(a.item.load(e, self.k, e.add(row, e.i64(kk)))), scale)
                panel.set(e, e.add(e.i64(kk * a.score_row), j), value)

        lanes = a.key_lanes
        if lanes:
            whole = e.mul(e.udiv(cols, e.i64(lanes)), e.i64(lanes))
            for_range(e, self.region, e.i64(0), whole, lambda j0: self._transposed_keys(at, j0, lanes, scale), lanes)
            self.loop(whole, cols, key)
        else:
            self.loop(0, cols, key)
        assert a.tile is not None
        width = e.i64(a.tile[1])
        end = e.mul(e.udiv(e.add(cols, e.i64(a.tile[1] - 1)), width), width)

        def pad(j: SSAValue) -> None:
            for kk in range(a.head_size):
                panel.set(e, e.add(e.i64(kk * a.score_row), j), self.zero)

        self.loop(cols, end, pad)

    def _transposed_keys(self, at: SSAValue, j0: SSAValue, lanes: int, scale: SSAValue) -> None:
        """Keys j0 .. j0 + lanes into the panel: per block of `lanes` head elements, one
        row vector per key, transposed in registers (`vectors.transpose_square`), scaled
        and stored as `lanes` contiguous panel columns."""
        a, e = self.a, self.e
        panel, storage = self.wide["k"].ptr, a.item.storage
        first = e.add(at, e.mul(j0, e.i64(a.head_size)))
        factor = vectors.splat(e, scale, lanes)
        for kk0 in range(0, a.head_size, lanes):
            rows = [
                vectors.load(e, storage, self.k, e.add(first, e.i64(r * a.head_size + kk0)), lanes)
                for r in range(lanes)
            ]
            for c, column in enumerate(vectors.transpose_square(e, rows)):
                vectors.store(e, e.fmul(column, factor), panel, e.add(e.i64((kk0 + c) * a.score_row), j0))

    def tile_scores(self, q: SSAValue, r0: SSAValue, height: int, cols: SSAValue) -> None:
        """Scores of rows r0 .. r0 + height for every whole tile of keys (the panel's zero
        columns fill the last)."""
        a, e = self.a, self.e
        assert a.tile is not None
        _, width, vector_bytes = a.tile
        lhs = Matrix(q, e.mul(r0, e.i64(a.head_size)), a.head_size)
        out_at = e.mul(r0, e.i64(a.score_row))

        def piece(p: SSAValue) -> None:
            j0 = e.mul(p, e.i64(width))
            rhs = Matrix(self.wide["k"].ptr, j0, a.score_row)
            out = Matrix(self.scores.ptr, e.add(out_at, j0), a.score_row)
            register_tile(e, self.region, a.acc, (height, width, a.head_size), lhs, rhs, out, vector_bytes)

        self.loop(0, e.udiv(e.add(cols, e.i64(width - 1)), e.i64(width)), piece)

    def tile_values(self, v: SSAValue, r0: SSAValue, height: int, cols: SSAValue) -> None:
        """accumulator[r0 .. r0 + height] += P V over the tile's `cols` keys."""
        a, e = self.a, self.e
        assert a.tile is not None
        _, width, vector_bytes = a.tile
        lhs = Matrix(self.scores.ptr, e.mul(r0, e.i64(a.score_row)), a.score_row)
        acc_at = e.mul(r0, e.i64(a.value_size))
        for c0 in range(0, a.value_size, width):
            span = min(width, a.value_size - c0)
            rhs = Matrix(v, e.i64(c0), a.value_size)
            out = Matrix(self.accumulator.ptr, e.add(acc_at, e.i64(c0)), a.value_size)
            register_tile(e, self.region, a.acc, (height, span, cols), lhs, rhs, out, vector_bytes, accumulate=True)

    def position(self, kv: SSAValue, row: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(batch, query head, query) of row `row` of kv head `kv`'s group."""
        a, e = self.a, self.e
        batch = e.udiv(kv, e.i64(a.kv_heads))
        member = e.udiv(row, e.i64(a.queries))
        head = e.add(e.mul(e.sub(kv, e.mul(batch, e.i64(a.kv_heads))), e.i64(a.group)), member)
        return batch, head, e.sub(row, e.mul(member, e.i64(a.queries)))

    def softmax_row(
        self, position: tuple[SSAValue, SSAValue, SSAValue], r: SSAValue, j0: SSAValue, cols: SSAValue
    ) -> None:
        """Row r of the tile (query i of head h of batch b): mask, online softmax update."""
        a, e = self.a, self.e
        batch, head, i = position
        base = e.mul(r, e.i64(a.score_row))
        # a causal row sees keys j <= i: the first `seen` columns of the tile
        seen = e.smax(e.i64(0), e.smin(cols, e.sub(e.add(i, e.i64(1)), j0))) if a.causal else cols
        mask = None
        if self.mask is not None and a.mask_strides is not None:
            sb, sh, sq, sk = a.mask_strides
            mask_at = e.add(
                e.add(e.mul(batch, e.i64(sb)), e.mul(head, e.i64(sh))),
                e.add(e.mul(i, e.i64(sq)), e.mul(j0, e.i64(sk))),
            )
            mask = (self.mask, mask_at, sk)

        def masked(j: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
            s = real(self.scores.get(e, e.add(base, j)))
            if mask is not None:
                pointer, at, stride = mask  # a mask broadcast along the keys reads one value per row
                index = at if stride == 0 else e.add(at, j if stride == 1 else e.mul(j, e.i64(stride)))
                s = e.fadd(s, real(a.item.load(e, pointer, index)))
                self.scores.set(e, e.add(base, j), s)
            return [e.maximum(values[0], s)]

        (tile_top,) = _fold(e, self.region, (e.i64(0), seen), [self.minus_inf], masked)
        old = real(self.top.get(e, r))
        new = e.maximum(old, tile_top)
        # all scores -inf so far: subtract 0 instead, so exp(-inf - m) is 0, not NaN
        shift = e.select(e.fcmp("oeq", new, self.minus_inf), self.zero, new)
        alpha = m.exp_nonpositive(e, e.fsub(old, shift))

        def probability(j: SSAValue, values: list[SSAValue]) -> list[SSAValue]:
            p = m.exp_nonpositive(e, e.fsub(real(self.scores.get(e, e.add(base, j))), shift))
            self.scores.set(e, e.add(base, j), p)
            return [e.op(llvm.FAddOp(values[0], p, REDUCE))]

        (tile_sum,) = _fold(e, self.region, (e.i64(0), seen), [self.zero], probability)
        self.loop(seen, cols, lambda j: self.scores.set(e, e.add(base, j), self.zero))
        self.top.set(e, r, new)
        self.total.set(e, r, e.fma(alpha, real(self.total.get(e, r)), tile_sum))
        row = e.mul(r, e.i64(a.value_size))

        def rescale(c: SSAValue) -> None:
            at_c = e.add(row, c)
            self.accumulator.set(e, at_c, e.fmul(real(self.accumulator.get(e, at_c)), alpha))

        self.loop(0, a.value_size, rescale)

    def finish(self, out_at: SSAValue, rows: SSAValue) -> None:
        """out = accumulator / l, rounded once (0 for a row with l = 0: every key masked)."""
        a, e = self.a, self.e

        def row(r: SSAValue) -> None:
            total = real(self.total.get(e, r))
            inverse = e.select(e.fcmp("oeq", total, self.zero), self.zero, e.fdiv(e.const_like(total, 1.0), total))
            at_r = e.mul(r, e.i64(a.value_size))

            def element(c: SSAValue) -> None:
                value = e.fmul(real(self.accumulator.get(e, e.add(at_r, c))), inverse)
                a.item.store(e, value, self.out, e.add(out_at, e.add(at_r, c)))

            self.loop(0, a.value_size, element)

        self.loop(0, rows, row)


def attention_kernels(op: at.AttentionOp, ctx: KernelContext) -> list[Kernel]:
    """Units (batch, kv head, block of its group's query rows), split over the
    entry's threads (after a kernel that sets BLAS to one thread, for the BLAS
    form); see the module docstring."""
    if numel(shape_of(op.result.type)) == 0:
        return []
    a = _Attention.of(op, ctx.tuning)

    def build(e: Emitter, region: Region, pointers: list[SSAValue], begin: SSAValue, end: SSAValue) -> None:
        unit = _Unit(a, e, region, pointers)
        for_range(e, region, begin, end, unit.run)

    buffers: list[SSAValue | str | Scratch] = [
        op.query,
        op.key,
        op.value,
        *([op.mask] if op.mask is not None else []),
        op.result,
    ]
    units = a.batch * a.kv_heads * a.query_blocks
    pairs = a.batch * a.heads * a.queries * a.keys // (2 if a.causal else 1)
    work = max(1, pairs * (a.head_size + a.value_size) // MACS_PER_ELEMENT)
    function = kernel_function(ctx.name, len(buffers), build)
    if a.tile is not None:
        return [Kernel(function, buffers, units, work)]
    blas.load()
    main = Kernel(function, buffers, units, work, externals=(gemm_external(a.acc.dtype.name),))
    return [single_threaded_blas(f"{ctx.name}_blas"), main]


KERNELS: dict[type[Operation], EmitKernels] = {at.AttentionOp: attention_kernels}
