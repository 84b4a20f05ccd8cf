"""Run a script or a notebook's code cells in check mode and collect every shape diagnostic.

The program runs one top-level statement at a time, so a statement that fails is reported and
the next one still runs (statements that needed its result then fail too: those are reported
as not checked, and do not hide later, independent bugs). Notebook cells run in order in one
namespace, as "Run All" would; ``%%symcompile`` cells are compiled (in check mode) as the magic
would, other cell magics and line magics are skipped. An error in a cell tagged
``raises-exception`` (the tag nbclient reads) is expected: reported, not counted.

The program runs in this process with the user's rights: checking a program is running it.
``symnb check`` runs each program in a child process (symnb.shapes.isolate) so that a program
that ends the process or never finishes is still reported.
"""

from __future__ import annotations
import __future__

import ast
import builtins
import contextlib
import functools
import json
import linecache
import operator
import os
import re
import sys
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from symnb.compile.checkmode import check_mode
from symnb.core.source import SourceLoc
from symnb.errors import ShapeWarning, SymnbError
from symnb.magics.cell import CellError, parse_line, symcompile


class ProgramUnreadable(ValueError):
    """The file cannot be read as a program: missing, not UTF-8, or a malformed notebook."""


class _ProcessExit(BaseException):
    """The program called ``os._exit``: the check stops there and says so (a BaseException,
    so that the program's own ``except Exception`` does not swallow it)."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _guarded_exit(real_exit, pid: int):
    """``os._exit`` for the program: in the checking process it raises _ProcessExit; a forked
    child (multiprocessing ends its workers with os._exit) exits as usual."""

    def exit_(status=0):
        if os.getpid() != pid:
            real_exit(status)
        raise _ProcessExit(status)

    return exit_


def _exit_status(code) -> int:
    """The status ``sys.exit(code)`` gives the process: 0 for None, the int, else 1 (Python
    prints the message)."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``severity`` is "error" (a symnb error, or a ShapeWarning that the program's
    own filter raised), "warning" (a ShapeWarning),
    "failure" (another exception), "not checked" (an exception after an earlier error) or
    "expected" (an exception in a cell tagged ``raises-exception``)."""

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
    magic: str | None = None  # the options of a %%symcompile cell (source is its body)
    expect_error: bool = False  # tagged raises-exception


@dataclass
class Report:
    """Everything ``symnb check`` found in one file; ``sink(event, fields)``, when given, hears
    each statement as it starts and each diagnostic as it is found."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    statements: int = 0
    skipped_cells: int = 0
    sink: Callable[[str, dict], None] | None = None

    def emit(self, event: str, fields: dict) -> None:
        if self.sink is not None:
            self.sink(event, fields)

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)
        self.emit("diagnostic", asdict(diagnostic))

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
        if self.of("expected"):
            extra += f", {len(self.of('expected'))} expected (cells tagged raises-exception)"
        cells = f", {self.skipped_cells} magic cells skipped" if self.skipped_cells else ""
        return f"{self.path}: {', '.join(counts)}{extra} ({self.statements} statements{cells})"

    def format(self) -> str:
        return "\n".join([d.format() for d in self.diagnostics] + [self.summary()])


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


# -- reading programs ---------------------------------------------------------------------------
def script_chunks(path: str) -> list[Chunk]:
    return [Chunk(os.path.abspath(path), path, _read(path))]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProgramUnreadable(f"cannot read {path}: {exc}") from None


def notebook_chunks(path: str) -> tuple[list[Chunk], int]:
    """One chunk per code cell (cells are numbered from 1 among all cells); cells that start
    with a cell magic other than %%symcompile are skipped and counted."""
    chunks, skipped = [], 0
    for number, cell in enumerate(_notebook_cells(path), start=1):
        if cell["cell_type"] != "code":
            continue
        source = cell["source"]
        first = source.lstrip().split("\n", 1)[0]
        filename = f"<{os.path.abspath(path)} cell {number}>"
        chunk = Chunk(filename, f"{path}, cell {number}", _without_magics(source), number)
        tags = cell["metadata"].get("tags")
        chunk.expect_error = isinstance(tags, list) and "raises-exception" in tags
        if first.startswith("%%symcompile"):  # (after blank lines, as IPython finds it)
            chunk.source, chunk.magic = source, first[len("%%symcompile") :]
        elif first.startswith("%%"):
            skipped += 1
            continue
        chunks.append(chunk)
    return chunks, skipped


def _notebook_cells(path: str) -> list[dict]:
    """The cells of an nbformat 4 notebook, sources joined; anything else is unreadable."""
    try:
        notebook = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise ProgramUnreadable(f"{path} is not a notebook: invalid JSON ({exc})") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise ProgramUnreadable(f"{path} is not a notebook in nbformat 4 (no list of 'cells')")
    version = notebook.get("nbformat", 4)
    if not isinstance(version, int) or isinstance(version, bool) or version < 4:
        raise ProgramUnreadable(
            f"{path} is not a notebook in nbformat 4 ('nbformat' is {version!r}, not 4 or more)"
        )
    return [_cell(path, number, cell) for number, cell in enumerate(cells, start=1)]


def _cell(path: str, number: int, cell) -> dict:
    source = cell.get("source", "") if isinstance(cell, dict) else None
    if isinstance(source, list):  # lines, each a str
        source = "".join(source) if all(isinstance(s, str) for s in source) else None
    metadata = cell.get("metadata", {}) if isinstance(cell, dict) else None
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    if not isinstance(source, str) or not isinstance(metadata, dict) or not isinstance(kind, str):
        raise ProgramUnreadable(
            f"{path}, cell {number}: malformed cell (it needs a cell_type, a text source (a str or "
            "a list of str) and a metadata dict)"
        )
    return {"cell_type": kind, "source": source, "metadata": metadata}


_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*)[%!].*$")
_HELP = re.compile(r"^(\s*)[\w.]+\?\??\s*$")


def _without_magics(source: str) -> str:
    """Line magics, shell escapes and ``name?`` help become ``pass`` (``files = !ls`` becomes
    ``files = None``), where a statement starts: not inside a string, brackets or after a
    backslash. Line numbers stay the same."""
    out, scan = [], _Scanner()
    for line in source.split("\n"):
        out.append(_blank_magic(line) if scan.at_statement_start else line)
        scan.feed(out[-1] + "\n")
    return "\n".join(out)


def _blank_magic(line: str) -> str:
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(("%", "!")) or _HELP.match(line):
        return indent + "pass"
    assigned = _ASSIGNED_MAGIC.match(line)
    return assigned.group(1) + "None" if assigned else line


class _Scanner:
    """Just enough of Python's tokenizer to know whether a line starts a statement."""

    def __init__(self):
        self.quote, self.depth, self.continued = None, 0, False

    @property
    def at_statement_start(self) -> bool:
        return self.quote is None and self.depth == 0 and not self.continued

    def feed(self, text: str) -> None:
        """Read one line (with its newline): a backslash ending its code continues it, as in
        Python; one ending a comment does not (nor one in a string: the string goes on)."""
        i, self.continued = 0, False
        while i < len(text):
            i = self._string(text, i) if self.quote else self._code(text, i)

    def _string(self, text: str, i: int) -> int:
        if text[i] == "\\":
            return i + 2
        if text.startswith(self.quote, i):
            i, self.quote = i + len(self.quote), None
            return i
        if text[i] == "\n" and len(self.quote) == 1:
            self.quote = None  # an unterminated one-line string: Python says so later
        return i + 1

    def _code(self, text: str, i: int) -> int:
        char = text[i]
        if char == "#":
            return text.find("\n", i) if "\n" in text[i:] else len(text)
        if char in "'\"":
            self.quote = char * 3 if text.startswith(char * 3, i) else char
            return i + len(self.quote)
        if char == "\\":
            self.continued = text.startswith(("\n", "\r\n"), i + 1)
            return i + 1
        if char in "([{":
            self.depth += 1
        elif char in ")]}":
            self.depth = max(0, self.depth - 1)
        return i + 1


_WHERE = ("where", "lineno", "cell", "code")  # what _Runner._where returns


def _names(code) -> tuple[set, set]:
    """(the names ``code`` reads, the names it binds at module level) of a statement or a
    cell's source; nothing for source that does not parse."""
    if isinstance(code, str):
        try:
            code = ast.parse(code)
        except SyntaxError:
            return set(), set()
    reads = {
        n.id for n in ast.walk(code) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    binds: set = set()
    pending = [code]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(node.name)  # what its body binds is its own
            continue
        if isinstance(
            node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
        ):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            binds.add(node.id)
        elif isinstance(node, ast.alias):
            binds.add((node.asname or node.name).split(".")[0])
        pending.extend(ast.iter_child_nodes(node))
    return reads, binds


# -- running them -------------------------------------------------------------------------------
def _not_a_docstring(statement: ast.stmt) -> list[ast.stmt]:
    """The body of a module that runs ``statement`` without taking a bare string for the
    module's docstring: a ``pass`` (no code) first."""
    value = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [ast.copy_location(ast.Pass(), statement), statement]
    return [statement]


def _future_flags(statement: ast.stmt) -> int:
    """The compiler flags a ``from __future__ import ...`` statement turns on (0 for others;
    a bad feature name is the SyntaxError compiling it raised)."""
    if not (isinstance(statement, ast.ImportFrom) and statement.module == "__future__"):
        return 0
    features = (getattr(__future__, alias.name, None) for alias in statement.names)
    return functools.reduce(operator.or_, (f.compiler_flag for f in features if f), 0)


class _Runner:
    """Runs chunks statement by statement in one namespace, collecting diagnostics."""

    def __init__(self, report: Report, chunks: list[Chunk]):
        self.report = report
        self.chunks = {c.filename: c for c in chunks}
        # a module of its own, which check_path sets as sys.modules["__main__"] while the
        # program runs (as runpy does): pickle finds the program's functions there (a
        # function sent to a process pool), and a spawned worker finds the script to import.
        # A notebook's has no file, as in a Jupyter kernel: a spawned worker (Dask's nanny)
        # would try to run the .ipynb as Python
        self.module = types.ModuleType("__main__")
        if not report.path.endswith(".ipynb"):  # absolute, as Python (3.9+) gives __main__'s
            self.module.__file__ = os.path.abspath(report.path)
        self.module.__builtins__ = builtins
        self.namespace = self.module.__dict__
        #: the process that checks: a forked child of the program is not it (see _run_all)
        self.pid = os.getpid()
        #: the compiler flags of the ``from __future__`` imports run so far: each statement is
        #: compiled alone, without the checker's own (``annotations``), as Python compiles the
        #: file with the program's
        self.future_flags = 0
        #: names that statements which failed would have bound (and nothing bound since): a
        #: later statement that fails reading one is "not checked", not a failure of its own
        self.unmade: set[str] = set()
        self.seen: set = set()

    def run(self, chunk: Chunk, caught: list) -> None:
        if chunk.cell is not None:  # a cell has no file: its lines go where tracebacks look
            lines = chunk.source.splitlines(keepends=True)
            linecache.cache[chunk.filename] = (len(chunk.source), None, lines, chunk.filename)
        if chunk.magic is not None:
            reads, binds = _names(_without_magics(chunk.source.partition("\n")[2]))
            words = chunk.magic.split()
            if words and words[0].isidentifier():
                binds.add(words[0])  # the function the cell compiles
            names = (reads, binds)
            self._execute(chunk, 1, lambda: self._symcompile(chunk), names)
            self.collect_warnings(caught)
            return
        try:
            tree = ast.parse(chunk.source, chunk.filename)
        except SyntaxError as exc:
            self._add_failure("failure", exc, chunk, exc.lineno or 1)
            return
        for statement in tree.body:
            body = [statement]
            if statement is not tree.body[0] or chunk.cell is not None:
                body = _not_a_docstring(statement)  # only a script's first is its __doc__
            module = ast.Module(body=body, type_ignores=[])
            code = compile(module, chunk.filename, "exec", self.future_flags, dont_inherit=True)
            self.future_flags |= _future_flags(statement)
            run = lambda c=code: exec(c, self.namespace)  # noqa: E731, S102
            self._execute(chunk, statement.lineno, run, _names(statement))
            self.collect_warnings(caught)

    def _symcompile(self, chunk: Chunk) -> None:
        """A %%symcompile cell, run and compiled (in check mode) as the magic would; its
        lines are numbered as the notebook shows them, from the blank lines before the
        %%symcompile line (which IPython drops) on."""
        blank = chunk.source[: len(chunk.source) - len(chunk.source.lstrip())]
        body = _without_magics(chunk.source.lstrip().partition("\n")[2])
        line = blank.count("\n") + 1
        try:
            args = parse_line(chunk.magic)
            symcompile(args, body, user_ns=self.namespace, filename=chunk.filename, magic_line=line)
        except CellError as exc:  # one naming no line (a wrong option): the %%symcompile line
            exc.location = getattr(exc, "location", None) or SourceLoc(chunk.filename, line)
            raise

    def _execute(self, chunk: Chunk, lineno: int, run: Callable[[], None], names) -> None:
        """Run one statement (or a %%symcompile cell), recording what it raises; ``names``:
        the (read, bound) names of its code."""
        reads, binds = names
        self.report.statements += 1
        self.report.emit("statement", dict(zip(_WHERE, self._where(chunk.filename, lineno))))
        try:
            run()
        except _ProcessExit as exc:
            ended = f"the program ended its process (os._exit({exc.status!r}))"
            self._stopped("ProcessExit", ended, exc, chunk, lineno)
            raise
        except SystemExit as exc:
            status = _exit_status(exc.code)
            if status:  # a failing run: what it did not reach is unchecked, not clean
                ended = f"the program exited with status {status} (sys.exit({exc.code!r}))"
                self._stopped("SystemExit", ended, exc, chunk, lineno)
            raise
        except KeyboardInterrupt:
            raise
        except (SymnbError, ShapeWarning) as exc:  # a ShapeWarning the program's filter raised
            self._add_error(exc, chunk, lineno)
        except Exception as exc:
            self._add_failure(self._severity(exc, reads), exc, chunk, self._raised_at(exc, lineno))
        else:
            self.unmade -= binds
            return
        if not chunk.expect_error:
            self.unmade |= binds

    def _severity(self, exc: Exception, reads: set) -> str:
        """ "not checked" for a statement that needed a name an earlier failure never made
        (it read one, or raised a NameError for one); "failure" for one that failed alone."""
        unmade = reads & self.unmade or isinstance(exc, NameError) and exc.name in self.unmade
        return "not checked" if unmade else "failure"

    def _stopped(self, kind: str, ended: str, exc, chunk, lineno) -> None:
        """A failure where the program stopped itself: nothing after it was checked."""
        message = f"{ended} during this statement; nothing after it was checked"
        where = self._where(chunk.filename, self._raised_at(exc, lineno))
        self._add(Diagnostic("failure", kind, message, *where))

    def _add_error(self, exc: SymnbError | ShapeWarning, chunk: Chunk, fallback_line: int) -> None:
        loc = getattr(exc, "location", None)
        if loc is not None:
            filename, lineno = loc.filename, loc.lineno
        else:
            filename, lineno = chunk.filename, self._raised_at(exc, fallback_line)
        message = str(exc).split("\n  at ")[0]
        severity = "expected" if chunk.expect_error else "error"
        self._add(Diagnostic(severity, type(exc).__name__, message, *self._where(filename, lineno)))

    def _add_failure(self, severity: str, exc: Exception, chunk: Chunk, lineno: int) -> None:
        where = self._where(chunk.filename, lineno)
        severity = "expected" if chunk.expect_error else severity
        message = (str(exc) or repr(exc)).split("\n  at ")[0]  # the report shows the line
        self._add(Diagnostic(severity, type(exc).__name__, message, *where))

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
            self.report.add(diagnostic)


@contextlib.contextmanager
def _program_environment(path: str, quiet_output: bool):
    """argv, sys.path and the working directory as if the program were run directly, and an
    ``os._exit`` that stops the program instead of the check. A script runs in the caller's
    working directory with its own folder, symlinks resolved, first on sys.path (as ``python
    script.py``); a notebook in its folder (as Jupyter runs it). ``quiet_output``: the
    program writes to the null device, through real files (``sys.stdout.buffer``,
    ``fileno()`` and ``reconfigure`` work; ``symnb check``'s child is given False, its own
    output already goes there)."""
    saved_argv, saved_path, saved_cwd = sys.argv[:], sys.path[:], os.getcwd()
    saved_exit = os._exit
    os._exit = _guarded_exit(saved_exit, os.getpid())
    sys.argv = [path]
    if path.endswith(".ipynb"):
        folder = os.path.dirname(os.path.abspath(path))
        os.chdir(folder)
    else:
        folder = os.path.dirname(os.path.realpath(path))
    sys.path.insert(0, folder)
    try:
        with contextlib.ExitStack() as stack:
            if quiet_output:
                null = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))
                stack.enter_context(contextlib.redirect_stdout(null))
                stack.enter_context(contextlib.redirect_stderr(null))
            yield
    finally:
        sys.argv, sys.path[:], os._exit = saved_argv, saved_path, saved_exit
        os.chdir(saved_cwd)


@contextlib.contextmanager
def _as_main(module: types.ModuleType):
    """``module`` as ``sys.modules["__main__"]`` for the block, the checker's own after it."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = module
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = saved


def check_path(path: str, quiet_output: bool = True, sink=None) -> Report:
    """Check a ``.py`` script or an ``.ipynb`` notebook in this process; the program's own
    output is dropped unless ``quiet_output`` is False. ``sink``: see :class:`Report`.
    Raises ProgramUnreadable for a file that is not a program."""
    report = Report(path, sink=sink)
    if path.endswith(".ipynb"):
        chunks, report.skipped_cells = notebook_chunks(path)
    else:
        chunks = script_chunks(path)
    runner = _Runner(report, chunks)
    with (
        _program_environment(path, quiet_output),
        _as_main(runner.module),
        check_mode(all_threads=True),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", ShapeWarning)
            _run_all(runner, chunks, caught)
    return report


def _run_all(runner: _Runner, chunks: list[Chunk], caught: list) -> None:
    try:
        for chunk in chunks:
            runner.run(chunk, caught)
    except (SystemExit, _ProcessExit):
        if os.getpid() != runner.pid:  # a child the program forked exits, with its status
            raise
        runner.collect_warnings(caught)  # the program ended itself: keep what it found
