"""What a display or a text form is asked to show, as a Graph: a Graph itself, a compiled
function (its graph), an Apply node, or some variables (their free leaves become inputs).
Anything else is a TypeError that says what is accepted."""

from __future__ import annotations

from symnb.core.graph import Graph, leaves
from symnb.core.op import Apply
from symnb.core.variable import Constant, SharedVariable, Variable


def as_graph(obj) -> Graph:
    """The Graph behind a Graph, a Function (or anything holding its graph as ``.graph``, as
    the Theano layer's ``f.maker.fgraph`` does), an Apply node (its outputs) or some
    variables (free leaves become inputs)."""
    if isinstance(obj, Graph):
        return obj
    if hasattr(obj, "graph") and isinstance(obj.graph, Graph):
        return obj.graph
    if isinstance(obj, Apply):
        obj = obj.outputs
    try:
        outputs = [obj] if isinstance(obj, Variable) else list(obj)
    except TypeError:  # not iterable (a number): the same message as any other non-variable
        outputs = None
    if outputs is None or not all(isinstance(v, Variable) for v in outputs):
        raise TypeError(
            f"cannot show {_short(obj)}: expected a graph, a function, a variable, a list "
            "of variables or an Apply node"
        )
    free = [v for v in leaves(outputs) if not isinstance(v, (Constant, SharedVariable))]
    return Graph(free, outputs, clone=False)


def _short(obj) -> str:
    text = repr(obj)
    return f"{text[:80]}..." if len(text) > 80 else text
