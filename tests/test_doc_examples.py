"""Every code block of README.md, docs/*.md and benchmarks/README.md runs, so no
example can rot.

A fence's info string says what a block is and how it is checked:

- `python`: executed in a fresh namespace, in a scratch folder that sees the
  repository's `examples/` and `tests/`; the blocks of one page run in order,
  so a later block may read a file an earlier one wrote. A block with an
  `if __name__ == "__main__":` guard is a script (it starts processes) and
  runs as one, in a subprocess (marked slow);
- `mlir`: a whole module, parsed and verified with the rlx context;
- `mlir fragment`: IR lines with free values (the dialect reference's
  excerpts): every op it names must be a registered op;
- `sh`: each line must be an `rlx-opt` or `rlx-run` command; it runs through
  the tool's `main` in the page's scratch folder and must exit 0 and print;
- `LANG no-run: REASON`: not run, for the reason given (installs, benchmarks,
  the test command itself); the reason is required;
- `text`: output, not code.

A fence with any other info string, or none, fails the test: say what it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import rlx_mlir as rlx
from rlx_mlir.builder import Builder
from rlx_mlir.cli import opt, run
from rlx_mlir.context import make_context
from rlx_mlir.dialects.elision import elided_text
from rlx_mlir.dialects.rlx import RLX
from rlx_mlir.passes.default_pipeline import BACKEND_PASSES, TENSOR_PASSES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "README.md"]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL
)
OP_USE = re.compile(r"(?:=\s*|^\s*)\"?(rlx\.[a-z0-9_]+)", re.MULTILINE)
SCRIPT_GUARD = 'if __name__ == "__main__":'
CLI_TOOLS = {"rlx-opt": opt.main, "rlx-run": run.main}
OP_NAMES = {op.name for op in RLX.operations}
UNTAGGED_ELSEWHERE = {
    "docs/architecture.md": "its layer diagram fence has no info string (```text); the layout branch edits that table",
}
"""Pages whose fences other branches of issue 20 are rewriting: expected to fail
(strictly, so the entry must go once a page's fences are tagged)."""


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def is_script(self) -> bool:
        return self.info == "python" and SCRIPT_GUARD in self.body


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    found = []
    for m in FENCE.finditer(text):
        body = "\n".join(line[len(m["indent"]) :] for line in m["body"].splitlines())
        found.append(Block(page, text.count("\n", 0, m.start()) + 1, m["info"].strip(), body))
    return found


def no_run_reason(info: str) -> str | None:
    """The reason of a `LANG no-run: REASON` fence, "" if it is missing, None if not no-run."""
    _, _, rest = info.partition(" ")
    if not rest.startswith("no-run"):
        return None
    return rest.removeprefix("no-run").lstrip(":").strip()


def check_block(block: Block, cwd: Path) -> None:
    """Run or check one block; raise (AssertionError or the example's own error) if it fails."""
    reason = no_run_reason(block.info)
    if reason is not None:
        assert reason, f"{block.where}: a no-run block must say why (```{block.info}: REASON)"
    elif block.info == "python":
        exec(compile(block.body, block.where, "exec"), {"__name__": "__doc_example__"})
    elif block.info == "mlir":
        rlx.parse(block.body)
    elif block.info == "mlir fragment":
        used = set(OP_USE.findall(block.body))
        assert used, f"{block.where}: an mlir fragment with no rlx op"
        assert used <= OP_NAMES, f"{block.where}: unknown ops {sorted(used - OP_NAMES)}"
    elif block.info == "sh":
        for command in (c for c in block.body.splitlines() if c.strip() and not c.startswith("#")):
            run_cli(command, cwd, block.where)
    else:
        assert block.info == "text", f"{block.where}: untagged or unknown fence ```{block.info}"


def tool_env() -> dict[str, str]:
    """A subprocess environment that imports this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return env


def run_cli(command: str, cwd: Path, where: str) -> None:
    """Run an rlx-opt/rlx-run line through the console scripts' own `main`, in this
    process (a fresh interpreter per line would cost seconds; tests/test_cli.py
    runs the installed scripts as processes)."""
    argv = shlex.split(command, comments=True)
    assert argv[0] in CLI_TOOLS, f"{where}: only {sorted(CLI_TOOLS)} run from docs; mark others no-run"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            CLI_TOOLS[argv[0]](argv[1:])
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    assert code == 0, f"{where}: `{command}` exited {code}: {stderr.getvalue().strip()}"
    assert stdout.getvalue(), f"{where}: `{command}` printed nothing"


def scratch(tmp_path: Path) -> Path:
    for folder in ("examples", "tests"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    return tmp_path


def _page_param(page: Path) -> object:
    name = str(page.relative_to(ROOT))
    reason = UNTAGGED_ELSEWHERE.get(name)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(page, id=name, marks=marks)


@pytest.mark.parametrize("page", [_page_param(p) for p in PAGES])
def test_code_blocks_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = scratch(tmp_path)
    monkeypatch.chdir(cwd)
    for block in blocks(page):
        if not block.is_script:  # scripts: test_script_blocks_run
            check_block(block, cwd)


SCRIPTS = [b for page in PAGES for b in blocks(page) if b.is_script]


@pytest.mark.slow
@pytest.mark.parametrize("block", SCRIPTS, ids=lambda b: b.where)
def test_script_blocks_run(block: Block, tmp_path: Path) -> None:
    script = scratch(tmp_path) / "example.py"
    script.write_text(block.body)
    done = subprocess.run(
        [sys.executable, str(script)],
        check=False,
        cwd=tmp_path,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{block.where}: exited {done.returncode}: {done.stderr[-2000:]}"


def test_readme_pipeline_lists_the_default_passes_in_order() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The pipeline", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\d+\. `([a-z0-9-]+)`", section, re.MULTILINE)
    assert listed == [p.name for p in (*TENSOR_PASSES, *BACKEND_PASSES)]


def test_compile_plans_as_the_default_pipeline_does() -> None:
    """`rlx.compile` runs the backend passes itself (with the compile's tuning): its
    planned function is the one `-p default` reaches before lower-to-llvm, both
    weight layouts applied (a conv's weight in lanes, a GEMM's in panels)."""
    rng = np.random.default_rng(0)
    b = Builder("f")
    conv = b.conv(b.input((1, 16, 32, 32)), b.constant(rng.standard_normal((32, 16, 3, 3)).astype(np.float32)))
    b.output(b.relu(conv), b.matmul(b.input((64, 256)), b.constant(rng.standard_normal((256, 128)).astype(np.float32))))
    module = b.module()
    planned = rlx.compile(module, tune=False).planned_ir
    assert "weight_lanes" in planned and "rhs_panels" in planned
    ctx = make_context()
    for p in (*TENSOR_PASSES, *BACKEND_PASSES):
        if p.name != "lower-to-llvm":
            p.apply(ctx, module)
    (function,) = module.ops
    assert elided_text(function) == planned


def test_readme_stays_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_quickstart_prints_the_ir_after_every_pass(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    passes = (*TENSOR_PASSES, *BACKEND_PASSES)
    for k, stage in enumerate(passes, 1):
        assert f"// ----- {k}/{len(passes)} after {stage.name}" in out
    assert "rlx.elementwise_region" in out and "llvm dialect" in out
    error = float(out.rsplit("max abs error vs float64 NumPy: ", 1)[1])
    assert error < 1e-5


# --- the checker itself can fail ---------------------------------------------------------------


def _block(info: str, body: str) -> Block:
    return Block(ROOT / "README.md", 1, info, body)


@pytest.mark.parametrize(
    ("info", "body", "error"),
    [
        ("python", "y = x + 1", NameError),
        ("mlir", "func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {\n  func.return %a : tensor<2xf32>\n}", Exception),
        ("mlir fragment", "%y = rlx.no_such_op %x : (f32) -> f32", AssertionError),
        ("sh", "ls", AssertionError),
        ("sh", "rlx-opt no/such/file.mlir", AssertionError),
        ("sh no-run", "anything", AssertionError),
        ("", "untagged", AssertionError),
    ],
)
def test_a_broken_block_fails(info: str, body: str, error: type[Exception], tmp_path: Path) -> None:
    with pytest.raises(error):
        check_block(_block(info, body), tmp_path)


def test_fences_are_found_with_their_info_and_indent() -> None:
    page = ROOT / "docs" / "numerics.md"
    found = {b.info for b in blocks(page)}
    assert "mlir" in found and any(no_run_reason(i) for i in found)
