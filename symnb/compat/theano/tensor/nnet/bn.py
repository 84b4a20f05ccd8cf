"""``theano.tensor.nnet.bn.batch_normalization``: the formula, in symnb's elementwise ops
(the rewrites fuse it into one kernel)."""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.core.variable import as_variable
from symnb.ops import elemwise, reduce
from symnb.ops.elemwise import cast


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """``(inputs - mean) * (gamma / std) + beta``; ``mode`` is accepted (one formula)."""
    inputs, gamma, beta = as_variable(inputs), as_variable(gamma), as_variable(beta)
    return (inputs - mean) * (gamma / std) + beta


def _axes(axes, ndim: int) -> tuple[int, ...]:
    if axes == "per-activation":
        return (0,)
    if axes == "spatial":
        return (0, *range(2, ndim))
    return tuple(int(a) for a in axes)


def batch_normalization_train(
    inputs,
    gamma,
    beta,
    axes="per-activation",
    epsilon=1e-4,
    running_average_factor=0.1,
    running_mean=None,
    running_var=None,
):
    """Theano's training-time batch norm: ``out, mean, invstd`` over ``axes``
    ("per-activation": axis 0, "spatial": 0 and 2..., or a tuple), ``mean`` and ``invstd``
    keeping those dims as 1; with ``running_mean`` and ``running_var`` also their new
    values (the variance's unbiased, as Theano's)."""
    inputs = as_variable(inputs)
    axes = _axes(axes, inputs.type.ndim)
    mean = reduce.mean(inputs, axis=axes, keepdims=True)
    var = reduce.var(inputs, axis=axes, keepdims=True)
    invstd = 1.0 / elemwise.sqrt(var + epsilon)
    out = (inputs - mean) * (as_variable(gamma) * invstd) + beta
    if (running_mean is None) != (running_var is None):
        raise _at_user_line(
            ValueError("batch_normalization_train: give both running_mean and running_var")
        )
    if running_mean is None:
        return out, mean, invstd
    count = 1
    for axis in axes:
        count = count * inputs.shape[axis]
    count = cast(count, var.dtype)
    factor = running_average_factor
    new_mean = running_mean * (1.0 - factor) + mean * factor
    new_var = running_var * (1.0 - factor) + (count / (count - 1)) * var * factor
    return out, mean, invstd, new_mean, new_var


def batch_normalization_test(inputs, gamma, beta, mean, var, axes="per-activation", epsilon=1e-4):
    """Theano's inference-time batch norm: ``(inputs - mean) * gamma / sqrt(var + eps) +
    beta`` (``axes`` is accepted: the statistics given broadcast against ``inputs``)."""
    inputs = as_variable(inputs)
    return (inputs - mean) * (as_variable(gamma) / elemwise.sqrt(var + epsilon)) + beta
