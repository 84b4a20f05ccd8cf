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

import numbers

import numpy as np

from symnb.config import config
from symnb.core.constructors import shared
from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType, as_dtype
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops.creation import shape_operand
from symnb.ops.philox import Blocks, bits64, seed_key, uniform24, uniform53

STATE_TYPE = TensorType("uint64", (2,))


class _Random(Op):
    """A draw: inputs ``(state, shape, *params)``, outputs ``(new state, sample)``. A
    subclass says how blocks become a sample (``sample``) and checks its parameters."""

    pure = False
    differentiable = False
    family = "random"
    nout = 2
    __props__ = ("dims", "dtype")
    params_names: tuple[str, ...] = ()

    def __init__(self, dims, dtype):
        self.dims, self.dtype = tuple(dims), as_dtype(dtype)

    def infer_types(self, state, shape, *params):
        if state.type != STATE_TYPE:
            raise DTypeError(f"{self.op_name()}: {state.describe()} is not a stream state")
        for name, var in zip(self.params_names, params):
            if var.type.ndim != 0:
                raise ShapeError(f"{self.op_name()}: {name} must be a scalar, not {var.describe()}")
        return [STATE_TYPE, TensorType(self.dtype, self.out_dims(params))]

    def out_dims(self, params) -> tuple:
        return self.dims

    def perform(self, state, shape, *params):
        shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape):
            raise ValueError(f"negative dimensions are not allowed: {shape}")
        blocks = Blocks(state)
        sample = self.sample(blocks, shape, *params)
        return blocks.state(), np.asarray(sample).astype(self.dtype, copy=False)

    def sample(self, blocks: Blocks, shape: tuple, *params):
        raise NotImplementedError

    def output_label(self, node):
        return f"{self.op_name()} sample" if node is not None else None


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _in_unit_interval(p, what: str) -> np.ndarray:
    p = np.asarray(p, np.float64)
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"{what} must lie in [0, 1], got {p}")
    return p


class RandomUniform(_Random):
    """Uniform on [low, high): 53 random bits per float64, 24 per float32."""

    functions = ("RandomStream.uniform",)
    dtype_rule = "``dtype`` (config.floatX by default)"
    params_names = ("low", "high")

    def sample(self, blocks, shape, low, high):
        w = blocks.take(_size(shape))
        u = uniform24(w[0]) if self.dtype == np.float32 else uniform53(w[0], w[1])
        return (low + (high - low) * u.astype(self.dtype)).reshape(shape)


class RandomNormal(_Random):
    """Normal(loc, scale) by Box-Muller on two 53-bit uniforms per element (in float64)."""

    functions = ("RandomStream.normal",)
    dtype_rule = "``dtype`` (config.floatX by default)"
    params_names = ("loc", "scale")

    def sample(self, blocks, shape, loc, scale):
        w = blocks.take(_size(shape))
        radius = np.sqrt(-2.0 * np.log1p(-uniform53(w[0], w[1])))
        z = radius * np.cos(2.0 * np.pi * uniform53(w[2], w[3]))
        return (loc + scale * z).reshape(shape)


class RandomBinomial(_Random):
    """Binomial(n, p): the sum of n Bernoulli trials, one block per trial and element."""

    functions = ("RandomStream.binomial", "RandomStream.bernoulli")
    dtype_rule = "``dtype`` (int64 for binomial, int8 for bernoulli)"
    params_names = ("n", "p")

    def sample(self, blocks, shape, n, p):
        n, p = int(n), _in_unit_interval(p, "binomial: p")
        if n < 0:
            raise ValueError(f"binomial: n must be >= 0, got {n}")
        w = blocks.take(_size(shape) * n)
        trials = uniform53(w[0], w[1]).reshape(_size(shape), n) < p
        return trials.sum(axis=1).reshape(shape)


class RandomIntegers(_Random):
    """Integers in [low, high): 64 random bits modulo the range (bias below range / 2**64)."""

    functions = ("RandomStream.integers",)
    dtype_rule = "``dtype`` (int64 by default)"
    params_names = ("low", "high")

    def sample(self, blocks, shape, low, high):
        low, high = int(low), int(high)
        if high <= low:
            raise ValueError(f"integers: high ({high}) must be greater than low ({low})")
        w = blocks.take(_size(shape))
        offset = bits64(w[0], w[1]) % np.uint64(high - low)
        return (np.int64(low) + offset.astype(np.int64)).reshape(shape)


class RandomChoice(_Random):
    """Elements of a 1-d ``a``: with replacement (uniform, or by probabilities ``p`` through
    the inverse CDF), or without (the first of a Philox-keyed permutation)."""

    functions = ("RandomStream.choice",)
    dtype_rule = "a's dtype"
    __props__ = ("dims", "dtype", "replace", "weighted")

    def __init__(self, dims, dtype, replace: bool, weighted: bool):
        super().__init__(dims, dtype)
        self.replace, self.weighted = bool(replace), bool(weighted)

    def infer_types(self, state, shape, a, *p):
        if a.type.ndim != 1:
            raise ShapeError(f"choice: a must be 1-d, not {a.describe()}")
        if p and p[0].type.ndim != 1:
            raise ShapeError(f"choice: p must be 1-d, not {p[0].describe()}")
        return [STATE_TYPE, TensorType(a.type.dtype, self.dims)]

    def sample(self, blocks, shape, a, *p):
        k, count = len(a), _size(shape)
        if not self.replace:
            if count > k:
                raise ValueError(f"choice without replacement: {count} draws from {k} elements")
            return a[_permutation(blocks, k)[:count]].reshape(shape)
        if k == 0 and count:
            raise ValueError("choice: a is empty")
        w = blocks.take(count)
        if not self.weighted:
            return a[(bits64(w[0], w[1]) % np.uint64(max(k, 1))).astype(np.int64)].reshape(shape)
        cdf = _cdf(p[0], k, "choice")
        index = np.searchsorted(cdf, uniform53(w[0], w[1]), side="right")
        return a[np.minimum(index, k - 1)].reshape(shape)


def _cdf(p, k: int, what: str) -> np.ndarray:
    p = np.asarray(p, np.float64)
    if len(p) != k:
        raise ValueError(f"{what}: p has {len(p)} entries for {k} elements")
    if np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-6):
        raise ValueError(f"{what}: p must be non-negative and sum to 1, got {p}")
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

    def infer_types(self, state, shape, x):
        if self.of_range:
            if x.type.ndim != 0 or x.type.dtype.kind not in "iu":
                raise DTypeError(f"permutation: an int or a tensor, not {x.describe()}")
            return [STATE_TYPE, TensorType("int64", (None,))]
        if x.type.ndim == 0:
            raise ShapeError(f"permutation: {x.describe()} has no axis to permute")
        return [STATE_TYPE, x.type]

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

    def infer_types(self, state, shape, n, pvals):
        if n.type.ndim != 0 or n.type.dtype.kind not in "iu":
            raise DTypeError(f"multinomial: n must be an integer scalar, not {n.describe()}")
        if pvals.type.ndim != 1:
            raise ShapeError(f"multinomial: pvals must be 1-d, not {pvals.describe()}")
        return [STATE_TYPE, TensorType(self.dtype, (*self.dims, pvals.type.shape[0]))]

    def sample(self, blocks, shape, n, pvals):
        n, k, count = int(n), len(pvals), _size(shape)
        if n < 0:
            raise ValueError(f"multinomial: n must be >= 0, got {n}")
        cdf = _cdf(pvals, k, "multinomial")
        w = blocks.take(count * n)
        draws = np.minimum(np.searchsorted(cdf, uniform53(w[0], w[1]), side="right"), k - 1)
        rows = np.repeat(np.arange(count), n)
        counts = np.zeros((count, k), np.int64)
        np.add.at(counts, (rows, draws), 1)
        return counts.reshape((*shape, k))


class RandomStream:
    """Theano's ``RandomStreams``: draws whose numbers depend only on the seed and on the
    order of the draws. Each draw has its own state; ``updates()`` lists them, and any
    ``sn.function`` using a draw advances its state on every call (``default_update``)."""

    def __init__(self, seed: int = 0):
        self.seed_value = int(seed)
        self.states: list = []

    def seed(self, seed: int) -> None:
        """Start every state of the stream again from ``seed``."""
        self.seed_value = int(seed)
        for index, state in enumerate(self.states):
            state.set_value(_initial_state(seed, index))

    def updates(self) -> list:
        """``(state, next state)`` for each draw: what every function using it writes."""
        return [(s, s.tag["default_update"]) for s in self.states]

    def _draw(self, op, size, *params):
        state = shared(_initial_state(self.seed_value, len(self.states)),
                       name=f"rng_state{len(self.states)}")  # fmt: skip
        try:
            new_state, sample = op(state, size, *params)
        except (ShapeError, DTypeError) as exc:
            raise _at_user_line(exc) from None
        state.tag["default_update"] = new_state
        self.states.append(state)
        return sample

    def uniform(self, size=(), low=0.0, high=1.0, dtype=None):
        dims, shape = _size_operand(size)
        return self._draw(RandomUniform(dims, dtype or config.floatX), shape,
                          *_floats(low, high))  # fmt: skip

    def normal(self, size=(), avg=0.0, std=1.0, dtype=None):
        dims, shape = _size_operand(size)
        return self._draw(RandomNormal(dims, dtype or config.floatX), shape, *_floats(avg, std))

    def binomial(self, size=(), n=1, p=0.5, dtype="int64"):
        dims, shape = _size_operand(size)
        _check_probability(p, "binomial: p")
        _check_count(n, "binomial: n")
        return self._draw(RandomBinomial(dims, dtype), shape, _int(n), *_floats(p))

    def bernoulli(self, size=(), p=0.5, dtype="int8"):
        """1 with probability p, else 0 (dropout masks: pass ``dtype=x.dtype``)."""
        return self.binomial(size, 1, p, dtype)

    def integers(self, low, high=None, size=(), dtype="int64"):
        if high is None:
            low, high = 0, low
        dims, shape = _size_operand(size)
        if _known(low) is not None and _known(high) is not None and _known(high) <= _known(low):
            raise _at_user_line(ValueError(f"integers: high ({high}) must exceed low ({low})"))
        return self._draw(RandomIntegers(dims, dtype), shape, _int(low), _int(high))

    def choice(self, a, size=(), replace=True, p=None):
        dims, shape = _size_operand(size)
        a_var = Constant(np.arange(a, dtype=np.int64)) if _is_count(a) else as_variable(a)
        if p is not None:
            if not replace:
                raise _at_user_line(ValueError("choice: p is not supported without replacement"))
            _check_probability(p, "choice: p")
        op = RandomChoice(dims, a_var.type.dtype, replace, p is not None)
        extra = () if p is None else (as_variable(p),)
        return self._draw(op, shape, a_var, *extra)

    def permutation(self, x):
        of_range = _is_count(x) or (isinstance(x, Variable) and x.type.ndim == 0)
        x_var = _int(x) if of_range else as_variable(x)
        dtype = "int64" if of_range else x_var.type.dtype
        return self._draw(RandomPermutation(dtype, of_range), Constant(np.zeros(0, np.int64)),
                          x_var)  # fmt: skip

    def multinomial(self, size=(), n=1, pvals=None, dtype="int64"):
        if pvals is None:
            raise _at_user_line(ValueError("multinomial: pvals (the probabilities) is needed"))
        dims, shape = _size_operand(size)
        _check_count(n, "multinomial: n")
        _check_probability(pvals, "multinomial: pvals", total=True)
        return self._draw(RandomMultinomial(dims, dtype), shape, _int(n), as_variable(pvals))


def _initial_state(seed: int, index: int) -> np.ndarray:
    return np.array([seed_key(seed, index), 0], np.uint64)


def _size_operand(size):
    try:
        return shape_operand(size)
    except (ShapeError, DTypeError) as exc:
        raise _at_user_line(exc) from None


def _floats(*values):
    return [v if isinstance(v, Variable) else Constant(float(v), dtype="float64") for v in values]


def _int(value):
    return value if isinstance(value, Variable) else Constant(int(value), dtype="int64")


def _is_count(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _known(value):
    if isinstance(value, Constant):
        return value.value
    return None if isinstance(value, Variable) else value


def _check_count(n, what: str) -> None:
    value = _known(n)
    if value is not None and (np.ndim(value) != 0 or int(value) < 0):
        raise _at_user_line(ValueError(f"{what} must be a non-negative integer, got {value!r}"))


def _check_probability(p, what: str, total: bool = False) -> None:
    """Probabilities known now must lie in [0, 1] (and sum to 1 when ``total``)."""
    value = _known(p)
    if value is None:
        return
    value = np.asarray(value, np.float64)
    if not np.all((value >= 0) & (value <= 1)):
        raise _at_user_line(ValueError(f"{what} must lie in [0, 1], got {value}"))
    if total and not np.isclose(value.sum(), 1.0, atol=1e-6):
        raise _at_user_line(ValueError(f"{what} must sum to 1, got sum {value.sum():.6g}"))
