"""The step kinds of a fuzzed program: what one step may add to the graph.

A step is ``(kind, a, b, c, d)``. ``a``, ``b`` and ``c`` pick its operands ``x``, ``y`` and
``z`` among the values the program has so far (modulo their number); the small integers also
choose the rest (an op, an axis, a constant). A kind is a list of *variants*, small functions
registered with ``@variant(kind)`` in the order they are defined: ``d % len(variants)`` picks
one, which gets ``x, y, z, b, c`` and ``d // len(variants)`` for its own choices. A variant
may raise anything in ``REFUSED`` (an op rule refusing its operands, or the variant itself
when they do not suit it): the program's builder then skips the step, so every graph is well
typed by construction and hypothesis shrinks a failure to the fewest steps.

The elementwise kinds return a variable: the reference backend ("py" without rewrites) runs
them as NumPy's ufuncs, so comparing with it compares with NumPy. A kind whose op symnb
computes its own way (the shape and layout ops, products, scans) returns a ``Check`` too: the
value with NumPy's own function of its operands, which ``graphs.judge`` evaluates on the
operands' reference values; so such an op is held to NumPy, not only to symnb's reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.special

import symnb as sn
from symnb.errors import SymnbError
from tests.fuzz.arrays import DTYPES, VALUES, array

#: what an op's rule may refuse while a program is built (the step is then skipped)
REFUSED = (SymnbError, TypeError, ValueError, IndexError, NotImplementedError)

UNARY = [
    sn.neg,
    sn.abs,
    sn.sign,
    sn.exp,
    sn.log,
    sn.sqrt,
    sn.tanh,
    sn.sigmoid,
    sn.sin,
    sn.cos,
    sn.floor,
    sn.ceil,
    sn.trunc,
    sn.round,
    sn.square,
    sn.reciprocal,
    sn.expm1,
    sn.log1p,
    sn.softplus,
    sn.isnan,
    sn.isinf,
    sn.isfinite,
    sn.invert,
    sn.relu,
    sn.arctan,
    sn.log2,
    sn.cosh,
]
BINARY = [
    sn.add,
    sn.sub,
    sn.mul,
    sn.true_div,
    sn.floor_div,
    sn.mod,
    sn.maximum,
    sn.minimum,
    sn.less,
    sn.greater,
    sn.equal,
    sn.not_equal,
    sn.less_equal,
    sn.bitwise_and,
    sn.bitwise_or,
    sn.bitwise_xor,
    sn.logaddexp,
    sn.arctan2,
    sn.pow,
]
REDUCTIONS = [sn.sum, sn.prod, sn.max, sn.min, sn.mean, sn.any, sn.all]
SCALARS = [2, -1, 0.5, 3, 1e-3, True]


@dataclass
class Check:
    """A step's value and NumPy's function of its operands' values: the value it must have,
    dtype included."""

    label: str
    var: object
    operands: list
    numpy: Callable


#: kind -> its variants, in the order they are defined
KINDS: dict[str, list[Callable]] = {}


def variant(kind: str):
    """Register the decorated function as the next variant of ``kind``."""

    def register(fn):
        KINDS.setdefault(kind, []).append(fn)
        return fn

    return register


def apply(values: list, kind: str, a: int, b: int, c: int, d: int):
    """The step's value and its ``Check`` (None for a kind the reference alone judges)."""
    variants = KINDS[kind]
    x, y, z = _pick(values, a), _pick(values, b), _pick(values, c)
    out = variants[d % len(variants)](x, y, z, b, c, d // len(variants))
    if isinstance(out, Check):
        return out.var, out
    return out, None


def _pick(values, i):
    return values[i % len(values)]


# -- elementwise ops, reductions, basic indexing, casts, constants --------------------------------
@variant("unary")
def unary(x, y, z, b, c, d):
    return UNARY[d % len(UNARY)](x)


@variant("binary")
def binary(x, y, z, b, c, d):
    op = BINARY[d % len(BINARY)]
    if op is sn.pow and y.type.dtype.kind in "iub":
        y = sn.clip(y, 0, 3) if y.type.dtype.kind != "b" else y  # int ** negative raises
    return op(x, y)


@variant("where")
def where(x, y, z, b, c, d):
    return sn.where(x, y, z)


@variant("clip")
def clip(x, y, z, b, c, d):
    return sn.clip(x, y, z)


@variant("reduce")
def reduce(x, y, z, b, c, d):
    op = REDUCTIONS[d % len(REDUCTIONS)]
    ndim = x.type.ndim
    axis = None if ndim == 0 or (d // 8) % 3 == 0 else (d // 24) % ndim
    return op(x, axis=axis, keepdims=bool((d // 4) % 2))


@variant("index")
def reversed_(x, y, z, b, c, d):
    return _indexable(x)[::-1]


@variant("index")
def last_axis_reversed(x, y, z, b, c, d):
    return _indexable(x)[..., ::-1]


@variant("index")
def first(x, y, z, b, c, d):
    return _indexable(x)[0]


@variant("index")
def last_slice(x, y, z, b, c, d):
    return _indexable(x)[-1:]


# bounds computed from a shape (run-time values where the dims are unknown): the executors'
# basic views, and the rule that slices an elementwise op's input
@variant("index")
def second_half(x, y, z, b, c, d):
    return _indexable(x)[x.shape[0] // 2 :]


@variant("index")
def reversed_from_middle(x, y, z, b, c, d):
    return _indexable(x)[..., (x.shape[-1] - 1) // 2 :: -1]


@variant("index")
def last_with_new_axis(x, y, z, b, c, d):
    return _indexable(x)[x.shape[0] - 1, None]


@variant("index")
def transposed(x, y, z, b, c, d):
    return _indexable(x).T


def _indexable(x):
    if x.type.ndim == 0:
        raise TypeError("a 0-d value has nothing to index")
    return x


@variant("cast")
def cast(x, y, z, b, c, d):
    return cast_within_range(x, DTYPES[d % len(DTYPES)])


@variant("scalar")
def scalar(x, y, z, b, c, d):
    """A binary op with a weak Python scalar on either side."""
    number = SCALARS[c % len(SCALARS)]
    op = BINARY[d % len(BINARY)]
    return op(x, number) if b % 2 else op(number, x)


@variant("constant")
def constant(x, y, z, b, c, d):
    """A binary op with a constant of any dtype and values of any kind (specials too: NaN,
    inf, -0.0)."""
    dtype = DTYPES[b % len(DTYPES)]
    rng = np.random.default_rng(c)
    values = VALUES[(b // len(DTYPES)) % len(VALUES)]
    return BINARY[d % len(BINARY)](x, sn.constant(array(rng, (4,) if c % 2 else (), dtype, values)))


def cast_within_range(x, dtype):
    """x.astype(dtype); a float going to an integer is first limited to where NumPy's casts
    agree with each other: NaN, infinities and values beyond the target's range give results
    that differ between NumPy's own loops (contiguous or strided; see docs/c_backend.md), so
    no backend can be held to one of them. The whole range is kept: up to 2**64 for uint64
    and 2**32 for uint32; negative values into the unsigned types go through int64 as in
    NumPy on x86 (from -2**31, -2**63 for uint64)."""
    target = np.dtype(dtype)
    if x.type.dtype.kind == "f" and target.kind in "iu":
        low, high = _cast_bounds(target)
        x = sn.where(sn.bitwise_and(x > low, x < high), x, 0)
    return sn.cast(x, dtype)


def _cast_bounds(target: np.dtype) -> tuple[float, float]:
    """(low, high): floats strictly between them truncate to a value NumPy's loops agree on
    (the target's range, wider below for unsigned targets; powers of two, exact in float32)."""
    bits = 8 * target.itemsize
    if target.kind == "i":
        return -(2.0 ** (bits - 1)) - 1, 2.0 ** (bits - 1)
    return -(2.0 ** (63 if bits == 64 else 31)), 2.0**bits


# -- helpers of the kinds checked against NumPy ---------------------------------------------------
def _axis(x, c: int, extra: int = 0) -> int:
    """An axis of ``x`` (or of ``x`` with ``extra`` new axes), negative every other ``c``."""
    n = x.type.ndim + extra
    if n == 0:
        raise TypeError("a 0-d value has no axis")
    axis = c % n
    return axis - n if (c // n) % 2 else axis


def _axis_or_none(x, c: int, d: int):
    """An axis of ``x``, or None (every axis) for a 0-d ``x`` and every third ``d``."""
    return None if x.type.ndim == 0 or d % 3 == 0 else _axis(x, c)


def _at_least(x, ndim: int):
    if x.type.ndim < ndim:
        raise TypeError(f"the variant needs {ndim} dims")
    return x


# -- products -------------------------------------------------------------------------------------
@variant("matmul")
def matmul(x, y, z, b, c, d):
    return Check("matmul", sn.matmul(x, y), [x, y], np.matmul)


@variant("matmul")
def dot(x, y, z, b, c, d):
    return Check("dot", sn.dot(x, y), [x, y], _scaled_by_0d(np.dot))


def _scaled_by_0d(fn):
    """NumPy's ``fn``, but with a 0-d operand the other multiplied elementwise: what
    docs/ops.md says symnb's ``dot`` and ``inner`` do (IEEE's NaN for ``inf * 0``, where
    NumPy's BLAS scaling by a 0-d zero writes 0)."""

    def product(p, q):
        return p * q if p.ndim == 0 or q.ndim == 0 else fn(p, q)

    return product


@variant("matmul")
def tensordot_1(x, y, z, b, c, d):
    return Check(
        "tensordot axes=1",
        sn.tensordot(x, y, axes=1),
        [x, y],
        lambda p, q: np.tensordot(p, q, axes=1),
    )


@variant("matmul")
def tensordot_pair(x, y, z, b, c, d):
    """One axis of each, any pair (mismatched lengths: the build must refuse, not the run)."""
    i, j = c % _at_least(x, 1).type.ndim, (c // 3) % _at_least(y, 1).type.ndim
    return Check(
        f"tensordot axes=([{i}], [{j}])",
        sn.tensordot(x, y, axes=([i], [j])),
        [x, y],
        lambda p, q: np.tensordot(p, q, axes=([i], [j])),
    )


@variant("matmul")
def matmul_transposed(x, y, z, b, c, d):
    return Check("x @ y.T", x @ y.T, [x, y], lambda p, q: p @ q.T)


@variant("matmul")
def tensordot_0(x, y, z, b, c, d):
    return Check(
        "tensordot axes=0",
        sn.tensordot(x, y, axes=0),
        [x, y],
        lambda p, q: np.tensordot(p, q, axes=0),
    )


# -- joining values of the program ------------------------------------------------------------
@variant("join")
def concatenate_2(x, y, z, b, c, d):
    axis = _axis(x, c)
    return Check(
        f"concatenate axis={axis}",
        sn.concatenate([x, y], axis=axis),
        [x, y],
        lambda p, q: np.concatenate([p, q], axis=axis),
    )


@variant("join")
def concatenate_3(x, y, z, b, c, d):
    axis = _axis(x, c)
    return Check(
        f"concatenate axis={axis}",
        sn.concatenate([x, y, z], axis=axis),
        [x, y, z],
        lambda p, q, r: np.concatenate([p, q, r], axis=axis),
    )


@variant("join")
def stack_2(x, y, z, b, c, d):
    axis = _axis(x, c, extra=1)
    return Check(
        f"stack axis={axis}",
        sn.stack([x, y], axis=axis),
        [x, y],
        lambda p, q: np.stack([p, q], axis=axis),
    )


@variant("join")
def stack_itself(x, y, z, b, c, d):
    axis = _axis(x, c, extra=1)
    return Check(
        f"stack [x, x, x] axis={axis}",
        sn.stack([x, x, x], axis=axis),
        [x],
        lambda p: np.stack([p, p, p], axis=axis),
    )


# -- shapes: reshapes with dims computed from shapes, new and dropped axes, permutations -------
@variant("reshape")
def reshape_flat(x, y, z, b, c, d):
    return Check("reshape(-1)", x.reshape((-1,)), [x], lambda p: p.reshape(-1))


@variant("reshape")
def flatten(x, y, z, b, c, d):
    return Check("flatten", sn.flatten(x), [x], lambda p: p.flatten())


@variant("reshape")
def reshape_first_dim(x, y, z, b, c, d):
    _at_least(x, 1)
    return Check(
        "reshape(x.shape[0], -1)",
        x.reshape((x.shape[0], -1)),
        [x],
        lambda p: p.reshape(p.shape[0], -1),
    )


@variant("reshape")
def reshape_last_dim_first(x, y, z, b, c, d):
    _at_least(x, 1)
    return Check(
        "reshape(x.shape[-1], -1)",
        x.reshape((x.shape[-1], -1)),
        [x],
        lambda p: p.reshape(p.shape[-1], -1),
    )


@variant("reshape")
def reshape_two_rows(x, y, z, b, c, d):
    """A fixed dim the size may not divide: the build refuses where it knows the size."""
    return Check("reshape(2, -1)", x.reshape((2, -1)), [x], lambda p: p.reshape(2, -1))


@variant("reshape")
def reshape_swapped_dims(x, y, z, b, c, d):
    _at_least(x, 2)
    return Check(
        "reshape(x.shape[1], x.shape[0])",
        x.reshape((x.shape[1], x.shape[0])),
        [x],
        lambda p: p.reshape(p.shape[1], p.shape[0]),
    )


@variant("reshape")
def expand_dims(x, y, z, b, c, d):
    axis = _axis(x, c, extra=1)
    return Check(
        f"expand_dims {axis}", sn.expand_dims(x, axis), [x], lambda p: np.expand_dims(p, axis)
    )


@variant("reshape")
def squeeze(x, y, z, b, c, d):
    """Without an axis symnb drops the dims its type knows to be 1 (a dim unknown when the
    graph is built stays, whatever its size at run time): NumPy's squeeze of those axes."""
    ones = tuple(i for i, s in enumerate(x.type.shape) if s == 1)
    return Check("squeeze", sn.squeeze(x), [x], lambda p: np.squeeze(p, axis=ones))


@variant("reshape")
def squeeze_axis(x, y, z, b, c, d):
    axis = _axis(x, c)
    return Check(
        f"squeeze axis={axis}",
        sn.squeeze(x, axis=axis),
        [x],
        lambda p: np.squeeze(p, axis=axis),
    )


@variant("reshape")
def transpose(x, y, z, b, c, d):
    perm = tuple(np.random.default_rng(c).permutation(x.type.ndim).tolist())
    return Check(f"transpose {perm}", sn.transpose(x, perm), [x], lambda p: np.transpose(p, perm))


# -- scans along an axis: cumulative ops, sorting, arg-reductions -------------------------------
@variant("cumulative")
def cumsum(x, y, z, b, c, d):
    axis = _axis_or_none(x, c, d)
    return Check(
        f"cumsum axis={axis}", sn.cumsum(x, axis=axis), [x], lambda p: np.cumsum(p, axis=axis)
    )


@variant("cumulative")
def cumprod(x, y, z, b, c, d):
    axis = _axis_or_none(x, c, d)
    return Check(
        f"cumprod axis={axis}",
        sn.cumprod(x, axis=axis),
        [x],
        lambda p: np.cumprod(p, axis=axis),
    )


@variant("cumulative")
def cumsum_dtype(x, y, z, b, c, d):
    axis = _axis_or_none(x, c, d)
    dtype = ["int64", "float64"][(d // 3) % 2]
    return Check(
        f"cumsum axis={axis} dtype={dtype}",
        sn.cumsum(x, axis=axis, dtype=dtype),
        [x],
        lambda p: np.cumsum(p, axis=axis, dtype=dtype),
    )


def _sort_axis(x, c, d):
    """An axis, or None (the flattened array) for a 0-d ``x`` and some ``d``; where
    ``_axis_or_none`` says None for an array, the last axis every other time (sort's
    default)."""
    axis = _axis_or_none(x, c, d)
    return -1 if axis is None and x.type.ndim and (d // 3) % 2 else axis


@variant("cumulative")
def sort(x, y, z, b, c, d):
    axis = _sort_axis(x, c, d)
    return Check(
        f"sort axis={axis}",
        sn.sort(x, axis=axis),
        [x],
        lambda p: np.sort(p, axis=axis, kind="stable"),
    )


@variant("cumulative")
def argsort(x, y, z, b, c, d):
    """Ties keep their order (a stable sort), as NumPy's ``kind="stable"``."""
    axis = _sort_axis(x, c, d)
    return Check(
        f"argsort axis={axis}",
        sn.argsort(x, axis=axis),
        [x],
        lambda p: np.argsort(p, axis=axis, kind="stable"),
    )


@variant("cumulative")
def argmax(x, y, z, b, c, d):
    axis = _axis_or_none(x, c, d)
    keep = axis is not None and bool((d // 3) % 2)
    return Check(
        f"argmax axis={axis} keepdims={keep}",
        sn.argmax(x, axis=axis, keepdims=keep),
        [x],
        lambda p: np.argmax(p, axis=axis, keepdims=keep),
    )


@variant("cumulative")
def argmin(x, y, z, b, c, d):
    axis = _axis_or_none(x, c, d)
    keep = axis is not None and bool((d // 3) % 2)
    return Check(
        f"argmin axis={axis} keepdims={keep}",
        sn.argmin(x, axis=axis, keepdims=keep),
        [x],
        lambda p: np.argmin(p, axis=axis, keepdims=keep),
    )


# -- softmax and its kin over an axis (SciPy's, which symnb follows on infinite rows) ----------
def _exp_dtype(dtype) -> np.dtype:
    """The float dtype NumPy's exp gives for ``dtype`` (float16 for 8-bit ints and bool):
    softmax's and log_softmax's."""
    return np.exp(np.zeros((), dtype)).dtype


def _scipy(fn, p, dtype, **kwargs) -> np.ndarray:
    """SciPy's ``fn`` of ``p`` computed in float64, in ``dtype``. SciPy refuses an array
    without elements (the max it subtracts has no identity), where the formula gives one
    without elements for softmax and log_softmax, and for logsumexp log(0) = -inf over an
    empty axis (NumPy's ``logaddexp.reduce``)."""
    q = p.astype(np.float64)
    if q.size == 0:
        if fn is scipy.special.logsumexp:
            return np.log(np.sum(np.exp(q), **kwargs)).astype(dtype)
        return q.astype(dtype)
    return np.asarray(fn(q, **kwargs)).astype(dtype)


@variant("softmax")
def softmax(x, y, z, b, c, d):
    axis = _axis(x, c)
    return Check(
        f"softmax axis={axis}",
        sn.softmax(x, axis=axis),
        [x],
        lambda p: _scipy(scipy.special.softmax, p, _exp_dtype(p.dtype), axis=axis),
    )


@variant("softmax")
def log_softmax(x, y, z, b, c, d):
    axis = _axis(x, c)
    return Check(
        f"log_softmax axis={axis}",
        sn.log_softmax(x, axis=axis),
        [x],
        lambda p: _scipy(scipy.special.log_softmax, p, _exp_dtype(p.dtype), axis=axis),
    )


@variant("softmax")
def logsumexp(x, y, z, b, c, d):
    """Of integers in float64 (a reduction's dtype), of floats in their own dtype; in the
    shape of NumPy's reductions (SciPy's of a 0-d array with keepdims is 1-d)."""
    axis = _axis_or_none(x, c, d)
    keep = bool((d // 3) % 2)
    return Check(
        f"logsumexp axis={axis} keepdims={keep}",
        sn.logsumexp(x, axis=axis, keepdims=keep),
        [x],
        lambda p: _scipy(
            scipy.special.logsumexp,
            p,
            p.dtype if p.dtype.kind == "f" else np.float64,
            axis=axis,
            keepdims=keep,
        ).reshape(np.sum(p, axis=axis, keepdims=keep).shape),
    )


# -- advanced indexing: integer arrays (negative, repeated, empty), take, masks -----------------
#: index arrays valid for every axis length the leaves have (1, 3, 4 and the lengths steps
#: compute from them): negative, repeated, two-dimensional and empty
INDEX_ARRAYS = [[0, -1, 0], [-1], [0, 0, 0, 0], [-1, 0, -1, -1], [[0, -1], [-1, 0]], []]


def _index_array(c):
    return np.array(INDEX_ARRAYS[c % len(INDEX_ARRAYS)], dtype=np.int64)


@variant("advindex")
def index_array(x, y, z, b, c, d):
    i = _index_array(c)
    return Check(f"x[{i.tolist()}]", _at_least(x, 1)[i], [x], lambda p: p[i])


@variant("advindex")
def index_array_last_axis(x, y, z, b, c, d):
    i = _index_array(c)
    return Check(f"x[..., {i.tolist()}]", _at_least(x, 1)[..., i], [x], lambda p: p[..., i])


@variant("advindex")
def index_list(x, y, z, b, c, d):
    """A Python list as the index (NumPy reads a nested one as an array too)."""
    i = _index_array(c).tolist()
    return Check(f"x[list {i}]", _at_least(x, 1)[i], [x], lambda p: p[i])


@variant("advindex")
def index_arrays_2(x, y, z, b, c, d):
    i = _index_array(c)
    return Check(f"x[{i.tolist()}, same]", _at_least(x, 2)[i, i], [x], lambda p: p[i, i])


@variant("advindex")
def take(x, y, z, b, c, d):
    """``take`` in each mode; "wrap" and "clip" with indices beyond the axis either way."""
    mode = ["raise", "wrap", "clip"][d % 3]
    axis = None if (d // 3) % 2 else 0
    i = np.array([-1, 0, 5, -7, 2], np.int64) if mode != "raise" else _index_array(c)
    return Check(
        f"take {i.tolist()} mode={mode} axis={axis}",
        sn.take(_at_least(x, 1), i, axis=axis, mode=mode),
        [x],
        lambda p: np.take(p, i, axis=axis, mode=mode),
    )


@variant("advindex")
def index_computed(x, y, z, b, c, d):
    """An index array the graph computes (zeros, as long as y has elements, from an argsort)."""
    zeros = sn.minimum(sn.argsort(sn.flatten(_at_least(y, 1))), 0)
    return Check(
        "x[minimum(argsort(y.flatten()), 0)]",
        _at_least(x, 1)[zeros],
        [x, y],
        lambda p, q: p[np.zeros(q.size, np.int64)],
    )


@variant("mask")
def mask_positive(x, y, z, b, c, d):
    return Check("x[x > 0]", _at_least(x, 1)[x > 0], [x], lambda p: p[p > 0])


@variant("mask")
def mask_rows(x, y, z, b, c, d):
    """A mask of the first axis (of x's rows whose sum is positive, or a vector's nonzeros)."""
    if _at_least(x, 1).type.ndim == 1:
        return Check("x[x != 0]", x[sn.not_equal(x, 0)], [x], lambda p: p[p != 0])
    return Check("x[sum(x, 1) > 0]", x[sn.sum(x, axis=1) > 0], [x], lambda p: p[p.sum(axis=1) > 0])


@variant("mask")
def set_masked(x, y, z, b, c, d):
    return Check(
        "set_subtensor(x, x < 0, 0)",
        sn.set_subtensor(_at_least(x, 1), x < 0, 0),
        [x],
        lambda p: _numpy_set(p, p < 0, 0),
    )


@variant("mask")
def inc_masked(x, y, z, b, c, d):
    return Check(
        "inc_subtensor(x, x > 0, 1)",
        sn.inc_subtensor(_at_least(x, 1), x > 0, 1),
        [x],
        lambda p: _numpy_set(p, p > 0, 1, inc=True),
    )


# -- set_subtensor / inc_subtensor ----------------------------------------------------------------
SET_INDEXES = [
    (slice(0, 1),),
    (0,),
    (-1,),
    (np.array([0, -1, 0]),),
    (Ellipsis, np.array([-1, -1])),
    (slice(None, None, -1),),
    (Ellipsis, 0),
]


def _numpy_set(p, index, v, inc=False):
    """``x[index] = v`` or ``x[index] += v`` on a copy; an index repeated adds each time (as
    ``np.add.at``, Theano's inc_subtensor), ``v`` cast to x's dtype first."""
    out = np.array(p, copy=True)
    v = np.asarray(v)
    if inc:
        np.add.at(out, index, v.astype(out.dtype, casting="unsafe"))
    else:
        out[index] = v
    return out


def _set_or_inc(x, v, c, d, what: str):
    """``x[index]`` set to or incremented by ``v`` (``d``: which, and which spelling:
    ``sn.set_subtensor(x, index, v)`` or Theano's ``sn.set_subtensor(x[index], v)``)."""
    index = SET_INDEXES[c % len(SET_INDEXES)]
    inc = bool(d % 2)
    fn = sn.inc_subtensor if inc else sn.set_subtensor
    var = fn(x[index], v) if (d // 2) % 2 else fn(x, index, v)
    label = f"{'inc' if inc else 'set'}_subtensor(x, {index}, {what})"
    if isinstance(v, sn.Variable):
        return Check(label, var, [x, v], lambda p, q: _numpy_set(p, index, q, inc=inc))
    return Check(label, var, [x], lambda p: _numpy_set(p, index, v, inc=inc))


@variant("setsub")
def set_number(x, y, z, b, c, d):
    number = [2, -1, 0.5, True][(d // 4) % 4]
    return _set_or_inc(_at_least(x, 1), number, c, d, repr(number))


@variant("setsub")
def set_scalar(x, y, z, b, c, d):
    """A 0-d value computed from another value of the program."""
    v = cast_within_range(sn.max(y), x.type.dtype)
    return _set_or_inc(_at_least(x, 1), v, c, d, "max(y)")


@variant("setsub")
def set_from_x(x, y, z, b, c, d):
    """A value of ``x[index]``'s own shape, computed from it."""
    index = SET_INDEXES[c % len(SET_INDEXES)]
    part = _at_least(x, 1)[index]
    v = ~part if x.type.dtype.kind == "b" else part * 2
    return _set_or_inc(x, v, c, d, "x[index] * 2")


@variant("setsub")
def set_other(x, y, z, b, c, d):
    """Another value of the program as it is (refused where it does not fit)."""
    return _set_or_inc(_at_least(x, 1), y, c, d, "y")


# -- layout: pad, tile, repeat, roll, flip --------------------------------------------------------
@variant("layout")
def pad(x, y, z, b, c, d):
    rng = np.random.default_rng(c)
    widths = [tuple(int(w) for w in rng.integers(0, 3, 2)) for _ in range(x.type.ndim)]
    fill = [0, 7, -1.5][d % 3]
    return Check(
        f"pad {widths} constant_values={fill}",
        sn.pad(x, widths, constant_values=fill),
        [x],
        lambda p: np.pad(p, widths, constant_values=fill),
    )


@variant("layout")
def tile(x, y, z, b, c, d):
    """Repetitions for as many axes as x has or more (new leading axes)."""
    rng = np.random.default_rng(c)
    reps = tuple(int(r) for r in rng.integers(1, 4, max(x.type.ndim, d % 3)))
    return Check(f"tile {reps}", sn.tile(x, reps), [x], lambda p: np.tile(p, reps))


@variant("layout")
def repeat(x, y, z, b, c, d):
    count = int(np.random.default_rng(c).integers(0, 4))
    axis = None if x.type.ndim == 0 or d % 2 else _axis(x, c)
    return Check(
        f"repeat {count} axis={axis}",
        sn.repeat(x, count, axis=axis),
        [x],
        lambda p: np.repeat(p, count, axis=axis),
    )


@variant("layout")
def repeat_counts(x, y, z, b, c, d):
    """One count per element of the first axis (a length-1 array: broadcast to them all)."""
    counts = np.random.default_rng(c).integers(0, 3, 1)
    return Check(
        f"repeat {counts.tolist()} axis=0",
        sn.repeat(_at_least(x, 1), counts, axis=0),
        [x],
        lambda p: np.repeat(p, counts, axis=0),
    )


@variant("layout")
def roll(x, y, z, b, c, d):
    shift = int(np.random.default_rng(c).integers(-5, 6))
    axis = None if x.type.ndim == 0 or d % 2 else _axis(x, c)
    return Check(
        f"roll {shift} axis={axis}",
        sn.roll(x, shift, axis=axis),
        [x],
        lambda p: np.roll(p, shift, axis=axis),
    )


@variant("layout")
def roll_two_axes(x, y, z, b, c, d):
    shift = int(np.random.default_rng(c).integers(-3, 4))
    return Check(
        f"roll ({shift}, {-shift}) axis=(0, 1)",
        sn.roll(_at_least(x, 2), (shift, -shift), axis=(0, 1)),
        [x],
        lambda p: np.roll(p, (shift, -shift), axis=(0, 1)),
    )


@variant("layout")
def flip(x, y, z, b, c, d):
    axis = None if x.type.ndim == 0 or d % 2 else _axis(x, c)
    return Check(f"flip axis={axis}", sn.flip(x, axis=axis), [x], lambda p: np.flip(p, axis=axis))


# -- reductions with NumPy's arguments: axis tuples, keepdims, ddof -----------------------------
REDUCE_AXES_OPS = [
    (sn.max, np.max),
    (sn.min, np.min),
    (sn.mean, np.mean),
    (sn.var, np.var),
    (sn.std, np.std),
    (sn.any, np.any),
    (sn.all, np.all),
    (sn.sum, np.sum),
    (sn.prod, np.prod),
]


@variant("reduce_axes")
def reduce_axes(x, y, z, b, c, d):
    """Over every axis (None or all of them named), one axis, or the first and last."""
    op, numpy_op = REDUCE_AXES_OPS[d % len(REDUCE_AXES_OPS)]
    d //= len(REDUCE_AXES_OPS)
    ndim = x.type.ndim
    kwargs = {"axis": None, "keepdims": bool((d // 4) % 2)}
    if ndim and d % 4 == 1:
        kwargs["axis"] = tuple(range(ndim))
    elif ndim and d % 4 == 2:
        kwargs["axis"] = _axis(x, c)
    elif ndim and d % 4 == 3:
        kwargs["axis"] = (0, -1) if ndim >= 2 else 0
    if op in (sn.var, sn.std) and (d // 8) % 2:
        kwargs["ddof"] = 1
    return Check(
        f"{op.__name__} {kwargs}",
        op(x, **kwargs),
        [x],
        lambda p: np.asarray(numpy_op(p, **kwargs)),
    )


# -- control flow: ifelse on a reduced condition, a tiny scan --------------------------------------
IFELSE_CONDITIONS = [
    (lambda v: sn.sum(v) > 0, lambda p: np.sum(p) > 0),
    (lambda v: sn.max(v) > 0, lambda p: np.max(p) > 0),
    (sn.any, np.any),
    (lambda v: sn.mean(v) > 0, lambda p: np.mean(p) > 0),
]


@variant("ifelse")
def ifelse(x, y, z, b, c, d):
    """``ifelse(reduce(x) > 0, y, z)``; z cast to y's dtype (within range)."""
    cond, numpy_cond = IFELSE_CONDITIONS[d % len(IFELSE_CONDITIONS)]
    if z.type.dtype != y.type.dtype:
        z = cast_within_range(z, y.type.dtype)
    return Check(
        "ifelse",
        sn.ifelse(cond(x), y, z),
        [x, y, z],
        lambda p, q, r: np.array(q if numpy_cond(p) else r),
    )


@variant("scan")
def scan_running_sum(x, y, z, b, c, d):
    out, _ = sn.scan(
        lambda row, acc: acc + row,
        sequences=_at_least(x, 1),
        outputs_info=sn.zeros_like(x[0]),
    )
    return Check("scan: running sum over the rows", out, [x], _running_sum)


def _running_sum(p):
    """The rows' running sum in their dtype (wrapping, or a logical or for bool)."""
    return np.cumsum(p, axis=0).astype(p.dtype) if len(p) else p


@variant("scan")
def scan_running_extreme(x, y, z, b, c, d):
    """A running maximum (or minimum, as ``any(y)`` says: a non-sequence) from the first row."""
    out, _ = sn.scan(
        lambda row, acc, w: sn.where(sn.any(w), sn.maximum(acc, row), sn.minimum(acc, row)),
        sequences=_at_least(x, 1),
        outputs_info=x[0],
        non_sequences=[y],
    )
    return Check("scan: running max/min", out, [x, y], _running_extreme)


def _running_extreme(p, q):
    step = np.maximum if np.any(q) else np.minimum
    return np.stack(list(_accumulate(step, p[0], p)))


@variant("scan")
def scan_decaying_sum(x, y, z, b, c, d):
    """``acc * 0.5 + row`` in float64 over the rows read last first."""
    out, _ = sn.scan(
        lambda row, acc: acc * 0.5 + row,
        sequences=_at_least(x, 1)[::-1],
        outputs_info=sn.cast(x[0], "float64") * 0,
    )
    return Check("scan: decaying sum, last row first", out, [x], _decaying_sum)


def _decaying_sum(p):
    start = p[0].astype(np.float64) * 0
    return np.stack(list(_accumulate(lambda acc, row: acc * 0.5 + row, start, p[::-1])))


def _accumulate(step, acc, rows):
    for row in rows:
        acc = step(acc, row)
        yield acc


# -- counts, shifts and indices known only when the function runs -------------------------------
def _count(y, c):
    """An int64 scalar the graph computes from ``y``: a length, a length minus 3, the number
    of y's nonzero elements, or that minus 2 (so negative too)."""
    choice = c % 4
    if choice == 0 and y.type.ndim:
        return y.shape[0]
    if choice == 1 and y.type.ndim:
        return y.shape[-1] - 3
    nonzero = sn.cast(sn.sum(sn.cast(y, "bool")), "int64")
    return nonzero if choice == 2 else nonzero - 2


@variant("dynamic")
def repeat_n(x, y, z, b, c, d):
    n = sn.maximum(_count(y, c), 0)
    axis = None if x.type.ndim == 0 or d % 2 else _axis(x, c)
    return Check(
        f"repeat(x, n, axis={axis})",
        sn.repeat(x, n, axis=axis),
        [x, n],
        lambda p, q: np.repeat(p, int(q), axis=axis),
    )


@variant("dynamic")
def roll_n(x, y, z, b, c, d):
    n = _count(y, c)
    axis = None if x.type.ndim == 0 or d % 2 else _axis(x, c)
    return Check(
        f"roll(x, n, axis={axis})",
        sn.roll(x, n, axis=axis),
        [x, n],
        lambda p, q: np.roll(p, int(q), axis=axis),
    )


@variant("dynamic")
def tile_n(x, y, z, b, c, d):
    n = sn.minimum(sn.maximum(_count(y, c), 0), 3)
    rest = (1,) * (_at_least(x, 1).type.ndim - 1)
    return Check(
        "tile(x, (n, 1, ...))",
        sn.tile(x, (n, *rest)),
        [x, n],
        lambda p, q: np.tile(p, (int(q), *rest)),
    )


@variant("dynamic")
def take_n(x, y, z, b, c, d):
    """Indices ``[n, 2n, -n]`` in mode "wrap" or "clip" (beyond the axis either way)."""
    n = _count(y, c)
    indices = sn.stack([n, n * 2, -n])
    mode = ["wrap", "clip"][d % 2]
    axis = None if (d // 2) % 2 else 0
    return Check(
        f"take(x, [n, 2n, -n], axis={axis}, mode={mode})",
        sn.take(_at_least(x, 1), indices, axis=axis, mode=mode),
        [x, indices],
        lambda p, q: np.take(p, q, axis=axis, mode=mode),
    )


@variant("dynamic")
def full_n(x, y, z, b, c, d):
    """``full((n, 2), 3)`` in x's dtype, plus x's first element (none where x is empty)."""
    n = sn.maximum(_count(y, c), 0)
    first = sn.flatten(x)[:1]
    return Check(
        "full((n, 2), 3) + x.flatten()[:1]",
        sn.full((n, 2), 3, dtype=x.type.dtype.name) + first,
        [first, n],
        lambda p, q: np.full((int(q), 2), 3, dtype=p.dtype) + p,
    )


@variant("dynamic")
def arange_n(x, y, z, b, c, d):
    n = sn.maximum(_count(y, c), 0)
    return Check("arange(n)", sn.arange(n), [n], lambda q: np.arange(int(q)))


@variant("dynamic")
def repeat_counts_n(x, y, z, b, c, d):
    """A count per element of the first axis, each ``n`` (from 0 to 2)."""
    n = sn.minimum(sn.maximum(_count(y, c), 0), 2)
    counts = sn.full((_at_least(x, 1).shape[0],), n, dtype="int64")
    return Check(
        "repeat(x, full(len(x), n), axis=0)",
        sn.repeat(x, counts, axis=0),
        [x, counts],
        lambda p, q: np.repeat(p, q, axis=0),
    )


@variant("dynamic")
def slice_from_n(x, y, z, b, c, d):
    n = _count(y, c)
    return Check("x[n:]", _at_least(x, 1)[n:], [x, n], lambda p, q: p[int(q) :])


@variant("dynamic")
def reversed_slice_to_n(x, y, z, b, c, d):
    n = _count(y, c)
    return Check("x[::-1][:n]", _at_least(x, 1)[::-1][:n], [x, n], lambda p, q: p[::-1][: int(q)])


# -- matrices: triangles, diagonals, traces, gathers along an axis, outer and inner products ----
@variant("matrix")
def tril(x, y, z, b, c, d):
    k = c % 5 - 2
    return Check(f"tril k={k}", sn.tril(x, k), [x], lambda p: np.tril(p, k))


@variant("matrix")
def triu(x, y, z, b, c, d):
    k = c % 5 - 2
    return Check(f"triu k={k}", sn.triu(x, k), [x], lambda p: np.triu(p, k))


@variant("matrix")
def diag(x, y, z, b, c, d):
    k = c % 5 - 2
    return Check(f"diag k={k}", sn.diag(x, k), [x], lambda p: np.diag(p, k))


@variant("matrix")
def trace(x, y, z, b, c, d):
    k = c % 5 - 2
    return Check(f"trace offset={k}", sn.trace(x, k), [x], lambda p: np.trace(p, k))


@variant("matrix")
def take_along_axis(x, y, z, b, c, d):
    """Gathered by ``argsort(y)`` along the axis (y of x's rank)."""
    axis = _axis(x, c)
    if y.type.ndim != x.type.ndim:
        raise TypeError("take_along_axis needs indices of x's rank")
    indices = sn.argsort(y, axis=axis)
    return Check(
        f"take_along_axis(x, argsort(y), axis={axis})",
        sn.take_along_axis(x, indices, axis=axis),
        [x, indices],
        lambda p, q: np.take_along_axis(p, q, axis=axis),
    )


@variant("matrix")
def outer(x, y, z, b, c, d):
    return Check("outer", sn.outer(x, y), [x, y], np.outer)


@variant("matrix")
def inner(x, y, z, b, c, d):
    return Check("inner", sn.inner(x, y), [x, y], _scaled_by_0d(np.inner))


@variant("matrix")
def swapaxes(x, y, z, b, c, d):
    return Check("swapaxes 0 -1", sn.swapaxes(x, 0, -1), [x], lambda p: np.swapaxes(p, 0, -1))
