"""NumPy references and IR helpers for the data-movement / indexing tests.

Every reference is plain NumPy indexing (np.transpose, np.pad, np.take, ...) or,
for the scatters, an explicit loop in index order that applies one NumPy ufunc
per update (so f16/bf16 round once per step and integers wrap, exactly like a
sequential kernel).

    sample(shape, name, seed)        -> array of rlx element type `name` with specials
    Case(label, op, operands, attrs, want)
    run_cases(cases)                 -> compiled once per module text, results per case
    bits_equal / values_equal        -> byte-exact / NaN- and signed-zero-aware comparison
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np

import rlx_mlir as rlx

BF16 = np.dtype(ml_dtypes.bfloat16)
TYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "bf16": BF16,
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
}
STORAGE: dict[str, np.dtype] = {
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "i4": np.dtype(ml_dtypes.int4),
    "ui4": np.dtype(ml_dtypes.uint4),
}
"""The float8 and 4-bit types: rlx types like the others, kept out of TYPES (and so out of
the movement and reduction matrices, whose NumPy references do not all run on them);
test_dtypes.py and test_storage_types.py cover them."""
NAME_OF = {v: k for k, v in {**TYPES, **STORAGE}.items()}
FLOATS = ("f16", "bf16", "f32", "f64")
FLOAT8 = ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ")
INT4 = ("i4", "ui4")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("ui8", "ui16", "ui32", "ui64")
COMPLEX = ("complex<f32>", "complex<f64>")
REALS = (*FLOATS, *SIGNED, *UNSIGNED)
NUMERIC = (*REALS, *COMPLEX)

# which reductions the scatter verifiers accept, per element type (ReducingScatter.check_reduction)
REDUCTION_TYPES = {"none": tuple(TYPES), "add": NUMERIC, "mul": NUMERIC, "max": REALS, "min": REALS}


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def int_range(name: str) -> tuple[int, int]:
    info = ml_dtypes.iinfo({**TYPES, **STORAGE}[name])
    return int(info.min), int(info.max)


def is_float(dtype: np.dtype) -> bool:
    """NumPy floats and complex, and ml_dtypes' bfloat16 and float8 (NumPy kind 'V')."""
    return dtype.kind in "fc" or dtype == BF16 or dtype in [STORAGE[n] for n in FLOAT8]


def sample(shape: Sequence[int], name: str, seed: int = 0, specials: bool = True, small: bool = False) -> np.ndarray:
    """Random values of element type `name`; floats get NaN, +-0, +-inf and a subnormal
    sprinkled in (unless `specials` is False); `small` keeps values in a narrow range
    (for mul reductions that would otherwise overflow on every step)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    dtype = TYPES[name]
    if name == "i1":
        return (rng.random(n) < 0.5).reshape(shape)
    if name in SIGNED or name in UNSIGNED:
        lo, hi = (-3, 3) if small and name in SIGNED else (0, 3) if small else int_range(name)
        wide = np.uint64 if name == "ui64" else np.int64  # ui64's top does not fit int64
        return rng.integers(lo, hi, n, endpoint=True, dtype=wide).astype(dtype).reshape(shape)

    def reals(count: int) -> np.ndarray:
        v = rng.uniform(0.5, 2.0, count) * rng.choice([-1, 1], count) if small else rng.standard_normal(count) * 10
        if specials and count:
            picks = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45 if name != "f16" else 6e-8]
            where = rng.choice(count, size=min(count, max(1, count // 8)), replace=False)
            v[where] = rng.choice(picks, where.size)
        return v

    if name in COMPLEX:
        z = np.empty(n, np.complex128)
        z.real, z.imag = reals(n), reals(n)
        return z.astype(dtype).reshape(shape)
    with np.errstate(all="ignore"):
        return reals(n).astype(dtype).reshape(shape)


def index_array(values: Sequence[int] | np.ndarray, kind: str, shape: Sequence[int] | None = None) -> np.ndarray:
    dtype = np.int32 if kind == "i32" else np.int64
    arr = np.asarray(values, dtype=dtype)
    return arr.reshape(shape) if shape is not None else arr


def random_indices(shape: Sequence[int], n: int, kind: str, seed: int = 0) -> np.ndarray:
    """Indices in [-n, n), so negative (wrapping) and duplicate indices both occur."""
    rng = np.random.default_rng(seed + 1000)
    return index_array(rng.integers(-n, n, int(np.prod(shape, dtype=np.int64))), kind, shape)


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------
def bits_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Same dtype, shape and bytes (NaN payloads and signed zeros included)."""
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def values_equal(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, NaN where NaN (any payload), signed zeros apart; complex per part."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if not is_float(got.dtype):
        return bool(np.array_equal(got, want))
    parts = [(got.real, want.real), (got.imag, want.imag)] if got.dtype.kind == "c" else [(got, want)]
    for g, w in parts:
        g, w = g.astype(np.float64), w.astype(np.float64)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        if not np.array_equal(nan_g, nan_w):
            return False
        ok = nan_g | ((g == w) & (np.signbit(g) == np.signbit(w)))
        if not np.all(ok):
            return False
    return True


# ---------------------------------------------------------------------------
# IR text
# ---------------------------------------------------------------------------
def ttype(shape: Sequence[int], name: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{name}>"


def type_of(array: np.ndarray) -> str:
    return ttype(array.shape, NAME_OF[array.dtype])


def arr(values: Sequence[int]) -> str:
    values = list(values)
    return f"array<i64: {', '.join(str(int(v)) for v in values)}>" if values else "array<i64>"


@dataclass
class Case:
    """One op application: `rlx.<op> operands {attrs}` must give `want`."""

    label: str
    op: str
    operands: list[np.ndarray]
    attrs: str
    want: np.ndarray
    exact: bool = True  # byte-exact; else values_equal (reductions: any NaN payload)


def module_text(cases: Sequence[Case]) -> str:
    args, lines, results = [], [], []
    for k, case in enumerate(cases):
        names = []
        for j, a in enumerate(case.operands):
            args.append(f"%c{k}_{j}: {type_of(a)}")
            names.append(f"%c{k}_{j}")
        attrs = f" {{{case.attrs}}}" if case.attrs else ""
        ins = ", ".join(type_of(a) for a in case.operands)
        lines.append(f"  %r{k} = rlx.{case.op} {', '.join(names)}{attrs} : ({ins}) -> {type_of(case.want)}")
        results.append((f"%r{k}", type_of(case.want)))
    return (
        f"func.func @f({', '.join(args)}) -> ({', '.join(t for _, t in results)}) {{\n"
        + "\n".join(lines)
        + f"\n  func.return {', '.join(n for n, _ in results)} : {', '.join(t for _, t in results)}\n}}\n"
    )


@cache
def compile_text(text: str, pipeline: str | None = None) -> rlx.runtime.Executable:
    return rlx.compile(text, pipeline=pipeline)


def run_cases(cases: Sequence[Case]) -> list[str]:
    """Compile all cases as one module, run, and return a description of every mismatch."""
    text = module_text(cases)
    exe = compile_text(text)
    outs = exe(*[a for c in cases for a in c.operands])
    failures = []
    for case, got in zip(cases, outs):
        ok = bits_equal(got, case.want) if case.exact else values_equal(got, case.want)
        if not ok:
            failures.append(f"{case.label}: rlx.{case.op} {{{case.attrs}}}\n  got  {got!r}\n  want {case.want!r}")
    return failures


# ---------------------------------------------------------------------------
# references that are not one NumPy call
# ---------------------------------------------------------------------------
def fill_value(value: float, name: str) -> np.ndarray:
    """The pad constant (an f64 attribute) converted like rlx.cast: float -> int
    truncates and saturates, -> i1 is != 0, -> complex has a zero imaginary part."""
    if name == "i1":
        return np.array(value != 0)
    if name in SIGNED or name in UNSIGNED:
        lo, hi = int_range(name)
        if np.isnan(value):
            return np.array(0, dtype=TYPES[name])
        clipped = lo if value < lo else hi if value > hi else int(value)
        return np.array(clipped, dtype=TYPES[name])
    with np.errstate(all="ignore"):
        return np.array(value).astype(TYPES[name])


def ref_slice(x: np.ndarray, starts: Sequence[int], steps: Sequence[int], lengths: Sequence[int]) -> np.ndarray:
    axes = [
        (s + n if s < 0 else s) + step * np.arange(length)
        for s, step, length, n in zip(starts, steps, lengths, x.shape)
    ]
    return x[np.ix_(*axes)] if axes else x.copy()


def ref_concat(inputs: Sequence[np.ndarray], axis: int, out_rank: int) -> np.ndarray:
    """Lower-rank inputs: aligned to the trailing axes, broadcast along the rest; the
    extent on `axis` is the input's own there, or 1 if it has no such axis."""
    axis %= out_rank
    full = next(a for a in inputs if a.ndim == out_rank)
    pieces = []
    for a in inputs:
        padded = a.reshape((1,) * (out_rank - a.ndim) + a.shape)
        target = list(full.shape)
        target[axis] = padded.shape[axis]
        pieces.append(np.broadcast_to(padded, target))
    return np.concatenate(pieces, axis=axis)


def ref_gather_elements(data: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    axis %= data.ndim
    cut = tuple(slice(None) if d == axis else slice(0, m) for d, m in enumerate(idx.shape))
    return np.take_along_axis(data[cut], idx.astype(np.int64), axis=axis)


def ref_gather_nd(data: np.ndarray, idx: np.ndarray, b: int) -> np.ndarray:
    k = idx.shape[-1]
    out = np.empty(idx.shape[:-1] + data.shape[b + k :], data.dtype)
    for pos in np.ndindex(*idx.shape[:-1]):
        out[pos] = data[pos[:b]][tuple(int(i) for i in idx[pos])]
    return out


def textbook_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product with one rounding per real operation: (ac - bd) + (ad + bc)i for complex
    (NumPy's own complex loops may use other evaluation orders)."""
    if a.dtype.kind != "c":
        return np.multiply(a, b)
    re = a.real * b.real - a.imag * b.imag
    im = a.real * b.imag + a.imag * b.real
    out = np.empty(np.broadcast(a, b).shape, a.dtype)
    out.real, out.imag = re, im
    return out


UFUNCS: dict[str, Callable] = {
    "none": lambda old, new: new,
    "add": np.add,
    "mul": textbook_mul,
    "max": np.maximum,
    "min": np.minimum,
}


def _apply(out: np.ndarray, where: tuple, update: np.ndarray, reduction: str) -> None:
    with np.errstate(all="ignore"):
        target = out[where]
        out[where] = UFUNCS[reduction](np.asarray(target), np.asarray(update)).astype(out.dtype)


def ref_gather_backward(dy: np.ndarray, idx: np.ndarray, out_shape: Sequence[int], axis: int) -> np.ndarray:
    axis %= len(out_shape)
    out = np.zeros(out_shape, dy.dtype)
    lead = (slice(None),) * axis
    for j in np.ndindex(*idx.shape):
        # one output element's contributions arrive in index order, as in the kernel
        _apply(out, (*lead, int(idx[j])), dy[lead + j], "add")
    return out


def ref_scatter_add(updates: np.ndarray, idx: np.ndarray, m: int) -> np.ndarray:
    return ref_gather_backward(updates, idx, (m, *updates.shape[1:]), 0)


def ref_scatter_nd(data: np.ndarray, idx: np.ndarray, updates: np.ndarray, reduction: str) -> np.ndarray:
    out = data.copy()
    for pos in np.ndindex(*idx.shape[:-1]):
        _apply(out, tuple(int(i) for i in idx[pos]), updates[pos], reduction)
    return out


def ref_scatter_elements(
    data: np.ndarray, idx: np.ndarray, updates: np.ndarray, axis: int, reduction: str
) -> np.ndarray:
    axis %= data.ndim
    out = data.copy()
    for pos in np.ndindex(*idx.shape):
        where = (*pos[:axis], int(idx[pos]), *pos[axis + 1 :])
        _apply(out, where, updates[pos], reduction)
    return out


def all_perms(rank: int) -> list[tuple[int, ...]]:
    return list(itertools.permutations(range(rank)))
