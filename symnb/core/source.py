"""Where in the user's code a variable was created, for error messages.

The first stack frame outside the symnb package is the user's; in a notebook that is a cell,
whose file name IPython makes up and whose lines linecache can still show. A frame's file is
compared normalised (symnb reached through a relative ``sys.path`` entry has code objects
named ``/cwd/../symnb/core/op.py``), once per file name. Warnings go through
:func:`warn_at_user`, which gives them at that line as its module's.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import importlib.util
import itertools
import linecache
import os
import re
import sys
import warnings
from dataclasses import dataclass

from symnb.core.hooks import spelled

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_CELL_FILE = re.compile(r"(ipykernel_\d+[/\\]\d+\.py|<ipython-input-(\d+)-)")
#: directories of code that only forwards calls between symnb's own functions (the
#: trampolines a mutation tester wraps each mutated function in: tests/conftest.py adds
#: mutmut's under mutmut): their frames are never the user's line
FORWARDERS: list[str] = []


def _package_dir(name: str) -> str | None:
    """Where an installed package's files are, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    places = list(spec.submodule_search_locations or []) if spec else []
    return os.path.abspath(places[0]) + os.sep if places else None


#: NumPy's and SciPy's own files: a symbolic variable reaches symnb through them (``np.exp(x)``
#: dispatching to sn.exp, ``scipy.special.logsumexp(x)`` asking ``np.result_type``), and the
#: user's line is the one that called them, never theirs
LIBRARIES: tuple[str, ...] = tuple(d for d in map(_package_dir, ("numpy", "scipy")) if d)


@dataclass(frozen=True)
class SourceLoc:
    """A file (or notebook cell) and a line number."""

    filename: str
    lineno: int

    @property
    def code(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    @property
    def in_notebook(self) -> bool:
        return bool(_CELL_FILE.search(self.filename))

    def __str__(self) -> str:
        place = "notebook cell" if self.in_notebook else self.filename
        code = self.code
        text = f"{place}, line {self.lineno}" + (f": {code}" if code else "")
        return text + _cell_label(self.filename) if self.in_notebook else text


@dataclass(frozen=True)
class SourceSpan(SourceLoc):
    """Where a call on a line is: ``lineno`` the line it starts on, ``col`` the column it
    starts at, ``end_lineno`` and ``end_col`` where it ends (columns in UTF-8 bytes, as Python
    and ``ast`` count them), from the instruction running there (``code.co_positions()``);
    the columns are None where Python records none (Python 3.10, ``-X no_debug_ranges``).
    What an unnamed input or shared variable is made at, so :func:`assigned_target` can tell
    whether it is an assignment's value or a part of it."""

    col: int | None = None
    end_lineno: int | None = None
    end_col: int | None = None


def _cell_label(filename: str) -> str:
    """``  (In[5])``: the cell's execution count, when IPython knows it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    namer = getattr(getattr(shell, "compile", None), "format_code_name", None)
    label = namer(filename) if namer is not None else None
    return f"  ({label[1]})" if label else ""


#: what the walk below makes of a frame's file: the user's code, symnb's own code (or a
#: FORWARDER's), NumPy's or SciPy's (``LIBRARIES``); both of the last are truthy: never the
#: user's line
USER, OWN, LIBRARY = 0, 1, 2
#: file name, as a code object holds it -> its kind (the walk below asks for every frame)
_OWN_FILES: dict[str, int] = {}


def _first_look(filename: str) -> int:
    """The kind of a file (``USER``, ``OWN``, ``LIBRARY``), remembered: the one place that
    decides whether a frame is symnb's. Its path is normalised first: a relative ``sys.path``
    entry (``sys.path.insert(0, "..")``) gives code objects names like
    ``/cwd/../symnb/core/op.py``, which the package's normalised path does not prefix.
    (FORWARDERS are registered before any frame is looked at.)"""
    path = os.path.normpath(filename)
    if path.startswith(LIBRARIES):
        kind = LIBRARY
    elif path.startswith((_PACKAGE_DIR, *map(_directory, FORWARDERS))):
        kind = OWN
    else:
        kind = USER
    _OWN_FILES[filename] = kind
    return kind


def _directory(path: str) -> str:
    """A directory's normalised path, ending with the separator (a prefix of its files)."""
    return os.path.join(os.path.normpath(path), "")


def user_frame(skip_dirs: tuple[str, ...] = (), skip: int = 0):
    """The innermost frame that is not symnb's own code (nor in skip_dirs), or None; the walk
    starts ``skip`` frames above the caller (frames the caller knows are symnb's own)."""
    skip_dirs = tuple(map(_directory, skip_dirs))
    frame = sys._getframe(1 + skip)
    while frame is not None:
        name = frame.f_code.co_filename
        own = _OWN_FILES.get(name)
        if own is None:
            own = _first_look(name)
        if not own and not (skip_dirs and os.path.normpath(name).startswith(skip_dirs)):
            return frame
        frame = frame.f_back
    return None


#: one SourceLoc per (file, line): every node a line builds shares it, so building a graph
#: pays a dict lookup per variable instead of a new object (keyed by strings, not frames or
#: code objects, so it keeps no frame alive)
_LOCATIONS: dict[tuple[str, int], SourceLoc] = {}
#: (id of a code object, instruction offset) -> (that code object, its SourceLoc). A frame's
#: line number is decoded from its code's line table on every read of ``f_lineno``, which cost
#: a build more than the rest of the lookup; the offset is read as it is and fixes the line.
#: The entry holds the code object (never a frame), so its id is not reused while it lives.
_AT_INSTRUCTION: dict[tuple[int, int], tuple] = {}
_MAX_AT_INSTRUCTION = 1 << 14


_UNPINNED = object()
#: the location every variable built now takes (see :func:`pin_location`)
_pinned: contextvars.ContextVar = contextvars.ContextVar("symnb_user_location", default=_UNPINNED)


def pin_location(loc: SourceLoc | None) -> contextvars.Token:
    """From now until :func:`unpin_location`, :func:`user_location` answers ``loc`` without
    walking the stack: one node (or one ``sn.grad``) builds several variables from the same
    user line, and the walk from deep inside symnb is what building a node paid most for."""
    return _pinned.set(loc)


def unpin_location(token: contextvars.Token) -> None:
    _pinned.reset(token)


@contextlib.contextmanager
def pinned(loc: SourceLoc | None):
    """``pin_location(loc)`` for a ``with`` block: what is built and raised inside it is at
    ``loc`` (``sn.grad``'s line; a notebook cell's line, where the first frame outside
    symnb would be IPython's)."""
    token = pin_location(loc)
    try:
        yield
    finally:
        unpin_location(token)


def library_call() -> tuple[str, str] | None:
    """The NumPy or SciPy function the user's line called, where the walk from here to the
    user's frame passes through their Python code (``scipy.special.logsumexp(x)`` asking
    ``np.result_type`` of a variable): (its public dotted name, its own name), else None
    (``np.exp(x)`` dispatches from C, with no frame of theirs)."""
    frame, entry = sys._getframe(1), None
    while frame is not None:
        name = frame.f_code.co_filename
        kind = _OWN_FILES.get(name)
        if kind is None:
            kind = _first_look(name)
        if kind == LIBRARY:
            entry = frame
        elif kind == USER:
            break
        frame = frame.f_back
    if entry is None:
        return None
    module = entry.f_globals.get("__name__", "")
    public = ".".join(part for part in module.split(".") if not part.startswith("_"))
    return f"{public}.{entry.f_code.co_name}", entry.f_code.co_name


def user_location(skip_dirs: tuple[str, ...] = (), skip: int = 0) -> SourceLoc | None:
    """The file and line of :func:`user_frame` (or the pinned location, when one is).

    ``skip``: how many frames, from the caller outward, are known to be symnb's own and need
    no look (``Op.make_node`` skips itself): each frame looked at costs a dict lookup."""
    if skip_dirs:
        frame = user_frame(skip_dirs, skip + 1)
        if frame is None:
            return None
    else:  # building a node: the pin, else user_frame's walk written out (one call less)
        pinned = _pinned.get()
        if pinned is not _UNPINNED:
            return pinned
        frame = sys._getframe(1 + skip)
        while True:
            name = frame.f_code.co_filename
            own = _OWN_FILES.get(name)
            if own is None:
                own = _first_look(name)
            if not own:
                break
            frame = frame.f_back
            if frame is None:
                return None
    code = frame.f_code
    found = _AT_INSTRUCTION.get((id(code), frame.f_lasti))
    if found is not None and found[0] is code:
        return found[1]
    return _remember(code, frame.f_lasti, frame.f_lineno)


#: as _AT_INSTRUCTION, for :func:`user_span`: (id of a code object, instruction offset) ->
#: (that code object, its SourceSpan)
_SPANS: dict[tuple[int, int], tuple] = {}


def user_span(skip: int = 0) -> SourceLoc | None:
    """:func:`user_location` as a :class:`SourceSpan`: the columns of the instruction the
    user's line is running (the call making a variable); the pinned location as it is (what
    symnb builds inside ``sn.grad`` or a node is no assignment's value). Asked only where an
    unnamed input or shared variable is made: reading the columns walks the code's table."""
    pinned = _pinned.get()
    if pinned is not _UNPINNED:
        return pinned
    frame = user_frame(skip=skip + 1)
    if frame is None:
        return None
    code, lasti = frame.f_code, frame.f_lasti
    found = _SPANS.get((id(code), lasti))
    if found is not None and found[0] is code:
        return found[1]
    positions = getattr(code, "co_positions", None)  # (Python 3.11 on; one per 2-byte unit)
    found = next(itertools.islice(positions(), lasti // 2, None), None) if positions else None
    if found is None or None in found:
        loc = SourceSpan(code.co_filename, frame.f_lineno)
    else:  # (line, end line, column, end column)
        loc = SourceSpan(code.co_filename, found[0], found[2], found[1], found[3])
    if len(_SPANS) >= _MAX_AT_INSTRUCTION:
        _SPANS.clear()
    _SPANS[id(code), lasti] = (code, loc)
    return loc


def assigned_target(loc: SourceLoc | None) -> str | None:
    """The Python name (``W``, ``self.W``) a variable made at ``loc`` is assigned to, where
    it is the assignment's whole value: ``loc`` (a :class:`SourceSpan`) is the span of a call
    that is the value of ``W = ...``, ``W: T = ...`` or ``(W := ...)`` in its file, whatever
    the lines the call spans or the statements on the line; else None (the variable is a
    part of the value, ``h = sn.tanh(sn.dot(x, sn.shared(w)))``, or an argument). Where
    Python gave no columns (3.10) or the file does not parse, only a line that is one such
    statement alone, its value one call, names it. A plain SourceLoc (the pinned line of a
    node or ``sn.grad`` symnb was building, a variable pickled before spans) names none."""
    if not isinstance(loc, SourceSpan):
        return None
    if loc.col is not None:
        found = _assignments_in(loc.filename)
        if found is not None:
            return found.get((loc.lineno, loc.col, loc.end_lineno, loc.end_col))
    line = linecache.getline(loc.filename, loc.lineno)
    try:
        tree = ast.parse(line.strip())
    except (SyntaxError, ValueError):
        return None
    statement = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
        return None
    value = statement.value
    name = _values_assigned(statement).get(_span_of(value))
    if name is None or loc.col is None:
        return name
    indent = len(line) - len(line.lstrip())
    span = (loc.lineno, value.col_offset + indent, loc.lineno, value.end_col_offset + indent)
    return name if (loc.lineno, loc.col, loc.end_lineno, loc.end_col) == span else None


#: file name -> (its lines as linecache holds them, its assignments: ``_values_assigned``,
#: or None where it does not parse), read again when linecache reads the file again
_ASSIGNMENTS: dict[str, tuple[list, dict | None]] = {}
_PARSE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # (a notebook cell's await)


def _assignments_in(filename: str) -> dict | None:
    lines = linecache.getlines(filename)
    cached = _ASSIGNMENTS.get(filename)
    if cached is not None and cached[0] is lines:
        return cached[1]
    try:
        found = _values_assigned(compile("".join(lines), filename, "exec", _PARSE_FLAGS))
    except (SyntaxError, ValueError):
        found = None
    if len(_ASSIGNMENTS) >= 256:  # a long session of many cells: start again
        _ASSIGNMENTS.clear()
    _ASSIGNMENTS[filename] = (lines, found)
    return found


def _values_assigned(tree: ast.AST) -> dict[tuple, str]:
    """(line, column, end line, end column) of each call that is an assignment's whole value
    in ``tree`` -> the one target it is assigned to, as written (``self.W``)."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            target = node.target
        else:
            continue
        name = _dotted(target)
        if name is not None and isinstance(node.value, ast.Call):
            found[_span_of(node.value)] = name
    return found


def _span_of(node: ast.AST) -> tuple:
    return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _dotted(target: ast.AST) -> str | None:
    """``W``, ``self.W``: a target that names one variable or attribute, else None."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        owner = _dotted(target.value)
        return None if owner is None else f"{owner}.{target.attr}"
    return None


def _remember(code, lasti: int, lineno: int) -> SourceLoc:
    """The location of ``code`` at instruction ``lasti``, shared per (file, line), and
    remembered for the next variable built there."""
    key = (code.co_filename, lineno)
    loc = _LOCATIONS.get(key)
    if loc is None:
        loc = _LOCATIONS[key] = SourceLoc(*key)
    if len(_AT_INSTRUCTION) >= _MAX_AT_INSTRUCTION:  # a long session of many cells: start again
        _AT_INSTRUCTION.clear()
    _AT_INSTRUCTION[id(code), lasti] = (code, loc)
    return loc


#: file name -> the warnings registry of warnings given at its lines, where no module that
#: runs them is found (``warn_at_user``)
_WARNED: dict[str, dict] = {}


def at_user_line(exc: Exception, spell: bool = True) -> Exception:
    """The same error, its message ending with the user's file and line (once: an error
    that already names its line keeps it), and that location as ``.location``; in the
    names of the API the user's code uses (``spelled``) unless ``spell`` is False (a
    message that names the call the user made, and its arguments, in that call's names)."""
    loc = user_location()
    message = spelled(str(exc)) if spell else str(exc)
    if loc is not None and "\n  at " not in message:
        message += f"\n  at {loc}"
    new = type(exc)(message)
    new.location = loc
    return new


def warn_at_user(
    message: str, category: type[Warning], loc: SourceLoc | None = None, stacklevel: int = 2
) -> None:
    """Warn at the user's line, not at the symnb line that found the problem: the one way
    symnb gives a warning. ``loc``: that line (the line that built a node), else the first
    frame outside symnb or the pinned location; from symnb's own frames alone (its command
    line), ``warnings.warn``'s ``stacklevel`` from the caller.

    The warning is the module's whose code is at that line, as a ``warnings.warn(...,
    stacklevel=k)`` pointed there would be: filters naming a module (``module="layers"``,
    ``-W ignore::UserWarning:layers``) select it, and its ``__warningregistry__`` says which
    lines warned. One an "error" filter raises is an exception of its category whose message
    ends with the line (``\n  at file.py, line 12: u = v + col``, as a SymnbError's), also
    held as ``.location``: an exception drops the file and line a shown warning prints.
    The message is in the names of the API the user's code calls (``spelled``), as errors
    are (``at_user_line``)."""
    message = spelled(message)
    if loc is None:
        loc = user_location()
        if loc is None:
            warnings.warn(message, category, stacklevel=stacklevel + 1)
            return
    namespace = _module_at(loc.filename)
    registry = None if namespace is None else namespace.setdefault("__warningregistry__", {})
    if not isinstance(registry, dict):  # named after its file, as warn_explicit names a module
        of = {"registry": _WARNED.setdefault(loc.filename, {})}  # it is not told
    else:
        of = {"registry": registry}
        name = namespace.get("__name__")
        if isinstance(name, str):  # (module=None is a warning at shutdown: CPython drops it)
            of["module"] = name
        _read_source(loc.filename, namespace)
    try:
        warnings.warn_explicit(message, category, loc.filename, loc.lineno, **of)
    except category as raised:
        if raised.args != (message,):  # (raised by a showwarning hook, say: not the filter's)
            raise
        located = category(f"{message}\n  at {loc}")
        located.location = loc
        raise located from None


def _read_source(filename: str, namespace: dict) -> None:
    """Have linecache hold ``filename``'s lines, from its module's loader where no file holds
    them (a zipimported module's), as the module globals ``warnings.warn`` passes on do: the
    shown warning and the error an "error" filter raises show the line. Never an error: a
    warning must not raise what the user's filters did not make of it. (The globals are not
    handed to ``warn_explicit``, whose C version calls the loader's ``get_source`` itself
    and raises what it raises: ``python -c``'s ``__main__`` has BuiltinImporter, whose
    ``get_source('__main__')`` is an ImportError; another loader may raise anything, or
    return a source shorter than the line.)"""
    try:
        linecache.getlines(filename, namespace)
    except Exception:  # noqa: BLE001 (a loader's own error: the line is not shown)
        pass


def _module_at(filename: str) -> dict | None:
    """The globals of the code in ``filename``: those of the frame nearest the caller that
    runs it (a notebook cell's, a script's ``__main__``), else of the module imported from
    it (a function built a node there that is now called from elsewhere), else None."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == filename:
            return frame.f_globals
        frame = frame.f_back
    for module in list(sys.modules.values()):
        try:  # (anything may sit in sys.modules: an object whose attributes raise, no __dict__)
            if getattr(module, "__file__", None) == filename:
                return vars(module)
        except Exception:  # noqa: BLE001, S112
            continue
    return None
