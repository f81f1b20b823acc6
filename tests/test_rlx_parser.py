"""RlxParser reads what xDSL's parser reads, faster, with splats kept one value.

Its simple-tensor-type memo (`dialects/parser.py`) must not change any parse:
every lit input parses to the same printed module as with xDSL's `Parser`
(but generic rlx.constant splats, which only RlxParser keeps as one value,
tests/test_splat_parsing.py, resources, which only RlxParser binds to
their blobs, tests/test_resources.py, and hex float elements, which only
RlxParser reads as bits, rlx-opt/non-finite-constants.mlir), and errors
after a memoized type keep their line and column.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError as XdslParseError

import rlx_mlir as rlx
from rlx_mlir.context import make_context
from rlx_mlir.dialects.parser import RlxParser

LIT = Path(__file__).parent / "lit"


def chunks() -> list[tuple[str, str]]:
    found = []
    for path in sorted(LIT.rglob("*.mlir")):
        for k, chunk in enumerate(path.read_text().split("// -----")):
            if not any(marker in chunk for marker in ('"rlx.constant"', "dense_resource<", "dense<[0.0, 0x")):
                found.append((f"{path.relative_to(LIT)}#{k + 1}", chunk))
    return found


def printed(parser: type[Parser], text: str, as_bytes: bool) -> str:
    try:
        return str(parser(make_context(), text.encode() if as_bytes else text, "<input>").parse_module())
    except XdslParseError as error:
        return f"error: {error}"
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def test_every_lit_input_parses_as_xdsl_parses_it() -> None:
    cases = chunks()
    assert len(cases) > 300
    for as_bytes in (False, True):  # rlx.parse gives text, rlx-opt bytes
        differ = [name for name, text in cases if printed(RlxParser, text, as_bytes) != printed(Parser, text, as_bytes)]
        assert differ == []


@pytest.mark.parametrize("bad", [" : tensor<4xf32>", " tensor<4xf32>", ", tensor<4xf32>"])
def test_an_error_after_a_memoized_type_is_where_xdsl_puts_it(bad: str) -> None:
    t = "tensor<4xf32>"
    text = (
        f"func.func @f(%a: {t}) -> {t} {{\n  %n = rlx.neg %a : ({t}) -> {t}\n"
        f"  %m = rlx.neg %n : ({t}) -> {t}{bad}\n  func.return %m : {t}\n}}"
    )
    ours, xdsls = printed(RlxParser, text, False), printed(Parser, text, False)
    assert ours == xdsls
    assert ours.startswith("error: <input>:3:"), ours


def test_types_of_other_spellings_are_not_memoized() -> None:
    """A dynamic dimension, an encoding, a complex element: xDSL's parser reads them."""
    text = (
        "func.func @f(%a: tensor<4xcomplex<f32>>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        "  func.return %b : tensor<2x3xf32>\n}"
    )
    module = rlx.parse(text)
    assert "tensor<4xcomplex<f32>>" in str(module)
