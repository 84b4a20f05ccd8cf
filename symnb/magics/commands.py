"""``%%symcompile``, ``%symgraph`` and ``%symprofile``: thin calls into symnb and symnb.viz."""

from __future__ import annotations

import ast

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from symnb.magics.cell import OPTIONS, parse_line, symcompile
from symnb.magics.views import views_for
from symnb.viz.graphs import picture


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
        """``%symgraph EXPR``: draw the graph of a variable, list of variables or function."""
        display(picture(self.shell.ev(line)))

    @magic_arguments()
    @argument("-n", "--repeat", type=int, default=10, help="how many calls to time")
    @argument("call", nargs="+", help="a call such as f(x_data, y_data)")
    @line_magic
    def symprofile(self, line):
        """``%symprofile [-n N] f(args...)``: time each node of the call; table and chart."""
        args = parse_argstring(self.symprofile, line)
        function, call_args, call_kwargs = self._parse_call(" ".join(args.call))
        display(function.profile(*call_args, repeat=args.repeat, **call_kwargs))

    def _parse_call(self, text: str):
        node = ast.parse(text.strip(), mode="eval").body
        if not isinstance(node, ast.Call):
            raise ValueError(f"%symprofile takes a call such as f(x), not {text!r}")
        function = self.shell.ev(ast.unparse(node.func))
        if not hasattr(function, "profile"):
            raise TypeError(f"%symprofile: {ast.unparse(node.func)} is not a compiled function")
        values = [self.shell.ev(ast.unparse(a)) for a in node.args]
        kwargs = {k.arg: self.shell.ev(ast.unparse(k.value)) for k in node.keywords}
        return function, values, kwargs
