"""Recurrent ops: rlx_mlir vs torch.nn / PyTorch eager and a NumPy time loop,
same inputs, one process, 2 threads for everyone.

    python benchmarks/recurrent.py [--repeat 7] [--only gdn,mamba2]

Prints median times (each taken after SETTLE_SECONDS of idle time, for every
runtime alike), GFLOP/s, the ratio peer / rlx (> 1 means rlx is faster)
and, for the scans, rlx's GFLOP/s as a fraction of the sgemm GFLOP/s measured
at the start of the same run (rlx's own f32 matmul, 2048^3).

Sections (one function each; `SECTIONS` names them for `--only` and runs them in order):
- `rnn`: LSTM B8 S128 I256 H256 (1 layer; 2 layers bidirectional), GRU and
  RNN at the same size, against torch.nn;
- `gdn`: gated delta net prefill B1 S2048 H8 N128 against a NumPy loop and
  fla's naive chunked gated delta rule in PyTorch eager, plus a decode step;
- `mamba2`: Mamba2 prefill B1 S2048 H8 P64 N128 against a NumPy loop
  vectorized over batch and heads and PyTorch eager chunked (mamba's
  `ssd_minimal`), plus a decode step;
- `scan`: selective scan B1 S2048 D1024 N16 against the NumPy loop.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from elementwise import torch_or_none  # this script's folder is on sys.path
from machine import add_target_argument, use_target
from timing import median_ms

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.profiler import module_flops
from rlx_mlir.runtime import Executable
from rlx_mlir.tuning import NEVER

THREADS = 2

SETTLE_SECONDS = 0.3
"""Idle time before each measurement: the worker threads a runtime leaves spinning
after use (torch's OpenMP, OpenBLAS, ~0.1-0.2 s) would otherwise share the 2 cores
with whatever is timed next; measured, rlx's selective scan took 4-8 ms instead of
2.3 ms right after a torch call."""


def settled_median_ms(fn: Callable[[], object], repeat: int) -> float:
    """`median_ms` once the other runtimes' threads have gone to sleep."""
    time.sleep(SETTLE_SECONDS)
    return median_ms(fn, repeat)


@dataclass(frozen=True)
class Bench:
    """What every section gets: the repeat count, the RNG, torch (or None) and
    the sgemm GFLOP/s of this run."""

    repeat: int
    rng: np.random.Generator
    torch: ModuleType | None
    sgemm_gflops: float

    def time(self, fn: Callable[[], object]) -> float:
        return settled_median_ms(fn, self.repeat)


def sgemm_gflops(repeat: int) -> float:
    """The reference rate, measured in a child process: after a large OpenBLAS GEMM
    in this process, rlx's own 2-thread kernels measured up to 1.4x slower for the
    rest of the run (its threads were asleep; the selective scan took 3.0-3.3 ms
    instead of 2.3-2.4 ms), so the GEMM does not run beside the timed kernels."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_sgemm_gflops_here, (repeat, THREADS))


def _sgemm_gflops_here(repeat: int, threads: int) -> float:
    n = 2048
    b = Builder("sgemm")
    b.output(b.matmul(b.input((n, n)), b.input((n, n))))
    exe = rlx.compile(b.module(), threads=threads)
    x = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    return 2 * n**3 / 1e6 / median_ms(lambda: exe(x, x), repeat)


def report(bench: Bench, title: str, gflop: float, rlx_ms: float, peers: dict[str, float]) -> None:
    """One block: rlx's time and GFLOP/s (and share of sgemm), then each peer with peer/rlx."""
    rate = gflop / (rlx_ms / 1e3)
    print(f"\n{title}")
    print(f"  {'rlx_mlir':<28}{rlx_ms:9.3f} ms  {rate:7.1f} GFLOP/s  ({rate / bench.sgemm_gflops:5.1%} of sgemm)")
    for name, ms in peers.items():
        print(f"  {name:<28}{ms:9.3f} ms  {gflop / (ms / 1e3):7.1f} GFLOP/s  peer/rlx = {ms / rlx_ms:6.2f}x")


# ---------------------------------------------------------------------------
# LSTM, GRU, RNN
# ---------------------------------------------------------------------------

RNN_SIZE = (8, 128, 256, 256)  # B, S, I, H
RNN_CASES = (  # (title, kind, layers, bidirectional)
    ("LSTM", "lstm", 1, False),
    ("LSTM 2 layers bidirectional", "lstm", 2, True),
    ("GRU", "gru", 1, False),
    ("RNN (tanh)", "rnn", 1, False),
)


def gflop(exe: Executable) -> float:
    """The executable's work as the profiler counts it (`rlx_mlir.profiler`): 2·(I_l + H)·G·H
    per row and step for the RNNs (per layer and direction), 7·N² per step and head for
    GDN, 5·P·N for Mamba2, 7·N per state for the selective scan."""
    return module_flops(rlx.parse(exe.planned_ir)) / 1e9


def _torch_rnn(torch: ModuleType, kind: str, layers: int, bidirectional: bool) -> object:
    _, _, input_size, hidden = RNN_SIZE
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
    return cls(input_size, hidden, layers, batch_first=True, bidirectional=bidirectional)


def _packed(module: object, kind: str, layers: int, dirs: int) -> list[np.ndarray]:
    """torch's parameters packed as rlx takes them (per layer, then per direction; LSTM/RNN: b_ih + b_hh)."""
    suffixes = ("", "_reverse")[:dirs]

    def cat(name: str) -> np.ndarray:
        parts = [getattr(module, f"{name}_l{k}{s}").detach().numpy().ravel() for k in range(layers) for s in suffixes]
        return np.concatenate(parts)

    w_ih, w_hh, b_ih, b_hh = (cat(n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
    return [w_ih, w_hh, b_ih, b_hh] if kind == "gru" else [w_ih, w_hh, b_ih + b_hh]


def rnn_section(bench: Bench) -> None:
    """rlx vs torch.nn at B8 S128 I256 H256, f32, no initial state, y only."""
    if bench.torch is None:
        return
    torch = bench.torch
    batch, seq, input_size, hidden = RNN_SIZE
    x = bench.rng.standard_normal((batch, seq, input_size), dtype=np.float32)
    for title, kind, layers, bidirectional in RNN_CASES:
        dirs = 2 if bidirectional else 1
        module = _torch_rnn(torch, kind, layers, bidirectional)
        weights = _packed(module, kind, layers, dirs)
        b = Builder(kind)
        args = [b.input(x.shape), *(b.input(w.shape) for w in weights)]
        b.output(getattr(b, kind)(*args, hidden_size=hidden, num_layers=layers, bidirectional=bidirectional))
        exe = rlx.compile(b.module(), threads=THREADS)
        xt = torch.from_numpy(x)
        with torch.no_grad():
            got, want = exe(x, *weights)[0], module(xt)[0].numpy()
            assert np.allclose(got, want, rtol=1e-3, atol=1e-4), f"{title}: rlx and torch disagree"
            torch_ms = bench.time(lambda: module(xt))
        rlx_ms = bench.time(lambda: exe(x, *weights))
        size = f"B{batch} S{seq} I{input_size} H{hidden}"
        peers = {f"torch.nn.{kind.upper()}": torch_ms}
        session = onnxruntime_rnn(kind, module, layers, bidirectional, THREADS)
        if session is not None:
            feed = {"x": np.ascontiguousarray(x.transpose(1, 0, 2))}
            ort_y = session.run(None, feed)[0]  # [S, dirs, B, H]
            assert np.allclose(ort_y[:, 0].transpose(1, 0, 2), want, rtol=1e-3, atol=1e-4), f"{title}: ORT disagrees"
            peers[f"onnxruntime {kind.upper()}"] = bench.time(lambda: session.run(None, feed))
        report(bench, f"{title} {size} f32", gflop(exe), rlx_ms, peers)


ONNX_GATES = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn": [0]}
"""ONNX's gate blocks in torch's order: LSTM i,o,f,c of torch's i,f,g,o; GRU z,r,h of r,z,n."""


def onnxruntime_rnn(kind: str, module: object, layers: int, bidirectional: bool, threads: int) -> object | None:
    """An onnxruntime session of one ONNX LSTM/GRU/RNN node with `module`'s weights
    (x [S, B, I] -> Y), or None without onnxruntime or for stacked layers (one node
    is one layer)."""
    if layers != 1 or bidirectional:
        return None
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    order = ONNX_GATES[kind]

    def gates(name: str) -> np.ndarray:
        w = getattr(module, f"{name}_l0").detach().numpy()
        blocks = np.split(w, len(order))
        return np.concatenate([blocks[i] for i in order])[None]

    weights = [
        numpy_helper.from_array(gates("weight_ih"), "W"),
        numpy_helper.from_array(gates("weight_hh"), "R"),
        numpy_helper.from_array(np.concatenate([gates("bias_ih"), gates("bias_hh")], axis=1), "B"),
    ]
    hidden = module.hidden_size
    attributes = {"hidden_size": hidden, **({"linear_before_reset": 1} if kind == "gru" else {})}
    node = helper.make_node(kind.upper(), ["x", "W", "R", "B"], ["y"], **attributes)
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    y_info = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], kind, [x_info], [y_info], initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


SECTIONS: dict[str, Callable[[Bench], None]] = {"rnn": rnn_section}
"""The sections by the name `--only` takes, in the order they run."""


# ---------------------------------------------------------------------------
# gated delta net
# ---------------------------------------------------------------------------

GDN_SIZE = (1, 2048, 8, 128)  # B, S, H, N
GDN_CHUNK = 64


def gdn_inputs(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    """q, k, v [B,S,H,N], g, beta [B,S,H] in f32, as a model makes them: unit keys, β in (0, 1), g < 0."""
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    g = (-np.logaddexp(0, rng.standard_normal(shape[:3])) * 0.1).astype(np.float32)
    beta = (1 / (1 + np.exp(-rng.standard_normal(shape[:3])))).astype(np.float32)
    return [q, k, v, g, beta]


def gdn_numpy(q, k, v, g, beta, state):
    """The time loop, vectorized over batch and heads (state [B,H,N,N])."""
    out = np.empty_like(q)
    scale = 1 / np.sqrt(q.shape[-1])
    for t in range(q.shape[1]):
        state *= np.exp(g[:, t])[..., None, None]
        sk = (k[:, t, :, None, :] @ state)[..., 0, :]
        u = beta[:, t, :, None] * (v[:, t] - sk)
        state += k[:, t, :, :, None] * u[:, :, None, :]
        out[:, t] = (q[:, t, :, None, :] @ state)[..., 0, :] * scale
    return out


def gdn_torch_chunked(torch: ModuleType, q, k, v, g, beta, chunk: int = GDN_CHUNK):
    """fla's naive chunked gated delta rule (`naive_chunk_gated_delta_rule`), written
    here for PyTorch eager: inputs [B,H,S,N] / [B,H,S], S a multiple of `chunk`."""
    batch, heads, seq, n = q.shape
    q = q * n**-0.5
    v, k_beta = v * beta[..., None], k * beta[..., None]
    q, k, v, k_beta = (x.reshape(batch, heads, -1, chunk, n) for x in (q, k, v, k_beta))
    g = g.reshape(batch, heads, -1, chunk).cumsum(-1)
    decay = (g[..., :, None] - g[..., None, :]).clamp(max=0).tril().exp().tril()
    upper = torch.triu(torch.ones(chunk, chunk, dtype=torch.bool), 0)
    attn = -((k_beta @ k.transpose(-1, -2)) * decay).masked_fill(upper, 0)
    for i in range(1, chunk):
        attn[..., i, :i] = attn[..., i, :i].clone() + (attn[..., i, :, None].clone() * attn[..., :, :i].clone()).sum(-2)
    attn = attn + torch.eye(chunk)
    value = attn @ v
    k_decayed = attn @ (k_beta * g.exp()[..., None])
    state = q.new_zeros(batch, heads, n, n)
    out = torch.empty_like(value)
    strictly_upper = torch.triu(torch.ones(chunk, chunk, dtype=torch.bool), 1)
    for c in range(q.shape[2]):
        q_c, k_c = q[:, :, c], k[:, :, c]
        local = (q_c @ k_c.transpose(-1, -2) * decay[:, :, c]).masked_fill(strictly_upper, 0)
        u = value[:, :, c] - k_decayed[:, :, c] @ state
        out[:, :, c] = (q_c * g[:, :, c, :, None].exp()) @ state + local @ u
        last = g[:, :, c, -1]
        state = (
            state * last[..., None, None].exp()
            + (k_c * (last[..., None] - g[:, :, c]).exp()[..., None]).transpose(-1, -2) @ u
        )
    return out.reshape(batch, heads, seq, n)


def jax_or_none() -> ModuleType | None:
    """jax (its rows are skipped without the bench extra); XLA's CPU client uses every core, 2 here."""
    try:
        import jax
    except ImportError:
        print("(jax is not installed: its rows are skipped; pip install -e '.[bench]')")
        return None
    return jax


def gdn_jax_scan(jax: ModuleType) -> Callable[..., object]:
    """The time loop as `jax.jit(lax.scan)` over [S, B, H, ...] slices, state [B,H,N,N]."""
    jnp = jax.numpy

    def step(state, xs):
        q, k, v, g, beta = xs
        state = state * jnp.exp(g)[..., None, None]
        u = beta[..., None] * (v - jnp.einsum("bhn,bhnm->bhm", k, state))
        state = state + k[..., :, None] * u[..., None, :]
        return state, jnp.einsum("bhn,bhnm->bhm", q, state) * q.shape[-1] ** -0.5

    @jax.jit
    def run(q, k, v, g, beta):
        batch, _, heads, n = q.shape
        xs = tuple(jnp.moveaxis(a, 1, 0) for a in (q, k, v, g, beta))
        _, out = jax.lax.scan(step, jnp.zeros((batch, heads, n, n), q.dtype), xs)
        return jnp.moveaxis(out, 0, 1)

    return run


def gdn_torch_step(torch: ModuleType, q, k, v, g, beta, state):
    """One decode step in PyTorch eager: q, k, v [B,H,N], g, beta [B,H], state [B,H,N,N]."""
    state = state * g.exp()[..., None, None]
    u = beta[..., None] * (v - (k.unsqueeze(-2) @ state).squeeze(-2))
    state = state + k.unsqueeze(-1) * u.unsqueeze(-2)
    return (q.unsqueeze(-2) @ state).squeeze(-2) * q.shape[-1] ** -0.5, state


TUNE_SECONDS = 10.0
"""The measuring budget of the default builds: enough to measure every form, as the
second compile of a model finds them once the first has built the candidates."""


def chosen_form(exe: Executable, chunked: bool) -> str:
    """The form the default build runs: measured (`exe.tuned`), else the model's."""
    if exe.tuned:
        return exe.tuned[0].choice
    return "chunked" if chunked else "sequential"


def gdn_executable(shape: tuple[int, ...], carry: bool, tuning: dict[str, int] | None = None) -> Executable:
    batch, _, heads, n = shape
    b = Builder("gdn")
    q, k, v = (b.input(shape) for _ in range(3))
    g, beta = b.input(shape[:3]), b.input(shape[:3])
    state = b.input((batch, heads, n, n)) if carry else None
    result = b.gated_delta_net(q, k, v, g, beta, state=state, return_state=carry)
    b.output(*(result if carry else (result,)))
    return rlx.compile(b.module(), threads=THREADS, tuning=tuning, tune=TUNE_SECONDS if tuning is None else False)


def gdn_section(bench: Bench) -> None:
    batch, seq, heads, n = GDN_SIZE
    args = gdn_inputs(bench.rng, GDN_SIZE)
    exe = gdn_executable(GDN_SIZE, carry=False)
    rlx_ms = bench.time(lambda: exe(*args))
    form = chosen_form(exe, seq >= exe.tuning.gdn_chunked_min_seq)
    peers = {"NumPy loop": bench.time(lambda: gdn_numpy(*args, np.zeros((batch, heads, n, n), np.float32)))}
    other_form = "sequential" if form == "chunked" else "chunked"
    other = gdn_executable(GDN_SIZE, carry=False, tuning={"gdn_chunked_min_seq": 1 if form == "sequential" else NEVER})
    peers[f"rlx_mlir {other_form} form"] = bench.time(lambda: other(*args))
    if bench.torch is not None:
        torch = bench.torch
        heads_first = [torch.from_numpy(np.ascontiguousarray(np.moveaxis(a, 2, 1))) for a in args]
        with torch.no_grad():
            peers["torch eager chunked (fla)"] = bench.time(lambda: gdn_torch_chunked(torch, *heads_first))
    jax = jax_or_none()
    if jax is not None:
        run = gdn_jax_scan(jax)
        want = exe(*args)[0]
        got = np.asarray(run(*args))
        assert np.allclose(got, want, rtol=1e-3, atol=1e-3 * float(np.abs(want).max())), "GDN: jax and rlx disagree"
        peers["jax.jit(lax.scan)"] = bench.time(lambda: run(*args).block_until_ready())
    report(bench, f"GDN prefill B{batch} S{seq} H{heads} N{n} f32 ({form} form)", gflop(exe), rlx_ms, peers)

    step_shape = (batch, 1, heads, n)
    step = gdn_inputs(bench.rng, step_shape)
    state = (bench.rng.standard_normal((batch, heads, n, n)) * 0.1).astype(np.float32)
    decode = gdn_executable(step_shape, carry=True)
    rlx_ms = settled_median_ms(lambda: decode(*step, state), 20 * bench.repeat)  # ~0.1 ms: more samples
    peers = {}
    if bench.torch is not None:
        torch = bench.torch
        q, k, v, g, beta = (torch.from_numpy(a[:, 0]) for a in step)
        s0 = torch.from_numpy(state)
        with torch.no_grad():
            step_ms = settled_median_ms(lambda: gdn_torch_step(torch, q, k, v, g, beta, s0), 20 * bench.repeat)
        peers["torch eager step"] = step_ms
    report(bench, f"GDN decode step B{batch} H{heads} N{n} f32 (state in and out)", gflop(decode), rlx_ms, peers)


SECTIONS["gdn"] = gdn_section


# ---------------------------------------------------------------------------
# state-space scans: Mamba2 (prefill, decode) and the selective scan
# ---------------------------------------------------------------------------

MAMBA2 = (1, 2048, 8, 64, 128)  # B, S, H, P, N
SCAN = (1, 2048, 1024, 16)  # B, S, D, N


def _softplus(v: np.ndarray) -> np.ndarray:
    return np.log1p(np.exp(v)).astype(np.float32)


def _mamba2_inputs(rng: np.random.Generator, batch: int, seq: int, heads: int, p: int, n: int) -> list[np.ndarray]:
    """x, dt, a, b, c (f32), decays in (0, 1) as in Mamba."""
    return [
        rng.standard_normal((batch, seq, heads, p), dtype=np.float32),
        _softplus(rng.standard_normal((batch, seq, heads)) - 1.0),
        -np.exp(0.5 * rng.standard_normal(heads)).astype(np.float32),
        rng.standard_normal((batch, seq, heads, n), dtype=np.float32) / np.float32(np.sqrt(n)),
        rng.standard_normal((batch, seq, heads, n), dtype=np.float32),
    ]


def _scan_executable(
    kind: str,
    shapes: list[tuple[int, ...]],
    state: bool = False,
    return_state: bool = False,
    tuning: dict[str, int] | None = None,
) -> Executable:
    b = Builder(kind)
    values = [b.input(shape) for shape in shapes]
    method = b.mamba2 if kind == "mamba2" else b.selective_scan
    out = method(*values[:5], state=values[5] if state else None, return_state=return_state)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    return rlx.compile(b.module(), threads=THREADS, tuning=tuning, tune=TUNE_SECONDS if tuning is None else False)


def numpy_mamba2(x, dt, a, b, c):
    """The time loop, vectorized over batch and heads."""
    batch, seq, heads, p = x.shape
    s = np.zeros((batch, heads, p, b.shape[-1]), np.float32)
    y = np.empty_like(x)
    for t in range(seq):
        s *= np.exp(dt[:, t] * a)[..., None, None]
        s += (dt[:, t, :, None] * x[:, t])[..., None] * b[:, t, :, None, :]
        y[:, t] = np.matmul(s, c[:, t, :, :, None])[..., 0]
    return y


def torch_ssd_minimal(torch, x, dt, a, b, c, chunk: int = 64):
    """mamba's `ssd_minimal_discrete` (the chunked SSD algorithm), in PyTorch eager
    without einops; S must be a multiple of `chunk`."""
    batch, seq, heads, p = x.shape
    n = b.shape[-1]
    chunks = seq // chunk

    def segsum(v):  # [..., T] -> [..., T, T]: sum of v over (j, i], -inf above the diagonal
        t = v.shape[-1]
        v = v[..., None].expand(*v.shape, t)
        v = v.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool), -1), 0)
        v = torch.cumsum(v, dim=-2)
        return v.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool), 0), -torch.inf)

    xs = (x * dt[..., None]).reshape(batch, chunks, chunk, heads, p)
    la = (dt * a).reshape(batch, chunks, chunk, heads).permute(0, 3, 1, 2)  # b h c l
    bs = b.reshape(batch, chunks, chunk, heads, n)
    cs = c.reshape(batch, chunks, chunk, heads, n)
    cum = torch.cumsum(la, dim=-1)
    decay = torch.exp(segsum(la))  # b h c l s
    y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", cs, bs, decay, xs)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", bs, torch.exp(cum[..., -1:] - cum), xs)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    chunk_decay = torch.exp(segsum(torch.nn.functional.pad(cum[..., -1], (1, 0))))
    states = torch.einsum("bhzc,bchpn->bzhpn", chunk_decay, states)[:, :-1]
    y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", cs, states, torch.exp(cum))
    return (y_diag + y_off).reshape(batch, seq, heads, p)


def mamba2_jax_scan(jax: ModuleType) -> Callable[..., object]:
    """The time loop as `jax.jit(lax.scan)`, state [B,H,P,N]."""
    jnp = jax.numpy

    @jax.jit
    def run(x, dt, a, b, c):
        batch, _, heads, p = x.shape

        def body(s, xs):
            x_t, dt_t, b_t, c_t = xs
            s = s * jnp.exp(dt_t * a)[..., None, None] + (dt_t[..., None] * x_t)[..., None] * b_t[:, :, None, :]
            return s, jnp.einsum("bhpn,bhn->bhp", s, c_t)

        xs = tuple(jnp.moveaxis(v, 1, 0) for v in (x, dt, b, c))
        _, y = jax.lax.scan(body, jnp.zeros((batch, heads, p, b.shape[-1]), x.dtype), xs)
        return jnp.moveaxis(y, 0, 1)

    return run


def torch_mamba2_step(torch, x, dt, a, b, c, s):
    """One decode step (S = 1) with the carried state: y and the new state."""
    s = s * torch.exp(dt[:, 0] * a)[..., None, None] + (dt[:, 0, :, None] * x[:, 0])[..., None] * b[:, 0, :, None, :]
    return torch.matmul(s, c[:, 0, :, :, None])[..., 0], s


def numpy_selective_scan(x, delta, a, b, c):
    batch, seq, channels = x.shape
    h = np.zeros((batch, channels, a.shape[1]), np.float32)
    y = np.empty_like(x)
    for t in range(seq):
        h *= np.exp(delta[:, t, :, None] * a)
        h += (delta[:, t] * x[:, t])[..., None] * b[:, t, None, :]
        y[:, t] = np.matmul(h, c[:, t, :, None])[..., 0]
    return y


def _agreement(reference: np.ndarray, **others: np.ndarray) -> str:
    scale = float(np.abs(reference).max())
    return ", ".join(f"{name} {float(np.abs(v - reference).max()) / scale:.1e}" for name, v in others.items())


def mamba2_section(bench: Bench) -> None:
    """Mamba2 prefill (both forms) and a decode step (f32)."""
    torch = bench.torch
    batch, seq, heads, p, n = MAMBA2
    inputs = _mamba2_inputs(bench.rng, batch, seq, heads, p, n)
    shapes = [v.shape for v in inputs]
    default = _scan_executable("mamba2", shapes)
    form = {"chunked": "chunked (SSD)", "sequential": "blocked"}.get(
        chosen_form(default, seq >= default.tuning.mamba2_chunked_min_seq), "blocked"
    )
    other_threshold = NEVER if form == "chunked (SSD)" else 1
    other = _scan_executable("mamba2", shapes, tuning={"mamba2_chunked_min_seq": other_threshold})
    other_form = "blocked" if form == "chunked (SSD)" else "chunked (SSD)"
    rlx_ms = bench.time(lambda: default(*inputs))  # first: torch's and OpenBLAS's threads spin a while after use
    peers = {
        f"rlx_mlir {other_form} form": bench.time(lambda: other(*inputs)),
        "NumPy time loop": bench.time(lambda: numpy_mamba2(*inputs)),
    }
    y = default(*inputs)[0]
    checks = {other_form: other(*inputs)[0], "numpy": numpy_mamba2(*inputs)}
    if torch is not None:
        with torch.inference_mode():
            tx = [torch.from_numpy(v) for v in inputs]
            peers["PyTorch eager ssd_minimal"] = bench.time(lambda: torch_ssd_minimal(torch, *tx))
            checks["torch"] = torch_ssd_minimal(torch, *tx).numpy()
    jax = jax_or_none()
    if jax is not None:
        run = mamba2_jax_scan(jax)
        peers["jax.jit(lax.scan)"] = bench.time(lambda: run(*inputs).block_until_ready())
        checks["jax"] = np.asarray(run(*inputs))
    title = f"Mamba2 prefill B{batch} S{seq} H{heads} P{p} N{n} f32 ({form} form)"
    report(bench, title, gflop(default), rlx_ms, peers)
    print(f"  max |difference| / max |y| vs rlx: {_agreement(y, **checks)}")

    step = [v[:, :1].copy() if v.ndim > 1 else v for v in inputs]
    state = bench.rng.standard_normal((batch, heads, p, n), dtype=np.float32)
    decode = _scan_executable("mamba2", [v.shape for v in step] + [state.shape], state=True, return_state=True)
    rlx_ms = bench.time(lambda: decode(*step, state))
    peers = {}
    if torch is not None:
        with torch.inference_mode():
            tx = [torch.from_numpy(v) for v in (*step, state)]
            peers["PyTorch eager step"] = bench.time(lambda: torch_mamba2_step(torch, *tx))
    report(
        bench,
        f"Mamba2 decode step B{batch} H{heads} P{p} N{n} f32 (state in and out)",
        gflop(decode),
        rlx_ms,
        peers,
    )


def selective_scan_section(bench: Bench) -> None:
    """Selective scan prefill (f32) against the NumPy loop."""
    batch, seq, channels, n = SCAN
    rng = bench.rng
    x = rng.standard_normal((batch, seq, channels), dtype=np.float32)
    delta = _softplus(rng.standard_normal((batch, seq, channels)) - 1.0)
    a = -np.exp(0.5 * rng.standard_normal((channels, n))).astype(np.float32)
    b, c = (rng.standard_normal((batch, seq, n), dtype=np.float32) for _ in range(2))
    scan = _scan_executable("selective_scan", [v.shape for v in (x, delta, a, b, c)])
    rlx_ms = bench.time(lambda: scan(x, delta, a, b, c))
    peers = {"NumPy time loop": bench.time(lambda: numpy_selective_scan(x, delta, a, b, c))}
    title = f"Selective scan B{batch} S{seq} D{channels} N{n} f32 (7 FLOP per state and step)"
    report(bench, title, gflop(scan), rlx_ms, peers)
    y = scan(x, delta, a, b, c)[0]
    print(f"  max |difference| / max |y| vs rlx: {_agreement(y, numpy=numpy_selective_scan(x, delta, a, b, c))}")


SECTIONS["mamba2"] = mamba2_section
SECTIONS["scan"] = selective_scan_section


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--only",
        type=_section_names,
        default=list(SECTIONS),
        help=f"comma-separated sections to run, of {','.join(SECTIONS)} (default: all)",
    )
    add_target_argument(parser)
    options = parser.parse_args()
    print(use_target(options.target))
    torch = torch_or_none(THREADS)
    bench = Bench(options.repeat, np.random.default_rng(0), torch, sgemm_gflops(options.repeat))
    print(f"threads = {THREADS}; sgemm f32 2048^3: {bench.sgemm_gflops:.1f} GFLOP/s")
    for name in options.only:
        SECTIONS[name](bench)


def _section_names(text: str) -> list[str]:
    """`--only gdn,mamba2`: known section names, in the order given."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown section {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    return names


if __name__ == "__main__":
    main()
