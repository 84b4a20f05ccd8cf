"""``theano.tensor.shared_randomstreams.RandomStreams``: symnb's random streams under
Theano's method signatures (``ndim``, ``nstreams``, ``prob`` accepted).

The draws depend only on the seed and the order of the draws, as in Theano, but the numbers
are symnb's (Philox), not those of NumPy's or MRG31k3p's generators (docs/theano.md). A
draw's ``rng`` and the stream's ``state_updates`` give its state, a Philox key and counter
with the ``RandomState`` methods Theano's tutorial uses (``seed``, ``get_state``...).
"""

from __future__ import annotations

import functools

import numpy as np

from symnb.compat.theano.upcasting import number_dtype, upcast
from symnb.config import config
from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.core.types import as_dtype
from symnb.core.variable import Constant, Variable, as_variable, describe_value
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops.checks import has_shape
from symnb.ops.elemwise import cast
from symnb.ops.join import concatenate, stack
from symnb.ops.philox import seed_key
from symnb.ops.random import RandomStream, check_holds, checked_seed
from symnb.ops.sort import argsort
from symnb.ops.take import take_along_axis


class PhiloxState:
    """The value of a draw's ``rng``: its Philox key and counter (a snapshot, not NumPy's
    ``RandomState``), with the ``RandomState`` methods Theano's tutorial calls on it."""

    kind = "Philox4x32-10"

    def __init__(self, key, counter, index: int):
        self.key, self.counter, self.index = np.uint64(key), np.uint64(counter), index

    def seed(self, seed: int) -> None:
        """Start again from ``seed``: the key ``RandomStreams(seed)`` gives this draw."""
        self.key = np.uint64(seed_key(checked_seed(seed), self.index))
        self.counter = np.uint64(0)

    def get_state(self) -> tuple:
        return (self.kind, int(self.key), int(self.counter))

    def set_state(self, state) -> None:
        kind, key, counter = state
        if kind != self.kind:
            raise ValueError(f"set_state: a {self.kind} state, not {kind!r}")
        self.key, self.counter = np.uint64(key), np.uint64(counter)

    def __repr__(self):
        return f"PhiloxState(key={int(self.key):#x}, counter={int(self.counter)})"


class StreamState:
    """Theano's ``rv.rng`` (the shared variable holding a draw's generator): ``get_value``
    gives a :class:`PhiloxState`, ``set_value`` of one puts the draw's key and counter back,
    so the next call repeats what followed it."""

    def __init__(self, key, counter, index: int):
        self.key, self.counter, self.index = key, counter, index
        self.name = f"rng{index}"

    @property
    def default_update(self):
        """The counter's next value: what every function using the draw writes."""
        return self.counter.tag["default_update"]

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> PhiloxState:
        """A copy of the state (also with ``borrow=True``: change it, then ``set_value``);
        ``return_internal_type`` changes nothing (the state is its own type)."""
        key, counter = self.key.get_value(), self.counter.get_value()
        return PhiloxState(key, counter, self.index)

    def set_value(self, value, borrow: bool = False) -> None:
        if not isinstance(value, PhiloxState):
            raise TypeError(
                f"{self.name}.set_value: a draw's state is symnb's Philox key and counter, "
                f"not {type(value).__name__}; pass the value get_value() gave (after its "
                ".seed(n) or .set_state(...)), or reseed every draw with srng.seed(n)"
            )
        self.key.set_value(np.uint64(value.key))
        self.counter.set_value(np.uint64(value.counter))

    def __repr__(self):
        return f"<StreamState {self.name}>"


def _with_rng(method):
    """The draw gets ``rng`` (Theano's ``rv.rng``): the state of the draw just made. A draw
    refused while it is built (its dtype, size or parameters, checked after the state of a
    draw inside it was made) leaves the streams as they were: no state, so every later draw
    gets the numbers it would have had without the refused line (as ``RandomStream``)."""

    @functools.wraps(method)
    def draw(self, *args, **kwargs):
        before = len(self.states)
        try:
            sample = method(self, *args, **kwargs)
        except BaseException:
            self._forget(before)
            raise
        sample.rng = self._rng(len(self.states) - 1)
        return sample

    return draw


class RandomStreams(RandomStream):
    """``RandomStreams(seed)``: ``uniform``, ``normal``, ``binomial``, ``random_integers``,
    ``permutation``, ``choice``, ``multinomial``, ``poisson``; every function using a draw
    advances it. Each draw's ``rng`` and ``state_updates`` give its state (docs/theano.md)."""

    default_seed = 0

    def __init__(self, seed=None):
        #: the constructor's seed, which ``seed()`` goes back to (Theano's name)
        self.default_instance_seed = self.default_seed if seed is None else seed
        super().__init__(self._as_seed(self.default_instance_seed))
        self._rngs: dict = {}

    def seed(self, seed=None) -> None:
        """Theano's ``seed(seed=None)``: every draw starts again from ``seed``, or from the
        seed the streams were made with (``default_instance_seed``) when none is given."""
        super().seed(self._as_seed(self.default_instance_seed if seed is None else seed))

    def _as_seed(self, seed):
        """The seed ``RandomStream`` takes for Theano's ``seed`` (an int: itself)."""
        return seed

    def _forget(self, count: int) -> None:
        """Drop the states of the draws after the first ``count`` (a refused draw's)."""
        del self.states[count:]
        for index in [i for i in self._rngs if i >= count]:
            del self._rngs[index]

    def _rng(self, index: int) -> StreamState:
        if index not in self._rngs:
            self._rngs[index] = StreamState(*self.states[index], index)
        return self._rngs[index]

    @property
    def state_updates(self) -> list:
        """``(state, next counter)`` per draw, in order: the states have ``get_value`` and
        ``set_value``, so copying them copies the streams (Theano's tutorial)."""
        return [(self._rng(i), c.tag["default_update"]) for i, (_, c) in enumerate(self.states)]

    @_with_rng
    def uniform(self, size=None, low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None):
        """Uniform on [low, high); of ``dtype``, by default floatX upcast with the bounds'
        dtypes (Theano's ``upcast(floatX, low.dtype, high.dtype)``)."""
        dtype = _float_draw_dtype(dtype, low, high)
        return super().uniform(_size(size, ndim), low, high, dtype=dtype)

    @_with_rng
    def normal(
        self, size=None, avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None, truncate=False
    ):
        """Normal with mean ``avg`` and standard deviation ``std``; of ``dtype``, by default
        floatX upcast with theirs (Theano's ``upcast(floatX, avg.dtype, std.dtype)``).
        ``truncate=True`` (MRG's): truncated to ``avg +- 2 std``, by the inverse CDF."""
        dtype = _float_draw_dtype(dtype, avg, std)
        if truncate:
            return self._truncated_normal(_size(size, ndim), avg, std, dtype)
        return super().normal(_size(size, ndim), avg, std, dtype=dtype)

    @_with_rng
    def shuffle_row_elements(self, input):  # noqa: A002 - Theano's name
        """Theano's: ``input`` with each row (its last axis) permuted on its own, by a
        ``permutation`` of ``input.shape[:-1] + (n,)`` (the result's ``permutation``)."""
        x = as_variable(input)
        if x.type.ndim == 0:
            raise _at_user_line(
                ShapeError(
                    "shuffle_row_elements: input is a tensor of at least one dimension (its "
                    f"rows, the last axis, are shuffled), not {x.describe()}"
                )
            )
        perm = self.permutation(size=x.shape[:-1], n=x.shape[-1], ndim=x.type.ndim - 1)
        shuffled = take_along_axis(x, perm, axis=-1)
        shuffled.permutation = perm
        return shuffled

    @_with_rng
    def binomial(self, size=None, n=1, p=0.5, ndim=None, dtype="int64", nstreams=None, prob=None):
        """Successes in ``n`` trials of probability ``p`` (``prob`` is Theano's old name)."""
        return super().binomial(_size(size, ndim), n, p if prob is None else prob, dtype=dtype)

    @_with_rng
    def random_integers(self, size=None, low=0, high=1, ndim=None, dtype="int64"):
        """Integers in [low, high], both ends included (Theano's rule): ``integers`` with
        ``endpoint=True``, so ``high`` is never made ``high + 1`` (which wrapped in an int8
        ``high`` of 127, and failed for a list)."""
        return super().integers(low, high, size=_size(size, ndim), dtype=dtype, endpoint=True)

    @_with_rng
    def multinomial(self, size=(), n=1, pvals=(0.5, 0.5), ndim=None, dtype="int64", nstreams=None):
        """Counts of ``n`` draws over the categories of ``pvals`` (two even ones by default,
        as in Theano)."""
        pvals = list(pvals) if isinstance(pvals, tuple) else pvals
        return super().multinomial(_size(size, ndim), n, pvals, dtype=dtype)

    @_with_rng
    def poisson(self, size=None, lam=1.0, ndim=None, dtype="int64"):
        """Counts of mean ``lam`` (``RandomStream.poisson``; Theano's signature)."""
        return super().poisson(_size(size, ndim), lam, dtype=dtype)

    @_with_rng
    def choice(self, size=(), a=2, replace=True, p=None, ndim=None, dtype=None):
        """Elements of ``a`` (``range(a)`` for an int) as ``dtype``: int64 by default (as in
        Theano), or a float ``a``'s dtype (Theano truncated the floats to int64)."""
        draw = super().choice(a, size=_size(size, ndim), replace=replace, p=p)
        if dtype is None:
            dtype = draw.type.dtype if draw.type.dtype.kind in "fc" else "int64"
        least, most = _bounds(a)
        return _drawn_as(draw, dtype, "choice", least, most)

    @_with_rng
    def permutation(self, size=(), n=1, ndim=None, dtype="int64"):
        """``range(n)`` shuffled, as ``dtype``; with a ``size``, one permutation of its own
        per element of it, of shape ``size + (n,)`` (Theano's): the order that sorts ``n``
        uniform draws along the last axis (a float64 draw, so ties have no weight)."""
        size = _size(size, ndim)
        least, most = _bounds(n)
        if not isinstance(size, Variable) and size in ((), None, []):
            return _drawn_as(super().permutation(n), dtype, "permutation", least, most)
        _check_count(n)
        if isinstance(size, Variable):  # a shape vector: n appended
            shape = concatenate([cast(size, "int64"), stack([cast(n, "int64")])])
        else:
            shape = (*(size if isinstance(size, (tuple, list)) else (size,)), n)
        keys = super().uniform(shape, dtype="float64")
        return _drawn_as(argsort(keys, axis=-1), dtype, "permutation", least, most)


def _check_count(n) -> None:
    """``permutation``'s ``n``: a non-negative int or an integer scalar of the graph."""
    if isinstance(n, Variable):
        if n.type.ndim == 0 and n.type.dtype.kind in "iu":
            return
    elif is_int(n) and n >= 0:
        return
    raise _at_user_line(
        ArgumentError(
            "permutation: n (permutations of range(n)) is a non-negative int or an integer "
            f"scalar, not {n.describe() if isinstance(n, Variable) else describe_value(n)}"
        )
    )


def _float_draw_dtype(dtype, *params):
    """A float draw's dtype as Theano chose it: ``dtype`` when given, else floatX upcast with
    the parameters' dtypes (``upcast(floatX, low.dtype, high.dtype)`` in Theano's
    ``uniform``, ``avg``/``std`` in ``normal``), so a float64 mean gives a float64 draw under
    floatX float32. A Python float counts as floatX, as in the layer's expressions. None
    (RandomStream's default, floatX) where a parameter is not numeric: its error says so."""
    if dtype is not None:
        return dtype
    dtypes = []
    for param in params:
        if isinstance(param, Variable):
            dtypes.append(param.type.dtype.name)
            continue
        try:
            found = number_dtype(param)
        except (TypeError, ValueError):
            return None
        if np.dtype(found).kind not in "biuf":
            return None
        dtypes.append(found)
    return upcast(config.floatX, *dtypes)


def _bounds(a) -> tuple:
    """The least and greatest value a draw from ``a`` can give (``range(a)`` for an int, the
    elements of a constant array), each None where the graph does not know it."""
    if isinstance(a, Variable):
        if not isinstance(a, Constant):
            return None, None
        a = a.value
    values = np.asarray(a)
    if values.dtype.kind not in "iub" or values.size == 0:
        return None, None
    if values.ndim == 0:
        return 0, max(int(values) - 1, 0)
    return int(values.min()), int(values.max())


def _drawn_as(draw: Variable, dtype, what: str, least, most) -> Variable:
    """``draw`` cast to Theano's ``dtype`` (the type of its output). A dtype that cannot hold
    every value drawn is refused: the values would wrap around or lose their fraction."""
    dtype, drawn = as_dtype(dtype), draw.type.dtype
    if dtype == drawn:
        return draw
    # integers of known bounds: checked against them (a float dtype holds them all)
    fits = drawn.kind in "iub" and (least is not None or dtype.kind in "fc")
    try:
        if fits:
            check_holds(dtype, least, most, f"{what}: a value drawn")
        elif not np.can_cast(drawn, dtype, "safe"):
            raise DTypeError(
                f"{what}: dtype={dtype.name} cannot hold every value drawn "
                f"({drawn.name}{'' if most is None else f', up to {most}'}); pass a wider dtype"
            )
    except DTypeError as exc:
        raise _at_user_line(exc) from None
    return cast(draw, dtype)


def _size(size, ndim):
    """Theano's ``size``: a tuple (ints or scalars), a shape vector, or None (the shape of
    the parameters, broadcast). ``ndim``, when given, must agree with a size, and gives a
    shape vector of unknown length its length (``uniform(size=T.lvector(), ndim=2)``; a
    vector of another length is a ShapeError naming both when the function runs)."""
    if size is None or ndim is None:
        return size
    if isinstance(size, Variable):
        length = size.type.shape[0] if size.type.ndim else 1
    else:
        length = len(size) if isinstance(size, (tuple, list)) else 1
    if isinstance(length, int):
        if length != ndim:
            raise _at_user_line(ShapeError(f"random: size {size!r} does not have ndim={ndim}"))
        return size
    size_vector = size.describe_as("the size vector", "the unnamed size vector")
    what = f"random: {size_vector} must have ndim={int(ndim)} entries"
    return has_shape(size, (int(ndim),), [], what)
