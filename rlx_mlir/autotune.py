"""Choices a model of the machine cannot make, measured once (FFTW's wisdom).

Which form of a recurrence is faster (GDN's and Mamba2's chunked GEMM forms
against their sequential in-cache forms), and whether the emitted GEMM tiles
beat the BLAS, depends on the machine's GEMM and vector FMA rates, which no
cache-size formula predicts: the chunked GDN form won on a Zen 3 (AVX2) host
and with x86-64-v3 code on a Zen 4, and lost 1.4-3x to the sequential form
with AVX-512 code on Zen 4/5. So at
the first compile, each such op is compiled alone once per candidate, on its
own shapes, and timed on synthetic inputs (a model's weight stays a
constant, of synthetic values, so the weight-layout passes store it as each
candidate reads it); the winner becomes the op's
`rlx.tuning` attribute (`rlx_mlir.tuning.TUNING_ATTRIBUTE`), which the
weight-layout passes and the lowering apply to that op only, and is kept in
the disk cache under the target, the thread count and the op's text, so later
compiles, in any process, read it instead of timing again.

Measuring stops after `BUDGET_SECONDS` per compile (candidate compiles
included; `compile(..., tune=seconds)` gives another budget). An op not
decided by then keeps the model's choice (`Tuning`) in that build, which the
disk cache keeps as it is (the same module compiled again is read, not
measured); a later compile that builds another module with the op (another
model, another input shape) measures it, its candidate builds then coming
from the disk cache. A process also keeps its winners in memory, so its
builds agree with the disk cache off too. With
`compile(..., tune=False)` or `RLX_MLIR_TUNE=0` every op keeps the model's
choice, deterministically. The forms agree within the documented bound of
the chunked forms (tests/test_autotune.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32, f64
from xdsl.ir import Block, Operation, Region

from rlx_mlir import disk_cache, dtypes
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects import rlx
from rlx_mlir.dialects.common import element_type, shape_of
from rlx_mlir.dialects.resources import ResourceElementsAttr
from rlx_mlir.errors import RlxError
from rlx_mlir.lowering.kernels.contraction import gemm_layout
from rlx_mlir.runtime import Executable
from rlx_mlir.target import Target
from rlx_mlir.tuning import NEVER, TUNING_ATTRIBUTE, set_overrides
from rlx_mlir.verification import function_block

ENVIRONMENT = "RLX_MLIR_TUNE"
"""`0` turns measuring off when `compile` is not told (`tune=None`)."""

BUDGET_SECONDS: Final = 0.5
"""At most this much of a compile goes to measuring candidates."""

MIN_SEQ: Final = 128
"""Sequences shorter than this (two chunks) keep the model's form: the chunked
forms only pay off over several chunks, and a decode step has one form."""

MIN_MACS: Final = 1 << 22
"""GEMMs smaller than this keep the model's kernel: a few microseconds either way."""


@dataclass(frozen=True)
class Choice:
    """The candidates for one decision (a label and the knobs it sets, the model's
    first) and which ops of the class it is worth measuring for."""

    candidates: tuple[tuple[str, Mapping[str, int]], ...]
    worth: Callable[[Any], bool]
    """Takes an op of the class the choice is keyed by in CHOICES (a dict's
    type cannot tie a key to its value's parameter, hence Any)."""


def _long(op: rc.StatefulOp) -> bool:
    """Sequences of at least MIN_SEQ steps (the recurrences' [B, S, ...] outputs)."""
    return op.output_shape()[1] >= MIN_SEQ


def _emitted_gemm(op: ct.MatmulOp) -> bool:
    """A real f32/f64 GEMM the emitted tile or panel kernels may run, of at least
    MIN_MACS multiply-adds: whether they beat the BLAS depends on the vector unit
    (on a Zen 4 they ran a batch of [32x64] @ [64x32] at 2.2x the BLAS's speed with
    AVX-512 and at 0.47x with AVX2)."""
    layout = gemm_layout(op)
    real = element_type(op.results[0].type) in (f32, f64)
    return real and layout.count * layout.m * layout.n * layout.k >= MIN_MACS


CHOICES: dict[type[Operation], Choice] = {
    rc.GatedDeltaNetOp: Choice(
        (("sequential", {"gdn_chunked_min_seq": NEVER}), ("chunked", {"gdn_chunked_min_seq": 0})), _long
    ),
    rc.Mamba2Op: Choice(
        (("blocked", {"mamba2_chunked_min_seq": NEVER}), ("chunked", {"mamba2_chunked_min_seq": 0})), _long
    ),
    ct.MatmulOp: Choice((("emitted", {}), ("blas", {"gemm_tiled_max_mnk": 0, "gemm_panel_max_mnk": 0})), _emitted_gemm),
}
"""The decisions measured, by op class."""


@dataclass(frozen=True)
class Tuned:
    """One decision of a compile: the op, the form chosen, and whether it was
    measured now (with each candidate's best time in seconds) or "cached": read from
    this process's earlier decision, the disk cache, or a module entry read back whole."""

    op: str
    choice: str
    source: str
    seconds: Mapping[str, float]


Build = Callable[[ModuleOp, Mapping[str, int]], Executable]
"""Compiles a module with some knobs set (and no measuring of its own)."""


def budget(tune: bool | float | None) -> float:
    """Seconds a compile may spend measuring: `tune` as given (True: the default
    budget), or by $RLX_MLIR_TUNE when None; 0 means the model's choices."""
    if tune is None:
        tune = os.environ.get(ENVIRONMENT, "1") != "0"
    if tune is True:
        return BUDGET_SECONDS
    return max(0.0, float(tune))


def tune_module(module: ModuleOp, build: Build, target: Target, threads: int, seconds: float) -> list[Tuned]:
    """Measure the choices of `module`'s ops (before memory planning and the weight
    layouts) for at most `seconds` and annotate them."""
    deadline = time.perf_counter() + seconds
    decisions = []
    for function in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        for op in list(function_block(function).walk()):
            choice = CHOICES.get(type(op))
            if choice is None or TUNING_ATTRIBUTE in op.attributes or not choice.worth(op):
                continue  # an op's own rlx.tuning is the user's choice: kept as it is
            decision = _decide(op, choice, build, f"{target.key}|threads={threads}", deadline)
            if decision is not None:
                set_overrides(op, dict(choice.candidates)[decision.choice])
                decisions.append(decision)
    return decisions


_decided: dict[str, str] = {}
"""The winners this process measured, by wisdom key, read before the disk cache: a
model's repeated layers are measured once, and every build in the process (an
executable's profiling build, a model compiled again) makes the same choices, with
the cache off too."""


def _decide(op: Operation, choice: Choice, build: Build, machine: str, deadline: float) -> Tuned | None:
    """The fastest candidate for `op`: as this process decided it, else from the
    cache, else measured until the deadline."""
    entry = wisdom_key(op, machine)
    labels = [label for label, _ in choice.candidates]
    winner = _decided.get(entry) or _stored(entry)
    if winner in labels:
        return Tuned(op.name, winner, "cached", {})
    if time.perf_counter() > deadline:  # no inputs made for nothing: a BERT's 96 GEMMs cost 2.5 s of them
        return None
    arrays, weights = _inputs(op), _weights(op)
    alone = _alone(op, {k: arrays[k] for k in weights})
    arguments = [array for k, array in enumerate(arrays) if k not in weights]
    seconds: dict[str, float] = {}
    for label, knobs in choice.candidates:
        if time.perf_counter() > deadline:
            return None
        try:
            exe = build(alone, knobs)
        except RlxError:  # a candidate that cannot be built here is not a choice
            continue
        seconds[label] = _best_time(exe, arguments, deadline)
    if not seconds:
        return None
    winner = _decided[entry] = min(seconds, key=seconds.__getitem__)
    disk_cache.store("wisdom", entry, json.dumps(winner).encode())
    return Tuned(op.name, winner, "measured", seconds)


def _stored(entry: str) -> object:
    """The winner the disk cache holds for `entry` (None if none, anything if garbled)."""
    stored = disk_cache.load("wisdom", entry)
    try:
        return None if stored is None else json.loads(stored)
    except ValueError:
        return None


def wisdom_key(op: Operation, machine: str) -> str:
    """The disk-cache entry of `op`'s decision on `machine` (the target's key and the
    thread count): the op alone, and which of its operands are weights (a constant
    weight runs other forms than one given at run time)."""
    return disk_cache.key("wisdom", machine, str(_alone(op, {})), f"weights {_weights(op)}")


def _weights(op: Operation) -> list[int]:
    """The positions of `op`'s operands that are constants (a model's weights)."""
    return [k for k, value in enumerate(op.operands) if rlx.stored_weight(value) is not None]


def _alone(op: Operation, weights: Mapping[int, np.ndarray]) -> ModuleOp:
    """`op` as the only op of a function of its operands, but those `weights` holds
    (by position): a model's weight stays a constant, of these values, so that the
    weight-layout passes store it as each candidate reads it."""
    inputs = [value.type for k, value in enumerate(op.operands) if k not in weights]
    block = Block(arg_types=inputs)
    arguments = iter(block.args)
    copy = op.clone()
    for k, value in enumerate(op.operands):
        if k in weights:
            t = TensorType(element_type(value.type), shape_of(value.type))
            weight = rlx.ConstantOp(ResourceElementsAttr.from_array(f"weight{k}", t, weights[k]))
            block.add_op(weight)
            copy.operands[k] = weight.result
        else:
            copy.operands[k] = next(arguments)
    block.add_op(copy)
    block.add_op(func.ReturnOp(*copy.results))
    function = func.FuncOp("tuned", (inputs, [r.type for r in op.results]), Region([block]))
    return ModuleOp([function])


def _inputs(op: Operation) -> list[np.ndarray]:
    """Small negative values for every operand: decays below one, no overflow over
    any length, no subnormals (what the forms cost does not depend on the values)."""
    rng = np.random.default_rng(0)
    arrays = []
    for value in op.operands:
        dtype = dtypes.from_ir(element_type(value.type)).numpy
        arrays.append(rng.uniform(-0.1, -0.01, shape_of(value.type)).astype(dtype))
    return arrays


def _best_time(exe: Executable, arrays: list[np.ndarray], deadline: float) -> float:
    """The best of up to five calls after a warm-up, stopping at the deadline."""
    exe(*arrays)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        exe(*arrays)
        best = min(best, time.perf_counter() - start)
        if time.perf_counter() > deadline:
            break
    return best
