"""Where a compiled function's time goes: one row per op that runs code.

`Executable.profile(*inputs, repeat=N)` runs a *profiling build* of the same
planned function (`compile(..., profile=True)`): the same kernels, launched
the same way, with the entry storing LLVM's cycle counter (rdtsc on x86-64)
into the status buffer after each op's kernels (`lowering/program.py`'s
`_EntryBuilder.mark`). A time stamp costs ~20 cycles and calls nothing, so
even kernels of a few microseconds are timed in place, with the caches and
thread pool as a plain call leaves them. Ticks become seconds by the counter's
rate, measured once per process against `time.perf_counter_ns` (x86-64 hosts
with an invariant TSC, `constant_tsc` in /proc/cpuinfo, tick at a fixed rate).

What a row says is estimated from the planned op, not measured: the bytes an
op must move (each operand and result once) and its FLOPs (for elementwise,
reduction and contraction ops; none for the others). The entry's own cost,
the Python call with its argument checks, and copies of outputs the plan could
not place in the caller's arrays, is the "launch overhead" row: the call's
wall time minus the time stamped.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.ir as ir
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from rlx_mlir import jit
from rlx_mlir.broadcast import numel
from rlx_mlir.dialects import attention as at
from rlx_mlir.dialects import contraction as ct
from rlx_mlir.dialects import convolution as cv
from rlx_mlir.dialects import recurrent as rc
from rlx_mlir.dialects import reduction as rd
from rlx_mlir.dialects import region as rg
from rlx_mlir.dialects.common import shape_of
from rlx_mlir.memory_plan import nbytes
from rlx_mlir.target import Target, target
from rlx_mlir.verification import function_block


@dataclass(frozen=True)
class TimedOp:
    """What a profile row says about the op it times, read off the planned IR."""

    position: int
    """The op's position in the planned function's body (`exe.planned_ir`)."""
    name: str
    """The op's name, with a region's body ops: `rlx.elementwise_region(sub, mul)`."""
    shapes: str
    """`operand types -> result types`, e.g. `8192x1024xf32, 1024xf32 -> 8192x1024xf32`."""
    bytes: int
    """Bytes the op must read and write at least: each operand and result once."""
    flops: int | None
    """Floating-point operations, where the op's kind has a count (else None)."""
    source: str = ""
    """Where the op comes from: its first result's name in the IR, which the ONNX
    importer sets to the node's name (a fused region keeps the name of the op
    whose result it computes); "" for an unnamed value."""

    def encode(self) -> list[object]:
        return [self.position, self.name, self.shapes, self.bytes, self.flops, self.source]

    @classmethod
    def decode(cls, row: Sequence[int | str | None]) -> TimedOp:
        position, name, shapes, size, flops, source = row
        assert isinstance(position, int) and isinstance(size, int) and (flops is None or isinstance(flops, int))
        return cls(position, str(name), str(shapes), size, flops, str(source))


def describe(function: func.FuncOp) -> dict[int, TimedOp]:
    """Every op of the planned `function`'s body, by position."""
    return {k: _describe(k, op) for k, op in enumerate(function_block(function).ops)}


def _describe(position: int, op: Operation) -> TimedOp:
    name = op.name
    if isinstance(op, rg.NormalizeRegionOp):
        name = f"{name}[{op.normalization.data}]"
    if isinstance(op, rg.ScalarBodyRegionOp):
        name = f"{name}({', '.join(o.name.removeprefix('rlx.') for o in _body(op))})"
    shapes = f"{_types(op.operands)} -> {_types(op.results)}"
    moved = sum(nbytes(v) for v in {*op.operands, *op.results} if _is_tensor(v))
    source = (op.results[0].name_hint or "") if op.results else ""
    return TimedOp(position, name, shapes, moved, _flops(op), source)


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def _types(values: Sequence[SSAValue]) -> str:
    return ", ".join(_type(v) for v in values)


def _type(value: SSAValue) -> str:
    if not isinstance(value.type, TensorType):
        return str(value.type)
    return "x".join([*(str(d) for d in shape_of(value.type)), str(value.type.get_element_type())])


def _elements(value: SSAValue) -> int:
    return numel(shape_of(value.type))


def _flops(op: Operation) -> int | None:
    """The op's floating-point operations: a matmul's 2·M·N·K (plus its
    epilogue's), a region's body ops at every point it visits, a reduction's
    one combine per input element, a conv's 2·(C/groups)·taps per output
    (its bias add not counted; its epilogue's body ops are), a max pool's one
    per tap and output, an attention's 2·(D + Dv) per (query, key) pair it does
    not mask causally (its two products), a recurrence's work per step
    (`_recurrence_flops`); None for the other kinds."""
    if isinstance(op, at.AttentionOp):
        batch, heads, queries, head_size = shape_of(op.query.type)
        keys, value_size = shape_of(op.value.type)[2:]
        seen = min(queries, keys)  # causal: query i sees i + 1 keys, at most all of them
        pairs = seen * (seen + 1) // 2 + (queries - seen) * keys if op.is_causal else queries * keys
        return 2 * (head_size + value_size) * pairs * batch * heads
    if isinstance(op, cv.ConvolutionOp):
        weight = op.weight_shape
        epilogue = _body_ops(op) if isinstance(op, rg.ConvRegionOp) else 0
        return (2 * numel(weight[1:]) + epilogue) * _elements(op.result)
    if isinstance(op, cv.MaxPoolOp):
        return numel(op.kernel) * _elements(op.result)
    if isinstance(op, (ct.MatmulOp, rg.ContractionRegionOp)):
        lhs = shape_of(op.operands[0].type)
        depth = lhs[-2] if op.transpose_lhs.value.data else lhs[-1]
        product = 2 * depth * _elements(op.results[0])
        if isinstance(op, rg.ContractionRegionOp):
            product += _body_ops(op) * _elements(op.results[0])
        return product
    if isinstance(op, rg.ScalarBodyRegionOp):
        points = max(_elements(v) for v in (*op.operands, *op.results) if _is_tensor(v))
        reduce = 1 if isinstance(op, (rg.ReductionRegionOp, rg.RowRegionOp)) else 0
        return (_body_ops(op) + reduce) * points
    if isinstance(op, rd.ReduceOp):
        return _elements(op.operands[0])
    if isinstance(op, (rc.RnnFamilyOp, rc.Mamba2Op, rc.SelectiveScanOp, rc.GatedDeltaNetOp)):
        return _recurrence_flops(op)
    return None


def module_flops(module: Operation) -> int:
    """The FLOPs of every op of `module` that has a count (`_flops`): what a benchmark
    rates its GFLOP/s by (benchmarks/recurrent.py), so the two never disagree."""
    return sum(flops for op in module.walk() if (flops := _flops(op)) is not None)


def _recurrence_flops(op: rc.RnnFamilyOp | rc.Mamba2Op | rc.SelectiveScanOp | rc.GatedDeltaNetOp) -> int:
    """Per step and (batch, head or channel), the state update and readout, whatever
    form the kernel takes: an RNN's gate products 2·(I + H)·G·H per direction and
    layer, Mamba2 5·P·N (decay, drive, add: 3 per state element; S·c: 2), the
    selective scan 7·N (Δ·A, exp, the update and C·h per state), the gated delta
    rule 7·N²."""
    if isinstance(op, rc.RnnFamilyOp):
        batch, steps, _ = op.dims
        return 2 * batch * steps * sum(op.packed_elements(layer) for layer in range(op.num_layers.value.data))
    if isinstance(op, rc.Mamba2Op):
        batch, steps, heads, p = shape_of(op.x.type)
        return 5 * p * op.state_size.value.data * batch * steps * heads
    if isinstance(op, rc.SelectiveScanOp):
        return 7 * _elements(op.x) * op.state_size.value.data
    batch, steps, heads, n = shape_of(op.q.type)
    return 7 * n * n * batch * steps * heads


def _body(op: rg.ScalarBodyRegionOp) -> list[Operation]:
    """The scalar ops of every region of `op` (a prologue's and an epilogue's)."""
    return [o for region in op.regions for o in region.walk() if not isinstance(o, rg.YieldOp)]


def _body_ops(op: rg.ScalarBodyRegionOp) -> int:
    return len(_body(op))


@dataclass(frozen=True)
class Row:
    """One timed op: its description and its median time over the runs."""

    op: TimedOp
    seconds: float


@dataclass(frozen=True)
class Profile:
    """A profiled executable: the median time of each op that ran code, the
    launch overhead, and the median wall time of a whole call."""

    function: str
    rows: tuple[Row, ...]
    overhead: float
    """Median seconds of a call outside the time-stamped ops (the Python call, its checks, output copies)."""
    total: float
    """Median wall seconds of a whole call."""
    runs: int
    target: Target
    threads: int

    def __str__(self) -> str:
        header = (
            f"profile of @{self.function}: median of {self.runs} runs, {self.total * 1e3:.3f} ms per call "
            f"(target {self.target.name}, {self.threads} threads)"
        )
        columns = f"{'#':>4}  {'op':<44}{'ms':>9}{'share':>8}{'MB':>9}{'GB/s':>8}{'GFLOP/s':>9}  shapes  [source]"
        lines = [header, columns]
        for row in self.rows:
            lines.append(_line(row, self.total))
        share = self.overhead / self.total if self.total else 0.0
        lines.append(f"{'':>4}  {'launch overhead (call, checks, copies)':<44}{self.overhead * 1e3:9.3f}{share:8.1%}")
        return "\n".join(lines)


def _line(row: Row, total: float) -> str:
    op, seconds = row.op, row.seconds
    share = seconds / total if total else 0.0
    rate = op.bytes / seconds / 1e9 if seconds > 0 else math.inf
    flops = f"{op.flops / seconds / 1e9:9.1f}" if op.flops is not None and seconds > 0 else f"{'-':>9}"
    name = op.name if len(op.name) <= 43 else op.name[:40] + "..."
    source = f"  [{op.source}]" if op.source else ""
    return (
        f"{op.position:>4}  {name:<44}{seconds * 1e3:9.3f}{share:8.1%}{op.bytes / 1e6:9.2f}{rate:8.1f}{flops}  "
        f"{op.shapes}{source}"
    )


def measure(
    call: Callable[[], object], ticks: Callable[[], Sequence[int]], ops: Sequence[TimedOp], runs: int
) -> tuple[list[float], float, float]:
    """Run `call` `runs` times (after one warm-up) and read the time stamps
    `ticks` gives after each: the median seconds of each op, of the launch
    overhead and of a whole call."""
    call()
    per_op: list[list[float]] = [[] for _ in ops]
    overheads, walls = [], []
    rate = cycle_counter_hz()
    for _ in range(runs):
        start = time.perf_counter()
        call()
        wall = time.perf_counter() - start
        stamps = ticks()
        spans = [(b - a) / rate for a, b in itertools.pairwise(stamps)]
        for k, span in enumerate(spans):
            per_op[k].append(span)
        walls.append(wall)
        overheads.append(max(wall - (stamps[-1] - stamps[0]) / rate, 0.0))
    return [statistics.median(t) for t in per_op], statistics.median(overheads), statistics.median(walls)


CALIBRATION_SECONDS = 0.02
"""How long the counter's rate is measured: 20 ms against a clock of ~50 ns
resolution puts its error well under 0.1%."""


@functools.cache
def cycle_counter_hz() -> float:
    """Ticks per second of LLVM's cycle counter on this host, measured once."""
    read = _counter_reader()
    t0, c0 = time.perf_counter_ns(), read()
    time.sleep(CALIBRATION_SECONDS)
    t1, c1 = time.perf_counter_ns(), read()
    return (c1 - c0) / ((t1 - t0) / 1e9)


def _counter_reader() -> Callable[[], int]:
    module = ir.Module(name="rlx_cycle_counter")
    i64 = ir.IntType(64)
    counter = ir.Function(module, ir.FunctionType(i64, []), "llvm.readcyclecounter")
    reader = ir.Function(module, ir.FunctionType(i64, []), "rlx_read_cycle_counter")
    builder = ir.IRBuilder(reader.append_basic_block())
    builder.ret(builder.call(counter, []))
    compiled = jit.compile_llvm(module, target("native"))
    read = ctypes.CFUNCTYPE(ctypes.c_int64)(compiled.address("rlx_read_cycle_counter"))
    _keep.append(compiled)
    return lambda: int(read())


_keep: list[jit.CompiledModule] = []
"""The calibration module's engine, alive while its function may be called."""
