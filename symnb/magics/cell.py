"""Running a ``%%symcompile`` cell: symnb's names in scope, the cell's lines kept for errors,
and the function's inputs, outputs and updates read from what the cell defines.

The rules (also in docs/notebook.md):
- inputs: the symbolic inputs (``tensor``, ``matrix``...) the outputs depend on, in the order
  the cell created them; ``--inputs x,y`` chooses and orders them explicitly;
- outputs: the value of the cell's last line when it is an expression (a variable, a tuple or
  list of them, or a dict name -> variable), else the names given by ``--outputs a,b``
  (which win over a last expression that is something else, with a warning); outputs with
  no symbolic variable at all (a cell ending in ``2``) are refused;
- updates: a dict (or list of pairs) named ``updates`` defined by the cell.

The options are declared once (``OPTIONS``): the magic's decorators and ``symnb check`` (which
runs ``%%symcompile`` cells without IPython) both read them, and ``symcompile`` checks them
before the cell runs.
"""

from __future__ import annotations

import argparse
import ast
import keyword
import re
import shlex
import sys
import types
from collections import ChainMap

from symnb.backends import LINKERS, PLANNED
from symnb.compile import function as compile_function
from symnb.compile.fit import check_updates
from symnb.core.graph import leaves
from symnb.core.hooks import hook
from symnb.core.source import SourceLoc, pinned, warn_at_user
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import GraphWarning, SymnbError
from symnb.opt.select import plan

_HIDDEN = {"eval", "load_ipython_extension"}  # keep Python's eval; not for cells


class CellError(SymnbError, ValueError):
    """The cell does not say what to compile (no final expression, unknown names), or an
    option is wrong."""


#: (flags, argparse keywords) of every %%symcompile option
OPTIONS = [
    (("name",), {"help": "the name the compiled function is bound to"}),
    (("--backend",), {"default": None, "help": "c, py, opencl or cuda (default: symnb's)"}),
    (("--show",), {"default": "", "help": "before,after,diff,grad,kernels,profile,steps"}),
    (("--optimize",), {"default": None, "help": "fast, stable, none, or +rule,-rule lists"}),
    (("--inputs",), {"default": None, "help": "input names in order (default: as created)"}),
    (("--outputs",), {"default": None, "help": "output names (default: the last expression)"}),
    (("--quiet",), {"action": "store_true", "help": "do not display the summary card"}),
]
VIEW_NAMES = ("before", "after", "diff", "grad", "kernels", "profile", "steps")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit the process
        for flags, keywords in OPTIONS:  # a flag given no value: say which values it takes
            if message == f"argument {flags[0]}: expected one argument":
                message = f"{flags[0]} needs a value ({keywords['help']})"
        raise CellError(f"%%symcompile: {message}")


def parse_line(line: str) -> argparse.Namespace:
    """The options of a ``%%symcompile`` line (the magic's and ``symnb check``'s); a wrong
    one is a CellError, shown as a card."""
    parser = _Parser(prog="%%symcompile", add_help=False)
    for flags, keywords in OPTIONS:
        parser.add_argument(*flags, **keywords)
    try:
        words = shlex.split(line)
    except ValueError as exc:  # an unclosed quote
        raise CellError(f"%%symcompile: cannot read the options {line.strip()!r}: {exc}") from None
    return parser.parse_args(_join_optimize(words))


def _join_optimize(words: list[str]) -> list[str]:
    """``--optimize -fuse`` read as ``--optimize=-fuse``: argparse takes a value starting with
    '-' for an option of its own and would refuse the line."""
    out, rest = [], iter(words)
    for word in rest:
        if word == "--optimize":
            value = next(rest, None)
            if value is not None and value.startswith("-") and not value.startswith("--"):
                word = f"--optimize={value}"
            elif value is not None:
                out.append(word)
                word = value
        out.append(word)
    return out


def check_options(args) -> None:
    """Refuse a wrong option before the cell runs (a typo must not cost a compile)."""
    name = getattr(args, "name", None)
    if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
        raise CellError(
            f"%%symcompile: the function's name {name!r} is not a Python name the notebook's "
            "code could use; write e.g. %%symcompile f"
        )
    unknown = [n for n in _split(args.show or "") if n not in VIEW_NAMES]
    if unknown:
        raise CellError(
            f"%%symcompile --show: unknown view {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(VIEW_NAMES)}"
        )
    backends = [*LINKERS, *PLANNED]
    if args.backend is not None and args.backend not in backends:
        raise CellError(
            f"%%symcompile --backend: unknown backend {args.backend!r}; "
            f"choose from {', '.join(backends)}"
        )
    if getattr(args, "optimize", None) is not None:
        optimize = parse_optimize(args.optimize)  # a CellError of its own
        try:
            plan(optimize)
        except ValueError as exc:  # an unknown mode, phase or rule
            message = str(exc.args[0]).removeprefix("optimize: ")
            raise CellError(f"%%symcompile --optimize: {message}") from None


def parse_optimize(text: str):
    """``fast``/``stable``/``none``, or ``+name,-name`` lists of phases/rules to include or
    exclude (``{"include": [...], "exclude": [...]}`` for sn.function)."""
    if text in ("fast", "stable", "none"):
        return text
    parts = _split(text)
    include = [p.lstrip("+") for p in parts if not p.startswith("-")]
    exclude = [p[1:] for p in parts if p.startswith("-")]
    both = [name for name in dict.fromkeys(include) if name in exclude]
    if both:
        raise CellError(
            f"%%symcompile --optimize: {', '.join(map(repr, both))} is both included and "
            f"excluded in {text!r}; name each phase or rule once, with + or -"
        )
    if not include:  # only exclusions: the default set less those, as sn.function does
        return {"exclude": exclude}
    return {"include": include, "exclude": exclude}


def symcompile(
    args, cell: str, shell=None, user_ns=None, filename=None, magic: str = "", magic_line: int = 1
):
    """Check the options, run the cell, compile what it defines and bind it to ``args.name``
    in the user's namespace (the shell's, or ``user_ns``). Returns the function. ``magic``,
    the %%symcompile line, is what an error naming line 1 quotes; ``magic_line``: that line's
    number in ``filename`` (``symnb check``: after the blank lines IPython drops)."""
    check_options(args)
    user_ns = shell.user_ns if shell is not None else ({} if user_ns is None else user_ns)
    value, namespace, bound, lines = run_cell(shell, cell, user_ns, filename, magic, magic_line)
    outputs = pick_outputs(value, namespace, args.outputs, lines.last, lines.magic)
    # the compile runs in symnb and IPython: its errors name the cell's lines instead, the
    # updates' checks the line assigning ``updates``, the rest the %%symcompile line
    with pinned(lines.updates or lines.magic):
        updates = pick_updates(namespace, bound)
        updates = check_updates(updates) if updates is not None else []
    inputs = pick_inputs(outputs, updates, namespace, args.inputs, lines.magic)
    options = {"backend": args.backend, "name": args.name}
    if args.optimize is not None:
        options["optimize"] = parse_optimize(args.optimize)
    with pinned(lines.magic):
        function = compile_function(inputs, outputs, updates=updates or None, **options)
    user_ns[args.name] = function
    return function


def symnb_names() -> dict:
    """What the cell sees besides the user's namespace: symnb's public names, ``sn``, ``np``."""
    import numpy as np

    symnb = hook("symnb")  # the package itself, which sits above the magics
    names = {k: getattr(symnb, k) for k in dir(symnb) if k not in _HIDDEN and k[0] != "_"}
    names = {k: v for k, v in names.items() if not isinstance(v, types.ModuleType)}
    names.update(sn=symnb, np=np)
    return names


def run_cell(shell, cell: str, user_ns=None, filename=None, magic: str = "", magic_line: int = 1):
    """Execute ``cell`` over the user's namespace (the shell's, or ``user_ns``; ``filename``
    names the cell for errors when there is no shell: its line ``magic_line`` is the
    %%symcompile line).

    Returns the value of its last expression (None if the last line is a statement), the
    names after the cell (the user's, then symnb's), the names the cell bound (written back
    to the user's), and the cell's lines that compile errors name (see :func:`_lines`).
    """
    source = shell.transform_cell(cell) if shell is not None else cell
    # line 1 is the %% line; IPython's transform drops the cell's leading blank lines, which
    # the user still sees and counts
    skip = magic_line + _leading_blank_lines(cell) - _leading_blank_lines(source)
    filename = filename or register_cell(shell, magic.strip() + "\n" * skip + source)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:  # a card at the user's line, not ast.parse's frames
        raise _syntax_error(exc, filename, skip) from None
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    ast.increment_lineno(tree, skip)
    try:  # what the parser lets through and the compiler refuses (``await x``): a card too
        body = compile(tree, filename, "exec")
        if last is not None:
            ast.increment_lineno(last, skip)
            last_code = compile(ast.Expression(last.value), filename, "eval")
    except SyntaxError as exc:
        raise _syntax_error(exc, filename, 0) from None
    user_ns = shell.user_ns if shell is not None else ({} if user_ns is None else user_ns)
    namespace = CellNamespace(symnb_names(), user_ns)
    value = None
    try:
        exec(body, namespace)  # noqa: S102 - running the user's cell
        if last is not None:
            value = eval(last_code, namespace)  # noqa: S307 - the user's own expression
    except Exception as exc:
        _from_the_cell(shell, exc, filename)
        raise
    finally:  # a failing cell keeps what it assigned before the error, as any cell does
        bound = namespace.write_back()
    _name_outputs(last, value)
    return value, namespace.lookup(), bound, _lines(filename, tree, last, magic_line)


def _from_the_cell(shell, exc: Exception, filename: str) -> None:
    """The traceback of an error the cell's code raised starts at the cell's line: the
    magic's frames above it (IPython's ``run_cell_magic``, this module's ``run_cell`` and
    ``exec``) are not the user's. IPython shows what an exception's ``_render_traceback_``
    returns instead of formatting its traceback; it is asked once, so the same exception
    raised again elsewhere shows its traceback as usual. symnb's errors have their card
    (magics/errors.py), which keeps the whole traceback behind a click."""
    formatter = getattr(shell, "InteractiveTB", None)
    if formatter is None or isinstance(exc, SymnbError):
        return
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return

    def render():
        del exc._render_traceback_
        return formatter.structured_traceback(type(exc), exc, tb)

    try:
        exc._render_traceback_ = render
    except AttributeError:  # an exception that takes no attributes keeps IPython's traceback
        pass


class CellNamespace(dict):
    """The globals a cell runs in: symnb's names, then the user's namespace over them (a
    copy), then what the cell assigns. After the cell (:meth:`write_back`) it holds nothing
    of its own and reads the user's namespace as it is then, then symnb's names: the
    functions, classes and lambdas the cell defined keep it as their globals, so they see the
    notebook's names as any cell's functions do (``later`` assigned in a later cell), and
    symnb's names where the notebook has none (``sum`` stays symnb's ``sum`` in them).
    CPython's LOAD_GLOBAL and LOAD_NAME call ``__missing__`` on a globals dict that is not
    exactly a dict (a class body's LOAD_NAME does not, which is why the cell itself runs over
    a copy).

    The names the cell bound are those its code stored (``STORE_NAME`` calls
    ``__setitem__`` on a globals dict that is not exactly a dict), so a cell that binds a name
    again to the object it already held (``updates = upd`` run twice) still counts as binding
    it; a name changed another way (``global`` in a function the cell calls, which writes the
    dict directly) is found by its value's id changing.
    """

    def __init__(self, names: dict, user_ns: dict):
        super().__init__(names)
        super().update(user_ns)  # dict's own update: not the cell's stores
        self.user_ns = user_ns
        self.names = names
        self.live = False  # after the cell: every name read from the user's namespace
        self.stored: set[str] = set()
        self.deleted: set[str] = set()  # deleted by the cell: deleted from the notebook too
        self._before = {name: id(value) for name, value in self.items()}

    def __setitem__(self, name, value):
        self.stored.add(name)
        self.deleted.discard(name)
        super().__setitem__(name, value)

    def __delitem__(self, name):  # ``del name`` in the cell (DELETE_NAME), as in any cell
        super().__delitem__(name)  # a name not defined: KeyError, which Python makes NameError
        self.stored.discard(name)
        self.deleted.add(name)

    def write_back(self) -> set[str]:
        """Copy the names the cell bound into the user's namespace, delete there those it
        deleted; returns the names bound."""
        changed = {n for n, v in self.items() if self._before.get(n) != id(v)}
        bound = {n for n in self.stored | changed if n in self and n[:2] != "__"}
        self.user_ns.update({n: self[n] for n in bound})
        for name in self.deleted - bound:
            self.user_ns.pop(name, None)
        builtins = self.get("__builtins__")
        self.clear()  # from now on the cell's functions read the notebook's names
        if builtins is not None:
            super().__setitem__("__builtins__", builtins)
        self.live = True
        return bound

    def __missing__(self, name):
        if self.live:
            if name in self.user_ns:
                return self.user_ns[name]
            if name in self.names:
                return self.names[name]
        raise KeyError(name)  # then builtins, or NameError

    def lookup(self) -> ChainMap:
        """What the cell's names resolve to after it: the user's names, then symnb's."""
        return ChainMap(self.user_ns, self.names)


def _lines(filename: str, tree, last=None, magic_line: int = 1) -> types.SimpleNamespace:
    """The cell's lines that compile errors name: the %% line (``magic_line``), the last one
    assigning ``updates`` (None if none does) and the last expression's (None if none)."""
    assigned = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "updates" and isinstance(node.ctx, ast.Store)
    ]
    updates = SourceLoc(filename, max(assigned)) if assigned else None
    end = SourceLoc(filename, last.lineno) if last is not None else None
    magic = SourceLoc(filename, magic_line)
    return types.SimpleNamespace(magic=magic, updates=updates, last=end)


def _syntax_error(exc: SyntaxError, filename: str, skip: int) -> CellError:
    """The cell's syntax error as a CellError naming the line as the user counts it."""
    loc = SourceLoc(filename, (exc.lineno or 1) + skip)
    where = str(loc) if loc.code else f"{loc}: {(exc.text or '').strip()}"
    error = CellError(f"%%symcompile: {exc.msg}\n  at {where}")
    error.location = loc
    return error


def _cell_error(message: str, loc: SourceLoc | None) -> CellError:
    """A CellError naming the cell's line ``loc`` (where there is one)."""
    error = CellError(f"%%symcompile: {message}" + (f"\n  at {loc}" if loc is not None else ""))
    error.location = loc
    return error


def _leading_blank_lines(text: str) -> int:
    lines = text.split("\n")
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines) - 1)


def _name_outputs(last, value) -> None:
    """Unnamed outputs written as bare names (``loss`` or ``loss, acc``) take those names."""
    if last is None:
        return
    expr = last.value
    names = [expr] if isinstance(expr, ast.Name) else getattr(expr, "elts", [])
    values = [value] if isinstance(expr, ast.Name) else value
    if not isinstance(values, (list, tuple)) or len(values) != len(names):
        return
    for node, var in zip(names, values):
        if isinstance(node, ast.Name) and isinstance(var, Variable) and var.name is None:
            var.name = node.id


def register_cell(shell, source: str) -> str:
    """A file name linecache knows, so errors can quote the cell's line (and name its
    In[N], the number of the cell running the magic)."""
    if shell is not None and hasattr(shell, "compile"):
        return shell.compile.cache(source, _running_cell_number(shell))
    return "<symcompile>"


def _running_cell_number(shell) -> int:
    """The execution count of the cell running this magic: that of the nearest calling frame
    whose code IPython compiled as a cell. IPython counts the cell before running it, so
    ``shell.execution_count`` is already the next cell's number (In[N+1]) by then."""
    namer = getattr(shell.compile, "format_code_name", None)
    frame = sys._getframe(1)
    while frame is not None and namer is not None:
        label = namer(frame.f_code.co_filename)
        found = re.fullmatch(r"In\[(\d+)\]", label[1]) if label else None
        if found:
            return int(found.group(1))
        frame = frame.f_back
    return shell.execution_count


def pick_outputs(
    value, namespace: dict, names: str | None, where: SourceLoc | None = None, magic=None
):
    """The outputs: ``--outputs`` names (read at ``magic``, the %% line), else the last
    expression's value (at ``where``). A last expression that ``--outputs`` overrides is
    warned about (at ``where``); outputs with no symbolic variable at all are refused."""
    if names:
        picked = [_lookup(namespace, n, "--outputs", magic) for n in _split(names)]
        for name, item in zip(_split(names), picked):
            _check_output(item, f"--outputs {name!r}", magic)
        _check_symbolic(picked[0] if len(picked) == 1 else picked, f"--outputs {names}", magic)
        if value is not None and not _same_outputs(value, picked):
            _warn_overridden(value, names, where)
        return picked[0] if len(picked) == 1 else picked
    if value is None:
        raise CellError(
            "%%symcompile: end the cell with the output expression (e.g. `loss` or "
            "`loss, acc`), or name the outputs with --outputs"
        )
    _check_outputs(value, where)
    _check_symbolic(value, "the cell's last expression", where)
    return value


def _same_outputs(value, picked: list) -> bool:
    """The last expression is what ``--outputs`` names (``y`` or ``a, b``, the same objects)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    return len(items) == len(picked) and all(a is b for a, b in zip(items, picked))


def _warn_overridden(value, names: str, where: SourceLoc | None) -> None:
    """``--outputs`` wins over a last expression that is something else: say so, at that
    expression's line, rather than drop it silently."""
    with pinned(where):
        warn_at_user(
            f"%%symcompile: the cell's last expression ({_brief(value)}) is not compiled: "
            f"--outputs {names} names the outputs instead\n  hint: leave --outputs out to "
            "compile the last expression, or end the cell with a statement",
            GraphWarning,
        )


def _check_symbolic(value, what: str, where: SourceLoc | None) -> None:
    """Outputs that are all plain numbers or arrays (a cell ending in ``2`` or ``x.ndim``)
    would compile a function of no inputs returning constants: a mistake, refused."""
    items = list(value.values()) if isinstance(value, dict) else value
    items = items if isinstance(items, (list, tuple)) else [items]
    if any(isinstance(item, Variable) for item in items):
        return
    raise _cell_error(
        f"{what} ({_brief(value)}) holds no symbolic variable: it would compile a function "
        "of no inputs that returns constants; end the cell with the outputs (e.g. `loss` or "
        "`loss, acc`), or write sn.constant(value) to compile a constant on purpose",
        where,
    )


def _check_outputs(value, where: SourceLoc | None) -> None:
    """Outputs are a variable, a tuple/list of them or a dict name -> variable: an empty or
    nested one, or one that is no variable, is a card naming the cell's last line, not a
    function of no outputs or an error raised in symnb's or IPython's frames."""
    if isinstance(value, dict):
        items = [(repr(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    else:
        _check_output(value, "the cell's last expression", where)
        return
    kind = type(value).__name__
    if not items:
        raise _cell_error(
            f"the cell's last expression is an empty {kind}: nothing to compile; end the "
            "cell with the outputs (e.g. `loss` or `loss, acc`)",
            where,
        )
    for key, item in items:
        if isinstance(item, (list, tuple, dict, set)):
            raise _cell_error(
                f"output [{key}] of the cell's last expression is {a_type(item)}: "
                "the outputs are a variable, a tuple/list of variables or a dict name -> "
                "variable, not nested; list them flat (e.g. `a, b, c`)",
                where,
            )
        _check_output(item, f"output [{key}] of the cell's last expression", where)


def _check_output(item, what: str, where: SourceLoc | None) -> None:
    """An output is a variable or what ``sn.function`` makes a constant of (a number, an
    array); anything else is a card at ``where`` naming its type."""
    try:
        as_variable(item)
    except (TypeError, ValueError):
        raise _cell_error(
            f"{what} is {a_type(item)} ({_brief(item)}), not a variable: the "
            "outputs are symbolic variables (e.g. `loss` or `loss, acc`)",
            where,
        ) from None


def a_type(item) -> str:
    """``item``'s type with its article, as a message names it: "an int", "an ndarray", "a
    str", "a uint8" (by the sound: u reads "you")."""
    name = type(item).__name__
    return f"an {name}" if name[0] in "aeioAEIO" or name.startswith("nd") else f"a {name}"


def _brief(item) -> str:
    text = repr(item)
    return text if len(text) <= 60 else text[:57] + "..."


def pick_inputs(
    outputs, updates, namespace: dict, names: str | None, magic: SourceLoc | None = None
) -> list[Variable]:
    """``--inputs`` names in order (read at ``magic``, the %% line), else the free inputs
    the outputs use, oldest first."""
    if names:
        picked = [_lookup(namespace, n, "--inputs", magic) for n in _split(names)]
        for name, item in zip(_split(names), picked):
            if not isinstance(item, Variable):
                raise _cell_error(
                    f"--inputs {name!r} is {a_type(item)} ({_brief(item)}), not a "
                    "variable: name the cell's symbolic inputs (e.g. --inputs x,y)",
                    magic,
                )
        return picked
    targets = _variables(outputs) + [v for _, v in updates]
    free = [v for v in leaves(targets) if not isinstance(v, (Constant, SharedVariable))]
    return sorted(free, key=_creation_order)


def _creation_order(var) -> int:
    return var.uid


def _variables(outputs) -> list[Variable]:
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (list, tuple)):
        return [as_variable(v) for v in outputs]
    return [as_variable(outputs)]


def pick_updates(namespace: dict, bound: set):
    """The cell's ``updates`` as it wrote them (None if this cell did not assign it):
    ``check_updates`` reads a dict or pairs, and says which form it takes for anything
    else (``updates = 5``) at the line assigning it."""
    return namespace["updates"] if "updates" in bound else None


def _lookup(namespace: dict, name: str, option: str, where: SourceLoc | None):
    if name not in namespace:
        raise _cell_error(f"{option}: the cell defines no variable named {name!r}", where)
    return namespace[name]


def _split(names: str) -> list[str]:
    return [n.strip() for n in names.split(",") if n.strip()]
