"""The random draw ops behind ``sn.RandomStream``: elementwise Philox transforms (uniform,
normal, Bernoulli), which every backend computes in its kernels from the element's block, and
the samplers that run on the host (binomial, integers, Poisson, choice, permutation,
multinomial), each reading its stream state (a ``[key, counter]`` of uint64) and the draw's
shape. Random ops are impure (``pure = False``): never merged with a twin nor folded."""

from __future__ import annotations

import functools

import numpy as np

from symnb.core.op import Op
from symnb.core.types import TensorType, as_dtype
from symnb.core.variable import Constant
from symnb.errors import DTypeError, ShapeError
from symnb.ops.draw_shape import LEAVE_OUT, broadcasts_to
from symnb.ops.draw_shape import checked_shape as _checked_shape
from symnb.ops.elemwise import Elemwise
from symnb.ops.philox import (
    Blocks,
    bits64,
    kernel_uniform53,
    kernel_unit_uniform,
    kernel_words,
    split_key,
    uniform53,
    unit_uniform,
    words_at,
)

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
            if high - top < low and _size(shape):  # no draw: NumPy accepts any range
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


def lam_too_large(lam) -> str | None:
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
        if (too_large := lam_too_large(lam)) is not None:
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
    tolerance = sum_tolerance(np.asarray(p).dtype)
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
    if np.any(p < 0) or not np.all(np.abs(totals - 1.0) <= sum_tolerance(pvals.dtype)):
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


def sum_tolerance(dtype) -> float:
    """How far from 1 probabilities of ``dtype`` may sum (docs/random.md): a float32 softmax
    is off by ~1e-7 a class, a float16 one by ~5e-4 a class."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize >= 8:
        return 1e-6
    return 1e-4 if dtype.itemsize == 4 else 1e-3


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
