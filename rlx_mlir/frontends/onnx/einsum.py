"""Reading an ONNX Einsum equation (NumPy's einsum notation) into one label per
axis of each operand and of the output, checked against the operands' shapes.

- Terms are separated by ',', the output follows '->'; spaces are ignored.
- Labels are ASCII letters. A label repeated in one term takes a diagonal; a
  label missing from the output is summed.
- '...' stands for the axes a term does not name. Those axes are aligned on
  the right across terms and broadcast (size 1 against n), as in NumPy. The
  ellipsis axes get the labels '.0', '.1', ... (no letter clashes with them).
- An explicit output names the ellipsis axes with '...' too (NumPy's rule).
- Without '->' the output is the ellipsis axes, then the letters that appear
  exactly once, sorted.
- Sizes of one label must agree or be 1 (broadcast).

`composed.py` builds the rlx ops from the result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rlx_mlir.frontends.onnx.context import Unsupported

ELLIPSIS = "..."


@dataclass(frozen=True)
class Equation:
    inputs: list[list[str]]
    """Each operand's axis labels, in axis order (repeats allowed: diagonals)."""
    output: list[str]
    """The output's axis labels, in axis order (distinct)."""


def parse_equation(text: str, shapes: Sequence[Sequence[int]]) -> Equation:
    """The labels of `text` for operands of these shapes; a malformed equation or
    one that does not fit the shapes is `Unsupported`, naming what is wrong."""
    equation = "".join(text.split())
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if not equation or len(terms) != len(shapes):
        raise Unsupported(f"equation '{text}' has {len(terms)} input term(s) for {len(shapes)} input(s)")
    for term in [*terms, rhs]:
        _check_term(term, text)
    widths = [len(shape) - len(term.replace(ELLIPSIS, "")) for term, shape in zip(terms, shapes)]
    for term, shape, width in zip(terms, shapes, widths):
        if width < 0 or (width > 0 and ELLIPSIS not in term):
            raise Unsupported(f"equation '{text}': term '{term}' does not label the {len(shape)} axes of its input")
    ellipsis = max((w for term, w in zip(terms, widths) if ELLIPSIS in term), default=0)
    if ellipsis and arrow and ELLIPSIS not in rhs:
        raise Unsupported(
            f"equation '{text}': the inputs' '...' axes are missing from the output (as NumPy, ONNX needs them)"
        )
    inputs = [_labels(term, width, ellipsis) for term, width in zip(terms, widths)]
    output = _labels(rhs, ellipsis, ellipsis) if arrow else _implicit_output(terms, ellipsis)
    _check_output(output, inputs, text)
    _check_sizes(inputs, shapes, text)
    return Equation(inputs, output)


def _check_term(term: str, text: str) -> None:
    letters = term.replace(ELLIPSIS, "", 1)
    if not all(c.isascii() and c.isalpha() for c in letters):
        raise Unsupported(f"equation '{text}': term '{term}' holds characters other than letters and one '...'")


def _labels(term: str, width: int, ellipsis: int) -> list[str]:
    """The term's labels, its `width` ellipsis axes labeled as the last of `ellipsis` ones."""
    before, dots, after = term.partition(ELLIPSIS)
    spread = [f".{ellipsis - width + k}" for k in range(width)] if dots else []
    return [*before, *spread, *after]


def _implicit_output(terms: list[str], ellipsis: int) -> list[str]:
    counts = Counter("".join(terms).replace(ELLIPSIS, ""))
    return [f".{k}" for k in range(ellipsis)] + sorted(c for c, n in counts.items() if n == 1)


def _check_output(output: list[str], inputs: list[list[str]], text: str) -> None:
    repeated = sorted({lb for lb in output if output.count(lb) > 1})
    if repeated:
        raise Unsupported(f"equation '{text}': the output repeats label(s) {', '.join(repeated)}")
    named = {lb for labels in inputs for lb in labels}
    missing = [lb for lb in output if lb not in named]
    if missing:
        raise Unsupported(f"equation '{text}': output label(s) {', '.join(missing)} name no input axis")


def _check_sizes(inputs: list[list[str]], shapes: Sequence[Sequence[int]], text: str) -> None:
    sizes: dict[str, set[int]] = {}
    for labels, shape in zip(inputs, shapes):
        for label, size in zip(labels, shape):
            sizes.setdefault(label, set()).add(int(size))
    for label, found in sizes.items():
        if len(found - {1}) > 1:
            name = "an ellipsis axis" if label.startswith(".") else f"label '{label}'"
            raise Unsupported(f"equation '{text}': {name} has sizes {sorted(found)}, which do not broadcast")
