"""Joining and splitting along an axis: ``concatenate``, ``stack``, ``split``.

Static shapes add up: concatenating ``(n, 3)`` and ``(m, 3)`` along axis 0 gives ``(n+m, 3)``;
an unknown dim anywhere on the axis makes the result unknown there.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, exact_div, format_dim, is_int, is_known, unify
from symnb.core.dims import add_all as dim_add_all
from symnb.core.dims import sub as dim_sub
from symnb.core.op import Op, _at_user_line
from symnb.core.shapes import hints as shape_hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType, dtype_arg
from symnb.core.variable import Variable, as_variable, describe_value
from symnb.errors import ArgumentError, DTypeError, ShapeError, ShapeIndexError, ShapeTypeError
from symnb.ops._axes import CountedAxes, as_axis, no_out, one_axis
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import zeros_like
from symnb.ops.elemwise import cast
from symnb.ops.layout import flatten
from symnb.ops.shape import expand_dims


class Concatenate(CountedAxes, Op):
    """Join arrays along an existing axis; the other axes must agree."""

    functions = ("concatenate", "stack")
    dtype_rule = "NumPy's promotion of all the inputs"
    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def infer_types(self, *xs):
        shape = list(_agreeing_shape("concatenate", xs, self.axis))
        shape[self.axis] = dim_add_all(x.type.shape[self.axis] for x in xs)
        return [TensorType(probe_dtype(self, self.perform, list(xs)), tuple(shape))]

    def perform(self, *arrays):
        return np.concatenate(arrays, axis=self.axis)

    def grad(self, inputs, outputs, output_grads):
        sizes = _AxisSizes(self.axis)(*inputs)
        static = tuple(x.type.shape[self.axis] for x in inputs)
        parts = Split(self.axis, static).make_node(output_grads[0], sizes).outputs
        return [g if x.type.is_float else None for g, x in zip(parts, inputs)]  # (an integer
        # part passes no gradient)


def _agreeing_shape(op_name, xs, axis) -> list:
    """The unified shape of xs on every axis but ``axis``; a ShapeError names the clash."""
    if not xs:
        raise ShapeError(f"{op_name}: needs at least one array")
    first = xs[0]
    shape = list(first.type.shape)
    for i, x in enumerate(xs[1:], start=1):
        if x.type.ndim != first.type.ndim:
            raise ShapeError(
                f"{op_name}: all arrays need the same number of dims; array 0 is "
                f"{first.describe()}, array {i} is {x.describe()}"
            )
        for a, d in enumerate(x.type.shape):
            if a != axis:
                shape[a] = _unified(op_name, shape[a], d, a, first, x, i)
                shape_warnings.pinned_hook(op_name, first, a, x, a)
    return shape


def _unified(op_name, a, b, axis, first, x, i):
    try:
        return unify(a, b)
    except DimMismatch:
        raise ShapeError(
            f"{op_name}: axis {axis} differs: {format_dim(a)} in array 0 {first.describe()}, "
            f"{format_dim(b)} in array {i} {x.describe()}" + shape_hints.names_hint(a, b)
        ) from None


class Split(CountedAxes, Op):
    """Cut x along ``axis`` into parts whose lengths come at run time as an int vector;
    ``sizes`` holds their static dims."""

    functions = ("split",)
    dtype_rule = "x's dtype"
    __props__ = ("axis", "sizes")

    def __init__(self, axis: int, sizes):
        self.axis, self.sizes = int(axis), tuple(sizes)
        self.nout = len(self.sizes)

    def infer_types(self, x, sizes):
        n = x.type.shape[self.axis]
        total = dim_add_all(self.sizes)
        try:
            unify(n, total)
        except DimMismatch:
            raise ShapeError(
                f"split: parts of {format_dim(total)} in all cannot come from axis "
                f"{self.axis} of {x.describe()}"
            ) from None
        return [x.type.with_shape(self._part_shape(x, s)) for s in self.sizes]

    def _part_shape(self, x, size):
        shape = list(x.type.shape)
        shape[self.axis] = size
        return tuple(shape)

    def perform(self, x, sizes):
        if int(np.sum(sizes)) != np.shape(x)[self.axis]:
            raise ValueError(
                f"split: parts {list(sizes)} do not add up to {np.shape(x)[self.axis]}"
            )
        cuts = np.cumsum(sizes)[:-1]
        parts = tuple(part.copy() for part in np.split(x, cuts, axis=self.axis))
        return parts if len(parts) > 1 else parts[0]  # one output: one array, not a tuple

    def grad(self, inputs, outputs, output_grads):
        parts = [zeros_like(z) if g is None else g for z, g in zip(outputs, output_grads)]
        return [Concatenate(self.axis)(*parts), None]


class _AxisSizes(CountedAxes, Op):
    """The lengths of the inputs along ``axis``, as an int64 vector (for gradients)."""

    __props__ = ("axis",)
    differentiable = False

    def __init__(self, axis):
        self.axis = axis

    def infer_types(self, *xs):
        return [TensorType("int64", (len(xs),))]

    def perform(self, *arrays):
        return np.array([np.shape(a)[self.axis] for a in arrays], dtype=np.int64)

    def grad(self, inputs, outputs, output_grads):
        return [None] * len(inputs)


class _SplitSizes(CountedAxes, Op):
    """The part lengths for ``np.split(x, spec, axis)`` at run time (spec: int or indices)."""

    __props__ = ("axis", "spec")
    differentiable = False

    def __init__(self, axis, spec):
        self.axis, self.spec = axis, spec

    def infer_types(self, x):
        n = self.spec if isinstance(self.spec, int) else len(self.spec) + 1
        return [TensorType("int64", (n,))]

    def perform(self, x):
        parts = np.split(np.empty(np.shape(x)[self.axis]), self.spec)
        return np.array([len(p) for p in parts], dtype=np.int64)

    def grad(self, inputs, outputs, output_grads):
        return [None]


# -- public functions ----------------------------------------------------------------------
def concatenate(xs, axis: int = 0, out=None, *, dtype=None, casting="same_kind") -> Variable:
    """Join arrays along an existing axis (``np.concatenate``; ``axis=None`` flattens);
    ``dtype`` and ``casting`` are NumPy's (each array cast to ``dtype`` where the rule
    ``casting`` allows it)."""
    xs = _arrays("concatenate", xs)
    if axis is None:
        xs, axis = [flatten(x) for x in xs], 0
    if not xs:
        raise _at_user_line(ShapeError("concatenate: needs at least one array"))
    no_out(out, "concatenate", xs[0])
    xs = _cast_all("concatenate", xs, dtype, casting)
    if xs[0].type.ndim == 0:
        raise _at_user_line(ShapeError(f"concatenate: cannot join 0-d {xs[0].describe()}"))
    axis = one_axis(axis, xs[0].type.ndim, "concatenate", xs[0])
    return Concatenate(axis)(*xs)


def stack(xs, axis: int = 0, out=None, *, dtype=None, casting="same_kind") -> Variable:
    """Join arrays of one shape along a new axis (``np.stack``); ``dtype`` and ``casting``
    as in :func:`concatenate`."""
    xs = _arrays("stack", xs)
    if not xs:
        raise _at_user_line(ShapeError("stack: needs at least one array"))
    no_out(out, "stack", xs[0])
    xs = _cast_all("stack", xs, dtype, casting)
    try:
        _agreeing_shape("stack", xs, axis=None)
    except ShapeError as exc:
        raise _at_user_line(exc) from None
    ndim, axis = xs[0].type.ndim + 1, as_axis(axis)
    if not is_int(axis):
        raise _at_user_line(ShapeTypeError(f"stack: axis is one int, not {axis!r}"))
    if not -ndim <= axis < ndim:
        raise _at_user_line(ShapeIndexError(f"stack: axis {axis} is out of range for {ndim} dims"))
    # the check above warned about the user's operands (a name pinned by another array's
    # size): the concatenate of their expanded copies would say it again, of arrays the
    # user never wrote
    with shape_warnings.quiet():
        return Concatenate(axis % ndim)(*[expand_dims(x, axis % ndim) for x in xs])


def _arrays(op: str, xs) -> list[Variable]:
    """The values ``op`` joins, each as a variable: ``xs`` is a list or tuple of them (any
    iterable; NumPy's array joins its rows). One variable, a number or a string is an
    ArgumentError naming ``op`` (it was Python's "'int' object is not iterable")."""
    if isinstance(xs, (Variable, str)) or not hasattr(type(xs), "__iter__"):
        raise _at_user_line(
            ArgumentError(
                f"{op}: the arrays to join are a list or tuple of arrays, not {describe_value(xs)}"
            )
        )
    return [as_variable(x) for x in xs]


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _cast_all(op: str, xs: list[Variable], dtype, casting) -> list[Variable]:
    """The arrays NumPy's ``dtype=`` and ``casting=`` give a join: each converted to
    ``dtype`` (else to the dtype the join promotes them to) where the rule ``casting``
    allows it; an array it does not allow is a DTypeError naming it, as NumPy refuses it."""
    if casting not in _CASTINGS:
        raise _at_user_line(
            ArgumentError(f"{op}: casting is one of {', '.join(_CASTINGS)}, not {casting!r}")
        )
    if dtype is None and casting == "same_kind":  # (promotion itself is same_kind)
        return xs
    target = np.result_type(*(x.type.dtype for x in xs)) if dtype is None else None
    target = dtype_arg(dtype, op, target)
    for x in xs:
        if not np.can_cast(x.type.dtype, target, casting):
            raise _at_user_line(
                DTypeError(
                    f"{op}: cannot cast {x.describe()} to {target.name} according to the rule "
                    f"{casting!r} (NumPy's casting=)\n  hint: casting='unsafe' converts anyway"
                )
            )
    return [cast(x, target) for x in xs]


def split(x, indices_or_sections, axis: int = 0) -> list[Variable]:
    """``np.split``: an int N cuts into N equal parts (it must divide the length); indices
    (a list, a tuple or an int array) give NumPy's parts ``x[:i0], x[i0:i1], ..., x[ik:]``
    along the axis, slices as in NumPy: an index past the end gives an empty part, a
    negative one counts from the end, and indices out of order give empty or overlapping
    parts. Returns a list of variables."""
    x = as_variable(x)
    axis = one_axis(axis, x.type.ndim, "split", x)
    spec = _split_spec(indices_or_sections, x)
    if isinstance(spec, tuple) and (any(i < 0 for i in spec) or list(spec) != sorted(spec)):
        return _slices(x, axis, spec)
    sizes = _static_part_sizes(x, axis, spec)
    return list(Split(axis, sizes).make_node(x, _SplitSizes(axis, spec)(x)).outputs)


def _split_spec(indices_or_sections, x):
    """The number of sections (an int) or the indices (a tuple of ints), as NumPy reads
    them: a 0-d int array is a number, a 1-d one indices."""
    where = f"split of {x.describe()}"
    spec = indices_or_sections
    if isinstance(spec, np.ndarray) and spec.ndim <= 1 and spec.dtype.kind in "iu":
        spec = spec.tolist()
    if is_int(spec):
        if spec <= 0:
            message = f"{where}: the number of sections must be > 0, not {spec}"
            raise _at_user_line(ShapeError(message))
        return int(spec)
    if not isinstance(spec, (tuple, list)) or not all(map(is_int, spec)):
        raise _at_user_line(
            ShapeTypeError(
                f"{where}: give a number of sections or a list or array of int indices, "
                f"not {indices_or_sections!r}"
            )
        )
    return tuple(int(i) for i in spec)


def _slices(x, axis: int, cuts: tuple) -> list[Variable]:
    """NumPy's parts where the indices count from the end or are out of order: the slices
    between consecutive bounds along ``axis``, which may be empty or overlap (np.split of 6
    elements at ``[3, 2]`` is ``x[:3], x[3:2], x[2:]``, 3, 0 and 4 elements)."""
    bounds = (0, *cuts, None)
    lead = (slice(None),) * axis
    return [x[(*lead, slice(a, b))] for a, b in zip(bounds, bounds[1:])]


def _static_part_sizes(x, axis, spec) -> tuple:
    n = x.type.shape[axis]
    if isinstance(spec, int):
        if is_known(n) and n % spec:
            raise _at_user_line(
                ShapeError(f"split: axis {axis} of {x.describe()} does not divide into {spec}")
            )
        return (exact_div(n, spec),) * spec
    # each part is a slice x[a:b], clipped at the end as NumPy's are: an index past the end
    # gives empty parts, and over a length not known a cut is known only at 0 (as x[:1]'s
    # length is unknown there)
    cuts = tuple(min(i, n) if is_known(n) else (0 if i == 0 else None) for i in spec)
    bounds = (0, *cuts, n)
    return tuple(
        None if a is None or b is None else dim_sub(b, a) for a, b in zip(bounds, bounds[1:])
    )
