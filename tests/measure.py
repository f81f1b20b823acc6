"""Measure a unary op's error: the sweeps of test_unary and test_backward, and a command to run them.

    PYTHONPATH=$PWD python tests/measure.py rlx.cube [rlx.tanh ...]   # or --all

prints, per op and width (f32, f64), the largest error over the forward
sweep and over the derivative sweep (`rlx.activation_backward`, dy random in
±[0.5, 2)), next to the bounds of the op's record in tests/op_records.py.
Set a new record's bounds from these figures (see docs/adding-an-op.md);
the tests assert the same numbers, computed by the same functions, against
the bounds.

Forward sweep (~200k points): uniform over the record's domain, log-uniform
magnitudes down to the smallest subnormal, a dense [-4, 4] band, the
record's special values, then the generic specials (±0, ±inf, NaN,
subnormals, ±max...). Derivative sweep: 16 specials (±0, ±inf, NaN, ±1 and
the record's kinks) then 40k points (uniform, a band near 0, log-uniform
magnitudes from the record's `tiny`). Seeds are fixed per op name.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from functools import cache

import ml_dtypes
import numpy as np
from op_records import derivative, record, reference, short_name
from reference import compile_text, run_op, scaled_error, specials, ulp_error

from rlx_mlir.dialects import elementwise as ew

F32, F64 = np.float32, np.float64
BF16 = np.dtype(ml_dtypes.bfloat16)
IR = {np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(F32): "f32", np.dtype(F64): "f64"}
N_FORWARD = 80_000
N_SWEEP = 40_000
N_SPECIAL = 16
COMMON_SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0]


# ---------------------------------------------------------------------------
# forward
# ---------------------------------------------------------------------------
def _uniform(rng: np.random.Generator, lo: float, hi: float, n: int) -> np.ndarray:
    u = rng.random(n)
    return lo * (1 - u) + hi * u  # no overflow for ±max ranges


def forward_sweep(op: type[ew.UnaryOp], dtype: type) -> np.ndarray:
    """The forward sweep of `op` at `dtype` (deterministic)."""
    rec, name = record(op), short_name(op)
    lo, hi = rec.domain.at(dtype)
    rng = np.random.default_rng([sum(map(ord, name)), np.dtype(dtype).itemsize])
    mags = 10.0 ** rng.uniform(
        np.log10(float(np.finfo(dtype).smallest_subnormal)), np.log10(max(abs(lo), abs(hi))), N_FORWARD
    )
    signs = np.where(rng.random(N_FORWARD) < 0.5, -1.0, 1.0) if lo < 0 else 1.0
    parts = [_uniform(rng, lo, hi, N_FORWARD), mags * signs, rng.uniform(-4, 4, N_FORWARD // 2)]
    if rec.special_values:
        parts.append(np.array(rec.special_values))
    x = np.clip(np.concatenate(parts), lo, hi).astype(dtype)
    return np.concatenate([x, specials(dtype)])


@dataclass(frozen=True)
class Forward:
    """One forward sweep: inputs, results, the float64 reference and the errors."""

    x: np.ndarray
    got: np.ndarray
    ref: np.ndarray
    ulp: np.ndarray
    """Error in ULPs of the output width (inf where NaN/inf positions differ)."""
    scaled: np.ndarray | None
    """Error in ULPs of the record's cancellation scale, if it has one."""

    def worst(self, err: np.ndarray, label: str) -> str:
        i = int(np.argmax(err))
        return f"{label}: {err[i]} at x={self.x[i]!r} got={self.got[i]!r} ref={self.ref[i]!r}"


@cache
def forward(op: type[ew.UnaryOp], dtype: type) -> Forward:
    """The op compiled (one `rlx.<op>` over a 1-D tensor) and run on its forward sweep."""
    x = forward_sweep(op, dtype)
    got, ref = run_op(short_name(op), x), reference(op, x)
    cancellation = record(op).cancellation
    scaled = None
    if cancellation is not None:
        with np.errstate(all="ignore"):
            scale = cancellation.scale(x.astype(np.float64))
        scaled = scaled_error(got, ref, scale, dtype)
    return Forward(x, got, ref, ulp_error(got, ref, dtype), scaled)


def plain_ulp(op: type[ew.UnaryOp], result: Forward) -> np.ndarray:
    """The ULP errors where the record's plain ULP bound applies (0 elsewhere)."""
    cancellation = record(op).cancellation
    if cancellation is None:
        return result.ulp
    keep = (result.x >= cancellation.ulp_from) | np.isnan(result.x)
    return np.where(keep, result.ulp, 0.0)


# ---------------------------------------------------------------------------
# derivative
# ---------------------------------------------------------------------------
def derivative_sweep(op: type[ew.UnaryOp], dtype: type) -> np.ndarray:
    """N_SPECIAL specials (padded with 1.0) followed by N_SWEEP points of the derivative's domain."""
    d = record(op).derivative
    lo, hi = d.domain.at(dtype)
    rng = np.random.default_rng(sum(map(ord, short_name(op))))
    n3 = N_SWEEP // 3
    if lo > 0:
        mags = np.exp(rng.uniform(math.log(lo), math.log(hi), N_SWEEP - n3))
        pts = np.concatenate([mags, rng.uniform(lo, 4.0, n3)])
    else:
        band = min(4.0, hi)
        mx = max(abs(lo), hi)
        mags = np.exp(rng.uniform(math.log(d.tiny.at(dtype)), math.log(mx), n3))
        mags = mags * rng.choice([-1.0, 1.0], n3)
        pts = np.concatenate([rng.uniform(lo, hi, n3), rng.uniform(max(lo, -band), band, N_SWEEP - 2 * n3), mags])
        pts = np.clip(pts, lo, hi)
    special = (COMMON_SPECIALS + list(d.kinks) + [1.0] * N_SPECIAL)[:N_SPECIAL]
    return np.concatenate([np.array(special), pts]).astype(dtype)


def backward_text(dtype: type | np.dtype, n: int, kinds: tuple[str, ...], extra_relu_backward: bool = False) -> str:
    """`@f(%x0, ..., %dy)`: one `rlx.activation_backward` per kind (and a `relu_backward` of %x0)."""
    t = f"tensor<{n}x{IR[np.dtype(dtype)]}>"
    params = ", ".join([f"%x{i}: {t}" for i in range(len(kinds))] + [f"%dy: {t}"])
    body = [
        f'  %r{i} = rlx.activation_backward %x{i}, %dy {{kind = "{k}"}} : ({t}, {t}) -> {t}'
        for i, k in enumerate(kinds)
    ]
    results = [f"%r{i}" for i in range(len(kinds))]
    if extra_relu_backward:
        body.append(f"  %rb = rlx.relu_backward %x0, %dy : ({t}, {t}) -> {t}")
        results.append("%rb")
    types = ", ".join([t] * len(results))
    return (
        f"func.func @f({params}) -> ({types}) {{\n"
        + "\n".join(body)
        + f"\n  func.return {', '.join(results)} : {types}\n}}\n"
    )


def make_dy(dtype: type | np.dtype, n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)


def run_backward(ops: tuple[type[ew.UnaryOp], ...], dtype: type) -> dict[object, tuple[np.ndarray, ...]]:
    """{op: (x, dy, dx)} plus 'relu_backward' (on the first op's x), from one compiled function."""
    xs = [derivative_sweep(op, dtype) for op in ops]
    n = N_SPECIAL + N_SWEEP
    dy = make_dy(dtype, n)
    outs = compile_text(backward_text(dtype, n, tuple(short_name(op) for op in ops), extra_relu_backward=True))(*xs, dy)
    result: dict[object, tuple[np.ndarray, ...]] = {op: (x, dy, o) for op, x, o in zip(ops, xs, outs)}
    result["relu_backward"] = (xs[0], dy, outs[-1])
    return result


def derivative_errors(op: type[ew.UnaryOp], x: np.ndarray, dy: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Per-point error of dx = dy f'(x): ULPs, or ULPs of the cancelling terms where f' has a zero."""
    want = derivative(op, x) * dy.astype(np.float64)
    scale = record(op).derivative.scale
    if scale is None:
        return ulp_error(got, want)
    with np.errstate(all="ignore"):
        magnitude = scale(x.astype(np.float64)) * np.abs(dy.astype(np.float64))
    # where the scale is not finite (x = ±inf, NaN), plain ULPs: NaN would pass every bound
    return np.where(np.isfinite(magnitude), scaled_error(got, want, magnitude), ulp_error(got, want))


# ---------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------
def measure(op: type[ew.UnaryOp]) -> list[str]:
    """Lines reporting the op's measured maxima beside its record's bounds."""
    rec = record(op)
    lines = [f"{op.name}:"]
    backward = {dtype: run_backward((op,), dtype)[op] for dtype in (F32, F64)}
    for dtype, width in ((F32, "f32"), (F64, "f64")):
        result = forward(op, dtype)
        line = f"  {width} forward  max {plain_ulp(op, result).max():.3g} ULP (bound {rec.ulp.at(dtype)})"
        if result.scaled is not None and rec.cancellation is not None:
            line += f", {result.scaled.max():.3g} ULP of the scale (bound {rec.cancellation.bound})"
        lines.append(line)
        x, dy, got = backward[dtype]
        err = derivative_errors(op, x, dy, got)
        unit = "ULP of the cancelling terms" if rec.derivative.scale is not None else "ULP"
        lines.append(
            f"  {width} derivative max {err[N_SPECIAL:].max():.3g} {unit} on the sweep, "
            f"{err[:N_SPECIAL].max():.3g} on the specials (bound {rec.derivative.ulp.at(dtype)})"
        )
    return lines


def _op(name: str) -> type[ew.UnaryOp]:
    short = name.removeprefix("rlx.")
    if short not in ew.UNARY_OPS:
        raise SystemExit(f"no unary op '{name}' (known: {', '.join(sorted(ew.UNARY_OPS))})")
    return ew.UNARY_OPS[short]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops", nargs="*", help="op names, e.g. rlx.cube (or cube)")
    parser.add_argument("--all", action="store_true", help="every unary op of the dialect")
    options = parser.parse_args()
    ops = list(ew.UNARY_OPS.values()) if options.all else [_op(name) for name in options.ops]
    if not ops:
        parser.error("name at least one op, or --all")
    for op in ops:
        print("\n".join(measure(op)), flush=True)


if __name__ == "__main__":
    main()
