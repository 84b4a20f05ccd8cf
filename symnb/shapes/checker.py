"""Run a script or a notebook's code cells in check mode and collect every shape diagnostic.

The program runs one top-level statement at a time, so a statement that fails is reported and
the next one still runs (statements that needed its result then fail too: those are reported
as not checked, and do not hide later, independent bugs). Notebook cells run in order in one
namespace, as "Run All" would; magics are skipped.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import linecache
import os
import sys
import traceback
import warnings
from dataclasses import dataclass, field

from symnb.compile.checkmode import check_mode
from symnb.errors import ShapeWarning, SymnbError


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``severity`` is "error" (a symnb error), "warning" (a ShapeWarning),
    "failure" (another exception) or "not checked" (an exception after an earlier error)."""

    severity: str
    category: str
    message: str
    where: str
    lineno: int
    cell: int | None = None
    code: str = ""

    def format(self) -> str:
        head, *rest = self.message.split("\n")
        lines = [f"{self.where}: {self.severity}: {self.category}: {head}"]
        if self.code:
            lines.append(f"    {self.code}")
        lines += [f"  {line.strip()}" for line in rest if line.strip()]
        return "\n".join(lines)


@dataclass
class Chunk:
    """Code that runs as one unit: a whole script, or one notebook cell."""

    filename: str
    label: str
    source: str
    cell: int | None = None


@dataclass
class Report:
    """Everything ``symnb check`` found in one file."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    statements: int = 0
    skipped_cells: int = 0

    def of(self, *severities: str) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity in severities]

    @property
    def exit_code(self) -> int:
        """1 when the program has shape (or other symnb) errors, 2 when it failed otherwise."""
        if self.of("error"):
            return 1
        return 2 if self.of("failure") else 0

    def summary(self) -> str:
        counts = [_count(len(self.of(s)), s) for s in ("error", "warning", "failure")]
        extra = f", {len(self.of('not checked'))} not checked" if self.of("not checked") else ""
        cells = f", {self.skipped_cells} magic cells skipped" if self.skipped_cells else ""
        return f"{self.path}: {', '.join(counts)}{extra} ({self.statements} statements{cells})"

    def format(self) -> str:
        return "\n".join([d.format() for d in self.diagnostics] + [self.summary()])


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# -- reading programs ---------------------------------------------------------------------------
def script_chunks(path: str) -> list[Chunk]:
    with open(path, encoding="utf-8") as f:
        return [Chunk(os.path.abspath(path), path, f.read())]


def notebook_chunks(path: str) -> tuple[list[Chunk], int]:
    """One chunk per code cell (cells are numbered from 1 among all cells); cells that are a
    cell magic are skipped and counted."""
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    chunks, skipped = [], 0
    for number, cell in enumerate(notebook.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if source.lstrip().startswith("%%"):
            skipped += 1
            continue
        filename = f"<{os.path.abspath(path)} cell {number}>"
        chunks.append(Chunk(filename, f"{path}, cell {number}", _without_magics(source), number))
    return chunks, skipped


def _without_magics(source: str) -> str:
    """Line magics and shell escapes become ``pass`` (line numbers stay the same)."""
    out = []
    for line in source.split("\n"):
        stripped = line.lstrip()
        is_magic = stripped.startswith(("%", "!"))
        out.append(line[: len(line) - len(stripped)] + "pass" if is_magic else line)
    return "\n".join(out)


# -- running them -------------------------------------------------------------------------------
class _Runner:
    """Runs chunks statement by statement in one namespace, collecting diagnostics."""

    def __init__(self, report: Report, chunks: list[Chunk]):
        self.report = report
        self.chunks = {c.filename: c for c in chunks}
        self.namespace = {"__name__": "__main__", "__file__": report.path, "__builtins__": builtins}
        self.failed = False
        self.seen: set = set()

    def run(self, chunk: Chunk, caught: list) -> None:
        if chunk.cell is not None:  # a cell has no file: its lines go where tracebacks look
            lines = chunk.source.splitlines(keepends=True)
            linecache.cache[chunk.filename] = (len(chunk.source), None, lines, chunk.filename)
        try:
            tree = ast.parse(chunk.source, chunk.filename)
        except SyntaxError as exc:
            self._add_failure("failure", exc, chunk, exc.lineno or 1)
            return
        for statement in tree.body:
            self._run_statement(statement, chunk)
            self.collect_warnings(caught)

    def _run_statement(self, statement, chunk: Chunk) -> None:
        code = compile(ast.Module(body=[statement], type_ignores=[]), chunk.filename, "exec")
        self.report.statements += 1
        try:
            exec(code, self.namespace)
        except (KeyboardInterrupt, SystemExit):
            raise
        except SymnbError as exc:
            self._add_error(exc, chunk, statement.lineno)
        except Exception as exc:
            severity = "not checked" if self.failed else "failure"
            self._add_failure(severity, exc, chunk, self._raised_at(exc, statement.lineno))

    def _add_error(self, exc: SymnbError, chunk: Chunk, fallback_line: int) -> None:
        loc = getattr(exc, "location", None)
        if loc is not None:
            filename, lineno = loc.filename, loc.lineno
        else:
            filename, lineno = chunk.filename, self._raised_at(exc, fallback_line)
        message = str(exc).split("\n  at ")[0]
        self._add(Diagnostic("error", type(exc).__name__, message, *self._where(filename, lineno)))
        self.failed = True

    def _add_failure(self, severity: str, exc: Exception, chunk: Chunk, lineno: int) -> None:
        where = self._where(chunk.filename, lineno)
        self._add(Diagnostic(severity, type(exc).__name__, str(exc) or repr(exc), *where))
        self.failed = True

    def _raised_at(self, exc: BaseException, fallback: int) -> int:
        """The innermost line of the traceback that is in the program being checked."""
        lines = [
            f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename in self.chunks
        ]
        return lines[-1] if lines else fallback

    def collect_warnings(self, caught: list) -> None:
        for w in caught:
            if isinstance(w.message, ShapeWarning):
                category = type(w.message).__name__
                where = self._where(w.filename, w.lineno)
                self._add(Diagnostic("warning", category, str(w.message), *where))
        caught.clear()

    def _where(self, filename: str, lineno: int) -> tuple:
        chunk = self.chunks.get(filename)
        label = chunk.label if chunk else filename
        code = linecache.getline(filename, lineno).strip()
        return f"{label}, line {lineno}", lineno, chunk.cell if chunk else None, code

    def _add(self, diagnostic: Diagnostic) -> None:
        key = (diagnostic.severity, diagnostic.category, diagnostic.where, diagnostic.message)
        if key not in self.seen:
            self.seen.add(key)
            self.report.diagnostics.append(diagnostic)


@contextlib.contextmanager
def _program_environment(path: str, quiet_output: bool):
    """argv, sys.path and the working directory as if the program were run directly."""
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    sys.argv = [path]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    sink = io.StringIO() if quiet_output else None
    try:
        with contextlib.ExitStack() as stack:
            if sink is not None:
                stack.enter_context(contextlib.redirect_stdout(sink))
                stack.enter_context(contextlib.redirect_stderr(sink))
            yield
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)


def check_path(path: str, quiet_output: bool = True) -> Report:
    """Check a ``.py`` script or an ``.ipynb`` notebook; the program's own output is dropped
    unless ``quiet_output`` is False."""
    report = Report(path)
    if path.endswith(".ipynb"):
        chunks, report.skipped_cells = notebook_chunks(path)
    else:
        chunks = script_chunks(path)
    runner = _Runner(report, chunks)
    with _program_environment(path, quiet_output), check_mode():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", ShapeWarning)
            _run_all(runner, chunks, caught)
    return report


def _run_all(runner: _Runner, chunks: list[Chunk], caught: list) -> None:
    try:
        for chunk in chunks:
            runner.run(chunk, caught)
    except SystemExit:
        runner.collect_warnings(caught)  # the program ended itself: keep what it found
