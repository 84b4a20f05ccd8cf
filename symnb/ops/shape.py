"""Shape ops: the symbolic shape, axis permutations with new/dropped axes, reshape, and the
broadcast helpers that gradients use to map a gradient back onto its input's shape."""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.dims import (
    exact_div,
    format_dim,
    format_shape,
    is_int,
    is_known,
    names_in,
    never_multiple_of,
    product,
    provably_differ,
    too_large,
    unordered,
)
from symnb.core.op import Op, _at_user_line
from symnb.core.shapes import hints as shape_hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ShapeError, ShapeIndexError, ShapeTypeError
from symnb.ops._axes import CountedAxes, as_axis, normalize_axis
from symnb.ops.numpy_api import numpy_keywords


class Shape(Op):
    """The runtime shape of x, an int64 vector."""

    dtype_rule = "int64"
    differentiable = False

    def output_label(self, node):
        """``x.shape`` for the shape of a variable named ``x``."""
        source = node.inputs[0]
        return f"{source.label}.shape" if source.label else None

    def infer_types(self, x):
        return [TensorType("int64", (x.type.ndim,))]

    def perform(self, x):
        return np.array(np.shape(x), dtype=np.int64)

    def grad(self, inputs, outputs, output_grads):
        return [None]


class ResultShape(Op):
    """The runtime shape of ``op``'s result, an int64 vector of ``ndim`` entries, from the
    shapes of op's inputs (the int64 vectors given, such as ``shape(x)``), by
    ``op.result_shape``, which raises where op would for these shapes (a matmul's inner
    dims that differ): no value is read, so the rewrite ``shape_computed_from_inputs`` drops
    a value (a matmul, a reduction) that only ops reading its shape read."""

    dtype_rule = "int64"
    differentiable = False
    __props__ = ("op", "ndim")

    def __init__(self, op, ndim: int):
        self.op, self.ndim = op, int(ndim)

    def infer_types(self, *shapes):
        return [TensorType("int64", (self.ndim,))]

    def perform(self, *shapes):
        shapes = [tuple(int(n) for n in s) for s in shapes]
        return np.array(self.op.result_shape(*shapes), dtype=np.int64).reshape(self.ndim)

    def grad(self, inputs, outputs, output_grads):
        return [None] * len(inputs)


class RuleShape(Op):
    """The runtime shape of output ``index`` of ``op`` (``ndim`` axes), by op's own shape
    rule (``infer_types``) applied when the function runs to stand-ins of its inputs of the
    run's shapes, an int64 vector: -1 for an axis the rule leaves unknown, and every axis
    where the rule refuses the inputs (the computation raises its own error). ``kinds`` has
    one ``(dtype, by_value)`` per input of op: a float (or complex) input is given as its shape (an
    int64 vector), an integer or boolean one as its value, which some rules read (a mask's
    count, a scan's ``n_steps``); an array of them stands in by its shape
    first, by its value (a constant) only where that leaves an axis unknown. No value of op
    is computed: for the eval-point check (``grad.points``) of a value the product never
    computes and whose lengths no expression of known lengths gives (``x[i]``,
    ``x[1:, ::2]``, a scan's rows, ``svd``)."""

    dtype_rule = "int64"
    differentiable = False
    __props__ = ("op", "index", "ndim", "kinds")

    def __init__(self, op, index: int, ndim: int, kinds: tuple):
        self.op, self.index, self.ndim = op, int(index), int(ndim)
        self.kinds = tuple((str(dtype), bool(by_value)) for dtype, by_value in kinds)

    def __str__(self):
        return f"rule_shape[{self.op}, {self.index}]"

    __repr__ = __str__

    def infer_types(self, *inputs):
        if len(inputs) != len(self.kinds):
            raise ShapeError(f"{self}: {len(inputs)} inputs for {len(self.kinds)}")
        return [TensorType("int64", (self.ndim,))]

    def perform(self, *inputs):
        shape = self._applied(inputs, arrays_by_value=False)
        arrays = any(by_value and np.ndim(v) for v, (_, by_value) in zip(inputs, self.kinds))
        if None in shape and arrays:
            shape = self._applied(inputs, arrays_by_value=True)
        return np.array([-1 if d is None else d for d in shape], dtype=np.int64)

    def _applied(self, inputs, arrays_by_value: bool) -> tuple:
        """The rule's dims for the output (ints, None where unknown)."""
        stand_ins = []
        for value, (dtype, by_value) in zip(inputs, self.kinds):
            if by_value and (arrays_by_value or np.ndim(value) == 0):
                stand_ins.append(Constant(np.asarray(value), dtype=dtype))
                continue
            dims = np.shape(value) if by_value else tuple(int(n) for n in value)
            stand_ins.append(Variable(TensorType(dtype, tuple(dims)), source=None))
        try:
            with shape_warnings.quiet():
                types = self.op.infer_types(*stand_ins)
        except Exception:  # noqa: BLE001 - inputs the rule refuses: the computation says why
            return (None,) * self.ndim
        dims = types[self.index].shape
        if len(dims) != self.ndim:
            return (None,) * self.ndim
        return tuple(d if isinstance(d, int) else None for d in dims)

    def grad(self, inputs, outputs, output_grads):
        return [None] * len(inputs)


class DimShuffle(Op):
    """Permute axes, insert new length-1 axes (``"x"``) and drop length-1 axes.

    ``order`` lists, for each output axis, the input axis it comes from or ``"x"``; input
    axes not listed are dropped and must have length 1.
    """

    functions = ("dimshuffle", "transpose", "expand_dims", "squeeze")
    dtype_rule = "x's dtype"
    __props__ = ("order",)

    def __init__(self, order):
        self.order = tuple(order)

    def axis_sources(self, node):
        return [[] if a == "x" else [(0, a)] for a in self.order]

    def output_label(self, node):
        """``W.T`` for the transpose of a matrix named ``W``."""
        source = node.inputs[0]
        if source.label and self.order == (1, 0):
            return f"{source.label}.T"
        return None

    def infer_types(self, x):
        kept = [a for a in self.order if a != "x"]
        if sorted(kept) != sorted(set(kept)) or any(a >= x.type.ndim for a in kept):
            raise ShapeError(f"{self}: bad permutation for {x.describe()}")
        for axis in set(range(x.type.ndim)) - set(kept):
            if x.type.shape[axis] not in (1, None):
                raise ShapeError(
                    f"{self}: cannot drop axis {axis} of {x.describe()}: its length is not 1"
                )
        shape = tuple(1 if a == "x" else x.type.shape[a] for a in self.order)
        return [x.type.with_shape(shape)]

    def result_shape(self, shape):
        """The result's shape for an input of ``shape`` (``ResultShape``): NumPy's error
        where a dropped axis is not of length 1."""
        kept = [a for a in self.order if a != "x"]
        for axis in set(range(len(shape))) - set(kept):
            if shape[axis] != 1:
                raise ValueError(
                    f"{self}: cannot drop axis {axis} of an array of shape "
                    f"{format_shape(shape)}: its length is not 1"
                )
        return tuple(1 if a == "x" else shape[a] for a in self.order)

    def perform(self, x):
        kept = [a for a in self.order if a != "x"]
        dropped = tuple(sorted(set(range(np.ndim(x))) - set(kept)))
        x = np.squeeze(x, axis=dropped) if dropped else np.asarray(x)
        rank = {a: i for i, a in enumerate(sorted(kept))}
        x = np.transpose(x, [rank[a] for a in kept])
        return np.reshape(x, [1 if a == "x" else x.shape[kept.index(a)] for a in self.order])

    def grad(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        kept = [a for a in self.order if a != "x"]
        g = _shuffled(g, [i for i, a in enumerate(self.order) if a != "x"])
        position = {a: j for j, a in enumerate(kept)}
        return [_shuffled(g, [position.get(a, "x") for a in range(x.type.ndim)])]


def _shuffled(g, order):
    """g with its axes rearranged; no node when the order keeps every axis in place."""
    order = tuple(order)
    return g if order == tuple(range(g.type.ndim)) else DimShuffle(order)(g)


class Reshape(Op):
    """Reshape to ``target``: ints, at most one ``-1``, names of the input's own dims, and
    ``None`` for a size given as an extra int scalar input (``x.shape[0]``, ``n * 2``).

    ``name_axes`` says where each named target dim is in the input, to size it at run time;
    the static dim of a given size is what its graph says (``x.shape[0]`` is ``batch``).
    """

    dtype_rule = "x's dtype"
    __props__ = ("target", "name_axes")

    def __init__(self, target, name_axes=()):
        self.target, self.name_axes = tuple(target), tuple(name_axes)

    def infer_types(self, x, *sizes):
        target = self._static_target(x, sizes)
        if list(target).count(-1) > 1:
            raise ShapeError(f"reshape: at most one -1 in {format_shape(public_dims(target))}")
        own = tuple(axis_size(x, k) for k in range(x.type.ndim))
        shape = public_dims(_out_shape(own, target, x.type.shape))
        shape_warnings.reshape_hook(x, public_dims(target), shape)
        return [x.type.with_shape(shape)]

    def axis_sources(self, node):
        """The leading axis is kept when the target's first size is x's first dim."""
        x, *sizes = node.inputs
        target = self._static_target(x, sizes)
        kept = bool(target) and x.type.ndim > 0 and target[0] == axis_size(x, 0)
        return [[(0, 0)] if kept and k == 0 else [] for k in range(len(target))]

    def _static_target(self, x, sizes) -> tuple:
        """The target with each given size replaced by the dim it stands for."""
        names = [d for d in x.type.shape if isinstance(d, str)]
        for d in self.target:
            if isinstance(d, str) and d not in names:
                raise ShapeError(f"reshape: {d!r} is not a named dim of {x.describe()}")
        if len(sizes) != self.target.count(None):
            raise ShapeError(f"reshape: {self.target} needs one size input per None")
        given = iter(_size_of_input(v) for v in sizes)
        return tuple(next(given) if d is None else d for d in self.target)

    def perform(self, x, *sizes):
        axes, given = dict(self.name_axes), iter(sizes)
        shape = [int(next(given)) if d is None else d for d in self.target]
        return np.reshape(x, [x.shape[axes[d]] if isinstance(d, str) else d for d in shape])

    def grad(self, inputs, outputs, output_grads):
        return [reshape_like(output_grads[0], inputs[0])] + [None] * (len(inputs) - 1)


def _out_shape(shape, target, shown):
    """The result shape; a ShapeError where the element counts provably differ (``shown`` is
    x's shape as users see it, ``shape`` names its unknown dims, see :func:`axis_size`)."""
    target_shown = format_shape(public_dims(target))
    total = product(shape)
    known = product(d for d in target if d != -1)
    if -1 not in target:
        if None not in (total, known) and provably_differ(total, known):
            raise ShapeError(
                f"reshape: cannot reshape {format_shape(shown)} "
                f"({format_dim(product(shown))} elements) into {target_shown} ({known} elements)"
            )
        return target
    fill = None if None in (total, known) else exact_div(total, known)
    if fill is None and is_known(known) and _never_splits(total, known):
        why = ": a -1 beside a size 0 stands for no one size" if known == 0 else ""
        raise ShapeError(
            f"reshape: {format_shape(shown)} ({format_dim(product(shown))} elements) does not "
            f"split into {target_shown}{why}"
        )
    return tuple(fill if d == -1 else d for d in target)


def _never_splits(total, known: int) -> bool:
    """No size of x fills the -1: NumPy refuses a -1 beside a 0 whatever the total, and a
    total that is never a multiple of the rest (``2*n+1`` into ``(2, -1)``)."""
    return known == 0 or never_multiple_of(total, known)


_UNKNOWN = "_unknown_"  # the prefix of the private name of one variable's unknown dim


def axis_size(x: Variable, axis: int):
    """x's dim ``axis``; an unknown one gets a name private to x and that axis, so that
    ``reshape(x, (x.shape[0], -1))`` of an ``(?, 28, 28)`` x can still infer ``(?, 784)``."""
    if not -x.type.ndim <= axis < x.type.ndim:
        return None
    d = x.type.shape[axis]
    return f"{_UNKNOWN}{x.uid}_{axis % x.type.ndim}" if d is None else d


def public_dims(dims) -> tuple:
    """Dims with every private unknown name (and what is computed from one) back to None."""
    return tuple(None if any(n.startswith(_UNKNOWN) for n in names_in(d)) else d for d in dims)


def size_dim(var: Variable):
    """The dim an int scalar stands for: its value for a constant, ``batch`` for
    ``x.shape[0]`` when x's first dim is named so (each op says, through
    :meth:`Op.symbolic_size`); None when the graph does not know it."""
    if isinstance(var, Constant):
        value = var.value
        return int(value) if value.ndim == 0 and value.dtype.kind in "iu" else None
    node = var.owner
    return None if node is None else node.op.symbolic_size(node, size_dim)


def _size_of_input(var: Variable):
    """A given size as a dim of the result; a negative or odd one is unknown."""
    if var.type.ndim != 0 or var.type.dtype.kind not in "iu":
        raise ShapeError(
            f"reshape: a size must be an integer scalar, not {var.describe()}"
            + shape_hints.division_hint(var)
        )
    d = size_dim(var)
    return None if isinstance(d, int) and d < 0 else d


class _LikeOp(Op):
    """Ops typed like their second input, to which no gradient flows: most read only its
    runtime shape (``broadcast_like``, ``sum_to_like``, ``reshape_like``: the rewrite
    ``shape_read_off_an_input`` relies on it); the sort adjoints read its order too."""

    dtype_rule = "g's dtype"

    def infer_types(self, g, like):
        return [TensorType(g.type.dtype, like.type.shape)]


class ReshapeLike(_LikeOp):
    """g reshaped to like's runtime shape."""

    def perform(self, g, like):
        return np.reshape(g, np.shape(like))

    def grad(self, inputs, outputs, output_grads):
        return [reshape_like(output_grads[0], inputs[0]), None]


class ReducedSize(CountedAxes, Op):
    """The number of elements over some axes of x, as an int64 scalar."""

    dtype_rule = "int64"
    __props__ = ("axis",)
    differentiable = False

    def __init__(self, axis):
        self.axis = tuple(axis)

    def infer_types(self, x):
        return [TensorType("int64", ())]

    def perform(self, x):
        return np.array(int(np.prod([np.shape(x)[a] for a in self.axis])), dtype=np.int64)

    def grad(self, inputs, outputs, output_grads):
        return [None]


# -- functions -----------------------------------------------------------------------------
def shape(x) -> Variable:
    """The runtime shape of x (``x.shape``), an int64 vector."""
    return Shape()(as_variable(x))


def transpose(x, axes=None) -> Variable:
    """Permute axes (reverse them by default), as ``np.transpose``."""
    x = as_variable(x)
    n = x.type.ndim
    if axes is None:
        axes = tuple(reversed(range(n)))
    if isinstance(axes, np.ndarray) and axes.ndim == 1:
        axes = axes.tolist()  # (np.transpose takes an array of axes)
    axes = as_axis(axes)
    if not isinstance(axes, (numbers.Integral, tuple, list)):
        raise _at_user_line(
            ShapeTypeError(
                f"transpose: axes is a tuple of ints (a permutation) or None, not {axes!r} "
                f"(for {x.describe()})"
            )
        )
    axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    for a in axes:  # not an int, or out of range: normalize_axis's error
        if not is_int(a) or not -n <= a < n:
            normalize_axis((a,), n, "transpose", x)
    if len(axes) != n or sorted(a % n if n else a for a in axes) != list(range(n)):
        raise ShapeError(
            f"transpose: {tuple(axes)} is not a permutation of the {n} axes of {x.describe()}"
            + shape_hints.permutation_hint(axes, n)
        )
    return DimShuffle(tuple(a % n for a in axes))(x)


def swapaxes(x, axis1, axis2) -> Variable:
    """x with two axes exchanged (``np.swapaxes``, ``x.swapaxes``)."""
    x = as_variable(x)
    n = x.type.ndim
    order = list(range(n))
    (a,), (b,) = (
        normalize_axis(_one_axis(v, "swapaxes"), n, "swapaxes", x) for v in (axis1, axis2)
    )
    order[a], order[b] = order[b], order[a]
    return DimShuffle(tuple(order))(x)


def _one_axis(axis, op: str):
    axis = as_axis(axis)
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise _at_user_line(ShapeTypeError(f"{op}: an axis is an int, not {axis!r}"))
    return axis


def expand_dims(x, axis) -> Variable:
    """Insert length-1 axes at the given positions of the result."""
    x = as_variable(x)
    axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)  # (a float: one axis,
    # which normalize_axis refuses)
    n = x.type.ndim + len(axis)
    for a in axis:  # positions in the result, which has n dims (NumPy's rule)
        if isinstance(a, numbers.Integral) and not -n <= a < n:
            raise _at_user_line(
                ShapeIndexError(
                    f"expand_dims: axis {a} is out of range for a result of {n} dims from "
                    f"{x.describe()} (valid: {-n}..{n - 1})"
                )
            )
    new = set(normalize_axis(axis, n, "expand_dims", x))
    rest = iter(range(x.type.ndim))
    return DimShuffle(tuple("x" if i in new else next(rest) for i in range(n)))(x)


def squeeze(x, axis=None) -> Variable:
    """Drop length-1 axes: with no ``axis``, those known to be 1 when the graph is built (an
    unknown dim stays, even where it is 1 when the function runs: a ShapeWarning says so)."""
    x = as_variable(x)
    if axis is None:
        shape_warnings.squeeze_hook(x)
        axis = tuple(i for i, d in enumerate(x.type.shape) if d == 1)
    drop = set(normalize_axis(axis, x.type.ndim, "squeeze", x))
    return DimShuffle(tuple(i for i in range(x.type.ndim) if i not in drop))(x)


@numpy_keywords
def reshape(x, newshape, ndim=None) -> Variable:
    """Reshape; ``newshape`` (``shape=``, NumPy 2's name, too) may hold one -1 (or any
    negative size, as in NumPy), names of x's dims (``("batch", 784)``) and symbolic sizes
    (``(x.shape[0], -1)``, Theano's idiom; a named dim is inferred from them).
    ``ndim`` (Theano's) is checked against the length of ``newshape``; it is that length
    where ``newshape`` is an int vector of unknown length (``x.reshape(shp, ndim=2)``, checked
    when the function runs). ``None`` keeps x's shape, as NumPy 2 does (``a.reshape(None)``)."""
    x = as_variable(x)
    if newshape is None and ndim in (None, x.type.ndim):
        return x
    if _unknown_length(newshape) and is_int(ndim) and ndim >= 0:
        newshape = reshape(newshape, (int(ndim),))  # its length is checked at run time
    entries = _shape_entries(x, newshape)
    if ndim is not None and ndim != len(entries):
        raise _at_user_line(
            ShapeError(f"reshape: ndim={ndim} but the target has {len(entries)} dims")
        )
    target, sizes = [], []
    for d in entries:
        d = _static_entry(x, d)
        if isinstance(d, Variable):
            sizes.append(d)
            d = None
        target.append(-1 if isinstance(d, int) and d < 0 else d)  # (NumPy: any negative
        # size is the one to infer, as -1)
    names = {d: i for i, d in reversed(list(enumerate(x.type.shape))) if isinstance(d, str)}
    return Reshape(tuple(target), tuple((d, names[d]) for d in target if d in names))(x, *sizes)


def _unknown_length(newshape) -> bool:
    """Whether ``newshape`` is a vector whose length the graph does not know."""
    return (
        isinstance(newshape, Variable)
        and newshape.type.ndim == 1
        and not isinstance(newshape.type.shape[0], int)
    )


def _shape_entries(x, newshape) -> list:
    """The entries of a target shape: a tuple/list, one size, or a 1-d int vector."""
    if isinstance(newshape, (numbers.Integral, str)):
        return [newshape]
    if newshape is None or unordered(newshape):  # (None with another ndim)
        raise _at_user_line(
            ShapeTypeError(
                f"reshape of {x.describe()}: the target shape is a tuple of sizes, one size "
                f"or an int vector, not {unordered(newshape) or None}"
            )
        )
    if isinstance(newshape, Variable) and newshape.type.ndim == 0:
        return [newshape]
    if isinstance(newshape, Variable):
        length = newshape.type.shape[0] if newshape.type.ndim == 1 else None
        if not isinstance(length, int):
            raise _at_user_line(
                ShapeError(
                    f"reshape: the target shape {newshape.describe()} must be a 1-d vector "
                    "of known length (or a tuple of sizes)"
                    + ("\n  hint: give its length as ndim=" if newshape.type.ndim == 1 else "")
                )
            )
        return [newshape[i] for i in range(length)]
    try:
        return list(newshape)
    except TypeError:  # one size of another kind (12.0): refused naming it, as in a tuple
        return [newshape]


def _static_entry(x, d):
    """An int or a name of x's dims where the entry is one (also ``x.shape[1]`` when that dim
    is fixed or named), else the size variable, which becomes an input of the node."""
    if isinstance(d, str):
        return d
    if isinstance(d, numbers.Integral) and not isinstance(d, bool):
        if too_large(d):  # (the target's dims in a type must fit: say it names reshape)
            raise _at_user_line(ShapeError(f"reshape of {x.describe()}: the size {too_large(d)}"))
        return int(d)
    if not isinstance(d, Variable):
        raise _at_user_line(
            ShapeTypeError(
                f"reshape: a size is an int, a dim name or an int scalar, not {d!r}"
                + shape_hints.division_hint(d)
            )
        )
    static = public_dims([size_dim(d)])[0]
    if (
        isinstance(static, int)
        and static >= 0
        or isinstance(static, str)
        and static in x.type.shape
    ):
        return static
    return d


def reshape_like(g, like) -> Variable:
    if g.type.shape == like.type.shape and None not in like.type.shape:
        return g
    return ReshapeLike()(g, like)


def reduced_size(x, axis) -> Variable:
    """Elements over the axes: a constant when the dims are fixed."""
    n = product(x.type.shape[a] for a in axis)
    return Constant(n, dtype="int64") if is_known(n) else ReducedSize(axis)(x)
