"""Control flow: an ``ifelse`` whose choice is known when compiling becomes the branch."""

from __future__ import annotations

from symnb.control.ifelse import IfElse
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import constant_value, fits


@rule("canonicalize", Pattern(IfElse))
def ifelse_of_known_condition(m):
    """``ifelse(True, a, b) -> a`` and ``ifelse(False, a, b) -> b``: a constant condition."""
    node = m.node
    cond = constant_value(node.inputs[0])
    if cond is None:
        return None
    n = node.op.n
    chosen = node.inputs[1 : 1 + n] if bool(cond) else node.inputs[1 + n :]
    return _replacing(node, chosen)


@rule("canonicalize", Pattern(IfElse))
def ifelse_of_equal_branches(m):
    """``ifelse(c, a, a) -> a``: both branches give the very same values."""
    node = m.node
    n = node.op.n
    thens, elses = node.inputs[1 : 1 + n], node.inputs[1 + n :]
    if any(t is not e for t, e in zip(thens, elses)):
        return None
    return _replacing(node, thens)


def _replacing(node, values):
    pairs = list(zip(node.outputs, values))
    return pairs if all(fits(old, new) for old, new in pairs) else None
