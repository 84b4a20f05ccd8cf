"""``theano.printing``: ``debugprint`` prints symnb's text form of a graph (one typed
equation a line, which reads differently from Theano's indented tree but holds the same
facts), ``pydotprint`` writes the graph's picture to the file asked for, and ``pp`` writes
each output as Theano's pretty printer did, on one line, every operation bracketed."""

from __future__ import annotations

import os
import reprlib
import sys

from symnb.compile.function import Function as _SymnbFunction
from symnb.core.graph import Graph
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.errors import ArgumentError
from symnb.ops.debug import print_value
from symnb.viz.graphs import picture
from symnb.viz.latex import to_infix
from symnb.viz.render import output_format, render_bytes
from symnb.viz.subject import as_graph
from symnb.viz.text import format_graph


def _graph_of(obj, caller: str) -> Graph:
    """The graph of what Theano's printers take: a variable, a list of variables, an Apply
    node, a compiled function (its optimised graph) or a FunctionGraph (``f.maker.fgraph``)."""
    fn = getattr(obj, "symnb_function", obj)  # a theano.function wraps a symnb Function
    if isinstance(fn, _SymnbFunction):
        return fn.graph
    try:
        return as_graph(obj)
    except TypeError:
        raise ArgumentError(
            f"{caller}: expected a variable, a list of variables, an Apply node, a function "
            f"or a FunctionGraph (f.maker.fgraph), not {reprlib.repr(obj)}"
        ) from None


def debugprint(obj, depth=-1, print_type=False, file=None, **options):
    """Print the graph of ``obj`` (a variable, variables, an Apply node, a compiled function
    or a FunctionGraph, ``f.maker.fgraph``) to ``file`` (stdout by default, and then nothing
    is returned); ``file="str"`` returns the text instead, and a file given is returned (as
    Theano did). Theano's other display options are accepted and do not change the text."""
    text = format_graph(_graph_of(obj, "debugprint"))
    if file == "str":
        return text
    print(text, file=sys.stdout if file is None else file)
    return file


dprint = debugprint


def pp(obj) -> str:
    """Theano's pretty form: the expression of each output of ``obj`` (what ``debugprint``
    takes) on a line of its own, every operation bracketed, ``(x + y)``, ``tanh((x @ W))``."""
    return "\n".join(to_infix(out) for out in _graph_of(obj, "pp").outputs)


pprint = pp  # Theano's pretty printer, which pp called


def pydotprint(
    fct,
    outfile=None,
    compact=True,
    format="png",
    with_ids=False,  # noqa: A002
    print_output_file=True,
    return_image=False,
    **options,
):
    """Draw the graph of ``fct`` (a compiled function, a variable, variables, an Apply node
    or a FunctionGraph) into ``outfile`` in ``format`` (png, svg, pdf, dot...). An
    ``outfile`` with an extension and no ``format`` given draws in the extension's format.
    ``return_image=True`` returns the bytes instead of writing them."""
    target = getattr(fct, "symnb_function", fct)
    source = f"format={format!r}"
    if outfile is not None and format == "png":
        ext = os.path.splitext(str(outfile))[1].lstrip(".")
        if ext:
            format, source = ext, f"the extension of outfile={str(outfile)!r}"  # noqa: A001
    format = output_format(format, source)  # noqa: A001 - before the graph is drawn
    image = render_bytes(picture(target).dot(), format)
    if return_image:
        return image
    outfile = outfile or f"theano.pydotprint.cpu.{format}"
    with open(outfile, "wb") as handle:
        handle.write(image)
    if print_output_file:
        print("The output file is available at", outfile)
    return None


class Print:
    """``theano.printing.Print("msg")(x)``: x, printing ``msg __str__ = value`` each time the
    function computes it (``attrs=("shape",)`` prints other attributes)."""

    def __init__(self, message="", attrs=("__str__",), global_fn=None):
        if global_fn is not None:
            raise _at_user_line(NotImplementedError("Print: global_fn is not implemented"))
        self.message, self.attrs = message, tuple(attrs)

    def __call__(self, x) -> Variable:
        return print_value(x, self.message, self.attrs)
