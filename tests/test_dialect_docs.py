"""docs/dialect.md is generated from the op classes and must be current.

A failure here means an op class (docstring, operands, properties, allowed
element kinds, family rules) changed without regenerating the reference:
run `python -m rlx_mlir.cli.gen_dialect_docs` and commit docs/dialect.md.
"""

from __future__ import annotations

from pathlib import Path

from rlx_mlir.cli import gen_dialect_docs
from rlx_mlir.dialects.rlx import RLX

FIX = f"docs/dialect.md is stale: run `{gen_dialect_docs.COMMAND}` and commit the result"


def test_dialect_reference_is_current() -> None:
    assert gen_dialect_docs.DOC.read_text() == gen_dialect_docs.render(), FIX


def test_every_op_has_a_section_with_its_docstring() -> None:
    text = gen_dialect_docs.render()
    for op in RLX.operations:
        assert f"### `{op.name}`" in text, op.name
        assert gen_dialect_docs.docstring(op).splitlines()[0] in text, op.name


def test_sections_carry_the_verifier_facts() -> None:
    text = gen_dialect_docs.render()
    pad = text[text.index("### `rlx.pad`") :].split("\n### ", 1)[0]
    assert '`mode`: string, default `"constant"`' in pad
    assert "`before`: array<i64>" in pad
    assert "(family: `LayoutOp` → `MovementOp` → `TensorOp`)" in pad
    relu = text[text.index("### `rlx.relu`") :].split("\n### ", 1)[0]
    assert "- element kinds: float, int" in relu
    lstm = text[text.index("### `rlx.lstm`") :].split("\n### ", 1)[0]
    assert "`initial_state`: tensor (variadic)" in lstm


def test_check_flags_a_stale_file_and_accepts_a_fresh_one(tmp_path: Path, capsys) -> None:
    out = tmp_path / "dialect.md"
    out.write_text(gen_dialect_docs.render().replace("rlx.tanh", "rlx.tanh_old", 1))
    assert gen_dialect_docs.main(["--check", "--output", str(out)]) == 1
    assert gen_dialect_docs.COMMAND in capsys.readouterr().err
    assert gen_dialect_docs.main(["--output", str(out)]) == 0
    assert gen_dialect_docs.main(["--check", "--output", str(out)]) == 0
