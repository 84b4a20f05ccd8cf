"""Identity ops that change only what differentiation sees.

- ``zero_grad(x)`` (also ``stop_gradient``): the value of x, with a zero gradient. Inputs
  reached only through it are still connected to the cost; their gradient is zero.
- ``disconnected_grad(x)``: the value of x, and inputs reached only through it count as
  disconnected from the cost (``sn.grad``'s ``disconnected`` option decides what happens).
- ``grad_clip(x, lower, upper)``: the value of x, with the gradient that flows back through
  it clipped elementwise to [lower, upper] (Theano's ``theano.gradient.grad_clip``).
- ``GradScale(multiplier)``: the value of x, with the gradient that flows back through it
  times ``multiplier`` (Theano's ``theano.gradient.grad_scale``); ``GradScaleBy`` takes the
  multiplier as a second input (a variable or an array).

Forward mode (``sn.Rop``) sees what they compute: grad_clip and grad_scale are the identity
there (``backward_only``: its passes differentiate them as the identity), zero_grad passes a
zero tangent and disconnected_grad none (symnb/grad/forward.py).

One changes only what the type says:

- ``unbroadcast(x, *axes)``: the value of x, with those of ``axes`` that are known to be of
  length 1 typed as unknown (Theano's ``T.unbroadcast``): ops that read the type, such as
  Theano's ``T.squeeze``, no longer take them to be 1. Its gradient has x's type again.

They are elementwise copies, so kernel backends fuse them like any other elementwise op.
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.core.dims import format_shape
from symnb.core.op import _at_user_line
from symnb.core.shapes.broadcast import broadcast_shapes
from symnb.core.variable import Variable, as_variable, describe_value
from symnb.errors import ArgumentError, ShapeError
from symnb.ops._axes import one_axis
from symnb.ops.broadcast import BroadcastLike
from symnb.ops.elemwise import Elemwise, clip
from symnb.ops.shape import reshape_like


class _Identity(Elemwise):
    """An elementwise copy: kernels compute it as its operand."""

    nin = 1
    impl = staticmethod(np.copy)

    def scalar(self, k, x):
        return k.to(x)


class ZeroGrad(_Identity):
    """x, with no gradient flowing back through it."""

    #: the reverse walk's ``gradient_flows`` stops here: a complex x is off the gradient's
    #: path (its gradient is refused only where one would flow)
    stops_gradient = True

    def grad_elem(self, inputs, output, gz):
        return [None]


class DisconnectedGrad(_Identity):
    """x, with its input treated as disconnected from whatever uses it."""

    disconnects_gradient = True
    stops_gradient = True

    def grad_elem(self, inputs, output, gz):
        return [None]


class GradClip(_Identity):
    """x, with the gradient flowing back through it clipped to [lower, upper]."""

    __props__ = ("lower", "upper")
    #: it computes x and changes only the reverse pass: ``sn.Rop``'s passes differentiate it
    #: as the identity (``symnb.grad.reverse.AS_IDENTITY_FORWARD``)
    backward_only = True

    def __init__(self, lower: float, upper: float):
        low, high = _number(lower, "grad_clip", "lower"), _number(upper, "grad_clip", "upper")
        if not low <= high:
            raise _at_user_line(
                ArgumentError(f"grad_clip: lower ({lower!r}) must not exceed upper ({upper!r})")
            )
        self.lower, self.upper = low, high

    def grad_elem(self, inputs, output, gz):
        return [clip(gz, self.lower, self.upper)]


class GradScale(_Identity):
    """x, with the gradient flowing back through it times ``multiplier``."""

    __props__ = ("multiplier",)
    backward_only = True  # (as GradClip's)

    def __init__(self, multiplier: float):
        self.multiplier = _number(multiplier, "grad_scale", "the multiplier")

    def grad_elem(self, inputs, output, gz):
        return [gz * self.multiplier]


def _number(value, call: str, what: str) -> float:
    """``value``, a bound or multiplier of a marker op, as a float; an ArgumentError naming
    ``call`` and the value at the user's line where it is not one real number (a str, None,
    a bool, an array of several, or NaN, which would make the op unequal to itself)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    number = None
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        try:
            number = float(value)
        except OverflowError:  # (an int past a float's range)
            pass
    if number is None or number != number:
        raise _at_user_line(
            ArgumentError(f"{call}: {what} must be a real number, not {describe_value(value)}")
        )
    return number


class GradScaleBy(Elemwise):
    """x, with the gradient flowing back through it times the second input, ``multiplier``
    (a variable or an array that broadcasts to x's shape without stretching it; it gets no
    gradient). The value and dtype are x's, as for ``GradScale``."""

    dtype_rule = "x's dtype"
    impl = staticmethod(lambda x, multiplier: np.copy(x))
    backward_only = True  # (as GradClip's; the multiplier gets no tangent)

    def infer_types(self, x, multiplier):
        _refuse_stretching(x, multiplier)
        return [x.type]

    def out_dtype(self, inputs):
        return inputs[0].type.dtype

    def scalar(self, k, x, multiplier):
        return k.to(x)

    def grad_input(self, i, inputs, output, gz):
        return gz * inputs[1] if i == 0 else None


class Unbroadcast(_Identity):
    """x, with its axes ``axes`` that are known to be of length 1 typed as unknown."""

    __props__ = ("axes",)
    dtype_rule = "x's dtype"

    def __init__(self, axes):
        self.axes = tuple(sorted(set(axes)))

    def infer_types(self, x):
        shape = tuple(None if d == 1 and i in self.axes else d for i, d in enumerate(x.type.shape))
        return [x.type.with_shape(shape)]

    def grad_elem(self, inputs, output, gz):
        """gz, which has x's shape when the function runs, typed as x again (a view)."""
        return [reshape_like(gz, inputs[0])]


def unbroadcast(x, *axes) -> Variable:
    """x with the dims at ``axes`` that are known to be 1 typed as unknown (Theano's rule;
    negative axes count from the end); x itself where none of them is 1."""
    x = as_variable(x)
    loose = {one_axis(a, x.type.ndim, "unbroadcast", x) for a in axes}
    if not any(x.type.shape[a] == 1 for a in loose):
        return x
    return Unbroadcast(loose)(x)


def zero_grad(x) -> Variable:
    """x in the forward pass; a zero gradient in the backward pass (JAX's ``stop_gradient``)."""
    return ZeroGrad()(as_variable(x))


def disconnected_grad(x) -> Variable:
    """x in the forward pass; what it depends on counts as disconnected for ``sn.grad``."""
    return DisconnectedGrad()(as_variable(x))


def grad_clip(x, lower, upper) -> Variable:
    """x in the forward pass; in the backward pass the gradient reaching x is clipped to
    [lower, upper] element by element (bounds are real numbers, ``lower <= upper``; other
    bounds are an ArgumentError at the user's line)."""
    return GradClip(lower, upper)(as_variable(x))


def _refuse_stretching(x: Variable, multiplier: Variable):
    """A ShapeError where ``multiplier`` cannot broadcast to x's shape as the types say."""
    shape = broadcast_shapes(GradScaleBy(), [x, multiplier])  # a clash: its ShapeError
    if len(shape) != x.type.ndim or any(
        d == 1 and n != 1 and n is not None for d, n in zip(x.type.shape, shape)
    ):
        raise _at_user_line(
            ShapeError(
                f"grad_scale: the multiplier {multiplier.describe()} would stretch "
                f"{x.describe()} to {format_shape(shape)}; it scales x's gradient, so it "
                "must broadcast to x's shape"
            )
        )


def grad_scale_by(x, multiplier) -> Variable:
    """x in the forward pass; in the backward pass the gradient reaching x times
    ``multiplier``, a variable or an array (``GradScaleBy``). One that would stretch x is
    refused when the graph is built, or, where dims are unknown, when the function runs (it
    is broadcast to x's shape first: a view)."""
    x, m = as_variable(x), as_variable(multiplier)
    fixed = all(isinstance(d, int) for d in (*m.type.shape, *x.type.shape))
    if m.type.ndim and not (fixed and m.type.shape == x.type.shape):
        _refuse_stretching(x, m)
        m = BroadcastLike()(m, x)
    return GradScaleBy()(x, m)


stop_gradient = zero_grad
