"""``%%symcompile``, ``%symgraph`` and ``%symprofile``: thin calls into symnb and symnb.viz."""

from __future__ import annotations

import ast

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from symnb.compile import function as compile_function
from symnb.magics.cell import pick_inputs, pick_outputs, pick_updates, run_cell
from symnb.magics.views import views_for
from symnb.viz.graphs import picture


@magics_class
class SymnbMagics(Magics):
    @magic_arguments()
    @argument("name", help="the name the compiled function is bound to")
    @argument("--backend", default=None, help="c, py, opencl or cuda (default: symnb's)")
    @argument("--show", default="", help="before,after,diff,grad,kernels,profile,steps")
    @argument("--optimize", default=None, help="fast, stable, none, or +rule,-rule lists")
    @argument("--inputs", default=None, help="input names in order (default: as created)")
    @argument("--outputs", default=None, help="output names (default: the last expression)")
    @argument("--quiet", action="store_true", help="do not display the summary card")
    @cell_magic
    def symcompile(self, line, cell):
        """Run the cell with symnb's names in scope and compile what it defines into NAME.

        Inputs: the symbolic inputs the outputs use, in creation order (or --inputs).
        Outputs: the cell's last expression (or --outputs). Updates: a dict named
        ``updates`` assigned in the cell.
        """
        args = parse_argstring(self.symcompile, line)
        value, namespace, bound = run_cell(self.shell, cell)
        outputs = pick_outputs(value, namespace, args.outputs)
        updates = pick_updates(namespace, bound)
        inputs = pick_inputs(outputs, updates, namespace, args.inputs)
        options = {"backend": args.backend, "name": args.name}
        if args.optimize is not None:
            options["optimize"] = parse_optimize(args.optimize)
        function = compile_function(inputs, outputs, updates=updates or None, **options)
        self.shell.user_ns[args.name] = function
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


def parse_optimize(text: str):
    """``fast``/``stable``/``none``, or ``+name,-name`` lists of phases/rules to include or
    exclude (``{"include": [...], "exclude": [...]}`` for sn.function)."""
    if text in ("fast", "stable", "none"):
        return text
    parts = [p.strip() for p in text.split(",") if p.strip()]
    include = [p.lstrip("+") for p in parts if not p.startswith("-")]
    exclude = [p[1:] for p in parts if p.startswith("-")]
    return {"include": include, "exclude": exclude}
