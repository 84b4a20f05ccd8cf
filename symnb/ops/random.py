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
from symnb.core.op import _at_user_line
from symnb.core.types import as_dtype, dtype_arg
from symnb.core.variable import Constant, Variable, as_variable, describe_value
from symnb.core.words import counted
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops.broadcast import broadcast_like
from symnb.ops.checks import InDomain, in_domain
from symnb.ops.creation import shape_operand
from symnb.ops.draw_shape import draw_positions
from symnb.ops.elemwise import add, cast, mul, sub
from symnb.ops.math import erfinv
from symnb.ops.philox import seed_key
from symnb.ops.random_draws import (
    PhiloxBernoulli,
    PhiloxBernoulliPerElement,
    PhiloxNormal,
    PhiloxUniform,
    RandomBinomial,
    RandomChoice,
    RandomIntegers,
    RandomMultinomial,
    RandomPermutation,
    RandomPoisson,
    check_holds,
    lam_too_large,
    sum_tolerance,
)
from symnb.ops.reduce import prod
from symnb.ops.reduce import sum as reduce_sum


def scaled(loc, scale, standard, dtype) -> Variable:
    """``loc + scale * standard`` in float64, rounded to ``dtype``: a draw of a standard
    one, as ordinary elementwise ops (they fuse with it), so the gradients d/dloc = 1 and
    d/dscale = standard read the forward's own draw, exactly and with no second draw."""
    as64 = functools.partial(cast, dtype="float64")
    return cast(add(as64(loc), mul(as64(scale), as64(standard))), dtype)


#: the standard deviation of a standard normal truncated to (-2, 2) (SciPy's
#: ``truncnorm.std(-2, 2)``, the constant Theano's MRG ``truncated_normal`` divides by)
TRUNCATED_STD = 0.87962566103423978
_ERF_SQRT2 = 0.9544997361036416  # erf(sqrt(2)): the mass of a standard normal in (-2, 2)


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

    def _truncated_normal(self, size, avg, std, dtype, unit_std: bool = False):
        """Normal with mean ``avg`` truncated to ``avg +- 2 std`` (the Theano layer's
        ``normal(truncate=True)``, as Theano's MRG drew it): ``sqrt(2) erfinv(erf(sqrt(2))
        (2u - 1))`` of a uniform u, a standard normal's inverse CDF on (-2, 2), one block an
        element; ``unit_std`` divides it by its standard deviation (0.8796...), so ``std``
        is the draw's (MRG's ``truncated_normal``). Differentiable in avg and std."""
        avg, std = _floats("normal", avg=avg, std=std)
        dtype = _float_dtype("normal", dtype)
        checked = _in_domain(std, "normal: std", "non-negative")
        spread = np.sqrt(2.0) / (TRUNCATED_STD if unit_std else 1.0)

        def standard(u):
            within = erfinv(mul(_ERF_SQRT2, sub(mul(2.0, u), 1.0)))
            return scaled(avg, checked, mul(spread, within), dtype)

        op = PhiloxUniform(as_dtype("float64"))
        return self._elementwise(op, size, "normal", {"avg": avg, "std": std}, standard)

    def binomial(self, size=None, n=1, p=0.5, dtype="int64"):
        """Successes in n trials of probability p (an elementwise kernel for n = 1 and a
        known p; else the NumPy reference, which checks p when the function runs)."""
        _check_probability(p, "binomial: p")
        n_var = _ints("binomial", n=n)["n"]
        _check_count(n, "binomial: n")
        if _known(n) is not None and np.size(_known(n)):
            _check_holds_now(dtype, 0, int(np.max(_known(n))), "binomial: n")
        (p_var,) = _floats("binomial", p=p)
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
        are checked then); NumPy's exclusive ``high`` of 2**64 is every uint64."""
        if high is None:
            low, high = 0, low
        _check_integer_dtype(dtype)
        _check_ints("integers", low=low, high=high)  # before any bound is compared
        known = [None if (k := _known(b)) is None else _exact_ints(k) for b in (low, high)]
        if all(k is not None for k in known) and np.broadcast(*known).size:
            given_low, given_high = known  # truncated and exact, as NumPy compares them
            try:
                empty = np.any(given_high < given_low if endpoint else given_high <= given_low)
            except ValueError:  # shapes that do not broadcast: draw_shape says so
                empty = False
            if empty and _has_draws(size):  # NumPy refuses only a draw from an empty range
                rule = "be at least" if endpoint else "exceed"
                raise _at_user_line(
                    ArgumentError(
                        f"integers: high ({_bound(high, given_high)}) must {rule} low "
                        f"({_bound(low, given_low)})"
                    )
                )
        if known[0] is not None and np.size(known[0]):
            _check_holds_now(dtype, int(np.min(known[0])), None, "integers: low")
        if known[1] is not None and np.size(known[1]):
            top, what = (0, "integers: high") if endpoint else (1, "integers: high - 1")
            _check_holds_now(dtype, None, int(np.max(known[1])) - top, what)
            if not endpoint and int(np.max(known[1])) > _UINT64_MAX:
                # NumPy's exclusive high 2**64 (every uint64) fits no 64-bit constant: the
                # inclusive high 2**64 - 1 is the same range, and draws the same numbers
                high, endpoint = _less_one(known[1]), True
        bounds = _ints("integers", low=low, high=high)
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
            if (too_large := lam_too_large(lam_var.data)) is not None:
                raise _at_user_line(ArgumentError(too_large))
        if lam_var.type.ndim == 0:
            dims, shape = _size_operand(size)
        else:  # lam per element: NumPy's broadcasting (draw_shape)
            positions = _broadcast_size("poisson", size, lam=lam_var)
            dims, shape = positions.type.shape, positions.shape
        return self._by_reference(RandomPoisson(dims, dtype), shape, lam_var)

    def choice(self, a, size=(), replace=True, p=None):
        """Elements of ``a`` (a 1-d array, or ``range(a)`` for an int or an integer scalar
        variable, as NumPy's ``choice`` and Theano's). Where the draw's size and the number of
        elements are known when it is built, what NumPy refuses is refused then: a draw from
        no element, more draws than elements without replacement, a ``p`` of another length."""
        dims, shape = _size_operand(size)
        a_var = _int(a, "choice: a") if is_int(a) else as_variable(a)
        of_range = a_var.type.ndim == 0  # an int, or an integer scalar variable: range(a)
        if of_range:
            _check_count(a, "choice: an int a (for range(a))")
        if p is not None:
            if not replace:
                raise _at_user_line(ArgumentError("choice: p is not supported without replacement"))
            _check_probability(p, "choice: p", total=True)
        extra = () if p is None else (as_variable(p),)
        _check_choice(a_var, of_range, dims, replace, extra)
        dtype = "int64" if of_range else a_var.type.dtype
        op = RandomChoice(dims, dtype, replace, p is not None, of_range)
        population = a_var if of_range else a_var.shape[0]
        blocks = None if replace else (lambda: cast(population, "int64"))
        return self._by_reference(op, shape, a_var, *extra, blocks=blocks)

    def permutation(self, x):
        """A shuffled copy of ``x`` along its first axis, or of ``range(x)`` for an int."""
        of_range = is_int(x) or (isinstance(x, Variable) and x.type.ndim == 0)
        if is_int(x):
            _check_count(x, "permutation: an int x (for range(x))")
        x_var = _int(x, "permutation: x") if of_range else as_variable(x)
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
        n_var = _ints("multinomial", n=n)["n"]
        _check_count(n, "multinomial: n")
        if _known(n) is not None:
            _check_holds_now(dtype, 0, int(_known(n)), "multinomial: n")
        _check_probability(pvals, "multinomial: pvals", total=True)
        p_var = as_variable(pvals)
        rows = p_var.shape[0] if p_var.type.ndim == 2 else 1
        return self._by_reference(
            RandomMultinomial(dims, dtype),
            shape,
            n_var,
            p_var,
            blocks=lambda: _count(shape) * rows * n_var,
        )


def _check_choice(a: Variable, of_range: bool, dims: tuple, replace: bool, p: tuple) -> None:
    """``choice``'s population, size and ``p`` where the draw's type or constants tell them
    when it is built: refused then as NumPy's ``choice`` refuses them (the draw's reference
    would refuse them at every call). A part known only at run time is checked then."""
    if of_range:
        known = _known(a)
        elements = int(known) if known is not None and np.ndim(known) == 0 else None
    else:
        elements = a.type.shape[0] if a.type.ndim == 1 else None
    if not isinstance(elements, int):
        return
    draws = int(np.prod(dims)) if all(isinstance(d, int) for d in dims) else None
    what = f"range({elements})" if of_range else a.describe()
    length = p[0].type.shape[0] if p and p[0].type.ndim == 1 else None
    if isinstance(length, int) and length != elements:
        raise _at_user_line(
            ArgumentError(
                f"choice: p has {counted(length, 'entry', 'entries')} for the "
                f"{counted(elements, 'element')} of {what}; a and p must have the same size, as "
                "in NumPy"
            )
        )
    if draws is None or draws == 0:
        return
    if not replace and draws > elements:
        raise _at_user_line(
            ArgumentError(
                f"choice without replacement: {counted(draws, 'draw')} (size {dims}) from the "
                f"{counted(elements, 'element')} of {what}; NumPy refuses a sample larger than "
                "the population"
            )
        )
    if elements == 0:
        raise _at_user_line(
            ArgumentError(
                f"choice: {counted(draws, 'draw')} (size {dims}) from an empty a ({what}); "
                "NumPy draws from an empty a only with a size of 0"
            )
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
        array = None
        if isinstance(value, (numbers.Number, list, tuple, np.ndarray)):
            try:
                array = np.asarray(value)
            except (TypeError, ValueError):  # a ragged list: refused below
                pass
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


def _ints(what: str, **values) -> dict:
    """Integer parameters (``n``, ``low``, ``high``) as variables: numbers and arrays of
    numbers as int64 constants (truncated, as NumPy takes 2.5), or uint64 ones where a value
    lies beyond int64 (a uint64 draw's bounds, which NumPy takes too); variables as they are.
    Anything else (a string, None, a NaN) is an ArgumentError naming the parameter, at the
    user's line, before a check of its value compares it (``_check_ints``); a value neither
    int64 nor uint64 holds a DTypeError naming it."""
    _check_ints(what, **values)
    out = {}
    for name, value in values.items():
        if isinstance(value, Variable) or np.ndim(value) == 0:
            out[name] = _int(value, f"{what}: {name}")
        else:
            out[name] = Constant(_int_array(value, f"{what}: {name}"))
    return out


def _check_ints(what: str, **values) -> None:
    """An ArgumentError naming the first parameter that is not an integer, an array of
    integers or a variable (a string, None, a NaN), at the user's line."""
    for name, value in values.items():
        if not isinstance(value, Variable) and not _integral(value):
            raise _at_user_line(
                ArgumentError(
                    f"{what}: {name} is an integer, an array of integers or a variable, "
                    f"not {value!r}"
                )
            )


def _integral(value) -> bool:
    """Whether a count or bound given as a number or an array of them is one NumPy's
    Generator takes: ints (of any size), bools and finite floats (truncated)."""
    if not isinstance(value, (numbers.Real, list, tuple, np.ndarray)):
        return False  # a str NumPy reads as a number, where int() would too: refused
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list
        return False
    if array.dtype.kind == "f":
        return bool(np.all(np.isfinite(array)))
    if array.dtype.kind == "O":  # ints beyond int64
        return all(is_int(v) for v in array.flat)
    return array.dtype.kind in "biu"


_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
_UINT64_MAX = int(np.iinfo(np.uint64).max)


def _exact_ints(value) -> np.ndarray:
    """The values of an integer parameter given as a number or an array of them, exactly and
    truncated (as NumPy takes 2.5): an int64 array where int64 holds them all, else an object
    array of Python ints. NumPy makes a list mixing ints beyond int64 with smaller ones
    float64, where 2**63 - 2 is 2**63, and casts a float 2**63 to int64 as -2**63; compared
    or cast from here, neither loses a value."""
    array = np.asarray(value)
    if array.dtype.kind in "bi" or not array.size:
        return array.astype(np.int64)
    if array.dtype.kind in "uf" and -(2.0**63) <= array.min() and array.max() < 2.0**63:
        return array.astype(np.int64)  # (float64 2**63 - 1 is 2**63: not below it)
    exact = np.asarray(value, dtype=object)
    if not all(is_int(v) for v in exact.flat):  # floats, as NumPy reads the list
        exact = array.astype(object)
    return np.asarray(np.frompyfunc(int, 1, 1)(exact), dtype=object)


def _bound(given, exact: np.ndarray) -> str:
    """A bound as a message shows it: as given, and as NumPy reads it where it truncated a
    float (``2.5, read as 2``)."""
    given = _known(given)
    read = exact.tolist()
    if np.asarray(given).dtype.kind != "f" or np.array_equal(np.asarray(given, float), read):
        return f"{given}"
    return f"{given}, read as {read}: NumPy truncates a float bound"


def _int_array(value, what: str = "an integer parameter") -> np.ndarray:
    """An integer parameter's array constant: int64, or uint64 where a value lies beyond
    int64 (a DTypeError naming ``what`` where neither holds every value)."""
    exact = _exact_ints(value)
    if exact.dtype.kind == "O":
        least, most = int(np.min(exact)), int(np.max(exact))
        _check_64_bits(what, least, most)
        if most > _INT64_MAX:
            return exact.astype(np.uint64)
    return exact.astype(np.int64)


def _int(value, what: str = "an integer parameter"):
    if isinstance(value, Variable):
        return value
    value = int(value)
    _check_64_bits(what, value, value)
    return Constant(value, dtype="uint64" if value > _INT64_MAX else "int64")


def _check_64_bits(what: str, least: int, most: int) -> None:
    """A DTypeError, at the user's line, unless int64 or uint64 holds every value from
    ``least`` to ``most`` (a constant of neither is NumPy's bare OverflowError)."""
    if _INT64_MIN <= least and most <= _INT64_MAX or 0 <= least and most <= _UINT64_MAX:
        return
    if least < _INT64_MIN or most > _UINT64_MAX:
        value = least if least < _INT64_MIN else most
        message = (
            f"{what} ({value}) is out of bounds for every 64-bit integer dtype (int64 and "
            f"uint64 hold {_INT64_MIN} to {_UINT64_MAX} between them)"
        )
    else:
        message = (
            f"{what} runs from {least} to {most}: no 64-bit integer dtype holds both (int64 "
            f"holds {_INT64_MIN} to {_INT64_MAX}, uint64 0 to {_UINT64_MAX})"
        )
    raise _at_user_line(DTypeError(message))


def _less_one(high):
    """An exclusive high as the inclusive one, ``high - 1``, exact for Python ints beyond
    uint64 (a float high truncated first, as NumPy takes 2.5)."""
    if np.ndim(high) == 0:
        return int(high) - 1
    return np.frompyfunc(lambda v: int(v) - 1, 1, 1)(np.asarray(high, dtype=object))


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


def _has_draws(size) -> bool:
    """Whether ``size`` is known now to hold an element (None: one draw); a size of 0, or
    one known only when the function runs, is checked by the draw then."""
    if size is None:
        return True
    entries = size if isinstance(size, (tuple, list)) else (size,)
    known = [_known(entry) for entry in entries]
    return all(isinstance(k, (int, np.integer)) and k > 0 for k in known)


def _check_count(n, what: str) -> None:
    value = _known(n)
    if value is not None and np.any(_exact_ints(value) < 0):  # -0.5 is 0, as in NumPy
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
    tolerance = sum_tolerance(given.dtype)
    if not np.all((value >= 0) & (value <= 1)):
        raise _at_user_line(ArgumentError(f"{what} must lie in [0, 1], got {value}"))
    sums = value.sum(axis=-1) if value.ndim else value
    if total and not np.all(np.abs(sums - 1.0) <= tolerance):
        raise _at_user_line(ArgumentError(f"{what} must sum to 1, got sums {sums}"))
