"""Keys that tell apart parameters ``==`` calls equal: ``0.0 == -0.0``, and a NaN is not even
equal to itself.

Ops compare and hash their parameters by these keys, as constants compare by their bytes
(``Constant.signature``): a pad with -0.0 is not a pad with 0.0, and merging the two nodes
would give one of them the other's zeros. Every other number keys as itself, so ``1 == 1.0``
still holds.
"""

from __future__ import annotations

import math

import numpy as np

_AS_IS = frozenset({int, bool, str, type(None)})  # == is exact: the common case, checked first


def exact_key(value):
    """``value`` where ``==`` is exact for it; else a key that keeps the sign of a zero and the
    bits of a NaN (tuples and lists element by element, arrays by dtype, shape and bytes)."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is tuple or kind is list:
        for item in value:
            if type(item) not in _AS_IS:
                return tuple([exact_key(v) for v in value])
        return tuple(value)
    if kind is float or isinstance(value, np.floating):
        return _float_key(value)
    if isinstance(value, (complex, np.complexfloating)):
        real, imag = _float_key(value.real), _float_key(value.imag)
        return value if (real, imag) == (value.real, value.imag) else ("complex", real, imag)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    return value


def _float_key(value):
    if value != 0 and value == value:  # neither a zero nor a NaN: == is exact
        return value
    if value == 0:
        return ("-0.0",) if math.copysign(1.0, value) < 0 else value
    return ("nan", np.asarray(value).dtype.str, np.asarray(value).tobytes())
