"""``%%symcompile``, ``%symgraph`` and ``%symprofile``: thin calls into symnb and symnb.viz."""

from __future__ import annotations

import ast
import linecache
import numbers
import os

import IPython
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from symnb.core.source import SourceLoc, pinned, user_location
from symnb.magics.cell import OPTIONS, CellError, a_type, parse_line, register_cell, symcompile
from symnb.magics.views import views_for
from symnb.viz.graphs import picture
from symnb.viz.subject import as_graph

#: IPython's own files: a line magic is called from the user's line through them
_IPYTHON_DIR = os.path.dirname(IPython.__file__)


def _options(method):
    """The magic's argument decorators, from the one list of options (cell.OPTIONS)."""
    for flags, keywords in reversed(OPTIONS):
        method = argument(*flags, **keywords)(method)
    return magic_arguments()(method)


@magics_class
class SymnbMagics(Magics):
    @_options
    @cell_magic
    def symcompile(self, line, cell):
        """Run the cell with symnb's names in scope and compile what it defines into NAME.

        Inputs: the symbolic inputs the outputs use, in creation order (or --inputs).
        Outputs: the cell's last expression (or --outputs). Updates: a dict named
        ``updates`` assigned in the cell. The options are checked before the cell runs.
        """
        args = parse_line(line)  # errors as cards; the decorators give %%symcompile? its help
        function = symcompile(args, cell, shell=self.shell, magic=f"%%symcompile {line}")
        if not args.quiet:
            display(function)
        for view in views_for(function, args.show):
            display(view)

    @line_magic
    def symgraph(self, line):
        """``%symgraph EXPR``: draw the graph of a variable, list of variables or function.
        What it cannot draw is a card saying why, not a traceback through the magic."""
        __tracebackhide__ = True  # an error of the user's expression is shown from their code
        if not line.strip():
            raise CellError(
                "%symgraph needs what to draw: a variable, a list of variables or a compiled "
                "function (e.g. %symgraph loss, %symgraph f)"
            )
        text = _readable("%symgraph", line)
        obj = self._evaluate("%symgraph", text, self._written_at("%symgraph", text))
        try:
            as_graph(obj)
        except TypeError:
            raise CellError(
                f"%symgraph: {line.strip()} is {a_type(obj)}; it draws a variable, a "
                "list of variables or a compiled function"
            ) from None
        display(picture(obj))

    @magic_arguments()
    @argument("-n", "--repeat", type=int, default=None, help="how many calls to time (10)")
    @argument("call", nargs="+", help="a call such as f(x_data, y_data) or f(x, repeat=3)")
    @line_magic
    def symprofile(self, line):
        """``%symprofile [-n N] f(args...)``: time each node of the call; table and chart.
        The number of calls is -n N or the call's own ``repeat=N``, as f.profile takes it."""
        __tracebackhide__ = True  # an error of the user's arguments is shown from their code
        args = parse_argstring(self.symprofile, line)
        function, call_args, call_kwargs, where = self._parse_call(" ".join(args.call))
        repeat = 10 if args.repeat is None else args.repeat
        if "repeat" in call_kwargs:
            if args.repeat is not None:
                raise CellError(
                    f"%symprofile -n {args.repeat} ... repeat={call_kwargs['repeat']!r}: give "
                    "the number of calls to time once, as -n N or as repeat=N"
                )
            repeat = call_kwargs.pop("repeat")
            said = f"repeat={repeat!r}"
        else:
            said = f"-n {repeat}"
        if isinstance(repeat, bool) or not isinstance(repeat, numbers.Integral):
            raise CellError(f"%symprofile {said}: the number of calls to time is an integer")
        if repeat < 1:
            raise CellError(f"%symprofile {said}: the number of calls to time must be at least 1")
        with pinned(where):  # the call's errors and warnings are at its line, not IPython's
            report = function.profile(*call_args, repeat=repeat, **call_kwargs)
        display(report)

    def _parse_call(self, text: str):
        """The function and arguments of ``f(x, y=...)``; anything else is a card."""
        __tracebackhide__ = True
        text = _readable("%symprofile", text)
        node = ast.parse(text, mode="eval").body
        if not isinstance(node, ast.Call):
            raise CellError(
                f"%symprofile takes a call such as f(x), not {text!r} "
                "(f() times it on random inputs)"
            )
        name = ast.unparse(node.func)
        where = self._written_at("%symprofile", text)
        function = self._evaluate("%symprofile", name, where)
        if not hasattr(function, "profile"):
            raise CellError(
                f"%symprofile: {name} is {a_type(function)}, not a compiled function "
                "(sn.function or %%symcompile makes one)"
            )
        # the argument list evaluated once, as Python calls it (*args and **kw included), by
        # a lambda standing where f was written: an error shows the user's text at its place
        collect = ast.parse("lambda *a, **k: (a, k)", mode="eval").body
        for part in ast.walk(collect):
            ast.copy_location(part, node.func)
        call = ast.Call(func=collect, args=node.args, keywords=node.keywords)
        values, kwargs = self._evaluate("%symprofile", text, where, ast.copy_location(call, node))
        return function, values, kwargs, where

    def _written_at(self, magic: str, text: str) -> SourceLoc:
        """Where the magic's ``text`` (an expression, a call) is, for its traceback and for
        what it builds or raises: in a cell, the magic's line of a copy of the cell that
        holds ``text`` there (the other lines blank), registered with the cell's number, so
        it is ``notebook cell, line 3: x @ W  (In[7])`` as a line of the cell would be (the
        first frame outside symnb is IPython's ``run_line_magic``, called from the cell);
        elsewhere (IPython's ``run_line_magic`` called by a script) ``<%symgraph>``, line 1."""
        called = user_location((_IPYTHON_DIR,))
        if called is not None and called.in_notebook:
            source = "\n" * (called.lineno - 1) + text + "\n"
            return SourceLoc(register_cell(self.shell, source), called.lineno)
        where = f"<{magic}>"
        linecache.cache[where] = (len(text), None, [text + "\n"], where)
        return SourceLoc(where, 1)

    def _evaluate(self, magic: str, text: str, where: SourceLoc, tree: ast.expr | None = None):
        """``text`` (or ``tree``, an expression read from it) evaluated in the user's
        namespace, as written at ``where`` (:meth:`_written_at`). What it raises is the
        user's error, as in a cell: its traceback goes from the cell's line to ``text``,
        shown as the magic's own line, and on into the user's code, not through the magic's
        frames. A name ``text`` itself uses and the namespace lacks is a card naming the
        magic and the name."""
        __tracebackhide__ = True
        tree = ast.parse(text, mode="eval").body if tree is None else tree
        ast.increment_lineno(tree, where.lineno - 1)
        code = compile(ast.Expression(tree), where.filename, "eval")
        try:
            with self.shell.builtin_trap:
                return eval(code, self.shell.user_global_ns, self.shell.user_ns)
        except NameError as exc:
            if _raised_in(exc, code):
                raise CellError(f"{magic}: {exc} in the notebook's namespace") from None
            raise


def _raised_in(exc: BaseException, code) -> bool:
    """Whether ``exc`` was raised by ``code`` itself, not by a function it called."""
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code is code


def _readable(magic: str, text: str) -> str:
    """``text`` stripped, once it parses as a Python expression: a syntax error is a card
    naming the magic and the text, not a traceback through IPython's evaluation."""
    text = text.strip()
    try:
        ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CellError(f"{magic}: cannot read {text!r} as an expression: {exc.msg}") from None
    return text
