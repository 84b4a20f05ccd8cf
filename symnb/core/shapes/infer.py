"""``sn.infer_shape``: the static, symbolic shape of a variable."""

from __future__ import annotations

from symnb.core.variable import as_variable


def infer_shape(var) -> tuple:
    """The shape symnb inferred for ``var`` when it was built: a tuple of dims, each an int,
    a name (``"batch"``), an expression of names (``batch*784``, ``m+n``) or None (unknown).

    >>> import symnb as sn
    >>> x = sn.tensor("x", shape=("batch", 28, 28))
    >>> sn.infer_shape(x.reshape(-1, 784))
    ('batch', 784)
    """
    return as_variable(var).type.shape
