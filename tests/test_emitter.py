"""The emitter builds the second and later ops of a shape through `create`,
copying the first one's properties and result types (`Emitter.made`): each
must equal the op its class's `__init__` would have made."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType, f16, f32, i1, i8, i32, i64
from xdsl.ir import Attribute, Block

from rlx_mlir.lowering.core import emitter
from rlx_mlir.lowering.core.emitter import Emitter

PTR = llvm.LLVMPointerType()
V8 = VectorType(f32, [8])
V8I = VectorType(i32, [8])


CASES: dict[str, tuple[tuple[Attribute, ...], Callable]] = {
    "fadd": ((f32, f32), lambda e, a: e.fadd(*a)),
    "fmul vector": ((V8, V8), lambda e, a: e.fmul(*a)),
    "fneg": ((f16,), lambda e, a: e.fneg(*a)),
    "fma": ((V8, V8, V8), lambda e, a: e.fma(*a)),
    "fcmp": ((f32, f32), lambda e, a: e.fcmp("olt", *a)),
    "add": ((i64, i64), lambda e, a: e.add(*a)),
    "shl vector": ((V8I, V8I), lambda e, a: e.shl(*a)),
    "udiv": ((i32, i32), lambda e, a: e.udiv(*a)),
    "or": ((i8, i8), lambda e, a: e.or_(*a)),
    "ashr": ((i32, i32), lambda e, a: e.ashr(*a)),
    "icmp vector": ((V8I, V8I), lambda e, a: e.icmp("sgt", *a)),
    "select": ((i1, f32, f32), lambda e, a: e.select(*a)),
    "bitcast": ((f32,), lambda e, a: e.bitcast(a[0], i32)),
    "fpext": ((V8,), lambda e, a: e.fpext(a[0], VectorType(f16, [8]))),
    "trunc": ((i64,), lambda e, a: e.itrunc(a[0], i8)),
    "zext": ((i8,), lambda e, a: e.zext(a[0], i32)),
    "element_ptr": ((PTR, i64), lambda e, a: e.element_ptr(a[0], a[1], f16)),
    "field_ptr": ((PTR,), lambda e, a: e.field_ptr(a[0], 3, V8)),
    "load": ((PTR,), lambda e, a: e.load(a[0], V8, alignment=4)),
    "store nontemporal": ((V8, PTR), lambda e, a: e.store(a[0], a[1], alignment=64, nontemporal=True)),
}


@pytest.mark.parametrize("name", CASES)
def test_an_op_made_from_its_shape_equals_its_init(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emitter, "_shapes", {})
    types, emit = CASES[name]
    block = Block(arg_types=types)
    e = Emitter(block)
    emit(e, block.args)  # through __init__: the shape's first
    emit(e, block.args)  # through create
    first, second = block.ops
    assert type(second) is type(first)
    assert second.properties == first.properties
    assert second.attributes == first.attributes
    assert [r.type for r in second.results] == [r.type for r in first.results]
    assert list(second.operands) == list(first.operands)
    assert str(second) == str(first)
    first.verify()
    second.verify()


PAIRS: dict[str, tuple[tuple[Attribute, ...], Callable, Callable]] = {
    "load alignment": ((PTR,), lambda e, a: e.load(a[0], V8, alignment=4), lambda e, a: e.load(a[0], V8, alignment=8)),
    "store nontemporal": ((V8, PTR), lambda e, a: e.store(a[0], a[1], 32), lambda e, a: e.store(a[0], a[1], 64, True)),
    "icmp predicate": ((i32, i32), lambda e, a: e.icmp("slt", *a), lambda e, a: e.icmp("sgt", *a)),
    "fcmp predicate": ((f32, f32), lambda e, a: e.fcmp("olt", *a), lambda e, a: e.fcmp("ogt", *a)),
    "field index": ((PTR,), lambda e, a: e.field_ptr(a[0], 1, V8), lambda e, a: e.field_ptr(a[0], 2, V8)),
    "cast target": ((i64,), lambda e, a: e.itrunc(a[0], i8), lambda e, a: e.itrunc(a[0], i32)),
    "operand type": (
        (i32, i32, V8I, V8I),
        lambda e, a: e.icmp("eq", a[0], a[1]),
        lambda e, a: e.icmp("eq", a[2], a[3]),
    ),
}


@pytest.mark.parametrize("name", PAIRS)
def test_a_shape_differing_in_one_argument_is_built_as_its_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shape's key holds every argument the op's `__init__` reads: an op
    that differs from an earlier one in one of them is not a copy of it."""
    types, first, second = PAIRS[name]
    monkeypatch.setattr(emitter, "_shapes", {})
    block = Block(arg_types=types)
    first(Emitter(block), block.args)
    second(Emitter(block), block.args)  # after `first` made its shape
    monkeypatch.setattr(emitter, "_shapes", {})
    alone = Block(arg_types=types)
    second(Emitter(alone), alone.args)  # through __init__
    made, want = block.last_op, alone.last_op
    assert made is not None and want is not None
    assert type(made) is type(want)
    assert made.properties == want.properties
    assert [r.type for r in made.results] == [r.type for r in want.results]
    assert [o.type for o in made.operands] == [o.type for o in want.operands]
