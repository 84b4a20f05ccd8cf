"""``%%symcompile``, ``%symgraph`` and ``%symprofile``: thin calls into symnb and symnb.viz."""

from __future__ import annotations

import ast

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from symnb.magics.cell import OPTIONS, CellError, parse_line, symcompile
from symnb.magics.views import views_for
from symnb.viz.graphs import picture
from symnb.viz.subject import as_graph


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
        if not line.strip():
            raise CellError(
                "%symgraph needs what to draw: a variable, a list of variables or a compiled "
                "function (e.g. %symgraph loss, %symgraph f)"
            )
        obj = self._evaluate("%symgraph", _readable("%symgraph", line))
        try:
            as_graph(obj)
        except TypeError:
            raise CellError(
                f"%symgraph: {line.strip()} is a {type(obj).__name__}; it draws a variable, a "
                "list of variables or a compiled function"
            ) from None
        display(picture(obj))

    @magic_arguments()
    @argument("-n", "--repeat", type=int, default=10, help="how many calls to time")
    @argument("call", nargs="+", help="a call such as f(x_data, y_data)")
    @line_magic
    def symprofile(self, line):
        """``%symprofile [-n N] f(args...)``: time each node of the call; table and chart."""
        args = parse_argstring(self.symprofile, line)
        if args.repeat < 1:
            raise CellError(
                f"%symprofile -n {args.repeat}: the number of calls to time must be at least 1"
            )
        function, call_args, call_kwargs = self._parse_call(" ".join(args.call))
        display(function.profile(*call_args, repeat=args.repeat, **call_kwargs))

    def _parse_call(self, text: str):
        """The function and arguments of ``f(x, y=...)``; anything else is a card."""
        node = ast.parse(_readable("%symprofile", text), mode="eval").body
        if not isinstance(node, ast.Call):
            raise CellError(
                f"%symprofile takes a call such as f(x), not {text.strip()!r} "
                "(f() times it on random inputs)"
            )
        name = ast.unparse(node.func)
        function = self._evaluate("%symprofile", name)
        if not hasattr(function, "profile"):
            raise CellError(
                f"%symprofile: {name} is a {type(function).__name__}, not a compiled function "
                "(sn.function or %%symcompile makes one)"
            )
        # the argument list evaluated once, as Python calls it: *args and **kw included
        listed = ", ".join(ast.unparse(a) for a in [*node.args, *node.keywords])
        values, kwargs = self._evaluate("%symprofile", f"(lambda *a, **k: (a, k))({listed})")
        return function, values, kwargs

    def _evaluate(self, magic: str, text: str):
        """``text`` evaluated in the user's namespace; a name not defined there is a card
        naming the magic and the name, not a traceback through the magic's frames."""
        try:
            return self.shell.ev(text)
        except NameError as exc:
            raise CellError(f"{magic}: {exc} in the notebook's namespace") from None


def _readable(magic: str, text: str) -> str:
    """``text`` stripped, once it parses as a Python expression: a syntax error is a card
    naming the magic and the text, not a traceback through IPython's evaluation."""
    text = text.strip()
    try:
        ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CellError(f"{magic}: cannot read {text!r} as an expression: {exc.msg}") from None
    return text
