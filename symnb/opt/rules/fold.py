"""Constant folding: a node whose inputs are all constants becomes the constant it computes."""

from __future__ import annotations

import math

import numpy as np

from symnb.core.op import Op
from symnb.core.variable import Constant
from symnb.opt.pattern import Pattern
from symnb.opt.registry import rule
from symnb.opt.rules._util import is_pure

#: results larger than this stay computed at run time (folding must not bloat the graph)
MAX_FOLDED_ELEMENTS = 1 << 16
FOLDING_PHASES = ("constant_folding", "canonicalize", "stabilize", "specialize")


@rule(FOLDING_PHASES, Pattern(Op))
def constant_fold(m):
    """Run the op's NumPy reference now; its value must have the promised dtype."""
    node = m.node
    if not node.inputs or not all(isinstance(v, Constant) for v in node.inputs):
        return None
    if not is_pure(node.op) or any(_surely_larger(var) for var in node.outputs):
        return None
    values = _compute(node)
    if values is None:
        return None
    pairs = []
    for var, value in zip(node.outputs, values):
        if value.dtype != var.type.dtype or value.size > MAX_FOLDED_ELEMENTS:
            return None
        pairs.append((var, Constant(value, name=var.name)))
    return pairs


def _surely_larger(var) -> bool:
    """The type shows more elements than are folded: not computed only to be dropped (the
    zeros of a gradient's ``(T, 1000, 1000)`` took their size in memory to compile)."""
    dims = var.type.shape
    return all(isinstance(d, int) for d in dims) and math.prod(dims) > MAX_FOLDED_ELEMENTS


def _compute(node):
    """The node's values, or None if the op fails (the failure is then reported at run time)."""
    try:
        with np.errstate(all="ignore"):
            result = node.op.perform(*[v.data for v in node.inputs])
    except Exception:  # noqa: BLE001 - folding is optional; the run reports the error
        return None
    results = (result,) if len(node.outputs) == 1 else tuple(result)
    return [np.asarray(r) for r in results]
