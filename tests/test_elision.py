"""Weights are not printed where no one reads them (rlx_mlir/dialects/elision.py):
the cache key of a compiled ModuleOp names each large constant by the digest
of its bytes, and `Executable.planned_ir` elides them; pickling still prints
the module in full, so an unpickled executable computes the same."""

from __future__ import annotations

import pickle

import numpy as np
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir.compiler import parse
from rlx_mlir.dialects.elision import elided_text, key_text


def weighted(weights: np.ndarray) -> ModuleOp:
    """x + a constant of `weights`' values, [len(weights)] f32."""
    t = f"tensor<{weights.size}xf32>"
    values = ", ".join(repr(float(v)) for v in weights)
    return parse(
        f"func.func @f(%x: {t}) -> {t} {{\n"
        f"  %w = rlx.constant dense<[{values}]> : {t}\n"
        f"  %y = rlx.add %x, %w : ({t}, {t}) -> {t}\n"
        f"  func.return %y : {t}\n}}"
    )


def test_the_key_names_a_large_constant_by_the_digest_of_its_bytes() -> None:
    weights = np.arange(2000, dtype=np.float32)
    text = key_text(weights_module := weighted(weights))
    assert "dense_resource<blake2b_" in text and 'dense<"0x' not in text
    assert key_text(weighted(weights)) == text
    changed = weights.copy()
    changed[1234] = -1
    assert key_text(weighted(changed)) != text
    assert 'dense<"0x' in str(weights_module)  # the module itself is untouched (printed in hex)


def test_a_small_constant_is_printed_in_full() -> None:
    text = key_text(weighted(np.arange(8, dtype=np.float32)))
    assert "dense<[0.000000e+00, 1.000000e+00" in text and "dense_resource" not in text


def test_planned_ir_elides_large_constants_and_the_executable_still_pickles() -> None:
    weights = np.linspace(-1, 1, 3000, dtype=np.float32)
    exe = rlx.compile(weighted(weights))
    assert "dense_resource<__elided__> : tensor<3000xf32>" in exe.planned_ir
    assert elided_text(weighted(weights), elide_over=4000) == str(weighted(weights))
    x = np.ones(3000, dtype=np.float32)
    again = pickle.loads(pickle.dumps(exe))
    np.testing.assert_array_equal(again(x)[0], x + weights)
    np.testing.assert_array_equal(exe(x)[0], x + weights)
