"""Layout ops: flatten, flip, roll, pad, repeat, tile, triangles and diagonals, dimshuffle
(``repeat``, ``tile`` and ``roll`` themselves are built in ``repeats.py``, which also takes
counts known only at run time).

Each gradient helper (``_Unpad``, ``_SumRepeats``, ...) takes the forward input as a second
operand only for its shape, so the gradient keeps the input's static dims (names included).
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.dims import add as dim_add
from symnb.core.dims import is_known, product
from symnb.core.dims import mul as dim_mul
from symnb.core.op import Op, _at_user_line
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError, InputError, ShapeError, ShapeTypeError
from symnb.ops._axes import CountedAxes, diagonal_offset, normalize_axis
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import Sum
from symnb.ops.shape import DimShuffle, _LikeOp, reshape_like


# -- layout ops ----------------------------------------------------------------------------
class Flatten(Op):
    """Keep the first ``ndim - 1`` axes and collapse the rest into one (``ndim=1``: NumPy's)."""

    dtype_rule = "x's dtype"
    __props__ = ("ndim",)

    def __init__(self, ndim: int = 1):
        self.ndim = int(ndim)

    def infer_types(self, x):
        if not 1 <= self.ndim <= max(x.type.ndim, 1):
            raise ShapeError(f"flatten: cannot make {x.describe()} {self.ndim}-d")
        keep, rest = x.type.shape[: self.ndim - 1], x.type.shape[self.ndim - 1 :]
        return [x.type.with_shape(keep + (product(rest),))]

    def perform(self, x):
        x = np.asarray(x)
        keep = x.shape[: self.ndim - 1]
        return x.reshape(keep + (int(np.prod(x.shape[self.ndim - 1 :])),))

    def grad(self, inputs, outputs, output_grads):
        return [reshape_like(output_grads[0], inputs[0])]


class Flip(CountedAxes, Op):
    """Reverse the order of elements along the axes."""

    dtype_rule = "x's dtype"
    __props__ = ("axis",)
    keeps_shape = True

    def __init__(self, axis):
        self.axis = tuple(axis)

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        return np.flip(x, self.axis).copy()

    def grad(self, inputs, outputs, output_grads):
        return [Flip(self.axis)(output_grads[0])]


class Roll(CountedAxes, Op):
    """Shift elements along axes by int shifts, wrapping around (``axis=None``: over the
    flattened array); ``sn.roll`` by a shift known only at run time gathers instead (``take``)."""

    dtype_rule = "x's dtype"
    __props__ = ("shift", "axis")

    def __init__(self, shift, axis):
        self.shift, self.axis = shift, axis

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        return np.roll(x, self.shift, self.axis)

    def grad(self, inputs, outputs, output_grads):
        back = -self.shift if isinstance(self.shift, int) else tuple(-s for s in self.shift)
        return [Roll(back, self.axis)(output_grads[0])]


class Pad(Op):
    """Constant padding: ``widths`` holds (before, after) for every axis; ``value`` is one
    number, or (before, after) numbers per axis (``np.pad``'s ``constant_values``)."""

    dtype_rule = "x's dtype (the constant is cast to it)"
    __props__ = ("widths", "value")

    def __init__(self, widths, value=0):
        self.widths, self.value = tuple(map(tuple, widths)), value

    def infer_types(self, x):
        shape = tuple(dim_add(d, b + a) for d, (b, a) in zip(x.type.shape, self.widths))
        dtype = probe_dtype(self, self.perform, [x])
        return [TensorType(dtype, shape)]

    def perform(self, x):
        x = np.asarray(x)
        return np.pad(x, self.widths, mode="constant", constant_values=self.value)

    def grad(self, inputs, outputs, output_grads):
        return [_Unpad(self.widths)(output_grads[0], inputs[0])]


class _Unpad(_LikeOp):
    """The gradient of Pad: g with the padding cut off (like's shape)."""

    __props__ = ("widths",)

    def __init__(self, widths):
        self.widths = widths

    def perform(self, g, like):
        return g[tuple(slice(b, g.shape[i] - a) for i, (b, a) in enumerate(self.widths))].copy()

    def grad(self, inputs, outputs, output_grads):
        return [Pad(self.widths, 0)(output_grads[0]), None]


class Repeat(CountedAxes, Op):
    """Repeat each element ``repeats`` (an int) times along ``axis``; ``sn.repeat`` by a count
    known only at run time broadcasts and reshapes, by counts per element it gathers."""

    dtype_rule = "x's dtype"
    __props__ = ("repeats", "axis")

    def __init__(self, repeats: int, axis: int):
        self.repeats, self.axis = int(repeats), int(axis)

    def infer_types(self, x):
        shape = list(x.type.shape)
        shape[self.axis] = dim_mul(shape[self.axis], self.repeats)
        return [x.type.with_shape(tuple(shape))]

    def perform(self, x):
        return np.repeat(x, self.repeats, self.axis)

    def grad(self, inputs, outputs, output_grads):
        return [_SumRepeats(self.repeats, self.axis)(output_grads[0], inputs[0])]


class _SumRepeats(CountedAxes, _LikeOp):
    """The gradient of Repeat: each run of ``repeats`` elements summed (like's shape)."""

    __props__ = ("repeats", "axis")

    def __init__(self, repeats, axis):
        self.repeats, self.axis = repeats, axis

    def perform(self, g, like):
        n, a = np.shape(like)[self.axis], self.axis
        runs = g.reshape(g.shape[:a] + (n, self.repeats) + g.shape[a + 1 :])
        return runs.sum(axis=a + 1)

    def grad(self, inputs, outputs, output_grads):
        return [Repeat(self.repeats, self.axis)(output_grads[0]), None]


class Tile(Op):
    """Repeat the whole array ``reps[i]`` (ints) times along axis i (as many reps as axes);
    ``sn.tile`` by reps known only at run time broadcasts and reshapes instead."""

    dtype_rule = "x's dtype"
    __props__ = ("reps",)

    def __init__(self, reps):
        self.reps = tuple(int(r) for r in reps)

    def infer_types(self, x):
        if len(self.reps) != x.type.ndim:
            raise ShapeError(f"tile: needs one rep per axis of {x.describe()}")
        return [x.type.with_shape(tuple(map(dim_mul, x.type.shape, self.reps)))]

    def perform(self, x):
        return np.tile(x, self.reps)

    def grad(self, inputs, outputs, output_grads):
        return [_SumTiles(self.reps)(output_grads[0], inputs[0])]


class _SumTiles(_LikeOp):
    """The gradient of Tile: the tiles summed onto one (like's shape)."""

    __props__ = ("reps",)

    def __init__(self, reps):
        self.reps = reps

    def perform(self, g, like):
        split = [n for pair in zip(self.reps, np.shape(like)) for n in pair]
        return g.reshape(split).sum(axis=tuple(range(0, len(split), 2)))

    def grad(self, inputs, outputs, output_grads):
        return [Tile(self.reps)(output_grads[0]), None]


# -- triangles and diagonals ---------------------------------------------------------------
class _Triangle(Op):
    """tril/triu over the last two axes; ``k`` shifts the diagonal (k > 0: above). A vector
    is each row of a square matrix first, as in NumPy (``np.tril([1, 2, 3])`` is 3 x 3). A k
    known only when the function runs (an integer scalar of the graph, as Theano's ``Tri``
    takes it) is a second input, ``k`` then None."""

    dtype_rule = "x's dtype"
    __props__ = ("k",)
    impl = None

    def __init__(self, k: int | None = 0):
        self.k = None if k is None else int(k)

    def infer_types(self, x, *k):
        if len(k) != (self.k is None):
            raise ShapeError(f"{self.op_name()}: the diagonal k is given as a prop or an input")
        if k and (k[0].type.ndim != 0 or k[0].type.dtype.kind not in "iu"):
            raise DTypeError(
                f"{self.op_name()}: k (the diagonal) is an integer scalar, not {k[0].describe()}"
            )
        if x.type.ndim == 0:
            raise ShapeError(f"{self.op_name()}: needs at least 1 dim, {x.describe()} is 0-d")
        if x.type.ndim == 1:  # (NumPy's: the vector broadcast to its square)
            return [x.type.with_shape(x.type.shape * 2)]
        return [x.type]

    def perform(self, x, *k):
        return type(self).impl(x, int(k[0]) if k else self.k)

    def grad(self, inputs, outputs, output_grads):
        g = type(self)(self.k)(output_grads[0], *inputs[1:])
        g = g if inputs[0].type.ndim > 1 else Sum((0,))(g)  # (a vector: its rows summed)
        return [g] + [None] * (len(inputs) - 1)


class Tril(_Triangle):
    """Lower triangle: elements above the k-th diagonal set to zero."""

    impl = staticmethod(np.tril)


class Triu(_Triangle):
    """Upper triangle: elements below the k-th diagonal set to zero."""

    impl = staticmethod(np.triu)


class Diag(Op):
    """A square matrix with the vector on its k-th diagonal (``np.diag`` of a vector)."""

    dtype_rule = "x's dtype"
    __props__ = ("k",)

    def __init__(self, k: int = 0):
        self.k = int(k)

    def infer_types(self, v):
        n = dim_add(v.type.shape[0], abs(self.k))
        return [v.type.with_shape((n, n))]

    def perform(self, v):
        return np.diag(v, self.k)

    def grad(self, inputs, outputs, output_grads):
        return [Diagonal(self.k)(output_grads[0])]


class Diagonal(Op):
    """The k-th diagonal of a matrix, as a vector (``np.diag`` of a matrix)."""

    functions = ("diag",)
    dtype_rule = "x's dtype"
    __props__ = ("k",)

    def __init__(self, k: int = 0):
        self.k = int(k)

    def infer_types(self, x):
        rows, cols = x.type.shape
        return [x.type.with_shape((_diagonal_length(rows, cols, self.k),))]

    def perform(self, x):
        return np.diagonal(x, self.k).copy()

    def grad(self, inputs, outputs, output_grads):
        return [_EmbedDiagonal(self.k)(output_grads[0], inputs[0])]


def _diagonal_length(rows, cols, k):
    """min(rows, cols - k) for k >= 0, min(rows + k, cols) below; never negative."""
    if k == 0 and rows == cols:
        return rows
    if is_known(rows) and is_known(cols):
        return max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    return None


class _EmbedDiagonal(_LikeOp):
    """The gradient of Diagonal: zeros of like's shape with g on the k-th diagonal."""

    __props__ = ("k",)

    def __init__(self, k):
        self.k = k

    def perform(self, g, like):
        out = np.zeros(np.shape(like), dtype=g.dtype)
        index = np.arange(len(g))
        out[index + max(-self.k, 0), index + max(self.k, 0)] = g
        return out

    def grad(self, inputs, outputs, output_grads):
        return [Diagonal(self.k)(output_grads[0]), None]


# -- functions for the layout ops ----------------------------------------------------------
def dimshuffle(x, *order) -> Variable:
    """Theano's dimshuffle: ``order`` lists input axes and ``"x"`` for new length-1 axes;
    input axes left out are dropped (they must have length 1). ``dimshuffle(m, 1, "x", 0)``."""
    x = as_variable(x)
    if len(order) == 1 and isinstance(order[0], (list, tuple)):
        order = tuple(order[0])
    for a in order:
        if a != "x" and (not isinstance(a, numbers.Integral) or not 0 <= a < x.type.ndim):
            raise _at_user_line(
                ShapeError(
                    f"dimshuffle: {a!r} is neither 'x' nor an axis of {x.describe()} "
                    + (f"(0..{x.type.ndim - 1})" if x.type.ndim else "(it is 0-d: no axes)")
                )
            )
    return DimShuffle(tuple(a if a == "x" else int(a) for a in order))(x)


def flatten(x, ndim: int = 1) -> Variable:
    """x as a vector (``ndim=1``), or with its axes from ``ndim - 1`` on collapsed (Theano)."""
    return Flatten(_int(ndim, "flatten", "ndim"))(as_variable(x))


def flip(x, axis=None) -> Variable:
    """Reverse the order of elements along ``axis`` (int, tuple, or None for all)."""
    x = as_variable(x)
    return Flip(normalize_axis(axis, x.type.ndim, "flip", x))(x)


def pad(x, pad_width, mode="constant", constant_values=0) -> Variable:
    """Pad with a constant; ``pad_width`` as in ``np.pad`` (int, (before, after), per axis)."""
    x = as_variable(x)
    if mode != "constant":  # (NumPy's other modes, a callable: a NotImplementedError still)
        raise _at_user_line(
            NotImplementedError(
                f"pad of {x.describe()}: only mode='constant' is implemented, not {mode!r}"
            )
        )
    try:
        widths = np.broadcast_to(np.asarray(pad_width), (x.type.ndim, 2))
    except ValueError:
        raise _at_user_line(ShapeError(f"pad: {pad_width!r} does not fit {x.describe()}")) from None
    if widths.dtype.kind not in "iu" or (widths < 0).any():
        raise _at_user_line(ShapeError(f"pad: widths must be non-negative ints, not {pad_width!r}"))
    value = _pad_value(constant_values, x)
    if x.type.ndim == 0:  # no axis to pad: x itself, as np.pad(np.array(3.0), 1)
        return x
    return Pad(tuple((int(b), int(a)) for b, a in widths), value)(x)


def _pad_value(constant_values, x: Variable):
    """``constant_values`` as a hashable prop: one number, or (before, after) numbers per
    axis, NumPy's broadcasting of the value to (ndim, 2); a number where all are one."""
    if isinstance(constant_values, Constant):
        constant_values = constant_values.value
    if isinstance(constant_values, Variable):
        raise _at_user_line(
            InputError(
                f"pad: constant_values must be numbers known when the graph is built, not "
                f"{constant_values.describe()}; for a symbolic value, pad with 0 and add "
                "value * sn.pad(sn.zeros_like(x), widths, constant_values=1)"
            )
        )
    values = np.asarray(constant_values)
    if values.dtype.kind not in "biufc":
        raise _at_user_line(
            InputError(f"pad: constant_values must be numbers, not {constant_values!r}")
        )
    if values.ndim == 0:
        return values.item()
    try:
        values = np.broadcast_to(values, (x.type.ndim, 2))
    except ValueError:
        raise _at_user_line(
            ShapeError(
                f"pad: constant_values {constant_values!r} does not fit {x.describe()}: "
                f"one number, (before, after), or one (before, after) per axis ({x.type.ndim})"
            )
        ) from None
    if values.size == 0:  # a 0-d x: nothing is padded
        return 0
    if (values == values.flat[0]).all():
        return values.flat[0].item()
    return tuple((b.item(), a.item()) for b, a in values)


def tril(x, k=0) -> Variable:
    """Lower triangle of the last two axes (zero above the k-th diagonal: an int, or an
    integer scalar variable)."""
    return _triangle(Tril, x, k, "tril")


def triu(x, k=0) -> Variable:
    """Upper triangle of the last two axes (zero below the k-th diagonal: an int, or an
    integer scalar variable)."""
    return _triangle(Triu, x, k, "triu")


def _triangle(cls, x, k, name: str) -> Variable:
    """``cls(k)(x)`` for a k known now (an int, a constant), else ``cls(None)(x, k)``."""
    x = as_variable(x)
    if isinstance(k, Constant) and k.type.ndim == 0 and k.type.dtype.kind in "iu":
        k = k.value.item()
    if not isinstance(k, Variable):
        return cls(diagonal_offset(k, name, "k", x))(x)
    if k.type.ndim != 0 or k.type.dtype.kind not in "iu":
        raise _at_user_line(
            DTypeError(
                f"{name} of {x.describe()}: k (the diagonal) is an int or an integer scalar, "
                f"not {k.describe()}"
            )
        )
    return cls(None)(x, k)


def diag(v, k: int = 0) -> Variable:
    """``np.diag``: a vector gives a matrix with it on the k-th diagonal; a matrix gives its
    k-th diagonal (an int)."""
    v = as_variable(v)
    k = diagonal_offset(k, "diag", "k", v)
    if v.type.ndim == 1:
        return Diag(k)(v)
    if v.type.ndim == 2:
        return Diagonal(k)(v)
    raise _at_user_line(ShapeError(f"diag: needs a vector or a matrix, got {v.describe()}"))


def _int(value, op, what) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise _at_user_line(ShapeTypeError(f"{op}: {what} must be an int, not {value!r}"))
    return int(value)
