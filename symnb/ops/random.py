"""Random streams: ``rng = sn.RandomStream(seed)``; ``rng.normal(size=(n, 3))`` and friends.

Each draw is a node reading its own stream state (a shared ``[key, counter]`` of uint64) and
giving the next state with the sample; the state's ``default_update`` makes every compiled
function that uses the draw advance it, so each call gives new numbers and the update shows
in ``f.updates``-like form (``rng.updates()``). The numbers come from Philox4x32-10
(symnb/ops/philox.py): element i of a draw uses block ``counter + i``, so every backend that
runs the same reference gives the same numbers for the same seed. Random ops are impure
(``pure = False``): never merged with a twin nor constant-folded. See docs/random.md.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from symnb.config import config
from symnb.core.constructors import shared
from symnb.core.dims import is_int
from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType, as_dtype, dtype_arg
from symnb.core.variable import Constant, Variable, as_variable, describe_value
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops.broadcast import broadcast_like
from symnb.ops.checks import InDomain, in_domain
from symnb.ops.creation import shape_operand
from symnb.ops.draw_shape import LEAVE_OUT, broadcasts_to, draw_positions
from symnb.ops.draw_shape import checked_shape as _checked_shape
from symnb.ops.elemwise import Elemwise, add, cast, mul, sub
from symnb.ops.philox import (
    Blocks,
    bits64,
    kernel_uniform53,
    kernel_unit_uniform,
    kernel_words,
    seed_key,
    split_key,
    uniform53,
    unit_uniform,
    words_at,
)
from symnb.ops.reduce import prod
from symnb.ops.reduce import sum as reduce_sum

COUNTER = TensorType("uint64", ())


class _Philox(Elemwise):
    """An elementwise draw: inputs ``(positions, key, counter)``; element i is made from
    Philox block ``counter + positions[i]``, in NumPy (``perform``) and in kernels
    (``scalar``) alike, so backends "py" and "c" give the same numbers."""

    pure = False
    differentiable = False
    family = "random"
    __props__ = ("dtype",)
    nin = 3

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)

    def out_dtype(self, inputs):
        return self.dtype

    def grad_elem(self, inputs, output, gz):
        return [None] * self.nin

    def perform(self, positions, key, counter):
        words = words_at(positions, split_key(key), counter)
        return np.asarray(self.element(words)).astype(self.dtype)

    def scalar(self, k, positions, key, counter):
        return self.kernel_element(k, kernel_words(k, positions, key, counter))


class PhiloxUniform(_Philox):
    """The standard uniform on [0, 1) of a draw of ``dtype``: as many random bits as the
    dtype holds (53 for float64, 24 for float32, 11 for float16), so it is exact in it and
    never rounds to 1 (docs/random.md). ``uniform(low, high)`` is ``low + (high - low) * u``
    of it, so its gradient reuses the forward's u."""

    functions = ("RandomStream.uniform",)
    dtype_rule = "``dtype`` (config.floatX by default)"

    def element(self, words):
        return unit_uniform(words, self.dtype)

    def kernel_element(self, k, words):
        return kernel_unit_uniform(k, words, self.dtype)


class PhiloxNormal(_Philox):
    """The standard normal, by Box-Muller on two 53-bit uniforms per element, in float64
    (whatever the draw's dtype): ``normal(avg, std)`` is ``avg + std * z`` of it, computed
    in float64, so its gradient reuses the forward's z."""

    functions = ("RandomStream.normal",)
    dtype_rule = "float64"
    __props__ = ()
    dtype = np.dtype("float64")

    def __init__(self):
        pass

    def element(self, words):
        radius = np.sqrt(-2.0 * np.log1p(-uniform53(words[0], words[1])))
        return radius * np.cos(2.0 * np.pi * uniform53(words[2], words[3]))

    def kernel_element(self, k, words):
        f64 = functools.partial(k.literal, dtype="float64")
        u1, u2 = kernel_uniform53(k, words[0], words[1]), kernel_uniform53(k, words[2], words[3])
        radius = k.sqrt(k.mul(f64(-2.0), k.log1p(k.neg(u1))))
        return k.mul(radius, k.cos(k.mul(f64(2.0 * np.pi), u2)))


def scaled(loc, scale, standard, dtype) -> Variable:
    """``loc + scale * standard`` in float64, rounded to ``dtype``: a draw of a standard
    one, as ordinary elementwise ops (they fuse with it), so the gradients d/dloc = 1 and
    d/dscale = standard read the forward's own draw, exactly and with no second draw."""
    as64 = functools.partial(cast, dtype="float64")
    return cast(add(as64(loc), mul(as64(scale), as64(standard))), dtype)


def _check_span(low, high) -> None:
    """``high - low`` must be a finite float64 (else every number drawn is inf or nan: NumPy
    raises OverflowError) and not negative (NumPy raises ValueError)."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.asarray(high, np.float64) - np.asarray(low, np.float64)
    if not np.all(np.isfinite(span)):
        raise ArgumentError(
            f"uniform: high - low must be a finite float64, but low={np.asarray(low).tolist()} "
            f"and high={np.asarray(high).tolist()} give inf or nan (so would every number "
            "drawn); NumPy refuses them too"
        )
    if np.any(span < 0):
        raise ArgumentError(
            f"uniform: high must be >= low, as NumPy's Generator requires (high - low < 0), "
            f"but low={np.asarray(low).tolist()} and high={np.asarray(high).tolist()}"
        )


class PhiloxBernoulli(_Philox):
    """1 with probability ``p`` (known when the graph is built), else 0."""

    functions = ("RandomStream.bernoulli",)
    dtype_rule = "``dtype`` (int8 by default)"
    __props__ = ("dtype", "p")

    def __init__(self, dtype, p: float):
        super().__init__(dtype)
        self.p = float(p)

    def element(self, words):
        return uniform53(words[0], words[1]) < self.p

    def kernel_element(self, k, words):
        return k.lt(kernel_uniform53(k, words[0], words[1]), k.literal(self.p, "float64"))


class PhiloxBernoulliPerElement(_Philox):
    """1 where a 53-bit uniform falls below the ``p`` of the element (an input: an RBM's
    units), else 0. One op, not ``less(u, p)``: a comparison's gradient is zero, but no
    gradient flows through p (sn.NotDifferentiableError, as for a scalar p)."""

    functions = ("RandomStream.binomial", "RandomStream.bernoulli")
    dtype_rule = "``dtype`` (int8 for bernoulli, int64 for binomial)"
    nin = 4

    def grad_elem(self, inputs, output, gz):  # differentiable = False: never asked
        return [None] * self.nin

    def perform(self, positions, key, counter, p):
        words = words_at(positions, split_key(key), counter)
        u = uniform53(words[0], words[1])  # 53 bits: P(u < p) is p, also for a small float16 p
        return np.asarray(u < np.asarray(p, np.float64)).astype(self.dtype)

    def scalar(self, k, positions, key, counter, p):
        words = kernel_words(k, positions, key, counter)
        return k.lt(kernel_uniform53(k, words[0], words[1]), k.convert(p, "float64"))


class _Random(Op):
    """A draw run by its NumPy reference: inputs ``(key, counter, shape, *params)``; a
    subclass says how Philox blocks become the sample (``sample``)."""

    pure = False
    differentiable = False
    family = "random"
    __props__ = ("dims", "dtype")

    def __init__(self, dims, dtype):
        self.dims, self.dtype = tuple(dims), as_dtype(dtype)

    def infer_types(self, key, counter, shape, *params):
        return [TensorType(self.dtype, self.dims)]

    #: the draw's name and its parameters taken element by element (NumPy's Generator
    #: broadcasts them to the size), for the run-time check of their shapes
    draw, per_element = "", ()

    def perform(self, key, counter, shape, *params):
        shape = _checked_shape(shape)
        for name, value in zip(self.per_element, params):
            if not broadcasts_to(np.shape(value), shape):  # (the types could not tell)
                raise ShapeError(
                    f"{self.draw}: {name} of shape {np.shape(value)} does not broadcast to "
                    f"the size {shape}{LEAVE_OUT}"
                )
        sample = self.sample(Blocks(key, counter), shape, *params)
        return np.asarray(sample).astype(self.dtype, copy=False)

    def sample(self, blocks: Blocks, shape: tuple, *params):
        raise NotImplementedError


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _in_unit_interval(p, what: str) -> np.ndarray:
    p = np.asarray(p, np.float64)
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"{what} must lie in [0, 1], got {p}")
    return p


class RandomBinomial(_Random):
    """Binomial(n, p): the sum of n Bernoulli trials, one block per trial. ``n`` and ``p``
    broadcast to the shape (NumPy's Generator rules); element i's trials are the blocks after
    those of the elements before it (``i * n`` on for a scalar n), sum(n) blocks in all."""

    functions = ("RandomStream.binomial", "RandomStream.bernoulli")
    dtype_rule = "``dtype`` (int64 for binomial, int8 for bernoulli)"

    draw, per_element = "binomial", ("n", "p")

    def sample(self, blocks, shape, n, p):
        n, p = np.asarray(n).astype(np.int64), _in_unit_interval(p, "binomial: p")
        if np.any(n < 0):
            raise ValueError(f"binomial: n must be >= 0, got {n.min()}")
        count = _size(shape)
        check_holds(self.dtype, 0, int(n.max()) if n.size else 0, "binomial: n", ValueError)
        if n.ndim == 0:
            w = blocks.take(count * int(n))
            p = np.broadcast_to(p, shape).reshape(count, 1)
            trials = uniform53(w[0], w[1]).reshape(count, int(n)) < p
            return trials.sum(axis=1).reshape(shape)
        n, p = (np.broadcast_to(v, shape).ravel() for v in (n, p))
        w = blocks.take(int(n.sum()))
        trials = uniform53(w[0], w[1]) < np.repeat(p, n)
        owner = np.repeat(np.arange(count), n)
        return np.bincount(owner, weights=trials, minlength=count).astype(np.int64).reshape(shape)


class RandomIntegers(_Random):
    """Integers in [low, high), or [low, high] with ``endpoint`` (NumPy's), unbiased
    (Lemire's multiply-shift with rejection, philox.below); ``low`` and ``high`` broadcast to
    the shape (NumPy's Generator rules)."""

    functions = ("RandomStream.integers",)
    dtype_rule = "``dtype`` (int64 by default)"
    __props__ = ("dims", "dtype", "endpoint")

    draw, per_element = "integers", ("low", "high")

    def __init__(self, dims, dtype, endpoint: bool = False):
        super().__init__(dims, dtype)
        self.endpoint = bool(endpoint)

    def sample(self, blocks, shape, low, high):
        # the greatest number drawn: high itself with endpoint, else high - 1
        top, top_name = (0, "integers: high") if self.endpoint else (1, "integers: high - 1")
        if np.ndim(low) == 0 and np.ndim(high) == 0:  # Python ints: uint64 bounds fit
            low, high = int(low), int(high)
            if high - top < low:
                raise ValueError(f"integers: high ({high}) must be {self._above} low ({low})")
            check_holds(self.dtype, low, None, "integers: low", ValueError)
            check_holds(self.dtype, None, high - top, top_name, ValueError)
            span = np.uint64((high - top - low + 1) % 2**64)  # 0: all 2**64 values
            offset = blocks.below(_size(shape), span)
            return self._shifted(np.uint64(low % 2**64), offset).reshape(shape)
        low, high = (np.broadcast_to(_integral(b), shape).ravel() for b in (low, high))
        empty = high < low if self.endpoint else high <= low  # exact for int64 beside uint64
        if np.any(empty):
            i = int(np.argmax(empty))
            raise ValueError(
                f"integers: high must be {self._above} low, but at element {i} of the draw "
                f"low is {low[i]} and high {high[i]}"
            )
        if low.size:
            check_holds(self.dtype, int(low.min()), None, "integers: low", ValueError)
            check_holds(self.dtype, None, int(high.max()) - top, top_name, ValueError)
        with np.errstate(over="ignore"):  # each bound held by the dtype: wrapping is exact
            low, high = (b.astype(np.int64).astype(np.uint64) for b in (low, high))
            offset = blocks.below(low.size, high - low + np.uint64(self.endpoint))
        return self._shifted(low, offset).reshape(shape)

    @property
    def _above(self) -> str:
        return "at least" if self.endpoint else "greater than"

    def _shifted(self, low, offset) -> np.ndarray:
        """``low + offset`` in uint64 arithmetic (two's complement: as int64 the same bits),
        so a uint64 draw's bounds beyond int64 and an int64 draw's alike come out exact."""
        with np.errstate(over="ignore"):
            total = np.asarray(low + offset, np.uint64)
        return total if self.dtype.kind == "u" else total.view(np.int64)


def _integral(bound) -> np.ndarray:
    """A bound as integers (a float one truncated, as NumPy takes 2.5), uint64 kept."""
    bound = np.asarray(bound)
    return bound if bound.dtype.kind in "iu" else bound.astype(np.int64)


#: the largest ``lam`` NumPy's Generator takes (``POISSON_LAM_MAX``: int64's range, less 10
#: of its standard deviations)
POISSON_LAM_MAX = float(np.iinfo(np.int64).max - np.sqrt(np.iinfo(np.int64).max) * 10)


def _lam_too_large(lam) -> str | None:
    """Why ``lam`` (a number or an array) is refused where it passes NumPy's bound, else None."""
    if not np.size(lam) or np.max(lam) <= POISSON_LAM_MAX:
        return None
    return (
        f"poisson: lam must be at most {POISSON_LAM_MAX:g} (NumPy's bound: larger counts "
        f"overflow int64), got {np.max(lam):g}"
    )


class RandomPoisson(_Random):
    """Poisson(lam): the inverse of its CDF at one 53-bit uniform an element (words 0-1 of
    the element's block), so a draw uses one block an element whatever lam is; ``lam``
    broadcasts to the shape (NumPy's Generator rules). No gradient: the counts are
    integers."""

    functions = ("RandomStream.poisson",)
    dtype_rule = "``dtype`` (int64 by default)"

    draw, per_element = "poisson", ("lam",)

    def sample(self, blocks, shape, lam):
        lam = np.asarray(lam, np.float64)
        bad = ~(np.isfinite(lam) & (lam >= 0))
        if bad.any():
            raise ValueError(f"poisson: lam must be finite and >= 0, got {lam[bad].flat[0]}")
        if (too_large := _lam_too_large(lam)) is not None:
            raise ValueError(too_large)
        words = blocks.take(_size(shape))
        u = uniform53(words[0], words[1]).reshape(shape)
        counts = poisson_quantile(u, np.broadcast_to(lam, shape))
        if counts.size:
            check_holds(self.dtype, 0, int(counts.max()), "poisson: a count drawn", ValueError)
        return counts


#: from this lam on a Poisson count is not stepped by one (float64 spacing nears 1)
_EXACT_STEPS = 2.0**52
#: steps from the guess at most: the guess is within a few of the quantile, but where the CDF
#: rounds to 0 or 1 (u within 1e-15 of them, lam huge) no step would end
_MOST_STEPS = 100


def poisson_quantile(u, lam) -> np.ndarray:
    """The least k with ``P(X <= k) > u`` for X ~ Poisson(lam), elementwise (int64): a guess
    from the normal quantile z with its Cornish-Fisher term, ``lam + sqrt(lam) z +
    (z**2 - 1) / 6`` (off by a few at most), then steps of one, each checked against the
    CDF, SciPy's ``pdtr``, until exact. (``pdtrik``, the CDF inverted, is 10 to 1000 times
    slower than the few ``pdtr`` it saves.)"""
    special = _scipy_special()
    u, lam = np.broadcast_arrays(np.asarray(u, np.float64), np.asarray(lam, np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = special.ndtri(u)
        guess = np.floor(lam + np.sqrt(lam) * z + (z * z - 1) / 6)
    k = np.where(np.isfinite(guess) & (lam > 0), np.maximum(guess, 0), 0.0)
    # u = 0: k = 0 (P(X <= 0) > 0, though it underflows for a large lam). From lam = 2**52 on
    # float64 cannot step by one: the guess stands (off by O(1 / sqrt(lam)) standard deviations)
    stepped = (lam > 0) & (lam < _EXACT_STEPS)
    up = stepped & (u > 0) & (special.pdtr(k, lam) <= u)
    for _ in range(_MOST_STEPS):  # below u: the quantile is further up
        if not up.any():
            break
        k[up] += 1
        up[up] = special.pdtr(k[up], lam[up]) <= u[up]
    down = stepped & (k > 0) & (special.pdtr(k - 1, lam) > u)
    for _ in range(_MOST_STEPS):  # k - 1 is already above u
        if not down.any():
            break
        k[down] -= 1
        down[down] = (k[down] > 0) & (special.pdtr(k[down] - 1, lam[down]) > u[down])
    return k.astype(np.int64)


@functools.cache
def _scipy_special():
    """``scipy.special``, imported on first use (it takes about 100 ms)."""
    import scipy.special

    return scipy.special


class RandomChoice(_Random):
    """Elements of a 1-d ``a``, or of ``range(a)`` for an integer scalar ``a`` (``of_range``):
    with replacement (uniform, or by probabilities ``p`` through the inverse CDF), or without
    (the first of a Philox-keyed permutation)."""

    functions = ("RandomStream.choice",)
    dtype_rule = "a's dtype (int64 for an int)"
    __props__ = ("dims", "dtype", "replace", "weighted", "of_range")

    def __init__(self, dims, dtype, replace: bool, weighted: bool, of_range: bool = False):
        super().__init__(dims, dtype)
        self.replace, self.weighted = bool(replace), bool(weighted)
        self.of_range = bool(of_range)

    def infer_types(self, key, counter, shape, a, *p):
        if self.of_range:
            if a.type.ndim != 0 or a.type.dtype.kind not in "iu":
                raise DTypeError(
                    f"choice: a is a 1-d array or an int n (for range(n)), not {a.describe()}"
                )
        elif a.type.ndim != 1:
            raise ShapeError(f"choice: a must be 1-d, not {a.describe()}")
        if p and p[0].type.ndim != 1:
            raise ShapeError(f"choice: p must be 1-d, not {p[0].describe()}")
        return [TensorType("int64" if self.of_range else a.type.dtype, self.dims)]

    def sample(self, blocks, shape, a, *p):
        k, count = self._population(a, shape), _size(shape)
        if not self.replace:
            if count > k:
                raise ValueError(f"choice without replacement: {count} draws from {k} elements")
            index = _permutation(blocks, k)[:count]
        elif k == 0 and count:
            raise ValueError("choice: a is empty" + " (range(0))" * self.of_range)
        elif not self.weighted:
            index = blocks.below(count, max(k, 1)).astype(np.int64)
        else:
            w = blocks.take(count)
            cdf = _cdf(p[0], k, "choice")
            index = np.minimum(np.searchsorted(cdf, uniform53(w[0], w[1]), side="right"), k - 1)
        index = index.reshape(shape)
        return index if self.of_range else a[index]

    def _population(self, a, shape) -> int:
        """How many elements ``a`` has: ``a`` itself for ``range(a)``, checked >= 0."""
        if not self.of_range:
            return len(a)
        if int(a) < 0:
            raise ValueError(f"choice: a (for range(a)) must be >= 0, got {int(a)}")
        return int(a)


def _cdf(p, k: int, what: str) -> np.ndarray:
    tolerance = _sum_tolerance(np.asarray(p).dtype)
    p = np.asarray(p, np.float64)
    if len(p) != k:
        raise ValueError(f"{what}: p has {len(p)} entries for {k} elements")
    if np.any(p < 0) or not abs(p.sum() - 1.0) <= tolerance:
        raise ValueError(
            f"{what}: p must be non-negative and sum to 1 (within {tolerance:g}), got {p} "
            f"summing to {p.sum():.17g}"
        )
    return np.cumsum(p) / p.sum()


def _permutation(blocks: Blocks, n: int) -> np.ndarray:
    """A uniform permutation of range(n): indices sorted by 64 random bits each."""
    w = blocks.take(n)
    return np.argsort(bits64(w[0], w[1]), kind="stable")


class RandomPermutation(_Random):
    """A permutation of ``x`` along its first axis (of ``range(x)`` for an int ``x``)."""

    functions = ("RandomStream.permutation",)
    dtype_rule = "x's dtype (int64 for an int)"
    __props__ = ("dtype", "of_range")

    def __init__(self, dtype, of_range: bool):
        super().__init__((), dtype)
        self.of_range = bool(of_range)

    def infer_types(self, key, counter, shape, x):
        shown = x.describe()
        if isinstance(x, Constant) and x.type.ndim == 0:
            shown = f"x = {np.asarray(x.value).tolist()!r} ({x.type.dtype.name}, 0-d)"
        if self.of_range:
            if x.type.ndim != 0 or x.type.dtype.kind not in "iu":
                raise DTypeError(
                    f"permutation: x is an int n (for range(n)) or a tensor, not {shown}"
                )
            return [TensorType("int64", (None,))]
        if x.type.ndim == 0:
            raise ShapeError(
                f"permutation: {shown} has no axis to permute; pass an int n (or an integer "
                "scalar variable) for a permutation of range(n), as NumPy does"
            )
        return [x.type]

    def sample(self, blocks, shape, x):
        if self.of_range:
            if int(x) < 0:
                raise ValueError(f"permutation: n must be >= 0, got {int(x)}")
            return _permutation(blocks, int(x))
        return x[_permutation(blocks, len(x))]


class RandomMultinomial(_Random):
    """Counts of n draws over the categories of ``pvals``, per element of the size."""

    functions = ("RandomStream.multinomial",)
    dtype_rule = "``dtype`` (int64 by default)"

    def infer_types(self, key, counter, shape, n, pvals):
        if n.type.ndim != 0:
            raise ShapeError(
                "multinomial: n is one count for every distribution drawn, an integer scalar, "
                f"not {n.describe()} (draws with different counts are separate draws)"
            )
        if n.type.dtype.kind not in "iu":
            raise DTypeError(f"multinomial: n must be an integer scalar, not {n.describe()}")
        if pvals.type.ndim == 2 and not self.dims:
            return [TensorType(self.dtype, pvals.type.shape)]
        if pvals.type.ndim != 1:
            raise ShapeError(
                "multinomial: pvals must be 1-d (one distribution), or 2-d (one per row) with "
                f"size=(), not {pvals.describe()} with size {self.dims}"
            )
        return [TensorType(self.dtype, (*self.dims, pvals.type.shape[0]))]

    def sample(self, blocks, shape, n, pvals):
        n, k, count = int(n), len(pvals), _size(shape)
        if n < 0:
            raise ValueError(f"multinomial: n must be >= 0, got {n}")
        check_holds(self.dtype, 0, n, "multinomial: n", ValueError)
        if np.ndim(pvals) == 2:
            return _multinomial_rows(blocks, n, np.asarray(pvals))
        cdf = _cdf(pvals, k, "multinomial")
        w = blocks.take(count * n)
        draws = np.minimum(np.searchsorted(cdf, uniform53(w[0], w[1]), side="right"), k - 1)
        rows = np.repeat(np.arange(count), n)
        counts = np.zeros((count, k), np.int64)
        np.add.at(counts, (rows, draws), 1)
        return counts.reshape((*shape, k))


def _multinomial_rows(blocks: Blocks, n: int, pvals: np.ndarray) -> np.ndarray:
    """Counts of n draws per row of pvals, each row its own distribution (Theano's MRG
    ``multinomial(pvals=probs)``); row r uses blocks ``r * n .. r * n + n - 1``."""
    rows, k = pvals.shape
    p = pvals.astype(np.float64)
    totals = p.sum(axis=1)
    if np.any(p < 0) or not np.all(np.abs(totals - 1.0) <= _sum_tolerance(pvals.dtype)):
        bad = int(np.argmax(np.abs(totals - 1.0)))
        raise ValueError(
            f"multinomial: each row of pvals must be non-negative and sum to 1; row {bad} sums "
            f"to {totals[bad]:.6g}"
        )
    cdf = np.cumsum(p, axis=1) / totals[:, None]
    w = blocks.take(rows * n)
    u = uniform53(w[0], w[1]).reshape(rows, n)
    draws = np.minimum((cdf[:, None, :] <= u[:, :, None]).sum(axis=2), k - 1)
    counts = np.zeros((rows, k), np.int64)
    np.add.at(counts, (np.repeat(np.arange(rows), n), draws.ravel()), 1)
    return counts


def _sum_tolerance(dtype) -> float:
    """How far from 1 probabilities of ``dtype`` may sum (docs/random.md): a float32 softmax
    is off by ~1e-7 a class, a float16 one by ~5e-4 a class."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize >= 8:
        return 1e-6
    return 1e-4 if dtype.itemsize == 4 else 1e-3


class RandomStream:
    """Theano's ``RandomStreams``: draws whose numbers depend only on the seed and on the
    order of the draws. Each draw has its own key and counter (shared uint64 scalars);
    ``updates()`` lists the counters' next values, which any ``sn.function`` using a draw
    writes on every call (their ``default_update``)."""

    def __init__(self, seed: int = 0):
        self.seed_value = checked_seed(seed)
        self.states: list = []  # (key, counter) per draw

    def __repr__(self):
        draws = len(self.states)
        return f"<{type(self).__name__} seed={self.seed_value}: {draws} draw{'s' * (draws != 1)}>"

    def seed(self, seed: int) -> None:
        """Start every draw of the stream again from ``seed``."""
        self.seed_value = checked_seed(seed)
        for index, (key, counter) in enumerate(self.states):
            key.set_value(np.uint64(seed_key(self.seed_value, index)))
            counter.set_value(np.uint64(0))

    def updates(self) -> list:
        """``(counter, next counter)`` for each draw: what every function using it writes."""
        return [(c, c.tag["default_update"]) for _, c in self.states]

    def _state(self):
        index = len(self.states)
        key = shared(np.uint64(seed_key(self.seed_value, index)), name=f"rng_key{index}")
        counter = shared(np.uint64(0), name=f"rng_counter{index}")
        self.states.append((key, counter))
        return key, counter

    def _draw(self, build, blocks):
        """``build(key, counter)`` is the sample; ``blocks()`` how many Philox blocks it
        uses (an int64 scalar), which the counter advances by."""
        key, counter = self._state()
        try:
            sample = build(key, counter)
            used = cast(blocks(), "uint64")
        except (ShapeError, DTypeError, ArgumentError) as exc:
            self.states.pop()
            raise _at_user_line(exc) from None
        counter.tag["default_update"] = counter + used
        return sample

    def _elementwise(self, op, size, draw: str, params: dict, then=None, extra=()):
        """A draw of ``op`` in the shape NumPy's Generator gives (docs/random.md): ``size``,
        or the broadcast shape of ``params`` (name -> variable) when size is None; ``then``
        makes the sample of the standard draw (``scaled``); ``extra`` are inputs of ``op`` after
        the counter (a per-element p)."""
        try:
            positions, count = draw_positions(draw, size, params)
        except (ShapeError, DTypeError) as exc:
            raise _at_user_line(exc) from None

        def build(key, counter):
            standard = op(positions, key, counter, *extra)
            return standard if then is None else then(standard)

        return self._draw(build, lambda: count)

    def _by_reference(self, op, shape, *params, blocks=None):
        blocks = blocks or (lambda: _count(shape))
        return self._draw(lambda key, ctr: op(key, ctr, shape, *params), blocks)

    def uniform(self, size=None, low=0.0, high=1.0, dtype=None):
        """Uniform on [low, high); of the parameters' broadcast shape when size is None."""
        low, high = _floats("uniform", low=low, high=high)
        dtype = _float_dtype("uniform", dtype)

        def scale(u):  # once the shapes are checked
            span = sub(cast(high, "float64"), cast(low, "float64"))
            if isinstance(low, Constant) and isinstance(high, Constant):
                _check_span(low.data, high.data)
            elif span.type.ndim == 0:
                span = in_domain(span, "uniform: high - low", "finite non-negative")
            return scaled(low, span, u, dtype)

        params = {"low": low, "high": high}
        return self._elementwise(PhiloxUniform(dtype), size, "uniform", params, scale)

    def normal(self, size=None, avg=0.0, std=1.0, dtype=None):
        """Normal with mean ``avg`` and standard deviation ``std`` (Box-Muller); of the
        parameters' broadcast shape when size is None."""
        avg, std = _floats("normal", avg=avg, std=std)
        dtype = _float_dtype("normal", dtype)
        checked = _in_domain(std, "normal: std", "non-negative")
        return self._elementwise(
            PhiloxNormal(),
            size,
            "normal",
            {"avg": avg, "std": std},
            lambda z: scaled(avg, checked, z, dtype),
        )

    def binomial(self, size=None, n=1, p=0.5, dtype="int64"):
        """Successes in n trials of probability p (an elementwise kernel for n = 1 and a
        known p; else the NumPy reference, which checks p when the function runs)."""
        _check_probability(p, "binomial: p")
        _check_count(n, "binomial: n")
        if _known(n) is not None and np.size(_known(n)):
            _check_holds_now(dtype, 0, int(np.max(_known(n))), "binomial: n")
        (p_var,), n_var = _floats("binomial", p=p), _ints(n=n)["n"]
        one = n_var.type.ndim == 0 and _known(n) is not None and int(_known(n)) == 1
        if one and p_var.type.ndim > 0:
            return self._bernoulli_per_element(size, p_var, dtype)
        if one and _known(p) is not None:
            return self._elementwise(PhiloxBernoulli(dtype, float(_known(p))), size, "binomial", {})
        if n_var.type.ndim == 0 and p_var.type.ndim == 0:
            dims, shape = _size_operand(size)
            blocks = lambda: _count(shape) * n_var  # noqa: E731
        else:  # n or p per element: NumPy's broadcasting (draw_shape)
            positions = _broadcast_size("binomial", size, n=n_var, p=p_var)
            dims, shape = positions.type.shape, positions.shape
            blocks = lambda: reduce_sum(broadcast_like(n_var, positions))  # noqa: E731
        return self._by_reference(RandomBinomial(dims, dtype), shape, n_var, p_var, blocks=blocks)

    def _bernoulli_per_element(self, size, p, dtype):
        """Draws with a probability per element (an RBM's units, Theano's
        ``binomial(size=h.shape, n=1, p=h)``): 1 where a uniform draw falls below p."""
        op = PhiloxBernoulliPerElement(dtype)
        return self._elementwise(op, size, "binomial", {"p": p}, None, extra=(p,))

    def bernoulli(self, size=None, p=0.5, dtype="int8"):
        """1 with probability p, else 0 (dropout masks: pass ``dtype=x.dtype``)."""
        return self.binomial(size, 1, p, dtype)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False):
        """Integers in [low, high) (or [0, low) when only one bound is given), or in
        [low, high] with ``endpoint=True`` (NumPy's); ``dtype`` an integer (or bool) dtype that
        holds every such value, as NumPy requires (bounds known only when the function runs
        are checked then)."""
        if high is None:
            low, high = 0, low
        _check_integer_dtype(dtype)
        bounds = _ints(low=low, high=high)
        known = [_known(b) for b in (low, high)]
        if all(k is not None for k in known) and np.broadcast(*known).size:
            given_low, given_high = np.asarray(known[0]), np.asarray(known[1])
            try:
                empty = np.any(given_high < given_low if endpoint else given_high <= given_low)
            except ValueError:  # shapes that do not broadcast: draw_shape says so
                empty = False
            if empty:
                rule = "be at least" if endpoint else "exceed"
                raise _at_user_line(
                    ArgumentError(f"integers: high ({high}) must {rule} low ({low})")
                )
        if known[0] is not None and np.size(known[0]):
            _check_holds_now(dtype, np.min(known[0]), None, "integers: low")
        if known[1] is not None and np.size(known[1]):
            top, what = (0, "integers: high") if endpoint else (1, "integers: high - 1")
            _check_holds_now(dtype, None, int(np.max(known[1])) - top, what)
        op_blocks = None
        if all(b.type.ndim == 0 for b in bounds.values()):
            dims, shape = _size_operand(size)
        else:  # bounds per element: NumPy's broadcasting (draw_shape)
            positions = _broadcast_size("integers", size, **bounds)
            dims, shape = positions.type.shape, positions.shape
            op_blocks = lambda: _count(shape)  # noqa: E731
        op = RandomIntegers(dims, dtype, endpoint)
        return self._by_reference(op, shape, *bounds.values(), blocks=op_blocks)

    def poisson(self, size=None, lam=1.0, dtype="int64"):
        """Counts of mean ``lam`` (finite, >= 0), of lam's broadcast shape when size is None;
        ``dtype`` an integer dtype. One block an element whatever lam: the inverse CDF (the
        NumPy reference, which checks lam and that the counts fit ``dtype`` when it runs)."""
        _check_integer_dtype(dtype, "poisson")
        (lam_var,) = _floats("poisson", lam=lam)
        if isinstance(lam_var, Constant):
            _in_domain(lam_var, "poisson: lam", "finite non-negative")
            if (too_large := _lam_too_large(lam_var.data)) is not None:
                raise _at_user_line(ArgumentError(too_large))
        if lam_var.type.ndim == 0:
            dims, shape = _size_operand(size)
        else:  # lam per element: NumPy's broadcasting (draw_shape)
            positions = _broadcast_size("poisson", size, lam=lam_var)
            dims, shape = positions.type.shape, positions.shape
        return self._by_reference(RandomPoisson(dims, dtype), shape, lam_var)

    def choice(self, a, size=(), replace=True, p=None):
        """Elements of ``a`` (a 1-d array, or ``range(a)`` for an int or an integer scalar
        variable, as NumPy's ``choice`` and Theano's)."""
        dims, shape = _size_operand(size)
        a_var = _int(a) if is_int(a) else as_variable(a)
        of_range = a_var.type.ndim == 0  # an int, or an integer scalar variable: range(a)
        if of_range:
            _check_count(a, "choice: an int a (for range(a))")
        if p is not None:
            if not replace:
                raise _at_user_line(ArgumentError("choice: p is not supported without replacement"))
            _check_probability(p, "choice: p", total=True)
        dtype = "int64" if of_range else a_var.type.dtype
        op = RandomChoice(dims, dtype, replace, p is not None, of_range)
        extra = () if p is None else (as_variable(p),)
        population = a_var if of_range else a_var.shape[0]
        blocks = None if replace else (lambda: cast(population, "int64"))
        return self._by_reference(op, shape, a_var, *extra, blocks=blocks)

    def permutation(self, x):
        """A shuffled copy of ``x`` along its first axis, or of ``range(x)`` for an int."""
        of_range = is_int(x) or (isinstance(x, Variable) and x.type.ndim == 0)
        if is_int(x):
            _check_count(x, "permutation: an int x (for range(x))")
        x_var = _int(x) if of_range else as_variable(x)
        dtype = "int64" if of_range else x_var.type.dtype
        return self._by_reference(  # the op checks x before its length is taken
            RandomPermutation(dtype, of_range),
            Constant(np.zeros(0, np.int64)),
            x_var,
            blocks=lambda: cast(x_var if of_range else x_var.shape[0], "int64"),
        )

    def multinomial(self, size=(), n=1, pvals=None, dtype="int64"):
        """Counts of n draws over the categories of ``pvals``: a 1-d pvals per element of
        ``size``; a 2-d pvals (with size ``()``) per row, one distribution a row."""
        if pvals is None:
            raise _at_user_line(ArgumentError("multinomial: pvals (the probabilities) is needed"))
        dims, shape = _size_operand(size)
        if _ndim(n) not in (0, None):  # a variable's is checked by the op
            raise _at_user_line(
                ShapeError(
                    f"multinomial: n is one count for every distribution drawn, an int or an "
                    f"integer scalar variable, not {_shown(n)} "
                    "(draws with different counts are separate draws)"
                )
            )
        if _ndim(pvals) not in (1, 2, None):  # (before its sum is checked)
            raise _at_user_line(
                ShapeError(
                    "multinomial: pvals must be 1-d (one distribution) or 2-d (one per row), "
                    f"not {_shown(pvals)}"
                )
            )
        _check_count(n, "multinomial: n")
        if _known(n) is not None:
            _check_holds_now(dtype, 0, int(_known(n)), "multinomial: n")
        _check_probability(pvals, "multinomial: pvals", total=True)
        n_var, p_var = _int(n), as_variable(pvals)
        rows = p_var.shape[0] if p_var.type.ndim == 2 else 1
        return self._by_reference(
            RandomMultinomial(dims, dtype),
            shape,
            n_var,
            p_var,
            blocks=lambda: _count(shape) * rows * n_var,
        )


def _ndim(value) -> int | None:
    """The ndim of a parameter given as a number, list or array; None for a variable (its
    op checks it) or what is no array (a ragged list: the checks that follow say so)."""
    if isinstance(value, Variable):
        return None
    try:
        return np.ndim(value)
    except ValueError:
        return None


def _shown(value) -> str:
    """A parameter given as a number, list or array, as a message names it: its repr and
    kind, with the shape of a list or array (the shape alone where it is large)."""
    if np.ndim(value) == 0:
        return describe_value(value)
    kind = "array" if isinstance(value, np.ndarray) else type(value).__name__
    if np.size(value) > 8:
        return f"{'an' if kind == 'array' else 'a'} {kind} of shape {np.shape(value)}"
    return f"{value!r} ({kind} of shape {np.shape(value)})"


def _count(shape) -> Variable:
    """The element count of a shape vector (int64)."""
    return prod(shape)


def _broadcast_size(draw: str, size, **params) -> tuple:
    """The element positions of a draw run by its reference whose parameters may be arrays
    (their type and shape are the draw's): NumPy's Generator rules, as for the elementwise
    draws (draw_shape)."""
    try:
        return draw_positions(draw, size, params)[0]
    except (ShapeError, DTypeError) as exc:
        raise _at_user_line(exc) from None


def _size_operand(size):
    try:
        return shape_operand(() if size is None else size)
    except (ShapeError, DTypeError) as exc:
        raise _at_user_line(exc) from None


def _floats(what: str, **values) -> list:
    """Each float parameter of a draw as a variable: variables as they are, numbers and
    arrays of numbers as float64 constants (NumPy's Generator takes both); anything else is
    an ArgumentError naming the parameter."""
    out = []
    for name, value in values.items():
        if isinstance(value, Variable):
            out.append(value)
            continue
        numeric = isinstance(value, (numbers.Number, list, tuple, np.ndarray))
        array = np.asarray(value) if numeric else None
        if array is None or array.dtype.kind not in "biuf":
            raise _at_user_line(
                ArgumentError(
                    f"{what}: {name} is a number, an array of numbers or a variable, not {value!r}"
                )
            )
        out.append(Constant(array.astype("float64")))
    return out


def _float_dtype(draw: str, dtype):
    """A float draw's dtype (config.floatX by default)."""
    dtype = dtype_arg(dtype, draw, config.floatX)
    if dtype.kind != "f":
        raise _at_user_line(DTypeError(f"{draw}: dtype must be a float dtype, not {dtype.name}"))
    return dtype


def _in_domain(param: Variable, what: str, domain: str) -> Variable:
    """``param`` checked: a constant now, at the user's line; a scalar when the function
    runs; an array known only then is not checked (a pass over it costs 5 to 25% of a draw
    of its size, docs/random.md)."""
    if not isinstance(param, Constant):
        return in_domain(param, what, domain) if param.type.ndim == 0 else param
    try:
        InDomain(what, domain).perform(param.data)
    except ValueError as exc:
        raise _at_user_line(ArgumentError(str(exc))) from None
    return param


def _ints(**values) -> dict:
    """Integer parameters (``n``, ``low``, ``high``) as variables: numbers and arrays of
    numbers as int64 constants (truncated, as NumPy takes 2.5), or uint64 ones where a value
    lies beyond int64 (a uint64 draw's bounds, which NumPy takes too); variables as they are."""
    out = {}
    for name, value in values.items():
        if isinstance(value, Variable) or np.ndim(value) == 0:
            out[name] = _int(value)
        else:
            out[name] = Constant(_int_array(value))
    return out


_INT64_MAX = int(np.iinfo(np.int64).max)


def _int_array(value) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "iub":  # a list of Python ints beyond int64 is float64 here
        exact = np.asarray(value, dtype=object)
        if exact.size and all(is_int(v) for v in exact.flat):
            array = exact
    if array.size and array.dtype.kind in "uO" and max(array.flat) > _INT64_MAX:
        if min(array.flat) >= 0:
            return array.astype(np.uint64)
    return array.astype(np.int64)


def _int(value):
    if isinstance(value, Variable):
        return value
    value = int(value)
    return Constant(value, dtype="uint64" if _INT64_MAX < value < 2**64 else "int64")


def checked_seed(seed) -> int:
    """A seed as NumPy's ``default_rng`` takes one: a non-negative int of any size (a bool, a
    float, a string or a negative number is an ArgumentError, not truncated or wrapped)."""
    if not is_int(seed) or seed < 0:
        raise _at_user_line(
            ArgumentError(
                f"RandomStream: a seed is a non-negative int (as NumPy's default_rng takes), "
                f"not {seed!r}"
            )
        )
    return int(seed)


def _int_range(dtype) -> tuple[int, int]:
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def check_holds(dtype, least, most, what: str, error=DTypeError) -> None:
    """An error unless the integer ``dtype`` holds every value from ``least`` to ``most``
    (either may be None: not known); a float dtype holds them all."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iub":
        return
    low, high = _int_range(dtype)
    for value in (least, most):
        if value is not None and not low <= int(value) <= high:
            raise error(
                f"{what} ({int(value)}) is out of bounds for {dtype.name}, which holds "
                f"{low} to {high}: its values would wrap around (NumPy refuses such bounds)"
            )


def _check_holds_now(dtype, least, most, what: str) -> None:
    try:
        check_holds(as_dtype(dtype), least, most, what)
    except DTypeError as exc:
        raise _at_user_line(exc) from None


def _check_integer_dtype(dtype, draw: str = "integers") -> None:
    if as_dtype(dtype).kind not in "iub":
        raise _at_user_line(
            DTypeError(f"{draw}: dtype must be an integer (or bool) dtype, not {dtype!r}")
        )


def _known(value):
    if isinstance(value, Constant):
        return value.value
    return None if isinstance(value, Variable) else value


def _check_count(n, what: str) -> None:
    value = _known(n)
    if value is not None and np.any(np.asarray(value) < 0):
        raise _at_user_line(ArgumentError(f"{what} must be a non-negative integer, got {value!r}"))


def _check_probability(p, what: str, total: bool = False) -> None:
    """Probabilities known now must lie in [0, 1] (and sum to 1 when ``total``)."""
    value = _known(p)
    if value is None:
        return
    try:
        given = np.asarray(value)
        value = given.astype(np.float64)
    except (TypeError, ValueError):
        raise _at_user_line(ArgumentError(f"{what} is a probability, not {value!r}")) from None
    tolerance = _sum_tolerance(given.dtype)
    if not np.all((value >= 0) & (value <= 1)):
        raise _at_user_line(ArgumentError(f"{what} must lie in [0, 1], got {value}"))
    sums = value.sum(axis=-1) if value.ndim else value
    if total and not np.all(np.abs(sums - 1.0) <= tolerance):
        raise _at_user_line(ArgumentError(f"{what} must sum to 1, got sums {sums}"))
