"""The kernel choices of one compile: register tiles, block sizes, thresholds,
forms, each derived from the `Target` or taken from a per-level table.

One frozen `Tuning` is made per compile (`Tuning.for_target`) and carried by
`KernelContext` through the lowering, so no emitter reads a module global that
a test or benchmark could patch: a knob you change is an explicit override
(`compile(..., tuning={"gdn_chunked_min_seq": 1})`, `rlx-opt -p
'lower-to-llvm{tuning="gdn_chunked_min_seq=1"}'`), and the whole record is
part of the disk-cache key (`key`). `exe.tuning` prints what a build used.

Derivations (the figures behind each choice are in the commit that made it):
- register tiles keep 16 accumulators in AVX-512's 32 vector registers and
  12 in AVX2's 16, leaving the rest for the B pieces and the splat of A;
- blocks that must stay in L1 take the largest power of two that fits in
  it (32 KiB of Zen 3/4's 32 KiB and Zen 5's 48 KiB); a product block the
  epilogue re-reads takes an eighth of the last-level cache; a packed GEMM
  panel up to a quarter of L2 (Zen 3, AVX2: 1.07-1.12x OpenBLAS's blocks from
  K = 256 to 2048 in benchmarks/contractions.py, where the L1 bound had sent
  K > 512 to OpenBLAS);
- an output larger than the last-level cache is stored non-temporally.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, i64
from xdsl.ir import Operation

from rlx_mlir.errors import CompileError
from rlx_mlir.target import Target

NEVER = 1 << 62
"""A sequence length no input reaches: the form it gates is never chosen."""


@dataclass(frozen=True)
class Tuning:
    # the vector unit
    vector_bytes: int
    """The widest vector explicit-vector kernels use: 64 (AVX-512), 32 (AVX2)."""
    accumulators: int
    """Vector accumulators a register-tiled kernel keeps live."""

    # threads and memory
    cores: int
    """The target's cores: kernels that cut their work into units balance the units' equal
    shares over this many threads (fixed by the target, not the thread count, so the
    code does not depend on how many threads run it)."""
    parallel_min_elements: int
    """Below this many elements a kernel runs on the calling thread (a pool launch costs ~0.7 us)."""
    unroll_min_work: int
    """Kernels launched with less work than this, outside the entry's loops, keep their
    loops rolled (LLVM's unroller off them): they run in microseconds, where unrolling
    gains nanoseconds, while it cost a third of LLVM's time on small modules (2,891
    compiles of the dtype, ONNX-node, movement and binary tests: 128 s of optimization
    and code generation with it, 85 without). 0: unroll every kernel's loops."""
    nontemporal_min_bytes: int
    """Outputs larger than this (`Target.llc_share`) are stored non-temporally."""

    # GEMMs (lowering/core/gemm.py, contraction.py, rnn.py)
    gemm_tile_rows: int
    """Rows of a register tile of C: accumulators / 2, as a tile row is two vectors wide."""
    gemm_tiled_max_mnk: int
    """Real GEMMs up to this M·N·K run the in-place tile kernel (0: never)."""
    gemm_panel_max_mnk: int
    """Larger real GEMMs up to this M·N·K run the packed-panel kernel (0: never)."""
    gemm_packed_weights_max_mnk: int
    """Constant weights of products up to this M·N·K that the panel kernel runs are
    stored in its panels at compile time (`pack-matmul-weights`); 0: never, every
    call packs them, as it packs a weight computed at run time (the A/B baseline)."""
    gemm_panel_max_bytes: int
    """The largest K x tile panel of op(B) the panel kernel runs (longer K goes to OpenBLAS),
    and the most panels one of its units packs together: a quarter of L2, where the panels
    stay while the row tiles of A stream past, and at most 256 KiB: it is a stack buffer of
    each thread."""
    gemm_epilogue_block_bytes: int
    """Product rows computed and finished by a contraction's epilogue together."""
    gemm_min_units: int
    """Row blocks a contraction's BLAS GEMM is cut into at least, run single-threaded
    on the entry's threads (`lowering/kernels/contraction.py`): 4 per core of the
    target, so equal shares balance (not the thread count: results do not depend on it)."""
    rnn_ih_panel_tiles: int
    """Register tiles side by side in a W_ih panel of the recurrent projection."""

    # attention (lowering/kernels/attention.py)
    attention_block_q: int
    """Query rows per unit of the flash-attention kernel (at most: fewer when its
    workspace would not fit)."""
    attention_block_k: int
    """Keys per score tile of the flash-attention kernel (at most, likewise)."""
    attention_tiled_panel_bytes: int
    """The largest Kᵀ panel (head size x keys) the flash-attention kernel packs for its
    register tiles, which compute Q Kᵀ and P V in place of BLAS calls where a panel
    of one tile's keys fits (0: never): L1, which every row strip reads it from."""

    # convolutions (lowering/kernels/conv.py)
    conv_im2col_block_bytes: int
    """An im2col block's bytes: built, then read back by its GEMM while still in L2."""
    conv_tiled_block_bytes: int
    """The tiled form's input and output blocks: a quarter of L2, as the copy-out of the
    sums writes as much again past them (the 3/4 of an im2col block made ResNet's stem
    at batch 8 keep 1.1 MiB of sums per unit: 7-9% slower on a 2 MiB-L2 Xeon 6), but
    up to `CONV_TILED_BLOCK_FLOOR` where that is at most half of L2: a block pays its
    input rows' halo and a sweep of its weights, which only its own size amortizes."""
    conv_min_units: int
    """Units the GEMM form is cut into at least, so the cores' equal shares balance
    (fixed by the target, not the thread count, so results do not depend on threads)."""
    conv_tile_accumulators: int
    """Vector accumulators of the tiled conv's register tiles: three quarters of the
    registers (24 of AVX-512's 32: 5-10% faster than 16 on ResNet's layers; 12 of
    AVX2's 16), the rest for a tile's vectors of input and the weight's splat."""
    conv_tiled_max_padded_percent: int
    """A stride-1 conv runs the tiled form (register tiles over its zero-padded input,
    no im2col, no BLAS) when the positions it computes, padding columns included, are
    fewer than this percent of its outputs (0: never)."""
    conv_lane_readback_steps: int
    """What the lane form of the tiled conv (output channels in the lanes, its weight packed
    by `pack-conv-weights`) pays per output to transpose its sums on the way out, in
    vector FMA steps: it runs where real outputs · (depth / L + this) is less than the
    tiled form's computed positions · depth / L (0: wherever it computes fewer, as
    measured; NEVER: never, the A/B of `benchmarks/conv.py --versus`)."""
    conv_winograd_min_channels: int
    """A 3x3 stride-1 conv with at least this many input and output channels runs the
    Winograd form (F(2x2, 3x3), its weight transformed by `pack-conv-weights`): 16
    products per 2x2 outputs instead of 36, against transforms per tile and channel
    that the GEMM over the channels must outweigh (NEVER: never, for A/Bs)."""
    conv_winograd_min_tiles: int
    """...and whose output planes hold at least this many 2x2 tiles. A small plane's units
    are few tiles, a vector of them along a row of tiles mostly past its end, and channel
    chunks that each transform the whole input block again: ResNet's 7x7 planes (16
    tiles, 512 channels) ran 0.7-0.84x the lane form at batch 1 (1.03-1.26x at batch 8),
    its 14x14 ones (49 tiles) 1.36-1.71x (2-vCPU Zen 4, loaded)."""

    # gated delta net (lowering/kernels/delta_rule.py)
    gdn_chunked_min_seq: int
    """Sequences of at least this many steps run the chunked (WY) form."""
    gdn_strip_bytes: int
    """The sequential form's column strip of the state, kept in L1 for the sequence."""
    gdn_strip_vectors: int
    """Vectors per row of a decode step's strip (three accumulators each)."""
    gdn_short_seq: int
    """Sequences shorter than this are decode steps (register-wide strips)."""
    gdn_parallel_cells: int
    """State cells (B·H·S·N²) from which the sequential form is split across threads."""

    # Mamba2 and the selective scan (lowering/kernels/state_space.py)
    mamba2_chunked_min_seq: int
    """Sequences of at least this many steps run Mamba2's chunked (SSD) form."""
    mamba2_direct_max_seq: int
    """Sequences up to this length (decode steps) run the direct form."""
    mamba2_state_block_bytes: int
    """The state rows one unit of the blocked form keeps in L1."""
    mamba2_steps: int
    """Steps run per pass over a state block."""
    mamba2_group: int
    """State-steps updated per pass of the blocked form's lane loop."""
    scan_group: int
    """State-steps updated per pass of the selective scan's lane loop."""
    scan_channel_block: int
    """Channels per unit of the selective scan (f32 lanes of four vectors)."""

    # reductions (lowering/core/slabs.py, kernels/reduction_region.py)
    reduce_column_bytes: int
    """Bytes of each row a column chunk of an outer-axis reduction walks."""
    reduce_block: int
    """Rows of lanes combined in registers before a lane accumulator is touched."""
    softmax_block: int
    """The same for softmax's exp pass."""
    reduce_short: int
    """Reductions this short are unrolled per output."""
    reduce_short_columns: int
    """Outputs per work item of a short reduction."""
    region_block: int
    """Lane steps of a reduction region between flushes into the total."""
    region_columns: int
    """Output points a reduction region reduces together in column order (their lanes stay in L2)."""

    # elementwise copies (lowering/kernels/elementwise.py)
    transpose_block_rows: int
    transpose_block_cols: int
    """Rows of the output one sweep of a transposed copy covers, and its columns per panel."""
    stage_bytes: int
    """Output a staged kernel computes on the stack before storing it (in L1)."""

    @classmethod
    def for_target(cls, target: Target) -> Tuning:
        """The model's choices for `target`. The recurrences' forms are the sequential,
        in-cache ones at every level: they won on Zen 4/5 with AVX-512 and with
        x86-64-v3 code; where a chunked form is faster (GDN's on a Zen 3), it is
        found by measuring (`rlx_mlir.autotune`), not by the ISA level."""
        accumulators = min(16, target.vector_registers - 4)
        l1_block = _floor_power_of_two(target.l1_bytes)
        return cls(
            vector_bytes=target.vector_bytes,
            accumulators=accumulators,
            cores=target.cores,
            parallel_min_elements=1 << 15,
            unroll_min_work=1 << 15,
            nontemporal_min_bytes=target.llc_share,
            gemm_tile_rows=accumulators // 2,
            gemm_tiled_max_mnk=65536 * 4,  # where OpenBLAS itself stays on the calling thread
            gemm_panel_max_mnk=NEVER,
            gemm_packed_weights_max_mnk=NEVER,
            gemm_panel_max_bytes=min(target.l2_bytes // 4, 256 << 10),
            gemm_epilogue_block_bytes=min(4 << 20, target.llc_bytes // 8),
            gemm_min_units=4 * target.cores,
            rnn_ih_panel_tiles=4,
            attention_block_q=64,
            attention_block_k=128,
            attention_tiled_panel_bytes=target.l1_bytes,
            conv_im2col_block_bytes=3 * target.l2_bytes // 4,
            conv_tiled_block_bytes=max(target.l2_bytes // 4, min(target.l2_bytes // 2, CONV_TILED_BLOCK_FLOOR)),
            conv_min_units=4 * target.cores,
            conv_tile_accumulators=3 * target.vector_registers // 4,
            conv_tiled_max_padded_percent=200,
            conv_lane_readback_steps=0,
            conv_winograd_min_channels=32,
            conv_winograd_min_tiles=32,
            gdn_chunked_min_seq=NEVER,
            gdn_strip_bytes=l1_block // 2,
            gdn_strip_vectors=max(1, (target.vector_registers - 8) // 3),
            gdn_short_seq=8,
            gdn_parallel_cells=1 << 15,
            mamba2_chunked_min_seq=NEVER,
            mamba2_direct_max_seq=4,
            mamba2_state_block_bytes=l1_block,
            mamba2_steps=2,
            mamba2_group=8,
            scan_group=8,
            scan_channel_block=target.vector_bytes,
            reduce_column_bytes=1024,
            reduce_block=16,
            softmax_block=8,
            reduce_short=16,
            reduce_short_columns=1024,
            region_block=64,
            region_columns=max(256, target.l2_bytes // (8 * target.vector_bytes)),
            transpose_block_rows=64,
            transpose_block_cols=256,
            stage_bytes=min(4096, target.l1_bytes // 8),
        )

    def replace(self, overrides: Mapping[str, int]) -> Tuning:
        """This tuning with some knobs set explicitly; an unknown knob or a value it
        cannot take is a `TuningError` naming it."""
        known = {f.name for f in dataclasses.fields(self)}
        for name, value in overrides.items():
            if name not in known:
                raise TuningError(f"unknown tuning knob '{name}' (known: {', '.join(sorted(known))})")
            least = 0 if name in THRESHOLDS else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise TuningError(f"tuning knob '{name}' takes an integer >= {least}, got {value!r}")
            if name in MULTIPLES and value % MULTIPLES[name]:
                raise TuningError(f"tuning knob '{name}' takes a multiple of {MULTIPLES[name]}, got {value}")
        if "vector_bytes" in overrides and overrides["vector_bytes"] not in (16, 32, 64):
            raise TuningError(f"tuning knob 'vector_bytes' takes 16, 32 or 64, got {overrides['vector_bytes']}")
        return dataclasses.replace(self, **overrides)

    def for_op(self, op: Operation) -> Tuning:
        """This tuning with `op`'s own overrides (its TUNING_ATTRIBUTE); a bad one is a
        `TuningError` naming the op."""
        try:
            overrides = overrides_of(op)
            return self.replace(overrides) if overrides else self  # most ops: no new record
        except TuningError as error:
            raise TuningError(f"{op.name}: {error}") from None

    @property
    def key(self) -> str:
        """Every knob, for cache keys."""
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self))

    def tile_bytes(self) -> int:
        """Bytes of columns of a register tile of C: two vectors."""
        return 2 * self.vector_bytes


CONV_TILED_BLOCK_FLOOR = 256 << 10
"""The tiled conv's blocks of a small L2. A quarter of a 512 KiB L2 (Zen 3) left
ResNet's last stage blocks of 3 of its 7 rows (the third unit of 1 row, a share idle)
and its 3x3 / 2 convs blocks of 1 output row, each copying 3 input rows: ResNet-18
at batch 1 ran 8-14% slower than with 256 KiB (its last stage's convs 1.25x), at
batch 8 1% (its stem alone 3.5% faster). A quarter of 1 MiB (Zen 4) is this size."""


THRESHOLDS = frozenset(
    {
        "parallel_min_elements",
        "unroll_min_work",
        "nontemporal_min_bytes",
        "gemm_tiled_max_mnk",
        "gemm_panel_max_mnk",
        "gemm_packed_weights_max_mnk",
        "gemm_panel_max_bytes",
        "conv_tiled_max_padded_percent",
        "conv_lane_readback_steps",
        "conv_winograd_min_channels",
        "conv_winograd_min_tiles",
        "attention_tiled_panel_bytes",
        "gdn_chunked_min_seq",
        "gdn_short_seq",
        "gdn_parallel_cells",
        "mamba2_chunked_min_seq",
        "mamba2_direct_max_seq",
        "reduce_short",
    }
)
"""The knobs that are bounds a size is compared with, so 0 is meaningful (always or
never); every other knob is a count or a size and takes at least 1."""

MULTIPLES = {"stage_bytes": 64, "reduce_column_bytes": 64}
"""Knobs that must be whole cache lines."""


class TuningError(CompileError, ValueError):
    """An override of a knob that does not exist or a value it cannot take."""


def parse_overrides(text: str) -> dict[str, int]:
    """`name=value,name=value` (the `lower-to-llvm{tuning=...}` option) as a mapping."""
    overrides: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise TuningError(f"bad tuning override '{item}': expected name=integer")
        overrides[name.strip()] = int(value)
    return overrides


TUNING_ATTRIBUTE = "rlx.tuning"
"""An op's own overrides of the compile's tuning (`rlx_mlir.autotune` sets them): a
dictionary of knob names to integers, applied by the lowering to that op only."""


def set_overrides(op: Operation, overrides: Mapping[str, int]) -> None:
    op.attributes[TUNING_ATTRIBUTE] = DictionaryAttr({k: IntegerAttr(v, i64) for k, v in overrides.items()})


def overrides_of(op: Operation) -> dict[str, int]:
    """The knobs `op` sets for itself (none without the attribute)."""
    found = op.attributes.get(TUNING_ATTRIBUTE)
    if found is None:
        return {}
    if not isinstance(found, DictionaryAttr) or not all(isinstance(v, IntegerAttr) for v in found.data.values()):
        raise TuningError(f"{TUNING_ATTRIBUTE} must be a dictionary of knob names to integers, got {found}")
    return {k: v.value.data for k, v in found.data.items() if isinstance(v, IntegerAttr)}  # every v is, as checked


def _floor_power_of_two(n: int) -> int:
    return 1 << max(0, n.bit_length() - 1)
