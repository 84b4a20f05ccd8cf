"""Random inputs that fit a function's input types, so ``f.profile()`` runs with no data.

Named dims take one size everywhere (``batch`` is the same in every input): the one the
function's shared values give them (``W`` of ``("f", 10)`` holding (5, 10) makes f 5, as every
call must: ``Function.shared_dim_sizes``), else ``size``, as unknown dims; a dim written as an
expression of names (``"n+m"``, ``"2*n"``) takes the size it evaluates to from theirs.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import evaluate, names_in


def sample_inputs(function, size: int = 64, sizes: dict | None = None, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    named = {**function.shared_dim_sizes(), **(sizes or {})}
    for var in function.inputs:
        for d in var.type.shape:
            for name in sorted(names_in(d)):
                named.setdefault(name, size)
    return [_sample(var.type, rng, named, size) for var in function.inputs]


def _dims(shape, named: dict, size: int) -> tuple:
    out = []
    for d in shape:
        value = evaluate(d, named)
        out.append(size if value is None else max(int(value), 0))
    return tuple(out)


def _sample(ttype, rng, named, size):
    shape = _dims(ttype.shape, named, size)
    kind = ttype.dtype.kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        return rng.integers(0, 4, shape).astype(ttype.dtype)
    return rng.standard_normal(shape).astype(ttype.dtype)
