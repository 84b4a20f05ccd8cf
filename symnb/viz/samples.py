"""Random inputs that fit a function's input types, so ``f.profile()`` runs with no data.

Named dims take one size everywhere (``batch`` is the same in every input); unknown dims
and named dims default to ``size``.
"""

from __future__ import annotations

import numpy as np


def sample_inputs(function, size: int = 64, sizes: dict | None = None, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    named = dict(sizes or {})
    return [_sample(var.type, rng, named, size) for var in function.inputs]


def _dims(shape, named: dict, size: int) -> tuple:
    out = []
    for d in shape:
        if isinstance(d, str):
            d = named.setdefault(d, size)
        out.append(size if d is None else d)
    return tuple(out)


def _sample(ttype, rng, named, size):
    shape = _dims(ttype.shape, named, size)
    kind = ttype.dtype.kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        return rng.integers(0, 4, shape).astype(ttype.dtype)
    return rng.standard_normal(shape).astype(ttype.dtype)
