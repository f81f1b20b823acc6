"""ULP-accuracy tests for lowering/scalar/math_approx.py, run through a real O3 + MCJIT pipeline.

Sweep ranges and ULP bounds come from tests/accuracy.py (MATH_APPROX_ACCURACY),
the one table the numeric suites and the math_approx docstring share.

The harness wraps each approximation in an `llvm.func` loop
``f(ptr in, [ptr in2,] ptr out, i64 n)`` (noalias pointers, so LLVM vectorizes
it), converts the module with xDSL's llvmlite backend and compiles it with the
project's JIT (O3 for the host CPU, MCJIT), then calls it on NumPy arrays.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from functools import cache

import numpy as np
import pytest
from accuracy import MATH_APPROX_ACCURACY, accuracy, sweep_range
from op_records import sigmoid
from reference import ulp_error
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float32Type,
    Float64Type,
    ModuleOp,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Region
from xdsl.utils.test_value import create_ssa_value

from rlx_mlir.jit import CompiledModule, compile_text
from rlx_mlir.lowering.core.emitter import Emitter
from rlx_mlir.lowering.core.translate import to_llvm_ir
from rlx_mlir.lowering.scalar import math_approx as ma
from rlx_mlir.target import target

# ---------------------------------------------------------------------------
# harness
# ---------------------------------------------------------------------------
UNARY = [name for name, widths in MATH_APPROX_ACCURACY.items() if widths["f32"].sweep is not None]
BINARY = [name for name, widths in MATH_APPROX_ACCURACY.items() if widths["f32"].sweep is None]
"""The functions of tests/accuracy.py: one-argument ones have a sweep range, two-argument ones none."""
DTYPES = {np.float32: Float32Type(), np.float64: Float64Type()}


def _kernel(name: str, ftype: Attribute, arity: int) -> xllvm.FuncOp:
    """for (i = 0; i < n; ++i) out[i] = f(in[i] [, in2[i]])  as llvm dialect blocks."""
    ptr = xllvm.LLVMPointerType()
    inputs = [ptr] * (arity + 1) + [i64]
    entry = Block(arg_types=inputs)
    body = Block(arg_types=[i64])
    exit_ = Block()
    e = Emitter(entry)
    n = entry.args[-1]
    zero = e.i64(0)
    e.op(xllvm.CondBrOp(e.icmp("sgt", n, zero), body, [zero], exit_, []))
    e.move_to(body)
    i = body.args[0]
    args = []
    for a in range(arity):
        p = e.op(xllvm.GEPOp(entry.args[a], [xllvm.GEP_USE_SSA_VAL], ftype, ssa_indices=[i], inbounds=True))
        args.append(e.op(xllvm.LoadOp(p, ftype)))
    res = getattr(ma, name)(e, *args)
    po = e.op(xllvm.GEPOp(entry.args[arity], [xllvm.GEP_USE_SSA_VAL], ftype, ssa_indices=[i], inbounds=True))
    e.op(xllvm.StoreOp(res, po))
    i1 = e.add(i, e.i64(1))
    e.op(xllvm.CondBrOp(e.icmp("slt", i1, n), body, [i1], exit_, []))
    e.move_to(exit_)
    e.op(xllvm.ReturnOp())
    noalias = DictionaryAttr({"llvm.noalias": UnitAttr()})
    return xllvm.FuncOp(
        name,
        xllvm.LLVMFunctionType(inputs, None),
        linkage=xllvm.LinkageAttr("external"),
        body=Region([entry, body, exit_]),
        other_props={"arg_attrs": ArrayAttr([noalias] * (arity + 1) + [DictionaryAttr({})])},
    )


def _build(kernels: list[tuple[str, Attribute, int]]) -> CompiledModule:
    """The kernels in one module, optimized and JIT-compiled by the project's own JIT."""
    module = ModuleOp([_kernel(n, t, a) for n, t, a in kernels])
    module.verify()
    machine = target()
    return compile_text(to_llvm_ir(module, machine.triple), machine)


@cache
def _compiled(dtype: type) -> dict[str, Callable[..., np.ndarray]]:
    """JIT every function for one dtype in a single module; return NumPy-level callables."""
    ftype = DTYPES[dtype]
    kernels = [(f, ftype, 1) for f in UNARY if hasattr(ma, f)] + [(f, ftype, 2) for f in BINARY if hasattr(ma, f)]
    compiled = _build(kernels)
    out: dict[str, Callable[..., np.ndarray]] = {}
    for name, _, arity in kernels:
        addr = compiled.address(name)
        proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (arity + 1)), ctypes.c_int64)
        out[name] = _wrap(proto(addr), dtype)
    return out


def _wrap(cfunc, dtype: type) -> Callable[..., np.ndarray]:
    def call(*arrays: np.ndarray) -> np.ndarray:
        arrs = [np.ascontiguousarray(a, dtype=dtype) for a in np.broadcast_arrays(*arrays)]
        res = np.empty_like(arrs[0])
        cfunc(*[a.ctypes.data for a in arrs], res.ctypes.data, res.size)
        return res

    call.cfunc = cfunc  # type: ignore[attr-defined]
    return call


# ---------------------------------------------------------------------------
# references and ULP measurement
# ---------------------------------------------------------------------------
def _erf_ref(x: np.ndarray) -> np.ndarray:
    import math

    return np.array([math.erf(v) for v in x.tolist()], dtype=np.float64)


REF: dict[str, Callable[..., np.ndarray]] = {
    "exp": np.exp,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "tanh": np.tanh,
    "sigmoid": sigmoid,  # the op record's: long double: no float64 rounding of its own
    "erf": _erf_ref,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "pow": np.power,
}


def test_every_accuracy_row_names_a_kernel_with_a_reference() -> None:
    """A row of tests/accuracy.py is tested here: it needs a math_approx function and a float64 reference."""
    missing = [name for name in MATH_APPROX_ACCURACY if not hasattr(ma, name) or name not in REF]
    assert not missing, f"rows of tests/accuracy.py without a math_approx kernel or an entry in REF here: {missing}"


def _specials(dtype: type) -> np.ndarray:
    fi = np.finfo(dtype)
    vals = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        fi.tiny,
        -fi.tiny,
        fi.smallest_subnormal,
        -fi.smallest_subnormal,
        fi.tiny / 3,
        -fi.tiny / 7,
        fi.max,
        -fi.max,
        fi.eps,
        -fi.eps,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        3.0,
        1e-30,
        -1e-30,
    ]
    return np.array(vals, dtype=dtype)


def _sweep(dtype: type, lo: float, hi: float, n: int, rng: np.random.Generator, log_too: bool = True) -> np.ndarray:
    """Uniform points in [lo, hi] plus log-uniform magnitudes (both signs) within the same span."""
    if np.isfinite(hi - lo):
        parts = [rng.uniform(lo, hi, n)]
    else:  # ±max ranges: the same draws without the overflow of hi - lo
        u = rng.random(n)
        parts = [lo * (1 - u) + hi * u]
    if log_too:
        m = max(abs(lo), abs(hi))
        mags = 10.0 ** rng.uniform(
            np.log10(np.finfo(dtype).smallest_subnormal) if dtype == np.float32 else -320, np.log10(m), n
        )
        signs = np.where(rng.random(n) < 0.5, -1.0, 1.0) if lo < 0 else 1.0
        parts.append(mags * signs)
    x = np.concatenate(parts)
    return np.clip(x, lo, hi).astype(dtype)


N = 1_000_000
TRIG = ("sin", "cos", "tan")


def _check(name: str, dtype: type, got: np.ndarray, ref: np.ndarray, inputs: tuple[np.ndarray, ...]) -> float:
    err = ulp_error(got, ref, dtype)
    worst = int(np.argmax(err))
    bound = accuracy(name, dtype).max_ulp
    with np.errstate(over="ignore"):
        msg = (
            f"{name}[{np.dtype(dtype).name}] max {err[worst]} ULP at inputs="
            f"{[repr(a[worst]) for a in inputs]} got={got[worst]!r} ref={ref.astype(dtype)[worst]!r}"
        )
    print(msg)
    assert err[worst] <= bound, msg
    return float(err[worst])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_ulp(name: str, dtype: type) -> None:
    rng = np.random.default_rng(1234)
    lo, hi = sweep_range(name, dtype)
    sp = _specials(dtype)
    x = np.concatenate([_sweep(dtype, lo, hi, N, rng), _sweep(dtype, -2, 2, N // 4, rng, False), sp])
    if name in ("exp", "expm1", "sigmoid", "tanh"):
        # around the overflow/underflow thresholds
        fi = np.finfo(dtype)
        th = [np.log(fi.max), np.log(fi.tiny), np.log(fi.smallest_subnormal)]
        x = np.concatenate([x, *(np.linspace(t - 2, t + 2, 20001).astype(dtype) for t in th)])
    got = _compiled(dtype)[name](x)
    with np.errstate(all="ignore"):
        ref = REF[name](x.astype(np.float64))
    _check(name, dtype, got, ref, (x,))


F32_WINDOWS = {
    # |x| windows: around the largest errors of the exhaustive run (tests/exhaustive_f32.py: tanh
    # 2 ULP at 0.0155, sigmoid 2 ULP at -1.099), where the reduction's k first changes (ln2/4 for
    # tanh's 2|x|, ln2/2 for sigmoid), where tanh rounds to 1 and sigmoid to 1 or to subnormals and
    # 0, and across the clamps (tanh's 2|x| at 30, sigmoid's x at 40)
    "tanh": [(0.015, 0.016), (0.16, 0.19), (8.9, 9.2), (14.9, 15.1)],
    "sigmoid": [(1.09, 1.11), (0.33, 0.36), (86.0, 88.0), (102.0, 105.0), (16.5, 18.0), (39.5, 40.5)],
}


@pytest.mark.parametrize("name", sorted(F32_WINDOWS))
def test_f32_every_value_in_windows(name: str) -> None:
    """Every f32 of both signs in `F32_WINDOWS` (a few million inputs): the dense stand-in, run with
    the suite, for the exhaustive check of tests/exhaustive_f32.py."""
    edges = np.array(F32_WINDOWS[name], np.float32).view(np.uint32)
    mags = np.concatenate([np.arange(lo, hi, dtype=np.uint32) for lo, hi in edges]).view(np.float32)
    x = np.concatenate([mags, -mags])
    got = _compiled(np.float32)[name](x)
    _check(name, np.float32, got, REF[name](x.astype(np.float64)), (x,))


def _pow_inputs(dtype: type, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = N // 2
    lim = 88.0 if dtype == np.float32 else 709.0
    # moderate: x log-uniform, y chosen so |y log x| stays within the representable range
    x = 10.0 ** rng.uniform(-30 if dtype == np.float32 else -300, 30 if dtype == np.float32 else 300, n)
    y = rng.uniform(-1, 1, n) * lim * 1.05 / np.maximum(np.abs(np.log(x)), 1e-3)
    x2 = rng.uniform(0, 4, n)
    y2 = rng.uniform(-40, 40, n)
    xi = -rng.uniform(0, 10, n)  # negative base with integer / non-integer exponent
    yi = np.where(rng.random(n) < 0.5, np.round(rng.uniform(-30, 30, n)), rng.uniform(-30, 30, n))
    sp = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.0,
            -2.0,
            0.5,
            -0.5,
            np.inf,
            -np.inf,
            np.nan,
            3.0,
            -3.0,
            np.finfo(dtype).tiny,
            np.finfo(dtype).smallest_subnormal,
            np.finfo(dtype).max,
        ]
    )
    gx, gy = np.meshgrid(sp, sp)
    xs = np.concatenate([x, x2, xi, gx.ravel()]).astype(dtype)
    ys = np.concatenate([y, y2, yi, gy.ravel()]).astype(dtype)
    return xs, ys


def _atan2_inputs(dtype: type, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = N
    a = rng.uniform(-10, 10, (2, n))
    b = 10.0 ** rng.uniform(
        -40 if dtype == np.float32 else -300, 38 if dtype == np.float32 else 300, (2, n)
    ) * np.where(rng.random((2, n)) < 0.5, -1, 1)
    sp = _specials(dtype).astype(np.float64)
    gx, gy = np.meshgrid(sp, sp)
    ys = np.concatenate([a[0], b[0], gy.ravel()]).astype(dtype)
    xs = np.concatenate([a[1], b[1], gx.ravel()]).astype(dtype)
    return ys, xs


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_ulp(name: str, dtype: type) -> None:
    rng = np.random.default_rng(99)
    a, b = (_pow_inputs if name == "pow" else _atan2_inputs)(dtype, rng)
    got = _compiled(dtype)[name](a, b)
    with np.errstate(all="ignore"):
        ref = REF[name](a.astype(np.float64), b.astype(np.float64))
    _check(name, dtype, got, ref, (a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_exact_specials(dtype: type) -> None:
    """Spot values whose results are exact by definition."""
    f = _compiled(dtype)
    inf, nan = np.inf, np.nan
    cases = {
        "exp": ([0.0, -inf, inf, nan, 1e4, -1e4], [1.0, 0.0, inf, nan, inf, 0.0]),
        "log": ([1.0, 0.0, -0.0, -1.0, inf, -inf, nan], [0.0, -inf, -inf, nan, inf, nan, nan]),
        "tanh": ([inf, -inf, 0.0, 100.0], [1.0, -1.0, 0.0, 1.0]),
        "sigmoid": ([inf, -inf, 0.0, nan], [1.0, 0.0, 0.5, nan]),
        "sin": ([inf, -inf, nan], [nan, nan, nan]),
        "atan": ([inf, -inf], [np.pi / 2, -np.pi / 2]),
    }
    for name, (xs, want) in cases.items():
        got = f[name](np.array(xs, dtype=dtype))
        np.testing.assert_array_equal(got, np.array(want, dtype=dtype), err_msg=name)
    # signed zeros survive
    for name in ("expm1", "log1p", "tanh", "erf", "sin", "tan", "atan"):
        got = f[name](np.array([-0.0], dtype=dtype))
        assert got[0] == 0 and np.signbit(got[0]), name


@pytest.mark.x86_64_avx
def test_f32_exp_vectorizes() -> None:
    """The f32 exp loop must become packed vector code with no libm call."""
    asm = _build([("exp", Float32Type(), 1)]).assembly()
    assert "zmm" in asm or "ymm" in asm, asm[:2000]
    packed = [ln for ln in asm.splitlines() if "ps\t" in ln and ("zmm" in ln or "ymm" in ln)]
    assert packed, "no packed single-precision instructions"
    assert "expf" not in asm and not re.search(r"\bcall", asm), "libm/function call in the loop"


def _binary(name: str, dtype: type) -> Callable[..., np.ndarray]:
    """A two-argument math_approx function of `dtype`, JIT-compiled alone."""
    compiled = _build([(name, DTYPES[dtype], 2)])
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return _wrap(proto(compiled.address(name)), dtype)


def _exp2_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """2^(a·b) of the exact product: f32 products are exact in float64; f64 ones are given
    exact in float64 by the callers and raised in long double."""
    if a.dtype == np.float32:
        return np.exp2(a.astype(np.float64) * b.astype(np.float64))
    with np.errstate(over="ignore"):
        return np.exp2(a.astype(np.longdouble) * b.astype(np.longdouble))


def _exact_product_operands(dtype: type, bound: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """a, b with |a·b| <= bound, a·b exact in float64 (f64: a on a 2^-16 grid and b on a
    2^-25 one, so the product has at most 52 bits), plus the points where k = rint(a·b)
    changes (b = 1, a = m + 1/2 and the float just below) and the bound itself."""
    a = rng.uniform(-bound, bound, 1 << 21)
    b = rng.uniform(-1, 1, 1 << 21)
    if dtype is np.float64:
        a, b = np.round(a * 2**16) / 2**16, np.round(b * 2**25) / 2**25
    halves = (np.arange(-int(bound), int(bound)) + 0.5).astype(dtype)
    edges = np.concatenate(
        [halves, np.nextafter(halves, dtype(0)), [-bound, bound, 0.0, -0.0], np.linspace(-1, 1, 1 << 16)]
    )
    a = np.concatenate([a, edges]).astype(dtype)
    return a, np.concatenate([b, np.ones(edges.size)]).astype(dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_exp2_product_in_range(dtype: type) -> None:
    """exp2_product_in_range: within 1 ULP of 2^(a·b) on |a·b| up to its bound."""
    bound = {np.float32: 125.0, np.float64: 1021.0}[dtype]
    assert ma.exp2_product_in_range_bound(create_ssa_value(DTYPES[dtype])) == bound
    a, b = _exact_product_operands(dtype, bound, np.random.default_rng(8))
    assert float(np.max(ulp_error(_binary("exp2_product_in_range", dtype)(a, b), _exp2_reference(a, b)))) <= 1


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_exp2_product(dtype: type) -> None:
    """exp2_product: within 1 ULP of 2^x for x the rounded a·b, everywhere: the subnormal
    results, overflow to inf, underflow to 0, and NaN for a NaN or 0·inf product."""
    rng = np.random.default_rng(9)
    top = {np.float32: 200.0, np.float64: 1200.0}[dtype]
    inf, nan = np.inf, np.nan
    a = np.concatenate([rng.uniform(-top, top, 1 << 20), [inf, -inf, nan, 0.0, 1e30, -1e30, 0.0]]).astype(dtype)
    b = np.concatenate([rng.uniform(-1, 1, 1 << 20), [1.0, 1.0, 1.0, inf, 1e30, 1e30, 0.0]]).astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        x = a * b
        want = _exp2_reference(x, np.ones_like(x))
    got = _binary("exp2_product", dtype)(a, b)
    assert float(np.max(ulp_error(got, want))) <= 1
    np.testing.assert_array_equal(got[-7:], np.array([inf, 0.0, nan, nan, inf, 0.0, 1.0], dtype))


def _unary(name: str, dtype: type) -> Callable[..., np.ndarray]:
    """A one-argument math_approx function of `dtype`, JIT-compiled alone."""
    compiled = _build([(name, DTYPES[dtype], 1)])
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return _wrap(proto(compiled.address(name)), dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_exp_nonpositive_is_exp_down_to_the_normal_range(dtype: type) -> None:
    """exp_nonpositive (attention's softmax): `exp` bit for bit wherever e^x is normal,
    0 below (where `exp` is subnormal) and at -inf, NaN for NaN."""
    info = np.finfo(dtype)
    floor = np.log(float(info.smallest_normal))
    rng = np.random.default_rng(10)
    x = np.concatenate(
        [
            rng.uniform(floor, 0.0, 1 << 18),
            rng.uniform(2 * floor, floor, 1 << 12),
            np.nextafter(np.array([floor, floor], dtype), np.array([0.0, -np.inf], dtype)),
            [0.0, -0.0, -np.inf, np.nan],
        ]
    ).astype(dtype)
    got, exp = _unary("exp_nonpositive", dtype)(x), _compiled(dtype)["exp"](x)
    normal = exp >= info.smallest_normal
    np.testing.assert_array_equal(got[normal], exp[normal])
    assert np.all(got[~normal & ~np.isnan(x)] == 0)
    assert normal[: 1 << 18].all() and not normal[(1 << 18) : (1 << 18) + (1 << 12)].any()
    assert np.isnan(got[-1]) and got[-2] == 0 and got[-4] == 1
