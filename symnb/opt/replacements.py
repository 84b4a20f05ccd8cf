"""What a rule returns, checked before the graph is edited, every error a RewriteError naming
the rule and its line: ``(old, new)`` pairs of variables, each ``new`` of ``old``'s dtype and
rank, not reading the value it replaces (the graph would be a cycle). A rule of the user's
(one not in symnb) whose replacement's dims the types cannot prove to be ``old``'s gets them
checked when the function runs (``ops.checks.has_shape``): its mistake would otherwise be a
result of another size, silently. Built-in rules are trusted with both (a walk over the graph
per firing would make rewriting quadratic). For every rule, ``old`` must be a value of the
graph (a pair replacing another graph's variable left the replacement's nodes dangling and
fired again and again), and ``Graph.replace`` still refuses a replacement that reads what it
replaces directly, or a leaf that is not the graph's input, a constant or a shared value (a
variable of another graph): the engine reports them as RewriteErrors naming the rule.
"""

from __future__ import annotations

from symnb.core.dims import names_in
from symnb.core.graph import ancestors, check_replaceable, leaves
from symnb.core.variable import Variable
from symnb.errors import GraphError
from symnb.ops.checks import has_shape
from symnb.opt.verify import RewriteError

ANSWERS = (
    "a rule returns the replacement of the node's output (a Variable), a list of (old, new) "
    "pairs of Variables, or None to decline"
)


def label(rule) -> str:
    """``rule name (file:line)``, as every message names a rule."""
    return f"rule {rule.name} ({rule.source})" if rule.source else f"rule {rule.name}"


def call(rule, *args):
    """``rule.fn(*args)``; what it raises is a RewriteError naming the rule (the original
    chained), not an error from somewhere inside the engine."""
    try:
        return rule.fn(*args)
    except RewriteError:
        raise
    except Exception as exc:
        raise RewriteError(f"{label(rule)} raised {type(exc).__name__}: {exc}") from exc


def firings(rule, graph):
    """A graph rule's firings, one list of pairs at a time, each checked (``as_pairs``)."""
    found = call(rule, graph)
    try:
        found = iter(found)
    except TypeError:
        raise RewriteError(
            f"{label(rule)} returned {_kind(found)}: a graph rule yields one list of (old, new) "
            "pairs per firing (a generator, or a list of such lists)"
        ) from None
    while True:
        pairs = _next(rule, found)
        if pairs is None:
            return
        yield as_pairs(rule, None, pairs)


def _next(rule, found):
    try:
        return next(found, None)
    except Exception as exc:
        raise RewriteError(f"{label(rule)} raised {type(exc).__name__}: {exc}") from exc


def as_pairs(rule, node, result) -> list:
    """A rule's answer as ``(old, new)`` pairs, leaving out no-op pairs; ``node``: the node
    a node rule matched (a single variable replaces its output), None for a graph rule."""
    if result is None:
        return []
    if isinstance(result, Variable) and node is not None:
        if len(node.outputs) != 1:
            raise RewriteError(f"{label(rule)} returned one variable for a multi-output node")
        result = [(node.outputs[0], result)]
    elif not isinstance(result, (list, tuple)) or not all(_is_pair(p) for p in result):
        raise RewriteError(f"{label(rule)} returned {_kind(result)}: {ANSWERS}")
    return [(old, new) for old, new in result if new is not old]


def _is_pair(pair) -> bool:
    return (
        isinstance(pair, (tuple, list))
        and len(pair) == 2
        and all(isinstance(v, Variable) for v in pair)
    )


def _kind(result) -> str:
    if (
        isinstance(result, tuple)
        and len(result) == 2
        and all(isinstance(v, Variable) for v in result)
    ):
        return "a bare (old, new) tuple (put it in a list: [(old, new)])"
    text = repr(result) if not isinstance(result, Variable) else result.describe()
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"a value of type {type(result).__name__} ({text})"


def checked(rule, old, new, graph):
    """``new``, once it may replace ``old``: ``old`` a value of ``graph``, ``new`` of its
    dtype and rank, not reading ``old``; for a user's rule, with dims the types do not prove
    checked when the function runs."""
    if not graph.holds(old):  # (Graph.replace would leave it: the rule would fire again)
        raise RewriteError(
            f"{label(rule)} returned a bad replacement: {old.describe()} is not a value of "
            "the graph (a variable of another graph, or one an earlier firing removed); a "
            "rule replaces values of m.graph, such as m.out"
        )
    try:
        check_replaceable(old, new)
    except GraphError as exc:
        raise RewriteError(f"{label(rule)} returned a bad replacement: {exc}") from None
    if rule.builtin:
        return new
    if any(i is old for node in ancestors([new]) for i in node.inputs):
        raise RewriteError(
            f"{label(rule)} returned a bad replacement: {new.describe()} reads the value it "
            f"replaces, {old.describe()} (the graph would be a cycle); build it from what the "
            "pattern bound (m.x), not from m.out"
        )
    return _dims_checked(rule, old, new)


def _dims_checked(rule, old, new):
    """``new`` with ``old``'s dims checked when the function runs where the types do not
    prove them equal and the graph's leaves give their sizes (a dim None is not checked)."""
    sources = [v for v in leaves([old]) if any(isinstance(d, str) for d in v.type.shape)]
    given = {d for v in sources for d in v.type.shape if isinstance(d, str)}

    def checkable(a, b) -> bool:
        return a is not None and a != b and names_in(a) <= given

    if not any(checkable(a, b) for a, b in zip(old.type.shape, new.type.shape)):
        return new
    what = f"{label(rule)}: its replacement of {old.describe()} has another shape"
    return has_shape(new, old.type.shape, sources, what)
