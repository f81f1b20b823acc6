"""The hostile-input corpus (tests/corpus/): every case raises the error it names.

Sources, one case each:
- `tests/corpus/ir/*.mlir`: malformed IR split by `// -----`, each case headed
  by `// expect: <error type>: <message fragment>`;
- the verifier cases of the lit suite (`tests/lit/*/invalid*.mlir`): each
  case's first `// CHECK:` line is the message (FileCheck `{{regex}}` blocks
  kept as regexes) and the error a `VerificationError`; lit checks them
  through `rlx-opt --verify-diagnostics`, this runner through `compile()`;
- `tests/corpus/api.py`: API, Builder and run-time misuse (`CASES`), IR
  texts built in Python (`GENERATED_IR`: deep nesting, NUL bytes), and
  hostile inputs that are valid, with the value they must give (`RESULTS`);
- `tests/corpus/cli.py`: rlx-opt and rlx-run misuse, run as real processes.

Every IR case goes through `rlx.compile` (the exact error type and the
fragment) and, unless compile() alone rejects it (CompileError: IR that is
valid but not compilable), through rlx-opt's main in-process (exit 1, one
line `rlx-opt: error: ...` holding the fragment too, no escaped exception). Any other exception type
fails the case, and so does a case running past `DEADLINE` (a hang); a crash
takes the run down. In-process cases run back to back; each CLI case runs
as a process of its own.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus import api, cli

import rlx_mlir as rlx
from rlx_mlir.cli import opt as opt_cli

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"

DEADLINE = 60
"""Seconds any one in-process case may take before it counts as a hang."""

CLI_TIMEOUT = 120
"""Seconds a CLI process may take (it imports the compiler and may JIT)."""

ERRORS: dict[str, type[Exception]] = {
    cls.__name__: cls
    for cls in (rlx.ParseError, rlx.VerificationError, rlx.CompileError, rlx.ArgumentError, rlx.AllocationError)
}
EXPECT = re.compile(r"^// expect: (\w+): (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class IRCase:
    text: str
    error: type[Exception]
    pattern: re.Pattern[str]
    """What the message must contain (a literal fragment, or a FileCheck line as a regex)."""
    cli_pattern: re.Pattern[str] | None = None
    """What rlx-opt's line must contain, where it is worded otherwise (else `pattern`)."""


def _literal(fragment: str) -> re.Pattern[str]:
    return re.compile(re.escape(fragment))


def _filecheck(line: str) -> re.Pattern[str]:
    """A FileCheck pattern: literal text with `{{regex}}` blocks."""
    parts = re.split(r"\{\{(.*?)\}\}", line)
    return re.compile("".join(re.escape(p) if i % 2 == 0 else p for i, p in enumerate(parts)))


def _chunks(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based case number, text) of each `// -----` split of a file."""
    yield from enumerate(path.read_text().split("// -----"), 1)


def corpus_ir_cases() -> dict[str, IRCase]:
    cases = {}
    for path in sorted((CORPUS / "ir").glob("*.mlir")):
        for number, chunk in _chunks(path):
            expect = EXPECT.search(chunk)
            if expect is None:
                raise ValueError(f"{path.name} case {number} names no expected error")
            cases[f"{path.name}#{number}"] = IRCase(chunk, ERRORS[expect[1]], _literal(expect[2].strip()))
    return cases


def lit_verifier_cases() -> dict[str, IRCase]:
    cases = {}
    for path in sorted((HERE / "lit").glob("*/invalid*.mlir")):
        for number, chunk in _chunks(path):
            checks = [line.split("CHECK:", 1)[1].strip() for line in chunk.splitlines() if line.startswith("// CHECK:")]
            if checks:
                message = checks[0].removeprefix("Operation does not verify: ")
                cases[f"lit/{path.parent.name}/{path.name}#{number}"] = IRCase(
                    chunk, rlx.VerificationError, _filecheck(message)
                )
    return cases


def generated_cases() -> dict[str, IRCase]:
    return {
        f"generated: {name}": IRCase(
            text, error, _literal(fragment), _literal(api.CLI_WORDING[name]) if name in api.CLI_WORDING else None
        )
        for name, (text, error, fragment) in api.GENERATED_IR.items()
    }


IR_CASES = {**corpus_ir_cases(), **lit_verifier_cases(), **generated_cases()}


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail a case that runs longer than `seconds` (SIGALRM: the main thread, Unix)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the case ran past {seconds} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def raised_by(call: Callable[[], object]) -> BaseException:
    """What `call` raised within the deadline; a case that raises nothing fails."""
    with deadline(DEADLINE):
        try:
            call()
        except Exception as error:
            return error
    pytest.fail("no error was raised")


def check_error(error: BaseException, expected: type[Exception], pattern: re.Pattern[str]) -> None:
    assert type(error) is expected, f"expected {expected.__name__}, got {type(error).__name__}: {error}"
    assert pattern.search(str(error)), f"message lacks {pattern.pattern!r}: {error}"


def rlx_opt(path: Path) -> tuple[int, str]:
    """(exit code, stderr) of rlx-opt's main on `path`; an escaped exception fails the case."""
    err = io.StringIO()
    code = 0
    with deadline(DEADLINE), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            opt_cli.main([str(path)])
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, err.getvalue()


def test_the_corpus_has_at_least_300_cases() -> None:
    total = len(IR_CASES) + len(api.CASES) + len(api.RESULTS) + len(cli.CASES)
    print(
        f"\ncorpus: {len(IR_CASES)} IR cases ({len(corpus_ir_cases())} in tests/corpus/ir, "
        f"{len(lit_verifier_cases())} from the lit invalid files, {len(api.GENERATED_IR)} generated), "
        f"{len(api.CASES)} API cases, {len(api.RESULTS)} results, {len(cli.CASES)} CLI cases: {total}"
    )
    assert total >= 300


@pytest.mark.parametrize("name", IR_CASES)
def test_ir_case(name: str, tmp_path: Path) -> None:
    case = IR_CASES[name]
    check_error(raised_by(lambda: rlx.compile(case.text)), case.error, case.pattern)
    if case.error is rlx.CompileError:  # valid IR that only compile() refuses
        return
    source = tmp_path / "case.mlir"
    source.write_text(case.text)
    code, stderr = rlx_opt(source)
    lines = stderr.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("rlx-opt: error: "), (code, stderr)
    assert (case.cli_pattern or case.pattern).search(lines[0]), f"rlx-opt's line lacks the message: {lines[0]}"


@pytest.mark.parametrize("name", api.CASES)
def test_api_case(name: str) -> None:
    call, error, fragment = api.CASES[name]
    check_error(raised_by(call), error, _literal(fragment))


@pytest.mark.parametrize("name", api.RESULTS)
def test_result_case(name: str) -> None:
    call, expected = api.RESULTS[name]
    with deadline(DEADLINE):
        assert call() == expected


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the files the CLI cases name, written once."""
    d = tmp_path_factory.mktemp("corpus-cli")
    cli.write_files(d)
    return d


def run_cli(case: tuple[str, list[str], int, str], d: Path) -> subprocess.CompletedProcess[str]:
    """One CLI case as a process of its own (each test runs its own case: pytest-xdist
    spreads them over its workers, and a worker never runs another's processes)."""
    tool, args, _, _ = case
    command = [str(Path(sys.executable).with_name(tool)), *(a.replace("{d}", str(d)) for a in args)]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "", f"timed out after {CLI_TIMEOUT} s (a hang)")


@pytest.mark.parametrize("name", cli.CASES)
def test_cli_case(name: str, cli_files: Path) -> None:
    tool, _, code, fragment = cli.CASES[name]
    done = run_cli(cli.CASES[name], cli_files)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    assert fragment in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    if code != 0:
        assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), done.stderr
