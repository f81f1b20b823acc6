"""rlx-opt and rlx-run report every error as one line and exit 1, never a traceback.

The promise (DESIGN.md "Errors", README): the CLIs print ONE line
`rlx-opt: error: ...` / `rlx-run: error: ...` on stderr and exit 1. Most
checks call the tools' main() in-process (what the console scripts run: an
exception escaping main() is exactly a traceback); one runs both for real.
The last table holds inputs that once escaped as a traceback.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from ir_snippets import GRAPH, binary_op, one_op
from onnx import helper

from rlx_mlir.cli import opt as opt_cli
from rlx_mlir.cli import run as run_cli


def cli(tool: str, *args: str) -> tuple[int, str, str]:
    """(exit code, stderr, escaped exception) of `rlx-opt`/`rlx-run` args."""
    main = {"rlx-opt": opt_cli.main, "rlx-run": run_cli.main}[tool]
    out, err = io.StringIO(), io.StringIO()
    code, escaped = 0, ""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException as error:
            code, escaped = 1, f"{type(error).__name__}: {error}"
    return code, err.getvalue(), escaped


def assert_cli_error(tool: str, *args: str, message: str) -> None:
    """`tool args` exits 1 with one line `tool: error: ...` holding `message`."""
    code, stderr, escaped = cli(tool, *args)
    assert not escaped, f"traceback: {escaped}"
    assert code == 1, (code, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{tool}: error: "), lines[0]
    assert message in lines[0], lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of good and bad programs and inputs, named in the tables below as {d}."""
    d = tmp_path_factory.mktemp("cli")
    (d / "g.mlir").write_text(GRAPH)
    np.save(d / "a.npy", np.ones((4, 3), np.float32))
    np.save(d / "b.npy", np.ones(3, np.float32))
    np.save(d / "a64.npy", np.ones((4, 3), np.float64))
    np.save(d / "b4.npy", np.ones(4, np.float32))
    np.save(d / "big_endian.npy", np.ones((4, 3), ">f4"))
    np.savez(d / "a.npz", a=np.ones((4, 3), np.float32))
    (d / "truncated.npy").write_bytes((d / "a.npy").read_bytes()[:70])
    (d / "garbage.npy").write_bytes(b"hello world")
    np.save(d / "objects.npy", np.array([1, None], dtype=object), allow_pickle=True)
    (d / "bad.mlir").write_text(GRAPH.replace("%a, %b :", "%a %b :"))
    (d / "broadcast.mlir").write_text(GRAPH.replace("tensor<3xf32>", "tensor<5xf32>"))
    (d / "nonutf8.mlir").write_bytes(b"\xff\xfe\x00garbage")
    (d / "attr_kind.mlir").write_text(one_op("rlx.transpose", "{perm = [1, 0]}", "tensor<4x3xf32>"))
    (d / "declaration.mlir").write_text("func.func private @ext(tensor<3xf32>) -> tensor<3xf32>\n")
    (d / "self_use.mlir").write_text(
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %s = rlx.add %a, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n  func.return %s : tensor<3xf32>\n}\n"
    )
    (d / "gather.mlir").write_text(
        binary_op("rlx.gather", "{axis = 0 : i64}", "tensor<4xf32>", "tensor<1xi64>", "tensor<1xf32>")
    )
    np.save(d / "d.npy", np.ones(4, np.float32))
    np.save(d / "i.npy", np.array([9], np.int64))
    return d


def _in(files: Path, args: list[str]) -> list[str]:
    return [a.replace("{d}", str(files)) for a in args]


OPT_ERRORS = [
    (["{d}"], "Is a directory"),
    (["{d}/missing.mlir"], "No such file"),
    (["{d}/bad.mlir"], "bad.mlir:2:"),
    (["{d}/g.mlir", "-p", "no-such-pass"], "no-such-pass"),
    (["{d}/g.mlir", "-p", "plan-memory{alignment=-3}"], "alignment"),
    (["{d}/g.mlir", "-p", "default", "-t", "llvm", "-o", "{d}/no/such/dir/out.ll"], "No such file"),
    (["{d}/attr_kind.mlir"], "should be of base attribute array"),
    (["{d}/nonutf8.mlir"], "utf-8"),
    (["{d}/broadcast.mlir"], "incompatible broadcast shapes"),
    (["{d}/g.mlir", "-t", "nosuch"], "unknown target 'nosuch'"),
    (
        ["{d}/g.mlir", "-t", "llvm"],
        "LLVM IR is printed from lower-to-llvm's output (llvm.func ops), not from func.func",
    ),
]


@pytest.mark.parametrize(("args", "message"), OPT_ERRORS, ids=[" ".join(a) for a, _ in OPT_ERRORS])
def test_rlx_opt_error_is_one_line(files: Path, args: list[str], message: str) -> None:
    assert_cli_error("rlx-opt", *_in(files, args), message=message)


RUN_ERRORS = [
    (["-i", "{d}/a64.npy", "-i", "{d}/b.npy"], "must have dtype float32, got float64"),
    (["-i", "{d}/a.npy", "-i", "{d}/b4.npy"], "must have shape [3], got [4]"),
    (["-i", "{d}/truncated.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/garbage.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/objects.npy", "-i", "{d}/b.npy"], "cannot read input"),
    (["-i", "{d}/a.npz", "-i", "{d}/b.npy"], "argument #0"),
    (["--input", "a=missing.npy", "-i", "{d}/b.npy"], "cannot read input 'missing.npy'"),
    (["-i", "{d}/a.npy"], "takes 2 arrays, got 1"),
    ([], "takes 2 arrays, got 0"),
    (["-i", "{d}/a.npy", "-i", "{d}/b.npy", "-i", "{d}/b.npy"], "takes 2 arrays, got 3"),
    (["-i", "{d}/a.npy", "-i", "{d}/b.npy", "-o", "{d}/no/such/dir/out.npz"], "No such file"),
    (["-p", "no-such-pass", "-i", "{d}/a.npy", "-i", "{d}/b.npy"], "no-such-pass"),
    (["--entry", "nope", "-i", "{d}/a.npy", "-i", "{d}/b.npy"], "expected exactly one function"),
]


@pytest.mark.parametrize(("args", "message"), RUN_ERRORS, ids=[" ".join(a) or "no inputs" for a, _ in RUN_ERRORS])
def test_rlx_run_error_is_one_line(files: Path, args: list[str], message: str) -> None:
    assert_cli_error("rlx-run", str(files / "g.mlir"), *_in(files, args), message=message)


@pytest.mark.parametrize(
    ("file", "message"),
    [
        ("{d}", "Is a directory"),
        ("{d}/missing.mlir", "No such file"),
        ("{d}/bad.mlir", ":2:"),
        ("{d}/broadcast.mlir", "incompatible broadcast shapes"),
    ],
)
def test_rlx_run_bad_file_is_one_line(files: Path, file: str, message: str) -> None:
    assert_cli_error("rlx-run", file.replace("{d}", str(files)), message=message)


def test_rlx_run_index_error_is_one_line(files: Path) -> None:
    assert_cli_error(
        "rlx-run",
        str(files / "gather.mlir"),
        "-i",
        str(files / "d.npy"),
        "-i",
        str(files / "i.npy"),
        message="rlx.gather: index 9 is out of range for axis 0 with size 4",
    )


def test_cli_processes_report_one_line(files: Path) -> None:
    """The real console entry points, end to end (one process per tool)."""
    for tool, args in [
        ("opt", [str(files / "bad.mlir")]),
        ("run", [str(files / "g.mlir"), "-i", str(files / "a64.npy"), "-i", str(files / "b.npy")]),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", f"rlx_mlir.cli.{tool}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"rlx-{tool}: error: "), result.stderr


@pytest.fixture(scope="module")
def onnx_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """y = Relu(x) over x: [n, 3], a model with unsupported nodes, and inputs."""
    d = tmp_path_factory.mktemp("cli_onnx")
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 3])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 3])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y]))
    onnx.save(model, str(d / "m.onnx"))
    (d / "corrupt.onnx").write_bytes((d / "m.onnx").read_bytes()[:-7])
    model.graph.node.extend(
        [helper.make_node("NonMaxSuppression", ["y"], ["a"], name="nms"), helper.make_node("NonZero", ["a"], ["b"])]
    )
    onnx.save(model, str(d / "unsupported.onnx"))
    np.save(d / "x.npy", np.ones((2, 3), np.float32))
    np.save(d / "x64.npy", np.ones((2, 3), np.float64))
    np.save(d / "x4.npy", np.ones((2, 4), np.float32))
    return d


ONNX_RUN_ERRORS = [
    ([], "missing input(s) 'x'"),
    (["-i", "q={d}/x.npy"], "unknown input 'q': the model's inputs are 'x'"),
    (["-i", "x={d}/x.npy", "-i", "x={d}/x.npy"], "--input gives 'x' twice"),
    (["-i", "{d}/x.npy", "-i", "{d}/x.npy"], "the model takes 1 input(s) (x), got 2 --input files"),
    (["-i", "{d}/x64.npy"], "input 'x' has dtype float64, the model takes float32 (tensor(float))"),
    (["-i", "{d}/x4.npy"], "input 'x' has shape [2, 4]: dimension 1 must be 3"),
    (["-i", "{d}/x.npy", "--input-shape", "x=4x3"], "--input-shape gives 'x' the shape [4, 3], its .npy file [2, 3]"),
    (["-i", "{d}/x.npy", "--input-shape", "y=4x3"], "--input-shape names no input of the model: 'y'"),
    (["-i", "{d}/x.npy", "--entry", "relu"], "--entry picks a function of an .mlir file"),
    (["-i", "{d}/x.npy", "--threads", "-1"], "argument --threads: takes a count >= 0 (0: every CPU), got '-1'"),
    (["-i", "{d}/x.npy", "--threads", "two"], "argument --threads: takes a count >= 0"),
    (["--input-shape", "x=2by3"], "input shape 'x=2by3': expected NAME=DxDx..."),
]


@pytest.mark.parametrize(
    ("args", "message"), ONNX_RUN_ERRORS, ids=[" ".join(a) or "no inputs" for a, _ in ONNX_RUN_ERRORS]
)
def test_rlx_run_onnx_error_is_one_line(onnx_files: Path, args: list[str], message: str) -> None:
    assert_cli_error("rlx-run", str(onnx_files / "m.onnx"), *_in(onnx_files, args), message=message)


UNSUPPORTED = "cannot import 2 node(s) or output(s) of the ONNX graph: NonMaxSuppression 'nms': no importer for this op type; NonZero"

ONNX_FILE_ERRORS = [
    ("rlx-opt", ["{d}/m.onnx"], "input 'x' has a dynamic dimension 'n'"),
    ("rlx-opt", ["{d}/corrupt.onnx"], "cannot read the ONNX model"),
    ("rlx-run", ["{d}/corrupt.onnx"], "cannot read the ONNX model"),
    ("rlx-opt", ["{d}/m.onnx", "-f", 'onnx{input-shapes="y=2x3"}'], "input_shapes names no graph input: y"),
    ("rlx-opt", ["{d}/unsupported.onnx", "-f", 'onnx{input-shapes="x=2x3"}'], UNSUPPORTED),
    # a model compiled at its first run: every node, not only the first
    ("rlx-run", ["{d}/unsupported.onnx", "-i", "{d}/x.npy"], UNSUPPORTED),
]


@pytest.mark.parametrize(
    ("tool", "args", "message"), ONNX_FILE_ERRORS, ids=[f"{t} {' '.join(a)}" for t, a, _ in ONNX_FILE_ERRORS]
)
def test_onnx_file_error_is_one_line(onnx_files: Path, tool: str, args: list[str], message: str) -> None:
    """A dynamic dimension without a shape, a corrupt file, a shape naming no input, and
    unsupported nodes (all of them, on the one line) as rlx-opt or rlx-run reads the model."""
    assert_cli_error(tool, *_in(onnx_files, args), message=message)


# ---------------------------------------------------------------------------
# Regressions: inputs that once escaped main() as a traceback (rlx-run only
# caught RlxError/OSError/IndexError; rlx-opt missed ArgSpecParseError and
# pass-internal errors), or printed a misleading message.
# ---------------------------------------------------------------------------

CLI_TRACEBACKS = [
    # UnicodeDecodeError
    ("rlx-run", ["{d}/nonutf8.mlir"], "'utf-8' codec can't decode byte 0xff"),
    # xdsl VerifyException
    ("rlx-run", ["{d}/attr_kind.mlir"], "[1 : i64, 0 : i64] should be of base attribute array"),
    # ValueError from plan_memory
    ("rlx-run", ["{d}/declaration.mlir"], "expected exactly one function to compile"),
    # KeyError from fuse_elementwise
    ("rlx-run", ["{d}/self_use.mlir", "-i", "{d}/b.npy"], "'rlx.add' operand #1 %s is used before it is defined"),
    # ArgSpecParseError
    (
        "rlx-run",
        ["{d}/g.mlir", "-p", "fuse-elementwise{", "-i", "{d}/a.npy", "-i", "{d}/b.npy"],
        "bad pipeline 'fuse-elementwise{'",
    ),
    ("rlx-opt", ["{d}/g.mlir", "-p", "fuse-elementwise{"], "Error parsing pass pipeline specification"),
    ("rlx-opt", ["{d}/g.mlir", "-p", ",,"], "Error parsing pass pipeline specification"),
    # KeyError from fuse_elementwise
    ("rlx-opt", ["{d}/self_use.mlir", "-p", "default"], "'rlx.add' operand #1 %s is used before it is defined"),
    # ValueError "'block' property of Region class is only available for single-block regions"
    (
        "rlx-opt",
        ["{d}/declaration.mlir", "-p", "default"],
        "'func.func' @ext has 0 blocks; rlx functions are one block of ops",
    ),
]


@pytest.mark.parametrize(
    ("tool", "args", "message"), CLI_TRACEBACKS, ids=[f"{t} {' '.join(a)}" for t, a, _ in CLI_TRACEBACKS]
)
def test_cli_does_not_print_a_traceback(files: Path, tool: str, args: list[str], message: str) -> None:
    assert_cli_error(tool, *_in(files, args), message=message)
