"""Measured choices (`rlx_mlir/autotune.py`): a long GDN or Mamba2 recurrence
runs the form, and a GEMM the kernel (emitted tiles or BLAS), that was faster
on this machine, measured at the first compile and kept in the disk cache;
tuned results equal untuned ones within the chunked forms' bound; without
measuring, builds are the model's, bit for bit."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import rlx_mlir as rlx
from rlx_mlir import autotune, disk_cache
from rlx_mlir.builder import Builder
from rlx_mlir.target import available_cpus, target
from rlx_mlir.tuning import NEVER, TUNING_ATTRIBUTE

GENEROUS = 30.0
"""A budget no test case exhausts, so every candidate is measured."""

CHUNKED_RTOL = 1e-4
"""The bound the chunked forms are tested to against the sequential ones."""


def gdn(seq: int, then_neg: bool = False) -> str:
    t, g = f"tensor<1x{seq}x2x16xf32>", f"tensor<1x{seq}x2xf32>"
    tail = f"  %n = rlx.neg %o : ({t}) -> {t}\n  func.return %n : {t}" if then_neg else f"  func.return %o : {t}"
    return f"""func.func @f(%q: {t}, %k: {t}, %v: {t}, %g: {g}, %beta: {g}) -> {t} {{
  %o = rlx.gated_delta_net %q, %k, %v, %g, %beta {{state_size = 16 : i64}} : ({t}, {t}, {t}, {g}, {g}) -> {t}
{tail}
}}"""


def mamba2(seq: int) -> str:
    x, dt, n = f"tensor<1x{seq}x2x8xf32>", f"tensor<1x{seq}x2xf32>", f"tensor<1x{seq}x2x16xf32>"
    return f"""func.func @f(%x: {x}, %dt: {dt}, %a: tensor<2xf32>, %b: {n}, %c: {n}) -> {x} {{
  %y = rlx.mamba2 %x, %dt, %a, %b, %c {{head_dim = 8 : i64, state_size = 16 : i64}} : ({x}, {dt}, tensor<2xf32>, {n}, {n}) -> {x}
  func.return %y : {x}
}}"""


BATCHED_MATMUL = """func.func @f(%a: tensor<512x32x64xf32>, %b: tensor<512x64x32xf32>) -> tensor<512x32x32xf32> {
  %c = rlx.matmul %a, %b : (tensor<512x32x64xf32>, tensor<512x64x32xf32>) -> tensor<512x32x32xf32>
  func.return %c : tensor<512x32x32xf32>
}"""


def matmul_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(2)
    return [
        rng.standard_normal((512, 32, 64)).astype(np.float32),
        rng.standard_normal((512, 64, 32)).astype(np.float32),
    ]


def gdn_inputs(seq: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, seq, 2, 16)).astype(np.float32) * 0.3 for _ in range(3))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    g = -rng.uniform(0.01, 0.5, (1, seq, 2)).astype(np.float32)
    beta = rng.uniform(0.1, 0.9, (1, seq, 2)).astype(np.float32)
    return [q, k, v, g, beta]


def mamba2_inputs(seq: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, seq, 2, 8)).astype(np.float32)
    dt = rng.uniform(0.01, 0.2, (1, seq, 2)).astype(np.float32)
    a = -rng.uniform(0.5, 2.0, 2).astype(np.float32)
    b, c = (rng.standard_normal((1, seq, 2, 16)).astype(np.float32) for _ in range(2))
    return [x, dt, a, b, c]


@pytest.mark.parametrize(
    ("text", "inputs", "labels"),
    [
        (gdn(256), gdn_inputs(256), {"sequential", "chunked"}),
        (mamba2(192), mamba2_inputs(192), {"blocked", "chunked"}),
        (BATCHED_MATMUL, matmul_inputs(), {"emitted", "blas"}),
    ],
    ids=["gdn", "mamba2", "matmul"],
)
def test_a_choice_is_measured_and_equals_the_model(text: str, inputs: list[np.ndarray], labels: set) -> None:
    tuned = rlx.compile(text, tune=GENEROUS)
    (decision,) = tuned.tuned
    assert decision.source == "measured" and set(decision.seconds) == labels
    assert decision.choice == min(decision.seconds, key=decision.seconds.__getitem__)
    model = rlx.compile(text, tune=False)
    assert model.tuned == [] and TUNING_ATTRIBUTE not in model.planned_ir
    np.testing.assert_allclose(tuned(*inputs)[0], model(*inputs)[0], rtol=CHUNKED_RTOL, atol=CHUNKED_RTOL)


def test_a_module_read_from_the_cache_reports_its_decisions_as_cached() -> None:
    """Compiling the same module again measures nothing: its decisions are read back."""
    text = gdn(352)
    first = rlx.compile(text, tune=GENEROUS)
    again = rlx.compile(text, tune=GENEROUS)
    assert again.cached["module"] and [d.source for d in first.tuned] == ["measured"]
    assert [(d.choice, d.source, d.seconds) for d in again.tuned] == [
        (d.choice, "cached", d.seconds) for d in first.tuned
    ]


def test_the_winner_is_kept_per_op_not_per_module() -> None:
    """Another module with the same op reads the decision instead of measuring."""
    first = rlx.compile(gdn(320), tune=GENEROUS)
    again = rlx.compile(gdn(320, then_neg=True), tune=GENEROUS)
    assert [d.source for d in again.tuned] == ["cached"]
    assert again.tuned[0].choice == first.tuned[0].choice


def wisdom_entry(text: str) -> str:
    """The disk-cache entry of the one recurrence of `text`, at this compile's target and threads."""
    from rlx_mlir.compiler import parse

    op = next(o for o in parse(text).walk() if type(o) in autotune.CHOICES)
    return autotune.wisdom_key(op, f"{target().key}|threads={available_cpus()}")


@pytest.mark.parametrize(("choice", "knob", "blas"), [("chunked", 0, True), ("sequential", NEVER, False)])
def test_the_stored_choice_is_the_form_that_runs(choice: str, knob: int, blas: bool) -> None:
    """A decision in the cache reaches that op's kernels: the chunked GDN form runs
    its chunk products as CBLAS GEMMs, the sequential form calls none."""
    text = gdn(384 if blas else 448)
    disk_cache.store("wisdom", wisdom_entry(text), json.dumps(choice).encode())
    exe = rlx.compile(text, tune=GENEROUS)
    assert [(d.choice, d.source) for d in exe.tuned] == [(choice, "cached")]
    assert f"gdn_chunked_min_seq = {knob} : i64" in exe.planned_ir
    assert ("cblas_sgemm" in exe.llvm_ir) is blas
    inputs = gdn_inputs(int(text.split("x")[1]))
    np.testing.assert_allclose(
        exe(*inputs)[0], rlx.compile(text, tune=False)(*inputs)[0], rtol=CHUNKED_RTOL, atol=CHUNKED_RTOL
    )


def weighted_matmul(n: int) -> tuple[ModuleOp, np.ndarray]:
    """x [64, 256] @ w [256, n] with w a constant (a model's weight), and w."""
    w = np.random.default_rng(3).standard_normal((256, n)).astype(np.float32)
    b = Builder("f")
    b.output(b.matmul(b.input((64, 256)), b.constant(w)))
    return b.module(), w


def test_a_weight_is_measured_as_the_constant_it_is() -> None:
    """The candidates of a GEMM whose rhs is a constant keep it one: the emitted
    kernels' candidate reads it in panels stored at compile time, as it will run,
    and the BLAS's reads it as it is."""
    module, _ = weighted_matmul(320)
    built: dict[str, str] = {}

    def build(alone: ModuleOp, knobs: Mapping[str, int]) -> rlx.Executable:
        exe = rlx.compile(alone, "", tuning=knobs, tune=False)
        built["blas" if knobs else "emitted"] = exe.planned_ir
        return exe

    (decision,) = autotune.tune_module(module, build, target(), 2, GENEROUS)
    assert decision.source == "measured" and set(built) == {"emitted", "blas"}
    assert "rhs_panels" in built["emitted"] and "rhs_panels" not in built["blas"]


@pytest.mark.parametrize(("choice", "panels"), [("emitted", True), ("blas", False)])
def test_a_weight_is_laid_out_for_the_kernel_chosen(choice: str, panels: bool) -> None:
    """A GEMM whose measured choice is the BLAS reads its constant weight as it is
    (pack-matmul-weights honours the op's own rlx.tuning), the emitted kernels' choice
    reads it in panels; both compute x @ w."""
    module, w = weighted_matmul(384 if panels else 448)
    op = next(o for o in module.walk() if type(o) in autotune.CHOICES)
    disk_cache.store(
        "wisdom", autotune.wisdom_key(op, f"{target().key}|threads={available_cpus()}"), json.dumps(choice).encode()
    )
    exe = rlx.compile(module, tune=GENEROUS)
    assert [(d.choice, d.source) for d in exe.tuned] == [(choice, "cached")]
    assert ("rhs_panels" in exe.planned_ir) is panels
    assert ("cblas_sgemm" in exe.llvm_ir) is not panels
    x = np.random.default_rng(4).standard_normal((64, 256)).astype(np.float32)
    np.testing.assert_allclose(exe(x)[0], x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_repeated_layers_are_measured_once_without_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two products of one shape and weight layout (a model's repeated layers) cost one
    measurement, the second reading the first's decision, with the disk cache off too."""
    monkeypatch.setenv("RLX_MLIR_CACHE", "0")
    w = np.random.default_rng(5).standard_normal((256, 512)).astype(np.float32)
    b = Builder("f")
    first, second = b.input((64, 256)), b.input((64, 256))
    b.output(b.matmul(first, b.constant(w)))
    b.output(b.matmul(second, b.constant(-w)))
    exe = rlx.compile(b.module(), tune=GENEROUS)
    assert [d.source for d in exe.tuned] == ["measured", "cached"]
    assert exe.tuned[1].choice == exe.tuned[0].choice


def test_a_profiling_build_makes_the_executables_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cache off, an executable's profiling build, compiled afresh, reads the
    process's decisions instead of measuring again (which here would pick the loser)."""
    monkeypatch.setenv("RLX_MLIR_CACHE", "0")
    module, _ = weighted_matmul(576)
    exe = rlx.compile(module, tune=GENEROUS)
    (decision,) = exe.tuned
    loser = next(label for label in decision.seconds if label != decision.choice)
    panels_lose = loser == "emitted"  # the emitted kernels' candidate reads the weight in panels
    monkeypatch.setattr(
        autotune, "_best_time", lambda built, *_: 0.0 if ("rhs_panels" in built.planned_ir) == panels_lose else 1.0
    )
    monkeypatch.setattr(autotune, "_stored", lambda _: None)
    x = np.random.default_rng(6).standard_normal((64, 256)).astype(np.float32)
    exe.profile(x, repeat=1)
    assert exe._profiling is not None and exe._profiling.planned_ir == exe.planned_ir
    assert [(d.choice, d.source) for d in exe._profiling.tuned] == [(decision.choice, "cached")]


def test_an_unreadable_decision_is_measured_again() -> None:
    text = gdn(512)
    disk_cache.store("wisdom", wisdom_entry(text), b"\xff not json")
    (decision,) = rlx.compile(text, tune=GENEROUS).tuned
    assert decision.source == "measured"


def test_an_op_with_its_own_choice_is_not_measured() -> None:
    """An rlx.tuning written on the op is the user's: kept, and nothing is measured."""
    own = "{state_size = 16 : i64, rlx.tuning = {gdn_chunked_min_seq = 0 : i64}}"
    text = gdn(704).replace("{state_size = 16 : i64}", own)
    exe = rlx.compile(text, tune=GENEROUS)
    assert exe.tuned == [] and "cblas_sgemm" in exe.llvm_ir


def test_short_sequences_and_a_spent_budget_keep_the_model() -> None:
    assert rlx.compile(gdn(64), tune=GENEROUS).tuned == []  # below autotune.MIN_SEQ
    assert rlx.compile(gdn(576), tune=1e-9).tuned == []  # nothing measured in a nanosecond


def test_without_measuring_builds_are_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLX_MLIR_CACHE", "0")  # both builds made from scratch
    first = rlx.compile(gdn(640), tune=False)
    assert rlx.compile(gdn(640), tune=False).llvm_ir == first.llvm_ir


@pytest.mark.parametrize("tune", ["yes", [1]])
def test_a_bad_tune_is_a_compile_error(tune: object) -> None:
    with pytest.raises(rlx.CompileError, match="tune= takes True, False or seconds"):
        rlx.compile(gdn(128), tune=tune)  # type: ignore[arg-type]
