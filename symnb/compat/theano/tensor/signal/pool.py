"""``theano.tensor.signal.pool.pool_2d``: pooling over the last two dims, Theano's way.

Two things differ from symnb's ``max_pool2d``/``avg_pool2d``: Theano's default
``ignore_border=False`` keeps the partial windows at the bottom and right edges (a 5x5 input
pooled 2x2 gives 3x3), and the average modes count padding (``average_inc_pad``) or not
(``average_exc_pad``). Both are written with symnb's pools:

- partial windows are extra padding at the end, long enough that the last window starts
  on a real element (for ``max`` padding never wins); where that gives more windows than
  Theano's count (overlapping windows over an image barely larger, or smaller, than one),
  the extra ones are sliced off, so the count is Theano's for any size, known or not;
- with ``ignore_border=True`` an image smaller than the window (padding included) gives
  Theano's empty output: of a known size, an empty slice; of a size known only at run
  time, a lazy ``ifelse`` on the sizes (``_fits``);
- ``sum`` is the average times the window size; ``average_exc_pad`` (and
  ``average_inc_pad`` over partial windows) divides the sum by the number of real elements
  in each window, which is the same pool run on ones;
- an integer input keeps its dtype in every mode, as Theano's ``Pool``: sums wrap as that
  dtype's, averages are truncated toward zero (``_integer_pool``).
"""

from __future__ import annotations

import numbers

import numpy as np

from symnb.compat.theano.missing import missing_names
from symnb.control.ifelse import ifelse
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable, describe_value
from symnb.errors import ArgumentError, ShapeError
from symnb.grad import Lop
from symnb.ops import elemwise
from symnb.ops.conv import avg_pool2d, max_pool2d
from symnb.ops.creation import ones_like, zeros
from symnb.ops.elemwise import bitwise_and, maximum
from symnb.ops.join import stack
from symnb.ops.layout import dimshuffle
from symnb.ops.markers import zero_grad

MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def pool_2d(
    input,  # noqa: A002 - Theano's parameter names
    ws=None,
    ignore_border=None,
    stride=None,
    pad=(0, 0),
    mode="max",
    ds=None,
    st=None,
    padding=None,
) -> Variable:
    """Pool windows of ``ws`` (rows, cols) moved by ``stride`` (``ws`` by default) over the
    last two dims of ``input``; ``ds``/``st``/``padding`` are Theano's older names. With
    ``ignore_border=False`` (Theano's default) partial windows at the end are kept."""
    ws = _pair(_either(ws, ds, "ws", "ds"), "ws")
    stride = _either(stride, st, "stride", "st")
    stride = ws if stride is None else _pair(stride, "stride")
    pad = _pair(pad if padding is None else padding, "pad")
    if any(p >= w for p, w in zip(pad, ws)):
        raise _at_user_line(ShapeError(f"pool_2d: pad {pad} must be smaller than ws {ws}"))
    if mode == "average":
        mode = "average_inc_pad"
    if mode not in MODES:
        raise _at_user_line(ArgumentError(f"pool_2d: mode must be one of {MODES}, not {mode!r}"))
    keep_partial = not ignore_border  # None: Theano 1.0's default, False
    if keep_partial and pad != (0, 0):
        raise _at_user_line(ArgumentError("pool_2d: padding works only with ignore_border=True"))
    if any(p >= w for p, w in zip(pad, ws)):
        raise _at_user_line(ArgumentError(f"pool_2d: pad {pad} must be smaller than ws {ws}"))
    x = as_variable(input)
    lead, x4 = _as_nchw(x)
    image, fits = x4, None if keep_partial else _fits(x4, ws, pad)
    if fits is not None:  # the pools and their gradients run on an image of the window
        whole = [_size(x4, i) if _known(x4, i) else maximum(_size(x4, i), ws[i]) for i in (0, 1)]
        x4 = ifelse(fits, x4, zeros(_shape(x4, whole), x4.type.dtype))
    axes = [_Axis(ws[i], stride[i], pad[i], keep_partial, x4, 2 + i) for i in range(2)]
    out = _pool(x4, ws, stride, pad, tuple(ax.end for ax in axes), mode, keep_partial)
    if any(ax.count is not None for ax in axes):
        out = out[(slice(None), slice(None), *(slice(None, ax.count) for ax in axes))]
    if fits is not None:  # Theano's max(0, (size + 2 pad - ws) // stride + 1) windows
        counts = [
            maximum((_size(image, i) + 2 * p - w) // s + 1, 0)
            for i, (w, s, p) in enumerate(zip(ws, stride, pad))
        ]
        out = ifelse(fits, out, zeros(_shape(image, counts), out.type.dtype))
    return out[(0,) * lead] if lead else out


class _Axis:
    """One pooled axis: ``end``, the extra padding at its end, and ``count``, the number of
    windows to keep when the pool over the padded axis gives more than Theano's (else None):
    an int, or a graph of ``x``'s length on ``axis`` when that length is not known."""

    def __init__(self, w, s, p, keep_partial, x, axis):
        size = x.type.shape[axis]
        known = isinstance(size, int)
        self.end, self.count = 0, None
        if not keep_partial:  # Theano: max(0, (size + 2p - w) // s + 1) windows
            if known and size + 2 * p < w:
                self.end, self.count = w - size - 2 * p, 0
        elif s >= w:  # Theano: (size - 1) // s + 1, one window per started stride
            self.end = w - 1
        elif known:  # Theano: max(0, (size - 1 - w) // s + 1) + 1
            self.end = max(s - 1, w - size)
        else:
            self.end = w - 1  # every window starts on a real element; keep Theano's count
            self.count = maximum((x.shape[axis] - 1 - w) // s + 1, 0) + 1


def _fits(x, ws, pad):
    """With ``ignore_border=True``, whether an image whose size is known only at run time is
    at least the window (padding included); None when its size is known (a smaller one is
    an empty slice). Where it is not, Theano gives an empty output, which symnb's pools
    refuse: a lazy ``ifelse`` pools zeros of the window's size instead (one scalar test a
    call; padding every pool of unknown size at its end would cost a copy)."""
    unknown = [i for i in (0, 1) if not _known(x, i)]
    if not unknown:
        return None
    tests = [_size(x, i) + 2 * pad[i] >= ws[i] for i in unknown]
    return tests[0] if len(tests) == 1 else bitwise_and(*tests)


def _known(x, i) -> bool:
    return isinstance(x.type.shape[2 + i], int)


def _size(x, i):
    """The length of pooled axis i (0: rows, 1: columns)."""
    return x.shape[2 + i]


def _shape(x, sizes):
    """The shape vector of x's first two dims followed by the pooled axes' ``sizes``."""
    return stack([x.shape[0], x.shape[1], *sizes])


def _pool(x, ws, stride, pad, ends, mode, keep_partial):
    """``pad`` is Theano's padding (both sides), ``ends`` the extra padding at the end."""
    sides = tuple((p, p + e) for p, e in zip(pad, ends))
    if mode == "max":
        return max_pool2d(x, ws, stride, sides)
    mean = avg_pool2d(x, ws, stride, sides)  # padding counted as zeros
    if x.type.dtype.kind in "iu":
        return _integer_pool(x, mean, ws, stride, sides, mode, keep_partial)
    if mode == "sum":
        return mean * (ws[0] * ws[1])
    if mode == "average_inc_pad" and not keep_partial:
        return mean  # Theano's padding counts as elements of the window
    return mean / avg_pool2d(ones_like(x), ws, stride, sides)  # over the real elements only


def _integer_pool(x, mean, ws, stride, sides, mode, keep_partial):
    """Theano's ``Pool`` keeps an integer x's dtype: a sum wraps as that dtype's (Theano
    stored it in an array of it), an average is truncated toward zero (C's integer
    division, the cast of NumPy's float average). The float64 means give the windows' sums
    and counts rounded to the integers they are (exact while a sum is below 2**50), so
    an average that is an integer is never truncated to one below."""
    size = ws[0] * ws[1]
    total = elemwise.round(mean * size)
    if mode == "average_inc_pad" and not keep_partial:
        total = elemwise.trunc(total / size)
    elif mode != "sum":  # over the real elements only
        count = elemwise.round(avg_pool2d(ones_like(x), ws, stride, sides) * size)
        total = elemwise.trunc(total / count)
    wide = "int64" if x.type.dtype.kind == "i" else "uint64"  # then wraps to x's, as Theano
    return elemwise.cast(elemwise.cast(total, wide), x.type.dtype)


def _as_nchw(x: Variable):
    """x with length-1 dims in front to make it 4-d, and how many were added."""
    if x.type.ndim < 2 or x.type.ndim > 4:
        raise _at_user_line(
            ShapeError(
                f"pool_2d: {x.describe_as('input')} must have 2 to 4 dims (pooled: the last 2)"
            )
        )
    lead = 4 - x.type.ndim
    return lead, dimshuffle(x, *(["x"] * lead), *range(x.type.ndim)) if lead else x


def _either(new, old, new_name, old_name):
    if new is not None and old is not None:
        raise _at_user_line(ArgumentError(f"pool_2d: give {new_name} or {old_name}, not both"))
    return new if new is not None else old


def _pair(value, what) -> tuple[int, int]:
    """``value`` (ws, stride or pad) as a pair of ints: an int (both axes), a pair, or
    constants of the graph holding them. symnb's pools fix their window, stride and padding
    in the graph (the ops' parameters), so a symbolic one, which Theano 1.0 also took (an
    int vector), is refused naming what to write."""
    if value is None:
        raise _at_user_line(ArgumentError(f"pool_2d: {what} (the window size) is needed"))
    pair = _value_of(value)
    if isinstance(pair, np.ndarray) and pair.ndim == 0:
        pair = pair.item()
    if isinstance(pair, numbers.Integral) and not isinstance(pair, (bool, np.bool_)):
        pair = (pair, pair)
    elif isinstance(pair, (tuple, list, np.ndarray)):
        pair = tuple(_value_of(v) for v in pair)
    symbolic = [v for v in (pair if isinstance(pair, tuple) else (pair,)) if _symbolic(v)]
    if symbolic:
        raise _at_user_line(
            ArgumentError(
                f"pool_2d: {what} must be ints known when the graph is built, not "
                f"{_describe(value)}: symnb's pooling fixes its {what} in the graph (Theano "
                f"1.0 also took a symbolic vector); write {what}={_EXAMPLE[what]}, or build one "
                f"graph per {what}"
            )
        )
    ints = isinstance(pair, tuple) and len(pair) == 2
    if not ints or not all(_is_int(v) for v in pair):
        raise _at_user_line(
            ArgumentError(f"pool_2d: {what} must be a pair of ints, not {_describe(value)}")
        )
    return tuple(int(v) for v in pair)


_EXAMPLE = {"ws": "(2, 2)", "stride": "(2, 2)", "pad": "(1, 1)"}


def _value_of(value):
    """A constant of the graph as its value (an array); anything else as it is."""
    return value.data if isinstance(value, Constant) else value


def _symbolic(value) -> bool:
    return isinstance(value, Variable) and not isinstance(value, Constant)


def _is_int(value) -> bool:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _describe(value) -> str:
    """``value`` as the user wrote it, its variables described (name and type)."""
    if isinstance(value, Variable):
        return value.describe()
    if isinstance(value, (tuple, list)):
        inner = ", ".join(v.describe() if isinstance(v, Variable) else repr(v) for v in value)
        return (
            f"({inner}{',' if len(value) == 1 else ''})"
            if isinstance(value, tuple)
            else f"[{inner}]"
        )
    return describe_value(value)


def max_pool_2d_same_size(input, patch_size):  # noqa: A002 - Theano's parameter name
    """Theano's ``max_pool_2d_same_size``: an array the shape of ``input`` that keeps the
    maximum of each non-overlapping ``patch_size`` window where it is and zeros the rest
    (rows and columns past the last whole window are zero). A window's maximum is kept at
    its first position in row-major order (Theano kept every tied one)."""
    x = as_variable(input)
    pooled = pool_2d(x, patch_size, ignore_border=True, mode="max")
    return Lop(pooled, x, zero_grad(pooled))


#: Theano 1.0's ``theano.tensor.signal.pool`` names symnb has no op for, with what to write
_MISSING = {
    "pool_3d": "pool_2d over the last two dims, then over the depth moved last (a max or sum "
    "window splits into the two; pool_2d takes 2- to 4-d input: reshape 5-d input first)",
}


__getattr__ = missing_names(
    "theano.tensor.signal.pool",
    "it has pool_2d and max_pool_2d_same_size, not Theano's Op classes Pool, MaxPoolGrad...",
    _MISSING,
    "pool_2d, and T.grad of it for the gradient ops",
)
