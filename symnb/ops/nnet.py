"""Neural-net ops: softmax and log-softmax along an axis, and the cross-entropy losses.

``softmax``/``log_softmax`` subtract the maximum before exponentiating, so large logits do
not overflow; ``sigmoid_binary_crossentropy`` works from logits with the stable form
``max(x, 0) - x t + log1p(exp(-|x|))``. The cross-entropies of probabilities are built from
these and the indexing ops, so their gradients come from those ops' rules.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimMismatch, format_shape, shapes_unify, unify
from symnb.core.op import Op, located_call
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops._axes import CountedAxes, one_axis
from symnb.ops._dtypes import probe_dtype
from symnb.ops.checks import ClassLabels, first_bad_label, label_problem
from symnb.ops.elemwise import Elemwise, as_float, exp, log, sigmoid
from symnb.ops.index import getitem
from symnb.ops.reduce import sum as sum_
from symnb.ops.shape import expand_dims, squeeze
from symnb.ops.shape import shape as shape_of
from symnb.ops.take import take_along_axis


class _AlongAxis(CountedAxes, Op):
    """Ops that normalise along one axis; integers compute in the float NumPy's exp gives."""

    __props__ = ("axis",)
    dtype_rule = "the float dtype np.exp gives the input (int8 -> float16, int64 -> float64)"
    finite_shift = False  # whether an infinite max shifts by 0 (SciPy's log_softmax does)

    def __init__(self, axis: int):
        self.axis = axis

    def axis_sources(self, node):
        return [[(0, k)] for k in range(node.inputs[0].type.ndim)]

    def infer_types(self, x):
        if x.type.dtype.kind == "b":
            raise DTypeError(f"{self.op_name()}: {x.describe()} is boolean; cast it first")
        shape_warnings.axis_hook(self, x, self.axis)
        return [TensorType(probe_dtype(self, np.exp, [x]), x.type.shape)]

    def perform(self, x):
        """The NumPy reference, computed in at least float32 (float16 sums lose too much)."""
        x = np.asarray(x)
        out_dtype = np.exp(np.zeros((), x.dtype)).dtype
        x = x.astype(np.promote_types(out_dtype, np.float32), copy=False)
        peak = np.max(x, axis=self.axis, keepdims=True, initial=-np.inf)
        if self.finite_shift:
            peak = np.where(np.isfinite(peak), peak, 0)
        with np.errstate(divide="ignore"):  # only an empty axis sums to 0
            return self.normalize(x - peak).astype(out_dtype, copy=False)


class Softmax(_AlongAxis):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed as exp(x - max)."""

    def normalize(self, shifted):
        e = np.exp(shifted)
        return e / np.sum(e, axis=self.axis, keepdims=True)

    def grad(self, inputs, outputs, output_grads):
        (y,), (g,) = outputs, output_grads
        return [y * (g - sum_(g * y, axis=self.axis, keepdims=True))]


class LogSoftmax(_AlongAxis):
    """``x - logsumexp(x)`` along ``axis``: finite even where softmax underflows to 0. An
    infinite max shifts by 0, as in SciPy: ``log_softmax([1, inf])`` is ``[-inf, nan]``."""

    finite_shift = True

    def normalize(self, shifted):
        return shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True))

    def grad(self, inputs, outputs, output_grads):
        (y,), (g,) = outputs, output_grads
        return [g - exp(y) * sum_(g, axis=self.axis, keepdims=True)]


def _sigmoid_bce(x, t):
    """The stable form of ``-(t log s(x) + (1 - t) log(1 - s(x)))``, ``s`` the sigmoid, in the
    float dtype of x and t (integers would wrap in ``-|x|`` and ``x * t``)."""
    dtype = as_float(np.zeros((), np.result_type(x, t))).dtype
    x, t = np.asarray(x, dtype), np.asarray(t, dtype)
    return np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))


class SigmoidBinaryCrossentropy(Elemwise):
    """Binary cross-entropy of ``sigmoid(logits)`` against targets in [0, 1], elementwise,
    without forming the sigmoid: finite for every finite logit, however large. An infinite
    logit gives NaN (``inf - inf``, ``inf * 0``: a limit the formula does not take) except
    -inf against a target above 0, which gives inf."""

    impl = staticmethod(_sigmoid_bce)
    dtype_rule = "NumPy's promotion of logits and targets, as a float"

    def infer_types(self, x, t):
        shape_warnings.loss_hook(self, x, t)
        return super().infer_types(x, t)

    def scalar(self, k, x, t):
        x, t = k.to(x), k.to(t)
        tail = k.log1p(k.exp(k.neg(k.abs(x))))
        return k.add(k.sub(k.maximum(x, k.const(0)), k.mul(x, t)), tail)

    def grad_elem(self, inputs, output, gz):
        x, t = inputs
        return [gz * (sigmoid(x) - t), -gz * x if t.type.is_float else None]


def _axis_of(x, axis, op):
    return one_axis(axis, x.type.ndim, op, x)


def softmax(x, axis=-1) -> Variable:
    """Softmax along ``axis`` (the last by default), numerically stable."""
    x = as_variable(x)
    return Softmax(_axis_of(x, axis, "softmax"))(x)


def log_softmax(x, axis=-1) -> Variable:
    """Log of the softmax along ``axis``, stable for large and very negative logits."""
    x = as_variable(x)
    return LogSoftmax(_axis_of(x, axis, "log_softmax"))(x)


sigmoid_binary_crossentropy = SigmoidBinaryCrossentropy()


def categorical_crossentropy(p, target, axis=-1) -> Variable:
    """``-log p[label]`` for integer labels (p without ``axis``), or ``-sum(t * log p)`` for
    one-hot rows (integer or float) / probabilities shaped like p: as in Theano, a target with
    p's number of dims is a distribution. One loss per row: reduce it with ``sn.mean``. A
    label outside [0, n) is an error (a negative one does not count from the end).
    """
    p, target = as_variable(p), as_variable(target)
    axis = _axis_of(p, axis, "categorical_crossentropy")
    if target.type.dtype.kind in "iu" and target.type.ndim != p.type.ndim:
        located_call(_check_labels, p, target, axis)
        labels = _class_labels("categorical_crossentropy", target, p, axis)
        picked = take_along_axis(p, expand_dims(labels, axis), axis)
        return -log(squeeze(picked, axis))
    located_call(_check_same_shape, p, target, axis)
    return -sum_(target * log(p), axis=axis)


crossentropy = categorical_crossentropy


def binary_crossentropy(output, target) -> Variable:
    """``-(t log p + (1 - t) log(1 - p))`` elementwise, for probabilities p (use
    ``sigmoid_binary_crossentropy`` on logits: it stays finite where p rounds to 0 or 1).
    A Python number target stays weak, as in ``x32 * 0.9``: float32 p, float32 loss."""
    output, target = as_variable(output), as_variable(target)
    shape_warnings.loss_hook("binary_crossentropy", output, target)
    rest = 1 - target
    if isinstance(target, Constant) and target.weak:  # 1 - 0.9 a Python number: weak too
        rest = as_variable(1 - target.data)
    return -(target * log(output) + rest * log(1 - output))


def _fits_rows(var, rows) -> bool:
    """Whether ``var``'s shape can be ``rows`` (one value per row), dim by dim."""
    return shapes_unify(rows, var.type.shape)


def _check_labels(p, labels, axis):
    rows = p.type.shape[:axis] + p.type.shape[axis + 1 :]
    if not _fits_rows(labels, rows):
        raise ShapeError(
            f"categorical_crossentropy: integer labels {labels.describe()} must have the shape "
            f"of {p.describe()} without axis {axis}, i.e. {format_shape(rows)}"
        )
    row_axes = [a for a in range(p.type.ndim) if a != axis]
    for label_axis, p_axis in enumerate(row_axes):  # labels (batch,) against p (32, 10)
        shape_warnings.pinned_hook("categorical_crossentropy", labels, label_axis, p, p_axis)


def _class_labels(what: str, labels, p, axis: int) -> Variable:
    """``labels`` checked to be class indices of p's ``axis``: a negative one (or one beyond
    a number of classes the graph knows) is an ArgumentError at the user's line for a
    constant, else a ValueError when the function runs (``ClassLabels``, given p's length
    along ``axis`` where the graph does not know it), where a gather would read -1 as the
    last class and fail on one beyond the axis with its own IndexError."""
    n = p.type.shape[axis]
    n = n if isinstance(n, int) else None
    located_call(_check_constant_labels, what, labels, axis, n)
    if isinstance(labels, Constant) and n is not None:
        return labels
    if n is None:
        return ClassLabels(what, axis)(labels, getitem(shape_of(p), axis))
    return ClassLabels(what, axis, n)(labels)


def _check_constant_labels(what: str, labels, axis: int, n) -> None:
    """A constant's labels, checked when the graph is built."""
    if isinstance(labels, Constant):
        bad = first_bad_label(labels.value, n)
        if bad is not None:
            raise ArgumentError(label_problem(what, bad, axis, n))


def _check_same_shape(p, t, axis):
    try:
        if p.type.ndim != t.type.ndim:
            raise DimMismatch(p.type.ndim, t.type.ndim)
        for a, b in zip(p.type.shape, t.type.shape):
            unify(a, b)
    except DimMismatch:
        rows = format_shape(p.type.shape[:axis] + p.type.shape[axis + 1 :])
        raise ShapeError(
            f"categorical_crossentropy: target distribution {t.describe()} must have the shape "
            f"of {p.describe()} (or be integer labels of shape {rows}, p without axis {axis})"
        ) from None


class SoftmaxCrossEntropy(CountedAxes, Op):
    """``-log_softmax(logits)[label]`` per row, with integer labels, and the softmax itself,
    in one op (Theano's CrossentropySoftmaxArgmax1HotWithBias): the gradient reads the softmax
    instead of exponentiating the logits again. The specialize rule
    ``softmax_crossentropy_fused`` builds it from ``crossentropy(softmax(x), labels)``."""

    __props__ = ("axis",)
    nout = 2
    dtype_rule = "the dtype of the (float) logits, for both outputs"

    def __init__(self, axis: int):
        self.axis = axis

    def infer_types(self, logits, labels):
        rows = _check_xent_operands(self, logits, labels, self.axis)
        return [TensorType(logits.type.dtype, rows), logits.type]

    def perform(self, logits, labels):
        """loss = log(sum(exp(x - max))) - (x[label] - max), as log_softmax computes it; a
        row whose max is +inf has log_softmax's loss too (shifted by 0: ``inf - x[label]``,
        inf for a finite label's logit), while its softmax is NaN, as ``softmax``'s is."""
        dtype = np.asarray(logits).dtype
        x = np.asarray(logits, np.promote_types(dtype, np.float32))  # float16 sums lose much
        picked = _label_index(self, x, labels, self.axis)
        with np.errstate(invalid="ignore", divide="ignore"):
            peak = np.max(x, axis=self.axis, keepdims=True, initial=-np.inf)
            shifted = x - peak
            exps = np.exp(shifted)
            total = np.sum(exps, axis=self.axis, keepdims=True)
            loss = np.log(total) - np.take_along_axis(shifted, picked, self.axis)
            loss = np.where(peak == np.inf, np.inf - np.take_along_axis(x, picked, self.axis), loss)
            probs = exps / total
        return np.squeeze(loss, self.axis).astype(dtype), probs.astype(dtype)

    def grad(self, inputs, outputs, output_grads):
        logits, labels = inputs
        g_loss, g_probs = output_grads
        probs = outputs[1]
        parts = []
        if g_loss is not None:
            parts.append(SoftmaxCrossEntropyGrad(self.axis)(g_loss, probs, labels))
        if g_probs is not None:
            parts.append(probs * (g_probs - sum_(g_probs * probs, axis=self.axis, keepdims=True)))
        return [sum(parts[1:], parts[0]) if parts else None, None]


class SoftmaxCrossEntropyGrad(CountedAxes, Op):
    """``dloss * (probs - one_hot(labels))`` along ``axis``: the gradient of the cross-entropy
    with respect to the logits, from the softmax the forward op computed (one pass)."""

    __props__ = ("axis",)
    dtype_rule = "NumPy's promotion of dloss and probs"

    def axes_of(self, inputs):
        return as_variable(inputs[1])  # the probabilities

    def __init__(self, axis: int):
        self.axis = axis

    def infer_types(self, dloss, probs, labels):
        rows = _check_xent_operands(self, probs, labels, self.axis)
        _check_rows(self, dloss, rows, probs)
        if dloss.type.dtype.kind != "f":
            raise DTypeError(f"{self.op_name()}: dloss {dloss.describe()} must be floating point")
        dtype = np.result_type(dloss.type.dtype, probs.type.dtype)
        return [TensorType(dtype, probs.type.shape)]

    def perform(self, dloss, probs, labels):
        out = np.array(probs, dtype=np.result_type(np.asarray(dloss).dtype, probs.dtype))
        picked = _label_index(self, out, labels, self.axis)
        np.put_along_axis(out, picked, np.take_along_axis(out, picked, self.axis) - 1, self.axis)
        out *= np.expand_dims(np.asarray(dloss), self.axis)
        return out

    def grad(self, inputs, outputs, output_grads):
        """Of ``d * (p - onehot)``: ``sum(gz * (p - onehot))`` for d, ``gz * d`` for p."""
        dloss, probs, labels = inputs
        (gz,) = output_grads
        ax = self.axis
        at_label = squeeze(take_along_axis(gz, expand_dims(labels, ax), ax), ax)
        return [sum_(gz * probs, axis=ax) - at_label, gz * expand_dims(dloss, ax), None]


def softmax_cross_entropy(logits, labels, axis=-1) -> Variable:
    """Per-row ``crossentropy(softmax(logits), labels)`` for integer labels, fused and stable
    (the rewrites build it from that expression; calling it directly is the same). A label
    outside [0, n) is a ValueError when the function runs (a negative one does not count
    from the end), an ArgumentError here for constant labels."""
    logits, labels = as_variable(logits), as_variable(labels)
    axis = _axis_of(logits, axis, "softmax_cross_entropy")
    n = logits.type.shape[axis]
    n = n if isinstance(n, int) else None
    located_call(_check_constant_labels, "softmax_cross_entropy", labels, axis, n)
    return SoftmaxCrossEntropy(axis)(logits, labels)[0]


def _check_xent_operands(op, logits, labels, axis) -> tuple:
    """The row shape (logits without ``axis``); float logits and integer labels of it."""
    if logits.type.dtype.kind != "f":
        raise DTypeError(f"{op.op_name()}: logits {logits.describe()} must be floating point")
    if labels.type.dtype.kind not in "iu":
        raise DTypeError(f"{op.op_name()}: labels {labels.describe()} must be integers")
    rows = logits.type.shape[:axis] + logits.type.shape[axis + 1 :]
    _check_rows(op, labels, rows, logits)
    return rows


def _check_rows(op, var, rows, logits) -> None:
    """``var`` has the row shape of the logits (one value per row)."""
    if not _fits_rows(var, rows):
        raise ShapeError(
            f"{op.op_name()}: {var.describe()} must have one value per row of "
            f"{logits.describe()}, i.e. the shape {format_shape(rows)}"
        )


def _label_index(op, x, labels, axis) -> np.ndarray:
    """Labels as take_along_axis indices; a label outside [0, n) raises a ValueError naming
    the op, the label and n (a negative one does not count from the end: -1 is almost surely
    a padding or "ignore" label, not the last class; Theano raised "y_i value out of
    bounds")."""
    labels = np.asarray(labels)
    n = x.shape[axis]
    bad = first_bad_label(labels, n)
    if bad is not None:
        raise ValueError(label_problem(op.op_name(), bad, axis, n))
    return np.expand_dims(labels.astype(np.intp, copy=False), axis)
