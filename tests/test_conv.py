"""rlx.conv against torch.nn.functional.conv1d/conv2d/conv3d in float64.

The reference runs on the inputs widened to float64 (exact), with the pads
applied by torch.nn.functional.pad (torch's own `padding` is symmetric only).
Tolerance, per element, with K = C/groups · taps the terms of one output, u
the unit roundoff of the type the sums are computed in (f32 for f16 and bf16)
and u_out that of the stored type:

    |got - ref| <= 2·K·u·(|x| ⋆ |w| + |b|) + u_out·|ref| + tiny_out

the summation bound with room for any order, plus the one final rounding of
f16/bf16. A sum accumulated in f16/bf16 instead of f32 misses it by orders of
magnitude (see `test_f16_sums_are_computed_in_f32`).

Every dtype compiles one module holding every case of `CASES` (a compile per
case would take most of the file's time); each case is checked on its own.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from closeness import COMPUTED_IN, FLOAT_TYPES, UNIT_ROUNDOFF, assert_close
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.dialects.convolution import GEMM_TYPES, WINOGRAD_G, ConvOp
from rlx_mlir.errors import ArgumentError, VerificationError
from rlx_mlir.lowering.core.kernel import KernelContext
from rlx_mlir.lowering.kernels.conv import (
    WINOGRAD_AT,
    WINOGRAD_BT,
    _Conv,
    _gemm_split,
    _GemmSplit,
    _Tiled,
    _tiled_form,
    _tiled_split,
    packed_lanes,
    winograd_form,
    winograd_weight,
)
from rlx_mlir.target import target
from rlx_mlir.tuning import NEVER, Tuning

TYPES = FLOAT_TYPES
HALF_SUBNORMAL = {"f16": 2.0**-25, "bf16": 2.0**-134, "f32": 0.0, "f64": 0.0}


@dataclass(frozen=True)
class Case:
    """One convolution: shapes and attributes (per spatial axis), bias or not."""

    name: str
    input: tuple[int, ...]
    weight: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_before: tuple[int, ...]
    pad_after: tuple[int, ...]
    groups: int = 1
    bias: bool = True


CASES = (
    Case("1d_plain", (2, 3, 10), (4, 3, 3), (1,), (1,), (0,), (0,)),
    Case("1d_same_no_bias", (2, 3, 10), (5, 3, 3), (1,), (1,), (1,), (1,), bias=False),
    Case("1d_stride_dilation", (1, 4, 17), (3, 4, 3), (2,), (3,), (2,), (1,)),
    Case("1d_groups", (2, 6, 9), (4, 3, 2), (1,), (1,), (0,), (1,), groups=2),
    Case("1d_depthwise_causal", (2, 8, 12), (8, 1, 4), (1,), (1,), (3,), (0,), groups=8),
    Case("1d_depthwise_multiplier", (1, 3, 7), (6, 1, 3), (2,), (1,), (1,), (2,), groups=3, bias=False),
    Case("1d_kernel_beyond_input_with_pads", (1, 2, 2), (2, 2, 5), (1,), (1,), (2,), (3,)),
    Case("2d_plain", (2, 3, 6, 5), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    Case("2d_strided_asymmetric", (1, 2, 9, 8), (3, 2, 3, 2), (2, 3), (1, 2), (0, 2), (1, 0), bias=False),
    Case("2d_patch_embedding", (2, 3, 8, 8), (5, 3, 4, 4), (4, 4), (1, 1), (0, 0), (0, 0)),
    Case("2d_groups_dilated", (1, 4, 7, 7), (6, 2, 2, 3), (1, 2), (2, 1), (1, 1), (2, 0), groups=2),
    Case("2d_depthwise", (2, 4, 6, 6), (4, 1, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), groups=4),
    Case("3d", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2), (1, 2, 1), (1, 1, 2), (1, 0, 1), (0, 1, 1)),
    Case("zero_batch", (0, 2, 5), (3, 2, 2), (1,), (1,), (0,), (0,)),
)
GEMM_CASES = (
    # f32/f64 with >= 8 output channels and >= 8 input channels · taps per group: im2col and GEMMs
    Case("gemm_2d", (2, 4, 9, 7), (16, 4, 3, 3), (2, 1), (1, 1), (1, 1), (1, 0)),
    Case("gemm_2d_groups_dilated", (1, 4, 6, 6), (16, 2, 3, 2), (1, 1), (2, 1), (2, 0), (1, 1), groups=2, bias=False),
    Case("gemm_1d_pointwise", (2, 8, 10), (8, 8, 1), (1,), (1,), (0,), (0,)),
    Case("gemm_1d_strided_pointwise", (2, 8, 10), (8, 8, 1), (3,), (1,), (0,), (0,), bias=False),
    # 147 KiB of im2col per output row: blocks of 2 rows of the 7 and a last block of 1
    Case("gemm_2d_blocks", (1, 64, 7, 64), (16, 64, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    # a pointwise conv reads its blocks (256 KiB of f32 per output row, several rows) from the input
    # in place; 256 channels of 256 columns, not 64 of 1024: the same rows and blocks, and LLVM
    # optimizes it in 0.2 s instead of 1.4 s (f32) and 2.9 s (f64)
    Case("gemm_2d_pointwise_blocks", (1, 256, 8, 256), (16, 256, 1, 1), (1, 1), (1, 1), (0, 0), (0, 0)),
    # 48 output channels, 3x3 outputs: channel chunks of 32 and 16 rows, blocks of 2 and 1 rows
    Case("gemm_2d_channel_chunks", (1, 8, 3, 3), (48, 8, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    Case("gemm_3d", (1, 2, 4, 5, 3), (8, 2, 2, 3, 2), (1, 2, 1), (1, 1, 1), (1, 0, 1), (0, 1, 1)),
    # ResNet's stem (7x7 / 2, pad 3): four phase planes per channel in the tiled form
    Case("gemm_2d_stem", (1, 3, 20, 18), (16, 3, 7, 7), (2, 2), (1, 1), (3, 3), (3, 3)),
    # a downsampling 1x1 / 2 (not pointwise: its rhs is every other input)
    Case("gemm_2d_strided_1x1", (2, 16, 9, 10), (24, 16, 1, 1), (2, 2), (1, 1), (0, 0), (0, 0), bias=False),
    # 3x1 / (3, 2): its block holds the three row phases of the even columns only
    Case("gemm_2d_unread_phases", (1, 8, 13, 12), (16, 8, 3, 1), (3, 2), (1, 1), (1, 0), (1, 0)),
    # 22 output channels: register tiles of all their rows and one of the rest
    Case("gemm_1d_tail_channels", (2, 10, 37), (22, 10, 3), (1,), (1,), (1,), (1,)),
    Case("gemm_1d_strided_dilated", (1, 8, 40), (10, 8, 3), (3,), (2,), (2,), (1,)),
)
FORMS = {
    "im2col": {"conv_tiled_max_padded_percent": 0},
    "tiled": {"conv_tiled_max_padded_percent": NEVER},
}
"""Tunings that force the GEMM-form convs into one lowering: im2col blocks and BLAS
GEMMs, or the tiled form (every one but the pointwise convs, which stay BLAS GEMMs)."""


def _torch_conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, case: Case) -> torch.Tensor:
    pads = [p for before, after in zip(reversed(case.pad_before), reversed(case.pad_after)) for p in (before, after)]
    conv = (torch.nn.functional.conv1d, torch.nn.functional.conv2d, torch.nn.functional.conv3d)[len(case.input) - 3]
    padded = torch.nn.functional.pad(x, pads)
    return conv(padded, w, b, stride=case.strides, dilation=case.dilations, groups=case.groups)


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, case: Case) -> tuple[np.ndarray, np.ndarray]:
    """The float64 result and its magnitude |x| ⋆ |w| + |b| (the error scale)."""
    tx, tw = (torch.from_numpy(np.asarray(v, np.float64)) for v in (x, w))
    tb = torch.from_numpy(np.asarray(b, np.float64)) if b is not None else None
    want = _torch_conv(tx, tw, tb, case).numpy()
    scale = _torch_conv(tx.abs(), tw.abs(), tb.abs() if tb is not None else None, case).numpy()
    return want, scale


def _inputs(case: Case, t: str, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [case.input, case.weight, *([(case.weight[0],)] if case.bias else [])]
    return [rng.standard_normal(shape).astype(TYPES[t]) for shape in shapes]


def compile_cases(
    cases: tuple[Case, ...], t: str, threads: int = 1, tuning: dict[str, int] | None = None
) -> rlx.Executable:
    return rlx.compile(build_cases(cases, t), threads=threads, tuning=tuning)


def build_cases(cases: tuple[Case, ...], t: str) -> ModuleOp:
    b = Builder("convs")
    for case in cases:
        x, w = b.input(case.input, t), b.input(case.weight, t)
        bias = b.input((case.weight[0],), t) if case.bias else None
        geometry = (case.strides, case.dilations, case.pad_before, case.pad_after)
        b.output(b.conv(x, w, bias, *geometry, groups=case.groups))
    return b.module()


def check(case: Case, got: np.ndarray, inputs: list[np.ndarray], t: str) -> None:
    want, scale = reference(inputs[0], inputs[1], inputs[2] if case.bias else None, case)
    terms = case.weight[1] * int(np.prod(case.weight[2:]))
    atol = 2 * terms * UNIT_ROUNDOFF[COMPUTED_IN[t]] * scale + HALF_SUBNORMAL[t]
    assert got.dtype == TYPES[t], case.name
    assert_close(got, want, rtol=UNIT_ROUNDOFF[t], atol=atol, what=f"{case.name} {t}")


def run_cases(cases: tuple[Case, ...], t: str, tuning: dict[str, int] | None = None) -> None:
    exe = compile_cases(cases, t, tuning=tuning)
    inputs = [_inputs(case, t, seed) for seed, case in enumerate(cases)]
    results = exe(*(v for group in inputs for v in group))
    for case, got, given in zip(cases, results, inputs):
        check(case, got, given, t)


@pytest.mark.parametrize("t", TYPES)
def test_every_case_matches_torch(t: str) -> None:
    run_cases(CASES, t)


def _is_tiled(op: ConvOp, tuning: dict[str, int] | None = None) -> bool:
    base = Tuning.for_target(target())
    ctx = KernelContext("conv", base.replace(tuning) if tuning else base)
    return _tiled_form(op, _Conv.of(op), ctx) is not None


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("t", ["f32", "f64"])
def test_the_gemm_form_matches_torch(t: str, form: str) -> None:
    """The GEMM form is f32/f64 only (f16/bf16 with these shapes run the direct kernel, as CASES
    test), lowered to im2col and BLAS GEMMs or to the tiled form's register tiles."""
    convs = [op for op in build_cases(GEMM_CASES, t).walk() if isinstance(op, ConvOp)]
    assert [op.gemm_form() for op in convs] == [True] * len(GEMM_CASES)
    assert [_is_tiled(op, FORMS[form]) for op in convs] == [form == "tiled" and not op.pointwise for op in convs]
    assert not any(op.gemm_form() for op in build_cases(CASES, t).walk() if isinstance(op, ConvOp))
    run_cases(GEMM_CASES, t, FORMS[form])


@pytest.mark.parametrize("form", FORMS)
def test_threads_split_units_alike(form: str) -> None:
    """Two threads split the direct kernel's (n, m) units and the GEMM and tiled forms'
    (n, group, block, channel chunk) units. Every result is as on one thread."""
    names = ("1d_groups", "2d_plain", "gemm_2d", "gemm_2d_blocks", "gemm_2d_channel_chunks", "gemm_2d_stem")
    cases = tuple(c for c in CASES + GEMM_CASES if c.name in names)
    inputs = [_inputs(case, "f32", 7 + k) for k, case in enumerate(cases)]
    flat = [v for group in inputs for v in group]
    one = compile_cases(cases, "f32", threads=1, tuning=FORMS[form])(*flat)
    two = compile_cases(cases, "f32", threads=2, tuning=FORMS[form])(*flat)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


@pytest.mark.target_independent
def test_the_tiled_form_reads_inside_its_block() -> None:
    """The farthest read of any position of any tap (the last channel's, a dropped
    position's) stays inside the input block, for every block height: a read past it
    would only feed dropped positions, so no numeric test sees it."""
    for op in build_cases(GEMM_CASES, "f32").walk():
        if not isinstance(op, ConvOp) or op.pointwise:
            continue
        conv = _Conv.of(op)
        for tuning in (Tuning.for_target(target(name)) for name in ("x86-64-v3", "x86-64-v4")):
            t = _Tiled.of(conv, tuning)
            for rows in range(1, conv.spatial_out[0] + 1):
                taps = itertools.product(*(range(k) for k in conv.kernel))
                farthest = max(sum(t.tap_offset(axis, rows, k) for axis, k in enumerate(tap)) for tap in taps)
                last = (conv.per_group - 1) * t.plane(rows) + t.positions(rows) - 1 + farthest
                assert last < t.input_elements(rows), (conv.kernel, op.geometry, rows)


@pytest.mark.parametrize(
    ("shape", "weight", "strides", "tiled"),
    [
        ((1, 64, 56, 56), (64, 64, 3, 3), (1, 1), True),  # ResNet's first stage: 58 positions per 56 outputs
        ((1, 3, 224, 224), (64, 3, 7, 7), (2, 2), True),  # its stem: phase planes of 115 places per 112 outputs
        ((1, 512, 7, 7), (512, 512, 3, 3), (1, 1), True),  # its last stage: 64 positions per 49 outputs
        ((1, 80, 3000), (384, 80, 3), (1,), True),  # Whisper's first conv1d
        ((1, 64, 2, 2), (64, 64, 3, 3), (1, 1), False),  # a 16-position vector for 4 outputs: im2col
        ((1, 64, 8, 8), (64, 64, 1, 1), (1, 1), False),  # pointwise: the input is the GEMM's rhs already
    ],
)
@pytest.mark.target_independent
def test_the_tiled_form_runs_where_few_positions_are_dropped(
    shape: tuple[int, ...], weight: tuple[int, ...], strides: tuple[int, ...], tiled: bool
) -> None:
    """With AVX-512's vectors (16 positions), the default tuning tiles the GEMM-form convs
    that compute fewer than twice their outputs and are not pointwise."""
    b = Builder()
    pads = [(k - 1) // 2 for k in weight[2:]]
    b.output(b.conv(b.input(shape), b.input(weight), None, list(strides), None, pads, pads))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    ctx = KernelContext("conv", Tuning.for_target(target("x86-64-v4")))
    assert (_tiled_form(op, _Conv.of(op), ctx) is not None) == tiled


@pytest.mark.parametrize(
    ("weight", "strides", "dilations", "planes"),
    [
        ((64, 64, 1, 1), (2, 2), (1, 1), 1),  # ResNet's 1x1 / 2 downsampling: the even rows' even columns
        ((64, 64, 3, 3), (2, 2), (1, 1), 4),  # its 3x3 / 2: every phase
        ((64, 64, 3, 3), (2, 2), (2, 2), 1),  # dilation 2, stride 2: every tap reads phase 0
        ((64, 64, 3, 1), (3, 2), (1, 1), 3),  # three phases along the rows, one along the columns
    ],
)
@pytest.mark.target_independent
def test_the_tiled_block_holds_the_phase_planes_its_taps_read(
    weight: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...], planes: int
) -> None:
    """A strided conv's input block is split into phase planes; only those some tap reads
    are copied (the rest would be a 4x larger copy for a 1x1 / 2 conv)."""
    b = Builder()
    b.output(b.conv(b.input((1, 64, 28, 28)), b.input(weight), None, list(strides), list(dilations)))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    assert _Tiled.of(_Conv.of(op), Tuning.for_target(target("x86-64-v4"))).phases == planes


EPILOGUE_CASES = (
    "gemm_2d",
    "gemm_2d_channel_chunks",
    "gemm_1d_pointwise",
    "gemm_1d_tail_channels",
    "2d_plain",
    "1d_same_no_bias",
    "3d",
)


@pytest.mark.parametrize(
    ("t", "form"), [(t, form) for t in TYPES for form in FORMS if form == "tiled" or t in GEMM_TYPES]
)
def test_epilogues_fuse_and_match_torch(t: str, form: str) -> None:
    """relu(conv(x, w) + bias + residual) becomes one `rlx.conv_region` per conv, in
    the GEMM and tiled forms (which finish each block after its GEMM or tiles) and the
    direct form (each plane); f16/bf16 convs fuse only without a bias. The values are
    the unfused graph's: the conv's bound, its rounding (which the residual may
    cancel: u·|conv|), and the add's rounding."""
    cases = [c for c in CASES + GEMM_CASES if c.name in EPILOGUE_CASES and (COMPUTED_IN[t] == t or not c.bias)]
    b = Builder("epilogues")
    inputs = []
    for seed, case in enumerate(cases):
        given = _inputs(case, t, seed)
        shape = reference(*given, *([None] * (3 - len(given))), case)[0].shape
        given.append(np.random.default_rng(seed).standard_normal(shape).astype(TYPES[t]))
        x, w = b.input(case.input, t), b.input(case.weight, t)
        bias = b.input((case.weight[0],), t) if case.bias else None
        y = b.conv(x, w, bias, case.strides, case.dilations, case.pad_before, case.pad_after, case.groups)
        b.output(b.relu(b.add(y, b.input(shape, t))))
        inputs.append(given)
    exe = rlx.compile(b.module(), tuning=FORMS[form])
    assert exe.planned_ir.count("rlx.conv_region") == len(cases)
    assert "rlx.conv " not in exe.planned_ir
    for case, got, given in zip(cases, exe(*(v for g in inputs for v in g)), inputs):
        want, scale = reference(given[0], given[1], given[2] if case.bias else None, case)
        terms = case.weight[1] * int(np.prod(case.weight[2:]))
        u = UNIT_ROUNDOFF[t]
        atol = 2 * terms * UNIT_ROUNDOFF[COMPUTED_IN[t]] * scale + u * np.abs(want) + 2 * HALF_SUBNORMAL[t]
        residual = given[-1].astype(np.float64)
        assert_close(got, np.maximum(want + residual, 0), rtol=u, atol=atol, what=f"{case.name} {t}")


def test_a_residual_read_across_the_spatial_axes_stays_a_transpose() -> None:
    """conv1d(x) + transpose(r) where r is [batch, length, channels] (SqueezeBERT's
    layout): the transpose cannot become the epilogue's index map (the region
    walks planes in order), so it stays a copy; this once failed to verify."""
    b = Builder("squeezebert_residual")
    x, w, r = b.input((2, 8, 12)), b.input((8, 8, 1)), b.input((2, 12, 8))
    b.output(b.add(b.conv(x, w, None, [1], [1], [0], [0], 1), b.transpose(r, [0, 2, 1])))
    exe = rlx.compile(b.module())
    assert "rlx.conv_region" in exe.planned_ir
    given = [
        np.random.default_rng(k).standard_normal(s).astype(np.float32)
        for k, s in enumerate([(2, 8, 12), (8, 8, 1), (2, 12, 8)])
    ]
    want = np.einsum("oc,bcl->bol", given[1][:, :, 0], given[0]) + given[2].transpose(0, 2, 1)
    np.testing.assert_allclose(exe(*given)[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("shape", "weight", "cores", "split"),
    [
        # ResNet's last 3x3 layer at batch 1: 7 output rows were 2 units (6 + 1 rows)
        ((1, 512, 7, 7), (512, 512, 3, 3), 2, _GemmSplit(block_rows=4, blocks=2, chunk=128, chunks=4)),
        # its first stage at batch 8: 8 images x 10 L2-sized blocks already balance
        ((8, 64, 56, 56), (64, 64, 3, 3), 2, _GemmSplit(block_rows=6, blocks=10, chunk=64, chunks=1)),
        # Whisper's first conv1d: 3000 columns in 4 L2-sized blocks, halved to 8
        ((1, 80, 3000), (384, 80, 3), 2, _GemmSplit(block_rows=375, blocks=8, chunk=384, chunks=1)),
        # 28 output rows: 8 blocks as cut are 7 of 4 rows (4 + 3 units for 2 threads), so 14 of 2
        ((1, 16, 28, 28), (64, 16, 3, 3), 2, _GemmSplit(block_rows=2, blocks=14, chunk=64, chunks=1)),
    ],
)
@pytest.mark.target_independent
def test_the_gemm_form_cuts_enough_equal_units(
    shape: tuple[int, ...], weight: tuple[int, ...], cores: int, split: _GemmSplit
) -> None:
    """At least `conv_min_units` units (4 per core), by halving a unit's larger GEMM side."""
    b = Builder()
    pads = [1] * (len(shape) - 2) if weight[-1] == 3 else None
    b.output(b.conv(b.input(shape), b.input(weight), pad_before=pads, pad_after=pads))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    tuning = Tuning.for_target(target("x86-64-v3")).replace({"conv_im2col_block_bytes": 768 << 10})
    ctx = KernelContext("conv", tuning.replace({"conv_min_units": 4 * cores, "cores": cores}))
    assert _gemm_split(op, _Conv.of(op), ctx, op.im2col_row_bytes()) == split


@pytest.mark.parametrize(
    ("shape", "weight", "stride", "split"),
    [
        # ResNet's last stage at batch 1: one 7x7 plane of 64 positions (one tile) per block,
        # 512 channels in 8 chunks; it was 7 blocks of one row, a vector of 7 real positions
        ((1, 512, 7, 7), (512, 512, 3, 3), 1, _GemmSplit(block_rows=7, blocks=1, chunk=64, chunks=8)),
        ((1, 256, 14, 14), (512, 256, 3, 3), 2, _GemmSplit(block_rows=7, blocks=1, chunk=64, chunks=8)),
        # its first stage: L2-sized blocks of 6 rows (348 positions) already hold tiles
        ((8, 64, 56, 56), (64, 64, 3, 3), 1, _GemmSplit(block_rows=6, blocks=10, chunk=64, chunks=1)),
        # at batch 1, 10 such blocks split 30 : 26 rows between 2 cores; 14 of 4 rows split evenly
        ((1, 64, 56, 56), (64, 64, 3, 3), 1, _GemmSplit(block_rows=4, blocks=14, chunk=64, chunks=1)),
        # 28 rows: 10 blocks of 3 (15 : 13) became 14 of 2; 14 rows in 2 chunks: 7 blocks of 2
        ((1, 128, 28, 28), (128, 128, 3, 3), 1, _GemmSplit(block_rows=2, blocks=14, chunk=128, chunks=1)),
        ((1, 256, 14, 14), (256, 256, 3, 3), 1, _GemmSplit(block_rows=2, blocks=7, chunk=128, chunks=2)),
        # Whisper's first conv1d: blocks of whole tiles (87 positions fit: one tile and a half)
        ((1, 80, 3000), (384, 80, 3), 1, _GemmSplit(block_rows=64, blocks=47, chunk=384, chunks=1)),
    ],
)
@pytest.mark.target_independent
def test_the_tiled_form_keeps_a_tile_of_positions_per_block(
    shape: tuple[int, ...], weight: tuple[int, ...], stride: int, split: _GemmSplit
) -> None:
    """AVX-512's tiles (4 vectors of 16 positions), 1 MiB of L2 and 2 cores."""
    b = Builder()
    rank = len(shape) - 2
    b.output(b.conv(b.input(shape), b.input(weight), None, [stride] * rank, None, [1] * rank, [1] * rank))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    tuning = Tuning.for_target(dataclasses.replace(target("x86-64-v4"), l2_bytes=1 << 20, cores=2))
    ctx, conv = KernelContext("conv", tuning), _Conv.of(op)
    tiled = _tiled_form(op, conv, ctx)
    assert tiled is not None and tiled.tile == 64
    assert _tiled_split(op, conv, tiled, ctx) == split


@pytest.mark.parametrize(
    ("l2_kib", "block_bytes", "shape", "weight", "stride", "split"),
    [
        # a quarter of 512 KiB cut ResNet's last stage at batch 1 in 3 + 3 + 1 rows (shares 18 : 10)
        (512, 256, (1, 512, 7, 7), (512, 512, 3, 3), 1, _GemmSplit(block_rows=4, blocks=2, chunk=128, chunks=4)),
        # ... and its 3x3 / 2 convs at batch 8 in blocks of 1 output row, copying 3 input rows each
        (512, 256, (8, 64, 56, 56), (128, 64, 3, 3), 2, _GemmSplit(block_rows=4, blocks=7, chunk=128, chunks=1)),
        # a quarter of 1 MiB and of 2 MiB already is as large
        (1024, 256, (8, 64, 56, 56), (128, 64, 3, 3), 2, _GemmSplit(block_rows=4, blocks=7, chunk=128, chunks=1)),
        (2048, 512, (8, 64, 56, 56), (128, 64, 3, 3), 2, _GemmSplit(block_rows=10, blocks=3, chunk=128, chunks=1)),
    ],
)
@pytest.mark.target_independent
def test_a_small_l2_still_gets_tiled_blocks_of_several_rows(
    l2_kib: int, block_bytes: int, shape: tuple[int, ...], weight: tuple[int, ...], stride: int, split: _GemmSplit
) -> None:
    """AVX2's tiles (3 vectors of 8 positions), 2 cores: blocks of a quarter of L2, but up
    to `CONV_TILED_BLOCK_FLOOR` where that is half of it or less."""
    b = Builder()
    b.output(b.conv(b.input(shape), b.input(weight), None, [stride] * 2, None, [1] * 2, [1] * 2))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    tuning = Tuning.for_target(dataclasses.replace(target("x86-64-v3"), l2_bytes=l2_kib << 10, cores=2))
    assert tuning.conv_tiled_block_bytes == block_bytes << 10
    ctx, conv = KernelContext("conv", tuning), _Conv.of(op)
    tiled = _tiled_form(op, conv, ctx)
    assert tiled is not None and tiled.tile == 24
    assert _tiled_split(op, conv, tiled, ctx) == split


@pytest.mark.parametrize("threads", [1, 2])
def test_a_small_plane_runs_whole_in_channel_chunks(threads: int) -> None:
    """An L2 budget too small for one output row beside all the channels' sums (as
    ResNet's 7x7 layers at batch 1): the tiled form takes the whole plane per block,
    its channels in chunks, and matches torch."""
    case = Case("small_plane", (1, 128, 7, 7), (128, 128, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    budgets = {"conv_tiled_block_bytes": 16 << 10, "conv_im2col_block_bytes": 64 << 10, "conv_min_units": 8}
    tuning = {**FORMS["tiled"], **budgets}
    (op,) = (op for op in build_cases((case,), "f32").walk() if isinstance(op, ConvOp))
    ctx, conv = KernelContext("conv", Tuning.for_target(target()).replace(tuning)), _Conv.of(op)
    tiled = _tiled_form(op, conv, ctx)
    assert tiled is not None
    split = _tiled_split(op, conv, tiled, ctx)
    assert split.block_rows == min(7, -(-tiled.tile // tiled.row)) and split.chunks > 1, split
    inputs = _inputs(case, "f32", 5)
    (got,) = compile_cases((case,), "f32", threads=threads, tuning=tuning)(*inputs)
    check(case, got, inputs, "f32")


def test_f16_sums_are_computed_in_f32() -> None:
    """Many equal terms: 2048 · 1.0 + 1.0 · ... is exact in f32 but stalls in f16 at 2048."""
    case = Case("long_sum", (1, 4096, 1), (1, 4096, 1), (1,), (1,), (0,), (0,), bias=False)
    x = np.ones(case.input, np.float16)
    w = np.full(case.weight, 0.5, np.float16)
    (got,) = compile_cases((case,), "f16")(x, w)
    assert float(got.reshape(())) == 2048.0


@pytest.mark.target_independent
def test_builder_rejects_bad_geometry() -> None:
    b = Builder()
    x, w = b.input((1, 4, 8)), b.input((2, 3, 3))
    with pytest.raises(ArgumentError, match="weight has 3 input channels per group, expected 4"):
        b.conv(x, w)
    with pytest.raises(ArgumentError, match="strides must be a list of integers"):
        b.conv(x, b.input((2, 4, 3)), strides=2)  # type: ignore[arg-type]


@pytest.mark.target_independent
def test_verifier_names_the_rule() -> None:
    text = """
    func.func @f(%x: tensor<1x4x8xf32>, %w: tensor<2x4x3xf32>) -> tensor<1x2x5xf32> {
      %y = rlx.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_before = array<i64: 0>,
                            pad_after = array<i64: 0>} : (tensor<1x4x8xf32>, tensor<2x4x3xf32>) -> tensor<1x2x5xf32>
      func.return %y : tensor<1x2x5xf32>
    }
    """
    with pytest.raises(
        VerificationError, match=r"result shape \[1, 2, 5\] does not match the expected shape \[1, 2, 6\]"
    ):
        rlx.compile(text)


# (name, input shape, kernel, strides, dilations, pad_before, pad_after)
POOLS = (
    ("1d", (2, 3, 9), (3,), (2,), (1,), (1,), (1,)),
    ("1d_dilated_uneven", (1, 2, 10), (2,), (3,), (2,), (0,), (2,)),
    ("2d", (2, 3, 8, 7), (3, 2), (2, 1), (1, 2), (1, 0), (1, 1)),
    ("2d_resnet", (1, 4, 9, 9), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1)),
    ("2d_wide_rows", (1, 3, 11, 70), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1)),  # vectors of interior outputs
    ("2d_no_interior", (1, 2, 5, 4), (2, 3), (1, 1), (1, 2), (0, 1), (0, 1)),  # no output reads all its taps
    ("1d_window_in_padding", (1, 2, 4), (2,), (1,), (1,), (2,), (0,)),  # the first window is all padding
    ("1d_taps_straddle_input", (1, 2, 2), (2,), (1,), (3,), (1,), (1,)),  # its two taps miss the input
    ("3d", (1, 2, 4, 5, 3), (2, 2, 2), (1, 2, 1), (1, 1, 1), (1, 0, 1), (0, 1, 0)),
)


def _torch_max_pool(x: np.ndarray, kernel, strides, dilations, pad_before, pad_after) -> np.ndarray:
    pool = (torch.nn.functional.max_pool1d, torch.nn.functional.max_pool2d, torch.nn.functional.max_pool3d)
    pads = [p for before, after in zip(reversed(pad_before), reversed(pad_after)) for p in (before, after)]
    padded = torch.nn.functional.pad(torch.from_numpy(x.astype(np.float64)), pads, value=-np.inf)
    return pool[len(kernel) - 1](padded, kernel, strides, 0, dilations).numpy()


@pytest.mark.parametrize("t", TYPES)
def test_max_pool_matches_torch_exactly(t: str) -> None:
    """A maximum is exact: every type equals torch's float64 result rounded back, NaN
    propagates from its window (as torch and np.maximum), and pads are never chosen
    (a window of negative values next to the padding keeps its negative maximum)."""
    b = Builder("pools")
    rng = np.random.default_rng(11)
    inputs = []
    for _, shape, *geometry in POOLS:
        b.output(b.max_pool(b.input(shape, t), *geometry))
        x = (rng.standard_normal(shape) - 3.0).astype(TYPES[t])
        x.flat[rng.integers(x.size, size=3)] = np.nan
        inputs.append(x)
    results = rlx.compile(b.module())(*inputs)
    for (name, _, *geometry), x, got in zip(POOLS, inputs, results):
        want = _torch_max_pool(x, *geometry).astype(TYPES[t])
        assert got.dtype == TYPES[t]
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {t}")


@pytest.mark.parametrize("t", ["i8", "ui8", "i64"])
def test_max_pool_of_integers_never_chooses_the_padding(t: str) -> None:
    """Integer pads are the type's minimum: a window of minima and padding gives the minimum."""
    dtype = np.dtype({"i8": np.int8, "ui8": np.uint8, "i64": np.int64}[t])
    info = np.iinfo(dtype)
    x = np.random.default_rng(3).integers(info.min, info.max, (2, 3, 6, 5), dtype=dtype, endpoint=True)
    x[0, 0, :2, :2] = info.min
    b = Builder()
    b.output(b.max_pool(b.input(x.shape, t), [2, 2], [2, 2], [1, 1], [1, 1], [0, 1]))
    (got,) = rlx.compile(b.module())(x)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 0), (1, 1)), constant_values=info.min)
    want = padded[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(got, want)


@pytest.mark.target_independent
def test_builder_max_pool_rejects_a_window_longer_than_the_input() -> None:
    b = Builder()
    with pytest.raises(ArgumentError, match="the dilated kernel spans 5, more than the padded input's 4"):
        b.max_pool(b.input((1, 2, 4)), [3], dilations=[2])


ADJOINT_CASES = (
    Case("1d_groups_strided_dilated", (2, 4, 9), (6, 2, 3), (2,), (2,), (1,), (3,), groups=2),
    Case("1d_pads_beyond_the_kernel", (2, 3, 10), (4, 3, 2), (3,), (1,), (3,), (0,), bias=False),
    Case("2d_depthwise", (1, 4, 7, 6), (4, 1, 3, 3), (2, 1), (1, 2), (1, 0), (0, 2), groups=4),
    Case("2d_gemm_form", (2, 4, 9, 7), (16, 4, 3, 3), (2, 1), (1, 1), (1, 1), (1, 0)),
)


def test_the_adjoint_matches_torch_autograd() -> None:
    """rlx.vjp of convs (input, weight and bias gradients) against torch.autograd in
    float64: strides and dilations (the transposed conv's dilated cotangent), pads
    wider than the kernel reaches (cropped), groups, depthwise and a GEMM-form conv."""
    rng = np.random.default_rng(21)
    inputs = [_inputs(case, "f64", 30 + k) for k, case in enumerate(ADJOINT_CASES)]
    leaves = [[torch.tensor(v, requires_grad=True) for v in given] for given in inputs]
    cotangents = []
    for case, (x, w, *bias) in zip(ADJOINT_CASES, leaves):
        y = _torch_conv(x, w, bias[0] if bias else None, case)
        cotangents.append(rng.standard_normal(tuple(y.shape)))
        y.backward(torch.from_numpy(cotangents[-1]))
    results = rlx.compile(rlx.vjp(build_cases(ADJOINT_CASES, "f64")))(*(v for g in inputs for v in g), *cotangents)
    want = [leaf.grad.numpy() for group in leaves for leaf in group]  # the gradients follow the arguments
    grads = results[len(ADJOINT_CASES) :]
    assert len(grads) == len(want)
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_the_profile_counts_conv_and_pool_flops() -> None:
    """A conv does 2·(C/groups)·taps FLOPs per output (16 · 4·3·3 · 2 · 2·16·8 here); a max pool one per tap."""
    b = Builder()
    y = b.conv(b.input((2, 8, 16, 16)), b.input((16, 4, 3, 3)), None, [1, 2], None, [1, 1], [1, 1], groups=2)
    b.output(b.max_pool(y, [2, 2], [2, 2]))
    exe = rlx.compile(b.module())
    rows = exe.profile(np.ones((2, 8, 16, 16), np.float32), np.ones((16, 4, 3, 3), np.float32), repeat=1).rows
    flops = {row.op.name: row.op.flops for row in rows}
    assert flops == {"rlx.conv": 2 * 4 * 9 * (2 * 16 * 16 * 8), "rlx.max_pool": 4 * (2 * 16 * 8 * 4)}


LANE_FORM = FORMS["tiled"]
"""The tiled form, and its lanes wherever they compute fewer positions (the default)."""


@pytest.mark.parametrize(("t", "threads"), [("f32", 2), ("f64", 1)])
def test_packed_weights_run_the_lane_form_and_match_torch(t: str, threads: int) -> None:
    """Constant weights of tiled convs whose channels per group fill whole vectors are
    packed (`pack-conv-weights`) and run the lane form, a bias added first or an
    epilogue after; each constant is packed once for the two convs that read it. Each
    type runs on one thread count (how threads split the tiled form's units is
    `test_threads_split_units_alike`'s)."""
    tuning = Tuning.for_target(target()).replace(LANE_FORM)
    lanes = tuning.vector_bytes // np.dtype(TYPES[t]).itemsize
    cases = [c for c in GEMM_CASES if not all(k == 1 for k in c.weight[2:])]
    module, inputs = _constant_weight_convs("packed", cases, t)
    packed = sum(case.weight[0] // case.groups % lanes == 0 for case in cases)
    exe = rlx.compile(module, threads=threads, tuning=LANE_FORM)
    assert exe.planned_ir.count(f"weight_lanes = {lanes}") == 2 * packed > 0
    assert len(re.findall(rf"dense_resource<\w*_lanes{lanes}\w*>", exe.planned_ir)) == packed
    _check_plain_and_fused(exe, cases, inputs, t)


def _constant_weight_convs(name: str, cases: list[Case], t: str) -> tuple[ModuleOp, list[tuple[np.ndarray, ...]]]:
    """Each case's conv with its weight (and bias) constant, twice: plain, and with a
    residual add and a ReLU after it (a conv region); per case its arguments x and
    residual, after its weight and bias: (x, w, bias?, residual)."""
    b = Builder(name)
    inputs = []
    for seed, case in enumerate(cases):
        x_np, w_np, *bias_np = _inputs(case, t, seed)
        want = reference(x_np, w_np, bias_np[0] if bias_np else None, case)[0]
        residual = np.random.default_rng(seed).standard_normal(want.shape).astype(TYPES[t])
        x, w = b.input(case.input, t), b.constant(w_np)
        bias = b.constant(bias_np[0]) if bias_np else None
        geometry = (case.strides, case.dilations, case.pad_before, case.pad_after, case.groups)
        b.output(b.conv(x, w, bias, *geometry))
        b.output(b.relu(b.add(b.conv(x, w, bias, *geometry), b.input(want.shape, t))))
        inputs.append((x_np, w_np, *bias_np, residual))
    return b.module(), inputs


def _check_plain_and_fused(
    exe: rlx.Executable, cases: list[Case], inputs: list[tuple[np.ndarray, ...]], t: str
) -> None:
    """The results of `_constant_weight_convs` against torch: the plain conv within the
    direct sum's bound, the fused one within it plus the residual add's rounding."""
    results = exe(*(v for given in inputs for v in (given[0], given[-1])))
    for case, given, plain, fused in zip(cases, inputs, results[::2], results[1::2]):
        check(case, plain, list(given[:-1]), t)
        want, scale = reference(given[0], given[1], given[2] if case.bias else None, case)
        u, terms = UNIT_ROUNDOFF[t], case.weight[1] * int(np.prod(case.weight[2:]))
        atol = 2 * terms * u * scale + u * np.abs(want)
        assert_close(fused, np.maximum(want + given[-1], 0), rtol=u, atol=atol, what=f"{case.name} fused")


@pytest.mark.target_independent
def test_weights_given_at_run_time_stay_unpacked() -> None:
    """Only a constant weight can be packed once; an input runs the tiled form's positions."""
    case = next(c for c in GEMM_CASES if c.name == "gemm_2d")
    exe = compile_cases((case,), "f32", tuning=LANE_FORM)
    assert "weight_lanes" not in exe.planned_ir
    inputs = _inputs(case, "f32", 0)
    (got,) = exe(*inputs)
    check(case, got, inputs, "f32")


@pytest.mark.parametrize(
    ("shape", "weight", "stride", "pad", "lanes"),
    [
        # ResNet's 3x3 layers at batch 1 (AVX-512, 1 MiB L2, 2 cores): each computes fewer
        # positions in lanes: 14x14 planes computed 16 places a row, 7x7 ones 64 for 49
        ((1, 64, 56, 56), (64, 64, 3, 3), 1, 1, 16),
        ((1, 128, 28, 28), (128, 128, 3, 3), 1, 1, 16),
        ((1, 256, 14, 14), (256, 256, 3, 3), 1, 1, 16),
        ((1, 512, 7, 7), (512, 512, 3, 3), 1, 1, 16),
        ((1, 64, 56, 56), (128, 64, 3, 3), 2, 1, 16),
        # the stem: 115 places a row of its phase planes for 112 outputs
        ((1, 3, 224, 224), (64, 3, 7, 7), 2, 3, 16),
        # a 1-d conv in blocks of whole tiles computes no position it drops
        ((1, 80, 3000), (384, 80, 3), 1, 1, 0),
        # 24 channels fill no whole vectors of 16
        ((1, 64, 14, 14), (24, 64, 3, 3), 1, 1, 0),
    ],
)
@pytest.mark.target_independent
def test_the_lane_form_runs_where_it_computes_less(
    shape: tuple[int, ...], weight: tuple[int, ...], stride: int, pad: int, lanes: int
) -> None:
    b = Builder()
    rank = len(shape) - 2
    b.output(b.conv(b.input(shape), b.input(weight), None, [stride] * rank, None, [pad] * rank, [pad] * rank))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    tuning = Tuning.for_target(dataclasses.replace(target("x86-64-v4"), l2_bytes=1 << 20, cores=2))
    assert packed_lanes(op, tuning) == lanes
    assert packed_lanes(op, tuning.replace({"conv_lane_readback_steps": NEVER})) == 0


WINOGRAD = {"conv_winograd_min_channels": 1, "conv_winograd_min_tiles": 0}
"""Every conv the Winograd form can run runs it (the tests' planes and channels are small)."""
WINOGRAD_CASES = (
    Case("winograd_even_plane", (2, 16, 8, 10), (16, 16, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    # odd rows and columns: the last row and column of tiles keep one output of two
    Case("winograd_odd_plane", (1, 8, 7, 9), (32, 8, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), bias=False),
    Case("winograd_one_row", (1, 8, 1, 5), (16, 8, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
    # pads of 0 to 2 per side: 8x6 outputs from 9x6 inputs
    Case("winograd_asymmetric_pads", (2, 8, 9, 6), (16, 8, 3, 3), (1, 1), (1, 1), (0, 2), (1, 0)),
    # 48 channels of one image: channel chunks of 32 and 16, blocks of rows down the plane
    Case("winograd_chunks_and_blocks", (1, 8, 40, 3), (48, 8, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1)),
)


@pytest.mark.parametrize(("t", "threads"), [("f32", 2), ("f64", 1)])
def test_winograd_weights_run_the_winograd_form_and_match_torch(t: str, threads: int) -> None:
    """Constant weights of 3x3 stride-1 convs are transformed once into the 16 points of
    F(2x2, 3x3) (`pack-conv-weights`), shared by the two convs that read them, a bias
    added or an epilogue (residual and ReLU) applied on the way out; the results keep
    the direct sum's bound (the transforms add a few roundings per term). Each type
    runs on one thread count, as the packed lane form's test does."""
    lanes = Tuning.for_target(target()).vector_bytes // np.dtype(TYPES[t]).itemsize
    module, inputs = _constant_weight_convs("winograd", list(WINOGRAD_CASES), t)
    exe = rlx.compile(module, threads=threads, tuning=WINOGRAD)
    assert exe.planned_ir.count(f"weight_lanes = {lanes} : i64, winograd") == 2 * len(WINOGRAD_CASES)
    assert len(re.findall(rf"dense_resource<\w*_winograd{lanes}\w*>", exe.planned_ir)) == len(WINOGRAD_CASES)
    _check_plain_and_fused(exe, list(WINOGRAD_CASES), inputs, t)


@pytest.mark.target_independent
def test_winograd_points_compose_to_the_correlation() -> None:
    """Aᵀ·((G·g·Gᵀ) ⊙ (Bᵀ·d·B))·A is the 2x2 correlation of a 4x4 input d with a 3x3 kernel
    g (the matrices the pass and the kernel split between them agree), and
    `winograd_weight` stores (G·w[j·L + l, c]·Gᵀ)[a, b] at [4a + b, j, c, l]."""
    rng = np.random.default_rng(5)
    g_, bt, at = (np.array(m, np.float64) for m in (WINOGRAD_G, WINOGRAD_BT, WINOGRAD_AT))
    d, g = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
    got = at @ ((g_ @ g @ g_.T) * (bt @ d @ bt.T)) @ at.T
    want = np.array([[np.sum(d[i : i + 3, j : j + 3] * g) for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    w = rng.standard_normal((16, 3, 3, 3))
    stored = winograd_weight(w, 8)
    assert stored.shape == (16, 2, 3, 8)
    block, channel, lane = 1, 2, 5
    points = (g_ @ w[8 * block + lane, channel] @ g_.T).reshape(16)
    np.testing.assert_allclose(stored[:, block, channel, lane], points, rtol=1e-12)


@pytest.mark.parametrize(
    ("shape", "weight", "stride", "dilation", "groups", "t", "lanes"),
    [
        # ResNet's 3x3 layers at batch 1 (AVX-512, 1 MiB L2, 2 cores): 784, 196 and 49 tiles
        ((1, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, "f32", 16),
        ((1, 128, 28, 28), (128, 128, 3, 3), 1, 1, 1, "f32", 16),
        ((1, 256, 14, 14), (256, 256, 3, 3), 1, 1, 1, "f64", 8),
        # its 7x7 planes are 16 tiles; its downsampling convs are strided
        ((1, 512, 7, 7), (512, 512, 3, 3), 1, 1, 1, "f32", 0),
        ((1, 64, 56, 56), (128, 64, 3, 3), 2, 1, 1, "f32", 0),
        # dilated, grouped, too few channels (in, out, or not whole vectors of them), 5x5, f16
        ((1, 64, 28, 28), (64, 64, 3, 3), 1, 2, 1, "f32", 0),
        ((1, 64, 28, 28), (64, 32, 3, 3), 1, 1, 2, "f32", 0),
        ((1, 16, 28, 28), (64, 16, 3, 3), 1, 1, 1, "f32", 0),
        ((1, 64, 28, 28), (24, 64, 3, 3), 1, 1, 1, "f32", 0),
        ((1, 64, 28, 28), (40, 64, 3, 3), 1, 1, 1, "f32", 0),
        ((1, 64, 28, 28), (64, 64, 5, 5), 1, 1, 1, "f32", 0),
        ((1, 64, 28, 28), (64, 64, 3, 3), 1, 1, 1, "f16", 0),
    ],
)
@pytest.mark.target_independent
def test_the_winograd_form_runs_where_it_pays(
    shape: tuple[int, ...], weight: tuple[int, ...], stride: int, dilation: int, groups: int, t: str, lanes: int
) -> None:
    b = Builder()
    pad = dilation * (weight[-1] - 1) // 2
    x, w = b.input(shape, t), b.input(weight, t)
    b.output(b.conv(x, w, None, [stride] * 2, [dilation] * 2, [pad] * 2, [pad] * 2, groups=groups))
    (op,) = (op for op in b.module().walk() if isinstance(op, ConvOp))
    tuning = Tuning.for_target(dataclasses.replace(target("x86-64-v4"), l2_bytes=1 << 20, cores=2))
    assert winograd_form(op, tuning) == lanes
    assert winograd_form(op, tuning.replace({"conv_winograd_min_channels": NEVER})) == 0
