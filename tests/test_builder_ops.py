"""The Builder's typed elementwise methods (rlx_mlir/builder_ops.py) match the dialect's op tables."""

from __future__ import annotations

import inspect

import pytest

import rlx_mlir as rlx
from rlx_mlir import builder_gen, builder_ops
from rlx_mlir.builder import Builder, UnknownOpError
from rlx_mlir.dialects import elementwise as ew


def test_generated_methods_are_current() -> None:
    """builder_ops.py is exactly what the generator writes for today's op tables."""
    assert inspect.getsource(builder_ops) == builder_gen.render(), (
        f"rlx_mlir/builder_ops.py is stale: run `{builder_gen.REGENERATE}`"
    )


OPS = [*ew.UNARY_OPS.items(), *ew.BINARY_OPS.items(), *ew.COMPARE_OPS.items()]


@pytest.mark.parametrize(("name", "op"), OPS, ids=[name for name, _ in OPS])
def test_every_elementwise_op_is_a_declared_method(name: str, op: type[ew.ElementwiseOp]) -> None:
    """A real method (grep and an IDE see it), with one SSAValue parameter per operand."""
    method = inspect.getattr_static(Builder, name)
    assert inspect.isfunction(method), f"Builder.{name} is not a declared method"
    operands = [p for p in inspect.signature(method).parameters if p != "self"]
    assert len(operands) == (1 if op in ew.UNARY_OPS.values() else 2)


def test_a_generated_method_appends_its_op() -> None:
    b = Builder("f")
    x = b.input((2, 3), "f32")
    y = b.input((3,), "f32")
    b.output(b.gelu(x), b.atan2(x, y), b.lt(x, y))
    kinds = [type(op) for op in b.module().walk() if isinstance(op, ew.ElementwiseOp)]
    assert kinds == [ew.GeluOp, ew.Atan2Op, ew.LtOp]


def test_an_unknown_method_is_the_builders_error() -> None:
    with pytest.raises(UnknownOpError, match="Builder has no op 'frobnicate'"):
        getattr(rlx.Builder(), "frobnicate")  # noqa: B009 - mypy rightly knows no such attribute
    assert not hasattr(rlx.Builder(), "frobnicate")


def test_every_op_a_graph_holds_has_a_method() -> None:
    """Every op of the dialect is a declared Builder method, except the fused regions and their
    terminator (dialects/region.py), which only the fusion passes make."""
    from rlx_mlir.dialects import region
    from rlx_mlir.dialects.rlx import RLX

    made_by_passes = {op for op in RLX.operations if op.__module__ == region.__name__}
    missing = [
        op.name
        for op in RLX.operations
        if op not in made_by_passes
        and not inspect.isfunction(inspect.getattr_static(Builder, op.name.removeprefix("rlx."), None))
    ]
    assert not missing, f"ops without a Builder method: {missing}"
    assert made_by_passes, "dialects/region.py holds the fused regions"
