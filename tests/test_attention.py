"""rlx.attention against torch.nn.functional.scaled_dot_product_attention in float64.

The reference runs on the inputs as the op sees them (rounded to the tested
type), widened to float64; GQA/MQA through torch's `enable_gqa`, causal
through its `is_causal` (top-left aligned, also for Sq != Sk). torch takes
no mask together with `is_causal`, so a causal case with a mask gives torch
the sum of the mask and the causal -inf mask. Tolerance, per element, with
u the unit roundoff of the type the kernel computes in (f32 for f16 and
bf16), u_out that of the stored type, S the largest |scale| · |q|·|k| of a
score and V the largest |v|:

    |got - ref| <= 16·u·(1 + S)·V + u_out·|ref|

(an error δ in the scores moves the softmax weights by about δ relative, so
the output by δ·V; the rest is the sums' rounding and the final rounding of
f16/bf16). Computing in f16 or bf16 instead of f32 misses it by orders of
magnitude.

Every dtype compiles one module holding its cases (a compile per case would
take most of the file's time); each case is checked on its own. Both forms
of the kernel run every case (`FORMS`): Q Kᵀ and P V through BLAS in tiles of
64 query rows by 128 keys, and through register tiles over a Kᵀ panel small
enough for 32-64 keys per tile. The `tiles` cases cross both boundaries with
odd sizes, `long` needs three key tiles and three query blocks.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from closeness import COMPUTED_IN, FLOAT_TYPES, UNIT_ROUNDOFF, assert_close
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.errors import ArgumentError, VerificationError

TYPES = FLOAT_TYPES


@dataclass(frozen=True)
class Case:
    """q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv], the mask's shape or None."""

    name: str
    query: tuple[int, int, int, int]
    kv_heads: int
    keys: int
    value_size: int
    mask: tuple[int, ...] | None = None
    causal: bool = False
    scale: float | None = None

    @property
    def key(self) -> tuple[int, ...]:
        b, _, _, d = self.query
        return (b, self.kv_heads, self.keys, d)

    @property
    def value(self) -> tuple[int, ...]:
        b, _, _, _ = self.query
        return (b, self.kv_heads, self.keys, self.value_size)

    @property
    def scale_value(self) -> float:
        return self.scale if self.scale is not None else 1 / math.sqrt(self.query[3])


CASES = (
    Case("plain", (2, 3, 5, 8), 3, 7, 8),
    Case("mask_2d", (2, 3, 5, 8), 3, 7, 8, mask=(5, 7)),
    Case("mask_4d", (2, 3, 5, 8), 3, 7, 8, mask=(2, 3, 5, 7)),
    Case("mask_batch_broadcast", (2, 3, 5, 8), 3, 7, 8, mask=(1, 3, 5, 7)),
    Case("mask_head_broadcast", (2, 3, 5, 8), 3, 7, 8, mask=(2, 1, 5, 7)),
    Case("mask_per_key", (2, 3, 5, 8), 3, 7, 8, mask=(2, 1, 1, 7)),
    Case("mask_per_query", (2, 3, 5, 8), 3, 7, 8, mask=(5, 1)),
    Case("causal_square", (1, 2, 9, 4), 2, 9, 4, causal=True),
    Case("causal_more_keys", (1, 2, 5, 4), 2, 9, 4, causal=True),
    Case("causal_more_queries", (1, 2, 9, 4), 2, 5, 4, causal=True),
    Case("causal_with_mask", (1, 2, 6, 4), 2, 6, 4, mask=(6, 6), causal=True),
    Case("gqa", (2, 4, 5, 8), 2, 6, 8),
    Case("mqa_causal_masked", (1, 4, 6, 8), 1, 6, 8, mask=(1, 4, 6, 6), causal=True),
    Case("value_size_differs", (1, 2, 4, 8), 2, 5, 3),
    Case("scale_given", (1, 1, 4, 8), 1, 5, 4, scale=-0.3),
    Case("tiles", (1, 2, 67, 5), 1, 131, 3, mask=(67, 131)),
    Case("tiles_causal", (1, 2, 67, 5), 1, 131, 3, causal=True),
    Case("long", (1, 1, 130, 4), 1, 300, 4, causal=True),
    Case("causal_four_blocks", (1, 1, 256, 4), 1, 256, 4, causal=True),  # run interleaved: 0, 3, 1, 2
    Case("decode_gqa", (2, 4, 1, 8), 2, 140, 8, mask=(2, 1, 1, 140)),
)
NARROW_CASES = tuple(c for c in CASES if c.name in ("mask_2d", "causal_more_keys", "mqa_causal_masked", "tiles"))
"""f16 and bf16 share the f32 path after widening: a few cases cover it."""
DTYPE_CASES = {"f16": NARROW_CASES, "bf16": NARROW_CASES, "f32": CASES, "f64": CASES}


BLOCK_Q, BLOCK_K = 64, 128
FORMS = {
    "blas": {"attention_tiled_panel_bytes": 0, "attention_block_q": BLOCK_Q, "attention_block_k": BLOCK_K},
    "tiled": {"attention_tiled_panel_bytes": 64 * 5 * 4, "attention_block_q": BLOCK_Q},
}
"""Tuning overrides of the kernel's two forms. The tiled form's keys per tile are the
most (a power of two) whose Kᵀ panel fits: 64 keys of f32 for the `tiles` cases'
head size 5, 32 of f64, 32 keys for head size 8."""


def test_the_tile_cases_cross_the_tile_boundaries() -> None:
    """The cases named for tiles need more than one query block and key tile."""
    tiles = next(c for c in CASES if c.name == "tiles")
    long = next(c for c in CASES if c.name == "long")
    assert BLOCK_Q < tiles.query[2] < 2 * BLOCK_Q and BLOCK_K < tiles.keys
    assert long.keys > 2 * BLOCK_K and long.query[2] > 2 * BLOCK_Q


def _causal_mask(queries: int, keys: int) -> torch.Tensor:
    """0 where key j <= query i, -inf above: torch's is_causal as an additive mask."""
    allowed = torch.ones(queries, keys, dtype=torch.bool).tril()
    return torch.zeros(queries, keys, dtype=torch.float64).masked_fill(~allowed, -math.inf)


def reference(arrays: list[np.ndarray], case: Case) -> tuple[np.ndarray, float, float]:
    """(the float64 result, S, V): the largest |scale| |q|·|k| and |v| (the error scales)."""
    q, k, v, *rest = (torch.from_numpy(np.asarray(a, np.float64)) for a in arrays)
    mask = rest[0] if rest else None
    causal = case.causal and mask is None
    if case.causal and mask is not None:
        mask = mask + _causal_mask(case.query[2], case.keys)
    want = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, is_causal=causal, scale=case.scale_value, enable_gqa=True
    ).numpy()
    group = case.query[1] // case.kv_heads
    spread = k.abs().repeat_interleave(group, dim=1)
    scores = (q.abs() @ spread.transpose(-1, -2)).numpy() * abs(case.scale_value)
    return want, float(scores.max(initial=0.0)), float(v.abs().numpy().max(initial=0.0))


def inputs(case: Case, t: str, seed: int) -> list[np.ndarray]:
    """Standard normal q, k, v; a mask of standard normal values and about 30% -inf."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in (case.query, case.key, case.value)]
    if case.mask is not None:
        arrays.append(np.where(rng.random(case.mask) < 0.3, -np.inf, rng.standard_normal(case.mask)))
    return [a.astype(TYPES[t]) for a in arrays]


def build(cases: tuple[Case, ...], t: str) -> ModuleOp:
    b = Builder("attention")
    for case in cases:
        q, k, v = (b.input(s, t) for s in (case.query, case.key, case.value))
        mask = b.input(case.mask, t) if case.mask is not None else None
        b.output(b.attention(q, k, v, mask, scale=case.scale, causal=case.causal))
    return b.module()


def check(got: np.ndarray, arrays: list[np.ndarray], case: Case, t: str) -> None:
    want, largest_score, largest_value = reference(arrays, case)
    atol = 16 * UNIT_ROUNDOFF[COMPUTED_IN[t]] * (1 + largest_score) * largest_value
    assert_close(got, want, rtol=UNIT_ROUNDOFF[t], atol=atol, what=f"{case.name} {t}")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("t", TYPES)
def test_matches_torch(t: str, form: str) -> None:
    cases = DTYPE_CASES[t]
    exe = rlx.compile(build(cases, t), threads=2, tuning=FORMS[form])
    arrays = [inputs(case, t, seed) for seed, case in enumerate(cases)]
    results = exe(*(a for group in arrays for a in group))
    for case, group, got in zip(cases, arrays, results):
        assert got.dtype == TYPES[t]
        check(got, group, case, t)


VECTOR_KEY_CASES = (
    Case("whole_vector_heads", (1, 2, 40, 32), 2, 45, 32, mask=(40, 45)),
    Case("whole_vector_heads_gqa_causal", (2, 4, 20, 16), 2, 37, 16, causal=True),
    Case("whole_vector_heads_64", (1, 2, 70, 64), 1, 150, 24),
)
"""Head sizes of whole vectors (f32 and f64, AVX2 and AVX-512): the tiled form packs
their keys in blocks of one vector's lanes, transposed in registers; key counts
with a rest, packed one at a time."""


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_keys_packed_in_whole_vectors_match_torch(t: str) -> None:
    exe = rlx.compile(build(VECTOR_KEY_CASES, t), threads=2)
    arrays = [inputs(case, t, seed) for seed, case in enumerate(VECTOR_KEY_CASES)]
    results = exe(*(a for group in arrays for a in group))
    for case, group, got in zip(VECTOR_KEY_CASES, arrays, results):
        check(got, group, case, t)


@pytest.mark.x86_64
@pytest.mark.target_independent
@pytest.mark.parametrize("name", ["x86-64-v3", "x86-64-v4"])
def test_keys_pack_without_gathers(name: str) -> None:
    """64 keys of head size 64 pack as transposed vector blocks: one key at a time,
    LLVM vectorized the loop over keys with a gather per head element."""
    case = Case("pack", (1, 2, 64, 64), 2, 64, 64)
    optimized = rlx.compile(build((case,), "f32"), target=name).optimized_llvm_ir
    assert "masked.gather" not in optimized


def test_a_row_with_every_key_masked_is_zero_as_in_torch() -> None:
    """torch gives 0 for such a row (checked here, in float64), not NaN; so does the kernel,
    also when the masked row meets keys in several tiles and the next row does not."""
    case = Case("masked_rows", (1, 2, 4, 4), 2, 200, 3, mask=(4, 200))
    arrays = inputs(case, "f64", 0)
    arrays[3][1] = -np.inf
    arrays[3][2, :150] = -np.inf  # only the second tile has keys for this row
    (got,) = rlx.compile(build((case,), "f64"))(*arrays)
    want, _, _ = reference(arrays, case)
    assert np.all(want[:, :, 1] == 0) and np.all(got[:, :, 1] == 0)
    assert_close(got, want, atol=1e-14)


def test_empty_keys_and_head_size() -> None:
    """No keys: every row is all-masked, so zeros (torch's answer). D = 0: every score is 0,
    so each row is the mean of the values."""
    no_keys = Case("no_keys", (1, 2, 3, 4), 1, 0, 5)
    no_head = Case("no_head", (1, 2, 3, 0), 2, 4, 5, scale=1.0)
    exe = rlx.compile(build((no_keys, no_head), "f64"))
    arrays = [inputs(no_keys, "f64", 0), inputs(no_head, "f64", 1)]
    got = exe(*arrays[0], *arrays[1])
    for case, group, out in zip((no_keys, no_head), arrays, got):
        assert_close(out, reference(group, case)[0], atol=1e-15, what=case.name)


def test_f16_is_computed_in_f32() -> None:
    """Scores of magnitude ~50 whose softmax weights hinge on differences below f16's
    resolution there (0.03): computing in f16 would be off by far more than the bound."""
    case = Case("sharp", (1, 1, 8, 64), 1, 16, 4, scale=1.0)
    rng = np.random.default_rng(3)
    q = np.full(case.query, 1.0) + rng.standard_normal(case.query) * 1e-2
    k = np.full(case.key, 0.8) + rng.standard_normal(case.key) * 1e-2
    v = rng.standard_normal(case.value)
    arrays = [a.astype(np.float16) for a in (q, k, v)]
    (got,) = rlx.compile(build((case,), "f16"))(*arrays)
    want, _, _ = reference(arrays, case)
    assert_close(got, want, rtol=2.0**-11, atol=1e-3)


def test_builder_rejects_bad_operands_with_located_errors() -> None:
    b = Builder()
    q, k, v = b.input((1, 8, 4, 16)), b.input((1, 3, 5, 16)), b.input((1, 3, 5, 16))
    with pytest.raises(ArgumentError, match=r"^Builder.attention: key/value head count 3 must divide"):
        b.attention(q, k, v)
    k2, v2 = b.input((1, 2, 5, 8)), b.input((1, 2, 5, 16))
    with pytest.raises(ArgumentError, match=r"^Builder.attention: key head size 8 must equal the query's 16"):
        b.attention(q, k2, v2)
    with pytest.raises(ArgumentError, match=r"^Builder.attention: query must have rank 4"):
        b.attention(b.input((4, 16)), k, v)
    k3, v3 = b.input((1, 2, 5, 16)), b.input((1, 2, 5, 16))
    with pytest.raises(ArgumentError, match=r"mask shape \[4, 6\] does not broadcast to the scores' \[1, 8, 4, 5\]"):
        b.attention(q, k3, v3, b.input((4, 6)))
    with pytest.raises(ArgumentError, match="scale must be a number, got 'big'"):
        b.attention(q, k3, v3, scale="big")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="scale must be finite, got nan"):
        b.attention(q, k3, v3, scale=math.nan)
    with pytest.raises(ArgumentError, match="causal must be a bool, got 1"):
        b.attention(q, k3, v3, causal=1)  # type: ignore[arg-type]


def test_mixed_element_types_fail_verification_naming_the_op() -> None:
    b = Builder()
    q, k, v = b.input((1, 2, 4, 8)), b.input((1, 2, 5, 8), "f64"), b.input((1, 2, 5, 8))
    b.output(b.attention(q, k, v))
    with pytest.raises(VerificationError, match="'rlx.attention' key element type f64 must equal f32"):
        b.module()


ADJOINT_CASES = (
    Case("mask_2d", (2, 3, 5, 8), 3, 7, 6, mask=(5, 7)),
    Case("gqa_causal", (1, 4, 6, 4), 2, 9, 3, causal=True),
    Case("mqa_causal_broadcast_mask", (2, 4, 7, 4), 1, 5, 4, mask=(2, 1, 7, 1), causal=True, scale=0.7),
)


def test_the_adjoint_matches_torch_autograd() -> None:
    """rlx.vjp (gradients of q, k, v and the mask) against torch.autograd in float64:
    GQA and MQA (kv gradients summed over the heads sharing them), causal, a mask
    broadcast over batch, heads or keys (its gradient summed back), and rows with
    every key masked (zero gradients, as torch's)."""
    rng = np.random.default_rng(5)
    arrays = [inputs(case, "f64", 40 + n) for n, case in enumerate(ADJOINT_CASES)]
    arrays[0][3][2] = -np.inf  # query 2 sees no key
    leaves = [[torch.tensor(a, requires_grad=True) for a in group] for group in arrays]
    cotangents = []
    for case, (q, k, v, *mask) in zip(ADJOINT_CASES, leaves):
        full = mask[0] + _causal_mask(case.query[2], case.keys) if mask and case.causal else (mask or [None])[0]
        causal = case.causal and not mask
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=full, is_causal=causal, scale=case.scale_value, enable_gqa=True
        )
        cotangents.append(rng.standard_normal(tuple(out.shape)))
        out.backward(torch.from_numpy(cotangents[-1]))
    results = rlx.compile(rlx.vjp(build(ADJOINT_CASES, "f64")))(*(a for g in arrays for a in g), *cotangents)
    want = [leaf.grad.numpy() for group in leaves for leaf in group]  # the gradients follow the arguments
    grads = results[len(ADJOINT_CASES) :]
    assert len(grads) == len(want)
    assert np.all(want[0][:, :, 2] == 0) and np.all(want[3][2] == 0)  # torch's, for the masked row
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_head_sizes_too_large_for_the_stack_are_a_compile_error() -> None:
    """The kernel's workspace lives on the stack; when even one query by one key
    would not fit, compiling says so instead of overflowing a thread's stack."""
    b = Builder()
    q, k, v = b.input((1, 1, 2, 4)), b.input((1, 1, 3, 4)), b.input((1, 1, 3, 600_000))
    b.output(b.attention(q, k, v))
    with pytest.raises(rlx.CompileError, match=r"'rlx.attention' needs a \d+ byte workspace per thread"):
        rlx.compile(b.module())


def test_the_profile_counts_the_products_of_the_pairs_not_masked_causally() -> None:
    """2·(D + Dv) FLOPs per (query, key) pair: 5 queries of 7 keys causally see
    1 + 2 + 3 + 4 + 5 pairs, 7 queries of 5 keys 1 + 2 + 3 + 4 + 5 + 5 + 5."""
    cases = (Case("wide", (2, 3, 5, 8), 3, 7, 4, causal=True), Case("tall", (1, 2, 7, 8), 1, 5, 4, causal=True))
    exe = rlx.compile(build(cases, "f32"))
    profile = exe.profile(*(a for n, case in enumerate(cases) for a in inputs(case, "f32", n)), repeat=1)
    flops = sorted(row.op.flops for row in profile.rows if row.op.name == "rlx.attention")
    assert flops == sorted([2 * 12 * 15 * 6, 2 * 12 * 25 * 2])


@pytest.mark.x86_64
@pytest.mark.parametrize(("name", "register"), [("x86-64-v3", "ymm"), ("x86-64-v4", "zmm")])
def test_the_row_passes_vectorize(name: str, register: str) -> None:
    """The online softmax's loops are packed: the row maximum (vmaxps), exp's
    polynomial (vfmadd...ps) in the target's widest registers, and no libm exp. Two
    blocks of 64 query rows over a full tile of 128 keys (O3 once took ~12 s on this
    module for x86-64-v3; 0.9 s when this test was widened to two blocks)."""
    case = Case("rows", (1, 2, 128, 64), 2, 128, 64, mask=(128, 128), causal=True)
    asm = rlx.compile(build((case,), "f32"), target=name).assembly()
    assert re.search(rf"\bvmaxps\s+%{register}", asm), "the row maximum is not vectorized"
    assert len(re.findall(rf"\bvfmadd\w+ps\s+%{register}", asm)) >= 6, "exp is not vectorized"
    assert not re.search(r"call\w*\s+\w*exp", asm)
