"""rlx-opt and rlx-run misuse: bad flags, files and option strings.

Each row is `name: (tool, arguments, exit code, stderr fragment)`. The runner
(tests/test_corpus.py) runs every row as a real process, with a timeout, in a
directory holding the files of `FILES` (`{d}` in an argument is that
directory), and checks: the exit code, the fragment, and no traceback.
Every error, usage errors included, is one line `<tool>: error: ...` and
exit code 1; a row of exit code 0 is a hostile input that is valid.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

GRAPH = """func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %s = rlx.add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %t = rlx.tanh %s : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
"""


GENERIC_SPLAT = """func.func @f() -> tensor<f32> {
  %c = "rlx.constant"() <{value = dense<1.0> : tensor<1000000000xf32>}> : () -> tensor<1000000000xf32>
  %s = rlx.reduce_sum %c {axes = array<i64: 0>} : (tensor<1000000000xf32>) -> tensor<f32>
  func.return %s : tensor<f32>
}
"""
"""Issue 22: xDSL's parser expanded this splat (23 GB); rlx-opt keeps it one value."""


def write_files(d: Path) -> None:
    """The programs and arrays the rows name."""
    (d / "g.mlir").write_text(GRAPH)
    (d / "empty.mlir").write_text("")
    (d / "split.mlir").write_text(GRAPH + "\n// -----\n" + GRAPH.replace("rlx.tanh %s", "rlx.tanh %zz"))
    (d / "binary.mlir").write_bytes(bytes(range(256)))
    (d / "f80.mlir").write_text(
        "func.func @f() -> tensor<2xf80> {\n  %c = rlx.constant dense<1.0> : tensor<2xf80>\n"
        "  func.return %c : tensor<2xf80>\n}\n"
    )
    (d / "deep.mlir").write_text("builtin.module {" * 5000 + "}" * 5000)
    (d / "huge_dim.mlir").write_text(GRAPH.replace("4x3xf32", "4611686018427387904x3xf32"))
    (d / "fake.onnx").write_bytes(b"this is not a protobuf")
    (d / "generic_splat.mlir").write_text(GENERIC_SPLAT)
    np.save(d / "a.npy", np.ones((4, 3), np.float32))
    np.save(d / "b.npy", np.ones(3, np.float32))
    np.save(d / "a_int.npy", np.ones((4, 3), np.int32))
    np.save(d / "scalar.npy", np.float32(1))
    (d / "header_only.npy").write_bytes((d / "a.npy").read_bytes()[:128])
    (d / "empty.npy").write_bytes(b"")
    (d / "out_dir.npz").mkdir()


CASES: dict[str, tuple[str, list[str], int, str]] = {
    # ---- rlx-opt
    "rlx-opt unknown flag": (
        "rlx-opt",
        ["{d}/g.mlir", "--frobnicate"],
        1,
        "rlx-opt: error: unrecognized arguments: --frobnicate",
    ),
    "rlx-opt unknown short flag": ("rlx-opt", ["{d}/g.mlir", "-Z"], 1, "rlx-opt: error: unrecognized arguments: -Z"),
    "rlx-opt unknown flag with a value": (
        "rlx-opt",
        ["--frobnicate=1", "{d}/g.mlir"],
        1,
        "rlx-opt: error: unrecognized arguments: --frobnicate=1",
    ),
    "rlx-opt a misspelt flag": (
        "rlx-opt",
        ["{d}/g.mlir", "--split-input-files"],
        1,
        "rlx-opt: error: unrecognized arguments: --split-input-files",
    ),
    "rlx-opt a generic splat of 10^9 elements": ("rlx-opt", ["{d}/generic_splat.mlir", "-p", "default"], 0, ""),
    "rlx-opt -p without a value": (
        "rlx-opt",
        ["{d}/g.mlir", "-p"],
        1,
        "rlx-opt: error: argument -p/--passes: expected",
    ),
    "rlx-opt pass with an unclosed option list": (
        "rlx-opt",
        ["{d}/g.mlir", "-p", "plan-memory{alignment=64"],
        1,
        "Error parsing pass pipeline specification",
    ),
    "rlx-opt pass option that does not exist": ("rlx-opt", ["{d}/g.mlir", "-p", "plan-memory{nope=1}"], 1, "nope"),
    "rlx-opt pass option of the wrong type": (
        "rlx-opt",
        ["{d}/g.mlir", "-p", "lower-to-llvm{threads=many}"],
        1,
        "Incompatible types: given ('many',)",
    ),
    "rlx-opt an empty pass name": (
        "rlx-opt",
        ["{d}/g.mlir", "-p", "cse,,dce"],
        1,
        "Error parsing pass pipeline specification",
    ),
    "rlx-opt autodiff wrt out of range": ("rlx-opt", ["{d}/g.mlir", "-p", "autodiff{wrt=5}"], 1, "5"),
    "rlx-opt a binary file": ("rlx-opt", ["{d}/binary.mlir"], 1, "utf-8"),
    "rlx-opt an f80 constant": ("rlx-opt", ["{d}/f80.mlir"], 1, "unsupported syntax"),
    "rlx-opt 5,000 nested modules": ("rlx-opt", ["{d}/deep.mlir"], 1, "nests too deeply"),
    "rlx-opt a dimension beyond 2^62 lowered": ("rlx-opt", ["{d}/huge_dim.mlir", "-p", "default"], 1, "too large"),
    "rlx-opt a bad case among split inputs": ("rlx-opt", ["{d}/split.mlir", "--split-input-file"], 1, "%zz"),
    "rlx-opt output into a file's path": ("rlx-opt", ["{d}/g.mlir", "-o", "{d}/g.mlir/out.mlir"], 1, "Not a directory"),
    "rlx-opt unknown target": ("rlx-opt", ["{d}/g.mlir", "-t", "wasm"], 1, "unknown target 'wasm'"),
    # ---- rlx-run
    "rlx-run unknown flag": (
        "rlx-run",
        ["{d}/g.mlir", "--frobnicate"],
        1,
        "rlx-run: error: unrecognized arguments: --frobnicate",
    ),
    "rlx-run no file": ("rlx-run", [], 1, "rlx-run: error: the following arguments are required: file"),
    "rlx-run an empty program": ("rlx-run", ["{d}/empty.mlir"], 1, "<input>:1:1: Could not parse entire input"),
    "rlx-run a binary program": ("rlx-run", ["{d}/binary.mlir"], 1, "utf-8"),
    "rlx-run an f80 constant": ("rlx-run", ["{d}/f80.mlir"], 1, "unsupported syntax"),
    "rlx-run 5,000 nested modules": ("rlx-run", ["{d}/deep.mlir"], 1, "nests too deeply"),
    "rlx-run int32 array for f32": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}/a_int.npy", "-i", "{d}/b.npy"],
        1,
        "must have dtype float32, got int32",
    ),
    "rlx-run 0-d array for a shaped input": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}/scalar.npy", "-i", "{d}/b.npy"],
        1,
        "must have shape [4, 3], got []",
    ),
    "rlx-run a header without data": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}/header_only.npy", "-i", "{d}/b.npy"],
        1,
        "cannot read input",
    ),
    "rlx-run an empty .npy": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}/empty.npy", "-i", "{d}/b.npy"],
        1,
        "the file is empty or cut short",
    ),
    "rlx-run an input that is a directory": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}", "-i", "{d}/b.npy"],
        1,
        "cannot read input",
    ),
    "rlx-run output onto a directory": (
        "rlx-run",
        ["{d}/g.mlir", "-i", "{d}/a.npy", "-i", "{d}/b.npy", "-o", "{d}/out_dir.npz"],
        1,
        "directory",
    ),
    "rlx-run a pipeline listing default": (
        "rlx-run",
        ["{d}/g.mlir", "-p", "default", "-i", "{d}/a.npy", "-i", "{d}/b.npy"],
        1,
        "pipeline lists 'default'",
    ),
    "rlx-run a malformed --input-shape": (
        "rlx-run",
        ["{d}/fake.onnx", "--input-shape", "x=1xbig"],
        1,
        "expected NAME=DxDx",
    ),
    "rlx-run a file that is not ONNX": ("rlx-run", ["{d}/fake.onnx"], 1, "cannot read the ONNX model"),
}
