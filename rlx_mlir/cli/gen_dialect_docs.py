"""Writes docs/dialect.md, the `rlx` dialect reference, from the op classes.

    python -m rlx_mlir.cli.gen_dialect_docs            # rewrite docs/dialect.md
    python -m rlx_mlir.cli.gen_dialect_docs --check    # exit 1 if it is stale

As MLIR's and IREE's dialect references are generated from their ODS
definitions, this page is generated from what the verifier itself reads: each
op's IRDL definition (operands, results, properties with their defaults,
regions, traits), its docstring, its `ALLOWED` element kinds and the
docstrings of the abstract family classes whose `verify_` it inherits. The
text lives in `dialects/`, so a new op or a changed rule shows up here by
running this module, and `tests/test_dialect_docs.py` fails until it is run.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from xdsl.dialects.builtin import ArrayOfConstraint, DenseArrayBase
from xdsl.irdl import (
    AnyAttr,
    AttrConstraint,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OpDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
)
from xdsl.irdl.operations import OptionalDef, VariadicDef
from xdsl.traits import HasCanonicalizationPatternsTrait, OpTrait

from rlx_mlir import dtypes
from rlx_mlir.dialects import common
from rlx_mlir.dialects.rlx import RLX

DOC = Path(__file__).resolve().parents[2] / "docs" / "dialect.md"
COMMAND = "python -m rlx_mlir.cli.gen_dialect_docs"

FAMILY_ORDER = ("rlx", "elementwise", "region", "movement", "contraction", "reduction", "recurrent", "scan")
"""Sections in reading order: the shape ops and the dialect first, then the families."""


# ---------------------------------------------------------------------------
# IRDL definitions -> short text
# ---------------------------------------------------------------------------


def constraint_text(constr: object) -> str:
    """A constraint as a reader writes it: `tensor`, `i64`, `array of affine_map`."""
    if isinstance(constr, RangeLengthConstraint):
        return constraint_text(constr.constraint)
    if isinstance(constr, RangeOf):
        return constraint_text(constr.constr)
    if isinstance(constr, AnyAttr):
        return "any type"
    if isinstance(constr, BaseAttr) and constr.attr is DenseArrayBase:
        return "array<i64>"  # every rlx list property; `common.array_values` checks the i64
    if isinstance(constr, BaseAttr):
        return str(getattr(constr.attr, "name", constr.attr.__name__))
    if isinstance(constr, EqAttrConstraint):
        return str(constr.attr)
    if isinstance(constr, ArrayOfConstraint):
        return f"array of {constraint_text(constr.elem_range_constraint)}"
    if isinstance(constr, ParamAttrConstraint):
        params = [p for p in constr.param_constrs if isinstance(p, EqAttrConstraint)]
        if constr.base_attr.name == "integer" and params:
            width = params[0].attr
            return "bool (i1)" if str(width) == "i1" else str(width)
        if constr.base_attr.name == "float" and len(constr.param_constrs) == 2:
            return constraint_text(constr.param_constrs[1])
        return constr.base_attr.name
    assert isinstance(constr, AttrConstraint), constr
    return str(constr)


def _arity(definition: object) -> str:
    if isinstance(definition, OptionalDef):
        return " (optional)"
    if isinstance(definition, VariadicDef):
        return " (variadic)"
    return ""


def value_lines(values: Iterable[tuple[str, object]]) -> Iterator[str]:
    for name, definition in values:
        yield f"`{name}`: {constraint_text(definition.constr)}{_arity(definition)}"  # type: ignore[attr-defined]


def property_lines(op_def: OpDef) -> Iterator[str]:
    for name, prop in (*op_def.properties.items(), *op_def.attributes.items()):
        default = getattr(prop, "default_value", None)
        suffix = f", default `{default}`" if default is not None else ""
        yield f"`{name}`: {constraint_text(prop.constr)}{suffix}"


def trait_lines(op_def: OpDef) -> list[str]:
    """Trait names, sorted (xDSL keeps an op's traits in a set)."""
    return sorted(_trait_texts(op_def))


def _trait_texts(op_def: OpDef) -> Iterator[str]:
    for trait in op_def.traits:
        if isinstance(trait, HasCanonicalizationPatternsTrait):
            patterns = ", ".join(type(p).__name__ for p in trait.get_canonicalization_patterns())
            yield f"canonicalized by {patterns}"
        elif isinstance(trait, OpTrait):
            yield type(trait).__name__


def allowed_text(op: type[IRDLOperation]) -> str | None:
    """The element kinds (or types) the verifier accepts, from the class's `ALLOWED`."""
    allowed = getattr(op, "ALLOWED", None)
    if allowed is None:
        return None
    names = (getattr(a, "value", a) for a in allowed)
    return ", ".join(sorted(str(n) for n in names))


# ---------------------------------------------------------------------------
# classes -> sections
# ---------------------------------------------------------------------------


def docstring(obj: object) -> str:
    return inspect.cleandoc(obj.__doc__ or "")


def family_bases(op: type[IRDLOperation]) -> list[type]:
    """The documented rlx classes the op inherits its rules from, nearest first."""
    return [c for c in op.__mro__[1:] if c.__module__.startswith("rlx_mlir.dialects") and c.__doc__]


def module_key(op: type) -> str:
    return op.__module__.rsplit(".", 1)[-1]


def op_section(op: type[IRDLOperation]) -> list[str]:
    op_def = op.get_irdl_definition()
    lines = [f"### `{op_def.name}`", "", f"`{op.__name__}`"]
    bases = family_bases(op)
    if bases:
        lines[-1] += " (family: " + " → ".join(f"`{b.__name__}`" for b in bases) + ")"
    lines += ["", _fence_fragments(docstring(op)), ""]
    allowed = allowed_text(op)
    facts: list[tuple[str, list[str]]] = [
        ("element kinds", [allowed] if allowed else []),
        ("operands", list(value_lines(op_def.operands))),
        ("results", list(value_lines(op_def.results))),
        ("properties", list(property_lines(op_def))),
        ("regions", [f"`{name}`{_arity(r)}" for name, r in op_def.regions]),
        ("traits", trait_lines(op_def)),
    ]
    lines += [f"- {label}: {'; '.join(items)}" for label, items in facts if items]
    return [*lines, ""]


def family_section(key: str, ops: list[type[IRDLOperation]]) -> list[str]:
    module = sys.modules[ops[0].__module__]
    title, _, body = docstring(module).partition("\n")
    lines = [f"## {title.rstrip('.')}", "", f"Source: `dialects/{key}.py`.", ""]
    if body.strip():
        lines += [_fence_fragments(body.strip()), ""]
    bases: dict[type, None] = {}
    for op in ops:
        bases.update(dict.fromkeys(b for b in family_bases(op) if b.__module__ == module.__name__))
    if bases:
        lines += ["Families (the rules every op of the family is verified by):", ""]
        lines += [f"- `{b.__name__}`: {' '.join(docstring(b).split())}" for b in bases]
        lines.append("")
    for op in ops:
        lines += op_section(op)
    return lines


def _fence_fragments(text: str) -> str:
    """Docstring IR that is not a whole module is marked `mlir fragment`, so the
    doc-example test checks its op names instead of parsing it."""
    out: list[str] = []
    block: list[str] | None = None
    for line in text.splitlines():
        if block is None and line.strip() == "```mlir":
            block = [line]
        elif block is not None:
            block.append(line)
            if line.strip() == "```":
                if not any("func.func" in b or "builtin.module" in b for b in block):
                    block[0] = block[0].replace("```mlir", "```mlir fragment")
                out += block
                block = None
        else:
            out.append(line)
    return "\n".join(out + (block or []))


def element_type_section() -> list[str]:
    """The element types, from `rlx_mlir/dtypes.py:DTYPES` (the one table of types)."""
    lines = [
        "## Element types",
        "",
        "Source: `rlx_mlir/dtypes.py`. A kind named in an op's rules covers these types:",
        "",
    ]
    lines += ["| kind | IR type | NumPy dtype |", "| --- | --- | --- |"]
    lines += [f"| {d.kind.value} | `{d.name}` | `{d.numpy.name}` |" for d in dtypes.DTYPES]
    return [*lines, ""]


def shared_rules_section() -> list[str]:
    """The classes and traits of `dialects/common.py` the families build on."""
    shared = [common.TensorOp, common.NeedsScratch, common.ArenaConstant]
    lines = ["## Shared rules", "", "Source: `dialects/common.py`.", ""]
    lines += [f"- `{c.__name__}`: {' '.join(docstring(c).split())}" for c in shared]
    lines += [f"- Every operand and result type: {' '.join(docstring(common.check_value_type).split())}"]
    return [*lines, ""]


def render() -> str:
    by_module: dict[str, list[type[IRDLOperation]]] = {}
    for op in RLX.operations:
        assert issubclass(op, IRDLOperation), op
        by_module.setdefault(module_key(op), []).append(op)
    keys = [k for k in FAMILY_ORDER if k in by_module] + sorted(set(by_module) - set(FAMILY_ORDER))
    count = sum(len(v) for v in by_module.values())
    lines = [
        "# The `rlx` dialect",
        "",
        f"<!-- Generated by `{COMMAND}` from the op classes in dialects/. Do not edit. -->",
        "",
        f"{count} ops in {len(keys)} families. Each op below lists its docstring, the",
        "element kinds its verifier accepts, its operands, results, properties",
        "(with defaults), regions and traits; the family classes above each group",
        "hold the verifier rules the ops share. Every op also has the generic form",
        '(`"rlx.add"(%a, %b) : (...) -> ...`); both round-trip.',
        "",
        "Contents: [element types](#element-types), [shared rules](#shared-rules), "
        + ", ".join(f"[{k}](#{_anchor(by_module[k])})" for k in keys),
        "",
        *element_type_section(),
        *shared_rules_section(),
    ]
    for key in keys:
        lines += family_section(key, by_module[key])
    return "\n".join(lines).rstrip() + "\n"


def _anchor(ops: list[type[IRDLOperation]]) -> str:
    """GitHub's anchor of a family heading: lower case, punctuation dropped, spaces to dashes."""
    title = docstring(sys.modules[ops[0].__module__]).partition("\n")[0].rstrip(".")
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if docs/dialect.md differs from the generated text"
    )
    parser.add_argument("--output", type=Path, default=DOC, help="where to write (default: docs/dialect.md)")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
