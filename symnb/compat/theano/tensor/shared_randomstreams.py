"""``theano.tensor.shared_randomstreams.RandomStreams``: symnb's random streams under
Theano's method signatures (``ndim``, ``nstreams``, ``prob`` accepted).

The draws depend only on the seed and the order of the draws, as in Theano, but the numbers
are symnb's (Philox), not those of NumPy's or MRG31k3p's generators (docs/theano.md).
"""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.core.variable import Variable
from symnb.ops.random import RandomStream


class RandomStreams(RandomStream):
    """``RandomStreams(seed)``: ``uniform``, ``normal``, ``binomial``, ``random_integers``,
    ``permutation``, ``choice``, ``multinomial``; every function using a draw advances it."""

    default_seed = 0

    def __init__(self, seed=None):
        super().__init__(self.default_seed if seed is None else seed)

    def uniform(self, size=(), low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None):
        """Uniform on [low, high); dtype floatX unless given."""
        return super().uniform(_size(size, ndim), low, high, dtype=dtype)

    def normal(
        self, size=(), avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None, truncate=False
    ):
        """Normal with mean ``avg`` and standard deviation ``std``."""
        if truncate:
            raise _at_user_line(NotImplementedError("normal: truncate=True is not implemented"))
        return super().normal(_size(size, ndim), avg, std, dtype=dtype)

    def binomial(self, size=(), n=1, p=0.5, ndim=None, dtype="int64", nstreams=None, prob=None):
        """Successes in ``n`` trials of probability ``p`` (``prob`` is Theano's old name)."""
        return super().binomial(_size(size, ndim), n, p if prob is None else prob, dtype=dtype)

    def random_integers(self, size=(), low=0, high=1, ndim=None, dtype="int64"):
        """Integers in [low, high], both ends included (Theano's rule)."""
        return super().integers(low, high + 1, size=_size(size, ndim), dtype=dtype)

    def multinomial(self, size=(), n=1, pvals=None, ndim=None, dtype="int64", nstreams=None):
        return super().multinomial(_size(size, ndim), n, pvals, dtype=dtype)

    def choice(self, size=(), a=2, replace=True, p=None, ndim=None, dtype="int64"):
        return super().choice(a, size=_size(size, ndim), replace=replace, p=p)

    def permutation(self, size=(), n=1, ndim=None, dtype="int64"):
        if size not in ((), None):
            raise _at_user_line(NotImplementedError("permutation: only size=() is implemented"))
        return super().permutation(n)


def _size(size, ndim):
    """Theano's ``size``: a tuple (ints or scalars), a shape vector, or None (a scalar);
    ``ndim``, when given, must agree with it."""
    if size is None:
        size = ()
    if ndim is not None:
        length = size.type.shape[0] if isinstance(size, Variable) else len(size)
        if isinstance(length, int) and length != ndim:
            raise _at_user_line(ValueError(f"random: size {size!r} does not have ndim={ndim}"))
    return size
