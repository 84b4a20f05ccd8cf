"""Theano's ``conv2d``: a true convolution (the filters are flipped, ``filter_flip=True``),
where symnb's ``conv2d`` is a cross-correlation (as PyTorch's and most libraries' today).

Border modes map onto symnb's padding: ``"valid"`` none, ``"full"`` ``d*(k - 1)`` on each side,
``"half"`` ``(d*(k - 1) + 1) // 2`` on each side (half the dilated kernel, as Theano's
``dil_kernshp // 2``), an int or a pair that many (not scaled by the dilation ``d``).
"""

from __future__ import annotations

import numbers
import operator

from symnb.compat.theano.missing import missing_names
from symnb.core.op import _at_user_line
from symnb.core.source import user_location
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import ArgumentError, ShapeError
from symnb.ops.checks import has_shape
from symnb.ops.conv import conv2d as _conv2d
from symnb.ops.conv import positive_pair
from symnb.ops.layout import flip


def conv2d(
    input,  # noqa: A002 - Theano's parameter names
    filters,
    input_shape=None,
    filter_shape=None,
    border_mode="valid",
    subsample=(1, 1),
    filter_flip=True,
    image_shape=None,
    filter_dilation=(1, 1),
    num_groups=1,
    unshared=False,
    **kwargs,
) -> Variable:
    """``T.nnet.conv2d``: input (batch, channels, rows, cols), filters (out, in, kh, kw).

    ``input_shape``/``image_shape`` and ``filter_shape`` are hints, as in Theano; they are
    checked against what symnb knows, and ``filter_shape`` gives the kernel size that
    ``border_mode="full"``/``"half"`` need when the filters' shape is not known statically.
    """
    if unshared:
        raise _at_user_line(NotImplementedError("conv2d: unshared=True is not implemented"))
    if kwargs:
        raise _at_user_line(ArgumentError(f"conv2d: unexpected arguments {sorted(kwargs)}"))
    return theano_conv(
        input,
        filters,
        border_mode,
        subsample,
        filter_flip,
        filter_dilation,
        num_groups,
        filter_shape,
        input_shape if input_shape is not None else image_shape,
    )


def theano_conv(
    input,
    filters,
    border_mode,
    subsample,
    flip_filters,
    dilation,
    groups,
    filter_shape,
    input_shape,
) -> Variable:  # noqa: A002
    """The convolution both of Theano's conv2d interfaces describe."""
    x, w = as_variable(input), as_variable(filters)
    _check_4d(x, "input", "batch, channels, rows, cols")
    _check_4d(w, "filters", "out, in, rows, cols")
    where = f"conv2d of {x.describe()}"
    dilation = positive_pair(dilation, "filter_dilation", where)
    stride = positive_pair(subsample, "subsample", where)
    input_shape = _hint(input_shape, "input_shape")
    filter_shape = _hint(filter_shape, "filter_shape")
    _check_hint(x, input_shape, "input_shape")
    _check_hint(w, filter_shape, "filter_shape")
    given = w
    w = _with_fixed_kernel(w, filter_shape)
    padding = _padding(border_mode, w.type.shape[2:], dilation)
    if flip_filters:
        w = flip(w, (2, 3))
    if w is not given and given.name:  # messages name the user's filters, not "unnamed"
        w.name = f"{given.name}[:, :, ::-1, ::-1]" if flip_filters else given.name
    return _conv2d(
        x,
        w,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
    )


def _with_fixed_kernel(w: Variable, filter_shape) -> Variable:
    """symnb needs the kernel size fixed in the graph; a Theano filter (a shared variable
    with unknown dims) gets it from ``filter_shape``, its entries that are None from its
    current value, which a hint must not contradict. The filters given when the function
    runs are checked to have that shape (``has_shape``): Theano used the actual filters,
    which the fixed kernel cannot be, so another shape is a ShapeError naming both, never
    the filters reshaped (as many elements would scramble them)."""
    if all(isinstance(d, int) for d in w.type.shape[2:]):
        return w
    dims = list(filter_shape or (None,) * 4)
    source = f"of filter_shape={tuple(dims)}"
    if isinstance(w, SharedVariable):
        value_shape = w.current_value().shape  # (where it is: no download)
        if any(d is not None and d != v for d, v in zip(dims, value_shape)):
            raise _at_user_line(
                ShapeError(
                    f"conv2d: filter_shape={tuple(filter_shape)} does not match the shape "
                    f"{tuple(value_shape)} of the current value of the filters {w.describe()}"
                )
            )
        if None in dims:
            source = "of the shape their value had when the graph was built"
        dims = [v if d is None else d for d, v in zip(dims, value_shape)]
    if None in dims[2:]:
        raise _at_user_line(
            ShapeError(
                f"conv2d: the kernel size of the filters {w.describe()} must be known when "
                "the graph is built; pass filter_shape=(out, in, kh, kw), as Theano's "
                "optimised convolutions also wanted, or give the filters a fixed shape"
            )
        )
    built = user_location()
    what = (
        f"conv2d{'' if built is None else f' built at {built}'}: the filters "
        f"{w.describe()} are not {source}, which fixed the kernel size in the graph "
        "(build it again for filters of another shape)"
    )
    return has_shape(w, tuple(dims), [], what)


def _check_4d(var: Variable, what, layout):
    """Before the filters are flipped, whose error would name an op the user never called."""
    if var.type.ndim != 4:
        raise _at_user_line(ShapeError(f"conv2d: {what} {var.describe()} must be 4-d ({layout})"))


def _padding(border_mode, kernel, dilation):
    if border_mode == "valid":
        return "valid"
    if border_mode == "full":
        return tuple(d * (k - 1) for k, d in zip(kernel, dilation))
    if border_mode == "half":  # Theano's dil_kernshp // 2: an even kernel's differs from d*(k//2)
        return tuple((d * (k - 1) + 1) // 2 for k, d in zip(kernel, dilation))
    if isinstance(border_mode, numbers.Integral) or (
        isinstance(border_mode, tuple) and len(border_mode) == 2
    ):
        return border_mode
    raise _at_user_line(
        ArgumentError(
            f"conv2d: border_mode must be 'valid', 'full', 'half', an int or a pair of ints, "
            f"not {border_mode!r}"
        )
    )


def _hint(hint, what) -> tuple | None:
    """A shape hint as a tuple of ints and Nones (unknown). Its sizes may be NumPy integers,
    an array or constants, as Theano took them (shapes computed with NumPy often are); a
    size computed in the graph is not known when it is built: None."""
    if hint is None:
        return None
    try:
        return tuple(_size(d) for d in hint)
    except TypeError:
        raise _at_user_line(
            ArgumentError(
                f"conv2d: {what} must be a tuple of ints (or None where not known), not {hint!r}"
            )
        ) from None


def _size(d) -> int | None:
    if d is None:
        return None
    if isinstance(d, Constant) and d.type.ndim == 0:
        d = d.value.item()
    elif isinstance(d, Variable) and d.type.ndim == 0 and d.type.dtype.kind in "iu":
        return None
    return operator.index(d)


def _check_hint(var: Variable, hint, what):
    """A shape hint that contradicts a known dim is a mistake worth saying at once."""
    if hint is None:
        return
    known = var.type.shape
    clash = len(hint) != len(known) or any(
        h is not None and isinstance(k, int) and h != k for h, k in zip(hint, known)
    )
    if clash:
        raise _at_user_line(ShapeError(f"conv2d: {what}={hint} does not match {var.describe()}"))


#: a Theano 3-d convolution, written with conv2d
CONV3D = (
    "T.nnet.conv2d of each depth slice summed over the kernel's depth (mode valid: out[:, :, d] "
    "= sum(T.nnet.conv2d(x[:, :, d + k], w[:, :, kd - 1 - k]) for k in range(kd)), stacked "
    "with T.stack(..., axis=2))"
)
#: Theano's abstract_conv functions that symnb has no op for, each with what to write instead
MISSING = {
    "conv2d_grad_wrt_inputs": "T.grad of a conv2d with respect to its input (known_grads= "
    "gives the output gradient), which is that transposed convolution",
    "conv2d_grad_wrt_weights": "T.grad of a conv2d with respect to its filters",
    "bilinear_upsampling": "T.repeat along the two image axes (nearest-neighbour upsampling), "
    "or a conv2d of the repeated image with a bilinear kernel",
    "conv3d": CONV3D,
    "conv3d_grad_wrt_inputs": f"T.grad of {CONV3D}",
    "conv3d_grad_wrt_weights": f"T.grad of {CONV3D}",
    "separable_conv2d": "a T.nnet.conv2d with num_groups=input channels (depthwise), then one "
    "with 1x1 filters (pointwise)",
}


__getattr__ = missing_names(
    "theano.tensor.nnet.abstract_conv",
    "it has conv2d",
    MISSING,
    "symnb's ops (symnb.ops, docs/ops.md)",
)
