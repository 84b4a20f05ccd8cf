"""``theano.sandbox.rng_mrg.MRG_RandomStreams``: the same streams as ``RandomStreams``
(symnb's Philox generator stands in for MRG31k3p; the numbers differ from Theano's), with
MRG's own ``choice`` without replacement and ``multinomial_wo_replacement``."""

from __future__ import annotations

import numpy as np

from symnb import ops as sn
from symnb.compat.theano.tensor.shared_randomstreams import (
    RandomStreams,
    _float_draw_dtype,
    _size,
    _with_rng,
)
from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, ShapeError, ShapeTypeError
from symnb.ops.checks import at_most


class MRG_RandomStreams(RandomStreams):  # noqa: N801 - Theano's name
    """``MRG_RandomStreams(seed=12345)``: ``uniform``, ``normal``, ``binomial``..."""

    default_seed = 12345

    def _as_seed(self, seed):
        """Theano's MRG seed: an int, or a list of six (MRG31k3p's state: the first three
        below M1, the last three below M2, neither three all 0), refused as Theano refused
        them. Six equal ints are that int (Theano repeated an int six times); other lists
        are one int, the six as base-2**31 digits, so each list is a stream of its own."""
        if is_int(seed) or isinstance(seed, str) or not hasattr(seed, "__len__"):
            return seed  # (RandomStream says what a seed is)
        values = list(seed)
        problem = _mrg_seed_problem(values)
        if problem is not None:
            raise _at_user_line(ArgumentError(f"MRG_RandomStreams: {problem}, not {seed!r}"))
        if len(set(values)) == 1:
            return int(values[0])
        return sum(int(v) << (31 * i) for i, v in enumerate(values))

    @_with_rng  # its uniform draw's state; refused, no state is left
    def choice(self, size=None, a=None, replace=True, p=None, ndim=None, dtype=None, **kwargs):
        """Theano MRG's form, ``choice(size=k, a=None, replace=False, p=matrix)``: for each row
        of ``p``, ``k`` distinct column indices drawn one after another with probabilities
        ``p`` renormalised over the columns left (word2vec's negative sampling). Other
        forms (``a`` given) are ``RandomStreams.choice``'s. ``size`` is 1 by default, as in
        Theano (a scalar draw in the other forms)."""
        if a is not None:
            return super().choice(() if size is None else size, a, replace, p, ndim, dtype)
        if replace:
            raise _at_user_line(
                NotImplementedError(
                    "MRG_RandomStreams.choice(a=None) draws without replacement only, as in "
                    "Theano: pass replace=False; for draws with replacement, "
                    "multinomial(pvals=p) gives counts per row"
                )
            )
        if p is None:
            raise _at_user_line(
                ArgumentError(
                    "MRG_RandomStreams.choice(a=None): p, a row of probabilities per draw, "
                    "is needed"
                )
            )
        p = as_variable(p)
        if p.type.ndim != 2:
            raise _at_user_line(
                ShapeError(
                    f"MRG_RandomStreams.choice(a=None): p must be a matrix (a row of "
                    f"probabilities per draw), not {p.describe()}"
                )
            )
        u = self.uniform(size=sn.shape(p), dtype="float64")
        dtype = "int64" if dtype is None else dtype
        return _without_replacement(u, p, 1 if size is None else size, dtype)

    @_with_rng
    def truncated_normal(self, size, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None):
        """Theano 1.0's: normal with mean ``avg`` and standard deviation ``std``, truncated
        to ``avg +- 2 std / 0.8796`` (``normal(truncate=True)`` of std rescaled so the
        truncated draw's own standard deviation is ``std``, as Theano rescaled it)."""
        dtype = _float_draw_dtype(dtype, avg, std)
        return self._truncated_normal(_size(size, ndim), avg, std, dtype, unit_std=True)

    def multinomial_wo_replacement(
        self, size=None, n=1, pvals=None, ndim=None, dtype="int64", **kwargs
    ):
        """Theano's older name for ``choice(size=n, a=None, replace=False, p=pvals)``."""
        if size is not None:
            raise _at_user_line(
                ArgumentError("multinomial_wo_replacement: size must be None (n is the count)")
            )
        return self.choice(size=n, a=None, replace=False, p=pvals, dtype=dtype)


#: MRG31k3p's moduli: the bounds Theano put on the two halves of a six-int seed
M1, M2 = 2147483647, 2147462579


def _mrg_seed_problem(values: list) -> str | None:
    """Why six ints are not an MRG seed (Theano's ``set_rstate`` rules), or None."""
    if len(values) != 6 or not all(is_int(v) and v >= 0 for v in values):
        return "a seed is 1 non-negative int or a list of 6 (MRG31k3p's state)"
    for half, bound, which in ((values[:3], M1, "first"), (values[3:], M2, "last")):
        if not any(half):
            return f"the {which} 3 values of a 6-int seed must not all be 0"
        if max(half) >= bound:
            return f"the {which} 3 values of a 6-int seed must be less than {bound}"
    return None


def _without_replacement(u: Variable, p: Variable, size, dtype) -> Variable:
    """Per row, the ``size`` columns whose keys ``log(-log(u)) - log(p)`` are smallest, in
    that order: the Gumbel top-k trick, which orders the columns exactly as drawing them one
    by one with the probabilities of those left does. Columns of probability 0 come last.
    ``size`` must be at most p's column count (Theano's rule: a slice would return fewer
    columns), checked when built where both are known, else when the function runs."""
    positive = sn.greater(p, 0)
    log_p = sn.where(positive, sn.log(sn.where(positive, p, 1)), -np.inf)
    keys = sn.log(-sn.log(u)) - sn.cast(log_p, "float64")
    order = _enough_columns(sn.argsort(keys, axis=1), p, size)
    return sn.cast(order[:, :size], dtype)


def _enough_columns(order: Variable, p: Variable, size) -> Variable:
    what = (
        "MRG_RandomStreams.choice(a=None, replace=False): size, the number of distinct "
        f"columns drawn per row, must be at most the column count of p {p.describe()}"
    )
    size_var = as_variable(size)
    if size_var.type.ndim != 0 or size_var.type.dtype.kind not in "iu":
        raise _at_user_line(
            ShapeTypeError(
                f"MRG_RandomStreams.choice(a=None): size is an int, the number of distinct "
                f"columns drawn per row, not {size!r}"
            )
        )
    known, columns = _known_int(size), p.type.shape[1]
    if known is not None and known < 0:
        raise _at_user_line(ShapeError(f"{what}, and not negative ({known})"))
    if known is not None and isinstance(columns, int):
        if known > columns:
            raise _at_user_line(ShapeError(f"{what} ({known} > {columns})"))
        return order
    return at_most(order, size_var, sn.shape(p)[1], what)


def _known_int(size):
    if isinstance(size, Constant):
        return int(size.data)
    return None if isinstance(size, Variable) else int(size)
