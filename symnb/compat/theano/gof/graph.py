"""``theano.gof.graph``: ``Variable``, ``Apply``, ``Constant``, ``inputs``, ``ancestors``."""

from __future__ import annotations

from symnb.core.graph import ancestors as _ancestors
from symnb.core.graph import leaves as _leaves
from symnb.core.op import Apply  # noqa: F401
from symnb.core.variable import Constant, Variable  # noqa: F401


def inputs(variables, blockers=None) -> list:
    """The variables with no owner that ``variables`` are computed from."""
    return list(_leaves(list(variables)))


def ancestors(variables, blockers=None) -> list:
    """Every variable ``variables`` depend on (themselves included)."""
    nodes = _ancestors(list(variables))
    found = {id(v): v for v in variables}
    for node in nodes:
        for v in [*node.inputs, *node.outputs]:
            found.setdefault(id(v), v)
    return list(found.values())
