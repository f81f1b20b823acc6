"""Splat dense literals read as one value, whatever the syntax.

`dense<1.0> : tensor<1000000000000xf32>` is one value and a shape. xDSL's
attribute parser expands it to every element (a list of 10^12 floats, then
the packed bytes), so rlx reads it here instead, for both spellings of
`rlx.constant`: the custom form (`ConstantOp.parse`) and the generic form
(`RlxParser` in `dialects/parser.py`). A splat is a number, `true`/`false`,
a hex number, a float's bits (`dense<0xff800000>`, the form xDSL prints a
non-finite float in), or a hex string of exactly one element
(`dense<"0x0000803F">`); it becomes a rank-0 attribute, and the constant's result
type keeps the shape (`ConstantOp.is_splat`).

A splat this module does not take (complex values, types outside the dtype
table) is left to xDSL, which expands it; `EXPANSION_LIMIT` bounds what
`RlxParser` lets it expand. Tested by tests/test_splat_parsing.py and
tests/lit/canonicalize/generic-splat.mlir.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import BytesAttr, ContainerType, DenseIntOrFPElementsAttr, ShapedType, TensorType
from xdsl.parser import Parser

from rlx_mlir import dtypes
from rlx_mlir.dtypes import Kind

EXPANSION_LIMIT = 1 << 26
"""Bytes a splat xDSL would expand (one rlx.constant does not keep as one value) may take: 64 MiB."""


@dataclass(frozen=True)
class Splat:
    """One value (a rank-0 attribute) and the tensor type it fills."""

    value: DenseIntOrFPElementsAttr
    type: TensorType


def parse_splat(parser: Parser) -> Splat | None:
    """`dense<LITERAL> : TYPE` as one value; None, with the parser where it
    was, for any other form (a list, a complex or unsupported element type)."""
    start = parser.pos
    found = _splat_literal(parser) if parser.parse_optional_keyword("dense") else None
    if found is None:
        parser._resume_from(start)  # xDSL's own backtracking
        return None
    literal, span = found
    parser.parse_punctuation(":", " in dense attribute")
    result_type = parser.parse_type()
    if not isinstance(result_type, TensorType):
        parser.raise_error(f"rlx.constant takes a tensor type, got {result_type}")
    element = result_type.get_element_type()
    dtype = dtypes.lookup(element)
    if dtype is None or dtype.kind is Kind.COMPLEX:  # xDSL's parser and the verifier say what is wrong
        parser._resume_from(start)
        return None
    scalar = TensorType(element, [])
    if isinstance(literal, str):
        data = _hex_bytes(parser, literal, span)
        if len(data) != element.compile_time_size:  # a hex list of several elements: not a splat
            parser._resume_from(start)
            return None
        return Splat(DenseIntOrFPElementsAttr(scalar, BytesAttr(data)), result_type)
    if dtype.kind is Kind.FLOAT and is_hex_literal(parser.lexer.input.content[span[0] : span[1]]):
        data = _bit_pattern(parser, literal, dtype, span).to_bytes(element.compile_time_size, "little")
        return Splat(DenseIntOrFPElementsAttr(scalar, BytesAttr(data)), result_type)
    value = _literal_value(parser, literal, dtype, span)
    return Splat(DenseIntOrFPElementsAttr.from_list(scalar, [value]), result_type)


def splat_bytes(parser: Parser) -> int | None:
    """The bytes xDSL would expand the splat `<LITERAL> : TYPE` ahead into (after
    `dense`), or None if it is no splat; the parser stays where it was."""
    start = parser.pos
    try:
        found = _splat_literal(parser)
        if found is None:
            parser._resume_from(start)
            if not _complex_splat_literal(parser):
                return None
        if parser.parse_optional_punctuation(":") is None:
            return None
        shaped = parser.parse_optional_type()
        if not isinstance(shaped, ShapedType) or not isinstance(shaped, ContainerType):  # tensor, vector, memref
            return None
        size = getattr(shaped.get_element_type(), "compile_time_size", 8)
        if found is not None and isinstance(found[0], str) and len(found[0]) != 2 + 2 * size:
            return None  # hex data of several elements: xDSL checks its size, expanding nothing
        return math.prod(shaped.get_shape()) * size
    finally:
        parser._resume_from(start)


def _splat_literal(parser: Parser) -> tuple[int | float | str, tuple[int, int]] | None:
    """`<LITERAL>` (after `dense`): the literal and its span, or None."""
    if parser.parse_optional_punctuation("<") is None:
        return None
    begin = parser.pos
    literal: int | float | str | None = parser.parse_optional_number(allow_boolean=True)
    if literal is None:
        literal = parser.parse_optional_str_literal()
    span = (begin, parser.pos)
    if literal is None or parser.parse_optional_punctuation(">") is None:
        return None
    return literal, span


def is_hex_literal(text: str) -> bool:
    """Whether a number's text is hex (`0x...`, `-0x...`): a float type reads it as bits."""
    return text.lstrip("-")[:2] in ("0x", "0X")


def _bit_pattern(parser: Parser, literal: int | float | str, dtype: dtypes.DType, span: tuple[int, int]) -> int:
    """A hex number as a float's bits, as MLIR reads it and xDSL prints a non-finite
    splat (`dense<0xff800000> : tensor<f32>` is -inf), not as the integer's value."""
    assert isinstance(literal, int)
    if (complaint := hex_float_complaint(literal, dtype.bits, dtype.name)) is not None:
        parser.raise_error(complaint, *span)
    return literal


def hex_float_complaint(bits: int, bitwidth: int, type_name: str) -> str | None:
    """Why a hex literal of a float type is not one of its bit patterns, or None: the
    rule of splats and of list elements alike (`RlxParser`), so both say the same."""
    if bits < 0 or bits.bit_length() > bitwidth:
        return f"hexadecimal float {bits:#x} does not fit in {type_name}"
    return None


def _complex_splat_literal(parser: Parser) -> bool:
    """Whether `<(RE, IM)>` (after `dense`) was read."""
    return (
        parser.parse_optional_punctuation("<") is not None
        and parser.parse_optional_punctuation("(") is not None
        and parser.parse_optional_number() is not None
        and parser.parse_optional_punctuation(",") is not None
        and parser.parse_optional_number() is not None
        and parser.parse_optional_punctuation(")") is not None
        and parser.parse_optional_punctuation(">") is not None
    )


def _hex_bytes(parser: Parser, literal: str, span: tuple[int, int]) -> bytes:
    try:
        if not literal.startswith("0x"):
            raise ValueError(literal)
        return bytes.fromhex(literal[2:])
    except ValueError:
        parser.raise_error("Hex string in denseAttr is invalid", *span)


def _literal_value(parser: Parser, literal: float, dtype: dtypes.DType, span: tuple[int, int]) -> float:
    """The literal as a value of `dtype`: in range, or a parse error at the literal naming both."""
    if dtype.kind is Kind.FLOAT:
        largest = dtype.largest
        if abs(literal) > largest:
            shown = "a literal beyond f64's range" if math.isinf(literal) else literal  # the lexer made it inf
            parser.raise_error(f"{shown} is out of range for {dtype.name} (largest finite value {largest:g})", *span)
        return float(literal)
    if isinstance(literal, float):
        parser.raise_error(f"{literal} is not an integer, as {dtype.name} needs", *span)
    low, high = (0, 1) if dtype.kind is Kind.BOOL else dtype.int_range
    if not low <= literal <= high:
        parser.raise_error(f"{literal} is out of range for {dtype.name} ({low}..{high})", *span)
    return literal
