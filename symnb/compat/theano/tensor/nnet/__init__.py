"""``theano.tensor.nnet``: activations, losses and ``conv2d``.

``softmax`` of a vector is a (1, n) row, as in Theano 1.0 (which padded vectors); of a
matrix, the softmax of each row.
"""

from __future__ import annotations

import numpy as np

from symnb.compat.theano.missing import missing_names
from symnb.compat.theano.tensor.basic import _as_float, sigmoid
from symnb.compat.theano.tensor.nnet import (  # noqa: F401 - T.nnet.bn, T.nnet.conv...
    abstract_conv,
    bn,
    conv,
    neighbours,
)
from symnb.compat.theano.tensor.nnet.abstract_conv import conv2d  # noqa: F401
from symnb.compat.theano.upcasting import float_constant_dtype, upcast
from symnb.core.op import _at_user_line
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError, ShapeError
from symnb.ops import elemwise, math, nnet
from symnb.ops.layout import dimshuffle

categorical_crossentropy = nnet.crossentropy
binary_crossentropy = nnet.binary_crossentropy
sigmoid_binary_crossentropy = nnet.sigmoid_binary_crossentropy
#: Theano's fast approximations of the sigmoid; symnb computes the exact one (docs/theano.md)
ultra_fast_sigmoid = sigmoid  # T.sigmoid: integers made float first, as in Theano


def softplus(x) -> Variable:
    """``log(1 + exp(x))``; an integer x is made float32 or float64 first, as in Theano."""
    return math.softplus(_as_float(x))


def _as_rows(x: Variable) -> Variable:
    return dimshuffle(x, "x", 0) if x.type.ndim == 1 else x


def _float_rows(c, call: str) -> Variable:
    """c as rows, refused unless floats of 1 or 2 dims: Theano's ``Softmax`` takes "1-d or
    2-d tensor of floats" only (NumPy's rule would make int8 float16; symnb's ``sn.softmax``
    takes any rank and an axis)."""
    c = as_variable(c)
    if c.type.dtype.kind != "f":
        raise _at_user_line(
            DTypeError(
                f"T.nnet.{call}: x must be a tensor of floats, as in Theano, not "
                f"{c.describe()}\n  hint: T.nnet.{call}(T.cast(x, 'floatX'))"
            )
        )
    if c.type.ndim not in (1, 2):
        raise _at_user_line(
            ShapeError(
                f"T.nnet.{call}: x must be a 1-d or 2-d tensor of floats, as in Theano, not "
                f"{c.describe()}\n  hint: sn.{_NATIVE[call]}(x, axis=-1) over any axis, or "
                f"T.nnet.{call}(x.reshape((-1, x.shape[-1]))).reshape(x.shape)"
            )
        )
    return _as_rows(c)


#: the native function each of the layer's row-wise ones names in its hint
_NATIVE = {"softmax": "softmax", "logsoftmax": "log_softmax"}


def softmax(c) -> Variable:
    """Softmax of each row (a vector is a row: the result is (1, n), as in Theano 1.0);
    integers are refused, as in Theano."""
    return nnet.softmax(_float_rows(c, "softmax"), axis=-1)


def logsoftmax(c) -> Variable:
    """Log of ``softmax`` (stable), with the same shapes and dtypes."""
    return nnet.log_softmax(_float_rows(c, "logsoftmax"), axis=-1)


def relu(x, alpha=0) -> Variable:
    """Theano 1.0's rectifier, in its own formula so that values and gradients are its:
    ``0.5 * (x + abs(x))`` (gradient 0.5 at 0), with ``alpha`` the leaky
    ``f1 * x + f2 * abs(x)``, ``f1 = 0.5 * (1 + alpha)``, ``f2 = 0.5 * (1 - alpha)``.

    ``alpha`` may be a number, an array or a symbolic tensor (Lasagne's PReLU passes
    ``alpha.dimshuffle('x', 0)``); it broadcasts against ``x``. A number makes f1 and f2 in
    x's float dtype, as Theano's constant of it was (floatX float32: float32). An integer
    (or boolean) ``x`` gives Theano's dtype, its constants' (0.5 is float32:
    ``float_constant_dtype``) upcast with x's: int8 and int16 float32, int32 and int64
    float64, under either floatX, where NumPy's rule made them all float64
    (``cast_policy='numpy+floatX'``: all floatX).
    """
    x = as_variable(x)
    if not isinstance(alpha, Variable) and np.ndim(alpha) == 0 and alpha == 0:
        return 0.5 * _in(x + elemwise.abs(x), _float(x, 0.5))
    if isinstance(alpha, (int, float)):
        dtype = _float(x, 0.5, float(alpha))
        a = dtype.type(alpha)
        f1, f2 = dtype.type(0.5) * (1 + a), dtype.type(0.5) * (1 - a)
        return Constant(f1) * _in(x, dtype) + Constant(f2) * _in(elemwise.abs(x), dtype)
    f1, f2 = 0.5 * (1 + alpha), 0.5 * (1 - alpha)
    return f1 * x + f2 * elemwise.abs(x)


def _float(x: Variable, *constants: float) -> np.dtype:
    """The dtype of Theano's formula on x: a float x's own, else Theano's upcast of x's dtype
    with its float constants'."""
    if x.type.dtype.kind == "f":
        return x.type.dtype
    return np.dtype(upcast(*(float_constant_dtype(c) for c in constants), x.type.dtype))


def _in(x: Variable, dtype) -> Variable:
    """x converted to ``dtype`` where it has another."""
    return x if x.type.dtype == np.dtype(dtype) else elemwise.cast(x, dtype)


def hard_sigmoid(x) -> Variable:
    """Theano's piecewise-linear sigmoid: ``clip(0.2 x + 0.5, 0, 1)``; an integer x is made
    float32 or float64 first, as Theano's constants of ``upgrade_to_float(x)`` did."""
    return elemwise.clip(0.2 * _as_float(x) + 0.5, 0, 1)


def elu(x, alpha=1) -> Variable:
    """``x`` for x > 0, ``alpha (exp(x) - 1)`` otherwise.

    The exp branch sees only the non-positive x: at a large x its ``expm1`` would overflow,
    and the untaken branch's gradient ``inf * 0`` would make the gradient NaN.
    """
    x = _as_float(x)
    positive = x > 0
    return elemwise.where(positive, x, alpha * math.expm1(elemwise.where(positive, 0, x)))


def softsign(x) -> Variable:
    """``x / (1 + |x|)``; an integer x is made float32 or float64 first, as in Theano."""
    x = _as_float(x)
    return x / (1 + elemwise.abs(x))


def softmax_with_bias(x, b) -> Variable:
    """``softmax(x + b)`` of each row."""
    return softmax(as_variable(x) + b)


def crossentropy_categorical_1hot(coding_dist, true_one_of_n) -> Variable:
    """``-log(coding_dist[i, true_one_of_n[i]])`` for each row (integer labels)."""
    return nnet.crossentropy(coding_dist, true_one_of_n)


batch_normalization = bn.batch_normalization  # Theano's older place for it

#: the constants of Klambauer et al.'s self-normalising unit, as Theano's
_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def selu(x) -> Variable:
    """``scale * elu(x, alpha)`` with SELU's constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def crossentropy_softmax_1hot(x, y_idx, **kwargs):
    """``(nll, softmax(x))``: the negative log-likelihood of ``y_idx`` per row, and the
    softmax of each row, as Theano's pair."""
    sm = softmax(x)
    return nnet.crossentropy(sm, y_idx), sm


def crossentropy_softmax_1hot_with_bias(x, b, y_idx, **kwargs):
    """``(nll, softmax(x + b))``, ``crossentropy_softmax_1hot`` of the rows plus the bias."""
    return crossentropy_softmax_1hot(as_variable(x) + b, y_idx)


#: Theano 1.0's ``theano.tensor.nnet`` names symnb has no op for, with what to write instead
_MISSING = {
    **{name: abstract_conv.MISSING[name] for name in ("conv3d", "separable_conv2d")},
    "conv2d_grad_wrt_inputs": abstract_conv.MISSING["conv2d_grad_wrt_inputs"],
    "conv2d_transpose": abstract_conv.MISSING["conv2d_grad_wrt_inputs"],
    **dict.fromkeys(("conv3d2d", "Conv3D", "ConvGrad3D", "ConvTransp3D"), abstract_conv.CONV3D),
    "abstract_conv2d": "T.nnet.conv2d (Theano's T.nnet.conv2d calls it)",
    "sigmoid_inplace": "T.nnet.sigmoid",
    "scalar_sigmoid": "T.nnet.sigmoid",
    "softmax_op": "T.nnet.softmax",
    "softmax_graph": "T.nnet.softmax",
    "logsoftmax_op": "T.nnet.logsoftmax",
    "softmax_grad": "T.grad of T.nnet.softmax",
}


__getattr__ = missing_names(
    "theano.tensor.nnet",
    "it has conv2d, the activations, losses and crossentropies, batch_normalization, and the "
    "modules abstract_conv, bn, conv and neighbours; not Theano's Op classes",
    _MISSING,
    "symnb's ops (symnb.ops, docs/ops.md)",
)
