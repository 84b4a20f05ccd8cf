"""What Theano's graph of a result read that symnb's does not: symnb folds ``T.zeros_like``/
``T.ones_like`` of a variable of known shape, and a gradient its cost does not change (the
gradient of ``3 * s``), to constants, where Theano built ``fill(model, value)`` and seeded a
gradient with ``fill(cost, 1)``, both reading the model or the cost. ``theano.function``'s
unused-input check (which walks the graph as written) reads them through this table, so an
input only such a result used is used, as in Theano; the compiled graph is symnb's."""

from __future__ import annotations

import weakref

from symnb.core.graph import leaves
from symnb.core.variable import Constant, SharedVariable, Variable

#: ``{id(result): (weak reference to it, [what it read])}`` (by id: ``==`` of variables builds
#: a comparison, so they cannot be a WeakKeyDictionary's keys); an entry goes with its result
_READS: dict[int, tuple] = {}


def reading(result: Variable, read: Variable) -> Variable:
    """``result``, noted as reading ``read`` where it does not read every input ``read``
    reads (a constant result is a copy of its own first, so that no other use of that
    constant is noted)."""
    if not isinstance(result, Variable) or not isinstance(read, Variable):
        return result
    wanted = {id(v) for v in leaves([read]) if not isinstance(v, (Constant, SharedVariable))}
    if not wanted - {id(v) for v in leaves([result])}:
        return result
    if result.owner is None:
        result = result.clone()
    key = id(result)
    if key not in _READS:
        _READS[key] = (weakref.ref(result, lambda _, key=key: _READS.pop(key, None)), [])
    _READS[key][1].append(read)
    return result


def reads_of(var: Variable) -> list:
    """What ``var`` read in Theano's graph beyond its own inputs (``reading``)."""
    entry = _READS.get(id(var))
    return entry[1] if entry is not None and entry[0]() is var else []
