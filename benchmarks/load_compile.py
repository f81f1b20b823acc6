"""Load and compile time of a whole model: BERT-base from ONNX (issue 21,
"Weights stay binary" and "Compile time of whole models").

    python benchmarks/load_compile.py [--exporters torchscript,dynamo] [--models-dir DIR]
                                      [--threads 2] [--profile N] [--no-jax]

BERT-base (transformers' `BertConfig` defaults: 12 layers, hidden 768, 109M
parameters, a ~435 MB .onnx) with random weights is exported by each of
torch's exporters (kept in `--models-dir` and reused when present: an export
takes a minute). Each measurement then runs in a fresh child process, so its
peak memory is its own (`ru_maxrss`) and nothing is cached in memory:

- cold: `frontends.onnx.load` at [1, 128] (load), `rlx_mlir.compile` of the
  module (compile), with the disk cache in an empty temporary folder;
- session: `rlx_mlir.onnx.InferenceSession`, its first run at [1, 128]
  (import, compile, one call), then a second input shape [2, 64] (what a new
  shape costs);
- warm: a new process running the session at [1, 128] on the session's
  cache folder (a disk-cache hit): opening the session, compiling for the
  feed (`session.executable`), the two together, then the first call (the
  model's own work, and the first touch of its weights' pages); then the
  same in one more process (the first warm process verifies and stamps the
  large entries no stamp vouches for yet; the weights' are stamped by their
  writer: `rlx_mlir/disk_cache.py`, "Stamps"), and once more under cProfile
  with `--profile N`;
- jax: `jax.jit` of the same forward pass written in jax.numpy with the same
  weights, its lower + compile (the compile-time peer; `--no-jax` leaves it out).

Every figure is wall seconds and the child's CPU seconds (user + system; the
host is shared), peak RSS in MB and anonymous resident MB at the step's end
(RSS counts the mapped weights' pages too). `--profile N` prints the N
functions of most cumulative time of the cold child and of a warm one
(cProfile).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from machine import add_target_argument, use_target  # this script's folder is on sys.path

FIRST, SECOND = (1, 128), (2, 64)
"""The (batch, sequence) of the first compile and of the new shape."""


def _bert_base() -> object:
    """BERT-base with seeded random weights, wrapped to input_ids -> last hidden state."""
    import torch
    import transformers
    from model_suite import LastHiddenState

    torch.manual_seed(0)
    model = transformers.BertModel(transformers.BertConfig(), add_pooling_layer=False)
    return LastHiddenState(model, "input_ids").eval()


def child_export(exporter: str, path: Path) -> None:
    from model_suite import TOKENS, export, token_ids

    blob = export(_bert_base(), {"input_ids": token_ids(*FIRST)}, {"input_ids": TOKENS.axes}, ["y"], exporter)
    path.write_bytes(blob)


def _export(exporter: str, folder: Path) -> Path:
    """The exported model's path (exported now unless `folder` holds it), in a
    child: a child inherits its parent's peak RSS, which torch's would swell."""
    path = folder / f"bert_base_{exporter}.onnx"
    if not path.exists():
        command = [sys.executable, __file__, "--child", f"export-{exporter}", str(path)]
        subprocess.run(command, check=True, capture_output=True)
    return path


def _usage() -> dict[str, float]:
    """This process's CPU seconds so far, its peak RSS in MB, and its anonymous
    resident memory now: RSS also counts the pages of mapped files it touched
    (weights read in place from the disk cache), which are the page cache's,
    shared with every process mapping them."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu": own.ru_utime + own.ru_stime, "rss": own.ru_maxrss / 1024, "anon": _anonymous_mb()}


def _anonymous_mb() -> float:
    """RssAnon + RssShmem of /proc/self/status (a large arena is an anonymous
    shared map: `runtime.aligned_buffer`), NaN where there is none."""
    try:
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        return sum(int(fields[k].split()[0]) for k in ("RssAnon", "RssShmem")) / 1024
    except (OSError, KeyError, ValueError):
        return float("nan")


def _timed(work: Callable[[], object]) -> tuple[object, dict[str, float]]:
    before, start = _usage(), time.perf_counter()
    result = work()
    after = _usage()
    wall = time.perf_counter() - start
    return result, {"wall": wall, "cpu": after["cpu"] - before["cpu"], "rss": after["rss"], "anon": after["anon"]}


def _ids(shape: tuple[int, int]) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 1000, shape, dtype=np.int64)


def child_cold(path: str, threads: int, profile: int) -> dict[str, object]:
    from rlx_mlir import compile
    from rlx_mlir.frontends.onnx import load

    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    module, load_row = _timed(lambda: load(path, {"input_ids": FIRST}))
    exe, compile_row = _timed(lambda: compile(module, threads=threads))
    if profiler:
        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("cumulative").print_stats(profile)
        stats.sort_stats("tottime").print_stats(profile)
    (y,) = exe(_ids(FIRST))  # type: ignore[operator]
    return {"load": load_row, "compile": compile_row, "checksum": float(np.abs(y).sum())}


def child_session(path: str, threads: int, profile: int = 0, second: bool = True) -> dict[str, object]:
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    from rlx_mlir.onnx import InferenceSession

    session, open_row = _timed(lambda: InferenceSession(path, threads=threads))
    feed = {"input_ids": _ids(FIRST)}
    _, compile_row = _timed(lambda: session.executable(feed))  # type: ignore[attr-defined]
    first, call_row = _timed(lambda: session.run(None, feed))  # type: ignore[attr-defined]
    first_row = _sum(compile_row, call_row)
    if profiler:
        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("cumulative").print_stats(profile)
        stats.sort_stats("tottime").print_stats(profile)
    checksum = float(np.abs(first[0]).sum())  # type: ignore[index]
    result: dict[str, object] = {"open": open_row, "compile": compile_row, "call": call_row}
    result.update({"first shape": first_row, "checksum": checksum})
    if second:
        _, result["second shape"] = _timed(lambda: session.run(None, {"input_ids": _ids(SECOND)}))  # type: ignore[attr-defined]
    return result


def child_jax() -> dict[str, object]:
    """jax.jit of BERT-base written in jax.numpy on the same seeded weights (the
    torch model's), passed as arguments as jax code does: the compile of the graph."""
    import jax
    import jax.numpy as jnp

    weights = {k: v.numpy() for k, v in _bert_base().state_dict().items()}  # type: ignore[attr-defined]

    def forward(params: dict[str, jax.Array], ids: jax.Array) -> jax.Array:
        def w(suffix: str) -> jax.Array:
            (value,) = [v for k, v in params.items() if k.endswith(suffix)]
            return value

        def norm(x: jax.Array, prefix: str) -> jax.Array:
            mean = x.mean(-1, keepdims=True)
            var = ((x - mean) ** 2).mean(-1, keepdims=True)
            return (x - mean) / jnp.sqrt(var + 1e-12) * w(prefix + ".weight") + w(prefix + ".bias")

        def dense(x: jax.Array, prefix: str) -> jax.Array:
            return x @ w(prefix + ".weight").T + w(prefix + ".bias")

        b, s = ids.shape
        x = w("word_embeddings.weight")[ids] + w("position_embeddings.weight")[:s]
        x = norm(x + w("token_type_embeddings.weight")[0], "embeddings.LayerNorm")
        for layer in range(12):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                dense(x, p + f"attention.self.{n}").reshape(b, s, 12, 64).transpose(0, 2, 1, 3)
                for n in ("query", "key", "value")
            )
            a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / 8.0, axis=-1) @ v
            a = dense(a.transpose(0, 2, 1, 3).reshape(b, s, 768), p + "attention.output.dense")
            x = norm(x + a, p + "attention.output.LayerNorm")
            h = jax.nn.gelu(dense(x, p + "intermediate.dense"), approximate=False)
            x = norm(x + dense(h, p + "output.dense"), p + "output.LayerNorm")
        return x

    _, row = _timed(lambda: jax.jit(forward).lower(weights, _ids(FIRST)).compile())
    return {"compile": row}


def _child(kind: str, path: Path, cache: Path, threads: int, profile: int) -> dict[str, object]:
    environment = {**os.environ, "RLX_MLIR_CACHE_DIR": str(cache), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, __file__, "--child", kind, str(path), "--threads", str(threads)]
    command += ["--profile", str(profile)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    if profile and done.stderr:
        print(done.stderr[-20000:], file=sys.stderr)
    if done.returncode:
        raise SystemExit(f"{kind} child failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _sum(first: dict[str, float], then: dict[str, float]) -> dict[str, float]:
    return {**then, "wall": first["wall"] + then["wall"], "cpu": first["cpu"] + then["cpu"]}


def _row(label: str, figures: dict[str, float]) -> str:
    return f"| {label} | {figures['wall']:.2f} | {figures['cpu']:.2f} | {figures['rss']:.0f} | {figures['anon']:.0f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exporters", default="torchscript,dynamo")
    parser.add_argument("--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "rlx_load_compile")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest functions of the cold child")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    add_target_argument(parser)
    args = parser.parse_args()
    if args.child:
        kind, path = args.child
        if kind == "cold":
            result = child_cold(path, args.threads, args.profile)
        elif kind.startswith("export-"):
            child_export(kind.removeprefix("export-"), Path(path))
            return
        elif kind == "jax":
            result = child_jax()
        elif kind == "warm":
            result = child_session(path, args.threads, args.profile, second=False)
        else:
            result = child_session(path, args.threads)
        print(json.dumps(result))
        return
    print(use_target(args.target))
    args.models_dir.mkdir(parents=True, exist_ok=True)
    for exporter in args.exporters.split(","):
        path = _export(exporter, args.models_dir)
        print(f"\nBERT-base, {exporter} export: {path.stat().st_size / 1e6:.0f} MB, threads={args.threads}")
        print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| step | wall s | CPU s | peak RSS MB (the child's, so far) | anonymous MB at its end |")
        print("|---|---|---|---|---|")
        with tempfile.TemporaryDirectory() as cold_cache, tempfile.TemporaryDirectory() as session_cache:
            cold = _child("cold", path, Path(cold_cache), args.threads, args.profile)
            print(_row(f"load {list(FIRST)}", cold["load"]))  # type: ignore[arg-type]
            print(_row("compile (cold)", cold["compile"]))  # type: ignore[arg-type]
            session = _child("session", path, Path(session_cache), args.threads, 0)
            print(_row("session: open", session["open"]))  # type: ignore[arg-type]
            print(_row(f"session: first run {list(FIRST)}", session["first shape"]))  # type: ignore[arg-type]
            print(_row(f"session: new shape {list(SECOND)}", session["second shape"]))  # type: ignore[arg-type]
            for label in ("new process, warm cache", "one more new process"):
                warm = _child("warm", path, Path(session_cache), args.threads, 0)
                print(_row(f"{label}: open", warm["open"]))  # type: ignore[arg-type]
                print(_row(f"{label}: compile {list(FIRST)}", warm["compile"]))  # type: ignore[arg-type]
                print(_row(f"{label}: open + compile", _sum(warm["open"], warm["compile"])))  # type: ignore[arg-type]
                print(_row(f"{label}: first call", warm["call"]))  # type: ignore[arg-type]
            if args.profile:
                _child("warm", path, Path(session_cache), args.threads, args.profile)
            if not args.no_jax:
                peer = _child("jax", path, Path(cold_cache), args.threads, 0)
                print(_row(f"peer: jax.jit lower + compile {list(FIRST)}", peer["compile"]))  # type: ignore[arg-type]
            same = cold["checksum"] == session["checksum"] == warm["checksum"]
            print(f"outputs agree across the three processes: {same} (sum |y| = {cold['checksum']:.6g})")
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
