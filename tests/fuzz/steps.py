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
    """A step's value and NumPy's function of its operands' values, the value it must have.

    ``same_dtype``: NumPy's dtype is symnb's too; where it is not (a float64 loop NumPy
    computes for what symnb keeps in the operand's float dtype), NumPy's value is cast to
    symnb's dtype before they are compared."""

    label: str
    var: object
    operands: list
    numpy: Callable
    same_dtype: bool = True


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
