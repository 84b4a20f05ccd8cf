"""``theano.tensor.extra_ops``: the few of its functions course code uses, on symnb's ops;
reading one symnb has no op for is an error saying what to write instead."""

from __future__ import annotations

from symnb import ops as sn
from symnb.compat.theano.configparser import resolve_dtype
from symnb.compat.theano.missing import missing_names
from symnb.compat.theano.tensor.basic import cumprod, cumsum, squeeze  # noqa: F401 - Theano's
from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.core.variable import as_variable
from symnb.errors import ArgumentError
from symnb.ops._axes import one_axis

repeat = sn.repeat


def to_one_hot(y, nb_class, dtype=None):
    """One-hot rows of ``nb_class`` (an int or an integer scalar variable) for integer labels
    ``y`` (floatX unless ``dtype``)."""
    dtype = resolve_dtype("floatX" if dtype is None else dtype)
    return sn.one_hot(as_variable(y), nb_class, dtype=dtype)


def diff(x, n=1, axis=-1):
    """Theano's (and NumPy's) ``diff``: the ``n``-th differences along ``axis``."""
    x = as_variable(x)
    if not is_int(n) or n < 0:
        raise _at_user_line(ArgumentError(f"diff: n is the order, an int >= 0, not {n!r}"))
    axis = one_axis(axis, x.type.ndim, "diff", x)
    before = (slice(None),) * axis
    for _ in range(int(n)):
        x = x[(*before, slice(1, None))] - x[(*before, slice(None, -1))]
    return x


#: Theano's extra_ops that symnb has no op for, each with what to write instead
_MISSING = {
    "bincount": "to_one_hot(x, minlength).sum(axis=0) for the counts, or np.bincount on the value",
    "fill_diagonal": "x * (1 - T.eye(n)) + val * T.eye(n) (T.eye's offset k for an offset)",
    "fill_diagonal_offset": "x * (1 - T.eye(n, k=offset)) + val * T.eye(n, k=offset)",
    "searchsorted": "np.searchsorted on the values, or T.sum(T.lt(sorted[None, :], v[:, None]), 1)",
    "unravel_index": "T.floor_div and T.mod of the flat indices by the shape's trailing "
    "products (row-major), or np.unravel_index on the value",
    "ravel_multi_index": "the sum of each index times the product of the dims after it "
    "(row-major: i * n1 + j for two), or np.ravel_multi_index on the value",
    "bartlett": "T.constant(np.bartlett(M)) for an int M",
    "unique": "np.unique on the value (the result's length is not known when the graph is built)",
    "Unique": "np.unique on the value (the result's length is not known when the graph is built)",
}


__getattr__ = missing_names(
    "theano.tensor.extra_ops",
    "it has to_one_hot, cumsum, cumprod, repeat, squeeze and diff",
    _MISSING,
    "symnb's ops (symnb.ops, docs/ops.md) or the value in NumPy",
)
