"""`RlxParser`: xDSL's parser, with no splat expanded beyond a bound.

The custom form `rlx.constant dense<1.0> : tensor<NxT>` reads its splat as
one value (`dialects/splat.py`); this parser does the same for the generic
form, which xDSL parses without asking the op:

```mlir
%c = "rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
```

becomes the constant the custom form gives (a rank-0 value, the result type
holding the shape), so a 10^12-element splat parses, compiles and plans as one
value in either syntax. The generic form is taken only as written above (the
value as a property or as the first attribute, the declared type equal to the
one result type); any other spelling goes to xDSL's parser, as does any splat
elsewhere, which is refused past `EXPANSION_LIMIT` bytes rather than expanded.
Every entry point parses with it: `rlx.parse`/`rlx.compile` and rlx-opt. It also
parses each spelling of a simple tensor type once (`SIMPLE_TENSOR_TYPE`).

Resources (`dialects/resources.py`): `dense_resource<w>` handles are kept per
parse (xDSL's builtin resource table is process-wide and renames a handle it
has seen before, so a second parse of the same text would lose its blobs),
the `{-# dialect_resources: { builtin: {...} } #-}` trailer is read into this
parser, or the blobs are given (`blobs=`, the unpickling of an executable),
and at the end of the module every handle is bound to its bytes: a handle
with no blob, or a blob that does not fit its tensor, is an error at the handle.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyFloat,
    ComplexType,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    RankedStructure,
    ShapedType,
    TensorType,
)
from xdsl.ir import Attribute, Operation, TypeAttribute
from xdsl.parser import AttrParser, Parser
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from rlx_mlir.dialects.resources import ResourceElementsAttr, blob_from_hex, viewed_as
from rlx_mlir.dialects.rlx import ConstantOp
from rlx_mlir.dialects.splat import (
    EXPANSION_LIMIT,
    Splat,
    hex_float_complaint,
    is_hex_literal,
    parse_splat,
    splat_bytes,
)

SIMPLE_TENSOR_TYPE = re.compile(r"tensor<(?:[0-9]+x)*[a-z][a-zA-Z0-9]*>")
"""A static tensor type of a plain element type, spelled in full: the type of
nearly every value, parsed once per spelling (`RlxParser.parse_optional_type`)."""
_SIMPLE_TENSOR_TYPE_BYTES = re.compile(SIMPLE_TENSOR_TYPE.pattern.encode())


class _BitPattern(Parser._TensorLiteralElement):
    """A hex tensor literal element: a float's bits, an integer's value."""

    def to_type(self, parser: AttrParser, type: AnyFloat | IntegerType | IndexType | ComplexType) -> object:
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        bits = self.value
        assert isinstance(bits, int)
        if (complaint := hex_float_complaint(bits, type.bitwidth, str(type))) is not None:
            parser.raise_error(complaint, at_position=self.span)
        return next(type.iter_unpack(bits.to_bytes(type.compile_time_size, "little")))


class RlxParser(Parser):
    """xDSL's `Parser`; see the module docstring for what it reads otherwise."""

    def __init__(self, *args: object, blobs: Mapping[str, np.ndarray] | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._tensor_types: dict[str | bytes, TypeAttribute] = {}
        self._handles: dict[str, Span] = {}
        """Each resource handle the text uses, at its first use."""
        self._blobs: dict[str, tuple[str | np.ndarray, Span | None]] = {k: (v, None) for k, v in (blobs or {}).items()}
        """Each blob (hex text, or an array given) by handle, with where the trailer holds it."""

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        module = super().parse_module(allow_implicit_module)
        if self._handles:
            self._bind_resources(module)
        return module

    def _parse_builtin_dense_resource_attr(self) -> DenseResourceAttr:
        """`dense_resource<handle> : type`, the handle noted for binding (no global table)."""
        self.parse_characters("<", " in dense_resource attribute")
        start = self.pos
        handle = self.parse_identifier(context_msg=" for resource handle")
        self._handles.setdefault(handle, Span(start, self.pos, self.lexer.input))
        self.parse_characters(">", " in dense_resource attribute")
        self.parse_characters(":", " in dense_resource attribute")
        t = self.parse_type()
        if not isinstance(t, ShapedType):
            self.raise_error(f"dense resource should have a shaped type, got: {t}")
        return DenseResourceAttr.from_params(handle, t)

    def _parse_resource(self, dialect_name: str, interface: OpAsmDialectInterface) -> None:
        """One `handle: "0x..."` entry of the trailer; the builtin dialect's are kept here."""
        if dialect_name != "builtin":
            return super()._parse_resource(dialect_name, interface)
        start = self.pos
        handle = self.parse_identifier(context_msg=" for resource handle")
        where = Span(start, self.pos, self.lexer.input)
        self.parse_punctuation(":", "expected `:`")
        self._blobs[handle] = (self.parse_str_literal(" as a resource blob"), where)

    def _bind_resources(self, module: ModuleOp) -> None:
        """Every `dense_resource` property bound to its blob (`ResourceElementsAttr`)."""
        bound: dict[tuple[str, Attribute], ResourceElementsAttr] = {}
        for op in module.walk():
            for name, value in op.properties.items():
                if isinstance(value, DenseResourceAttr):
                    key = (value.resource_handle.data, value.type)
                    if key not in bound:
                        bound[key] = self._bound(*key)
                    op.properties[name] = bound[key]

    def _bound(self, handle: str, t: Attribute) -> ResourceElementsAttr:
        if handle not in self._blobs:
            self.raise_error(
                f"dense_resource<{handle}> has no blob: the file's dialect_resources trailer does not "
                "hold it (IR printed without its weights cannot be parsed back; rlx-opt prints large "
                "blobs with -t 'mlir{resources_up_to=-1}')",
                self._handles[handle],
            )
        blob, where = self._blobs[handle]
        assert isinstance(t, TensorType), "the verifier names any other type"
        try:
            array = blob_from_hex(blob, t) if isinstance(blob, str) else viewed_as(blob, t)
            self._blobs[handle] = (array, where)  # parsed once, however many types view it
            return ResourceElementsAttr.from_array(handle, t, array)
        except (ValueError, KeyError) as error:
            self.raise_error(f"resource '{handle}': {error}", where or self._handles[handle])

    def parse_optional_type(self) -> TypeAttribute | None:
        """xDSL's, with each spelling of a simple tensor type parsed once: a type is
        an immutable value, and parsing `tensor<256xf32>` token by token was
        two fifths of the time to parse an elementwise chain (each op names
        its types two or three times)."""
        token = self._current_token
        if token.kind is not MLIRTokenKind.BARE_IDENT or token.text != "tensor":
            return super().parse_optional_type()
        content = self.lexer.input.content
        pattern = SIMPLE_TENSOR_TYPE if isinstance(content, str) else _SIMPLE_TENSOR_TYPE_BYTES
        spelled = pattern.match(content, token.span.start)
        if spelled is None:
            return super().parse_optional_type()
        known = self._tensor_types.get(spelled.group())
        if known is not None:
            self._resume_from(spelled.end())
            return known
        parsed = super().parse_optional_type()
        if parsed is not None:
            self._tensor_types[spelled.group()] = parsed
        return parsed

    def _parse_generic_operation(self, op_type: type[Operation]) -> Operation:
        # xDSL's one hook for the generic form: it parses operands, properties
        # and attributes before it knows anything of the op but its class.
        if op_type is ConstantOp:
            start = self.pos
            if (op := self._parse_generic_splat_constant()) is not None:
                return op
            self._resume_from(start)
        return super()._parse_generic_operation(op_type)

    def _parse_generic_splat_constant(self) -> ConstantOp | None:
        """`() <{value = SPLAT}> {attributes}? : () -> TYPE` or `() {value = SPLAT, ...} : () -> TYPE`
        after the op name, SPLAT declaring TYPE; None for any other form."""
        if self.parse_optional_punctuation("(") is None or self.parse_optional_punctuation(")") is None:
            return None
        as_property = self.parse_optional_punctuation("<") is not None
        if self.parse_optional_punctuation("{") is None:
            return None
        splat = self._parse_value_entry()
        if splat is None:
            return None
        if as_property:
            if self.parse_optional_punctuation("}") is None or self.parse_optional_punctuation(">") is None:
                return None
            attributes = self.parse_optional_attr_dict()
        else:
            attributes = dict(
                self.parse_comma_separated_list(self.Delimiter.NONE, self._parse_attribute_entry)
                if self.parse_optional_punctuation(",")
                else []
            )
            self.parse_punctuation("}")
            if "value" in attributes:
                self.raise_error("Duplicate key 'value' in attribute dictionary")
        self.parse_punctuation(":", "function type signature expected")
        signature = self.parse_function_type()
        if signature.inputs.data or list(signature.outputs.data) != [splat.type]:
            return None  # xDSL's parser and the verifier say what is wrong
        op = ConstantOp(splat.value, splat.type)
        op.attributes.update(attributes)
        if (location := self.parse_optional_location()) is not None:
            op.location = location
        return op

    def _parse_value_entry(self) -> Splat | None:
        """`value = SPLAT`, or None."""
        if self.parse_optional_identifier_or_str_literal() != "value" or self.parse_optional_punctuation("=") is None:
            return None
        return parse_splat(self)

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        """A hex integer in a dense literal is a float's bit pattern, as MLIR reads it
        and xDSL prints a non-finite float (`0xff800000` is -inf); xDSL would read it
        as the integer's value (4286578688.0)."""
        element = super()._parse_tensor_literal_element()
        if is_hex_literal(element.span.text):
            return _BitPattern(element.is_negative, element.value, element.span)
        if isinstance(element.value, float) and math.isinf(element.value):  # the lexer made a decimal inf
            self.raise_error(
                "a literal beyond f64's range; an infinity is written as its bits (0xff800000 is -inf in f32)",
                at_position=element.span,
            )
        return element

    def parse_dense_int_or_fp_elements_attr(self, type: RankedStructure[Attribute] | None) -> DenseIntOrFPElementsAttr:
        if type is None and (size := splat_bytes(self)) is not None and size > EXPANSION_LIMIT:
            self.raise_error(
                f"a splat dense literal of {size} bytes: only the value of an rlx.constant is kept as one "
                f"value, and xDSL would expand this one in memory (at most {EXPANSION_LIMIT} bytes)"
            )
        return super().parse_dense_int_or_fp_elements_attr(type)  # type: ignore[arg-type]
