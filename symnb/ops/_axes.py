"""Axis arguments the way NumPy takes them (int, tuple, negative, None; a NumPy integer or a
0-d integer array as its int, as ``__index__`` gives it), and a reduction's
``keepdims``/``out``, checked at build."""

from __future__ import annotations

import copy

import numpy as np

from symnb.core.dims import is_int
from symnb.core.op import _at_user_line
from symnb.core.variable import Variable, as_variable
from symnb.errors import ArgumentError, ShapeError, ShapeIndexError, ShapeTypeError


def as_axis(axis):
    """An integer axis as NumPy reads one (``operator.index``): an int, a NumPy integer or a
    0-d integer array (``np.array(1)``) is that int; anything else is returned as it is, for
    the caller to refuse (a bool, a float, a tuple)."""
    if is_int(axis):
        return int(axis)
    if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
        return int(axis)
    return axis


def normalize_axis(axis, ndim: int, op, var) -> tuple[int, ...]:
    """A sorted tuple of non-negative axes; ``None`` means all of them."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis_entries(axis, op, var)
    out = []
    for a in axes:
        if not is_int(a):
            raise _at_user_line(
                ShapeTypeError(
                    f"{op}: an axis is an int, not {a!r} (for {var.describe()}){_symbolic(a)}"
                )
            )
        if not -ndim <= a < ndim:
            raise _at_user_line(ShapeIndexError(_out_of_range(op, a, ndim, var)))
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise _at_user_line(ShapeError(f"{op}: repeated axis in {axis!r} (for {var.describe()})"))
    return tuple(sorted(out))


def axis_entries(axis, op, var) -> tuple:
    """The entries of an ``axis`` argument other than None, unchecked: an int alone, or a
    tuple or list, each entry read as NumPy reads an axis (``as_axis``); anything else (a
    float, a set, an array of axes: NumPy's reductions refuse it) is a ShapeTypeError."""
    axis = as_axis(axis)
    if is_int(axis):
        return (axis,)
    if isinstance(axis, (tuple, list)):
        return tuple(map(as_axis, axis))
    raise _at_user_line(
        ShapeTypeError(
            f"{op}: axis is an int, a tuple of ints or None, not {axis!r} (for {var.describe()})"
            + _symbolic(axis)
        )
    )


def keepdims_flag(keepdims, op, var) -> bool:
    """``keepdims`` as a bool: anything else is refused, not made truthy, since it is most
    often a dtype passed where NumPy's order ``(axis, dtype, out, keepdims)`` puts it."""
    if isinstance(keepdims, (bool, np.bool_)):
        return bool(keepdims)
    raise _at_user_line(
        ArgumentError(
            f"{op}: keepdims is True or False, not {keepdims!r} (for {var.describe()})\n"
            f"  hint: NumPy's order is {op}(x, axis, dtype, out, keepdims) (without dtype for "
            f"max, min, all, any, argmax, argmin): write dtype=... and keepdims=... by name"
        )
    )


def no_out(out, op, var) -> None:
    """NumPy's ``out=``: a symbolic result cannot be written into an array."""
    if out is not None:
        raise _at_user_line(
            ArgumentError(
                f"{op}(..., out={type(out).__name__}) of {var.describe()}: a symbolic result "
                "cannot be written into an array; use the variable it returns"
            )
        )


def _out_of_range(op, axis, ndim: int, var) -> str:
    """The message for an axis past ``ndim``: a 0-d value has no axes at all (no range)."""
    message = f"{op}: axis {axis} is out of range for {var.describe()}, "
    if ndim == 0:
        return message + "which is 0-d: it has no axes (use axis=None)"
    return message + f"which has {ndim} dim{'s' if ndim != 1 else ''} (valid: {-ndim}..{ndim - 1})"


def one_axis(axis, ndim: int, op, var, what: str = "axis", or_none: bool = False) -> int:
    """One non-negative axis, for ops that take one int (``argmax``, ``softmax``, ``sort``):
    a tuple, a float or a bool there is a ShapeTypeError naming the op and the variable
    (``or_none``: the op also takes None, which its caller has handled)."""
    axis = as_axis(axis)
    if not is_int(axis):
        takes = "one int or None" if or_none else "one int"
        raise _at_user_line(
            ShapeTypeError(
                f"{op}: {what} is {takes}, not {axis!r} (for {var.describe()}){_symbolic(axis)}"
            )
        )
    (a,) = normalize_axis(axis, ndim, op, var)
    return a


def _symbolic(axis) -> str:
    """The hint for an axis given as a variable of the graph: its value comes too late."""
    if not isinstance(axis, Variable):
        return ""
    return (
        "\n  hint: an axis must be known when the graph is built: give an int, not a value "
        "computed when the function runs"
    )


def diagonal_offset(offset, op: str, what: str = "k", var=None) -> int:
    """A diagonal's offset (``np.eye``'s and ``np.diag``'s k, ``np.trace``'s offset) as an
    int, NumPy's integers too: a float is refused, as NumPy refuses it (``int()`` would pick
    another diagonal), and a bool, as axes refuse one."""
    if not is_int(offset):
        of = "" if var is None else f" (for {var.describe()})"
        message = f"{op}: {what} (the diagonal) is an int, not {offset!r}{of}"
        raise _at_user_line(ShapeTypeError(message))
    return int(offset)


class CountedAxes:
    """Mixin for ops whose axis parameters (``axis_props``: an int, a tuple of ints or None
    each) count from 0. Their rules compare axes with positions, so an op built with a
    negative axis (``Prod(axis=(-1,))``, as an internal caller may write) would silently
    reduce nothing: it is applied as the op with that axis counted from the input's rank
    (out of range: a ShapeError naming the op and the variable)."""

    axis_props: tuple[str, ...] = ("axis",)
    sorted_axes = False  # tuples kept sorted (the reductions' ``axis``)

    def axes_of(self, inputs) -> Variable:
        """The input whose rank the axes count in."""
        return as_variable(inputs[0])

    def __call__(self, *inputs):
        return super().__call__.__func__(self._counted(inputs), *inputs)

    def make_node(self, *inputs):
        return super().make_node.__func__(self._counted(inputs), *inputs)

    def _counted(self, inputs):
        values = [getattr(self, p) for p in self.axis_props]
        if not any(_negative(v) for v in values):
            return self
        var = self.axes_of(inputs)
        op = copy.copy(self)
        for prop, value in zip(self.axis_props, values):
            setattr(op, prop, _count_from_zero(value, var, op.op_name(), self.sorted_axes))
        return op


def _negative(value) -> bool:
    if isinstance(value, tuple):
        return any(a < 0 for a in value)
    return value is not None and value < 0


def _count_from_zero(value, var, op: str, keep_sorted: bool):
    ndim = var.type.ndim
    if isinstance(value, tuple):
        axes = tuple(one_axis(a, ndim, op, var) for a in value)
        return tuple(sorted(axes)) if keep_sorted else axes
    return value if value is None else one_axis(value, ndim, op, var)
