"""Shape ops (expand, reshape, constant), pass-through results, zero-size and rank-0
tensors, and fused == unfused == reference for chains of elementwise ops.

`pipeline=""` compiles with no tensor-level passes (one loop per op, every
intermediate in the arena); the default pipeline canonicalizes broadcasts and
fuses elementwise ops into `rlx.elementwise_region`s. Both must give bit-identical
results, equal to the NumPy reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_records import reference
from reference import (
    bits_equal,
    compile_text,
    func_ir,
    ir_type,
    ref_binary_int,
    ref_cast,
    ulp_error,
)

from rlx_mlir.dialects import elementwise as ew

F32, F64, I32, I64, BOOL = np.float32, np.float64, np.int32, np.int64, np.bool_
ALL = [
    pytest.param(F32, id="f32"),
    pytest.param(F64, id="f64"),
    pytest.param(I32, id="i32"),
    pytest.param(I64, id="i64"),
    pytest.param(BOOL, id="i1"),
]
PIPELINES = [
    pytest.param(None, id="default"),
    pytest.param("", id="unfused"),
    pytest.param("canonicalize-broadcast", id="canon"),
    pytest.param("fuse-elementwise", id="fuse-only"),
]


def values(shape: tuple[int, ...], dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return np.asarray(rng.random(shape) < 0.5)
    if np.dtype(dtype).kind == "i":
        return np.asarray(rng.integers(-1000, 1000, shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape) * 10, dtype=dtype)


def call(text: str, *args: np.ndarray, pipeline: str | None = None) -> tuple[np.ndarray, ...]:
    return compile_text(text, pipeline)(*args)


# ---------------------------------------------------------------------------
# expand / reshape / pass-through
# ---------------------------------------------------------------------------
EXPAND = [
    ((3,), (4, 3)),
    ((4, 1), (4, 3)),
    ((1,), (2, 3, 4)),
    ((), (5,)),
    ((2, 1, 3), (2, 4, 3)),
    ((3,), (3,)),
    ((), ()),
    ((1, 1), (1, 1)),
    ((1, 3), (0, 3)),
    ((2, 1), (3, 2, 5)),
]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shapes", EXPAND, ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_expand(dtype: type, shapes: tuple, pipeline: str | None) -> None:
    src, dst = shapes
    x = values(src, dtype)
    text = func_ir(
        [(src, dtype)],
        [f"%e = rlx.expand %a0 : ({ir_type(src, dtype)}) -> {ir_type(dst, dtype)}"],
        [("%e", dst, dtype)],
    )
    (got,) = call(text, x, pipeline=pipeline)
    assert got.shape == dst
    assert bits_equal(got, np.array(np.broadcast_to(x, dst)))


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_expand_then_arithmetic(pipeline: str | None) -> None:
    """expand feeding a binary op, with the expanded value also returned."""
    a, b = values((4, 1), F32, 1), values((3,), F32, 2)
    t41, t3, t43 = ir_type((4, 1), F32), ir_type((3,), F32), ir_type((4, 3), F32)
    text = func_ir(
        [((4, 1), F32), ((3,), F32)],
        [
            f"%e = rlx.expand %a0 : ({t41}) -> {t43}",
            f"%s = rlx.sub %e, %a1 : ({t43}, {t3}) -> {t43}",
            f"%m = rlx.max %s, %e : ({t43}, {t43}) -> {t43}",
        ],
        [("%m", (4, 3), F32), ("%e", (4, 3), F32)],
    )
    m, e = call(text, a, b, pipeline=pipeline)
    np.testing.assert_array_equal(e, np.broadcast_to(a, (4, 3)))
    np.testing.assert_array_equal(m, np.maximum(a - b, a))


RESHAPE = [
    ((12,), (3, 4)),
    ((3, 4), (2, 6)),
    ((2, 3, 4), (4, 6)),
    ((1,), ()),
    ((), (1, 1)),
    ((0, 3), (3, 0)),
    ((2, 3), (6,)),
    ((6,), (1, 6, 1)),
]


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("shapes", RESHAPE, ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_reshape_returned(dtype: type, shapes: tuple, pipeline: str | None) -> None:
    """A reshape of an argument returned directly (copied into the output)."""
    src, dst = shapes
    x = values(src, dtype)
    text = func_ir(
        [(src, dtype)],
        [f"%r = rlx.reshape %a0 : ({ir_type(src, dtype)}) -> {ir_type(dst, dtype)}"],
        [("%r", dst, dtype)],
    )
    (got,) = call(text, x, pipeline=pipeline)
    assert got.shape == dst
    assert bits_equal(got, x.reshape(dst))
    assert not np.shares_memory(got, x)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_reshape_chain_with_arithmetic(pipeline: str | None) -> None:
    """reshape -> binary (with broadcasting) -> reshape back, plus the intermediate returned."""
    x, y = values((2, 6), F64, 3), values((4,), F64, 4)
    t26, t34, t4, t12 = (ir_type(s, F64) for s in ((2, 6), (3, 4), (4,), (12,)))
    text = func_ir(
        [((2, 6), F64), ((4,), F64)],
        [
            f"%r = rlx.reshape %a0 : ({t26}) -> {t34}",
            f"%d = rlx.div %r, %a1 : ({t34}, {t4}) -> {t34}",
            f"%f = rlx.reshape %d : ({t34}) -> {t12}",
        ],
        [("%f", (12,), F64), ("%r", (3, 4), F64)],
    )
    f, r = call(text, x, y, pipeline=pipeline)
    assert bits_equal(r, x.reshape(3, 4))
    assert bits_equal(f, (x.reshape(3, 4) / y).reshape(12))


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("dtype", ALL)
def test_return_argument_unchanged(dtype: type, pipeline: str | None) -> None:
    x = values((3, 5), dtype, 7)
    text = func_ir([((3, 5), dtype)], [], [("%a0", (3, 5), dtype)])
    (got,) = call(text, x, pipeline=pipeline)
    assert bits_equal(got, x) and not np.shares_memory(got, x)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_return_argument_and_result_twice(pipeline: str | None) -> None:
    """The same argument / value returned in several result slots."""
    x = values((4,), F32, 8)
    t = ir_type((4,), F32)
    text = func_ir(
        [((4,), F32)],
        [f"%n = rlx.neg %a0 : ({t}) -> {t}"],
        [("%a0", (4,), F32), ("%n", (4,), F32), ("%a0", (4,), F32), ("%n", (4,), F32)],
    )
    r = call(text, x, pipeline=pipeline)
    for got, want in zip(r, (x, -x, x, -x)):
        assert bits_equal(got, want)


# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_constants_splat_and_dense(pipeline: str | None) -> None:
    t43, t3, t = ir_type((4, 3), F32), ir_type((3,), F32), ir_type((), F32)
    text = func_ir(
        [((4, 3), F32)],
        [
            f"%s = rlx.constant dense<2.5> : {t43}",
            f"%d = rlx.constant dense<[1.0, -0.0, 3.0e+38]> : {t3}",
            f"%z = rlx.constant dense<-4.0> : {t}",
            f"%m = rlx.mul %a0, %s : ({t43}, {t43}) -> {t43}",
            f"%a = rlx.add %m, %d : ({t43}, {t3}) -> {t43}",
            f"%b = rlx.sub %a, %z : ({t43}, {t}) -> {t43}",
        ],
        [("%b", (4, 3), F32), ("%s", (4, 3), F32), ("%d", (3,), F32), ("%z", (), F32)],
    )
    x = values((4, 3), F32, 9)
    b, s, d, z = call(text, x, pipeline=pipeline)
    dense = np.array([1.0, -0.0, 3.0e38], dtype=F32)
    assert bits_equal(s, np.full((4, 3), 2.5, F32))
    assert bits_equal(d, dense)
    assert bits_equal(z, np.array(-4.0, F32))
    m = (x * F32(2.5)).astype(F32)
    with np.errstate(over="ignore"):
        want = ((m + dense).astype(F32) - F32(-4.0)).astype(F32)
    assert bits_equal(b, want)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_constants_int_bool_full_dense(pipeline: str | None) -> None:
    t23i, t23b, t3i = ir_type((2, 3), I64), ir_type((2, 3), BOOL), ir_type((3,), I32)
    text = func_ir(
        [((2, 3), I64)],
        [
            f"%c = rlx.constant dense<[[1, -2, 3], [9223372036854775807, 0, -9223372036854775808]]> : {t23i}",
            f"%k = rlx.constant dense<[[true, false, true], [false, false, true]]> : {t23b}",
            f"%i = rlx.constant dense<[7, -2147483648, 2147483647]> : {t3i}",
            f"%s = rlx.add %a0, %c : ({t23i}, {t23i}) -> {t23i}",
            f"%w = rlx.where %k, %s, %a0 : ({t23b}, {t23i}, {t23i}) -> {t23i}",
        ],
        [("%w", (2, 3), I64), ("%c", (2, 3), I64), ("%k", (2, 3), BOOL), ("%i", (3,), I32)],
    )
    x = np.array([[5, 5, 5], [1, 1, 1]], dtype=I64)
    w, c, k, i = call(text, x, pipeline=pipeline)
    cw = np.array([[1, -2, 3], [2**63 - 1, 0, -(2**63)]], dtype=I64)
    kw = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_array_equal(c, cw)
    np.testing.assert_array_equal(k, kw)
    np.testing.assert_array_equal(i, np.array([7, -(2**31), 2**31 - 1], dtype=I32))
    np.testing.assert_array_equal(w, np.where(kw, ref_binary_int("add", x, cw), x))


# ---------------------------------------------------------------------------
# zero-size and rank-0
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_zero_size(pipeline: str | None) -> None:
    t03, t3, t13 = ir_type((0, 3), F32), ir_type((3,), F32), ir_type((1, 3), F32)
    text = func_ir(
        [((0, 3), F32), ((3,), F32), ((1, 3), F32)],
        [
            f"%s = rlx.add %a0, %a1 : ({t03}, {t3}) -> {t03}",
            f"%t = rlx.tanh %s : ({t03}) -> {t03}",
            f"%e = rlx.expand %a2 : ({t13}) -> {t03}",
            f"%m = rlx.mul %t, %e : ({t03}, {t03}) -> {t03}",
            f"%c = rlx.cast %m : ({t03}) -> {ir_type((0, 3), I32)}",
            f"%r = rlx.reshape %a0 : ({t03}) -> {ir_type((3, 0), F32)}",
            f"%u = rlx.add %a1, %a2 : ({t3}, {t13}) -> {t13}",
        ],
        [("%m", (0, 3), F32), ("%c", (0, 3), I32), ("%r", (3, 0), F32), ("%u", (1, 3), F32)],
    )
    a0, a1, a2 = np.zeros((0, 3), F32), values((3,), F32, 1), values((1, 3), F32, 2)
    m, c, r, u = call(text, a0, a1, a2, pipeline=pipeline)
    assert m.shape == (0, 3) and c.shape == (0, 3) and c.dtype == I32 and r.shape == (3, 0)
    assert bits_equal(u, (a1 + a2).astype(F32))


@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("dtype", [pytest.param(F32, id="f32"), pytest.param(F64, id="f64")])
def test_rank0(dtype: type, pipeline: str | None) -> None:
    t = ir_type((), dtype)
    text = func_ir(
        [((), dtype), ((), dtype)],
        [
            f"%s = rlx.add %a0, %a1 : ({t}, {t}) -> {t}",
            f"%e = rlx.exp %s : ({t}) -> {t}",
            f"%g = rlx.gt %e, %a1 : ({t}, {t}) -> {ir_type((), BOOL)}",
            f"%w = rlx.where %g, %e, %a0 : ({ir_type((), BOOL)}, {t}, {t}) -> {t}",
            f"%x = rlx.expand %w : ({t}) -> {ir_type((2, 2), dtype)}",
        ],
        [("%w", (), dtype), ("%x", (2, 2), dtype), ("%g", (), BOOL)],
    )
    a, b = np.array(0.25, dtype), np.array(0.5, dtype)
    w, x, g = call(text, a, b, pipeline=pipeline)
    e = reference(ew.ExpOp, a + b)
    assert w.shape == () and g.shape == () and bool(g)
    assert ulp_error(w, e, dtype) <= 1
    assert bits_equal(x, np.full((2, 2), w, dtype))


# ---------------------------------------------------------------------------
# fused == unfused == reference
# ---------------------------------------------------------------------------
def _chain_float(dtype: type) -> tuple[str, tuple[np.ndarray, ...], list[np.ndarray]]:
    """add -> max -> compare -> where -> tanh -> div, with broadcasting; two results."""
    s43, s3, s41 = (4, 3), (3,), (4, 1)
    t43, t3, t41, b43 = ir_type(s43, dtype), ir_type(s3, dtype), ir_type(s41, dtype), ir_type(s43, BOOL)
    text = func_ir(
        [(s43, dtype), (s3, dtype), (s41, dtype)],
        [
            f"%s = rlx.add %a0, %a1 : ({t43}, {t3}) -> {t43}",
            f"%m = rlx.max %s, %a2 : ({t43}, {t41}) -> {t43}",
            f"%g = rlx.gt %m, %a1 : ({t43}, {t3}) -> {b43}",
            f"%n = rlx.neg %m : ({t43}) -> {t43}",
            f"%w = rlx.where %g, %m, %n : ({b43}, {t43}, {t43}) -> {t43}",
            f"%t = rlx.tanh %w : ({t43}) -> {t43}",
            f"%d = rlx.div %t, %a2 : ({t43}, {t41}) -> {t43}",
        ],
        [("%d", s43, dtype), ("%w", s43, dtype)],
    )
    a, b, c = values(s43, dtype, 1), values(s3, dtype, 2), values(s41, dtype, 3)
    s = (a + b).astype(dtype)
    m = np.maximum(s, c)
    w = np.where(m > b, m, -m)
    t = reference(ew.TanhOp, w).astype(dtype)
    return text, (a, b, c), [(t / c).astype(dtype), w]


def _chain_int() -> tuple[str, tuple[np.ndarray, ...], list[np.ndarray]]:
    """i32: shl -> div -> mod -> bit_xor -> cast i64 -> sub -> cast i1 -> where."""
    s = (6,)
    t32, t64, tb = ir_type(s, I32), ir_type(s, I64), ir_type(s, BOOL)
    text = func_ir(
        [(s, I32), (s, I32), (s, I64)],
        [
            f"%l = rlx.shl %a0, %a1 : ({t32}, {t32}) -> {t32}",
            f"%d = rlx.div %l, %a1 : ({t32}, {t32}) -> {t32}",
            f"%m = rlx.mod %d, %a0 : ({t32}, {t32}) -> {t32}",
            f"%x = rlx.bit_xor %m, %l : ({t32}, {t32}) -> {t32}",
            f"%c = rlx.cast %x : ({t32}) -> {t64}",
            f"%s = rlx.sub %c, %a2 : ({t64}, {t64}) -> {t64}",
            f"%b = rlx.cast %s : ({t64}) -> {tb}",
            f"%w = rlx.where %b, %s, %a2 : ({tb}, {t64}, {t64}) -> {t64}",
        ],
        [("%w", s, I64), ("%x", s, I32)],
    )
    lo = -(2**31)
    a0 = np.array([1, -7, lo, 2**31 - 1, 5, 0], dtype=I32)
    a1 = np.array([31, 0, -1, 3, 40, 2], dtype=I32)
    a2 = np.array([0, 5, 2**40, -3, 0, 0], dtype=I64)
    l_ = ref_binary_int("shl", a0, a1)
    d = ref_binary_int("div", l_, a1)
    m = ref_binary_int("mod", d, a0)
    x = ref_binary_int("bit_xor", m, l_)
    s_ = ref_binary_int("sub", ref_cast(x, I64), a2)
    return text, (a0, a1, a2), [np.where(ref_cast(s_, BOOL), s_, a2), x]


def _chain_unary(dtype: type) -> tuple[str, tuple[np.ndarray, ...], list[np.ndarray]]:
    """exp -> sigmoid -> sqrt -> recip -> cast to the other float width -> floor."""
    other = F64 if dtype == F32 else F32
    s = (257,)
    t, to = ir_type(s, dtype), ir_type(s, other)
    text = func_ir(
        [(s, dtype)],
        [
            f"%e = rlx.exp %a0 : ({t}) -> {t}",
            f"%g = rlx.sigmoid %e : ({t}) -> {t}",
            f"%q = rlx.sqrt %g : ({t}) -> {t}",
            f"%r = rlx.recip %q : ({t}) -> {t}",
            f"%c = rlx.cast %r : ({t}) -> {to}",
            f"%f = rlx.floor %c : ({to}) -> {to}",
        ],
        [("%f", s, other), ("%r", s, dtype)],
    )
    x = np.linspace(-3, 3, 257).astype(dtype)
    e = reference(ew.ExpOp, x).astype(dtype)
    g = reference(ew.SigmoidOp, e).astype(dtype)
    r = (dtype(1) / np.sqrt(g)).astype(dtype)
    return text, (x,), [np.floor(r.astype(other)), r]


CHAINS = {
    "float-f32": lambda: _chain_float(F32),
    "float-f64": lambda: _chain_float(F64),
    "int": _chain_int,
    "unary-f32": lambda: _chain_unary(F32),
    "unary-f64": lambda: _chain_unary(F64),
}


def _graph() -> tuple[str, tuple[np.ndarray, ...], list[np.ndarray]]:
    """A DAG of exact f32 ops over several shapes (values live across ops: memory planning),
    with expand and reshape in the middle and three results."""
    s43, s3, s243, s83 = (4, 3), (3,), (2, 4, 3), (8, 3)
    t43, t3, t243, t83 = (ir_type(s, F32) for s in (s43, s3, s243, s83))
    text = func_ir(
        [(s43, F32), (s3, F32)],
        [
            f"%1 = rlx.add %a0, %a1 : ({t43}, {t3}) -> {t43}",
            f"%2 = rlx.div %1, %a0 : ({t43}, {t43}) -> {t43}",
            f"%3 = rlx.expand %a1 : ({t3}) -> {t243}",
            f"%4 = rlx.sub %3, %2 : ({t243}, {t43}) -> {t243}",
            f"%5 = rlx.max %4, %1 : ({t243}, {t43}) -> {t243}",
            f"%6 = rlx.reshape %5 : ({t243}) -> {t83}",
            f"%7 = rlx.div %6, %a1 : ({t83}, {t3}) -> {t83}",
            f"%8 = rlx.add %7, %a1 : ({t83}, {t3}) -> {t83}",
        ],
        [("%8", s83, F32), ("%2", s43, F32), ("%1", s43, F32)],
    )
    a, b = values(s43, F32, 4), values(s3, F32, 5)
    r1 = a + b
    r2 = r1 / a
    r5 = np.maximum(np.broadcast_to(b, s243) - r2, r1)
    r8 = r5.reshape(s83) / b + b
    return text, (a, b), [r8, r2, r1]


CHAINS["graph"] = _graph


def _chain_fma_candidates(dtype: type) -> tuple[str, tuple[np.ndarray, ...], list[np.ndarray]]:
    """mul -> add, silu -> add, mish -> sub: an fmul of one op feeding an fadd of the next.

    Fused, LLVM could contract each pair into one FMA (single rounding) if the
    ops carried fast-math `contract`; they must not, so fused == unfused == NumPy.
    """
    s = (2000,)
    t = ir_type(s, dtype)
    text = func_ir(
        [(s, dtype), (s, dtype), (s, dtype)],
        [
            f"%m = rlx.mul %a0, %a1 : ({t}, {t}) -> {t}",
            f"%s = rlx.add %m, %a2 : ({t}, {t}) -> {t}",
            f"%u = rlx.silu %a0 : ({t}) -> {t}",
            f"%v = rlx.add %u, %a2 : ({t}, {t}) -> {t}",
            f"%h = rlx.mish %a1 : ({t}) -> {t}",
            f"%w = rlx.sub %h, %a2 : ({t}, {t}) -> {t}",
        ],
        [("%s", s, dtype), ("%v", s, dtype), ("%w", s, dtype)],
    )
    rng = np.random.default_rng(11)
    a, b = (rng.uniform(-3, 3, s).astype(dtype) for _ in range(2))
    c = rng.uniform(-3, 3, s).astype(dtype)
    return text, (a, b, c), [(a * b).astype(dtype) + c]


CHAINS["fma-candidates-f32"] = lambda: _chain_fma_candidates(F32)
CHAINS["fma-candidates-f64"] = lambda: _chain_fma_candidates(F64)


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_fused_equals_unfused_equals_reference(chain: str) -> None:
    text, args, want = CHAINS[chain]()
    fused = compile_text(text, None)
    unfused = compile_text(text, "")
    assert "rlx.elementwise_region" in fused.planned_ir  # fusion did happen
    assert "rlx.elementwise_region" not in unfused.planned_ir
    got_f, got_u = fused(*args), unfused(*args)
    for k, (f, u) in enumerate(zip(got_f, got_u)):
        assert bits_equal(f, u), f"result #{k}: fused {f} != unfused {u}"
    for other in ("canonicalize-broadcast", "fuse-elementwise"):
        for k, (f, o) in enumerate(zip(got_f, compile_text(text, other)(*args))):
            assert bits_equal(f, o), f"result #{k}: pipeline {other!r} differs"
    for k, (f, w) in enumerate(zip(got_f, want)):
        if w.dtype.kind == "f" and chain.startswith("float") and k == 0:
            assert ulp_error(f, w.astype(np.float64)).max() <= 4  # tanh (3 ULP) then an exact div
        elif w.dtype.kind == "f" and chain.startswith("unary"):
            # exp/sigmoid errors (1-2 ULP) pass through sqrt/recip: compare loosely
            np.testing.assert_allclose(f, w, rtol=8 * np.finfo(f.dtype).eps)
        else:
            assert bits_equal(f, w), f"result #{k}: {f} vs {w}"
