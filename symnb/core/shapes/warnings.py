"""Shape patterns that are legal but usually a bug, each with its own warning category.

Every category derives from :class:`symnb.ShapeWarning`, so one filter turns them all off
(``warnings.simplefilter("ignore", sn.ShapeWarning)``) and another turns off one pattern
(``warnings.simplefilter("ignore", sn.BroadcastOuterWarning)``). Warnings point at the user's
line, not at symnb's code. The ops call the ``*_hook`` functions below with one line each.

Ordinary idioms stay silent: a bias add ``(batch, 10) + (10,)``, a keepdims reduction broadcast
back ``x - x.max(axis=1, keepdims=True)``, and an outer product written with explicit axes of
length 1 on both sides ``a[:, None] * b[None, :]``.
"""

from __future__ import annotations

import contextlib
import contextvars

from symnb.core.dims import (
    exact_div,
    format_operand,
    format_shape,
    is_known,
    is_symbolic,
    names_in,
    product,
    shapes_unify,
)
from symnb.core.shapes.roles import batch_origin
from symnb.core.source import user_frame, user_location, warn_at_user
from symnb.errors import ShapeWarning

#: Dim names that mean "one row per example": an op that mixes along them mixes examples.
BATCH_NAMES = frozenset({"batch", "batch_size", "nbatch", "n_batch"})


class BroadcastOuterWarning(ShapeWarning):
    """Two operands broadcast against each other into a shape larger than either, with one of
    them given a new leading axis: ``(n,) - (n, 1)`` is ``(n, n)``. This is the classic silent
    loss bug (labels of shape ``(n,)`` against predictions of shape ``(n, 1)``). An outer
    product written with explicit length-1 axes on both sides (``a[:, None] * b[None, :]``) or
    of provably different sizes (``(n, 1) * (m,)``) does not warn."""


class LossTrailingOneWarning(ShapeWarning):
    """A loss whose predictions and targets differ in shape only by a trailing 1
    (``(n, 1)`` against ``(n,)``): usually the output of a one-unit layer that was not
    squeezed; elementwise losses then broadcast to ``(n, n)``."""


class SuspiciousAxisWarning(ShapeWarning):
    """softmax, log_softmax or argmax over the batch axis (it mixes examples) or an axis of
    length 1 (softmax is then always 1, argmax always 0): usually the wrong ``axis``. The batch
    is found by its role, the leading dim of the data inputs, whatever its name (``batch``,
    ``n``, ``samples`` or unknown; see ``core/shapes/roles.py``)."""


class ReshapeSplitsDimWarning(ShapeWarning):
    """A ``reshape`` whose ``-1`` takes a fraction of a named dim, e.g. ``(batch, 3136)`` to
    ``(-1, 1024)``: rows of the result mix data from different examples. Usually a wrong size
    after pooling or convolution."""


class ReshapeMovesDimWarning(ShapeWarning):
    """A ``reshape`` that moves a named dim to another position, e.g. ``(batch, seq, d)`` to
    ``(seq, batch, d)``: reshape keeps the memory order, so this scrambles the data. Use
    ``transpose`` to move axes."""


class PinnedDimWarning(ShapeWarning):
    """A named dim forced equal to a fixed size other than 1 (``("batch", "feat") @ W`` with
    ``W`` of shape ``(784, 10)`` pins ``feat`` to 784): the name promised a free size; either
    name the other side too or write the size in the first place."""


class SqueezeUnknownDimWarning(ShapeWarning):
    """``squeeze(x)`` with no axis of an x with unknown dims: only the dims known to be 1
    when the graph is built are dropped (as Theano did), so an unknown dim that is 1 when the
    function runs stays, where ``np.squeeze`` would drop it. Naming the axes says which."""


CATEGORIES = (
    BroadcastOuterWarning,
    LossTrailingOneWarning,
    SuspiciousAxisWarning,
    ReshapeSplitsDimWarning,
    ReshapeMovesDimWarning,
    PinnedDimWarning,
    SqueezeUnknownDimWarning,
)

_quiet_depth: contextvars.ContextVar[int] = contextvars.ContextVar("symnb_quiet", default=0)
_loss_line = None  # where the last LossTrailingOneWarning pointed
_said = [None, None, set()]  # the user's frame and line that warned last, and what it said


@contextlib.contextmanager
def quiet():
    """No shape warnings inside (used where symnb builds graphs the user did not write)."""
    token = _quiet_depth.set(_quiet_depth.get() + 1)
    try:
        yield
    finally:
        _quiet_depth.reset(token)


def emit(category: type[ShapeWarning], message: str) -> None:
    """Warn at the user's line (the first frame outside symnb), once per line and message.

    A loss that warned about its operands' shapes silences the broadcast warnings its own
    arithmetic raises for the same line (one bug, one message); several nodes of one line
    that find the same thing (a name pinned by two ops) warn once, whatever the filters."""
    global _loss_line
    loc = user_location()
    line = None if loc is None else (loc.filename, loc.lineno)
    if _quiet_depth.get() or category is BroadcastOuterWarning and line == _loss_line:
        return
    if _said_already(category, message):
        return
    if category is LossTrailingOneWarning:
        _loss_line = line
    warn_at_user(message, category, loc, stacklevel=3)


def _said_already(category, message) -> bool:
    """True when the user's line now running already gave this warning (under any filter,
    "always" included); the frame is kept, not its id, so a new call is never mistaken for it."""
    frame = user_frame()
    if frame is None:
        return False
    if _said[0] is not frame or _said[1] != frame.f_lineno:
        _said[:] = [frame, frame.f_lineno, set()]
    said = (category, message) in _said[2]
    _said[2].add((category, message))
    return said


def _may_equal(a, b) -> bool:
    return shapes_unify((a,), (b,))


def _op(op) -> str:
    """An op's name without its parameters (``softmax``, not ``softmax[axis=0]``)."""
    return op.op_name() if hasattr(op, "op_name") else str(op)


def _name(var) -> str:
    return var.name or f"<the {format_shape(var.type.shape)} operand>"


# -- elementwise broadcasting -----------------------------------------------------------------
def batch_axes(var, core: int = 0) -> tuple:
    """The axes of var before its last ``core`` (all of them for 0): what broadcasts in an op
    whose operands are stacks of matrices (``core=2``: matmul, solve)."""
    shape = var.type.shape
    return shape[: max(len(shape) - core, 0)] if core else shape


def broadcast_hook(op, inputs, out_shape, core: int = 0) -> None:
    """Called by ``broadcast_shapes`` once the broadcast shape is known (of the batch axes,
    all but the last ``core`` of each input, where ``core`` is given)."""
    _check_outer(op, inputs, out_shape, core)
    _check_pinned_axes(op, inputs, out_shape, core)


def _check_outer(op, inputs, out_shape, core: int = 0) -> None:
    for i, low in enumerate(inputs):
        lows = batch_axes(low, core)
        for high in inputs[i + 1 :] + inputs[:i]:
            highs = batch_axes(high, core)
            if len(lows) < len(highs) and _outer_pair(lows, highs):
                emit(BroadcastOuterWarning, _outer_message(op, low, high, out_shape, core))
                return


def _outer_pair(low: tuple, high: tuple) -> bool:
    """low gets new leading axes where high is not 1, and high is 1 where low is not, with a
    size that could be the same on both sides (the same examples on two axes)."""
    lead = len(high) - len(low)
    stretched_high = [d for d in high[:lead] if d != 1]
    stretched_low = [dl for dl, dh in zip(low, high[lead:]) if dh == 1 and dl != 1]
    return any(_same_examples(a, b) for a in stretched_high for b in stretched_low)


def _same_examples(a, b) -> bool:
    """Two axes that may count the same things: one dim, or an unknown one. A name against
    a fixed size is a size of its own, as two different names are (``y[:, None] ==
    arange(10)``, a one-hot, is ``(batch, 1)`` against ``(10,)``)."""
    return a is None or b is None or a == b


def _outer_message(op, low, high, out_shape, core: int = 0) -> str:
    if core:  # stacks of matrices: their batch axes broadcast into an outer product
        return (
            f"{_op(op)}: the batch axes (all but the last {core}) of {low.describe()} and "
            f"{high.describe()} broadcast against each other into {format_shape(out_shape)}, "
            f"larger than either (every matrix of one meets every matrix of the other)\n"
            f"  hint: if they hold one matrix per example, give them the same batch axes"
        )
    return (
        f"{_op(op)}: {low.describe()} and {high.describe()} broadcast against each other into "
        f"{format_shape(out_shape)}, larger than either (every element of one meets every "
        f"element of the other)\n  hint: if they hold one value per example, give them the "
        f"same shape, e.g. {_name(high)}.reshape(-1) or expand_dims({_name(low)}, -1)"
    )


def _check_pinned_axes(op, inputs, out_shape, core: int = 0) -> None:
    ndim = len(out_shape)
    for axis, out in enumerate(out_shape):
        if not is_known(out) or out == 1:
            continue
        for var in inputs:
            k = axis - (ndim - len(batch_axes(var, core)))  # batch axes lead: k counts in var
            if k >= 0 and is_symbolic(var.type.shape[k]):
                _warn_pinned(op, var, k, out)
                return


def pinned_hook(op, a, axis_a: int, b, axis_b: int) -> None:
    """Called where an op requires axis_a of a to equal axis_b of b (matmul, concatenate)."""
    da, db = a.type.shape[axis_a], b.type.shape[axis_b]
    if da == db:  # the same dim pins nothing (the common case, checked first)
        return
    if is_symbolic(da) and is_known(db) and db != 1:
        _warn_pinned(op, a, axis_a, db)
    elif is_symbolic(db) and is_known(da) and da != 1:
        _warn_pinned(op, b, axis_b, da)


def _warn_pinned(op, var, axis, size) -> None:
    dim = var.type.shape[axis]
    names = ", ".join(sorted(names_in(dim)))
    emit(
        PinnedDimWarning,
        f"{_op(op)}: named dim '{dim}' (axis {axis} of {var.describe()}) is forced to equal {size}"
        f"\n  hint: a name promises a free size; write {size} in the shape of {_name(var)}, "
        f"or give the other operand the name{'s' if ',' in names else ''} {names}",
    )


# -- reshape ----------------------------------------------------------------------------------
def reshape_hook(x, target: tuple, out_shape: tuple) -> None:
    """Called by ``Reshape`` once its output shape is known."""
    shape = x.type.shape
    if _pins_leading_name(shape, out_shape):
        _warn_reshape_pinned(x, target, out_shape)
    elif -1 in target and _splits_named_dim(shape, target):
        emit(ReshapeSplitsDimWarning, _split_message(x, target))
    moved = _moved_name(shape, out_shape)
    if moved is not None:
        emit(ReshapeMovesDimWarning, _moved_message(x, out_shape, moved))


def _pins_leading_name(shape, out_shape) -> bool:
    """A named leading dim (the batch, usually) replaced by a fixed size: ``(batch, 28, 28)``
    to ``(32, -1)`` hard-codes the batch size, and no dim of the result keeps the name."""
    if not shape or not out_shape or not isinstance(shape[0], str):
        return False
    lead = out_shape[0]
    return is_known(lead) and lead != 1 and not any(shape[0] in names_in(d) for d in out_shape)


def _warn_reshape_pinned(x, target, out_shape) -> None:
    name, var = x.type.shape[0], _name(x)
    rest = "".join(f", {d}" for d in target[1:])
    emit(
        PinnedDimWarning,
        f"reshape: named dim '{name}' (axis 0 of {x.describe()}) is replaced by the fixed size "
        f"{out_shape[0]} in {format_shape(target)}, which works only when {name} is "
        f"{out_shape[0]}\n  hint: keep the size symbolic: {var}.reshape(({var}.shape[0]{rest})) "
        f'or {var}.reshape(("{name}"{rest}))',
    )


def _splits_named_dim(shape, target) -> bool:
    total = product(shape)
    known = product(d for d in target if d != -1)
    return is_symbolic(total) and known is not None and exact_div(total, known) is None


def _split_message(x, target) -> str:
    known = product(d for d in target if d != -1)
    share = f"{format_operand(product(x.type.shape))}/{format_operand(known, right=True)}"
    return (
        f"reshape: the -1 in {format_shape(target)} takes {share} "
        f"elements of {x.describe()}, a fraction of a named dim, so rows of the result mix "
        f"different examples\n  hint: check the sizes after pooling/convolution; "
        f"{format_shape(x.type.shape)} has {product(x.type.shape[1:])} elements per row"
    )


def _moved_name(shape, out_shape):
    """A name that is in both shapes with a different number of elements before it."""
    for i, name in enumerate(shape):
        if not isinstance(name, str) or name not in out_shape:
            continue
        if shape.count(name) != 1 or out_shape.count(name) != 1:
            continue
        before_in = product(shape[:i])
        before_out = product(out_shape[: out_shape.index(name)])
        if None not in (before_in, before_out) and before_in != before_out:
            return name
    return None


def _moved_message(x, out_shape, name) -> str:
    return (
        f"reshape: {x.describe()} to {format_shape(out_shape)} moves the named dim "
        f"'{name}' to another position; reshape keeps the memory order, so this scrambles "
        f"the data\n  hint: use transpose to move axes"
    )


# -- reductions and normalisations along an axis ----------------------------------------------
def axis_hook(op, x, axis: int) -> None:
    """Called by softmax / log_softmax / argmax with the (non-negative) axis they work on
    (None: the flattened array, nothing to check)."""
    if axis is None:
        return
    dim = x.type.shape[axis]
    origin = batch_origin(x, axis)
    if origin is not None and _batch_named_elsewhere(x, origin, axis):
        origin = None  # time-major ("T", "batch", ...): the name says where the examples are
    if dim == 1:
        why = "which has length 1 (the result does not depend on the values)"
    elif origin is not None:
        why = (
            f"which holds the examples ({_dim_words(dim)}axis 0 of the data input "
            f"{origin.describe()}), so it mixes different examples"
        )
    elif isinstance(dim, str) and dim in BATCH_NAMES:
        why = f"named '{dim}', which mixes different examples"
    else:
        return
    emit(
        SuspiciousAxisWarning,
        f"{_op(op)}: over axis {axis} of {x.describe()}, {why}"
        f"\n  hint: the classes are usually the last axis (axis=-1)",
    )


def _batch_named_elsewhere(x, origin, axis: int) -> bool:
    """A dim named as a batch ("batch", "batch_size"...) sits at another axis of x, or of the
    data input the role heuristic took axis 0 of: an explicit name beats the role."""
    named = [k for k, d in enumerate(x.type.shape) if d in BATCH_NAMES and k != axis]
    return bool(named) or any(d in BATCH_NAMES for d in origin.type.shape[1:])


def _dim_words(dim) -> str:
    return "" if dim is None else f"'{dim}', "


# -- losses ---------------------------------------------------------------------------------
def loss_hook(op, predictions, targets) -> None:
    """Called by losses that take predictions and targets of the same shape."""
    p, t = predictions.type.shape, targets.type.shape
    if _only_trailing_one(p, t) or _only_trailing_one(t, p):
        emit(
            LossTrailingOneWarning,
            f"{_op(op)}: predictions {predictions.describe()} and targets {targets.describe()} "
            f"differ only by a trailing 1\n  hint: squeeze the extra axis, e.g. "
            f"{_name(predictions if len(p) > len(t) else targets)}.reshape(-1)",
        )


def _only_trailing_one(longer, shorter) -> bool:
    if len(longer) != len(shorter) + 1 or longer[-1] != 1:
        return False
    return all(_may_equal(a, b) for a, b in zip(longer, shorter))


# -- squeeze --------------------------------------------------------------------------------
def squeeze_hook(x) -> None:
    """Called by ``squeeze`` with no axis: say where x's unknown dims make it differ from
    ``np.squeeze``, which decides by the values' shape."""
    shape = x.type.shape
    unknown = [k for k, d in enumerate(shape) if d is None]
    if not unknown:
        return
    ones = tuple(k for k, d in enumerate(shape) if d == 1)
    name = x.message_name() or "x"
    if ones:
        axis = ones[0] if len(ones) == 1 else ones
        drops = f"axis {axis}"
        hint = f"name the axes to drop: {name}.squeeze(axis={axis})"
    else:
        drops = "none"
        hint = "it drops nothing here; name the axis to drop (axis=k), or leave it out"
    dims = (
        f"unknown dims (axes {unknown})"
        if len(unknown) > 1
        else f"an unknown dim (axis {unknown[0]})"
    )
    emit(
        SqueezeUnknownDimWarning,
        f"squeeze: {x.describe()} has {dims}; "
        f"with no axis, squeeze drops only the dims known to be 1 when the graph is built "
        f"({drops} here) and keeps an unknown dim even where it is 1 when the function runs "
        f"(np.squeeze would drop it)\n  hint: {hint}",
    )
